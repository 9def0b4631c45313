"""OpenTelemetry spans and metrics of the checks, through ``opentelemetry-api`` only: the application brings the
SDK, its exporters and its sampler, and this library writes to the providers it is given (or to the global ones
the application set).

Key components:

- :class:`Telemetry`: where one validator's spans and metrics go (``tracer_provider``, ``meter_provider``; None:
  the global ones). ``ValidatorConfig(telemetry=...)``, ``ServiceConfig(telemetry=...)``,
  ``BlockRateMonitor(telemetry=...)`` and the service clients take one.
- :meth:`Telemetry.check`: a span per check, ``apply_guardrail action-validator``, following OpenTelemetry's GenAI
  guardrail conventions (:mod:`validator.telemetry.conventions` names the document and commit); the verdict's
  code is its result, with its decision, tool, judge and the policy's id and version, and one
  ``gen_ai.guardrail.result`` event each for the code and the decision.
- :meth:`Telemetry.model_call`: a model judge's call, a child ``chat {model}`` span (GenAI client conventions):
  models, response id, finish reason, token usage.
- :meth:`Telemetry.continued` and :meth:`Telemetry.inject`: the caller's W3C ``traceparent`` continued by the
  service, and sent by its clients.

Never in any attribute or event: the user's words, the arguments' values, the justification, a verdict's
reasoning, an exception's message (which may quote the input): a failure is named by its type only.

Cost when nothing listens: an application that never imported ``opentelemetry`` cannot have set a provider, so
a :class:`Telemetry` without providers does nothing at all there (``opentelemetry`` is not even imported); with an
SDK configured, a check costs one span.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from validator._types import VERSION
from validator.telemetry import conventions as names
from validator.verdict.codes import FAULTS

if TYPE_CHECKING:
    from opentelemetry.metrics import Meter, MeterProvider
    from opentelemetry.trace import Span, Tracer, TracerProvider

    from validator.policy import Policy
    from validator.verdict import Usage, Verdict

__all__ = ["CheckSpan", "ModelSpan", "Telemetry"]

_TRACE_API = "opentelemetry.trace"
_METRICS_API = "opentelemetry.metrics"


def _version() -> str:
    return VERSION


class CheckSpan:
    """One check's span: what the verdict says is set on it when the check ends (quiet when nothing listens)."""

    def __init__(
        self,
        span: Span | None = None,
        signals: tuple[type[BaseException], ...] = (),
        policy: Mapping[str, str] | None = None,
    ) -> None:
        self._span = span
        self._signals = signals
        self._policy = dict(policy or {})

    def done(self, verdict: Verdict, call_id: str | None = None) -> None:
        """The verdict's code as the guardrail's result, its decision, tool (and the host's id of the call, when it
        sent one) and judge; a fault is an error."""
        span = self._span
        if span is None or not span.is_recording():
            return
        code, decision = verdict.code.value, verdict.decision.value
        attributes: dict[str, Any] = {
            names.TOOL_NAME: verdict.tool,
            names.GUARDRAIL_RESULT_TYPE: names.RESULT_CODE,
            names.GUARDRAIL_RESULT_VALUE: code,
            names.DECISION: decision,
            names.CONFIDENCE: verdict.confidence,
            names.DECIDED_BY: verdict.decided_by,
            names.REUSED: verdict.reused,
        }
        if verdict.judge:
            attributes[names.JUDGE] = verdict.judge
        if call_id:
            attributes[names.TOOL_CALL_ID] = call_id
        span.set_attributes(attributes)
        if verdict.code in FAULTS:
            _failed(span, code)
        shared = {
            names.GUARDRAIL_COMPONENT_NAME: names.COMPONENT,
            names.GUARDRAIL_SOURCE: names.SOURCE,
            **self._policy,
        }
        for kind, value in ((names.RESULT_CODE, code), (names.RESULT_DECISION, decision)):
            event = {**shared, names.GUARDRAIL_RESULT_TYPE: kind, names.GUARDRAIL_RESULT_VALUE: value}
            span.add_event(names.RESULT_EVENT, event)

    def failed(self, exc: BaseException) -> None:
        """The check raised (bad input, or a host's control-flow signal, which is no error): its type, never its
        message (it may quote the input)."""
        if self._span is None or isinstance(exc, (*self._signals, GeneratorExit)):
            return
        _failed(self._span, type(exc).__qualname__)


