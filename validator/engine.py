"""The pipeline: policy, justification, evidence gate, judge, decision, record.

Key components:

- :class:`Validator`: holds the policy, the judge, the recorder and the authorization store, and
  validates pending actions (``validate`` / ``avalidate`` / ``check``).
- :func:`validate`, :func:`avalidate`, :func:`check`: one-call forms with the embedded defaults
  (empty policy, strict judge, in-memory recorder).

Typical usage::

    from validator import Validator, Policy, ToolPolicy

    v = Validator(Policy({"send_email": ToolPolicy(targets=("to",))}))
    verdict = v.validate(messages, {"tool": "send_email", "args": {...}, "justification": {...}})
    if verdict.approved:
        ...

Fail closed: every path that is not a clean approval returns a non-approving verdict. A judge
that raises, times out, or answers something unusable is retried once, then the action is
blocked with ``JUDGE_UNAVAILABLE``; a bug in this library blocks with ``INTERNAL_ERROR``; a
recorder that cannot record turns an approval into ``RECORDER_UNAVAILABLE``. Only bad input raises
(:class:`~validator.exceptions.InputError`), before anything is judged.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from .action import AuthorizationEvidence, PendingAction, parse_justification
from .authorizations import AuthorizationStore, StandingAuthorization
from .checkinput import CheckInput, parse_action, parse_transcript
from .exceptions import FieldProblem, InputError, JudgeError, JudgeOutputError, JudgeTimeout, StoreError
from .gate import Resolved, run_gate
from .judge import Judge, JudgeOutput, JudgeRequest
from .policy import Policy, PolicySettings, ToolPolicy
from .recorder import AuditEvent, MemoryRecorder, Recorder, hash_args
from .store.reuse import VerdictReuse
from .strict import StrictJudge
from .transcript import Transcript
from .verdict import Code, Decision, Usage, Verdict

__all__ = ["Validator", "ValidatorConfig", "avalidate", "check", "validate"]

log = logging.getLogger("validator")

_EXECUTOR = ThreadPoolExecutor(max_workers=16, thread_name_prefix="validator-judge")


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, kw_only=True)
class ValidatorConfig:
    """How the engine runs judges."""

    judge_timeout: float | None = 60.0
    """Seconds one judge attempt may take; None waits forever (not recommended)."""
    judge_attempts: int = 2
    """Attempts before ``JUDGE_UNAVAILABLE``: the first call and one retry."""
    clock: Callable[[], datetime] = _utcnow
    """Current time (standing authorizations expire against it)."""


def _control_flow(exc: BaseException) -> bool:
    """A host framework's control-flow signal (LangGraph's GraphBubbleUp and its interrupts): never an error
    to turn into a verdict, always re-raised. Matched by name, since the core imports no framework."""
    return any(cls.__name__ == "GraphBubbleUp" for cls in type(exc).__mro__)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, JudgeError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def decide(output: JudgeOutput, tool_policy: ToolPolicy, settings: PolicySettings) -> tuple[Decision, Code]:
    """Decision policy: dangerous needs high confidence; unsure verdicts follow ``settings.low_confidence``."""
    unsure = Decision.ASK_USER if settings.low_confidence == "ask_user" else Decision.BLOCK
    if output.approved:
        if not (output.confidence == "high" or (output.confidence == "medium" and tool_policy.risk == "general")):
            return unsure, Code.LOW_CONFIDENCE
        if output.quality_notes and settings.quality == "ask_user":  # opt-in: quality may hold an action back
            return Decision.ASK_USER, Code.QUALITY_CONCERN
        return Decision.APPROVE, Code.APPROVED
    code = output.code or Code.JUDGE_REJECTED
    if output.escalate and tool_policy.risk == "general":
        return Decision.ASK_USER, code
    if output.confidence == "low":
        return unsure, code
    return Decision.BLOCK, code


class Validator:
    """Validates pending actions against a transcript; see the module docstring."""

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        judge: Judge | None = None,
        recorder: Recorder | None = None,
        authorizations: AuthorizationStore | None = None,
        reuse: VerdictReuse | None = None,
        config: ValidatorConfig | None = None,
    ) -> None:
        self._policy_given = policy is not None
        self.policy = policy if policy is not None else Policy()
        self.reuse = reuse
        self.judge: Judge = judge if judge is not None else StrictJudge()
        self.recorder: Recorder = recorder if recorder is not None else MemoryRecorder()
        self.authorizations = authorizations
        self.config = config or ValidatorConfig()

    # -- public API -------------------------------------------------------------------------

    def validate(
        self,
        messages: Any,
        action: Any,
        *,
        user_id: str | None = None,
        agent_request: Mapping[str, Any] | None = None,
    ) -> Verdict:
        """Validate one pending action. Raises :class:`InputError` on bad input, never approves on failure.

        ``agent_request`` is the agent's last Anthropic Messages request (its JSON body): a judge
        that can shares its prompt cache. With it, ``messages`` may be None: the transcript is
        then read from the request.
        """
        started = time.perf_counter()
        transcript, pending = _transcript(messages, agent_request), _action(action)
        try:
            step = self._prepare(transcript, pending, user_id, self._resolve(pending), agent_request)
            verdict = step if isinstance(step, Verdict) else self._judged_sync(step)
        except Exception as exc:
            if _control_flow(exc):
                raise
            verdict = self._internal_error(pending, exc)
        verdict = replace(verdict, latency_ms=(time.perf_counter() - started) * 1000)
        try:
            self.recorder.record(self._event(transcript, pending, user_id, verdict))
        except Exception as exc:
            return self._not_recorded(verdict, exc)
        return verdict

    async def avalidate(
        self,
        messages: Any,
        action: Any,
        *,
        user_id: str | None = None,
        agent_request: Mapping[str, Any] | None = None,
    ) -> Verdict:
        """Async twin of :meth:`validate`."""
        started = time.perf_counter()
        transcript, pending = _transcript(messages, agent_request), _action(action)
        try:
            resolved = await self._aresolve(pending)
            step = self._prepare(transcript, pending, user_id, resolved, agent_request)
            verdict = step if isinstance(step, Verdict) else await self._judged_async(step)
        except Exception as exc:
            if _control_flow(exc):
                raise
            verdict = self._internal_error(pending, exc)
        verdict = replace(verdict, latency_ms=(time.perf_counter() - started) * 1000)
        try:
            await self.recorder.arecord(self._event(transcript, pending, user_id, verdict))
        except Exception as exc:
            return self._not_recorded(verdict, exc)
        return verdict

    def check(
        self, data: CheckInput | Mapping[str, Any] | str | bytes, *, agent_request: Mapping[str, Any] | None = None
    ) -> Verdict:
        """Validate a standalone check input (JSON text, parsed JSON, or :class:`CheckInput`).

        The input's own ``policy`` applies only when this validator was built without one.
        """
        item = _as_input(data)
        return self._with_policy(item).validate(
            item.transcript, item.action, user_id=item.user_id, agent_request=agent_request
        )

    async def acheck(
        self, data: CheckInput | Mapping[str, Any] | str | bytes, *, agent_request: Mapping[str, Any] | None = None
    ) -> Verdict:
        """Async twin of :meth:`check`."""
        item = _as_input(data)
        return await self._with_policy(item).avalidate(
            item.transcript, item.action, user_id=item.user_id, agent_request=agent_request
        )

    def answer(
        self,
        verdict: Verdict,
        approved: bool,
        reason: str | None = None,
        *,
        messages: Any,
        action: Any,
        user_id: str | None = None,
    ) -> Verdict:
        """Record the user's answer to an ``ask_user`` verdict and return the decided verdict."""
        decided = verdict.answered_by_user(approved, reason)
        transcript, pending = parse_transcript(messages), parse_action(action)
        try:
            self.recorder.record(self._event(transcript, pending, user_id, decided))
        except Exception as exc:
            return self._not_recorded(decided, exc)
        return decided

    # -- shared pure steps ------------------------------------------------------------------

    def _with_policy(self, item: CheckInput) -> Validator:
        if item.policy is None or self._policy_given:  # the operator's policy always wins
            return self
        return Validator(
            item.policy,
            judge=self.judge,
            recorder=self.recorder,
            authorizations=self.authorizations,
            reuse=self.reuse,
            config=self.config,
        )

    @staticmethod
    def _cited(action: PendingAction) -> list[str]:
        justification, _ = parse_justification(action.justification)
        if justification is None:
            return []
        return [e.authorization_id for e in justification.evidence if isinstance(e, AuthorizationEvidence)]

    def _resolve(self, action: PendingAction) -> Resolved:
        """Look up every cited standing authorization; a store failure counts as unavailable, never as valid."""
        resolved: dict[str, StandingAuthorization | StoreError | None] = {}
        for auth_id in self._cited(action):
            if self.authorizations is None:
                resolved[auth_id] = None
                continue
            try:
                resolved[auth_id] = self.authorizations.get(auth_id)
            except StoreError as exc:
                resolved[auth_id] = exc
            except Exception as exc:
                resolved[auth_id] = StoreError(_describe(exc))
        return resolved

    async def _aresolve(self, action: PendingAction) -> Resolved:
        """Async twin of :meth:`_resolve`: the store's async reads when it has them."""
        store = self.authorizations
        aget = getattr(store, "aget", None)
        if store is None or aget is None:
            return await asyncio.to_thread(self._resolve, action) if self._cited(action) else {}
        resolved: dict[str, StandingAuthorization | StoreError | None] = {}
        for auth_id in self._cited(action):
            try:
                resolved[auth_id] = await aget(auth_id)
            except StoreError as exc:
                resolved[auth_id] = exc
            except Exception as exc:
                resolved[auth_id] = StoreError(_describe(exc))
        return resolved

    def _prepare(
        self,
        transcript: Transcript,
        action: PendingAction,
        user_id: str | None,
        resolved: Resolved,
        agent_request: Mapping[str, Any] | None = None,
    ) -> Verdict | JudgeRequest:
        tool_policy = self.policy.for_tool(action.tool)
        if tool_policy.exempt:
            return Verdict(
                approved=True,
                decision=Decision.APPROVE,
                code=Code.EXEMPT,
                confidence="high",
                reasoning=f"`{action.tool}` is exempt by policy: it stays between the agent and the user. "
                "No judge ran.",
                tool=action.tool,
                risk=tool_policy.risk,
                exempt=True,
            )
        gate = run_gate(
            transcript,
            action,
            tool_policy,
            self.policy.settings,
            user_id=user_id,
            resolved=resolved,
            now=self.config.clock(),
        )
        if gate.code is not None or gate.justification is None:
            return Verdict(
                approved=False,
                decision=Decision.BLOCK,
                code=gate.code or Code.MISSING_JUSTIFICATION,
                confidence="high",
                reasoning=gate.reasoning,
                suggested_next_step=gate.suggested_next_step,
                tool=action.tool,
                risk=tool_policy.risk,
                findings=gate.findings,
            )
        return JudgeRequest(
            transcript=transcript,
            action=action,
            justification=gate.justification,
            tool_policy=tool_policy,
            policy=self.policy,
            findings=gate.findings,
            user_id=user_id,
            agent_request=agent_request,
        )

    def _finish(self, request: JudgeRequest, output: JudgeOutput, errors: list[str], spent: list[Usage]) -> Verdict:
        decision, code = decide(output, request.tool_policy, self.policy.settings)
        reasoning, next_step = output.reasoning, output.suggested_next_step
        if code is Code.QUALITY_CONCERN:
            reasoning += (
                " [Approved, but held for the user because of quality notes: " + "; ".join(output.quality_notes) + "]"
            )
            next_step = next_step or "Show the user the quality notes and ask them to confirm."
        if code is Code.LOW_CONFIDENCE:
            reasoning += (
                f" [The judge approved with {output.confidence} confidence; a {request.tool_policy.risk} action "
                f"needs {'high' if request.tool_policy.risk == 'dangerous' else 'at least medium'}.]"
            )
            next_step = next_step or f"Ask the user to confirm `{request.action.tool}`."
        findings = request.findings
        if output.intent is not None:
            findings = replace(findings, intent=output.intent)
        return Verdict(
            approved=decision is Decision.APPROVE,
            decision=decision,
            code=code,
            reasoning=reasoning,
            confidence=output.confidence,
            suggested_next_step=None if decision is Decision.APPROVE else next_step,
            tool=request.action.tool,
            risk=request.tool_policy.risk,
            findings=findings,
            judge=self.judge.label,
            usage=_total([*spent, output.usage] if output.usage else spent),
            judge_errors=tuple(errors),
            quality_notes=output.quality_notes,
        )

    def _checked(self, output: object) -> JudgeOutput:
        if not isinstance(output, JudgeOutput):
            raise JudgeOutputError(self.judge.label, f"returned {type(output).__name__}, not JudgeOutput")
        problems = output.contradictions()
        if problems:
            error = JudgeOutputError(self.judge.label, "; ".join(problems))
            error.usage = output.usage
            raise error
        return output

    def _unavailable(self, request: JudgeRequest, errors: list[str], spent: list[Usage]) -> Verdict:
        return Verdict(
            approved=False,
            decision=Decision.BLOCK,
            code=Code.JUDGE_UNAVAILABLE,
            confidence="low",
            reasoning=(
                f"The judge could not decide after {len(errors)} attempts, so the action is blocked: "
                + " | ".join(errors)
            ),
            suggested_next_step="Try again later, or ask the user to confirm the action directly.",
            tool=request.action.tool,
            risk=request.tool_policy.risk,
            findings=request.findings,
            judge=self.judge.label,
            usage=_total(spent),
            judge_errors=tuple(errors),
        )

    def _internal_error(self, action: PendingAction, exc: Exception) -> Verdict:
        log.exception("validator internal error while checking %s", action.tool)
        risk = self.policy.tools[action.tool].risk if action.tool in self.policy.tools else "general"
        return Verdict.blocked(
            action.tool,
            f"The validator failed while checking this action, so it is blocked: {_describe(exc)}",
            risk=risk,
            suggested_next_step="Report this to the developers; ask the user to confirm the action directly.",
        )

    def _event(
        self, transcript: Transcript, action: PendingAction, user_id: str | None, verdict: Verdict
    ) -> AuditEvent:
        return AuditEvent(
            time=self.config.clock(),
            user_id=user_id,
            tool=action.tool,
            args_hash=hash_args(action.args),
            transcript_hash=transcript.digest,
            policy_version=self.policy.version,
            verdict=verdict,
        )

    def _not_recorded(self, verdict: Verdict, exc: Exception) -> Verdict:
        log.error("verdict for %s could not be recorded: %s", verdict.tool, _describe(exc))
        if not verdict.approved:
            return verdict
        return replace(
            verdict,
            approved=False,
            decision=Decision.BLOCK,
            code=Code.RECORDER_UNAVAILABLE,
            reasoning=f"The action was approved but the verdict could not be recorded ({_describe(exc)}); "
            "an unrecorded action does not run.",
            suggested_next_step="Try again once the audit store is reachable.",
        )

    # -- judge calls: the only I/O ---------------------------------------------------------

    def _judged_sync(self, request: JudgeRequest) -> Verdict:
        """The judge's verdict, or the one judged earlier for this very action (verdict reuse)."""
        if self.reuse is None:
            return self._judge_sync(request)
        key = self.reuse.key(request, self.policy.version, self.judge.label)
        verdict = self.reuse.get(key)
        if verdict is None:
            verdict = self._judge_sync(request)
            self.reuse.put(key, verdict)
        return verdict

    async def _judged_async(self, request: JudgeRequest) -> Verdict:
        if self.reuse is None:
            return await self._judge_async(request)
        key = self.reuse.key(request, self.policy.version, self.judge.label)
        verdict = await self.reuse.aget(key)
        if verdict is None:
            verdict = await self._judge_async(request)
            await self.reuse.aput(key, verdict)
        return verdict

    def _judge_sync(self, request: JudgeRequest) -> Verdict:
        errors: list[str] = []
        spent: list[Usage] = []
        timeout = self.config.judge_timeout
        for _ in range(max(1, self.config.judge_attempts)):
            try:
                if not self.judge.blocking or timeout is None:
                    output = self.judge.judge(request)
                else:
                    # The caller's context (tracing, the host framework's callbacks) goes with the call.
                    future = _EXECUTOR.submit(contextvars.copy_context().run, self.judge.judge, request)
                    try:
                        output = future.result(timeout=timeout)
                    except FutureTimeout:
                        future.cancel()
                        raise JudgeTimeout(self.judge.label, timeout) from None
                return self._finish(request, self._checked(output), errors, spent)
            except Exception as exc:
                if _control_flow(exc):
                    raise
                errors.append(_describe(exc))
                _note_usage(exc, spent)
        return self._unavailable(request, errors, spent)

    async def _judge_async(self, request: JudgeRequest) -> Verdict:
        errors: list[str] = []
        spent: list[Usage] = []
        timeout = self.config.judge_timeout
        for _ in range(max(1, self.config.judge_attempts)):
            try:
                try:
                    output = await asyncio.wait_for(self.judge.ajudge(request), timeout)
                except TimeoutError:
                    raise JudgeTimeout(self.judge.label, timeout or 0) from None
                return self._finish(request, self._checked(output), errors, spent)
            except Exception as exc:
                if _control_flow(exc):
                    raise
                errors.append(_describe(exc))
                _note_usage(exc, spent)
        return self._unavailable(request, errors, spent)


