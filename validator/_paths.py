"""Dotted argument paths (``message.to``) and the scalar leaves of argument values."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

Scalar = str | int | float | bool


def lookup(args: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """Follow ``path`` (dot-separated keys) into ``args``; ``(found, value)``."""
    value: Any = args
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return False, None
        value = value[key]
    return True, value


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
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from string_leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from string_leaves(v, f"{path}[{i}]")
