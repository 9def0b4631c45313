"""A validation step between the model node and the ``ToolNode`` of a LangGraph graph.

Three nodes, so an interrupt never re-runs the judge:

1. ``validate``: validates every tool call of the last AI message concurrently and saves the
   verdicts to state (``validator_verdicts``) before anything can interrupt;
2. ``ask``: for ``ask_user`` verdicts only, one ``interrupt`` listing them in LangChain's batched
   human-in-the-loop shape (``action_requests``, ``review_configs``, plus ``action_validator``:
   why); the resume value is LangChain's ``{"decisions": [...]}`` (approve, edit, reject, in
   order), or ``True`` / ``False`` for all, or ``{tool_call_id: decision}``; the answers are saved
   and recorded, and an edit is validated again as a new call (its changed arguments the user's
   words): what runs is what was checked;
3. ``route``: answers each blocked call with a ``ToolMessage(status="error")`` carrying the
   reasoning and the suggested next step, and sends only the approved calls, justification
   stripped, on to the tools node (``Send``); with none approved it goes back to the model.

Typical usage::

    builder = StateGraph(ValidatorState)
    builder.add_node("model", call_model)                    # bound to justified_tools(tools, policy)
    builder.add_node("tools", ToolNode(tools))
    entry = add_validator(builder, Validator(policy))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, {"tools": entry, END: END})
    builder.add_edge("tools", "model")
    graph = builder.compile(checkpointer=InMemorySaver())    # a checkpointer, for interrupts
"""

import asyncio
import contextvars
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Annotated, Any

from validator.extras import missing_extra

try:
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig, RunnableLambda
    from langchain_core.tools import BaseTool
    from langgraph.graph import MessagesState, StateGraph
    from langgraph.types import Command, Send, interrupt
except ImportError as exc:
    raise missing_extra("langchain", "validator.integrations.langgraph", exc) from None
from validator.integrations._host import read_once, split_justification, used_ids, user_id_from
from validator.integrations._lifecycle import GuardedCall, ToolCallGuard
from validator.integrations._review import batched_request
from validator.integrations.langchain import (
    SIGNALS,
    justified_tool,
    refusal_message,
    transcript_from_state,
    used_before,
)

from validator import BaseValidator, Decision, Policy, Verdict
from validator.record.recorder import hash_args
from validator.verdict.refusals import ARGUMENTS_CHANGED, NO_VERDICT_RECORDED

__all__ = ["ValidatorState", "add_validator", "justified_tools", "merge_verdicts"]

AgentRequest = Callable[[Any], Mapping[str, Any] | None]


