"""The evidence gate: what code can decide, code decides, before any judge runs.

For one pending action it checks, with no model:

- each quote of the justification stands verbatim (after whitespace, case and quote-mark
  normalisation, on word boundaries) in a **user** message; found only in a tool output or the
  agent's own text it is an outside party's words (``EVIDENCE_NOT_FROM_USER``); found nowhere it
  is fabricated (``EVIDENCE_NOT_FOUND``);
- each cited standing authorization exists, belongs to this user, is active and covers this
  action (``AUTHORIZATION_*``);
- at least one of the two proves the user spoke (``NO_USER_EVIDENCE``);
- which sentences of the user's own words the quotes stand in (the *request*), and whether the
  closed-world reader proves, disproves or cannot tell that one of them asks the assistant for
  this action (:mod:`validator.gate.requests`);
- where each target value, each amount of a money tool, and each entity inside the other
  arguments came from, compared as values (:mod:`validator.gate.grounding`): proved (in the
  request, or a cited authorization), disproved (forbidden by the request, or only in an outside
  party's text), or unknown.

It returns findings only: what they come to (any **disproved** finding blocks, a **dangerous** action
with an **unknown** one goes to the user, everything else goes to the judge) is the decision table of
principle 7, in one place (:func:`validator.decision.decide`). The gate never approves.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any

from msgspec import structs

from validator.exceptions import StoreError
from validator.findings import (
    AuthorizationFinding,
    Findings,
    IntentFinding,
    Location,
    QuoteFinding,
    RequestFill,
    RequestSentence,
    ValueFinding,
)
from validator.gate.authorizations import Resolved, grant_period, scope_problems
from validator.gate.check_context import CheckContext
from validator.gate.grammar import grammar
from validator.gate.grounding import (
    NO_CURRENCY,
    UNREADABLE,
    Grounds,
    ambiguous_currency,
    copied_from_outside,
    ground_value,
)
from validator.gate.index import other_index, user_index
from validator.gate.judgeable import judgeable
from validator.gate.options import option_findings, unclassified
from validator.gate.reader import ToolSense, argument_words, declared, warm
from validator.gate.requests import (
    delegated_instructions,
    negated_anywhere,
    read_request,
    request_fill,
    suggest_tool,
)
from validator.gate.secrets import secrets_in, users_secrets
from validator.gate.signature import named_only_outside, outside_target
from validator.inputs.action import (
    MAX_QUOTE_CHARS,
    MAX_QUOTES,
    AuthorizationEvidence,
    Justification,
    PendingAction,
    QuoteEvidence,
)
from validator.inputs.transcript import Transcript, is_users
from validator.language import LanguagePack, english, fold_apostrophes
from validator.language.classes import TIMEX
from validator.language.rules import ALL_ON, Rule, Rules
from validator.policy import Policy, ToolPolicy
from validator.policy import sources as record_sources
from validator.store.records import StandingAuthorization
from validator.text.entities import amounts_in, extract_entities
from validator.text.lexer import quoted_spans
from validator.text.paths import Keys, keyed_strings, leaves, lookup, under
from validator.text.search import normalize
from validator.text.sentences import locate, own_words, pasted_by_message, request_sentences
from validator.text.split import sentences as split_sentences
from validator.text.times import moment

__all__ = ["run_gate"]

MAX_LOCATIONS = 5
"""Locations reported per quote or value (the search stops there): a quote's are the newest messages holding it
(a request said again and again stands for its latest saying), a value's the first."""


def _locations(transcript: Transcript, hits: list[int], *, outside: bool = False) -> tuple[Location, ...]:
    found = []
    for i in hits:
        m = transcript[i]
        speaker = m.speaker
        if outside and m.role == "user":
            speaker = f"another user ({m.author})" if m.author else "text pasted into the user's message"
        found.append(Location(i, m.role, speaker))
    return tuple(found)


