"""Is this sentence, as a whole, the user asking for this action? The grammar's readings, per tool.

A sentence is read by the request grammar (:mod:`validator.gate.grammar`): its complete parses, each a
:class:`~validator.gate.meaning.Reading`. This module says what those readings mean for one tool, and gives
one of three values (the design's principle 7):

- **proved**: the sentence has at least one complete parse, and every parse agrees that it is a request (an
  imperative, a polite question, a wish or a permission addressed to the assistant) whose verb is one of the
  tool's intents, with the same values in the same arguments. Every object and phrase of that verb fills an
  argument of the tool, of the argument's kind ([arguments] of the pack: a payee is a person or an account,
  an amount is money, a thread is a thread or an id...), or is an adjunct that changes nothing (a deadline,
  "now", a manner, a purpose, a topic); a described object ("the invoice", "the engine") is of a kind the tool
  takes or is named by the tool itself (its name, description or arguments). Free text fills only an
  argument of the text kind. A pronoun binds nothing: "pay it" is proved only with every required argument
  filled by the sentence or the fragment after it ("ok pay it. 45 EUR to DE89…").
- **disproved**: every parse reads a negation governing the verb ("Don't pay Eve", "Never delete t-88").
- **unknown**: everything else: a word the grammar does not know, no complete parse, parses that disagree on
  what the check reads, an object of another kind ("Remove Bob from thread t-88" for a thread deletion), a
  value in no argument, a time the tool has no argument for.

The values a proved request puts in each argument (:class:`Fill`) are what the gate compares with the call
(:mod:`validator.gate.grounding`); a value inside another phrase ("the invoice *from DE44…*", "about the
invoice *bob@… sent*") fills nothing; a value a negation excludes ("…, not eve@…") is forbidden.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from decimal import Decimal
from functools import cached_property, lru_cache
from typing import Any, get_args

import msgspec
from msgspec import structs

from validator.findings import Proof
from validator.gate.grammar import Grammar, grammar
from validator.gate.meaning import (
    OWNER_BACK,
    OWNER_OTHER,
    OWNER_USER,
    Action,
    Declaration,
    Mod,
    Parse,
    Phrase,
    Reading,
    Value,
)
from validator.language import ArgumentKind, LanguagePack, english
from validator.language.classes import DET, EMOJI, MARKER, OPENV, PREP, PRIV, PRON, PRT
from validator.language.lexicon import families_of
from validator.text.entities import EntityKind
from validator.text.lexer import CARRIED, Word, shape_kinds
from validator.text.times import is_year

__all__ = [
    "PROVABLE",
    "Fill",
    "Intent",
    "Read",
    "ToolSense",
    "ValueKey",
    "argument_words",
    "beside",
    "carried_spans",
    "fits",
    "forbidden_spans",
    "not_alone",
    "own_work",
    "read",
    "read_parse",
    "same_keys",
    "same_value",
    "unread",
    "value_key",
]

_SPLIT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_ADJUNCTS = frozenset({"now", "deadline", "manner"})
"""The roles of the grammar's own adjuncts (the time of asking, a deadline, a manner)."""
_ANY_KIND = frozenset({"quoted", "name"})
"""Kinds of phrase an argument of any kind may take (a quoted passage, a name): no value of a kind's own."""
PROVABLE = (frozenset(get_args(EntityKind)) - {"url", "domain"}) | {"id", "handle", "hashtag"}
"""Kinds of value two of which are provably different when they differ as values (a name is not: "Bob" may
be "Bob Smith"; nor an amount: "€50" is "50 EUR"; nor a path: /docs holds /docs/report.pdf; nor a link or a
host: site.example/blog holds site.example/blog/draft, acme.example holds mail.acme.example)."""
_RECEIVER_KINDS = frozenset({"person", "name", "email", "handle", "phone"})
_SENDING = frozenset({"message", "post", "share"})
"""The lexicon's families of tools that send content (their object may be the content, described)."""


def argument_words(name: str) -> frozenset[str]:
    """The lower-case words of an argument's or a tool's name (``thread_id`` -> thread, id; ``receiverId``)."""
    return frozenset(w.lower() for w in _SPLIT.findall(name))


class Intent(msgspec.Struct, frozen=True):
    """One of a tool's intents as a pattern over an action: the verb with its particles, the nouns its
    objects must have ("send money", "place * order"), the phrases it must have ("write to")."""

    text: str
    verb: str
    nouns: frozenset[str] = frozenset()
    prepositions: frozenset[str] = frozenset()
    light: frozenset[str] = frozenset()
    """The pack's light verbs ("make", "place"), whose object may name this intent as a noun."""

    @property
    def deed_names(self) -> frozenset[str]:
        """What a deed table may name this intent by ([deeds] of the pack): its verb, or the whole intent ("send
        money": "send" alone is an email's verb too), in any case the policy writes it."""
        return frozenset({self.verb, " ".join(self.text.lower().split())})

    @classmethod
    def of(cls, text: str, pack: LanguagePack) -> Intent | None:
        words = [w for w in text.lower().split() if w]
        if not words or words[0] == "*":
            return None
        verb = [words[0]]
        nouns: set[str] = set()
        prepositions: set[str] = set()
        for w in words[1:]:
            if w == "*" or w in pack.classes.get(DET, ()) or w in pack.classes.get(PRON, ()):
                continue  # "let him know": the object, whoever it is
            if w in pack.classes.get(PRT, ()):
                verb.append(w)
            elif pack.verb_lemmas(w) == (w,) and w not in pack.nouns:
                verb.append(w)  # "let * know": the verb goes on after its object
            elif w in pack.classes.get(PREP, ()):
                prepositions.add(w)
            else:
                nouns.add(pack.noun_lemmas.get(w, w))
        return cls(text, " ".join(verb), frozenset(nouns), frozenset(prepositions), pack.light)

    def names(self, action: Action) -> bool:
        """Whether ``action`` is this intent: its verb, and the nouns and phrases the intent names; or a light
        verb whose object is the intent as a noun ("execute a buy order", "make a transfer"). A noun of the
        intent is named by an object's own noun, or by a value of its kind ("send Bob 50 EUR" is "send *
        money"); a thing of that kind, described, is not ("send Bob the invoice" sends a document)."""
        heads = {p.head for p in action.objects if p.head}
        heads |= {k for p in action.objects if p.form != "described" for k in p.kinds}
        if action.verb != self.verb:
            light = action.verb in self.light and " " not in self.verb and not self.nouns
            return light and any(p.head == self.verb and p.form == "described" for p in action.objects)
        return self.nouns <= heads and self.prepositions <= {m.role for m in action.mods}


