"""Strict JSON in: what ``json.loads`` lets through and this library refuses, each with its field path.

- duplicate keys (a consumer that keeps the first would act on another value than the one judged);
- ``NaN``, ``Infinity``, ``-Infinity`` and numbers out of a float's range (``1e400``, and ``1e-400``, which
  would be read as 0);
- lone surrogates (``"\\ud800"``): valid JSON escapes, but not Unicode text; nothing downstream
  could hash, record or print them faithfully;
- nesting deeper than the limit.

:func:`loads` parses with markers for the first three; :func:`problems` walks any parsed value
(from :func:`loads` or handed over from Python) once and names every problem by its path; :func:`read`
does both for JSON of any shape (a service route's body), fast when the JSON is clean.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import jiter

from validator.exceptions import FieldProblem, InputError

__all__ = ["fast", "has_surrogate", "loads", "problems", "read", "unmarked"]


class _Duplicated(dict[str, Any]):
    """An object in which some keys appeared more than once."""

    duplicates: list[str]


class _NotFinite(str):
    """A number JSON allows and this library does not (NaN, Infinity, 1e400), kept as its text."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    duplicates: list[str] = []
    for key, value in pairs:
        if key in seen and key not in duplicates:
            duplicates.append(key)
        seen[key] = value
    if not duplicates:
        return seen
    marked = _Duplicated(seen)
    marked.duplicates = duplicates
    return marked


def _float(text: str) -> Any:
    value = float(text)
    if value == 0.0 and _NONZERO.search(text.partition("e")[0].partition("E")[0]):
        return _NotFinite(text)  # 1e-400: a number JSON allows that a float cannot hold, read as 0
    return value if math.isfinite(value) else _NotFinite(text)


_NONZERO = re.compile(r"[1-9]")
_TINY = re.compile(rb"[eE]-0*[0-9]{3,}|\.0{200,}")
"""What a number that may underflow looks like (an exponent of three digits below zero, 200 zeros after the
point); only a body holding one is read again, slowly, to tell."""


def loads(text: str | bytes) -> Any:
    """``json.loads``, with duplicate keys and non-finite numbers marked for :func:`problems`. Bytes are UTF-8, as
    the fast pass reads them: no other encoding is guessed and a byte order mark is refused (``json.loads`` of
    bytes would read UTF-16 and drop the mark, taking what the fast pass refuses)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    return json.loads(text, object_pairs_hook=_pairs, parse_constant=_NotFinite, parse_float=_float)


def _may_underflow(raw: bytes) -> bool:
    """Whether ``raw`` holds what :data:`_TINY` matches, found by ``bytes.find`` (fast) at each ``e-`` and ``E-``
    and tried there only: a regular expression scanning a long body for ``[eE]`` stops at every letter e."""
    if b"." + b"0" * 200 in raw:  # with an exponent of two digits (>= 1e-99) a number underflows only past 224
        return True
    for mark in (b"e-", b"E-"):
        at = raw.find(mark)
        while at != -1:
            if _TINY.match(raw, at):
                return True
            at = raw.find(mark, at + 2)
    return False


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (it cannot be encoded as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer every JSON reader reads exactly (JavaScript's ``Number.MAX_SAFE_INTEGER``): a larger
one (``12345678901234567891`` as a recipient) would be judged here as one number and run elsewhere as another."""


def problems(value: Any, *, max_depth: int = 64, root: str = "") -> list[FieldProblem]:
    """Every duplicate key, non-finite number, integer beyond ±2^53, lone surrogate and over-deep nesting in
    ``value``."""
    found: list[FieldProblem] = []
    stack: list[tuple[Any, str, int]] = [(value, root, 1)]
    while stack:
        item, path, depth = stack.pop()
        if depth > max_depth:
            found.append(FieldProblem(path, f"nests deeper than {max_depth} levels"))
            continue
        if isinstance(item, _NotFinite):
            tiny = float(item) == 0.0
            why = "underflows: out of a float's range (it would be read as 0)" if tiny else "is not a finite number"
            found.append(FieldProblem(path, f"{str(item)[:40]!r} {why}"))
        elif isinstance(item, str):
            if has_surrogate(item):
                found.append(FieldProblem(path, "holds a lone surrogate: not valid Unicode text"))
        elif isinstance(item, float):
            if not math.isfinite(item):
                found.append(FieldProblem(path, f"{item!r} is not a finite number"))
        elif isinstance(item, int) and not isinstance(item, bool) and not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
            found.append(
                FieldProblem(
                    path, f"{str(item)[:30]} is beyond ±2^53: a reader of JSON numbers as doubles reads another number"
                )
            )
        elif isinstance(item, dict):
            for key in getattr(item, "duplicates", ()):
                found.append(FieldProblem(_key(path, str(key)), "appears more than once in its object"))
            for key, child in item.items():
                if isinstance(key, str) and has_surrogate(key):
                    found.append(FieldProblem(path, "has a key holding a lone surrogate"))
                    continue
                stack.append((child, _key(path, str(key)), depth + 1))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))
    return sorted(found, key=lambda p: p.path)


def unmarked(value: Any) -> Any:
    """``value`` with the markers of :func:`loads` made plain again (an object of duplicated keys a ``dict``,
    a non-finite number a ``float``): what a reader of the shape expects, once the problems are named."""
    if isinstance(value, _NotFinite):
        return float(value)
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unmarked(v) for v in value]
    return value


def fast(raw: bytes, *, underflow: bool = True) -> Any:
    """``raw`` by these rules' fast pass (``jiter``: a duplicate key, ``NaN``, a lone surrogate or a number that
    underflows refused), with no place named; raises :class:`ValueError`. ``underflow=False``: the caller
    looks for a number that underflows itself (:func:`underflows`), where the value holds a zero."""
    value = jiter.from_json(raw, allow_inf_nan=False, catch_duplicate_keys=True)
    if underflow and underflows(raw):
        raise ValueError(UNDERFLOWS)
    return value


UNDERFLOWS = "a number underflows: out of a float's range"


def underflows(raw: bytes) -> bool:
    """Whether a number in ``raw`` underflows (``1e-400``: read as ``0.0`` by a fast reader)."""
    return _may_underflow(raw) and _underflows(loads(raw))


def _underflows(value: Any) -> bool:
    if isinstance(value, _NotFinite):
        return True
    if isinstance(value, dict):
        return any(_underflows(v) for v in value.values())
    if isinstance(value, list):
        return any(_underflows(v) for v in value)
    return False


def read(raw: bytes, *, max_depth: int) -> Any:
    """``raw`` read by these rules: any problem is an :class:`InputError` naming its place. One fast pass
    (``jiter``) for clean JSON; a refused one is read again, slowly, to name the place (a duplicate key, a
    lone surrogate)."""
    try:
        value = fast(raw)
    except ValueError as exc:
        try:
            value = loads(raw)
        except (ValueError, RecursionError):
            raise InputError([FieldProblem("", f"not valid JSON: {exc}")]) from None
        found = problems(value, max_depth=max_depth)
        raise InputError(found or [FieldProblem("", f"not valid JSON: {exc}")]) from None
    found = problems(value, max_depth=max_depth)
    if found:
        raise InputError(found)
    return value