def check_quote(
    transcript: Transcript,
    index: int,
    quote: str,
    user_id: str | None = None,
    rules: Rules = ALL_ON,
    pack: LanguagePack | None = None,
) -> QuoteFinding:
    """Where one quote stands, and whether it is the user's (``pack``: the language pasted text is found by)."""
    needle = normalize(quote)
    hits = user_index(transcript, user_id, rules, pack).find_text(needle, MAX_LOCATIONS, newest=True)
    if hits:
        return QuoteFinding(index, quote, "user", _locations(transcript, hits))
    hits = other_index(transcript, user_id, rules, pack).find_text(needle, MAX_LOCATIONS, newest=True)
    if hits:
        return QuoteFinding(index, quote, "not_from_user", _locations(transcript, hits, outside=True))
    # a quote that runs from the user's own words into text they pasted stands in their message: it is
    # the user's, and only its own-words sentences are ever read as a request (request_sentences)
    pasted = pasted_by_message(transcript, rules, pack)
    crossing = [i for i in sorted(pasted) if is_users(transcript.messages[i], user_id)]
    hits = [i for i in crossing if locate(transcript.messages[i].content, needle, 1)][-MAX_LOCATIONS:]
    return QuoteFinding(index, quote, "user" if hits else "not_found", _locations(transcript, hits))


def _check_quotes(ctx: CheckContext, justification: Justification) -> tuple[QuoteFinding, ...]:
    """Every quote of the justification; a quote repeated (after normalisation) is searched once."""
    seen: dict[str, QuoteFinding] = {}
    findings = []
    for i, e in enumerate(justification.evidence):
        if isinstance(e, QuoteEvidence):
            key = normalize(e.quote)
            earlier = seen.get(key)
            found = (
                check_quote(ctx.transcript, i, e.quote, ctx.user_id, ctx.rules, ctx.pack)
                if earlier is None
                else replace(earlier, index=i, quote=e.quote)
            )
            seen[key] = found
            findings.append(found)
    return tuple(findings)


def check_authorization(
    index: int,
    auth_id: str,
    resolved: Resolved,
    *,
    user_id: str | None,
    action: PendingAction,
    now: datetime,
    tool_risk: str = "general",
    targets: tuple[str, ...] = (),
    pack: LanguagePack | None = None,
) -> tuple[AuthorizationFinding, StandingAuthorization | None]:
    """Whether one cited standing authorization counts for this action."""
    record = resolved.get(auth_id)
    if isinstance(record, StoreError):
        return AuthorizationFinding(index, auth_id, "unavailable", f"the store could not be read: {record}"), None
    if record is None:
        return AuthorizationFinding(index, auth_id, "not_found", "no standing authorization has this id"), None
    if user_id is None or record.user_id != user_id:
        who = "no user id was given for this check" if user_id is None else "it belongs to another user"
        return AuthorizationFinding(index, auth_id, "wrong_user", who), None
    state = record.status(now)
    if state == "revoked":
        return AuthorizationFinding(
            index, auth_id, "revoked", f"revoked at {record.revoked:%Y-%m-%d %H:%M}", record.quote
        ), None
    if state == "expired":
        return AuthorizationFinding(
            index, auth_id, "expired", f"expired at {record.expires:%Y-%m-%d %H:%M}", record.quote
        ), None
    problems = scope_problems(record, action.tool, action.args, tool_risk=tool_risk, targets=targets)
    if problems:
        return AuthorizationFinding(index, auth_id, "out_of_scope", "; ".join(problems), record.quote), None
    covers = f"covers {record.tool} where {dict(record.where)}"
    return AuthorizationFinding(index, auth_id, "valid", covers, record.quote, grant_period(record.quote, pack)), record


def _target_values(
    action: PendingAction, targets: tuple[str, ...], keyed: bool = False
) -> Iterator[tuple[str, str, Any]]:
    """``(path, declared target, value)`` for every leaf of every declared target (and, ``keyed``, every key of
    an object in one); None when absent or empty; unreadable when it holds objects with nothing in them."""
    for target in targets:
        found, value = lookup(action.args, target)
        if found == "absent":
            yield target, target, None
            continue
        if found == "unreadable":
            yield target, target, UNREADABLE
            continue
        items = list(leaves(value))
        names = [k for _, p, k in keyed_strings(value, (), target) if p.endswith("(key)")] if keyed else []
        if not items and not names:
            yield target, target, UNREADABLE if isinstance(value, Mapping | list | tuple) and value else None
        for i, leaf in enumerate(items):
            yield (f"{target}[{i}]" if len(items) > 1 or isinstance(value, list | tuple) else target), target, leaf
        for name in names:
            yield f"{target}(key)", target, name


_IDENTIFIER = re.compile(r"^(?=.*[\d@/#:._-])[\w@/#:.+-]{2,200}$")


