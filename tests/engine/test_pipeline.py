"""Fail closed: no path approves an action without an approving verdict."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from validator.evals import packaged

from tests.conftest import POLICY, inbox_transcript, justified
from validator import (
    Code,
    Decision,
    InputError,
    Judge,
    JudgeOutput,
    JudgeRequest,
    MemoryRecorder,
    Policy,
    PolicySettings,
    ToolPolicy,
    UsageError,
    Validator,
    ValidatorConfig,
    decide,
)
from validator.decision import Judged
from validator.findings import Findings, QuoteFinding
from validator.record.recorder import AuditEvent
from validator.testing import FunctionJudge, ScriptedJudge, ScriptError

T = inbox_transcript("Please email bob@acme.example the minutes.", "nothing")
ACTION = justified("send_email", {"to": "bob@acme.example"}, "email bob@acme.example the minutes")
OK = {"approved": True, "reasoning": "the user asked", "confidence": "high"}
NO = {"approved": False, "reasoning": "outside party asked", "confidence": "high", "suggested_next_step": "ask"}


def _v(judge: Judge, **kw: Any) -> Validator:
    return Validator(POLICY, judge=judge, **kw)


def test_judge_sees_the_gate_findings_and_parsed_justification() -> None:
    judge = ScriptedJudge([OK])
    v = _v(judge).validate(T, ACTION, user_id="u-1")
    assert (v.approved, v.code, v.judge) == (True, Code.APPROVED, "scripted")
    req = judge.calls[0]
    assert req.findings.quotes[0].status == "user"
    assert req.justification.quotes[0].quote == "email bob@acme.example the minutes"
    assert req.user_id == "u-1" and "justification" not in req.action.args
    judge.assert_complete()


def test_judge_rejection_blocks_with_judge_rejected() -> None:
    v = _v(ScriptedJudge([NO])).validate(T, ACTION)
    assert (v.decision, v.code, v.suggested_next_step) == (Decision.BLOCK, Code.JUDGE_REJECTED, "ask")


@pytest.mark.parametrize(
    "failures",
    [
        [RuntimeError("boom"), RuntimeError("boom again")],
        [{"approved": True, "reasoning": "ok", "confidence": "certain"}, {"approved": "yes"}],
        [{"approved": True, "reasoning": "", "confidence": "high"}, {"approved": True}],
        [{"approved": True, "reasoning": "x", "confidence": "high", "code": "EVIDENCE_NOT_FOUND"}] * 2,
        [{"approved": True, "reasoning": "x", "confidence": "high", "escalate": True}] * 2,
        [{"approved": False, "reasoning": "x", "confidence": "high", "code": "APPROVED"}] * 2,
        [{"approved": True, "reasoning": "x", "confidence": "high", "tool_call": "send_email"}] * 2,
    ],
    ids=[
        "exceptions",
        "unparseable",
        "blank-reasoning",
        "approved-with-block-code",
        "approved-but-escalate",
        "rejected-with-approved-code",
        "extra-field",
    ],
)
def test_two_failures_block_with_judge_unavailable(failures: list[Any]) -> None:
    judge = ScriptedJudge(failures)
    v = _v(judge).validate(T, ACTION)
    assert (v.approved, v.decision, v.code) == (False, Decision.BLOCK, Code.JUDGE_UNAVAILABLE)
    assert len(v.judge_errors) == 2 and "after 2 attempts" in v.reasoning
    judge.assert_complete()


def test_one_failure_is_retried_and_reported() -> None:
    v = _v(ScriptedJudge([RuntimeError("flaky"), OK])).validate(T, ACTION)
    assert v.approved and v.judge_errors == ("RuntimeError: flaky",)


def test_judge_returning_the_wrong_type_fails_closed() -> None:
    v = _v(FunctionJudge(lambda r: True)).validate(T, ACTION)  # type: ignore[arg-type,return-value]
    assert v.code == Code.JUDGE_UNAVAILABLE


class SlowJudge(Judge):
    name: ClassVar[str] = "slow"

    def __init__(self) -> None:
        self.release = threading.Event()

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        self.release.wait(5)
        return JudgeOutput(approved=True, reasoning="late", confidence="high")


def test_sync_timeout_blocks() -> None:
    judge = SlowJudge()
    try:
        v = _v(judge, config=ValidatorConfig(judge_timeout=0.05)).validate(T, ACTION)
    finally:
        judge.release.set()
    assert v.code == Code.JUDGE_UNAVAILABLE
    assert v.judge_errors == ("judge 'slow' failed: no answer within 0.05 s",) * 2


def test_async_timeout_blocks() -> None:
    async def never(request: JudgeRequest) -> JudgeOutput:
        await asyncio.sleep(10)
        raise AssertionError("unreachable")

    v = asyncio.run(_v(FunctionJudge(never), config=ValidatorConfig(judge_timeout=0.05)).avalidate(T, ACTION))
    assert v.code == Code.JUDGE_UNAVAILABLE and "no answer within 0.05 s" in v.reasoning


def test_async_path_matches_sync_path() -> None:
    sync = Validator(POLICY).validate(T, ACTION)
    asy = asyncio.run(Validator(POLICY).avalidate(T, ACTION))
    assert (sync.decision, sync.code, sync.findings) == (asy.decision, asy.code, asy.findings)


def test_async_only_judge_from_sync_code_runs_its_own_loop() -> None:
    async def fine(request: JudgeRequest) -> dict[str, Any]:
        return OK

    assert _v(FunctionJudge(fine)).validate(T, ACTION).approved


def test_async_only_judge_called_sync_inside_a_loop_fails_closed() -> None:
    async def fine(request: JudgeRequest) -> dict[str, Any]:
        return OK

    async def main() -> Any:
        return _v(FunctionJudge(fine), config=ValidatorConfig(judge_timeout=None)).validate(T, ACTION)

    v = asyncio.run(main())
    assert v.code == Code.JUDGE_UNAVAILABLE and "avalidate()" in v.reasoning


def test_a_bug_in_our_code_blocks_with_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import validator.engine.pipeline as engine

    def broken(*a: Any, **k: Any) -> Any:
        raise KeyError("oops")

    monkeypatch.setattr(engine, "run_gate", broken)
    v = Validator(POLICY).validate(T, ACTION)
    assert (v.approved, v.code) == (False, Code.INTERNAL_ERROR)
    assert "KeyError" in v.reasoning
    v = asyncio.run(Validator(POLICY).avalidate(T, ACTION))
    assert v.code == Code.INTERNAL_ERROR


class BrokenRecorder(MemoryRecorder):
    def record(self, event: AuditEvent) -> None:
        raise OSError("disk full")

    async def arecord(self, event: AuditEvent) -> None:
        raise OSError("disk full")


def test_an_approval_that_cannot_be_recorded_does_not_run() -> None:
    v = Validator(POLICY, recorder=BrokenRecorder()).validate(T, ACTION)
    assert (v.approved, v.code) == (False, Code.RECORDER_UNAVAILABLE)
    assert "disk full" in v.reasoning
    v = asyncio.run(Validator(POLICY, recorder=BrokenRecorder()).avalidate(T, ACTION))
    assert v.code == Code.RECORDER_UNAVAILABLE
    blocked = Validator(POLICY, recorder=BrokenRecorder()).validate(T, justified("send_email", {"to": "x"}))
    assert blocked.code == Code.NO_USER_EVIDENCE  # a refusal stays the refusal it was


def test_every_verdict_is_recorded_once_with_hashes() -> None:
    recorder = MemoryRecorder()
    v = Validator(POLICY, recorder=recorder)
    verdicts = [
        v.validate(T, ACTION, user_id="u-1"),
        v.validate(T, {"tool": "read_inbox", "args": {}}, user_id="u-1"),
        v.validate(T, justified("send_email", {"to": "x"}), user_id="u-1"),
    ]
    events = recorder.events
    assert [e.verdict for e in events] == verdicts
    assert [e.verdict.code for e in events] == [Code.APPROVED, Code.EXEMPT, Code.NO_USER_EVIDENCE]
    assert {e.transcript_hash for e in events} == {T.digest} and len(T.digest) == 64
    assert events[0].policy_version == POLICY.version and events[0].user_id == "u-1"
    assert events[0].to_dict()["verdict"]["code"] == "APPROVED"


def test_bad_input_raises_a_typed_error_and_records_nothing() -> None:
    recorder = MemoryRecorder()
    with pytest.raises(InputError) as exc:
        Validator(POLICY, recorder=recorder).validate([{"role": "bot", "content": "x"}], {"tool": ""})
    assert str(exc.value.problems[0]).startswith("messages[0].role: must be one of")
    assert recorder.events == []


GENERAL, DANGEROUS = ToolPolicy(), ToolPolicy(risk="dangerous")


@pytest.mark.parametrize(
    ("approved", "confidence", "escalate", "tool_policy", "low", "expected"),
    [
        (True, "high", False, DANGEROUS, "ask_user", (Decision.APPROVE, Code.APPROVED)),
        (True, "medium", False, DANGEROUS, "ask_user", (Decision.ASK_USER, Code.LOW_CONFIDENCE)),
        (True, "medium", False, DANGEROUS, "block", (Decision.BLOCK, Code.LOW_CONFIDENCE)),
        (True, "medium", False, GENERAL, "ask_user", (Decision.APPROVE, Code.APPROVED)),
        (True, "low", False, GENERAL, "block", (Decision.BLOCK, Code.LOW_CONFIDENCE)),
        (False, "high", True, GENERAL, "block", (Decision.ASK_USER, Code.JUDGE_REJECTED)),
        (False, "high", True, DANGEROUS, "ask_user", (Decision.BLOCK, Code.JUDGE_REJECTED)),
        (False, "low", False, DANGEROUS, "ask_user", (Decision.ASK_USER, Code.JUDGE_REJECTED)),
        (False, "medium", False, GENERAL, "ask_user", (Decision.BLOCK, Code.JUDGE_REJECTED)),
    ],
)
def test_decision_policy(
    approved: bool, confidence: str, escalate: bool, tool_policy: ToolPolicy, low: str, expected: tuple[Decision, Code]
) -> None:
    out = JudgeOutput(approved=approved, reasoning="r", confidence=confidence, escalate=escalate)  # type: ignore[arg-type]
    policy = Policy(tools={"t": tool_policy}, settings=PolicySettings(low_confidence=low))  # type: ignore[arg-type]
    findings = Findings(quotes=(QuoteFinding(0, "do t", "user"),))  # the gate let it through to the judge
    verdict = decide(findings, Judged(out, "model"), policy, tool="t", messages=1)
    assert (verdict.decision, verdict.code) == expected


def test_low_confidence_approval_of_dangerous_action_explains_itself() -> None:
    policy = Policy({"send_money": ToolPolicy(risk="dangerous", intents=("pay",))})
    t = inbox_transcript("Pay the rent", "x")
    v = Validator(policy, judge=ScriptedJudge([{**OK, "confidence": "medium"}])).validate(
        t, justified("send_money", {}, "Pay the rent")
    )
    assert (v.decision, v.code) == (Decision.ASK_USER, Code.LOW_CONFIDENCE)
    assert "needs high" in v.reasoning and v.suggested_next_step


def test_scripted_judge_reports_overuse_and_leftovers() -> None:
    judge = ScriptedJudge([OK, OK])
    _v(judge).validate(T, ACTION)
    with pytest.raises(ScriptError, match="1 scripted steps were never used"):
        judge.assert_complete()
    empty = ScriptedJudge([])
    v = _v(empty).validate(T, ACTION)
    assert v.code == Code.JUDGE_UNAVAILABLE and "script had" in v.reasoning


def test_check_uses_the_inputs_policy_unless_one_is_given() -> None:
    data = {
        "messages": [{"role": "user", "content": "hi"}],
        "action": {"tool": "notify", "args": {}},
        "policy": {"tools": {"notify": {"exempt": True}}},
    }
    assert Validator().check(data).code == Code.EXEMPT
    assert Validator(Policy({"notify": ToolPolicy()})).check(data).code == Code.MISSING_JUSTIFICATION
    assert asyncio.run(Validator().acheck(data)).code == Code.EXEMPT


def test_host_control_flow_raised_inside_a_judge_propagates_only_when_its_validator_names_it() -> None:
    """Signals are a value of the validator's config, never a process-wide registry: importing an
    integration changes no other validator."""

    class GraphBubbleUp(Exception):  # a look-alike name is not enough: nothing is matched by name
        pass

    class HostSignal(Exception):
        pass

    class HostInterrupt(HostSignal):
        pass

    def raising(exc: Exception) -> FunctionJudge:
        def judge(request: JudgeRequest) -> JudgeOutput:
            raise exc

        return FunctionJudge(judge)

    messages = [{"role": "user", "content": "Please email bob@acme.example"}]
    action = {
        "tool": "send_email",
        "args": {"to": "bob@acme.example"},
        "justification": {"reason": "r", "evidence": [{"quote": "email bob@acme.example"}]},
    }
    verdict = Validator(POLICY, judge=raising(GraphBubbleUp("x"))).validate(messages, action)
    assert verdict.code.value == "JUDGE_UNAVAILABLE"
    named = ValidatorConfig(control_flow=(HostSignal,))
    with pytest.raises(HostInterrupt):
        Validator(POLICY, judge=raising(HostInterrupt("pause")), config=named).validate(messages, action)
    # another validator is not changed by it, nor by importing an integration
    import validator.integrations.langchain as lc
    from langgraph.errors import GraphInterrupt as Real

    unnamed = Validator(POLICY, judge=raising(HostInterrupt("pause"))).validate(messages, action)
    assert unnamed.code.value == "JUDGE_UNAVAILABLE"
    assert Validator(POLICY, judge=raising(Real(()))).validate(messages, action).code.value == "JUDGE_UNAVAILABLE"
    with pytest.raises(Real):
        asyncio.run(
            Validator(POLICY, judge=raising(Real(())), config=ValidatorConfig(control_flow=lc.SIGNALS)).avalidate(
                messages, action
            )
        )


def test_an_operator_policy_is_never_replaced_by_the_inputs_policy() -> None:
    data = {
        "messages": [{"role": "user", "content": "hi"}],
        "action": {"tool": "wire", "args": {}},
        "policy": {"tools": {"wire": {"exempt": True}}},
    }
    assert Validator(Policy()).check(data).code == Code.MISSING_JUSTIFICATION
    assert Validator().check(data).code == Code.EXEMPT


def test_aanswer_is_the_async_twin_of_answer() -> None:
    import asyncio

    from validator import Decision, Policy, ToolPolicy, Validator

    policy = Policy({"send_email": ToolPolicy(targets=("to",), ask="always")})
    validator = Validator(policy)
    messages = [{"role": "user", "content": "Please email bob@acme.example the minutes."}]
    action = {
        "tool": "send_email",
        "args": {"to": "bob@acme.example"},
        "justification": {"reason": "r", "evidence": [{"quote": "email bob@acme.example the minutes"}]},
    }
    asked = validator.validate(messages, action, user_id="u-1")
    assert asked.decision is Decision.ASK_USER
    done = asyncio.run(validator.aanswer(asked, True, messages=messages, action=action, user_id="u-1"))
    assert done.approved and done.code.value == "APPROVED_BY_USER"
    no = asyncio.run(validator.aanswer(asked, False, "not now", messages=messages, action=action, user_id="u-1"))
    assert not no.approved and no.code.value == "REJECTED_BY_USER"


def test_the_first_checks_of_a_busy_process_do_not_spend_their_gate_budget_on_loading(tmp_path: Any) -> None:
    """Eight threads checking at once in a fresh process: the reader's one-time loads (lemminflect's tables,
    the language pack) happen outside the gate's budget (they made the first checks GATE_BUDGET_EXCEEDED)."""
    import subprocess
    import sys

    script = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from tests.conftest import POLICY, inbox_transcript, justified\n"
        "from validator import Validator, ValidatorConfig\n"
        "v = Validator(POLICY, config=ValidatorConfig(gate_budget=1.0))\n"
        "t = inbox_transcript('Please email bob@acme.example the minutes.', 'nothing')\n"
        "a = justified('send_email', {'to': 'bob@acme.example'}, 'email bob@acme.example the minutes')\n"
        "with ThreadPoolExecutor(8) as pool:\n"
        "    codes = list(pool.map(lambda _: v.validate(t, a).code.value, range(8)))\n"
        "print(sorted(set(codes)))\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "GATE_BUDGET_EXCEEDED" not in out.stdout and "APPROVED" in out.stdout


