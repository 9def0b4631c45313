"""The judge seam: whatever decides what code alone cannot.

A judge gets a :class:`JudgeRequest` (the transcript, the action, the parsed justification, the
tool's policy and the gate's findings) and returns a :class:`JudgeOutput`, the verdict fields.
Implement :meth:`Judge.judge` (sync), :meth:`Judge.ajudge` (async), or both; the other is
derived. The engine calls it with a timeout, retries once on any failure or on an output that
contradicts itself, and then blocks with ``JUDGE_UNAVAILABLE``: a judge can never approve by
failing.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

from validator.exceptions import UsageError
from validator.findings import Findings, IntentFinding
from validator.inputs.action import Justification, PendingAction
from validator.inputs.transcript import Transcript
from validator.language import LanguagePack
from validator.policy import Policy, ToolPolicy
from validator.verdict import Code, Confidence, Usage

if TYPE_CHECKING:
    from validator.telemetry import Telemetry

__all__ = ["Judge", "JudgeOutput", "JudgeRequest", "View"]

View = Literal["blind", "shared_prefix"]
"""What a model judge reads: ``blind`` (:mod:`validator.judges.blind`: the user's words, the call and code's facts,
never a tool output or the agent's prose) or ``shared_prefix`` (the agent's own request, or the whole transcript
as data where none can be shared)."""


@dataclass(frozen=True, kw_only=True)
class JudgeRequest:
    """Everything a judge may look at for one action."""

    transcript: Transcript
    action: PendingAction
    justification: Justification
    tool_policy: ToolPolicy
    policy: Policy
    findings: Findings
    """The evidence gate's findings (quotes verified, targets and entities grounded)."""
    user_id: str | None = None
    agent_request: Mapping[str, Any] | None = None
    """The agent's last model request (plain JSON data), for judges that share its prompt cache."""
    telemetry: Telemetry | None = None
    """Where a model judge's call span goes (the validator's :class:`~validator.telemetry.Telemetry`; None: none)."""
    language: LanguagePack | None = None
    """The language the user's words are read in (the validator's ``ValidatorConfig.language``; None: English)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class JudgeOutput:
    """A judge's answer: the verdict fields, checked when it is built (a wrong type or value raises
    :class:`~validator.exceptions.UsageError` naming each field; a field it does not have, ``TypeError``). A model's
    answer is read into one by :func:`validator.judges.model.parse_verdict`, which names the same problems."""

    approved: bool
    reasoning: str
    """At least one character."""
    confidence: Confidence
    suggested_next_step: str | None = None
    code: Code | None = None
    """The judge's own code for a rejection (``ACTION_NOT_REQUESTED``, or its value as text); None means
    ``JUDGE_REJECTED``."""
    escalate: bool = False
    """The judge would ask the user rather than block (honoured for general tools only)."""
    intent: IntentFinding | None = None
    usage: Usage | None = None
    quality_notes: tuple[str, ...] = ()
    """Advice on an authorized action (a mistyped recipient); never weakens or replaces a safety decision. A list
    is kept as a tuple."""
    user_sentence: str | None = None
    """The user's own sentence the judge says asks for the action, copied exactly (the model's ``user_sentence``;
    at most :data:`MAX_USER_SENTENCE` characters). Where a dangerous tool's policy lets a model decide an unknown
    intent (``intent = "judge"``), code checks it stands in a sentence it may cite, holding the tool's verb
    (:mod:`validator.gate.judgeable`)."""
    view: View | None = None
    """What the judge read for this answer, as the judge's own code reports it (never the model's output): the
    opt-in above counts an approval on the ``blind`` view only. None: a judge that does not say."""

    def __post_init__(self) -> None:
        if isinstance(self.code, str) and not isinstance(self.code, Code) and self.code in _CODES:
            object.__setattr__(self, "code", Code(self.code))
        for name in _TEXTS:  # a str subclass (its own len, its own methods) is kept as the plain text it holds
            object.__setattr__(self, name, _text(getattr(self, name)))
        if isinstance(self.quality_notes, list | tuple):  # a list is kept as a tuple
            object.__setattr__(self, "quality_notes", tuple(map(_text, self.quality_notes)))
        problems = [f"{name}: {problem}" for name in _CHECKED if (problem := _CHECKED[name](getattr(self, name)))]
        if problems:
            raise UsageError(f"JudgeOutput: {'; '.join(problems)}")

    def contradictions(self) -> list[str]:
        """Ways this output contradicts itself; a non-empty list makes it unusable."""
        problems: list[str] = []
        if not self.reasoning.strip():
            problems.append("reasoning is blank")
        if self.approved and self.code not in (None, Code.APPROVED):
            problems.append(f"approved=true with rejection code {self.code.value}")
        if not self.approved and self.code in (Code.APPROVED, Code.EXEMPT):
            problems.append(f"approved=false with code {self.code.value}")
        if self.approved and self.escalate:
            problems.append("approved=true but asks to escalate to the user")
        return problems


MAX_USER_SENTENCE = 4_000
"""The longest ``user_sentence`` a judge may give (a sentence, not a transcript)."""

_CODES = frozenset(code.value for code in Code)


_TEXTS = ("reasoning", "confidence", "suggested_next_step", "user_sentence", "view")
"""The fields that hold text (a ``code`` is a :class:`Code`)."""


def _text(value: Any) -> Any:
    """``value``, a str subclass's instance as the plain text it holds (a plain text is itself)."""
    return str.__str__(value) if isinstance(value, str) else value


