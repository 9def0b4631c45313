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
answer never lets the action through. Where the check's audit record goes to the same store (Redis), the
spend is made in the same transaction as the record of the approval: a record that is not written spends
nothing, and a request is never spent by an approval the audit does not show.

**The transcript is a ledger too**, and it needs no store: a call of the same tool after the newest request
sentence naming the action's values, whose targets are the action's in any form the request binds to the payee
(compared loosely: see :func:`_forms`, :func:`_bound`), carried the request out when it has a result that does
not say it did not run (:func:`did_not_run`), or none yet (in flight); approving it again needs a new request.
A request naming a payee an earlier request named with another amount, with no word adding a payment, is a
correction or a second payment (:func:`corrected`): the user is asked. A request for two payments to two
payees approves each once; the transcript has no clock, so a periodic action already in it goes to the user
too. This holds for every guarded tool (the same email sent twice reaches its reader twice); the store's
ledger, for what the transcript cannot show (parallel calls, other processes), for dangerous ones. Both are
asked; either one spent is enough.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Hashable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple

from validator import decision
from validator.exceptions import StoreError
from validator.findings import Findings
from validator.gate.authorizations import grant_period
from validator.gate.provenance import records_of
from validator.inputs.action import PendingAction
from validator.inputs.transcript import Fact, Message, ToolCall, Transcript
from validator.judges.base import JudgeRequest
from validator.language import english
from validator.language.rules import ALL_ON, Rule, Rules
from validator.policy import ToolPolicy, sources
from validator.state.keys import grant_key, request_key, spender
from validator.store.base import RequestLedger, SpendLost
from validator.text.entities import amounts_in, extract_entities
from validator.text.paths import lookup
from validator.text.search import compact
from validator.verdict import REFUSAL_TEMPLATE, Verdict

__all__ = ["CALLS", "SPENT_TTL", "carried_out", "lost", "spend", "spend_answered"]

log = logging.getLogger("validator.state.ledger")
SPENT_TTL = timedelta(days=30)
"""How long a spent request stays spent."""


def _keys(findings: Findings, transcript: Transcript, tool: str, user_id: str | None, now: datetime) -> list[str]:
    """The ledger keys an approval on ``findings`` spends: each request sentence it cites (a step's own, for a
    step of another tool; none for a request of several actions), else each standing authorization it rests
    on, for its period."""
    intent = findings.intent
    if intent is None or not intent.asked:
        return _grants_of(findings, user_id, now)
    if intent.multiple:
        return []
    messages = transcript.messages
    if intent.judged is not None:  # a model decided the request: the sentence it cited is spent
        s = intent.judged
        return [request_key(user_id, messages[s.message].content, s.start, s.end, "")]
    step = tool if intent.step_of else ""
    return [request_key(user_id, messages[r.message].content, r.start, r.end, step) for r in findings.requests]


_BUCKETS = {"day": "%Y-%m-%d", "week": "%G-W%V", "month": "%Y-%m", "year": "%Y"}


def _grants_of(findings: Findings, user_id: str | None, now: datetime) -> list[str]:
    """One key per standing authorization the approval rests on, for its period ("once": one key)."""
    keys = []
    for a in findings.valid_authorizations:
        period = a.period or grant_period(a.quote)  # (a verdict recorded before findings held it: read again)
        if period == "unlimited":
            continue
        bucket = "once" if period == "once" else now.strftime(_BUCKETS[period])
        keys.append(grant_key(user_id, a.authorization_id, bucket))
    return keys


class _Calls(NamedTuple):
    """The calls of a transcript: those carried out (answered, never with an error), in order, and the rest
    not answered yet, and the failed ones' ids, kept so a longer transcript reads only its new messages."""

    carried: tuple[tuple[int, ToolCall], ...]
    waiting: tuple[tuple[int, ToolCall], ...]
    """Calls not answered yet."""
    failed: frozenset[str]
    """Calls a tool message answered with an error that says it did not run (never carried out, whatever else
    answers them)."""


