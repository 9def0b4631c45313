"""The check input's one definition (the msgspec records below), decoded in one pass from bytes.

:mod:`jiter` reads the JSON and refuses what strict JSON refuses here (duplicate keys, lone
surrogates, ``NaN``/``Infinity``); :func:`msgspec.convert` then checks every field's type against
the records (strict: no coercion; unknown keys refused). Only the parts whose nesting the
format leaves open (a call's ``args``, the ``justification``, the ``policy``) are walked, for
depth and for numbers out of a float's range.

The records are the format: the JSON Schema is generated from them (:mod:`validator.schemas`), and
:func:`validator.exceptions.problems_of` reads them to name every problem of a refused input by its path (msgspec
stops at the first), so nothing else describes the format a second time.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import msgspec

from validator.inputs import strictjson
from validator.inputs.strictjson import MAX_SAFE_INTEGER

__all__ = ["ActionIn", "CheckIn", "MessageIn", "TextBlockIn", "ToolCallIn", "decode"]

_Id = Annotated[str, msgspec.Meta(min_length=1)]
_CallId = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class _Record(msgspec.Struct, forbid_unknown_fields=True):
    pass


class ToolCallIn(_Record):
    """A tool call the assistant made."""

    id: _Id
    name: _Id
    args: dict[str, Any] = msgspec.field(default_factory=dict)


class TextBlockIn(_Record):
    """A block of text."""

    type: Literal["text"]
    text: str
    cache_control: dict[str, Any] | None = None


class MessageIn(_Record):
    """One message: text, or text blocks. A tool's output is a message of role ``tool``, never a block of
    another role."""

    role: Literal["user", "assistant", "tool", "system"]
    content: str | list[TextBlockIn] = ""
    tool_calls: list[ToolCallIn] = msgspec.field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    author: str | None = None
    is_error: bool = False


class ActionIn(_Record):
    """The pending action: the tool, its arguments, the agent's justification and the host's call id (the
    same id is the same call: a retry spends nothing new)."""

    tool: _Id
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    justification: Any = None
    call_id: _CallId | None = None
    find_evidence: bool = False
    """The host cannot add a ``justification`` argument to this tool: without one, the validator reads the
    user's own words for the request itself (the verdict's findings say ``evidence: found``)."""


class CheckIn(_Record):
    """A pending action to validate against the conversation that led to it."""

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


def _within(value: Any, levels: int) -> tuple[bool, bool]:
    """Whether ``value`` nests at most ``levels`` deep and holds only finite numbers (no path kept: this is the
    fast answer; the careful parser names the places), and whether it holds a float zero (the only value a
    number that underflows is read as)."""
    stack = [(value, levels)]
    zero = False
    while stack:
        item, left = stack.pop()
        kind = type(item)
        if kind is dict or kind is list:
            if left <= 0 or (left == 1 and item):  # it, or anything inside it, is too deep
                return False, zero
            children = item.values() if kind is dict else item
            stack.extend((child, left - 1) for child in children if type(child) in _DEEP)
        elif kind is float:
            if not math.isfinite(item):
                return False, zero
            zero = zero or item == 0.0
        elif kind is int and abs(item) > MAX_SAFE_INTEGER:
            return False, zero
    return True, zero


_DEEP = (dict, list, float, int)


def decode(data: bytes, *, max_depth: int) -> CheckIn:
    """The typed check input in ``data``.

    Raises:
        ValueError: the JSON is malformed or not strict (duplicate key, lone surrogate, a
            non-finite number, nesting deeper than ``max_depth``).
        msgspec.ValidationError: a field has the wrong type, an unknown key, or is missing.
    """
    value = strictjson.fast(data, underflow=False)
    doc = msgspec.convert(value, CheckIn)
    zero = False
    for part, depth in _open_parts(doc):
        if not part and type(part) is not float:  # nothing in it (a float zero may be a number that underflowed)
            continue
        fits, zeros = _within(part, max_depth - depth + 1)
        if not fits:
            raise ValueError("a free-form part nests too deep or holds a number out of range")
        zero = zero or zeros
    # numbers stand only in the free-form parts (every other field is text, a boolean or a record): where none
    # of them holds a zero, no number underflowed, and the body is not scanned for one
    if zero and strictjson.underflows(data):
        raise ValueError(strictjson.UNDERFLOWS)
    return doc