class _Argument(msgspec.Struct, frozen=True):
    path: str
    kind: ArgumentKind | None
    words: frozenset[str]


@dataclass(frozen=True)
class ToolSense:
    """What the reader needs of one tool: its intents, its arguments with their kinds, and the nouns that
    name what it acts on (its name, its description, its arguments' names)."""

    tool: str
    intents: tuple[Intent, ...]
    arguments: tuple[_Argument, ...]
    nouns: frozenset[str]
    required: frozenset[str] = frozenset()
    """Arguments a request must fill when its object is a pronoun (the call's targets and amounts)."""
    verbs: frozenset[str] = frozenset()
    """Intent verbs the verb table does not know (a policy's own: "rm", "dm"): read as verbs."""
    phrasal: frozenset[str] = frozenset()
    """Its intents that are phrasal verbs ("log in"): read as one verb."""
    open: bool = False
    """Read with no call at hand (another tool of the policy, the tool a step serves): a value that fills no
    known argument does not make the request unknown, and no value is compared."""
    pack: LanguagePack = field(default_factory=english, repr=False)
    """The language its intents and a request for it are read in."""

    @classmethod
    def of(
        cls,
        tool: str,
        intents: Iterable[str],
        *,
        arguments: Iterable[str] = (),
        kinds: Mapping[str, str] | None = None,
        description: str = "",
        money: Iterable[str] = (),
        required: Iterable[str] = (),
        open: bool = False,
        pack: LanguagePack | None = None,
    ) -> ToolSense:
        """``arguments``: the call's argument paths (and the policy's targets); ``kinds``: the policy's own
        kind for an argument; ``money``: the amount arguments. Equal inputs give the same object (a sense keys
        every reading a transcript keeps: a later check's lookup then stops at identity, never comparing every
        field of two equal senses)."""
        return _sense(
            tool,
            tuple(intents),
            tuple(arguments),
            tuple((kinds or {}).items()),
            description,
            tuple(money),
            tuple(required),
            open,
            pack or english(),
        )

    def intent_of(self, action: Action) -> Intent | None:
        return next((i for i in self.intents if i.names(action)), None)

    @cached_property
    def deed_verbs(self) -> frozenset[str]:
        """The verbs of its intents, with the words read as verbs beyond the verb table: the words that name its
        deed as a verb ("pay", "email", "dm")."""
        return frozenset(i.verb for i in self.intents) | self.verbs

    @cached_property
    def theme_kinds(self) -> frozenset[str]:
        """:func:`_theme_kinds` of this tool, read once (every reading of a request asks it of each phrase)."""
        return _theme_kinds(self)

    @cached_property
    def acted_on(self) -> frozenset[str]:
        """:func:`acted_on_kinds` of this tool, read once."""
        return self.theme_kinds | _made_kinds(self)

    @cached_property
    def _hash(self) -> int:
        return hash(tuple(getattr(self, f.name) for f in fields(self)))

    def __hash__(self) -> int:
        """The fields' hash, as the dataclass's own, computed once: a sense is a key of every reading kept."""
        return self._hash


@lru_cache(maxsize=1024)
def _sense(
    tool: str,
    intents: tuple[str, ...],
    arguments: tuple[str, ...],
    kinds: tuple[tuple[str, str], ...],
    description: str,
    money: tuple[str, ...],
    required: tuple[str, ...],
    open: bool,
    pack: LanguagePack,
) -> ToolSense:
    """:meth:`ToolSense.of`, built once for equal inputs (a pure function: a sense is immutable)."""
    parsed = tuple(i for i in (Intent.of(t, pack) for t in intents) if i is not None)
    by_name = {k.name: k for k in pack.arguments}
    amounts = set(money)
    args: list[_Argument] = []
    declared_kinds = dict(kinds)
    for path in dict.fromkeys(arguments):
        words = argument_words(path.rsplit(".", 1)[-1])
        declared = declared_kinds.get(path)
        if declared is not None:
            kind = by_name.get(declared)
        elif path in amounts:
            kind = by_name.get("money")
        else:
            kind = _kind_of(words, pack, payment=bool(amounts))
        args.append(_Argument(path, kind, words))
    nouns = set(argument_words(tool)) | {w for a in args for w in a.words}
    nouns |= {w.lower() for w in re.findall(r"[A-Za-z]+", description)}
    nouns = {pack.noun_lemmas.get(n, n) for n in nouns}
    verbs = frozenset(i.verb.split()[0] for i in parsed if not pack.verb_lemmas(i.verb.split()[0]))
    phrasal = frozenset(i.verb for i in parsed if " " in i.verb)
    return ToolSense(tool, parsed, tuple(args), frozenset(nouns), frozenset(required), verbs, phrasal, open, pack)


def _kind_of(words: frozenset[str], pack: LanguagePack, *, payment: bool) -> ArgumentKind | None:
    for kind in pack.arguments:
        if kind.name == "payee" and not payment:
            continue
        if kind.name == "person" and payment and words & next(k for k in pack.arguments if k.name == "payee").words:
            continue  # a money tool's recipient is a payee
        if words & kind.words:
            return kind
    return None


class Fill(msgspec.Struct, frozen=True):
    """A value of the user's request in an argument of the call."""

    path: str
    value: Value
    call: int = 0
    """Which call of the request it belongs to ("pay Ann 5 EUR and pay Bob 9 EUR": two calls; -1: every
    call, a value the user declared their own)."""


class Read(msgspec.Struct, frozen=True):
    """How one sentence stands to a request for one tool."""

    proof: Proof
    problem: str | None = None
    """For a reading that is not proved: ``unknown_word``, ``no_parse``, ``ambiguous``, ``too_long``,
    ``not_a_request``, ``negated``, ``object_kind``, ``unfilled``, ``pronoun``."""
    detail: str = ""
    matched: str | None = None
    """The intent the request names."""
    fills: tuple[Fill, ...] = ()
    forbidden: tuple[Value, ...] = ()
    """Values a negation excludes ("…, not eve@…", "never use eve@…")."""
    multiple: bool = False
    """The request asks for several actions ("pay each of", "all invoices")."""
    pronoun: bool = False
    """Proved but for a pronoun object: the next fragment of the message may fill what it leaves open."""
    span: tuple[int, int] = (0, 0)
    """Where the request's verb phrase stands in the sentence."""
    row: str | None = None
    """The context rule (:data:`validator.gate.context.TABLE`) whose sentence left it unknown or disproved."""


