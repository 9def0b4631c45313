"""OpenAI Agents SDK: a tool input guardrail that validates every guarded function-tool call.

``ToolGuard(validator)`` guards an agent (``guard.agent(agent)``) or a list of tools (``guard.tools``):

- **Schema.** Every ``FunctionTool`` the policy guards gets a required ``justification`` parameter
  (strict-mode JSON schema; the guidance is in the parameter's description, the tool's description is
  left alone). Exempt function tools keep their schema; their calls are checked only for a link that
  carries the user's words to a host they never named. A tool of another kind (hosted, computer...) that
  the policy guards, or an agent with MCP servers, cannot be checked here: :class:`UsageError`.
  ``guard.agent`` guards the agent and every agent it can hand off to (``handoffs=False``: only it).
- **Call.** The SDK asks the tool's ``needs_approval`` first: the call is validated there
  (``avalidate``) and the verdict kept for its call id; the tool input guardrail (placed first) then
  applies it, and the tool's own function runs with ``justification`` stripped from its arguments.
- **Refusal.** ``on_block="tell_model"``: ``ToolGuardrailFunctionOutput.reject_content``, the model
  reads the refusal (reasoning and suggested next step) as the call's result. ``on_block="halt"``:
  ``raise_exception``, the run stops with ``ToolInputGuardrailTripwireTriggered`` (the verdict is its
  ``output.output_info``). A failure of our own code refuses the call, it never runs the tool.
- **Escalation.** An ``ask_user`` verdict makes ``needs_approval`` true: the run ends with the call in
  ``result.interruptions`` (``guard.request(item)`` says why the validator asks). Answer with the SDK's
  ``state.approve(item)`` / ``state.reject(item, rejection_message=...)`` and run again with the state;
  the answer is recorded through :meth:`Validator.answer` (an approval when the call runs, a rejection
  when the next model call shows its refusal). A tool's own ``needs_approval`` still applies. An
  ``always_approve`` covers the call the user was shown, never a later call the validator escalates
  (the SDK would run it unasked): that one is refused.

**Conversation.** Each call is judged against what the model saw when it made it: the SDK's hooks
(``on_llm_start``/``on_llm_end``) record the model's input and answer, by call id. ``guard.agent``
installs them on the agent (around its own hooks); with ``guard.tools`` pass ``hooks=guard.hooks``
to ``Runner.run``. Without them (or for a run state restored in another process) a call is judged
against the run's input (``turn_input``, which holds every user message) and the call itself.
Only the user's typed text authorizes; tool outputs are outside words. The user's id is the
``user_id`` argument (a string, or a function of the run context), else the run context's
``user_id`` (a mapping entry or an attribute).

Typical usage::

    guard = ToolGuard(Validator(policy))
    agent = guard.agent(Agent(name="assistant", tools=[read_inbox, send_email]))
    result = await Runner.run(agent, "Please email marta@acme.example ...", context={"user_id": "u-1"})
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias, TypeVar

from validator.extras import missing_extra
from validator.verdict.refusals import NOT_APPROVED, validator_failed

try:
    from agents import Agent, AgentHooks, FunctionTool, Handoff, RunContextWrapper, RunHooks, Tool, ToolApprovalItem
    from agents.exceptions import ToolInputGuardrailTripwireTriggered
    from agents.items import ModelResponse, TResponseInputItem
    from agents.run_context import AgentHookContext
    from agents.tool_context import ToolContext
    from agents.tool_guardrails import ToolGuardrailFunctionOutput, ToolInputGuardrail, ToolInputGuardrailData
except ImportError as exc:
    raise missing_extra("openai-agents", "validator.integrations.openai_agents", exc) from None
from validator.integrations._host import Remembered, justified_schema, split_justification, user_of
from validator.integrations._lifecycle import GuardedCall, ToolCallGuard
from validator.integrations._review import Review

from validator import BaseValidator, Decision, Validator, Verdict
from validator.exceptions import UsageError
from validator.inputs.responses import call_ids, item_args, item_text, plain, transcript_from_items
from validator.verdict.refusals import sticky_approval

__all__ = ["ToolGuard", "ValidatorHooks", "transcript_from_items"]

SIGNALS: tuple[type[BaseException], ...] = (ToolInputGuardrailTripwireTriggered,)
"""The SDK's own halt signal: never a failed check."""

TContext = TypeVar("TContext")
UserId = str | Callable[[RunContextWrapper[Any]], str | None] | None
OnBlock = Literal["tell_model", "halt"]
GUARDRAIL_NAME = "action_validator"
_GUARDED = "__action_validator_guarded__"


