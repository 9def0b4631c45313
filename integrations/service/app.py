"""``validator serve``: the validator as an HTTP decision service (an ASGI app on FastAPI).

Like Envoy's external authorization or OPA's decision API: an agent runtime in any language calls it
before a guarded action and runs the action only on a 200 whose verdict approves.

- ``POST /v1/check``: the check input (the CLI's JSON) in, the verdict out (200, blocked or not); bad
  input is a 400 naming each field. ``POST /v1/check:batch``: ``{"checks": [...]}`` (parallel tool
  calls), each answered in order with ``{"verdict": ...}`` or ``{"error": ...}``.
- ``POST /v1/answer``: the user's answer to an ``ask_user`` verdict (the check validated again here,
  never a verdict the caller sends), recorded; the decided verdict out.
- ``/v1/authorizations`` (grant, list, revoke) and ``/v1/audit`` (page, one entry): the CLI's
  ``auth`` and ``audit`` commands.
- ``GET /healthz`` (the process answers), ``GET /readyz`` (the store answers; 503 when not),
  ``GET /metrics`` (Prometheus).

Security: every ``/v1`` route and ``/metrics`` needs ``Authorization: Bearer <token>``; a token
names a tenant and its scopes (``check``, ``answer``, ``grant``, ``admin``: 403 outside them), and
each tenant has its own store namespace (authorizations, audit, verdict reuse, request ledger), so no
tenant reads or spends another's. Bodies over ``max_body_bytes`` are refused
(413) before they are read whole; each token has a rate (429 with ``Retry-After``); a check that
runs over ``check_timeout`` answers 503 with a blocking verdict. Errors never carry a stack trace.

Fail closed over the wire: every failure is a refusal. The audit has no local spool here: a store
that cannot take the record turns an approval into ``RECORDER_UNAVAILABLE``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from typing import Any, TypeVar

from validator.extras import missing_extra

try:
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.responses import JSONResponse, Response
except ImportError as exc:
    raise missing_extra("service", "validator.integrations.service.app", exc) from None
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from validator.integrations._review import read_review
from validator.integrations.service.tokens import Identity, Tenants, tenants_for, token_hash

from validator import (
    CheckInput,
    Code,
    Decision,
    InputError,
    Policy,
    StandingAuthorization,
    Validator,
    ValidatorConfig,
    Verdict,
    stateful_validator,
)
from validator._json import dumps
from validator.decision import service_unavailable
from validator.exceptions import FieldProblem, SetupError, StoreBusy, StoreError, ValidatorError
from validator.gate.authorizations import is_bound
from validator.inputs import sent, strictjson
from validator.inputs.checkinput import DEFAULT_LIMITS, check_input_data
from validator.inputs.held import Held, HeldConversations
from validator.inputs.sent import CONVERSATION, CONVERSATION_AFTER, CONVERSATION_COUNT, CONVERSATION_DIGEST
from validator.inputs.transcript import Transcript, is_users
from validator.judges.base import Judge
from validator.schemas import schema
from validator.state import questions
from validator.store import open_store, tenant_url
from validator.store.base import Store, redacted
from validator.store.records import new_authorization_id
from validator.telemetry import Telemetry
from validator.verdict import refusals as texts
from validator.verdict.refusals import call_id_in_batch, next_step

T = TypeVar("T")
__all__ = ["ServiceConfig", "create_app"]

CONVERSATION_NOT_HELD = (
    "this process does not hold the conversation with that digest (a restart, another process, an edited "
    "history): send the whole check input, with the conversation header and without the digest"
)
_CONVERSATION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")

log = logging.getLogger("validator.service")


@dataclass(frozen=True, kw_only=True)
class ServiceConfig:
    """How the service runs; every field has a safe default."""

    store_url: str = "memory://"
    policy: Policy | None = None
    judge: Callable[[], Judge] | None = None
    """Builds the judge of each tenant's validator (default: the strict judge)."""
    max_body_bytes: int = 8 * 1024 * 1024
    max_batch: int = 64
    rate_per_second: float = 50.0
    """Checks a token may make a second, sustained (a token bucket; each check of a batch counts, and every
    process on one token store spends from the same bucket)."""
    burst: int = 100
    check_timeout: float = 30.0
    spool: Any = False
    """The audit spool of each tenant's validator: none by default (see the module docstring)."""
    allow_volatile_store: bool = False
    """Run on a Redis that keeps nothing across a restart (no AOF, no snapshots). Off: the service refuses to
    start on one, because a restart there wipes the tokens, the audit and the request ledger (every
    request is then a 401, and a payment spent before the crash is approved again)."""
    token_cache_seconds: float = 2.0
    """Seconds a process trusts a token's looked-up identity before it reads the token store again: a revoked
    token stops working on every process within this, and a busy service reads the store once per token and
    period instead of once per request. Unknown tokens are never kept (a token made a moment ago works at
    once). 0 reads the store on every request."""
    max_held_bytes: int = 256 * 1024 * 1024
    """Memory a process gives the conversations it holds for the incremental form of ``/v1/check``, as
    :mod:`~validator.inputs.held` counts it (twice their messages' JSON, 128 bytes a message and 4 KiB each);
    the least recently used are let go past it (their next check is a 409, and the client sends the
    whole input). 0 holds nothing."""
    question_seconds: float = questions.QUESTION_TTL.total_seconds()
    """How long an ``ask_user`` verdict's question waits for the user's answer (24 hours)."""
    telemetry: Telemetry = field(default_factory=Telemetry)
    """Where the checks' spans go (:mod:`validator.telemetry`; default: the application's global OpenTelemetry
    providers, e.g. under ``opentelemetry-instrument``). A check continues the caller's trace: its
    ``traceparent`` header (W3C Trace Context), unless a server instrumentation continued it already."""
    trusted_user_tenants: frozenset[str] = frozenset()
    """Tenants whose tokens not bound to users may name any user in a check (the operator trusts the caller to say
    who the user is: one agent process per user behind its own auth). A token of any other tenant checks for the
    users it is bound to only (``validator token create --user``), or for no named user; a check naming another
    user is a 403: the ledger, the standing authorizations and the questions are the named user's. ``"*"``: every
    tenant (one operator's own agents, each behind its own authentication)."""
    question_bytes: int = 64 * 1024 * 1024
    """What one tenant's waiting questions may hold in the store, in bytes (each holds its check input for
    ``question_seconds``): a question beyond it is not kept, and the check is a 429 saying the figure, so one
    tenant's questions never fill a Redis that must not evict."""
    tenant_checks: int = 3
    """Checks of one tenant a process runs at once, counted until each one's worker thread finishes (a check past
    its time keeps its thread until its gate's budget stops it): a tenant's heavy checks never hold more of the
    threads every tenant shares. Beyond it a check is a 429 with ``Retry-After`` (a batch's checks wait)."""
    request_policy_tenants: frozenset[str] = frozenset()
    """Tenants whose check inputs may carry their own ``policy`` (the operator's choice, per tenant). For
    every other tenant the service applies its own policy (``policy``, else the empty one: every tool
    guarded and general), and a check that carries one is refused (400): a caller must never be able
    to mark ``send_money`` exempt."""


