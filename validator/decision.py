"""The decision: what a judge's answer becomes, and every verdict the engine builds.

:func:`decide` is the decision policy, a pure function: ``dangerous`` actions need ``approved``
with high confidence; an unsure verdict becomes ``ask_user`` or ``block`` as the policy's
``low_confidence`` setting says. The named constructors below are the only places a
:class:`~validator.verdict.Verdict` is spelled out, one per way a check ends (as openai-agents'
``ToolGuardrailFunctionOutput.allow()`` / ``.reject_content()``), so no two paths can disagree on
what a verdict of a kind carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from validator import refusals as texts
from validator._types import Risk
from validator.exceptions import UsageError
from validator.findings import Findings
from validator.gate.requests import why_not_requested
from validator.judges.base import JudgeOutput, JudgeRequest
from validator.policy import PolicySettings, ToolPolicy
from validator.refusals import next_step as next_step_for
from validator.refusals import overruled as overruled_text
from validator.verdict import Code, Decision, Usage, Verdict

__all__ = [
    "by_policy",
    "service_unavailable",
    "decide",
    "exempt",
    "gate_block",
    "internal_error",
    "judged",
    "judge_unavailable",
    "ledger_unavailable",
    "not_recorded",
    "overruled",
    "request_used",
    "total_usage",
    "unproved",
]


_GAP_CODES = {
    "request": Code.ACTION_NOT_REQUESTED,
    "target": Code.TARGET_NOT_GROUNDED,
    "entity": Code.ENTITY_NOT_GROUNDED,
}


def unproved(findings: Findings) -> tuple[Code, str] | None:
    """The first finding code could not prove (a disproved one first), as its code and the reason in words."""
    gaps = findings.gaps()
    if not gaps:
        return None
    gap = gaps[0]
    if gap.what == "request" and findings.intent is not None:
        return _GAP_CODES[gap.what], why_not_requested(
            findings.intent, len(findings.requests), found=findings.evidence == "found"
        )
    return _GAP_CODES[gap.what], "; ".join(g.detail for g in gaps if g.what == gap.what)


def decide(
    output: JudgeOutput, tool_policy: ToolPolicy, settings: PolicySettings, findings: Findings | None = None
) -> tuple[Decision, Code]:
    """The decision table (the design's principle 7), over the gate's findings and the judge's answer.

    ============================  =====================  ===========================  ==========================
    findings                      strict judge           model judge                  dangerous, any judge
    ============================  =====================  ===========================  ==========================
    all proved                    approve                the model decides            model approval, high
    some unknown, none disproved  ask the user           the model decides            ask the user
    any disproved                 block                  block                        block
    ============================  =====================  ===========================  ==========================

    The strict judge's own answers carry its column (it approves only what is proved, and asks on
    unknown); this function holds every judge to the rest: no judge overrides a disproved finding,
    and no judge approves a dangerous action with an unknown one. Past that, ``dangerous`` needs
    ``approved`` with high confidence; an unsure verdict follows ``settings.low_confidence``.
    """
    unsure = Decision.ASK_USER if settings.low_confidence == "ask_user" else Decision.BLOCK
    gap = unproved(findings) if findings is not None else None
    gaps = findings.gaps() if findings is not None else ()
    if gap is not None and gaps[0].proof == "disproved":
        return Decision.BLOCK, gap[0]
    if output.approved:
        if gap is not None and tool_policy.risk == "dangerous":
            return Decision.ASK_USER, gap[0]
        if not (output.confidence == "high" or (output.confidence == "medium" and tool_policy.risk == "general")):
            return unsure, Code.LOW_CONFIDENCE
        if output.quality_notes and settings.quality == "ask_user":  # opt-in: quality may hold an action back
            return Decision.ASK_USER, Code.QUALITY_CONCERN
        return Decision.APPROVE, Code.APPROVED
    code = output.code or Code.JUDGE_REJECTED
    if output.escalate and tool_policy.risk == "general":
        return Decision.ASK_USER, code
    if output.confidence == "low":
        return unsure, code
    return Decision.BLOCK, code


def _paths(findings: Findings) -> str:
    return ", ".join(v.path for v in (*findings.targets, *findings.entities) if v.proof != "proved")


def total_usage(usages: Sequence[Usage]) -> Usage | None:
    """Usage summed over the attempts (a retried call is billed too), or None when no model answered."""
    if not usages:
        return None
    total = usages[0]
    for u in usages[1:]:
        total = total + u
    return total


def exempt(tool: str, risk: Risk) -> Verdict:
    """The tool stays between the agent and the user: it runs, and no judge ran."""
    return Verdict(
        approved=True,
        decision=Decision.APPROVE,
        code=Code.EXEMPT,
        confidence="high",
        reasoning=texts.exempt(tool),
        tool=tool,
        risk=risk,
        exempt=True,
    )


def gate_block(
    *,
    tool: str,
    risk: Risk,
    code: Code,
    reasoning: str,
    suggested_next_step: str | None,
    findings: Findings,
    decision: Decision = Decision.BLOCK,
) -> Verdict:
    """The evidence gate refused the action (or sent it to the user) before any judge looked at it."""
    return Verdict.blocked(
        tool,
        reasoning,
        code=code,
        risk=risk,
        suggested_next_step=suggested_next_step,
        decision=decision,
        confidence="high",
        findings=findings,
    )


def judged(
    request: JudgeRequest,
    output: JudgeOutput,
    *,
    judge: str,
    settings: PolicySettings,
    errors: Sequence[str] = (),
    spent: Sequence[Usage] = (),
) -> Verdict:
    """A judge's usable answer, turned into a decision by :func:`decide`."""
    decision, code = decide(output, request.tool_policy, settings, request.findings)
    reasoning, next_step = output.reasoning, output.suggested_next_step
    gap = unproved(request.findings)
    if gap is not None and decision is not Decision.APPROVE and output.approved:
        reasoning += texts.judge_overheld(gap[1], refused=decision is Decision.BLOCK)
        next_step = next_step or next_step_for(gap[0], tool=request.action.tool, paths=_paths(request.findings))
    elif gap is not None and decision is Decision.APPROVE:
        reasoning += texts.judge_decided_unknown(gap[1])
    if code is Code.QUALITY_CONCERN:
        reasoning += texts.quality_held(output.quality_notes)
        next_step = next_step or next_step_for(Code.QUALITY_CONCERN)
    if code is Code.LOW_CONFIDENCE:
        reasoning += texts.low_confidence(output.confidence, request.tool_policy.risk)
        next_step = next_step or next_step_for(Code.LOW_CONFIDENCE, tool=request.action.tool)
    findings = request.findings if output.intent is None else replace(request.findings, intent=output.intent)
    return Verdict(
        approved=decision is Decision.APPROVE,
        decision=decision,
        code=code,
        reasoning=reasoning,
        confidence=output.confidence,
        suggested_next_step=None if decision is Decision.APPROVE else next_step,
        tool=request.action.tool,
        risk=request.tool_policy.risk,
        findings=findings,
        judge=judge,
        usage=total_usage([*spent, output.usage] if output.usage else spent),
        judge_errors=tuple(errors),
        quality_notes=output.quality_notes,
    )


