"""Recorded model answers: every eval request a model judge makes is saved, and can be replayed.

A recording file (JSON lines) maps the SHA-256 of a request's exact body to the response it got.
:class:`RecordingTransport` wraps the real transport and saves each exchange; :class:`ReplayTransport`
answers from the file alone (no network, no key) and notes every request it has no answer for,
so a replay is identical to the run that made the recording, or fails saying what is missing.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

import httpx2
from validator.evals._files import json_lines, read_text

from validator.exceptions import FieldProblem, InputError

__all__ = ["MissingRecording", "RecordingTransport", "ReplayTransport", "read_recording", "request_key"]


def request_key(request: httpx2.Request) -> str:
    return hashlib.sha256(request.content).hexdigest()


class MissingRecording(httpx2.TransportError):
    """A replay met a request that was never recorded."""


def read_recording(path: Path) -> dict[str, dict[str, Any]]:
    """The exchanges of a recording file; a line that is not one is an :class:`InputError` naming it."""
    found: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return found
    for where, item in json_lines(read_text(path, "recording"), path):
        problem = _exchange_problem(item)
        if problem:
            raise InputError([FieldProblem(*problem)], source=where)
        found[item["key"]] = item
    return found


def _exchange_problem(item: Any) -> tuple[str, str] | None:
    if not isinstance(item, dict):
        return ("", f"a recorded exchange is an object, got {type(item).__name__}")
    if not isinstance(item.get("key"), str):
        return ("key", "must be the request's SHA-256 (a string)")
    status = item.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        return ("status", f"must be an HTTP status, got {status!r}")
    if "response" not in item:
        return ("response", "is missing")
    return None


class ReplayTransport(httpx2.BaseTransport):
    """Answers from a recording file; ``missing`` lists the requests it could not answer."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.recorded = read_recording(self.path)
        self.missing: list[str] = []
        self._lock = threading.Lock()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        item = self.recorded.get(request_key(request))
        if item is None:
            with self._lock:
                self.missing.append(request_key(request))
            raise MissingRecording(f"no recorded answer in {self.path} for this request", request=request)
        return httpx2.Response(item["status"], json=item["response"], request=request)


class RecordingTransport(httpx2.BaseTransport):
    """Sends each request through ``inner`` and appends the exchange to the recording file."""

    def __init__(self, path: str | Path, inner: httpx2.BaseTransport | None = None, label: str = "") -> None:
        self.path = Path(path)
        self.inner = inner or httpx2.HTTPTransport()
        self.label = label
        self._lock = threading.Lock()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        response = self.inner.handle_request(request)
        body = response.read()
        try:
            payload = json.loads(body)
        except ValueError:
            payload = {"raw": body.decode("utf-8", "replace")}
        item = {"key": request_key(request), "label": self.label, "status": response.status_code, "response": payload}
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(item, ensure_ascii=False) + "\n")
        return httpx2.Response(response.status_code, headers=response.headers, content=body, request=request)
