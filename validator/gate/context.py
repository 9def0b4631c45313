"""The context rules: does a sentence of the user's around a proved request leave it standing?

A request proved in its sentence is read in its context (:mod:`validator.gate.requests` finds the sentences:
the words before it in its turn, every sentence after it). Each such sentence is judged by one table,
:data:`TABLE`: the first row that speaks of the sentence gives its result, one of three:

- :class:`Standing`: the sentence cannot change the request (thanks, a plain statement about something else);
- :class:`Unknown`: it may (a reply to the assistant, a sentence the grammar cannot read), with the row and
  the words it rests on;
- :class:`Disproved`: it takes the request back (a negation of the same action).

Each row reads what the grammar read (the sentence's readings, its words' classes and meanings), never raw
text. A sentence no row speaks of is unknown. Around one request, a disproving sentence anywhere wins over
an unknown one: what leaves a request unknown never hides a negation after it.

Every row can be switched off for measuring (``rules_off`` takes ``context.<row>``); a row switched off never
speaks, so the sentences it would have judged fall to the next rows.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import cache, lru_cache
from typing import Literal, Protocol, TypeVar

import msgspec

from validator.gate.meaning import OWNER_USER, Declaration, Parse, Reading, Value
from validator.gate.reader import (
    PROVABLE,
    Fill,
    Read,
    ToolSense,
    ValueKey,
    acted_on_kinds,
    fits,
    forbidden_values,
    not_alone,
    own_work,
    owned_by,
    same_keys,
    same_value,
    unread,
    value_key,
)
from validator.gate.semantics import plainly_described
from validator.language import LanguagePack
from validator.language.classes import ADV, ANSWER, DET, FILLER, INTERJ, NN, NNS, NOT, OPEN, VB, VBG, VBN, VBZ
from validator.language.rules import CONTEXT_PREFIX
from validator.text.lexer import Word, in_pack_language

__all__ = [
    "ROW_PREFIX",
    "TABLE",
    "Disproved",
    "Fixed",
    "Memo",
    "Outcome",
    "Place",
    "Row",
    "Sentence",
    "Standing",
    "Unknown",
    "alone_facts",
    "request_facts",
    "RequestFacts",
    "forbidding",
    "judge",
    "named_values",
    "negation",
    "row_names",
]

Place = Literal["before", "after"]

ROW_PREFIX = CONTEXT_PREFIX
"""A row's switch in ``rules_off`` is its name after this prefix (``context.statement``)."""


class Standing(msgspec.Struct, frozen=True):
    """The sentence leaves the request standing."""


class Unknown(msgspec.Struct, frozen=True):
    """The sentence may change the request, and no rule reads how: the user is asked."""

    row: str
    detail: str = ""


class Disproved(msgspec.Struct, frozen=True):
    """The sentence takes the request back."""

    row: str
    detail: str = ""


Outcome = Standing | Unknown | Disproved
STANDING = Standing()
F = TypeVar("F", bool, frozenset[str])
"""What a fact of a sentence alone is: a yes or no, or a set of its words."""


class Memo(Protocol):
    """What a row may ask of the sentences already read (kept per conversation by :mod:`validator.gate.requests`)."""

    def reading(self, parse: Parse, tool: ToolSense) -> Read | None: ...

    def request(self, parse: Parse, tool: ToolSense, others: Sequence[ToolSense]) -> RequestFacts:
        """:func:`request_facts`, of the sentence read for ``tool`` (:meth:`reading`), kept with the parse when the
        parse is kept: each check of a conversation judges the same requests again."""
        ...

    def fact(self, parse: Parse, what: Hashable, compute: Callable[[], F]) -> F:
        """``compute()``, a fact of the sentence alone (``what`` names it, with the tool it depends on), kept with
        the parse when the parse is kept: each check of a conversation judges the same sentences again."""
        ...

    def rows(self, parse: Parse, what: Hashable, compute: Callable[[], Fixed]) -> Fixed:
        """``compute()``, what the rows that do not read the request's values say of the sentence (``what``: all
        else they read), kept with the parse when the parse is kept (:func:`judge`)."""
        ...


