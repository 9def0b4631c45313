"""Reading a parse tree of the request grammar into what it means (:mod:`validator.gate.meaning`): each complete
parse of a sentence becomes a :class:`~validator.gate.meaning.Reading`, a rule whose phrase the pack's tables do not
license is dropped, and a sentence whose parses mean more than :data:`MAX_READINGS` things is too ambiguous.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any, TypeVar

import msgspec
from msgspec import structs

from validator.gate.meaning import (
    OWNER_BACK,
    OWNER_OTHER,
    OWNER_USER,
    Action,
    Declaration,
    Mod,
    Phrase,
    Reading,
    Value,
)
from validator.gate.tree import Leaf, Node
from validator.language import LanguagePack
from validator.language.classes import (
    ADJ,
    ADV,
    ANSWER,
    ASK,
    CUR,
    DASH,
    DEADLINE,
    DET,
    MAG,
    MARKER,
    MONTH,
    NAME,
    NN,
    NNS,
    NOW,
    NUM,
    NUMW,
    OPEN,
    OPENV,
    ORD,
    PLEASE,
    PREP,
    PRIV,
    PRT,
    QMARK,
    QUOTED,
    REPORTING,
    SAY,
    SAYING,
    SEQ,
    TIMEX,
    UNIT,
    UNTIL,
    VALUE,
    VB,
    VBG,
    VBN,
    VBZ,
)
from validator.text.entities import CURRENCIES
from validator.text.lexer import CARRIED, Word
from validator.text.times import span_sides

__all__ = ["MAX_CARRIED", "MAX_READINGS", "Semantics", "TooAmbiguous"]

MAX_CARRIED = 2
"""Words carried as text one noun phrase may hold ("*discount coupons*"): more would let a run of words no table
knows say what no rule reads."""

_NOUNISH = frozenset({NN, NNS, ADJ, NAME, VALUE, QUOTED, NUM, PRIV, ORD, DET})

P = TypeVar("P")

MAX_READINGS = 48
"""A sentence whose parses mean more different things than this is unknown (no authorization rests on it)."""


class TooAmbiguous(Exception):
    """A sentence whose parses mean more than :data:`MAX_READINGS` different things."""


# -- reading a parse ------------------------------------------------------------------------------------


class _Pres(msgspec.Struct, frozen=True):
    """The words before a noun phrase's head (or a name), as read: the values that name the thing ("the
    'archives' folder", "the t-88 thread"), those that describe it (a name, an amount), its nouns, and whether an
    open-class word or a privative stands among them."""

    naming: tuple[Value, ...] = ()
    describing: tuple[Value, ...] = ()
    nouns: tuple[Word, ...] = ()
    carried: bool = False
    privative: bool = False

    def __add__(self, other: _Pres) -> _Pres:
        return _Pres(
            self.naming + other.naming,
            self.describing + other.describing,
            self.nouns + other.nouns,
            self.carried or other.carried,
            self.privative or other.privative,
        )


# -- the pieces of a phrase while it is read: each rule's result that is no reading, action, phrase or mod, one
# type a rule (several rules of one shape share one), read by its fields


class _Words(msgspec.Struct, frozen=True):
    """A rule no method reads (``thanks``, ``closers``): its words say nothing more."""


_WORDS = _Words()


class _Openers(msgspec.Struct, frozen=True):
    sequenced: bool
    """A sequencing opener ("Then", "After that,") stands among the sentence's openers."""


class _Sequence(msgspec.Struct, frozen=True):
    """A sequencing opener."""


class _Purpose(msgspec.Struct, frozen=True):
    action: Action | None
    """The purpose's own action (a verb no call reads), if it has one."""
    timed: tuple[Mod, ...]
    """A time among its words, which may time the request too."""


class _PurposeClause(msgspec.Struct, frozen=True):
    action: Action | None


class _Reason(msgspec.Struct, frozen=True):
    deed: str
    """The kind of deed the reason goes with (``removal``, ``payment``: the pack's ``[deeds]``)."""


class _PaymentReason(msgspec.Struct, frozen=True):
    """A debt the payment settles, what it is for plainly described."""


class _Statement(msgspec.Struct, frozen=True):
    clauses: tuple[Action, ...]


class _State(msgspec.Struct, frozen=True):
    phrases: tuple[Phrase, ...]


class _Declarations(msgspec.Struct, frozen=True):
    declarations: tuple[Declaration, ...]


class _Nouns(msgspec.Struct, frozen=True):
    words: tuple[Word, ...]


class _Owner(msgspec.Struct, frozen=True):
    whose: str
    """:data:`OWNER_BACK`, :data:`OWNER_OTHER`, or the owner's name."""


class _Given(msgspec.Struct, frozen=True):
    phrase: Phrase


class _Pps(msgspec.Struct, frozen=True):
    mods: tuple[Mod, ...]


class _Frame(msgspec.Struct, frozen=True):
    name: str
    """``imperative``, ``polite``, ``wish``, ``permit`` or ``result``."""
    actions: tuple[Action, ...]


class _Actions(msgspec.Struct, frozen=True):
    actions: tuple[Action, ...]


class _Conj(msgspec.Struct, frozen=True):
    then: bool
    """It puts what follows after what precedes ("then", "and then")."""


class _Said(msgspec.Struct, frozen=True):
    mods: tuple[Mod, ...]


class _Mods(msgspec.Struct, frozen=True):
    mods: tuple[Mod, ...]


class _Objects(msgspec.Struct, frozen=True):
    phrases: tuple[Phrase, ...]
    particles: tuple[str, ...]


class _Span(msgspec.Struct, frozen=True):
    starts: Mod
    ends: Mod


class _Text(msgspec.Struct, frozen=True):
    text: str
    start: int
    quoted: bool
    """It is one quoted passage ("that 'I'll be late'"): the words themselves, dictated."""


class _Items(msgspec.Struct, frozen=True):
    phrases: tuple[Phrase, ...]


class _Head(msgspec.Struct, frozen=True):
    lemma: str
    kinds: frozenset[str]
    plural: bool
    carried: str | bool
    """A head carried as text: ``"OPENV"`` (the tables know it only as a verb form), True (no table knows it)."""


class _Before(msgspec.Struct, frozen=True):
    """The words before a head, read."""

    pres: _Pres


class _Pre(msgspec.Struct, frozen=True):
    """One word (or a value) before a head, read."""

    pres: _Pres


class _Det(msgspec.Struct, frozen=True):
    owner: tuple[Value, ...]
    """Its owner's names ("Bob's")."""
    multiple: bool
    """A quantifier ("each", "all")."""
    present: bool
    """A determiner stands there at all."""


_NO_DET = _Det((), False, False)


class _Possessor(msgspec.Struct, frozen=True):
    names: tuple[Value, ...]


class _Names(msgspec.Struct, frozen=True):
    values: tuple[Value, ...]
    """The values that name it."""
    addressed: bool
    """One is an address given beside it ("Marta at marta@…")."""


class _Surnames(msgspec.Struct, frozen=True):
    values: tuple[Value, ...]


