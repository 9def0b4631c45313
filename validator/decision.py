"""The decision: the whole table of principle 7, and every verdict the engine builds.

:func:`decide` is the one decision, a pure function of the findings, the judge's answer (or none yet) and
the policy: a finding about the call itself refuses it; then the evidence (no justification, quotes that
are not the user's, an authorization that does not count, no user evidence); then any **disproved**
finding blocks and a **dangerous** action with an **unknown** one goes to the user; past that the judge's
answer decides (``dangerous`` needs ``approved`` with high confidence, an unsure verdict follows
``low_confidence``). Every text comes from :mod:`validator.verdict.refusals` by code. The named constructors below
are the only other places a :class:`~validator.verdict.Verdict` is spelled out, one per way a check ends
outside the table (as openai-agents' ``ToolGuardrailFunctionOutput.allow()`` / ``.reject_content()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import assert_never, overload

import msgspec
from msgspec import structs

from validator._types import Risk
from validator.exceptions import UsageError
from validator.findings import USERS_WORDS, CheckFinding, Citable, Findings, Gap, ValueFinding
from validator.judges.base import JudgeOutput
from validator.language.rules import ALL_ON, Rule, Rules
from validator.policy import Policy, PolicySettings, ToolPolicy
from validator.verdict import Code, DecidedBy, Decision, Usage, Verdict
from validator.verdict import refusals as texts
from validator.verdict.refusals import next_step as next_step_for
from validator.verdict.refusals import overruled as overruled_text

__all__ = [
    "Judged",
    "by_policy",
    "service_unavailable",
    "decide",
    "exempt",
    "internal_error",
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

_AUTH_CODES = {
    "not_found": Code.AUTHORIZATION_NOT_FOUND,
    "wrong_user": Code.AUTHORIZATION_WRONG_USER,
    "expired": Code.AUTHORIZATION_EXPIRED,
    "revoked": Code.AUTHORIZATION_REVOKED,
    "out_of_scope": Code.AUTHORIZATION_OUT_OF_SCOPE,
    "unavailable": Code.AUTHORIZATION_UNAVAILABLE,
}


class Judged(msgspec.Struct, frozen=True):
    """What the judge answered: its usable output (None when every attempt failed), who judged, and the failed
    attempts' errors and billed usage."""

    output: JudgeOutput | None
    judge: str
    errors: Sequence[str] = ()
    spent: Sequence[Usage] = ()
    by: DecidedBy = "model"
    """What the judge is: a ``model``, or ``code`` (the strict judge): who decided the verdict it answers."""


class _Refusal(msgspec.Struct, frozen=True):
    code: Code
    reasoning: str
    next_step: str | None
    decision: Decision = Decision.BLOCK


def unproved(findings: Findings) -> tuple[Code, str] | None:
    """The first finding code could not prove (a disproved one first), as its code and the reason in words."""
    gaps = findings.gaps()
    if not gaps:
        return None
    gap = gaps[0]
    if gap.what == "request" and findings.intent is not None:
        return _GAP_CODES[gap.what], texts.why_not_requested(
            findings.intent, len(findings.requests), found=findings.evidence == "found"
        )
    return _GAP_CODES[gap.what], "; ".join(g.detail for g in gaps if g.what == gap.what)


@overload
def decide(
    findings: Findings, judged: None, policy: Policy, *, tool: str, messages: int, rules: Rules = ALL_ON
) -> Verdict | None: ...
@overload
def decide(
    findings: Findings, judged: Judged, policy: Policy, *, tool: str, messages: int, rules: Rules = ALL_ON
) -> Verdict: ...
def decide(
    findings: Findings, judged: Judged | None, policy: Policy, *, tool: str, messages: int, rules: Rules = ALL_ON
) -> Verdict | None:
    """The decision table (the design's principle 7), over the findings and the judge's answer.

    ============================  =====================  ===========================  ==========================
    findings                      strict judge           model judge                  dangerous, any judge
    ============================  =====================  ===========================  ==========================
    all proved                    approve                the model decides            model approval, high
    some unknown, none disproved  ask the user           the model decides            ask the user
    only the request unknown,     ask the user           the model decides            model approval, high, on
    ``intent = "judge"``, a                                                           the blind view, citing a
    sentence it may cite                                                              sentence it may cite; a
                                                                                      no asks the user
    any disproved                 block                  block                        block
    ============================  =====================  ===========================  ==========================

    Before any judge (``judged`` None): the refusal the findings alone decide, or None when the judge must
    answer. With the judge's answer: the verdict. The strict judge's own answers carry its column (it
    approves only what is proved, and asks on unknown); this function holds every judge to the rest: no
    judge overrides a disproved finding, and no judge approves a dangerous action with an unknown one.
    ``messages`` is how many messages the conversation has (a fabricated quote's refusal says so);
    ``rules`` the rules in force (all, outside an ablation).
    """
    tool_policy = policy.for_tool(tool)
    refusal = _refused(findings, tool, tool_policy, policy.settings, messages, rules)
    if refusal is not None:
        return Verdict.blocked(
            tool,
            refusal.reasoning,
            code=refusal.code,
            risk=tool_policy.risk,
            suggested_next_step=refusal.next_step,
            decision=refusal.decision,
            confidence="high",
            findings=findings,
        )
    if judged is None:
        return None
    if judged.output is None:
        return _judge_unavailable(findings, tool, tool_policy.risk, judged)
    return _judged(findings, tool, tool_policy, policy.settings, judged, judged.output)


