"""Sharing a ChatAnthropic agent's prompt cache with the validator.

The validator's request must be the agent's request plus appended turns, so it is built with
langchain-anthropic's own request builder (``ChatAnthropic._get_request_payload``) from the same
messages, tools and settings the agent's model call used. The agent's model must carry the search
tool and the deferred validator tool from the first turn: :func:`with_validator_tools` adds them.
Requires ``langchain-anthropic`` (only for ChatAnthropic agents; nothing here is needed otherwise).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from validator.extras import missing_extra

try:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
except ImportError as exc:
    raise missing_extra("langchain", "validator.integrations.claude", exc) from None

from validator.judges.anthropic.tools import DEFAULT_SEARCH_TOOL, DEFAULT_VALIDATOR_TOOL, search_tool, validator_tool

__all__ = ["PayloadCapture", "claude_request", "is_claude", "validator_tool_dicts", "with_validator_tools"]


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
    """The deferred validator tool and the client-side search tool, as Anthropic tool dicts (the search tool
    last: a cache breakpoint on the last tool must not land on a deferred one)."""
    return [validator_tool(validator_name, quality=quality), search_tool(search_name)]


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


class PayloadCapture:
    """A copy of a ChatAnthropic model that keeps the request body it really sends.

    Middleware placed after the validator's (``AnthropicPromptCachingMiddleware`` adding its
    breakpoints, anything else rewriting the request) changes the request after the validator saw
    it; the body langchain-anthropic finally builds is the one the validator must extend. The copy
    records each body as it is built, so sharing does not depend on the order of middleware.
    """

    def __init__(self, model: BaseChatModel) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.model = model.model_copy()
        build = self.model._get_request_payload  # type: ignore[attr-defined]

        def recording(*args: Any, **kwargs: Any) -> Any:
            payload = build(*args, **kwargs)
            body = copy.deepcopy(dict(payload))
            body.pop("stream", None)
            self.bodies.append(body)
            return payload

        object.__setattr__(self.model, "_get_request_payload", recording)

    @property
    def last(self) -> dict[str, Any] | None:
        """The last body sent, or None when the model built none (another model answered)."""
        return self.bodies[-1] if self.bodies else None
