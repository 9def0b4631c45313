"""The service clients refuse whatever is not exactly a verdict on the tool asked about (issue 23, finding 8).

A real socket server plays the broken or hostile service where the failure is in the bytes (a trickle, a
truncated body, a bad status line, too many headers); ``httpx.MockTransport`` plays it where the failure is
in what a well-formed answer says.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from validator.integrations.service import AsyncServiceClient, ServiceClient

from validator import Code, Verdict

CHECK = {"messages": [{"role": "user", "content": "hi"}], "action": {"tool": "send_money", "args": {}}}
APPROVED = {
    "approved": True,
    "decision": "approve",
    "code": "APPROVED",
    "reasoning": "ok",
    "confidence": "high",
    "tool": "send_money",
    "risk": "dangerous",
}


def _refused(verdict: Verdict, *words: str) -> None:
    assert not verdict.approved and verdict.code is Code.SERVICE_UNAVAILABLE, verdict
    for word in words:
        assert word in verdict.reasoning, verdict.reasoning


def _mock(answer: Callable[[httpx.Request], httpx.Response]) -> tuple[ServiceClient, AsyncServiceClient]:
    return (
        ServiceClient("http://svc.example", "vt_x", transport=httpx.MockTransport(answer), timeout=2),
        AsyncServiceClient("http://svc.example", "vt_x", transport=httpx.MockTransport(answer), timeout=2),
    )


def _both(answer: Callable[[httpx.Request], httpx.Response]) -> list[Verdict]:
    sync, aio = _mock(answer)
    return [sync.check(CHECK), asyncio.run(aio.check(CHECK))]


def test_a_well_formed_approval_on_the_tool_asked_about_is_the_only_approval() -> None:
    for verdict in _both(lambda r: httpx.Response(200, json=APPROVED)):
        assert verdict.approved and verdict.code is Code.APPROVED


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({**APPROVED, "approved": "true"}, "not a verdict"),
        ({**APPROVED, "approved": 1}, "not a verdict"),
        ({**APPROVED, "tool": "read_inbox"}, "another tool"),
        ({**APPROVED, "code": "BLOCKED_MAYBE"}, "not a verdict"),
        ([APPROVED], "not a verdict"),
    ],
    ids=["approved-string", "approved-one", "another-tool", "unknown-code", "a-list"],
)
def test_what_a_lenient_reader_would_take_for_an_approval_is_refused(answer: Any, why: str) -> None:
    for verdict in _both(lambda r: httpx.Response(200, json=answer)):
        _refused(verdict, why)


def test_a_503_keeps_a_blocking_verdicts_code_and_never_approves() -> None:
    blocked = {**APPROVED, "approved": False, "decision": "block", "code": "RECORDER_UNAVAILABLE"}
    for verdict in _both(lambda r: httpx.Response(503, json=blocked)):
        assert not verdict.approved and verdict.code is Code.RECORDER_UNAVAILABLE
    for answer in (APPROVED, {**blocked, "tool": "send_email"}, {"error": "down"}):
        for verdict in _both(lambda r, answer=answer: httpx.Response(503, json=answer)):  # type: ignore[misc]
            _refused(verdict, "503")


def test_a_duplicate_key_is_refused_whatever_its_last_value() -> None:
    raw = json.dumps(APPROVED)[:-1] + ', "approved": false, "approved": true}'
    for verdict in _both(lambda r: httpx.Response(200, content=raw.encode())):
        _refused(verdict, "strict JSON")


def test_a_redirect_is_never_followed_and_never_sends_the_token_on() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.host == "svc.example":
            return httpx.Response(302, headers={"Location": "http://evil.example/v1/check"})
        return httpx.Response(200, json=APPROVED)

    for verdict in _both(answer):
        _refused(verdict, "redirect")
    assert all("evil.example" not in u for u in seen)


def test_an_answer_over_the_size_cap_is_refused_as_it_streams() -> None:
    big = json.dumps({**APPROVED, "reasoning": "x" * (2 * 1024 * 1024)}).encode()
    for verdict in _both(lambda r: httpx.Response(200, content=big)):
        _refused(verdict, "over")


def test_a_batch_answer_is_read_strictly_too() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"results": [{"verdict": APPROVED}, {"verdict": {**APPROVED, "approved": 1}}]})

    sync, _ = _mock(answer)
    good, bad = sync.check_batch([CHECK, CHECK])
    assert good.approved
    _refused(bad, "not a verdict")


# -- a real socket: failures in the bytes ----------------------------------------------------------------


def _server(reply: Callable[[socket.socket], None]) -> Iterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.recv(65536)
                with contextlib.suppress(OSError):
                    reply(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def _trickle(conn: socket.socket) -> None:
    body = json.dumps(APPROVED).encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
    for i in range(len(body)):
        conn.sendall(body[i : i + 1])
        time.sleep(0.1)


def _truncated(conn: socket.socket) -> None:
    body = json.dumps(APPROVED).encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (len(body) + 50) + body)


def _bad_status(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 two hundred OK\r\n\r\n" + json.dumps(APPROVED).encode())


def _many_headers(conn: socket.socket) -> None:
    head = b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 100) for i in range(5000))
    conn.sendall(b"HTTP/1.1 200 OK\r\n" + head + b"\r\n" + json.dumps(APPROVED).encode())


@pytest.mark.parametrize(
    ("reply", "why"),
    [(_trickle, "within"), (_truncated, "could not be reached"), (_bad_status, ""), (_many_headers, "")],
    ids=["trickled", "truncated", "bad-status-line", "too-many-headers"],
)
def test_a_broken_answer_is_a_refusal_never_an_exception(reply: Callable[[socket.socket], None], why: str) -> None:
    for url in _server(reply):  # a trickle: one deadline for the whole answer ("within": not a per-read timeout)
        _refused(ServiceClient(url, "vt_x", timeout=1.0).check(CHECK), why)
        _refused(asyncio.run(AsyncServiceClient(url, "vt_x", timeout=1.0).check(CHECK)), why)


@pytest.mark.parametrize(
    ("body", "tool"),
    [
        (
            b'{"messages": [{"role": "user", "content": "hi"}], "action": {"tool": "send_money", "args": {}}}',
            "send_money",
        ),
        (b'{"action": {"args": {"tool": "decoy"}, "tool": "send_email"}, "messages": []}', "send_email"),
        (b'{"action": {"tool": 5}}', "unknown"),
        (b'{"action": {}}', "unknown"),
        (b"not json", "unknown"),
        ('{"action": {"tool": "caf\\u00e9"}}', "café"),
    ],
)
def test_the_tool_a_check_asks_about_is_read_without_building_the_rest(body: bytes | str, tool: str) -> None:
    """The client reads back only the tool's name (a verdict on another tool is refused), by a typed decode
    that skips the messages: a 10,000-message body costs it a few milliseconds, not a whole parse."""
    from validator.integrations.service.client import _tool

    assert _tool(body) == tool


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(st.characters(codec=None), max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=3) | st.integers() | st.booleans(), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=3), _JSONISH, max_size=4))  # a check input is an object
def test_the_client_writes_what_json_writes_and_nan_never_becomes_null(value: Any) -> None:
    """msgspec writes only plain data (the same JSON as ``json``); the rest goes as ``json`` writes it, so a
    NaN reaches the service as NaN (refused there, as in process), never as an acceptable null."""
    from validator.integrations.service.client import _encoded, _plain

    try:
        expected = json.dumps(value).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):
        return
    body = _encoded(value)
    if _plain(value):
        assert json.loads(body) == json.loads(expected)
    else:
        assert body == expected


@pytest.mark.parametrize("url", ["ftp://validator.internal", "localhost:8080", ""])
def test_a_service_url_that_is_not_http_is_a_usage_error(url: str) -> None:
    """A developer's mistake is the documented :class:`UsageError` (issue 60), naming what is wrong."""
    from validator.integrations.service.client import ServiceClient

    from validator import UsageError

    with pytest.raises(UsageError, match="must be http:// or https://"):
        ServiceClient(url, "token")


def test_a_problem_body_is_read_its_code_detail_and_each_bad_field_named() -> None:
    problem = {
        "type": "urn:action-validator:error:invalid_input",
        "title": "Bad Request",
        "status": 400,
        "code": "invalid_input",
        "error": "invalid_input",
        "problems": [{"path": "messages.0.role", "problem": "must be user, assistant, tool or system"}],
    }
    answer = lambda r: httpx.Response(  # noqa: E731
        400, content=json.dumps(problem), headers={"content-type": "application/problem+json"}
    )
    for verdict in _both(answer):
        _refused(verdict, "answered 400 (invalid_input", "messages.0.role: must be user, assistant, tool or system")
    quota = {"type": "urn:action-validator:error:question_quota", "title": "Too Many Requests", "status": 429}
    quota |= {"code": "question_quota", "detail": "held questions are at 64 MiB of 64 MiB"}
    for verdict in _both(lambda r: httpx.Response(429, json=quota)):
        _refused(verdict, "answered 429 (question_quota; held questions are at 64 MiB of 64 MiB)")
    for verdict in _both(lambda r: httpx.Response(418, text="<html>teapot</html>")):  # no problem: its text
        _refused(verdict, "answered 418: <html>teapot</html>")
