"""Building the validator's Messages API request: shared with the agent's prefix, or standalone.

**Shared** (the seed's second version). The request is the agent's last request, byte for byte
(model, ``system``, ``tools``, ``tool_choice``, thinking and output settings, betas, messages),
with three blocks appended::

    {"role": "assistant", "content": [{"type": "tool_use", "name": "tool_search", ...}]}
    {"role": "user", "content": [{"type": "tool_result", "content": [{"type": "tool_reference",
                                                                      "tool_name": "validate_action"}]},
                                 {"type": "text", "text": <the validation request>}]}

The API expands the reference into the deferred validator tool's definition; the prefix, and with
it the prompt cache, is untouched.

**Blind** (the default wherever the agent's own request is not shared; :func:`blind_request`): the user's
messages, the call and code's facts, never a tool output or the agent's prose (:mod:`validator.judges.blind`).

**Standalone** (the ``shared_prefix`` view where no agent request can be shared): the validator prompt as
``system``, the transcript as data in the first user message (one text block a message, so the
next check of the same conversation repeats this one's blocks byte for byte), the validation
request after it. Cache breakpoints go on the transcript only when :class:`StandaloneCaching`
expects them to be read back (see there).
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from validator.judges.anthropic.tools import validator_tool
from validator.judges.base import JudgeRequest
from validator.judges.blind import render_blind
from validator.judges.model import render_request, render_transcript
from validator.prompts import load_prompt

__all__ = [
    "NotShareable",
    "StandaloneCaching",
    "blind_request",
    "breakpoints",
    "shared_request",
    "standalone_request",
]

MAX_BREAKPOINTS = 4
"""Anthropic allows four cache breakpoints a request, the automatic one included."""
LOOKBACK_BLOCKS = 20
TTL_SECONDS = 300.0
"""A 5-minute entry lives this long after the request that last wrote or read it."""
EPHEMERAL = {"type": "ephemeral"}
SEARCH_USE_ID = "toolu_validator_search"


class NotShareable(Exception):
    """The agent's request cannot carry the validator's turn; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class Breakpoint:
    """Where one ``cache_control`` marker sits: ``tools[2]``, ``system[0]``, ``messages[5].content[1]``."""

    where: str
    ttl: str

    def __str__(self) -> str:
        return f"{self.where} ({self.ttl})"


def _ttl(marker: Any) -> str:
    return str(marker.get("ttl", "5m")) if isinstance(marker, Mapping) else "5m"


def without_markers(value: Any) -> Any:
    """``value`` without its ``cache_control`` markers, nested ones included. A marker says where to
    write an entry; it is not part of the bytes the entry is keyed by."""
    if isinstance(value, Mapping):
        return {k: without_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_markers(v) for v in value]
    return value


def block_breakpoints(block: Any, where: str) -> list[Breakpoint]:
    """A block's marker and those of the blocks nested in it (a ``tool_result``'s content): each
    one takes a slot of the four."""
    if not isinstance(block, Mapping):
        return []
    found = [Breakpoint(where, _ttl(block["cache_control"]))] if "cache_control" in block else []
    nested = block.get("content")
    if isinstance(nested, list):
        for k, inner in enumerate(nested):
            found.extend(block_breakpoints(inner, f"{where}.content[{k}]"))
    return found


def breakpoints(request: Mapping[str, Any]) -> list[Breakpoint]:
    """Every cache breakpoint of a request, in the order the cache hashes them (tools, system, messages)."""
    found: list[Breakpoint] = []
    for i, tool in enumerate(request.get("tools") or []):
        if isinstance(tool, Mapping) and "cache_control" in tool:
            found.append(Breakpoint(f"tools[{i}]", _ttl(tool["cache_control"])))
    system = request.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if isinstance(block, Mapping) and "cache_control" in block:
                found.append(Breakpoint(f"system[{i}]", _ttl(block["cache_control"])))
    for m, message in enumerate(request.get("messages") or []):
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):
            for b, block in enumerate(content):
                found.extend(block_breakpoints(block, f"messages[{m}].content[{b}]"))
    if "cache_control" in request:
        found.append(Breakpoint("automatic (top-level cache_control)", _ttl(request["cache_control"])))
    return found


def _tool_named(tools: Any, name: str) -> Mapping[str, Any] | None:
    for tool in tools or []:
        if isinstance(tool, Mapping) and tool.get("name") == name:
            return tool
    return None


def _thinking_kind(request: Mapping[str, Any]) -> str | None:
    thinking = request.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") not in (None, "disabled"):
        return str(thinking.get("type"))
    return None