def merge_verdicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer of ``validator_verdicts``: later verdicts for a call replace earlier ones."""
    return {**(left or {}), **(right or {})}


class ValidatorState(MessagesState):
    """``MessagesState`` plus the verdicts of the validation nodes (JSON dicts, keyed by tool call id)."""

    validator_verdicts: Annotated[dict[str, dict[str, Any]], merge_verdicts]


def justified_tools(tools: Sequence[BaseTool], policy: Policy) -> list[BaseTool]:
    """Model-facing copies of the tools ``policy`` guards, whose schema requires ``justification``
    (exempt tools are returned as they are); bind these to the model.

    The copies are for ``bind_tools`` only: the ``ToolNode`` keeps the original tools, and the
    validation nodes strip ``justification`` before a call reaches them.
    """
    return [t if policy.for_tool(t.name).exempt else justified_tool(t) for t in tools]


def _pending(state: Any) -> list[dict[str, Any]]:
    """The calls of the last AI message that nothing after it answers (none is ever dropped)."""
    found = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    messages: Sequence[BaseMessage] = found or []
    for k in range(len(messages) - 1, -1, -1):
        ai = messages[k]
        if isinstance(ai, AIMessage):
            done = {m.tool_call_id for m in messages[k + 1 :] if isinstance(m, ToolMessage)}
            return [dict(c) for c in ai.tool_calls if c.get("id") not in done]
    return []


class _Nodes:
    def __init__(
        self, validator: BaseValidator, *, tools: str, model: str, user_id_key: str, agent_request: AgentRequest | None
    ):
        self.guard = ToolCallGuard(validator, signals=SIGNALS)
        self.tools = tools
        self.model = model
        self.user_id_key = user_id_key
        self.agent_request = agent_request

    def _calls(self, state: Any, config: RunnableConfig | None, calls: list[dict[str, Any]]) -> list[GuardedCall]:
        """The calls as the guard sees them (one reading of the conversation for all of them)."""
        transcript = read_once(lambda: transcript_from_state(state, validator=self.guard.validator), self.guard.passes)
        request = self.agent_request(state) if self.agent_request else None
        user_id = user_id_from(self.user_id_key, (config or {}).get("configurable"))
        messages = state.get("messages") or []
        return [
            self.guard.start(
                c["name"],
                c.get("args"),
                call_id=c.get("id"),
                messages=transcript,
                user_id=user_id,
                agent_request=request,
                used=used_ids(transcript, partial(used_before, messages, str(c.get("id")))),
            )
            for c in calls
        ]

    def _todo(self, state: Any) -> list[dict[str, Any]]:
        saved = state.get("validator_verdicts") or {}
        return [c for c in _pending(state) if c["id"] not in saved or saved[c["id"]].get(CALL_KEY) != _call_hash(c)]

    def _saved(self, todo: list[dict[str, Any]], verdicts: list[Verdict]) -> dict[str, Any]:
        return {
            "validator_verdicts": {
                c["id"]: {**v.to_dict(), CALL_KEY: _call_hash(c)} for c, v in zip(todo, verdicts, strict=True)
            }
        }

    def validate(self, state: Any, config: RunnableConfig | None = None) -> dict[str, Any]:
        todo = self._todo(state)
        if not todo:
            return {}
        calls = self._calls(state, config, todo)
        with ThreadPoolExecutor(max_workers=min(8, len(todo))) as pool:
            # each call in a copy of this context, so the host's callbacks and tracing follow it
            futures = [pool.submit(contextvars.copy_context().run, self.guard.decide, c) for c in calls]
            verdicts = [f.result() for f in futures]
        return self._saved(todo, verdicts)

    async def avalidate(self, state: Any, config: RunnableConfig | None = None) -> dict[str, Any]:
        todo = self._todo(state)
        if not todo:
            return {}
        calls = self._calls(state, config, todo)
        return self._saved(todo, list(await asyncio.gather(*(self.guard.adecide(c) for c in calls))))

    def _escalations(self, state: Any) -> list[dict[str, Any]]:
        saved = state.get("validator_verdicts") or {}
        return [c for c in _pending(state) if saved.get(c["id"], {}).get("decision") == Decision.ASK_USER.value]

    def needs_user(self, state: Any) -> bool:
        return bool(self._escalations(state))

    def ask(self, state: Any, config: RunnableConfig | None = None) -> dict[str, Any]:
        pending = self._escalations(state)
        if not pending:
            return {}
        saved = state["validator_verdicts"]
        calls = self._calls(state, config, pending)
        verdicts = [_verdict(saved[c["id"]]) for c in pending]
        answer = interrupt(batched_request([self.guard.item(c, v) for c, v in zip(calls, verdicts, strict=True)]))
        decided: dict[str, Any] = {}
        for i, (raw, c, v) in enumerate(zip(pending, calls, verdicts, strict=True)):
            outcome = self.guard.settle(c, v, answer, index=i)
            kept = {CALL_KEY: saved[raw["id"]].get(CALL_KEY), RUNS_KEY: outcome.args, RESPONSE_KEY: outcome.response}
            decided[raw["id"]] = {**outcome.verdict.to_dict(), **kept}
        return {"validator_verdicts": decided}

    def route(self, state: Any) -> Command[Any]:
        saved = state.get("validator_verdicts") or {}
        refusals: list[ToolMessage] = []
        approved: list[dict[str, Any]] = []
        for call in _pending(state):
            data = saved.get(call["id"])
            if not data:
                verdict = Verdict.blocked(call["name"], NO_VERDICT_RECORDED)
            elif data.get(CALL_KEY) != _call_hash(call):  # the call was changed after it was judged
                verdict = Verdict.blocked(call["name"], ARGUMENTS_CHANGED)
            else:
                verdict = _verdict(data)
            if verdict.approved:
                runs = (data or {}).get(RUNS_KEY)  # after the user's answer: the arguments that were checked
                args = runs if isinstance(runs, dict) else split_justification(call.get("args") or {})[0]
                approved.append({**call, "args": args, "type": "tool_call"})
            else:  # refused, or the person answered in the tool's place (respond: a text saved with the verdict)
                refusals.append(refusal_message(verdict, call["id"], call["name"], (data or {}).get(RESPONSE_KEY)))
        update = {"messages": refusals} if refusals else {}
        if approved:
            return Command(update=update, goto=[Send(self.tools, approved)])
        return Command(update=update, goto=self.model)


CALL_KEY = "call_hash"
"""Saved with each verdict: the hash of the call it judged, so a rewritten call is never sent on."""
RUNS_KEY = "runs_with"
"""Saved with a verdict the user answered: the arguments the call runs with (their edit, validated again)."""
RESPONSE_KEY = "responded"  # saved with a verdict answered with respond: the message the agent reads


def _call_hash(call: dict[str, Any]) -> str:
    return hash_args({"name": call.get("name"), "args": call.get("args") or {}})


def _verdict(data: dict[str, Any]) -> Verdict:
    return Verdict.from_dict({k: v for k, v in data.items() if k not in (CALL_KEY, RUNS_KEY, RESPONSE_KEY)})


def add_validator(
    builder: StateGraph[Any, Any, Any, Any],
    validator: BaseValidator,
    *,
    name: str = "validator",
    tools: str = "tools",
    model: str = "model",
    user_id_key: str = "user_id",
    agent_request: AgentRequest | None = None,
) -> str:
    """Add the three validation nodes to ``builder``; returns the node to route tool calls to.

    ``user_id_key`` names the ``configurable`` entry holding the user's id. ``agent_request(state)``
    may return the agent's last Messages request body, so an Anthropic judge shares its prompt
    cache (for a ChatAnthropic model: ``integrations.claude.claude_request``).
    """
    nodes = _Nodes(validator, tools=tools, model=model, user_id_key=user_id_key, agent_request=agent_request)
    ask, route = f"{name}_ask", f"{name}_route"
    builder.add_node(name, RunnableLambda(nodes.validate, afunc=nodes.avalidate, name=name))
    builder.add_node(ask, nodes.ask)
    builder.add_node(route, nodes.route, destinations=(tools, model))
    builder.add_conditional_edges(name, lambda state: ask if nodes.needs_user(state) else route, [ask, route])
    builder.add_edge(ask, route)
    return name
