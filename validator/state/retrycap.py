"""A cap on retries: the same action blocked again and again in one conversation stops costing judge calls.

An action is the tool and its target values (:func:`validator.state.keys.retry_key`); the count runs per
user and per user turn (the user's
latest message and where it stands), so once the user speaks again (to confirm, say) the count starts
over. After ``cap`` blocks (2 by default, ``ValidatorConfig.retry_cap``) the same action is refused
before any judge runs, with ``RETRY_CAP_REACHED`` and a next step that tells the agent to ask the
user. The counts live in the store (memory or Redis), so every worker sees them. A counter that
cannot answer changes nothing: the action still goes through every check.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from validator.store.base import RequestLedger
from validator.verdict import Decision, Verdict

__all__ = ["RETRY_TTL", "count_block", "over_cap"]

log = logging.getLogger("validator.state.retrycap")
RETRY_TTL = timedelta(hours=24)


def over_cap(counter: RequestLedger | None, key: str, cap: int | None) -> int | None:
    """How often the action was blocked already, when that reaches ``cap``; None otherwise."""
    if counter is None or cap is None:
        return None
    try:
        count = counter.blocks(key)
    except Exception as exc:
        log.warning("retry cap unavailable: %s", exc)
        return None
    return count if count >= cap else None


def count_block(counter: RequestLedger | None, key: str, verdict: Verdict) -> None:
    """Count ``verdict`` when it is a block (a question to the user is not a retry to cap)."""
    if counter is None or verdict.decision is not Decision.BLOCK:
        return
    try:
        counter.add_block(key, RETRY_TTL)
    except Exception as exc:
        log.warning("retry cap unavailable: %s", exc)