def _identifiers(action: PendingAction) -> tuple[str, ...]:
    """For a dangerous tool with no declared targets: every top-level argument that names something (an
    id, a path, an address: one token with a digit or a separator; or any scalar under a key ending in
    ``id``), so nothing it reaches goes uncompared ("delete the newsletter thread t-17" is no grant to
    delete ``t-payroll-2026``)."""
    out = []
    for name, value in action.args.items():
        if name == "justification" or isinstance(value, bool):
            continue
        named = name.casefold().endswith("id") and isinstance(value, str | int)
        if named or any(isinstance(v, str) and _IDENTIFIER.match(v) for v in leaves(value)):
            out.append(name)
    return tuple(out)


EMPTY_NOTE = "an empty value the agent set (for many tools it lifts a limit: no expiry, no restriction)"
COPIED_NOTE = "words copied from an outside party's message into content the agent writes"
TIME_NOTE = "a time or a date in content the agent writes that the user's request does not name"
SPAN_NOTE = "an end that is not after the start the user named, on the same day"


def _span_held(action: PendingAction, fills: Sequence[RequestFill], pack: LanguagePack) -> Iterator[ValueFinding]:
    """An end on the day the user's time starts, after it: each side of a span holds its own argument ("from 2 to 4
    in the afternoon"), but 2pm today and 4pm tomorrow is no span the user named; a time of its own ("tomorrow at
    3pm") names the start, and the call's end, the agent's to choose, stays on that day."""
    ends = pack.time_ends
    starting = {f.path for f in fills if f.kind == "time" and not argument_words(f.path) & ends}
    finishing = [p for p in action.args if argument_words(p) & ends]
    for end in finishing:
        for start in starting:
            found_a, a = lookup(action.args, start)
            found_b, b = lookup(action.args, end)
            began, ended = (m.replace(tzinfo=None) if m else None for m in (moment(a), moment(b)))  # as holds_time
            if found_a == found_b == "found" and began and ended and (began.date() != ended.date() or ended <= began):
                yield ValueFinding(end, str(b), "not_found", "time", note=SPAN_NOTE)


MAX_CONTENT_READ = 20_000
"""Characters of a content argument read for amounts (bounded work)."""
AMBIGUOUS_NOTE = "a key with '.' or '[' in it cannot be told from a nested path"


def _chosen(action: PendingAction, covered: tuple[Keys, ...], amount_given: bool) -> list[tuple[str, Any, str | None]]:
    """For a dangerous action, ``(path, value, note)`` for every value it carries beyond its targets and
    amounts: each scalar of the other arguments, each key of an object among them, an explicit empty object
    or list, and the fields beside a target inside the same object (``message.text`` beside ``message.to``).
    Each is the agent's choice unless the user's request or a cited authorization holds it as a value
    ("share it with Ann" is no grant of ``role="owner"``; "delete the thread t-88" none of
    ``purge_everywhere=true``; "email Bob the summary" none of a body holding the customer list), so the
    user is asked. A money tool's string ``currency`` is compared with its amount when there is one; a key
    that cannot be told from a nested path is unreadable. ``None`` is an argument not given."""
    out: list[tuple[str, Any, str | None]] = []

    def visit(value: Any, keys: Keys, path: str) -> None:
        if under(keys, covered):
            return
        if any("." in k or "[" in k for k in keys):
            out.append((path, UNREADABLE, AMBIGUOUS_NOTE))
            return
        holds = any(c[: len(keys)] == keys for c in covered)  # a target lies inside: its keys are the schema's
        if isinstance(value, Mapping):
            if not value:
                out.append((path, "{}", EMPTY_NOTE))
            for k, v in value.items():
                if not holds:
                    out.append((f"{path}.{k}(key)", str(k), None))
                visit(v, (*keys, str(k)), f"{path}.{k}")
        elif isinstance(value, list | tuple):
            if not value:
                out.append((path, "[]", EMPTY_NOTE))
            for i, v in enumerate(value):
                visit(v, keys, f"{path}[{i}]")
        elif value is not None:
            out.append((path, value, None))

    for name, value in action.args.items():
        if name == "justification" and value == action.justification:
            continue
        if name == "currency" and isinstance(value, str) and amount_given:
            continue
        visit(value, (str(name),), str(name))
    return out