def _calls(transcript: Transcript, key: Hashable = None) -> _Calls:
    return _more_calls(_Calls((), (), frozenset()), transcript, 0, key)


def _more_calls(found: _Calls, longer: Transcript, start: int, key: Hashable) -> _Calls:
    new = longer.messages[start:]
    erred = {m.tool_call_id for m in new if m.role == "tool" and m.tool_call_id and did_not_run(m)}
    failed = found.failed | erred
    carried = [c for c in found.carried if c[1].id not in erred] if erred else list(found.carried)
    became: list[tuple[int, ToolCall]] = []
    waiting: list[tuple[int, ToolCall]] = []
    fresh = ((i, call) for i, m in enumerate(new, start) if m.role == "assistant" for call in m.tool_calls)
    for i, call in (*found.waiting, *fresh):  # in the order of the messages
        if call.id in failed:
            continue  # failed once, never carried out
        (became if longer.answered(call.id) else waiting).append((i, call))
    if became and carried and became[0][0] <= carried[-1][0]:  # a call answered late: back in the message's order

        def place(c: tuple[int, ToolCall]) -> tuple[int, int]:
            return c[0], longer.messages[c[0]].tool_calls.index(c[1])

        carried = sorted([*carried, *became], key=place)
    else:
        carried += became
    return _Calls(tuple(carried), tuple(waiting), failed)


def did_not_run(message: Message) -> bool:
    """Whether a tool message says its call did not run: the host marked it an error *and* its text is one the
    validator's own integrations send when they keep a call from running (a refusal, "the action validator …
    does not run"). Any other result ran, an error one too: a tool's error text is the tool's to word ("Error:
    timeout, but the transfer went through", "Transfer settled", "Insufficient funds"), and code cannot tell
    which of them ran, so a call is done unless the validator itself kept it from running (the safe side: the
    same action again goes to the user)."""
    if not message.is_error:
        return False
    text = message.content.lstrip()
    return (text.startswith(REFUSAL_PREFIX) and REFUSAL_MARK in text[:300]) or text.startswith(OWN_NOTICES)


REFUSAL_PREFIX = REFUSAL_TEMPLATE.split("{", 1)[0]
REFUSAL_MARK = REFUSAL_TEMPLATE.split("}", 1)[1].split("(", 1)[0]
OWN_NOTICES = ("The action validator ",)
"""How the integrations' own notices of a call kept from running begin (the hook's, the SDK guard's)."""


CALLS: Fact[_Calls] = Fact("calls carried out", _calls, _more_calls)
"""``(message, call)`` of every call a tool message answered without an error (the host's mark): it ran. A
longer transcript of the same conversation re-reads only its new messages and the calls not yet carried out."""


LONGEST = 1_000
"""A value longer than this is not parsed: it is taken for the same as any (the safe side, the user is asked)."""
ANY = "\x00any"


def _forms(value: Any) -> set[str]:
    """The forms a value is compared in across two calls, loosely (a call wrongly taken for the same one goes to
    the user; one wrongly taken for another would run twice): an entity by its identity ("DE44 5001 …",
    "DE44-5001-…", "mailto:ann@…", "Ann <ann@…>"), a text by its letters and digits, a path also by its last
    part, a number by its value, each element of a list."""
    if isinstance(value, Mapping):
        return {f for k, v in value.items() if k != "justification" for f in _forms(v)}
    if isinstance(value, list | tuple):
        return {f for v in value for f in _forms(v)}
    if isinstance(value, bool) or value is None:
        return {repr(value)}
    raw, number = str(value), isinstance(value, int | float)
    # kept once for a value as short as a value is (each check compares the calls after the request again: their
    # values are the same); a longer one, an email's whole body, is read each time and never held
    return set(_kept_forms(raw, number) if len(raw) <= LONGEST else _scalar_forms(raw, number))


