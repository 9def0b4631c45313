"""Answering one Claude Code ``PreToolUse`` call, without the command-line library: :func:`one_shot` (the hook input
on stdin, the answer on stdout) and :func:`timed_answer` (the answer within the hook's deadline; the persistent hook
process answers each call with it too). :mod:`validator.cli.entry` runs :func:`one_shot` for a command line
:meth:`~validator.cli.hookwire.HookOptions.parse` reads; :mod:`validator.cli.hooks` is the command line's options
and help, the settings entry and the persistent process."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from validator.cli.hookwire import HookOptions, deny, find_policy, late

__all__ = ["one_shot", "timed_answer"]


def one_shot(options: HookOptions) -> int:
    """Answer the call on standard input, on standard output; the exit status: 0 (Claude Code reads the answer,
    a deny included), or 2 when no answer could be written (which Claude Code treats as a refusal of the call)."""
    try:
        raw = sys.stdin.buffer.read()
    except Exception as exc:  # no input to read (a closed standard input): the call does not run
        answer = deny(f"The action validator could not read the hook input, so the call does not run: {exc}")
    else:
        answer = timed_answer(raw, options)
    try:
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    except Exception:  # no answer could be written
        return 2
    return 0


class _Deadline(BaseException):
    """The hook's own deadline, raised by its timer wherever the check is: a ``BaseException``, so that no
    ``except Exception`` on the way (a library's "could not scan this text") takes it for an answer and goes on."""


def _answer(
    raw: bytes,
    policy: Path | None,
    store: str | None,
    judge: str,
    model: str | None,
    allow: bool = True,
    *,
    resolved: bool = False,
) -> dict[str, Any]:
    from validator.cli.checkrun import _make_judge
    from validator.engine.stateful import stateful_validator
    from validator.exceptions import InputError
    from validator.integrations.claude_code import hook_answer, validator_guard
    from validator.policy import Policy
    from validator.store import open_store

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return deny(f"The action validator could not read the hook input, so the call does not run: {exc}")
    try:
        found = policy if resolved else find_policy(policy, data)
        validator = stateful_validator(
            open_store(store),
            policy=Policy.load(found) if found is not None else None,
            judge=_make_judge(judge, model, None),
        )
    except InputError as exc:
        return deny(
            "The action validator is not set up, so the call does not run: " + "; ".join(map(str, exc.problems))
        )
    return hook_answer(data, validator_guard(validator), allow=allow)


def timed_answer(
    raw: bytes, options: HookOptions, *, resolved: bool = False, budget: float | None = None
) -> dict[str, Any]:
    """:func:`_answer` within ``options.timeout`` (or the ``budget`` left of it: a deny past it), any failure of
    ours a deny."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise _Deadline

    seconds = options.timeout if budget is None else budget
    timed = hasattr(signal, "setitimer") and seconds > 0
    o = options
    started = time.monotonic()
    try:
        if timed:
            signal.signal(signal.SIGALRM, expired)
            signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            answer = _answer(raw, o.policy, o.store, o.judge, o.model, o.allow, resolved=resolved)
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except _Deadline:
        return late(options.timeout)
    except Exception as exc:  # fail closed: whatever went wrong, the call does not run
        return deny(f"The action validator failed, so the call does not run: {type(exc).__name__}: {exc}")
    if timed and time.monotonic() - started >= seconds:  # answered, but past the deadline: never trusted
        return late(options.timeout)
    return answer
