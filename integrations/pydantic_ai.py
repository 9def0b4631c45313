"""Pydantic AI: a toolset wrapper that validates every guarded tool call before it runs.

``ValidatedToolset(toolset, validator)`` wraps any Pydantic AI toolset (``validated_tools(...)`` wraps
plain functions):

- **Schema.** Every tool the policy guards gets a required ``justification`` parameter in the schema
  the model sees, with the guidance in the parameter's description (the tool's description is left
  alone). Exempt tools keep their schema, and their calls are checked only for a link that carries the
  user's words to a host they never named (asked about); external tools (run outside the agent) are
  passed through untouched.
- **Call.** Each call is validated (``avalidate``) against the run's messages; ``justification`` is
  stripped before the tool runs, so the tool never receives it.
- **Refusal.** A call that is not approved does not run: it raises Pydantic AI's ``ToolFailed`` with
  the refusal text, so the model reads it as the call's (failed) result. ``ToolFailed``, not
  ``ModelRetry``: a refusal is the answer to that call, it must not spend the tool's retry budget nor
  end the run when the model tries again. A failure of our own code refuses the call too.
- **Escalation.** An ``ask_user`` verdict raises ``ApprovalRequired`` (metadata: the per-call approval
  request of :mod:`validator.integrations._review`, the validator's reasons under
  ``action_validator``), so a run with ``output_type=[..., DeferredToolRequests]`` ends with the call in
  ``DeferredToolRequests.approvals``. Run again with ``DeferredToolResults(approvals={call_id: ...})``:
  ``True``/``ToolApproved()`` runs the call (``ToolApproved(override_args=...)`` is the user's edit,
  validated again as a new call, and runs only when that check does not refuse it;
  ``metadata={call_id: {"remember": {...}}}`` keeps the approval as a standing authorization), and the
  answer is recorded through :meth:`Validator.answer`. ``False``/``ToolDenied(message)`` never reaches a
  toolset (Pydantic AI answers the model itself); the denial is recorded at the run's next step.

Text the user typed (``UserPromptPart``) is the only thing that authorizes. Tool returns, and the
user-prompt content a tool attaches with ``ToolReturn(content=...)``, are outside words; a tool return's
``metadata={"author": ...}`` names their outside author. The user's id is the ``user_id`` argument (a
string, or a function of the run context), else ``deps["user_id"]`` / ``deps.user_id``.

Typical usage::

    agent = Agent(model, toolsets=[ValidatedToolset(FunctionToolset([send_email]), Validator(policy))],
                  output_type=[str, DeferredToolRequests])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from validator.extras import missing_extra

try:
    from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry, ToolFailed
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
    from pydantic_ai.tools import AgentDepsT, RunContext
    from pydantic_ai.toolsets import FunctionToolset, ToolsetTool, WrapperToolset
    from pydantic_core import from_json, to_json
except ImportError as exc:
    raise missing_extra("pydantic-ai", "validator.integrations.pydantic_ai", exc) from None
from validator.integrations._host import JUSTIFICATION, ids_used_before, justified_schema, split_justification, user_of
from validator.integrations._lifecycle import GuardedCall, ToolCallGuard
from validator.integrations._review import Review

from validator import BaseValidator, Decision, Validator, Verdict
from validator.inputs.pydantic_ai import transcript_from_pydantic_ai, user_text

__all__ = ["ValidatedToolset", "transcript_from_pydantic_ai", "validated_tools"]

SIGNALS: tuple[type[BaseException], ...] = (ApprovalRequired, CallDeferred, ModelRetry, ToolFailed)
"""Pydantic AI's own control flow (deferrals, retries, failures a tool reports): never a failed check."""

UserId = str | Callable[[RunContext[Any]], str | None] | None
GUARDED_KINDS = ("function", "unapproved")
"""Tool kinds a toolset runs itself; an ``external`` tool's calls run outside the agent."""


# -- the tool schema and its arguments ------------------------------------------------------------


@dataclass(frozen=True)
class _LenientArgs:
    """The tool's own argument validator, with any ``justification`` set aside for the validator to judge
    (a malformed one must reach it, and be refused with its reason, not retried as a schema error)."""

    inner: Any
    """The wrapped tool's ``args_validator`` (a pydantic-core ``SchemaValidator`` or alike)."""

    def validate_python(self, input: Any, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        if not (isinstance(input, Mapping) and JUSTIFICATION in input):
            return self.inner.validate_python(input, allow_partial=allow_partial, **kwargs)
        rest = dict(input)
        justification = rest.pop(JUSTIFICATION)
        return {**self.inner.validate_python(rest, allow_partial=allow_partial, **kwargs), JUSTIFICATION: justification}

    def validate_json(self, input: str | bytes | bytearray, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        try:
            data = from_json(input or "{}")
        except ValueError:  # the tool's validator names the problem
            data = None
        if not (isinstance(data, dict) and JUSTIFICATION in data):
            return self.inner.validate_json(input, allow_partial=allow_partial, **kwargs)
        justification = data.pop(JUSTIFICATION)
        checked = self.inner.validate_json(to_json(data), allow_partial=allow_partial, **kwargs)
        return {**checked, JUSTIFICATION: justification}


def _without_justification(check: Callable[..., Any]) -> Callable[..., Any]:
    """The tool's own ``args_validator_func``, called without ``justification``."""

    def checked(ctx: RunContext[Any], **kwargs: Any) -> Any:
        kwargs.pop(JUSTIFICATION, None)
        return check(ctx, **kwargs)

    return checked


def _justified(tool: ToolsetTool[AgentDepsT]) -> ToolsetTool[AgentDepsT]:
    """The tool as the model sees it: ``justification`` required, guidance in its description."""
    schema = justified_schema(tool.tool_def.parameters_json_schema, tool.tool_def.name)
    check = tool.args_validator_func
    return replace(
        tool,
        tool_def=replace(tool.tool_def, parameters_json_schema=schema),
        args_validator=_LenientArgs(tool.args_validator),
        args_validator_func=_without_justification(check) if check is not None else None,
    )


# -- the toolset ------------------------------------------------------------------------------


def _used_ids(messages: Sequence[ModelMessage], call_id: str) -> frozenset[str]:
    """The call's id when the history used it before the response that made this call (a call or its return)."""
    return ids_used_before(messages, call_id, _call_ids, _ids)


def _call_ids(message: ModelMessage) -> list[str]:
    if not isinstance(message, ModelResponse):
        return []
    return [p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)]


def _ids(message: ModelMessage) -> list[str]:
    return [p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart | ToolReturnPart) and p.tool_call_id]


