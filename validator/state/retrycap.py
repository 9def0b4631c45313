"""A cap on retries: the same action blocked again and again in one conversation stops costing judge calls.

An action is the tool and its target values; the count runs per user and per user turn (the user's
latest message and where it stands), so once the user speaks again (to confirm, say) the count starts
over. After ``cap`` blocks (2 by default, ``ValidatorConfig.retry_cap``) the same action is refused
before any judge runs, with ``RETRY_CAP_REACHED`` and a next step that tells the agent to ask the
user. The counts live in the store (memory or Redis), so every worker sees them. A counter that
cannot answer changes nothing: the action still goes through every check.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta

from validator._json import utf8
from validator.gate.paths import leaves, lookup
from validator.inputs.action import PendingAction
from validator.inputs.transcript import Transcript
from validator.policy import ToolPolicy
from validator.record.recorder import hash_args
from validator.store.base import BlockCounter
from validator.verdict import Decision, Verdict

__all__ = ["RETRY_TTL", "action_key", "count_block", "over_cap"]

log = logging.getLogger("validator.retrycap")
RETRY_TTL = timedelta(hours=24)


def action_key(transcript: Transcript, action: PendingAction, tool_policy: ToolPolicy, user_id: str | None) -> str:
    """The same action in the same user turn: user, the user's latest message, tool and target values."""
    messages = transcript.messages
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)
    turn = "" if last is None else f"{last}:{messages[last].content}"
    targets = {t: sorted(map(str, leaves(lookup(action.args, t)[1]))) for t in tool_policy.targets}
    material = f"{user_id}\x00{hashlib.sha256(utf8(turn)).hexdigest()}\x00{action.tool}\x00{hash_args(targets)}"
    return hashlib.sha256(utf8(material)).hexdigest()


def over_cap(counter: BlockCounter | None, key: str, cap: int | None) -> int | None:
    """How often the action was blocked already, when that reaches ``cap``; None otherwise."""
    if counter is None or cap is None:
        return None
    try:
        count = counter.blocks(key)
    except Exception as exc:
        log.warning("retry cap unavailable: %s", exc)
        return None
    return count if count >= cap else None


def count_block(counter: BlockCounter | None, key: str, verdict: Verdict) -> None:
    """Count ``verdict`` when it is a block (a question to the user is not a retry to cap)."""
    if counter is None or verdict.decision is not Decision.BLOCK:
        return
    try:
        counter.add_block(key, RETRY_TTL)
    except Exception as exc:
        log.warning("retry cap unavailable: %s", exc)
