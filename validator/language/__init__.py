"""The language pack: the request grammar and every word table of the gate, read from data.

Two files beside this module make the English pack: ``english.lark``, the request grammar (read by Lark,
:mod:`validator.gate.grammar`), and ``english.toml``, the word classes the grammar reads with, the nouns by
kind, which phrase may stand where, what each kind of argument takes, and the other tables of the gate
(sentence splitting, pasted text, standing grants, the verb lexicon). ``english_verbs.txt`` is the verb
table (built from ``lemminflect``'s dictionary by :mod:`validator.devtools.verbs`). No module of the gate
holds a word of English.

Another language is another pack: :func:`load_pack` of its file, its grammar and its verb table, given to a
validator as ``ValidatorConfig(language=pack)``; every reader of the user's words takes it from the check
(``tests/gate/test_second_pack.py`` proves a request with a tiny one while this pack cannot be read).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import cache
from typing import Any, get_args

from validator.exceptions import FieldProblem, PackError
from validator.findings import GrantPeriod
from validator.language.classes import EMOJI, MAG, NN, NNS

__all__ = [
    "APOSTROPHES",
    "LEAD_IN_STOPS",
    "READ_AHEAD",
    "ArgumentKind",
    "LanguagePack",
    "VerbTable",
    "WordSequence",
    "english",
    "english_verb_lemmas",
    "fold_apostrophes",
    "load_pack",
    "phrase",
    "read_ahead",
]

APOSTROPHES = "\u2019\u2018\u02bc\u02b9\u02bb\u02bd\uff07\u00b4\u0060\u2032"
"""Characters used as an apostrophe (U+2019, U+02BC, ...): all read as ``'``."""
_APOS = re.compile(f"[{re.escape(APOSTROPHES)}]")
"""Any of :data:`APOSTROPHES`: a text with a character past ASCII has them replaced by a pattern, in C
(``str.translate`` looks each character of such a text up in a dict, five to fifteen times slower)."""
_ASCII_APOS = [c for c in APOSTROPHES if c.isascii()]

LEAD_IN_STOPS = re.compile(r"[.!?:]")
"""What ends a lead-in (a sentence's end, its colon): no lead-in phrase of a pack may hold one (the reader of pasted
text reads only the sentence before a colon, :mod:`validator.text.sentences`)."""

GRANT_PERIODS = tuple(p for p in get_args(GrantPeriod) if p != "once")
"""The periods a pack's ``[grants]`` may name (how often a standing authorization may be used)."""

_REQUIRED: Any = object()
"""A table the pack's file must have (no default), or one it does not have."""

WordSequence = tuple[str, ...]
"""A phrase of the pack's tables as its words, in order ("write to" is ``("write", "to")``)."""


def fold_apostrophes(text: str) -> str:
    """``text`` with every apostrophe look-alike read as ``'`` (same length)."""
    if text.isascii():  # most text: the one ASCII look-alike, "`", replaced where it stands
        for c in _ASCII_APOS:
            text = text.replace(c, "'")
        return text
    return _APOS.sub("'", text)


def phrase(text: str) -> WordSequence:
    """A phrase of the pack as words: ``"every month"`` -> ``("every", "month")``."""
    return tuple(fold_apostrophes(text.lower()).split())


def _phrases(items: list[str]) -> tuple[WordSequence, ...]:
    """The phrases, longest first (then in order: the same in every process, whatever its hash seed)."""
    return tuple(sorted({phrase(i) for i in items}, key=lambda p: (-len(p), p)))


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


