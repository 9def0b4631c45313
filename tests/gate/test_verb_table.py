"""The verb table read without its index: an ordered table (the shipped English one) is searched in its text for
the first words a process looks up, and answers exactly what the index of every form answers."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from validator.language import INDEX_AFTER, VerbTable, _english_verbs_text

SHIPPED = _english_verbs_text()


def _index(text: str) -> VerbTable:
    table = VerbTable(lambda: text)
    table.lemmas("")  # a table not ordered is indexed at its first lookup
    assert table._forms is not None
    return table


def test_the_shipped_table_is_ordered_as_a_search_needs() -> None:
    """Its comment lines first, then one line a form, the forms in order and each once, lines ended by a newline
    alone (a search reads ``\\n``; the index splits at every line break Python knows)."""
    lines = SHIPPED.split("\n")
    assert lines[-1] == "" and SHIPPED.splitlines() == lines[:-1]
    head = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    forms = [line.partition(" ")[0] for line in lines[head:-1]]
    assert all(forms) and not any(f.startswith("#") for f in forms)
    assert all(a < b for a, b in pairwise(forms))


def test_every_word_of_the_shipped_table_and_around_it_reads_as_the_index_reads_it() -> None:
    ordered, indexed = VerbTable(lambda: SHIPPED, ordered=True), _index(SHIPPED)
    forms = [line.partition(" ")[0] for line in SHIPPED.splitlines() if line and not line.startswith("#")]
    probes = {"", "#", "'", " ", "a", "zzzz", "pay ", " pay", "pay\n", "paid x", "\u00e9t\u00e9", "\uffff", "0"}
    for form in forms:
        probes.update((form, form + "s", form[:-1], form + " x", form.upper()))
    for word in sorted(probes):
        assert ordered._search(word) == indexed._forms.get(word), repr(word)  # type: ignore[union-attr]


def test_an_ordered_table_is_indexed_after_its_first_lookups_and_answers_the_same() -> None:
    table, indexed = VerbTable(lambda: SHIPPED, ordered=True), _index(SHIPPED)
    words = ["paid", "sent", "email", "acmecorp", "went", "been", "the", "emailing"]
    for n in range(INDEX_AFTER + 3):
        word = words[n % len(words)]
        assert table.lemmas(word) == indexed.lemmas(word), word
        assert (table._forms is None) is (n < INDEX_AFTER)
    assert table.lemmas("paid") == ("pay",) and table.lemmas("pay") == ("pay",) and table.lemmas("zorbled") == ()


def test_a_table_not_ordered_is_read_by_its_index() -> None:
    """A second pack's table may hold its lines in any order, comments anywhere: it is never searched."""
    text = "zahlen\n# a comment\nbezahlt zahlen bezahlen\nabc\n\nbezahlen\n"
    table = VerbTable(lambda: text)
    assert table.lemmas("bezahlt") == ("zahlen", "bezahlen") and table._forms is not None
    assert table.lemmas("abc") == ("abc",) and table.lemmas("zahlen") == ("zahlen",) and table.lemmas("x") == ()


_FORM = st.text(alphabet="abcz'-\u00e9", min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_FORM, st.lists(_FORM, max_size=3), max_size=40),
    st.lists(st.text(alphabet="abcz'-\u00e9 #", max_size=7), max_size=20),
    st.integers(min_value=0, max_value=3),
)
def test_any_ordered_table_is_searched_as_it_is_indexed(
    table: dict[str, list[str]], probes: list[str], comments: int
) -> None:
    """Any table of comment lines and then its forms in order (some their own lemma, some with lemmas, first or
    last, with or without a last newline) answers every probe by search as by its index."""
    lines = [f"# comment {i}" for i in range(comments)]
    lines += [" ".join((form, *table[form])) for form in sorted(table)]
    for text in ("\n".join(lines), "\n".join(lines) + "\n"):
        ordered, indexed = VerbTable(lambda text=text: text, ordered=True), _index(text)
        for word in (*table, *probes):
            assert ordered._search(word) == indexed._forms.get(word), (text, word)  # type: ignore[union-attr]
