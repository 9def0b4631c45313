"""What OpenTelemetry costs a check, side by side in one run: no telemetry (the application never set it up),
the API imported with no SDK (a no-op provider), and the SDK recording every span (a simple processor into
memory, the costliest exporter setup an application could pick short of a network). The same check input
(the packaged ``authorized_email`` example, approved by the strict judge), interleaved rounds, medians.

    python bench/telemetry.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from validator import CheckInput, Telemetry, Validator, ValidatorConfig, examples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (CI)")
    rounds, checks = (3, 50) if parser.parse_args().quick else (9, 300)
    item = CheckInput.from_json(examples.check_path("authorized_email").read_text())
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    rows = {
        "none (never set up)": Telemetry(enabled=False),
        "API, no SDK (no-op)": Telemetry(),
        "SDK, every span kept": Telemetry(tracer_provider=provider),
    }
    checkers = {name: Validator(item.policy, config=ValidatorConfig(telemetry=t)) for name, t in rows.items()}
    for checker in checkers.values():  # warm: the grammar, the caches
        for _ in range(20):
            checker.check(item)
    timings: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(rounds):
        for name, checker in checkers.items():
            started = time.perf_counter()
            for _ in range(checks):
                checker.check(item)
            timings[name].append((time.perf_counter() - started) / checks * 1000)
            exported.clear()
    base = statistics.median(timings["none (never set up)"])
    print(f"{'telemetry':<24}{'ms/check':>10}{'ratio':>8}")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"{name:<24}{median:>10.3f}{median / base:>7.2f}x")
    provider.shutdown()


if __name__ == "__main__":
    main()
