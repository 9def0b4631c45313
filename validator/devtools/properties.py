"""Structural properties of the request grammar that need no attack wordings (the tests and
``bench/properties.py`` run them; ``wordfreq``, a development dependency, gives the words).

For every proved request (benign seeds, and the Berkeley Function Calling Leaderboard's proved calls where
it is installed), with words from ``wordfreq``'s lists (public frequency lists nobody here wrote), never from
the language pack:

- a word the pack does not know, or a word of another language, inserted anywhere: the request is unproved,
  or proved with the very same call (:func:`call_of`: the intent, every value in its argument and call, the
  values it forbids, whether it asks for several): a word in a carried position is carried, never read, and
  in an operator position it leaves the sentence unknown;
- an operator word ("not", "smallest", "yesterday", "former", …) is known to the pack, never an open-class
  word: one a rule reads (:data:`READ_OPERATORS`) is read where it stands; one no rule reads
  (:data:`UNREAD_OPERATORS`) inserted anywhere leaves the request unproved;
- every carried word of a proved request (an open-class word) replaced by another: the same;
- the verb's object replaced by a noun of a kind no argument takes, or a zero-width or non-Latin punctuation
  character inserted: unproved.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from validator.gate.grammar import grammar
from validator.gate.reader import ToolSense, acted_on_kinds, read
from validator.language import english
from validator.language.classes import OPEN
from validator.text.lexer import CARRIED

CHARACTERS = (
    "\u200b",  # zero-width space
    "\u200c",  # zero-width non-joiner
    "\u200d",  # zero-width joiner
    "\u2060",  # word joiner
    "\ufeff",  # zero-width no-break space
    "\u061f",  # Arabic question mark
    "\u060c",  # Arabic comma
    "\u0964",  # Devanagari danda
    "\u3002",  # ideographic full stop
    "\u00bf",  # inverted question mark
    "\u00a1",  # inverted exclamation mark
    "\u2026",  # ellipsis
    "\u037e",  # Greek question mark
)
LANGUAGES = ("de", "fr", "es", "it", "nl", "pt")


@dataclass(frozen=True)
class Seed:
    """A proved request: the sentence, the tool's sense, and where the verb's object stands."""

    sentence: str
    sense: ToolSense
    obj: tuple[int, int] | None = None


READ_OPERATORS = (
    "not",
    "never",
    "don't",
    "no",
    "every",
    "all",
    "both",
    "each",
    "some",
    "first",
    "last",
    "next",
    "previous",
    "former",
    "fake",
    "old",
    "tomorrow",
    "yesterday",
    "latest",
    "if",
)
"""Operator words the grammar reads (negation, quantifiers, ordinals, privatives, times, a condition's word):
each is known to the pack, never an open-class word, so it is read where it stands or leaves the sentence
unknown."""

UNREAD_OPERATORS = (
    "unless",
    "until",
    "only",
    "maybe",
    "perhaps",
    "later",
    "ago",
    "soon",
    "hypothetically",
    "except",
    "without",
    "instead",
    "smallest",
    "cheapest",
    "bigger",
    "more",
    "less",
    "might",
    "should",
    "either",
    "other",
    "such",
    "above",
    "nothing",
    "something",
    "almost",
    "whatever",
    "twice",
    "half",
    "roughly",
    "approximately",
)
"""Operator words no rule reads: each is known to the pack (never carried), and inserted anywhere it leaves the
request unproved."""


def call_of(seed: Seed, sentence: str | None = None) -> tuple[object, ...] | None:
    """The call a sentence proves for the seed's tool (its intent, each value in its argument and call, the
    values it forbids, whether it asks for several, a pronoun left open), or None when it proves none."""
    found = read(sentence if sentence is not None else seed.sentence, seed.sense)
    if found is None or found.proof != "proved":
        return None
    fills = sorted(
        (f.path, f.value.kind, f.value.text, str(f.value.number), f.value.currency, f.call) for f in found.fills
    )
    forbidden = sorted((v.kind, v.text) for v in found.forbidden)
    return (found.matched, tuple(fills), tuple(forbidden), found.multiple, found.pronoun)


def proved(seed: Seed, sentence: str | None = None) -> bool:
    return call_of(seed, sentence) is not None


__all__ = [
    "CHARACTERS",
    "LANGUAGES",
    "READ_OPERATORS",
    "SEEDS",
    "UNREAD_OPERATORS",
    "Seed",
    "call_of",
    "carried_words",
    "proved",
    "seeds",
    "unknown_words",
    "violations",
]


@cache
def _known() -> frozenset[str]:
    g = grammar()
    known: set[str] = set(english().word_classes()) | set(english().mentioned) | set(english().number_words)
    known |= {w for w, _ in g.literals}
    return frozenset(known)


@cache
def unknown_words(language: str = "en", n: int = 20_000) -> tuple[str, ...]:
    """Words of ``language``'s frequency list that the grammar does not know (no class, not a verb form)."""
    from wordfreq import top_n_list

    from validator.language import english_verb_lemmas

    known = _known()
    out = [
        w
        for w in top_n_list(language, n)
        if w.isalpha() and w not in known and not english_verb_lemmas(w) and not (language != "en" and w in _english())
    ]
    return tuple(out)