def _noted(finding: ValueFinding, note: str | None) -> ValueFinding:
    """A chosen value's finding with what the gate saw of it: an explicit empty value is never absent nor
    grounded (a key that cannot be told from a path is unreadable already)."""
    if note is None:
        return finding
    status = "not_found" if note == EMPTY_NOTE else finding.status
    return replace(finding, status=status, note="; ".join(n for n in (finding.note, note) if n))


def _is_under(path: str, targets: tuple[str, ...]) -> bool:
    return any(path == t or path.startswith((t + ".", t + "[")) for t in targets)


def run_gate(
    transcript: Transcript,
    action: PendingAction,
    tool_policy: ToolPolicy,
    *,
    user_id: str | None = None,
    resolved: Resolved | None = None,
    now: datetime,
    policy: Policy | None = None,
    budget: float | None = None,
    edited: Collection[str] = (),
    rules: Rules = ALL_ON,
    pack: LanguagePack | None = None,
) -> Findings:
    """Run every code check on one action and return what they found (:func:`validator.decision.decide` decides
    what it comes to); see the module docstring. ``policy`` (the whole policy) lets a refusal suggest the tool
    the user did ask for. ``edited``: argument paths the user set themselves by
    editing the call when asked (their edit is the user's words for exactly those values). ``rules``: the
    rules it runs with (all, outside an ablation). ``pack``: the language the user's words are read in (English
    by default)."""
    justification = action.parsed
    if justification is None:
        return Findings(justification_problems=action.problems or ("the justification does not parse",))
    pack = pack or english()
    warm(pack)  # one-time loads never count against the budget
    deadline = None if budget is None else time.perf_counter() + budget
    ctx = CheckContext(transcript, user_id=user_id, rules=rules, deadline=deadline, now=now, pack=pack)
    quotes = _check_quotes(ctx, justification)
    ctx.within("checking the quotes")
    auth_findings: list[AuthorizationFinding] = []
    valid: list[StandingAuthorization] = []
    for i, e in enumerate(justification.evidence):
        if isinstance(e, AuthorizationEvidence):
            finding, record = check_authorization(
                i,
                e.authorization_id,
                resolved or {},
                user_id=user_id,
                action=action,
                now=now,
                tool_risk=tool_policy.risk,
                targets=tool_policy.targets,
                pack=pack,
            )
            auth_findings.append(finding)
            if record is not None:
                valid.append(record)
    if justification.found:
        requests = found_sentences(transcript, user_id, rules, pack)
    else:
        cited = [
            (q.index, normalize(q.quote), [loc.message for loc in q.locations]) for q in quotes if q.status == "user"
        ]
        requests = request_sentences(transcript, cited, rules, pack)
    sense = sense_of(action.tool, tool_policy, action, pack)
    others = _others(policy, action.tool, pack)
    intent = read_request(sense, requests, ctx, others=tuple(others.values()))
    if not intent.requested and intent.proof != "disproved" and policy is not None:
        intent = _as_step(ctx, intent, sense, tool_policy, policy, action, requests)
    if intent.problem == "not_named":
        intent = delegated_instructions(sense, requests, ctx) or intent
    if (
        not intent.requested
        and intent.proof != "disproved"
        and intent.problem != "delegated"  # the user named the source: theirs to decide
        and not valid
        and rules.on(Rule.INJECTION_SIGNATURE)
    ):
        outside = named_only_outside(ctx, sense)
        if outside is not None:  # nothing of the user's names it; an outside party's text does
            intent = replace(intent, proof="disproved", problem="outside_only", detail=outside, step_of=None)
    if (
        not intent.requested
        and policy is not None
        and (other := suggest_tool(policy, action.tool, others, requests, ctx))
    ):
        intent = replace(intent, other_tool=other[0], other_intent=other[1])
    ctx.within("reading the request")
    grounded = _grounded(ctx, requests, action, tool_policy, tuple(valid), intent, sources=record_sources(policy))
    if tool_policy.risk == "dangerous" and rules.on(Rule.INJECTION_SIGNATURE):
        grounded = (_outside_only(ctx, grounded[0], action.tool, tool_policy), grounded[1])
    if edited:
        grounded = (_by_edit(grounded[0], edited), _by_edit(grounded[1], edited))
    ctx.within("grounding the values")
    values = (*grounded[0], *grounded[1])
    open_to = judgeable(ctx, action, tool_policy, intent, requests, values, sense, tuple(others.values()))
    findings = Findings(
        quotes=quotes,
        requests=requests,
        authorizations=tuple(auth_findings),
        targets=grounded[0],
        entities=grounded[1],
        intent=intent,
        evidence="found" if justification.found else "cited",
        judgeable=open_to,
    )
    return findings


