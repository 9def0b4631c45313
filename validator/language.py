"""The language pack: every word list of the gate, read from data (``english.toml`` beside this module).

The request reader, the sentence splitter, the pasted-text finder, the retraction scan and the verb
lexicon all read the one :class:`LanguagePack`; none of them holds a word of English. A phrase is a
tuple of tokens (words lower-cased with apostrophes folded, and punctuation such as ``,``); ``*`` in a
frame stands for one to six words.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = [
    "APOSTROPHES",
    "LanguagePack",
    "Phrase",
    "english",
    "english_verb_lemmas",
    "fold_apostrophes",
    "load_pack",
    "phrase",
]

APOSTROPHES = "\u2019\u2018\u02bc\u02b9\u02bb\u02bd\uff07\u00b4\u0060\u2032"
"""Characters used as an apostrophe (U+2019, U+02BC, ...): all read as ``'``."""
_APOS = str.maketrans({c: "'" for c in APOSTROPHES})

Phrase = tuple[str, ...]


def fold_apostrophes(text: str) -> str:
    """``text`` with every apostrophe look-alike read as ``'``."""
    return text.translate(_APOS)


def phrase(text: str) -> Phrase:
    """A phrase of the pack as tokens: ``"when you can ,"`` -> ``("when", "you", "can", ",")``."""
    return tuple(fold_apostrophes(text.lower()).replace(",", " , ").split())


def _phrases(items: list[str]) -> tuple[Phrase, ...]:
    # longest first, so a frame that extends another ("can you please" over "can you") is tried first
    return tuple(sorted({phrase(i) for i in items}, key=len, reverse=True))


@dataclass(frozen=True, slots=True)
class LanguagePack:
    """The word lists of one language; see ``english.toml`` for what each holds."""

    abbreviations: frozenset[str]
    number_abbreviations: frozenset[str]
    fillers: tuple[Phrase, ...]
    greetings: tuple[Phrase, ...]
    requests: tuple[Phrase, ...]
    questions: tuple[Phrase, ...]
    gerund_frames: tuple[Phrase, ...]
    wishes: tuple[Phrase, ...]
    results: tuple[Phrase, ...]
    result_links: frozenset[str]
    result_adverbs: frozenset[str]
    clause_words: frozenset[str]
    participle_followers: frozenset[str]
    continuations: tuple[Phrase, ...]
    light_verbs: tuple[Phrase, ...]
    determiners: frozenset[str]
    noun_followers: frozenset[str]
    means: frozenset[str]
    soft: frozenset[str]
    adjuncts: tuple[Phrase, ...]
    list_leads: tuple[Phrase, ...]
    negators: tuple[Phrase, ...]
    negator_suffixes: tuple[str, ...]
    negation_openers: frozenset[str]
    negation_idioms: tuple[Phrase, ...]
    comparatives: frozenset[str]
    statement_auxiliaries: frozenset[str]
    not_negating_after_no: frozenset[str]
    conditions: tuple[Phrase, ...]
    contrasts: tuple[Phrase, ...]
    hypotheticals: tuple[Phrase, ...]
    reported: tuple[Phrase, ...]
    retractions: tuple[Phrase, ...]
    retraction_sentences: tuple[Phrase, ...]
    question_marks: str
    multiple: frozenset[str]
    asking_verbs: tuple[Phrase, ...]
    scope_ends: frozenset[str]
    coordinators: tuple[Phrase, ...]
    attribution_verbs: tuple[Phrase, ...]
    documents: frozenset[str]
    presenters: tuple[Phrase, ...]
    forward_markers: tuple[str, ...]
    headers: tuple[str, ...]
    identifier_markers: frozenset[str]
    grant_periods: dict[str, tuple[Phrase, ...]]
    instructions: tuple[str, ...]
    clause_boundaries: frozenset[str]
    declarers: frozenset[str]
    naming_words: frozenset[str]
    pronouns: frozenset[str]
    declaration_links: frozenset[str]
    clause_subjects: frozenset[str]
    clause_verbs: frozenset[str]
    families: dict[str, tuple[str, ...]]
    triggers: dict[str, frozenset[str]]

    def negations(self, texts: tuple[str, ...] | list[str]) -> list[int]:
        """Indices in ``texts`` where a negator stands (a listed phrase, or a word with a negating ending),
        less "no" before a word it does not negate ("No worries")."""
        found = {i for i, t in enumerate(texts) if t.endswith(self.negator_suffixes) and t[:1].isalpha()}
        for p in self.negators:
            n = len(p)
            found.update(i for i in range(len(texts) - n + 1) if tuple(texts[i : i + n]) == p)
        idioms = {i for p in self.negation_idioms for i in range(len(texts)) if tuple(texts[i : i + len(p)]) == p}
        return sorted(
            i
            for i in found - idioms
            if not (texts[i] == "no" and i + 1 < len(texts) and texts[i + 1] in self.not_negating_after_no)
        )

    def reports(self, texts: Sequence[str], k: int, i: int | None = None) -> bool:
        """Whether the negation at ``k`` (governing the word at ``i``) reports what happened rather than
        forbids it: a statement auxiliary is the negator, stands just before it, or between it and ``i``."""
        aux = self.statement_auxiliaries
        stop = k + 2 if i is None else i
        return texts[k] in aux or (k > 0 and texts[k - 1] in aux) or any(t in aux for t in texts[k + 1 : stop])

    def risk_classes(self) -> dict[str, tuple[Phrase, ...]]:
        """Each risk class by name, in the order the reader reports them (the first found names the problem)."""
        return {
            "negated": self.negators,
            "conditional": self.conditions,
            "question": (),
            "hypothetical": self.hypotheticals,
            "contrast": self.contrasts,
            "reported": self.reported,
            "retracted": self.retractions,
        }


