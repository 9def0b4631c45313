"""The real anthropic SDK on an httpx2 MockTransport: scripted responses, every request captured."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2

Reply = dict[str, Any] | tuple[int, dict[str, Any]] | Callable[[httpx2.Request], httpx2.Response] | BaseException


def message(
    content: list[dict[str, Any]],
    *,
    stop_reason: str = "tool_use",
    model: str = "claude-sonnet-4-6",
    input_tokens: int = 40,
    output_tokens: int = 60,
    cache_read: int = 0,
    cache_write: int = 0,
) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
            "cache_creation": {"ephemeral_5m_input_tokens": cache_write, "ephemeral_1h_input_tokens": 0},
        },
    }


def verdict_call(name: str = "validate_action", **fields: Any) -> dict[str, Any]:
    data = {"approved": True, "reasoning": "The user asked for exactly this.", "confidence": "high", **fields}
    return {"type": "tool_use", "id": "toolu_v1", "name": name, "input": data}


def error(status: int, kind: str, text: str) -> tuple[int, dict[str, Any]]:
    return status, {"type": "error", "error": {"type": kind, "message": text}}


@dataclass
class MockAPI:
    replies: list[Reply] = field(default_factory=list)
    requests: list[httpx2.Request] = field(default_factory=list)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError(f"unexpected request #{len(self.requests)}")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return reply(request)
        status, body = reply if isinstance(reply, tuple) else (200, reply)
        return httpx2.Response(status, json=body)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    def client(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            api_key="sk-test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(self.handler))
        )

    def async_client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key="sk-test",
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler)),
        )
