"""The ``validator`` script's entry: ``validator hook claude-code --persistent`` answers through the persistent
hook process (:mod:`validator.cli.hookwire`) before anything else is imported; a command a host runs once per action,
``validator check`` and the one-shot ``validator hook claude-code``, in its plainest form (:meth:`CheckOptions.parse
<validator.cli.checkrun.CheckOptions.parse>`, :meth:`HookOptions.parse <validator.cli.hookwire.HookOptions.parse>`)
runs without the command-line library (typer, and the pydantic it brings: about a third of such a process); every
other command line, ``--help`` included, and any the plain readings do not know, runs the full command line
(:func:`validator.cli.main`), which reads it as the plain readings would (a test holds the two equal)."""

from __future__ import annotations

import io
import json
import sys
import time
import traceback
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    started = time.monotonic()
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:2] == ["hook", "claude-code"] and "--persistent" in args and "--serve" not in args:
        _persistent(args, started)
    code = _plain(args)
    if code is not None:
        raise SystemExit(code)
    from validator.cli import main as full

    full(args)


def _plain(args: list[str]) -> int | None:
    """Run ``args`` when a plain reading reads them, and return the exit status; None when none does."""
    if args[:1] == ["check"]:
        from validator.cli.checkrun import CheckOptions, run

        check = CheckOptions.parse(args[1:])
        return None if check is None else run(check)
    if args[:2] == ["hook", "claude-code"]:
        from validator.cli.hookwire import HookOptions

        hook = HookOptions.parse(args[2:])  # --print-settings, --serve: None
        if hook is None:
            return None
        try:
            from validator.cli.hookrun import one_shot

            return one_shot(hook)
        except Exception:  # no answer (a broken install): exit 2, which Claude Code takes as a refusal, never 1
            traceback.print_exc()
            return 2
    return None


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
