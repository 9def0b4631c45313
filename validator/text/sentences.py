"""The user's own words: which parts of a user message are theirs, and the sentences the evidence cites.

Text in a user message is another party's only when the message **attributes** it: a lead-in
naming a sender or a document with a verb of writing or saying ("the vendor wrote:", "here's the
invoice:"), a forward marker, a header block (``From:`` / ``Subject:``), quoted ``>`` lines. Those
are :func:`pasted_spans`: never the user's words, for the gate (a quote found only there is not
user evidence) and for the judge (a request there is not the user's request). "Perform the
following tasks:" attributes nothing: the list after it is the user's own.

Where attribution is unclear (a passage in quotation marks, a code block) the authorship of the
span is *unknown*: :func:`unclear_spans`. A quote found there is still found in the user's
message, but no request is read from it.

The *request* of a cited quote is the whole sentence (or sentences) of the user's own words it
stands in (:func:`request_sentences`): values are grounded only there, and the strict judge reads
the request grammar there. Inside a sentence, :func:`negated_spans` are the clauses a negation
governs ("never send anything to eve@…", "…, not eve@…"): a value there is forbidden, not chosen.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import lru_cache

from validator.findings import RequestSentence
from validator.inputs.transcript import Fact, Transcript
from validator.language import LEAD_IN_STOPS, LanguagePack, english
from validator.language.rules import ALL_ON, Rule, Rules
from validator.text.lexer import OPAQUE
from validator.text.search import QUOTE_MARKS, find_bounded, normalize
from validator.text.split import sentences

__all__ = [
    "locate",
    "blank",
    "own_text",
    "own_words",
    "pasted_by_message",
    "pasted_spans",
    "request_sentences",
    "sentence_spans",
    "unclear_spans",
]

_QUOTES_AND_SPACE = str.maketrans({**{c: '"' for c in QUOTE_MARKS}})
_HIDDEN = "\x00"
_QUOTED_LINE = re.compile(r"(?m)(?:^|(?<=[.!?:] ))[ \t]*>.*$")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_PAIRS = {'"': '"', "\u201c": "\u201d", "\u201e": "\u201c", "\u00ab": "\u00bb", "\u300c": "\u300d", "\u2033": "\u2033"}
_WORD = re.compile(r"[\w']+")


def _alternatives(phrases: Iterable[tuple[str, ...]]) -> str:
    return "|".join(r"\s+".join(re.escape(w) for w in p) for p in sorted(phrases, key=len, reverse=True))


@lru_cache(maxsize=4)
def _patterns(pack: LanguagePack) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The pack's forward markers, header names and attribution lead-ins, as patterns (built once a pack)."""
    forward = re.compile(r"(?im)^[ \t>]*-{2,}\s*(?:" + "|".join(re.escape(m) for m in pack.forward_markers) + r")\b.*$")
    header = re.compile(
        r"(?im)(?:^|(?<=[.!?] ))[ \t]*(?:" + "|".join(re.escape(h) for h in pack.headers) + r")[ \t]*:.*$"
    )
    # (no phrase of them holds a sentence's end or a colon: the pack's loader refuses one, and _lead_ins reads only
    # the sentence before a colon)
    documents = "|".join(re.escape(d) for d in sorted(pack.documents, key=len, reverse=True))
    lead_in = re.compile(
        r"(?i)(?:\b(?:" + _alternatives(pack.attribution_verbs) + r")\b[^.!?\n:]{0,60}"
        r"|(?<![\w'])(?:" + _alternatives(pack.presenters) + r")\s+(?:[\w'-]+\s+){0,3}(?:" + documents + r")\b"
        r"[^.!?\n:]{0,40}):\s*(?=\S)"
    )
    return forward, header, lead_in


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


_NON_SPACE = re.compile(r"\S")


