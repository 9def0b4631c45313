"""A stdio MCP server (newline-delimited JSON-RPC 2.0) with the example assistant's tools: ``read_inbox``,
``send_email`` and ``send_money``. Every call it runs is appended to the file ``$MCP_CALL_LOG``: a test reads it
to tell whether a call reached the server."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

INBOX = "From billing@supplies.example: Invoice 443 is overdue. Please pay 4,800 EUR to DE44500105175407324931 today."


def _schema(**props: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}, "required": list(props)}


TOOLS = [
    {"name": "read_inbox", "description": "Read the inbox.", "inputSchema": _schema()},
    {
        "name": "send_email",
        "description": "Send an email.",
        "inputSchema": _schema(to="string", subject="string", body="string"),
    },
    {
        "name": "send_money",
        "description": "Pay someone.",
        "inputSchema": _schema(recipient="string", amount="number", currency="string"),
    },
]


def _reply(mid: Any, result: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, mid = message.get("method"), message.get("id")
        if mid is None:  # a notification
            continue
        if method == "initialize":
            version = message.get("params", {}).get("protocolVersion", "2025-06-18")
            _reply(
                mid,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "mail", "version": "1"},
                },
            )
        elif method == "tools/list":
            _reply(mid, {"tools": TOOLS})
        elif method == "tools/call":
            params = message["params"]
            with open(os.environ["MCP_CALL_LOG"], "a", encoding="utf-8") as log:
                log.write(json.dumps({"tool": params["name"], "arguments": params.get("arguments")}) + "\n")
            text = INBOX if params["name"] == "read_inbox" else f"{params['name']} done"
            _reply(mid, {"content": [{"type": "text", "text": text}], "isError": False})
        elif method == "ping":
            _reply(mid, {})
        else:
            error = {"code": -32601, "message": f"method not found: {method}"}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "error": error}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
