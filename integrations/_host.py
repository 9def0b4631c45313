"""The host-adapter layer: what every integration shares, written once (no framework imported).

- :data:`REFUSAL_TEMPLATE`: the text an agent reads when its call did not run.
- :func:`justification_description`: what the agent reads of the ``justification`` argument it must fill
  (``prompts/justification.md``: another AI reads it); the argument as pydantic models, added to a tool's
  model-facing model, is :mod:`validator.integrations._justified`'s.
- :func:`justified_schema`: the argument added to a tool's JSON Schema (hosts that declare tools so).
- :func:`pending_from_call`: a :class:`~validator.PendingAction` from a tool call's name and
  arguments (``justification`` moved out of them).
- What the user is asked when a verdict is ``ask_user``, and how their answer is read, is in
  :mod:`validator.integrations._review` (LangChain's human-in-the-loop shapes); the life of one guarded
  call (start, decide, ask, settle) in :mod:`validator.integrations._lifecycle`.
- :func:`ids_used_before`: whether a conversation used a call's id before the call (a reused id is refused).
- :func:`user_id_from`: the user's id, in one documented order.
- :class:`Remembered`: a bounded map of recent verdicts or requests.
- :func:`validation_context`: in a hand-written loop, which conversation (and user, and agent
  request) the guarded tools called inside it are validated against.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from validator.exceptions import UsageError
from validator.inputs.action import PendingAction, justification_schema
from validator.inputs.checkinput import pending_action
from validator.inputs.plain import is_pydantic_model
from validator.inputs.transcript import Transcript
from validator.prompts import load_prompt
from validator.verdict import REFUSAL_TEMPLATE, Code, Verdict
from validator.verdict.refusals import RESERVED, call_id_used, conversation_unreadable, next_step

__all__ = [
    "reserved_tool",
    "JUSTIFICATION",
    "RUNTIME",
    "REFUSAL_TEMPLATE",
    "Remembered",
    "ValidationContext",
    "current_context",
    "ids_used_before",
    "justification_description",
    "justified_schema",
    "pending_from_call",
    "reused_id",
    "unreadable_history",
    "split_justification",
    "user_id_from",
    "user_of",
    "validation_context",
]

K = TypeVar("K")
C = TypeVar("C")
M = TypeVar("M")
V = TypeVar("V")

JUSTIFICATION = "justification"
RUNTIME = "validator_runtime"
"""The hidden argument through which LangGraph hands a guarded tool its runtime (state, config, call id)."""


def justification_description() -> str:
    """The text the agent reads about the ``justification`` argument."""
    return load_prompt("justification")


def as_plain(justification: Any) -> Any:
    """A justification as plain data, whatever shape the host library parsed it into (a pydantic model only once
    pydantic is imported: a host that has none, the Claude Code hook, never imports it)."""
    if is_pydantic_model(justification):
        return justification.model_dump()
    return justification


def split_justification(args: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """``(args without the justification, the justification as plain data)``."""
    clean = dict(args)
    return clean, as_plain(clean.pop(JUSTIFICATION, None))


@dataclass(frozen=True, slots=True)
class ValidationContext:
    messages: Any
    user_id: str | None = None
    agent_request: Mapping[str, Any] | None = None


_CURRENT: contextvars.ContextVar[ValidationContext | None] = contextvars.ContextVar(
    "action_validator_context", default=None
)


@contextlib.contextmanager
def validation_context(
    messages: Any, *, user_id: str | None = None, agent_request: Mapping[str, Any] | None = None
) -> Iterator[ValidationContext]:
    """Validate guarded tools called inside this block against ``messages`` (a hand-written loop)."""
    ctx = ValidationContext(messages, user_id, agent_request)
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)


def current_context() -> ValidationContext | None:
    return _CURRENT.get()


def pending_from_call(
    tool: str, args: Mapping[str, Any] | None, call_id: str | None = None, *, find_evidence: bool = False
) -> PendingAction:
    """The pending action of one tool call: ``justification`` (in any shape the host parsed) moved out.
    ``find_evidence``: the host cannot add the argument, so without one the validator finds the user's words."""
    clean, justification = split_justification(args or {})
    return pending_action(tool, clean, justification, call_id=call_id, find_evidence=find_evidence)


def justified_schema(schema: Mapping[str, Any], tool: str) -> dict[str, Any]:
    """A copy of a tool's JSON Schema with a required ``justification`` parameter (strict-mode compatible; the
    guidance in the parameter's description, never in the tool's).

    Raises:
        UsageError: the tool already has a parameter of that name.
    """
    out = copy.deepcopy(dict(schema))
    properties = out.setdefault("properties", {})
    if JUSTIFICATION in properties:
        raise UsageError(f"tool {tool!r} already has a parameter named {JUSTIFICATION!r}")
    properties[JUSTIFICATION] = justification_schema()
    required = list(out.get("required", []))
    out["required"] = required if JUSTIFICATION in required else [*required, JUSTIFICATION]
    return out