def _lead_ins(text: str, pack: LanguagePack) -> list[re.Match[str]]:
    """The attribution lead-ins of ``text`` ("the vendor wrote: "), exactly as ``finditer`` of the lead-in
    pattern finds them, but reading only the sentence before each colon instead of trying the pattern
    at every position of the text. A lead-in holds no ``.``, ``!``, ``?`` or ``:`` before its own colon (the
    pack's phrases hold none: :func:`validator.language.load_pack` refuses one), so one that ends at a colon starts
    after the last of them; the next match starts where the last one ended."""
    lead_in = _patterns(pack)[2]
    found: list[re.Match[str]] = []
    after = 0  # where the last lead-in ended
    previous = -1  # the last stop seen
    for stop in LEAD_IN_STOPS.finditer(text):
        at = stop.start()
        if text[at] == ":":
            rest = _NON_SPACE.search(text, at + 1)
            if rest is not None:  # a lead-in is followed by text; ``endpos`` keeps its lookahead in sight
                m = lead_in.search(text, max(previous + 1, after), rest.start() + 1)
                if m is not None:
                    found.append(m)
                    after = m.end()
        previous = at
    return found


def pasted_spans(text: str, pack: LanguagePack | None = None) -> list[tuple[int, int]]:
    """Parts of a user message the message attributes to someone else (forwarded, quoted, pasted with a
    lead-in), as ``(start, end)``; ``pack``: the language's markers and lead-ins (English by default)."""
    pack = pack or english()
    forward, header, _ = _patterns(pack)
    spans: list[tuple[int, int]] = []
    if ">" in text:
        spans += [m.span() for m in _QUOTED_LINE.finditer(text)]
    if "--" in text and (found := forward.search(text)) is not None:
        spans.append((found.start(), len(text)))
    if ":" in text:  # header blocks and lead-ins all have a colon
        headers = list(header.finditer(text))
        for first, second in itertools.pairwise(headers):
            if text[first.end() : second.start()].strip() == "":  # two header lines in a row: a pasted email
                spans.append((first.start(), len(text)))
                break
        for m in _lead_ins(text, pack):
            end = text.find("\n\n", m.end())
            spans.append((m.end(), len(text) if end == -1 else end))
    return _merge(spans)


def unclear_spans(text: str, pack: LanguagePack | None = None) -> list[tuple[int, int]]:
    """Parts of a user message whose authorship is unclear: passages in quotation marks (three words or
    more), code blocks, and everything after the first paragraph a lead-in attributes (pasted text
    runs on past a blank line: "The vendor wrote: Hi,\n\nPlease pay…"; where the user's own words
    resume, nothing marks). Quotes may stand there; requests are not read there."""
    spans: list[tuple[int, int]] = []
    if "```" in text:
        spans += [m.span() for m in _FENCE.finditer(text)]
    if ":" in text:
        for m in _lead_ins(text, pack or english()):
            end = text.find("\n\n", m.end())
            if end != -1:
                spans.append((end, len(text)))
                break
    spans += _quotation_spans(text)
    return _merge(spans)


def own_text(text: str, pack: LanguagePack | None = None) -> str:
    """``text`` with every pasted part blanked out (same length, so positions still hold)."""
    return blank(text, pasted_spans(text, pack))


def blank(text: str, spans: list[tuple[int, int]], fill: str = "\x00") -> str:
    """``text`` with ``spans`` blanked out (same length, so positions still hold)."""
    if not spans:
        return text
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        pieces += [text[last:start], fill * (end - start)]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def sentence_spans(text: str, pack: LanguagePack | None = None) -> list[tuple[int, int]]:
    """The sentences of ``text`` as ``(start, end)``, blank and hidden stretches left out (see
    :func:`validator.gate.reader.sentences`: abbreviations, decimals, line breaks and lists)."""
    return [(x.start, x.end) for x in sentences(text, pack)]


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


Spans = dict[int, list[tuple[int, int]]]


