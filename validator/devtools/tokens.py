"""A documented token estimator, for reports made without calling ``count_tokens``.

Estimate = ceil(characters / 4) for every piece of text, plus 3 tokens per content block, where a
block's characters are its compact JSON (the same bytes the SDK sends) for tool definitions,
tool calls and anything that is not plain text. English prose runs at about 4 characters a token
on Claude's tokenizers before 4.7; Claude 4.7+ (and Haiku 5.5) produce about 30% more tokens for
the same text, so this undercounts there. ``count_tokens`` (free, but it needs a key) is the
ground truth; this estimator is only for relative figures (shares, ratios) offline.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from validator.judges.anthropic.requests import blocks

__all__ = ["CHARS_PER_TOKEN", "BLOCK_OVERHEAD", "estimate_block", "estimate_tokens"]

CHARS_PER_TOKEN = 4.0
BLOCK_OVERHEAD = 3


def _chars(block: Any) -> int:
    if isinstance(block, str):
        return len(block)
    if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return len(block["text"])
    data = {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, Mapping) else block
    return len(json.dumps(data, separators=(",", ":"), ensure_ascii=False))


def estimate_block(block: Any) -> int:
    """Estimated tokens of one block (a tool definition, a system block, a message content block)."""
    return math.ceil(_chars(block) / CHARS_PER_TOKEN) + BLOCK_OVERHEAD


def estimate_tokens(request: Mapping[str, Any]) -> int:
    """Estimated input tokens of a whole Messages request."""
    return sum(estimate_block(b) for _, b in blocks(request))
