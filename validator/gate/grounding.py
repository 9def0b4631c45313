"""Where an argument value came from, compared as a value, never as a substring.

A value is **grounded** only when it stands in the user's request (a sentence of their own words
that the cited evidence stands in, outside any clause a negation governs) or a cited standing
authorization allows it. Entities are compared by their parsed identity
(:mod:`validator.text.entities`), numbers as numbers (with their currency when both sides name
one; a time of day is not a quantity), and anything else as a whole token: ``team@acme.example``
is not found in ``legal-team@acme.example``, ``t-88`` not in ``t-889``.

A value that is not grounded is reported with where it does stand: in the user's messages but not
in the request (another turn, a forbidding clause, pasted text), only in a tool output or the
agent's text (and whose), or nowhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, NamedTuple

import msgspec

from validator.findings import Location, RequestFill, RequestSentence, ValueFinding, ValueStatus
from validator.gate.authorizations import allows
from validator.gate.check_context import CheckContext
from validator.gate.grammar import grammar
from validator.gate.index import other_index, outside_authors, user_index
from validator.gate.provenance import Trace, has_field, trace
from validator.gate.reader import carried_spans, forbidden_spans
from validator.gate.semantics import hedged
from validator.inputs.transcript import Transcript
from validator.language import LanguagePack, english
from validator.language.classes import (
    ADJ,
    GREET,
    NAME,
    NN,
    NNS,
    NUM,
    NUMW,
    OPEN,
    OPENV,
    PRIV,
    TIMEX,
    VALUE,
    VB,
    VBG,
    VBN,
    VBZ,
)
from validator.language.rules import Rule, Rules
from validator.store.records import StandingAuthorization
from validator.text.entities import (
    AMBIGUOUS_CURRENCIES,
    CURRENCIES,
    Entity,
    amounts_in,
    extract_entities,
    parse_entity,
    same_link,
    settles,
)
from validator.text.lexer import Word
from validator.text.search import TextIndex, normalize
from validator.text.sentences import own_words
from validator.text.split import sentences
from validator.text.times import holds_time, named_years

__all__ = [
    "ambiguous_currency",
    "mentions",
    "outside_party",
    "NO_CURRENCY",
    "UNREADABLE",
    "as_number",
    "copied_from_outside",
    "Grounds",
    "ground_value",
    "stands_in",
]

MAX_LOCATIONS = 5
_LOOKBACK = 40
"""Characters before a number read for the identifier word it may follow ("invoice 2026")."""
MAX_VALUE = 2_000
"""Longer values are not searched for (the gate's work per value is bounded): unreadable, so unknown."""
UNREADABLE = object()
"""A target the gate could not read (the arguments do not have the shape the policy names)."""
_TOKEN_CHAR = re.compile(r"[\w.@\-/+:]")
_NUMERIC = re.compile(r"^-?\d+(?:\.\d+)?$")
_SAME_KIND = {"url": "link", "domain": "link"}


def as_number(value: Any) -> Decimal | None:
    """A plain number (an int, a float, or a string of digits with one optional point); None otherwise.

    Exponents (``4e2``), ``NaN``, infinities and booleans are not numbers here.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        try:
            number = Decimal(repr(value))
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    if isinstance(value, str) and _NUMERIC.match(value.strip()):
        return Decimal(value.strip())
    return None


def _allowed(text: str, pack: LanguagePack, negation: bool = True) -> str:
    """``text`` with every clause a negation governs blanked out (positions kept), read in ``pack``; as is with
    the ``negation`` rule off."""
    return _unnegated(text, pack) if negation else text


@lru_cache(maxsize=512)
def _unnegated(text: str, pack: LanguagePack) -> str:
    return _blanked(text, forbidden_spans(text, grammar(pack)))


def _blanked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = "\x00" * (end - start)
    return "".join(chars)


@lru_cache(maxsize=512)
def _designating(text: str, pack: LanguagePack, negation: bool = True) -> str:
    """``text`` as it may name what a lookup asks for: :func:`_allowed`, and every word no table knows blanked
    (a carried word never selects: "pay the electricity bill" designates no record by "electricity")."""
    return _blanked(_allowed(text, pack, negation), carried_spans(text, grammar(pack)))


def _identity(entity: Entity) -> tuple[str, str]:
    """What an entity is compared by: a link by its scheme, host, path and query (:func:`same_link`),
    anything else by kind and key."""
    if entity.kind in _SAME_KIND:
        return "link", entity.link
    return entity.kind, entity.key


def _holds_token(text: str, value: str) -> bool:
    needle, hay = normalize(value), normalize(text)
    if not needle:
        return False
    pos = hay.find(needle)
    while pos != -1:
        end = pos + len(needle)
        before = hay[pos - 1] if pos else " "
        after = hay[end] if end < len(hay) else " "
        beyond = hay[end + 1] if end + 1 < len(hay) else " "
        ends = not _TOKEN_CHAR.match(after) or (after in ".:" and not _TOKEN_CHAR.match(beyond))
        if not _TOKEN_CHAR.match(before) and ends:  # "tmp." ends a sentence; "tmp.old" is another name
            return True
        pos = hay.find(needle, pos + 1)
    return False


@lru_cache(maxsize=512)
def _identities(text: str) -> frozenset[tuple[str, str]]:
    """The entities of one request sentence, as identities (each sentence is parsed once)."""
    return frozenset(_identity(e) for e in extract_entities(text))


@lru_cache(maxsize=512)
def _quantities(text: str, markers: frozenset[str]) -> tuple[tuple[Decimal, str | None], ...]:
    """The numbers of one request sentence that are quantities, with their currency: not a time of day,
    not a group of an IBAN, an account, a phone number or a link, not an identifier's number ("invoice
    2026", "#443"; ``markers``: the pack's words of an identifier)."""
    taken = [(e.start, e.end) for e in extract_entities(text)]  # in order of appearance, as amounts are
    out = []
    k = 0
    for a in amounts_in(text):  # one walk over both lists: linear in the text
        while k < len(taken) and taken[k][1] <= a.start:
            k += 1
        if a.is_time or (k < len(taken) and taken[k][0] < a.end):
            continue
        before = text[max(0, a.start - _LOOKBACK) : a.start].rstrip()
        words = before.rsplit(None, 1)
        word = words[-1].casefold().rstrip(".:") if words else ""
        if word in markers or before.endswith("#"):
            continue
        out.append((a.value, a.currency))
    return tuple(out)


def named_currencies(texts: Iterable[str], pack: LanguagePack | None = None) -> frozenset[str]:
    """The currencies the user's request names: by an amount, or by a currency word or sign of its own."""
    texts = list(texts)  # read twice (a generator would be empty the second time)
    markers = (pack or english()).identifier_markers
    named = {c for t in texts for _, c in _quantities(t, markers) if c}
    for t in texts:
        named.update(CURRENCIES[w] for w in re.findall(r"[^\W\d_]+|[^\w\s]", t.casefold()) if w in CURRENCIES)
    return frozenset(named)


NO_CURRENCY = ""
"""The currency of an amount a call names none for, of a tool whose policy gives none: it is the same as an
amount the user named with no currency only ("5000 JPY" never grounds a bare 5000)."""


class Named(NamedTuple):
    """The currencies a text names (codes, or the families of shared signs and words), and the tool policy's
    currency: the policy settles a shared sign ("$" for a tool declared in USD) but names no currency for a bare
    number."""

    codes: frozenset[str] = frozenset()
    policy: str | None = None


NONE_NAMED = Named()


def _same_currency(said: str | None, currency: str | None, named: Named) -> bool:
    """Whether a number the user wrote in ``said`` (None: none) is in the call's ``currency`` (None: no amount,
    nothing to compare; :data:`NO_CURRENCY`: the call names none). A number with no currency is in the
    call's when the user's request names that currency (``named``); one written with a sign or word several
    currencies share ("$", "pounds") only when the policy's currency or a code the request names settles it
    (:func:`~validator.text.entities.settles`)."""
    if currency is None:
        return True
    if currency == NO_CURRENCY:
        return said is None
    if said is None:
        return currency in named.codes
    settled = named.codes | {named.policy} if named.policy else named.codes
    return settles(said, currency, settled)


def ambiguous_currency(
    requests: Sequence[RequestSentence], currency: str, pack: LanguagePack | None = None
) -> str | None:
    """A note when the request writes an amount with a sign or word that ``currency`` shares with others."""
    families = sorted(
        c for c in named_currencies((r.text for r in requests), pack) if currency in AMBIGUOUS_CURRENCIES.get(c, ())
    )
    if not families:
        return None
    codes = ", ".join(sorted(AMBIGUOUS_CURRENCIES[families[0]]))
    return (
        f"the request's currency {families[0].rstrip('?')!r} is shared by several ({codes}): only the tool's "
        "declared currency or a code the user names settles which"
    )


def _holds(
    text: str,
    value: Any,
    entity: Entity | None,
    currency: str | None,
    named: Named = NONE_NAMED,
    pack: LanguagePack | None = None,
) -> bool:
    """Whether ``text`` holds ``value`` as a value. A number with no currency matches an amount in a
    currency only when the user's request names that currency (``named``); ``pack``: the language of ``text``
    (English by default)."""
    if entity is not None:
        kind, key = _identity(entity)
        if kind == "link":
            return any(k == "link" and same_link(key, given) for k, given in _identities(text))
        return (kind, key) in _identities(text)
    number = as_number(value)
    if number is not None:
        markers = (pack or english()).identifier_markers
        return any(n == number and _same_currency(c, currency, named) for n, c in _quantities(text, markers))
    return isinstance(value, str) and _holds_token(text, value)


def stands_in(text: str, value: Any, pack: LanguagePack | None = None) -> bool:
    """Whether ``text`` holds ``value`` as a value, as the gate reads every value (an entity by its identity, a
    number as a quantity in any currency, else a whole token), for values not read as a request's fill."""
    if isinstance(value, str) and len(value) > MAX_VALUE:
        return False
    entity = parse_entity(value) if isinstance(value, str) else None
    return _holds(text, value, entity, None, pack=pack)


def _anchor(value: Any, entity: Entity | None) -> str:
    """Text every spelling of the value contains, to find the few messages worth parsing."""
    if entity is None:
        number = as_number(value)
        return str(number).split(".")[0][-3:] if number is not None else str(value)
    key = entity.key
    if entity.kind == "email" and key.isascii() and "xn--" not in key:
        return key  # a plain ASCII address stands whole in its case-folded text: the rarest anchor (a host may be
        # spelled in other letters that IDNA maps to the same key: it keeps the anchor of its last labels)
    return {
        "email": key.rsplit("@", 1)[-1],
        "url": ".".join(key.split(".")[-2:]),
        "domain": ".".join(key.split(".")[-2:]),
        "iban": key[:4],
        "phone": key[-4:],
        "account": key[-4:],
    }.get(entity.kind, key)


def _find(
    index: TextIndex,
    transcript: Transcript,
    value: Any,
    entity: Entity | None,
    currency: str | None,
    pack: LanguagePack,
) -> list[int]:
    """Messages of ``index`` that hold ``value`` as a value (candidates by a verbatim anchor, then parsed)."""
    anchor = _anchor(value, entity).strip()
    if not anchor or " " in anchor:
        return index.find_text(normalize(anchor), MAX_LOCATIONS) if anchor else []
    candidates = index.containing(anchor, 50)
    found = []
    for i in candidates:
        text = transcript.messages[i].content
        named = Named(named_currencies([text], pack) if currency else frozenset())  # the currency its source names
        if _holds(text, value, entity, currency, named, pack):
            found.append(i)
    return found[:MAX_LOCATIONS]


def _locations(transcript: Transcript, hits: Iterable[int]) -> tuple[Location, ...]:
    return tuple(Location(i, transcript[i].role, transcript[i].speaker) for i in list(hits)[:MAX_LOCATIONS])


class Grounds(msgspec.Struct, frozen=True):
    """What the values of one call may be grounded in, besides the conversation (:class:`CheckContext`)."""

    requests: Sequence[RequestSentence]
    """The request's sentences, each proved verb's clause marked."""
    authorizations: Sequence[StandingAuthorization] = ()
    """The cited standing authorizations that count."""
    fills: Sequence[RequestFill] = ()
    """The values the proved request puts in the call's arguments (a target counts only as the fill of its own
    argument; an entity inside another argument as any fill, or in the request's verb phrase)."""
    forbidden: Sequence[tuple[int, int, int]] = ()
    """Where the request forbids a value: ``(message, start, end)``."""
    sources: frozenset[str] = frozenset()
    """The tools the policy declares as returning the user's own records (the only ones a lookup designates a
    value through)."""
    policy_currency: str | None = None
    """The currency the tool's policy declares (it settles a sign several currencies share)."""


def ground_value(
    ctx: CheckContext,
    grounds: Grounds,
    path: str,
    value: Any,
    *,
    kind: str | None = None,
    scope_path: str | None = None,
    currency: str | None = None,
    target: bool = True,
) -> ValueFinding:
    """Where one argument value came from: the user's request, a cited authorization, elsewhere, nowhere.
    ``target=False``: an entity inside another argument (see :attr:`Grounds.fills`)."""
    transcript, rules, user_id, pack = ctx.transcript, ctx.rules, ctx.user_id, ctx.pack
    requests, fills = grounds.requests, grounds.fills
    if value is UNREADABLE:
        return ValueFinding(path, None, "unreadable", kind)
    if value is None or (isinstance(value, str) and not value.strip()):
        return ValueFinding(path, value, "absent", kind)
    entity = parse_entity(value) if isinstance(value, str) else None
    kind = kind or (entity.kind if entity else ("amount" if currency else None))
    note = entity.note if entity else None
    for auth in grounds.authorizations:
        if allows(auth, scope_path or path, value):
            return ValueFinding(path, value, "authorization", kind, authorization_id=auth.id, note=note)
    if isinstance(value, bool):
        return ValueFinding(path, value, "not_found", kind, note=note)
    if not rules.on(Rule.VALUE_IDENTITY):
        return ValueFinding(path, value, "user", kind, note=note)
    if isinstance(value, str) and len(value) > MAX_VALUE:  # bounded work: a 20,000-character "cc" is not searched
        return ValueFinding(path, value[:MAX_VALUE], "unreadable", kind, note=f"longer than {MAX_VALUE} characters")
    negation = rules.on(Rule.NEGATION)
    found_in = _request_holds(ctx, grounds, value, entity, currency, scope_path or path, target, kind == "content")
    if found_in is not None:
        return ValueFinding(path, value, found_in[0], kind, _locations(transcript, found_in[1]), note=note)
    # Reported, not decided: where else the value stands, as a value, in the user's own words or elsewhere.
    elsewhere = _find(user_index(transcript, user_id, rules, pack), transcript, value, entity, currency, pack)
    if elsewhere:
        status: ValueStatus = "user_elsewhere"
        if negation and not any(
            _holds(_allowed(t, pack), value, entity, currency, pack=pack)
            for t in _own_sentences(transcript, elsewhere, rules, pack)
        ):
            status = "forbidden"  # the user named it only to forbid it ("Never send anything to eve@...")
        return ValueFinding(path, value, status, kind, _locations(transcript, elsewhere), note=note)
    # where else it came from is reported loosely: an amount a call names no currency for came from a vendor's
    # "4,800 EUR" as much as from a bare 4800 (strict only where it would ground the call)
    loose = None if currency == NO_CURRENCY else currency
    found = _find(other_index(transcript, user_id, rules, pack), transcript, value, entity, loose, pack)
    if found and rules.on(Rule.PROVENANCE):
        slot = [f for f in fills if _under(path, f.path) or _under(f.path, path)] if target else []
        scalar = not path.endswith("]")  # one value, not an element of a list argument
        flow, why = _delegated(ctx, requests, value, found, currency, slot, scalar, grounds.sources)
        if flow is not None:
            hops = [h.message for h in flow.hops]
            return ValueFinding(
                path, value, "delegated", kind, _locations(transcript, hops), note=note, chain=flow.describe(path)
            )
        note = "; ".join(n for n in (note, why) if n) or None
    outside = bool(found) and all(outside_party(transcript, i, user_id) for i in found)
    if not found and isinstance(value, str) and ("@" in value or "://" in value):  # a sender's address or page
        found = list(outside_authors(transcript).get(value.strip().casefold(), ()))
    return ValueFinding(
        path,
        value,
        "not_from_user" if found else "not_found",
        kind,
        _locations(transcript, found),
        note=note,
        outside_party=outside,
    )


def _fill_holds(
    fill: RequestFill,
    value: Any,
    entity: Entity | None,
    currency: str | None,
    named: Named,
    pack: LanguagePack,
    *,
    content: bool = False,
) -> bool:
    """Whether the request's value in an argument *is* ``value``: parsed and compared as a value (an amount
    with its currency and magnitude, an address by its identity, a name or a quoted text as written)."""
    if fill.kind in ("money", "number", "measure"):
        number = as_number(value)
        if number is None or fill.number is None or number != fill.number:
            return False
        if fill.kind == "measure":
            return False  # "1500 km" is no amount, and no count of anything but kilometres
        return _same_currency(fill.currency, currency, named)
    if entity is not None:
        return _holds(fill.text, value, entity, currency, pack=pack)
    if not isinstance(value, str | int):
        return False
    if fill.kind in _EXACT:  # a path or a file name is itself: "./build" is not "/build", "Report.pdf" not "report.pdf"
        return str(value).strip() == fill.text
    a, b = normalize(str(value)).strip(" '\""), normalize(fill.text).strip(" '\"")
    if content and fill.kind == "reported" and b:  # what the user said it says, in the agent's words
        return says_the_same(b, a, pack) and says_the_same(
            b, str(value), pack
        )  # as written too: "Ann" is a name, "ann" none
    if fill.kind in ("text", "reported") and b:  # the user's text, word for word, framed by a greeting at most
        return _framed(a, b.rstrip(".!?"), _names(str(value)), pack)
    if fill.kind == "described" and b:  # "invite Ann to the design review": the event is a review
        return any(w == b or w.startswith(b) for w in normalize(str(value)).casefold().replace(":", " ").split())
    if fill.kind == "mention" and b:  # "email the “minutes”": the message names the thing
        return mentions(a, b)
    return bool(a) and a.rstrip(".") == b.rstrip(".")


def says_the_same(reported: str, text: str, pack: LanguagePack | None = None) -> bool:
    """Whether a message in the agent's words says what the user reported it should ("Email Ann that I accept the
    offer."): every word of the report that carries its meaning (a noun, a verb, an adjective, a name, a number,
    a value, a word no table knows) stands in the text, by its lemma, the text says no "not" the report does
    not ("I decline the offer." and "I do not agree." say something else) and a "not" when the report does ("I
    won't quit." is no "I quit."). A report holding a hedge of the pack's ("only", "until", "unless", "actually")
    says nothing code can compare: it may be meant for the agent, not the message; nor does one with no word that
    carries meaning ("yes", "I'm in"). A message that speaks of a person speaks of each the report does ("I'll
    call you" is no "Call me"; "Running late." speaks of none; the pack's ``grammatical_persons``).
    Greetings, politeness and other wording around it are the agent's. ``pack``: English by default."""
    pack = pack or english()
    g = grammar(pack)
    said, written = g.words(_apostrophes(reported)), g.words(_apostrophes(text))
    if hedged(said, pack):
        return False  # "… telling him the report is ready, but only if Eve agrees": to him, or to the agent?
    told = [w for w in said if w.classes & _MEANING and (w.verb or "") not in pack.auxiliaries]
    if not told:
        return False  # "tell him yes", "… that I'm in": no word code can find in a message
    forms = {f for w in written for f in (w.norm, w.lemma, w.verb) if f}
    if not all({f for f in (w.norm, w.lemma, w.verb) if f} & forms for w in told):
        return False
    reported_persons, told_persons = _persons(said, said, pack), _persons(written, said, pack)
    if told_persons and not reported_persons <= told_persons:
        return False  # "I'll call you tomorrow" told as "Call me tomorrow" ("Following up." speaks of no one)
    negations = {w.norm for w in said if w.norm in pack.negatives}
    written_negations = {w.norm for w in written if w.norm in pack.negatives}
    return written_negations <= negations and bool(written_negations) == bool(negations)


def _persons(words: Sequence[Word], reported: Sequence[Word], pack: LanguagePack) -> frozenset[int]:
    """The persons a text speaks of: 1, 2, 3 by the pack's pronouns, and 3 for a name the report does not hold
    that no greeting opens ("Ann got the package"; not "Hi Jane, …")."""
    sets = pack.grammatical_persons
    found = {n + 1 for n, words_of in enumerate(sets) for w in words if w.norm in words_of}
    names = {w.norm for w in reported if NAME in w.classes}
    for n, w in enumerate(words):
        greeted = n > 0 and GREET in words[n - 1].classes
        if NAME in w.classes and w.norm not in names and not greeted:
            found.add(3)
    return frozenset(found)


def _apostrophes(text: str) -> str:
    """``text`` with a quotation mark inside a word read as the apostrophe it was (normalising folds both to one
    mark: "can"t" is "can't", a negation)."""
    return re.sub(r'(?<=\w)"(?=\w)', "'", text)


_MEANING = frozenset({NN, NNS, VB, VBN, VBG, VBZ, ADJ, NAME, NUM, NUMW, VALUE, TIMEX, OPEN, OPENV, PRIV})
"""Word classes that carry what a sentence says (a function word, a pronoun, an auxiliary does not)."""


def mentions(text: str, name: str) -> bool:
    """Whether ``name`` stands in ``text`` as whole words."""
    pos = text.find(name)
    while pos != -1:
        end = pos + len(name)
        if (pos == 0 or not text[pos - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        pos = text.find(name, pos + 1)
    return False


_EXACT = frozenset({"path", "filename"})
"""Value kinds compared exactly as written (a file system's names are case- and dot-sensitive)."""


def _names(text: str) -> frozenset[str]:
    """The capitalised words of a text, lower-cased (the names a greeting may hold: "Hi Marta")."""
    return frozenset(w.lower() for w in _WORD.findall(text) if w[:1].isupper())


_WORD = re.compile(r"[^\W\d_]+|\d+")


def _framed(text: str, phrase: str, names: frozenset[str], pack: LanguagePack) -> bool:
    """Whether ``text`` is the user's ``phrase``, whole words, with nothing around it but a greeting or a
    closing: names, the pack's greetings, interjections and thanks, punctuation ("Hi Marta, <the user's
    words>. Thanks!"). "The launch is on hold" does not frame "the launch is on"."""
    pos = text.find(phrase)
    while pos != -1:
        end = pos + len(phrase)
        whole = (pos == 0 or not text[pos - 1].isalnum()) and (end == len(text) or not text[end].isalnum())
        if whole and _only_framing(text[:pos], names, pack) and _only_framing(text[end:], names, pack):
            return True
        pos = text.find(phrase, pos + 1)
    return False


def _only_framing(text: str, names: frozenset[str], pack: LanguagePack) -> bool:
    framing = pack.framing
    return all(w in framing or w in names for w in (w.lower() for w in _WORD.findall(text)))


def _under(path: str, target: str) -> bool:
    return path == target or path.startswith((target + ".", target + "["))


def _request_holds(
    ctx: CheckContext,
    grounds: Grounds,
    value: Any,
    entity: Entity | None,
    currency: str | None,
    path: str,
    target: bool,
    content: bool,
) -> tuple[ValueStatus, list[int]] | None:
    """Whether the proved request holds the value: as the fill of its argument (``user``; an entity inside
    another argument: as any fill, or in the request's verb phrase), only where the request forbids it
    (``forbidden``), or elsewhere in the cited words (``other_clause``); None when it does not."""
    requests, forbidden, negation = grounds.requests, grounds.forbidden, ctx.rules.on(Rule.NEGATION)
    pack = ctx.pack
    named = (
        Named(named_currencies((r.text for r in requests), pack), grounds.policy_currency) if currency else NONE_NAMED
    )
    if not ctx.rules.on(Rule.REQUEST_GRAMMAR):  # switched off (an ablation): a value counts anywhere in the cited words
        hits = [
            r.message
            for r in requests
            if _holds(_allowed(r.text, pack, negation), value, entity, currency, named, pack)
        ]
        return ("user", hits) if hits else None
    mine = [f for f in grounds.fills if not target or _under(path, f.path) or _under(f.path, path)]
    times = [f for f in mine if f.kind == "time"]
    if times and target:  # every part of the time the user named must hold the argument, and any year they named
        messages = {f.message for f in times}
        years = [y for r in requests if r.message in messages for y in named_years(r.text, pack)]
        held = holds_time([f.text for f in times] + years, value, ctx.now, pack)
        return ("user", sorted({f.message for f in times})) if held else None
    hits = [f.message for f in mine if _fill_holds(f, value, entity, currency, named, pack, content=content)]
    if not hits and not target:
        hits = [
            r.message for r in requests if r.clauses and _holds(r.valued(r.text), value, entity, currency, named, pack)
        ]
    if hits:
        return "user", sorted(set(hits))
    if negation and forbidden:
        where = [
            m
            for m, a, b in forbidden
            if _holds(ctx.transcript.messages[m].content[a:b], value, entity, currency, named, pack)
        ]
        if where:
            return "forbidden", where
    unbound = [r.message for r in requests if _holds(r.text, value, entity, currency, named, pack)]
    if unbound:
        if negation and not any(_holds(_allowed(r.text, pack), value, entity, currency, named, pack) for r in requests):
            return "forbidden", unbound
        return "other_clause", unbound
    return None


def _delegated(
    ctx: CheckContext,
    requests: Sequence[RequestSentence],
    value: Any,
    found: Sequence[int],
    currency: str | None,
    slot: Sequence[RequestFill] = (),
    scalar: bool = False,
    sources: frozenset[str] = frozenset(),
) -> tuple[Trace | None, str | None]:
    """The lookup flow that brought ``value`` from the user's words (an amount with its currency): the
    lookup's arguments stand in the cited request or, failing that, in the user's own words of any turn
    ("retweet the tweet I just posted": the post's text is the user's, from the turn before). When the
    request names the argument's value itself (``slot``: "email *Bob* the minutes"), one of the lookups
    must have asked for what the user named there: a search for "minutes" does not designate Bob."""

    transcript, rules, pack = ctx.transcript, ctx.rules, ctx.pack
    negation = rules.on(Rule.NEGATION)

    def users(text: str) -> list[int]:
        hits = _in_request(requests, text, negation, pack)
        if hits:
            return hits
        entity = parse_entity(text)
        own = _find(user_index(transcript, ctx.user_id, rules, pack), transcript, text, entity, None, pack)
        return [
            i
            for i in own
            if any(
                _holds(_designating(t, pack, negation), text, entity, None, pack=pack)
                for t in _own_sentences(transcript, [i], rules, pack)
            )
        ]

    designates = (lambda query: any(_designates(f, query, pack) for f in slot)) if slot else None
    flow, why = trace(transcript, value, found, users, designates=designates, scalar=scalar, sources=sources)
    if flow is not None and currency and not has_field(transcript, flow.hops[0].message, currency):
        return None, f"its currency {currency} is not in the result it was looked up in"
    return flow, why


_QUOTES = " '\"\u201c\u201d\u2018\u2019."
_DETERMINERS = frozenset({"the", "a", "an", "my", "our", "your", "his", "her", "their"})


def _designates(fill: RequestFill, query: str, pack: LanguagePack) -> bool:
    """Whether a lookup's argument asks for what the request names in the slot: the same value, or the user's
    words as written ("Introductory meeting" for "the Introductory meeting"); never fewer ("Stone" for "Bob
    Stone") or more ("Bob Stone" for "Bob")."""
    words = normalize(fill.text).casefold().strip(_QUOTES).split()
    while words and words[0] in _DETERMINERS:
        words = words[1:]
    named, asked = " ".join(words), " ".join(normalize(query).casefold().strip(_QUOTES).split())
    if not asked or not named:
        return False
    if asked == named:
        return True
    entity = parse_entity(query)
    return entity is not None and _holds(fill.text, query, entity, None, pack=pack)


def _in_request(requests: Sequence[RequestSentence], text: str, negation: bool, pack: LanguagePack) -> list[int]:
    """The messages whose cited request sentence holds ``text`` as a value (outside a forbidding clause)."""
    entity = parse_entity(text)
    return [r.message for r in requests if _holds(_designating(r.text, pack, negation), text, entity, None, pack=pack)]


def _own_sentences(transcript: Transcript, messages: Iterable[int], rules: Rules, pack: LanguagePack) -> list[str]:
    """The sentences of the user's own words in ``messages``."""
    out: list[str] = []
    for i in messages:
        own = own_words(transcript, i, rules, pack)
        out += [own[x.start : x.end] for x in sentences(own, pack)]
    return out


COPIED_RUN = 8
"""Words in a row that make a text copied from another (a shorter run is a phrase anyone may write)."""
_COPY_READ = 400
"""Words of a text read for a copied run (bounded work: a run starting later than this is not looked for)."""
_COPY_STRIDE = 4
"""Runs are looked for at every this many words: a copy of ``COPIED_RUN + _COPY_STRIDE - 1`` words is always found."""


def copied_from_outside(
    transcript: Transcript, text: str, user_id: str | None = None, pack: LanguagePack | None = None
) -> tuple[int, str] | None:
    """A run of :data:`COPIED_RUN` words of ``text`` that stands in an outside party's message (an email, a page,
    another participant) and not in the user's own words: the message and the run; None when there is none."""
    words = normalize(text).split()[:_COPY_READ]
    if len(words) < COPIED_RUN:
        return None
    others, users = other_index(transcript, user_id, pack=pack), user_index(transcript, user_id, pack=pack)
    for start in range(0, len(words) - COPIED_RUN + 1, _COPY_STRIDE):
        run = " ".join(words[start : start + COPIED_RUN])
        hits = [i for i in others.find_text(run, MAX_LOCATIONS) if outside_party(transcript, i, user_id)]
        if hits and not users.find_text(run, 1):
            return hits[0], run
    return None


def outside_party(transcript: Transcript, i: int, user_id: str | None = None) -> bool:
    """Whether message ``i`` is text an outside party wrote: a tool output with a named author (an email, a
    page), or another participant's message. A lookup's output with no author, the agent's words and text
    the user pasted are not: where a value there came from is unknown, not disproved."""
    m = transcript.messages[i]
    if m.role == "tool":
        return bool(m.author)
    return m.role == "user" and m.author is not None and m.author != user_id
