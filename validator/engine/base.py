"""What every validator is: :class:`BaseValidator`, the surface each host adapter takes, with its options and
its configuration.

Two implement it: :class:`~validator.engine.pipeline.Validator` decides in this process;
:class:`~validator.integrations.service.RemoteValidator` decides through ``validator serve``. An adapter
reads the policy (which tools are guarded, which get a ``justification``) and the configuration (the host's
control-flow signals), validates calls and records the user's answers; nothing else.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Required, TypeAlias, TypedDict, Unpack

from validator.exceptions import UsageError
from validator.gate.context import row_names
from validator.inputs.action import PendingAction
from validator.inputs.checkinput import CheckInput
from validator.inputs.conversations import TranscriptCaches
from validator.inputs.transcript import Message, Transcript
from validator.language import LanguagePack
from validator.language.rules import CONTEXT_PREFIX, Rules
from validator.policy import Policy
from validator.telemetry import Telemetry
from validator.verdict import Verdict

__all__ = [
    "ActionInput",
    "AnswerOptions",
    "BaseValidator",
    "CallOptions",
    "CheckData",
    "CheckOptions",
    "MessagesInput",
    "ValidatorConfig",
]

MessagesInput: TypeAlias = Transcript | list[Message] | list[dict[str, Any]] | None
"""A conversation: a :class:`Transcript`, its messages, or message dicts in the check-input format
(None when ``agent_request`` carries it)."""
ActionInput: TypeAlias = PendingAction | Mapping[str, Any]
"""A pending action: a :class:`PendingAction`, or ``{"tool", "args", "justification"}``."""
CheckData: TypeAlias = CheckInput | Mapping[str, Any] | str | bytes


class CheckOptions(TypedDict, total=False):
    """The keywords of :meth:`Validator.validate` and :meth:`Validator.avalidate` (documented there)."""

    user_id: str | None
    agent_request: Mapping[str, Any] | None
    edited: Collection[str]


class CallOptions(TypedDict, total=False):
    """The call a person answered: the keywords of :meth:`Validator.feedback`."""

    messages: Required[MessagesInput]
    action: Required[ActionInput]
    user_id: str | None


class AnswerOptions(CallOptions, total=False):
    """The keywords of :meth:`Validator.answer` and :meth:`Validator.aanswer` (documented there)."""

    remember: Mapping[str, Any] | None
    edit: Mapping[str, Any] | None
    agent_request: Mapping[str, Any] | None


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, kw_only=True)
class ValidatorConfig:
    """How the engine runs judges."""

    judge_timeout: float | None = 60.0
    """Seconds one judge attempt may take; None waits forever (not recommended)."""
    judge_attempts: int = 2
    """Attempts before ``JUDGE_UNAVAILABLE``: the first call and one retry."""
    clock: Callable[[], datetime] = _utcnow
    """Current time (standing authorizations expire against it)."""
    retry_cap: int | None = 2
    """Blocks of the same action (tool and targets) in one conversation before it is refused without a
    judge call (``RETRY_CAP_REACHED``); None: no cap."""
    control_flow: tuple[type[BaseException], ...] = ()
    """A host framework's control-flow signals a judge may raise (a judge that interrupts a LangGraph run to
    ask a person: ``validator.integrations.langchain.SIGNALS``): re-raised untouched, never a verdict.
    Any other exception of a judge is a failed attempt."""
    gate_budget: float = 5.0
    """Seconds the evidence gate may take on one action; past it the action is blocked
    (``GATE_BUDGET_EXCEEDED``). Its searches are linear; this bounds what an input could still cost."""
    max_held_bytes: int = 64 * 1024 * 1024
    """Memory for the conversations :meth:`Validator.check` holds when it is given a ``conversation`` name
    (:class:`~validator.inputs.held.NamedInputs`: each last input counted as three times its messages' JSON, 128
    bytes a message and 4 KiB), the least recent let go."""
    language: LanguagePack | None = None
    """The language the user's words are read in: a pack of :func:`validator.language.load_pack` (its grammar,
    its word tables and its verb table); None: the English pack shipped with the library."""
    rules_off: frozenset[str] = frozenset()
    """For measuring only (the eval's ablation): rules of :data:`validator.language.rules.RULES` switched off for this
    validator's checks. Never set it in production."""

    telemetry: Telemetry = field(default_factory=Telemetry, compare=False)
    """Where the checks' spans go (:mod:`validator.telemetry`): a span per check and per model judge's call, to
    the application's OpenTelemetry providers (default: the global ones, when the application set any)."""

    rules: Rules = field(init=False, repr=False, compare=False)
    """The rules this validator's checks run with (built from ``rules_off``, which it checks against
    :data:`validator.language.rules.RULES`), handed to the gate and the ledger with each check."""

    def __post_init__(self) -> None:
        rows = sorted(n for n in self.rules_off if n.startswith(CONTEXT_PREFIX) and n not in row_names())
        if rows:
            known = ", ".join(sorted(row_names()))
            raise UsageError(f"unknown rules: {', '.join(rows)} (the context table's rows: {known})")
        object.__setattr__(self, "rules", Rules(frozenset(self.rules_off)))


class BaseValidator(ABC):
    """The validator a host adapter takes: a policy, a configuration, checks and the user's answers."""

    def __init__(self, policy: Policy, config: ValidatorConfig) -> None:
        self.policy = policy
        """The tools it guards, and how (adapters read it to shape the tools)."""
        self.config = config
        self.transcripts = TranscriptCaches()
        """The conversations this validator's checks read, kept per host's message format and grown by each
        turn's new messages (the adapters read a host's conversation through them): the validator's own."""

    @abstractmethod
    def validate(self, messages: MessagesInput, action: ActionInput, **options: Unpack[CheckOptions]) -> Verdict:
        """The verdict on one pending action (never an approval on a failure)."""

    @abstractmethod
    async def avalidate(self, messages: MessagesInput, action: ActionInput, **options: Unpack[CheckOptions]) -> Verdict:
        """Async twin of :meth:`validate`."""

    @abstractmethod
    def answer(
        self, verdict: Verdict, approved: bool, reason: str | None = None, **options: Unpack[AnswerOptions]
    ) -> Verdict:
        """The user's answer to an ``ask_user`` verdict, recorded: the decided verdict."""

    @abstractmethod
    async def aanswer(
        self, verdict: Verdict, approved: bool, reason: str | None = None, **options: Unpack[AnswerOptions]
    ) -> Verdict:
        """Async twin of :meth:`answer`."""

    @abstractmethod
    def feedback(
        self, verdict: Verdict, approved: bool, reason: str | None = None, **options: Unpack[CallOptions]
    ) -> None:
        """The user's own judgement of an ``approve`` or ``block`` verdict, recorded."""
