"""The guard of one ``@guarded`` tool, shared by a guarded function (:mod:`validator.integrations.tools`) and a
guarded LangChain tool (:mod:`validator.integrations.langchain_tools`): where a call's conversation comes
from (a LangGraph ``ToolNode``'s state, or a hand-written loop's ``validation_context``), how the person is
asked, and what a refused call gives back. No framework is imported: the LangChain half is loaded only when
LangGraph is installed.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Literal

from validator.integrations._host import JUSTIFICATION, current_context
from validator.integrations._lifecycle import GuardedCall, Outcome, ToolCallGuard

from validator import ActionBlocked, BaseValidator, Verdict
from validator.exceptions import UsageError
from validator.inputs import Message, Transcript, parse_transcript

__all__ = ["Guard", "OnAsk"]

OnAsk = Literal["tell_model", "interrupt"]


@functools.cache
def _graph() -> ModuleType | None:
    """The LangChain half (:mod:`validator.integrations.langchain_tools`) when LangGraph is installed: a
    guarded function then also runs in a ``ToolNode``. None with the base install: a plain function in a
    hand-written loop needs nothing of it."""
    try:
        if importlib.util.find_spec("langgraph") is None or importlib.util.find_spec("langchain_core") is None:
            return None
    except ImportError:
        return None
    return importlib.import_module("validator.integrations.langchain_tools")


def _transcript(messages: Any, validator: BaseValidator) -> Transcript:
    """The conversation of ``validation_context``: check-input dicts or a transcript need no framework;
    LangChain messages (or a graph state) are read by the LangChain adapter."""
    if isinstance(messages, Transcript):
        return messages
    if isinstance(messages, list | tuple) and all(isinstance(m, Mapping | Message) for m in messages):
        return parse_transcript(list(messages))
    graph = _graph()
    if graph is None:
        raise UsageError(
            "validation_context(messages): give check-input dicts or a Transcript "
            "(LangChain messages need the [langchain] extra)"
        )
    transcript: Transcript = graph.transcript_from_state(messages, validator=validator)
    return transcript


class Guard:
    """Validates one tool's calls; shared by the function and the LangChain tool wrappers."""

    def __init__(self, tool_name: str, validator: BaseValidator, on_ask: OnAsk) -> None:
        self.tool_name = tool_name
        self.graph = _graph()
        self.guard = ToolCallGuard(validator, signals=self.graph.SIGNALS if self.graph else ())
        self.on_ask = on_ask

    def _in(self, runtime: Any) -> ModuleType | None:
        """The LangChain half when this call runs inside a LangGraph ``ToolNode`` (``runtime`` is its
        ``ToolRuntime``); None in a hand-written loop."""
        return self.graph if self.graph is not None and self.graph.is_runtime(runtime) else None

    def _start(self, args: Mapping[str, Any], justification: Any, runtime: Any) -> GuardedCall:
        given = {**args, JUSTIFICATION: justification} if justification is not None else dict(args)
        graph = self._in(runtime)
        if graph is not None:
            call: GuardedCall = graph.start(self.guard, self.tool_name, given, runtime)
            return call
        ctx = current_context()
        if ctx is None:
            raise UsageError(
                f"`{self.tool_name}` is guarded but no conversation was given: run it in a LangGraph ToolNode, "
                "or call it inside `with validation_context(messages):`"
            )
        return self.guard.start(
            self.tool_name,
            given,
            call_id=None,
            messages=lambda: _transcript(ctx.messages, self.guard.validator),
            user_id=ctx.user_id,
            agent_request=ctx.agent_request,
        )

    def _ask(self, runtime: Any) -> Callable[[dict[str, Any]], Any] | None:
        """How to ask the person: LangGraph's ``interrupt`` with ``on_ask="interrupt"`` in a graph, else not."""
        graph = self._in(runtime) if self.on_ask == "interrupt" else None
        return graph.ask if graph is not None else None

    def check(self, args: Mapping[str, Any], justification: Any, runtime: Any) -> Outcome:
        """What happens to this call; under LangGraph with ``on_ask="interrupt"`` an ``ask_user`` verdict
        asks the person (``interrupt``, outside any try) and their answer decides."""
        return self.guard.run(self._start(args, justification, runtime), self._ask(runtime))

    async def acheck(self, args: Mapping[str, Any], justification: Any, runtime: Any) -> Outcome:
        return await self.guard.arun(self._start(args, justification, runtime), self._ask(runtime))

    def refusal(self, verdict: Verdict, runtime: Any) -> Any:
        """What a blocked call returns: an error the agent reads (a ``ToolMessage``) inside a LangGraph graph;
        elsewhere it raises :class:`ActionBlocked`, whose ``verdict`` says why."""
        graph = self._in(runtime)
        if graph is None:
            raise ActionBlocked(verdict)
        return graph.refusal(verdict, runtime, self.tool_name)