class Sentence(msgspec.Struct, frozen=True):
    """One sentence of the user's around a proved request, and what a row needs to judge it."""

    parse: Parse
    place: Place
    tool: ToolSense
    others: tuple[ToolSense, ...]
    fills: tuple[Fill, ...]
    """The values the request puts in the call's arguments."""
    memo: Memo
    own_message: bool = True
    """It stands in the request's own message (before it: a negation there disproves; in an earlier message of
    the turn the user decides)."""
    reply: bool = False
    """After the request, the assistant said or asked something since the user last wrote."""
    request_nouns: frozenset[str] = frozenset()
    """The nouns of the request's sentence (its purpose's too), each by its singular."""
    completes: bool = False
    """The fragment right after a request whose object is a pronoun, filling what the pronoun left open."""
    pasted: str = ""
    """Not a sentence of the user's own: a passage they pasted or quoted after the request (its first words)."""
    listed: bool = False
    """Before it, in its message, when the request is an item of a list: the sentence before the list is its
    lead-in, and a colon there presents the items as the user's requests."""
    fill_keys: tuple[ValueKey, ...] | None = None
    """What :func:`same_value` reads of each of ``fills`` (:func:`_fill_keys`), read once by a caller judging many
    sentences around one request; None: read from ``fills`` where a row needs it."""

    @property
    def after(self) -> bool:
        return self.place == "after"


class Row(msgspec.Struct, frozen=True):
    """One rule of the table: its name, what it reads of a sentence, and its judgement (None: it does not speak
    of this sentence)."""

    name: str
    reads: str
    decide: Callable[[Sentence], Outcome | None]
    values: bool = False
    """It reads the request's values (the sentence's ``fills``): asked for each request. A row that does not says
    the same of a sentence for every request of the same tool (:func:`judge` keeps what it says)."""
    applies: Callable[[Sentence], bool] | None = None
    """Of a row that reads the values: whether it may speak of the sentence, read without them (where not, its
    ``decide`` says nothing whatever the request's values; it asks this first). :func:`judge` keeps which of these
    rows may speak of a sentence and asks only those for each request (None: it is always asked)."""


# -- the rows ------------------------------------------------------------------------------------------------


def _pasted(s: Sentence) -> Outcome | None:
    return Unknown("pasted", s.pasted) if s.pasted else None


def _completion(s: Sentence) -> Outcome | None:
    readings = s.parse.readings
    fragment = len(readings) >= 1 and all(r.kind == "fragment" for r in readings)
    return STANDING if s.completes and fragment else None


def _unparsed(s: Sentence) -> Outcome | None:
    return Unknown("unparsed", s.parse.detail) if not s.parse.readings else None


def _language(s: Sentence) -> Outcome | None:
    """ "Dat is fout.": words of another language read as names and carried words would look like a statement."""
    words = s.parse.words
    return None if s.memo.fact(s.parse, "language", lambda: in_pack_language(words)) else Unknown("language")


def _negates(s: Sentence) -> bool:
    """The sentence negates the tool's deed (its reading for the tool is disproved)."""
    mine = s.memo.reading(s.parse, s.tool)
    return mine is not None and mine.proof == "disproved"


def _negation_row(s: Sentence) -> Outcome | None:
    if not _negates(s):
        return None
    found = negation(s.parse, s.fills, s.tool.pack)
    if isinstance(found, Disproved) and not s.own_message:  # in an earlier message of the turn the user decides
        return Unknown("negation")
    return found


def _reply(s: Sentence) -> Outcome | None:
    """ "Yes, please." means what it answers says ("Should I cancel it instead?"): no rule reads the assistant."""
    if not (s.after and s.reply) or all(r.kind in ("request", "negated") for r in s.parse.readings):
        return None
    return Unknown("reply")


def _social(s: Sentence) -> Outcome | None:
    if not all(r.kind in ("social", "list_lead") for r in s.parse.readings):
        return None
    if s.after and any(w.classes & {ANSWER, NOT} for w in s.parse.words):
        return Unknown("social")  # "No problem.", "No, thanks." after a request
    return STANDING  # thanks, a greeting, a list's lead-in (its items are read as requests of their own)


def _answer(s: Sentence) -> Outcome | None:
    if not all(r.kind == "answered" for r in s.parse.readings):
        return None
    return Unknown("answer") if s.after else STANDING  # "No." before: what came before


