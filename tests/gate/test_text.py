from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import Message, ToolCall, Transcript
from validator.gate.checks import check_quote
from validator.text import search
from validator.text.search import QUOTE_MARKS, TextIndex, find_bounded, normalize
from validator.text.sentences import own_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  Hello\n\tWORLD  ", "hello world"),
        ("It\u2019s \u201cdone\u201d", 'it"s "done"'),
        ("«ciao»", '"ciao"'),
        ("Straße", "strasse"),
        ("a\u00a0b\u2003c", "a b c"),
    ],
)
def test_normalize(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("haystack", "needle", "found"),
    [
        ("please repay me", "pay", False),
        ("please pay me", "pay", True),
        ("pay", "pay", True),
        ('he said "pay"', '"pay"', True),
        ("paying now", "pay", False),
        ("x_pay", "pay", False),
    ],
)
def test_find_bounded(haystack: str, needle: str, found: bool) -> None:
    assert (find_bounded(haystack, needle) != -1) is found


def test_index_maps_hits_to_transcript_positions_even_when_folding_grows_text() -> None:
    index = TextIndex((3, 7, 9), ("Straße eins", "nothing here", "große Straße zwei"))
    assert index.find_text(normalize("STRASSE ZWEI"), limit=5) == [9]
    assert index.find_text(normalize("strasse"), limit=5) == [3, 9]
    assert index.find_text(normalize("missing"), limit=5) == []


def test_index_does_not_match_across_messages() -> None:
    index = TextIndex((0, 1), ("send the", "report now"))
    assert index.find_text("the report", limit=5) == []


def test_index_limit_stops_search() -> None:
    index = TextIndex(tuple(range(10)), tuple("pay now" for _ in range(10)))
    assert index.find_text("pay now", limit=3) == [0, 1, 2]
    assert index.find_text("pay now", limit=3, newest=True) == [7, 8, 9]


_plain = st.lists(st.sampled_from(["pay", "Pay", "the", "rent", "x", "payment"]), min_size=1, max_size=6).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(texts=st.lists(_plain, min_size=1, max_size=12), quote=_plain, limit=st.integers(1, 4))
def test_first_and_newest_are_the_two_ends_of_every_message_holding_the_needle(
    texts: list[str], quote: str, limit: int
) -> None:
    needle = normalize(quote)
    expected = [i for i, t in enumerate(texts) if find_bounded(normalize(t), needle) != -1]
    index = TextIndex(tuple(range(len(texts))), tuple(texts))
    assert index.find_text(needle, limit) == expected[:limit]
    assert index.find_text(needle, limit, newest=True) == expected[-limit:]


# --- properties -------------------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)


@settings(max_examples=300, deadline=None)
@given(tool_text=_text, user_text=_text, start=st.integers(0, 80), length=st.integers(1, 40))
def test_quote_found_only_outside_user_messages_is_never_user_evidence(
    tool_text: str, user_text: str, start: int, length: int
) -> None:
    quote = tool_text[start : start + length]
    if not quote.strip():
        return
    transcript = Transcript(
        [
            Message(role="system", content=tool_text),
            Message(role="assistant", content=tool_text, tool_calls=(ToolCall("c1", "read"),)),
            Message(role="tool", content=tool_text, tool_call_id="c1", name="read", author="x@y.example"),
            Message(role="user", content=user_text),
        ]
    )
    finding = check_quote(transcript, 0, quote)
    if finding.status == "user":
        # Only possible when the user's own words (their text less what they pasted) really hold the quote.
        assert find_bounded(normalize(own_text(user_text)), normalize(quote)) != -1
    for loc in finding.locations:
        if finding.status != "user":
            assert loc.role != "user" or loc.speaker == "text pasted into the user's message"


_QUOTES = set(QUOTE_MARKS)