class _Addresses(msgspec.Struct, frozen=True):
    values: tuple[Value, ...]


class _Address(msgspec.Struct, frozen=True):
    values: tuple[Value, ...]


class _Name(msgspec.Struct, frozen=True):
    values: tuple[Value, ...]


class _Phrases(msgspec.Struct, frozen=True):
    values: tuple[Value, ...]
    """The values its phrases hold."""
    attached: tuple[tuple[str, Phrase], ...]
    """Each phrase by its preposition."""


_NO_PRES = _Pres()


_VALUE_KINDS: dict[str, frozenset[str]] = {
    "email": frozenset({"person", "email"}),
    "handle": frozenset({"person", "handle"}),
    "phone": frozenset({"person", "phone"}),
    "iban": frozenset({"account", "iban"}),
    "account": frozenset({"account"}),
    "path": frozenset({"file", "folder", "path"}),
    "filename": frozenset({"file", "filename"}),
    "id": frozenset({"id"}),
    "url": frozenset({"link", "url"}),
    "domain": frozenset({"link", "domain"}),
    "hashtag": frozenset({"channel", "hashtag"}),
}


_TIME_CLASSES = frozenset({TIMEX, NOW, DEADLINE, MONTH, ORD})
"""Word classes of a time ("on the 1st", "tomorrow", "by Friday"): one in a purpose times the request too."""
_NOUNS = frozenset({NN, NNS})
_OPENS_A_PHRASE = frozenset({PREP, NOW, DEADLINE, TIMEX, MONTH, ADV, ORD, PLEASE, NUM, VALUE, PRT})
"""Word classes that may open a phrase of a verb (a time, a place, a manner) rather than what to say."""