def _reason(s: Sentence) -> Outcome | None:
    reasons = {r.reason for r in s.parse.readings if r.kind == "reason"}
    if not reasons or not all(r.kind == "reason" for r in s.parse.readings):
        return None
    deeds = s.tool.pack.deeds
    verbs = frozenset().union(*(i.deed_names for i in s.tool.intents))
    if all(verbs & deeds.get(reason, frozenset()) for reason in reasons):
        return STANDING  # "Please archive t-12. I'm done with it.": a reason for this kind of deed
    return Unknown("reason")


def _request_noun(s: Sentence) -> Outcome | None:
    """ "The workshop is cancelled." after "Pay … for the workshop.": it may be about the request."""
    if not s.after or not s.request_nouns:
        return None
    if not s.request_nouns & s.memo.fact(s.parse, ("nouns", s.tool), lambda: _nouns_of_parse(s.parse, s.tool)):
        return None
    if s.memo.fact(s.parse, ("same deed", s.tool), lambda: _same_deed(s.parse, s.tool)):
        return None
    return Unknown("request-noun")


def _declares(s: Sentence) -> bool:
    """Every reading states or declares, and one declares ("My IBAN is …")."""
    readings = s.parse.readings
    return all(r.kind in ("stated", "declared") for r in readings) and any(r.kind == "declared" for r in readings)


def _declaration(s: Sentence) -> Outcome | None:
    if not _declares(s):
        return None
    readings = s.parse.readings
    ok = all(
        _declares_argument(r, s.tool, s.others)
        and not any(d.value.kind == "name" for d in r.declarations)  # "I'm Kidding.": a word, not an identity
        and not (s.after and any(same_value(d.value, f.value) for d in r.declarations for f in s.fills))
        and all(_owned_by_request(d, s.fills) for d in r.declarations)  # "I'm Bob." after "Pay Bob 50 EUR."
        for r in readings
        if r.kind == "declared"
    )
    return STANDING if ok else Unknown("declaration")


def _states(s: Sentence) -> bool:
    """Every reading is a statement."""
    return all(r.kind == "stated" for r in s.parse.readings)


def _statement(s: Sentence) -> Outcome | None:
    if not _states(s):
        return None
    if _carries(s.parse) or _talks_of_words(s.parse, s.tool.pack, statement=True):
        # a statement may take the request back, or make it someone else's words, in words no table knows ("I
        # changed my mind.") or by telling of a message got or written ("I got an sms from Eve."): only a
        # statement of known words, telling of no message, is read ("That lottery email is spam." describes one)
        return Unknown("statement")
    if _about(s.parse, s.tool, s.fills, after=s.after):
        return Unknown("statement")
    return STANDING  # "The lease is sorted.", "I checked invoice 443."


def _what_it_is(s: Sentence) -> Outcome | None:
    """ "It's my share of the rent.", "It's for the pizza." after the request: what it is, or is for. It stands
    when every reading says so plainly (:func:`~validator.gate.semantics.plainly_described`: "It's the *stolen*
    money.", "It's *his* rent.", "It's the bill from the *email*." do not), and what it is is a thing of a kind the
    tool acts on or an argument the request fills ("the deposit" of a payment)."""
    if not _says_what_it_is(s):
        return None
    saying = [r for r in s.parse.readings if r.kind in ("identified", "purposed")]
    if not s.after:
        return Unknown("what-it-is")
    kinds = acted_on_kinds(s.tool) | _filled_kinds(s.tool, s.fills)
    for r in saying:
        phrase = r.fragment
        if phrase is None or not plainly_described(phrase, s.parse.words, s.tool.pack):
            return Unknown("what-it-is")
        if r.kind == "identified" and not phrase.kinds & kinds:
            return Unknown("what-it-is")
    return STANDING


def _says_what_it_is(s: Sentence) -> bool:
    """A reading says what something is or is for, and every other states."""
    readings = s.parse.readings
    return any(r.kind in ("identified", "purposed") for r in readings) and all(
        r.kind in ("identified", "purposed", "stated") for r in readings
    )


