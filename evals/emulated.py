"""An emulated model for recordings in tests and benchmarks: a stand-in, not Claude.

It answers a validator request (through the real anthropic SDK, as an httpx2 handler) from the
evidence gate's findings in the request text: it rejects when a quote was found outside the
user's words or nowhere, and approves otherwise. It exists to exercise recording, replay and
reports offline; its figures say nothing about any real model.
"""

from __future__ import annotations

import json
import re

import httpx2

__all__ = ["emulated_model"]

_OUTSIDE = re.compile(
    r"quote \d+ .*?: (not_from_user|not_found)"  # the shared prefix's request text
    r"|quote \d+: \d+ characters, not the user's own words \((not_from_user|not_found)"  # the blind view's
)


def emulated_model(request: httpx2.Request) -> httpx2.Response:
    """An httpx2 handler answering a Messages API request with one ``validate_action`` call."""
    body = json.loads(request.content)
    text = json.dumps(body["messages"][-1]["content"])
    rejected = bool(_OUTSIDE.search(text))
    verdict: dict[str, object] = {"approved": not rejected, "reasoning": "emulated verdict", "confidence": "high"}
    if rejected:
        verdict["suggested_next_step"] = "Ask the user."
    reply = {
        "id": "msg_emulated",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "tool_use", "id": "toolu_emulated", "name": "validate_action", "input": verdict}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 900,
            "output_tokens": 40,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
    }
    return httpx2.Response(200, json=reply)