@lru_cache(maxsize=4096)
def _kept_forms(raw: str, number: bool) -> frozenset[str]:
    return _scalar_forms(raw, number)


def _scalar_forms(raw: str, number: bool) -> frozenset[str]:
    """:func:`_forms` of one text or number (``raw``: its ``str``)."""
    text = unicodedata.normalize("NFKC", raw)  # full-width letters are plain ones to a bank
    if len(text) > LONGEST:
        return frozenset({ANY})  # too long to compare as a value (and to parse, on every check): taken for the same
    forms = {compact(text)}
    if "/" in text:
        forms.add(compact(text.rstrip("/").rsplit("/", 1)[-1]))
    for entity in extract_entities(text):
        forms.add(f"{entity.kind}:{entity.key}")
    if number:
        forms.add(f"number:{Decimal(text).normalize()}")  # NaN and infinities included: str() parses
    else:
        forms |= {f"number:{amount.value.normalize()}" for amount in amounts_in(text)}
    return frozenset(forms - {""})


def _overlap(a: set[str], b: set[str]) -> bool:
    return bool(a & b) or ANY in a or ANY in b


def _cutoff(request: JudgeRequest) -> int | None:
    """The message of the newest request sentence that names the action's own values (one of an older request
    restated later is the newer one's; "Now pay Ann 50 EUR." after an older request is not this one's)."""
    intent = request.findings.intent
    assert intent is not None
    args = request.action.args
    by_message: dict[int, list[Any]] = {}
    for f in intent.fills:
        if f.call != -1:
            by_message.setdefault(f.message, []).append(f)
    held = {f.path: _forms(lookup(args, f.path)[1]) for fills in by_message.values() for f in fills}
    naming = [
        m
        for m, fills in by_message.items()
        if all(
            (f.number is not None and f"number:{f.number.normalize()}" in held[f.path])
            or _forms(f.text) <= held[f.path]
            for f in fills
        )
    ]
    if naming:
        return max(naming)
    return min(intent.requested_in) if intent.requested_in else None


def carried_out(request: JudgeRequest) -> ToolCall | None:
    """The call of the transcript that already carried out the request the action rests on, or None: a call of
    the tool after the request whose targets (the policy's, else the values the request fills, else none) are
    the action's, under the same argument or under another ("to" for "recipient"); for a dangerous action,
    also a call of another dangerous tool that does the same thing, whose targets hold every target value of
    the action ("pay_bill" ran, now "send_money" with the same IBAN: one request, one payment)."""
    intent = request.findings.intent
    if intent is None or not intent.asked:
        return None
    after = _cutoff(request)
    if after is None:
        return None
    action = request.action
    paths = list(request.tool_policy.targets) or sorted({f.path for f in intent.fills if f.call != -1})
    mine = {p: _bound(_forms(lookup(action.args, p)[1]), p, request) for p in paths}  # once, not per call
    calls = request.transcript.fact(CALLS)
    carried = calls.carried
    like = _like_tools(request) if paths and request.tool_policy.risk == "dangerous" else {}
    # only the calls after the request: those that ran, and those with no result yet (in flight: done as well)
    after_request = [
        *carried[bisect_right(carried, after, key=itemgetter(0)) :],
        *_in_flight(request.transcript, calls, after, action),
    ]
    for _, call in after_request:
        if call.id == action.call_id:
            continue
        if call.name == action.tool:
            # a request naming no value ("Do it.") was carried out by any call of its tool
            if all(_overlap(_forms(lookup(call.args, p)[1]), mine[p]) for p in paths):
                return call
            elsewhere = [p for p in paths if lookup(call.args, p)[0] != "found"]  # "to" where "recipient" is
            held = _forms(call.args) - {ANY} if elsewhere else set()
        elif call.name in like:
            held = {f for t in like[call.name] for f in _forms(lookup(call.args, t)[1]) if f != ANY}
        else:
            continue
        if held and all(held & mine[p] for p in paths):
            return call
    return None


