"""The Claude Agent SDK: its ``PreToolUse`` hook and ``can_use_tool`` callback over the host lifecycle.

``ClaudeAgentGuard(validator)`` gives both seams of one agent (``guard.options(...)`` sets them on
``ClaudeAgentOptions``):

- **The hook** (:meth:`ClaudeAgentGuard.pre_tool_use`) decides every call its matcher covers (MCP tools by
  default), reading the session's transcript as the Claude Code hook does
  (:mod:`validator.integrations.claude_code`): approve → ``allow``, block → ``deny`` with the refusal text,
  ask_user → ``ask``, which sends the call into the SDK's permission flow.
- **The permission callback** (:meth:`ClaudeAgentGuard.can_use_tool`) answers that flow: a call the hook
  asked about goes to the application's ``ask`` callback (the person), and their answer is recorded through
  :meth:`Validator.answer` (``True``/``False``, or a :class:`~validator.integrations._review.Review` with a
  reason, a "remember this" scope or an edit, validated again as a new call). With no ``ask`` callback, or a
  call the hook never decided, the call is denied (``fallback`` may answer the calls the hook does not cover).
- **Justified SDK tools**: :func:`justified_tool` adds the required ``justification`` argument to an
  in-process tool's schema (``@tool`` / ``create_sdk_mcp_server``) and strips it before the handler runs.
  External MCP and built-in tools cannot carry it: the validator finds the user's words itself.

Any failure of ours denies the call; the SDK's own exceptions are never swallowed into an approval.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from validator.extras import missing_extra

try:
    from claude_agent_sdk import ClaudeAgentOptions, HookMatcher, SdkMcpTool
    from claude_agent_sdk.types import (
        HookContext,
        HookInput,
        HookJSONOutput,
        PermissionResult,
        PermissionResultAllow,
        PermissionResultDeny,
        ToolPermissionContext,
    )
except ImportError as exc:
    raise missing_extra("claude-agent-sdk", "validator.integrations.claude_agent_sdk", exc) from None
from validator.integrations._host import JUSTIFICATION, justified_schema, split_justification
from validator.integrations._lifecycle import ToolCallGuard
from validator.integrations._review import Review
from validator.integrations.claude_code import decide_call, failure_reason, hook_output, permission

from validator.engine import BaseValidator, Validator
from validator.exceptions import UsageError
from validator.inputs.claude_code import TRANSCRIPT_WAIT
from validator.verdict import Verdict

__all__ = ["Ask", "ClaudeAgentGuard", "Fallback", "justified_tool"]

Ask = Callable[[str, dict[str, Any], Verdict], Awaitable["bool | Review"]]
"""The application's question to the person: ``(tool name, arguments, verdict) -> approved`` (or a Review)."""
Fallback = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]


def _answer(decision: str, reason: str) -> HookJSONOutput:
    return cast(HookJSONOutput, hook_output(decision, reason))


