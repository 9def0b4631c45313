"""Do the user's cited words name this action?

An intent is a word or phrase a user would use to ask for an action (``pay``, ``send money``,
``archive``). It matches a quote when its words stand there in order, each allowing common English
endings (``pay`` matches ``payment``, ``archive`` matches ``archiving``, ``transfer`` matches
``transferred``). Verbs work best: a noun such as "profile" appears in requests to read a thing as
often as in requests to change it.

A match right after a negation in the same clause ("don't pay the invoice", "never delete")
does not count: quoting ``pay the invoice`` out of "Don't pay the invoice" stands verbatim in the
user's message, and still is not a request to pay.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from validator.gate.text import find_bounded, normalize

__all__ = ["IntentMatch", "find_intent", "negated_before"]

_SUFFIXES = frozenset({"", "s", "es", "ed", "d", "e", "ing", "ment", "ments", "ion", "ions", "ation", "ations", "al"})
_WORD = re.compile(r"\w+(?:\"\w+)?")
_SENTENCE_END = re.compile(r"[.!?;\n]")
_NEGATIONS = frozenset(
    normalize(w)
    for w in (
        "not",
        "don't",
        "dont",
        "never",
        "stop",
        "cancel",
        "without",
        "avoid",
        "shouldn't",
        "won't",
        "can't",
        "cannot",
        "mustn't",
        "didn't",
        "doesn't",
        "neither",
        "nor",
        "instead",
        "rather",
        "hold off",
        "refrain",
    )
    for w in w.split()
)
_CLOSE_NEGATIONS = frozenset({"no", "none"})
"""Negations that count only right before the action ("make no payments"): "no" also opens "No worries, ..."."""
NEGATION_WINDOW = 12
"""How many words of the same sentence before a match are searched for a negation."""
CLOSE_WINDOW = 2


def _word_matches(token: str, word: str) -> bool:
    if token == word:
        return True
    stem = word[:-1] if word.endswith("e") else word
    if token.startswith(stem) and token[len(stem) :] in _SUFFIXES:
        return True
    doubled = word + word[-1]
    return token.startswith(doubled) and token[len(doubled) :] in ("ing", "ed")


def words(text: str) -> list[str]:
    """The normalised words of ``text``."""
    return _WORD.findall(normalize(text))


def negated_before(preceding: str) -> bool:
    """Whether the sentence ending ``preceding`` negates what follows.

    Any negation among its last :data:`NEGATION_WINDOW` words counts, commas and all ("do not, under
    any circumstances, pay"); "no" counts only within :data:`CLOSE_WINDOW` words. Erring this way
    is safe: a request read as negated is asked about, never run.
    """
    sentence = _SENTENCE_END.split(normalize(preceding))[-1]
    tokens = _WORD.findall(sentence)
    if any(w in _NEGATIONS for w in tokens[-NEGATION_WINDOW:]):
        return True
    return any(w in _CLOSE_NEGATIONS for w in tokens[-CLOSE_WINDOW:])


@dataclass(frozen=True, slots=True)
class IntentMatch:
    intent: str
    quote_index: int
    negated: bool


def _phrase_at(tokens: Sequence[str], phrase: Sequence[str]) -> Iterable[int]:
    for i in range(len(tokens) - len(phrase) + 1):
        if all(_word_matches(tokens[i + k], w) for k, w in enumerate(phrase)):
            yield i


def find_intent(intents: Sequence[str], quotes: Sequence[tuple[int, str, str]]) -> IntentMatch | None:
    """The first intent named by a quote, preferring a match that is not negated.

    ``quotes`` holds ``(evidence index, quote, the user message it stands in)``; the message gives
    the words before the quote, where a negation may hide.
    """
    negated: IntentMatch | None = None
    for index, quote, message in quotes:
        norm_quote, norm_message = normalize(quote), normalize(message)
        found = [(m.group(), m.start()) for m in _WORD.finditer(norm_quote)]
        tokens = [t for t, _ in found]
        start = find_bounded(norm_message, norm_quote)
        before_quote = norm_message[:start] if start > 0 else ""
        for intent in intents:
            phrase = words(intent)
            if not phrase:
                continue
            for i in _phrase_at(tokens, phrase):
                match = IntentMatch(intent, index, negated_before(before_quote + " " + norm_quote[: found[i][1]]))
                if not match.negated:
                    return match
                negated = negated or match
    return negated