@dataclass
class ValidatedToolset(WrapperToolset[AgentDepsT]):
    """Validates every guarded tool call of the wrapped toolset; see the module docstring."""

    validator: BaseValidator = field(default_factory=Validator)
    user_id: UserId = None
    """The user's id: a string, or a function of the run context; None reads ``deps`` (``user_id``)."""
    guard: ToolCallGuard | None = field(default=None, repr=False)
    """The lifecycle, shared by the copies the agent makes per run (the questions waiting for the user live in it)."""

    def __post_init__(self) -> None:
        if self.guard is None:
            self.guard = ToolCallGuard(self.validator, signals=SIGNALS)

    @property
    def _guard(self) -> ToolCallGuard:
        assert self.guard is not None
        return self.guard

    def _guarded(self, name: str, tool: ToolsetTool[Any]) -> bool:
        return self._runs_here(tool) and not self.validator.policy.for_tool(name).exempt

    def _runs_here(self, tool: ToolsetTool[Any]) -> bool:
        return tool.tool_def.kind in GUARDED_KINDS

    def _user(self, ctx: RunContext[AgentDepsT]) -> str | None:
        return user_of(self.user_id, ctx, ctx.deps)

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        await self._record_denials(ctx)
        tools = await super().get_tools(ctx)
        return {name: _justified(tool) if self._guarded(name, tool) else tool for name, tool in tools.items()}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        if not self._runs_here(tool):
            return await super().call_tool(name, tool_args, ctx, tool)
        # an exempt tool is checked too (no justification): a link carrying the user's words out is asked about
        verdict = await self._verdict(name, tool_args, ctx)
        if not verdict.approved:
            raise ToolFailed(verdict.message_for_agent())
        # as validated: the tool's own types, not plain data (after an edit, these are the edit, checked)
        args, _ = split_justification(tool_args)
        return await super().call_tool(name, args, ctx, tool)

    def _start(self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT]) -> GuardedCall:
        call_id = ctx.tool_call_id or ""
        return self._guard.start(
            name,
            tool_args,
            call_id=call_id,
            messages=lambda: transcript_from_pydantic_ai(ctx.messages, prompt=_prompt(ctx)),
            user_id=lambda: self._user(ctx),
            used=_used_ids(ctx.messages, call_id) if call_id else (),
        )

    async def _verdict(self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT]) -> Verdict:
        """The verdict on this call: the validator's, or the user's when they were asked (an approval of a
        question kept elsewhere, another process, is decided again: only a question takes the answer)."""
        guard, call = self._guard, self._start(name, tool_args, ctx)
        if ctx.tool_call_approved:
            asked = guard.question(call.call_id)
            if asked is not None and (asked[0].tool != name or asked[0].user_id != call.user_id):
                asked = None
            review = self._review(asked[0] if asked is not None else call, tool_args, ctx)
            answered = await guard.aanswer(call.call_id, review, call=asked[0]) if asked is not None else None
            return (answered or await guard.arun(call, lambda _: review)).verdict
        verdict = await guard.adecide(call)
        if verdict.decision is not Decision.ASK_USER:
            return guard.outcome(call, verdict).verdict
        raise ApprovalRequired(metadata=guard.pose(call, verdict))

    def _review(self, asked: GuardedCall, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT]) -> Review:
        """The user's approval (``ToolApproved(override_args=...)``: their edit, validated as a new call)."""
        meta = ctx.tool_call_metadata if isinstance(ctx.tool_call_metadata, Mapping) else {}
        remember = meta.get("remember")
        if remember is True:
            remember = {}
        if remember is not None and not isinstance(remember, Mapping):
            return Review(False, "'remember' must be true or an object: treated as a rejection", unreadable=True)
        args, _ = split_justification(tool_args)
        return Review(True, remember=remember, edited_args=args if args != asked.args else None)

    async def _record_denials(self, ctx: RunContext[AgentDepsT]) -> None:
        """Record the user's refusals of escalated calls (``ToolDenied`` never reaches a toolset)."""
        for message in ctx.messages:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, ToolReturnPart) and part.outcome == "denied":
                    await self._guard.aanswer(part.tool_call_id, Review(False, part.model_response_str()))


def _prompt(ctx: RunContext[Any]) -> str | None:
    return user_text(ctx.prompt) if ctx.prompt is not None else None


def validated_tools(
    tools: Sequence[Callable[..., Any]], validator: BaseValidator | None = None, *, user_id: UserId = None
) -> ValidatedToolset[Any]:
    """Plain functions (or Pydantic AI ``Tool`` objects) as a validated toolset."""
    return ValidatedToolset(FunctionToolset(list(tools)), validator or Validator(), user_id)
