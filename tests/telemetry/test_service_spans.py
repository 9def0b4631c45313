"""The service continues the caller's trace: a W3C ``traceparent`` sent by its client (or any caller) is the
parent of the check's span in the service (a live service on a loopback port, the SDK's in-memory exporter)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from validator.integrations.service import ServiceClient, ServiceConfig

from tests.service.conftest import Running, body, start
from tests.telemetry.test_spans import NAME, _written
from validator import Telemetry

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


@pytest.fixture
def traced() -> Iterator[tuple[Running, Telemetry, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = Telemetry(tracer_provider=provider)
    running = start(ServiceConfig(telemetry=telemetry))
    yield running, telemetry, exporter
    running.stop()
    provider.shutdown()


def test_a_callers_traceparent_is_the_parent_of_the_services_check_span(traced) -> None:
    running, _, exporter = traced
    headers = {"Authorization": f"Bearer {running.token}", "traceparent": f"00-{TRACE}-{PARENT}-01"}
    response = httpx.post(f"{running.url}/v1/check", json=body(), headers=headers, timeout=30)
    assert response.status_code == 200
    (span,) = [s for s in exporter.get_finished_spans() if s.name == NAME]
    assert span.context.trace_id == int(TRACE, 16)
    assert span.parent is not None and span.parent.span_id == int(PARENT, 16) and span.parent.is_remote
    assert (span.attributes or {})["gen_ai.guardrail.result.value"] == response.json()["code"]


def test_without_a_traceparent_the_check_starts_its_own_trace(traced) -> None:
    running, _, exporter = traced
    response = httpx.post(
        f"{running.url}/v1/check", json=body(), headers={"Authorization": f"Bearer {running.token}"}, timeout=30
    )
    assert response.status_code == 200
    (span,) = [s for s in exporter.get_finished_spans() if s.name == NAME]
    assert span.parent is None


def test_the_client_sends_its_span_and_the_service_continues_it_in_one_trace(traced) -> None:
    running, telemetry, exporter = traced
    data = body()
    with ServiceClient(running.url, running.token, telemetry=telemetry) as client:
        verdict = client.check(data)
    assert not verdict.approved
    spans = [s for s in exporter.get_finished_spans() if s.name == NAME]
    (remote,) = [s for s in spans if s.kind is SpanKind.CLIENT]
    (served,) = [s for s in spans if s.kind is SpanKind.INTERNAL]
    assert served.parent is not None and served.parent.span_id == remote.context.span_id
    assert served.context.trace_id == remote.context.trace_id
    attrs = dict(remote.attributes or {})
    assert attrs["server.address"] == "127.0.0.1"
    assert attrs["server.port"] == int(running.url.rsplit(":", 1)[1])
    assert attrs["gen_ai.guardrail.result.value"] == verdict.code.value
    assert "gen_ai.guardrail.policy.id" not in attrs  # the service applies its own policy: its span names it
    assert "gen_ai.guardrail.policy.id" in (served.attributes or {})
    written = " ".join(_written(tuple(spans)))
    for message in data["messages"]:
        text = message["content"] if isinstance(message["content"], str) else ""
        assert not any(len(word) >= 6 and word in written for word in text.split())