class _Outcome(msgspec.Struct, frozen=True):
    """What one reading means for one tool (compared across readings: they must agree)."""

    proof: Proof
    problem: str | None = None
    detail: str = ""
    matched: str | None = None
    fills: frozenset[tuple[str, str, str, Any, Any, int]] = frozenset()
    pronoun: bool = False
    multiple: bool = False
    key: tuple[Any, ...] = ()


def read(
    sentence: str,
    tool: ToolSense,
    *,
    lead_in: str | None = None,
    original: str | None = None,
    parser: Grammar | None = None,
) -> Read | None:
    """How ``sentence`` stands to a request for ``tool``; None when no word of it can be the tool's verb."""
    g = parser or grammar(tool.pack)
    parse = g.parse(sentence, original=original, verbs=tool.verbs, phrasal=tool.phrasal)
    result = read_parse(parse, tool)
    if result is None or result.proof != "proved" or lead_in is None:
        return result
    lead = g.parse(lead_in)
    if lead.readings and all(r.kind == "list_lead" for r in lead.readings):
        return result
    return Read("unknown", "not_a_request", lead_in)  # an item is a request only under a lead-in that asks


def read_parse(parse: Parse, tool: ToolSense) -> Read | None:
    """:func:`read` of a sentence already parsed."""
    named = any(w.verb and any(w.verb == i.verb.split()[0] for i in tool.intents) for w in parse.words)
    named = named or any(w.norm == i.verb.split()[0] for w in parse.words for i in tool.intents)
    if not named:
        return None
    if not parse.readings:
        return Read("unknown", parse.problem or "no_parse", parse.detail)
    if not any(tool.intent_of(a) is not None for r in parse.readings for a in r.actions) and all(
        r.kind == "request" for r in parse.readings
    ):
        if any(OPENV in w.classes and _names_intent(w, tool) for w in parse.words):
            # the tool's verb read as a word carried in a noun phrase ("assist in paying Bob"): never "no request"
            return Read("unknown", "not_a_request", "")
        return None  # read whole, and no verb of it is the tool's ("follow the instructions" is no "follow up")
    outcomes = {_outcome(r, tool, parse.words) for r in parse.readings}
    if len(outcomes) > 1:
        proofs = {o.proof for o in outcomes}
        if proofs == {"disproved"}:
            first = min(outcomes, key=lambda o: repr(o.key))
            return Read("disproved", "negated", first.detail)
        return Read("unknown", "ambiguous", _disagreement(outcomes))
    only = next(iter(outcomes))
    if only.proof != "proved":
        return Read(only.proof, only.problem, only.detail)
    reading = _first(parse.readings)  # any reading gives the same outcome; one chosen the same way each time
    positive = [a for a in reading.actions if not a.negated and tool.intent_of(a) is not None]
    fills = tuple(_all_fills(reading, positive, tool))
    forbidden = forbidden_values(parse)
    kept = [a for r in parse.readings for a in r.actions if not a.negated]  # the request's span: every verb it has
    span = (min(a.start for a in kept), max(a.end for a in kept))
    return Read("proved", None, "", only.matched, fills, forbidden, only.multiple, only.pronoun, span)


def _names_intent(word: Word, tool: ToolSense) -> bool:
    return any(word.verb == i.verb.split()[0] or word.norm == i.verb.split()[0] for i in tool.intents)


def _order(reading: Reading) -> str:
    """A stable order of a sentence's readings (a set's order depends on how it was built)."""
    return repr(reading)


def _first(readings: frozenset[Reading]) -> Reading:
    """The first of a sentence's readings in :func:`_order` (the only one needs no order: its text is not built)."""
    if len(readings) == 1:
        (only,) = readings
        return only
    return min(readings, key=_order)


def _disagreement(outcomes: set[_Outcome]) -> str:
    shown = sorted({o.problem or o.proof for o in outcomes})
    return "its parses mean different things: " + ", ".join(shown)


def _outcome(reading: Reading, tool: ToolSense, words: Sequence[Word] = ()) -> _Outcome:
    """One reading's meaning for ``tool``: proved (with its fills), disproved, or unknown and why. ``words``:
    the sentence's tokens (what the actions beside the request point at)."""
    matches = [a for a in reading.actions if tool.intent_of(a) is not None]
    if not matches:
        return _Outcome("unknown", "not_a_request", "", key=("none",))
    negated = [a for a in matches if a.negated]
    if negated:
        return _Outcome("disproved", "negated", negated[0].verb, key=("negated", negated[0].verb))
    if reading.kind != "request":
        return _Outcome("unknown", "not_a_request", "", key=(reading.kind,))
    action = matches[0]
    intent = tool.intent_of(action)
    assert intent is not None
    if reading.reason and not intent.deed_names & tool.pack.deeds.get(reading.reason, frozenset()):
        # "Renew my subscription, not needed anymore.": a reason for another kind of deed
        return _Outcome("unknown", "reason", reading.reason, key=("reason", reading.reason))
    problem = _unfit(reading, action, tool) or _split(action, tool)
    if problem is not None:
        return _Outcome("unknown", problem[0], problem[1], key=problem)
    described = [v for a in matches for p in a.phrases for v in p.excluded if v.kind == "described"]
    if described:  # what is excluded is described, not given: no argument can be checked against it
        return _Outcome("unknown", "object_kind", f"not {described[0].text}", key=("excluded", described[0].text))
    given = [v for a in matches for p in a.phrases for v in (*p.values, *p.inner)]
    both = [v for a in matches for p in a.phrases for v in p.excluded if any(same_value(v, g) for g in given)]
    if both:  # "pay DE44…, not DE44…": the same value asked for and forbidden
        return _Outcome("unknown", "ambiguous", f"not {both[0].text}", key=("contradicted", both[0].text))
    unlike = [
        v
        for a in matches
        for p in a.phrases
        for v in p.excluded
        if v.kind not in PROVABLE or any(g.kind != v.kind for g in given)
    ]
    if unlike:  # "everything in /data, but not payroll.csv": what the call does may still hold what is excluded
        return _Outcome("unknown", "ambiguous", f"not {unlike[0].text}", key=("unlike", unlike[0].text))
    positive = [a for a in matches if not a.negated]
    at = reading.actions.index(action)
    values = [v for a in positive for p in a.phrases for v in p.values]
    for n, other in enumerate(reading.actions):
        if other not in beside(reading, tool):
            continue
        # after the request, or negated: it must stand on its own; before it ("find the draft and email it"),
        # it may give the request its object, but may not point back or say what nobody reads
        why = not_alone(other, tool, words, values) if n > at or other.negated else unread(other, words, tool.pack)
        if why is not None:
            return _Outcome("unknown", "beside_words", f"'{other.verb}' {why}", key=("beside", other.verb, why))
    for other in positive[1:]:  # "pay X 5 EUR and pay Y 5 EUR": each verb of the tool must fit as well
        unfit = _unfit(reading, other, tool) or _contested(other, tool)
        if unfit is not None:
            return _Outcome("unknown", unfit[0], unfit[1], key=unfit)
    fills = frozenset(
        (f.path, f.value.kind, _compared(f.value, tool.pack), f.value.number, f.value.currency, f.call)
        for f in _all_fills(reading, positive, tool)
    )
    pronoun = any(p.form == "pronoun" for p in action.objects)
    made = [p for a in positive for _, p, _ in _made(a, tool) if p is not None]
    multiple = len(positive) > 1 or any(p.multiple for a in positive for p in (*_filling(a, tool.pack), *made))
    return _Outcome(
        "proved",
        None,
        "",
        intent.text,
        fills,
        pronoun,
        multiple,
        key=("proved", intent.text, tuple(sorted(map(str, fills)))),
    )


