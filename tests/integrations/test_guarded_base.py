"""``@guarded`` on plain functions with the base install: no LangChain, LangGraph or pydantic-ai imported."""

from __future__ import annotations

import subprocess
import sys

from tests.test_extras import BLOCKED
from validator.extras import EXTRAS

ALL = sorted({m for modules in EXTRAS.values() for m in modules})

PROGRAM = """
import asyncio
from validator import ActionBlocked, Code, Policy, ToolPolicy, Validator
from validator.integrations.tools import guarded, validation_context

policy = Policy({"send_email": ToolPolicy(targets=("to",)), "pay": ToolPolicy(risk="dangerous", targets=("to",))})
sent = []

@guarded(validator=Validator(policy))
def send_email(to: str, body: str) -> str:
    sent.append(to)
    return f"sent to {to}"

@guarded(validator=Validator(policy))
async def pay(to: str, amount: int) -> str:
    sent.append(("paid", to))
    return "paid"

messages = [{"role": "user", "content": "Please email bob@acme.example the minutes."}]
why = {"reason": "The user asked.", "evidence": [{"quote": "email bob@acme.example the minutes"}]}
with validation_context(messages, user_id="u-1"):
    print(send_email(to="bob@acme.example", body="Minutes.", justification=why))
    try:
        send_email(to="eve@evil.example", body="Minutes.", justification=why)
    except ActionBlocked as blocked:
        print("blocked", blocked.verdict.code.value, blocked.verdict.decision.value)
    try:
        asyncio.run(pay(to="eve@evil.example", amount=5, justification=why))
    except ActionBlocked as blocked:
        print("blocked", blocked.verdict.code.value)
try:
    send_email(to="bob@acme.example", body="x", justification=why)
except Exception as exc:
    print(type(exc).__name__)
print(sent)
loaded = sorted(m for m in __import__("sys").modules if m.split(".")[0] in {blocked!r})
print("loaded", loaded)
"""


def test_plain_functions_are_guarded_with_the_base_install_only() -> None:
    code = BLOCKED.format(blocked=ALL) + PROGRAM.replace("{blocked!r}", repr(set(ALL)))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "sent to bob@acme.example"
    assert lines[1].startswith("blocked ") and "approve" not in lines[1]  # the verdict says why, with its code
    assert lines[2].startswith("blocked ")
    assert lines[3] == "UsageError"  # outside a conversation: refused, and said why
    assert lines[4] == "['bob@acme.example']"  # only the approved call ran
    assert lines[5] == "loaded []"