_WORDS = re.compile(r"[^\W_]+")


def corrected(request: JudgeRequest) -> int | None:
    """The user's earlier message that asked the same tool's deed for the same payee with another amount, when
    the request has no word saying it adds one (the pack's ``[amounts] again``): "Transfer 900 EUR to DE44… for
    the rent." then "Transfer 950 EUR to DE44… for the rent." is a correction or a second payment, and code cannot
    tell which.
    Compared by the forms of the values (:func:`_forms`), never by the grammar: a mention with another number
    asks as well (the safe side)."""
    intent = request.findings.intent
    tool_policy, action = request.tool_policy, request.action
    amounts = tool_policy.amount_paths(action.tool)
    if intent is None or not intent.asked or intent.multiple or not amounts or not tool_policy.targets:
        return None
    after = _cutoff(request)
    if after is None:
        return None
    said = {w for r in request.findings.requests for w in _WORDS.findall(r.text.casefold())}
    if said & (request.language or english()).again:
        return None
    payee = set().union(*(_bound(_forms(lookup(action.args, p)[1]), p, request) for p in tool_policy.targets))
    payee -= {ANY}
    payee = {f for f in payee if ":" in f and not f.startswith("number:")}  # an account, an address: an entity
    mine = set().union(*(_forms(lookup(action.args, p)[1]) for p in amounts)) - {ANY}
    mine = {f for f in mine if f.startswith("number:")}
    if not payee or not mine:
        return None
    words = set(tool_policy.intent_words(action.tool))
    for i in range(after - 1, -1, -1):
        m = request.transcript.messages[i]
        if m.role != "user" or not m.content or len(m.content) > LONGEST:
            continue
        held = _forms(m.content)
        folded = " ".join(_WORDS.findall(m.content.casefold()))
        numbers = {f for f in held if f.startswith("number:")}
        if payee & held and numbers and not numbers & mine and any(f" {w} " in f" {folded} " for w in words):
            return i
    return None


def _bound(forms: set[str], path: str, request: JudgeRequest) -> set[str]:
    """A target's forms with every other form the request binds to the same payee ("Pay Bob 500 EUR, his IBAN is
    DE89…": Bob and DE89… are one payee): a request for one action names one payee, so each value it puts in
    the argument, each address, account or link its sentences hold, and each value of the record the user's own
    records hold for a name it gives (Bob's contact: his IBAN, his address) is a form of it, when one of them
    is the action's value. A request for several actions binds nothing this way."""
    intent = request.findings.intent
    if intent is None or intent.multiple or ANY in forms:
        return forms
    names = [f.text for f in intent.fills if f.path == path]
    named = [_forms(name) for name in names]
    named += [{f"{e.kind}:{e.key}"} for r in request.findings.requests for e in extract_entities(r.text[:LONGEST])]
    if any(g & forms for g in named):
        forms = forms.union(*named)
    looked_up = [_forms(texts) for texts in records_of(request.transcript, names, sources(request.policy))]
    if any(g & forms for g in looked_up):
        forms = forms.union(*(g for g in looked_up if not g & {ANY}))
    return forms


def _in_flight(transcript: Transcript, calls: _Calls, after: int, action: PendingAction) -> list[tuple[int, ToolCall]]:
    """The calls after the request with no result yet, made in an earlier message than the action's own: each
    counts as done (it may be running now). The action's own message is the one holding its id, or, for an
    action checked with none, the transcript's newest message of calls holding a call of its tool with its very
    arguments (the host checks the call it is about to run): with a user's, an assistant's or another call's
    message after it, that call was made before and may be running, so the action is another (the calls beside
    it are checked with it, and the store's ledger lets the first of two spend the request). Two such calls in
    that message, checked with no id, cannot be told apart: each counts as done (the person is asked)."""
    own = dict(action.args)
    newest = _newest_calls(transcript)
    alike = [
        (i, call)
        for i, call in calls.waiting
        if action.call_id is None and i == newest and call.name == action.tool and _same_args(call.args, own)
    ]
    if len(alike) > 1:  # two of the very call in one turn, checked with no id: which one is this? each is done
        return alike
    mine = [i for i, call in calls.waiting if call.id == action.call_id] + [i for i, _ in alike]
    before = max(mine) if mine else None
    return [(i, call) for i, call in calls.waiting if after < i and (before is None or i < before)]