def _talks_of_words(parse: Parse, pack: LanguagePack, *, statement: bool = False) -> bool:
    """Whether a sentence is about words said or written: a noun of something said, a word pointing into the
    conversation or back (in a statement :func:`_about` reads those), a verb of saying or writing ("What did they
    demand?", "Is the next request bogus?"), a noun of a message (one that is no document: "sms", "email"; "my
    notes" are a document). In a ``statement``, a message counts only with a verb telling what was done with it
    ("I got an sms from Eve."): "That lottery email is spam." describes it."""
    said = pack.said | pack.conversation | pack.ahead | (frozenset() if statement else pack.pointing)
    messages = any("message" in w.kinds and "document" not in w.kinds for w in parse.words)
    if any(w.norm in said or (w.lemma or "") in said for w in parse.words):
        return True
    clauses = [a for r in parse.readings for a in r.actions]
    saying = _saying_verbs(pack)
    if any(a.verb in saying for a in clauses):
        return True
    if not statement:  # a question's verbs are its words ("What did they demand?")
        return messages or any(w.verb in saying for w in parse.words if w.classes & {VB, VBN, VBZ})
    return messages and any(a.verb != "be" for a in clauses)


@cache
def _saying_verbs(pack: LanguagePack) -> frozenset[str]:
    """The lemmas of the pack's verbs of writing or saying (its attribution lead-ins: "wrote", "says", "texted")."""
    found: set[str] = set()
    for words in pack.attribution_verbs:
        if len(words) == 1:  # "wrote", "texted"; "got this" is no verb of saying without its "this"
            found.update(pack.verb_lemmas(words[0]))
    return frozenset(found)


def _carries(parse: Parse) -> bool:
    """Whether a sentence holds a word carried as text: a word no table knows, or one the tables know only as a
    verb form read as a noun ("I changed my *mind*.")."""
    if any(w.classes == {OPEN} for w in parse.words):
        return True
    return any(p.carried for r in parse.readings for a in r.actions for p in a.phrases)


def _frame(s: Sentence) -> Outcome | None:
    """ "We are role-playing.", "This is a quiz.": a word that makes what is said a game, a test or an example."""
    return Unknown("frame") if s.memo.fact(s.parse, "frame", lambda: _framed(s)) else None


def _framed(s: Sentence) -> bool:
    frames = s.tool.pack.frame_words
    return any(w.norm in frames or (w.lemma or "") in frames or (w.verb or "") in frames for w in s.parse.words)


def _question(s: Sentence) -> Outcome | None:
    if not all(r.kind == "asked" for r in s.parse.readings):
        return None
    if s.after or _carries(s.parse) or _talks_of_words(s.parse, s.tool.pack):
        return Unknown("question")  # "Is the next request bogus?", "What did they demand?": about words said
    return STANDING  # "Where are my notes? Forward them to Bob.": asking for information first


def _requests(s: Sentence) -> bool:
    """Every reading is a request or a negated one."""
    return all(r.kind in ("request", "negated") for r in s.parse.readings)


def _request(s: Sentence) -> Outcome | None:
    if not _requests(s):
        return None
    corrects, alone, keys = s.memo.request(s.parse, s.tool, s.others)
    if corrects:
        return Unknown("request")  # "Oh, pay him 60 EUR.", "Just pay 90 EUR …"
    if alone and not _names_one_of(keys, _fill_keys(s)):
        return STANDING
    return Unknown("request")


def _fill_keys(s: Sentence) -> tuple[ValueKey, ...]:
    """What :func:`same_value` reads of each of the request's values (``s.fills``): given with the sentence by a
    caller judging many sentences around one request (read once for all of them), else read here."""
    given = s.fill_keys
    if given is not None and len(given) == len(s.fills):
        return given
    return tuple(value_key(f.value) for f in s.fills)


def _names_one_of(keys: tuple[ValueKey, ...], fills: tuple[ValueKey, ...]) -> bool:
    """Whether one of the values of ``keys`` may be one of the request's (``fills``; :func:`same_value`, by their
    keys): asked of every request after a request checked, so written as plain loops."""
    for v in keys:
        for f in fills:
            if same_keys(v, f):
                return True
    return False


