"""Validating the tool calls of a raw Anthropic loop: three lines in a hand-written agent.

Typical usage::

    tools = prepare_tools(my_tools, policy=policy)            # once: justification + validator tools
    response = client.messages.create(**request)              # request["tools"] is that list
    checked = check_tool_uses(response, request, validator)
    results = [run_tool(use) for use in checked.allowed] + checked.refused

``allowed`` holds the approved ``tool_use`` blocks with ``justification`` stripped from their input;
``refused`` holds a ``tool_result`` block (``is_error: true``, with the reasoning and the suggested
next step) for every other call, so the next user turn answers every call. With an Anthropic judge
the validator shares ``request``'s prompt cache. Either order works: most loops append the response
to ``request["messages"]`` before checking it, and a last assistant message holding exactly the
response's tool uses is read as the response itself, not as an earlier use of their ids.
:func:`acheck_tool_uses` is the async twin, for ``AsyncAnthropic`` loops.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from validator.integrations._host import pending_from_call, reused_id, split_justification, unreadable_history

from validator.engine import Validator
from validator.exceptions import InputError, UsageError
from validator.inputs.action import PendingAction
from validator.inputs.anthropic import transcript_from_anthropic
from validator.inputs.transcript import Transcript
from validator.verdict import Verdict

__all__ = ["CheckedToolUses", "acheck_tool_uses", "check_tool_uses"]


@dataclass(frozen=True)
class CheckedToolUses:
    """The outcome for every ``tool_use`` block of one response."""

    allowed: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)
    verdicts: dict[str, Verdict] = field(default_factory=dict)


def _plain(response: Any) -> dict[str, Any]:
    if isinstance(response, Mapping):
        return dict(response)
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        data = dump(mode="json", exclude_none=True)
        if isinstance(data, dict):
            return data
    raise UsageError(f"expected a Messages API response, got {type(response).__name__}")


def _used_ids(messages: Any) -> set[str]:
    """Tool use ids the request's history already holds."""
    found: set[str] = set()
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, Mapping) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, Mapping) and block.get("type") in ("tool_use", "server_tool_use", "tool_result"):
                found.add(str(block.get("id") or block.get("tool_use_id")))
    return found


def _uses(content: Any) -> list[str]:
    blocks = content if isinstance(content, list) else []
    return [str(b.get("id")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use"]


@dataclass(frozen=True)
class _Prepared:
    content: list[dict[str, Any]]
    used: set[str]
    transcript: Transcript | None
    problem: str
    request: Mapping[str, Any]


def _prepare(response: Any, request: Mapping[str, Any]) -> _Prepared:
    """The response's blocks, the ids the history already used, and the transcript to check them in."""
    reply = _plain(response)
    content = [dict(b) for b in reply.get("content", []) if isinstance(b, Mapping)]
    earlier = list(request.get("messages") or [])
    last = earlier[-1] if earlier else None
    if (
        isinstance(last, Mapping)
        and last.get("role") == "assistant"
        and _uses(content)
        and _uses(last.get("content")) == _uses(content)
    ):  # the loop appended the response before checking it: that message is the response
        earlier = earlier[:-1]
        request = {**request, "messages": earlier}
    history = [*earlier, {"role": "assistant", "content": content}]
    try:
        transcript = transcript_from_anthropic(history, system=request.get("system"))
        problem = ""
    except InputError as exc:  # every call is refused, none crashes the loop
        transcript, problem = None, "; ".join(map(str, exc.problems))[:500]
    return _Prepared(content, _used_ids(earlier), transcript, problem, request)


def _settled(p: _Prepared, block: Mapping[str, Any]) -> Verdict | PendingAction:
    """A refusal decided without the validator, or the action to validate."""
    name, call_id = str(block.get("name")), str(block.get("id"))
    if call_id in p.used:
        return reused_id(name, call_id)
    if p.transcript is None:
        return unreadable_history(name, p.problem)
    return pending_from_call(name, block.get("input"), call_id)


def check_tool_uses(
    response: Any, request: Mapping[str, Any], validator: Validator, *, user_id: str | None = None
) -> CheckedToolUses:
    """Validate each ``tool_use`` of ``response`` (produced by ``request``); see the module docstring."""
    p = _prepare(response, request)
    out = CheckedToolUses()
    for block in p.content:
        if block.get("type") != "tool_use":
            continue
        found = _settled(p, block)
        if isinstance(found, PendingAction):
            assert p.transcript is not None
            found = validator.validate(p.transcript, found, user_id=user_id, agent_request=p.request)
        _add(out, block, found)
    return out


async def acheck_tool_uses(
    response: Any, request: Mapping[str, Any], validator: Validator, *, user_id: str | None = None
) -> CheckedToolUses:
    """Async twin of :func:`check_tool_uses` (the validator's async path: no blocked event loop)."""
    p = _prepare(response, request)
    out = CheckedToolUses()
    for block in p.content:
        if block.get("type") != "tool_use":
            continue
        found = _settled(p, block)
        if isinstance(found, PendingAction):
            assert p.transcript is not None
            found = await validator.avalidate(p.transcript, found, user_id=user_id, agent_request=p.request)
        _add(out, block, found)
    return out


def _add(out: CheckedToolUses, block: Mapping[str, Any], verdict: Verdict) -> None:
    """One call's outcome: its approved block (justification stripped), or the refusal's tool_result."""
    args, _ = split_justification(block.get("input") or {})
    out.verdicts[str(block.get("id"))] = verdict
    if verdict.approved:
        out.allowed.append({**block, "input": args})
        return
    out.refused.append(
        {"type": "tool_result", "tool_use_id": block["id"], "is_error": True, "content": verdict.message_for_agent()}
    )
