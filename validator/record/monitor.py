"""Watching the validator's block rate, per tool and per user, to catch regressions and attacks.

Every verdict is counted in the store (minute and hour buckets, shared by all workers). For each
tool and each user the monitor compares the block rate of the current window (15 minutes by
default) with its own history (the 24 hours before it), with a binomial test:

    p0 = (blocked_history + 1) / (total_history + 2)          # the history's rate, Laplace-smoothed
    z  = (blocked_window - n * p0) / sqrt(n * p0 * (1 - p0))  # n = checks in the window

and raises an :class:`Alert` when the window holds at least ``min_checks`` checks, the history at
least ``min_history`` and ``|z| >= z_threshold`` (4 by default). A rise can mean an attack or a
stricter validator; a fall can mean a validator that stopped blocking (a regression). Alerts go to
``on_alert`` and to the log, at most once per tool or user per window. Counting costs one round
trip a verdict; the windows are read at most once per ``evaluate_every`` (10 s) per tool or user
and process.

Prometheus metrics (``prometheus-client``, in :attr:`BlockRateMonitor.registry`):
``validator_verdicts_total{decision,tool,code}``, ``validator_judge_latency_seconds``,
``validator_judge_input_tokens_total{kind}`` (``cache_read``, ``cache_write``, ``uncached``),
``validator_judge_cache_read_share`` and ``validator_alerts_total{scope}``.

OpenTelemetry metrics (through ``opentelemetry-api``, to ``telemetry``'s meter provider, or the global one the
application set): ``action_validator.verdicts`` (a counter by ``action_validator.decision``,
``action_validator.code`` and ``gen_ai.tool.name``), ``action_validator.block_rate`` and
``action_validator.block_rate.window_checks`` (gauges by ``gen_ai.tool.name``: each tool's block rate over the
current window, and the checks it is computed over, as the monitor last read them). Users are not a metric
attribute: their ids stay in the store and the alerts.

The monitor is an observer: it never raises, so a monitoring fault never changes a verdict.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from validator.record.recorder import AuditEvent, Recorder
from validator.store.base import Store, hour, minute
from validator.telemetry import Telemetry
from validator.telemetry import conventions as names
from validator.verdict import Decision

if TYPE_CHECKING:
    from opentelemetry.metrics import CallbackOptions, Observation
    from opentelemetry.metrics import Counter as OtelCounter

__all__ = ["Alert", "BlockRateMonitor"]

log = logging.getLogger("validator.monitor")
Scope = Literal["tool", "user"]


@dataclass(frozen=True, slots=True)
class Alert:
    """A block rate that moved away from its own history."""

    scope: Scope
    name: str
    window_checks: int
    window_blocked: int
    history_checks: int
    history_blocked: int
    z: float
    at: datetime

    @property
    def window_rate(self) -> float:
        return self.window_blocked / self.window_checks if self.window_checks else 0.0

    @property
    def history_rate(self) -> float:
        return self.history_blocked / self.history_checks if self.history_checks else 0.0

    def __str__(self) -> str:
        direction = "rose" if self.z > 0 else "fell"
        return (
            f"block rate of {self.scope} {self.name!r} {direction} to {self.window_rate:.0%} "
            f"({self.window_blocked}/{self.window_checks}) from {self.history_rate:.0%} "
            f"({self.history_blocked}/{self.history_checks}); z = {self.z:+.1f}"
        )


def binomial_z(window_checks: int, window_blocked: int, history_checks: int, history_blocked: int) -> float:
    """How many standard deviations the window's block count is from the history's rate."""
    p0 = (history_blocked + 1) / (history_checks + 2)
    spread = math.sqrt(window_checks * p0 * (1 - p0))
    return (window_blocked - window_checks * p0) / spread if spread else 0.0


class BlockRateMonitor(Recorder):
    """A recorder that counts verdicts, exports metrics and raises alerts; see the module docstring."""

    def __init__(
        self,
        store: Store,
        *,
        window: timedelta = timedelta(minutes=15),
        history: timedelta = timedelta(hours=24),
        min_checks: int = 20,
        min_history: int = 100,
        z_threshold: float = 4.0,
        on_alert: Callable[[Alert], None] | None = None,
        registry: CollectorRegistry | None = None,
        clock: Callable[[], datetime] | None = None,
        evaluate_every: timedelta = timedelta(seconds=10),
        telemetry: Telemetry | None = None,
    ) -> None:
        self.store = store
        self.window = window
        self.history = history
        self.min_checks = min_checks
        self.min_history = min_history
        self.z_threshold = z_threshold
        self.on_alert = on_alert
        self.clock = clock or (lambda: datetime.now(UTC))
        self.registry = registry if registry is not None else CollectorRegistry()
        self.evaluate_every = evaluate_every
        self._alerted: dict[tuple[str, str], datetime] = {}
        self._evaluated: dict[tuple[str, str], datetime] = {}
        self._tokens = {"cache_read": 0, "cache_write": 0, "uncached": 0}
        self._lock = threading.Lock()
        self.verdicts = Counter(
            "validator_verdicts",
            "Verdicts by decision, tool and code.",
            ["decision", "tool", "code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "validator_judge_latency_seconds",
            "Latency of checks that reached a judge.",
            buckets=(0.001, 0.005, 0.02, 0.1, 0.5, 1, 2, 5, 10, 30),
            registry=self.registry,
        )
        self.tokens = Counter(
            "validator_judge_input_tokens", "Judge input tokens by kind.", ["kind"], registry=self.registry
        )
        self.cache_share = Gauge(
            "validator_judge_cache_read_share", "Share of judge input tokens read from cache.", registry=self.registry
        )
        self.alerts = Counter("validator_alerts", "Block-rate alerts raised.", ["scope"], registry=self.registry)
        self._windows: dict[str, tuple[int, int]] = {}
        """Each tool's current window as last read: ``(checks, blocked)``."""
        meter = (telemetry or Telemetry()).meter()
        self._counted: OtelCounter | None = None
        if meter is not None:
            self._counted = meter.create_counter(
                names.VERDICTS_METRIC, "{verdict}", "Verdicts by decision, code and tool."
            )
            meter.create_observable_gauge(
                names.BLOCK_RATE_METRIC, [self._observe_rates], "1", "Each tool's block rate over the current window."
            )
            meter.create_observable_gauge(
                names.WINDOW_CHECKS_METRIC, [self._observe_checks], "{check}", "The checks each block rate is over."
            )

    # -- windows ----------------------------------------------------------------------------

    def _minutes(self, end: datetime, span: timedelta) -> list[str]:
        return [minute(end - timedelta(minutes=i)) for i in range(int(span.total_seconds() // 60))]

    def _hours(self, end: datetime, span: timedelta) -> list[str]:
        return [hour(end - timedelta(hours=i)) for i in range(int(span.total_seconds() // 3600))]

    def evaluate(self, scope: Scope, name: str) -> Alert | None:
        """Compare the current window with the history for one tool or user; the alert, if any."""
        now = self.clock()
        n, b = self.store.outcome_counts(scope, name, self._minutes(now, self.window))
        if scope == "tool":
            with self._lock:
                self._windows[name] = (n, b)
        # the history: whole hours before the current one, so it does not hold the window
        hn, hb = self.store.outcome_counts(scope, name, self._hours(now - timedelta(hours=1), self.history))
        if n < self.min_checks or hn < self.min_history:
            return None
        z = binomial_z(n, b, hn, hb)
        if abs(z) < self.z_threshold:
            return None
        return Alert(scope, name, n, b, hn, hb, z, now)

    def _maybe_alert(self, scope: Scope, name: str) -> None:
        now = self.clock()
        with self._lock:  # the windows are read at most once per evaluate_every per tool or user
            last = self._evaluated.get((scope, name))
            if last is not None and now - last < self.evaluate_every:
                return
            self._evaluated[(scope, name)] = now
        alert = self.evaluate(scope, name)
        if alert is None:
            return
        with self._lock:
            last = self._alerted.get((scope, name))
            if last is not None and alert.at - last < self.window:
                return
            self._alerted[(scope, name)] = alert.at
        self.alerts.labels(scope).inc()
        log.warning("validator alert: %s", alert)
        if self.on_alert is not None:
            self.on_alert(alert)

    def _observed(self, value: Callable[[int, int], float | None]) -> list[Observation]:
        """One observation per tool of its window as last read (``value(checks, blocked)``; None: none)."""
        from opentelemetry.metrics import Observation

        with self._lock:
            windows = list(self._windows.items())
        seen = ((tool, value(n, b)) for tool, (n, b) in windows)
        return [Observation(v, {names.TOOL_NAME: tool}) for tool, v in seen if v is not None]

    def _observe_rates(self, options: CallbackOptions) -> list[Observation]:
        return self._observed(lambda n, b: b / n if n else None)

    def _observe_checks(self, options: CallbackOptions) -> list[Observation]:
        return self._observed(lambda n, b: n)

    # -- the recorder interface ---------------------------------------------------------------

    def _metrics(self, event: AuditEvent) -> None:
        v = event.verdict
        self.verdicts.labels(v.decision.value, v.tool, v.code.value).inc()
        if self._counted is not None:
            self._counted.add(1, {names.DECISION: v.decision.value, names.CODE: v.code.value, names.TOOL_NAME: v.tool})
        if v.judge is not None and not v.reused:
            self.latency.observe(v.latency_ms / 1000)
        if v.usage is not None:
            spent = {
                "cache_read": v.usage.cache_read_input_tokens,
                "cache_write": v.usage.cache_creation_input_tokens,
                "uncached": v.usage.input_tokens,
            }
            with self._lock:
                for kind, n in spent.items():
                    self.tokens.labels(kind).inc(n)
                    self._tokens[kind] += n
                total = sum(self._tokens.values())
                self.cache_share.set(self._tokens["cache_read"] / total if total else 0.0)

    def record(self, event: AuditEvent) -> None:
        try:
            self._metrics(event)
            if event.verdict.exempt:
                return
            blocked = event.verdict.decision is not Decision.APPROVE
            at = self.clock()
            targets: list[tuple[Scope, str]] = [("tool", event.tool)]
            if event.user_id:
                targets.append(("user", event.user_id))
            for scope, name in targets:
                self.store.count_outcome(scope, name, blocked, at)
            for scope, name in targets:
                self._maybe_alert(scope, name)
        except Exception as exc:  # an observer: a monitoring fault never changes a verdict
            log.warning("block-rate monitor failed on %s: %s", event.tool, exc)

    async def arecord(self, event: AuditEvent) -> None:
        import asyncio

        await asyncio.to_thread(self.record, event)