class Semantics:
    """Reads a parse tree into readings, bottom up: each node's set of meanings, each ``_ambig`` node the
    union of its alternatives'. A rule's reading is ``None`` when its phrase is not licensed (dropped)."""

    def __init__(self, words: Sequence[Word], pack: LanguagePack, verbs: frozenset[str] = frozenset()) -> None:
        self.words = words
        self.pack = pack
        self.verbs = verbs
        """Phrasal verbs the caller reads besides the pack's (a policy's intents, "log in")."""
        self.memo: dict[int, frozenset[Any]] = {}

    def values(self, node: Any) -> frozenset[Any]:
        if isinstance(node, Leaf):
            return frozenset({node})
        key = id(node)
        found = self.memo.get(key)
        if found is not None:
            return found
        name = node.data
        if name == "_ambig":
            out: frozenset[Any] = frozenset().union(*(self.values(c) for c in node.children))
        else:
            choices = [self.values(c) for c in node.children]
            combinations = 1
            for c in choices:
                combinations *= len(c)
            if combinations > MAX_READINGS * 8:
                raise TooAmbiguous(name)
            build = _BUILDERS.get(name, _through)
            if combinations == 1:  # most nodes: each child one meaning (no product to walk)
                v = build(self, node, [only for (only,) in choices])
                out = _NOTHING if v is None else frozenset((v,))
            else:
                out = frozenset(
                    v for combo in itertools.product(*choices) if (v := build(self, node, list(combo))) is not None
                )
        if len(out) > MAX_READINGS:
            raise TooAmbiguous(name)
        self.memo[key] = out
        return out

    # -- helpers

    def word(self, token: Any) -> Word:
        word: Word = self.words[token.position]
        return word

    def tokens(self, kids: Sequence[Any], cls: str | None = None) -> list[Word]:
        found = [self.word(k) for k in kids if isinstance(k, Leaf)]
        return [w for w in found if cls is None or cls in w.classes]

    def span(self, node: Any) -> tuple[int, int]:
        leaves = list(self._leaves(node))
        return (leaves[0].start, leaves[-1].end) if leaves else (0, 0)

    def _leaves(self, node: Any) -> Iterator[Word]:
        if isinstance(node, Leaf):
            yield self.word(node)
            return
        for child in node.children:
            yield from self._leaves(child.children[0] if isinstance(child, Node) and child.data == "_ambig" else child)

    @staticmethod
    def parts(kids: Sequence[Any], kind: type[P]) -> list[P]:
        """The pieces of ``kind`` among a node's children."""
        return [k for k in kids if type(k) is kind]

    @staticmethod
    def phrases(kids: Sequence[Any]) -> list[Phrase]:
        return [k for k in kids if isinstance(k, Phrase)]

    # -- sentences

    def r_start(self, node: Node, kids: list[Any]) -> Reading:
        reading = next(k for k in kids if isinstance(k, Reading))
        openers = self.parts(kids, _Openers)
        if openers and openers[0].sequenced and reading.kind == "request":
            return structs.replace(reading, sequenced=True)  # "Then pay Bob.": after what was asked before it
        return reading

    def r_openers(self, node: Node, kids: list[Any]) -> _Openers:
        """Whether a sequencing opener stands among the sentence's openers."""
        earlier = self.parts(kids, _Openers)
        return _Openers(bool(earlier and earlier[0].sequenced) or bool(self.parts(kids, _Sequence)))

    def r_sequence(self, node: Node, kids: list[Any]) -> _Sequence:
        return _Sequence()

    def r_social(self, node: Node, kids: list[Any]) -> Reading:
        return Reading("social", "social")

    def r_request(self, node: Node, kids: list[Any]) -> Reading:
        frame = self.parts(kids, _Frame)[0]
        negated = self.parts(kids, _Actions)  # "…, but don't lock the doors": governed by the negation
        actions = frame.actions + tuple(structs.replace(a, negated=True) for p in negated for a in p.actions)
        declared = tuple(d for p in self.parts(kids, _Declarations) for d in p.declarations)
        reason = self.parts(kids, _Reason)
        purposes = self.parts(kids, _Purpose)
        timed = tuple(m for p in purposes for m in p.timed)
        if timed:  # a time in the purpose may be the request's ("pay … to renew the lease on March 3"): read as its
            actions = tuple(structs.replace(a, mods=a.mods + timed) for a in actions)
        return Reading(
            "request",
            frame.name,
            actions,
            declarations=declared,
            reason=reason[0].deed if reason else "",
            purposes=tuple(a for p in purposes if (a := p.action) is not None),
        )

    def r_purpose(self, node: Node, kids: list[Any]) -> _Purpose | None:
        """A purpose after a request ("… to prepare for the trip", "… so that Ann has it"): its action (a verb no
        call reads, kept for :attr:`Reading.purposes`), and a time among its words, which may time the request as
        well as the purpose: kept as a time of the request's actions."""
        clause = self.parts(kids, _PurposeClause)
        action = clause[0].action if clause else self._purpose_action(node, kids)
        described = self.phrases(kids)
        if action is None and described and not plainly_described(described[0], self.words, self.pack):
            return None  # ", it's for the scam": as a sentence of its own after the request (validator.gate.context)
        first = next(self._leaves(node), None)
        if first is not None and first.norm == "to" and any(w.classes & _NOUNS for w in self.tokens(kids, VB)):
            return None  # no comma, a verb that is a noun as well: "to account 12345678" is where, not what for
        if self._hedged(*self.span(node)):
            return None  # "… to tell him it's ready, but only if Eve agrees": a condition the purpose would hide
        words = [w for w in self._leaves(node) if w.classes & _TIME_CLASSES]
        start, end = self.span(node)
        timed = (Mod("time", None, " ".join(w.norm for w in words), start, end),) if words else ()
        return _Purpose(action, timed)

    def r_purpose_clause(self, node: Node, kids: list[Any]) -> _PurposeClause:
        return _PurposeClause(self._purpose_action(node, kids))

    def _purpose_action(self, node: Node, kids: Sequence[Any]) -> Action | None:
        verbs = [w for w in self.tokens(kids) if w.classes & {VB, VBZ}]
        if not verbs:
            return None  # ", it's for the pizza": no verb
        objects = self.parts(kids, _Objects)
        start, end = self.span(node)
        things = objects[0].phrases if objects else ()
        return Action(verbs[0].verb or verbs[0].norm, things, self._mods(kids), False, start, end)

    def r_reason(self, node: Node, kids: list[Any]) -> Reading:
        return Reading("reason", "reason", reason=self.parts(kids, _Reason)[0].deed)

    def r_removal(self, node: Node, kids: list[Any]) -> _Reason:
        return _Reason("removal")

    def r_payment(self, node: Node, kids: list[Any]) -> _Reason:
        return _Reason("payment")

    def r_owed_share(self, node: Node, kids: list[Any]) -> _Reason | None:
        """What a payment is, after its comma ("…, it's my share of the rent"): a payment's reason, so it stands
        beside a payment only (a deed of another kind is unknown), its phrase a sum of money plainly described, never
        what the thing is (", it's spam")."""
        described = self._plain(kids)
        return _Reason("payment") if described is not None and "money" in described.kinds else None

    def r_owed_half(self, node: Node, kids: list[Any]) -> _Reason | None:
        """ "…, it's my half of the taxi": a payment's reason, what it is half of plainly described ("half" is a
        word of this phrase only: anywhere else it may halve an amount, and has no parse)."""
        return _Reason("payment") if self._plain(kids) is not None else None

    def r_payment_reason(self, node: Node, kids: list[Any]) -> _PaymentReason | None:
        """A debt as a payment's reason ("I owe him for the flights"): what it is for plainly described, or no
        reading (", I owe him for the *scam*", "… for *DE89…*")."""
        if self.phrases(kids) and self._plain(kids) is None:
            return None
        return _PaymentReason()

    def _plain(self, kids: Sequence[Any]) -> Phrase | None:
        """The first phrase of ``kids`` when it is plainly described (:func:`plainly_described`), else None."""
        described = self.phrases(kids)
        return described[0] if described and plainly_described(described[0], self.words, self.pack) else None

    def r_asked(self, node: Node, kids: list[Any]) -> Reading:
        return Reading("asked", "asked")

    def r_answered(self, node: Node, kids: list[Any]) -> Reading:
        return Reading("answered", "answered")

    def r_identified(self, node: Node, kids: list[Any]) -> Reading:
        return Reading("identified", "identified", fragment=self.phrases(kids)[0])

    def r_purposed(self, node: Node, kids: list[Any]) -> Reading:
        return Reading("purposed", "purposed", fragment=self.phrases(kids)[0])

    def r_stated(self, node: Node, kids: list[Any]) -> Reading:
        """A statement: each clause an action of its verb ("be" for a state) with its phrases, so that what it
        is about can be compared with a request (validator.gate.requests)."""
        return Reading("stated", "stated", self.parts(kids, _Statement)[0].clauses)

    def r_statement(self, node: Node, kids: list[Any]) -> _Statement:
        earlier = self.parts(kids, _Statement)
        return _Statement((earlier[0].clauses if earlier else ()) + tuple(k for k in kids if isinstance(k, Action)))

    def r_state_of(self, node: Node, kids: list[Any]) -> Action:
        start, end = self.span(node)
        phrases = tuple(self.phrases(kids)) + tuple(p for s in self.parts(kids, _State) for p in s.phrases)
        return Action("be", phrases, (), False, start, end)

    def r_back(self, node: Node, kids: list[Any]) -> Action:
        """ "I'm back from vacation.": the user's own state, with its phrases (what they name is read)."""
        return Action("be", (), self._mods(kids), False, *self.span(node))

    def r_state(self, node: Node, kids: list[Any]) -> _State:
        return _State(tuple(self.phrases(kids)))

    def r_did(self, node: Node, kids: list[Any]) -> Action | None:
        verb = next(w for w in self.tokens(kids) if w.classes & {VBN, VBG} and w.verb)
        objects = self.parts(kids, _Objects)[0]
        if objects.particles:
            return None  # a particle: "I'm calling off the payment." is a phrasal verb this form does not read
        start, end = self.span(node)
        return Action(verb.verb, objects.phrases, self._mods(kids), False, start, end)

    def r_declared(self, node: Node, kids: list[Any]) -> Reading:
        return Reading("declared", "declared", declarations=self.parts(kids, _Declarations)[0].declarations)

    def r_declaration(self, node: Node, kids: list[Any]) -> _Declarations:
        """The declarations: "my user id is 'USR005'" gives (user, id) and USR005, the user's; "I am USR001"
        gives the pack's words of a person's identity; "his IBAN is X" gives (iban,) and X, the person's the
        request names."""
        given = self.parts(kids, _Given)[0].phrase
        head = self.parts(kids, _Head)
        owner = self.parts(kids, _Owner)
        if head:
            nouns = [w for p in self.parts(kids, _Nouns) for w in p.words]
            words = frozenset({head[0].lemma, *(w.lemma or w.norm for w in nouns)})
        else:
            words = self.pack.identity
        whose = owner[0].whose if owner else OWNER_USER
        return _Declarations(tuple(Declaration(words, v, whose) for v in given.values))

    def r_nouns(self, node: Node, kids: list[Any]) -> _Nouns:
        earlier = self.parts(kids, _Nouns)
        return _Nouns((earlier[0].words if earlier else ()) + tuple(self.tokens(kids, NN)))

    def r_owner(self, node: Node, kids: list[Any]) -> _Owner:
        """Whose a declared value is: the person the request names (a pronoun), a name, or someone described."""
        words = self.tokens(kids)
        names = [w for w in words if NAME in w.classes]
        if len(words) == 1 and not names:
            return _Owner(OWNER_BACK)
        if len(words) == 2 and len(names) == 1 and not self.parts(kids, _Det):
            return _Owner(names[0].text)
        return _Owner(OWNER_OTHER)

    def r_negated(self, node: Node, kids: list[Any]) -> Reading:
        actions = self.parts(kids, _Actions)[0].actions
        return Reading("negated", "negated", tuple(structs.replace(a, negated=True) for a in actions))

    def r_fragment(self, node: Node, kids: list[Any]) -> Reading:
        given = self.parts(kids, _Given)[0].phrase
        return Reading("fragment", "fragment", (), given, self.parts(kids, _Pps)[0].mods)

    def r_given(self, node: Node, kids: list[Any]) -> _Given:
        amounts = self.phrases(kids)
        if amounts:
            return _Given(amounts[0])
        w = self.tokens(kids)[0]
        names = self.parts(kids, _Names)[0].values if self.parts(kids, _Names) else ()
        if NUM in w.classes and not w.classes & {VALUE, QUOTED, NAME}:
            value = Value("number", w.text, w.start, w.end, w.value)
            return _Given(
                Phrase(form="number", kinds=frozenset({"number"}), head=None, values=(value,), start=w.start, end=w.end)
            )
        if QUOTED in w.classes:
            value = Value("quoted", str(w.value), w.start, w.end)
            return _Given(
                Phrase(form="quoted", kinds=frozenset({"quoted"}), head=None, values=(value,), start=w.start, end=w.end)
            )
        start, end = self.span(node)
        if NAME in w.classes:
            value = Value("name", w.text, w.start, w.end)
            return _Given(
                Phrase(
                    form="named",
                    kinds=frozenset({"person", "name"}),
                    head=None,
                    values=(value, *names),
                    start=start,
                    end=end,
                ),
            )
        kinds = frozenset().union(*(_VALUE_KINDS.get(k, frozenset({k})) for k in w.kinds))
        return _Given(Phrase(form="valued", kinds=kinds, head=None, values=(_value(w), *names), start=start, end=end))

    def r_pps(self, node: Node, kids: list[Any]) -> _Pps | None:
        earlier = self.parts(kids, _Pps)
        found: tuple[Mod, ...] = earlier[0].mods if earlier else ()
        phrases = self.phrases(kids)
        if phrases:
            preposition = self.tokens(kids)[0].norm
            if not _licensed(self.pack.verb_phrases, preposition, phrases[0]):
                return None
            found += (Mod(preposition, phrases[0], "", phrases[0].start - len(preposition) - 1, phrases[0].end),)
        return _Pps(found)

    def r_list_lead(self, node: Node, kids: list[Any]) -> Reading:
        return Reading("list_lead", "list_lead")

    # -- frames

    def _frame(self, name: str, kids: list[Any]) -> _Frame:
        return _Frame(name, self.parts(kids, _Actions)[0].actions)

    def r_imperative(self, node: Node, kids: list[Any]) -> _Frame:
        return self._frame("imperative", kids)

    def r_polite(self, node: Node, kids: list[Any]) -> _Frame:
        return self._frame("polite", kids)

    def r_wish(self, node: Node, kids: list[Any]) -> _Frame:
        return self._frame("wish", kids)

    def r_permit(self, node: Node, kids: list[Any]) -> _Frame:
        return self._frame("permit", kids)

    def r_result(self, node: Node, kids: list[Any]) -> _Frame:
        subject = self.phrases(kids)[0]
        participle = self.tokens(kids, VBN)[-1]
        end = self.span(node)[1]
        action = Action(participle.verb or participle.norm, (subject,), self._mods(kids), False, subject.start, end)
        return _Frame("result", (action,))

    # -- actions

    def r_actions(self, node: Node, kids: list[Any]) -> _Actions:
        earlier = self.parts(kids, _Actions)
        first = earlier[0].actions if earlier else ()
        then = any(p.then for p in self.parts(kids, _Conj))
        added = tuple(structs.replace(k, sequenced=True) if then else k for k in kids if isinstance(k, Action))
        return _Actions(first + added)

    def r_conj(self, node: Node, kids: list[Any]) -> _Conj:
        """Whether a conjunction puts what follows after what precedes ("then", "and then")."""
        return _Conj(any(w.classes & {SEQ} for w in self.tokens(kids)))

    r_gerunds = r_actions

    def r_action(self, node: Node, kids: list[Any]) -> Action | None:
        verb = next(w for w in self.tokens(kids) if w.classes & {VB, VBG})
        objects = self.parts(kids, _Objects)[0]
        start, end = self.span(node)
        name = " ".join((verb.verb or verb.norm, *objects.particles))
        if objects.particles and name not in self.pack.phrasal and name not in self.verbs:
            return None  # "post in #general" is a verb and a phrase, not a phrasal verb "post in"
        mods, said = self._mods(kids), self._said(kids)
        if said and not mods and objects.phrases and self._relative(objects.phrases[-1], said[0]):
            return None  # "email Bob the report that Eve wrote": "that" may open what the report is, not what to say
        return Action(name, objects.phrases, mods + said, False, start, end)

    def _relative(self, thing: Phrase, said: Mod) -> bool:
        """Whether free text after a thing may be a clause about the thing: "that" right after a noun."""
        before = max((w for w in self.words if w.end <= said.start), key=lambda w: w.end, default=None)
        return (
            before is not None
            and before.norm in self.pack.back_pronouns  # "that": a marker, and a word that points back
            and thing.form == "described"
            and "person" not in thing.kinds
        )

    def _said(self, kids: Sequence[Any]) -> tuple[Mod, ...]:
        return tuple(m for p in self.parts(kids, _Said) for m in p.mods)

    def r_said(self, node: Node, kids: list[Any]) -> _Said | None:
        texts = self.parts(kids, _Text)
        if not texts:
            return _Said(())
        text = texts[0]
        marker = next((w for w in self.tokens(kids) if w.classes & {MARKER, REPORTING}), None)
        # "that …", "asking whether …": what to say, in the agent's words; "saying 'I'll be late'" dictates them
        reporting = marker is not None and (REPORTING in marker.classes or marker.norm in self.pack.back_pronouns)
        reported = reporting and not text.quoted
        if reported and self._hedged(text.start, self.span(node)[1]):
            return None
        return _Said((Mod("text", None, text.text, text.start, self.span(node)[1], reported),))

    def _hedged(self, start: int, end: int) -> bool:
        """Whether what the agent is to put in its own words may hold words meant for the agent (:func:`hedged`)."""
        return hedged([w for w in self.words if start <= w.start < end], self.pack)

    r_gerund = r_action

    def r_say(self, node: Node, kids: list[Any]) -> Action | None:
        verb = next(w for w in self.tokens(kids) if w.classes & {SAY, SAYING, ASK})
        text = self.parts(kids, _Text)[0]
        start, end = self.span(node)
        # "tell her the deck is ready", "ask Bob if he's free": what to say; "say yes" dictates it
        reported = bool(verb.classes & {SAY, ASK}) and not text.quoted
        if reported and self._hedged(text.start, end):
            return None
        text_mod = (Mod("text", None, text.text, text.start, end, reported),)
        return Action(verb.norm, tuple(self.phrases(kids)), text_mod, False, start, end, says=True)

    def r_let_know(self, node: Node, kids: list[Any]) -> Action | None:
        start, end = self.span(node)
        texts = self.parts(kids, _Text)  # "let Dave know I can't make it": reported, unless one quoted passage
        if texts and (self._not_told(texts[0].start, end) or self._hedged(texts[0].start, end)):
            return None
        told = tuple(Mod("text", None, t.text, t.start, end, not t.quoted) for t in texts)
        mods = self._mods(kids) + self._said(kids) + told
        return Action("let know", tuple(self.phrases(kids)), mods, False, start, end, says=True)

    def _not_told(self, start: int, end: int) -> bool:
        """Whether what follows "let … know" may be no message: a marker in it ("… know that …", "… know at ann@…
        that …": the marker's own reading), or a first word that may open a phrase of the verb ("… know tomorrow
        the report is ready": when to tell, which the text would hide)."""
        told = [w for w in self.words if start <= w.start < end]
        return bool(told) and (
            any(w.classes & {MARKER, REPORTING} for w in told) or bool(told[0].classes & _OPENS_A_PHRASE)
        )

    def _mods(self, kids: Sequence[Any]) -> tuple[Mod, ...]:
        return tuple(m for p in self.parts(kids, _Mods) for m in p.mods)

    def r_mods(self, node: Node, kids: list[Any]) -> _Mods:
        earlier = self.parts(kids, _Mods)
        spans = tuple(m for p in self.parts(kids, _Span) for m in (p.starts, p.ends))
        mods = (earlier[0].mods if earlier else ()) + tuple(k for k in kids if isinstance(k, Mod)) + spans
        return _Mods(mods)

    def r_objects(self, node: Node, kids: list[Any]) -> _Objects | None:
        found = tuple(self.phrases(kids))
        if len(found) == 2 and not _indirect(found[0], found[1], self._determined(found[1])):
            return None
        return _Objects(found, tuple(w.norm for w in self.tokens(kids, PRT)))

    def _determined(self, phrase: Phrase) -> bool:
        """Whether a noun phrase opens with its own determiner ("*the* notes"): then a person described before it
        is a receiver ("email the team the notes"), not a modifier of one noun phrase ("the finance report")."""
        first = next((w for w in self.words if w.start >= phrase.start), None)
        return first is not None and DET in first.classes

    def r_pp(self, node: Node, kids: list[Any]) -> Mod | None:
        preposition = self.tokens(kids)[0].norm
        phrase = self.phrases(kids)[0]
        if not _licensed(self.pack.verb_phrases, preposition, phrase):
            return None
        start, end = self.span(node)
        if phrase.form in ("timed", "number") and self._spanned(start, end):
            return None  # "9:30am *to 10:30*", "*from 10:00* to 11:30": a span's side, which the span reads
        return Mod(preposition, phrase, "", start, end)

    def _spanned(self, start: int, end: int) -> bool:
        """Whether the words from ``start`` to ``end`` (a preposition and its time) are a side of a span of time the
        span rule reads: "to"/"until"/a dash right after a time, or "from" a time that one of them and a time
        follow, the two a span of one day (:func:`span_sides`). "from 20 to 22", "from Friday to Monday" are
        none: their phrases stay."""
        at = next(i for i, w in enumerate(self.words) if w.start == start)
        upto = next(i for i, w in enumerate(self.words) if w.end == end)
        clock = frozenset({TIMEX, NUM})

        def joins(i: int) -> bool:
            w = self.words[i] if 0 <= i < len(self.words) else None
            return w is not None and (w.norm == "to" or bool(w.classes & {UNTIL, DASH}))

        def timed(i: int) -> bool:
            return 0 <= i < len(self.words) and bool(self.words[i].classes & clock)

        if joins(at) and timed(at - 1) and timed(at + 1):
            first, last = self.words[at - 1], self.words[at + 1]
        elif joins(upto + 1) and timed(upto) and timed(upto + 2):
            first, last = self.words[upto], self.words[upto + 2]
        else:
            return False
        return span_sides(first.norm, last.norm, part_of_day=True) is not None

    def r_span(self, node: Node, kids: list[Any]) -> _Span | None:
        """A span of time: its start ("starts") and its end ("ends"), each a time of one word ("from 2 to 4",
        "4:15pm-4:45pm"); what day it is on comes from the sentence's other time words, which fill both."""
        words = list(self._leaves(node))
        prefix = words[0].norm if words[0].norm in ("from", "at") else None
        first, joint, last = words[1:] if prefix else words
        if prefix == "at" and joint.norm == "to":
            return None  # "at 10 to 4": ten to four, the British way; "at 2pm to 4pm" reads so too: no span
        if prefix is None and TIMEX not in first.classes and not self._after_time(first):
            return None  # "room 3 to 4pm": the number may be the room's
        durations, every = self.pack.times["durations"], self.words
        if any(w.norm in durations and n and every[n - 1].classes & {NUM, NUMW} for n, w in enumerate(every)):
            return None  # "a 30 minute lunch from 2 to 4pm": which is the end, the span or the duration
        parts = self.pack.times["hours"].keys() - self.pack.times["days"].keys() - {"noon", "midnight"}
        sides = span_sides(first.norm, last.norm, part_of_day=any(w.norm in parts for w in self.words))
        if sides is None:
            return None
        starts = Mod("starts", None, sides[0], first.start, first.end)
        return _Span(starts, Mod("ends", None, sides[1], last.start, last.end))

    def _after_time(self, word: Word) -> bool:
        """Whether the word right before ``word`` says a day ("Friday 2-4pm", "on the 15th 9-9:15am")."""
        before = [w for w in self.words if w.end <= word.start]
        return bool(before) and bool(before[-1].classes & {TIMEX, ORD})

    def r_now(self, node: Node, kids: list[Any]) -> Mod:
        return Mod("now", None, "", *self.span(node))

    def r_deadline(self, node: Node, kids: list[Any]) -> Mod:
        return Mod("deadline", None, " ".join(w.norm for w in self._leaves(node)), *self.span(node))

    def r_point(self, node: Node, kids: list[Any]) -> Mod:
        words = [w for w in self._leaves(node)]
        if words[0].norm in self.pack.time_prepositions:
            words = words[1:]
        return Mod("time", None, " ".join(w.norm for w in words), *self.span(node))

    def r_manner(self, node: Node, kids: list[Any]) -> Mod:
        return Mod("manner", None, self.tokens(kids)[0].norm, *self.span(node))

    def r_text(self, node: Node, kids: list[Any]) -> _Text:
        words = list(self._leaves(node))
        if len(words) > 1 and QMARK in words[-1].classes:  # "… asking whether it is ready?": the sentence's mark
            words = words[:-1]
        if len(words) == 1 and QUOTED in words[0].classes:  # "saying 'I'll be late'": the passage itself
            return _Text(str(words[0].value), words[0].start, True)
        shown = " ".join(str(w.value) if QUOTED in w.classes else w.text for w in words)
        return _Text(shown, words[0].start, False)

    # -- noun phrases

    def r_np(self, node: Node, kids: list[Any]) -> Phrase:
        return self.phrases(kids)[0]

    def r_items(self, node: Node, kids: list[Any]) -> _Items:
        earlier = self.parts(kids, _Items)
        return _Items((earlier[0].phrases if earlier else ()) + tuple(self.phrases(kids)))

    def r_np_list(self, node: Node, kids: list[Any]) -> Phrase | None:
        items = (*self.parts(kids, _Items)[0].phrases, *self.phrases(kids))
        kinds = frozenset.intersection(*(p.kinds for p in items))
        if not kinds and len({p.form for p in items}) > 1:
            return None  # "a meeting with Ann and Bob" is no list of a meeting and Bob: things of no common kind
        if "money" in kinds and not all(p.values for p in items):
            return None  # "120 EUR and a half", "the rent and 120 EUR": a sum no value of the list says
        start, end = self.span(node)
        values = tuple(v for p in items for v in p.values)
        inner = tuple(v for p in items for v in p.inner)
        return Phrase(
            form="list",
            kinds=kinds,
            head=None,
            values=values,
            inner=inner,
            excluded=tuple(v for p in items for v in p.excluded),
            multiple=True,
            start=start,
            end=end,
            carried=any(p.carried for p in items),
            privative=any(p.privative for p in items),
        )

    def r_np_except(self, node: Node, kids: list[Any]) -> Phrase:
        kept, dropped = self.phrases(kids)
        start, end = self.span(node)
        excluded = dropped.values + dropped.inner
        if not excluded:  # "bob@…, not the minutes": a thing excluded by description, which no value can check
            excluded = (Value("described", dropped.head or dropped.form, dropped.start, dropped.end),)
        return structs.replace(kept, inner=kept.inner, excluded=kept.excluded + excluded, start=start, end=end)

    def _pres(self, kids: Sequence[Any]) -> _Pres:
        found = self.parts(kids, _Before)
        return found[0].pres if found else _NO_PRES

    def _noun_parts(self, kids: Sequence[Any]) -> tuple[tuple[Value, ...], tuple[Value, ...], tuple[Value, ...], bool]:
        """``(values that name the thing, values that describe it, its owner, quantified)`` of a noun phrase."""
        pres = self._pres(kids)
        det = self.parts(kids, _Det)[0] if self.parts(kids, _Det) else _NO_DET
        names = self.parts(kids, _Names)[0].values if self.parts(kids, _Names) else ()
        phrases = self.parts(kids, _Phrases)[0].values if self.parts(kids, _Phrases) else ()
        return pres.naming + names, pres.describing + phrases, det.owner, det.multiple

    def r_described(self, node: Node, kids: list[Any]) -> Phrase | None:
        head = self.parts(kids, _Head)[0]
        lemma, kinds, open_head = head.lemma, head.kinds, head.carried
        has_det = any(p.present for p in self.parts(kids, _Det))
        if not has_det and self._value_first(kids):
            return (
                None  # "give ann@acme.example access": two objects, not an access named ann@…; "the t-88 thread" is one
            )
        if "person" not in kinds and self._addressed(kids):
            return None  # "the team at team@acme.example" gives a person's address; "the summary at …" none
        if open_head == OPENV and not has_det:
            return None  # a verb form as a head only after a determiner ("the pilot"): "as Finance confirms" is none
        if not self._carried_in_place(node):
            return None  # "the workshop pending approval": words no table knows do not run on into what they mean
        naming, describing, owner, quantified = self._noun_parts(kids)
        naming += tuple(Value("number", w.text, w.start, w.end, w.value) for w in self.tokens(kids, NUM))
        attached = self.parts(kids, _Phrases)[0].attached if self.parts(kids, _Phrases) else ()
        pres = self._pres(kids)
        carried = bool(open_head) or pres.carried or any(p.carried for _, p in attached)
        privative = pres.privative or any(p.privative for _, p in attached)
        if pres.naming and (carried or "person" in kinds or not self._names_its_head(node, lemma)):
            # "the t-88 *sibling* thread", "the DE44… *replacement* account", "the bob@… manager": a value before a
            # head that a carried word or a person's noun makes another thing names that other thing's relative
            naming = tuple(v for v in naming if v not in pres.naming)
            describing = describing + pres.naming
        start, end = self.span(node)
        return Phrase(
            form="described",
            kinds=kinds,
            head=lemma,
            values=naming,
            inner=describing + owner,
            multiple=quantified,
            start=start,
            end=end,
            attached=attached,
            carried=carried,
            privative=privative,
            named_before=bool(pres.naming) and bool(naming),
            bare=self._bare(node),
        )

    def _bare(self, node: Any) -> bool:
        """Whether a noun phrase is its head and at most an article before it ("an email")."""
        leaves = list(self._leaves(node))
        return len(leaves) == 1 or (len(leaves) == 2 and leaves[0].norm in self.pack.articles)

    def _names_its_head(self, node: Any, lemma: str) -> bool:
        """Whether the last value before the head stands right before it ("the t-88 thread"): with a word between
        ("the t-88 printer thread", "the DE44… backup account") the value names another thing the word relates."""
        words = []
        for w in self._leaves(node):
            if PREP in w.classes:
                break
            words.append(w)
        at = max((n for n, w in enumerate(words) if w.classes & {VALUE, QUOTED}), default=None)
        return at is not None and at + 1 < len(words) and (words[at + 1].lemma or words[at + 1].norm) == lemma

    def _carried_in_place(self, node: Any) -> bool:
        """Whether the words carried as text in a noun phrase (before its first preposition) are at most
        :data:`MAX_CARRIED`, and none follows a noun the tables know: modifiers and a head, as English builds a
        noun phrase ("the *electricity* bill", "*discount coupons*"), never words running on after one ("the
        workshop *pending approval*", "the rent *absent objections*": a condition no rule reads)."""
        carried, after_noun = 0, False
        for w in self._leaves(node):
            if PREP in w.classes:
                break  # the phrase's own phrases are noun phrases of their own
            if w.classes & CARRIED and not w.classes & _NOUNISH:
                carried += 1
                if after_noun or carried > MAX_CARRIED:
                    return False
            elif w.classes & {NN, NNS}:
                after_noun = True
        return True

    def _value_first(self, kids: Sequence[Any]) -> bool:
        """Whether the phrase opens with a value before its head (a name in quotation marks aside)."""
        return any(v.kind not in ("quoted", "name", "number", "measure", "money") for v in self._pres(kids).naming)

    def _addressed(self, kids: Sequence[Any]) -> bool:
        """Whether the phrase's names hold an address given beside it ("at bob@acme.example")."""
        return any(p.addressed for p in self.parts(kids, _Names))

    def r_named(self, node: Node, kids: list[Any]) -> Phrase:
        name = self.tokens(kids, NAME)[-1]
        naming, describing, owner, _ = self._noun_parts(kids)
        start, end = self.span(node)
        values = (Value("name", name.text, name.start, name.end), *naming)
        pres = self._pres(kids)
        nouns = pres.nouns
        head = nouns[-1].lemma or nouns[-1].norm if nouns else None  # "the subject Inbox": a subject, named
        return Phrase(
            form="named",
            kinds=frozenset({"person", "name"}),
            head=head,
            values=values,
            inner=describing + owner,
            start=start,
            end=end,
            carried=pres.carried,
            privative=pres.privative,
        )

    def r_head(self, node: Node, kids: list[Any]) -> _Head:
        """``(lemma, kinds, plural, carried)``: a head carried as text has no kind ("OPEN": no table knows it;
        "OPENV": the tables know it only as a verb form), and its phrase is carried."""
        w = self.tokens(kids)[0]
        plural = NNS in w.classes and NN not in w.classes
        carried = OPENV if OPENV in w.classes and not w.classes & {NN, NNS} else (OPEN in w.classes)
        return _Head(w.lemma or w.norm, w.kinds, plural, carried)

    def r_pres(self, node: Node, kids: list[Any]) -> _Before:
        """The words before the head, read (:class:`_Pres`): a quoted name or a value before the head names it
        ("the 'archives' folder", "the t-88 thread"); a name or an amount describes it."""
        pres = self._pres(kids)
        for p in self.parts(kids, _Pre):
            pres = pres + p.pres
        return _Before(pres)

    r_name_pres = r_pres  # words only before a name

    def r_pre(self, node: Node, kids: list[Any]) -> _Pre:
        words = self.tokens(kids)
        for w in words:
            if QUOTED in w.classes:
                return _Pre(_Pres(naming=(Value("quoted", str(w.value), w.start, w.end),)))
            if VALUE in w.classes:
                return _Pre(_Pres(naming=(_value(w),)))
        if len(words) == 2 and UNIT in words[1].classes:  # "the 1500 km trip": a measure, never an amount
            start, end = words[0].start, words[1].end
            measure = Value("measure", f"{words[0].text} {words[1].text}", start, end, words[0].value)
            return _Pre(_Pres(describing=(measure,)))
        values = tuple(v for p in self.phrases(kids) for v in p.values)
        values += tuple(Value("name", w.text, w.start, w.end) for w in words if NAME in w.classes)
        if not self.phrases(kids) and len(words) == 1 and words[0].classes & {NUM, NUMW}:  # a count ("2 files")
            values += (Value("number", words[0].text, words[0].start, words[0].end, words[0].value),)
        nouns = tuple(w for w in words if NN in w.classes and len(words) == 1)
        carried = any(w.classes & CARRIED for w in words)
        privative = len(words) == 1 and PRIV in words[0].classes
        return _Pre(_Pres(describing=values, nouns=nouns, carried=carried, privative=privative))

    r_name_pre = r_pre

    def r_det(self, node: Node, kids: list[Any]) -> _Det:
        """Its owner's names, whether it quantifies, whether a determiner stands there at all."""
        owner = tuple(v for p in self.parts(kids, _Possessor) for v in p.names)
        multiple = any(w.norm in self.pack.multiple for w in self.tokens(kids))
        return _Det(owner, multiple, bool(kids))

    def r_possessor(self, node: Node, kids: list[Any]) -> _Possessor:
        return _Possessor(tuple(Value("name", w.text, w.start, w.end) for w in self.tokens(kids, NAME)))

    def r_names(self, node: Node, kids: list[Any]) -> _Names:
        """The values that name it, and whether one is an address given beside it."""
        earlier = self.parts(kids, _Names)
        values, addressed = (earlier[0].values, earlier[0].addressed) if earlier else ((), False)
        values += tuple(v for p in self.parts(kids, _Name) for v in p.values)
        addresses = self.parts(kids, _Address)
        values += tuple(v for p in addresses for v in p.values)
        return _Names(values, addressed or bool(addresses))

    def r_names_of_name(self, node: Node, kids: list[Any]) -> _Names:
        """The values that name it (its surnames, then its addresses), and whether one is an address."""
        surnames = self.parts(kids, _Surnames)[0].values if self.parts(kids, _Surnames) else ()
        addresses = self.parts(kids, _Addresses)[0].values if self.parts(kids, _Addresses) else ()
        return _Names(surnames + addresses, bool(addresses))

    def r_surnames(self, node: Node, kids: list[Any]) -> _Surnames:
        earlier = self.parts(kids, _Surnames)
        named = tuple(v for p in self.parts(kids, _Name) for v in p.values)
        return _Surnames((earlier[0].values if earlier else ()) + named)

    def r_addresses(self, node: Node, kids: list[Any]) -> _Addresses:
        earlier = self.parts(kids, _Addresses)
        given = tuple(v for p in self.parts(kids, _Address) for v in p.values)
        return _Addresses((earlier[0].values if earlier else ()) + given)

    r_value_names = r_names  # only an address

    def r_address(self, node: Node, kids: list[Any]) -> _Address:
        return _Address(tuple(_value(w) for w in self.tokens(kids, VALUE)))

    def r_name(self, node: Node, kids: list[Any]) -> _Name:
        found: list[Value] = []
        for w in self.tokens(kids):
            if QUOTED in w.classes:
                found.append(Value("quoted", str(w.value), w.start, w.end))
            elif VALUE in w.classes:
                found.append(_value(w))
            elif NAME in w.classes:
                found.append(Value("name", w.text, w.start, w.end))
        return _Name(tuple(found))

    r_surname = r_name

    def r_phrases(self, node: Node, kids: list[Any]) -> _Phrases | None:
        """The values its phrases hold, and each phrase by its preposition."""
        earlier = self.parts(kids, _Phrases)
        found, attached = (earlier[0].values, earlier[0].attached) if earlier else ((), ())
        added = self.phrases(kids)
        if added:
            preposition = self.tokens(kids)[0].norm
            if not _licensed(self.pack.noun_phrases, preposition, added[0]):
                return None
            found += added[0].values + added[0].inner + added[0].excluded
            attached += ((preposition, added[0]),)
        return _Phrases(found, attached)

    def r_valued(self, node: Node, kids: list[Any]) -> Phrase:
        w = self.tokens(kids, VALUE)[0]
        naming, describing, _, _ = self._noun_parts(kids)
        attached = self.parts(kids, _Phrases)[0].attached if self.parts(kids, _Phrases) else ()
        kinds = frozenset().union(*(_VALUE_KINDS.get(k, frozenset({k})) for k in w.kinds))
        start, end = self.span(node)
        return Phrase(
            form="valued",
            kinds=kinds,
            head=None,
            values=(_value(w), *naming),
            inner=describing,
            start=start,
            end=end,
            attached=attached,
        )

    def r_quoted(self, node: Node, kids: list[Any]) -> Phrase:
        w = self.tokens(kids, QUOTED)[0]
        kind = "mention" if self.tokens(kids, DET) else "quoted"  # "the “minutes”": a thing's name, not a text
        return Phrase(
            form="quoted",
            kinds=frozenset({"quoted"}),
            head=None,
            values=(Value(kind, str(w.value), w.start, w.end),),
            start=w.start,
            end=w.end,
        )

    def r_pronoun(self, node: Node, kids: list[Any]) -> Phrase:
        w = self.tokens(kids)[0]
        return Phrase(form="pronoun", kinds=frozenset({"pronoun"}), head=w.norm, values=(), start=w.start, end=w.end)

    def r_money(self, node: Node, kids: list[Any]) -> Phrase:
        phrase: Phrase = self.phrases(kids)[0]
        start, end = self.span(node)
        return structs.replace(phrase, start=start, end=end)

    def r_amount(self, node: Node, kids: list[Any]) -> Phrase:
        currency, number, magnitude = None, Decimal(0), Decimal(1)
        for w in self.tokens(kids):
            if CUR in w.classes:
                currency = CURRENCIES.get(w.norm, w.value)
            elif w.classes & {NUM, NUMW}:
                number = w.value
            elif MAG in w.classes:
                magnitude = Decimal(self.pack.magnitudes[w.norm])
        start, end = self.span(node)
        value = Value("money", " ".join(w.text for w in self._leaves(node)), start, end, number * magnitude, currency)
        return Phrase(form="money", kinds=frozenset({"money"}), head=None, values=(value,), start=start, end=end)

    def r_number(self, node: Node, kids: list[Any]) -> Phrase:
        w = self.tokens(kids)[0]
        value = Value("number", w.text, w.start, w.end, w.value)
        return Phrase(form="number", kinds=frozenset({"number"}), head=None, values=(value,), start=w.start, end=w.end)

    def r_measure(self, node: Node, kids: list[Any]) -> Phrase:
        number, unit = self.tokens(kids)
        start, end = self.span(node)
        value = Value("measure", f"{number.text} {unit.text}", start, end, number.value)
        return Phrase(
            form="measure", kinds=frozenset({"measure"}), head=unit.norm, values=(value,), start=start, end=end
        )

    def r_timed(self, node: Node, kids: list[Any]) -> Phrase:
        start, end = self.span(node)
        value = Value("time", " ".join(w.norm for w in self._leaves(node)), start, end)
        return Phrase(form="timed", kinds=frozenset({"time"}), head=None, values=(value,), start=start, end=end)


