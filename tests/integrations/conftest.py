"""Each integration test runs on an event loop of its own, closed afterwards.

Frameworks' ``run_sync`` helpers reuse the thread's current event loop (Pydantic AI) or leave one
behind (the OpenAI Agents SDK): without this, one test's loop, its async generators already shut
down, is picked up by the next, and an unclosed loop is collected during an unrelated test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest


def _current() -> asyncio.AbstractEventLoop | None:
    local = getattr(asyncio.get_event_loop_policy(), "_local", None)
    loop = getattr(local, "_loop", None)
    return loop if isinstance(loop, asyncio.AbstractEventLoop) else None


@pytest.fixture(autouse=True)
def own_event_loop() -> Iterator[None]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        yield
    finally:
        for left in {loop, _current()} - {None}:
            assert left is not None
            if not left.is_closed() and not left.is_running():
                left.run_until_complete(left.shutdown_asyncgens())
                left.close()
        asyncio.set_event_loop(None)
