"""Argument values as plain data: models and dataclasses become dicts, so every part can be checked."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

__all__ = ["is_pydantic_model", "to_plain"]


def to_plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-like data: models and dataclasses become dicts, so every part can be checked."""
    if depth > 64:
        return repr(value)[:200]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): to_plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_plain(v, depth + 1) for v in value]
    dump = getattr(value, "model_dump", None)  # pydantic models, as LangChain tools receive them
    if callable(dump) and not isinstance(value, type):
        return to_plain(dump(mode="json"), depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_plain(dataclasses.asdict(value), depth + 1)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def is_pydantic_model(value: Any) -> bool:
    """Whether ``value`` is a pydantic model, asked without importing pydantic: a value can be one only once pydantic
    is imported, and a process that has none (a one-shot check, the Claude Code hook) never loads it."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, pydantic.BaseModel)