def _through(semantics: Semantics, node: Node, kids: list[Any]) -> Any:
    """A node with no reading of its own: its one inner meaning passed up, else plain words."""
    inner = [k for k in kids if not isinstance(k, Leaf)]
    return inner[0] if len(inner) == 1 else _WORDS


_BUILDERS: dict[str, Callable[[Semantics, Node, list[Any]], Any]] = {
    name[2:]: fn for name, fn in vars(Semantics).items() if name.startswith("r_")
}
"""Each rule's reading (:meth:`Semantics.r_<rule>`) by the rule's name: looked up once a node, no name built."""
_NOTHING: frozenset[Any] = frozenset()


_RECEIVERS = frozenset({"person", "name", "email", "handle", "phone", "account", "iban", "pronoun"})


_PLAIN_CLASSES = frozenset({DET, NN, NNS, PREP})
_NOT_PLAIN_KINDS = frozenset({"person", "account", "folder", "channel"})
"""Kinds of noun that say whose, to whom or where, not what ("for my landlord", "for the gift cards", "for the
archive")."""


def plainly_described(phrase: Phrase, words: Sequence[Word], pack: LanguagePack) -> bool:
    """Whether a noun phrase saying what a request is or is for ("my share of the rent", "for the pizza") can
    change nothing: built only of determiners, nouns the tables know and the pack's describing prepositions (no
    value, name, negation, adjective, participle, privative or word no table knows: "the *stolen* money", "for the
    *scammer*"), none pointing at someone or at something said ("*his* rent", "the bill from the *email*"), no
    noun of a person, an account or a container."""
    if phrase.form != "described" or phrase.values or phrase.inner or phrase.privative or phrase.multiple:
        return False  # a value, a privative, a quantifier ("for each installment": a sum per thing)
    pointing = pack.pointing | pack.said | pack.conversation | pack.ahead
    own = pack.articles | (pack.grammatical_persons[0] if pack.grammatical_persons else frozenset())
    inside = [w for w in words if phrase.start <= w.start < phrase.end]
    return all(
        w.classes & _PLAIN_CLASSES
        and not (PREP in w.classes and w.norm not in pack.describing)
        and not (DET in w.classes and not w.classes & _NOUNS and w.norm not in own)  # "each", "several", "your"
        and w.norm not in pointing
        and not w.kinds & _NOT_PLAIN_KINDS
        and not ("message" in w.kinds and "document" not in w.kinds)
        for w in inside
    )


