"""The ``validator`` script's entry: ``validator hook claude-code --persistent`` answers through the persistent
hook process (:mod:`validator.cli.hookwire`) before anything else is imported; every other command, and that
one whenever the persistent process cannot answer, runs the full command line (:func:`validator.cli.main`)."""

from __future__ import annotations

import io
import json
import sys
import time
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    started = time.monotonic()
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:2] == ["hook", "claude-code"] and "--persistent" in args and "--serve" not in args:
        _persistent(args, started)
    from validator.cli import main as full

    full(args)


def _persistent(args: list[str], started: float) -> None:
    """Answer through the persistent process and exit; return (the stdin kept for the one-shot hook, with the
    time left of the deadline) when it cannot answer, or when anything here fails: the one-shot hook then
    answers, and fails closed on its own (a traceback here would exit 1, which lets the call run)."""
    from validator.cli.hookwire import HookOptions, ask, late

    options = HookOptions.parse(args[2:])
    if options is None:
        return
    raw = sys.stdin.buffer.read()
    try:
        how, answer = ask(raw, options, started)
    except Exception:
        how, answer = "unavailable", None
    if how == "late":
        answer = late(options.timeout)
    if answer is not None:
        try:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
        except Exception:  # no answer could be written: exit 2, which Claude Code treats as a refusal
            raise SystemExit(2) from None
        raise SystemExit(0)
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw))  # the one-shot hook reads the same input
    left = max(0.001, options.timeout - (time.monotonic() - started))
    kept: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--timeout":
            next(rest, None)  # its value
        elif not arg.startswith("--timeout="):
            kept.append(arg)
    args[:] = [*kept, "--timeout", repr(left)]
