"""The lexer's stretches read as one token (quoted passages, values, times): found by a bisection over the taken
ones, the same as a scan of them all, and in one pass however many values a long quotation holds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.language import fold_apostrophes
from validator.text import lexer


def _spans_by_scan(text: str, original: str) -> list[Any]:
    """The stretches as the lexer found them before its bisection: every candidate against every taken one."""
    taken: list[Any] = []
    free = lambda a, b: not any(x < b and a < y for x, y, *_ in taken)  # noqa: E731
    marks = "".join(lexer._QUOTES) + "\u201d\u300c\u300d\u2033"
    for m in lexer.re.finditer(lexer.OPAQUE + "+", text):
        taken.append((m.start(), m.end(), "QUOTED", frozenset({"quoted"}), original[m.start() : m.end()].strip(marks)))
    for a, b in lexer._quoted(text):
        if free(a, b):
            readable = lexer._readable(original[a + 1 : b - 1], lexer._TYPOGRAPHY)
            cls, kinds = ("QUOTED", frozenset({"quoted"})) if readable else ("", frozenset[str]())
            taken.append((a, b, cls, kinds, original[a + 1 : b - 1]))
    for e in lexer.extract_entities(text):
        if free(e.start, e.end) and (e.note is not None or not lexer._readable(e.value)):
            taken.append((e.start, e.end, "", frozenset(), e))
            continue
        if free(e.start, e.end):
            kinds = frozenset({e.kind, *(["filename"] if e.kind == "domain" and lexer._FILE.match(e.value) else [])})
            taken.append((e.start, e.end, "VALUE", kinds, e))
    for m in lexer._TIME.finditer(text):
        if free(m.start(), m.end()):
            taken.append((m.start(), m.end(), "TIMEX", frozenset({"time"}), m.group()))
    return sorted(taken)


_PIECES = st.sampled_from(
    [
        "Pay ",
        "DE89370400440532013000 ",
        "'notes from 10:30' ",
        "“report.pdf” ",
        "bob@acme.example ",
        "at 3pm ",
        "t-88 ",
        "'unclosed ",
        "\u2018x\u2019 ",
        "https://a.example/x ",
        "50 EUR ",
        "tomorrow ",
        '"',
        "'",
    ]
)


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(_PIECES, max_size=14))
def test_property_the_bisection_finds_the_stretches_a_scan_finds(parts: list[str]) -> None:
    text = "".join(parts)
    folded = fold_apostrophes(text)
    assert lexer._spans(folded, text) == _spans_by_scan(folded, text)


def test_a_long_sentence_of_many_values_is_read_in_one_pass() -> None:
    """8,000 times inside one quoted passage: one QUOTED stretch; 8,000 with no closing mark: 8,000 times (each a
    bisection among those taken: a scan of them all made this quadratic, 70 s for a check past its 5 s budget)."""
    body = ("standup moved to 10:30 today " * 8000).rstrip()
    quoted = f"Post '{body}' in #eng-team."
    spans = lexer._spans(fold_apostrophes(quoted), quoted)
    assert [s[2] for s in spans] == ["QUOTED"]
    unclosed = f"Post '{body} ' in #eng-team."
    assert [s[2] for s in lexer._spans(fold_apostrophes(unclosed), unclosed)] == ["TIMEX"] * 8000


def _quoted_by_each_character(text: str) -> list[tuple[int, int]]:
    """The passages in quotation marks as a scan of every character finds them (the reference)."""
    found, i = [], 0
    while i < len(text):
        c = text[i]
        opens = c in lexer._QUOTES and (i == 0 or text[i - 1].isspace() or text[i - 1] in "([{:")
        if opens and i + 1 < len(text) and not text[i + 1].isspace():
            close, j = lexer._QUOTES[c], i + 1
            while j < len(text):
                if text[j] == close and not text[j - 1].isspace() and (j + 1 == len(text) or not text[j + 1].isalnum()):
                    found.append((i, j + 1))
                    i = j
                    break
                j += 1
        i += 1
    return found


_MARKS = "".join(lexer._QUOTES) + "".join(lexer._QUOTES.values())


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=_MARKS + "ab (:.1\n", max_size=30))
def test_quoted_passages_are_found_by_their_marks_as_by_each_character(text: str) -> None:
    """The lexer looks only at the quotation marks (a search for the next one, then for its closing mark): it
    finds exactly the passages a scan of every character finds."""
    assert list(lexer._quoted(text)) == _quoted_by_each_character(text)


def test_openings_that_never_close_are_looked_up_not_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile text: thousands of quotation marks that open a passage and never close one (``' "a'`` again and
    again; a 96 KB message of it took a check 115 s). Where a mark may close is found once per kind of mark, and
    each opening looks its close up: the closing marks are read once, not once per opening."""
    found: list[str] = []
    closing = lexer._closing

    def counted(text: str, close: str) -> list[int]:
        found.append(close)
        return closing(text, close)

    monkeypatch.setattr(lexer, "_closing", counted)
    text = ' "a' * 50_000 + " \u201cb" * 50_000
    assert list(lexer._quoted(text)) == []
    assert sorted(found) == ['"', "\u201d"]
    for text in (' "a "b c" d', ' "a" "b', '("x" y "z")'):  # and every passage is the one the scan finds
        assert list(lexer._quoted(text)) == _quoted_by_each_character(text)


def test_a_message_of_openings_that_never_close_gets_its_verdict() -> None:
    """The same hostile text after a request, 300 KB of it: a verdict of its own (nothing it says is read, so the
    request is asked), never an approval."""
    from validator import Policy, ToolPolicy, Validator

    said = "Email ann@acme.example the notes."
    justification = {"reason": "asked", "evidence": [{"quote": said}]}
    action = {"tool": "send_email", "args": {"to": "ann@acme.example", "justification": justification}}
    verdict = Validator(Policy({"send_email": ToolPolicy(targets=("to",))})).validate(
        [{"role": "user", "content": said + ' "a' * 100_000}], action
    )
    assert not verdict.approved and verdict.code.value in ("ACTION_NOT_REQUESTED", "GATE_BUDGET_EXCEEDED")
