"""The user's answer to a question: the decided verdict, an edit checked as a new call, "remember this" kept as a
standing authorization, the request it spends, and its record.

:func:`answering` is the answer's steps, written once for both shells (:mod:`validator.shells`), as a
check's are: :meth:`Validator.answer <validator.engine.pipeline.Validator.answer>` runs them with
:func:`~validator.shells.run`, ``aanswer`` with :func:`~validator.shells.arun`. An edited call goes through
the validator's own check (its steps, recorded as any check); nothing here decides a check.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from validator.engine.base import AnswerOptions
from validator.exceptions import InputError, UsageError
from validator.gate.authorizations import grant_from_answer
from validator.inputs.action import PendingAction
from validator.inputs.checkinput import read_action, read_messages
from validator.inputs.transcript import Transcript
from validator.judges.runner import describe
from validator.shells import Io, Steps
from validator.state import ledger
from validator.text.paths import changed
from validator.verdict import Decision, Verdict
from validator.verdict.refusals import edit_approved, edit_refused, edit_unreadable, grant_kept, grant_not_kept

if TYPE_CHECKING:
    from validator.engine.pipeline import Validator

__all__ = ["answering"]

log = logging.getLogger("validator")


def answering(
    validator: Validator, verdict: Verdict, approved: bool, reason: str | None, options: AnswerOptions
) -> Steps[Verdict]:
    """The steps of the user's answer to ``verdict`` (see :meth:`Validator.answer`)."""
    transcript, pending = read_messages(options["messages"]), read_action(options["action"])
    user_id, edit, agent_request = options.get("user_id"), options.get("edit"), options.get("agent_request")
    decided = verdict.answered_by_user(approved, reason)
    made = _edit(pending, verdict, edit) if approved and edit is not None else None
    if isinstance(made, Verdict):
        decided = made
    elif made is not None:  # the edited call, checked as a new one
        edited, paths = made
        checked = yield from validator._checked(
            transcript, edited, {"user_id": user_id, "agent_request": agent_request, "edited": paths}
        )
        decided, pending, refused = _edit_outcome(verdict, reason, edited, paths, checked)
        if refused:  # its own check refused it, and recorded that
            return decided
    remember = options.get("remember")
    return (yield from Io(partial(_answered, validator, transcript, pending, user_id, decided, remember, reason)))


def _answered(
    validator: Validator,
    transcript: Transcript,
    pending: PendingAction,
    user_id: str | None,
    decided: Verdict,
    remember: Mapping[str, Any] | None,
    reason: str | None,
) -> Verdict:
    if decided.approved and remember is not None and user_id is not None:
        decided = _remembered(validator, decided, pending, user_id, remember, reason)
    config = validator.config
    tool_policy = validator.policy.for_tool(pending.tool)
    ledger.spend_answered(
        decided, transcript, pending, tool_policy, user_id, validator.ledger, rules=config.rules, now=config.clock()
    )
    event = validator._event(transcript, pending, user_id, decided)
    try:
        validator.recorder.record(event)
    except Exception as exc:
        return validator._not_recorded(event, exc)
    return event.verdict  # with its record's id


def _edit(pending: PendingAction, verdict: Verdict, edit: Any) -> tuple[PendingAction, list[str]] | Verdict:
    """The edited call and the paths the edit changed, or the rejection of an edit that cannot be read (the
    user's rejection of the call they were asked about, saying why)."""
    try:
        if not isinstance(edit, Mapping):
            raise UsageError(f"an edit is an object of arguments, got {type(edit).__name__}")
        args = {k: v for k, v in edit.items() if k != "justification"}
        edited = read_action(PendingAction(pending.tool, args, pending.justification, pending.call_id))
    except (InputError, UsageError) as exc:
        problem = "; ".join(map(str, exc.problems)) if isinstance(exc, InputError) else str(exc)
        return verdict.answered_by_user(False, edit_unreadable(problem[:300]))
    return edited, changed(dict(pending.args), dict(edited.args))


def _edit_outcome(
    verdict: Verdict, reason: str | None, edited: PendingAction, paths: list[str], checked: Verdict
) -> tuple[Verdict, PendingAction, bool]:
    """``(decided verdict, the call it decides, whether the edited call's own check refused it)``."""
    if checked.decision is Decision.BLOCK:
        return replace(checked, reasoning=edit_refused(edited.tool, paths, checked.reasoning)), edited, True
    decided = verdict.answered_by_user(True, reason)
    return replace(decided, reasoning=decided.reasoning + edit_approved(paths, checked.reasoning)), edited, False


def _remembered(
    validator: Validator,
    verdict: Verdict,
    action: PendingAction,
    user_id: str,
    remember: Mapping[str, Any],
    reason: str | None,
) -> Verdict:
    """The approved verdict, kept as a standing authorization when the store can keep one."""
    store = validator.authorizations
    try:
        tool_policy = validator.policy.for_tool(action.tool)
        most = validator.policy.settings.answer_grant_days
        grant = grant_from_answer(action, tool_policy, user_id, remember, reason, validator.config.clock(), most)
        if store is None:
            raise UsageError("this validator has no authorization store to keep the grant in")
        store.put(grant)
    except Exception as exc:
        log.warning("the user's 'always' was not kept: %s", describe(exc))
        return replace(verdict, reasoning=f"{verdict.reasoning} {grant_not_kept(describe(exc))}")
    until = grant.expires.date().isoformat() if grant.expires else "revoked"
    return replace(
        verdict,
        authorization_id=grant.id,
        reasoning=f"{verdict.reasoning} {grant_kept(grant.id, until, grant.tool, dict(grant.where))}",
    )
