"""A check's I/O written once: the engine's steps yield :class:`Io` and one of two thin shells runs it.

The pipeline is a generator. Where a step needs the outside world (a store read, the judge, the recorder)
it writes ``value = yield from Io(sync_form, async_form)``; everything between two such lines is pure.
:func:`run` drives the generator with each effect's sync form, :func:`arun` with its async form (or the
sync form in a worker thread, off the event loop, when a store has no async form). So ``validate`` and
``avalidate`` are one function: they cannot take different steps, only different I/O.

An effect that raises is thrown back into the generator at its ``yield``, as a direct call would raise
there, so the pipeline's own ``try`` blocks see it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, Generic, TypeAlias, TypeVar

import msgspec

__all__ = ["Io", "Steps", "arun", "run"]

T = TypeVar("T")


class Io(msgspec.Struct, Generic[T], frozen=True):
    """One effect: how to run it in a sync shell, and (when it has one) in an async shell."""

    sync: Callable[[], T]
    asynchronous: Callable[[], Awaitable[T]] | None = None
    """None: the async shell runs ``sync`` in a worker thread."""

    def __iter__(self) -> Generator[Io[T], T, T]:
        """``yield from`` an effect: the shell's result of it."""
        return (yield self)


Steps: TypeAlias = Generator[Io[Any], Any, T]
"""A pipeline that yields effects and returns ``T``."""


class _Returned(msgspec.Struct, Generic[T], frozen=True):
    value: T


def _resume(steps: Steps[T], value: Any, error: BaseException | None) -> Io[Any] | _Returned[T]:
    """The pipeline's next effect, after ``value`` (or ``error``, raised at its ``yield``); or what it returned."""
    try:
        return steps.send(value) if error is None else steps.throw(error)
    except StopIteration as done:
        return _Returned(done.value)


def run(steps: Steps[T]) -> T:
    """Drive ``steps`` with each effect's sync form."""
    value: Any = None
    error: BaseException | None = None
    while not isinstance(effect := _resume(steps, value, error), _Returned):
        try:
            value, error = effect.sync(), None
        except BaseException as exc:  # back into the pipeline, where a direct call would have raised it
            value, error = None, exc
    return effect.value


async def arun(steps: Steps[T]) -> T:
    """Drive ``steps`` with each effect's async form (its sync form in a worker thread when it has none)."""
    import asyncio

    value: Any = None
    error: BaseException | None = None
    while not isinstance(effect := _resume(steps, value, error), _Returned):
        try:
            value = await (asyncio.to_thread(effect.sync) if effect.asynchronous is None else effect.asynchronous())
            error = None
        except BaseException as exc:
            value, error = None, exc
    return effect.value
