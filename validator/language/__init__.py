"""The language pack: the request grammar and every word table of the gate, read from data.

Two files beside this module make the English pack: ``english.lark``, the request grammar (read by Lark,
:mod:`validator.gate.grammar`), and ``english.toml``, the word classes the grammar reads with, the nouns by
kind, which phrase may stand where, what each kind of argument takes, and the other tables of the gate
(sentence splitting, pasted text, standing grants, the verb lexicon). ``english_verbs.txt`` is the verb
table (built from ``lemminflect``'s dictionary by :mod:`validator.devtools.verbs`). No module of the gate
holds a word of English.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

__all__ = [
    "APOSTROPHES",
    "ArgumentKind",
    "LanguagePack",
    "WordSequence",
    "english",
    "english_verb_lemmas",
    "fold_apostrophes",
    "load_pack",
    "phrase",
]

APOSTROPHES = "\u2019\u2018\u02bc\u02b9\u02bb\u02bd\uff07\u00b4\u0060\u2032"
"""Characters used as an apostrophe (U+2019, U+02BC, ...): all read as ``'``."""
_APOS = str.maketrans({c: "'" for c in APOSTROPHES})

WordSequence = tuple[str, ...]
"""A phrase of the pack's tables as its words, in order ("write to" is ``("write", "to")``)."""


def fold_apostrophes(text: str) -> str:
    """``text`` with every apostrophe look-alike read as ``'`` (same length)."""
    return text.translate(_APOS)


def phrase(text: str) -> WordSequence:
    """A phrase of the pack as words: ``"every month"`` -> ``("every", "month")``."""
    return tuple(fold_apostrophes(text.lower()).split())


def _phrases(items: list[str]) -> tuple[WordSequence, ...]:
    return tuple(sorted({phrase(i) for i in items}, key=len, reverse=True))


def _plural(noun: str) -> str:
    """The regular plural of a noun ("invoice" -> "invoices", "policy" -> "policies", "tax" -> "taxes")."""
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


@dataclass(frozen=True, slots=True)
class ArgumentKind:
    """What fills one kind of argument: the words of an argument's name that make it this kind, the roles a
    request's phrase may have to fill it (``object``, ``to``, ``text``, ``time``...), and the kinds of noun
    phrase that may."""

    name: str
    words: frozenset[str]
    roles: frozenset[str]
    kinds: frozenset[str]
    headed: frozenset[str] = frozenset()
    """Roles that fill it only with a noun its name names ("with the subject 'Inbox'")."""