class ModelSpan:
    """A model judge's call: what the response says of itself (quiet when nothing listens)."""

    def __init__(self, span: Span | None = None) -> None:
        self._span = span

    @property
    def recording(self) -> bool:
        """Whether anything keeps this span (else what the response says need not be worked out)."""
        return self._span is not None and self._span.is_recording()

    def response(
        self, *, response_id: str | None, model: str | None, finish_reason: str | None, usage: Usage | None
    ) -> None:
        span = self._span
        if span is None:
            return
        attributes: dict[str, Any] = {}
        if response_id:
            attributes[names.RESPONSE_ID] = response_id
        if model:
            attributes[names.RESPONSE_MODEL] = model
        if finish_reason:
            attributes[names.RESPONSE_FINISH_REASONS] = [finish_reason]
        if usage is not None:
            cached = usage.cache_read_input_tokens + usage.cache_creation_input_tokens
            attributes |= {
                names.USAGE_INPUT_TOKENS: usage.input_tokens + cached,
                names.USAGE_OUTPUT_TOKENS: usage.output_tokens,
                names.USAGE_CACHE_READ: usage.cache_read_input_tokens,
                names.USAGE_CACHE_CREATION: usage.cache_creation_input_tokens,
            }
        span.set_attributes(attributes)


def _failed(span: Span, kind: str) -> None:
    """``error.type`` and an error status, both named ``kind`` (a code or an exception's type, never a message)."""
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute(names.ERROR_TYPE, kind)
    span.set_status(Status(StatusCode.ERROR, kind))