@dataclass
class _State:
    tenants: Tenants
    checkers: dict[str, tuple[Validator, Store]] = field(default_factory=dict)
    """Each tenant's validator and the store (its namespace) it is wired to."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    tokens_down_until: float = 0.0
    """Until when (monotonic) token lookups refuse at once: the token store failed just before."""
    identities: dict[str, tuple[Identity, float]] = field(default_factory=dict)
    """Identities looked up lately, by token hash, with when (monotonic) each stops being trusted."""


def _tenant_store(config: ServiceConfig, tenant: str) -> Store:
    return open_store(tenant_url(config.store_url, tenant))


PROBLEM = "application/problem+json"
"""Every error of the service is an RFC 9457 problem (a refused check is a verdict instead)."""


PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "An RFC 9457 problem, with this service's members: error, code, problems",
    "required": ["type", "title", "status", "code"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {},
        "error": {"type": "string"},
        "code": {"type": "string"},
        "problems": {"type": "array", "items": {"type": "object"}},
    },
}


def _problem(status: int, body: Mapping[str, Any], headers: dict[str, str] | None = None) -> JSONResponse:
    """An RFC 9457 problem: ``type`` (our URN for the error's code), ``title`` (the status's phrase), ``status``,
    ``detail``, and our members: ``error`` and ``code`` (the same code) and, for bad input, ``problems``."""
    code = str(body.get("code") or body.get("error") or "error")
    problem: dict[str, Any] = {
        "type": f"urn:action-validator:error:{code}",
        "title": HTTPStatus(status).phrase,
        "status": status,
        **body,
        "code": code,
    }
    return JSONResponse(problem, status_code=status, headers=headers, media_type=PROBLEM)


def _error(status: int, error: str, detail: Any = None, headers: dict[str, str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": error}
    if detail is not None:
        body["detail"] = detail
    return _problem(status, body, headers)


def _bad_input(exc: InputError) -> JSONResponse:
    """A 400 naming each bad field (``problems``), as a problem."""
    return _problem(400, exc.to_dict())


def _refusal(tool: str, why: str) -> dict[str, Any]:
    return service_unavailable(tool, why).to_dict()


STORE_FAULTS = frozenset({Code.AUTHORIZATION_UNAVAILABLE, Code.REQUEST_LEDGER_UNAVAILABLE, Code.RECORDER_UNAVAILABLE})
"""Verdicts that say the store failed: a check route answers them with 503 (and the blocking verdict)."""
TOKEN_STORE_PAUSE = 1.0
"""Seconds token lookups refuse at once after the token store failed (an outage refuses quickly)."""
TOKEN_CACHE_SIZE = 10_000
"""Identities a process keeps at most (the oldest goes first)."""


def _busy(exc: Exception) -> HTTPException:
    log.warning("store busy: %s", exc)
    return HTTPException(429, STORE_BUSY, headers={"Retry-After": "1"})


STORE_BUSY = "store_busy: every connection to the store stayed in use while this request waited; try again"


class _Unavailable(Exception):
    """The token store could not answer on a check route: a 503 with a blocking verdict."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Service:
    """The routes, over one state: tenants, their validators and stores, rate buckets, metrics."""

    def __init__(self, config: ServiceConfig, tenants: Tenants) -> None:
        self.config = config
        self.state = _State(tenants)
        self.probe: Store | None = None
        self.registry = CollectorRegistry()
        self.verdicts = Counter("validator_verdicts_total", "Verdicts given", ["code"], registry=self.registry)
        self.requests = Counter(
            "validator_http_requests_total", "HTTP requests", ["route", "status"], registry=self.registry
        )
        self.latency = Histogram("validator_http_seconds", "Request latency", ["route"], registry=self.registry)
        self.held = HeldConversations(config.max_held_bytes)
        self.slots: dict[str, asyncio.Semaphore] = {}
        """Each tenant's check slots (:meth:`slot`), on the event loop."""

    # -- tenants, bodies, checks -------------------------------------------------------------

    def validator_of(self, tenant: str) -> tuple[Validator, Store]:
        with self.state.lock:
            if tenant not in self.state.checkers:
                store = _tenant_store(self.config, tenant)
                judge = self.config.judge() if self.config.judge else None
                # the server's policy always; only a tenant the operator allows may bring its own (see judged)
                own = None if tenant in self.config.request_policy_tenants else self.config.policy or Policy()
                checker = stateful_validator(
                    store,
                    policy=own,
                    judge=judge,
                    spool=self.config.spool,
                    config=ValidatorConfig(telemetry=self.config.telemetry),
                )
                self.state.checkers[tenant] = checker, store
            return self.state.checkers[tenant]

    def admitted(self, tenant: str, item: CheckInput) -> CheckInput:
        """The check as this service runs it: a ``policy`` in it is refused unless the operator allows the
        tenant one (:class:`InputError` on the field); an allowed tenant without one gets the server's."""
        if tenant not in self.config.request_policy_tenants:
            if item.policy is not None:
                raise InputError([FieldProblem("policy", POLICY_REFUSED)])
            return item
        return item if item.policy is not None else replace(item, policy=self.config.policy or Policy())

    def parsed(self, tenant: str, raw: bytes | Any, before: Transcript | None = None) -> CheckInput:
        """One check input, read by the check input's own strict parser (bytes, or a batch's element);
        ``before``: the held conversation its messages follow."""
        item = CheckInput.from_json(raw, before=before) if isinstance(raw, bytes) else CheckInput.from_dict(raw)
        if item.action.call_id is None:  # no id: a new call, which spends anew (an id makes a retry idempotent)
            item = replace(item, action=replace(item.action, call_id=f"{MINTED_CALL_ID}{uuid.uuid4().hex}"))
        return self.admitted(tenant, item)

    def incremental(self, tenant: str, request: Request, raw: bytes) -> tuple[CheckInput, sent.Chain | None] | None:
        """The check input of a request that names its conversation, and the digest of the conversation it
        leaves held (``None``: not held, over the budget); ``None`` (a 409) when it follows a digest this
        process does not hold. The whole conversation is held to the limits of one whole input: its body's
        size (as the held messages and this body would make it, written compactly) too."""
        conversation = request.headers[CONVERSATION]
        if not _CONVERSATION_ID.fullmatch(conversation):
            raise InputError([FieldProblem(CONVERSATION, "must be 1 to 128 letters, digits or . _ : -")])
        after = request.headers.get(CONVERSATION_AFTER)
        before = None if after is None else self.held.get(tenant, conversation, after)
        if after is not None and before is None:
            return None
        try:
            parts = sent.split(raw)
        except ValueError:
            parts = None  # not a check input: the parser names its problems
        if before is not None and parts is not None:
            self._within(before, parts, len(raw))
        item = self.parsed(tenant, raw, before.transcript if before else None)
        if parts is None:  # the strict parser took what the splitter did not: refused, never held half-read
            raise InputError([FieldProblem("messages", "could not be read as a list of messages")])
        now = Held.of(item.transcript, parts.messages, before)
        return item, now.chain if self.held.put(tenant, conversation, now) else None

    def _within(self, before: Held, parts: sent.Split, length: int) -> None:
        """Refuse, as the whole input would be, a conversation whose whole body would be over a limit."""
        count = before.chain.count + len(parts.messages)
        whole = length - len(parts.fields["messages"]) + 2 + before.size + count - 1
        whole += sum(len(m) for m in parts.messages)
        limit = self.config.max_body_bytes
        if whole > limit:
            raise HTTPException(413, f"the conversation's whole body would be over {limit:,} bytes")
        if whole > DEFAULT_LIMITS.max_bytes:
            raise InputError(
                [FieldProblem("", f"input is {whole:,} bytes as a whole; at most {DEFAULT_LIMITS.max_bytes:,}")]
            )

    async def tenant(self, request: Request, scope: str = "check") -> str:
        """The tenant of the request's bearer token (see :meth:`identity`)."""
        return (await self.identity(request, scope)).tenant

    async def identity(self, request: Request, scope: str = "check") -> Identity:
        """Who the request's bearer token is (401 without one, 429 over its rate). The token store is
        read off the event loop; when it cannot answer, a 503 (with a blocking verdict on a check route),
        and for a second after a failure every lookup refuses at once instead of waiting on it again."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        token = token.strip()
        found = None
        check = scope == "check"
        if scheme.lower() == "bearer" and token:
            try:
                found = await self.lookup(token)
            except StoreBusy as exc:
                raise _busy(exc) from None
            except StoreError as exc:
                log.warning("token store unavailable: %s", exc)
                why = "the token store is unavailable, so nothing is checked"
                raise (
                    HTTPException(503, why, headers={"Retry-After": "1"}) if not check else _Unavailable(why)
                ) from None
        if found is None:
            raise HTTPException(401, "a valid bearer token is required", headers={"WWW-Authenticate": "Bearer"})
        if scope not in found.scopes:
            granted = ", ".join(sorted(found.scopes))
            raise HTTPException(403, f"this token may {granted}; this route needs the {scope!r} scope")
        if scope == "answer" and "check" in found.scopes:
            raise HTTPException(
                403, "a token that may check can never answer: the agent must not approve its own questions"
            )
        await self.charge(token, 1, check=check)
        return found

    async def charge(self, token: str, cost: int, what: str = "a check", *, check: bool = True) -> None:
        """Spend ``cost`` checks of the token's rate (shared by every process on the token store): 429 when
        it has not got them, 503 when the store cannot say (with a blocking verdict on a check route)."""
        try:
            granted = await self.state.tenants.atake(token, cost, self.config.rate_per_second, self.config.burst)
        except StoreBusy as exc:
            raise _busy(exc) from None
        except StoreError as exc:
            log.warning("rate store unavailable: %s", exc)
            why = "the token store is unavailable, so nothing is checked"
            raise (HTTPException(503, why, headers={"Retry-After": "1"}) if not check else _Unavailable(why)) from None
        if not granted:
            raise HTTPException(429, f"rate limit of this token reached ({what})", headers={"Retry-After": "1"})

    async def lookup(self, token: str) -> Identity | None:
        """The token's tenant and scopes: kept for ``token_cache_seconds``, else read from the token store on
        the event loop (its async client times out in a second); fails fast while the store is down."""
        key, now = token_hash(token), time.monotonic()
        kept = self.state.identities.get(key)
        if kept is not None and now < kept[1]:
            return kept[0]
        if now < self.state.tokens_down_until:
            raise StoreError("the token store failed less than a second ago")
        try:
            found = await self.state.tenants.aidentity_of(token)
        except StoreBusy:
            raise  # busy is not down: no pause
        except StoreError:
            self.state.tokens_down_until = time.monotonic() + TOKEN_STORE_PAUSE
            raise
        identities = self.state.identities
        identities.pop(key, None)
        if found is not None and self.config.token_cache_seconds > 0:
            while len(identities) >= TOKEN_CACHE_SIZE:
                del identities[next(iter(identities))]
            identities[key] = found, time.monotonic() + self.config.token_cache_seconds
        return found

    async def body(self, request: Request) -> bytes:
        """The body, refused (415) unless it is declared JSON, and (413) as soon as it is over the limit, before
        it is read whole."""
        media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media != "application/json":
            shown = media[:60] or "none"
            raise HTTPException(415, f"the body must be sent as Content-Type: application/json (got {shown})")
        limit = self.config.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            raise HTTPException(413, f"the body is over {limit:,} bytes")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPException(413, f"the body is over {limit:,} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def slot(self, tenant: str, *, wait: bool) -> asyncio.Semaphore:
        """Take one of the tenant's check slots (:attr:`ServiceConfig.tenant_checks`) and return their semaphore (its
        ``release`` gives it back once the check's worker thread has finished, not when its caller got an answer):
        a tenant's checks never hold more of the threads every tenant shares, so one tenant's heavy checks cannot
        starve another's. When all are held, a batch's check waits for one (``wait``); any other request is a 429
        with ``Retry-After``."""
        slots = self.slots.setdefault(tenant, asyncio.Semaphore(self.config.tenant_checks))
        if slots.locked() and not wait:
            bound = self.config.tenant_checks
            raise HTTPException(
                429, texts.tenant_checks_full(bound), headers={"Retry-After": str(TENANT_RETRY_SECONDS)}
            )
        await slots.acquire()
        return slots

    async def judged(
        self, tenant: str, item: CheckInput, request: Request, *, wait: bool = False
    ) -> tuple[int, dict[str, Any]]:
        """``(status, verdict)``: 200 and the validator's verdict, or 503 and a refusal. The check's span continues
        the caller's trace (its ``traceparent``). It runs in one of the tenant's slots (:meth:`slot`)."""
        timeout = self.config.check_timeout
        slots = await self.slot(tenant, wait=wait)
        started = False
        try:
            checker, _ = self.validator_of(tenant)
            with self.config.telemetry.continued(request.headers):  # the worker thread takes the context along
                running = asyncio.ensure_future(asyncio.to_thread(checker.check, item))
            running.add_done_callback(lambda _: slots.release())
            started = True
            done, _ = await asyncio.wait({running}, timeout=timeout)
            if not done:  # it may still finish and be recorded; the caller has its refusal either way
                return 503, _refusal(item.action.tool, texts.check_ran_over(timeout))
            verdict = running.result()
        except Exception as exc:  # the validator never raises here; this is the service's own glue failing
            log.exception("check failed for tenant %s", tenant)
            return 503, _refusal(item.action.tool, texts.could_not_check(type(exc).__name__))
        finally:
            if not started:  # no worker thread took the slot
                slots.release()
        self.verdicts.labels(verdict.code.value).inc()
        return 503 if verdict.code in STORE_FAULTS else 200, verdict.to_dict()

    async def stored(self, tenant: str, call: Callable[[Store], T]) -> T:
        """``call(store)`` on the tenant's store, off the event loop; a store failure is a 503."""
        _, store = self.validator_of(tenant)
        try:
            return await asyncio.to_thread(call, store)
        except StoreBusy as exc:
            raise _busy(exc) from None
        except StoreError as exc:
            raise HTTPException(503, f"the store is unavailable: {exc}") from None

    # -- routes ------------------------------------------------------------------------------

    def vouched(self, identity: Identity, item: CheckInput) -> dict[str, Any] | None:
        """The 403 body of a check naming a user its token does not speak for (see
        :attr:`ServiceConfig.trusted_user_tenants`), else None."""
        trusted = self.config.trusted_user_tenants
        if identity.speaks_for(item.user_id, identity.tenant in trusted or "*" in trusted):
            return None
        return {"error": "user_not_vouched", "detail": texts.user_not_vouched(identity.bound)}

    async def check(self, request: Request) -> JSONResponse:
        """Validate one pending action: the verdict (200), the problems of the input (400), or a 403 when it names
        a user its token does not speak for."""
        identity = await self.identity(request, "check")
        who = identity.tenant
        chain = None
        try:
            raw = await self.body(request)
            if CONVERSATION_AFTER in request.headers and CONVERSATION not in request.headers:
                raise InputError([FieldProblem(CONVERSATION, f"is required with {CONVERSATION_AFTER}")])
            if CONVERSATION not in request.headers:
                item = self.parsed(who, raw)
            else:
                found = self.incremental(who, request, raw)
                if found is None:
                    return _error(409, "conversation_not_held", CONVERSATION_NOT_HELD)
                item, chain = found
        except InputError as exc:
            return _bad_input(exc)
        refused = self.vouched(identity, item)
        if refused is not None:
            return _problem(403, refused)
        answered = await self.answered(who, item)
        if answered is not None:  # the user answered this very call since: the agent learns it, once
            return JSONResponse(answered)
        status, verdict = await self.judged(who, item, request)
        status, verdict = await self.questioned(who, item, status, verdict, token_hash(_bearer(request)))
        headers = {"Retry-After": "1"} if status == 503 else ({"Retry-After": "60"} if status == 429 else {})
        if chain is not None:
            headers |= {CONVERSATION_DIGEST: chain.digest, CONVERSATION_COUNT: str(chain.count)}
        return JSONResponse(verdict, status_code=status, headers=headers or None)

    async def check_batch(self, request: Request) -> JSONResponse:
        """Validate several pending actions (one model turn's parallel calls), each answered in order (a check
        naming a user the token does not speak for: its 403 in its place)."""
        identity = await self.identity(request, "check")
        who = identity.tenant
        try:
            data = strict_json(await self.body(request))
        except InputError as exc:
            return _bad_input(exc)
        most = self.config.max_batch
        checks = data.get("checks") if isinstance(data, dict) else None
        if not isinstance(checks, list) or not 0 < len(checks) <= most or set(data) != {"checks"}:
            return _error(400, "invalid_input", f'expected {{"checks": [1 to {most} check inputs]}}')
        if len(checks) > 1:  # each check of a batch costs what a check costs (the first was paid for)
            await self.charge(_bearer(request), len(checks) - 1, f"a batch of {len(checks)} checks")

        items: list[CheckInput | dict[str, Any]] = []
        seen: set[tuple[str | None, str]] = set()
        for raw in checks:  # the first copy under a call id is checked; the rest reuse its id
            try:
                item = self.parsed(who, raw)
            except InputError as exc:
                items.append({"error": exc.to_dict()})
                continue
            refused = self.vouched(identity, item)
            if refused is not None:
                items.append({"error": refused, "status": 403})
                continue
            call = (item.user_id, item.action.call_id or "")
            if call[1] and call in seen:
                copy = Verdict.blocked(
                    item.action.tool,
                    call_id_in_batch(call[1]),
                    code=Code.TOOL_CALL_ID_REUSED,
                    suggested_next_step=next_step(Code.TOOL_CALL_ID_REUSED),
                )
                items.append({"verdict": copy.to_dict()})
                continue
            seen.add(call)
            items.append(item)

        async def one(item: CheckInput | dict[str, Any]) -> dict[str, Any]:
            if isinstance(item, dict):
                return item
            status, verdict = await self.judged(who, item, request, wait=True)
            asker = token_hash(_bearer(request))
            return {"verdict": (await self.questioned(who, item, status, verdict, asker))[1]}

        return JSONResponse({"results": list(await asyncio.gather(*(one(i) for i in items)))})

    async def answered(self, tenant: str, item: CheckInput) -> dict[str, Any] | None:
        """The user's decided verdict on this very call (same user, call id and arguments), once, when they answered
        its question and wrote nothing since (:func:`~validator.state.questions.replayed`); else None."""
        call_id = item.action.call_id
        if not call_id or call_id.startswith(MINTED_CALL_ID):  # a call this service named now was never asked
            return None
        messages = item.transcript.messages

        def read(store: Store) -> Any:
            return questions.replayed(
                store, store, item.user_id, call_id, item.action.args, messages, lambda m: is_users(m, item.user_id)
            )

        try:
            found = await self.stored(tenant, read)
        except HTTPException:  # a store that cannot answer: the check itself fails closed, saying so
            return None
        return dict(found) if found is not None else None

    async def questioned(
        self, tenant: str, item: CheckInput, status: int, verdict: dict[str, Any], asker: str = ""
    ) -> tuple[int, dict[str, Any]]:
        """An ``ask_user`` verdict with the question it puts kept in the tenant's store, and its id added; a store
        that cannot keep it turns the question into a refusal (a question no one can answer asks nothing).
        ``asker``: the SHA-256 of the token that checked (it may read the question's status)."""
        if status != 200 or verdict.get("decision") != Decision.ASK_USER.value:
            return status, verdict
        asked = Verdict.from_dict(verdict)
        check = check_input_data(item.transcript, item.action, item.user_id)
        ttl = timedelta(seconds=self.config.question_seconds)
        size = len(dumps(check)) + len(dumps(verdict))  # what its record holds for as long as it waits
        quota = self.config.question_bytes

        def keep(store: Store) -> str | int:
            held = store.hold(size, quota, datetime.now(UTC), ttl)
            if held is not None:  # the tenant's questions hold its whole quota: this one is not kept
                return held
            return questions.ask(
                store,
                check,
                asked,
                user_id=item.user_id,
                call_id=item.action.call_id,
                args=item.action.args,
                ttl=ttl,
                asker=asker,
            )

        try:
            question_id = await self.stored(tenant, keep)
        except HTTPException as exc:
            return 503, _refusal(item.action.tool, texts.question_not_kept(str(exc.detail)))
        if isinstance(question_id, int):
            why = texts.questions_full(question_id, quota, size)
            return 429, Verdict.blocked(item.action.tool, why, code=Code.SERVICE_UNAVAILABLE).to_dict()
        return 200, {**verdict, "question_id": question_id}

    async def answer(self, request: Request) -> JSONResponse:
        """Record the user's answer to a question the service asked: ``{"question_id": …, "answer": <decision>}``
        (LangChain's shapes: approve, with ``remember``; edit; reject; read strictly). The question is the
        service's own record (the check it asked about and the verdict that asked), answered once: an unknown,
        expired or other tenant's id is a 404, a second answer a 409, and a token that may check can never
        answer (an agent must not approve its own questions). An edit is validated as a new call and its
        verdict closes the question. This route never checks a call nobody asked the user about."""
        identity = await self.identity(request, "answer")
        who = identity.tenant
        try:
            data = strict_json(await self.body(request))
            if isinstance(data, dict) and "check" in data:
                raise InputError([FieldProblem("check", ANSWER_BY_ID)])
            if not isinstance(data, dict) or set(data) != {"question_id", "answer"}:
                raise InputError(
                    [FieldProblem("", 'expected {"question_id": <the ask_user verdict\'s id>, "answer": …}')]
                )
            question_id = data["question_id"]
            if not isinstance(question_id, str) or not questions.QUESTION_ID.fullmatch(question_id):
                raise InputError([FieldProblem("question_id", "is not a question id (q_ and 32 characters)")])
        except InputError as exc:
            return _bad_input(exc)
        question = await self.stored(who, lambda store: questions.pending(store, question_id))
        if question is None or not _answers_for(identity, question):
            return _error(404, "question_not_found", QUESTION_NOT_FOUND)
        try:
            item = self.parsed(who, dict(question.check))
            review = read_review(data["answer"], call_id=question.call_id or "", tool=question.tool)
        except InputError as exc:
            return _bad_input(exc)
        if review.remember and review.remember.get("quote") and "grant" not in identity.scopes:
            return _error(403, "remember_too_wide", texts.REMEMBER_TOO_WIDE)
        ttl = timedelta(seconds=self.config.question_seconds)
        if not await self.stored(who, lambda store: questions.close(store, question_id, ttl)):
            return _error(409, "question_answered", "this question was answered already: each is answered once")
        checker, _ = self.validator_of(who)
        try:
            decided = await checker.aanswer(
                Verdict.from_dict(dict(question.verdict)),
                review.approved,
                review.reason,
                messages=item.transcript,
                action=item.action,
                user_id=item.user_id,
                remember=review.remember,
                edit=review.edited_args,
            )
        except Exception as exc:  # the service's own glue failing: nothing runs
            log.exception("answer failed for tenant %s", who)
            return JSONResponse(_refusal(question.tool, texts.answer_not_recorded(type(exc).__name__)), 503)
        self.verdicts.labels(decided.code.value).inc()
        edited = review.edited_args is not None
        try:
            await self.stored(who, lambda store: questions.decided(store, question, decided, edited=edited))
        except HTTPException:  # the answer is recorded; only its status for the agent is lost
            log.warning("the outcome of question %s was not kept for its status", question_id)
        return JSONResponse(decided.to_dict())

    async def question(self, request: Request, question_id: str) -> JSONResponse:
        """What a person answering a question is shown: the tool, the arguments, the reason code and text."""
        identity = await self.identity(request, "answer")
        bad = _bad_id("question_id", question_id, questions.QUESTION_ID)
        if bad is not None:
            return bad
        found = await self.stored(identity.tenant, lambda store: questions.pending(store, question_id))
        if found is None or not _answers_for(identity, found):
            return _error(404, "question_not_found", QUESTION_NOT_FOUND)
        answered = await self.stored(identity.tenant, lambda store: questions.outcome(store, question_id))
        return JSONResponse({**found.shown(), "status": questions.status(found, answered)["status"]})

    async def question_status(self, request: Request, question_id: str) -> JSONResponse:
        """What the agent may learn of the question its own check put: pending, approved, rejected or edited, and the
        decided verdict (scope ``check``; another token's question is a 404, as an unknown or expired one is)."""
        identity = await self.identity(request, "check")
        bad = _bad_id("question_id", question_id, questions.QUESTION_ID)
        if bad is not None:
            return bad
        found = await self.stored(identity.tenant, lambda store: questions.pending(store, question_id))
        if found is None or found.asker != token_hash(_bearer(request)):
            return _error(404, "question_not_found", QUESTION_NOT_FOUND)
        answered = await self.stored(identity.tenant, lambda store: questions.outcome(store, question_id))
        return JSONResponse(questions.status(found, answered))

    async def grant(self, request: Request) -> JSONResponse:
        """Grant a standing authorization (the CLI's ``auth grant``)."""
        who = await self.tenant(request, "grant")
        try:
            auth = _authorization(strict_json(await self.body(request)))
        except InputError as exc:
            return _bad_input(exc)
        except (ValueError, TypeError, ValidatorError) as exc:
            return _error(400, "invalid_input", str(exc))
        await self.stored(who, lambda store: store.put(auth))
        return JSONResponse(auth.to_dict(), status_code=201)

    async def _by_id(
        self, request: Request, scope: str, id_of: tuple[str, str | None, re.Pattern[str]], read: Callable[[Store], T]
    ) -> T | JSONResponse:
        """``read`` on the tenant's store, once the id the route names (``(field, value, pattern)``; a value of
        None is absent) is one the route accepts; else that id's 400."""
        who = await self.tenant(request, scope)
        field, value, pattern = id_of
        bad = None if value is None else _bad_id(field, value, pattern)
        return bad if bad is not None else await self.stored(who, read)

    async def authorizations(self, request: Request, user_id: str) -> JSONResponse:
        """A user's standing authorizations (the CLI's ``auth list``)."""
        found = await self._by_id(request, "grant", ("user_id", user_id, USER_ID), lambda store: store.list(user_id))
        return found if isinstance(found, JSONResponse) else JSONResponse([a.to_dict() for a in found])

    async def revoke(self, request: Request, auth_id: str) -> JSONResponse:
        """Revoke a standing authorization now (the CLI's ``auth revoke``)."""

        def revoked(store: Store) -> StandingAuthorization | None:
            return None if store.get(auth_id) is None else store.revoke(auth_id, datetime.now(UTC))

        done = await self._by_id(request, "grant", ("auth_id", auth_id, AUTH_ID), revoked)
        if isinstance(done, JSONResponse):
            return done
        return _error(404, "not_found") if done is None else JSONResponse(done.to_dict())

    async def audit(self, request: Request, after: str | None = None, count: int = 100) -> JSONResponse:
        """Audit records after ``after`` (an entry id), oldest first (the CLI's ``audit export``)."""
        n = max(1, min(count, 1000))
        entries = await self._by_id(
            request, "admin", ("after", after, ENTRY_ID), lambda store: store.audit_after(after, n)
        )
        return (
            entries if isinstance(entries, JSONResponse) else JSONResponse([{"entry_id": i, **e} for i, e in entries])
        )

    async def audit_entry(self, request: Request, entry_id: str) -> JSONResponse:
        """One audit record (the CLI's ``audit show``)."""
        entry = await self._by_id(
            request, "admin", ("entry_id", entry_id, ENTRY_ID), lambda store: store.audit_get(entry_id)
        )
        if isinstance(entry, JSONResponse):
            return entry
        return _error(404, "not_found") if entry is None else JSONResponse(entry)

    async def healthz(self) -> dict[str, bool]:
        """The process answers."""
        return {"ok": True}

    async def readyz(self, request: Request) -> JSONResponse:
        """The store answers (a load balancer sends nothing here until it does): ``{"ok"}`` and the status to
        anyone; the store's details (its address, version, why it is not ready) and the caller's own tenant's audit
        count only to an ``admin`` token."""
        try:
            if self.probe is None:  # one store for the probe, kept: a new one a call would leak connections
                self.probe = _tenant_store(self.config, "readyz")
            health = await self.probe.ahealth()
        except Exception as exc:
            health = {"ok": False, "error": type(exc).__name__}
        status = 200 if health.get("ok") else 503
        who = None
        if _bearer(request):
            try:
                who = await self.identity(request, "admin")
            except (HTTPException, _Unavailable):
                who = None
        if who is None:
            return JSONResponse({"ok": bool(health.get("ok"))}, status_code=status)
        if health.get("ok") and "audit_records" in health:  # what /v1/audit lists, of the caller's tenant
            _, store = self.validator_of(who.tenant)
            health["audit_records"] = await asyncio.to_thread(store.audit_length)
        return JSONResponse(health, status_code=status)

    async def metrics(self, request: Request) -> Response:
        """Prometheus metrics of this process."""
        await self.tenant(request, "admin")
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

    async def observe(self, request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        """Count, time and log every request as one JSON line; never a stack trace on the wire."""
        started = time.perf_counter()
        route = request.url.path
        try:
            response = await call_next(request)
        except Exception as exc:
            log.exception("request failed: %s %s", request.method, route)
            response = _error(500, "internal_error", type(exc).__name__)
        elapsed = time.perf_counter() - started
        matched = request.scope.get("route")  # the route's template, never the raw path: a label set that stays small
        template = getattr(matched, "path", None) or "unmatched"
        self.requests.labels(template, str(response.status_code)).inc()
        self.latency.labels(template).observe(elapsed)
        line = {"event": "request", "method": request.method, "path": route, "status": response.status_code}
        log.info(dumps({**line, "ms": round(elapsed * 1000, 3)}))
        return response

    async def close(self) -> None:
        for store in [*(store for _, store in self.state.checkers.values()), *([self.probe] if self.probe else [])]:
            await asyncio.to_thread(store.close)
            await store.aclose()
        await self.state.tenants.aclose()


def create_app(config: ServiceConfig | None = None, *, tenants: Tenants | None = None) -> FastAPI:
    """The service; ``tenants`` holds its tokens (default: beside the store, see :func:`tenants_for`)."""
    config = config or ServiceConfig()
    service = _Service(config, tenants if tenants is not None else tenants_for(config.store_url))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(check_persistence, config)
        yield
        await service.close()  # in-flight checks have finished (uvicorn's graceful shutdown) and recorded

    app = FastAPI(title="action validator", version="1", docs_url=None, redoc_url=None, lifespan=lifespan)
    app.state.service = service
    app.middleware("http")(service.observe)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        said = str(exc.detail)  # a sentence: the problem's detail (and, as before, its error)
        code = HTTPStatus(exc.status_code).phrase.lower().replace(" ", "_")
        body = {"error": said, "detail": said, "code": code}
        return _problem(exc.status_code, body, headers=dict(exc.headers or {}))

    @app.exception_handler(_Unavailable)
    async def unavailable(request: Request, exc: _Unavailable) -> JSONResponse:
        return JSONResponse(_refusal("", exc.why), status_code=503, headers={"Retry-After": "1"})

    check_input = schema("check-input")
    verdict = {"content": {"application/json": {"schema": schema("verdict")}}}
    problem = {"content": {PROBLEM: {"schema": PROBLEM_SCHEMA}}}
    refusals: dict[int | str, dict[str, Any]] = {
        400: problem,
        401: problem,
        403: problem,
        413: problem,
        415: problem,
        429: problem,
        503: {"description": "a blocking verdict (a check route), else a problem"},
    }
    batch = {"type": "array", "items": check_input, "minItems": 1, "maxItems": config.max_batch}
    batch_schema = {
        "type": "object",
        "required": ["checks"],
        "additionalProperties": False,
        "properties": {"checks": batch},
    }

    def body(content: dict[str, Any]) -> dict[str, Any]:
        return {"requestBody": {"content": {"application/json": {"schema": content}}, "required": True}}

    route = app.add_api_route
    held_headers = [
        {"name": name, "in": "header", "required": False, "schema": {"type": "string"}, "description": text}
        for name, text in (
            (CONVERSATION, "The conversation this check belongs to; the service holds it for the next check."),
            (CONVERSATION_AFTER, "The digest of the held messages the body's messages follow (409 when not held)."),
        )
    ]
    route(
        "/v1/check",
        service.check,
        methods=["POST"],
        openapi_extra={**body(check_input), "parameters": held_headers},
        responses={200: verdict, 409: {"description": CONVERSATION_NOT_HELD}, **refusals},
    )
    route(
        "/v1/check:batch", service.check_batch, methods=["POST"], openapi_extra=body(batch_schema), responses=refusals
    )
    route("/v1/answer", service.answer, methods=["POST"], responses={200: verdict, 404: {}, 409: {}, **refusals})
    route("/v1/questions/{question_id}", service.question, methods=["GET"], responses={404: {}, **refusals})
    route(
        "/v1/questions/{question_id}/status",
        service.question_status,
        methods=["GET"],
        responses={404: {}, **refusals},
    )
    route("/v1/authorizations", service.grant, methods=["POST"], status_code=201, responses=refusals)
    route("/v1/authorizations", service.authorizations, methods=["GET"], responses=refusals)
    route("/v1/authorizations/{auth_id}/revoke", service.revoke, methods=["POST"], responses={404: {}, **refusals})
    route("/v1/audit", service.audit, methods=["GET"], responses=refusals)
    route("/v1/audit/{entry_id}", service.audit_entry, methods=["GET"], responses={404: {}, **refusals})
    route("/healthz", service.healthz, methods=["GET"])
    route("/readyz", service.readyz, methods=["GET"], responses={503: {}})
    route("/metrics", service.metrics, methods=["GET"], responses={401: {}, 403: {}})
    return app


ENTRY_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")
"""An audit entry id: milliseconds and a sequence number (a Redis stream id)."""
AUTH_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")
"""A standing authorization id (``auth_`` and 16 hex digits when the validator makes one)."""
USER_ID = re.compile(r"[^\x00-\x1f\x7f]{1,256}")
"""A user id: 1 to 256 characters, no control characters."""
_ARG_PATH = re.compile(r"[A-Za-z_$][\w$-]*(?:\[[0-9]{1,6}\])*(?:\.[A-Za-z_$][\w$-]*(?:\[[0-9]{1,6}\])*)*")
"""An argument path a grant's ``where`` names (``recipient``, ``message.to[0]``)."""


_STREAM_PART = 2**64 - 1
"""The largest part of a Redis stream id."""


def _bad_id(field: str, value: str, pattern: re.Pattern[str]) -> JSONResponse | None:
    """The 400 of an id its route does not accept (never spliced into a store key), else None."""
    if pattern.fullmatch(value) and (
        pattern is not ENTRY_ID or all(int(part) <= _STREAM_PART for part in value.split("-"))
    ):
        return None
    shown = value[:40].encode("unicode_escape").decode("ascii")
    problem = f"{shown!r} is not a valid {field} (expected {pattern.pattern})"
    return JSONResponse(InputError([FieldProblem(field, problem)]).to_dict(), status_code=400)


VOLATILE = (
    "the Redis at {url} keeps nothing across a restart (appendonly no, no save points): a restart would wipe "
    "the tokens, the audit and the request ledger (a payment spent before it would be approved again). Turn "
    "on persistence (appendonly yes), or start with --allow-volatile-store (ServiceConfig.allow_volatile_store) "
    "for a throwaway service"
)


EVICTING = (
    "the Redis at {url} may drop keys to make room (maxmemory-policy {policy}): an evicted spent request lets the "
    "same payment be approved again, an evicted token table refuses every call. Set maxmemory-policy noeviction "
    "(a full Redis then refuses writes, and nothing is approved), or start with --allow-volatile-store for a "
    "throwaway service"
)


def check_persistence(config: ServiceConfig) -> None:
    """Refuse (:class:`SetupError`) to serve on a Redis that keeps nothing across a restart, or that may evict a
    key (a ``maxmemory-policy`` other than ``noeviction``), unless allowed (``allow_volatile_store``). A Redis that
    cannot be reached yet is let be: ``/readyz`` says so (and re-checks the eviction policy), and nothing is
    approved meanwhile."""
    if config.allow_volatile_store or not config.store_url.startswith(("redis://", "rediss://", "unix://")):
        return
    store = _tenant_store(config, "startup")
    try:
        kept = getattr(store, "persistence", lambda: True)()
        policy = getattr(store, "eviction", lambda: "noeviction")()
    except StoreError as exc:
        log.warning("could not check the store's persistence at start: %s", exc)
        return
    finally:
        store.close()
    url = redacted(config.store_url)
    if kept is not True:
        raise SetupError(VOLATILE.format(url=url) + ("" if kept is False else " (it cannot say)"))
    if policy != "noeviction":
        raise SetupError(EVICTING.format(url=url, policy=policy or "unknown: it cannot say"))


MINTED_CALL_ID = "service-"
"""How the ids the service gives a call that came without one begin."""
TENANT_RETRY_SECONDS = 1
"""What a 429 of a tenant whose check slots are all held asks the caller to wait."""


ANSWER_BY_ID = (
    'an answer names the question it answers: {"question_id": <the id the ask_user verdict carries>, "answer": '
    "…}; the service no longer takes the check inline (it answered questions nobody had asked)"
)
QUESTION_NOT_FOUND = "no question waits under this id for this tenant: it is unknown, expired, or another tenant's"


POLICY_REFUSED = (
    "this service applies its own policy; a check input may carry one only for a tenant the operator allows "
    "(validator serve --allow-request-policy TENANT)"
)


def strict_json(raw: bytes) -> Any:
    """A route's body read by the check input's strict rules (:func:`validator.inputs.strictjson.read`):
    duplicate keys, ``NaN``, lone surrogates, big integers and over-deep nesting are a 400, never a 500."""
    return strictjson.read(raw, max_depth=DEFAULT_LIMITS.max_depth + 2)


def _bearer(request: Request) -> str:
    return request.headers.get("authorization", "").partition(" ")[2].strip()


def _answers_for(identity: Identity, question: questions.Question) -> bool:
    """Whether the token may see and answer ``question``: any of its tenant's, or only its users' (a token bound
    to users; another user's question is "not found" to it, as another tenant's is)."""
    return not identity.users or question.user_id in identity.users


def _authorization(data: Any) -> StandingAuthorization:
    if not isinstance(data, dict):
        raise TypeError("expected an object")
    allowed = {"user_id", "tool", "where", "quote", "expires_in_days", "risk"}
    if set(data) - allowed:
        raise ValueError(f"unknown fields: {sorted(set(data) - allowed)}")
    days = data.get("expires_in_days")
    now = datetime.now(UTC)
    where = data.get("where", {})
    if "where" in data and (not isinstance(where, dict) or not where):
        raise TypeError("where must be a non-empty object mapping argument paths to patterns (or be left out)")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in where.items()):
        raise TypeError("where must map argument paths to patterns")
    for path in where:
        if not _ARG_PATH.fullmatch(path):
            raise ValueError(f"where: {path[:40]!r} is not an argument path (names and [n] indices, dotted)")
    user = data.get("user_id")
    if isinstance(user, str) and (len(user) > 256 or not user.isprintable()):
        raise ValueError("user_id must be 1 to 256 printable characters")
    for path, pattern in where.items():
        if not path.strip() or not pattern or (pattern.lstrip().startswith(("<", ">", "==")) and not is_bound(pattern)):
            raise ValueError(f"where.{path}: {pattern!r} is not a glob or a bound such as <=500")
    for name in ("user_id", "tool", "quote"):
        if not isinstance(data.get(name), str) or not data[name].strip():
            raise TypeError(f"{name} must be a non-empty string")
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 36500):
        raise ValueError("expires_in_days must be a whole number of days from 1 to 36500")
    risk = data.get("risk", "general")
    if risk not in ("general", "dangerous"):
        raise ValueError("risk must be general or dangerous")
    return StandingAuthorization(
        id=new_authorization_id(),
        user_id=data["user_id"],
        tool=data["tool"],
        quote=data["quote"],
        created=now,
        where=where,
        expires=now + timedelta(days=days) if days else None,
        risk=risk,
    )
