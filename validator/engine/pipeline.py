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

The engine only orchestrates; each step lives in its stage: :mod:`validator.inputs` (typed
transcript and action), :mod:`validator.gate` (authorization lookup and the evidence gate),
:mod:`validator.judges` (the judge call, its time limit and retry), :mod:`validator.state.reuse`,
:mod:`validator.decision` (every verdict) and :mod:`validator.record`.

Fail closed: every path that is not a clean approval returns a non-approving verdict. A judge
that raises, times out, or answers something unusable is retried once, then the action is
blocked with ``JUDGE_UNAVAILABLE``; a bug in this library blocks with ``INTERNAL_ERROR``; a
recorder that cannot record turns an approval into ``RECORDER_UNAVAILABLE``. Only bad input raises
(:class:`~validator.exceptions.InputError`), before anything is judged.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from contextlib import AbstractContextManager
from dataclasses import replace
from functools import partial
from typing import Any, TypedDict, Unpack, cast

import msgspec

from validator import decision
from validator.decision import Judged
from validator.engine.answers import answering
from validator.engine.base import (
    ActionInput,
    AnswerOptions,
    BaseValidator,
    CallOptions,
    CheckData,
    CheckOptions,
    MessagesInput,
    ValidatorConfig,
)
from validator.engine.plan import CheckPlan
from validator.exceptions import StoreError, is_control_flow
from validator.findings import CheckFinding, Findings
from validator.gate.authorizations import Resolved
from validator.gate.checks import run_gate
from validator.gate.egress import egress
from validator.inputs.action import PendingAction
from validator.inputs.anthropic import conversations as anthropic_conversations
from validator.inputs.checkinput import CheckInput, read_action, read_messages
from validator.inputs.held import NamedInputs, RecentInputs
from validator.inputs.held import check_input as held_input
from validator.inputs.transcript import Transcript
from validator.judges.base import Judge, JudgeRequest
from validator.judges.runner import Attempts, JudgeLimits, describe, judging
from validator.judges.strict import StrictJudge
from validator.policy import Policy
from validator.record import lastresort
from validator.record.recorder import AuditEvent, MemoryRecorder, Recorder
from validator.shells import Io, Steps, arun, run
from validator.state import ledger
from validator.state.keys import cited_ids
from validator.state.ledger import spend
from validator.state.lookup import aresolve, resolve, standing, with_standing
from validator.state.retrycap import count_block, over_cap
from validator.state.reuse import VerdictReuse
from validator.store.base import (
    AuthorizationStore,
    ReadAhead,
    RequestLedger,
    SpendLost,
    VerdictCache,
)
from validator.store.memory import MemoryLedger
from validator.telemetry import CheckSpan
from validator.text.search import SearchBudgetExceeded
from validator.verdict import Verdict

__all__ = ["Defaults", "Validator", "avalidate", "check", "validate"]

log = logging.getLogger("validator")


