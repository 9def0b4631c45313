"""The verdict: the validator's answer for one pending action.

``approved`` is true exactly when ``decision`` is ``approve``. It means "no violation was found
by the checks that ran", never "this is true". Every other decision carries a machine-readable
:class:`Code` naming the check that failed, and :class:`~validator.findings.Findings` with the
figures.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

import msgspec

from validator._json import dumps
from validator._types import Confidence, Risk
from validator.exceptions import UsageError
from validator.findings import Findings
from validator.verdict import refusals
from validator.verdict.codes import Code, Decision

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = [
    "REFUSAL_TEMPLATE",
    "Code",
    "Confidence",
    "DecidedBy",
    "Decision",
    "Usage",
    "Verdict",
    "plain_data",
    "verdict_adapter",
]

REFUSAL_TEMPLATE = "Action `{tool}` was not run ({code}): {reasoning}"
"""What an agent reads when its call did not run (every integration sends this text)."""
NEXT_STEP_TEMPLATE = "Suggested next step: {step}"


DecidedBy = Literal["code", "model", "user"]
"""Who decided a verdict: ``code`` (the gate, the strict judge, a refusal no judge could change), ``model`` (a
model judge's answer, held to the decision table), ``user`` (a question to the user, or their answer)."""

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
    audit_id: str | None = None
    """The id of the audit record of this verdict (the engine's record; None when it was not recorded)."""
    decided_by: DecidedBy = "code"
    """Who decided it (:data:`DecidedBy`): an ``ask_user`` verdict, and the user's answer or overruling, is always
    ``user``; a model judge's answer that decided the verdict is ``model``; anything else ``code``."""

    def __post_init__(self) -> None:
        if self.decision is Decision.ASK_USER or self.code in (Code.APPROVED_BY_USER, Code.REJECTED_BY_USER):
            object.__setattr__(self, "decided_by", "user")
        if self.approved != (self.decision is Decision.APPROVE):
            raise UsageError(f"approved={self.approved} contradicts decision={self.decision.value}")
        if self.approved != (self.code in RUNS):
            raise UsageError(f"approved={self.approved} contradicts code={self.code.value}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (the shape ``verdict.schema.json`` documents): what :func:`verdict_adapter` dumps. A process
        that has not imported pydantic (a one-shot check) writes a verdict of plain values (text, numbers, booleans,
        None: every verdict built from JSON) without it (a property test holds the two writings equal); any other
        verdict, and every verdict in a process that has pydantic already (its adapter writes one in a third of the
        time), is written by the adapter."""
        if "pydantic" not in sys.modules:
            plain = plain_data(self)
            if plain is not None:
                return plain
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
        return replace(
            self,
            approved=approved,
            decision=Decision.APPROVE if approved else Decision.BLOCK,
            code=Code.APPROVED_BY_USER if approved else Code.REJECTED_BY_USER,
            reasoning=refusals.answered(approved, reason, self.reasoning),
            suggested_next_step=None if approved else refusals.SAID_NO,
        )

    def question_for_user(self) -> str:
        """The question a person is asked about this call, in plain words: which action, with which values, where
        each value came from (their words, a lookup, someone's email), and what in their words was not clear. The
        grammar's terms stay in ``reasoning`` and the findings, for developers."""
        return refusals.question_for_user(self.tool, self.findings, self.reasoning)

    def message_for_agent(self) -> str:
        """The text an agent receives when its call did not run: what failed and what to do next."""
        lines = [REFUSAL_TEMPLATE.format(tool=self.tool, code=self.code.value, reasoning=self.reasoning)]
        if self.suggested_next_step:
            lines.append(NEXT_STEP_TEMPLATE.format(step=self.suggested_next_step))
        return "\n".join(lines)


def plain_data(verdict: Verdict) -> dict[str, Any] | None:
    """``verdict``'s data written without pydantic (what its adapter dumps), or None when it holds a value other than
    plain text, numbers, booleans and None, which msgspec would write otherwise (bytes as base64) or not at all (a
    str subclass)."""
    try:
        data: dict[str, Any] = _plain(msgspec.to_builtins(verdict, builtin_types=_PASSED, enc_hook=_not_plain))
    except _NotPlain:
        return None
    return data


class _NotPlain(Exception):
    """A verdict holding a value msgspec would write otherwise than pydantic (see :meth:`Verdict.to_dict`)."""


_PASSED = (bytes, bytearray, memoryview, datetime, date, time, timedelta, UUID)
"""The types ``msgspec.to_builtins`` writes its own way (base64, its own time format): passed through, so that
:func:`_plain` finds them and the adapter writes them (a ``Decimal``, the findings' own numbers, both write as its
text)."""


def _not_plain(value: Any) -> Any:
    raise _NotPlain(type(value).__name__)


def _plain(value: Any) -> Any:
    """``value`` with every tuple a list, as JSON has them (``msgspec.to_builtins`` keeps tuples); raises
    :class:`_NotPlain` at anything but text keys and plain values (their exact types: no subclass)."""
    kind = type(value)
    if kind is dict:
        if not all(type(k) is str for k in value):
            raise _NotPlain("key")
        return {k: _plain(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_plain(v) for v in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    raise _NotPlain(kind.__name__)


@cache
def verdict_adapter() -> TypeAdapter[Verdict]:
    """The pydantic adapter of :class:`Verdict` (its JSON Schema, validation from plain data), built at its first
    use: a process that only prints verdicts never imports pydantic. The annotations resolve in this module
    (``validator`` renames exported classes, and resolves their annotations here first)."""
    from pydantic import TypeAdapter

    return TypeAdapter(Verdict)
