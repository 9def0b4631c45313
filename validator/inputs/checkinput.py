"""The standalone check input: a transcript, a pending action, and optionally a policy and a user.

This is the JSON the CLI reads and other tools write (``check-input.schema.json`` documents it)::

    {"messages": [{"role": "user", "content": "..."}, ...],
     "action": {"tool": "send_money", "args": {...}, "justification": {"reason": "...", "evidence": [...]}},
     "policy": {"tools": {"send_money": {"risk": "dangerous", "targets": ["recipient"]}}},
     "user_id": "u-1"}

Parsing never guesses: a wrong type, an unknown role or key, a tool message answering no call, an
empty transcript, or an input over the size limits raises :class:`InputError` naming every field
path and its problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from validator._json import utf8
from validator.exceptions import FieldProblem, InputError, PolicyError, problem_from_msgspec, problems_of
from validator.inputs import fastdecode, strictjson
from validator.inputs.action import PendingAction
from validator.inputs.anthropic import transcript_from_anthropic
from validator.inputs.chat import is_chat, messages_from_chat
from validator.inputs.conversations import Conversations
from validator.inputs.plain import to_plain
from validator.inputs.transcript import CHARS, Message, ToolCall, Transcript
from validator.policy import Policy

__all__ = [
    "EMPTY",
    "CheckInput",
    "check_input_data",
    "Limits",
    "parse_action",
    "parse_transcript",
    "pending_action",
    "read_action",
    "read_messages",
]


EMPTY = "the input is empty: give a check input (a JSON object with messages and an action)"
"""The problem of an input with no characters but spaces (a parser would say "Expecting value: line 1 column 1")."""


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Size limits on a check input; over them is an :class:`InputError`, not a slow check."""

    max_bytes: int = 64 * 1024 * 1024
    """Of the raw JSON text."""
    max_messages: int = 100_000
    max_message_chars: int = 2_000_000
    max_total_chars: int = 50_000_000
    max_depth: int = 64
    """Nesting of the JSON document."""
    max_arg_chars: int = 100_000
    """Of one string inside the action's arguments (a body, a recipient list)."""


DEFAULT_LIMITS = Limits()
T = TypeVar("T")


def pending_action(
    tool: str,
    args: Mapping[str, Any],
    justification: Any = None,
    *,
    call_id: str | None = None,
    find_evidence: bool = False,
) -> PendingAction:
    """A pending action; a ``justification`` the agent put among the arguments is moved out of them."""
    plain: dict[str, Any] = to_plain(dict(args))  # models and dataclasses as plain data: every part is checked
    if "justification" in plain:
        inline = plain.pop("justification")
        justification = inline if justification is None else justification
    return PendingAction(
        tool=tool, args=plain, justification=justification, call_id=call_id, find_evidence=find_evidence
    )


def _pending(doc: fastdecode.ActionIn) -> PendingAction:
    """The pending action a decoded ``action`` record names."""
    return pending_action(doc.tool, doc.args, doc.justification, call_id=doc.call_id, find_evidence=doc.find_evidence)