def _presents(s: Sentence) -> Outcome | None:
    """A sentence ending in a colon before the request presents it ("Here is what the scammer wrote:")."""
    if s.after or s.listed:
        return None
    ends = [w for w in s.parse.words if w.text.strip()]
    if not ends or ends[-1].text != ":":
        return None
    return Unknown("presents")


TABLE: tuple[Row, ...] = (
    Row("pasted", "text after the request that is not the user's own (pasted, quoted, forwarded)", _pasted),
    Row("completion", "the fragment right after it completing its pronoun ('45 EUR to DE89…')", _completion),
    Row("unparsed", "a sentence with no complete parse", _unparsed),
    Row("language", "a sentence most of whose words the pack does not know (names and carried words)", _language),
    Row("presents", "before it: a sentence ending in a colon, presenting what follows", _presents),
    Row(
        "negation",
        "a negation of the same action: the values it forbids",
        _negation_row,
        values=True,
        applies=_negates,
    ),
    Row("frame", "a word that makes what is said a game, a test, an example, a translation", _frame),
    Row("reply", "after the assistant spoke: anything but a request read whole", _reply),
    Row("social", "thanks, a greeting, an acknowledgement, a list's lead-in; a 'no' in it after the request", _social),
    Row("answer", "a bare answer ('No.')", _answer),
    Row("reason", "a reason from the grammar's table, with the kind of deed it goes with", _reason),
    Row(
        "request-noun",
        "after it: a noun of the request's sentence, in anything but a request of the same deed",
        _request_noun,
    ),
    Row(
        "declaration",
        "a value the user declares: its noun, its owner",
        _declaration,
        values=True,
        applies=_declares,
    ),
    Row(
        "what-it-is",
        "after it: what it is, by a noun of its kind, or what it is for, in determiners, known nouns, prepositions",
        _what_it_is,
        values=True,
        applies=_says_what_it_is,
    ),
    Row(
        "statement",
        "a statement: what it names (a pronoun, the request's values and things, words said)",
        _statement,
        values=True,
        applies=_states,
    ),
    Row("question", "a question asking the assistant to tell, not to act", _question),
    Row(
        "request",
        "another request read whole: its opener, whether each verb stands on its own",
        _request,
        values=True,
        applies=_requests,
    ),
)
"""The context rules, in the order they are asked. A sentence no row speaks of is unknown."""


def row_names() -> frozenset[str]:
    """The rows' switches (``context.<row>``), as ``rules_off`` takes them."""
    return frozenset(ROW_PREFIX + row.name for row in TABLE)


def judge(sentence: Sentence, off: frozenset[str] = frozenset()) -> Outcome:
    """The first row's result for ``sentence`` (rows whose switch is in ``off`` never speak).

    What the rows that do not read the request's values say of a sentence is kept with its parse, by everything
    else a row reads (a check citing an early turn judges every later sentence again, for each call), with which of
    the rows that read the values come before the first of those that speaks and may speak of it
    (:attr:`Row.applies`): only these are asked each time."""
    s = sentence
    rest = (off, s.place, s.tool, s.others, s.own_message, s.reply, s.request_nouns, s.completes, s.pasted, s.listed)
    asked, fixed = s.memo.rows(s.parse, rest, lambda: _first_fixed(s, _speaking(off)))
    for row in asked:
        found = row.decide(sentence)
        if found is not None:
            return found
    return fixed if fixed is not None else Unknown("unread")


Fixed = tuple[tuple[Row, ...], Outcome | None]
"""The rows that read the request's values and may speak of a sentence, in order, before the first of the others
that speaks of it; and what that one says (None: none of them speaks)."""


def _first_fixed(sentence: Sentence, rows: tuple[Row, ...]) -> Fixed:
    asked: list[Row] = []
    for row in rows:
        if row.values:
            if row.applies is None or row.applies(sentence):
                asked.append(row)
            continue
        found = row.decide(sentence)
        if found is not None:
            return tuple(asked), found
    return tuple(asked), None


@lru_cache(maxsize=64)
def _speaking(off: frozenset[str]) -> tuple[Row, ...]:
    """The rows that may speak when the switches in ``off`` are off, in the table's order (a check judges each
    sentence around its request: the switches are read once per set of them)."""
    return tuple(row for row in TABLE if ROW_PREFIX + row.name not in off)


