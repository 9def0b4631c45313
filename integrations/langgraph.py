"""A validation step between the model node and the ``ToolNode`` of a LangGraph graph.

Three nodes, so an interrupt never re-runs the judge:

1. ``validate``: validates every tool call of the last AI message concurrently and saves the
   verdicts to state (``validator_verdicts``) before anything can interrupt;
2. ``ask``: for ``ask_user`` verdicts only, one ``interrupt`` listing them in LangChain's batched
   human-in-the-loop shape (``action_requests``, ``review_configs``, plus ``action_validator``:
   why); the resume value is LangChain's ``{"decisions": [...]}`` (approve, edit, reject, in
   order), or ``True`` / ``False`` for all, or ``{tool_call_id: decision}``; the answers are saved
   and recorded, and an edit is the call that runs;
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
from typing import Annotated, Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.graph import MessagesState, StateGraph
from langgraph.types import Command, Send, interrupt
from validator.integrations._host import (
    pending_from_call,
    reused_id,
    split_justification,
    unreadable_history,
    user_id_from,
)
from validator.integrations._review import batched_request, read_review
from validator.integrations.langchain import justified_tool, refusal_message, transcript_from_state

from validator import Decision, Policy, Validator, Verdict
from validator.exceptions import is_control_flow
from validator.record.recorder import hash_args

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


def _last_ai(state: Any) -> AIMessage | None:
    messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    for message in reversed(messages or []):
        if isinstance(message, AIMessage):
            return message
    return None


def _split(state: Any) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """The messages before the last AI message, and those after it."""
    messages: Sequence[BaseMessage] = state.get("messages") or []
    for k in range(len(messages) - 1, -1, -1):
        if isinstance(messages[k], AIMessage):
            return list(messages[:k]), list(messages[k + 1 :])
    return list(messages), []


def _pending(state: Any) -> list[dict[str, Any]]:
    """The calls of the last AI message that nothing after it answers (none is ever dropped)."""
    ai = _last_ai(state)
    if ai is None:
        return []
    done = {m.tool_call_id for m in _split(state)[1] if isinstance(m, ToolMessage)}
    return [dict(c) for c in ai.tool_calls if c.get("id") not in done]


def _used_before(state: Any) -> set[str]:
    """Call ids that messages before the last AI message already used (a call or its answer)."""
    earlier = _split(state)[0]
    ids = {m.tool_call_id for m in earlier if isinstance(m, ToolMessage)}
    ids |= {str(c.get("id")) for m in earlier if isinstance(m, AIMessage) for c in m.tool_calls}
    return ids


class _Nodes:
    def __init__(
        self, validator: Validator, *, tools: str, model: str, user_id_key: str, agent_request: AgentRequest | None
    ):
        self.validator = validator
        self.tools = tools
        self.model = model
        self.user_id_key = user_id_key
        self.agent_request = agent_request

    def _inputs(self, state: Any, config: RunnableConfig | None) -> tuple[Any, str | None, Mapping[str, Any] | None]:
        request = self.agent_request(state) if self.agent_request else None
        user_id = user_id_from(self.user_id_key, (config or {}).get("configurable"))
        return transcript_from_state(state), user_id, request

    def _one(self, call: dict[str, Any], inputs: tuple[Any, str | None, Any]) -> dict[str, Any]:
        return {**self._judge_one(call, inputs), CALL_KEY: _call_hash(call)}

    def _judge_one(self, call: dict[str, Any], inputs: tuple[Any, str | None, Any]) -> dict[str, Any]:
        transcript, user_id, request = inputs
        try:
            action = pending_from_call(call["name"], call.get("args"), call.get("id"))
            verdict = self.validator.validate(transcript, action, user_id=user_id, agent_request=request)
        except Exception as exc:  # bad input from the graph: the call is blocked, never run
            verdict = _unchecked(call, exc)
        return verdict.to_dict()

    async def _aone(self, call: dict[str, Any], inputs: tuple[Any, str | None, Any]) -> dict[str, Any]:
        return {**(await self._ajudge_one(call, inputs)), CALL_KEY: _call_hash(call)}

    async def _ajudge_one(self, call: dict[str, Any], inputs: tuple[Any, str | None, Any]) -> dict[str, Any]:
        transcript, user_id, request = inputs
        try:
            action = pending_from_call(call["name"], call.get("args"), call.get("id"))
            verdict = await self.validator.avalidate(transcript, action, user_id=user_id, agent_request=request)
        except Exception as exc:
            verdict = _unchecked(call, exc)
        return verdict.to_dict()

    def _todo(self, state: Any) -> list[dict[str, Any]]:
        saved = state.get("validator_verdicts") or {}
        return [c for c in _pending(state) if c["id"] not in saved or saved[c["id"]].get(CALL_KEY) != _call_hash(c)]

    def _start(
        self, state: Any, config: RunnableConfig | None
    ) -> tuple[list[dict[str, Any]], Any, dict[str, Any] | None]:
        """The calls still to judge and their inputs; or, when the inputs cannot be read, every call refused."""
        todo = self._todo(state)
        if not todo:
            return todo, None, {}
        reused = _used_before(state)
        if any(c["id"] in reused for c in todo):
            refused = {
                c["id"]: {
                    **(
                        reused_id(c["name"], c["id"])
                        if c["id"] in reused
                        else unreadable_history(c["name"], "another call of this message reuses an earlier call id")
                    ).to_dict(),
                    CALL_KEY: _call_hash(c),
                }
                for c in todo
            }
            return todo, None, {"validator_verdicts": refused}
        try:
            return todo, self._inputs(state, config), None
        except Exception as exc:
            if is_control_flow(exc):
                raise
            refused = {
                c["id"]: {
                    **Verdict.blocked(c["name"], f"No conversation to check: {exc}").to_dict(),
                    CALL_KEY: _call_hash(c),
                }
                for c in todo
            }
            return todo, None, {"validator_verdicts": refused}

    def validate(self, state: Any, config: RunnableConfig | None = None) -> dict[str, Any]:
        todo, inputs, done = self._start(state, config)
        if done is not None:
            return done
        with ThreadPoolExecutor(max_workers=min(8, len(todo))) as pool:
            # each call in a copy of this context, so the host's callbacks and tracing follow it
            futures = [pool.submit(contextvars.copy_context().run, self._one, c, inputs) for c in todo]
            verdicts = [f.result() for f in futures]
        return {"validator_verdicts": {c["id"]: v for c, v in zip(todo, verdicts, strict=True)}}

    async def avalidate(self, state: Any, config: RunnableConfig | None = None) -> dict[str, Any]:
        todo, inputs, done = self._start(state, config)
        if done is not None:
            return done
        verdicts = await asyncio.gather(*(self._aone(c, inputs) for c in todo))
        return {"validator_verdicts": {c["id"]: v for c, v in zip(todo, verdicts, strict=True)}}

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
        items = []
        for c in pending:
            args, justification = split_justification(c.get("args") or {})
            items.append((c["id"], c["name"], args, _verdict(saved[c["id"]]), justification))
        answer = interrupt(batched_request(items))  # not inside any try: it must raise
        transcript, user_id, _ = self._inputs(state, config)
        decided: dict[str, Any] = {}
        for i, c in enumerate(pending):
            review = read_review(answer, call_id=c["id"], tool=c["name"], index=i)
            action = pending_from_call(c["name"], review.edited_args or c.get("args"), c.get("id"))
            verdict = self.validator.answer(
                _verdict(saved[c["id"]]),
                review.approved,
                review.reason,
                messages=transcript,
                action=action,
                user_id=user_id,
                remember=review.remember,
            )
            kept = {CALL_KEY: saved[c["id"]].get(CALL_KEY), EDITED_KEY: review.edited_args}
            decided[c["id"]] = {**verdict.to_dict(), **kept}
        return {"validator_verdicts": decided}

    def route(self, state: Any) -> Command[Any]:
        saved = state.get("validator_verdicts") or {}
        refusals: list[ToolMessage] = []
        approved: list[dict[str, Any]] = []
        for call in _pending(state):
            data = saved.get(call["id"])
            if not data:
                verdict = Verdict.blocked(call["name"], "No verdict was recorded for this call.")
            elif data.get(CALL_KEY) != _call_hash(call):  # the call was changed after it was judged
                verdict = Verdict.blocked(call["name"], "The call's arguments changed after it was validated.")
            else:
                verdict = _verdict(data)
            if verdict.approved:
                edited = (data or {}).get(EDITED_KEY)  # the user's edit is the call that runs
                args = edited if isinstance(edited, dict) else split_justification(call.get("args") or {})[0]
                approved.append({**call, "args": args, "type": "tool_call"})
            else:
                refusals.append(refusal_message(verdict, call["id"], call["name"]))
        update = {"messages": refusals} if refusals else {}
        if approved:
            return Command(update=update, goto=[Send(self.tools, approved)])
        return Command(update=update, goto=self.model)


CALL_KEY = "call_hash"
"""Saved with each verdict: the hash of the call it judged, so a rewritten call is never sent on."""
EDITED_KEY = "edited_args"
"""Saved with a verdict the user answered with an edit: the arguments they want the call to run with."""


def _call_hash(call: dict[str, Any]) -> str:
    return hash_args({"name": call.get("name"), "args": call.get("args") or {}})


def _verdict(data: dict[str, Any]) -> Verdict:
    return Verdict.from_dict({k: v for k, v in data.items() if k not in (CALL_KEY, EDITED_KEY)})


def _unchecked(call: Mapping[str, Any], exc: Exception) -> Verdict:
    if is_control_flow(exc):
        raise exc
    return Verdict.blocked(call["name"], f"The validator could not check this call: {exc}")


def add_validator(
    builder: StateGraph[Any, Any, Any, Any],
    validator: Validator,
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
