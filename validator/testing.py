"""Fakes for tests: judges you script, so no test ever needs a model.

- :class:`ScriptedJudge` answers from a list of steps, in order: a :class:`JudgeOutput`, a dict of
  its fields, or an exception to raise. It records every request in ``calls``;
  :meth:`ScriptedJudge.assert_complete` fails if steps were left unused.
- :class:`FunctionJudge` wraps a function ``(JudgeRequest) -> JudgeOutput | dict`` (sync or async).
- :func:`always_yes`, such a function: the worst model a policy's ``intent = "judge"`` can meet.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, ClassVar

from validator.exceptions import UsageError, ValidatorError
from validator.judges.base import Judge, JudgeOutput, JudgeRequest
from validator.verdict.refusals import STAND_IN_APPROVES

__all__ = ["FunctionJudge", "ScriptError", "ScriptedJudge", "always_yes"]

Step = JudgeOutput | Mapping[str, Any] | BaseException


class ScriptError(ValidatorError):
    """A scripted judge was called more often, or less often, than its script says."""


def _output(value: JudgeOutput | Mapping[str, Any]) -> JudgeOutput:
    return value if isinstance(value, JudgeOutput) else JudgeOutput(**value)


class ScriptedJudge(Judge):
    """Answers from ``steps`` in order; see the module docstring."""

    __test__ = False
    name: ClassVar[str] = "scripted"

    def __init__(self, steps: Iterable[Step]) -> None:
        self._steps = list(steps)
        self._lock = threading.Lock()
        self.calls: list[JudgeRequest] = []

    @property
    def remaining_steps(self) -> int:
        return len(self._steps)

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        with self._lock:
            self.calls.append(request)
            if not self._steps:
                raise ScriptError(
                    f"scripted judge called {len(self.calls)} times; its script had {len(self.calls) - 1} steps"
                )
            step = self._steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        return _output(step)

    def assert_complete(self) -> None:
        if self._steps:
            raise ScriptError(f"{len(self._steps)} scripted steps were never used")


JudgeFunction = Callable[[JudgeRequest], JudgeOutput | Mapping[str, Any] | Awaitable[JudgeOutput | Mapping[str, Any]]]


class FunctionJudge(Judge):
    """A judge made from a function, sync or async."""

    __test__ = False
    name: ClassVar[str] = "function"

    def __init__(self, fn: JudgeFunction, *, name: str | None = None) -> None:
        self._fn = fn
        self._name = name or getattr(fn, "__name__", "function")

    @property
    def label(self) -> str:
        return f"function:{self._name}"

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        if inspect.iscoroutinefunction(self._fn):
            return super().judge(request)
        result = self._fn(request)
        if inspect.isawaitable(result):
            raise UsageError(f"{self._name} returned an awaitable; declare it with async def")
        return _output(result)

    async def ajudge(self, request: JudgeRequest) -> JudgeOutput:
        result = self._fn(request)
        if inspect.isawaitable(result):
            result = await result
        return _output(result)


def always_yes(request: JudgeRequest) -> JudgeOutput:
    """A model that approves everything on the blind view with high confidence, citing the first sentence of the
    user's the gate lets a model cite (:mod:`validator.gate.judgeable`), else the newest request sentence: the
    worst model a dangerous tool's ``intent = "judge"`` can meet (``FunctionJudge(always_yes)``)."""
    held = request.findings.judgeable
    if held is not None and held.sentences:
        cited: str | None = held.sentences[0].text
    else:
        cited = next((r.text for r in reversed(request.findings.requests)), None)
    return JudgeOutput(
        approved=True,
        reasoning=STAND_IN_APPROVES,
        confidence="high",
        view="blind",
        user_sentence=cited,
    )
