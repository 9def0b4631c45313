"""What a sentence means, as the request grammar reads it: the readings of a parse (:class:`Reading`), each
action's verb, objects and phrases (:class:`Action`, :class:`Phrase`), every value in its place (:class:`Value`),
and a sentence's parse with its readings or why it has none (:class:`Parse`).

The types only: :mod:`validator.gate.grammar` parses, :mod:`validator.gate.semantics` reads a parse into these.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal, NamedTuple

import msgspec

from validator.text.lexer import Word

__all__ = [
    "OWNER_BACK",
    "OWNER_OTHER",
    "OWNER_USER",
    "Action",
    "Declaration",
    "Mod",
    "Parse",
    "Phrase",
    "Problem",
    "Reading",
    "ReadingKind",
    "Value",
]

ReadingKind = Literal[
    "request",
    "negated",
    "social",
    "fragment",
    "list_lead",
    "declared",
    "stated",
    "answered",
    "asked",
    "reason",
    "identified",
    "purposed",
]


class Value(msgspec.Struct, frozen=True):
    """A value in a sentence, in its place: a name, a quoted passage, an amount, an address, an id..."""

    kind: str
    """``name``, ``quoted``, ``money``, ``number``, ``measure``, ``time``, or a value's own kind (``email``,
    ``iban``, ``filename``, ``id``...)."""
    text: str
    """As written (a quoted passage: its content)."""
    start: int
    end: int
    number: Decimal | None = None
    """An amount's or a number's value, magnitude applied ("2.5k" is 2500)."""
    currency: str | None = None


class Phrase(msgspec.Struct, frozen=True):
    """A noun phrase: what it is (its kinds, its head noun), the values that *are* it, the values its own
    modifiers hold (another role: "the invoice *from Acme*"), and the values it excludes ("…, not eve@…")."""

    form: str
    kinds: frozenset[str]
    head: str | None
    values: tuple[Value, ...]
    inner: tuple[Value, ...] = ()
    excluded: tuple[Value, ...] = ()
    multiple: bool = False
    """Quantified ("all doors", "each invoice") or a list ("Ann and Bob"): several things, not one."""
    start: int = 0
    end: int = 0
    attached: tuple[tuple[str, Phrase], ...] = ()
    """Its own prepositional phrases, by preposition ("a meeting *with Ann*"): a thing the action makes takes
    its arguments from them as the verb's own phrases would give them."""
    carried: bool = False
    """It holds a word no table knows (an open-class word, carried as text: "the *electricity* bill"): that word
    fills, grounds and selects nothing (its values, a name or an address, are read as values)."""
    named_before: bool = False
    """Its values stand before its head ("the t-88 thread", "the 'archives' folder"): they name it only when the
    head is the kind of thing the argument is (:func:`validator.gate.reader.fits`)."""
    privative: bool = False
    """It holds a privative ("the *fake* invoice", "my *former* landlord"): it may not be what its noun names,
    so it is no thing the tool acts on and designates no record (a value it holds, a name or an id, is still the
    value the user named)."""
    bare: bool = False
    """Its words are its head and at most an article ("an email", "the report"): nothing in it chooses which."""


class Mod(msgspec.Struct, frozen=True):
    """A phrase of an action: a prepositional phrase (its preposition is the role), a time (``now``,
    ``deadline``, ``time``; a span's ``starts`` and ``ends``), a manner adverb, or free text (``text``)."""

    role: str
    phrase: Phrase | None = None
    text: str = ""
    start: int = 0
    end: int = 0
    reported: bool = False
    """Free text the user reports rather than dictates ("email Ann *that* the deck is ready", "tell her the deck
    is ready"): what to say in the agent's words, never the words themselves ("saying …", a colon, a quoted
    passage dictate them)."""


class Action(msgspec.Struct, frozen=True):
    """One verb of a sentence with its objects and phrases."""

    verb: str
    """The verb's lemma, with its particles ("pay", "log in", "let know")."""
    objects: tuple[Phrase, ...]
    mods: tuple[Mod, ...]
    negated: bool = False
    start: int = 0
    end: int = 0
    says: bool = False
    """A verb of saying to someone ("tell her …", "say yes", "let Ann know …")."""
    sequenced: bool = False
    """Joined to the verb before it by "then" ("get a receipt from Bob, then pay him"): it comes after that one."""

    @property
    def phrases(self) -> list[Phrase]:
        """Its objects, then the phrase of each modifier that has one."""
        return [*self.objects, *(m.phrase for m in self.mods if m.phrase is not None)]


OWNER_USER = ""
"""A declaration's owner: the user ("my username is X", "I am USR001")."""
OWNER_BACK = "*"
"""A declaration's owner: the one person the request names ("his IBAN is X")."""
OWNER_OTHER = "?"
"""A declaration's owner: someone described, who is neither ("my old landlord's IBAN is X")."""


class Declaration(NamedTuple):
    """A value a sentence declares: the words of its noun, the value, and whose it is (:data:`OWNER_USER`,
    :data:`OWNER_BACK`, :data:`OWNER_OTHER`, or the owner's name as written: "Eve" of "Eve's IBAN")."""

    words: frozenset[str]
    value: Value
    owner: str = OWNER_USER


class Reading(msgspec.Struct, frozen=True):
    """What one parse of a sentence means."""

    kind: ReadingKind
    frame: str
    """``imperative``, ``polite``, ``wish``, ``permit``, ``result``, or the kind again."""
    actions: tuple[Action, ...] = ()
    fragment: Phrase | None = None
    """What a fragment gives ("45 EUR to DE89…"), or the noun phrase of a sentence saying what the request is or is
    for (``identified``: "It's my share of the rent.", ``purposed``: "It's for the offsite.")."""
    fragment_mods: tuple[Mod, ...] = ()
    declarations: tuple[Declaration, ...] = ()
    """Values the sentence declares, with the words of the noun that names them and their owner."""
    sequenced: bool = False
    """A request opened by a sequencing word ("Then …", "After that, …"): it comes after what the user asked
    before it."""
    reason: str = ""
    """A reason the sentence gives (``kind == "reason"``, or after a request's comma): the kind of deed it goes
    with, as the grammar names it (``removal``: "I'm done with it", "it's spam")."""
    purposes: tuple[Action, ...] = ()
    """The verbs of a purpose after a request ("… to pay the rent"): never asked for, but read where a sentence is
    looked at for any action it names (an outside party's "review the invoice to pay 4800 EUR")."""


Problem = Literal["unknown_word", "no_parse", "ambiguous", "too_long"]


class Parse(msgspec.Struct, frozen=True):
    """A sentence as the grammar read it: its readings, or why it has none."""

    words: tuple[Word, ...]
    readings: frozenset[Reading]
    problem: Problem | None = None
    detail: str = ""
    """The word the grammar could not place, or the rule whose parses disagreed too much."""