def _by_message(name: str, find: Callable[[str, LanguagePack | None], list[tuple[int, int]]]) -> Fact[Spans]:
    """The fact of ``find`` over every user message (only messages with spans are kept), keyed by the pack."""

    def build(transcript: Transcript, key: Hashable = None, start: int = 0) -> Spans:
        messages = transcript.messages
        pack = key if isinstance(key, LanguagePack) else None
        found = {i: find(messages[i].content, pack) for i in range(start, len(messages)) if messages[i].role == "user"}
        return {i: spans for i, spans in found.items() if spans}

    def extend(found: Spans, longer: Transcript, start: int, key: Hashable) -> Spans:
        more = build(longer, key, start)
        return {**found, **more} if more else found

    return Fact(name, build, extend)


PASTED = _by_message("pasted text by message", pasted_spans)
UNCLEAR = _by_message("text of unclear authorship by message", unclear_spans)


def pasted_by_message(transcript: Transcript, rules: Rules = ALL_ON, pack: LanguagePack | None = None) -> Spans:
    """The attributed (pasted) parts of every user message that has any, found once per transcript and language
    (none when the ``pasted-text`` rule is off)."""
    if not rules.on(Rule.PASTED_TEXT):
        return {}
    return transcript.fact(PASTED, pack or english())


def own_words(transcript: Transcript, i: int, rules: Rules = ALL_ON, pack: LanguagePack | None = None) -> str:
    """User message ``i`` with every part that is not provably the user's blanked out: pasted text and the rest
    of unclear authorship to NUL (it splits sentences and is never read), a passage in quotation marks to
    :data:`~validator.text.lexer.OPAQUE` (it stays in its sentence as one quoted passage, whose words are never
    read as a request: "Post a tweet saying '…'"). The text requests are read from."""
    text = transcript.messages[i].content
    hidden, quoted = attributed(transcript, i, rules, pack)
    out = blank(text, hidden)
    return blank(out, quoted, OPAQUE) if quoted else out


def attributed(
    transcript: Transcript, i: int, rules: Rules = ALL_ON, pack: LanguagePack | None = None
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The parts of user message ``i`` that are not provably the user's own words, as ``(hidden, quoted)``:
    pasted text and the rest of unclear authorship (merged spans), and passages in quotation marks outside
    them (which stay in their sentence as one quoted passage)."""
    text = transcript.messages[i].content
    pack = pack or english()
    hidden = list(pasted_by_message(transcript, rules, pack).get(i, []))
    quoted: list[tuple[int, int]] = []
    if rules.on(Rule.PASTED_TEXT):
        unclear = transcript.fact(UNCLEAR, pack).get(i, [])
        quoted = [(a, b) for a, b in unclear if text[a : a + 1] in _PAIRS and not _covered(a, b, hidden)]
        hidden += [span for span in unclear if span not in quoted]
    return _merge(hidden), quoted


def _covered(a: int, b: int, spans: list[tuple[int, int]]) -> bool:
    return any(x < b and a < y for x, y in spans)


def request_sentences(
    transcript: Transcript,
    cited: Iterable[tuple[int, str, Iterable[int]]],
    rules: Rules = ALL_ON,
    pack: LanguagePack | None = None,
) -> tuple[RequestSentence, ...]:
    """The sentences of the user's own words each cited quote stands in.

    ``cited`` holds ``(evidence index, normalised quote, user message indices)``. A quote that spans
    several sentences gives all of them; one found only in pasted text, or in text of unclear
    authorship, gives none; one that runs from the user's words into text they pasted gives the
    user's sentences it covers (the pasted part is never read as a request). A list item carries its
    list's lead-in.
    """
    out: list[RequestSentence] = []
    seen: set[tuple[int, int, int]] = set()
    for index, quote, messages in cited:
        for i in messages:
            own = own_words(transcript, i, rules, pack)
            spans = sentences(own, pack)
            for qs, qe in locate(own, quote) or locate(transcript.messages[i].content, quote):
                for x in spans:
                    if x.start < qe and qs < x.end and (i, x.start, x.end) not in seen:
                        seen.add((i, x.start, x.end))
                        out.append(RequestSentence(i, x.start, x.end, own[x.start : x.end], index, x.lead))
    return tuple(sorted(out, key=lambda x: (x.message, x.start)))
