"""The monitor's block rate as OpenTelemetry metrics (the SDK's in-memory reader): verdicts counted by decision,
code and tool, and each tool's block rate over the current window, with no user id anywhere."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from tests.conftest import POLICY
from validator import Telemetry, Validator, ValidatorConfig
from validator.record.monitor import BlockRateMonitor
from validator.store.memory import MemoryStore

MESSAGES = [{"role": "user", "content": "Please email bob@acme.example the minutes."}]
ACTION = {
    "tool": "send_email",
    "args": {"to": "bob@acme.example", "body": "Minutes: all good."},
    "justification": {"reason": "The user asked.", "evidence": [{"quote": "email bob@acme.example the minutes"}]},
}
BLOCKED = {**ACTION, "justification": {"reason": "r", "evidence": [{"quote": "not said"}]}}


def _points(reader: InMemoryMetricReader) -> dict[str, list[tuple[dict[str, Any], float]]]:
    data = reader.get_metrics_data()
    assert data is not None
    found: dict[str, list[tuple[dict[str, Any], float]]] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            assert scope.scope.name == "action-validator"
            for metric in scope.metrics:
                found[metric.name] = [(dict(p.attributes or {}), p.value) for p in metric.data.data_points]
    return found


def test_the_block_rate_and_the_verdicts_are_opentelemetry_metrics() -> None:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    monitor = BlockRateMonitor(MemoryStore(), telemetry=Telemetry(meter_provider=provider), evaluate_every=timedelta(0))
    checker = Validator(POLICY, recorder=monitor, config=ValidatorConfig(retry_cap=None))
    for i in range(8):  # a quarter blocked
        checker.validate(MESSAGES, BLOCKED if i % 4 == 0 else ACTION, user_id="u-secret-1")
    points = _points(reader)
    assert points["action_validator.block_rate"] == [({"gen_ai.tool.name": "send_email"}, 0.25)]
    assert points["action_validator.block_rate.window_checks"] == [({"gen_ai.tool.name": "send_email"}, 8)]
    counted = {
        (a["action_validator.decision"], a["action_validator.code"]): v for a, v in points["action_validator.verdicts"]
    }
    assert counted == {("approve", "APPROVED"): 6, ("block", "EVIDENCE_NOT_FOUND"): 2}
    assert "u-secret-1" not in repr(points)  # users are not a metric attribute
    provider.shutdown()


def test_no_meter_no_metrics_and_the_prometheus_ones_stay() -> None:
    monitor = BlockRateMonitor(MemoryStore(), telemetry=Telemetry(enabled=False))
    Validator(POLICY, recorder=monitor).validate(MESSAGES, ACTION)
    assert monitor.verdicts.labels("approve", "send_email", "APPROVED")._value.get() == 1