class VerbTable:
    """A language's verb forms and their lemmas, from a text of one line a form: the form, then its lemmas separated
    by spaces (none: the form is its own only lemma); ``#`` opens a comment line. Read the first time a word is
    looked up (the English table is some thousand lines).

    ``ordered``: the text is its comment lines, then one line a form in the order of the forms (no blank line,
    each form once): the shipped English table, as :mod:`validator.devtools.verbs` writes it and a test holds it.
    Such a table is searched in its text, by halves, for the first :data:`INDEX_AFTER` words looked up, and indexed
    only then: a process that reads a few sentences (a one-shot check, a call of the hook) never builds the index
    of every form (about 15 ms); a table not ``ordered`` is indexed at its first lookup."""

    __slots__ = ("_forms", "_looked", "_ordered", "_read", "_text")

    def __init__(self, text: Callable[[], str], *, ordered: bool = False) -> None:
        self._text = text
        self._ordered = ordered
        self._forms: dict[str, str] | None = None
        self._read: tuple[str, int] | None = None
        self._looked = 0

    def lemmas(self, word: str) -> tuple[str, ...]:
        """The verb lemmas the lower-case ``word`` is a form of (``paid`` -> ``("pay",)``); empty when the table
        does not know it as a verb form. A word outside the table is not guessed at."""
        forms = self._forms
        if forms is not None:
            rest = forms.get(word)
        elif self._ordered and self._looked < INDEX_AFTER:
            self._looked += 1  # (two threads may both count one lookup: the index is built a little later)
            rest = self._search(word)
        else:
            rest = self._index().get(word)
        if rest is None:
            return ()
        return tuple(rest.split(" ")) if rest else (word,)

    def _index(self) -> dict[str, str]:
        forms = self._forms
        if forms is None:
            lines = self._text().splitlines()
            forms = self._forms = dict(line.partition(" ")[::2] for line in lines if line and not line.startswith("#"))
        return forms

    def _search(self, word: str) -> str | None:
        """What follows ``word`` on its line of an ordered table (``""``: nothing), or None: no line is its."""
        read = self._read
        if read is None:
            text = self._text()
            head = 0
            while text.startswith("#", head):  # the comment lines open the table
                head = text.find("\n", head) + 1 or len(text)
            read = self._read = (text, head)
        text, lo = read
        hi = len(text)
        while lo < hi:  # lo and hi stand at the start of a line (or the end); the line sought is between them
            start = text.rfind("\n", lo, (lo + hi) // 2) + 1 or lo
            end = text.find("\n", start)
            if end == -1:
                end = len(text)
            form, _, rest = text[start:end].partition(" ")
            if form == word:
                return rest if form else None  # (a blank line, as the index reads it, is no form)
            if form < word:
                lo = end + 1
            else:
                hi = start
        return None


INDEX_AFTER = 512
"""Words looked up in an ordered :class:`VerbTable` by searching its text before its index is built: each search
reads about fifteen lines (some microseconds), the index costs the time of some thousand searches."""


def shipped_text(name: str) -> str:
    """The file ``name`` shipped beside this module (``english.toml``, ``english.lark``, …), as text: read from the
    package's folder, or through :mod:`importlib.resources` where the package is no folder (a zipped install).
    That module is not imported otherwise: it brings :mod:`tempfile`, :mod:`shutil` and the compressors, some
    milliseconds of every one-shot process.

    Raises:
        OSError: the file cannot be read either way.
    """
    try:
        with open(os.path.join(os.path.dirname(__file__), name), encoding="utf-8") as f:
            return f.read()
    except OSError:
        from importlib import resources

        return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def _english_verbs_text() -> str:
    """The shipped verb table (``english_verbs.txt``, built by :mod:`validator.devtools.verbs`)."""
    return shipped_text("english_verbs.txt")


_ENGLISH_VERBS = VerbTable(_english_verbs_text, ordered=True)
"""The English verb table, read the first time a word is looked up (every pack loaded without its own shares it)."""


def _at(path: str, read: Callable[[Any], Any]) -> dict[str, Any]:
    """A field's metadata: it is read from the pack's file's table at ``path`` (``"roles.adjuncts"``) by ``read``.
    A field with a default reads as that where the file leaves its table out; one without is required
    (:class:`PackError`)."""
    return {"at": path, "read": read}


def _lower(words: list[str]) -> frozenset[str]:
    return frozenset(w.lower() for w in words)


def _sets(table: dict[str, list[str]]) -> dict[str, frozenset[str]]:
    return {k: frozenset(v) for k, v in table.items()}


def _ints(table: dict[str, Any]) -> dict[str, int]:
    return {k: int(v) for k, v in table.items()}


def _tuples(table: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {k: tuple(v) for k, v in table.items()}


def _phrase_sets(table: dict[str, list[str]]) -> dict[str, tuple[WordSequence, ...]]:
    return {k: _phrases(v) for k, v in table.items()}


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class LanguagePack:
    """The word tables of one language, each field read from its table of the pack's file (``english.toml``
    has every one, with what it holds). Compared (and hashed) by identity: a pack is loaded once.

    A field whose metadata is :func:`_at`'s names its table (``"roles.adjuncts"``) and how it is read; :func:`load_pack`
    reads every such field the same way. The fields after ``grammar`` and before the first table are built from
    several tables at once."""

    grammar: str
    """The request grammar, in Lark's grammar language."""
    verbs: VerbTable
    """The verb table: each verb form and its lemmas (``english_verbs.txt``)."""
    digest: str = ""
    """SHA-256 of the texts the pack was loaded from (its file, its grammar, its verb table): a stored verdict judged
    with one pack is never reused for a validator of another (:func:`validator.state.keys.verdict_key`)."""
    nouns: dict[str, frozenset[str]]
    """Each noun form (singular and plural) and its kinds (``[nouns]`` by kind, ``[plurals]`` for irregular ones)."""
    noun_lemmas: dict[str, str]
    """Each noun form and its singular."""
    plurals: frozenset[str]
    """The noun forms that are plurals."""
    arguments: tuple[ArgumentKind, ...]
    """The kinds of argument (``[arguments.NAME]``): the words of an argument's name that make it that kind, the
    roles of a request's phrase that fill it, and the kinds of noun phrase that may."""
    closing: frozenset[str] = frozenset()
    """Words that may close a text to say or the user's sentence alike after a comma ("…, thanks"), and the signs
    of the EMOJI class: readings of the agent's wording that differ only by them agree."""
    grammatical_persons: tuple[frozenset[str], ...] = ()
    """The words of the first, second and third persons: a message tells a report with each person it speaks of,
    or with none."""
    mentioned: frozenset[str] = frozenset()
    """Every word the pack's file names anywhere (its tables, role lists, lead-ins, grant periods): known, so
    never an open-class word, whether or not a class of the grammar holds it."""

    abbreviations: frozenset[str] = field(metadata=_at("sentences.abbreviations", _lower))
    """Words a period after which ends no sentence ("e.g.", "Dr.")."""
    number_abbreviations: frozenset[str] = field(metadata=_at("sentences.number_abbreviations", _lower))
    """Abbreviations only before a number ("No. 5", "Ref. 443"): "No. Then email Ann" is two sentences."""
    question_marks: str = field(metadata=_at("sentences.question_marks", "".join))
    """Characters that end a sentence besides ".", "!" and "?" (only "?" makes a question of it)."""
    classes: dict[str, frozenset[str]] = field(metadata=_at("classes", _sets))
    """Each grammar class (the grammar's CAPITALS) and its words; a word may stand in several."""
    magnitudes: dict[str, int] = field(metadata=_at("magnitudes", _ints))
    """Words that multiply the number before them ("2.5k EUR", "3 million") and by how much."""
    spellings: dict[str, str] = field(metadata=_at("spellings", dict))
    """Chat spellings and the word each stands for ("pls": "please"); no other misspelling is guessed at."""
    phrasal: frozenset[str] = field(metadata=_at("phrasal.verbs", frozenset))
    """Phrasal verbs ("log in", "set up"): a verb and a particle read as one verb."""
    light: frozenset[str] = field(metadata=_at("light.verbs", frozenset))
    """Light verbs, whose object names the action ("place an order", "make a transfer")."""
    times: dict[str, Any] = field(metadata=_at("times", dict))
    """The parts of a time: ``weekdays``, ``months``, ``days`` (relative), ``hours`` (parts of a day), ``fillers``."""
    verb_phrases: dict[str, frozenset[str]] = field(metadata=_at("phrases.verb", _sets))
    """Each preposition of a verb's phrase and the kinds its noun may be (``*``: any)."""
    noun_phrases: dict[str, frozenset[str]] = field(metadata=_at("phrases.noun", _sets))
    """Each preposition of a noun's phrase and the kinds its noun may be."""
    adjunct_roles: frozenset[str] = field(metadata=_at("roles.adjuncts", frozenset))
    """Prepositions whose phrase changes no authorization (a topic: "about the invoice")."""
    purpose_roles: frozenset[str] = field(metadata=_at("roles.purpose", frozenset))
    """Prepositions of a purpose ("for the workshop"), unless their noun is a person."""
    untyped_roles: frozenset[str] = field(metadata=_at("roles.untyped", frozenset))
    """Roles that fill an argument of no kind, with a noun its name names ("lock the door" fills ``door``)."""
    back_pronouns: frozenset[str] = field(metadata=_at("roles.back", frozenset))
    """Pronouns that may point back at an action ("… and then cancel it")."""
    pointing: frozenset[str] = field(metadata=_at("roles.pointing", frozenset))
    """Words that point at something said before ("it", "that", "him", "their")."""
    additive: frozenset[str] = field(metadata=_at("roles.additive", frozenset))
    """Openers of a later request that add to what was asked ("also"), not correct it ("oh", "ok")."""
    articles: frozenset[str] = field(metadata=_at("roles.articles", frozenset))
    """Determiners that choose nothing ("a", "the"): "send *an* email to …" names the message sent, no other."""
    describing: frozenset[str] = field(metadata=_at("roles.describing", frozenset))
    """Prepositions of a phrase saying what a thing is of or for ("my share *of* the rent"); "from", "in" say where
    it came from ("the bill *from* the email")."""
    hedges: frozenset[str] = field(metadata=_at("roles.hedges", frozenset))
    """Words that may condition, defer or take back what is asked ("unless", "only", "actually"): in what the agent
    is to say in its own words, code cannot tell whether they are the message's or meant for the agent."""
    declared_kinds: frozenset[str] = field(metadata=_at("roles.declared", frozenset))
    """Kinds of noun whose value a user may declare their own ("My balance is …"), harmless after a request."""
    content_verbs: frozenset[str] = field(metadata=_at("roles.content_verbs", frozenset))
    """Verbs that add content to a message ("include the link"): beside a sending request, the same message."""
    framing: frozenset[str] = field(metadata=_at("roles.framing", frozenset))
    """Words that may frame the user's text in a message ("Hi", "Thanks"): nothing else may stand around it."""
    theme_roles: frozenset[str] = field(metadata=_at("roles.theme", frozenset))
    """Roles in which the thing a tool acts on may stand described ("email Bob the minutes")."""
    person_pronouns: frozenset[str] = field(metadata=_at("roles.persons", frozenset))
    """Pronouns of a person ("him", "her"): told something with nothing said, they point at no request."""
    own_work: frozenset[str] = field(metadata=_at("roles.own_work", frozenset))
    """The assistant's own work ("summarize", "find"): beside a request it needs no tool of the policy."""
    said: frozenset[str] = field(metadata=_at("roles.said", frozenset))
    """Nouns of something said or asked ("request", "instruction"): a statement holding one may be about it."""
    conversation: frozenset[str] = field(metadata=_at("roles.conversation", frozenset))
    """Words that point into the conversation itself ("next", "following", "everything")."""
    not_verbs: frozenset[str] = field(metadata=_at("roles.not_verbs", frozenset))
    """Words the verb table lists that never head a request (politeness: "please")."""
    identity: frozenset[str] = field(metadata=_at("roles.identity", frozenset))
    """The words of a person's identity ("I am USR001" fills ``user_id``, ``username``)."""
    time_prepositions: frozenset[str] = field(metadata=_at("roles.time_prepositions", frozenset))
    """What may stand before a time and is not part of it ("at 3pm", "on Friday", "in the afternoon")."""
    identifier_markers: frozenset[str] = field(metadata=_at("values.identifier_markers", frozenset))
    """Words after which a number is an identifier's, never an amount ("invoice 2026", "ref 443")."""
    multiple: frozenset[str] = field(metadata=_at("values.multiple", frozenset))
    """Words that make one request ask for several actions ("pay each of", "every month")."""
    attribution_verbs: tuple[WordSequence, ...] = field(metadata=_at("pasted.attribution_verbs", _phrases))
    """Verbs of writing or saying in a lead-in that gives what follows to someone else ("Bob wrote:")."""
    documents: frozenset[str] = field(metadata=_at("pasted.documents", frozenset))
    """Documents a lead-in may name ("here's the email:")."""
    presenters: tuple[WordSequence, ...] = field(metadata=_at("pasted.presenters", _phrases))
    """Words that present pasted text ("here's", "forwarding")."""
    forward_markers: tuple[str, ...] = field(metadata=_at("pasted.forward_markers", tuple))
    """Lines that open a forwarded message ("forwarded message")."""
    headers: tuple[str, ...] = field(metadata=_at("pasted.headers", tuple))
    """A message's header fields ("from", "subject"): lines of them open pasted mail."""
    instructions: tuple[str, ...] = field(metadata=_at("delegation.instructions", tuple))
    """Intents that hand the choice of actions to a source ("follow the instructions in notices.txt")."""
    grant_periods: dict[str, tuple[WordSequence, ...]] = field(metadata=_at("grants", _phrase_sets))
    """How often a standing authorization may be used, by the words that granted it ("every month": ``month``;
    "whenever": ``unlimited``); none named: once."""
    families: dict[str, tuple[str, ...]] = field(metadata=_at("lexicon.families", _tuples))
    """Families of verbs a user asks for a kind of action with (base forms; ``*`` stands for the object)."""
    triggers: dict[str, frozenset[str]] = field(metadata=_at("lexicon.triggers", _sets))
    """The words of a tool's name or description that put it in a family."""
    deeds: dict[str, frozenset[str]] = field(default_factory=dict, metadata=_at("deeds", _sets))
    """Each kind of deed a reason of the grammar goes with, and the intent verbs of that kind ("removal":
    archive, delete, cancel, unsubscribe): "Archive t-12, I'm done with it." stands; "Renew it, I'm done with
    it." is unknown."""
    identity_fields: frozenset[str] = field(default=frozenset(), metadata=_at("roles.identity_fields", frozenset))
    """Words of a record's field names that say what the record is ("name", "title", "id")."""
    unread: frozenset[str] = field(default=frozenset(), metadata=_at("open.never", frozenset))
    """Operator words no rule reads yet (``[open] never``): known, never carried, never a name."""
    negatives: frozenset[str] = field(default=frozenset(), metadata=_at("roles.negatives", frozenset))
    """Words that say "not": a message in the agent's words holds none its report does not."""
    auxiliaries: frozenset[str] = field(default=frozenset(), metadata=_at("roles.auxiliaries", frozenset))
    """Auxiliary verbs, which carry no meaning of their own in a report ("I'll *be* late")."""
    ahead: frozenset[str] = field(default=frozenset(), metadata=_at("roles.ahead", frozenset))
    """Words that point at what comes next ("my next message"): in an earlier turn, a frame on what follows."""
    conditions: frozenset[str] = field(default=frozenset(), metadata=_at("roles.conditions", frozenset))
    """Verbs of checking or waiting: a request after one in its sentence waits for it."""
    user_pronouns: frozenset[str] = field(default=frozenset(), metadata=_at("roles.user_pronouns", frozenset))
    """The user's own pronouns ("me", "us"): telling them something is the assistant's own work."""
    containers: dict[str, frozenset[str]] = field(default_factory=dict, metadata=_at("containers", _sets))
    """Where the things of each kind are kept ("calendar" for an event): a phrase naming one, described, is where
    the thing goes, no argument."""
    frame_words: frozenset[str] = field(default=frozenset(), metadata=_at("frames.words", frozenset))
    """Words that make what is said a game, a test, an example, a translation or a dictation ("We are
    role-playing."): a sentence around a request holding one leaves it unknown."""
    distributive: frozenset[str] = field(default=frozenset(), metadata=_at("amounts.distributive", frozenset))
    """Words that give each payee of a list the whole amount ("each"): with none, one amount for several payees
    is for each or for all, and code cannot tell."""
    again: frozenset[str] = field(default=frozenset(), metadata=_at("amounts.again", frozenset))
    """Words of a request adding a payment to an earlier one with the same payee ("again", "another")."""
    governing: tuple[str, ...] = field(default=(), metadata=_at("framing.governing", tuple))
    """Phrases about the time after a sentence ("from now on", "until"): with a negation or a word of holding
    back, an earlier turn's sentence governs the later ones."""
    ahead_of_me: tuple[str, ...] = field(default=(), metadata=_at("framing.ahead_of_me", tuple))
    """Phrases of a take-back given ahead of the user's own later words ("even if I ask again"): a negation holding
    one governs a later request of the same action it names (lower case, whole words)."""
    ceasing: frozenset[str] = field(default=frozenset(), metadata=_at("framing.ceasing", frozenset))
    """Verbs that take an action back in a take-back given ahead ("Stop paying …, even if I ask again."), by lemma."""
    holding: frozenset[str] = field(default=frozenset(), metadata=_at("framing.holding", frozenset))
    """Words of holding back ("draft", "wait"): with a governing phrase, a frame over what follows."""
    turning: frozenset[str] = field(default=frozenset(), metadata=_at("judging.turning", frozenset))
    """Words that keep a model from deciding a dangerous call's request where the policy lets it (``intent =
    "judge"``): a condition, a hedge, a report, a refusal, whose scope code cannot see (the pack's ``[judging]``)."""
    record_qualifiers: frozenset[str] = field(default=frozenset(), metadata=_at("records.qualifiers", frozenset))
    """Words that may stand beside an identity field's word in a record's own name for it (``full_name``,
    ``company_name``; the pack's ``[records]``): a field with any other word (``manager_name``) is someone else's."""
    secret_states: frozenset[str] = field(default=frozenset(), metadata=_at("secrets.states", frozenset))
    """Words that say what a secret is, not which ("the password is wrong", "my PIN is expired"): after a secret's
    noun they declare no secret (the pack's ``[secrets]``)."""
    replies: tuple[str, ...] = field(default=(), metadata=_at("addressing.replies", tuple))
    """How a reply opens ("go ahead", "sure"): after another participant's message, it answers them."""
    question_openers: frozenset[str] = field(
        default=frozenset(), metadata=_at("addressing.question_openers", frozenset)
    )
    """Words a participant's question opens with when it has no question mark ("should i pay bob back")."""
    assistant_names: frozenset[str] = field(default=frozenset(), metadata=_at("addressing.assistant", frozenset))
    """Words that name the assistant ("Assistant, pay Bob."): a reply to another participant's question that
    names one is addressed to the assistant after all."""
    number_words: dict[str, int] = field(default_factory=dict, metadata=_at("numbers", _ints))
    """Number words and their values ("one", "twenty"): read as numbers."""
    time_roles: frozenset[str] = field(default=frozenset(), metadata=_at("roles.time_roles", frozenset))
    """Prepositions whose phrase, when it is a time, gives the action's time ("for Friday")."""
    changing: frozenset[str] = field(default=frozenset(), metadata=_at("roles.changing", frozenset))
    """Verbs that change a thing's time ("move", "push"): under them "from 2pm to 4pm" is the old time and the new,
    never a span."""
    time_ends: frozenset[str] = field(default=frozenset(), metadata=_at("roles.time_ends", frozenset))
    """Words of an argument's name saying it holds an end ("end_time"): a span's end fills only such an argument,
    its start only a time argument without them."""
    gerund_endings: tuple[str, ...] = field(default=("ing",), metadata=_at("verb_forms.gerund", tuple))
    """Endings of a verb form, other than its lemma, that make it a gerund (``VBG``: "paying")."""
    present_endings: tuple[str, ...] = field(default=("s",), metadata=_at("verb_forms.present", tuple))
    """Endings of a verb form, other than its lemma, that make it a present form (``VBZ``: "pays"), unless it ends
    in one of :attr:`not_present_endings` ("dismiss"); any other form is a participle (``VBN``: "paid")."""
    not_present_endings: tuple[str, ...] = field(default=("ss",), metadata=_at("verb_forms.not_present", tuple))
    """Endings that keep a form out of the present forms though it ends in one of them ("ss")."""
    selective_endings: tuple[str, ...] = field(default=(), metadata=_at("open.selective_endings", tuple))
    """Endings of a word no table knows that make it one choosing which thing ("smallest", "heavier"): such a word
    is never carried (open-class), so its sentence is unknown."""

    def verb_lemmas(self, word: str) -> tuple[str, ...]:
        """The verb lemmas the lower-case ``word`` is a form of in this language (:meth:`VerbTable.lemmas`)."""
        return self.verbs.lemmas(word)

    def word_classes(self) -> dict[str, frozenset[str]]:
        """Each word of the class tables and nouns, with its grammar classes (``NN``/``NNS`` for nouns)."""
        found: dict[str, set[str]] = {}
        for cls, words in self.classes.items():
            for word in words:
                found.setdefault(word, set()).add(cls)
        for noun in self.nouns:
            found.setdefault(noun, set()).add(NNS if noun in self.plurals else NN)
        for word in self.magnitudes:
            found.setdefault(word, set()).add(MAG)
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


def _table(data: dict[str, Any], path: str) -> Any:
    node: Any = data
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            return _REQUIRED
        node = node[key]
    return node


def _pack(data: dict[str, Any], grammar: str, verbs: VerbTable) -> LanguagePack:
    """Every field of :class:`LanguagePack` that names its table, read from ``data`` the same way; then the fields
    built from several tables at once."""
    read: dict[str, Any] = {}
    problems: list[FieldProblem] = []
    for f in fields(LanguagePack):
        if "at" not in f.metadata:
            continue
        node = _table(data, f.metadata["at"])
        if node is not _REQUIRED:
            try:
                read[f.name] = f.metadata["read"](node)
            except (TypeError, ValueError, AttributeError) as exc:  # a table of the wrong shape ("adjuncts = 5")
                problems.append(FieldProblem(f.metadata["at"], f"cannot be read as LanguagePack.{f.name}: {exc}"))
        elif f.default is MISSING and f.default_factory is MISSING:
            problems.append(FieldProblem(f.metadata["at"], f"the table is missing (LanguagePack.{f.name})"))
    for path in ("nouns", "plurals", "roles", "arguments"):  # ([classes] is a field's table: read above)
        if _table(data, path) is _REQUIRED:
            problems.append(FieldProblem(path, "the table is missing"))
    for path in ("pasted.attribution_verbs", "pasted.presenters", "pasted.documents"):
        held = _table(data, path)
        stopped = [p for p in (held if isinstance(held, list) else ()) if LEAD_IN_STOPS.search(str(p))]
        problems += [FieldProblem(path, f"{p!r} holds '.', '!', '?' or ':'") for p in stopped[:1]]
    wrong = sorted(set(_table(data, "grants") if isinstance(data.get("grants"), dict) else ()) - set(GRANT_PERIODS))
    problems += [FieldProblem(f"grants.{k}", f"not a period: one of {', '.join(GRANT_PERIODS)}") for k in wrong]
    if problems:
        raise PackError(problems)
    try:
        return _built(data, grammar, verbs, read)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a table of the wrong shape
        where = "nouns, plurals, roles, arguments, classes"
        raise PackError([FieldProblem(where, f"cannot be read: {type(exc).__name__}: {exc}")]) from None


def _built(data: dict[str, Any], grammar: str, verbs: VerbTable, read: dict[str, Any]) -> LanguagePack:
    """The pack, with the fields built from several tables at once beside those ``read`` holds."""
    nouns, lemmas, plurals = _nouns(data["nouns"], data["plurals"])
    roles = data["roles"]
    arguments = tuple(
        ArgumentKind(
            name, frozenset(a["words"]), frozenset(a["roles"]), frozenset(a["kinds"]), frozenset(a.get("headed", ()))
        )
        for name, a in data["arguments"].items()
    )
    return LanguagePack(
        grammar=grammar,
        verbs=verbs,
        nouns=nouns,
        noun_lemmas=lemmas,
        plurals=plurals,
        arguments=arguments,
        closing=frozenset(roles.get("closing", ())) | frozenset(data["classes"].get(EMOJI, ())),
        grammatical_persons=tuple(frozenset(roles.get(f"{n}_person", ())) for n in ("first", "second", "third")),
        mentioned=_words_of({k: v for k, v in data.items() if k not in OUTSIDE_THE_GRAMMAR}),
        **read,
    )


OUTSIDE_THE_GRAMMAR = ("addressing", "framing", "amounts", "judging", "secrets", "records")
"""Tables of the pack's file read by code outside the grammar (whom a reply addresses): their words are no
vocabulary, so they never change how a sentence parses."""


def _words_of(node: Any) -> frozenset[str]:
    """Every word of every string (and key) in a table of the pack's file, folded as the lexer folds them: the words
    :func:`phrase` makes of each, read from all of them at once (a pack's file holds thousands: each process reads
    them)."""
    texts: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            texts += map(str, item)
            stack += item.values()
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str):
            texts.append(item)
    # one line a text: a line break is no letter, so each text is lower-cased and split as it is alone
    return frozenset(phrase("\n".join(texts)))


def load_pack(text: str, grammar: str | None = None, verbs: str | None = None) -> LanguagePack:
    """A language pack from the text of a TOML file of ``english.toml``'s shape, a grammar and a verb table (the
    English grammar and verb table when none is given; the table's shape: :class:`VerbTable`).

    Raises:
        PackError: the text is no TOML, or a table the pack needs is missing or of the wrong shape (each named).
    """
    return _loaded(text, None, grammar, verbs)


def _loaded(text: str, data: dict[str, Any] | None, grammar: str | None, verbs: str | None) -> LanguagePack:
    """:func:`load_pack`, the TOML ``text`` already read into ``data`` (None: read here)."""
    if grammar is None:
        grammar = shipped_text("english.lark")
    if data is None:
        import tomllib  # (only where the shipped JSON of the tables is not of this text: a process pays for it then)

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PackError([FieldProblem("", f"not TOML: {exc}")]) from None
    table = _ENGLISH_VERBS if verbs is None else VerbTable(lambda: verbs)
    digest = hashlib.sha256("\x00".join((text, grammar, "english_verbs.txt" if verbs is None else verbs)).encode())
    return replace(_pack(data, grammar, table), digest=digest.hexdigest())


READ_AHEAD = "english_toml.json"
"""``english.toml`` as :mod:`tomllib` reads it, shipped beside it as JSON (``make grammar``): the English pack's
tables are read from it in about a millisecond where the TOML takes ten. Its first line names the SHA-256 of the
TOML text it was read from and of the lines after it: a file of another text, cut short or edited is not read (the
TOML is). A test holds the shipped file to a fresh read of the shipped TOML."""
_READ_AHEAD_FORMAT = 1


def read_ahead(text: str) -> str:
    """What :data:`READ_AHEAD` holds for the TOML ``text``: its head on the first line, then the tables, as JSON."""
    import tomllib

    body = json.dumps(tomllib.loads(text), ensure_ascii=False, separators=(",", ":")) + "\n"
    head = {"format": _READ_AHEAD_FORMAT, "toml": _sha256(text), "body": _sha256(body)}
    return json.dumps(head) + "\n" + body


def _read_ahead(text: str, shipped: str | None = None) -> dict[str, Any] | None:
    """The tables of the TOML ``text`` as ``shipped`` holds them (by default :data:`READ_AHEAD`), or None when it
    is of another text or format, cut short, edited or unreadable."""
    try:
        if shipped is None:
            shipped = shipped_text(READ_AHEAD)
        first, _, body = shipped.partition("\n")
        head = json.loads(first)
        if head != {"format": _READ_AHEAD_FORMAT, "toml": _sha256(text), "body": _sha256(body)}:
            return None
        data = json.loads(body)
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@cache
def english() -> LanguagePack:
    """The English pack shipped with the library (read once: its tables from :data:`READ_AHEAD` where it is of the
    shipped TOML)."""
    text = shipped_text("english.toml")
    return _loaded(text, _read_ahead(text), None, None)


def english_verb_lemmas(word: str) -> tuple[str, ...]:
    """The English verb lemmas the lower-case ``word`` is a form of (``paid`` -> ``("pay",)``; the shipped table,
    :meth:`VerbTable.lemmas`): for a policy's and a tool's own words, which are English whatever the user's pack."""
    return _ENGLISH_VERBS.lemmas(word)
