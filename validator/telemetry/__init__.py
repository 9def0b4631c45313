"""OpenTelemetry: a span per check and per model judge's call, the block rate as a metric, the caller's trace
continued (:mod:`validator.telemetry.tracing`); every name written in :mod:`validator.telemetry.conventions`."""

from validator.telemetry.tracing import CheckSpan, ModelSpan, Telemetry

__all__ = ["CheckSpan", "ModelSpan", "Telemetry"]
