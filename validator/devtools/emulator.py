"""A small emulator of Anthropic's documented prompt-caching rules, behind an httpx2 transport.

It stands in for the Messages API in tests and benchmarks, and bills every request the way the
documentation says the cache does:

- the prefix is hashed in ``tools -> system -> messages`` order, block by block, up to each
  breakpoint (``cache_control`` on a block, or top-level automatic caching on the last block);
  the model and the other prompt-affecting parameters seed the hash, so changing any of them
  misses everything;
- at each breakpoint a read looks for an entry at that block and then walks back up to 20 blocks;
- a breakpoint past the read point writes an entry, if its prefix reaches the model's minimum
  cacheable length (shorter prefixes are silently not cached);
- entries live 5 minutes from their last write or read (a hit refreshes them), on the emulator's
  clock (``clock``: any function returning seconds, so a benchmark can simulate the time between
  turns);
- a deferred tool (``defer_loading: true``) is not in the prefix: its definition costs nothing
  there (it still keys the hash, conservatively: the docs do not say a changed ``tools`` list
  keeps a hit). Its full definition is counted where a ``tool_reference`` surfaces it, inline in
  the ``tool_result`` that holds the reference.

Not emulated: one-hour entries, the rule that a run of consecutive ``tool_use`` or ``tool_result``
blocks counts as one position, and anything about the model's answers (``responder`` gives those).
Token counts come from :mod:`.tokens`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2

from validator.devtools.doctor import min_cacheable
from validator.devtools.tokens import estimate_block
from validator.judges.anthropic.requests import (
    LOOKBACK_BLOCKS,
    TTL_SECONDS,
    block_breakpoints,
    blocks,
    without_markers,
)

__all__ = ["CacheEmulator"]

Responder = Callable[[dict[str, Any]], list[dict[str, Any]]]
PROMPT_PARAMS = ("model", "tool_choice", "thinking", "output_config", "output_format", "context_management")


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _references(block: Any) -> list[str]:
    """The tools a ``tool_result`` block surfaces with ``tool_reference`` blocks."""
    if not isinstance(block, Mapping) or block.get("type") != "tool_result":
        return []
    content = block.get("content")
    return [
        str(inner.get("tool_name"))
        for inner in (content if isinstance(content, list) else [])
        if isinstance(inner, Mapping) and inner.get("type") == "tool_reference"
    ]


@dataclass
class CacheEmulator:
    """Bills requests by the caching rules above; ``responder(body)`` supplies each answer's content."""

    responder: Responder
    clock: Callable[[], float] = time.monotonic
    """Seconds, for the TTL; pass a simulated clock to emulate the time between requests."""
    enabled: bool = True
    """False bills everything as uncached input (a validator with no cache at all)."""
    ttl: float = TTL_SECONDS
    entries: dict[str, float] = field(default_factory=dict)
    """Prefix hash -> expiry time."""
    log: list[dict[str, Any]] = field(default_factory=list)
    """``{"body": ..., "usage": ...}`` for every request, in order."""
    _estimates: dict[str, int] = field(default_factory=dict, repr=False)
    """Canonical block -> estimated tokens: a history is estimated once, not on every request."""

    def _block(self, block: Any) -> tuple[str, int, bool]:
        """A block's canonical form (markers left out: they are not part of the key), its estimated
        tokens and whether it carries a breakpoint."""
        # repr, not JSON: as exact for JSON data (key order included) and twice as fast
        text = repr(block)
        marked = "'cache_control'" in text and bool(block_breakpoints(block, ""))
        if marked:
            text = repr(without_markers(block))
        size = self._estimates.get(text)
        if size is None:
            size = self._estimates[text] = estimate_block(without_markers(block))
        return text, size, marked

    def block_sizes(self, body: Mapping[str, Any]) -> list[int]:
        """Estimated tokens at every position of ``blocks(body)``, deferred tools as billed (see the module)."""
        return [size for _, size, _ in self._scan(body)]

    def _scan(self, body: Mapping[str, Any]) -> list[tuple[str, int, bool]]:
        deferred = {
            t.get("name"): t for t in body.get("tools") or [] if isinstance(t, Mapping) and t.get("defer_loading")
        }
        out = []
        for where, block in blocks(body):
            text, size, marked = self._block(block)
            if where.startswith("tools[") and isinstance(block, Mapping) and block.get("defer_loading"):
                size = 0  # not in the prefix ...
            for name in _references(block):  # ... but inline where a tool_reference surfaces it
                if name in deferred:
                    size += self._block(deferred[name])[1]
            out.append((text, size, marked))
        return out

    def usage(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Bill one request and update the cache; the API's ``usage`` object."""
        items = self._scan(body)
        cumulative: list[int] = []
        total = 0
        for _, size, _ in items:
            total += size
            cumulative.append(total)
        running = hashlib.sha256(_compact({k: body.get(k) for k in PROMPT_PARAMS}).encode()).digest()
        hashes: list[str] = []
        for text, _, _ in items:
            running = hashlib.sha256(running + text.encode()).digest()
            hashes.append(running.hex())
        marks = sorted(
            {i for i, (_, _, marked) in enumerate(items) if marked}
            | ({len(items) - 1} if "cache_control" in body and items else set())
        )
        read_at = written_to = -1
        if self.enabled:
            now = self.clock()
            for mark in marks:
                for j in range(mark, max(mark - LOOKBACK_BLOCKS, 0) - 1, -1):
                    if self.entries.get(hashes[j], -1.0) > now:
                        self.entries[hashes[j]] = now + self.ttl  # a hit refreshes the entry
                        read_at = max(read_at, j)
                        break
            written_to = read_at
            floor = min_cacheable(str(body.get("model", "")))
            for mark in marks:
                if mark > read_at and cumulative[mark] >= floor:
                    self.entries[hashes[mark]] = now + self.ttl
                    written_to = max(written_to, mark)
        read = cumulative[read_at] if read_at >= 0 else 0
        written = cumulative[written_to] - read if written_to > read_at else 0
        return {
            "input_tokens": total - read - written,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
            "cache_creation": {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 0,
        }

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        usage = self.usage(body)
        content = self.responder(body)
        usage["output_tokens"] = sum(estimate_block(b) for b in content)
        self.log.append({"body": body, "usage": usage})
        stop = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
        reply = {
            "id": f"msg_emu_{len(self.log)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        return httpx2.Response(200, json=reply)

    def transport(self) -> httpx2.MockTransport:
        """An httpx2 transport that answers every request through :meth:`handle`."""
        return httpx2.MockTransport(self.handle)