def _one_of(allowed: tuple[str, ...], *, optional: bool = False) -> Any:
    def check(value: Any) -> str | None:
        if (optional and value is None) or (isinstance(value, str) and value in allowed):
            return None
        shown = reprlib.repr(value)  # bounded, however long or deep the value
        return f"must be one of {', '.join(map(repr, allowed))}{' or None' if optional else ''}, not {shown}"

    return check


def _of(kind: type, what: str, *, optional: bool = False, shortest: int = 0, longest: int | None = None) -> Any:
    def check(value: Any) -> str | None:
        if optional and value is None:
            return None
        if not isinstance(value, kind):
            return f"must be {what}{' or None' if optional else ''}, not {type(value).__name__}"
        if isinstance(value, str) and not shortest <= len(value) <= (longest or len(value)):
            return f"must be {shortest} to {longest} characters long" if longest else "must not be empty"
        return _unicode(value) if isinstance(value, str) else None

    return check


def _texts(value: Any) -> str | None:
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return next(filter(None, map(_unicode, value)), None)
    return f"must be a list of strings, not {type(value).__name__}"


def _unicode(text: str) -> str | None:
    """A text no UTF-8 can carry (a lone surrogate) is no answer: the judge failed."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "must be text (it holds a lone surrogate)"
    return None


_CHECKED: dict[str, Any] = {
    "approved": _of(bool, "true or false"),
    "reasoning": _of(str, "a string", shortest=1),
    "confidence": _one_of(get_args(Confidence)),
    "suggested_next_step": _of(str, "a string", optional=True),
    "code": _of(Code, "a Code (or a code's name)", optional=True),
    "escalate": _of(bool, "true or false"),
    "intent": _of(IntentFinding, "an IntentFinding", optional=True),
    "usage": _of(Usage, "a Usage", optional=True),
    "quality_notes": _texts,
    "user_sentence": _of(str, "a string", optional=True, longest=MAX_USER_SENTENCE),
    "view": _one_of(get_args(View), optional=True),
}
"""Each field of :class:`JudgeOutput` and its check: the value, or a problem in words (no value is converted: ``"yes"``
is not true, ``1`` is not a string; a str subclass is read as the plain text it holds, a code's name as its code)."""
assert set(_CHECKED) == {f.name for f in fields(JudgeOutput)}

REQUIRED = frozenset(f.name for f in fields(JudgeOutput) if f.default is MISSING and f.default_factory is MISSING)
"""The fields every answer gives (``approved``, ``reasoning``, ``confidence``)."""


class Judge:
    """Base class of every judge. Override ``judge``, ``ajudge``, or both."""

    name: ClassVar[str] = "judge"
    blocking: ClassVar[bool] = True
    """False for judges that do pure, bounded computation: they run inline, with no thread."""
    decides: ClassVar[Literal["code", "model"]] = "model"
    """Who a verdict this judge decides says decided it (``Verdict.decided_by``): ``code`` for a judge that is code
    over the findings (the strict judge), ``model`` for any other (a model, or a stand-in for one)."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.judge is Judge.judge and cls.ajudge is Judge.ajudge:
            raise UsageError(f"{cls.__name__} must implement judge() or ajudge()")

    @property
    def label(self) -> str:
        """How verdicts name this judge."""
        return self.name

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        """Judge synchronously (default: run :meth:`ajudge` in a fresh event loop)."""
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.ajudge(request))
        raise UsageError(f"{type(self).__name__} is async-only; call avalidate() from inside an event loop")

    async def ajudge(self, request: JudgeRequest) -> JudgeOutput:
        """Judge asynchronously (default: run :meth:`judge` in a worker thread, or inline if not blocking)."""
        import asyncio

        if not self.blocking:
            return self.judge(request)
        return await asyncio.to_thread(self.judge, request)
