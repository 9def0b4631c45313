"""One request, one action: a user's request authorizes the dangerous actions it names, once.

When a dangerous action is approved on the strength of a sentence of the user's (not a standing
authorization), that sentence is *spent* in the store's ledger, per user, by that action. Another
action citing the same sentence (a second payment in parallel, the same payment again in a later
turn) goes to the user instead, unless the request itself asks for several ("pay each of",
"every month"). The same action judged again (a retry, a graph resume) spends nothing new. The
ledger lives in the store, so two workers can never both spend one request; a ledger that cannot
answer never lets the action through.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta

from validator import decision, rules
from validator._json import utf8
from validator.exceptions import StoreError
from validator.inputs.action import PendingAction
from validator.inputs.transcript import Transcript
from validator.judges.base import JudgeRequest
from validator.record.recorder import hash_args
from validator.store.base import RequestLedger
from validator.verdict import Verdict

__all__ = ["SPENT_TTL", "spend"]

log = logging.getLogger("validator.spending")
SPENT_TTL = timedelta(days=30)
"""How long a spent request stays spent."""


def _request_keys(request: JudgeRequest) -> list[str]:
    keys = []
    intent = request.findings.intent
    step = f"\x00step:{request.action.tool}" if intent is not None and intent.step_of else ""
    for r in request.findings.requests:
        text = request.transcript.messages[r.message].content
        material = f"{request.user_id}\x00{hashlib.sha256(utf8(text)).hexdigest()}{step}"
        keys.append(hashlib.sha256(f"{material}\x00{r.start}:{r.end}".encode()).hexdigest())
    return keys


def _fingerprint(action: PendingAction, transcript: Transcript) -> str:
    if action.call_id:
        return f"call:{action.call_id}"
    return "args:" + hash_args({"tool": action.tool, "args": action.args, "transcript": transcript.digest})


def spend(verdict: Verdict, request: JudgeRequest, ledger: RequestLedger | None, ttl: timedelta = SPENT_TTL) -> Verdict:
    """``verdict``, or the question to the user when its request was already spent by another action."""
    intent = request.findings.intent
    if (
        not rules.on("one-request")
        or ledger is None
        or not verdict.approved
        or request.tool_policy.risk != "dangerous"
        or intent is None
        or not intent.requested
        or intent.multiple
    ):
        return verdict
    action = _fingerprint(request.action, request.transcript)
    for key in _request_keys(request):
        try:
            held = ledger.spend(key, action, ttl)
        except (StoreError, OSError) as exc:
            log.error("request ledger unavailable: %s", exc)
            return decision.ledger_unavailable(verdict, str(exc))
        if held is not None:
            return decision.request_used(verdict, held)
    return verdict
