"""CrewAI: every tool call of a crew checked before it runs, through CrewAI's tool-call hooks.

``CrewGuard(validator)`` runs a crew on the user's words: ``guard.kickoff(crew, "Pay the invoice from
Acme", inputs=...)``. While that kickoff runs, and only for it (CrewAI's execution-scoped hooks: nothing is
registered process-wide), a ``PRE_TOOL_CALL`` hook decides each call and a ``POST_TOOL_CALL`` hook keeps
what the tool returned:

- **The conversation** is the user's words given to ``kickoff`` (the one user message: a task's
  description is the application's text, and a task's context is an earlier agent's output, so neither
  speaks for the user), then each tool call the crew made and what it returned, in order. An email a
  tool read is a tool's words, never the user's.
- **No justification argument**: CrewAI tools carry their own schemas, so the validator finds the user's
  words itself (``find_evidence``, the README's "Evidence without a justification"). A tool whose schema
  has a ``justification`` argument has it read and stripped before the tool runs.
- **A refused call** does not run: the hook aborts it (``HookAborted``), and the agent reads the refusal
  (the verdict's message for the agent) as the tool's result, in place of CrewAI's generic "blocked" line.
- **An ``ask_user``** goes to ``ask`` (called with the approval request; it returns the person's answer:
  ``True``/``False`` or a Review), and the answer is recorded; without ``ask`` the call does not run.

Any failure of ours refuses the call: CrewAI logs and ignores a hook's other exceptions (the call would
run), so the hooks catch every one and abort.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from validator.extras import missing_extra

try:
    from crewai.hooks.dispatch import HookAborted, InterceptionPoint, register_scoped, scoped_hooks
    from crewai.hooks.tool_hooks import ToolCallHookContext
except ImportError as exc:
    raise missing_extra("crewai", "validator.integrations.crewai", exc) from None
from validator.integrations._lifecycle import Ask, Outcome, ToolCallGuard

from validator.engine import BaseValidator, Validator
from validator.exceptions import UsageError
from validator.inputs.checkinput import parse_transcript
from validator.verdict import Verdict
from validator.verdict.refusals import hook_failed

__all__ = ["CrewGuard"]

SOURCE = "action-validator"
"""How CrewAI's hook telemetry names this hook when it aborts a call."""


@dataclass
class _Kickoff:
    """One kickoff's conversation: the user's words, then each tool call and what it returned."""

    request: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[int, tuple[str, Verdict]] = field(default_factory=dict)
    """Calls decided and not returned yet, by their input's identity (CrewAI hands the after hook the very dict
    it handed the before hook): the call id and the verdict."""
    ids: Any = field(default_factory=lambda: itertools.count(1))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.messages.append({"role": "user", "content": self.request})

    def transcript(self) -> Any:
        with self.lock:
            return parse_transcript(list(self.messages))

    def called(self, tool: str, args: Mapping[str, Any]) -> str:
        with self.lock:
            call_id = f"crewai-{next(self.ids)}"
            call = {"id": call_id, "name": tool, "args": dict(args)}
            self.messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            return call_id

    def returned(self, call_id: str, tool: str, text: str) -> None:
        with self.lock:
            self.messages.append({"role": "tool", "tool_call_id": call_id, "name": tool, "content": text})


class CrewGuard:
    """Validates a CrewAI crew's tool calls; see the module docstring. ``ask``: the person, for ``ask_user``."""

    def __init__(
        self, validator: BaseValidator | None = None, *, user_id: str | None = None, ask: Ask | None = None
    ) -> None:
        self.validator = validator or Validator()
        self.guard = ToolCallGuard(self.validator)
        self.user_id = user_id
        self.ask = ask

    def kickoff(self, crew: Any, request: str, *, inputs: Mapping[str, Any] | None = None) -> Any:
        """``crew.kickoff(inputs=inputs)`` with every tool call checked against ``request``, the user's words."""
        if not isinstance(request, str) or not request.strip():
            raise UsageError("request: the user's words are required (a non-empty string)")
        run = _Kickoff(request)
        with scoped_hooks():
            register_scoped(InterceptionPoint.PRE_TOOL_CALL, lambda ctx: self._before(run, ctx))
            register_scoped(InterceptionPoint.POST_TOOL_CALL, lambda ctx: self._after(run, ctx))
            return crew.kickoff(inputs=dict(inputs or {}))

    def _decided(self, run: _Kickoff, ctx: ToolCallHookContext) -> tuple[str, Outcome]:
        args = dict(ctx.tool_input)
        transcript = run.transcript()  # before the call: what the user and the tools had said
        call_id = run.called(ctx.tool_name, {k: v for k, v in args.items() if k != "justification"})
        call = self.guard.start(
            ctx.tool_name,
            args,
            call_id=call_id,
            messages=transcript,
            user_id=self.user_id,
            find_evidence="justification" not in args,
        )
        if call.refusal is not None:
            return call_id, self.guard.outcome(call, call.refusal)
        return call_id, self.guard.run(call, self.ask)

    def _before(self, run: _Kickoff, ctx: ToolCallHookContext) -> None:
        call_id = ""
        try:
            call_id, outcome = self._decided(run, ctx)
        except Exception as exc:  # never an approval by failure (CrewAI would run the call past an exception)
            outcome = Outcome(Verdict.blocked(ctx.tool_name, hook_failed(repr(exc))))
        with run.lock:
            run.pending[id(ctx.tool_input)] = (call_id, outcome.verdict)
        if not outcome.runs:
            raise HookAborted(outcome.verdict.message_for_agent(), source=SOURCE)
        ctx.tool_input.clear()  # in place (CrewAI runs this dict): the checked arguments, justification stripped
        ctx.tool_input.update(outcome.args)

    def _after(self, run: _Kickoff, ctx: ToolCallHookContext) -> str | None:
        with run.lock:
            call_id, verdict = run.pending.pop(id(ctx.tool_input), ("", None))
        if verdict is None:  # a call this guard never saw: nothing to replace
            return None
        text = str(ctx.tool_result or "") if verdict.approved else verdict.message_for_agent()
        if call_id:
            run.returned(call_id, ctx.tool_name, text)
        return None if verdict.approved else text