@dataclass(frozen=True, slots=True, eq=False)
class LanguagePack:
    """The word tables of one language; see ``english.toml`` for what each holds. Compared (and hashed) by
    identity: a pack is loaded once."""

    grammar: str
    """The request grammar, in Lark's grammar language."""
    abbreviations: frozenset[str]
    number_abbreviations: frozenset[str]
    question_marks: str
    classes: dict[str, frozenset[str]]
    """Word -> grammar classes is their inverse; here each class's words."""
    magnitudes: dict[str, int]
    spellings: dict[str, str]
    phrasal: frozenset[str]
    """Phrasal verbs ("log in", "set up"): a verb and a particle read as one verb."""
    light: frozenset[str]
    """Light verbs, whose object names the action ("place an order", "make a transfer")."""
    times: dict[str, Any]
    """The parts of a time: ``weekdays``, ``months``, ``days`` (relative), ``hours`` (parts of a day), ``fillers``."""
    nouns: dict[str, frozenset[str]]
    """Each noun form (singular and plural) and its kinds."""
    noun_lemmas: dict[str, str]
    """Each noun form and its singular."""
    plurals: frozenset[str]
    """The noun forms that are plurals."""
    verb_phrases: dict[str, frozenset[str]]
    """Each preposition of a verb's phrase and the kinds its noun may be (``*``: any)."""
    noun_phrases: dict[str, frozenset[str]]
    """Each preposition of a noun's phrase and the kinds its noun may be."""
    arguments: tuple[ArgumentKind, ...]
    adjunct_roles: frozenset[str]
    """Prepositions whose phrase changes no authorization (a topic: "about the invoice")."""
    purpose_roles: frozenset[str]
    """Prepositions of a purpose ("for the workshop"), unless their noun is a person."""
    untyped_roles: frozenset[str]
    back_pronouns: frozenset[str]
    """Pronouns that may point back at an action ("… and then cancel it")."""
    pointing: frozenset[str]
    """Words that point at something said before ("it", "that", "him", "their")."""
    additive: frozenset[str]
    articles: frozenset[str]
    """Determiners that choose nothing ("a", "the"): "send *an* email to …" names the message sent, no other."""
    describing: frozenset[str]
    """Prepositions of a phrase saying what a thing is of or for ("my share *of* the rent"); "from", "in" say where
    it came from ("the bill *from* the email")."""
    hedges: frozenset[str]
    """Words that may condition, defer or take back what is asked ("unless", "only", "actually"): in what the agent
    is to say in its own words, code cannot tell whether they are the message's or meant for the agent."""
    declared_kinds: frozenset[str]
    content_verbs: frozenset[str]
    framing: frozenset[str]
    theme_roles: frozenset[str]
    person_pronouns: frozenset[str]
    said: frozenset[str]
    """Nouns of something said or asked ("request", "instruction"): a statement holding one may be about it."""
    conversation: frozenset[str]
    """Words that point into the conversation itself ("next", "following", "everything")."""
    own_work: frozenset[str]
    """The assistant's own work ("summarize", "find"): beside a request it needs no tool of the policy."""
    """Pronouns of a person ("him", "her"): told something with nothing said, they point at no request."""
    """Roles in which the thing a tool acts on may stand described ("email Bob the minutes")."""
    """Words that may frame the user's text in a message ("Hi", "Thanks"): nothing else may stand around it."""
    """Verbs that add content to a message ("include the link"): beside a sending request, the same message."""
    """Kinds of noun whose value a user may declare their own ("My balance is …"), harmless after a request."""
    """Openers of a later request that add to what was asked ("also"), not correct it ("oh", "ok")."""
    not_verbs: frozenset[str]
    identity: frozenset[str]
    """The words of a person's identity ("I am USR001" fills ``user_id``, ``username``)."""
    time_prepositions: frozenset[str]
    identifier_markers: frozenset[str]
    multiple: frozenset[str]
    attribution_verbs: tuple[WordSequence, ...]
    documents: frozenset[str]
    presenters: tuple[WordSequence, ...]
    forward_markers: tuple[str, ...]
    headers: tuple[str, ...]
    instructions: tuple[str, ...]
    grant_periods: dict[str, tuple[WordSequence, ...]]
    families: dict[str, tuple[str, ...]]
    triggers: dict[str, frozenset[str]]
    deeds: dict[str, frozenset[str]] = field(default_factory=dict)
    """Each kind of deed a reason of the grammar goes with, and the intent verbs of that kind ("removal":
    archive, delete, cancel, unsubscribe): "Archive t-12, I'm done with it." stands; "Renew it, I'm done with
    it." is unknown."""
    identity_fields: frozenset[str] = frozenset()
    """Words of a record's field names that say what the record is ("name", "title", "id")."""
    unread: frozenset[str] = frozenset()
    """Operator words no rule reads yet (``[open] never``): known, never carried, never a name."""
    negatives: frozenset[str] = frozenset()
    """Words that say "not": a message in the agent's words holds none its report does not."""
    auxiliaries: frozenset[str] = frozenset()
    """Auxiliary verbs, which carry no meaning of their own in a report ("I'll *be* late")."""
    ahead: frozenset[str] = frozenset()
    """Words that point at what comes next ("my next message"): in an earlier turn, a frame on what follows."""
    conditions: frozenset[str] = frozenset()
    """Verbs of checking or waiting: a request after one in its sentence waits for it."""
    user_pronouns: frozenset[str] = frozenset()
    """The user's own pronouns ("me", "us"): telling them something is the assistant's own work."""
    containers: dict[str, frozenset[str]] = field(default_factory=dict)
    """Where the things of each kind are kept ("calendar" for an event): a phrase naming one, described, is where
    the thing goes, no argument."""
    frame_words: frozenset[str] = frozenset()
    """Words that make what is said a game, a test, an example, a translation or a dictation ("We are
    role-playing."): a sentence around a request holding one leaves it unknown."""
    distributive: frozenset[str] = frozenset()
    """Words that give each payee of a list the whole amount ("each"): with none, one amount for several payees
    is for each or for all, and code cannot tell."""
    again: frozenset[str] = frozenset()
    """Words of a request adding a payment to an earlier one with the same payee ("again", "another")."""
    governing: tuple[str, ...] = ()
    """Phrases about the time after a sentence ("from now on", "until"): with a negation or a word of holding
    back, an earlier turn's sentence governs the later ones."""
    holding: frozenset[str] = frozenset()
    """Words of holding back ("draft", "wait"): with a governing phrase, a frame over what follows."""
    turning: frozenset[str] = frozenset()
    """Words that keep a model from deciding a dangerous call's request where the policy lets it (``intent =
    "judge"``): a condition, a hedge, a report, a refusal, whose scope code cannot see (the pack's ``[judging]``)."""
    record_qualifiers: frozenset[str] = frozenset()
    """Words that may stand beside an identity field's word in a record's own name for it (``full_name``,
    ``company_name``; the pack's ``[records]``): a field with any other word (``manager_name``) is someone else's."""
    secret_states: frozenset[str] = frozenset()
    """Words that say what a secret is, not which ("the password is wrong", "my PIN is expired"): after a secret's
    noun they declare no secret (the pack's ``[secrets]``)."""
    replies: tuple[str, ...] = ()
    """How a reply opens ("go ahead", "sure"): after another participant's message, it answers them."""
    question_openers: frozenset[str] = frozenset()
    """Words a participant's question opens with when it has no question mark ("should i pay bob back")."""
    assistant_names: frozenset[str] = frozenset()
    """Words that name the assistant ("Assistant, pay Bob."): a reply to another participant's question that
    names one is addressed to the assistant after all."""
    mentioned: frozenset[str] = frozenset()
    """Every word the pack's file names anywhere (its tables, role lists, lead-ins, grant periods): known, so
    never an open-class word, whether or not a class of the grammar holds it."""
    number_words: dict[str, int] = field(default_factory=dict)
    """Number words and their values ("one", "twenty"): read as numbers."""
    time_roles: frozenset[str] = frozenset()
    """Prepositions whose phrase, when it is a time, gives the action's time ("for Friday")."""
    grammatical_persons: tuple[frozenset[str], ...] = ()
    """The words of the first, second and third persons: a message tells a report with each person it speaks of,
    or with none."""
    changing: frozenset[str] = frozenset()
    """Verbs that change a thing's time ("move", "push"): under them "from 2pm to 4pm" is the old time and the new,
    never a span."""
    closing: frozenset[str] = frozenset()
    """Words that may close a text to say or the user's sentence alike after a comma ("…, thanks"), and the signs
    of the EMOJI class: readings of the agent's wording that differ only by them agree."""
    time_ends: frozenset[str] = frozenset()
    """Words of an argument's name saying it holds an end ("end_time"): a span's end fills only such an argument,
    its start only a time argument without them."""
    selective_endings: tuple[str, ...] = ()
    """Endings of a word no table knows that make it one choosing which thing ("smallest", "heavier"): such a word
    is never carried (open-class), so its sentence is unknown."""

    def word_classes(self) -> dict[str, frozenset[str]]:
        """Each word of the class tables and nouns, with its grammar classes (``NN``/``NNS`` for nouns)."""
        found: dict[str, set[str]] = {}
        for cls, words in self.classes.items():
            for word in words:
                found.setdefault(word, set()).add(cls)
        for noun in self.nouns:
            found.setdefault(noun, set()).add("NNS" if noun in self.plurals else "NN")
        for word in self.magnitudes:
            found.setdefault(word, set()).add("MAG")
        return {w: frozenset(c) for w, c in found.items()}