@dataclass(frozen=True, kw_only=True)
class CheckInput:
    """A parsed, checked standalone check."""

    transcript: Transcript
    action: PendingAction
    policy: Policy | None = None
    user_id: str | None = None

    @classmethod
    def from_json(
        cls, text: str | bytes, *, limits: Limits = DEFAULT_LIMITS, before: Transcript | None = None
    ) -> CheckInput:
        """Parse the JSON text of a check input.

        One pass decodes the bytes straight into typed records (:mod:`validator.inputs.fastdecode`);
        only an input that pass refuses is parsed again, slowly, to name every problem by its path.

        ``before``: the conversation so far, when ``text`` holds only the messages that follow it (the
        service's incremental form); the result equals the parse of the whole input, and the limits
        hold for the whole (a problem's message index counts from the conversation's first message).
        """
        if len(text) > limits.max_bytes:
            raise InputError([FieldProblem("", f"input is {len(text):,} bytes; at most {limits.max_bytes:,}")])
        if not text or text.isspace():  # stops at the first character that is not a space
            raise InputError([FieldProblem("", EMPTY)])
        try:
            doc = fastdecode.decode(utf8(text) if isinstance(text, str) else text, max_depth=limits.max_depth)
        except (ValueError, msgspec.ValidationError) as exc:
            chat = _from_chat(text)
            if chat is not None:  # OpenAI Chat Completions messages, converted once, then read as any input
                return cls.from_json(chat, limits=limits, before=before)
            try:
                cls._explain(text, limits, exc)  # always raises
            except InputError as refused:
                if before is None:
                    raise
                # after a held conversation, its messages are numbered from the conversation's first
                raise InputError(_shifted(refused.problems, len(before.messages)), source=refused.source) from None
            raise  # pragma: no cover
        return cls._checked(doc, limits, before)

    @classmethod
    def decoded(cls, raw: bytes, *, limits: Limits = DEFAULT_LIMITS, before: Transcript | None = None) -> CheckInput:
        """The check input in ``raw`` as the one-pass decoder reads it: :meth:`from_json`'s result wherever this
        returns (the check-input format only, no other message format converted, no size in bytes checked).

        Raises:
            ValueError, msgspec.ValidationError: the one-pass decoder refuses ``raw``.
            InputError: its parts are over ``limits`` or do not fit together.
        """
        return cls._checked(fastdecode.decode(raw, max_depth=limits.max_depth), limits, before)

    @classmethod
    def _checked(cls, doc: fastdecode.CheckIn, limits: Limits, before: Transcript | None = None) -> CheckInput:
        problems = _size_problems(doc, limits, before)
        if problems:
            raise InputError(problems)
        return cls._built(doc, limits, before)

    @classmethod
    def _built(cls, doc: fastdecode.CheckIn, limits: Limits, before: Transcript | None = None) -> CheckInput:
        """The input from its decoded record, every problem of its policy, transcript and action named at once."""
        found: list[FieldProblem] = []
        policy = _attempt(found, _policy, doc.policy) if doc.policy is not None else None
        of_policy = len(found)
        transcript = _attempt(found, _transcript, doc.messages, before)
        action = _attempt(found, _checked_action, doc.action, limits)
        if found or transcript is None or action is None:
            # only the policy is bad: a PolicyError, as before (an InputError all the same)
            raise (PolicyError if of_policy and of_policy == len(found) else InputError)(found)
        return cls(transcript=transcript, action=action, policy=policy, user_id=doc.user_id)

    @classmethod
    def _explain(cls, text: str | bytes, limits: Limits, fast: Exception) -> None:
        """Raise the :class:`InputError` naming every problem of an input the fast decoder refused."""
        try:
            data = strictjson.loads(text)
        except RecursionError:
            raise InputError([FieldProblem("", f"JSON nests deeper than {limits.max_depth} levels")]) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError([FieldProblem("", f"not valid JSON: {exc}")]) from None
        cls.from_dict(data, limits=limits)
        # The careful parser accepted what the fast one refused: refuse it still, with the fast one's words.
        raise InputError([problem_from_msgspec(fast)])

    @classmethod
    def from_dict(cls, data: Any, *, limits: Limits = DEFAULT_LIMITS) -> CheckInput:
        """Parse already-decoded JSON data."""
        if not isinstance(data, dict):
            raise InputError([FieldProblem("", f"must be a JSON object, got {type(data).__name__}")])
        if is_chat(data.get("messages")):  # OpenAI Chat Completions messages: the one documented conversion
            data = {**data, "messages": messages_from_chat(data["messages"])}
        # Every problem at once, as far as each part can be read: the lexical ones (duplicate keys, NaN, ...),
        # the shape's, and, when the shape is bad, the input's own policy's (read alone); past a bad shape,
        # nothing more can be read. On the good path each part is read once.
        found = strictjson.problems(data, max_depth=limits.max_depth)
        if not any(p.problem.startswith("nests deeper") for p in found):
            try:
                plain = strictjson.unmarked(data) if found else data
                shape = problems_of(plain, fastdecode.CheckIn, "")
            except RecursionError:  # only past raised limits: deeper than Python reads
                raise InputError([FieldProblem("", "nests too deeply to read")]) from None
            # a key holding a lone surrogate is named at its object by the strict pass: its text cannot be shown
            found += [p for p in shape if not strictjson.has_surrogate(p.path)]
            if found and isinstance(plain.get("policy"), dict):
                _attempt(found, _policy, plain["policy"])
        if found:
            raise InputError(_unique(found))
        return cls._checked(_as_record(data, fastdecode.CheckIn, ""), limits)


