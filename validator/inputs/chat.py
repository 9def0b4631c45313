"""OpenAI Chat Completions messages as check-input messages: plain data, one documented conversion.

A Chat Completions conversation is a list of ``{"role", "content", ...}`` messages: ``system`` and ``developer``
messages (the operator's), ``user`` messages (``content`` a string or a list of parts, ``name`` the participant),
``assistant`` messages (``content`` may be ``null``; ``tool_calls[].function`` holds each call's ``name`` and its
``arguments`` as a JSON string), and ``tool`` messages answering a call by ``tool_call_id``. :func:`messages_from_chat`
turns them into the check-input format (the one :mod:`validator.inputs.checkinput` reads), and
:func:`transcript_from_chat` into a transcript:

- a ``developer`` message is a ``system`` one; text parts are kept, other parts (images, audio, files) left out
  (they never authorize), a ``refusal`` part or field is the assistant's text;
- each ``tool_calls[].function`` becomes a call ``{"id", "name", "args"}`` (arguments that are not a JSON object
  are kept whole under ``arguments``: the gate reads them, nothing is dropped);
- a ``tool`` message gets the name of the call it answers;
- a user message's ``name`` is its ``author``: in a conversation with several people, pass the checking user's
  name as ``user_id`` (a message by another name is another participant's, never the user's words).

Messages may be dicts or the ``openai`` package's models (``ChatCompletionMessage``): read as data. The legacy
``function_call`` / ``function`` role is not read (a typed error names it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from validator.exceptions import FieldProblem, InputError
from validator.inputs.responses import item_args, item_text, plain
from validator.inputs.transcript import Message, ToolCall, Transcript

__all__ = ["is_chat", "messages_from_chat", "transcript_from_chat"]

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
_CHAT_ONLY_KEYS = frozenset({"refusal", "function_call", "audio", "annotations"})
_CHAT_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
"""Content parts only Chat Completions has (another format's block, a ``tool_result``, is not one)."""


def is_chat(messages: Any) -> bool:
    """Whether ``messages`` are Chat Completions messages rather than the check-input format: a call under
    ``function``, a ``developer`` role, a ``null`` content, a part only they have (an image, audio, a file, a
    refusal), or a field only they have (``refusal``, ``audio``, ``annotations``, ``function_call``)."""
    if not isinstance(messages, list | tuple):
        return False
    for raw in messages:
        m = plain(raw)  # a model as data; anything else but a mapping: empty
        if m.get("role") == "developer" or ("content" in m and m["content"] is None) or _CHAT_ONLY_KEYS & m.keys():
            return True
        calls = m.get("tool_calls")
        if isinstance(calls, list) and any("function" in c for c in map(plain, calls)):
            return True
        content = m.get("content")
        if isinstance(content, list) and any(p.get("type") in _CHAT_PARTS for p in map(plain, content)):
            return True
    return False


def messages_from_chat(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Chat Completions messages as check-input messages (see the module docstring); an :class:`InputError`
    naming each message that is not one."""
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    problems: list[FieldProblem] = []
    for i, raw in enumerate(messages):
        m = plain(raw)
        where = f"messages[{i}]"
        if not m:  # not a mapping (plain reads it as empty), or an empty one
            problems.append(FieldProblem(where, "must be a message object"))
            continue
        role = _ROLES.get(str(m.get("role")))
        if role is None:
            problems.append(
                FieldProblem(
                    f"{where}.role", f"{m.get('role')!r} is not read (system, developer, user, assistant, tool)"
                )
            )
            continue
        message: dict[str, Any] = {"role": role, "content": _content(m)}
        calls = [_call(c, f"{where}.tool_calls[{k}]", problems) for k, c in enumerate(m.get("tool_calls") or [])]
        if role == "assistant" and calls:
            message["tool_calls"] = [c for c in calls if c is not None]
            names.update({c["id"]: c["name"] for c in message["tool_calls"]})
        if role == "tool":
            call_id = m.get("tool_call_id")
            message["tool_call_id"] = call_id
            if isinstance(call_id, str) and call_id in names:
                message["name"] = names[call_id]
        if role == "user" and isinstance(m.get("name"), str) and m["name"]:
            message["author"] = m["name"]
        out.append(message)
    if problems:
        raise InputError(problems, source="chat completions messages")
    return out


def transcript_from_chat(messages: Sequence[Any]) -> Transcript:
    """A validator transcript from Chat Completions messages (dicts or the ``openai`` models)."""
    built = [
        Message(
            m["role"],
            m["content"],
            tuple(ToolCall(c["id"], c["name"], c["args"]) for c in m.get("tool_calls", ())),
            m.get("tool_call_id"),
            m.get("name"),
            m.get("author"),
        )
        for m in messages_from_chat(messages)
    ]
    return Transcript(built)


def _content(m: Mapping[str, Any]) -> str:
    """The text parts and a refusal (as :func:`~validator.inputs.responses.item_text` reads them), and the
    message's own ``refusal`` field."""
    text = item_text(m.get("content"))
    refusal = m.get("refusal")
    return "\n".join(t for t in (text, refusal if isinstance(refusal, str) else "") if t)


def _call(raw: Any, where: str, problems: list[FieldProblem]) -> dict[str, Any] | None:
    call = plain(raw)
    function = plain(call.get("function"))
    if not function:
        problems.append(FieldProblem(where, "must be a call with a 'function' object"))
        return None
    call_id, name = call.get("id"), function.get("name")
    if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
        problems.append(FieldProblem(where, "needs an 'id' and a 'function.name'"))
        return None
    return {"id": call_id, "name": name, "args": item_args(function.get("arguments") or "{}")}