def check_shareable(agent_request: Mapping[str, Any], *, validator_name: str, search_name: str) -> None:
    """Raise :class:`NotShareable` when the validator's turn cannot be appended to this request."""
    messages = agent_request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise NotShareable("the agent request has no messages")
    if not isinstance(agent_request.get("model"), str):
        raise NotShareable("the agent request names no model")
    last = messages[-1]
    if not isinstance(last, Mapping) or last.get("role") != "user":
        raise NotShareable("the agent request does not end with a user turn, so no assistant turn can follow it")
    choice = agent_request.get("tool_choice")
    kind = choice.get("type") if isinstance(choice, Mapping) else None
    if isinstance(choice, Mapping) and kind in ("any", "tool", "none"):
        what = {
            "any": "forces some tool call",
            "tool": f"forces the tool {choice.get('name')!r}",
            "none": "forbids tools",
        }
        raise NotShareable(
            f"the agent's tool_choice {what[str(kind)]}: copied into the validator's request it would stop the "
            "validator tool from answering"
        )
    if _thinking_kind(agent_request) == "enabled":
        raise NotShareable(
            "the agent uses extended thinking: a fabricated assistant turn must start with a signed thinking block"
        )
    if agent_request.get("mcp_servers"):
        raise NotShareable("the agent's request connects MCP servers, which the validator's own call could use")
    server_tools = [
        str(t.get("name") or t.get("type"))
        for t in agent_request.get("tools") or []
        if isinstance(t, Mapping) and t.get("type") not in (None, "custom")
    ]
    if server_tools:
        raise NotShareable(
            f"the agent's tools include server-executed tools ({', '.join(server_tools)}), "
            "which the validator's own call could run"
        )
    validator = _tool_named(agent_request.get("tools"), validator_name)
    if validator is None or _tool_named(agent_request.get("tools"), search_name) is None:
        raise NotShareable(
            f"the agent's tools lack {validator_name!r} and {search_name!r}; send prepare_tools() output from turn one"
        )
    if not validator.get("defer_loading"):
        raise NotShareable(f"the agent's {validator_name!r} tool is not deferred, so the agent could call it itself")


def _explicit_breakpoints(request: Mapping[str, Any]) -> int:
    return len(breakpoints(request))


def shared_request(
    agent_request: Mapping[str, Any],
    request: JudgeRequest,
    *,
    validator_name: str,
    search_name: str,
    quality: bool,
    prompt: str = "validator",
) -> dict[str, Any]:
    """The agent's request with the validator's turn appended; raises :class:`NotShareable`."""
    check_shareable(agent_request, validator_name=validator_name, search_name=search_name)
    body = copy.deepcopy(dict(agent_request))
    body.pop("stream", None)  # the judge reads one whole response; streaming does not touch the cache key
    search_result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": SEARCH_USE_ID,
        "content": [{"type": "tool_reference", "tool_name": validator_name}],
    }
    # Breakpoint on the search result, when a slot is free. Every breakpoint the agent placed stays
    # where it was, so each one reads the entry the agent's own request wrote at that position (the
    # whole history, when the agent caches its last message or uses automatic caching). This one sits
    # two positions after the agent's last block, well inside the 20-block lookback, so it reads
    # the agent's newest entry too, and writes only the small search turn: a second check against the
    # same agent request (parallel tool calls) reads that as well. The validation text comes after
    # it and changes with every action, so it is uncached, with one exception: when the agent uses
    # automatic caching (a top-level ``cache_control``, which stays, since removing it could change
    # what the agent's request wrote), that breakpoint moves to the last block, and the validation
    # text is written at the 1.25x rate too. It is a few hundred tokens; the read is unchanged.
    if _explicit_breakpoints(agent_request) < MAX_BREAKPOINTS:
        search_result["cache_control"] = dict(EPHEMERAL)
    body["messages"] = [
        *body["messages"],
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": SEARCH_USE_ID, "name": search_name, "input": {"query": validator_name}}
            ],
        },
        {
            "role": "user",
            "content": [
                search_result,
                {
                    "type": "text",
                    "text": render_request(request, tool_name=validator_name, quality=quality, prompt=prompt),
                },
            ],
        },
    ]
    return body


def _digest(lines: Sequence[str]) -> str:
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class _Seen:
    at: float
    lines: int
    digest: str
    run: int


@dataclass
class StandaloneCaching:
    """Whether a standalone request should mark its transcript for caching.

    A breakpoint is worth writing only if its entry is read back: a 5-minute write costs 1.25x
    input, a read 0.1x, so writing pays when the next check of the same conversation, sending the
    same blocks and more, comes within the TTL more often than about one time in four
    (0.25 / 0.9). The judge cannot know when (or whether) the next check comes, so it judges from
    the past: it writes once ``after`` checks of this conversation in a row each came within the
    TTL of the one before. Checks further apart than the TTL never write, so they cost exactly
    what an uncached request costs; in a run of close checks the first ``after`` are uncached,
    later ones read the previous check's entry and write only what is new. A write is lost only
    at the end of a run: 0.25x of what the last check wrote (its new blocks; its whole transcript
    if the run ends on its first write). ``after=2`` because one close pair is weak evidence: a
    task with two close checks would pay 0.25x of the second for nothing. ``after=0`` writes on
    every check (a validator that always caches its transcript, whatever the gap).

    A conversation is known by its first transcript block and message; a check continues it when
    the previous check's transcript is a prefix of its own. Entries older than the TTL are
    forgotten.
    """

    clock: Callable[[], float] = time.monotonic
    ttl: float = TTL_SECONDS
    after: int = 2
    _seen: dict[str, _Seen] = field(default_factory=dict, repr=False)

    def decide(self, lines: Sequence[str]) -> bool:
        """Record a check of the transcript ``lines`` (as :func:`transcript_blocks` gives them); True to cache it."""
        now = self.clock()
        self._seen = {k: v for k, v in self._seen.items() if now - v.at < self.ttl}
        key = _digest(lines[:2])
        previous = self._seen.get(key)
        continues = (
            previous is not None
            and len(lines) >= previous.lines
            and _digest(lines[: previous.lines]) == previous.digest
        )
        run = previous.run + 1 if continues and previous is not None else 0
        self._seen[key] = _Seen(now, len(lines), _digest(lines), run)
        return run >= self.after


