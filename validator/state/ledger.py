"""One request, one action: a user's request authorizes the dangerous actions it names, once.

When a dangerous action is approved on the strength of a sentence of the user's, that sentence is
*spent* in the store's ledger, per user, by that action. When it is approved on a standing
authorization instead (cited or looked up), the grant is spent: once, or once per period when the
user's words that granted it name one ("every month"), or never when they say every time
("whenever"); a grant meant for one lunch pays once. Another
action citing the same sentence (a second payment in parallel, the same payment again in a later
turn) goes to the user instead, unless the request itself asks for several ("pay each of",
"every month"). The same action judged again (a retry, a graph resume) spends nothing new. The
ledger lives in the store, so two workers can never both spend one request; a ledger that cannot
answer never lets the action through.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from validator import decision
from validator.exceptions import StoreError
from validator.gate.reader import words as read_words
from validator.judges.base import JudgeRequest
from validator.language import english
from validator.rules import ALL_ON, Rules
from validator.state.keys import grant_key, request_key, spender
from validator.store.base import RequestLedger
from validator.verdict import Verdict

__all__ = ["SPENT_TTL", "spend"]

log = logging.getLogger("validator.state.ledger")
SPENT_TTL = timedelta(days=30)
"""How long a spent request stays spent."""


def _request_keys(request: JudgeRequest) -> list[str]:
    intent = request.findings.intent
    step = request.action.tool if intent is not None and intent.step_of else ""
    messages = request.transcript.messages
    return [
        request_key(request.user_id, messages[r.message].content, r.start, r.end, step)
        for r in request.findings.requests
    ]


def _period(quote: str | None) -> str | None:
    """How often a grant's words let it be used: ``day``/``week``/``month``/``year``, ``unlimited``, or
    None (once)."""
    words = read_words(quote or "")
    for period, phrases in english().grant_periods.items():
        if any(tuple(words[i : i + len(p)]) == p for p in phrases for i in range(len(words) - len(p) + 1)):
            return period
    return None


_BUCKETS = {"day": "%Y-%m-%d", "week": "%G-W%V", "month": "%Y-%m", "year": "%Y"}


def _grant_keys(request: JudgeRequest, now: datetime) -> list[str]:
    """One key per standing authorization the approval rests on, for its period ("once": one key)."""
    keys = []
    for a in request.findings.valid_authorizations:
        period = _period(a.quote)
        if period == "unlimited":
            continue
        bucket = now.strftime(_BUCKETS[period]) if period else "once"
        keys.append(grant_key(request.user_id, a.authorization_id, bucket))
    return keys


def spend(
    verdict: Verdict,
    request: JudgeRequest,
    ledger: RequestLedger | None,
    ttl: timedelta = SPENT_TTL,
    now: datetime | None = None,
    rules: Rules = ALL_ON,
) -> Verdict:
    """``verdict``, or the question to the user when its request (or grant) was already spent by another
    action."""
    intent = request.findings.intent
    if not rules.on("one-request") or ledger is None or not verdict.approved or request.tool_policy.risk != "dangerous":
        return verdict
    if intent is not None and intent.requested:
        keys = [] if intent.multiple else _request_keys(request)
    else:
        keys = _grant_keys(request, now or datetime.now(UTC))
    if not keys:
        return verdict
    action = spender(request.action, request.transcript)
    for key in keys:
        try:
            held = ledger.spend(key, action, ttl)
        except (StoreError, OSError) as exc:
            log.error("request ledger unavailable: %s", exc)
            return decision.ledger_unavailable(verdict, str(exc))
        if held is not None:
            return decision.request_used(verdict, held)
    return verdict