def _compared(value: Value, pack: LanguagePack) -> str:
    """A value's text as readings compare it: what to say in the agent's words (reported) without the marker and
    the closing thanks the sentence may or may not hold ("let Mike know I got the package, thanks": whether
    "thanks" is the message's or the user's, the message is the agent's wording either way)."""
    if value.kind != "reported":
        return value.text
    words = value.text.split()
    if words and words[0] in pack.classes.get(MARKER, frozenset()):
        words = words[1:]  # "tell her that …" read with "that" as the marker or as the text's: the same text
    signs = pack.classes.get(EMOJI, frozenset())
    while words and (words[-1] in signs or not words[-1].strip(",.!")):
        words.pop()
    comma = max((n for n, w in enumerate(words) if w == ","), default=-1)
    if comma >= 0 and all(w.strip(".!") in pack.closing for w in words[comma + 1 :]):
        words = words[:comma]  # "…, thanks": never "… to thank you", whose "thank you" is the message's
    return " ".join(words)


def beside(reading: Reading, tool: ToolSense) -> list[Action]:
    """The verbs of a request's sentence that are not the tool's own: each must be a request of its own
    (another tool's, :mod:`validator.gate.requests`), standing on its own. A verb naming an argument ("cc
    Ann") and a verb that is part of the message ("… and tell her …") are the request's."""
    return [
        a
        for a in reading.actions
        if tool.intent_of(a) is None and not _names_argument(a, tool) and not _part_of_message(a, tool)
    ]


def unread(action: Action, words: Sequence[Word], pack: LanguagePack, *, people: bool = False) -> str | None:
    """Why a verb may carry what nobody reads: a word pointing back, free text, a quoted passage. Telling a
    person with nothing said ("… and let him know") points at no request; with ``people`` (another tool's request
    after this one: "After that, invite him to the review."), a person's pronoun points at no request either."""
    silent = action.says and not any(m.role == "text" for m in action.mods)
    persons = pack.person_pronouns - pack.back_pronouns  # "him", "her": a person, never an action or a thing
    pointing = pack.pointing - pack.person_pronouns if silent else pack.pointing - (persons if people else set())
    word = next((w for w in words if action.start <= w.start < action.end and w.norm in pointing), None)
    if word is not None:
        return f"points back ('{word.text}')"
    if any(m.role == "text" for m in action.mods):
        return "says free text that is not read"
    if any(v.kind in ("quoted", "mention") for p in action.phrases for v in p.values):
        return "holds a quoted text that is not read"
    return None


def own_work(action: Action, pack: LanguagePack) -> bool:
    """Whether an action is the assistant's own work, which reaches no one: a verb of the pack's own work
    ("summarize", "find"), or telling the user something ("let me know", "tell us")."""
    if action.negated:
        return False
    if action.verb in pack.own_work:
        return True
    return (
        action.says
        and bool(action.objects)
        and all(p.form == "pronoun" and p.head in pack.user_pronouns for p in action.objects)
    )


def not_alone(
    action: Action, tool: ToolSense, words: Sequence[Word], request: Sequence[Value], *, people: bool = False
) -> str | None:
    """Why a verb beside the request may be about it (None when it stands on its own): a word of it points
    back ("… but don't do it", "Remove him from it"), it says free text no one reads ("… and tell Ann that
    …"), its object is the kind of thing the request acts on ("… but don't complete the payment"), or,
    negated, it names a value of the request. ``people``: see :func:`unread`."""
    found = unread(action, words, tool.pack, people=people)
    if found is not None:
        return found
    if any(p.form == "described" and _theme(p, tool) and _bare(p, words) for p in action.phrases):
        return "names the kind of thing the request acts on"  # "… but don't complete the payment"
    if action.negated and any(same_value(v, r) for p in action.phrases for v in p.values for r in request):
        return "forbids a value of the request"
    return None


def _part_of_message(action: Action, tool: ToolSense) -> bool:
    """Whether a verb beside a request for a tool that sends content is the same message: a verb of saying
    to no one or to a person pronoun ("email Marta the report and tell her it is ready", "reply to Ann and
    say yes"), or a verb that adds content ("… and include the board link")."""
    if action.negated or not tool.theme_kinds:
        return False
    if action.verb in tool.pack.content_verbs:  # "… and include the board link"
        return not any(p.form == "pronoun" for p in action.phrases)
    if not action.says:
        return False
    return all(p.form == "pronoun" and p.head not in tool.pack.back_pronouns for p in action.objects)


def _bare(phrase: Phrase, words: Sequence[Word]) -> bool:
    """Whether a described thing is only a determiner and its noun ("the payment", "the file"): it may be
    the request's own thing; "the printer thread" names another."""
    inside = [w for w in words if phrase.start <= w.start < phrase.end]
    return all(DET in w.classes or w.norm == phrase.head or w.lemma == phrase.head for w in inside)