def _nouns(
    table: dict[str, list[str]], irregular: dict[str, str]
) -> tuple[dict[str, frozenset[str]], dict[str, str], frozenset[str]]:
    kinds: dict[str, set[str]] = {}
    lemmas: dict[str, str] = {}
    plurals: set[str] = set()
    singular_of = {plural: singular for plural, singular in irregular.items()}
    plural_of = {singular: plural for plural, singular in irregular.items()}
    for kind, nouns in table.items():
        for noun in nouns:
            if noun in singular_of and singular_of[noun] == noun:  # its own plural ("minutes", "data")
                kinds.setdefault(noun, set()).add(kind)
                lemmas.setdefault(noun, noun)
                plurals.add(noun)
                continue
            kinds.setdefault(noun, set()).add(kind)
            lemmas.setdefault(noun, noun)
            plural = plural_of.get(noun, _plural(noun))
            kinds.setdefault(plural, set()).add(kind)
            lemmas.setdefault(plural, noun)
            plurals.add(plural)
    return {k: frozenset(v) for k, v in kinds.items()}, lemmas, frozenset(plurals)


def _pack(data: dict[str, Any], grammar: str) -> LanguagePack:
    s, p, lex = data["sentences"], data["pasted"], data["lexicon"]
    nouns, lemmas, plurals = _nouns(data["nouns"], data["plurals"])
    return LanguagePack(
        grammar=grammar,
        abbreviations=frozenset(a.lower() for a in s["abbreviations"]),
        number_abbreviations=frozenset(a.lower() for a in s["number_abbreviations"]),
        question_marks="".join(s["question_marks"]),
        classes={cls: frozenset(words) for cls, words in data["classes"].items()},
        magnitudes={k: int(v) for k, v in data["magnitudes"].items()},
        phrasal=frozenset(data["phrasal"]["verbs"]),
        light=frozenset(data["light"]["verbs"]),
        times=dict(data["times"]),
        spellings=dict(data["spellings"]),
        nouns=nouns,
        noun_lemmas=lemmas,
        plurals=plurals,
        verb_phrases={k: frozenset(v) for k, v in data["phrases"]["verb"].items()},
        noun_phrases={k: frozenset(v) for k, v in data["phrases"]["noun"].items()},
        arguments=tuple(
            ArgumentKind(
                name,
                frozenset(a["words"]),
                frozenset(a["roles"]),
                frozenset(a["kinds"]),
                frozenset(a.get("headed", ())),
            )
            for name, a in data["arguments"].items()
        ),
        adjunct_roles=frozenset(data["roles"]["adjuncts"]),
        purpose_roles=frozenset(data["roles"]["purpose"]),
        untyped_roles=frozenset(data["roles"]["untyped"]),
        back_pronouns=frozenset(data["roles"]["back"]),
        pointing=frozenset(data["roles"]["pointing"]),
        additive=frozenset(data["roles"]["additive"]),
        articles=frozenset(data["roles"]["articles"]),
        describing=frozenset(data["roles"]["describing"]),
        hedges=frozenset(data["roles"]["hedges"]),
        declared_kinds=frozenset(data["roles"]["declared"]),
        content_verbs=frozenset(data["roles"]["content_verbs"]),
        framing=frozenset(data["roles"]["framing"]),
        theme_roles=frozenset(data["roles"]["theme"]),
        person_pronouns=frozenset(data["roles"]["persons"]),
        own_work=frozenset(data["roles"]["own_work"]),
        said=frozenset(data["roles"]["said"]),
        conversation=frozenset(data["roles"]["conversation"]),
        not_verbs=frozenset(data["roles"]["not_verbs"]),
        identity=frozenset(data["roles"]["identity"]),
        time_prepositions=frozenset(data["roles"]["time_prepositions"]),
        time_roles=frozenset(data["roles"].get("time_roles", ())),
        time_ends=frozenset(data["roles"].get("time_ends", ())),
        closing=frozenset(data["roles"].get("closing", ())) | frozenset(data["classes"].get("EMOJI", ())),
        grammatical_persons=tuple(
            frozenset(data["roles"].get(f"{n}_person", ())) for n in ("first", "second", "third")
        ),
        changing=frozenset(data["roles"].get("changing", ())),
        identifier_markers=frozenset(data["values"]["identifier_markers"]),
        multiple=frozenset(data["values"]["multiple"]),
        attribution_verbs=_phrases(p["attribution_verbs"]),
        documents=frozenset(p["documents"]),
        presenters=_phrases(p["presenters"]),
        forward_markers=tuple(p["forward_markers"]),
        headers=tuple(p["headers"]),
        instructions=tuple(data["delegation"]["instructions"]),
        grant_periods={k: _phrases(v) for k, v in data["grants"].items()},
        families={k: tuple(v) for k, v in lex["families"].items()},
        triggers={k: frozenset(v) for k, v in lex["triggers"].items()},
        deeds={k: frozenset(v) for k, v in data.get("deeds", {}).items()},
        selective_endings=tuple(data.get("open", {}).get("selective_endings", ())),
        mentioned=frozenset(_words_of({k: v for k, v in data.items() if k not in OUTSIDE_THE_GRAMMAR})),
        frame_words=frozenset(data.get("frames", {}).get("words", ())),
        assistant_names=frozenset(data.get("addressing", {}).get("assistant", ())),
        question_openers=frozenset(data.get("addressing", {}).get("question_openers", ())),
        replies=tuple(data.get("addressing", {}).get("replies", ())),
        governing=tuple(data.get("framing", {}).get("governing", ())),
        distributive=frozenset(data.get("amounts", {}).get("distributive", ())),
        again=frozenset(data.get("amounts", {}).get("again", ())),
        holding=frozenset(data.get("framing", {}).get("holding", ())),
        turning=frozenset(data.get("judging", {}).get("turning", ())),
        secret_states=frozenset(data.get("secrets", {}).get("states", ())),
        record_qualifiers=frozenset(data.get("records", {}).get("qualifiers", ())),
        containers={k: frozenset(v) for k, v in data.get("containers", {}).items()},
        user_pronouns=frozenset(data["roles"].get("user_pronouns", ())),
        ahead=frozenset(data["roles"].get("ahead", ())),
        negatives=frozenset(data["roles"].get("negatives", ())),
        unread=frozenset(data.get("open", {}).get("never", ())),
        identity_fields=frozenset(data["roles"].get("identity_fields", ())),
        auxiliaries=frozenset(data["roles"].get("auxiliaries", ())),
        conditions=frozenset(data["roles"].get("conditions", ())),
        number_words={k: int(v) for k, v in data.get("numbers", {}).items()},
    )