class Validator(BaseValidator):
    """Validates pending actions against a transcript; see the module docstring."""

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        judge: Judge | None = None,
        recorder: Recorder | None = None,
        authorizations: AuthorizationStore | None = None,
        reuse: VerdictReuse | None = None,
        ledger: RequestLedger | None = None,
        config: ValidatorConfig | None = None,
    ) -> None:
        super().__init__(policy if policy is not None else Policy(), config or ValidatorConfig())
        self._policy_given = policy is not None
        self.reuse = reuse
        self.judge: Judge = judge if judge is not None else StrictJudge()
        self.recorder: Recorder = recorder if recorder is not None else MemoryRecorder()
        self.authorizations = authorizations
        self.ledger: RequestLedger = ledger if ledger is not None else MemoryLedger()
        """Where spent requests are kept (one request, one dangerous action); in memory by default."""
        self.conversations = NamedInputs(self.config.max_held_bytes)
        """The conversations :meth:`check` holds by name (JSON text only)."""
        self.recent = RecentInputs(max_bytes=self.config.max_held_bytes)
        """The JSON inputs :meth:`check` read lately without a name, found again by their messages' bytes."""
        self.shadow_passes: Counter[tuple[str, str]] = Counter()
        """Shadow mode: actions that ran although refused, by tool and the refusal's code (also in the audit)."""

    # -- public API -------------------------------------------------------------------------

    def validate(self, messages: MessagesInput, action: ActionInput, **options: Unpack[CheckOptions]) -> Verdict:
        """Validate one pending action. Raises :class:`InputError` on bad input, never approves on failure.

        ``agent_request`` is the agent's last Anthropic Messages request (its JSON body): a judge
        that can shares its prompt cache. With it, ``messages`` may be None: the transcript is
        then read from the request.

        ``edited`` names the argument paths (``to``, ``message.channel``) a person set by editing this call
        in the host's own human-in-the-loop step: their values count as the user's words (unless the
        user's words forbid them); everything else is checked as for any call. Only a host passes it,
        never anything the agent wrote.
        """
        with self._traced() as span:
            verdict = run(self._checked(messages, action, options))
            span.done(verdict, _call_id(action))
            return verdict

    async def avalidate(self, messages: MessagesInput, action: ActionInput, **options: Unpack[CheckOptions]) -> Verdict:
        """Async twin of :meth:`validate`: the same steps (:mod:`validator.shells`), async I/O."""
        with self._traced() as span:
            verdict = await arun(self._checked(messages, action, options))
            span.done(verdict, _call_id(action))
            return verdict

    def prepare(
        self,
        messages: MessagesInput,
        action: ActionInput,
        *,
        user_id: str | None = None,
        agent_request: Mapping[str, Any] | None = None,
    ) -> JudgeRequest | Verdict:
        """What the judge would be asked for this action, or the verdict decided before any judge
        (exempt, or refused by the gate). Nothing is judged or recorded: for tests and tooling."""
        transcript, pending = read_messages(messages, agent_request), read_action(action)
        resolved = resolve(self.authorizations, cited_ids(pending))
        return self._step(transcript, pending, user_id, resolved, agent_request)

    def check(
        self, data: CheckData, *, agent_request: Mapping[str, Any] | None = None, conversation: str | None = None
    ) -> Verdict:
        """Validate a standalone check input (JSON text, parsed JSON, or :class:`CheckInput`).

        The input's own ``policy`` applies only when this validator was built without one.

        ``conversation``: the host's name for the conversation of JSON text that holds its whole history
        each time (a stateless server): the messages the conversation's last check already read, byte for
        byte, are not parsed, checked or indexed again (:mod:`validator.inputs.held`); the verdict is the
        whole input's. Ignored for parsed data.
        """
        item = self._input(data, conversation)
        return self._with_policy(item).validate(
            item.transcript, item.action, user_id=item.user_id, agent_request=agent_request
        )

    async def acheck(
        self, data: CheckData, *, agent_request: Mapping[str, Any] | None = None, conversation: str | None = None
    ) -> Verdict:
        """Async twin of :meth:`check`."""
        item = self._input(data, conversation)
        return await self._with_policy(item).avalidate(
            item.transcript, item.action, user_id=item.user_id, agent_request=agent_request
        )

    def answer(
        self, verdict: Verdict, approved: bool, reason: str | None = None, **options: Unpack[AnswerOptions]
    ) -> Verdict:
        """Record the user's answer to an ``ask_user`` verdict on ``action`` and return the decided verdict.

        ``edit`` (with ``approved``): the arguments the user wants the call to run with instead. The edited
        call is a new call, validated as any other (recorded as such), with the arguments the edit changed
        counted as the user's words (:meth:`validate`'s ``edited``): when that check refuses it, the refusal
        stands and nothing runs; otherwise the user's approval decides it, for the edited call, whose
        arguments are then the ones to run. An edit that cannot be read is a rejection saying why.

        With ``remember`` (an approval the user wants kept: ``{"expires_in_days": 30, "quote": "..."}``, both
        optional), a standing authorization scoped to this call's tool and every argument the user saw (the
        edited ones, after an edit) is created in the validator's authorization store, and the verdict
        names it.
        """
        return run(answering(self, verdict, approved, reason, options))

    async def aanswer(
        self, verdict: Verdict, approved: bool, reason: str | None = None, **options: Unpack[AnswerOptions]
    ) -> Verdict:
        """Async twin of :meth:`answer`: the same steps, async I/O (an edit is validated on the async path)."""
        return await arun(answering(self, verdict, approved, reason, options))

    def feedback(
        self, verdict: Verdict, approved: bool, reason: str | None = None, **options: Unpack[CallOptions]
    ) -> None:
        """Record the user's own judgement of an ``approve`` or ``block`` verdict on ``action``: a block they
        overrode (``approved=True``), an approval they say was wrong (``approved=False``). It runs nothing and
        grants nothing; it is an audit record (``APPROVED_BY_USER`` / ``REJECTED_BY_USER`` under the same
        hashes as the verdict), which ``validator eval propose`` turns into a candidate case. An ``ask_user``
        verdict is answered with :meth:`answer` instead.

        Raises:
            UsageError: ``verdict`` asked the user, or is already the user's.
            StoreError: the record was not kept (nothing else depends on it).
        """
        transcript, pending = read_messages(options["messages"]), read_action(options["action"])
        overruled = decision.overruled(verdict, approved, reason)
        event = self._event(transcript, pending, options.get("user_id"), overruled)
        try:
            self.recorder.record(event)
        except Exception as exc:
            raise StoreError(f"the user's feedback was not recorded: {describe(exc)}") from exc

    # -- one check: its steps, written once for both shells ------------------------------------------

    def _traced(self) -> AbstractContextManager[CheckSpan]:
        """The check's span (:mod:`validator.telemetry`), current while it runs: a model judge's call is its child."""
        return self.config.telemetry.check(self.policy, signals=self.config.control_flow)

    def _checked(self, messages: MessagesInput, action: ActionInput, options: CheckOptions) -> Steps[Verdict]:
        """Read, plan, decide, count, shape, record: every path ends in one recorded verdict (bad input raises
        first, before anything is judged)."""
        started = time.perf_counter()
        user_id, agent_request = options.get("user_id"), options.get("agent_request")
        transcript = read_messages(messages, agent_request, self.transcripts.of("anthropic", anthropic_conversations))
        if messages is not None and transcript is not messages:  # parsed afresh: a conversation seen lately?
            transcript = self.transcripts.seen.adopt(transcript, user_id)
        pending, stores, plan = read_action(action), self._stores, None
        try:
            plan = CheckPlan.of(
                transcript,
                pending,
                policy=self.policy,
                judge=self.judge.label,
                reuse=self.reuse is not None,
                user_id=user_id,
                agent_request=agent_request,
                edited=options.get("edited", ()),
                language=self.config.language.digest if self.config.language is not None else "",
            )
            if stores.reads_ahead(plan):  # no effect (no worker thread) for a store that cannot
                stores = yield from Io(partial(stores.opened, plan))
            verdict = yield from self._decided(plan, stores)
        except Exception as exc:
            verdict = self._internal_error(pending, exc)
        if plan is not None:
            yield from Io(partial(count_block, stores.ledger, plan.retry_key, verdict))
        decided, verdict = verdict, self._shaped(verdict, started)
        if not verdict.approved and stores.session is not None:
            stores.session.drop_spends()  # only an approval spends (an "ask: always" spends nothing)
        event = self._event(transcript, pending, user_id, verdict)
        recorder = stores.recorder
        try:
            yield from Io(partial(recorder.record, event), partial(recorder.arecord, event))
            verdict = event.verdict  # with its record's id
        except SpendLost as lost:  # neither spent nor recorded: the refusal it becomes is recorded instead
            if stores.session is not None:
                stores.session.drop_spends()  # a refusal spends nothing (and is spooled if it must be)
            verdict = self._shaped(ledger.lost(decided, lost), started)
            event = self._event(transcript, pending, user_id, verdict)
            try:
                yield from Io(partial(recorder.record, event), partial(recorder.arecord, event))
                verdict = event.verdict
            except Exception as exc:
                verdict = self._not_recorded(event, exc)
        except Exception as exc:
            verdict = self._not_recorded(event, exc)
        if stores.session is not None:
            yield from Io(stores.ended)
        return verdict

    def _decided(self, plan: CheckPlan, stores: _Stores) -> Steps[Verdict]:
        """The standing authorizations, the policy and the gate, the retry cap, then the judge (or the verdict
        judged already for this very action)."""
        store = stores.authorizations
        resolved = yield from Io(partial(resolve, store, plan.cited), partial(aresolve, store, plan.cited))
        found = yield from Io(
            partial(standing, store, plan.action, plan.tool_policy, plan.user_id, self.config.clock())
        )
        pending, resolved = with_standing(plan.action, resolved, found)
        step = self._step(plan.transcript, pending, plan.user_id, resolved, plan.agent_request, plan.edited)
        if isinstance(step, Verdict):
            return step
        count = yield from Io(partial(over_cap, stores.ledger, plan.retry_key, self.config.retry_cap))
        if count is not None:
            return self._capped(step, count)
        reuse, key = stores.reuse, ""
        if reuse is not None:
            # the plan's key, unless standing authorizations were added to what the agent cited
            planned = plan.verdict_key if step.action is plan.action else None
            key = planned or reuse.key(step, self.policy.version, self.judge.label)
            kept = yield from Io(partial(reuse.get, key), partial(reuse.aget, key))
            if kept is not None:
                return (yield from Io(self._spent(kept, step, stores)))
        limits = JudgeLimits(self.config.judge_timeout, self.config.judge_attempts, self.config.control_flow)
        attempts = yield from judging(self.judge, step, limits)
        verdict = self._verdict(step, attempts)
        if reuse is not None:
            yield from Io(partial(reuse.put, key, verdict), partial(reuse.aput, key, verdict))
        return (yield from Io(self._spent(verdict, step, stores)))

    def _spent(self, verdict: Verdict, request: JudgeRequest, stores: _Stores) -> Callable[[], Verdict]:
        """The ledger's step: ``verdict``, or the question to the user when its request was spent already."""
        return partial(spend, verdict, request, stores.ledger, now=self.config.clock(), rules=self.config.rules)

    @property
    def _stores(self) -> _Stores:
        return _Stores(self.authorizations, self.ledger, self.reuse, self.recorder)

    def _input(self, data: CheckData, conversation: str | None) -> CheckInput:
        if conversation is not None and isinstance(data, str | bytes):
            return held_input(self.conversations, conversation, data)
        # JSON text whose messages are those of an input read lately is decoded only for the rest; any input
        # decoded afresh may still be of a conversation checked lately
        item = self.recent.read(data) if isinstance(data, str | bytes) else _as_input(data)
        return dataclasses.replace(item, transcript=self.transcripts.seen.adopt(item.transcript, item.user_id))

    def _with_policy(self, item: CheckInput) -> Validator:
        if item.policy is None or self._policy_given:  # the operator's policy always wins
            return self
        shaped = copy.copy(self)  # the same stores, judge and counts (shadow passes), under the input's policy
        shaped.policy = item.policy
        return shaped

    def _step(
        self,
        transcript: Transcript,
        action: PendingAction,
        user_id: str | None,
        resolved: Resolved,
        agent_request: Mapping[str, Any] | None,
        edited: Collection[str] = (),
    ) -> Verdict | JudgeRequest:
        """Policy and gate: a verdict when the findings decide, else the judge's request."""
        tool_policy = self.policy.for_tool(action.tool)
        if action.call_id and transcript.answered(action.call_id):  # it ran already: this is not a retry of it
            findings = Findings(check=CheckFinding("call_id_reused", action.call_id))
        elif tool_policy.exempt:
            leak = egress(transcript, action.args, user_id, self.config.rules, self.config.language)
            if leak is None:
                return decision.exempt(action.tool, tool_policy.risk)
            findings = Findings(
                check=CheckFinding("egress", leak.path, leak.host, tuple(leak.carried), egress=leak.kind)
            )
        else:
            try:
                findings = run_gate(
                    transcript,
                    action,
                    tool_policy,
                    user_id=user_id,
                    resolved=resolved,
                    now=self.config.clock(),
                    policy=self.policy,
                    budget=self.config.gate_budget,
                    edited=edited,
                    rules=self.config.rules,
                    pack=self.config.language,
                )
            except SearchBudgetExceeded as exc:
                findings = Findings(check=CheckFinding("deadline", str(exc)))
        refused = self._decide(findings, None, action.tool, len(transcript))
        if refused is not None or action.parsed is None:
            return refused or decision.internal_error(action.tool, tool_policy.risk, "no justification to judge")
        return JudgeRequest(
            transcript=transcript,
            action=action,
            justification=action.parsed,
            tool_policy=tool_policy,
            policy=self.policy,
            findings=findings,
            user_id=user_id,
            agent_request=agent_request,
            telemetry=self.config.telemetry,
            language=self.config.language,
        )

    def _decide(self, findings: Findings, judged: Judged | None, tool: str, messages: int) -> Verdict | None:
        return decision.decide(findings, judged, self.policy, tool=tool, messages=messages, rules=self.config.rules)

    # -- the verdicts the steps decide (pure) -------------------------------------------------------

    def _capped(self, request: JudgeRequest, count: int) -> Verdict:
        """The refusal of an action blocked ``retry_cap`` times in this conversation already (no judge call)."""
        findings = replace(request.findings, check=CheckFinding("retry_cap", count=count))
        capped = self._decide(findings, None, request.action.tool, len(request.transcript))
        assert capped is not None  # a finding about the call always refuses
        return capped

    def _verdict(self, request: JudgeRequest, attempts: Attempts) -> Verdict:
        judged = Judged(attempts.output, self.judge.label, attempts.errors, attempts.spent, self.judge.decides)
        return decision.decide(
            request.findings,
            judged,
            self.policy,
            tool=request.action.tool,
            messages=len(request.transcript),
            rules=self.config.rules,
        )

    # -- after the verdict -------------------------------------------------------------------------

    def _shaped(self, verdict: Verdict, started: float) -> Verdict:
        """The verdict as the policy's modes shape it (always/never ask, shadow mode), with its latency, and the
        standing authorization it rests on named."""
        shaped = decision.by_policy(verdict, self.policy.for_tool(verdict.tool), self.policy.settings)
        used = verdict.findings.valid_authorizations
        if shaped.authorization_id is None and used:
            shaped = replace(shaped, authorization_id=used[0].authorization_id)
        if shaped.shadow_of is not None:
            self.shadow_passes[shaped.tool, shaped.shadow_of.value] += 1
            log.warning(
                "shadow mode: %s would have been refused (%s) and runs: %s",
                shaped.tool,
                shaped.shadow_of.value,
                verdict.reasoning,
            )
        return replace(shaped, latency_ms=(time.perf_counter() - started) * 1000)

    def _internal_error(self, action: PendingAction, exc: Exception) -> Verdict:
        if is_control_flow(exc, self.config.control_flow):
            raise exc
        log.exception("validator internal error while checking %s", action.tool)
        return decision.internal_error(action.tool, self.policy.for_tool(action.tool).risk, describe(exc))

    def _event(
        self, transcript: Transcript, action: PendingAction, user_id: str | None, verdict: Verdict
    ) -> AuditEvent:
        return AuditEvent.of(
            time=self.config.clock(),
            user_id=user_id,
            action=action,
            transcript=transcript,
            policy_version=self.policy.version,
            verdict=verdict,
        )

    def _not_recorded(self, event: AuditEvent, exc: Exception) -> Verdict:
        """Neither the store nor its spool took the record: it goes to the last-resort sink, and an
        approval does not run."""
        lastresort.write(event, describe(exc))
        return decision.not_recorded(event.verdict, describe(exc))