class ClaudeAgentGuard:
    """Validates a Claude Agent SDK agent's tool calls; see the module docstring."""

    def __init__(
        self,
        validator: BaseValidator | None = None,
        *,
        ask: Ask | None = None,
        fallback: Fallback | None = None,
        user_id: str | None = None,
        matcher: str | None = "mcp__.*",
        transcript_wait: float = TRANSCRIPT_WAIT,
    ) -> None:
        self.validator = validator or Validator()
        self.guard = ToolCallGuard(self.validator)
        self.ask = ask
        self.fallback = fallback
        self.user_id = user_id
        self.matcher = matcher
        self.transcript_wait = transcript_wait
        """Seconds the hook waits for the session's transcript to hold the call it checks (the CLI writes its
        lines asynchronously; past the wait the call is denied, never checked against a shorter history)."""

    # -- the hook -------------------------------------------------------------------------------

    async def pre_tool_use(
        self, input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        """The ``PreToolUse`` hook callback (``HookMatcher(hooks=[guard.pre_tool_use])``)."""
        try:
            call, verdict = await asyncio.to_thread(
                decide_call, input_data, self.guard, user_id=self.user_id, wait=self.transcript_wait
            )
        except Exception as exc:  # a bad input, or our own failure: the call never runs on it
            return _answer("deny", failure_reason(exc))
        decision, reason = permission(verdict)
        if decision == "ask":
            self.guard.pose(call, verdict)
        return _answer(decision, reason)

    # -- the permission flow -------------------------------------------------------------------

    async def can_use_tool(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        """The ``can_use_tool`` callback: the person's answer to a call the hook asked about."""
        try:
            asked = self.guard.question(context.tool_use_id or "")
            if asked is None:
                if self.fallback is not None:
                    return await self.fallback(tool_name, tool_input, context)
                return PermissionResultDeny(
                    message=f"The action validator did not check `{tool_name}`; it does not run."
                )
            call, verdict = asked
            if self.ask is None:
                self.guard.forget(call.call_id)
                return PermissionResultDeny(message=verdict.message_for_agent())
            given = await self.ask(tool_name, dict(tool_input), verdict)
            review = given if isinstance(given, Review) else Review(bool(given))
            outcome = await self.guard.aanswer(call.call_id, review, call=call)  # only the call they were shown
            if outcome is None:  # answered meanwhile: this answer does not run it
                return PermissionResultDeny(message=verdict.message_for_agent())
        except Exception as exc:  # a failure to ask or to record: the call does not run
            return PermissionResultDeny(message=f"The action validator could not settle this call: {exc!r}")
        if outcome.runs:  # the person's edit, checked, runs (the justification kept: the schema requires it)
            edited = outcome.args != call.args
            carried = {JUSTIFICATION: tool_input[JUSTIFICATION]} if JUSTIFICATION in tool_input else {}
            return PermissionResultAllow(updated_input={**outcome.args, **carried} if edited else None)
        return PermissionResultDeny(message=outcome.verdict.message_for_agent())

    # -- wiring ---------------------------------------------------------------------------------

    def hook_matchers(self) -> list[HookMatcher]:
        return [HookMatcher(matcher=self.matcher, hooks=[self.pre_tool_use])]

    def options(self, options: ClaudeAgentOptions | None = None, **settings: Any) -> ClaudeAgentOptions:
        """``options`` (or new options from ``settings``) with this guard's hook first and its permission
        callback set."""
        base = options if options is not None else ClaudeAgentOptions(**settings)
        hooks = dict(base.hooks or {})
        hooks["PreToolUse"] = [*self.hook_matchers(), *hooks.get("PreToolUse", [])]
        return replace(base, hooks=hooks, can_use_tool=self.can_use_tool)


def justified_tool(sdk_tool: SdkMcpTool[Any]) -> SdkMcpTool[Any]:
    """An in-process SDK tool whose schema requires ``justification`` (the handler never receives it)."""
    justified = justified_schema(_json_schema(sdk_tool.input_schema), sdk_tool.name)
    handler = sdk_tool.handler

    async def without_justification(args: Any) -> dict[str, Any]:
        clean = split_justification(args)[0] if isinstance(args, Mapping) else args
        return await handler(clean)

    return SdkMcpTool(sdk_tool.name, sdk_tool.description, justified, without_justification, sdk_tool.annotations)


def _json_schema(input_schema: Any) -> dict[str, Any]:
    """The JSON Schema the SDK would send for a tool's declared ``input_schema``."""
    if isinstance(input_schema, Mapping) and isinstance(input_schema.get("type"), str) and "properties" in input_schema:
        return dict(input_schema)
    try:  # a {name: type} mapping or a TypedDict: as the SDK itself turns it into JSON Schema
        from claude_agent_sdk import _build_input_schema
    except ImportError:  # pragma: no cover - depends on the SDK's version
        raise UsageError("justified_tool needs the tool's input_schema as a JSON Schema object") from None
    return dict(_build_input_schema(SdkMcpTool("probe", "", input_schema, _never)))


async def _never(args: Any) -> dict[str, Any]:  # pragma: no cover - never called
    raise AssertionError
