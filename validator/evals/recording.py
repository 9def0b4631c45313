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

__all__ = ["MissingRecording", "RecordingTransport", "ReplayTransport", "request_key"]


def request_key(request: httpx2.Request) -> str:
    return hashlib.sha256(request.content).hexdigest()


class MissingRecording(httpx2.TransportError):
    """A replay met a request that was never recorded."""


def _read(path: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                found[item["key"]] = item
    return found


class ReplayTransport(httpx2.BaseTransport):
    """Answers from a recording file; ``missing`` lists the requests it could not answer."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.recorded = _read(self.path)
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