def _as_input(data: CheckInput | Mapping[str, Any]) -> CheckInput:
    return data if isinstance(data, CheckInput) else CheckInput.from_dict(dict(data))


def _call_id(action: Any) -> str | None:
    """The host's id of the call, for the span (an input too malformed to read has none)."""
    found = (
        action.call_id
        if isinstance(action, PendingAction)
        else (action.get("call_id") if isinstance(action, dict) else None)
    )
    return found if isinstance(found, str) and found else None


class Defaults(TypedDict, total=False):
    """The keywords of the one-call forms :func:`validate` and :func:`avalidate`."""

    policy: Policy | None
    user_id: str | None
    judge: Judge | None


def validate(messages: MessagesInput, action: ActionInput, **options: Unpack[Defaults]) -> Verdict:
    """Validate one pending action with the embedded defaults (strict judge, in-memory recorder)."""
    checker = Validator(options.get("policy"), judge=options.get("judge"))
    return checker.validate(messages, action, user_id=options.get("user_id"))


async def avalidate(messages: MessagesInput, action: ActionInput, **options: Unpack[Defaults]) -> Verdict:
    """Async twin of :func:`validate`."""
    checker = Validator(options.get("policy"), judge=options.get("judge"))
    return await checker.avalidate(messages, action, user_id=options.get("user_id"))


