"""Python clients of ``validator serve`` that fail closed: anything but a 200 verdict is a refusal.

:class:`ServiceClient` (sync) and :class:`AsyncServiceClient` (async), on ``httpx``. Every failure comes
back as a blocking :class:`~validator.Verdict` (``SERVICE_UNAVAILABLE``) saying what happened, and the
caller runs the action only when ``verdict.approved``:

- a network error, a timeout, a malformed answer (a bad status line, too many headers, a truncated body);
- a redirect (never followed: it would send the bearer token to wherever it points, and take that
  host's verdict);
- one total deadline (``timeout``) for the whole exchange, not a time per read: an answer trickled a
  byte at a time is refused once the deadline passes (the async client holds it exactly; the sync
  one checks it between reads, so it overshoots by one read at most);
- an answer over ``max_bytes`` (1 MiB: a verdict is a few kilobytes), refused as it streams in;
- a non-2xx status (a 503 whose body is a blocking verdict on the tool keeps that verdict's code, such as
  ``RECORDER_UNAVAILABLE`` when the service's store failed; a 503 never approves); the service's RFC 9457
  problem is read into the refusal's reasoning (its code, detail and each bad field: ``the service answered
  403 (user_not_vouched; …)``);
- a body that is not exactly a verdict: read strictly (``"approved": "true"`` or ``1`` is not a
  boolean, a duplicate key is refused), and a verdict on another tool than the one asked about.

Without ``keep_alive`` no socket outlives a check; with it, connections are kept between checks (a
third of a millisecond a check on loopback; ``close()`` the client, or use it as a context manager).
``check(..., conversation=ID)`` uses the incremental form: the client remembers the digest of the
messages it sent for ``ID`` (:mod:`validator.inputs.sent`) and, when the new input's messages begin
with exactly those, sends only the rest; a 409 (the service does not hold them) is answered by
sending the whole input once, within the same deadline. The verdict is the whole input's either way.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

import httpx
import jiter
import msgspec

from validator.decision import service_unavailable
from validator.exceptions import UsageError
from validator.inputs import sent
from validator.telemetry import CheckSpan, Telemetry
from validator.verdict import Verdict, verdict_adapter

__all__ = ["AsyncServiceClient", "ServiceClient"]

MAX_BYTES = 1024 * 1024
"""The largest answer a client reads (a verdict is a few kilobytes; a batch of 64, well under this)."""

_refused = service_unavailable
_NO_POOL = httpx.Limits(max_keepalive_connections=0)
_REMEMBERED = 1024
"""Conversations a client remembers the sent digest of (the least recently used forgotten)."""


class _Refusal(Exception):
    """Why an exchange gives no verdict (it becomes a refusal)."""


TransportT = TypeVar("TransportT", httpx.BaseTransport, httpx.AsyncBaseTransport)
ClientT = TypeVar("ClientT", httpx.Client, httpx.AsyncClient)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Call(Generic[T]):
    """One exchange, planned before any I/O: where it goes, what it sends, how its answer is read."""

    path: str
    body: bytes
    read: Callable[[int, bytes | str], T]
    """``read(status, body)``; ``(0, why)`` when the exchange failed."""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Sent:
    """What a client believes the service holds of one conversation: its message count and digest."""

    count: int
    digest: str


@dataclass(frozen=True, slots=True)
class _Conversation:
    """One check of a named conversation, planned before any I/O: the first exchange, the whole input to
    send when the service answers 409 (``None`` when the first already is whole), and what the service
    holds once it has checked it."""

    first: _Call[Verdict]
    whole: _Call[Verdict] | None
    then: _Sent | None


def _check_call(check_input: Mapping[str, Any] | str | bytes) -> _Call[Verdict]:
    body, tools = _body(check_input)
    return _Call("/v1/check", body, partial(_one, tools[0]))


def _conversation_call(check_input: Mapping[str, Any] | str | bytes, name: str, known: _Sent | None) -> _Conversation:
    """Only a body this client wrote from plain data is sent in parts: JSON text from the host may repeat a
    key, which the splitter would read once and the service, sent the whole, refuses."""
    read = partial(_one, _tool(check_input))
    body, ours = _written(check_input)
    whole = _Call("/v1/check", body, read, {sent.CONVERSATION: name})
    if not ours or type(check_input) is not dict:
        return _Conversation(whole, None, None)
    try:
        parts = sent.split(body)
    except ValueError:  # not a check input: sent whole, for the service to name its problems
        return _Conversation(whole, None, None)
    count = known.count if known and known.count <= len(parts.messages) else 0
    prefix = sent.Chain().extended(parts.messages[:count])
    chain = prefix.extended(parts.messages[count:])
    then = _Sent(chain.count, chain.digest)
    if not count or known is None or prefix.digest != known.digest:
        return _Conversation(whole, None, then)
    rest = sent.joined(parts.fields, parts.messages[count:])
    return _Conversation(
        _Call("/v1/check", rest, read, {**whole.headers, sent.CONVERSATION_AFTER: known.digest}), whole, then
    )


def _answer_call(question_id: str, tool: str, decision: Any) -> _Call[Verdict]:
    body = _encoded({"question_id": question_id, "answer": decision})
    return _Call("/v1/answer", body, partial(_one, tool))


def _batch_call(check_inputs: list[Mapping[str, Any]]) -> _Call[list[Verdict]]:
    body = _encoded({"checks": list(check_inputs)})
    return _Call("/v1/check:batch", body, partial(_many, [_tool(c) for c in check_inputs]))


class _Base(Generic[TransportT, ClientT]):
    """What both clients share: the URL, the token, the limits, the one client they are built with
    (built once: its TLS context is costly) and the conversations' sent digests."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 10.0,
        max_bytes: int = MAX_BYTES,
        transport: TransportT | None = None,
        keep_alive: bool = False,
        telemetry: Telemetry | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"the service URL must be http:// or https://, got {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.limits = httpx.Limits() if keep_alive else _NO_POOL
        self._client: ClientT = self._new_client(transport)
        self._sent: OrderedDict[str, _Sent] = OrderedDict()
        self._lock = threading.Lock()  # one client may serve several threads (or tasks) at once
        self.telemetry = telemetry or Telemetry()
        """Where a check's ``CLIENT`` span goes (:mod:`validator.telemetry`); each request carries the current
        trace (``traceparent``), which the service continues."""
        parts = httpx.URL(self.url)
        self._server = (parts.host, parts.port or (443 if parts.scheme == "https" else 80))

    def _new_client(self, transport: TransportT | None) -> ClientT:
        raise NotImplementedError

    def _request(self, call: _Call[Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json", **call.headers}
        self.telemetry.inject(headers)
        return {"method": "POST", "url": self.url + call.path, "content": call.body, "headers": headers}

    def _traced(self) -> AbstractContextManager[CheckSpan]:
        return self.telemetry.check(server=self._server)

    def _known(self, name: str) -> _Sent | None:
        with self._lock:
            found = self._sent.get(name)
            if found is not None:
                self._sent.move_to_end(name)
            return found

    def _learn(self, name: str, plan: _Conversation, status: int, headers: Mapping[str, str]) -> None:
        """Remember what the service says it now holds, when it is what this client sent; else forget."""
        then = plan.then
        count = headers.get(sent.CONVERSATION_COUNT, "")
        said = _Sent(
            int(count) if count.isascii() and count.isdigit() else -1, headers.get(sent.CONVERSATION_DIGEST, "")
        )
        with self._lock:
            if status == 200 and then is not None and said == then:
                self._sent[name] = then
                self._sent.move_to_end(name)
                while len(self._sent) > _REMEMBERED:
                    self._sent.popitem(last=False)
            else:
                self._sent.pop(name, None)

    def _start(self, response: httpx.Response) -> None:
        if response.is_redirect or 300 <= response.status_code < 400:
            raise _Refusal(f"the service answered {response.status_code} (a redirect, never followed)")

    def _grow(self, chunks: list[bytes], chunk: bytes, size: int, deadline: float) -> int:
        size += len(chunk)
        if size > self.max_bytes:
            raise _Refusal(f"its answer is over {self.max_bytes:,} bytes")
        if time.monotonic() > deadline:
            raise _Refusal(f"no whole answer within {self.timeout:g} s")
        chunks.append(chunk)
        return size


class ServiceClient(_Base[httpx.BaseTransport, httpx.Client]):
    """Calls one service (``url``, e.g. ``http://127.0.0.1:8321``) with one bearer ``token``; see the
    module docstring. ``transport``: an ``httpx`` transport (a test's ``MockTransport``)."""

    def _new_client(self, transport: httpx.BaseTransport | None) -> httpx.Client:
        return httpx.Client(follow_redirects=False, timeout=self.timeout, transport=transport, limits=self.limits)

    def close(self) -> None:
        """Close the kept-alive connections."""
        self._client.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check(self, check_input: Mapping[str, Any] | str | bytes, *, conversation: str | None = None) -> Verdict:
        """The verdict on one check input (the CLI's JSON); a refusal on any failure. ``conversation``: the
        host's name for the conversation, to send only what the service has not seen (module docstring)."""
        with self._traced() as span:
            verdict = self._check(check_input, conversation)
            span.done(verdict)
            return verdict

    def _check(self, check_input: Mapping[str, Any] | str | bytes, conversation: str | None) -> Verdict:
        if conversation is None:
            return self._call(_check_call(check_input))
        plan = _conversation_call(check_input, conversation, self._known(conversation))
        deadline = time.monotonic() + self.timeout
        status, body, headers = self._post(plan.first, deadline)
        if status == 409 and plan.whole is not None:
            status, body, headers = self._post(plan.whole, deadline)
        self._learn(conversation, plan, status, headers)
        return plan.first.read(status, body)

    def answer(self, question_id: str, tool: str, decision: Any) -> Verdict:
        """Record the user's answer (LangChain's decision shapes) to the question an ``ask_user`` verdict on
        ``tool`` put (its ``question_id``; ``POST /v1/answer``, scope ``answer``): the decided verdict; a
        refusal on any failure."""
        return self._call(_answer_call(question_id, tool, decision))

    def check_batch(self, check_inputs: list[Mapping[str, Any]]) -> list[Verdict]:
        """The verdicts on several check inputs, in order; each a refusal on any failure."""
        return self._call(_batch_call(check_inputs))

    def _call(self, call: _Call[T]) -> T:
        status, body, _ = self._post(call, time.monotonic() + self.timeout)
        return call.read(status, body)

    def _post(self, call: _Call[Any], deadline: float) -> tuple[int, bytes | str, Mapping[str, str]]:
        """``(status, body, headers)``, or ``(0, why, {})`` when the exchange failed; a 429 asking to wait is sent
        again after the wait, while the deadline allows (:func:`_retry_after`)."""
        while True:
            status, body, headers = self._send(call, deadline)
            wait = _retry_after(status, headers, deadline)
            if wait is None:
                return status, body, headers
            time.sleep(wait)

    def _send(self, call: _Call[Any], deadline: float) -> tuple[int, bytes | str, Mapping[str, str]]:
        try:
            with self._client.stream(**self._request(call)) as response:
                self._start(response)
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size = self._grow(chunks, chunk, size, deadline)
                return response.status_code, b"".join(chunks), response.headers
        except _Refusal as exc:
            return 0, str(exc), {}
        except Exception as exc:  # refused, reset, timed out, malformed: every failure is a refusal
            return 0, f"the service could not be reached ({type(exc).__name__}: {str(exc)[:200]})", {}


class AsyncServiceClient(_Base[httpx.AsyncBaseTransport, httpx.AsyncClient]):
    """Async twin of :class:`ServiceClient` (``httpx.AsyncClient``; the deadline held exactly)."""

    def _new_client(self, transport: httpx.AsyncBaseTransport | None) -> httpx.AsyncClient:
        return httpx.AsyncClient(follow_redirects=False, timeout=self.timeout, transport=transport, limits=self.limits)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> AsyncServiceClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def check(self, check_input: Mapping[str, Any] | str | bytes, *, conversation: str | None = None) -> Verdict:
        with self._traced() as span:
            verdict = await self._check(check_input, conversation)
            span.done(verdict)
            return verdict

    async def _check(self, check_input: Mapping[str, Any] | str | bytes, conversation: str | None) -> Verdict:
        if conversation is None:
            return await self._call(_check_call(check_input))
        plan = _conversation_call(check_input, conversation, self._known(conversation))
        deadline = time.monotonic() + self.timeout
        status, body, headers = await self._post(plan.first, deadline)
        if status == 409 and plan.whole is not None:
            status, body, headers = await self._post(plan.whole, deadline)
        self._learn(conversation, plan, status, headers)
        return plan.first.read(status, body)

    async def answer(self, question_id: str, tool: str, decision: Any) -> Verdict:
        return await self._call(_answer_call(question_id, tool, decision))

    async def check_batch(self, check_inputs: list[Mapping[str, Any]]) -> list[Verdict]:
        return await self._call(_batch_call(check_inputs))

    async def _call(self, call: _Call[T]) -> T:
        status, body, _ = await self._post(call, time.monotonic() + self.timeout)
        return call.read(status, body)

    async def _post(self, call: _Call[Any], deadline: float) -> tuple[int, bytes | str, Mapping[str, str]]:
        import asyncio

        while True:
            status, body, headers = await self._send(call, deadline)
            wait = _retry_after(status, headers, deadline)
            if wait is None:
                return status, body, headers
            await asyncio.sleep(wait)

    async def _send(self, call: _Call[Any], deadline: float) -> tuple[int, bytes | str, Mapping[str, str]]:
        import asyncio

        left = max(0.0, deadline - time.monotonic())
        try:
            async with asyncio.timeout(left), self._client.stream(**self._request(call)) as response:
                self._start(response)
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size = self._grow(chunks, chunk, size, deadline)
                return response.status_code, b"".join(chunks), response.headers
        except _Refusal as exc:
            return 0, str(exc), {}
        except TimeoutError:
            return 0, f"no whole answer within {self.timeout:g} s", {}
        except Exception as exc:
            return 0, f"the service could not be reached ({type(exc).__name__}: {str(exc)[:200]})", {}


RETRY_AFTER_MOST = 5.0
"""The longest ``Retry-After`` (seconds) a client waits out before sending a 429'd call again."""


def _retry_after(status: int, headers: Mapping[str, str], deadline: float) -> float | None:
    """How long to wait before sending again: a 429 (the tenant's checks all running) with a ``Retry-After`` of a
    few seconds that ends before the deadline; else None (the answer stands: a 429 then reads as a refusal)."""
    if status != 429:
        return None
    try:
        wait = float(headers.get("retry-after", ""))
    except ValueError:
        return None
    if not 0 <= wait <= RETRY_AFTER_MOST or time.monotonic() + wait >= deadline:
        return None
    return wait


# -- reading the answers strictly -------------------------------------------------------------------


def _body(check_input: Mapping[str, Any] | str | bytes) -> tuple[bytes, list[str]]:
    return _encoded(check_input), [_tool(check_input)]


def _encoded(value: Any) -> bytes:
    return _written(value)[0]


def _written(value: Any) -> tuple[bytes, bool]:
    """``value`` as JSON, and whether ``msgspec`` wrote it from plain data (then no key repeats): text as
    it is; plain JSON data (dicts with string keys, lists, tuples, strings, integers, finite floats,
    booleans, None) by ``msgspec`` in one C pass; anything else by ``json``, as before: ``msgspec`` would
    write a non-finite number as ``null`` (which the service may accept where it refuses ``NaN``, as the
    check in process does) and encode types ``json`` refuses. Bytes are JSON already."""
    if isinstance(value, bytes):
        return value, False
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass"), False
    if _plain(value):
        try:
            return msgspec.json.encode(value), True
        except (TypeError, UnicodeEncodeError, OverflowError):
            pass  # a lone surrogate, an integer past 64 bits: json writes them for the service to judge
    return json.dumps(value).encode("utf-8", "surrogatepass"), False


_SCALARS = frozenset({str, int, bool, type(None)})
_IS_STR = str.__instancecheck__


def _plain(value: Any) -> bool:
    """Whether ``value`` is JSON data that ``msgspec`` and ``json`` write alike (an iterative walk)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            if not all(map(_IS_STR, item)):
                return False
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif kind not in _SCALARS:
            return False
    return True


class _Action(msgspec.Struct):
    tool: str


class _NamedTool(msgspec.Struct):
    """The one field of a check input the client reads back: which tool it asks about."""

    action: _Action


_TOOL = msgspec.json.Decoder(_NamedTool)


def _tool(check_input: Any) -> str:
    """The tool a check input asks about ("unknown" when it names none): a verdict must be on it. From JSON
    text, a typed decode that skips everything else (the messages of a long history are not built)."""
    try:
        if isinstance(check_input, str):
            check_input = check_input.encode("utf-8", "surrogatepass")
        if isinstance(check_input, bytes):
            return _TOOL.decode(check_input).action.tool
        return str(check_input["action"]["tool"])
    except Exception:
        return "unknown"


def _parsed(raw: bytes | str) -> Any:
    """The answer's JSON, duplicate keys and non-finite numbers refused (:class:`ValueError`)."""
    return jiter.from_json(raw if isinstance(raw, bytes) else raw.encode(), catch_duplicate_keys=True)


def _verdict(data: Any) -> Verdict:
    """``data`` as a verdict, read strictly (booleans are booleans, no field missing or unknown); raises."""
    return verdict_adapter().validate_json(json.dumps(data), strict=True)


def _strict(tool: str, data: Any) -> Verdict:
    """``data`` as a verdict on ``tool``, read strictly; a refusal saying why when it is not one."""
    try:
        verdict = _verdict(data)
    except Exception as exc:
        return _refused(tool, f"its answer is not a verdict ({type(exc).__name__})")
    if tool != "unknown" and verdict.tool != tool:
        return _refused(tool, f"its answer is a verdict on another tool ({verdict.tool[:80]!r})")
    return verdict


def _failure(status: int, body: bytes | str) -> str:
    """What a failed exchange says: the service's RFC 9457 problem read (its code, detail and each bad field),
    else the start of the body as text."""
    if status == 0:
        return str(body)
    problem = _problem(body)
    if problem is not None:
        return f"the service answered {status} ({problem})"
    shown = body[:300].decode("utf-8", "replace") if isinstance(body, bytes) else body[:300]
    return f"the service answered {status}: {shown}"


def _problem(body: bytes | str) -> str | None:
    """An RFC 9457 problem body (``type``, ``title``, ``status``, ``detail``, and the service's ``code`` and
    ``problems``) as one line: ``CODE: detail; path: problem; …`` (at most 600 characters), or None when the
    body is no problem."""
    try:
        data = _parsed(body)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str) or "status" not in data:
        return None
    code = data.get("code") if isinstance(data.get("code"), str) else data.get("title")
    parts = [str(code or data["type"])]
    detail = data.get("detail")
    if detail is not None:
        parts.append(detail if isinstance(detail, str) else json.dumps(detail))
    problems = data.get("problems")
    if isinstance(problems, list):
        parts += [f"{p.get('path') or '(the input)'}: {p.get('problem')}" for p in problems[:10] if isinstance(p, dict)]
    line = "; ".join(str(part) for part in parts)
    return line if len(line) <= 600 else line[:599] + "…"


def _one(tool: str, status: int, body: bytes | str) -> Verdict:
    if status == 503:  # the service's own refusal (its store failed) keeps its code; anything else is ours
        kept = _blocking(tool, body)
        if kept is not None:
            return kept
    if status != 200:
        return _refused(tool, _failure(status, body))
    try:
        data = _parsed(body)
    except ValueError as exc:
        return _refused(tool, f"its answer is not strict JSON ({str(exc)[:120]})")
    return _strict(tool, data)


def _blocking(tool: str, body: bytes | str) -> Verdict | None:
    """A 503's body when it is a strict, blocking verdict on ``tool`` (never an approval off a 503), else None."""
    try:
        verdict = _verdict(_parsed(body))
    except Exception:
        return None
    return verdict if not verdict.approved and verdict.tool == tool and tool != "unknown" else None


def _many(tools: list[str], status: int, body: bytes | str) -> list[Verdict]:
    if status != 200:
        return [_refused(t, _failure(status, body)) for t in tools]
    try:
        data = _parsed(body)
    except ValueError as exc:
        return [_refused(t, f"its answer is not strict JSON ({str(exc)[:120]})") for t in tools]
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list) or len(results) != len(tools):
        return [_refused(t, f"its answer is not one result per check: {str(data)[:200]}") for t in tools]
    out = []
    for tool, result in zip(tools, results, strict=True):
        if isinstance(result, dict) and set(result) == {"verdict"}:
            out.append(_strict(tool, result["verdict"]))
        else:
            out.append(_refused(tool, f"the service refused the input: {json.dumps(result)[:300]}"))
    return out