def _equivalent(a: str, b: str) -> bool:
    """Equal up to whitespace runs, case and quote marks: the only differences allowed."""

    def canon(s: str) -> str:
        s = "".join('"' if c in _QUOTES else c for c in s.casefold())
        return " ".join(s.split())

    return canon(a) == canon(b)


@settings(max_examples=400, deadline=None)
@given(message=_text, quote=_text)
def test_normalisation_forgives_only_whitespace_case_and_quote_marks(message: str, quote: str) -> None:
    needle = normalize(quote)
    if not needle:
        return
    hay = normalize(message)
    pos = find_bounded(hay, needle)
    if pos == -1:
        return
    # The matched span of the message differs from the quote in nothing but what normalize forgives.
    assert _equivalent(hay[pos : pos + len(needle)], quote)


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.text("abcdefgh", min_size=1, max_size=6), min_size=1, max_size=6), data=st.data())
def test_reformatted_quote_is_still_found(words: list[str], data: st.DataObject) -> None:
    original = " ".join(words)
    spaces = data.draw(st.lists(st.sampled_from([" ", "  ", "\n", "\t "]), min_size=len(words), max_size=len(words)))
    quoted = "".join(w.upper() + s for w, s in zip(words, spaces, strict=True))
    transcript = Transcript([Message(role="user", content=f"Hi. {original}. Thanks")])
    assert check_quote(transcript, 0, quoted).status == "user"


@given(st.text(max_size=40))
def test_one_character_change_is_not_forgiven(word: str) -> None:
    word = "x" + "".join(c for c in word if c.isalpha()) + "y"
    transcript = Transcript([Message(role="user", content=f"please {word} now")])
    altered = word[:-1] + ("z" if word[-1] != "z" else "w")
    assert check_quote(transcript, 0, f"please {altered} now").status == "not_found"


def test_quote_across_whitespace_runs_is_found_in_few_and_in_many_messages() -> None:
    few = TextIndex((0, 1), ("Please  pay\n\nthe rent", "nothing"))
    assert few.find_text("please pay the rent", limit=5) == [0]
    many_texts = (*tuple(f"rent note {i}" for i in range(100)), "Please  pay\n\nthe rent")
    many = TextIndex(tuple(range(101)), many_texts)
    assert many.find_text("please pay the rent", limit=5) == [100]
    assert many.find_text("note 7", limit=5) == [7]
    assert many.find_text("pay the  rent", limit=5) == []  # needles are normalised by the caller


def test_separator_inside_a_message_does_not_shift_positions() -> None:
    index = TextIndex((0, 1, 2), ("a\x00b", "pay now", "c"))
    assert index.find_text("pay now", limit=5) == [1]
    assert index.find_text("c", limit=5) == [2]


_pieces = st.lists(
    st.sampled_from(["pay", "Pay", " ", "  ", "\n", "the", "rent", "'", "\u2019", '"', "ß", "ss", "x"]), max_size=12
)


@pytest.mark.parametrize("few", [0, 32], ids=["whole-group-normalised", "candidates-one-by-one"])
@settings(max_examples=300, deadline=None)
@given(texts=st.lists(_pieces.map("".join), min_size=1, max_size=5), quote=_pieces.map("".join))
def test_index_finds_what_per_message_normalisation_finds(few: int, texts: list[str], quote: str) -> None:
    import validator.text.search as text_module

    needle = normalize(quote)
    if not needle:
        return
    expected = [i for i, t in enumerate(texts) if find_bounded(normalize(t), needle) != -1]
    saved = text_module._FEW
    text_module._FEW = few
    try:
        index = TextIndex(tuple(range(len(texts))), tuple(texts))
        got, newest = index.find_text(needle, limit=10), index.find_text(needle, limit=2, newest=True)
    finally:
        text_module._FEW = saved
    # Found-ness is exact; the locations reported are a subset (the first look's, when it finds any).
    assert bool(got) == bool(expected) == bool(newest)
    assert set(got) <= set(expected)
    assert set(newest) <= set(expected) and newest == sorted(newest)