def _pack(data: dict[str, Any]) -> LanguagePack:
    s, f, r, p, lex = data["sentences"], data["frames"], data["risk"], data["pasted"], data["lexicon"]
    return LanguagePack(
        abbreviations=frozenset(a.lower() for a in s["abbreviations"]),
        number_abbreviations=frozenset(a.lower() for a in s["number_abbreviations"]),
        fillers=_phrases(f["fillers"]),
        greetings=_phrases(f["greetings"]),
        requests=_phrases(f["requests"]),
        questions=_phrases(f["questions"]),
        gerund_frames=_phrases(f["gerund_frames"]),
        wishes=_phrases(f["wishes"]),
        results=_phrases(f["results"]),
        result_links=frozenset(f["result_links"]),
        result_adverbs=frozenset(f["result_adverbs"]),
        clause_words=frozenset(f["clause_words"]),
        participle_followers=frozenset(f["participle_followers"]),
        continuations=_phrases(f["continuations"]),
        light_verbs=_phrases(f["light_verbs"]),
        determiners=frozenset(f["determiners"]),
        noun_followers=frozenset(f["noun_followers"]),
        means=frozenset(f["means"]),
        soft=frozenset(f["soft"]),
        adjuncts=_phrases(f["adjuncts"]),
        list_leads=_phrases(f["list_leads"]),
        negators=_phrases(r["negators"]),
        negator_suffixes=tuple(r["negator_suffixes"]),
        negation_openers=frozenset(r["negation_openers"]),
        negation_idioms=_phrases(r["negation_idioms"]),
        comparatives=frozenset(r["comparatives"]),
        statement_auxiliaries=frozenset(r["statement_auxiliaries"]),
        not_negating_after_no=frozenset(r["not_negating_after_no"]),
        conditions=_phrases(r["conditions"]),
        contrasts=_phrases(r["contrasts"]),
        hypotheticals=_phrases(r["hypotheticals"]),
        reported=_phrases(r["reported"]),
        retractions=_phrases(r["retractions"]),
        retraction_sentences=_phrases(r["retraction_sentences"]),
        question_marks="".join(r["question_marks"]),
        multiple=frozenset(r["multiple"]),
        asking_verbs=_phrases(r["asking_verbs"]),
        scope_ends=frozenset(r["scope_ends"]),
        coordinators=_phrases(r["coordinators"]),
        attribution_verbs=_phrases(p["attribution_verbs"]),
        documents=frozenset(p["documents"]),
        presenters=_phrases(p["presenters"]),
        forward_markers=tuple(p["forward_markers"]),
        headers=tuple(p["headers"]),
        identifier_markers=frozenset(data["values"]["identifier_markers"]),
        grant_periods={k: _phrases(v) for k, v in data["grants"].items()},
        instructions=tuple(data["delegation"]["instructions"]),
        clause_boundaries=frozenset(data["values"]["clause_boundaries"]),
        declarers=frozenset(data["values"]["declarers"]),
        naming_words=frozenset(data["values"]["naming_words"]),
        pronouns=frozenset(data["values"]["pronouns"]),
        declaration_links=frozenset(data["values"]["declaration_links"]),
        clause_subjects=frozenset(data["values"]["clause_subjects"]),
        clause_verbs=frozenset(data["values"]["clause_verbs"]),
        families={k: tuple(v) for k, v in lex["families"].items()},
        triggers={k: frozenset(v) for k, v in lex["triggers"].items()},
    )


def load_pack(text: str) -> LanguagePack:
    """A language pack from the text of a TOML file of ``english.toml``'s shape."""
    return _pack(tomllib.loads(text))


@cache
def english() -> LanguagePack:
    """The English pack shipped with the library (read once)."""
    return load_pack(resources.files("validator").joinpath("english.toml").read_text(encoding="utf-8"))


@cache
def _english_verbs() -> dict[str, str]:
    """The shipped verb table (``english_verbs.txt``, built by :mod:`validator.devtools.verbs`): each form
    and the rest of its line (empty: the form is its own only lemma). Read once, in a few milliseconds."""
    text = resources.files("validator").joinpath("english_verbs.txt").read_text(encoding="utf-8")
    return dict(line.partition(" ")[::2] for line in text.splitlines() if line and not line.startswith("#"))


def english_verb_lemmas(word: str) -> tuple[str, ...]:
    """The verb lemmas the lower-case ``word`` is a form of (``paid`` -> ``("pay",)``); empty when the table
    does not know it as a verb form. A word outside the table is not guessed at."""
    rest = _english_verbs().get(word)
    if rest is None:
        return ()
    return tuple(rest.split(" ")) if rest else (word,)