def same_value(a: Value, b: Value) -> bool:
    """Whether two values may be the same thing: equal as written (case, spaces and quote marks aside), or
    names sharing a word ("Bob" and "Bob Smith"), or the same number."""
    return same_keys(value_key(a), value_key(b))


ValueKey = tuple[Decimal | None, str, bool, frozenset[str]]
"""What :func:`same_value` reads of a value: its number, its compact text (:func:`_compact`), whether it is a name,
and its words, case-folded (:func:`value_key`)."""


def value_key(value: Value) -> ValueKey:
    """:data:`ValueKey` of ``value``: read once where one value is compared with many (each request after a request
    checked, :func:`validator.gate.context.judge`)."""
    return value.number, _compact(value.text), value.kind == "name", frozenset(value.text.casefold().split())


def same_keys(a: ValueKey, b: ValueKey) -> bool:
    """:func:`same_value` of two values by their keys: the same number when both are numbers (nothing else then),
    else the same compact text, else, when one is a name, a word in common."""
    if a[0] is not None and b[0] is not None:
        return a[0] == b[0]
    if a[1] == b[1]:
        return True
    return (a[2] or b[2]) and not a[3].isdisjoint(b[3])


def _compact(text: str) -> str:
    """A value as compared for sameness: case, spaces and separators aside ("DE44-5001-…" is "DE44 5001 …"):
    what is kept is a letter or digit (``str.isalnum``, which a ``str`` pattern's ``\\w`` is, with ``_``) or
    one of ``@./:_``. Kept for a value as short as a value is (a later request's values are compared with each
    request checked after it); a longer text is compacted each time and never held."""
    return _kept_compact(text) if len(text) <= _SHORT else _compacted(text)


def _compacted(text: str) -> str:
    return _SEPARATORS.sub("", text.casefold())


_kept_compact = lru_cache(maxsize=4096)(_compacted)
_SHORT = 256


_SEPARATORS = re.compile(r"[^\w@./:]")


def _names_argument(action: Action, tool: ToolSense) -> bool:
    return any(action.verb in a.words and a.words <= {action.verb} for a in tool.arguments)


def _adjunct(role: str, pack: LanguagePack) -> bool:
    """Whether a role fills no argument: an adjunct of the grammar's own or of the pack's."""
    return role in _ADJUNCTS or role in pack.adjunct_roles


def _filling(action: Action, pack: LanguagePack) -> list[Phrase]:
    """The action's objects and the phrases that may fill an argument: not a purpose or an adjunct ("pay
    Ann 50 EUR *for both tickets*" is one payment, whatever "both" counts)."""
    purposes = pack.purpose_roles
    return [
        *action.objects,
        *(
            m.phrase
            for m in action.mods
            if m.phrase is not None and not _adjunct(m.role, pack) and m.role not in purposes
        ),
    ]


def _argument_slots(action: Action, tool: ToolSense) -> list[Slot]:
    """The action's slots (:func:`_slots`) and those of the thing it makes (:func:`_made`) that may fill an
    argument: every one but an adjunct."""
    slots = [(role, phrase, mod) for role, phrase, mod in (*_slots(action, tool), *_made(action, tool))]
    if any(role == "ends" for role, _, _ in slots):  # "on Friday from 2 to 4": the day both sides are on
        slots = [("day" if role == "time" else role, phrase, mod) for role, phrase, mod in slots]
    return [(role, phrase, mod) for role, phrase, mod in slots if not _adjunct(role, tool.pack)]


Slot = tuple[str, Phrase | None, Mod | None]


def _slots(action: Action, tool: ToolSense) -> list[Slot]:
    """Each object and phrase of the action with its role: ``indirect`` and ``object`` for the objects,
    the preposition for a phrase, ``time`` / ``text`` / an adjunct role for the rest. A thing the tool itself
    makes or acts on, described and named ("a meeting titled 'Q3 review'", "the thread t-88"), gives its name
    as a ``named`` slot when no argument takes it as an object."""
    out: list[Slot] = []
    objects = action.objects
    for n, p in enumerate(objects):
        role = "indirect" if len(objects) == 2 and n == 0 else "object"
        if (
            p.form == "described"
            and p.values
            and not p.named_before  # "the t-88 reply": the value names the reply's thread, not the reply
            and _theme(p, tool)
            and not any(_fits(role, p, None, a, tool.pack) for a in tool.arguments)
        ):
            out.append((role, structs.replace(p, values=()), None))
            named = Phrase(
                form="quoted", kinds=frozenset({"quoted", "name"}), head=None, values=p.values, start=p.start, end=p.end
            )
            out.append(("named", named, None))
        else:
            out.append((role, p, None))
    for m in action.mods:
        if m.phrase is not None and m.phrase.form == "timed" and m.role in tool.pack.time_roles:
            value = m.phrase.values[0]  # "for Friday", "on Friday": a time, whichever way it was attached
            out.append(("time", None, Mod("time", None, value.text, value.start, value.end)))
        else:
            out.append((m.role, m.phrase, m))
    return out


def _theme(phrase: Phrase, tool: ToolSense) -> bool:
    """Whether a described object is the thing the tool makes or acts on (its own noun, or its kind)."""
    return phrase.head in tool.nouns or bool(phrase.kinds & acted_on_kinds(tool))


def _made(action: Action, tool: ToolSense) -> list[Slot]:
    """The phrases of a thing the action makes or acts on as the tool's own ("schedule a meeting *with Ann*":
    the meeting is the event, its phrase gives the event's attendees), with their roles: they fill what
    they fit, and describe otherwise."""
    out: list[Slot] = []
    things = [*action.objects, *(m.phrase for m in action.mods if m.phrase is not None)]
    for p in things:
        if p.form == "described" and (_theme(p, tool) or _container(p, tool)):
            for role, phrase in _attached(p, tool):
                if phrase.form == "timed":  # "a sync on Friday": the event's time
                    value = phrase.values[0]
                    out.append(("time", None, Mod("time", None, value.text, value.start, value.end)))
                else:
                    out.append((role, phrase, None))
            if p.values and p not in action.objects:  # "invite Ann to the 'Q3 review' sync": its name
                out.append(
                    (
                        "named",
                        Phrase(
                            form="quoted",
                            kinds=frozenset({"quoted", "name"}),
                            head=None,
                            values=p.values,
                            start=p.start,
                            end=p.end,
                        ),
                        None,
                    )
                )
    return out