def _refused(
    findings: Findings, tool: str, tool_policy: ToolPolicy, settings: PolicySettings, messages: int, rules: Rules
) -> _Refusal | None:
    """The refusal the findings decide before any judge: the call itself, then the evidence, then the proof."""
    if findings.check is not None:
        return _check_refusal(findings.check, tool)
    if findings.justification_problems:
        return _Refusal(
            Code.MISSING_JUSTIFICATION,
            texts.no_justification(findings.justification_problems),
            next_step_for(Code.MISSING_JUSTIFICATION),
        )
    n = len(findings.quotes)
    ask = next_step_for(Code.EVIDENCE_NOT_FROM_USER, tool=tool)
    outside = [q for q in findings.quotes if q.status == "not_from_user"]
    missing = [q for q in findings.quotes if q.status == "not_found"]
    if outside and rules.on(Rule.OUTSIDE_QUOTES):
        q = outside[0]
        return _Refusal(
            Code.EVIDENCE_NOT_FROM_USER,
            texts.quotes_outside(len(outside), n, q.index + 1, texts.short(q.quote), [str(loc) for loc in q.locations]),
            ask,
        )
    if missing and rules.on(Rule.FABRICATED_QUOTES):
        q = missing[0]
        return _Refusal(
            Code.EVIDENCE_NOT_FOUND,
            texts.quotes_nowhere(len(missing), n, messages, q.index + 1, texts.short(q.quote)),
            next_step_for(Code.EVIDENCE_NOT_FOUND),
        )
    bad_auth = [a for a in findings.authorizations if a.status != "valid"]
    if bad_auth:
        a = bad_auth[0]
        return _Refusal(
            _AUTH_CODES[a.status], texts.authorization_does_not_count(a.authorization_id, a.status, a.detail), ask
        )
    found = findings.evidence == "found"
    if found and not findings.requests and not findings.valid_authorizations:
        return _Refusal(Code.NO_USER_EVIDENCE, texts.no_user_words_found(messages), ask)
    if not found and not findings.user_quotes and not findings.valid_authorizations:
        return _Refusal(Code.NO_USER_EVIDENCE, texts.no_user_evidence(n, len(findings.authorizations)), ask)
    gaps = findings.gaps()
    disproved = [g for g in gaps if g.proof == "disproved"]
    if disproved:  # a strong local signal against the action: blocked, whatever any judge would say
        return _gap_refusal(findings, tool, disproved, Decision.BLOCK)
    if tool_policy.risk == "dangerous" and gaps:  # unknown on a dangerous action: the user decides
        if _open_to_model(findings, tool_policy, gaps):  # the policy's opt-in: the model reads the request
            return None
        values = any(g.what != "request" for g in gaps)
        blocking = values and settings.ungrounded_targets == "block" and rules.on(Rule.DANGEROUS_VALUES_TO_USER)
        if rules.on(Rule.DANGEROUS_VALUES_TO_USER) or any(g.what == "request" for g in gaps):
            refusal = _gap_refusal(findings, tool, gaps, Decision.BLOCK if blocking else Decision.ASK_USER)
            held = findings.judgeable
            if tool_policy.intent == "judge" and held is not None and held.problem is not None:
                refusal = structs.replace(
                    refusal, reasoning=refusal.reasoning + texts.not_judgeable(held.problem, held.detail)
                )
            return refusal
    return None


def _open_to_model(findings: Findings, tool_policy: ToolPolicy, gaps: Sequence[Gap]) -> bool:
    """Whether a model judge may decide this dangerous call: the policy opts in (``intent = "judge"``), what code
    could not prove is the request (unknown, never disproved) and values in the user's cited words outside any
    proved clause, and the gate found sentences of the user's the model may cite (:mod:`validator.gate.judgeable`)."""
    held = findings.judgeable
    return (
        tool_policy.intent == "judge"
        and all(g.proof == "unknown" and (g.what == "request" or g.reason in USERS_WORDS) for g in gaps)
        and held is not None
        and bool(held.sentences)
    )