def check(data: CheckData, *, policy: Policy | None = None, judge: Judge | None = None) -> Verdict:
    """Validate a standalone check input; ``policy`` overrides the input's own."""
    return Validator(policy, judge=judge).check(data)


class _Stores(msgspec.Struct, frozen=True):
    """What one check reads and writes: the validator's own stores, or one check's session of them."""

    authorizations: AuthorizationStore | None
    ledger: RequestLedger
    reuse: VerdictReuse | None
    recorder: Recorder
    session: RequestLedger | None = None
    """The check's session, which :meth:`~validator.store.base.RequestLedger.end_session` ends."""

    def ended(self) -> None:
        """The session ended: what it still holds queued is sent (a failure is logged, as for any queued write)."""
        try:
            if self.session is not None:
                self.session.end_session()
        except Exception as exc:
            log.warning("the check's queued store writes were not sent: %s", describe(exc))

    def reads_ahead(self, plan: CheckPlan) -> bool:
        """Whether this check opens a session: a store that reads ahead, and a tool that is not exempt."""
        return self.ledger.reads_ahead and not plan.tool_policy.exempt

    def opened(self, plan: CheckPlan) -> _Stores:
        """These stores for one check: a store that reads ahead (Redis) reads everything the plan names in one
        round trip, and the check's steps use its session in its place. Only an optimisation: anything that
        goes wrong here leaves the check to read on its own."""
        store = self.ledger
        if not self.reads_ahead(plan):
            return self
        shared_auth = store is cast(object, self.authorizations)  # one object, one session of it
        shared_reuse = self.reuse is not None and store is cast(object, self.reuse.store)
        try:
            view = store.session(
                ReadAhead(
                    auth_ids=plan.cited if shared_auth else (),
                    block_key=plan.retry_key,
                    verdict_key=plan.verdict_key if shared_reuse else None,
                    user_id=plan.user_id if shared_auth else None,
                    carry_spends=self.recorder.appends_to(store),
                )
            )
        except Exception as exc:
            log.warning("no read-ahead for this check: %s", describe(exc))
            return self
        reuse = self.reuse
        return _Stores(
            authorizations=cast(AuthorizationStore, view) if shared_auth else self.authorizations,
            ledger=view,
            reuse=VerdictReuse(cast(VerdictCache, view), reuse.ttl) if reuse is not None and shared_reuse else reuse,
            recorder=self.recorder.through(store, view),
            session=view,
        )