def judge_unavailable(
    request: JudgeRequest, *, judge: str, errors: Sequence[str], spent: Sequence[Usage] = ()
) -> Verdict:
    """Every attempt of the judge failed: the action is blocked, and the verdict lists why."""
    return Verdict(
        approved=False,
        decision=Decision.BLOCK,
        code=Code.JUDGE_UNAVAILABLE,
        confidence="low",
        reasoning=texts.judge_unavailable(errors),
        suggested_next_step=next_step_for(Code.JUDGE_UNAVAILABLE),
        tool=request.action.tool,
        risk=request.tool_policy.risk,
        findings=request.findings,
        judge=judge,
        usage=total_usage(spent),
        judge_errors=tuple(errors),
    )


def internal_error(tool: str, risk: Risk, detail: str) -> Verdict:
    """A bug in this library: the action is blocked."""
    return Verdict.blocked(
        tool,
        texts.internal_error(detail),
        risk=risk,
        suggested_next_step=next_step_for(Code.INTERNAL_ERROR),
    )


def not_recorded(verdict: Verdict, detail: str) -> Verdict:
    """A verdict that could not be recorded: an approval becomes ``RECORDER_UNAVAILABLE``; a refusal stands.
    Either way it says so (``recorded=False``)."""
    if not verdict.approved:
        return replace(verdict, recorded=False)
    return replace(
        verdict,
        approved=False,
        decision=Decision.BLOCK,
        code=Code.RECORDER_UNAVAILABLE,
        reasoning=texts.not_recorded(detail),
        suggested_next_step=next_step_for(Code.RECORDER_UNAVAILABLE),
        recorded=False,
    )