def _attached(phrase: Phrase, tool: ToolSense) -> Iterator[tuple[str, Phrase]]:
    """A thing's own phrases, and those of where it is kept ("a meeting on *my calendar for Friday*": the
    calendar's time is the meeting's)."""
    for role, inner in phrase.attached:
        yield role, inner
        if inner.form == "described" and _container(inner, tool):
            yield from ((r, p) for r, p in inner.attached if p.form == "timed")


def _made_kinds(tool: ToolSense) -> frozenset[str]:
    """Kinds of things the tool itself is about, from its name ("create_event": an event)."""
    found: set[str] = set()
    for word in argument_words(tool.tool):
        found |= tool.pack.nouns.get(word, frozenset())
    return frozenset(found) - {"thing", "document"}


def _fits(role: str, phrase: Phrase | None, mod: Mod | None, arg: _Argument, pack: LanguagePack) -> bool:
    kind = arg.kind
    if phrase is not None and phrase.named_before and phrase.head not in arg.words | (kind.words if kind else set()):
        return False  # "the t-88 reply" is no thread t-88: a value before a head of another kind names its relative
    if role == "text":
        return kind is not None and "text" in kind.roles
    if role in _TIMES:
        return kind is not None and "time" in kind.roles and _fits_time(role, arg, pack)
    if phrase is None:
        return False
    base = "object" if role == "indirect" else role
    if kind is None:
        return base in pack.untyped_roles and phrase.head is not None and phrase.head in arg.words
    if base not in kind.roles and role not in kind.roles:
        return False
    headed = phrase.head is not None and phrase.head in arg.words | kind.words
    if base in kind.headed:
        return headed
    return bool(phrase.kinds & kind.kinds) or headed


_TIMES = frozenset({"time", "day", "starts", "ends"})
"""Roles of the times an action names: a time ("on Friday at 3pm"), a span's start and end ("from 2 to 4"), and
beside a span the day it is on ("on Friday")."""


def _fits_time(role: str, arg: _Argument, pack: LanguagePack) -> bool:
    """Whether a time argument takes the time: a span's end only one whose name says it ends ("end_time"); its
    start, or a time of its own ("tomorrow at 3pm": when it starts), only one whose name does not; the day a span
    is on ("on Friday from 2 to 4") any."""
    ends = bool(arg.words & pack.time_ends)
    return role == "day" or ends == (role == "ends")


def _unfit(reading: Reading, action: Action, tool: ToolSense) -> tuple[str, str] | None:
    """Why the action's objects and phrases do not fit the tool, or None when each fills an argument of its
    kind or is an adjunct."""
    pack = tool.pack
    if action.verb.split()[0] in pack.changing and any(m.role in ("starts", "ends") for m in action.mods):
        return ("object_kind", f"{action.verb}: from a time to a time")  # "move it from 2pm to 4pm": old and new
    theme = False  # a thing the tool acts on stood before: a phrase after it that fits nothing may describe it
    for role, phrase, mod in _slots(action, tool):
        if _adjunct(role, pack):
            continue
        if phrase is not None and phrase.form == "pronoun":
            # binds nothing by itself; but what it points back at in the sentence ("create the route and write
            # 'Hello' into it") must be a thing of the kind its slot takes
            before = _antecedent(reading, action, phrase, pack)
            if before is None:
                continue
            phrase = before
        if role in pack.purpose_roles and phrase is not None and (phrase.multiple or _counted(phrase, tool)):
            return ("object_kind", f"{role}: {_shown(phrase)} (several)")  # "120 EUR for each installment": per thing
        if any(_fits(role, phrase, mod, a, pack) for a in tool.arguments):
            continue
        if (
            phrase is not None
            and not phrase.values
            and not phrase.privative
            and _theme(phrase, tool)
            and role in pack.theme_roles
        ):
            theme = True
            continue  # "start the engine", "email Bob the minutes", "invite Ann to a sync": what the tool acts on
        if theme and mod is not None and phrase is not None and _licensed_for_noun(role, phrase, pack):
            continue  # "email Bob the minutes from yesterday's meeting": the minutes', as if attached to them
        if role in pack.purpose_roles and phrase is not None and not (phrase.kinds & _RECEIVER_KINDS):
            continue  # a purpose ("for the workshop"); a person here would be a receiver of its own
        if role in _PLACING and phrase is not None and not phrase.values and _container(phrase, tool):
            continue  # "add lunch to my calendar": where the event goes, no argument
        if tool.open:
            continue  # another tool's phrase: its arguments are not at hand, and nothing of it is compared
        what = mod.text if mod is not None and phrase is None else (_shown(phrase) if phrase is not None else role)
        return ("object_kind", f"{role}: {what}")
    return None


def _counted(phrase: Phrase, tool: ToolSense) -> bool:
    """Whether a money tool's phrase counts things ("for two installments", "for 3 tickets"): a sum for it may be
    per thing. A year is no count ("for the 2026 tax"); a duration is not a money tool's ("for 30 minutes")."""
    if not any(a.kind is not None and a.kind.name == "money" for a in tool.arguments):
        return False
    return any(v.kind == "number" and not is_year(v.text) for v in (*phrase.values, *phrase.inner))


def _licensed_for_noun(role: str, phrase: Phrase, pack: LanguagePack) -> bool:
    """Whether a noun may take the phrase with this preposition (``[phrases.noun]`` of the pack)."""
    kinds = pack.noun_phrases.get(role, frozenset())
    return "*" in kinds or bool(phrase.kinds & kinds)


_PLACING = frozenset({"to", "in", "on", "into", "onto"})
"""Roles of a phrase naming where a thing goes ("to my calendar")."""


def _container(phrase: Phrase, tool: ToolSense) -> bool:
    """Whether a described phrase names where the tool's things are kept ("my calendar" for an event)."""
    kept = tool.pack.containers
    return phrase.head is not None and any(phrase.head in kept.get(k, ()) for k in acted_on_kinds(tool))


def _antecedent(reading: Reading, action: Action, pronoun: Phrase, pack: LanguagePack) -> Phrase | None:
    """The phrase an object pronoun points back at in the sentence: the last object of an earlier verb."""
    if pronoun.head not in pack.back_pronouns:
        return None
    earlier = reading.actions[: reading.actions.index(action)]
    objects = [p for a in earlier for p in a.objects if p.form != "pronoun"]
    return objects[-1] if objects else None


def acted_on_kinds(tool: ToolSense) -> frozenset[str]:
    """Kinds of things a tool sends, makes or acts on (its described object may be one of them): the kinds of
    content it sends, and those its name says it makes (read once a tool: :attr:`ToolSense.acted_on`)."""
    return tool.acted_on


