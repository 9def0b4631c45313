"""Google ADK: a plugin (or an agent's ``before_tool_callback``) that validates every tool call before it runs.

``ValidatorPlugin(validator)`` goes on the ``Runner`` (``plugins=[...]``) and covers every agent it runs;
``AdkGuard(validator).before_tool_callback`` goes on one ``LlmAgent``. Both translate ADK's shapes to the host
lifecycle (:mod:`validator.integrations._lifecycle`):

- **The conversation** is the session's events (:func:`transcript_from_adk`): text the ``user`` author wrote is
  the user's; the model's text and function calls are the assistant's; function responses are the tools'
  words. ADK's own confirmation exchange (``adk_request_confirmation``) is left out.
- **The justification**: :class:`JustifiedFunctionTool` (or :func:`justified`) adds the required
  ``justification`` argument to a function tool's declaration; the function never receives it. A tool whose
  declaration the application cannot extend (another toolset's, an MCP tool) is checked with
  ``find_evidence``: the validator reads the user's own words for the request itself.
- **The answer**: approve → the tool runs (``justification`` stripped from its arguments); block → the call
  is answered with ``{"error": <refusal text, its code and next step>}``, which the model reads; ask_user →
  ADK's tool confirmation (``tool_context.request_confirmation``): the run ends with an
  ``adk_request_confirmation`` call, and the client's answer (``{"confirmed": true|false}``, optionally
  ``payload={"reason": ..., "remember": {...}}``) resumes the call, recorded through :meth:`Validator.answer`.
- Any failure of ours answers the call with an error: the tool never runs on it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from validator.extras import missing_extra

try:
    from google.adk.plugins.base_plugin import BasePlugin
    from google.adk.sessions.session import Session
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.function_tool import FunctionTool
    from google.adk.tools.tool_context import ToolContext
    from google.genai import types
except ImportError as exc:
    raise missing_extra("google-adk", "validator.integrations.google_adk", exc) from None
from validator.integrations._host import JUSTIFICATION, justified_schema
from validator.integrations._lifecycle import GuardedCall, ToolCallGuard
from validator.integrations._review import Review

from validator._json import dumps
from validator.engine import BaseValidator, Validator
from validator.exceptions import UsageError
from validator.inputs.transcript import Message, ToolCall, Transcript
from validator.verdict import Decision, Verdict

__all__ = ["AdkGuard", "JustifiedFunctionTool", "ValidatorPlugin", "justified", "transcript_from_adk"]

CONFIRMATION = "adk_request_confirmation"
"""The function ADK's tool confirmation goes through (its call and its answer are not the conversation's)."""


def _response_text(response: Any) -> str:
    return response if isinstance(response, str) else dumps(response, default=str)


def transcript_from_adk(session: Session, *, pending: str | None = None) -> Transcript:
    """A validator transcript from an ADK session's events. ``pending``: the id of the call being decided, whose
    placeholder answer (the one a confirmation left) is not an answer yet."""
    messages: list[Message] = []
    names: dict[str, str] = {}
    for event in session.events:
        content = event.content
        if content is None or not content.parts:
            continue
        texts: list[str] = []
        calls: list[ToolCall] = []
        for part in content.parts:
            if part.function_call is not None:
                call = part.function_call
                if call.name == CONFIRMATION:
                    continue
                call_id = call.id or f"call_{len(names)}"
                names[call_id] = call.name or ""
                calls.append(ToolCall(call_id, call.name or "", dict(call.args or {})))
            elif part.function_response is not None:
                answer = part.function_response
                if answer.name == CONFIRMATION or (pending is not None and answer.id == pending):
                    continue
                name = answer.name or names.get(answer.id or "", "")
                failed = isinstance(answer.response, Mapping) and "error" in answer.response  # ADK's failed call
                text = _response_text(answer.response)
                messages.append(Message("tool", text, (), answer.id, name or None, None, failed))
            elif part.text and not part.thought:
                texts.append(part.text)
        if event.author == "user" and content.role == "user":
            if texts:
                messages.append(Message(role="user", content="\n".join(texts)))
        elif texts or calls:
            messages.append(Message(role="assistant", content="\n".join(texts), tool_calls=tuple(calls)))
    return Transcript(messages)


def _refused(verdict: Verdict) -> dict[str, Any]:
    return {"error": verdict.message_for_agent()}


class AdkGuard:
    """The validation of an ADK agent's tool calls; see the module docstring."""

    def __init__(self, validator: BaseValidator | None = None, *, find_evidence: bool = True) -> None:
        self.validator = validator or Validator()
        self.guard = ToolCallGuard(self.validator)
        self.find_evidence = find_evidence
        """Whether a call without a justification is read for the user's words (tools the application
        cannot extend); False refuses it with MISSING_JUSTIFICATION, as the other adapters do."""

    def _start(self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> GuardedCall:
        call_id = tool_context.function_call_id or ""
        return self.guard.start(
            tool.name,
            args,
            call_id=call_id,
            messages=lambda: transcript_from_adk(tool_context.session, pending=call_id),
            user_id=lambda: tool_context.user_id,
            find_evidence=self.find_evidence,
        )

    async def before_tool_callback(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """An ``LlmAgent`` ``before_tool_callback``: None runs the tool; a dict answers the call instead."""
        try:
            return await self._decide(tool, args, tool_context)
        except Exception as exc:  # our own failure: the tool never runs on it
            return {"error": f"The action validator failed on this call, so it did not run: {exc!r}"}

    async def _decide(self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any] | None:
        confirmation = tool_context.tool_confirmation
        if confirmation is not None:
            return await self._confirmed(tool, args, tool_context)
        call = self._start(tool, args, tool_context)
        verdict = await self.guard.adecide(call)
        if verdict.decision is Decision.ASK_USER:
            request = self.guard.pose(call, verdict)
            hint = f"The action validator asks you: {verdict.question_for_user()}"
            tool_context.request_confirmation(hint=hint, payload=_plain(request))
            return {"status": "waiting for the user's confirmation", "reason": verdict.reasoning}
        return self._ran(self.guard.outcome(call, verdict).verdict, args)

    async def _confirmed(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """The person's answer to a confirmation this guard asked for, recorded."""
        confirmation = tool_context.tool_confirmation
        assert confirmation is not None
        payload = confirmation.payload if isinstance(confirmation.payload, Mapping) else {}
        reason = payload.get("reason") if isinstance(payload.get("reason"), str) else None
        remember = payload.get("remember")
        if remember is not None and not isinstance(remember, Mapping):
            review = Review(False, "'remember' must be an object: treated as a rejection", unreadable=True)
        else:
            review = Review(bool(confirmation.confirmed), reason, remember=remember)
        outcome = await self.guard.aanswer(tool_context.function_call_id or "", review)
        if outcome is None:  # asked by another process: decided again, and only a question takes the answer
            outcome = await self.guard.arun(self._start(tool, args, tool_context), lambda _: review)
        return self._ran(outcome.verdict, args)

    @staticmethod
    def _ran(verdict: Verdict, args: dict[str, Any]) -> dict[str, Any] | None:
        """None (the tool runs, with the arguments that were checked, without the justification) when the
        verdict approves; else the refusal the model reads."""
        if not verdict.approved:
            return _refused(verdict)
        args.pop(JUSTIFICATION, None)
        return None


class ValidatorPlugin(BasePlugin):
    """The guard as an ADK plugin: every tool call of every agent the ``Runner`` runs is validated."""

    def __init__(
        self, validator: BaseValidator | None = None, *, name: str = "action_validator", find_evidence: bool = True
    ) -> None:
        super().__init__(name=name)
        self.adk_guard = AdkGuard(validator, find_evidence=find_evidence)

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        return await self.adk_guard.before_tool_callback(tool, tool_args, tool_context)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class JustifiedFunctionTool(FunctionTool):
    """A function tool whose declaration requires ``justification`` (the function never receives it)."""

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        declaration = super()._get_declaration()
        if declaration is None:
            return None
        schema = declaration.parameters_json_schema
        if not isinstance(schema, Mapping):
            raise UsageError(f"tool {self.name!r}: its declaration has no JSON schema to add the justification to")
        return declaration.model_copy(update={"parameters_json_schema": justified_schema(schema, self.name)})


def justified(func: Any) -> JustifiedFunctionTool:
    """A plain function as a :class:`JustifiedFunctionTool`."""
    return JustifiedFunctionTool(func)
