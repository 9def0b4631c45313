"""A Python client of ``validator serve`` that fails closed: anything but a 200 verdict is a refusal.

A network error, a timeout, a non-2xx answer or a body that is not a verdict all come back as a
blocking :class:`~validator.Verdict` (``SERVICE_UNAVAILABLE``) saying what happened; the caller runs
the action only when ``verdict.approved``. Standard library only (``urllib``), so it fits any agent.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from validator.decision import service_unavailable
from validator.verdict import Verdict

__all__ = ["ServiceClient"]


class ServiceClient:
    """Calls one service (``url``, e.g. ``http://127.0.0.1:8321``) with one bearer ``token``."""

    def __init__(self, url: str, token: str, *, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def check(self, check_input: Mapping[str, Any] | str | bytes) -> Verdict:
        """The verdict on one check input (the CLI's JSON); a refusal on any failure."""
        body = check_input if isinstance(check_input, bytes) else _encoded(check_input)
        tool = _tool(check_input)
        status, data = self._post("/v1/check", body)
        if status != 200:
            return _refused(tool, _failure(status, data))
        return _verdict(tool, data)

    def check_batch(self, check_inputs: list[Mapping[str, Any]]) -> list[Verdict]:
        """The verdicts on several check inputs, in order; each a refusal on any failure."""
        tools = [_tool(c) for c in check_inputs]
        status, data = self._post("/v1/check:batch", _encoded({"checks": list(check_inputs)}))
        results = data.get("results") if isinstance(data, dict) else None
        if status != 200 or not isinstance(results, list) or len(results) != len(tools):
            return [_refused(t, _failure(status, data)) for t in tools]
        out = []
        for tool, result in zip(tools, results, strict=True):
            if isinstance(result, dict) and "verdict" in result:
                out.append(_verdict(tool, result["verdict"]))
            else:
                out.append(_refused(tool, f"the service refused the input: {_said(result)}"))
        return out

    def _post(self, path: str, body: bytes) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.url + path,
            data=body,
            method="POST",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return int(response.status), _json(response.read())
        except urllib.error.HTTPError as exc:
            return int(exc.code), _json(exc.read())
        except (OSError, ValueError) as exc:  # refused, reset, timed out, a bad URL
            return 0, {"error": f"{type(exc).__name__}: {exc}"}


def _encoded(value: Any) -> bytes:
    return (value if isinstance(value, str) else json.dumps(value)).encode("utf-8", "surrogatepass")


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return {"error": raw[:200].decode("utf-8", "replace")}


def _tool(check_input: Any) -> str:
    try:
        data = json.loads(check_input) if isinstance(check_input, str | bytes) else check_input
        return str(data["action"]["tool"])
    except Exception:
        return "unknown"


def _failure(status: int, data: Any) -> str:
    if status == 0:
        return f"the service could not be reached ({data.get('error') if isinstance(data, dict) else data})"
    return f"the service answered {status}: {_said(data)}"


def _said(data: Any) -> str:
    return json.dumps(data)[:300] if data is not None else "nothing"


_refused = service_unavailable


def _verdict(tool: str, data: Any) -> Verdict:
    try:
        return Verdict.from_dict(data)
    except Exception as exc:
        return _refused(tool, f"its answer is not a verdict ({type(exc).__name__})")