@settings(max_examples=400, deadline=None)
@given(
    texts=st.lists(_pieces.map("".join), min_size=1, max_size=8), quote=_pieces.map("".join), limit=st.integers(1, 4)
)
def test_a_view_searched_from_the_end_finds_the_last_messages_a_search_from_the_start_finds(
    texts: list[str], quote: str, limit: int
) -> None:
    """A view's backward search (the newest messages holding a needle, each miss moving back by one character) finds
    exactly the messages of the forward search (which skips to the next word after a miss), from the other end."""
    from validator.text.search import _starts, _View

    needle = normalize(quote)
    if not needle:
        return
    folded = "\x00".join(texts).casefold()
    if len(folded) != sum(map(len, texts)) + len(texts) - 1:
        return  # case folding grew the text: the index spaces such messages by their folded lengths
    view = _View(folded, _starts([len(t) for t in texts]))
    every = view.find(needle, len(texts))
    assert view.find(needle, limit, newest=True) == every[::-1][:limit]
    assert every == [i for i, t in enumerate(texts) if find_bounded(t.casefold(), needle) != -1]


def test_a_search_from_the_end_stops_at_its_limit_before_the_near_matches_further_back() -> None:
    """The newest messages are found without reading what lies before them: 3,000 near-matches ("repay") in an
    old message cost a search from the start its budget, and nothing from the end."""
    from validator.text.search import SearchBudgetExceeded, _starts, _View

    texts = ["repay " * 3_000, "pay now", "pay later"]
    view = _View("\x00".join(texts), _starts([len(t) for t in texts]))
    assert view.find("pay", 2, newest=True) == [2, 1]
    with pytest.raises(SearchBudgetExceeded):
        view.find("pay", 2)


def test_exact_look_with_a_common_anchor_still_finds_late_matches() -> None:
    texts = (*tuple(f"rent {i}" for i in range(100)), "pay the rent")
    index = TextIndex(tuple(range(101)), texts)
    assert index.find_text("pay the rent", limit=5) == [100]
    assert index._normalised is None  # found by the exact look: the group was never normalised whole


# -- how quote marks and spaces are read: the table they were read by, whatever the text's characters --------

_MARKED = st.text(
    alphabet=st.sampled_from([*QUOTE_MARKS, "a", "B", " ", "\n", "\t", "\x1c", "\x00", "\u00a0", "\u2028", "\u3000"])
    | st.characters(),
)
_TABLE = str.maketrans(
    {**{c: '"' for c in QUOTE_MARKS}, **{chr(c): " " for c in range(0x3000 + 1) if chr(c).isspace()}}
)


@settings(max_examples=500, deadline=None)
@given(_MARKED)
def test_quote_marks_and_spaces_are_read_as_the_table_reads_them_ascii_or_not(text: str) -> None:
    """``normalize`` and the normalised view of an index (``_marked``) read a text of ASCII alone and one with any
    other character (patterns) as one table of every quote mark and every whitespace character does."""
    assert normalize(text) == " ".join(text.casefold().translate(_TABLE).split())
    assert search._marked(text) == text.translate(_TABLE)


@pytest.mark.parametrize(
    "text",
    [
        "\ud800 \u201c\udfff\u201d",  # lone surrogates beside quote marks
        "\u201c\u3000" * 500_000,  # a megabyte of quote marks and ideographic spaces
        "ab' " * 250_000,  # a megabyte of ASCII, every fourth character a quote mark
    ],
)
def test_hostile_text_is_marked_as_the_table_marks_it(text: str) -> None:
    """What a hostile email sends through ``normalize`` and the index's view: read as the table reads it, in one
    pass (a megabyte, lone surrogates)."""
    assert search._marked(text) == text.translate(_TABLE)
    assert normalize(text) == " ".join(text.casefold().translate(_TABLE).split())
