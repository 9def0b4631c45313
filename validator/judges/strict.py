"""The strict judge: the embedded default, deterministic, no model, no key.

It is the strict column of the decision table (principle 7): it approves only when every finding
is **proved**, asks the user when one is **unknown**, and blocks when one is **disproved** (the gate
has already blocked those, and asked about a dangerous action with an unknown one). It names the
first thing it could not prove:

1. a sentence of the user's own words that the evidence cites is, by the closed-world reader of
   :mod:`validator.gate.reader`, a request to the assistant for this action, or a valid standing
   authorization covers the tool: else ``ACTION_NOT_REQUESTED``, saying why and, when the user's
   words do request another tool that is no riskier, suggesting it (they said archive; the agent
   tried to delete);
2. every target value (and a money tool's amount) stands in that request, compared as a value, or
   a cited authorization allows it: else ``TARGET_NOT_GROUNDED``;
3. every entity (URL, host, email, IBAN, account, phone) inside the other arguments likewise: else
   ``ENTITY_NOT_GROUNDED``.

Every verdict says it is the strict offline judge and what it did not check: it does not read meaning.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from validator.findings import IntentFinding, ValueFinding
from validator.judges.base import Judge, JudgeOutput, JudgeRequest
from validator.verdict import Code, refusals

__all__ = ["StrictJudge"]

PREFIX = refusals.STRICT_PREFIX


def _shown(proof: str) -> str:
    return "disproved" if proof == "disproved" else "not proved (unknown)"


def _ungrounded(findings: tuple[ValueFinding, ...]) -> list[ValueFinding]:
    return [f for f in findings if not f.grounded]


class StrictJudge(Judge):
    """Deterministic judge over the gate's findings; see the module docstring."""

    name: ClassVar[str] = "strict"
    blocking: ClassVar[bool] = False
    decides: ClassVar[Literal["code", "model"]] = "code"

    def _not_requested(self, request: JudgeRequest, intent: IntentFinding) -> JudgeOutput:
        tool = request.action.tool
        looked = ", ".join(repr(i) for i in intent.intents[:12]) or "(none)"
        findings = request.findings
        why = refusals.why_not_requested(intent, len(findings.requests), found=findings.evidence == "found")
        next_step = refusals.next_step(Code.ACTION_NOT_REQUESTED, tool=tool)
        if intent.other_tool is not None:
            next_step = refusals.suggestion(intent, tool) or next_step
        return JudgeOutput(
            approved=False,
            confidence="high",
            code=Code.ACTION_NOT_REQUESTED,
            escalate=intent.proof != "disproved",
            intent=intent,
            reasoning=refusals.strict_not_requested(
                tool, _shown(intent.proof), why, looked, named=tool in request.policy.tools
            ),
            suggested_next_step=next_step,
        )

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        f = request.findings
        intent = f.intent or IntentFinding(request.tool_policy.intent_words(request.action.tool), problem="no_request")
        if not intent.requested:
            auth = next(iter(f.valid_authorizations), None)
            if auth is None:
                return self._not_requested(request, intent)
            intent = IntentFinding(
                intent.intents,
                matched=f"standing authorization {auth.authorization_id}",
                proof="proved",
                quote_index=auth.index,
            )
        for code, kind, values in (
            (Code.TARGET_NOT_GROUNDED, "targets", f.targets),
            (Code.ENTITY_NOT_GROUNDED, "entities", f.entities),
        ):
            bad = _ungrounded(values)
            if bad:
                return JudgeOutput(
                    approved=False,
                    confidence="high",
                    code=code,
                    escalate=all(v.proof == "unknown" for v in bad),
                    intent=intent,
                    reasoning=refusals.strict_ungrounded(len(bad), len(values), kind, [v.describe() for v in bad]),
                    suggested_next_step=refusals.next_step(code, paths=", ".join(v.path for v in bad)),
                )
        counts = f.counts()
        evidence = (
            refusals.quotes_verified(counts["quotes_from_user"])
            if f.evidence == "cited"
            else refusals.words_read_itself(len(f.requests))
        )
        return JudgeOutput(
            approved=True,
            confidence="high",
            intent=intent,
            reasoning=refusals.strict_approved(evidence, counts, repr(intent.matched), intent.step_of),
        )
