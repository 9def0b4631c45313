"""The eval suite can fail: a rubber stamp and a wall both fail the bars; the strict judge passes them."""

from __future__ import annotations

from pathlib import Path

from validator.evals.cases import load_cases
from validator.evals.runner import ablate, run_matrix
from validator.judges.base import JudgeOutput, JudgeRequest
from validator.policy import Policy
from validator.rules import RULES
from validator.testing import FunctionJudge

ROOT = Path(__file__).resolve().parents[2]
CASES = load_cases(ROOT / "evals" / "cases.jsonl", Policy.load(ROOT / "evals" / "policy.toml"))


def _judge(approved: bool) -> FunctionJudge:
    def answer(request: JudgeRequest) -> JudgeOutput:
        return JudgeOutput(approved=approved, reasoning="always the same", confidence="high")

    return FunctionJudge(answer, name="approve" if approved else "block")


def _summary(judge: FunctionJudge) -> tuple[list[str], dict[str, float | int]]:
    matrix = run_matrix(CASES, judges=[judge.label], prompts=["validator"], factory=lambda s, p: (judge, None))
    (summary,) = matrix.summaries
    return summary.failures, summary.figures


def test_a_judge_that_approves_everything_fails_the_bars() -> None:
    failures, figures = _summary(_judge(True))
    assert figures["wrong_approvals_dangerous"] > 0
    assert any("wrongly approved dangerous" in f for f in failures)


def test_a_judge_that_blocks_everything_fails_the_bars() -> None:
    failures, figures = _summary(_judge(False))
    assert float(figures["accuracy_general"]) < 0.75
    assert any("accuracy on general cases" in f for f in failures)


def test_the_strict_judge_passes_once_without_the_meaning_cases_and_reports_them() -> None:
    matrix = run_matrix(CASES, judges=["strict"], prompts=["validator", "validator_v2", "validator_v3"])
    (summary,) = matrix.summaries  # it reads no prompt: one row
    assert summary.prompt == "-" and summary.failures == []
    f = summary.figures
    assert f["meaning_cases"] == sum("meaning" in c.tags for c in CASES) > 0
    assert f["meaning_wrong_approvals"] == f["meaning_cases"]  # code cannot read meaning, and says so
    assert f["decided_by_code"] + f["reached_judge"] == f["runs"]


def test_a_case_may_be_riskier_than_its_tool() -> None:
    leak = next(c for c in CASES if c.id == "meaning-exfiltrate-customer-list")
    assert leak.risk == "dangerous" and leak.policy.for_tool("send_email").risk == "dangerous"


def test_ablation_names_what_each_rule_prevents_and_causes() -> None:
    results = {a.rule: a for a in ablate(CASES, concurrency=4)}
    assert set(results) == set(RULES)
    assert "question-not-request" in results["request-grammar"].prevented
    assert "address-suffix" in results["value-identity"].prevented
    assert "authorized-contact-lookup" in results["value-identity"].caused


def test_the_shared_prefix_mode_sends_what_production_sends() -> None:
    from tests.anthropic_mock import MockAPI, message, verdict_call
    from validator.devtools.doctor import diagnose
    from validator.evals.agentrequest import agent_request
    from validator.judges.anthropic import AnthropicJudge

    cases = [c for c in CASES if c.id in ("plain-email-no-intents", "meaning-reply-adds-commitment")]
    api = MockAPI([message([verdict_call(approved=False, reasoning="not what was asked", confidence="high")])] * 2)
    judge = AnthropicJudge(client=api.client())
    matrix = run_matrix(
        cases,
        judges=["anthropic:claude-sonnet-4-6"],
        prompts=["validator"],
        factory=lambda s, p: (judge, None),
        shared_prefix=True,
        concurrency=1,
    )
    assert len(api.bodies) == 2
    for case, body in zip(cases, api.bodies, strict=True):
        agent = agent_request(case, "claude-sonnet-4-6")
        report = diagnose(agent, body)
        assert report.extends, report.difference  # the agent's request, byte for byte, plus the validator's turn
        assert body["messages"][len(agent["messages"])]["content"][0]["name"] == "tool_search"
    assert all(r.verdict.usage is not None and r.verdict.usage.cache == "shared" for r in matrix.runs)
