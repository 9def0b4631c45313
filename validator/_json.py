"""JSON out, for text that may hold anything an attacker wrote: never an encoding error.

:func:`dumps` writes readable UTF-8 JSON, and falls back to ``\\u`` escapes when the text holds a
lone surrogate (which UTF-8 cannot carry); :func:`utf8` encodes any string for hashing, lone
surrogates included, so a digest works on every input the parser accepts.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps", "utf8"]


def utf8(text: str) -> bytes:
    """``text`` as UTF-8 bytes; a lone surrogate is kept as its own code point (``surrogatepass``)."""
    return text.encode("utf-8", "surrogatepass")


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` without ASCII escapes, unless the result could not be written as UTF-8."""
    text = json.dumps(value, ensure_ascii=False, **options)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, **options)
    return text