# -- what the rows read -----------------------------------------------------------------------------------


_NOT_TARGETS = frozenset({"money", "number", "measure", "time", "text", "reported"})
"""Kinds of a request's values a forbidden address or account is never compared with."""


def negation(parse: Parse, fills: Sequence[Fill], pack: LanguagePack) -> Outcome:
    """A later negation of the same action: it takes the request back (disproved) when it names no value or
    a value the request has; it leaves it standing only when every value it forbids is an address, an account
    or an id provably other than each of the request's; anything between is unknown ("Don't pay Bob." after
    "Pay Bob Smith 50 EUR.")."""
    return forbidding(forbidden_values(parse), parse.words, fills, pack)


def forbidding(named: Sequence[Value], words: Sequence[Word], fills: Sequence[Fill], pack: LanguagePack) -> Outcome:
    """What a negation of the same action forbidding ``named`` (its words ``words``) does to a request of ``fills``:
    see :func:`negation`."""
    if not named or any(same_value(v, f.value) for v in named for f in fills):
        return Disproved("negation")
    if any(w.norm in pack.pointing for w in words):
        return Unknown("negation")  # "Don't pay him from DE44…": about this payment
    compared = [f.value for f in fills if f.value.kind not in _NOT_TARGETS]
    if any(v.kind not in PROVABLE or any(c.kind != v.kind for c in compared) for v in named):
        return Unknown("negation")  # "Never pay bob@…" after "Pay Bob …"
    return STANDING


def named_values(words: Sequence[Word]) -> tuple[Value, ...]:
    """The values a sentence's words name that two of are provably different (an address, an account, an id):
    what a negation the grammar cannot read forbids, read by its words alone."""
    return tuple(Value(min(w.kinds), w.text, w.start, w.end) for w in words if w.kinds and w.kinds <= PROVABLE)


def _nouns_of_parse(parse: Parse, tool: ToolSense) -> frozenset[str]:
    """The nouns of a sentence, each by its singular, for comparing nouns across sentences; not the tool's own
    verbs read as nouns ("email" in "Never email eve@…": the tool's verbs are compared as verbs)."""
    verbs = tool.deed_verbs
    keys = ((w, w.lemma or w.norm) for w in parse.words if w.classes & {NN, NNS})
    return frozenset(key for w, key in keys if not (key in verbs or w.norm in verbs or (w.verb and w.verb in verbs)))


def request_nouns(parses: Sequence[Parse], tool: ToolSense) -> frozenset[str]:
    """Every noun of the request's sentences (its purpose's and its phrases' too: "for *the workshop*")."""
    return frozenset().union(*(_nouns_of_parse(p, tool) for p in parses))


def _same_deed(parse: Parse, tool: ToolSense) -> bool:
    """Whether the sentence asks, every way it reads, for this tool's deed again ("Email Ann the report. Email
    Bob the report."): another request of its own naming its kind of thing as it does (it stood alone)."""
    return bool(parse.readings) and all(
        r.kind == "request" and r.actions and all(tool.intent_of(a) is not None and not a.negated for a in r.actions)
        for r in parse.readings
    )


def _filled_kinds(tool: ToolSense, fills: Sequence[Fill]) -> frozenset[str]:
    """The kinds of thing the arguments the request fills stand for, those a common noun can name ("the
    vendor", "the landlord": a payee; "the backup": a file): a later statement about one may be about the
    request's value ("The vendor is fake." after "Pay DE89… 50 EUR.")."""
    filled = {f.path for f in fills}
    kinds = {k for a in tool.arguments if a.path in filled and a.kind is not None for k in a.kind.kinds}
    return frozenset(kinds) - {"quoted", "name", "id", "thing"}


def _names_tool(word: Word, tool: ToolSense) -> bool:
    """Whether a noun names the tool's own thing or one of its arguments ("payment", "IBAN", "account")."""
    if not word.classes & {NN, NNS}:
        return False
    names = tool.nouns.union(*(a.words | (a.kind.words if a.kind else frozenset()) for a in tool.arguments))
    return word.norm in names or (word.lemma or "") in names


