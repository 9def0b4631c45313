"""The life of one guarded tool call, written once for every host adapter: :class:`ToolCallGuard`.

Every adapter only translates its host's shapes to these steps and back:

1. :meth:`ToolCallGuard.start`: the call as the validator sees it (:class:`GuardedCall`): its action
   (``justification`` moved out), its conversation, user and key; or a refusal decided before any
   check (the validator's own tools, a call id the conversation already used, a conversation that
   cannot be read). A host whose own human-in-the-loop step may have changed the call passes what the
   model asked for (``proposed``): the arguments it changed are then the person's edit.
2. :meth:`ToolCallGuard.decide` / :meth:`~ToolCallGuard.adecide`: the verdict, kept for this very call
   (same id, tool, arguments, justification, user and conversation), so a host that re-runs a call
   after an interrupt does not judge it twice. A failure of the validation blocks the call.
3. :meth:`ToolCallGuard.request`: what the person is asked (LangChain's per-call approval request, the
   validator's reasons, and the scope a "remember this" would keep).
4. :meth:`ToolCallGuard.settle` / :meth:`~ToolCallGuard.asettle`: the answer read strictly
   (:func:`~validator.integrations._review.read_review`), recorded through :meth:`Validator.answer`,
   and the :class:`Outcome`: the verdict and the arguments that may run. An edit is a new call,
   validated again; what runs is what was checked.

:meth:`ToolCallGuard.run` / :meth:`~ToolCallGuard.arun` run 2-4 in one go for a host that asks the person
while the call waits (a callback, LangGraph's ``interrupt``). A host that pauses the run to ask and brings
the answer back later (Pydantic AI's deferred approvals, the OpenAI Agents SDK's interruptions, Google ADK's
confirmations, the Claude Agent SDK's ``can_use_tool``) keeps the question here with :meth:`~ToolCallGuard.pose`
and answers it with :meth:`~ToolCallGuard.answer` / :meth:`~ToolCallGuard.aanswer`: the questions waiting
for a person live in one store, the guard's, never in an adapter.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from validator.integrations._host import (
    Remembered,
    pending_from_call,
    reserved_tool,
    reused_id,
    split_justification,
    unreadable_history,
)
from validator.integrations._review import AskConfig, Item, Review, approval_request, ask_configs, read_review

from validator.engine import BaseValidator
from validator.engine.base import CheckOptions
from validator.exceptions import is_control_flow
from validator.gate.authorizations import remember_scope
from validator.inputs.action import PendingAction
from validator.inputs.transcript import Transcript
from validator.record.recorder import hash_args
from validator.shells import Io, Steps, arun, run
from validator.text.paths import changed
from validator.verdict import Decision, Verdict

__all__ = ["GuardedCall", "Outcome", "ToolCallGuard"]

Messages = Transcript | Callable[[], Transcript]
Ask = Callable[[dict[str, Any]], Any]
"""The host's way of asking the person: called with the approval request, it returns their answer (or raises
the host's control flow, as LangGraph's ``interrupt`` does before the answer exists)."""
AsyncAsk = Callable[[dict[str, Any]], Awaitable[Any] | Any]
NOT_RECORDED = "The user's answer could not be recorded, so the call does not run"


@dataclass(frozen=True, slots=True)
class GuardedCall:
    """One guarded tool call, ready to decide."""

    action: PendingAction
    """Tool, arguments (``justification`` moved out), justification and call id."""
    transcript: Transcript | None
    user_id: str | None = None
    agent_request: Mapping[str, Any] | None = None
    key: str = ""
    """This very call: id, tool, arguments, justification, user and conversation."""
    refusal: Verdict | None = None
    """A refusal decided before any check (reused id, unreadable conversation, the validator's own tool)."""
    edited: tuple[str, ...] = ()
    """Argument paths the host's own human-in-the-loop step changed: the person's edit."""

    @property
    def tool(self) -> str:
        return self.action.tool

    @property
    def call_id(self) -> str:
        return self.action.call_id or ""

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.action.args)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happens to a call: its verdict, and the arguments that run when it runs."""

    verdict: Verdict
    args: dict[str, Any] = field(default_factory=dict)
    """The arguments the tool runs with (``justification`` stripped): the user's edit after an edit."""
    response: str | None = None
    """The person's ``respond`` message: the call does not run, and the agent reads this as its answer."""

    @property
    def runs(self) -> bool:
        return self.verdict.approved


