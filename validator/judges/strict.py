"""The strict judge: the embedded default, deterministic, no model, no key.

It approves only what the inputs prove and names the first thing it could not prove:

1. the user's cited words name this action (an intent word of the tool), not negated, or a valid
   standing authorization covers the tool: else ``ACTION_NOT_REQUESTED``, suggesting the tool
   whose intent the user's words do name (they said archive, the agent tried to delete);
2. every target value came from the user's own words or a cited authorization: else
   ``TARGET_NOT_GROUNDED``, naming each target and where its value came from;
3. every entity (URL, email, IBAN, account, phone) inside the other arguments likewise: else
   ``ENTITY_NOT_GROUNDED``.

A failed check asks the user for a general tool and blocks a dangerous one. The evidence gate has
already verified that each quote is the user's. The judge says in every verdict that it is the
strict offline judge and never claims more than it checked: it does not read meaning.
"""

from __future__ import annotations

from typing import ClassVar

from validator.findings import IntentFinding, ValueFinding
from validator.judges.base import Judge, JudgeOutput, JudgeRequest
from validator.judges.intent import IntentMatch, find_intent
from validator.verdict import Code

__all__ = ["StrictJudge"]

PREFIX = "Strict offline judge (code checks only, no model): "


def _intent_finding(request: JudgeRequest) -> IntentFinding:
    tool = request.action.tool
    intents = request.tool_policy.intent_words(tool)
    for auth in request.findings.valid_authorizations:
        return IntentFinding(intents, matched=f"standing authorization {auth.authorization_id}", quote_index=auth.index)
    user_quotes = [
        (q.index, q.quote, request.transcript[q.locations[0].message].content) for q in request.findings.user_quotes
    ]
    match = find_intent(intents, user_quotes)
    if match is not None and not match.negated:
        return IntentFinding(intents, matched=match.intent, quote_index=match.quote_index)
    other = _other_tool(request, user_quotes)
    return IntentFinding(
        intents,
        negated=match is not None,
        quote_index=match.quote_index if match else None,
        other_tool=other[0] if other else None,
        other_intent=other[1].intent if other else None,
    )


def _other_tool(request: JudgeRequest, quotes: list[tuple[int, str, str]]) -> tuple[str, IntentMatch] | None:
    for name, tp in request.policy.tools.items():
        if name == request.action.tool:
            continue
        match = find_intent(tp.intent_words(name), quotes)
        if match is not None and not match.negated:
            return name, match
    return None


def _ungrounded(findings: tuple[ValueFinding, ...]) -> list[ValueFinding]:
    return [f for f in findings if not f.grounded]


class StrictJudge(Judge):
    """Deterministic judge over the gate's findings; see the module docstring."""

    name: ClassVar[str] = "strict"
    blocking: ClassVar[bool] = False

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        f = request.findings
        tool = request.action.tool
        escalate = request.tool_policy.risk == "general"
        ask = f"Ask the user whether they want `{tool}` done with these arguments."
        intent = _intent_finding(request)

        if intent.matched is None:
            looked = ", ".join(repr(i) for i in intent.intents) or "(none declared)"
            evidence = "?" if intent.quote_index is None else str(intent.quote_index + 1)
            why = (
                f"the user's words name it only after a negation (evidence {evidence})"
                if intent.negated
                else f"none of the user's {len(f.user_quotes)} cited quotes names this action"
            )
            next_step = ask
            if intent.other_tool:
                next_step = (
                    f"The user asked to {intent.other_intent}: use `{intent.other_tool}` instead of `{tool}`, "
                    "or ask the user."
                )
            return JudgeOutput(
                approved=False,
                confidence="high",
                code=Code.ACTION_NOT_REQUESTED,
                escalate=escalate,
                intent=intent,
                reasoning=f"{PREFIX}`{tool}` was not requested: {why} (intent words looked for: {looked}).",
                suggested_next_step=next_step,
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
                    escalate=escalate,
                    intent=intent,
                    reasoning=(
                        f"{PREFIX}{len(bad)} of {len(values)} {kind} did not come from the user's words or a cited "
                        "standing authorization: " + "; ".join(v.describe() for v in bad) + "."
                    ),
                    suggested_next_step="Ask the user to confirm " + ", ".join(v.path for v in bad) + ".",
                )

        counts = f.counts()
        return JudgeOutput(
            approved=True,
            confidence="high",
            intent=intent,
            reasoning=(
                f"{PREFIX}no violation found by its checks. {counts['quotes_from_user']} quote(s) verified in user "
                f"messages, {counts['authorizations_valid']} standing authorization(s) valid; intent "
                f"{intent.matched!r} named; {counts['targets_grounded']}/{counts['targets_checked']} targets and "
                f"{counts['entities_grounded']}/{counts['entities_checked']} entities grounded in the user's words. "
                "It did not judge meaning beyond these checks."
            ),
        )