def fits(reading: Reading, action: Action, tool: ToolSense) -> bool:
    """Whether ``action`` is a request for ``tool`` whose every object and phrase fits an argument."""
    return tool.intent_of(action) is not None and _unfit(reading, action, tool) is None


def _split(action: Action, tool: ToolSense) -> tuple[str, str] | None:
    """An argument claimed by a described object and by a phrase's value ("delete *the old files* in
    /photos": the files are in /photos, the folder is not what is deleted): which is the argument's value,
    code cannot tell."""
    slots = _slots(action, tool)
    made = _made(action, tool)  # "share the summary *in report.pdf*": the summary's phrase claims it too
    for arg in tool.arguments:
        described = [
            p
            for r, p, m in slots
            if r in ("object", "indirect")
            and p
            and p.form == "described"
            and not p.values
            and _fits(r, p, m, arg, tool.pack)
            and not _sent_not_addressed(p, arg, tool)
        ]
        valued = [
            p
            for r, p, m in (*slots, *made)
            if r not in ("object", "indirect") and p and p.values and _fits(r, p, m, arg, tool.pack)
        ]
        if described and valued:
            return ("object_kind", f"{arg.path}: {_shown(described[0])} or {_shown(valued[0])}")
    return _contested(action, tool)


def _sent_not_addressed(phrase: Phrase, arg: _Argument, tool: ToolSense) -> bool:
    """Whether a described object is the thing a tool sends, fitting an argument only by a head the argument's
    words share ("send *an email* to bob@…": the message, not an address; the recipient is the phrase's). Only its
    head and an article: "the *old* email", "*his* email", "the *second* email" choose one, which no rule reads."""
    kinds = arg.kind.kinds if arg.kind is not None else frozenset()
    return phrase.bare and bool(phrase.kinds & tool.theme_kinds) and not phrase.kinds & kinds


def _contested(action: Action, tool: ToolSense) -> tuple[str, str] | None:
    """An argument two of the action's phrases give values for ("delete the file report.pdf *in /data*": the
    file, or the folder it is in; "move a.txt *to /b*" against a ``source`` and a ``destination`` that each
    take either): which value is the argument's, code cannot tell, so no call is proved by either. A person's
    name beside their address ("Marta *at marta@acme.example*", read either way) names one person, not two;
    a quoted passage any kind takes ("email the “minutes” to bob@…") is a value of the argument's own kind only
    when shaped as one ("delete 'report.pdf' in /data")."""
    slots = [
        (role, phrase, mod)
        for role, phrase, mod in _argument_slots(action, tool)
        if phrase is not None and phrase.values and phrase.form != "named"
    ]
    for arg in tool.arguments:
        own = arg.kind.kinds - _ANY_KIND if arg.kind is not None else frozenset()
        given = [(p, v) for r, p, m in slots if _fits(r, p, m, arg, tool.pack) for v in p.values if _of_kind(v, own)]
        values = {(v.start, v.end): v for _, v in given}
        phrases = {(p.start, p.end): p for p, _ in given}
        listed = len(phrases) == 1 and next(iter(phrases.values())).multiple  # "delete a.csv and b.csv"
        if len(values) > 1 and not listed:  # two phrases, or two values of one ("report.pdf at /data")
            first, second = list(values.values())[:2]
            return ("object_kind", f"{arg.path}: {first.text} or {second.text}")
    return None


def _of_kind(value: Value, kinds: frozenset[str]) -> bool:
    """Whether a value is of one of ``kinds``: by its own kind, or a quoted passage shaped as one
    ("'report.pdf'" is a file name in quotes)."""
    return value.kind in kinds or (value.kind == "quoted" and bool(shape_kinds(value.text) & kinds))


def _theme_kinds(tool: ToolSense) -> frozenset[str]:
    """Kinds of content a tool sends ("the minutes", "the notes"): a tool with a text argument, or one the
    lexicon puts in a family that sends content (a message, a post, a share)."""
    sends = any(a.kind is not None and a.kind.name == "text" for a in tool.arguments)
    if sends or set(families_of(tool.tool)) & _SENDING:
        return frozenset({"document", "message"})
    return frozenset()


def _shown(phrase: Phrase) -> str:
    if phrase.values:
        return ", ".join(v.text for v in phrase.values)
    return phrase.head or phrase.form


def _fills_of(reading: Reading, action: Action, tool: ToolSense) -> list[tuple[str, Value]]:
    """Each value of the action's objects and phrases, in each argument it may fill."""
    out: list[tuple[str, Value]] = []
    for role, phrase, mod in _argument_slots(action, tool):
        for arg in tool.arguments:
            if not _fits(role, phrase, mod, arg, tool.pack):
                continue
            if mod is not None and (role == "text" or role in _TIMES):
                # "that the deck is ready": what to say, not the words; a span's start or end: a time
                kind = "reported" if mod.reported else "time" if role in _TIMES else role
                out.append((arg.path, Value(kind, mod.text, mod.start, mod.end)))
            elif phrase is not None:
                text = arg.kind is not None and arg.kind.name == "text"  # a quoted passage as a message's text
                out += [(arg.path, _as_text(v) if text else v) for v in phrase.values]
    return out


def _as_text(value: Value) -> Value:
    """A quoted passage in a message's text argument is the text it must say."""
    return structs.replace(value, kind="text") if value.kind == "quoted" else value


def declared(
    parse: Parse, tool: ToolSense, owners: Sequence[tuple[str, str, int]] = (), *, one_person: bool = False
) -> tuple[Fill, ...]:
    """Values the sentence declares, in the arguments they bind to (every reading agreeing): the user's own
    ("my username is dr_smith", "I am USR001") in the arguments their noun names, for every call; another
    owner's ("his IBAN is X", "Bob's IBAN is X") through that owner: in the argument the request fills with the
    owner's name (``owners``: ``(path, name, call)`` of the request's names before it in the same message;
    "his" binds only when the message names ``one_person`` in all), when the noun, alone, names that argument
    or its kind and the value is of a kind it takes. Someone described ("my old landlord's IBAN", "his
    landlord IBAN") binds nothing."""
    readings = tuple(parse.readings)
    if any(r.kind == "declared" for r in readings):  # "My id is X." read as a statement too: the same words
        readings = tuple(r for r in readings if r.kind != "stated")
    found: set[Fill] | None = None
    pack = tool.pack
    for reading in readings:
        fills: set[Fill] = set()
        for d in reading.declarations:
            if d.owner == OWNER_USER:
                for arg in tool.arguments:
                    if arg.words <= d.words or (d.words == pack.identity and arg.words & d.words):
                        fills.add(Fill(arg.path, d.value, -1))
            elif d.owner != OWNER_OTHER:
                fills.update(_through_owner(d, tool, owners, one_person))
        found = fills if found is None else found & fills
    return tuple(sorted(found or (), key=lambda f: (f.path, f.value.start)))


