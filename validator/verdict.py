"""The verdict: the validator's answer for one pending action.

``approved`` is true exactly when ``decision`` is ``approve``. It means "no violation was found
by the checks that ran", never "this is true". Every other decision carries a machine-readable
:class:`Code` naming the check that failed, and :class:`~validator.findings.Findings` with the
figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from pydantic import TypeAdapter

from validator._json import dumps
from validator._types import Confidence, Risk
from validator.exceptions import UsageError
from validator.findings import Findings

__all__ = ["REFUSAL_TEMPLATE", "Code", "Confidence", "Decision", "Usage", "Verdict", "verdict_adapter"]

REFUSAL_TEMPLATE = "Action `{tool}` was not run ({code}): {reasoning}"
"""What an agent reads when its call did not run (every integration sends this text)."""
NEXT_STEP_TEMPLATE = "Suggested next step: {step}"


class Decision(StrEnum):
    """What happens to the action."""

    APPROVE = "approve"
    BLOCK = "block"
    ASK_USER = "ask_user"


class Code(StrEnum):
    """Which check decided. ``APPROVED``, ``EXEMPT``, ``APPROVED_BY_USER`` and ``NOT_ENFORCED`` (shadow mode) run
    the action; no other code does."""

    APPROVED = "APPROVED"
    EXEMPT = "EXEMPT"
    APPROVED_BY_USER = "APPROVED_BY_USER"
    REJECTED_BY_USER = "REJECTED_BY_USER"
    MISSING_JUSTIFICATION = "MISSING_JUSTIFICATION"
    EVIDENCE_NOT_FOUND = "EVIDENCE_NOT_FOUND"
    EVIDENCE_NOT_FROM_USER = "EVIDENCE_NOT_FROM_USER"
    NO_USER_EVIDENCE = "NO_USER_EVIDENCE"
    AUTHORIZATION_NOT_FOUND = "AUTHORIZATION_NOT_FOUND"
    AUTHORIZATION_WRONG_USER = "AUTHORIZATION_WRONG_USER"
    AUTHORIZATION_EXPIRED = "AUTHORIZATION_EXPIRED"
    AUTHORIZATION_REVOKED = "AUTHORIZATION_REVOKED"
    AUTHORIZATION_OUT_OF_SCOPE = "AUTHORIZATION_OUT_OF_SCOPE"
    AUTHORIZATION_UNAVAILABLE = "AUTHORIZATION_UNAVAILABLE"
    ACTION_NOT_REQUESTED = "ACTION_NOT_REQUESTED"
    INJECTION_SIGNATURE = "INJECTION_SIGNATURE"
    REQUEST_ALREADY_USED = "REQUEST_ALREADY_USED"
    REQUEST_LEDGER_UNAVAILABLE = "REQUEST_LEDGER_UNAVAILABLE"
    TARGET_NOT_GROUNDED = "TARGET_NOT_GROUNDED"
    ENTITY_NOT_GROUNDED = "ENTITY_NOT_GROUNDED"
    JUDGE_REJECTED = "JUDGE_REJECTED"
    LOW_CONFIDENCE = "LOW_CONFIDENCE"
    QUALITY_CONCERN = "QUALITY_CONCERN"
    GATE_BUDGET_EXCEEDED = "GATE_BUDGET_EXCEEDED"
    TOOL_CALL_ID_REUSED = "TOOL_CALL_ID_REUSED"
    RESERVED_TOOL = "RESERVED_TOOL"
    RETRY_CAP_REACHED = "RETRY_CAP_REACHED"
    JUDGE_UNAVAILABLE = "JUDGE_UNAVAILABLE"
    RECORDER_UNAVAILABLE = "RECORDER_UNAVAILABLE"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    POLICY_ASKS_USER = "POLICY_ASKS_USER"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    NOT_ENFORCED = "NOT_ENFORCED"


RUNS = frozenset({Code.APPROVED, Code.EXEMPT, Code.APPROVED_BY_USER, Code.NOT_ENFORCED})
"""The codes whose action runs."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Model usage of one judge call (summed over a retry)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cost_usd: float | None = None
    """Dollars, from the judge's price table; None when the model has no price there."""
    model: str | None = None
    cache: str | None = None
    """How the prompt cache was used: ``shared`` (the agent's prefix), ``standalone``, or
    ``not shared (REASON)``."""

    def __add__(self, other: Usage) -> Usage:
        cost = (
            None if self.cost_usd is None and other.cost_usd is None else (self.cost_usd or 0) + (other.cost_usd or 0)
        )
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            cost,
            self.model or other.model,
            other.cache or self.cache,
        )


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The answer for one pending action."""

    approved: bool
    """True exactly when ``decision`` is ``approve``: no violation was found."""
    decision: Decision
    code: Code
    reasoning: str
    confidence: Confidence
    suggested_next_step: str | None = None
    """What the agent should do instead (ask the user; use ``archive_thread``)."""
    tool: str
    risk: Risk
    exempt: bool = False
    findings: Findings = field(default_factory=Findings)
    judge: str | None = None
    """Which judge decided (``strict``, ``anthropic:MODEL``), or None when code alone decided."""
    latency_ms: float = 0.0
    usage: Usage | None = None
    judge_errors: tuple[str, ...] = ()
    """Failures of judge attempts (a retried failure, or both that led to ``JUDGE_UNAVAILABLE``)."""
    reused: bool = False
    """True when this verdict was judged earlier for the very same action and conversation and
    reused (no judge was called, nothing billed)."""
    quality_notes: tuple[str, ...] = ()
    """Advice on an authorized action (a mistyped recipient); never part of the safety decision
    unless the policy opts in with ``quality = "ask_user"``."""
    recorded: bool = True
    """False when neither the audit store nor its spool could take the record: the verdict then went
    only to the last-resort sink (a JSON line on standard error), and it never approves."""
    shadow_of: Code | None = None
    """Shadow mode (``enforce = false``): the code the action would have been refused with; it ran."""
    authorization_id: str | None = None
    """The standing authorization the verdict rests on, when one was used (cited, found, or just created
    from the user's answer)."""
    question_id: str | None = None
    """The question an ``ask_user`` verdict of the decision service puts to the user, kept until it is
    answered once (``POST /v1/answer {"question_id", "answer"}``; :mod:`validator.state.questions`)."""

    def __post_init__(self) -> None:
        if self.approved != (self.decision is Decision.APPROVE):
            raise UsageError(f"approved={self.approved} contradicts decision={self.decision.value}")
        if self.approved != (self.code in RUNS):
            raise UsageError(f"approved={self.approved} contradicts code={self.code.value}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (the shape ``verdict.schema.json`` documents)."""
        data: dict[str, Any] = verdict_adapter().dump_python(self, mode="json")
        return data

    def to_json(self, *, indent: int | None = None) -> str:
        return dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Any) -> Verdict:
        """Rebuild a verdict from :meth:`to_dict` output (audit records, recordings)."""
        return verdict_adapter().validate_python(data)

    @classmethod
    def blocked(
        cls,
        tool: str,
        reasoning: str,
        *,
        code: Code = Code.INTERNAL_ERROR,
        risk: Risk = "general",
        suggested_next_step: str | None = "Ask the user to confirm the action directly.",
        decision: Decision = Decision.BLOCK,
        confidence: Confidence = "low",
        findings: Findings | None = None,
    ) -> Verdict:
        """A refusal decided outside any judge: by default the library could not check the call at all (low
        confidence); the gate's refusals say what it found (``findings``, high confidence) and may ask."""
        return cls(
            approved=False,
            decision=decision,
            code=code,
            confidence=confidence,
            reasoning=reasoning,
            suggested_next_step=suggested_next_step,
            tool=tool,
            risk=risk,
            findings=findings if findings is not None else Findings(),
        )

    def answered_by_user(self, approved: bool, reason: str | None = None) -> Verdict:
        """This ``ask_user`` verdict, decided by the user: ``APPROVED_BY_USER`` or ``REJECTED_BY_USER``."""
        if self.decision is not Decision.ASK_USER:
            raise UsageError(f"only an ask_user verdict can be answered by the user, not a {self.decision.value} one")
        said = f" The user said: {reason}" if reason else ""
        return replace(
            self,
            approved=approved,
            decision=Decision.APPROVE if approved else Decision.BLOCK,
            code=Code.APPROVED_BY_USER if approved else Code.REJECTED_BY_USER,
            reasoning=(
                f"The user {'approved' if approved else 'rejected'} this action when asked.{said} "
                f"(The validator had asked because: {self.reasoning})"
            ),
            suggested_next_step=None if approved else "The user said no: do not retry this action.",
        )

    def message_for_agent(self) -> str:
        """The text an agent receives when its call did not run: what failed and what to do next."""
        lines = [REFUSAL_TEMPLATE.format(tool=self.tool, code=self.code.value, reasoning=self.reasoning)]
        if self.suggested_next_step:
            lines.append(NEXT_STEP_TEMPLATE.format(step=self.suggested_next_step))
        return "\n".join(lines)


_ADAPTER: TypeAdapter[Verdict] = TypeAdapter(Verdict)
"""Built here, while every annotation resolves in this module (``validator`` renames exported classes)."""


def verdict_adapter() -> TypeAdapter[Verdict]:
    """The pydantic adapter of :class:`Verdict` (its JSON Schema, validation from plain data)."""
    return _ADAPTER
