"""The user's own words: which parts of a user message are theirs, and the sentences the evidence cites.

A user message may hold text the user did not write: a forwarded email, a quoted reply (``>``
lines), a header block (``From:`` / ``Subject:``), a code block, a passage in quotation marks, or
whatever follows a lead-in such as "the vendor wrote:". Those are :func:`pasted_spans`: never the
user's words, for the gate (a quote found only there is not user evidence) and for the judge (a
request there is not the user's request).

The *request* of a cited quote is the whole sentence (or sentences) of the user's own words it
stands in (:func:`request_sentences`): values are grounded only there, and the strict judge reads
the request grammar there. Inside a sentence, :func:`negated_spans` are the clauses a negation
governs ("never send anything to eve@…", "…, not eve@…"): a value there is forbidden, not chosen.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence

from validator import rules
from validator.findings import RequestSentence
from validator.gate.text import QUOTE_MARKS, find_bounded, normalize
from validator.inputs.transcript import Transcript

__all__ = [
    "APOSTROPHES",
    "fold_apostrophes",
    "locate",
    "negated_spans",
    "blank",
    "own_text",
    "pasted_by_message",
    "pasted_spans",
    "request_sentences",
    "sentence_spans",
]

APOSTROPHES = "\u2019\u2018\u02bc\u02b9\u02bb\u02bd\uff07\u00b4\u0060\u2032"
"""Characters used as an apostrophe (U+2019, U+02BC, ...): all read as ``'``."""
_APOS = str.maketrans({c: "'" for c in APOSTROPHES})
_QUOTES_AND_SPACE = str.maketrans({**{c: '"' for c in QUOTE_MARKS}})
_HIDDEN = "\x00"
_FORWARD = re.compile(r"(?im)^[ \t>]*-{2,}\s*(?:forwarded message|original message|begin forwarded message)\b.*$")
_HEADER = re.compile(r"(?im)^[ \t]*(?:from|to|cc|bcc|sent|date|subject|reply-to)[ \t]*:.*$")
_QUOTED_LINE = re.compile(r"(?m)^[ \t]*>.*$")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_PAIRS = {'"': '"', "\u201c": "\u201d", "\u201e": "\u201c", "\u00ab": "\u00bb", "\u300c": "\u300d", "\u2033": "\u2033"}
_LEAD_IN = re.compile(
    r"(?i)\b(?:wrote|writes|said|says|asked|asks|replied|replies|forwarded|reads|got this|received this|"
    r"sent this|sent me this|the following|message|e-?mail|text|note|letter|invoice)\b[^.!?\n:]{0,60}:[ \t]*(?=\S)"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n|\n(?=\s*[-*•\d]+[.)]?\s)|\n")
_CONTRAST = re.compile(r"\b(?:but|instead|rather|however|although|though)\b")
_WORD = re.compile(r"[\w']+")
NEGATIONS = frozenset(
    {
        "not",
        "no",
        "never",
        "none",
        "nobody",
        "nothing",
        "neither",
        "nor",
        "without",
        "cannot",
        "avoid",
        "refrain",
        "stop",
        "skip",
        "cancel",
        "except",
        "excluding",
        "forget",
        "ignore",
        "refuse",
        "against",
        "instead",
        "rather",
        "dont",
        "nope",
    }
)
"""Words that forbid what follows them in their clause (with every ``...n't`` form)."""


_NOT_NEGATING = frozenset({"worries", "problem", "problems", "rush", "hurry", "doubt", "matter", "wonder"})


def fold_apostrophes(text: str) -> str:
    """``text`` with every apostrophe look-alike read as ``'``."""
    return text.translate(_APOS)


def is_negation(word: str) -> bool:
    """Whether one (lower-case, apostrophe-folded) word negates: a listed word or any ``...n't``."""
    return word in NEGATIONS or word.endswith("n't") or word in ("dont", "wont", "cant", "didnt", "doesnt")


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        elif end > start:
            out.append((start, end))
    return out


_OPENER = re.compile("[" + "".join(_PAIRS) + "]")


def _quotation_spans(text: str) -> list[tuple[int, int]]:
    """Passages in quotation marks of three words or more: someone else's words, or words to pass on.

    Linear: each quotation mark is looked at once, by C-speed searches.
    """
    spans: list[tuple[int, int]] = []
    opener = _OPENER.search(text)
    while opener is not None:
        i = opener.start()
        j = text.find(_PAIRS[text[i]], i + 1)
        if j == -1:
            break
        if len(_WORD.findall(text, i + 1, j)) >= 3:
            spans.append((i, j + 1))
        opener = _OPENER.search(text, j + 1)
    return spans


def pasted_spans(text: str) -> list[tuple[int, int]]:
    """Parts of a user message the user did not write (forwarded, quoted, pasted), as ``(start, end)``."""
    spans: list[tuple[int, int]] = []
    if ">" in text:
        spans += [m.span() for m in _QUOTED_LINE.finditer(text)]
    if "```" in text:
        spans += [m.span() for m in _FENCE.finditer(text)]
    if "--" in text and (forward := _FORWARD.search(text)) is not None:
        spans.append((forward.start(), len(text)))
    if ":" in text:  # header blocks and lead-ins all have a colon
        headers = list(_HEADER.finditer(text))
        for first, second in itertools.pairwise(headers):
            if text[first.end() : second.start()].strip() == "":  # two header lines in a row: a pasted email
                spans.append((first.start(), len(text)))
                break
        for m in _LEAD_IN.finditer(text):
            end = text.find("\n\n", m.end())
            spans.append((m.end(), len(text) if end == -1 else end))
    spans += _quotation_spans(text)
    return _merge(spans)