def overruled(verdict: Verdict, approved: bool, reason: str | None = None) -> Verdict:
    """The record of the user's own judgement of an ``approve`` or ``block`` verdict (a block they overrode, an
    approval they say was wrong): ``APPROVED_BY_USER`` or ``REJECTED_BY_USER``, for the audit and the eval's
    proposals only. An ``ask_user`` verdict is answered (:meth:`Verdict.answered_by_user`), not overruled."""
    if verdict.decision is Decision.ASK_USER:
        raise UsageError("an ask_user verdict is answered (Validator.answer), not overruled")
    if verdict.code in (Code.APPROVED_BY_USER, Code.REJECTED_BY_USER):
        raise UsageError(f"a {verdict.code.value} verdict is already the user's")
    return replace(
        verdict,
        approved=approved,
        decision=Decision.APPROVE if approved else Decision.BLOCK,
        code=Code.APPROVED_BY_USER if approved else Code.REJECTED_BY_USER,
        reasoning=overruled_text(approved, verdict.decision.value, reason, verdict.reasoning),
        suggested_next_step=None,
    )


def _to_the_user(verdict: Verdict, code: Code, why: str) -> Verdict:
    """An approval that code holds back: it goes to the user, saying why first."""
    return replace(
        verdict,
        approved=False,
        decision=Decision.ASK_USER,
        code=code,
        reasoning=f"{why} {verdict.reasoning}",
        suggested_next_step=next_step_for(code),
    )


def request_used(verdict: Verdict, spent_by: str) -> Verdict:
    """An approval whose request already authorized another action: it goes to the user instead."""
    return _to_the_user(verdict, Code.REQUEST_ALREADY_USED, texts.request_used(spent_by))


def request_carried_out(verdict: Verdict, call_id: str) -> Verdict:
    """An approval whose request the transcript shows carried out already (by call ``call_id``)."""
    return _to_the_user(verdict, Code.REQUEST_ALREADY_USED, texts.request_carried_out(call_id))


def ledger_unavailable(verdict: Verdict, detail: str) -> Verdict:
    """An approval whose request could not be checked against the ledger: it goes to the user."""
    return _to_the_user(verdict, Code.REQUEST_LEDGER_UNAVAILABLE, texts.ledger_unavailable(detail))


def by_policy(verdict: Verdict, tool_policy: ToolPolicy, settings: PolicySettings) -> Verdict:
    """The verdict as the operator's modes shape it: the tool's ``ask``, then shadow mode (``enforce``)."""
    if verdict.exempt or verdict.code in (Code.APPROVED_BY_USER, Code.REJECTED_BY_USER):
        return verdict
    if tool_policy.ask == "always" and verdict.approved:
        verdict = replace(
            _to_the_user(verdict, Code.POLICY_ASKS_USER, ""),
            reasoning=texts.policy_asks(verdict.tool, verdict.reasoning),
        )
    elif tool_policy.ask == "never" and verdict.decision is Decision.ASK_USER:
        verdict = replace(
            verdict,
            decision=Decision.BLOCK,
            reasoning=f"{verdict.reasoning} {texts.policy_never_asks(verdict.tool)}",
            suggested_next_step=texts.NEVER_ASKED,
        )
    if settings.enforce or verdict.approved:
        return verdict
    return replace(
        verdict,
        approved=True,
        decision=Decision.APPROVE,
        code=Code.NOT_ENFORCED,
        shadow_of=verdict.code,
        reasoning=texts.shadow(verdict.decision.value, verdict.code.value, verdict.reasoning),
    )


def service_unavailable(tool: str, why: str) -> Verdict:
    """No verdict came over the wire (unreachable, a timeout, a non-2xx, a check over its time): refused."""
    return Verdict.blocked(
        tool,
        texts.service_unavailable(why),
        code=Code.SERVICE_UNAVAILABLE,
        suggested_next_step=next_step_for(Code.SERVICE_UNAVAILABLE),
    )
