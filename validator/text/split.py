"""Text cut into sentences: the units the request grammar reads whole.

Sentences are split past abbreviations ("e.g.", "Dr."), decimals, single line breaks (one never ends a
sentence), markdown emphasis and lists: an item of a list is a sentence of its own, read under its list's
lead-in when it has one: the sentence before it ("Perform the following tasks:"; a heading or a sentence
with no colon is a lead-in too, and the grammar reads it: "Do NOT do any of these" asks for no item). A
part of the text blanked to NUL (pasted or forwarded text, :mod:`validator.text.sentences`) splits a
sentence and is left out; a passage blanked to :data:`~validator.text.lexer.OPAQUE` (a quotation of
unclear authorship) stays inside its sentence, as one quoted passage. Splitting never decides a meaning:
it only cuts; each piece is read whole by :mod:`validator.gate.grammar`, and a piece the grammar cannot
read is unknown.
"""

from __future__ import annotations

import re
from functools import lru_cache

import msgspec

from validator.language import LanguagePack, english
from validator.text.lexer import quoted_spans

__all__ = ["Sentence", "sentences"]

_ITEM = re.compile(r"[ \t]*(?:[-*\u2022+]|\d{1,3}[.)]|[a-zA-Z][.)])[ \t]+(?=\S)")
_INLINE_ITEM = re.compile(r"(?<=[:;.!?])[ \t]+\d{1,2}[.)][ \t]+(?=\S)")
_END = re.compile(r"[.!?\uff1f\uff01\u3002\u2049\u203d\u2048\u061f]+[\"'\u201d\u2019)\]]*(?=\s|$)")
_DOTTED = re.compile(r"^(?:[a-z]\.)+[a-z]$")


class Sentence(msgspec.Struct, frozen=True):
    """One sentence of a text: where it stands, and the lead-in of its list when it is a list item."""

    start: int
    end: int
    lead: str | None = None
    """For a list item, the text of the sentence that introduced the list ("Perform the following tasks:")."""


def _abbreviation(text: str, dot: int, pack: LanguagePack) -> bool:
    """Whether the period at ``dot`` ends an abbreviation, an initial or a number's point, not a sentence."""
    if dot + 1 < len(text) and text[dot + 1].isdigit():
        return True
    k = dot
    while k > 0 and (text[k - 1].isalpha() or text[k - 1] == "."):
        k -= 1
    word = text[k:dot].lower()
    if not word and dot > 0 and text[dot - 1].isdigit():  # "1." as a list marker: after a colon or a sentence end
        n = dot
        while n > 0 and text[n - 1].isdigit():
            n -= 1
        before = text[:n].rstrip()
        return dot - n <= 2 and (not before or before[-1] in ":;.!?")
    if k > 0 and not text[k - 1].isspace() and text[k - 1] not in "([\"'":  # "acme.example.", "report-old.pdf."
        return False
    if word in pack.number_abbreviations:
        return text[dot + 1 : dot + 3].strip()[:1].isdigit()
    return bool(word) and (word in pack.abbreviations or len(word) == 1 or _DOTTED.match(word) is not None)


def _goes_on(text: str, at: int, end: int) -> bool:
    """Whether the sentence goes on after ``at`` (its next word starts in lower case: "'Hello. World.' into …")."""
    rest = text[at:end].lstrip()
    return bool(rest) and rest[0].islower()


def _split_block(text: str, start: int, end: int, pack: LanguagePack) -> list[tuple[int, int]]:
    """The sentences of one paragraph or list item (a single line break never ends a sentence; a passage in
    quotation marks is kept whole across its own full stops: "Write 'Hello. World.' into notes.txt.")."""
    out: list[tuple[int, int]] = []
    last = start
    quoted = [(start + a, start + b) for a, b in quoted_spans(text[start:end])]
    cuts = [(m.start(), m.end()) for m in _END.finditer(text, start, end)]
    cuts += [(m.start(), m.start()) for m in _INLINE_ITEM.finditer(text, start, end)]
    for s, e in sorted(cuts):
        if e > s and text[s] == "." and e - s == 1 and _abbreviation(text, s, pack):
            continue
        if any(a < s and (e < b or (e == b and _goes_on(text, e, end))) for a, b in quoted):
            continue  # inside a quoted passage, or at its end with the sentence going on: read whole
        if s < last:
            continue
        out.append((last, e))
        last = e
    out.append((last, end))
    return out


def _pieces(text: str, s: int, e: int, pack: LanguagePack) -> list[tuple[int, int]]:
    """The sentences of one block, trimmed; a pasted part (NUL) splits a sentence and is left out."""
    out: list[tuple[int, int]] = []
    for ps, pe in _split_block(text, s, e, pack):
        for m in re.finditer(r"[^\x00]+", text[ps:pe]):
            a, b = ps + m.start(), ps + m.end()
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if b > a:
                out.append((a, b))
    return out


@lru_cache(maxsize=1024)
def _sentences(text: str, pack: LanguagePack) -> tuple[Sentence, ...]:
    blocks: list[tuple[int, int, bool]] = []  # (start, end, is a list item)
    pos, block_start, in_item = 0, 0, False
    for line in text.split("\n"):
        marker = _ITEM.match(line)
        if not line.strip() or marker is not None:
            if pos > block_start:
                blocks.append((block_start, pos, in_item))
            block_start, in_item = (pos + marker.end(), True) if marker is not None else (pos + len(line) + 1, False)
        pos += len(line) + 1
    if len(text) > block_start:
        blocks.append((block_start, len(text), in_item))
    found: list[Sentence] = []
    lead: str | None = None  # the sentence before a list: its items are read under it, colon or not
    for s, e, item in blocks:
        pieces = _pieces(text, s, e, pack)
        for a, b in pieces:
            marker = re.match(r"\d{1,2}[.)][ \t]+", text[a:b])
            if marker is not None and not item and lead is not None and lead.endswith(":"):  # "tasks: 1. pay Bob."
                found.append(Sentence(a + marker.end(), b, lead))
                continue
            found.append(Sentence(a, b, lead if item else None))
            if not item:
                lead = text[a:b]
    return tuple(found)


def sentences(text: str, pack: LanguagePack | None = None) -> tuple[Sentence, ...]:
    """The sentences of ``text`` (pasted parts, blanked to NUL, split them and are left out), by ``pack``'s
    abbreviations (English by default)."""
    return _sentences(text, pack or english())
