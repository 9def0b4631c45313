"""The CrewAI adapter against the real CrewAI, in an environment of its own (CrewAI pins OpenTelemetry apart from
Google ADK, so it is not in the dev environment): ``tests/test_install.py`` installs the wheel with the
``crewai`` extra into a fresh environment and runs this file there, with ``examples/crewai_crew.py`` beside it.
A plain script (the environment has no pytest): each ``check_*`` function runs, and any failure exits 1."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import crewai_crew as example
from crewai.hooks.dispatch import InterceptionPoint, get_global_hook_list
from validator.integrations.crewai import CrewGuard

from validator import Validator, Verdict


def _fresh() -> None:
    example.HAPPENED.clear()
    example.SEEN.clear()


def check_the_example_blocks_the_vendors_payment_and_sends_the_requested_email() -> None:
    _fresh()
    assert example.main() == 0
    assert example.HAPPENED == ["EMAIL SENT to bob@acme.example"], example.HAPPENED
    assert any("was not run (INJECTION_SIGNATURE)" in seen for seen in example.SEEN)


def check_nothing_stays_registered_after_a_kickoff() -> None:
    _fresh()
    guard = CrewGuard(Validator(example.POLICY))
    lines = ["Thought: done\nFinal Answer: nothing to do"]
    guard.kickoff(example.crew(lines, "Hello."), "Hello.")
    assert get_global_hook_list(InterceptionPoint.PRE_TOOL_CALL) == []
    assert get_global_hook_list(InterceptionPoint.POST_TOOL_CALL) == []


def check_a_failure_of_the_validator_refuses_the_call() -> None:
    _fresh()

    class Broken(Validator):
        def validate(self, *args: Any, **kwargs: Any) -> Verdict:
            raise RuntimeError("the validator broke")

    lines = [
        example._step("Pay.", "send_money", {"recipient": "DE44500105175407324931", "amount": 10}),
        "Thought: refused\nFinal Answer: not paid",
    ]
    request = "Pay 10 EUR to DE44500105175407324931."
    CrewGuard(Broken(example.POLICY)).kickoff(example.crew(lines, request), request)
    assert example.HAPPENED == [], example.HAPPENED


def check_an_ask_user_goes_to_the_person_and_their_yes_runs_the_call() -> None:
    _fresh()
    asked: list[dict[str, Any]] = []

    def ask(request: dict[str, Any]) -> bool:
        asked.append(request)
        return True

    lines = [
        example._step("Pay it.", "send_money", {"recipient": "DE44500105175407324931", "amount": 4800}),
        "Thought: paid\nFinal Answer: paid",
    ]
    request = "Please pay the invoice 443 from Supplies."  # the IBAN stands nowhere in the user's words: asked
    CrewGuard(Validator(example.POLICY), ask=ask).kickoff(example.crew(lines, request), request)
    assert len(asked) == 1, asked
    assert example.HAPPENED == ["PAID 4800.0 to DE44500105175407324931"], example.HAPPENED


def check_without_ask_an_ask_user_does_not_run() -> None:
    _fresh()
    lines = [
        example._step("Pay it.", "send_money", {"recipient": "DE44500105175407324931", "amount": 4800}),
        "Thought: not paid\nFinal Answer: not paid",
    ]
    request = "Please pay the invoice 443 from Supplies."
    CrewGuard(Validator(example.POLICY)).kickoff(example.crew(lines, request), request)
    assert example.HAPPENED == [], example.HAPPENED


def main() -> int:
    failed = 0
    for name, check in sorted(globals().items()):
        if name.startswith("check_") and callable(check):
            try:
                check()
                print("ok  ", name)
            except Exception:
                failed += 1
                print("FAIL", name)
                traceback.print_exc()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
