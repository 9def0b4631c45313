"""Validating the tool calls of a raw Anthropic loop: three lines in a hand-written agent.

Typical usage::

    tools = prepare_tools(my_tools, policy=policy)            # once: justification + validator tools
    response = client.messages.create(**request)              # request["tools"] is that list
    checked = check_tool_uses(response, request, validator)
    results = [run_tool(use) for use in checked.allowed] + checked.refused

``allowed`` holds the approved ``tool_use`` blocks with ``justification`` stripped from their input;
``refused`` holds a ``tool_result`` block (``is_error: true``, with the reasoning and the suggested
next step) for every other call, so the next user turn answers every call. With an Anthropic judge
the validator shares ``request``'s prompt cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from validator.integrations._host import pending_from_call, reused_id, split_justification, unreadable_history

from validator.engine import Validator
from validator.exceptions import InputError, UsageError
from validator.inputs.anthropic import transcript_from_anthropic
from validator.inputs.transcript import Transcript
from validator.verdict import Verdict

__all__ = ["CheckedToolUses", "check_tool_uses"]


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


def check_tool_uses(
    response: Any, request: Mapping[str, Any], validator: Validator, *, user_id: str | None = None
) -> CheckedToolUses:
    """Validate each ``tool_use`` of ``response`` (produced by ``request``); see the module docstring."""
    reply = _plain(response)
    content = [b for b in reply.get("content", []) if isinstance(b, Mapping)]
    history = [*(request.get("messages") or []), {"role": "assistant", "content": content}]
    used = _used_ids(request.get("messages") or [])
    transcript: Transcript | None = None
    problem = ""
    try:
        transcript = transcript_from_anthropic(history, system=request.get("system"))
    except InputError as exc:  # every call is refused, none crashes the loop
        problem = "; ".join(map(str, exc.problems))[:500]
    out = CheckedToolUses()
    for block in content:
        if block.get("type") != "tool_use":
            continue
        args, _ = split_justification(block.get("input") or {})
        name, call_id = str(block.get("name")), str(block.get("id"))
        if call_id in used:
            verdict = reused_id(name, call_id)
        elif transcript is None:
            verdict = unreadable_history(name, problem)
        else:
            action = pending_from_call(name, block.get("input"), call_id)
            verdict = validator.validate(transcript, action, user_id=user_id, agent_request=request)
        out.verdicts[call_id] = verdict
        if verdict.approved:
            out.allowed.append({**block, "input": args})
        else:
            out.refused.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block["id"],
                    "is_error": True,
                    "content": verdict.message_for_agent(),
                }
            )
    return out