def hedged(words: Sequence[Word], pack: LanguagePack) -> bool:
    """Whether a text to be put in the agent's words holds, past its first word ("asking *whether* …", "ask *if*
    …"), a hedge of the pack's (a word that may condition, defer or take back: "… it's ready, *if* Eve agrees",
    "…, *maybe*", "… *unless* Eve objects", "…, *or* not"), or a "no" after a comma ("…, no, don't."): whether those
    are the message's or meant for the agent, code cannot tell."""
    for n, w in enumerate(words[1:], 1):
        if w.norm in pack.hedges:
            return True
        after = words[n + 1] if n + 1 < len(words) else None
        if w.norm == "," and after is not None and (after.norm in pack.negatives or ANSWER in after.classes):
            return True
    return False


def _indirect(first: Phrase, second: Phrase, determined: bool) -> bool:
    """Whether two objects are an indirect and a direct one ("email Bob the report", "pay Eve 50 EUR", "send
    Bob this"): the first a receiver with nothing describing it, the second no receiver ("find the draft and
    email it" has no double object "the draft and email" + "it"). A person described ("pay *the plumber* 240
    EUR", "email *my boss* the notes") is a receiver only of something that cannot run on from its noun: an
    amount, a pronoun, a quoted text, a value, or a noun phrase with its own determiner (``determined``: "send
    the finance report" is one thing); one with a privative or a word no table knows is none."""
    if first.form == "described":
        plain = "person" in first.kinds and not (first.carried or first.privative or first.multiple)
        ends = second.form in ("money", "pronoun", "quoted", "valued") or (second.form == "described" and determined)
        receiver = plain and not first.inner and ends
    else:
        receiver = bool(first.kinds & _RECEIVERS) and not first.inner and first.form != "list"
    return receiver and (second.form == "pronoun" or not (second.kinds <= _RECEIVERS))


def _value(w: Word) -> Value:
    kind = "filename" if "filename" in w.kinds else next(iter(sorted(w.kinds)), "value")
    return Value(kind, w.text, w.start, w.end)


def _licensed(table: dict[str, frozenset[str]], preposition: str, phrase: Phrase) -> bool:
    """Whether a preposition takes the phrase: its noun is of a kind the table lists for it ("*": any). A phrase
    whose head is carried as text has no kind: any preposition of the table takes it, and it fills no argument
    (what it would fill, the reader finds none for: "for the electricity", "on the checkout page")."""
    kinds = table.get(preposition, frozenset())
    if kinds and phrase.carried and not phrase.kinds and not phrase.values:
        return True
    return "*" in kinds or bool(phrase.kinds & kinds)