def own_text(text: str) -> str:
    """``text`` with every pasted part blanked out (same length, so positions still hold)."""
    return blank(text, pasted_spans(text))


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with ``spans`` blanked out (same length, so positions still hold)."""
    if not spans:
        return text
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        pieces += [text[last:start], _HIDDEN * (end - start)]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text`` as ``(start, end)``, blank and hidden stretches left out."""
    spans: list[tuple[int, int]] = []
    last = 0
    for m in _SENTENCE_END.finditer(text):
        spans.append((last, m.start()))
        last = m.end()
    spans.append((last, len(text)))
    out: list[tuple[int, int]] = []
    for start, end in spans:
        for piece in re.finditer(r"[^\x00]+", text[start:end]):  # pasted parts split a sentence
            s, e = start + piece.start(), start + piece.end()
            while s < e and text[s].isspace():
                s += 1
            while e > s and text[e - 1].isspace():
                e -= 1
            if e > s:
                out.append((s, e))
    return out


def _normalise_with_map(text: str) -> tuple[str, Sequence[int]]:
    """``normalize(text)`` and, for each of its characters, the index it came from in ``text``."""
    norm = normalize(text)
    if len(norm) == len(text) == len(text.casefold()):  # nothing dropped or grown: character i came from i
        return norm, range(len(text))
    out: list[str] = []
    where: list[int] = []
    space = True
    for i, ch in enumerate(text):
        if ch.isspace():
            if not space:
                out.append(" ")
                where.append(i)
                space = True
            continue
        for c in ch.casefold().translate(_QUOTES_AND_SPACE):
            out.append(c)
            where.append(i)
        space = False
    if out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def locate(text: str, needle: str, limit: int = 5) -> list[tuple[int, int]]:
    """Where the normalised ``needle`` stands in ``text``, as ``(start, end)`` of the original text."""
    norm, where = _normalise_with_map(text)
    found: list[tuple[int, int]] = []
    offset = 0
    while len(found) < limit:
        pos = find_bounded(norm[offset:], needle)
        if pos == -1:
            break
        start = offset + pos
        end = start + len(needle)
        found.append((where[start], where[end - 1] + 1))
        offset = start + 1
    return found


def _pasted(transcript: Transcript, start: int = 0) -> dict[int, list[tuple[int, int]]]:
    messages = transcript.messages
    found = {i: pasted_spans(messages[i].content) for i in range(start, len(messages)) if messages[i].role == "user"}
    return {i: spans for i, spans in found.items() if spans}


def _more_pasted(
    found: dict[int, list[tuple[int, int]]], longer: Transcript, start: int
) -> dict[int, list[tuple[int, int]]]:
    more = _pasted(longer, start)
    return {**found, **more} if more else found


def pasted_by_message(transcript: Transcript) -> dict[int, list[tuple[int, int]]]:
    """The pasted parts of every user message that has any, found once per transcript (none when the
    ``pasted-text`` rule is off)."""
    if not rules.on("pasted-text"):
        return {}
    return transcript.memo("gate.pasted", _pasted, _more_pasted)


def _own(transcript: Transcript, i: int) -> str:
    return blank(transcript.messages[i].content, pasted_by_message(transcript).get(i, []))


def request_sentences(
    transcript: Transcript, cited: Iterable[tuple[int, str, Iterable[int]]]
) -> tuple[RequestSentence, ...]:
    """The sentences of the user's own words each cited quote stands in.

    ``cited`` holds ``(evidence index, normalised quote, user message indices)``. A quote that spans
    several sentences gives all of them; one found only in pasted text gives none.
    """
    out: list[RequestSentence] = []
    seen: set[tuple[int, int, int]] = set()
    for index, quote, messages in cited:
        for i in messages:
            own = _own(transcript, i)
            spans = sentence_spans(own)
            for qs, qe in locate(own, quote):
                if _HIDDEN in own[qs:qe]:
                    continue
                for s, e in spans:
                    if s < qe and qs < e and (i, s, e) not in seen:
                        seen.add((i, s, e))
                        out.append(RequestSentence(i, s, e, own[s:e], index))
    return tuple(sorted(out, key=lambda x: (x.message, x.start)))


def negation_before(words: list[str], i: int, window: int = 3) -> bool:
    """Whether one of the ``window`` words before word ``i`` negates it ("no need to pay", "I refuse to pay")."""
    if not rules.on("negation"):
        return False
    for k in range(max(0, i - window), i):
        if is_negation(words[k]) and not (words[k] == "no" and k + 1 < len(words) and words[k + 1] in _NOT_NEGATING):
            return True
    return False


def negated_spans(sentence: str) -> list[tuple[int, int]]:
    """Stretches of ``sentence`` a negation governs: from the negation to the end of the sentence, or
    to the first contrast ("but", "instead", "rather", "however").

    "Never send anything to eve@…" and "Do not, under any circumstances, pay Bob" forbid the rest of
    the sentence; "email bob@…, not eve@…" forbids only what follows "not"; "Don't reply yet, but
    archive it" stops at "but". Erring this way is safe: a value read as forbidden is asked about.
    """
    if not rules.on("negation"):
        return []
    folded = fold_apostrophes(sentence).lower()
    contrasts = [m.start() for m in _CONTRAST.finditer(folded)]
    words = list(_WORD.finditer(folded))
    texts = [w.group() for w in words]
    spans: list[tuple[int, int]] = []
    for k, w in enumerate(words):
        if not is_negation(w.group()):
            continue
        if w.group() == "no" and k + 1 < len(words) and texts[k + 1] in _NOT_NEGATING:
            continue  # "No worries, please pay Bob"
        end = next((c for c in contrasts if c > w.end()), len(folded))
        spans.append((w.start(), end))
    return _merge(spans)
