"""Dotted paths into argument values (``message.to``), and their scalar leaves."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

Scalar = str | int | float | bool
Found = Literal["found", "absent", "unreadable"]


def lookup(args: Mapping[str, Any], path: str) -> tuple[Found, Any]:
    """Follow ``path`` (dot-separated keys, through lists element by element) into ``args``.

    ``absent`` when a key is missing from a mapping (an optional argument not given); ``unreadable``
    when the path meets a value it cannot go into, or a list some of whose items lack the key (the
    items without it cannot be checked): a target that cannot be read is never treated as absent.
    """
    values: list[Any] = [args]
    fanned = False
    for key in path.split("."):
        step: list[Any] = []
        for value in values:
            items = value if isinstance(value, list) else [value]
            fanned = fanned or isinstance(value, list)
            for item in items:
                if not isinstance(item, Mapping):
                    return "unreadable", value
                if key in item:
                    step.append(item[key])
                elif isinstance(value, list):
                    return "unreadable", value
        if not step:
            return "absent", None
        values = step
    return "found", (values if fanned else values[0])


def leaves(value: Any) -> Iterator[Scalar]:
    """Scalar leaves of a value: itself, or every element of a list or mapping, recursively."""
    if isinstance(value, str | int | float | bool):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from leaves(v)


def string_leaves(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """``(path, text)`` for every string inside ``value``, with list indices and keys in the path."""
    return ((where, leaf) for where, leaf in scalar_leaves(value, path) if isinstance(leaf, str))


def scalar_leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, scalar)`` for every value inside ``value`` that is no mapping or list (a flag, a number, a text,
    ``None``), with list indices and keys in the path, at any depth (the input's limits bound it)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from scalar_leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from scalar_leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def entries(value: Any, path: str = "") -> Iterator[tuple[str, str, Any]]:
    """``(path, key, value)`` for every key of every mapping inside ``value``, at any depth."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            here = f"{path}.{k}" if path else str(k)
            yield here, str(k), v
            yield from entries(v, here)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from entries(v, f"{path}[{i}]")


Keys = tuple[str, ...]
"""The mapping keys on the way to a value (list indices left out): ``("message", "to")``."""


def keyed_strings(value: Any, keys: Keys = (), path: str = "") -> Iterator[tuple[Keys, str, str]]:
    """``(keys, path, text)`` for every string inside ``value`` and every string key of a mapping there
    (``path`` ends in ``(key)``): the keys say structurally where it stands, whatever characters a key
    holds (a literal key ``"with.extra"`` is not under ``with``)."""
    if isinstance(value, str):
        yield keys, path, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            where = f"{path}.{k}" if path else str(k)
            if isinstance(k, str):
                yield (*keys, k), f"{where}(key)", k
            yield from keyed_strings(v, (*keys, str(k)), where)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from keyed_strings(v, keys, f"{path}[{i}]")


def under(keys: Keys, paths: tuple[Keys, ...]) -> bool:
    """Whether ``keys`` is at or below one of ``paths``."""
    return any(keys[: len(p)] == p for p in paths)


def changed(before: Mapping[str, Any], after: Mapping[str, Any], path: str = "") -> list[str]:
    """Dotted paths of ``after`` whose value differs from ``before`` (added keys included; a mapping is
    compared key by key, any other value as a whole). Types count: ``1`` and ``True`` differ."""
    out: list[str] = []
    for key, value in after.items():
        where = f"{path}.{key}" if path else str(key)
        old = before.get(key, _MISSING) if isinstance(before, Mapping) else _MISSING
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            out += changed(old, value, where)
        elif old is _MISSING or type(old) is not type(value) or old != value:
            out.append(where)
    return out


_MISSING = object()
