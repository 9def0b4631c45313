"""The prefix doctor: why does the validator's call miss the agent's prompt cache?

:func:`diagnose` compares the agent's request with the validator's (plain JSON bodies) and reports
whether the validator's request extends the agent's byte for byte, the first difference if not
(which field, which block, which key), where the cache breakpoints sit in both, and an estimate of
the validator's input tokens read from cache and paid in full (see :mod:`.tokens`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from validator.devtools.tokens import estimate_block
from validator.judges.anthropic.requests import Breakpoint, block_breakpoints, blocks, breakpoints, without_markers

__all__ = ["PROMPT_FIELDS", "DoctorReport", "diagnose", "shape_problems"]

PROMPT_FIELDS = (
    "model",
    "tools",
    "system",
    "tool_choice",
    "thinking",
    "output_config",
    "output_format",
    "context_management",
    "betas",
)
"""Fields that change the prompt (and so the cache key) when they differ; ``messages`` is checked as a prefix."""

MIN_CACHEABLE = {"haiku-4-5": 4096, "opus-4-5": 4096, "opus-4-6": 4096, "opus-4-7": 2048, "haiku-3-5": 2048}
DEFAULT_MIN_CACHEABLE = 1024


def min_cacheable(model: str) -> int:
    """The shortest prefix the model caches (shorter ones are silently not cached)."""
    for key, size in MIN_CACHEABLE.items():
        if key in model:
            return size
    return DEFAULT_MIN_CACHEABLE


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def first_difference(a: Any, b: Any, path: str) -> str | None:
    """The path of the first place ``a`` and ``b`` differ (key order counts, as in the bytes sent)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=False):
            if ka != kb:
                return f"{path}: keys differ or are in another order ({ka!r} vs {kb!r})"
            found = first_difference(va, vb, f"{path}.{ka}")
            if found:
                return found
        if len(a) != len(b):
            extra = [k for k in (b if len(b) > len(a) else a) if k not in (a if len(b) > len(a) else b)]
            side = "validator" if len(b) > len(a) else "agent"
            return f"{path}: only the {side} request has {', '.join(map(repr, extra))}"
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        if len(a) != len(b):
            return f"{path}: {len(a)} items in the agent request, {len(b)} in the validator request"
        return None
    if _compact(a) != _compact(b):
        shown = [_compact(v)[:80] for v in (a, b)]
        return f"{path}: agent {shown[0]} vs validator {shown[1]}"
    return None


@dataclass
class DoctorReport:
    """What :func:`diagnose` found."""

    extends: bool
    """True when the validator request is the agent request plus appended messages only."""
    difference: str | None
    agent_breakpoints: list[Breakpoint]
    validator_breakpoints: list[Breakpoint]
    cached_tokens: int
    uncached_tokens: int
    notes: list[str] = field(default_factory=list)

    @property
    def cached_share(self) -> float:
        total = self.cached_tokens + self.uncached_tokens
        return self.cached_tokens / total if total else 0.0

    def render(self) -> str:
        lines = [
            "validator request extends the agent request byte for byte: " + ("yes" if self.extends else "NO"),
        ]
        if self.difference:
            lines.append(f"first difference: {self.difference}")
        lines.append("agent breakpoints: " + (", ".join(map(str, self.agent_breakpoints)) or "none"))
        lines.append("validator breakpoints: " + (", ".join(map(str, self.validator_breakpoints)) or "none"))
        lines.append(
            f"estimated validator input: {self.cached_tokens:,} tokens from cache, "
            f"{self.uncached_tokens:,} paid in full ({self.cached_share:.0%} cached; "
            "estimator: 4 characters a token, see validator.devtools.tokens)"
        )
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "extends": self.extends,
            "difference": self.difference,
            "agent_breakpoints": [str(b) for b in self.agent_breakpoints],
            "validator_breakpoints": [str(b) for b in self.validator_breakpoints],
            "cached_tokens": self.cached_tokens,
            "uncached_tokens": self.uncached_tokens,
            "cached_share": round(self.cached_share, 4),
            "notes": self.notes,
        }