FOUND_CHARS = MAX_QUOTES * MAX_QUOTE_CHARS
"""The most of the user's words found evidence reads: what the longest justification an agent may send could
cite (the newest first). Reading fewer sentences only leaves a request unknown, never proves one."""


def found_sentences(
    transcript: Transcript, user_id: str | None = None, rules: Rules = ALL_ON, pack: LanguagePack | None = None
) -> tuple[RequestSentence, ...]:
    """The sentences of the user's own words in the conversation, as if each were cited: the evidence of a
    call whose host cannot carry a justification (:data:`~validator.inputs.action.FOUND`).

    An agent that quoted every sentence of the user's would get exactly these sentences (pasted text and
    text of unclear authorship blanked, a list item under its lead-in), so finding the evidence never
    proves more than citing it could. Like a justification, it reads at most :data:`FOUND_CHARS` of them,
    the newest first. ``quote_index`` is -1: no evidence item points to them.
    """
    out: list[RequestSentence] = []
    left = FOUND_CHARS
    for i in range(len(transcript.messages) - 1, -1, -1):
        if left <= 0:
            break
        if not is_users(transcript.messages[i], user_id):
            continue
        own = own_words(transcript, i, rules, pack)
        found: list[RequestSentence] = []
        for x in split_sentences(own, pack):
            text = own[x.start : x.end]
            if any(ch.isalnum() for ch in text):
                found.append(RequestSentence(i, x.start, x.end, text, -1, x.lead))
        for sentence in reversed(found):
            left -= len(sentence.text)
            if left < 0:
                break
            out.append(sentence)
    return tuple(reversed(out))


def sense_of(
    tool: str, tool_policy: ToolPolicy, action: PendingAction | None = None, pack: LanguagePack | None = None
) -> ToolSense:
    """What the reader needs of a tool: its intents and its arguments (the call's, and the policy's targets and
    amounts), each with its kind, read in ``pack`` (English by default)."""
    args = [str(k) for k in action.args if k != "justification"] if action is not None else []
    amounts = tool_policy.amount_paths(tool)
    return ToolSense.of(
        tool,
        tool_policy.intent_words(tool),
        arguments=[*args, *tool_policy.targets, *amounts, *tool_policy.kinds],
        kinds=tool_policy.kinds,
        description=tool_policy.description,
        money=amounts,
        required=[*tool_policy.targets, *amounts]
        if action is None
        else [p for p in (*tool_policy.targets, *amounts) if lookup(action.args, p)[0] == "found"],
        open=action is None,
        pack=pack,
    )


def _declared_fills(
    sense: ToolSense, requests: Sequence[RequestSentence], transcript: Transcript
) -> tuple[RequestFill, ...]:
    """The values the cited sentences give as the user's own, in ``sense``'s arguments."""
    out: list[RequestFill] = []
    for r in requests:
        original = transcript.messages[r.message].content[r.start : r.end]
        parse = grammar(sense.pack).parse(r.text, original=original, verbs=sense.verbs)
        out += [request_fill(r, f, -1) for f in declared(parse, sense)]
    return tuple(out)


def _others(policy: Policy | None, tool: str, pack: LanguagePack) -> dict[str, ToolSense]:
    """The policy's other tools, as the reader reads them (a later request for one takes nothing back)."""
    if policy is None:
        return {}
    return {name: sense_of(name, tp, pack=pack) for name, tp in policy.tools.items() if name != tool}


def _as_step(
    ctx: CheckContext,
    intent: IntentFinding,
    sense: ToolSense,
    tool_policy: ToolPolicy,
    policy: Policy,
    action: PendingAction,
    requests: Sequence[RequestSentence],
) -> IntentFinding:
    """The request of a tool this one is a declared step of, when the user's words prove it and no words
    of the user's, in any message, negate the step itself ("Post it, but never log in")."""
    if not tool_policy.step_of:
        return intent
    negation = negated_anywhere(ctx, sense)
    if negation is not None:
        return replace(intent, proof="disproved", negated=True, problem="negated", detail=negation.detail)
    for parent in tool_policy.step_of:
        parent_sense = sense_of(parent, policy.for_tool(parent), pack=ctx.pack)
        others = tuple(_others(policy, parent, ctx.pack).values())
        found = read_request(parent_sense, requests, ctx, others=others)
        if found.requested:
            # the step's own values come from the user's own words ("my username is dr_smith"), never through
            # the parent's arguments
            own = _declared_fills(sense, requests, ctx.transcript)
            return replace(found, intents=intent.intents, step_of=parent, fills=own, forbidden=())
    return intent


