"""Pending questions: an ``ask_user`` verdict is a question put to the user, kept until it is answered once.

A question is a record in the store (the namespace of its tenant), under an id no one can guess (192 random
bits), bound to the user, the call id, the tool and a hash of the arguments, with the check it asks about
and the verdict that asked, and an expiry. Only a question that exists can be answered, and only once: the
answer closes it atomically (the request ledger's first-use mark), so a replayed answer, a second answer, an
unknown or expired id, or another tenant's (its record is in another namespace) never approves anything.

The record lives in the store's verdict cache (under :func:`~validator.state.keys.question_key`), which every
store already keeps with an expiry; closing uses :meth:`~validator.store.base.RequestLedger.spend`, which is
atomic on every store.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from validator._json import dumps
from validator.state.keys import answered_call_key, outcome_key, question_key
from validator.store.base import RequestLedger, VerdictCache
from validator.verdict import Verdict

__all__ = [
    "QUESTION_ID",
    "QUESTION_TTL",
    "Question",
    "ask",
    "close",
    "decided",
    "outcome",
    "pending",
    "replayed",
    "status",
]

QUESTION_TTL = timedelta(hours=24)
"""How long a question waits for its answer."""
QUESTION_ID = re.compile(r"q_[A-Za-z0-9_-]{32}")
"""A question id: ``q_`` and 32 URL-safe characters (24 random bytes)."""
_ANSWERED = "answered"


@dataclass(frozen=True, slots=True)
class Question:
    """What was asked: the call (user, call id, tool, arguments and their hash), the check input it came
    from, the verdict that asked, and until when it may be answered."""

    question_id: str
    user_id: str | None
    call_id: str | None
    tool: str
    args: Mapping[str, Any]
    args_sha256: str
    check: Mapping[str, Any]
    verdict: Mapping[str, Any]
    expires: str
    asker: str = ""
    """The SHA-256 of the token whose check asked it (it may read the question's status; :func:`status`)."""

    def shown(self) -> dict[str, Any]:
        """What a person answering it is shown: the call and why it was asked (never the conversation)."""
        return {
            "question_id": self.question_id,
            "user_id": self.user_id,
            "call_id": self.call_id,
            "tool": self.tool,
            "args": dict(self.args),
            "code": self.verdict.get("code"),
            "reasoning": self.verdict.get("reasoning"),
            "expires": self.expires,
        }


def args_hash(args: Mapping[str, Any]) -> str:
    return hashlib.sha256(dumps(dict(args)).encode()).hexdigest()


def ask(
    store: VerdictCache,
    check: Mapping[str, Any],
    verdict: Verdict,
    *,
    user_id: str | None,
    call_id: str | None,
    args: Mapping[str, Any],
    ttl: timedelta = QUESTION_TTL,
    asker: str = "",
) -> str:
    """Keep the question an ``ask_user`` verdict puts, and return its id (``asker``: the SHA-256 of the token whose
    check asked it)."""
    question_id = "q_" + secrets.token_urlsafe(24)
    record = {
        "question_id": question_id,
        "user_id": user_id,
        "call_id": call_id,
        "tool": verdict.tool,
        "args": dict(args),
        "args_sha256": args_hash(args),
        "check": dict(check),
        "verdict": verdict.to_dict(),
        "expires": (datetime.now(UTC) + ttl).isoformat(),
        "asker": asker,
    }
    store.put_verdict(question_key(question_id), record, ttl)
    return question_id


def pending(store: VerdictCache, question_id: str) -> Question | None:
    """The question under ``question_id`` while it waits for its answer (None: unknown, expired or not this
    tenant's)."""
    if not QUESTION_ID.fullmatch(question_id):
        return None
    record = store.get_verdict(question_key(question_id))
    if record is None or record.get("question_id") != question_id:
        return None
    question = Question(**{name: record[name] for name in Question.__dataclass_fields__ if name in record})
    if question.args_sha256 != args_hash(question.args):
        return None  # a record that does not hold together is no question
    return question


def close(store: RequestLedger, question_id: str, ttl: timedelta = QUESTION_TTL) -> bool:
    """Close the question for its one answer: True for the first caller, False for every later one. The mark lives
    as long as the question may (``ttl``: the question's own)."""
    return store.spend(question_key(question_id), _ANSWERED + ":" + secrets.token_hex(8), ttl) is None


def _left(question: Question) -> timedelta:
    """How long the question has left (at least a second: an outcome is kept as long as its question)."""
    return max(timedelta(seconds=1), datetime.fromisoformat(question.expires) - datetime.now(UTC))


def decided(store: VerdictCache, question: Question, verdict: Verdict, *, edited: bool = False) -> None:
    """Keep the user's decision on ``question`` for as long as the question lives: its status reads it
    (:func:`status`), and the agent's check of the same call again gets it once (:func:`replayed`; not after an
    edit: the call to run is the edited one)."""
    left = _left(question)
    outcome = {"question_id": question.question_id, "verdict": verdict.to_dict(), "edited": edited}
    store.put_verdict(outcome_key(question.question_id), outcome, left)
    if question.call_id and not edited:
        waiting = {
            "question_id": question.question_id,
            "args_sha256": question.args_sha256,
            "messages": len(question.check.get("messages") or ()),
            "verdict": verdict.to_dict(),
        }
        store.put_verdict(answered_call_key(question.user_id, question.call_id), waiting, left)


def outcome(store: VerdictCache, question_id: str) -> Mapping[str, Any] | None:
    """The outcome of an answered question, ``{"verdict", "edited"}`` (None: not answered, or expired)."""
    found = store.get_verdict(outcome_key(question_id))
    return found if found and found.get("question_id") == question_id else None


def status(question: Question, answered: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the agent may read of its own question: ``pending``, ``approved``, ``rejected`` or ``edited``, and the
    decided verdict once answered (never the conversation, never the question's text)."""
    shown: dict[str, Any] = {"question_id": question.question_id, "status": "pending", "expires": question.expires}
    if answered is None:
        return shown
    verdict = dict(answered.get("verdict") or {})
    state = "edited" if answered.get("edited") else ("approved" if verdict.get("approved") else "rejected")
    return {**shown, "status": state, "verdict": verdict}


def replayed(
    store: VerdictCache,
    ledger: RequestLedger,
    user_id: str | None,
    call_id: str,
    args: Mapping[str, Any],
    messages: Sequence[Any],
    is_users: Callable[[Any], bool],
) -> Mapping[str, Any] | None:
    """The answered verdict of the call the agent checks again (same user, call id and arguments), once, when no
    message of the user's came after the question (a word of theirs since may change it: it is checked anew);
    None otherwise."""
    found = store.get_verdict(answered_call_key(user_id, call_id))
    if found is None or found.get("args_sha256") != args_hash(args):
        return None
    asked_at = int(found.get("messages") or 0)
    if any(is_users(m) for m in messages[asked_at:]):
        return None
    taken = ledger.spend(answered_call_key(user_id, call_id) + ":replayed", "replayed", timedelta(days=1))
    return found.get("verdict") if taken is None else None