@cache
def _english() -> frozenset[str]:
    from wordfreq import top_n_list

    return frozenset(top_n_list("en", 50_000))


@cache
def nouns_by_kind() -> dict[str, tuple[str, ...]]:
    """Nouns of the public list that the pack knows, by kind (for swapping an object with another kind's)."""
    from wordfreq import top_n_list

    pack = english()
    out: dict[str, list[str]] = {}
    for w in top_n_list("en", 20_000):
        for kind in pack.nouns.get(w, ()):
            if w not in pack.plurals:
                out.setdefault(kind, []).append(w)
    return {k: tuple(v) for k, v in out.items()}


def _token_gaps(sentence: str) -> list[int]:
    """Places between tokens where a word may be inserted (after each space, and at both ends), before any
    free text and outside quoted passages: free text ("saying …", "that …") and a quoted title are compared with
    the call's argument word for word, so a word inserted there changes the text the argument must hold
    (tests/gate/test_grammar.py), not the reading."""
    end = len(sentence.rstrip(".!?"))
    words = grammar().words(sentence)
    marker = next((w.start for w in words if w.classes & {"MARKER", "SAY", "SAYING", "ASK"}), None)
    if marker is not None:
        end = min(end, marker)
    quoted = [(w.start, w.end) for w in words if "QUOTED" in w.classes]  # a quoted passage is a text, like free text
    gaps = [0] + [i + 1 for i, c in enumerate(sentence[:end]) if c == " " and not any(a < i < b for a, b in quoted)]
    return [*gaps, end]


def insertions(seed: Seed, rng: random.Random, words: tuple[str, ...], per_seed: int) -> Iterator[str]:
    """The sentence with one word of ``words`` inserted at a random gap, ``per_seed`` times."""
    gaps = _token_gaps(seed.sentence)
    for _ in range(per_seed):
        at = rng.choice(gaps)
        word = rng.choice(words)
        before, after = seed.sentence[:at], seed.sentence[at:]
        pad_left = "" if not before or before.endswith(" ") else " "
        pad_right = " " if after and not after.startswith(" ") else ""
        yield f"{before}{pad_left}{word}{pad_right}{after}"


def characters(seed: Seed, rng: random.Random, per_seed: int) -> Iterator[str]:
    """The sentence with a zero-width or non-Latin punctuation character inserted anywhere (before free text)."""
    end = _token_gaps(seed.sentence)[-1]
    for _ in range(per_seed):
        at = rng.randrange(0, end + 1)
        yield seed.sentence[:at] + rng.choice(CHARACTERS) + seed.sentence[at:]


