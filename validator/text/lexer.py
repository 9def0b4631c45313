"""A sentence as the request grammar reads it: tokens, each with every word class it has.

The classes come from the language pack (:mod:`validator.language`): the grammar's own words, the pack's
class tables, nouns by kind, the verb table (a verb form is ``VB`` in its base form, ``VBG`` as a gerund,
``VBN`` as a past form), and the forms code recognises: values (addresses, links, IBANs, phone and account
numbers by :mod:`validator.text.entities`; paths, file names, ids, handles, hashtags by shape), numbers,
currencies, dates and times of day, passages in quotation marks. A capitalised word that no table knows
is a ``NAME`` (consecutive ones are one name, "Zeta Corp"); so is a capitalised word inside a sentence
that the tables know only as an open-class word ("Bob", "Bill").

Nothing is dropped: a character no rule reads (an emoji, a zero-width space, "؟", a bracket) is a token
of no class, and a word in no table is a token of no class. Either makes the sentence unknown
(:mod:`validator.gate.grammar`).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any

import msgspec
from msgspec import structs

from validator.language import LanguagePack, english, fold_apostrophes
from validator.language.classes import (
    ADJ,
    CUR,
    END,
    MAG,
    NAME,
    NN,
    NNS,
    NUM,
    NUMW,
    OPEN,
    OPENV,
    ORD,
    POSS,
    QUOTED,
    TEXT,
    TIMEX,
    UNIT,
    VALUE,
    VB,
    VBG,
    VBN,
    VBZ,
)
from validator.text.entities import CURRENCIES, extract_entities

__all__ = [
    "CARRIED",
    "COVERED",
    "OPAQUE",
    OPEN,
    OPENV,
    "Word",
    "in_pack_language",
    "lex",
    "quoted_spans",
    "shape_kinds",
]

OPAQUE = "\x01"
"""Fills a passage of unclear authorship in a user's sentence (:mod:`validator.text.sentences`): it is read
as one quoted passage, whose words are never read."""

CARRIED = frozenset({OPEN, OPENV})
"""The classes of a word carried as text: :data:`~validator.language.classes.OPEN`, a word no table knows (lower
case, letters only), which the grammar lets stand only in *carried* positions (a modifier or head inside a noun
phrase, a statement's state), where it is carried as text and never read: it fills, grounds and selects nothing
(:mod:`validator.gate.reader`); and :data:`~validator.language.classes.OPENV`, a word the tables know only as a
verb form ("pilot", "schedule"), carried as a noun phrase's modifier or head and read as a verb wherever a verb
stands."""

_QUOTES = {'"': '"', "\u201c": "\u201d", "\u201e": "\u201c", "\u2018": "\u2019", "'": "'", "\u00ab": "\u00bb"}
_QUOTE_MARK = re.compile("[" + re.escape("".join(_QUOTES)) + "]")
_NUM = re.compile(r"^(\d{1,3}(?:[,.]\d{3})+|\d+)(?:([.,])(\d{1,2}))?$")
_TIME = re.compile(r"(?i)(?<![\w:])\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)(?!\w)|(?<![\w:])\d{1,2}:\d{2}(?![\w:])")
_DATE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$|^\d{1,2}/\d{1,2}(?:/\d{2,4})?$")
_ORDINAL = re.compile(r"(?i)^\d{1,2}(?:st|nd|rd|th)$")
_ID = re.compile(r"^(?=[^\d]*\d)[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$|^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+$")
_FILE = re.compile(r"^[\w-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,5}$")
_PATH = re.compile(r"^(?:~|\.{1,2})?/[\w./-]*$|^[\w.-]+(?:/[\w.-]+)+/?$")
_HANDLE = re.compile(r"^@\w+$")
_HASHTAG = re.compile(r"^#[\w-]+$")
_WORD = re.compile(r"^[a-z]+(?:[-'][a-z]+)*$")
_SPLIT_NUMBER = re.compile(r"^(\d+(?:\.\d+)?)([A-Za-z€$£¥₹]+)$")
_LEADING = "([{\"'\u201c\u2018\u00ab$€£¥₹"
_TRAILING = ",;:.!?)]}\"'\u201d\u2019\u00bb"
_ENDS = {".": END, "!": END, "...": END, "!!": END, "!!!": END}
_CONTRACTION_ENDINGS = ("n't", "'d", "'ll", "'m", "'re", "'ve")
_OPEN_CLASSES = frozenset({VB, VBG, VBN, NN, NNS, ADJ})
_VERB_CLASSES = frozenset({VB, VBG, VBN, VBZ})


class Word(msgspec.Struct, frozen=True):
    """One token of a sentence."""

    text: str
    """As written."""
    norm: str
    """Lower case, apostrophes folded, a chat spelling read as its word ("u" -> "you")."""
    start: int
    end: int
    classes: frozenset[str]
    """The grammar's classes this token has (empty: a token the grammar does not know)."""
    kinds: frozenset[str] = frozenset()
    """A noun's kinds (``person``, ``money``, ``document``...) or a value's (``email``, ``iban``, ``filename``...)."""
    lemma: str = ""
    """A noun's singular."""
    verb: str = ""
    """A verb form's lemma ("paid" -> "pay")."""
    value: Any = None
    """A number (a ``Decimal``), a quoted passage's text."""


class _Tables(msgspec.Struct, frozen=True):
    classes: Mapping[str, frozenset[str]]
    """Each known word and its classes (the pack's and the grammar's own words)."""
    literals: Mapping[str, str]
    """Each word the grammar names, and the name of its terminal."""


@cache
def _tables(pack: LanguagePack, literals: tuple[tuple[str, str], ...]) -> _Tables:
    classes = {w: set(c) for w, c in pack.word_classes().items()}
    names = dict(literals)
    for word, terminal in names.items():
        classes.setdefault(word, set()).add(terminal)
    return _Tables({w: frozenset(c) for w, c in classes.items()}, names)


def _readable(text: str, extra: str = "") -> bool:
    """Whether every character of a value is ASCII, a letter or a digit, or one of ``extra`` (no stray mark of
    another script's punctuation, no format character hiding in it)."""
    return all(c.isascii() or c in extra or unicodedata.category(c)[0] in ("L", "N") for c in text)


# what a quoted passage may hold beside ASCII, letters and digits: Latin typography
_TYPOGRAPHY = "\u00a0\u2013\u2014\u2018\u2019\u201c\u201d\u00ab\u00bb\u20ac\u00a3\u00a5\u00b0"


def _number(text: str) -> Decimal | None:
    """A number as written: "1,200", "1.250,00", "2.5" (a group of three digits after a separator is thousands).
    One point before three digits and nothing else ("1.250") is no number: 1.25 as English writes it, 1250
    as much of Europe does, so the token has no class and its sentence is unknown."""
    m = _NUM.match(text)
    if m is None:
        return None
    whole, _, frac = m.groups()
    if frac is None and whole.count(".") == 1 and "," not in whole:
        return None
    digits = whole.replace(",", "").replace(".", "")
    try:
        return Decimal(f"{digits}.{frac}" if frac else digits)
    except InvalidOperation:
        return None


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds passages in quotation marks (:func:`_quoted`): the sentence splitter keeps each whole."""
    return list(_quoted(fold_apostrophes(text)))


def _quoted(text: str) -> Iterator[tuple[int, int]]:
    """Passages in quotation marks: an opening mark at a word's start, its closing mark at a word's end (an
    apostrophe inside a word, "Bob's", opens nothing): each opening's passage ends at the first closing mark after
    it. Where a mark can close does not depend on where its passage opened, so the closing marks of each kind are
    found once and each opening looks its close up (a bisection): linear in the marks, however many openings find
    no close (a megabyte of ``' "a'`` was quadratic)."""
    n = len(text)
    closes: dict[str, list[int]] = {}
    i = 0
    while (mark := _QUOTE_MARK.search(text, i)) is not None:
        i = mark.start()
        opens = i == 0 or text[i - 1].isspace() or text[i - 1] in "([{:"
        if opens and i + 1 < n and not text[i + 1].isspace():
            close = _QUOTES[text[i]]
            ends = closes.get(close)
            if ends is None:
                ends = closes[close] = _closing(text, close)
            k = bisect_right(ends, i)
            if k < len(ends):
                yield i, ends[k] + 1
                i = ends[k]
        i += 1


def _closing(text: str, close: str) -> list[int]:
    """Every place ``close`` may close a passage: at a word's end (no space before it, no letter or digit after)."""
    n, found = len(text), []
    j = text.find(close, 1)
    while j != -1:
        if not text[j - 1].isspace() and (j + 1 == n or not text[j + 1].isalnum()):
            found.append(j)
        j = text.find(close, j + 1)
    return found


def _spans(text: str, original: str) -> list[tuple[int, int, str, frozenset[str], Any]]:
    """The stretches read as one token before words are split: opaque and quoted passages, values, times."""
    taken: list[tuple[int, int, str, frozenset[str], Any]] = []
    starts: list[int] = []  # the taken stretches, disjoint, by their starts (and ends in the same order)
    ends: list[int] = []

    def free(a: int, b: int) -> bool:
        """Whether ``[a, b)`` meets no stretch taken: only its neighbours can (a bisection, not a scan of all: a
        long quotation holding thousands of values was quadratic)."""
        i = bisect_left(starts, b)  # the stretches starting before b: only the last of them may reach past a
        return i == 0 or ends[i - 1] <= a

    def take(item: tuple[int, int, str, frozenset[str], Any]) -> None:
        i = bisect_left(starts, item[0])
        starts.insert(i, item[0])
        ends.insert(i, item[1])
        taken.append(item)

    for m in re.finditer(OPAQUE + "+", text):
        passage = original[m.start() : m.end()].strip("".join(_QUOTES) + "\u201d\u300c\u300d\u2033")
        take((m.start(), m.end(), QUOTED, frozenset({"quoted"}), passage))
    for a, b in _quoted(text):
        if free(a, b):
            # a quoted passage is read whole, as the words the argument must hold; one holding a format character
            # or another script's punctuation is a token no class names (what it says cannot be compared)
            readable = _readable(original[a + 1 : b - 1], _TYPOGRAPHY)
            cls, quoted = (QUOTED, frozenset({"quoted"})) if readable else ("", frozenset[str]())
            take((a, b, cls, quoted, original[a + 1 : b - 1]))
    for e in extract_entities(text):
        if free(e.start, e.end) and (e.note is not None or not _readable(e.value)):
            # a value that does not parse as one (an address with a stray mark, look-alike characters): a token no
            # class names, so its sentence is unknown
            take((e.start, e.end, "", frozenset(), e))
            continue
        if free(e.start, e.end):
            kinds = frozenset({e.kind, *(["filename"] if e.kind == "domain" and _FILE.match(e.value) else [])})
            take((e.start, e.end, VALUE, kinds, e))  # "script.py": a file, and a host under Paraguay's
    for m in _TIME.finditer(text):
        if free(m.start(), m.end()):
            take((m.start(), m.end(), TIMEX, frozenset({"time"}), m.group()))
    return sorted(taken)


def lex(
    sentence: str,
    *,
    original: str | None = None,
    verbs: frozenset[str] = frozenset(),
    literals: tuple[tuple[str, str], ...] = (),
    pack: LanguagePack | None = None,
) -> tuple[Word, ...]:
    """The tokens of ``sentence``. ``original``: the same sentence with its opaque passages as written (same
    length); ``verbs``: words read as verbs beyond the verb table (a policy's own intents, "rm"); ``literals``:
    the grammar's words and their terminal names."""
    return lex_bounded(sentence, original=original, verbs=verbs, literals=literals, pack=pack)[0]


def lex_bounded(
    sentence: str,
    *,
    original: str | None = None,
    verbs: frozenset[str] = frozenset(),
    literals: tuple[tuple[str, str], ...] = (),
    pack: LanguagePack | None = None,
    limit: int | None = None,
) -> tuple[tuple[Word, ...], bool]:
    """:func:`lex`, and whether it stopped before the end: with ``limit``, once ``limit + 1`` words are split
    the rest is not (a sentence over the grammar's limit is known to be at once). The words then are the first
    ones only, and a caller must take the sentence for too long whatever their count (names joined after the
    cut may make them fewer)."""
    pack = pack or english()
    tables = _tables(pack, literals)
    folded = fold_apostrophes(sentence)
    original = sentence if original is None else original
    out: list[Word] = []
    pos = 0
    most = None if limit is None else limit + 1
    for a, b, cls, kinds, value in _spans(folded, original):
        room = None if most is None else most - len(out)
        out += _words(folded, sentence, pos, a, tables, pack, verbs, room, dash=cls == TIMEX)
        if most is not None and len(out) >= most:
            return _names(out[:most], sentence), True
        classes = frozenset({cls, *([tables.literals[cls]] if cls in tables.literals else [])}) if cls else frozenset()
        out.append(Word(sentence[a:b], folded[a:b].lower(), a, b, classes, kinds, value=value))
        pos = b
    out += _words(folded, sentence, pos, len(folded), tables, pack, verbs, None if most is None else most - len(out))
    if most is not None and len(out) >= most:
        return _names(out[:most], sentence), True
    return _names(out, sentence), False


def _words(
    folded: str,
    sentence: str,
    a: int,
    b: int,
    tables: _Tables,
    pack: LanguagePack,
    verbs: frozenset[str],
    most: int | None = None,
    *,
    dash: bool = False,
) -> list[Word]:
    """The words of ``folded[a:b]``. ``dash``: a time follows at ``b``, so a hyphen that touches it is a dash of
    its own ("3-3:30pm", "noon-1pm": a span of time, not a word "3-")."""
    out: list[Word] = []
    for m in re.finditer(r"\S+", folded[a:b]):
        if most is not None and len(out) >= most:
            break
        start = a + m.start()
        pieces = _pieces(m.group())
        if dash and a + m.end() == b and len(m.group()) > 1 and m.group().endswith("-"):
            x, y = pieces[-1]
            pieces[-1:] = [(x, y - 1), (y - 1, y)] if y - 1 > x else [(x, y)]
        for x, y in pieces:
            out += _piece(
                folded[start + x : start + y], sentence, start + x, start + y, tables, pack, verbs, bool(out) or a > 0
            )
    return out


_MARKUP = "*_"
"""Emphasis around a word ("**Email**", "_now_"): formatting, not a word, and read as none."""


def _pieces(run: str) -> list[tuple[int, int]]:
    """One run of non-space characters as its pieces: leading marks, the core, trailing marks ("..." one).
    Emphasis marks around it are no piece ("~~", which strikes a word out, is not emphasis)."""
    a, b = 0, len(run)
    while a < b and run[a] in _MARKUP:
        a += 1
    while b > a and run[b - 1] in _MARKUP:
        b -= 1
    head: list[tuple[int, int]] = []
    while a < b and run[a] in _LEADING:
        head.append((a, a + 1))
        a += 1
    tail: list[tuple[int, int]] = []
    core_end = b
    while core_end > a and run[core_end - 1] in _TRAILING:
        core_end -= 1
    k = core_end
    while k < b:
        j = k + 1
        if run[k] in ".!?":
            while j < b and run[j] in ".!?":
                j += 1
        tail.append((k, j))
        k = j
    core = [(a, core_end)] if core_end > a else []
    return head + core + tail


def _piece(
    piece: str, sentence: str, x: int, y: int, tables: _Tables, pack: LanguagePack, verbs: frozenset[str], inside: bool
) -> list[Word]:
    text = sentence[x:y]
    low = piece.lower()

    def word(
        classes: set[str] | frozenset[str],
        kinds: frozenset[str] = frozenset(),
        lemma: str = "",
        value: Any = None,
        norm: str = low,
        verb: str = "",
    ) -> Word:
        found = set(classes)
        if norm in tables.literals:
            found.add(tables.literals[norm])
        return Word(text, norm, x, y, frozenset(found), kinds, lemma, verb, value)

    shaped = _shaped(piece, sentence, x, y, low, word, pack, tables)
    if shaped is not None:
        return shaped
    if low.endswith("'s") and len(low) > 2 and not _contraction(low, tables):
        n = len(piece) - 2
        return [
            *_piece(piece[:n], sentence, x, x + n, tables, pack, verbs, inside),
            Word(sentence[x + n : y], "'s", x + n, y, frozenset({tables.literals.get("'s", POSS)})),
        ]
    norm = pack.spellings.get(low, low)
    if _ID.match(piece) and not _WORD.match(low) and norm not in tables.classes:
        return [word({VALUE}, frozenset({"id"}))]
    classes: set[str] = set(tables.classes.get(norm, ()))
    if norm in CURRENCIES:
        classes.add(CUR)  # "EUR", "eur", "euros", "dollars"
    kinds = pack.nouns.get(norm, frozenset())
    lemma = pack.noun_lemmas.get(norm, "")
    verb = ""
    if _WORD.match(norm):
        verb = _verb_classes(norm, verbs, pack, classes)
    capital = piece[:1].isupper() and _WORD.match(low) is not None and not piece.isupper()
    if norm in pack.unread and not classes:
        return [word(classes, norm=norm)]  # an operator word no rule reads ("LATER", "Maybe"): never a name
    if low.startswith("i'") and not classes:
        return [word(classes, norm=norm)]  # "I'll", "I'd": the speaker, never a name ("tell her I'll be late")
    if capital and inside and classes <= _OPEN_CLASSES:
        return [word({NAME}, frozenset({"person", "name"}), norm=norm)]  # "Bob", "Bill", "Rose" inside a sentence
    if not classes and (capital or (piece.isupper() and piece.isalpha() and len(piece) > 1)):
        return [word({NAME}, frozenset({"person", "name"}), norm=norm)]  # a word no table knows, capitalised
    if norm in pack.number_words and not classes:
        # "one file", "twenty euros": a count or an amount, never a thing's number ("invoice two" is unknown)
        return [word({NUMW}, value=Decimal(pack.number_words[norm]), norm=norm)]
    if not classes - _VERB_CLASSES and _WORD.match(norm) and norm not in pack.mentioned and not _selective(norm, pack):
        # a word no table knows (OPEN), or knows only as a verb form (OPENV: "the pilot", "the schedule"): carried
        # where the grammar lets it stand, unknown elsewhere
        classes = classes | {OPENV if classes else OPEN}
    return [word(classes, kinds, lemma, norm=norm, verb=verb)]


COVERED = 0.5
"""The share of a sentence's words the pack must know for the sentence to be in the pack's language."""


def in_pack_language(words: Sequence[Word]) -> bool:
    """Whether a sentence is in the pack's language: at least :data:`COVERED` of its words are ones the pack
    knows (a name, free text and an open-class word are not: "Dat is fout." is not English read with carried
    words)."""
    lettered = [w for w in words if any(c.isalpha() for c in w.text)]
    known = [w for w in lettered if w.classes - {NAME, TEXT, OPEN, OPENV}]
    return not lettered or len(known) >= COVERED * len(lettered)


def _selective(norm: str, pack: LanguagePack) -> bool:
    """Whether a word no table knows has the shape of a word that chooses *which* thing (a superlative or a
    comparative: "smallest", "earliest", "heavier"): never carried, so the sentence it stands in is unknown. (A
    form of a verb the verb table knows, "confirms", is never carried either: it may be a clause's verb.)"""
    return norm.endswith(pack.selective_endings)


_Maker = Callable[..., Word]


def _shaped(
    piece: str, sentence: str, x: int, y: int, low: str, word: _Maker, pack: LanguagePack, tables: _Tables
) -> list[Word] | None:
    """A piece read by its shape (a number, an amount with its unit, a date, an ordinal, a handle, a path, a
    file name, punctuation), or None for a word the tables read."""
    if low in _ENDS:
        return [word({_ENDS[low]})]
    if low in tables.literals and not low[:1].isalnum():  # ",", ":", "?", "'s"
        return [word(tables.classes.get(low, frozenset()))]
    if piece in ("$", "€", "£", "¥", "₹"):
        return [word({CUR}, value=CURRENCIES[piece])]
    number = _number(piece)
    if number is not None:
        return [word({NUM}, value=number)]
    split = _SPLIT_NUMBER.match(piece)
    if split is not None:
        n = len(split.group(1))
        head = _number(split.group(1))
        rest = split.group(2).lower()
        kind = (
            CUR
            if rest in CURRENCIES
            else (MAG if rest in pack.magnitudes else (UNIT if rest in pack.classes.get(UNIT, ()) else ""))
        )
        if head is not None and kind:
            return [
                Word(sentence[x : x + n], split.group(1), x, x + n, frozenset({NUM}), value=head),
                Word(sentence[x + n : y], rest, x + n, y, frozenset({kind}), value=CURRENCIES.get(rest)),
            ]
    if _DATE.match(piece):
        return [word({TIMEX}, frozenset({"time"}))]
    if _ORDINAL.match(piece):
        return [word({ORD})]
    kinds = shape_kinds(piece)
    return [word({VALUE}, kinds)] if kinds else None


_HANDLE_KIND, _HASHTAG_KIND = frozenset({"handle"}), frozenset({"hashtag"})
_PATH_KIND, _FILE_KIND, _NO_KIND = frozenset({"path"}), frozenset({"filename"}), frozenset[str]()


def shape_kinds(text: str) -> frozenset[str]:
    """The kind of value ``text`` has the shape of as a whole (a handle, a hashtag, a path, a file name), or
    none: how the lexer reads a piece, and what a quoted passage would be if it stood unquoted. The shapes
    exclude one another."""
    if _HANDLE.match(text):
        return _HANDLE_KIND
    if _HASHTAG.match(text):
        return _HASHTAG_KIND
    if "/" in text and _PATH.match(text):
        return _PATH_KIND
    if _FILE.match(text) and not _WORD.match(text.lower()):
        return _FILE_KIND
    return _NO_KIND


def _verb_classes(norm: str, verbs: frozenset[str], pack: LanguagePack, classes: set[str]) -> str:
    """Add the verb classes a word has (VB, VBG, VBN) to ``classes``; the verb's lemma, or ""."""
    forms = pack.verb_lemmas(norm) or ((norm,) if norm in verbs else ())
    if norm in pack.not_verbs:
        forms = ()  # politeness, never a verb of a request
    for form in forms:
        if form == norm:
            classes.add(VB)
        elif norm.endswith(pack.gerund_endings):
            classes.add(VBG)
        elif not norm.endswith(pack.present_endings) or norm.endswith(pack.not_present_endings):
            classes.add(VBN)
        else:
            classes.add(VBZ)  # "pays", "has": a present form, read only where a clause of a subject's stands
    return forms[0] if forms else ""


def _contraction(low: str, tables: _Tables) -> bool:
    return low in tables.literals or low in tables.classes


def _names(words: list[Word], sentence: str) -> tuple[Word, ...]:
    """Consecutive names as one name ("Zeta Corp", "San Francisco")."""
    out: list[Word] = []
    for w in words:
        last = out[-1] if out else None
        if last is not None and last.classes == {NAME} and w.classes == {NAME} and sentence[last.end : w.start] == " ":
            out[-1] = structs.replace(last, text=sentence[last.start : w.end], norm=f"{last.norm} {w.norm}", end=w.end)
        else:
            out.append(w)
    return tuple(out)