def _from_chat(text: str | bytes) -> str | None:
    """The input with its OpenAI Chat Completions messages in the check-input format, or None when it holds
    none (or is no JSON object: the careful parser names that)."""
    try:
        data = strictjson.loads(text)
    except (RecursionError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or not is_chat(data.get("messages")):
        return None
    return json.dumps({**data, "messages": messages_from_chat(data["messages"])})


def _attempt(found: list[FieldProblem], fn: Callable[..., T], *args: Any) -> T | None:
    """``fn(*args)``; None when it raised :class:`InputError`, whose problems go into ``found``."""
    try:
        return fn(*args)
    except InputError as exc:
        found.extend(exc.problems)
        return None


def _unique(problems: list[FieldProblem]) -> list[FieldProblem]:
    return list(dict.fromkeys(problems))


def _checked_action(doc: fastdecode.ActionIn, limits: Limits) -> PendingAction:
    action = _pending(doc)
    _check_arg_sizes(action, limits)
    return action


def _policy(data: dict[str, Any]) -> Policy:
    """The input's own policy; its problems are named from the input's root (``policy.tools.x.risk``)."""
    try:
        return Policy.from_dict(data, source="policy")
    except PolicyError as exc:
        raise PolicyError(
            [FieldProblem(f"policy.{p.path}" if p.path else "policy", p.problem) for p in exc.problems]
        ) from None


def _converted(data: Any, kind: type[T], root: str) -> T:
    """``data`` (decoded JSON) as the record ``kind``, or an :class:`InputError` naming every problem."""
    found = problems_of(data, kind, root)
    if found:
        raise InputError(found)
    return _as_record(data, kind, root)


def _as_record(data: Any, kind: type[T], root: str) -> T:
    """``data``, whose shape was read already, as the record ``kind``."""
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:  # the reader passed what msgspec refuses: msgspec's own words
        problem = problem_from_msgspec(exc)
        raise InputError([FieldProblem(_joined(root, problem.path), problem.problem)]) from None


def _joined(root: str, path: str) -> str:
    return f"{root}{path}" if path.startswith("[") else ".".join(p for p in (root, path) if p)


_MESSAGE_AT = re.compile(r"^messages\[(\d+)\]")


def _shifted(problems: Sequence[FieldProblem], offset: int) -> list[FieldProblem]:
    """``problems`` with each ``messages[i]`` path moved on by ``offset`` messages."""
    return [
        FieldProblem(_MESSAGE_AT.sub(lambda m: f"messages[{int(m[1]) + offset}]", p.path), p.problem) for p in problems
    ]


def _text(m: fastdecode.MessageIn) -> str:
    """A message's content as the transcript holds it (text blocks joined by line breaks)."""
    return m.content if isinstance(m.content, str) else "\n".join(b.text for b in m.content)


def _transcript(messages: list[fastdecode.MessageIn], before: Transcript | None = None) -> Transcript:
    built = [
        Message(
            m.role,
            _text(m),
            tuple(ToolCall(c.id, c.name, c.args) for c in m.tool_calls) if m.tool_calls else (),
            m.tool_call_id,
            m.name,
            m.author,
            m.is_error,
        )
        for m in messages
    ]
    try:
        return Transcript(built) if before is None else before.extend(built)
    except InputError as exc:
        raise InputError(exc.problems) from None


def _strict(value: Any, root: str) -> None:
    """Raise :class:`InputError` for what strict JSON refuses in ``value`` (Python data, held to the same rules)."""
    found = strictjson.problems(value, root=root)
    if found:
        raise InputError(found)


def parse_transcript(data: Any) -> Transcript:
    """A transcript from a list of message objects in the check-input format, or OpenAI Chat Completions
    messages (:mod:`validator.inputs.chat`)."""
    if isinstance(data, Transcript):
        return data
    items = list(data) if isinstance(data, list | tuple) else data
    if isinstance(items, list) and all(isinstance(m, Message) for m in items):
        return Transcript(items)
    if is_chat(items):
        items = messages_from_chat(items)
    _strict(items, "messages")
    return _transcript(_converted(items, list[fastdecode.MessageIn], "messages"))


def parse_action(data: Any) -> PendingAction:
    """A pending action from ``{"tool", "args", "justification"}`` (or a :class:`PendingAction`)."""
    if isinstance(data, PendingAction):
        _strict(dict(data.args), "action.args")
        _check_arg_sizes(data, DEFAULT_LIMITS)
        return data
    _strict(data, "action")
    doc = _converted(data, fastdecode.ActionIn, "action")
    action = _pending(doc)
    _check_arg_sizes(action, DEFAULT_LIMITS)
    return action


def _check_arg_sizes(action: PendingAction, limits: Limits) -> None:
    """Raise :class:`InputError` for a string in the arguments over ``limits.max_arg_chars``."""
    stack: list[tuple[Any, str]] = [(action.args, "action.args")]
    found: list[FieldProblem] = []
    while stack:
        value, path = stack.pop()
        if isinstance(value, str) and len(value) > limits.max_arg_chars:
            found.append(FieldProblem(path, f"has {len(value):,} characters; at most {limits.max_arg_chars:,}"))
        elif isinstance(value, Mapping):
            stack.extend((v, f"{path}.{k}") for k, v in value.items())
        elif isinstance(value, list | tuple):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(value))
    if found:
        raise InputError(sorted(found, key=lambda p: p.path))


