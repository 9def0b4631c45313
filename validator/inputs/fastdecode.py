"""The check input's one definition (the msgspec records below), decoded in one pass from bytes.

:mod:`jiter` reads the JSON and refuses what strict JSON refuses here (duplicate keys, lone
surrogates, ``NaN``/``Infinity``); :func:`msgspec.convert` then checks every field's type against
the records (strict: no coercion; unknown keys refused). Only the parts whose nesting the
format leaves open (a call's ``args``, the ``justification``, the ``policy``) are walked, for
depth and for numbers out of a float's range.

The records are the format: the JSON Schema is generated from them (:mod:`validator.schemas`), and
:func:`problems` reads them to name every problem of a refused input by its path (msgspec stops at
the first), so nothing else describes the format a second time.
"""

from __future__ import annotations

import math
import re
import types
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec

from validator.exceptions import FieldProblem
from validator.inputs import strictjson
from validator.inputs.strictjson import MAX_SAFE_INTEGER

__all__ = ["ActionIn", "CheckIn", "MessageIn", "TextBlockIn", "ToolCallIn", "decode", "problem", "problems"]

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


_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)


def problem(exc: Exception) -> FieldProblem:
    """The decoder's refusal as a field problem (``$.messages[0].role`` becomes ``messages[0].role``)."""
    found = _AT.match(str(exc))
    if found is None or not found["path"]:
        return FieldProblem("", str(exc))
    return FieldProblem(found["path"].lstrip("."), found["what"])


# -- every problem, by its path ---------------------------------------------------------------------


def problems(value: Any, kind: Any, path: str = "") -> list[FieldProblem]:
    """Every way ``value`` (decoded JSON) is not a ``kind`` (a record or a type of one), each at its path."""
    found: list[FieldProblem] = []
    _reader(kind)(value, path, found)
    return found


Check = Callable[[Any, str, list[FieldProblem]], None]
"""``check(value, path, found)``: appends to ``found`` every problem of ``value`` at ``path``."""


def _at(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _named(value: Any) -> str:
    return type(value).__name__


_SHAPES: dict[Any, str] = {list: "list", dict: "dictionary", str: "string", bool: "boolean", type(None): "null"}
"""The JSON shapes the records use, by the Python type decoded JSON has for each."""


@cache
def _reader(kind: Any) -> Check:
    """The problem reader of ``kind``, built once per type from its annotations (a history of thousands of
    messages is read without asking ``typing`` about each of them)."""
    origin, args = get_origin(kind), get_args(kind)
    if origin is Annotated:
        return _annotated(_reader(args[0]), args[1:])
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return _record(kind)
    if origin is Union or origin is types.UnionType:
        return _union(args)
    if origin is Literal:
        return _literal(args)
    if kind is Any:
        return _anything
    shape = origin or kind
    if shape not in _SHAPES:  # a type the records do not use yet: teach this reader it first
        raise TypeError(f"no problem reader for {shape!r}")
    return _list(_reader(args[0])) if shape is list else _shaped(shape)


def _anything(value: Any, path: str, found: list[FieldProblem]) -> None:
    return None


def _annotated(inner: Check, metas: tuple[Any, ...]) -> Check:
    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        inner(value, path, found)
        if isinstance(value, str):
            for meta in metas:
                _lengths(value, meta, path, found)

    return check


def _literal(values: tuple[Any, ...]) -> Check:
    listed = ", ".join(map(repr, values[:-1])) + (f" or {values[-1]!r}" if len(values) > 1 else repr(values[0]))

    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        if not any(type(value) is type(a) and value == a for a in values):
            found.append(FieldProblem(path, f"must be one of {listed}, got {value!r}"))

    return check


def _shaped(shape: type) -> Check:
    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        if type(value) is not shape:
            found.append(FieldProblem(path, f"Input should be a valid {_SHAPES[shape]}, got {_named(value)}"))

    return check


def _list(item: Check) -> Check:
    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        if type(value) is not list:
            found.append(FieldProblem(path, f"Input should be a valid list, got {_named(value)}"))
            return
        for i, each in enumerate(value):
            item(each, f"{path}[{i}]", found)

    return check


def _shape_of(kind: Any) -> Any:
    """The JSON shape a type of the records takes (a record is a dictionary)."""
    bare = get_args(kind)[0] if get_origin(kind) is Annotated else kind
    if isinstance(bare, type) and issubclass(bare, msgspec.Struct):
        return dict
    return get_origin(bare) or bare


def _record(kind: type[msgspec.Struct]) -> Check:
    fields = tuple((f.encode_name, _reader(f.type), f.required) for f in msgspec.structs.fields(kind))
    names = frozenset(name for name, _, _ in fields)

    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        if type(value) is not dict:
            found.append(FieldProblem(path, f"Input should be a valid dictionary, got {_named(value)}"))
            return
        for key in value:
            if key not in names:
                found.append(FieldProblem(_at(path, str(key)), "unknown field"))
        for name, read, required in fields:
            if name in value:
                read(value[name], _at(path, name), found)
            elif required:
                found.append(FieldProblem(_at(path, name), "is required"))

    return check


def _union(members: tuple[Any, ...]) -> Check:
    """Fine when a member takes the value; else the problems of the member of its shape, or one line."""
    every = tuple((_shape_of(m), _reader(m)) for m in members)
    present = tuple(r for r in every if r[0] is not type(None))  # what an optional field that holds something is

    def names(options: tuple[tuple[Any, Check], ...]) -> str:
        return " or ".join(_SHAPES.get(shape, "object") for shape, _ in options)

    expected_every, expected_present = names(every), names(present)

    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        options = every if value is None else present
        if len(options) == 1:
            options[0][1](value, path, found)
            return
        tried = []
        for _, read in options:
            seen: list[FieldProblem] = []
            read(value, path, seen)
            if not seen:
                return
            tried.append(seen)
        for (shape, _), seen in zip(options, tried, strict=True):
            if shape is type(value):  # the member of the value's own shape says what is wrong inside it
                found.extend(seen)
                return
        expected = expected_every if value is None else expected_present
        found.append(FieldProblem(path, f"Input should be a {expected}, got {_named(value)}"))

    return check


def _lengths(value: str, meta: Any, path: str, found: list[FieldProblem]) -> None:
    low, high = getattr(meta, "min_length", None), getattr(meta, "max_length", None)
    if low is not None and len(value) < low:
        found.append(FieldProblem(path, f"String should have at least {low} character{'s' * (low != 1)}"))
    if high is not None and len(value) > high:
        found.append(FieldProblem(path, f"String should have at most {high} character{'s' * (high != 1)}"))