class ToolCallGuard:
    """The lifecycle of guarded calls for one adapter; see the module docstring.

    ``reserved``: tool names the agent may never call (the validator's own tools, offered to the model
    only to share a prompt cache). ``remembered``: how many recent verdicts are kept. ``signals``: the host
    framework's control-flow exceptions (LangGraph's ``GraphBubbleUp``), which pass through untouched.
    """

    def __init__(
        self,
        validator: BaseValidator,
        *,
        reserved: Collection[str] = (),
        remembered: int = 256,
        signals: Collection[type[BaseException]] = (),
        interrupt_on: Mapping[str, Any] | None = None,
    ) -> None:
        self.validator = validator
        self.asks = ask_configs(interrupt_on)
        """How the person may answer about each tool (LangChain's ``interrupt_on``; every decision by default)."""
        self.reserved = frozenset(reserved)
        self.signals: tuple[type[BaseException], ...] = (*signals, *validator.config.control_flow)
        self._verdicts: Remembered[str, Verdict] = Remembered(remembered)
        self._settled: Remembered[str, Outcome] = Remembered(remembered)
        """Outcomes by call and answer: a host that re-runs an answered step never records it twice."""
        self._questions: Remembered[str, tuple[GuardedCall, Verdict]] = Remembered(remembered)
        """The questions put to the person and not answered yet, by call id (:meth:`pose`)."""
        self._ahead: Remembered[str, Review] = Remembered(remembered)
        """Answers given before their call runs, by call (:meth:`hold`)."""

    def passes(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the host's control flow (re-raise it), not a failure to check."""
        return is_control_flow(exc, self.signals)

    def _failed(self, tool: str, exc: Exception, what: str) -> Verdict:
        """The refusal of a call the validator could not check (the host's control flow is re-raised)."""
        if self.passes(exc):
            raise exc
        return Verdict.blocked(tool, f"{what}: {exc}")

    # -- 1. start -----------------------------------------------------------------------------

    def start(
        self,
        tool: str,
        args: Mapping[str, Any] | None,
        *,
        call_id: str | None,
        messages: Messages | None,
        user_id: str | Callable[[], str | None] | None = None,
        agent_request: Mapping[str, Any] | None = None,
        used: Collection[str] = (),
        proposed: Mapping[str, Any] | None = None,
        find_evidence: bool = False,
    ) -> GuardedCall:
        """The call to decide. ``messages``: its conversation (or a function reading it: a failure to read
        refuses the call). ``used``: call ids the conversation used before this call. ``proposed``: the
        arguments the model asked for, when a host step may have edited them since. ``find_evidence``: the
        host cannot add a ``justification`` argument to this tool (the validator finds the user's words)."""
        call_id = str(call_id or "")
        bare = PendingAction(tool=tool, call_id=call_id)
        if tool in self.reserved:
            refusal = reserved_tool(tool)
            return GuardedCall(bare, None, refusal=refusal)
        if call_id and call_id in used:
            return GuardedCall(bare, None, refusal=reused_id(tool, call_id))
        try:
            given = dict(args or {})
            edited: tuple[str, ...] = ()
            if proposed is not None and not _unedited(proposed, given):
                before = pending_from_call(tool, proposed, call_id)
                if "justification" not in given and before.justification is not None:
                    given["justification"] = before.justification  # a host's edit that left it out
                edited = tuple(changed(dict(before.args), dict(pending_from_call(tool, given, call_id).args)))
            action = pending_from_call(tool, given, call_id, find_evidence=find_evidence)
            user = user_id() if callable(user_id) else user_id
        except Exception as exc:
            return GuardedCall(bare, None, refusal=self._failed(tool, exc, "The validator could not check this call"))
        try:
            transcript = messages() if callable(messages) else messages
            if transcript is None:
                raise ValueError("no conversation was given")
        except Exception as exc:
            if self.passes(exc):
                raise
            return GuardedCall(action, None, user, refusal=unreadable_history(tool, str(exc)[:500]))
        what = {
            "tool": tool,
            "args": action.args,
            "justification": action.justification,
            "edited": edited,
            "found": action.find_evidence,
        }
        key = hash_args({"id": call_id, "action": what, "user": user, "transcript": transcript.digest})
        return GuardedCall(action, transcript, user, agent_request, key, edited=edited)

    # -- 2. decide ----------------------------------------------------------------------------

    def kept(self, call: GuardedCall) -> Verdict | None:
        """The verdict already reached for this very call (or its refusal), if any."""
        return call.refusal or self._verdicts.get(call.key)

    def decide(self, call: GuardedCall) -> Verdict:
        """The verdict on ``call``: kept, or validated now; a failure of the validation blocks it."""
        return run(self._deciding(call))

    async def adecide(self, call: GuardedCall) -> Verdict:
        """Async twin of :meth:`decide`: the same steps (:mod:`validator.shells`), async I/O."""
        return await arun(self._deciding(call))

    def _deciding(self, call: GuardedCall) -> Steps[Verdict]:
        known = self.kept(call)
        if known is not None:
            return known
        options: CheckOptions = {"user_id": call.user_id, "agent_request": call.agent_request, "edited": call.edited}
        try:
            verdict = yield from Io(
                partial(self.validator.validate, call.transcript, call.action, **options),
                partial(self.validator.avalidate, call.transcript, call.action, **options),
            )
        except Exception as exc:
            return self._failed(call.tool, exc, "The validator failed on this call")
        return self._verdicts.put(call.key, verdict)

    # -- 3. ask -------------------------------------------------------------------------------

    def request(self, call: GuardedCall, verdict: Verdict, host: tuple[Any, Any] = (None, None)) -> dict[str, Any]:
        """The per-call approval request for an ``ask_user`` verdict, with the scope "remember this" keeps."""
        asked = approval_request(self.item(call, verdict, host))
        asked["action_validator"]["remember_scope"] = self.scope(call)
        return asked

    def item(self, call: GuardedCall, verdict: Verdict, host: tuple[Any, Any] = (None, None)) -> Item:
        """One call put to the person (:func:`~validator.integrations._review.batched_request`); ``host``: the
        host's state and runtime, for a description factory."""
        config = self.asks.get(call.tool, AskConfig())
        return Item(call.call_id, call.tool, call.action.args, verdict, call.action.justification, config, host)

    def scope(self, call: GuardedCall) -> dict[str, Any]:
        """What a "remember this" answer would keep: the tool and every argument pinned, and its lifetime."""
        return remember_scope(call.action, self.validator.policy.for_tool(call.tool))

    # -- 2-4 in one go ---------------------------------------------------------------------------

    def run(self, call: GuardedCall, ask: Ask | None = None) -> Outcome:
        """What happens to ``call``: its verdict, and for an ``ask_user`` verdict the person's answer through
        ``ask`` (called outside any ``try``, so a host's interrupt passes), recorded. Without ``ask`` an
        ``ask_user`` verdict does not run."""
        return run(self._running(call, ask))

    async def arun(self, call: GuardedCall, ask: AsyncAsk | None = None) -> Outcome:
        """Async twin of :meth:`run` (``ask`` may return an awaitable): the same steps, async I/O."""
        return await arun(self._running(call, ask))

    def _running(self, call: GuardedCall, ask: AsyncAsk | None) -> Steps[Outcome]:
        verdict = yield from self._deciding(call)
        if verdict.decision is not Decision.ASK_USER:
            return self.outcome(call, verdict)
        answer: Any = self._held(call)
        if answer is None:
            if ask is None:
                return self.outcome(call, verdict)
            request = self.request(call, verdict)
            # in the host's own thread in both shells (a LangGraph interrupt must be raised where it runs)
            answer = yield from Io(partial(ask, request), partial(_awaited, ask, request))
        return (yield from self._settling(call, verdict, answer, 0))

    def hold(self, call: GuardedCall, review: Review) -> None:
        """Keep the person's answer about ``call``, given before the call runs (LangChain's batched request for
        a whole model turn): :meth:`run` settles the call with it instead of asking again."""
        self._ahead.put(call.key, review)

    def holds(self, call: GuardedCall) -> bool:
        """Whether an answer about this very call is held (:meth:`hold`)."""
        return self._ahead.get(call.key) is not None

    def _held(self, call: GuardedCall) -> Review | None:
        return self._ahead.take(call.key)

    # -- a question the host brings back later -----------------------------------------------------

    def pose(self, call: GuardedCall, verdict: Verdict) -> dict[str, Any]:
        """Keep the question about ``call`` until its answer comes back, and return the approval request."""
        self._questions.put(call.call_id, (call, verdict))
        return self.request(call, verdict)

    def question(self, call_id: str, call: GuardedCall | None = None) -> tuple[GuardedCall, Verdict] | None:
        """The question kept for ``call_id`` and not answered yet; with ``call``, only when it was put about
        that very call (same tool, arguments, justification, user and conversation)."""
        asked = self._questions.get(call_id)
        if asked is None or (call is not None and asked[0].key != call.key):
            return None
        return asked

    def answer(self, call_id: str, answer: Any, *, call: GuardedCall | None = None) -> Outcome | None:
        """The person's answer to the question kept for ``call_id``, recorded (the question closed, in one step:
        two answers never both settle it); None when this guard kept none (a question asked elsewhere:
        :meth:`run` decides the call again, and only an ``ask_user`` verdict takes the answer). With ``call``
        (the call the person was shown), only a question about that very call takes the answer."""
        asked = self._take(call_id, call)
        return None if asked is None else self.settle(*asked, answer)

    async def aanswer(self, call_id: str, answer: Any, *, call: GuardedCall | None = None) -> Outcome | None:
        """Async twin of :meth:`answer`."""
        asked = self._take(call_id, call)
        return None if asked is None else await self.asettle(*asked, answer)

    def _take(self, call_id: str, call: GuardedCall | None) -> tuple[GuardedCall, Verdict] | None:
        asked = self._questions.take(call_id)
        if asked is not None and call is not None and asked[0].key != call.key:
            self._questions.put(call_id, asked)  # another call's question: it stays for its own answer
            return None
        return asked

    def forget(self, call_id: str) -> None:
        """Close the question kept for ``call_id`` unanswered (the host will not bring its answer back)."""
        self._questions.pop(call_id)

    # -- 4. settle ----------------------------------------------------------------------------

    def outcome(self, call: GuardedCall, verdict: Verdict) -> Outcome:
        """The outcome of a verdict nobody is asked about (approved, or refused)."""
        self._verdicts.pop(call.key)
        return Outcome(verdict, call.args)

    def review(self, call: GuardedCall, answer: Any, *, index: int = 0) -> Review:
        """The person's answer to the question about ``call``, read strictly."""
        if isinstance(answer, Review):
            return answer
        allowed = self.asks.get(call.tool, AskConfig()).allowed_decisions
        return read_review(answer, call_id=call.call_id, tool=call.tool, index=index, allowed=allowed)

    def _answered(self, call: GuardedCall, verdict: Verdict, answer: Any, index: int) -> Outcome | Review:
        """The outcome when there is nothing (more) to record, else the answer to record."""
        if verdict.decision is not Decision.ASK_USER:
            return self.outcome(call, verdict)
        review = self.review(call, answer, index=index)
        return self._settled.get(_answered_key(call, review)) or review

    def settle(self, call: GuardedCall, verdict: Verdict, answer: Any, *, index: int = 0) -> Outcome:
        """The outcome of ``verdict`` once the person answered (``index``: the call's place in a batch)."""
        return run(self._settling(call, verdict, answer, index))

    async def asettle(self, call: GuardedCall, verdict: Verdict, answer: Any, *, index: int = 0) -> Outcome:
        """Async twin of :meth:`settle` (the recording runs off the event loop): the same steps, async I/O."""
        return await arun(self._settling(call, verdict, answer, index))

    def _settling(self, call: GuardedCall, verdict: Verdict, answer: Any, index: int) -> Steps[Outcome]:
        review = self._answered(call, verdict, answer, index)
        if isinstance(review, Outcome):
            return review
        answering = (verdict, review.approved, review.reason)
        options = self._answer(call, review)
        try:
            decided = yield from Io(
                partial(self.validator.answer, *answering, **options),
                partial(self.validator.aanswer, *answering, **options),
            )
        except Exception as exc:
            decided = self._failed(call.tool, exc, NOT_RECORDED)
        return self._outcome_of(call, decided, review)

    def _answer(self, call: GuardedCall, review: Review) -> dict[str, Any]:
        return {
            "messages": call.transcript,
            "action": call.action,
            "user_id": call.user_id,
            "remember": review.remember,
            "edit": review.edited_args,
            "agent_request": call.agent_request,
        }

    def _outcome_of(self, call: GuardedCall, decided: Verdict, review: Review) -> Outcome:
        self._verdicts.pop(call.key)
        outcome = Outcome(decided, call.args, response=review.response if not decided.approved else None)
        if review.edited_args is not None and decided.approved:  # what runs is the edit that was checked
            outcome = Outcome(decided, split_justification(review.edited_args)[0])
        return self._settled.put(_answered_key(call, review), outcome)


def _answered_key(call: GuardedCall, review: Review) -> str:
    return hash_args({"call": call.key, "review": repr(review)})


async def _awaited(ask: AsyncAsk, request: dict[str, Any]) -> Any:
    """The person's answer through an ``ask`` that may return an awaitable (the async shell's form)."""
    answer = ask(request)
    return await answer if inspect.isawaitable(answer) else answer


def _unedited(proposed: Mapping[str, Any], given: Mapping[str, Any]) -> bool:
    """Whether the call runs with the very arguments the model proposed (the same names, no value changed, types
    counted, as :func:`~validator.text.paths.changed` compares them): nothing is the person's edit, and the call
    is read once, not three times. JSON values this finds unchanged read alike, so reading both would find no
    edit either; a host's own values equal by ``==`` but read apart (``Decimal("1.0")`` and ``Decimal("1.00")``,
    aware datetimes of one instant) may have been an edit, and dropping it only counts fewer words as the user's."""
    return proposed.keys() == given.keys() and not changed(proposed, given)
