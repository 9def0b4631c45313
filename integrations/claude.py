"""Sharing a ChatAnthropic agent's prompt cache with the validator.

The validator's request must be the agent's request plus appended turns, so it is built with
langchain-anthropic's own request builder (``ChatAnthropic._get_request_payload``) from the same
messages, tools and settings the agent's model call used. The agent's model must carry the search
tool and the deferred validator tool from the first turn: :func:`with_validator_tools` adds them.
Requires ``langchain-anthropic`` (only for ChatAnthropic agents; nothing here is needed otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from validator.judges.anthropic.tools import DEFAULT_SEARCH_TOOL, DEFAULT_VALIDATOR_TOOL, search_tool, validator_tool

__all__ = ["claude_request", "is_claude", "validator_tool_dicts", "with_validator_tools"]


def is_claude(model: Any) -> bool:
    """Whether ``model`` is a ``ChatAnthropic`` (whose requests the validator can share)."""
    try:
        from langchain_anthropic import ChatAnthropic
    except ImportError:  # pragma: no cover - depends on the environment
        return False
    return isinstance(model, ChatAnthropic)


def validator_tool_dicts(
    *, validator_name: str = DEFAULT_VALIDATOR_TOOL, search_name: str = DEFAULT_SEARCH_TOOL, quality: bool = True
) -> list[dict[str, Any]]:
    """The client-side search tool and the deferred validator tool, as Anthropic tool dicts."""
    return [search_tool(search_name), validator_tool(validator_name, quality=quality)]


def with_validator_tools(tools: Sequence[Any], **names: Any) -> list[Any]:
    """``tools`` plus the two validator tools (once), for the agent's model from its first turn."""
    ours = validator_tool_dicts(**names)
    taken = {t["name"] for t in ours}
    kept = [t for t in tools if not (isinstance(t, dict) and t.get("name") in taken)]
    return [*kept, *ours]


def claude_request(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    tools: Sequence[Any],
    *,
    tool_choice: Any = None,
    **settings: Any,
) -> dict[str, Any] | None:
    """The JSON body ChatAnthropic sends for ``messages`` with ``tools`` bound; None for other models."""
    if not is_claude(model):
        return None
    binding = model.bind_tools(list(tools), tool_choice=tool_choice, **settings) if tools else model.bind(**settings)
    kwargs = dict(getattr(binding, "kwargs", {}))
    payload: dict[str, Any] = model._get_request_payload(list(messages), **kwargs)  # type: ignore[attr-defined]
    payload.pop("stream", None)
    return payload