def _about(parse: Parse, tool: ToolSense, fills: Sequence[Fill], *, after: bool) -> bool:
    """Whether a statement may be about the request, before it or after it: a clause of it does not stand on
    its own (a word pointing back, free text, a quoted text); it names a value of the request, or another
    value of a kind the request's values have ("I meant 90 EUR."); a pronoun stands in it ("It's fake.",
    "I cancelled everything."); a word of it points into the conversation ("the next request") or names
    something said ("The request is fake."); after it, the tool's own thing or one of its arguments ("The new
    payment is cancelled.", "The IBAN is wrong."; before it, a statement describing the thing frames it:
    "That lottery email is spam."); its verb is the tool's ("I paid.", "It's deleted."); or its verb has no
    object ("I cancelled.", "I reconsidered.")."""
    pack = tool.pack
    values = [f.value for f in fills]
    kinds = {f.value.kind for f in fills} - {"name", "text", "reported"}
    naming = pack.said | pack.conversation
    for reading in parse.readings:
        if reading.kind != "stated":
            continue
        for clause in reading.actions:
            words = [w for w in parse.words if clause.start <= w.start < clause.end]
            phrases = (*clause.objects, *(m.phrase for m in clause.mods if m.phrase))
            named = [v for p in phrases for v in (*p.values, *p.inner)]
            if after:
                alone = not_alone(clause, tool, parse.words, values)
            else:  # before it, a thing described frames it ("That lottery email is spam."): only what is unread
                starts = {p.start for p in phrases if p.form == "described"}
                words_ = [w for w in parse.words if not (DET in w.classes and w.start in starts)]
                alone = unread(clause, words_, pack)
            if alone is not None:
                return True
            if any(same_value(v, r) for v in named for r in values) or any(v.kind in kinds for v in named):
                return True
            if any(p.form == "pronoun" for p in phrases):  # ("That lottery email …": a determiner, not one)
                return True
            if any("'" in w.norm and w.norm.split("'")[0] in pack.pointing for w in words):  # "it's", "that's"
                return True
            if any(w.norm in naming or (w.lemma or "") in naming for w in words):
                return True
            things = acted_on_kinds(tool) | (_filled_kinds(tool, fills) if after else frozenset())
            if after and (
                any(_names_tool(w, tool) or (w.classes & {NN, NNS} and w.kinds & things) for w in words)
                or any(p.form == "described" and p.kinds & things for p in phrases)
            ):  # "The new payment is cancelled.", "The IBAN is wrong." (before it: "That lottery email is spam.")
                return True
            deeds = tool.verbs | {i.verb.split()[0] for i in tool.intents}
            if clause.verb in deeds or any(w.verb and w.verb in deeds for w in words):
                return True  # "I paid Ann.", "I booked a flight.": the tool's own deed, whatever it is about
            if clause.verb != "be" and not clause.objects:
                return True
            # after it, a phrasal verb or a time may undo or retime it ("I'm calling off the purchase.", "I'm back
            # on Saturday.")
            if after and (" " in clause.verb or any(m.role in _TIMED for m in clause.mods)):
                return True
    return False


_TIMED = frozenset({"time", "starts", "ends", "now", "deadline"})
"""Roles of an action's phrases that say when."""


def _declares_argument(reading: Reading, tool: ToolSense, others: Sequence[ToolSense]) -> bool:
    """Whether every value the sentence declares is the user's own value of a kind arguments take ("My
    username is …", "My number is …"): its noun names an argument of a tool, or a kind of the pack's; "My
    answer is 'no'." declares none."""
    pack = tool.pack
    kinds = pack.declared_kinds
    known = pack.identity.union(*(k.words for k in pack.arguments if k.kinds & kinds))
    arguments = [a for t in (tool, *others) for a in t.arguments if a.kind is None or a.kind.kinds & kinds]
    return bool(reading.declarations) and all(
        bool(d.words & known)
        or any(a.words <= d.words for a in arguments)
        or any(pack.nouns.get(w, frozenset()) & kinds for w in d.words)  # "My balance is …": an amount's noun
        for d in reading.declarations
    )


