"""The Anthropic judge: the validator as a Claude call that shares the agent's prompt cache.

Typical usage::

    from validator import Validator
    from validator.judges.anthropic import AnthropicJudge, prepare_tools

    tools = prepare_tools(my_tools)                       # once, before the agent's first turn
    request = {"model": ..., "system": ..., "tools": tools, "messages": history, ...}
    response = client.messages.create(**request)          # the agent's own call
    for call in tool_uses(response):
        verdict = Validator(policy, judge=AnthropicJudge()).validate(
            None, {"tool": call.name, "args": call.input}, agent_request=request)

The judge sends the agent's request with the validator's turn appended (see :mod:`.requests`),
reads the one ``validate_action`` call from the response and returns it as the verdict. When the
agent's request cannot carry that turn (extended thinking, tools not prepared, no agent request at
all) it sends a standalone request instead, and the verdict's ``usage.cache`` says which, and why.
A standalone request caches its transcript only when :class:`.requests.StandaloneCaching` expects
the entry to be read back by the next check (close checks of one conversation); otherwise it has
no breakpoint and costs exactly an uncached request.

SDK settings are deliberate: ``max_retries=0`` (the engine's single retry is the only retry, so a
failing validator costs at most two calls and fails closed quickly) and a 30-second timeout per
call. ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` are read by the SDK as usual.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar
from urllib.parse import urlsplit

from validator.extras import missing_extra

try:
    import anthropic
except ImportError as exc:
    raise missing_extra("anthropic", "validator.judges.anthropic.judge", exc) from None

from validator.exceptions import (
    JudgeError,
    JudgeOutputError,
    JudgeRequestRejected,
    JudgeTimeout,
    JudgeTransportError,
    SetupError,
)
from validator.judges.anthropic.pricing import PriceTable
from validator.judges.anthropic.requests import (
    NotShareable,
    StandaloneCaching,
    blind_request,
    shared_request,
    standalone_request,
)
from validator.judges.anthropic.tools import DEFAULT_SEARCH_TOOL
from validator.judges.base import Judge, JudgeOutput, JudgeRequest
from validator.judges.blind import View, check_view
from validator.judges.model import DEFAULT_VALIDATOR_TOOL, guard_calls, parse_verdict
from validator.telemetry import conventions as names
from validator.telemetry.tracing import ModelSpan, model_call
from validator.verdict import Usage

__all__ = ["AnthropicJudge", "map_sdk_error"]

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_TOKENS = 1024


def map_sdk_error(judge: str, exc: BaseException, timeout: float = DEFAULT_TIMEOUT) -> JudgeError:
    """The most specific of our judge errors for an exception the anthropic SDK raised."""
    if isinstance(exc, anthropic.APITimeoutError):
        return JudgeTimeout(judge, timeout)
    if isinstance(exc, anthropic.APIConnectionError):
        return JudgeTransportError(judge, f"connection failed: {exc}")
    if isinstance(exc, anthropic.APIResponseValidationError):
        return JudgeOutputError(judge, f"response does not match the API's schema: {exc}")
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        if status in (408, 429) or status >= 500:  # timeouts, rate limits, 5xx, 529 overloaded
            return JudgeTransportError(judge, _message(exc), status)
        return JudgeRequestRejected(judge, _message(exc), status)
    if isinstance(exc, anthropic.CredentialsError | anthropic.WorkloadIdentityError):
        return JudgeRequestRejected(judge, f"credentials: {exc}")
    if isinstance(exc, anthropic.RetryableError):
        return JudgeTransportError(judge, str(exc))
    return JudgeError(judge, f"{type(exc).__name__}: {exc}")


def _message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return f"{error.get('type', 'error')}: {error['message']}"
    return str(exc.message)


@cache
def _create_params() -> frozenset[str]:
    return frozenset(inspect.signature(anthropic.resources.Messages.create).parameters) - {"self"}


@dataclass(frozen=True, slots=True)
class _Plan:
    body: dict[str, Any]
    headers: dict[str, str]
    cache: str
    view: View = "shared_prefix"


class AnthropicJudge(Judge):
    """Validator calls on Claude, sharing the agent's prompt cache when it can; see the module docstring."""

    name: ClassVar[str] = "anthropic"

    def __init__(
        self,
        model: str | None = None,
        *,
        client: anthropic.Anthropic | None = None,
        async_client: anthropic.AsyncAnthropic | None = None,
        validator_name: str = DEFAULT_VALIDATOR_TOOL,
        search_name: str = DEFAULT_SEARCH_TOOL,
        quality: bool = True,
        share_prefix: bool = True,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = DEFAULT_TIMEOUT,
        prices: PriceTable | None = None,
        prompt: str = "validator",
        standalone_caching: StandaloneCaching | None = None,
        check_model: bool = True,
        view: View | None = None,
        blind_prompt: str = "validator_blind",
    ) -> None:
        """``model`` is used for standalone requests; a shared request always uses the agent's model
        (the cache is per model). ``standalone_caching`` decides when a standalone request caches
        its transcript (default: :class:`StandaloneCaching` on the monotonic clock).

        Raises:
            SetupError: with no ``client``, no Anthropic credentials in the environment or a malformed
                ``ANTHROPIC_BASE_URL``, or a ``model`` the price table does not know
                (``check_model=False`` allows one; with your own ``client``, any name goes).
        """
        self.model = model
        self._client = client
        self._async_client = async_client
        self.validator_name = validator_name
        self.search_name = search_name
        self.quality = quality
        self.share_prefix = share_prefix
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.prices = prices or PriceTable()
        self.prompt = prompt
        """The validator prompt: a file of ``prompts/`` (``validator``, ``validator_v2``, ...)."""
        self.standalone_caching = standalone_caching or StandaloneCaching()
        check_view(view)
        self.view = view
        """What the model reads: None (the default) shares the agent's own request where one is given and
        ``share_prefix`` allows it, and is ``blind`` everywhere else; ``blind`` never shares (the user's words,
        the call and code's facts: :mod:`validator.judges.blind`); ``shared_prefix`` shares where it can and
        sends the whole transcript as data where it cannot."""
        self.blind_prompt = blind_prompt
        """The prompt of the blind view (a file of ``prompts/``)."""
        from_environment = client is None and async_client is None  # the SDK reads its set-up from there
        if from_environment:
            _check_environment()
        if from_environment and model is not None and check_model and self.prices.price(model) is None:
            raise SetupError(
                f"unknown model {model!r}: not one of {', '.join(sorted(self.prices.models()))}; pass "
                "check_model=False for a model this library does not know yet (its cost is then None)"
            )

    @property
    def label(self) -> str:
        base = f"anthropic:{self.model}" if self.model else "anthropic"
        return base if self.prompt == "validator" else f"{base}/{self.prompt}"

    # -- planning (no I/O; a standalone plan is recorded by ``standalone_caching``) -------------

    def plan(self, request: JudgeRequest) -> _Plan:
        """The request this judge sends for ``request``, and how it uses the cache."""
        agent = request.agent_request
        if agent is not None and self.share_prefix and self.view != "blind":
            try:
                body = shared_request(
                    agent,
                    request,
                    validator_name=self.validator_name,
                    search_name=self.search_name,
                    quality=self.quality,
                    prompt=self.prompt,
                )
            except NotShareable as exc:
                return self._alone(request, f"not shared ({exc.reason})")
            if "thinking" not in body and isinstance(body.get("max_tokens"), int):
                # max_tokens does not touch the cache key; a verdict needs little, and a huge value
                # makes the SDK demand streaming. With thinking on, its budget must stay below it.
                body["max_tokens"] = min(body["max_tokens"], self.max_tokens)
            headers = {}
            betas = body.pop("betas", None)
            if betas:
                headers["anthropic-beta"] = ",".join(betas)
            return _Plan(body, headers, "shared")
        if agent is None:
            why = "standalone"
        else:
            why = "not shared (the blind view)" if self.view == "blind" else "not shared (prefix sharing is off)"
        return self._alone(request, why)

    def _alone(self, request: JudgeRequest, note: str) -> _Plan:
        """A request of the judge's own: the blind view, or the transcript as data (``view="shared_prefix"``)."""
        model = self.model or (request.agent_request or {}).get("model")
        if not isinstance(model, str) or not model:
            raise JudgeRequestRejected(self.label, "no model: pass AnthropicJudge(model=...) or an agent request")
        blind = self.view != "shared_prefix"
        build, prompt = (blind_request, self.blind_prompt) if blind else (standalone_request, self.prompt)
        body = build(
            request,
            model=model,
            max_tokens=self.max_tokens,
            validator_name=self.validator_name,
            quality=self.quality,
            prompt=prompt,
            caching=self.standalone_caching,
        )
        if blind:
            note = "blind" if note == "standalone" else f"{note}; blind view"
        return _Plan(body, {}, note, "blind" if blind else "shared_prefix")

    def _kwargs(self, plan: _Plan) -> dict[str, Any]:
        known = _create_params()
        kwargs = {k: v for k, v in plan.body.items() if k in known}
        extra = {k: v for k, v in plan.body.items() if k not in known}
        if extra:
            kwargs["extra_body"] = extra
        if plan.headers:
            kwargs["extra_headers"] = plan.headers
        kwargs["timeout"] = self.timeout  # explicit: never the SDK's long-request guess
        return kwargs

    def _read(self, message: anthropic.types.Message, plan: _Plan) -> JudgeOutput:
        raw = message.model_dump(mode="json", exclude_none=True, warnings=False)  # unknown block types included
        usage = self._usage(raw, plan)
        calls: list[tuple[str, Any]] = []
        for block in raw.get("content", []):
            kind = block.get("type") if isinstance(block, Mapping) else None
            if kind == "tool_use":
                calls.append((str(block.get("name")), block.get("input")))
            elif kind not in ("text", "thinking", "redacted_thinking"):
                # anything a server ran or returned (server_tool_use, mcp_tool_use, their results) is not a verdict
                name = block.get("name") if isinstance(block, Mapping) else None
                calls.append((f"{kind}:{name}" if name else str(kind), None))
        try:
            data = guard_calls(self.label, calls, self.validator_name, stop_reason=raw.get("stop_reason"))
            return parse_verdict(self.label, data, usage, view=plan.view)
        except JudgeError as exc:
            exc.usage = usage  # billed even though unusable: the engine adds it to the verdict
            raise

    def _usage(self, raw: Mapping[str, Any], plan: _Plan) -> Usage:
        usage = raw.get("usage") or {}
        model = str(raw.get("model") or plan.body.get("model"))
        return Usage(
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_read_input_tokens=int(usage.get("cache_read_input_tokens") or 0),
            cache_creation_input_tokens=int(usage.get("cache_creation_input_tokens") or 0),
            cost_usd=self.prices.cost(model, usage),
            model=model,
            cache=plan.cache,
        )

    def _thinking_fallback(self, request: JudgeRequest, plan: _Plan, exc: JudgeError) -> _Plan | None:
        """A shared request the API refused over thinking blocks is sent again standalone, once."""
        if plan.cache == "shared" and isinstance(exc, JudgeRequestRejected) and "thinking" in exc.detail.lower():
            return self._alone(request, f"not shared (the API refused the fabricated turn: {exc.detail})")
        return None

    # -- the calls: the only I/O ----------------------------------------------------------------

    def _sync_client(self) -> anthropic.Anthropic:
        if self._client is None:
            self._client = anthropic.Anthropic(max_retries=0, timeout=self.timeout)
        return self._client

    def _async(self) -> anthropic.AsyncAnthropic:
        if self._async_client is None:
            self._async_client = anthropic.AsyncAnthropic(max_retries=0, timeout=self.timeout)
        return self._async_client

    def _message(self, result: object) -> anthropic.types.Message:
        if not isinstance(result, anthropic.types.Message):
            raise JudgeOutputError(self.label, f"expected one Message, got {type(result).__name__}")
        return result

    def _call(
        self, plan: _Plan, request: JudgeRequest, client: anthropic.Anthropic | anthropic.AsyncAnthropic
    ) -> AbstractContextManager[ModelSpan]:
        """The call's span (:mod:`validator.telemetry`), a child of the check's: model, server, then the response."""
        max_tokens = plan.body.get("max_tokens")
        url = client.base_url
        return model_call(
            request.telemetry,
            names.ANTHROPIC,
            str(plan.body.get("model") or "") or None,
            server=(url.host, url.port),
            max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        )

    def _traced(self, span: ModelSpan, message: anthropic.types.Message, plan: _Plan) -> anthropic.types.Message:
        if span.recording:  # the usage is worked out again by _read; only for a span someone keeps
            usage = self._usage({"usage": message.usage.model_dump(mode="json"), "model": message.model}, plan)
            span.response(response_id=message.id, model=message.model, finish_reason=message.stop_reason, usage=usage)
        return message

    def _send(self, plan: _Plan, request: JudgeRequest) -> anthropic.types.Message:
        client = self._sync_client()
        with self._call(plan, request, client) as span:
            try:
                result = client.messages.create(**self._kwargs(plan))
            except anthropic.AnthropicError as exc:
                raise map_sdk_error(self.label, exc, self.timeout) from exc
            return self._traced(span, self._message(result), plan)

    async def _asend(self, plan: _Plan, request: JudgeRequest) -> anthropic.types.Message:
        client = self._async()
        with self._call(plan, request, client) as span:
            try:
                result = await client.messages.create(**self._kwargs(plan))
            except anthropic.AnthropicError as exc:
                raise map_sdk_error(self.label, exc, self.timeout) from exc
            return self._traced(span, self._message(result), plan)

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        plan = self.plan(request)
        try:
            message = self._send(plan, request)
        except JudgeError as exc:
            fallback = self._thinking_fallback(request, plan, exc)
            if fallback is None:
                raise
            plan, message = fallback, self._send(fallback, request)
        return self._read(message, plan)

    async def ajudge(self, request: JudgeRequest) -> JudgeOutput:
        plan = self.plan(request)
        try:
            message = await self._asend(plan, request)
        except JudgeError as exc:
            fallback = self._thinking_fallback(request, plan, exc)
            if fallback is None:
                raise
            plan, message = fallback, await self._asend(fallback, request)
        return self._read(message, plan)


def _check_environment() -> None:
    """Raise :class:`SetupError` when the SDK could not reach the API as the environment sets it up."""
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise SetupError(
            "no Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or pass "
            "client=anthropic.Anthropic(...) and async_client=anthropic.AsyncAnthropic(...)"
        )
    base = os.environ.get("ANTHROPIC_BASE_URL")
    if base:
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise SetupError(f"ANTHROPIC_BASE_URL {base!r} is not an http(s) URL with a host")