def _grounded(
    ctx: CheckContext,
    requests: tuple[Any, ...],
    action: PendingAction,
    tool_policy: ToolPolicy,
    valid: tuple[StandingAuthorization, ...],
    intent: IntentFinding,
    *,
    sources: frozenset[str] = frozenset(),
) -> tuple[tuple[ValueFinding, ...], tuple[ValueFinding, ...]]:
    """Targets (and a money tool's amounts) and the entities inside the other arguments, grounded: a target
    counts only as the value the proved request puts in its argument, an entity inside another argument only
    in the request's verb phrase (``intent``). When the request asks for several calls, the call's values are
    grounded by the fills of one of them (the one that holds the most)."""
    found = []
    for fills in _calls(intent.fills):
        grounds = Grounds(
            requests,
            authorizations=valid,
            fills=fills,
            forbidden=intent.forbidden,
            sources=sources,
            policy_currency=tool_policy.currency,
        )
        found.append(_grounded_by(ctx, grounds, action, tool_policy, intent))
    return min(found, key=lambda f: sum(v.proof != "proved" for v in (*f[0], *f[1])))


def _calls(fills: Sequence[RequestFill]) -> list[tuple[RequestFill, ...]]:
    """The request's fills, call by call (each with the values declared for every call)."""
    numbers = sorted({f.call for f in fills if f.call >= 0})
    if len(numbers) <= 1:
        return [tuple(fills)]
    return [tuple(f for f in fills if f.call in (n, -1)) for n in numbers]


def _grounded_by(
    ctx: CheckContext, grounds: Grounds, action: PendingAction, tool_policy: ToolPolicy, intent: IntentFinding
) -> tuple[tuple[ValueFinding, ...], tuple[ValueFinding, ...]]:
    transcript, rules = ctx.transcript, ctx.rules
    requests = _bound(tuple(grounds.requests), intent.clauses)
    # what the user described the made thing as names a title the agent words: never compared with content
    fills = tuple(f for f in grounds.fills if not (f.kind == "described" and _in_paths(f.path, tool_policy.content)))
    ground = partial(ground_value, ctx, structs.replace(grounds, requests=requests, fills=fills))
    own = action.args.get("currency")  # the call's own, else the policy's for the tool, else none named
    currency = own if isinstance(own, str) and own else (tool_policy.currency or NO_CURRENCY)
    amounts = tuple(p for p in tool_policy.amount_paths(action.tool) if p not in tool_policy.targets)
    declared = tool_policy.targets or (_identifiers(action) if tool_policy.risk == "dangerous" else ())
    targets = tuple(
        ground(path, value, scope_path=target)
        for path, target, value in _target_values(
            action, tuple(t for t in declared if t not in amounts), keyed=tool_policy.risk == "dangerous"
        )
    ) + tuple(
        _ambiguous(
            ground(path, value, kind="amount", scope_path=target, currency=currency), requests, currency, ctx.pack
        )
        for path, target, value in _target_values(action, amounts)
        if value is not None
    )
    targets += tuple(_span_held(action, fills, ctx.pack))
    if tool_policy.risk == "dangerous":
        targets += tuple(_repeated(action.args, (*declared, *amounts), amounts))
    if amounts and intent.multiple and _several_payees(fills, declared, requests, ctx.pack):
        targets = tuple(_joint(v) if v.kind == "amount" else v for v in targets)
    covered = tuple(tuple(p.split(".")) for p in (*declared, *amounts))
    options = tool_policy.options if rules.on(Rule.OPTIONS) else {}
    if options:
        targets += tuple(option_findings(action.args, options, requests, ground, ctx.pack))
    if tool_policy.risk == "dangerous" and rules.on(Rule.DANGEROUS_ARGUMENTS):
        given = any(lookup(action.args, a)[0] == "found" for a in amounts)
        read = (*covered, *(tuple(p.split(".")) for p in options))
        targets += tuple(
            _noted(ground(path, value, kind="argument"), note) for path, value, note in _chosen(action, read, given)
        )
    else:
        # what the request says of any other argument is compared too; content (the agent's wording) only where
        # the user dictated it ("saying …", a colon, quotation marks), not where they said what it is about
        content = tool_policy.content
        filled = sorted({f.path for f in fills} - {p for p in (*declared, *amounts)})
        targets += tuple(
            ground(path, value, kind="content" if _in_paths(argument, content) else "argument", scope_path=argument)
            for path, argument, value in _target_values(action, tuple(filled))
            if value is not None
        )
        targets += tuple(_content_findings(ctx, action, content, ground, requests))
        if rules.on(Rule.OPTIONS):
            classified = (*tool_policy.classified(action.tool), *(f.path for f in fills))
            targets += tuple(unclassified(action.args, classified, requests, ctx.pack))
    strings = [
        (path, text)
        for keys, path, text in keyed_strings(dict(action.args))
        if path.endswith("(key)") or not under(keys, covered)
    ]
    entities = tuple(
        ground(path, entity.value, kind=entity.kind, target=False)
        for path, text in strings
        for entity in extract_entities(text)
    )
    if rules.on(Rule.EGRESS):  # a secret counts only where the request names it for this call
        declared_secrets = users_secrets(transcript, ctx.user_id, ctx.pack)
        entities += tuple(
            ground(path, secret, kind="secret", target=False)
            for path, text in strings
            for secret in secrets_in(text[:MAX_CONTENT_READ], declared_secrets)
        )
    if tool_policy.risk == "dangerous":
        targets = tuple(_confirm(v, tool_policy) for v in targets)
        entities = tuple(_confirm(v, tool_policy) for v in entities)
    return targets, entities