def shape_problems(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(field, problem)`` for each part of a request body that is not the Messages API's shape."""
    problems: list[tuple[str, str]] = []
    messages = body.get("messages")
    if not isinstance(messages, list):
        problems.append(("messages", f"must be a list of messages, got {type(messages).__name__}"))
    else:
        for i, m in enumerate(messages):
            if not isinstance(m, Mapping):
                problems.append((f"messages[{i}]", f"must be an object, got {type(m).__name__}"))
            elif not isinstance(m.get("content"), str | list):
                problems.append((f"messages[{i}].content", "must be a string or a list of blocks"))
    for name in ("tools", "system"):
        value = body.get(name)
        if value is None or (name == "system" and isinstance(value, str)):
            continue
        if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
            problems.append((name, "must be a list of objects"))
    return problems


def _prefix_difference(agent: Mapping[str, Any], validator: Mapping[str, Any]) -> str | None:
    for name in PROMPT_FIELDS:
        if (name in agent) != (name in validator):
            side = "agent" if name in agent else "validator"
            return f"{name}: only the {side} request sets it"
        if name in agent:
            found = first_difference(agent[name], validator[name], name)
            if found:
                return found
    if ("cache_control" in agent) != ("cache_control" in validator):
        return "cache_control (automatic caching): set in one request only"
    a_msgs, v_msgs = agent.get("messages") or [], validator.get("messages") or []
    if len(v_msgs) < len(a_msgs):
        return f"messages: the validator request has {len(v_msgs)} messages, fewer than the agent's {len(a_msgs)}"
    return first_difference(list(a_msgs), list(v_msgs[: len(a_msgs)]), "messages")


def diagnose(agent: Mapping[str, Any], validator: Mapping[str, Any]) -> DoctorReport:
    """Compare the agent's request with the validator's; see the module docstring."""
    notes: list[str] = []
    choice = agent.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") in ("any", "tool", "none"):
        notes.append(
            f"the agent's tool_choice is {choice.get('type')!r}: a validator request sharing it could not call its "
            "own tool, so the validator sends a standalone request instead (no shared cache); use tool_choice "
            "auto on the agent to share it"
        )
    difference = _prefix_difference(without_markers(agent), without_markers(validator))
    marker_difference = _prefix_difference(agent, validator) if difference is None else None
    if marker_difference is not None:
        notes.append(
            f"only cache markers differ ({marker_difference}); markers are not part of the cached bytes, so the "
            "prefix still matches, but a marker the agent placed and the validator dropped reads nothing"
        )
    agent_bps, validator_bps = breakpoints(agent), breakpoints(validator)
    agent_blocks = list(blocks(agent))
    validator_blocks = list(blocks(validator))
    sizes = [estimate_block(b) for _, b in validator_blocks]
    model = str(validator.get("model") or agent.get("model") or "")
    cached = 0
    if difference is None:
        positions = [i for i, (_, block) in enumerate(agent_blocks) if block_breakpoints(block, "")]
        if "cache_control" in agent and agent_blocks:
            positions.append(len(agent_blocks) - 1)
        # Every agent breakpoint is copied into the validator's request at the same position, so each
        # reads the entry the agent's own request wrote there.
        reachable = positions
        if reachable:
            cached = sum(sizes[: max(reachable) + 1])
            if cached < min_cacheable(model):
                notes.append(
                    f"the cached prefix (~{cached:,} tokens) is under {model or 'this model'}'s minimum of "
                    f"{min_cacheable(model):,}: it is silently not cached"
                )
                cached = 0
            elif max(reachable) < len(agent_blocks) - 1:
                notes.append(
                    "the agent's last breakpoint is not on its last block: the messages after it are paid in full; "
                    "cache the agent's last message (or use top-level automatic caching)"
                )
        else:
            notes.append(
                "the agent request has no cache breakpoint the validator can read: add cache_control to the agent's "
                "last message, or top-level automatic caching"
            )
    else:
        notes.append(
            "any difference in tools, system, tool_choice, thinking, output settings or betas misses the cache"
        )
    if len(validator_bps) > 4:
        notes.append(f"the validator request has {len(validator_bps)} breakpoints; the API allows 4")
    return DoctorReport(
        extends=difference is None,
        difference=difference,
        agent_breakpoints=agent_bps,
        validator_breakpoints=validator_bps,
        cached_tokens=cached,
        uncached_tokens=sum(sizes) - cached,
        notes=notes,
    )
