"""Structural properties of the request grammar, with words nobody here wrote (validator.devtools.properties).

For every proved request of the seeds below: inserting a word the grammar does not know anywhere, replacing
the verb's object by a noun of another kind, mixing in a word of another language, or inserting a zero-width
or non-Latin punctuation character, each leaves it unproved. A seeded sample here; ``bench/properties.py``
runs every seed, BFCL's proved requests among them, in full.
"""

from __future__ import annotations

import pytest

from validator.devtools.properties import Seed, proved, seeds, violations


@pytest.fixture(scope="module")
def the_seeds() -> list[Seed]:
    return seeds()


def test_every_seed_is_a_proved_request(the_seeds: list[Seed]) -> None:
    assert len(the_seeds) >= 20
    assert all(proved(s) for s in the_seeds), [s.sentence for s in the_seeds if not proved(s)]


def test_no_insertion_swap_mixture_or_character_leaves_a_request_proved(the_seeds: list[Seed]) -> None:
    found = violations(the_seeds, per_seed=6, rng_seed=40)
    assert all(not v for v in found.values()), {k: v[:3] for k, v in found.items() if v}


def test_the_words_are_the_public_lists_not_the_pack() -> None:
    from validator.devtools.properties import unknown_words
    from validator.language import english

    words = unknown_words("en")
    known = english().word_classes()
    assert len(words) > 5_000 and not any(w in known for w in words[:2_000])


def test_corpus_lines_around_a_request_never_prove_what_they_should_not(the_seeds: list[Seed]) -> None:
    """A sample of the whole-context properties (bench/properties.py --context runs them all): lines of a public
    corpus the grammar cannot read, or that say no, after a request leave it unproved; unread lines before it do
    too; a greeting of its own before it leaves it proved."""
    from validator.devtools.context_properties import violations as context_violations

    found = context_violations(the_seeds[::5], languages=("english", "german", "russian"), limit=60)
    assert {name: cases for name, cases in found.violations.items() if cases} == {}
    assert found.tried["unread after"] > 500 and found.tried["withdrawal after"] > 20