def test_rules_are_switched_off_by_a_validators_config_and_nowhere_else() -> None:
    with pytest.raises(UsageError, match="unknown rules"):
        ValidatorConfig(rules_off=frozenset({"no-such-rule"}))
    messages = [{"role": "user", "content": "Email bob@acme.co.uk the notes."}]
    action = {
        "tool": "send_email",
        "args": {"to": "bob@acme.co"},
        "justification": {"reason": "r", "evidence": [{"quote": "Email bob@acme.co.uk the notes."}]},
    }
    ablated = Validator(POLICY, config=ValidatorConfig(rules_off=frozenset({"value-identity"})))
    assert ablated.validate(messages, action).approved  # what the rule prevents, measured
    assert not Validator(POLICY).validate(messages, action).approved  # every other validator keeps the rule
    assert not asyncio.run(Validator(POLICY).avalidate(messages, action)).approved


def test_an_ablation_leaves_nothing_behind_for_the_next_check() -> None:
    """Rules are a value each check carries: a validator with a rule off, run on the same transcripts first,
    changes no verdict of a validator with every rule on (no cache keeps what the ablation read)."""
    from dataclasses import replace

    from validator.evals.cases import load_cases
    from validator.evals.runner import EVAL_NOW

    from validator.language.rules import RULES

    cases = load_cases(packaged.cases_path())[:40]

    def verdicts(config: ValidatorConfig) -> list[tuple[str, str | None]]:
        out = []
        for case in cases:
            checker = Validator(case.policy, authorizations=case.store(), config=config)
            v = checker.check(case.check)
            out.append((v.decision.value, v.code.value if v.code else None))
        return out

    now = ValidatorConfig(clock=lambda: EVAL_NOW)
    fresh = verdicts(now)
    for rule in RULES:
        verdicts(replace(now, rules_off=frozenset({rule})))
    assert verdicts(now) == fresh
