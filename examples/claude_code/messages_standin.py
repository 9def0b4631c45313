"""A scripted stand-in of the Anthropic Messages API on loopback, for hosts that run their own client (the Claude
Code CLI): step ``n`` of the script answers a request whose history holds ``n`` assistant messages.

A step is ``{"text": ...}`` (the turn ends) or ``{"tool": NAME, "input": {...}}`` (a tool call). Every request
body is kept (``requests``). It streams when asked to (server-sent events), as the CLI always asks.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = dict[str, Any]


def _blocks(script: Sequence[Step], body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    if not body.get("tools"):  # a side request (a title): never a step of the conversation
        return [{"type": "text", "text": "Session"}], "end_turn"
    n = sum(1 for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "assistant")
    step = script[n] if n < len(script) else {"text": "Done."}
    if "tool" in step:
        call = {
            "type": "tool_use",
            "id": f"toolu_{uuid.uuid4().hex[:20]}",
            "name": step["tool"],
            "input": step["input"],
        }
        return [call], "tool_use"
    return [{"type": "text", "text": step["text"]}], "end_turn"


def _events(message_id: str, model: str, blocks: list[dict[str, Any]], stop: str) -> bytes:
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    start = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [], "usage": usage}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {**start, "stop_reason": None, "stop_sequence": None}})
    ]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opened, delta = (
                {**block, "input": {}},
                {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            )
        events += [
            ("content_block_start", {"type": "content_block_start", "index": i, "content_block": opened}),
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


class StandIn:
    """The server's state: its script and the request bodies it got."""

    def __init__(self, script: Sequence[Step]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.url = ""


def _handler(standin: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            return None

        def _send(self, code: int, data: bytes, kind: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            self._send(200, b'{"data": [], "has_more": false}')

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.loads(raw or b"{}")
            path = self.path.split("?")[0]
            if path.endswith("/count_tokens"):
                return self._send(200, b'{"input_tokens": 100}')
            if not path.endswith("/v1/messages"):
                return self._send(404, b'{"type": "error", "error": {"type": "not_found_error", "message": "no"}}')
            standin.requests.append(body)
            blocks, stop = _blocks(standin.script, body)
            message_id, model = f"msg_{uuid.uuid4().hex[:20]}", str(body.get("model", "stand-in"))
            if body.get("stream"):
                return self._send(200, _events(message_id, model, blocks, stop), "text/event-stream")
            message = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
            return self._send(200, json.dumps(message).encode())

    return Handler


@contextmanager
def messages_standin(script: Sequence[Step]) -> Iterator[StandIn]:
    """The stand-in, serving on a free loopback port for the block's length."""
    standin = StandIn(script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(standin))
    server.daemon_threads = True
    standin.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield standin
    finally:
        server.shutdown()
        server.server_close()