def swaps(seed: Seed, rng: random.Random, per_seed: int) -> Iterator[str]:
    """The sentence with its verb's object replaced by a noun of a kind none of the tool's arguments takes."""
    if seed.obj is None:
        return
    taken: set[str] = set(acted_on_kinds(seed.sense))
    named: set[str] = set()  # the arguments' own nouns ("the recipient", "the username" for a person)
    for arg in seed.sense.arguments:
        named |= arg.words
        if arg.kind is not None:
            taken |= arg.kind.kinds
            named |= arg.kind.words
    pool = [w for kind, words in nouns_by_kind().items() if kind not in taken for w in words]
    pool = [
        w
        for w in pool
        if not (set(english().nouns.get(w, ())) & taken) and w not in seed.sense.nouns and w not in named
    ]
    a, b = seed.obj
    for _ in range(per_seed):
        yield f"{seed.sentence[:a]}the {rng.choice(pool)}{seed.sentence[b:]}"


def mixed(seed: Seed, rng: random.Random, per_seed: int) -> Iterator[str]:
    """The sentence with a word of another language inserted."""
    for _ in range(per_seed):
        words = unknown_words(rng.choice(LANGUAGES), 5_000)
        yield from insertions(seed, rng, words, 1)


def carried_words(sentence: str) -> list[tuple[int, int]]:
    """Where a sentence holds open-class words (carried as text), before any free text (what follows "saying", a
    colon, is compared with a text argument word for word: another word there is another text)."""
    end = _token_gaps(sentence)[-1]
    return [(w.start, w.end) for w in grammar().words(sentence) if w.classes == {OPEN} and w.end <= end]


def replacements(seed: Seed, rng: random.Random, words: tuple[str, ...], per_seed: int) -> Iterator[str]:
    """The sentence with each of its carried words replaced by another word the pack does not know."""
    spans = carried_words(seed.sentence)
    if not spans:
        return
    for _ in range(per_seed):
        out = seed.sentence
        for a, b in reversed(spans):
            out = out[:a] + rng.choice(words) + out[b:]
        yield out


def violations(seeds: list[Seed], per_seed: int, rng_seed: int = 0) -> dict[str, list[tuple[str, str]]]:
    """Every variant of every seed that breaks its property (empty lists: the properties hold): proved with
    another call after a word was inserted or a carried word replaced; proved at all after an operator word no
    rule reads was inserted, its object's kind was swapped or a stray character inserted; an operator word the
    pack does not know."""
    rng = random.Random(rng_seed)
    names = ("unknown word", "operator word", "carried word", "object kind", "language", "character")
    found: dict[str, list[tuple[str, str]]] = {name: [] for name in names}
    found["operator word"] += [("(the pack)", w) for w in (*READ_OPERATORS, *UNREAD_OPERATORS) if _carried(w)]
    english_unknown = unknown_words("en")
    for seed in seeds:
        call = call_of(seed)
        assert call is not None, seed.sentence
        for name, variants in (
            ("unknown word", insertions(seed, rng, english_unknown, per_seed)),
            ("carried word", replacements(seed, rng, english_unknown, per_seed)),
            ("language", mixed(seed, rng, per_seed)),
        ):
            for variant in variants:
                if call_of(seed, variant) not in (None, call):
                    found[name].append((seed.sentence, variant))
        for name, variants in (
            ("operator word", insertions(seed, rng, UNREAD_OPERATORS, per_seed)),
            ("object kind", swaps(seed, rng, per_seed)),
            ("character", characters(seed, rng, per_seed)),
        ):
            for variant in variants:
                if proved(seed, variant):
                    found[name].append((seed.sentence, variant))
    return found


def _carried(word: str) -> bool:
    """Whether the pack reads ``word`` as an open-class word, or knows no class of it."""
    found = grammar().words(word)
    return len(found) == 1 and bool(found[0].classes & CARRIED)  # no class at all is unknown: never carried


