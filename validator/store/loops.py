"""Values kept per running event loop: a redis.asyncio connection belongs to the loop that opened it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["PerLoop"]

C = TypeVar("C")


class PerLoop(Generic[C]):
    """One value per running event loop, made on first use there (a redis.asyncio connection belongs to the
    loop that opened it); those of loops that have closed are dropped."""

    def __init__(self, make: Callable[[], C]) -> None:
        self._make = make
        self._values: dict[asyncio.AbstractEventLoop, C] = {}

    def get(self) -> C:
        loop = asyncio.get_running_loop()
        value = self._values.get(loop)
        if value is None:
            for old in [lp for lp in self._values if lp.is_closed()]:
                del self._values[old]
            value = self._values[loop] = self._make()
        return value

    def pop(self) -> C | None:
        """This loop's value, no longer kept (the caller closes it)."""
        return self._values.pop(asyncio.get_running_loop(), None)