def _model_intent(findings: Findings, output: JudgeOutput) -> tuple[Citable | None, str]:
    """The sentence a model's approval of a dangerous call's unknown intent rests on, or why its approval does not
    decide it: read on the blind view only, with high confidence, citing words of a sentence it may cite."""
    if output.view != "blind":
        return None, "view"
    if output.confidence != "high":
        return None, "confidence"
    held = findings.judgeable
    cited = held.cited(output.user_sentence) if held is not None else None
    return cited, "" if cited is not None else "citation"


def _check_refusal(check: CheckFinding, tool: str) -> _Refusal:
    match check.problem:
        case "call_id_reused":  # it ran already: this is not a retry of it
            code = Code.TOOL_CALL_ID_REUSED
            return _Refusal(code, texts.call_id_reused(check.detail), next_step_for(code))
        case "egress":
            code = Code.ENTITY_NOT_GROUNDED
            return _Refusal(
                code,
                texts.egress_reason(tool, check.detail, check.host, check.carried, check.egress or "user_words"),
                next_step_for(code, paths=check.detail),
                Decision.ASK_USER,
            )
        case "deadline":
            code = Code.GATE_BUDGET_EXCEEDED
            return _Refusal(code, texts.gate_gave_up(check.detail), next_step_for(code))
        case "retry_cap":
            code = Code.RETRY_CAP_REACHED
            return _Refusal(code, texts.retry_capped(check.count), next_step_for(code))
        case unknown:  # a new problem must be worded here before it type-checks
            assert_never(unknown)


def _gap_refusal(findings: Findings, tool: str, gaps: Sequence[Gap], decision: Decision) -> _Refusal:
    """A refusal (a block, or a question to the user) naming every finding that is not proved."""
    first = gaps[0]
    if first.what == "request" and findings.intent is not None:
        intent = findings.intent
        why = texts.why_not_requested(intent, len(findings.requests), found=findings.evidence == "found")
        shown = "disproved" if first.proof == "disproved" else "not proved (unknown)"
        reasoning = texts.request_unproved(tool, shown, why)
        if intent.problem == "outside_only":  # the injection signature: never the tool an attacker's text names
            code, step = Code.INJECTION_SIGNATURE, next_step_for(Code.INJECTION_SIGNATURE, tool=tool)
        else:
            code = Code.ACTION_NOT_REQUESTED
            step = texts.suggestion(intent, tool) or next_step_for(code, tool=tool)
    elif first.reason == "outside_only":  # the injection signature on a target: an account an attacker wrote
        values = [g for g in gaps if g.reason == "outside_only"]
        reasoning = texts.targets_outside(len(values), len(findings.targets), [g.detail for g in values])
        code, step = Code.INJECTION_SIGNATURE, next_step_for(Code.INJECTION_SIGNATURE, tool=tool)
    else:
        code = Code.TARGET_NOT_GROUNDED if first.what == "target" else Code.ENTITY_NOT_GROUNDED
        values = [g for g in gaps if g.what == first.what]
        pool = findings.targets if first.what == "target" else findings.entities
        label = "targets" if first.what == "target" else "entities"
        reasoning = texts.values_unproved(
            len(values), len(pool), label, sorted({g.proof for g in values}), [g.detail for g in values]
        )
        if first.proof == "unknown":
            reasoning += texts.UNTRACED
        step = next_step_for(code, tool=tool, paths=_paths(findings, pool))
    others = [g.describe() for g in gaps if g.what != first.what]
    if others:
        reasoning += texts.also(others)
    return _Refusal(code, reasoning, step, decision)


def _table(
    output: JudgeOutput,
    tool_policy: ToolPolicy,
    settings: PolicySettings,
    gap: tuple[Code, str] | None,
    intent: Citable | None = None,
) -> tuple[Decision, Code]:
    """The judge's answer held to the table (``gap``: the first finding code could not prove): no judge approves
    a dangerous action with an unknown one, but for the request a model decided by the policy's opt-in
    (``intent``: the sentence it cited, checked); ``dangerous`` needs ``approved`` with high confidence; an unsure
    verdict follows ``settings.low_confidence``. A disproved finding never reaches here: :func:`decide` refused
    it before any judge."""
    unsure = Decision.ASK_USER if settings.low_confidence == "ask_user" else Decision.BLOCK
    if output.approved:
        if gap is not None and tool_policy.risk == "dangerous" and intent is None:
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