# -- what the model saw, by call id ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Seen:
    """The model call that made a tool call: its input items, instructions and output items."""

    before: tuple[Any, ...]
    output: tuple[Any, ...]
    instructions: str | None


class _History:
    def __init__(self, size: int) -> None:
        self.inputs: Remembered[int, tuple[tuple[Any, ...], str | None]] = Remembered(size)
        self.calls: Remembered[str, _Seen] = Remembered(size)

    def started(self, context: RunContextWrapper[Any], system_prompt: str | None, items: Sequence[Any]) -> None:
        self.inputs.put(id(context), (tuple(items), system_prompt))

    def ended(self, context: RunContextWrapper[Any], response: ModelResponse) -> None:
        before, instructions = self.inputs.get(id(context)) or ((), None)
        seen = _Seen(before, tuple(response.output), instructions)
        for item in map(plain, response.output):
            if item.get("type") == "function_call":
                self.calls.put(str(item.get("call_id")), seen)


_Context: TypeAlias = RunContextWrapper[Any]
_Items: TypeAlias = list[TResponseInputItem]


class ValidatorHooks(RunHooks[Any]):
    """Run hooks recording what the model saw for each tool call (``Runner.run(..., hooks=guard.hooks)``)."""

    def __init__(self, guard: ToolGuard) -> None:
        self._guard = guard

    async def on_llm_start(
        self, context: _Context, agent: Agent[Any], system_prompt: str | None, input_items: _Items
    ) -> None:
        await self._guard._model_called(context, system_prompt, input_items)

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse) -> None:
        self._guard._history.ended(context, response)


class _AgentHooks(AgentHooks[Any]):
    """The agent's own hooks, with the guard's recording around the model calls."""

    def __init__(self, guard: ToolGuard, inner: AgentHooks[Any] | None) -> None:
        self.guard = guard
        self.inner = inner

    async def on_start(self, context: AgentHookContext[Any], agent: Agent[Any]) -> None:
        if self.inner is not None:
            await self.inner.on_start(context, agent)

    async def on_end(self, context: AgentHookContext[Any], agent: Agent[Any], output: Any) -> None:
        if self.inner is not None:
            await self.inner.on_end(context, agent, output)

    async def on_handoff(self, context: RunContextWrapper[Any], agent: Agent[Any], source: Agent[Any]) -> None:
        if self.inner is not None:
            await self.inner.on_handoff(context, agent, source)

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool) -> None:
        if self.inner is not None:
            await self.inner.on_tool_start(context, agent, tool)

    async def on_tool_end(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object) -> None:
        if self.inner is not None:
            await self.inner.on_tool_end(context, agent, tool, result)

    async def on_llm_start(
        self, context: _Context, agent: Agent[Any], system_prompt: str | None, input_items: _Items
    ) -> None:
        await self.guard._model_called(context, system_prompt, input_items)
        if self.inner is not None:
            await self.inner.on_llm_start(context, agent, system_prompt, input_items)

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse) -> None:
        self.guard._history.ended(context, response)
        if self.inner is not None:
            await self.inner.on_llm_end(context, agent, response)


# -- the guard ----------------------------------------------------------------------------------


def _stripped(arguments: str) -> str:
    """The model's JSON arguments without ``justification`` (unreadable JSON is left to the tool)."""
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        return arguments
    if not isinstance(parsed, dict):
        return arguments
    clean, _ = split_justification(parsed)
    return json.dumps(clean, ensure_ascii=False)


def _sticky(ctx: RunContextWrapper[Any], tool: str) -> bool:
    """Whether the run holds an "always approve" for ``tool``: an approval that a call id never seen before
    would get too (a per-call approval names its call)."""
    return ctx.is_tool_approved(tool, f"action-validator-probe-{uuid.uuid4().hex}") is True


def _same_call(item: Mapping[str, Any], name: str, args: Mapping[str, Any]) -> bool:
    return item.get("name") == name and item_args(item.get("arguments")) == dict(args)