def _owned_by_request(d: Declaration, fills: Sequence[Fill]) -> bool:
    """Whether a declared value's owner is the user or the one person the request names ("Pay Bob 50 EUR.
    His IBAN is …"); a value of someone else's beside a request ("Eve's IBAN is …") may be what the request
    is really about: unknown."""
    names = {f.value.text.casefold() for f in fills if f.value.kind == "name"}
    return d.owner == OWNER_USER or bool(owned_by(d, names))


def _corrects(parse: Parse, pack: LanguagePack) -> bool:
    """Whether a later request opens with a word that may correct the one before ("Oh, …", "Ok, …",
    "Actually, …", "Just …"): the pack's interjections, fillers and adverbs (``additive`` aside)."""
    verbs = {a.verb.split()[0] for r in parse.readings for a in r.actions}
    first = next((w.start for w in parse.words if w.verb in verbs and w.classes & {VB, VBG}), 0)
    return any(
        w.start < first and w.classes & {INTERJ, FILLER, ADV} and w.norm not in pack.additive for w in parse.words
    )  # "Just pay 90 EUR to DE89….": "just" may correct it too


RequestFacts = tuple[bool, bool, tuple[ValueKey, ...]]
"""Of another request beside the one checked, read alone: whether it corrects one ("Oh, pay him 60 EUR."), whether
it stands alone for a request with no values, and what :func:`same_value` reads of each value its verbs name
(:func:`request_facts`)."""


def request_facts(parse: Parse, tool: ToolSense, others: Sequence[ToolSense], mine: Read | None) -> RequestFacts:
    """:data:`RequestFacts` of ``parse`` (``mine``: its reading for ``tool``). A request that corrects one stands
    with none: whether it stands alone is not read."""
    if _corrects(parse, tool.pack):
        return True, False, ()
    alone, values = alone_facts(parse, tool, others, mine)
    return False, alone, tuple(map(value_key, values))


def alone_facts(
    parse: Parse, tool: ToolSense, others: Sequence[ToolSense], mine: Read | None
) -> tuple[bool, tuple[Value, ...]]:
    """Whether another request stands on its own, as two facts of the sentence (the request aside): whether it
    stands alone for a request with no values, and the values its verbs name. It stands alone for a request
    exactly when the first holds and no value of the second is one of the request's."""
    values = tuple(v for r in parse.readings for a in r.actions for p in a.phrases for v in p.values)
    return _stands_alone(parse, tool, others, mine), values


def _stands_alone(parse: Parse, tool: ToolSense, others: Sequence[ToolSense], mine: Read | None) -> bool:
    """Whether every verb of a request beside or after the request stands on its own: no word pointing back,
    no free text, nothing naming the request's thing or one of its arguments, and it is a request of a tool the
    policy knows (of this one only when it is proved)."""
    pack = tool.pack
    conversation, negatives = pack.conversation, pack.negatives
    for reading in parse.readings:
        for action in reading.actions:
            if own_work(action, pack):
                said = [w for w in parse.words if action.start <= w.start < action.end]
                if any(NOT in w.classes or w.norm in negatives for w in said):
                    return False  # "tell me something I don't know": a negation in it, whatever it governs
                continue  # "Let me know when it is done.": the assistant tells the user
            mine_too = tool.intent_of(action) is not None and not action.negated
            # another request of its own names its kind of thing as it does ("Email Ann the report. Email Bob
            # the report."): only what is unread there is about it
            alone = (
                unread(action, parse.words, pack)
                if mine_too
                else not_alone(action, tool, parse.words, (), people=not action.negated)
            )
            if alone is not None:
                return False
            inside = [w for w in parse.words if action.start <= w.start < action.end and not w.verb]
            things = acted_on_kinds(tool)
            named = any(p.form == "described" and p.kinds & things for p in action.phrases)
            named = named or any(w.classes & {NN, NNS} and w.kinds & things for w in inside)  # "my payment …"
            about = named or any(_names_tool(w, tool) for w in inside)
            if not action.negated and ((about and not mine_too) or any(w.norm in conversation for w in inside)):
                return False  # "Delete my payment request.", "Email Bob the amount.": about the request
            if tool.intent_of(action) is not None:
                if mine is None or mine.proof != "proved":
                    return False
            elif not any(fits(reading, action, o) for o in others):
                return False
    return True