def _newest_calls(transcript: Transcript) -> int | None:
    """The last message of calls when only its calls' results follow it (the turn the host is running), else
    None."""
    messages = transcript.messages
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].tool_calls:
            return i
        if messages[i].role != "tool":
            return None
    return None


def _same_args(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    def plain(args: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in args.items() if k != "justification"}

    return plain(a) == plain(b)


def _like_tools(request: JudgeRequest) -> dict[str, tuple[str, ...]]:
    """The policy's other dangerous tools that do what the action's tool does (an intent word in common:
    ``pay_bill`` and ``send_money`` both pay), with their targets: a call of one carried the request out
    when its targets hold the action's."""
    tool = request.action.tool
    words = set(request.tool_policy.intent_words(tool))
    return {
        name: p.targets
        for name, p in request.policy.tools.items()
        if name != tool and p.risk == "dangerous" and p.targets and words & set(p.intent_words(name))
    }


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
    if not rules.on(Rule.ONE_REQUEST) or not verdict.approved or request.tool_policy.exempt:
        return verdict
    judged = verdict.findings.intent
    if judged is not None and judged.judged is not None:  # the request a model decided: spent like a proved one
        request = replace(request, findings=verdict.findings)
    done = carried_out(request)  # every guarded tool: the same email sent twice reaches someone twice
    if done is not None:
        return decision.request_carried_out(verdict, done.id)
    earlier = corrected(request)
    if earlier is not None:
        return decision.correction_or_second(verdict, earlier)
    if ledger is None or request.tool_policy.risk != "dangerous":
        return verdict
    keys = _keys(request.findings, request.transcript, request.action.tool, request.user_id, now or datetime.now(UTC))
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


def lost(verdict: Verdict, spend: SpendLost) -> Verdict:
    """The approval whose spend the store did not make with its record (a store that carries spends with the
    audit append: :class:`~validator.store.base.SpendLost`): another action spent the request first, or the
    store failed. It goes to the user, as when the ledger said so before the record."""
    if spend.held is not None:
        return decision.request_used(verdict, spend.held)
    return decision.ledger_unavailable(verdict, spend.reason)


def spend_answered(
    decided: Verdict,
    transcript: Transcript,
    action: PendingAction,
    tool_policy: ToolPolicy,
    user_id: str | None,
    ledger: RequestLedger | None,
    ttl: timedelta = SPENT_TTL,
    rules: Rules = ALL_ON,
    now: datetime | None = None,
) -> None:
    """The user approved, when asked, a dangerous action whose verdict cites a request of theirs: the request is
    spent by it, as by any approval, so another action citing it goes to the user. The user's yes stands
    whatever the ledger says (it is their decision); a ledger that cannot answer is logged."""
    if not rules.on(Rule.ONE_REQUEST) or not decided.approved or ledger is None:
        return
    if tool_policy.risk != "dangerous" or tool_policy.exempt:
        return
    try:
        keys = _keys(decided.findings, transcript, action.tool, user_id, now or datetime.now(UTC))
        spent_by = spender(action, transcript)
        for key in keys:
            held = ledger.spend(key, spent_by, ttl)
            if held is not None:
                log.info("the user approved %s on a request another action had spent (%s)", action.tool, held)
    except Exception as exc:  # the user's answer is recorded whatever happens here
        log.error("the user's approval of %s did not spend its request: %s", action.tool, exc)