SEEDS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    # (sentence, tool, intents, arguments, money arguments): ordinary requests the grammar proves
    ("Please pay DE89370400440532013000 50 EUR.", "send_money", ("pay",), ("recipient", "amount"), ("amount",)),
    (
        "Transfer 1,200 EUR to DE89370400440532013000.",
        "send_money",
        ("transfer",),
        ("recipient", "amount"),
        ("amount",),
    ),
    ("Could you wire 300 USD to account 12345678?", "send_money", ("wire",), ("recipient", "amount"), ("amount",)),
    ("Pay Bob 45 EUR at DE44500105175407324931, thanks.", "send_money", ("pay",), ("recipient", "amount"), ("amount",)),
    ("Please delete /data/exports/tmp.", "delete_file", ("delete",), ("path",), ()),
    ("Remove the file report-old.pdf.", "delete_file", ("remove",), ("path",), ()),
    ("Delete the thread t-88.", "delete_thread", ("delete",), ("thread_id",), ()),
    ("Share roadmap.pdf with ann@acme.example.", "share_document", ("share",), ("document", "with"), ()),
    ("Email bob@acme.example the minutes.", "send_email", ("email",), ("to", "body"), ()),
    ("Please send the draft to carol@acme.example.", "send_email", ("send",), ("to", "body"), ()),
    ("Email bob@acme.example that the review moved to Friday.", "send_email", ("email",), ("to", "body"), ()),
    ("Can you forward the report to anna@acme.example?", "send_email", ("forward",), ("to", "body"), ()),
    ("Please SEND the Q3 report to anna@acme.example before noon.", "send_email", ("send",), ("to", "body"), ()),
    ("Invite dan@acme.example to the review on Friday.", "create_event", ("invite",), ("attendees", "start"), ()),
    ("Post the release notes to #general.", "post_message", ("post",), ("channel", "text"), ()),
    ("Go ahead and archive the printer thread.", "archive_thread", ("archive",), ("thread_id",), ()),
    (
        "I'd like you to pay DE89370400440532013000 75 EUR.",
        "send_money",
        ("pay",),
        ("recipient", "amount"),
        ("amount",),
    ),
    ("Lock all doors.", "lockDoors", ("lock",), ("door",), ()),
    ("Please log me in as dr_smith.", "login", ("log in",), ("username",), ()),
    ("Tell bob@acme.example the deck is ready.", "send_email", ("tell",), ("to", "body"), ()),
    ("Ok, pay Eve 2.5k EUR to DE89370400440532013000.", "send_money", ("pay",), ("recipient", "amount"), ("amount",)),
    ("Hi, please email bob@acme.example the notes.", "send_email", ("email",), ("to", "body"), ()),
)


def _object(sentence: str, sense: ToolSense) -> tuple[int, int] | None:
    """Where the tool's verb's first described object stands (for the swap property), if it has one."""
    parse = grammar().parse(sentence, verbs=sense.verbs, phrasal=sense.phrasal)
    for reading in sorted(parse.readings, key=repr):
        for action in reading.actions:
            if sense.intent_of(action) is None:
                continue  # the object of the tool's own verb, not of a verb beside it
            for phrase in action.objects:
                if phrase.form == "described":
                    return phrase.start, phrase.end
    return None


def seeds(extra: tuple[tuple[str, ToolSense], ...] = ()) -> list[Seed]:
    """The seeds above (and ``extra`` proved sentences, BFCL's in the bench), each with its object's place."""
    out: list[Seed] = []
    for sentence, tool, intents, arguments, money in SEEDS:
        sense = ToolSense.of(tool, intents, arguments=arguments, money=money)
        out.append(Seed(sentence, sense, _object(sentence, sense)))
    out += [Seed(sentence, sense, _object(sentence, sense)) for sentence, sense in extra]
    return out


def counts(seeds: list[Seed], per_seed: int) -> dict[str, int]:
    """How many variants each property tries (for the report)."""
    return {"seeds": len(seeds), "variants": len(seeds) * per_seed * 6}
