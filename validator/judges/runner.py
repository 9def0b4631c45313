"""Calling a judge: a time limit per attempt, one retry, and every failure kept.

:func:`judging` is the one attempt loop (:func:`call_judge` and :func:`acall_judge` run it): an
exception, a timeout or an output that contradicts itself counts as a failed attempt; after ``attempts``
failures the caller gets no output, only the errors (and what the failed calls were billed). A judge can never approve
by failing. Host control-flow signals are re-raised untouched.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from functools import partial

from validator.exceptions import JudgeError, JudgeOutputError, JudgeTimeout, is_control_flow
from validator.judges.base import Judge, JudgeOutput, JudgeRequest
from validator.shells import Io, Steps, arun, run
from validator.verdict import Usage

__all__ = ["Attempts", "JudgeLimits", "acall_judge", "call_judge", "describe", "judging"]

_EXECUTOR = ThreadPoolExecutor(max_workers=16, thread_name_prefix="validator-judge")


def describe(exc: BaseException) -> str:
    """An exception in one line, for a verdict's reasoning."""
    if isinstance(exc, JudgeError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


@dataclass
class Attempts:
    """What the attempts produced: a usable output, or none; the failures and their billed usage."""

    output: JudgeOutput | None = None
    errors: list[str] = field(default_factory=list)
    spent: list[Usage] = field(default_factory=list)

    signals: tuple[type[BaseException], ...] = ()
    """Host control-flow signals a judge may raise: re-raised, never a failed attempt."""

    def failed(self, exc: Exception) -> None:
        if is_control_flow(exc, self.signals):
            raise exc
        self.errors.append(describe(exc))
        usage = getattr(exc, "usage", None)
        if isinstance(usage, Usage):
            self.spent.append(usage)


def checked(judge: Judge, output: object) -> JudgeOutput:
    """``output`` when it is a usable :class:`JudgeOutput`; raises :class:`JudgeOutputError` otherwise."""
    if not isinstance(output, JudgeOutput):
        raise JudgeOutputError(judge.label, f"returned {type(output).__name__}, not JudgeOutput")
    problems = output.contradictions()
    if problems:
        error = JudgeOutputError(judge.label, "; ".join(problems))
        error.usage = output.usage
        raise error
    return output


def _once(judge: Judge, request: JudgeRequest, timeout: float | None) -> object:
    if not judge.blocking or timeout is None:
        return judge.judge(request)
    # The caller's context (tracing, the host framework's callbacks) goes with the call.
    run: Callable[[], object] = lambda: judge.judge(request)  # noqa: E731
    future = _EXECUTOR.submit(contextvars.copy_context().run, run)
    try:
        return future.result(timeout=timeout)
    except FutureTimeout:
        future.cancel()
        raise JudgeTimeout(judge.label, timeout) from None


async def _aonce(judge: Judge, request: JudgeRequest, timeout: float | None) -> object:
    import asyncio

    try:
        return await asyncio.wait_for(judge.ajudge(request), timeout)
    except TimeoutError:
        raise JudgeTimeout(judge.label, timeout or 0) from None


@dataclass(frozen=True, slots=True)
class JudgeLimits:
    """How a judge is called: seconds per attempt (None: no limit), attempts, the host's control-flow signals."""

    timeout: float | None
    attempts: int
    signals: tuple[type[BaseException], ...] = ()


def judging(judge: Judge, request: JudgeRequest, limits: JudgeLimits) -> Steps[Attempts]:
    """Up to ``limits.attempts`` calls of ``judge``, each within ``limits.timeout`` seconds, as the steps of
    :mod:`validator.shells` (run by either shell)."""
    result = Attempts(signals=limits.signals)
    for _ in range(max(1, limits.attempts)):
        try:
            output = yield from Io(
                partial(_once, judge, request, limits.timeout), partial(_aonce, judge, request, limits.timeout)
            )
            result.output = checked(judge, output)
            return result
        except Exception as exc:
            result.failed(exc)
    return result


def call_judge(judge: Judge, request: JudgeRequest, limits: JudgeLimits) -> Attempts:
    """:func:`judging`, sync."""
    return run(judging(judge, request, limits))


async def acall_judge(judge: Judge, request: JudgeRequest, limits: JudgeLimits) -> Attempts:
    """:func:`judging`, async."""
    return await arun(judging(judge, request, limits))