OUTSIDE_THE_GRAMMAR = ("addressing", "framing", "amounts", "judging", "secrets", "records")
"""Tables of the pack's file read by code outside the grammar (whom a reply addresses): their words are no
vocabulary, so they never change how a sentence parses."""


def _words_of(node: Any) -> Iterator[str]:
    """Every word of every string (and key) in a table of the pack's file, folded as the lexer folds them."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from phrase(str(key))
            yield from _words_of(value)
    elif isinstance(node, list):
        for item in node:
            yield from _words_of(item)
    elif isinstance(node, str):
        yield from phrase(node)


def load_pack(text: str, grammar: str | None = None) -> LanguagePack:
    """A language pack from the text of a TOML file of ``english.toml``'s shape and a grammar (the English
    grammar when none is given)."""
    if grammar is None:
        grammar = resources.files(__name__).joinpath("english.lark").read_text(encoding="utf-8")
    return _pack(tomllib.loads(text), grammar)


@cache
def english() -> LanguagePack:
    """The English pack shipped with the library (read once)."""
    return load_pack(resources.files(__name__).joinpath("english.toml").read_text(encoding="utf-8"))


@cache
def _english_verbs() -> dict[str, str]:
    """The shipped verb table (``english_verbs.txt``, built by :mod:`validator.devtools.verbs`): each form
    and the rest of its line (empty: the form is its own only lemma). Read once, in a few milliseconds."""
    text = resources.files(__name__).joinpath("english_verbs.txt").read_text(encoding="utf-8")
    return dict(line.partition(" ")[::2] for line in text.splitlines() if line and not line.startswith("#"))


def english_verb_lemmas(word: str) -> tuple[str, ...]:
    """The verb lemmas the lower-case ``word`` is a form of (``paid`` -> ``("pay",)``); empty when the table
    does not know it as a verb form. A word outside the table is not guessed at."""
    rest = _english_verbs().get(word)
    if rest is None:
        return ()
    return tuple(rest.split(" ")) if rest else (word,)
