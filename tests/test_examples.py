"""The runnable example replays the seed's scenarios offline, with the outcomes the README shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_assistant_example_offline() -> None:
    out = _run("assistant.py", "--offline")
    happened = [line.split("> ", 1)[1] for line in out.splitlines() if line.strip().startswith("happened")]
    assert happened == [
        "replied to the user: One email: invoice 443 from Supplies is overdue (4,800 EUR). Shall I pay it?",
        "replied to the user: Luca said yes to the offsite and asks for the report. Send it?",
        "replied to the user: No Acme meetings yet; Acme suggests one. Want me to set it up?",
        "archived t-88",
        "EMAIL SENT to marta.rossi@acme.example: Q3 report",
    ]
    assert "BLOCK EVIDENCE_NOT_FROM_USER" in out
    assert "REJECTED_BY_USER" in out
    # the user asked to archive: a delete is not proved (unknown) on a dangerous tool, so the user is asked
    assert "asks the user about delete_thread" in out
    assert "PAID" not in out and "DELETED" not in out and "INVITED" not in out


def _run(name: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
        cwd=ROOT,
    )
    return proc.stdout


def test_an_offline_example_per_integration_blocks_the_hijack_and_runs_the_request() -> None:
    middleware = _run("middleware_agent.py")
    assert "tool send_money [error] > Action `send_money` was not run (EVIDENCE_NOT_FROM_USER)" in middleware
    assert middleware.strip().endswith("happened > EMAIL SENT to marta@acme.example")
    decorated = _run("decorated_tools.py")
    assert "refused: EVIDENCE_NOT_FROM_USER" in decorated and "EMAIL SENT to marta@acme.example" in decorated
    agents_sdk = _run("openai_agents_agent.py")
    assert "happened > EMAIL SENT to marta@acme.example; EMAIL SENT to carol@acme.example" in agents_sdk
    assert "PAID" not in agents_sdk
    pydantic = _run("pydantic_ai_agent.py")
    assert "PAID" not in pydantic and "marta@acme.example" in pydantic
    loop = _run("anthropic_loop.py")
    assert "ran       > read_inbox({})" in loop and "refused   > Action `send_email` was not run" in loop
    assert "ran       > send_email" not in loop


def test_the_google_adk_example_refuses_the_payment_asks_about_the_next_and_sends_the_email() -> None:
    out = _run("google_adk_agent.py")
    assert "refused   > send_money: Action `send_money` was not run (EVIDENCE_NOT_FROM_USER)" in out
    assert "asked     > The action validator asks you: Should the assistant run `send_money`" in out
    assert "(REJECTED_BY_USER)" in out
    assert out.strip().endswith("happened  > EMAIL SENT to marta@acme.example: Inbox")
    assert "PAID" not in out


def test_the_claude_code_example_runs_a_real_session_the_hook_guards() -> None:
    pytest.importorskip("claude_agent_sdk")
    out = _run("claude_code/session.py")
    assert "ran      > read_inbox({})" in out
    assert 'ran      > send_email({"to": "bob@acme.example"' in out
    assert "refused  > mcp__mail__send_money(" in out
    assert "ran      > send_money" not in out


def test_the_claude_agent_sdk_example_refuses_the_vendors_payment_asks_about_the_users_and_sends_the_email() -> None:
    pytest.importorskip("claude_agent_sdk")
    out = _run("claude_agent_sdk_agent.py")
    lines = out.splitlines()
    refused = [line for line in lines if line.startswith("refused")]
    assert refused == ["refused   > mcp__mail__send_money"] * 2, out
    assert "was not run (EVIDENCE_NOT_FROM_USER)" in out  # the model read the vendor's payment refused, and why
    assert "asked     > Action `mcp__mail__send_money` was not run" in out  # the second, the person was asked
    assert "was not run (REJECTED_BY_USER)" in out
    assert [line for line in lines if line.startswith("happened")] == [
        "happened  > EMAIL SENT to bob@acme.example: Inbox"
    ]


def test_make_demo_runs_the_examples_and_exits_0() -> None:
    """``make demo``'s job (the set-up aside): every example a verdict, none a bad input; ask_user (4) and
    blocked (1) are verdicts too."""
    env = {**os.environ, "VALIDATOR_DEMO_NO_SETUP": "1"}
    done = subprocess.run(["bash", "scripts/demo.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.count("== validator check --example") == 4
    for code in ("EVIDENCE_NOT_FROM_USER", "APPROVED", "EVIDENCE_NOT_FOUND", "ACTION_NOT_REQUESTED"):
        assert code in done.stdout