def _paths(findings: Findings, pool: Sequence[ValueFinding] | None = None) -> str:
    values = (*findings.targets, *findings.entities) if pool is None else pool
    return ", ".join(v.path for v in values if v.proof != "proved")


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


def _judged(
    findings: Findings,
    tool: str,
    tool_policy: ToolPolicy,
    settings: PolicySettings,
    judged: Judged,
    output: JudgeOutput,
) -> Verdict:
    """A judge's usable answer, held to the table."""
    gap = unproved(findings)
    cited, held = None, ""
    dangerous = gap is not None and tool_policy.risk == "dangerous"
    opened = dangerous and _open_to_model(findings, tool_policy, findings.gaps())
    if output.approved and opened:
        cited, held = _model_intent(findings, output)
    decision, code = _table(output, tool_policy, settings, gap, cited)
    if opened and not output.approved and gap is not None:  # the opt-in only adds approvals: a no asks, as before
        decision, code = Decision.ASK_USER, gap[0]
    reasoning, next_step = output.reasoning, output.suggested_next_step
    if gap is not None and decision is not Decision.APPROVE and output.approved:
        reasoning += texts.judge_overheld(gap[1], refused=decision is Decision.BLOCK)
        reasoning += texts.intent_held(held) if held else ""
        next_step = next_step or next_step_for(gap[0], tool=tool, paths=_paths(findings))
    elif gap is not None and decision is Decision.APPROVE and cited is not None:
        reasoning += texts.judge_decided_intent(cited.text, cited.message)
    elif gap is not None and decision is Decision.APPROVE:
        reasoning += texts.judge_decided_unknown(gap[1])
    if code is Code.QUALITY_CONCERN:
        reasoning += texts.quality_held(output.quality_notes)
        next_step = next_step or next_step_for(Code.QUALITY_CONCERN)
    if code is Code.LOW_CONFIDENCE:
        reasoning += texts.low_confidence(output.confidence, tool_policy.risk)
        next_step = next_step or next_step_for(Code.LOW_CONFIDENCE, tool=tool)
    return Verdict(
        approved=decision is Decision.APPROVE,
        decision=decision,
        code=code,
        reasoning=reasoning,
        confidence=output.confidence,
        suggested_next_step=None if decision is Decision.APPROVE else next_step,
        tool=tool,
        risk=tool_policy.risk,
        findings=_findings_judged(findings, output, cited if decision is Decision.APPROVE else None),
        judge=judged.judge,
        decided_by=judged.by,
        usage=total_usage([*judged.spent, output.usage] if output.usage else judged.spent),
        judge_errors=tuple(judged.errors),
        quality_notes=output.quality_notes,
    )


def _findings_judged(findings: Findings, output: JudgeOutput, cited: Citable | None) -> Findings:
    """The findings a judged verdict carries: the judge's own reading of the intent where it gives one (the strict
    judge's), and the sentence a model cited where its approval decided a dangerous call's request (the request the
    ledger spends)."""
    if cited is not None and findings.intent is not None:
        return replace(findings, intent=replace(findings.intent, judged=cited, requested_in=(cited.message,)))
    return findings if output.intent is None else replace(findings, intent=output.intent)


def _judge_unavailable(findings: Findings, tool: str, risk: Risk, judged: Judged) -> Verdict:
    """Every attempt of the judge failed: the action is blocked, and the verdict lists why."""
    return Verdict(
        approved=False,
        decision=Decision.BLOCK,
        code=Code.JUDGE_UNAVAILABLE,
        confidence="low",
        reasoning=texts.judge_unavailable(judged.errors),
        suggested_next_step=next_step_for(Code.JUDGE_UNAVAILABLE),
        tool=tool,
        risk=risk,
        findings=findings,
        judge=judged.judge,
        usage=total_usage(judged.spent),
        judge_errors=tuple(judged.errors),
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
        return replace(verdict, recorded=False, audit_id=None)
    return replace(
        verdict,
        approved=False,
        decision=Decision.BLOCK,
        code=Code.RECORDER_UNAVAILABLE,
        reasoning=texts.not_recorded(detail),
        suggested_next_step=next_step_for(Code.RECORDER_UNAVAILABLE),
        recorded=False,
        decided_by="code",
        audit_id=None,
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


def correction_or_second(verdict: Verdict, message: int) -> Verdict:
    """An approval whose request repeats an earlier one's payee with another amount (message ``message``): a
    correction or a second payment, which only the user can tell."""
    return _to_the_user(verdict, Code.REQUEST_ALREADY_USED, texts.correction_or_second(message))


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