class Telemetry:
    """Where one validator's spans and metrics go; see the module docstring.

    ``tracer_provider`` / ``meter_provider``: the application's providers (None: the global ones, which an
    application sets with ``opentelemetry.trace.set_tracer_provider``, or ``opentelemetry-instrument`` does).
    ``policy_id``: the name the operator gives the policy (``gen_ai.guardrail.policy.id``; default: the policy's
    version, a hash of its content, which is also ``gen_ai.guardrail.policy.version``). ``enabled=False``: none.
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        policy_id: str | None = None,
        enabled: bool = True,
    ) -> None:
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.policy_id = policy_id
        self.enabled = enabled
        self._tracer: Tracer | None = None
        self._meter: Meter | None = None

    def tracer(self) -> Tracer | None:
        """The tracer, or None when nothing can listen (disabled, or no provider given and OpenTelemetry never
        imported by this process, so none set)."""
        if self._tracer is None and self.enabled and (self.tracer_provider is not None or _TRACE_API in sys.modules):
            from opentelemetry import trace

            self._tracer = trace.get_tracer(names.INSTRUMENTATION, _version(), tracer_provider=self.tracer_provider)
        return self._tracer

    def meter(self) -> Meter | None:
        """The meter, or None when nothing can listen (as for :meth:`tracer`)."""
        if self._meter is None and self.enabled and (self.meter_provider is not None or _METRICS_API in sys.modules):
            from opentelemetry import metrics

            self._meter = metrics.get_meter(names.INSTRUMENTATION, _version(), meter_provider=self.meter_provider)
        return self._meter

    @contextmanager
    def check(
        self,
        policy: Policy | None = None,
        *,
        server: tuple[str, int | None] | None = None,
        signals: tuple[type[BaseException], ...] = (),
    ) -> Iterator[CheckSpan]:
        """A check's span, current while it runs: ``INTERNAL`` in this process, ``CLIENT`` to a service at
        ``server`` (``(host, port)``), under ``policy`` (its id and version; none for a client, whose service applies
        its own). ``signals``: a host's control-flow exceptions, which end it without error."""
        tracer = self.tracer()
        if tracer is None:
            yield CheckSpan()
            return
        from opentelemetry.trace import SpanKind

        attributes: dict[str, Any] = {  # no gen_ai.provider.name: it names a model's provider, and a check has none
            names.OPERATION_NAME: names.APPLY_GUARDRAIL,
            names.GUARDRAIL_COMPONENT_NAME: names.COMPONENT,
            **_server(server),
        }
        with tracer.start_as_current_span(
            f"{names.APPLY_GUARDRAIL} {names.COMPONENT}",
            kind=SpanKind.CLIENT if server else SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,  # its message may quote the input: failed() names the type only
            set_status_on_exception=False,
        ) as span:
            named: dict[str, str] = {}
            if policy is not None and span.is_recording():  # the policy's hash only for a span someone keeps
                version = policy.version
                named = {names.GUARDRAIL_POLICY_ID: self.policy_id or version, names.GUARDRAIL_POLICY_VERSION: version}
                span.set_attributes(named)
            handle = CheckSpan(span, signals, named)
            try:
                yield handle
            except BaseException as exc:
                handle.failed(exc)
                raise

    @contextmanager
    def model_call(
        self,
        provider: str,
        model: str | None,
        *,
        server: tuple[str, int | None] | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[ModelSpan]:
        """A model judge's call, a ``CLIENT`` span under the check's (GenAI client conventions); a failure is
        named by its type."""
        tracer = self.tracer()
        if tracer is None:
            yield ModelSpan()
            return
        from opentelemetry.trace import SpanKind

        attributes: dict[str, Any] = {names.OPERATION_NAME: names.CHAT, names.PROVIDER_NAME: provider}
        if model:
            attributes[names.REQUEST_MODEL] = model
        if max_tokens is not None:
            attributes[names.REQUEST_MAX_TOKENS] = max_tokens
        attributes |= _server(server)
        with tracer.start_as_current_span(
            f"{names.CHAT} {model}" if model else names.CHAT,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield ModelSpan(span)
            except BaseException as exc:
                _failed(span, type(exc).__qualname__)
                raise

    def inject(self, headers: MutableMapping[str, str]) -> None:
        """The current trace context into ``headers`` (``traceparent``, by the application's propagators: W3C
        Trace Context by default)."""
        if self.tracer() is None:
            return
        from opentelemetry import propagate

        propagate.inject(headers)

    @contextmanager
    def continued(self, headers: Mapping[str, str]) -> Iterator[None]:
        """The caller's trace (its ``traceparent``) as the current context while the block runs, unless a span is
        current already (a server instrumentation of the application continued it)."""
        if self.tracer() is None:
            yield
            return
        from opentelemetry import context, propagate, trace

        if trace.get_current_span().get_span_context().is_valid:
            yield
            return
        token = context.attach(propagate.extract(headers))
        try:
            yield
        finally:
            context.detach(token)


def _server(server: tuple[str, int | None] | None) -> dict[str, Any]:
    if server is None:
        return {}
    host, port = server
    return {names.SERVER_ADDRESS: host, **({names.SERVER_PORT: port} if port else {})}


def model_call(
    telemetry: Telemetry | None,
    provider: str,
    model: str | None,
    *,
    server: tuple[str, int | None] | None = None,
    max_tokens: int | None = None,
) -> AbstractContextManager[ModelSpan]:
    """:meth:`Telemetry.model_call` of the request's telemetry, or a quiet one when a judge is called without
    (a test or a tool calling it directly)."""
    return (telemetry or _QUIET).model_call(provider, model, server=server, max_tokens=max_tokens)


_QUIET = Telemetry(enabled=False)
"""Never writes anything (it holds no state: a disabled telemetry resolves no tracer)."""