def _transcript(messages: Any, agent_request: Mapping[str, Any] | None) -> Transcript:
    try:
        if messages is None and agent_request is not None:
            return Transcript.from_anthropic(agent_request.get("messages") or [], system=agent_request.get("system"))
        return parse_transcript(messages)
    except InputError:
        raise
    except Exception as exc:  # input of a shape no parser expected: still a typed error, never a crash
        raise InputError([FieldProblem("messages", f"cannot be read: {type(exc).__name__}: {exc}")]) from exc


def _action(action: Any) -> PendingAction:
    try:
        return parse_action(action)
    except InputError:
        raise
    except Exception as exc:
        raise InputError([FieldProblem("action", f"cannot be read: {type(exc).__name__}: {exc}")]) from exc


def _note_usage(exc: Exception, spent: list[Usage]) -> None:
    usage = getattr(exc, "usage", None)
    if isinstance(usage, Usage):
        spent.append(usage)


def _total(usages: list[Usage]) -> Usage | None:
    """Usage summed over the attempts (a retried call is billed too), or None when no model answered."""
    if not usages:
        return None
    total = usages[0]
    for u in usages[1:]:
        total = total + u
    return total


def _as_input(data: CheckInput | Mapping[str, Any] | str | bytes) -> CheckInput:
    if isinstance(data, CheckInput):
        return data
    if isinstance(data, str | bytes):
        return CheckInput.from_json(data)
    return CheckInput.from_dict(dict(data))


def validate(
    messages: Any,
    action: Any,
    *,
    policy: Policy | None = None,
    user_id: str | None = None,
    judge: Judge | None = None,
) -> Verdict:
    """Validate one pending action with the embedded defaults (strict judge, in-memory recorder)."""
    return Validator(policy, judge=judge).validate(messages, action, user_id=user_id)


async def avalidate(
    messages: Any,
    action: Any,
    *,
    policy: Policy | None = None,
    user_id: str | None = None,
    judge: Judge | None = None,
) -> Verdict:
    """Async twin of :func:`validate`."""
    return await Validator(policy, judge=judge).avalidate(messages, action, user_id=user_id)


def check(
    data: CheckInput | Mapping[str, Any] | str | bytes, *, policy: Policy | None = None, judge: Judge | None = None
) -> Verdict:
    """Validate a standalone check input; ``policy`` overrides the input's own."""
    return Validator(policy, judge=judge).check(data)
