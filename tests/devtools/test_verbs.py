"""The shipped verb table is what lemminflect's dictionary says, and the reader no longer needs lemminflect."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources

import pytest

from validator.devtools.verbs import lines
from validator.language import english_verb_lemmas

pytest.importorskip("lemminflect")


def test_the_shipped_table_is_what_the_builder_prints_from_the_installed_lemminflect() -> None:
    shipped = resources.files("validator.language").joinpath("english_verbs.txt").read_text(encoding="utf-8")
    assert shipped == "".join(f"{line}\n" for line in lines()), "run `make verbs` after upgrading lemminflect"


@pytest.mark.parametrize(
    ("word", "expected"),
    [("paid", ("pay",)), ("pay", ("pay",)), ("sent", ("send",)), ("emailing", ("email",)), ("invoice", ("invoice",))],
)
def test_a_form_reads_as_its_lemmas(word: str, expected: tuple[str, ...]) -> None:
    assert english_verb_lemmas(word) == expected


def test_every_word_the_dictionary_knows_reads_as_lemminflect_reads_it() -> None:
    from lemminflect import getAllLemmas
    from lemminflect.core.Lemmatizer import Lemmatizer

    words = {w.lower() for w in Lemmatizer()._getLemmaDict() if " " not in w}  # tokens are single words
    for word in sorted(words)[::7]:  # a seventh of 70,000 words: every kind of line, in seconds
        assert english_verb_lemmas(word) == tuple(getAllLemmas(word, upos="VERB").get("VERB", ())), word


def test_a_word_outside_the_table_is_no_verb() -> None:
    assert english_verb_lemmas("acmecorp") == ()
    assert english_verb_lemmas("zorbled") == ()


def test_a_check_does_not_import_lemminflect_or_numpy() -> None:
    code = (
        "import sys, validator\n"
        "said = 'Please email ann@example.com the notes.'\n"
        "verdict = validator.check({'messages': [{'role': 'user', 'content': said}],"
        " 'action': {'tool': 'send_email', 'args': {'to': 'ann@example.com'}, 'justification': {'reason': 'asked',"
        " 'evidence': [{'quote': said}]}}})\n"
        "assert verdict.approved, verdict\n"
        "print(sorted(m for m in ('lemminflect', 'numpy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