def _size_problems(doc: fastdecode.CheckIn, limits: Limits, before: Transcript | None = None) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    held = before.messages if before is not None else ()
    count = len(held) + len(doc.messages)
    if count > limits.max_messages:
        problems.append(FieldProblem("messages", f"has {count:,} messages; at most {limits.max_messages:,}"))
        return problems
    total = before.fact(CHARS) if before is not None else 0
    for i, m in enumerate(doc.messages, start=len(held)):
        n = len(_text(m))
        total += n  # as the transcript holds it, the same whole or in parts
        if n > limits.max_message_chars:
            problems.append(
                FieldProblem(f"messages[{i}].content", f"has {n:,} characters; at most {limits.max_message_chars:,}")
            )
    if total > limits.max_total_chars:
        problems.append(
            FieldProblem("messages", f"hold {total:,} characters in all; at most {limits.max_total_chars:,}")
        )
    return problems


def read_messages(
    messages: Any, agent_request: Mapping[str, Any] | None = None, cache: Conversations[Any] | None = None
) -> Transcript:
    """The transcript of a check, from whatever the caller passed; a typed error for anything unreadable.

    A :class:`Transcript` passes through untouched (integrations build it once); message dicts in
    the check-input format are parsed; with ``messages=None`` the agent's Anthropic request is read
    (through ``cache``, the validator's, when given).
    """
    try:
        if messages is None and agent_request is not None:
            body = agent_request.get("messages") or []
            return transcript_from_anthropic(body, system=agent_request.get("system"), cache=cache)
        return parse_transcript(messages)
    except InputError:
        raise
    except Exception as exc:  # input of a shape no parser expected: still a typed error, never a crash
        raise InputError([FieldProblem("messages", f"cannot be read: {type(exc).__name__}: {exc}")]) from exc


def read_action(action: Any) -> PendingAction:
    """The pending action of a check: a :class:`PendingAction` as is, or ``{"tool", "args", "justification"}``."""
    try:
        return parse_action(action)
    except InputError:
        raise
    except Exception as exc:
        raise InputError([FieldProblem("action", f"cannot be read: {type(exc).__name__}: {exc}")]) from exc


def check_input_data(transcript: Transcript, action: PendingAction, user_id: str | None) -> dict[str, Any]:
    """One call as check-input JSON data (the service's wire format, read back by :meth:`CheckInput.from_dict`):
    the messages, the action with its justification and call id, the user."""
    messages: list[dict[str, Any]] = []
    for m in transcript.messages:
        message: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            message["tool_calls"] = [{"id": c.id, "name": c.name, "args": dict(c.args)} for c in m.tool_calls]
        for name in ("tool_call_id", "name", "author"):
            if getattr(m, name) is not None:
                message[name] = getattr(m, name)
        if m.is_error:
            message["is_error"] = True
        messages.append(message)
    wire: dict[str, Any] = {"tool": action.tool, "args": dict(action.args)}
    if action.justification is not None:
        wire["justification"] = action.justification
    if action.call_id:
        wire["call_id"] = action.call_id
    if action.find_evidence:
        wire["find_evidence"] = True
    data: dict[str, Any] = {"messages": messages, "action": wire}
    if user_id is not None:
        data["user_id"] = user_id
    return data