def transcript_blocks(request: JudgeRequest) -> list[str]:
    """The transcript as data, one text per block: the header, then one JSON line a message."""
    return render_transcript(request.transcript).split("\n")  # JSON lines hold no raw newline


def transcript_breakpoints(count: int) -> list[int]:
    """Which of ``count`` transcript blocks carry a breakpoint: the last one, then one every
    :data:`LOOKBACK_BLOCKS` before it (up to :data:`MAX_BREAKPOINTS`), so the next check's walk
    back finds this check's entry even when up to 80 blocks (40 agent turns) came in between."""
    return sorted(range(count - 1, -1, -LOOKBACK_BLOCKS))[-MAX_BREAKPOINTS:]


def standalone_request(
    request: JudgeRequest,
    *,
    model: str,
    max_tokens: int,
    validator_name: str,
    quality: bool,
    prompt: str = "validator",
    caching: StandaloneCaching | None = None,
) -> dict[str, Any]:
    """A request of the validator's own, built from the transcript (no prefix shared with the agent).

    No breakpoint on ``system``: the validator prompt and tool (~740 tokens with the default prompt)
    are below the minimum cacheable prefix of most models (1,024 tokens; 4,096 on Haiku 4.5), so
    no entry is written there, let alone read. (On the models with a 512-token minimum it could be,
    but a transcript breakpoint covers it for the same conversation, and only the first check of
    another conversation within 5 minutes would read it.) When ``caching`` expects this check's
    transcript to be read back (see :class:`StandaloneCaching`; it records the check), the
    transcript blocks carry breakpoints (:func:`transcript_breakpoints`): the next check of the
    same conversation sends the same blocks and more, and reads this one's prefix. Otherwise the
    request has no breakpoint at all.
    """
    ask = render_request(request, tool_name=validator_name, quality=quality, prompt=None)
    return _own_request(transcript_blocks(request), ask, model, max_tokens, validator_name, quality, prompt, caching)


def _own_request(
    lines: list[str],
    ask: str,
    model: str,
    max_tokens: int,
    validator_name: str,
    quality: bool,
    prompt: str,
    caching: StandaloneCaching | None,
) -> dict[str, Any]:
    """A request of the judge's own: ``prompt`` as ``system``, ``lines`` as data (one text block each, with
    breakpoints when ``caching`` expects them read back: :func:`transcript_breakpoints`), then ``ask``."""
    cache = caching is not None and caching.decide(lines)
    marked = set(transcript_breakpoints(len(lines))) if cache else set()
    data: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        block: dict[str, Any] = {"type": "text", "text": line}
        if i in marked:
            block["cache_control"] = dict(EPHEMERAL)
        data.append(block)
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": [{"type": "text", "text": load_prompt(prompt)}],
        "tools": [validator_tool(validator_name, quality=quality, deferred=False)],
        "tool_choice": {"type": "auto"},
        "messages": [{"role": "user", "content": [*data, {"type": "text", "text": ask}]}],
    }


def blind_request(
    request: JudgeRequest,
    *,
    model: str,
    max_tokens: int,
    validator_name: str,
    quality: bool,
    prompt: str = "validator_blind",
    caching: StandaloneCaching | None = None,
) -> dict[str, Any]:
    """A request of the blind view (:mod:`validator.judges.blind`): the blind prompt as ``system``, the user's
    messages as data (one text block a message, with breakpoints as :func:`standalone_request` places them on
    its transcript), the validation request after them. No tool output, agent prose or outside text."""
    lines, ask = render_blind(request, tool_name=validator_name, quality=quality)
    return _own_request(lines, ask, model, max_tokens, validator_name, quality, prompt, caching)


def blocks(request: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every cacheable position of a request in hash order, as ``(where, block)``."""
    for i, tool in enumerate(request.get("tools") or []):
        yield f"tools[{i}]", tool
    system = request.get("system")
    if isinstance(system, str):
        yield "system", system
    elif isinstance(system, list):
        for i, block in enumerate(system):
            yield f"system[{i}]", block
    for m, message in enumerate(request.get("messages") or []):
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):
            for b, block in enumerate(content):
                yield f"messages[{m}].content[{b}]", block
        else:
            yield f"messages[{m}].content", content