def user_of(spec: str | Callable[[C], str | None] | None, ctx: C, holder: Any) -> str | None:
    """The user's id as an adapter was told: ``spec`` itself, what ``spec(ctx)`` says, else the
    ``user_id`` of ``holder`` (the run's dependencies or context: an entry or an attribute)."""
    if isinstance(spec, str):
        return spec
    if spec is not None:
        return spec(ctx)
    return user_id_from("user_id", None, holder)


def user_id_from(key: str, configurable: Mapping[str, Any] | None, context: Any = None) -> str | None:
    """The user's id, in this order: the run config's ``configurable[key]``, then the run context's
    ``key`` (a mapping entry or an attribute). None when neither names one."""
    value = (configurable or {}).get(key)
    if value is None and context is not None:
        value = context.get(key) if isinstance(context, Mapping) else getattr(context, key, None)
    return str(value) if value is not None else None


class Remembered(Generic[K, V]):
    """The ``size`` most recent entries of a map (oldest evicted first), safe across threads."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def pop(self, key: K) -> None:
        with self._lock:
            self._items.pop(key, None)

    def take(self, key: K) -> V | None:
        """The entry, removed in the same step (two takers never both get it)."""
        with self._lock:
            return self._items.pop(key, None)


def read_first(
    read: Callable[[], Transcript], walk: Callable[[], frozenset[str]]
) -> tuple[Transcript | Callable[[], Transcript], frozenset[str]]:
    """A call's conversation, read now (or the failure to read it, raised when the guard reads it), and the ids
    it used before the call (``ToolCallGuard.start``'s ``messages`` and ``used``): :func:`read_once`, then
    :func:`used_ids`."""
    conversation = read_once(read)
    return conversation, used_ids(conversation, walk)


def read_once(
    read: Callable[[], Transcript], passes: Callable[[Exception], bool] = lambda exc: False
) -> Transcript | Callable[[], Transcript]:
    """A conversation read now, for one call or several: the transcript, or a function raising the failure to
    read it, which the guard meets when it reads it (``ToolCallGuard.start``'s ``messages``); a failure that is
    the host's control flow (``passes``) is raised now."""
    try:
        return read()
    except Exception as exc:
        if passes(exc):
            raise
        failure = exc

        def unread() -> Transcript:
            raise failure

        return unread


def used_ids(conversation: Transcript | Callable[[], Transcript], walk: Callable[[], frozenset[str]]) -> frozenset[str]:
    """The ids a call's conversation used before the call (``ToolCallGuard.start``'s ``used``). A conversation read
    whole holds each call id once and every tool answer after its call (:class:`Transcript` refuses anything
    else), so no message before the call used its id: the messages are walked for it (``walk``, O(history)) only
    when the conversation could not be read, where a reused id's refusal comes first."""
    return frozenset() if isinstance(conversation, Transcript) else walk()


def ids_used_before(
    messages: Sequence[M], call_id: str, calls: Callable[[M], list[Any]], ids: Callable[[M], Iterable[str]]
) -> frozenset[str]:
    """``{call_id}`` when the messages before the call's own message used its id (``ids`` reads a message's calls
    and answers), else empty: the one question a guard asks (``ToolCallGuard.start``'s ``used``).

    The call's own message is the last one whose ``calls`` (its tool call ids) hold the id; a host that resumes, or a
    human-in-the-loop step that rewrites that message, keeps its id there. Without one, every message is earlier.
    An id that message holds twice counts as used too: neither call can be told apart, both are refused. The
    messages are walked once and their ids compared, never collected (a long conversation costs one pass).
    """
    own = next((k for k in range(len(messages) - 1, -1, -1) if call_id in calls(messages[k])), len(messages))
    twice = own < len(messages) and calls(messages[own]).count(call_id) > 1
    if twice or any(call_id in ids(m) for m in messages[:own]):
        return frozenset({call_id})
    return frozenset()


def reused_id(tool: str, call_id: str) -> Verdict:
    """The refusal of a call whose id an earlier call of the conversation already used."""
    return Verdict.blocked(
        tool,
        call_id_used(call_id),
        code=Code.TOOL_CALL_ID_REUSED,
        suggested_next_step=next_step(Code.TOOL_CALL_ID_REUSED),
    )


def unreadable_history(tool: str, problem: str) -> Verdict:
    """The refusal of a call whose conversation could not be read."""
    return Verdict.blocked(tool, conversation_unreadable(problem))


def reserved_tool(tool: str) -> Verdict:
    """The refusal of a call to one of the validator's own tools (offered to the model, never the agent's)."""
    return Verdict.blocked(
        tool,
        RESERVED,
        code=Code.RESERVED_TOOL,
        suggested_next_step=next_step(Code.RESERVED_TOOL),
    )