REPEATED_NOTE = "a list where one value is meant: each element may be another payment (the same one twice)"


def _repeated(args: Mapping[str, Any], paths: Sequence[str], amounts: Sequence[str]) -> Iterator[ValueFinding]:
    """A dangerous call's amount given as a list or an object (``[50, 50]``), or a target list holding one value
    twice (``["Bob", "Bob"]``): one request asks for one of each, and a tool that takes lists would act twice."""
    for path in paths:
        found, value = lookup(args, path)
        if found != "found":
            continue
        if path in amounts and isinstance(value, Mapping | list | tuple):
            yield ValueFinding(path, None, "unreadable", "amount", note=REPEATED_NOTE)
        elif isinstance(value, list | tuple):
            seen = [str(v).casefold().replace(" ", "") for v in value]
            if len(set(seen)) < len(seen):
                yield ValueFinding(path, None, "unreadable", None, note=REPEATED_NOTE)


def _several_payees(
    fills: Sequence[RequestFill], targets: Sequence[str], requests: Sequence[RequestSentence], pack: LanguagePack
) -> bool:
    """Whether the request, asking for several actions, puts several values in one target of a money tool
    ("Pay 100 EUR to Bob and Ann", "… together", "… between them") with no word that gives each one the
    amount ("each", "apiece"): its amount is then for each of them or for all together, and code cannot tell."""
    words = {w.casefold() for r in requests for w in re.findall(r"[^\W\d_]+", r.valued())}
    if words & pack.distributive:
        return False
    for path in targets:
        named = {f.text.casefold() for f in fills if f.path == path and f.kind not in ("money", "amount")}
        if len(named) > 1:
            return True
    return False


def _joint(finding: ValueFinding) -> ValueFinding:
    if finding.status != "user":
        return finding
    return replace(finding, status="joint", note="; ".join(n for n in (finding.note, JOINT_NOTE) if n))


JOINT_NOTE = "the request names several payees and one amount: ask whether it is each one's or the group's"


def _ambiguous(
    finding: ValueFinding, requests: Sequence[RequestSentence], currency: str, pack: LanguagePack
) -> ValueFinding:
    """An amount not proved, noted when the request wrote it with a currency sign or word several share."""
    if finding.proof == "proved" or not currency:
        return finding
    note = ambiguous_currency(requests, currency, pack)
    return finding if note is None else replace(finding, note="; ".join(n for n in (finding.note, note) if n))


COPIED_WORDS = 8
"""A content argument holding this many words in a row of an outside party's message copied that text."""


def _in_paths(path: str, paths: Sequence[str]) -> bool:
    return any(_is_under(path, (p,)) for p in paths)