def owned_by(d: Declaration, names: Collection[str]) -> frozenset[str]:
    """The names (folded) among the request's ``names`` a declared value's owner refers to: "his" the one name
    when there is exactly one, "Bob's" Bob when the request names him; the user's own and someone described's
    refer to none of them."""
    if d.owner == OWNER_BACK:
        return frozenset(names) if len(names) == 1 else frozenset()  # "his" of two people is no one's
    if d.owner in (OWNER_USER, OWNER_OTHER):
        return frozenset()
    return frozenset(names) & {d.owner.casefold()}


def _through_owner(
    d: Declaration, tool: ToolSense, owners: Sequence[tuple[str, str, int]], one_person: bool
) -> list[Fill]:
    if len(d.words) != 1:
        return []  # "his landlord IBAN", "his company IBAN": another noun says whose, and no rule reads it
    if d.owner == OWNER_BACK and not one_person:
        return []  # the message names someone else "his" may mean
    meant = owned_by(d, {name.casefold() for _, name, _ in owners})
    out = []
    for path, name, call in owners:
        arg = next((a for a in tool.arguments if a.path == path), None)
        if name.casefold() not in meant or arg is None or arg.kind is None or d.value.kind not in arg.kind.kinds:
            continue
        if arg.words <= d.words or d.words & arg.kind.words:
            out.append(Fill(path, d.value, call))
    return out


def _all_fills(reading: Reading, actions: Sequence[Action], tool: ToolSense) -> list[Fill]:
    """The fills of every verb of the tool in the sentence, and of the verbs that name its arguments, each in
    its call: a verb that fills an argument the call before it already fills asks for a call of its own ("pay
    Ann 5 EUR and pay Bob 9 EUR"); one that fills only what is left joins it ("email Ann and cc Bob")."""
    found: list[Fill] = []
    call, filled = 0, set[str]()
    for action in actions:
        mine = [*_fills_of(reading, action, tool), *_named_by_verb(reading, action, tool)]
        paths = {path for path, _ in _fills_of(reading, action, tool)}
        mine += [(path, value) for path, value in _described(action, tool) if path not in {p for p, _ in mine}]
        if paths & filled:
            call, filled = call + 1, set()
        filled |= paths
        for path, value in mine:
            fill = Fill(path, value, call)
            if fill not in found:
                found.append(fill)
    return found


def _described(action: Action, tool: ToolSense) -> list[tuple[str, Value]]:
    """The thing the tool makes, described and not named ("invite Ann to *the design review*"), in each title
    argument of the tool: the call's title must then say what the user described (its head noun), so a call that
    makes another thing ("Board meeting: acquisition terms") is not the one asked for."""
    titles = [a for a in tool.arguments if a.kind is not None and a.kind.name == "title"]
    if not titles:
        return []
    roles = tool.pack.theme_roles
    things = [*action.objects, *(m.phrase for m in action.mods if m.phrase is not None and m.role in roles)]
    for p in things:
        if p.form == "described" and not p.values and p.head and not p.carried and _theme(p, tool):
            value = Value("described", p.head, p.start, p.end)
            return [(a.path, value) for a in titles]
    return []


def _named_by_verb(reading: Reading, action: Action, tool: ToolSense) -> list[tuple[str, Value]]:
    """Values of another verb of the sentence that names an argument of the tool ("email Bob the notes and cc
    Ann": cc fills the argument cc)."""
    out: list[tuple[str, Value]] = []
    for other in reading.actions:
        if other is action or other.negated or " " in other.verb:
            continue
        for arg in tool.arguments:
            if other.verb in arg.words and arg.words <= {other.verb}:
                out += [(arg.path, v) for p in other.objects for v in p.values]
    return out


def forbidden_values(parse: Parse) -> tuple[Value, ...]:
    """Values the sentence forbids: excluded by a negation in every reading ("…, not eve@…"), or in a negated
    request ("never email eve@…")."""
    found: set[Value] | None = None
    for reading in parse.readings:
        values: set[Value] = set()
        for action in reading.actions:
            for phrase in (*action.objects, *(m.phrase for m in action.mods if m.phrase is not None)):
                values.update(phrase.excluded)
                if action.negated:
                    values.update(phrase.values)
        found = values if found is None else found & values
    return tuple(sorted(found or (), key=lambda v: v.start))


def carried_spans(sentence: str, parser: Grammar | None = None) -> list[tuple[int, int]]:
    """Where ``sentence`` holds a word that never selects a record: a word no table knows (an open-class word,
    carried as text) or a privative ("the *old* invoice", "my *former* landlord"): a lookup whose argument holds
    one designates nothing by it."""
    words = (parser or grammar()).words(sentence)
    return [(w.start, w.end) for w in words if w.classes & CARRIED or PRIV in w.classes]


def forbidden_spans(sentence: str, parser: Grammar | None = None) -> list[tuple[int, int]]:
    """Where ``sentence`` holds a value it forbids (see :func:`forbidden_values`), as character spans."""
    parse = (parser or grammar()).parse(sentence)
    return [(v.start, v.end) for v in forbidden_values(parse)]


def fragment_fills(reading: Reading, tool: ToolSense) -> list[Fill]:
    """What a fragment reading ("to eve@acme.example", "50 EUR") fills of ``tool``'s arguments, as the
    objects and phrases of a verb of the tool would."""
    if reading.fragment is None:
        return []
    action = Action("", (reading.fragment,), reading.fragment_mods)
    return [Fill(path, value) for path, value in _fills_of(reading, action, tool)]


def warm(pack: LanguagePack | None = None) -> None:
    """Load what the reader reads with (the pack, the verb table, the compiled grammar) now: the first check
    of a process must not spend its gate budget on a one-time load. ``pack``: English by default (a first
    sentence of another language may not parse: what is loaded is loaded all the same)."""
    grammar(pack).parse("Pay Eve 50 EUR.")
