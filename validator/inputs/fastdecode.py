"""The check input decoded in one pass, from bytes straight into typed records.

:mod:`jiter` reads the JSON and refuses what strict JSON refuses here (duplicate keys, lone
surrogates, ``NaN``/``Infinity``); :func:`msgspec.convert` then checks every field's type against
the records below (strict: no coercion; unknown keys refused). Only the parts whose nesting the
format leaves open (a call's ``args``, the ``justification``, the ``policy``) are walked, for
depth and for numbers out of a float's range.

The records mirror the pydantic models of :mod:`validator.inputs.checkinput`, which stay the
format's definition (the JSON schema is generated from them) and its error reporter: an input
this decoder refuses is parsed again by them, slowly, to name every problem by its path. A
property test holds the two to the same answers.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

import jiter
import msgspec

from validator.exceptions import FieldProblem
from validator.inputs.strictjson import MAX_SAFE_INTEGER

__all__ = ["ActionIn", "CheckIn", "MessageIn", "decode", "problem"]

_Id = Annotated[str, msgspec.Meta(min_length=1)]
_CallId = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class _Record(msgspec.Struct, forbid_unknown_fields=True):
    pass


class ToolCallIn(_Record):
    id: _Id
    name: _Id
    args: dict[str, Any] = msgspec.field(default_factory=dict)


class TextBlockIn(_Record):
    type: Literal["text"]
    text: str
    cache_control: dict[str, Any] | None = None


class MessageIn(_Record):
    role: Literal["user", "assistant", "tool", "system"]
    content: str | list[TextBlockIn] = ""
    tool_calls: list[ToolCallIn] = msgspec.field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    author: str | None = None


class ActionIn(_Record):
    tool: _Id
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    justification: Any = None
    call_id: _CallId | None = None


class CheckIn(_Record):
    messages: list[MessageIn]
    action: ActionIn
    policy: dict[str, Any] | None = None
    user_id: str | None = None


def _open_parts(doc: CheckIn) -> list[tuple[Any, int]]:
    """The parts of free shape, each with the depth it starts at in the document (the root is 1)."""
    parts: list[tuple[Any, int]] = [(doc.action.args, 3), (doc.action.justification, 3), (doc.policy, 2)]
    for m in doc.messages:
        if m.tool_calls:
            parts.extend((call.args, 6) for call in m.tool_calls)
        if not isinstance(m.content, str):
            parts.extend((b.cache_control, 6) for b in m.content if b.cache_control)
    return parts


def _within(value: Any, levels: int) -> bool:
    """Whether ``value`` nests at most ``levels`` deep and holds only finite numbers (no path kept: this is the
    fast answer; the careful parser names the places)."""
    stack = [(value, levels)]
    while stack:
        item, left = stack.pop()
        kind = type(item)
        if kind is dict or kind is list:
            if left <= 0 or (left == 1 and item):  # it, or anything inside it, is too deep
                return False
            children = item.values() if kind is dict else item
            stack.extend((child, left - 1) for child in children if type(child) in _DEEP)
        elif (kind is float and not math.isfinite(item)) or (kind is int and abs(item) > MAX_SAFE_INTEGER):
            return False
    return True


_DEEP = (dict, list, float, int)


def decode(data: bytes, *, max_depth: int) -> CheckIn:
    """The typed check input in ``data``.

    Raises:
        ValueError: the JSON is malformed or not strict (duplicate key, lone surrogate, a
            non-finite number, nesting deeper than ``max_depth``).
        msgspec.ValidationError: a field has the wrong type, an unknown key, or is missing.
    """
    value = jiter.from_json(data, allow_inf_nan=False, catch_duplicate_keys=True)
    doc = msgspec.convert(value, CheckIn)
    for part, depth in _open_parts(doc):
        if part and not _within(part, max_depth - depth + 1):
            raise ValueError("a free-form part nests too deep or holds a number out of range")
    return doc


_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)


def problem(exc: Exception) -> FieldProblem:
    """The decoder's refusal as a field problem (``$.messages[0].role`` becomes ``messages[0].role``)."""
    found = _AT.match(str(exc))
    if found is None or not found["path"]:
        return FieldProblem("", str(exc))
    return FieldProblem(found["path"].lstrip("."), found["what"])
