"""OpenAI Responses API items (the OpenAI Agents SDK's conversation) as a validator transcript: plain data.

User messages are the user's words; assistant text and ``function_call`` items are the agent's turns; a
``function_call_output`` is the answer of the call it names. Other items (reasoning, hosted tools) are left
out: they never authorize. Items may be dicts or pydantic models (the ``openai`` package's): read as data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from validator.inputs.plain import is_pydantic_model
from validator.inputs.transcript import Message, Role, ToolCall, Transcript, content_text

__all__ = ["call_ids", "item_args", "item_text", "plain", "transcript_from_items"]

_TEXT_BLOCKS = ("input_text", "output_text", "text")
_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def plain(item: Any) -> Mapping[str, Any]:
    if is_pydantic_model(item):
        dumped: Mapping[str, Any] = item.model_dump(mode="json", exclude_none=True)
        return dumped
    return item if isinstance(item, Mapping) else {}


def item_text(content: Any) -> str:
    """Text blocks only (``input_text``/``output_text``/``refusal``); images and files are left out."""
    if not isinstance(content, list):
        return content_text(content)
    blocks: list[Any] = []
    for block in content:
        b = plain(block)
        if b.get("type") in _TEXT_BLOCKS:
            blocks.append({"type": "text", "text": b.get("text")})
        elif b.get("type") == "refusal":
            blocks.append({"type": "text", "text": b.get("refusal")})
    return content_text(blocks)


def item_args(arguments: Any) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return {"arguments": arguments}
    return dict(parsed) if isinstance(parsed, Mapping) else {"arguments": parsed}


def transcript_from_items(items: Sequence[Any], *, instructions: str | None = None) -> Transcript:
    """A validator transcript from Responses API input and output items (dicts or the ``openai`` models, as the
    OpenAI Agents SDK keeps them).

    User messages are the user's words; assistant text and ``function_call`` items are the agent's
    turns; a ``function_call_output`` is the answer of the call it names. Other items (reasoning,
    hosted tools) are left out: they never authorize.
    """
    out: list[Message] = [Message(role="system", content=instructions)] if instructions else []
    names: dict[str, str] = {}
    for raw in items:
        item = plain(raw)
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") in _ROLES:
            out.append(Message(role=_ROLES[item["role"]], content=item_text(item.get("content"))))
        elif kind == "function_call":
            call = ToolCall(
                id=str(item.get("call_id")), name=str(item.get("name")), args=item_args(item.get("arguments"))
            )
            names[call.id] = call.name
            last = out[-1] if out else None
            if last is not None and last.role == "assistant":  # one model turn: its text and its calls
                out[-1] = Message(role="assistant", content=last.content, tool_calls=(*last.tool_calls, call))
            else:
                out.append(Message(role="assistant", tool_calls=(call,)))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            out.append(
                Message(
                    role="tool", content=item_text(item.get("output")), tool_call_id=call_id, name=names.get(call_id)
                )
            )
    return Transcript(out)


def call_ids(items: Sequence[Any]) -> set[str]:
    return {str(i.get("call_id")) for i in map(plain, items) if i.get("type") == "function_call"}