class ToolGuard:
    """Validates the guarded function tools of OpenAI Agents SDK agents; see the module docstring."""

    def __init__(
        self,
        validator: BaseValidator | None = None,
        *,
        user_id: UserId = None,
        on_block: OnBlock = "tell_model",
        remembered: int = 256,
        handoffs: bool = True,
    ) -> None:
        """``on_block``: a refused call is answered to the model (``tell_model``) or stops the run
        (``halt``). ``remembered``: how many recent model calls and verdicts are kept. ``handoffs``:
        :meth:`agent` guards every agent the agent can hand off to, and theirs (``False``: only the
        agent itself; guard the others yourself)."""
        if on_block not in ("tell_model", "halt"):
            raise UsageError(f"on_block must be 'tell_model' or 'halt', got {on_block!r}")
        self.validator = validator if validator is not None else Validator()
        self.user_id = user_id
        self.on_block = on_block
        self.handoffs = handoffs
        self.hooks = ValidatorHooks(self)
        self.guard = ToolCallGuard(self.validator, remembered=remembered, signals=SIGNALS)
        self._history = _History(remembered)
        self._cleared: Remembered[str, str] = Remembered(remembered)
        self._guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(self._check, name=GUARDRAIL_NAME)

    # -- wiring ---------------------------------------------------------------------------------

    def agent(self, agent: Agent[TContext]) -> Agent[TContext]:
        """A copy of ``agent`` with its tools guarded and the conversation recorded by its hooks; with
        ``handoffs`` (the default), every agent it can hand off to is guarded the same way, and theirs.

        MCP servers' tools, listed only at run time, cannot be guarded here: an agent with ``mcp_servers``
        is a :class:`UsageError`."""
        return self._agent(agent, {})

    def _agent(self, agent: Agent[Any], done: dict[int, Agent[Any]]) -> Agent[Any]:
        if id(agent) in done:  # agents that hand off to each other: one copy each
            return done[id(agent)]
        if agent.mcp_servers:
            raise UsageError(
                f"agent {agent.name!r} has MCP servers, whose tools the validator cannot check; "
                "wrap their calls in function tools, or run them outside the guarded agent"
            )
        hooks = agent.hooks if isinstance(agent.hooks, _AgentHooks) else _AgentHooks(self, agent.hooks)
        copy = agent.clone(tools=self.tools(agent.tools), hooks=hooks)
        done[id(agent)] = copy
        if self.handoffs:
            copy.handoffs = [self._handoff(h, done) for h in agent.handoffs]
        return copy

    def _handoff(self, target: Agent[Any] | Handoff[Any, Any], done: dict[int, Agent[Any]]) -> Any:
        """A hand-off to a guarded copy of its agent (a ``Handoff`` object: the agent it returns, guarded)."""
        if isinstance(target, Agent):
            return self._agent(target, done)
        invoke = target.on_invoke_handoff

        async def on_invoke_handoff(ctx: RunContextWrapper[Any], input_json: str) -> Any:
            return self._agent(await invoke(ctx, input_json), done)

        return dataclasses.replace(target, on_invoke_handoff=on_invoke_handoff)

    def tools(self, tools: Sequence[Tool]) -> list[Tool]:
        """The tools, each guarded one validated before it runs (exempt ones unchanged)."""
        out: list[Tool] = []
        for tool in tools:
            name = str(getattr(tool, "name", type(tool).__name__))
            exempt = self.validator.policy.for_tool(name).exempt
            if isinstance(tool, FunctionTool):  # an exempt one keeps its schema; its calls get the egress check
                out.append(self.tool(tool, justify=not exempt))
            elif exempt:
                out.append(tool)
            else:
                raise UsageError(
                    f"tool {name!r} ({type(tool).__name__}) is not a function tool, so the validator cannot "
                    "check its calls; mark it exempt in the policy, or leave it out"
                )
        return out

    def tool(self, tool: FunctionTool, *, justify: bool = True) -> FunctionTool:
        """A copy of a function tool: ``justification`` required, validated, stripped before it runs
        (``justify=False``, for an exempt tool: its schema kept, its calls checked all the same)."""
        if getattr(tool.on_invoke_tool, _GUARDED, False):
            return tool
        schema = justified_schema(tool.params_json_schema, tool.name) if justify else tool.params_json_schema
        invoke = tool.on_invoke_tool
        own_approval = tool.needs_approval

        async def on_invoke_tool(ctx: ToolContext[Any], input: str) -> Any:
            if self._cleared.get(ctx.tool_call_id) != input:  # the guardrail did not run: check here
                verdict = await self._decide(ctx)
                if verdict is None or not verdict.approved:
                    return (verdict or Verdict.blocked(tool.name, NOT_APPROVED)).message_for_agent()
            self._cleared.pop(ctx.tool_call_id)
            return await invoke(ctx, _stripped(input))

        async def needs_approval(ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
            call, verdict = await self._judge(ctx, tool.name, params, call_id)
            if verdict.decision is Decision.ASK_USER:
                self.guard.pose(call, verdict)
                return True
            if not verdict.approved:
                return False  # the guardrail refuses it: the user need not be asked
            if isinstance(own_approval, bool):
                return own_approval
            clean, _ = split_justification(params)
            return bool(await own_approval(ctx, clean, call_id))

        setattr(on_invoke_tool, _GUARDED, True)
        return dataclasses.replace(
            tool,
            params_json_schema=schema,
            on_invoke_tool=on_invoke_tool,
            needs_approval=needs_approval,
            tool_input_guardrails=[self._guardrail, *(tool.tool_input_guardrails or [])],
        )

    def request(self, item: ToolApprovalItem) -> dict[str, Any] | None:
        """Why the validator asks about an interruption: the per-call approval request of
        :mod:`validator.integrations._review` (reasons under ``action_validator``); None if not ours."""
        raw = plain(item.raw_item)
        asked = self.guard.question(str(raw.get("call_id")))
        return None if asked is None else self.guard.request(*asked)

    # -- validation -------------------------------------------------------------------------------

    def _user(self, ctx: RunContextWrapper[Any]) -> str | None:
        return user_of(self.user_id, ctx, ctx.context)

    async def _judge(
        self, ctx: RunContextWrapper[Any], tool: str, args: Mapping[str, Any], call_id: str
    ) -> tuple[GuardedCall, Verdict]:
        """The call and its verdict (the lifecycle keeps it for this very call, from ``needs_approval`` to the
        guardrail); a failure of our own code blocks it."""
        seen = self._history.calls.get(call_id)
        call = {"type": "function_call", "call_id": call_id, "name": tool, "arguments": json.dumps(dict(args))}
        if seen is not None and any(_same_call(i, tool, args) for i in map(plain, seen.output)):
            before, items, instructions = seen.before, [*seen.before, *seen.output], seen.instructions
        else:  # not recorded (no hooks, or another process): the run's input, which holds every user message
            before, items, instructions = tuple(ctx.turn_input), [*ctx.turn_input, call], None
        started = self.guard.start(
            tool,
            args,
            call_id=call_id,
            messages=lambda: transcript_from_items(items, instructions=instructions),
            user_id=lambda: self._user(ctx),
            used=call_ids(before),
        )
        return started, await self.guard.adecide(started)

    async def _decide(self, ctx: ToolContext[Any]) -> Verdict | None:
        """The verdict this very call runs under (the user's, when they were asked); None: let the SDK ask."""
        call, verdict = await self._judge(ctx, ctx.tool_name, item_args(ctx.tool_arguments), ctx.tool_call_id)
        if verdict.decision is not Decision.ASK_USER:
            return self.guard.outcome(call, verdict).verdict
        if ctx.is_tool_approved(ctx.tool_name, ctx.tool_call_id) is not True:
            execution = ctx.run_config.tool_execution if ctx.run_config is not None else None
            if execution is not None and execution.pre_approval_tool_input_guardrails:
                return None  # the guardrail runs before the approval interruption: the SDK asks the user next
            return verdict  # the user did not approve it: it never runs
        shown = self.guard.question(ctx.tool_call_id, call) is not None  # this very call, not an old one of that id
        if not shown and _sticky(ctx, ctx.tool_name):
            # an "always approve" the user gave for the tool earlier: the SDK never showed them this call
            kept = self.guard.outcome(call, verdict).verdict  # settled here: not kept for the call any more
            return replace(kept, reasoning=sticky_approval(ctx.tool_name, kept.reasoning))
        self.guard.forget(ctx.tool_call_id)
        return (await self.guard.asettle(call, verdict, Review(True))).verdict

    async def _check(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        """The tool input guardrail: allow, or refuse (``tell_model``) / stop the run (``halt``)."""
        ctx = data.context
        try:
            verdict = await self._decide(ctx)
        except Exception as exc:
            if self.guard.passes(exc):
                raise
            verdict = Verdict.blocked(ctx.tool_name, validator_failed(exc))
        if verdict is None:
            return ToolGuardrailFunctionOutput.allow()
        if verdict.approved:
            self._cleared.put(ctx.tool_call_id, ctx.tool_arguments)
            return ToolGuardrailFunctionOutput.allow(output_info=verdict)
        if self.on_block == "halt":
            return ToolGuardrailFunctionOutput.raise_exception(output_info=verdict)
        return ToolGuardrailFunctionOutput.reject_content(verdict.message_for_agent(), output_info=verdict)

    async def _model_called(
        self, context: RunContextWrapper[Any], system_prompt: str | None, items: Sequence[Any]
    ) -> None:
        """Record the model's input; a call the user rejected shows its refusal here: record the answer."""
        self._history.started(context, system_prompt, items)
        for item in map(plain, items):
            if item.get("type") != "function_call_output":
                continue
            await self.guard.aanswer(str(item.get("call_id")), Review(False, item_text(item.get("output"))))