def _request_texts(transcript: Transcript, requests: Sequence[RequestSentence]) -> Iterator[str]:
    """The request sentences, and the inside of each passage they quote (read from the message: a sentence's
    text may hold a long quotation masked): a time in "post 'standup moved to 10:30 today' in #eng-team" is the
    user's though the sentence reads the quotation as one token."""
    for r in requests:
        yield r.text
        said = fold_apostrophes(transcript.messages[r.message].content[r.start : r.end])  # spans of the folded text
        yield from (said[a + 1 : b - 1] for a, b in quoted_spans(said))


def _content_findings(
    ctx: CheckContext,
    action: PendingAction,
    content: Sequence[str],
    ground: Any,
    requests: Sequence[RequestSentence] = (),
) -> Iterator[ValueFinding]:
    """What a general action's content arguments (the agent's wording) must still show: every amount in them is
    one the user named (an address, an IBAN or a link is an entity, grounded as any other), every time or date in
    them one the user's request names ("Tell Bob the meeting is at 3pm." is no body saying 5pm), and no run of
    :data:`COPIED_WORDS` words in a row copied from an outside party's message (an email's text forwarded into
    a post, a vendor's wording sent on as the user's)."""
    transcript, g = ctx.transcript, grammar(ctx.pack)
    texts = _request_texts(transcript, requests)
    said = {w.norm for text in texts for w in g.words(text) if TIMEX in w.classes}
    for path in content:
        found, value = lookup(action.args, path)
        if found != "found" or not isinstance(value, str):
            continue
        for amount in amounts_in(value[:MAX_CONTENT_READ]):
            if not amount.is_time and amount.currency is not None:
                yield ground(f"{path}(amount)", amount.value, kind="amount", currency=amount.currency, target=False)
        for w in g.words(value[:MAX_CONTENT_READ]):
            if TIMEX in w.classes and w.norm not in said:
                yield ValueFinding(f"{path}(time)", w.text, "not_found", "time", note=TIME_NOTE)
        copied = copied_from_outside(transcript, value, ctx.user_id, ctx.pack)
        if copied is not None:
            message, words = copied
            yield ValueFinding(
                path,
                words,
                "not_from_user",
                "content",
                _locations(transcript, [message], outside=True),
                note=COPIED_NOTE,
                outside_party=True,
            )


EDITED = "set by the user's own edit of the call"


def _by_edit(found: tuple[ValueFinding, ...], edited: Collection[str]) -> tuple[ValueFinding, ...]:
    """Values at a path the user's edit set are the user's, unless their own words forbid the value (a
    reviewer's edit never outweighs "never send anything to eve@...") or it could not be read."""
    paths = tuple(edited)
    return tuple(
        replace(v, status="user", locations=(), note=EDITED, chain="", needs_user=False)
        if _is_under(v.path.removesuffix("(key)"), paths) and v.status not in ("forbidden", "unreadable", "absent")
        else v
        for v in found
    )


def _outside_only(
    ctx: CheckContext, targets: tuple[ValueFinding, ...], tool: str, tool_policy: ToolPolicy
) -> tuple[ValueFinding, ...]:
    """A dangerous action's targets that stand only in outside parties' text, from no source the user named:
    disproved (the injection signature on a value), never put to the user."""
    amounts = tool_policy.amount_paths(tool)
    out = []
    for v in targets:
        where = None if _is_under(v.path, amounts) else outside_target(ctx, v)
        out.append(v if where is None else replace(v, status="outside_only", outside_party=True))
    return tuple(out)


def _bound(requests: tuple[Any, ...], clauses: tuple[tuple[int, int, int], ...]) -> tuple[Any, ...]:
    """The request sentences with each proved verb's clause marked (values count only there)."""
    if not clauses:
        return requests
    out = []
    for r in requests:
        spans = [
            (max(s, r.start), min(e, r.end)) for m, s, e in clauses if m == r.message and s < r.end and r.start < e
        ]
        out.append(replace(r, clauses=tuple((a - r.start, b - r.start) for a, b in spans)))  # (): none counts
    return tuple(out)


def _confirm(finding: ValueFinding, tool_policy: ToolPolicy) -> ValueFinding:
    """A dangerous action's delegated value needs the user, unless its policy accepts it delegated."""
    if finding.status != "delegated" or _is_under(finding.path, tool_policy.delegate):
        return finding
    return replace(finding, needs_user=True)
