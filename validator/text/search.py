"""Text normalisation and verbatim search over a transcript.

A quote matches a message when, after **whitespace, case and quote-mark normalisation** and
nothing else, it stands inside the message and starts and ends on word boundaries. Nothing
else is forgiven: no Unicode compatibility folding, no stemming, no fuzzy distance.

Search is built for long transcripts: the messages of a role group are normalised once, joined
into one string, and searched with ``str.find``. The cost is a few C-speed passes over the text,
not a Python loop over its characters.
"""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Callable
from itertools import accumulate

import msgspec

from validator.text.patterns import compiled

__all__ = ["MAX_MISSES", "QUOTE_MARKS", "SearchBudgetExceeded", "TextIndex", "compact", "find_bounded", "normalize"]

QUOTE_MARKS = (
    "'\"`\u00b4\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2032\u2033\u2035\u2036"
    "\u00ab\u00bb\u2039\u203a\u300c\u300d\u300e\u300f\uff02\uff07"
)
"""Every character treated as a quote mark; all of them normalise to ``"``."""

_SPACES = "".join(filter(str.isspace, map(chr, range(0x3000 + 1))))  # U+3000 is the last
_QUOTES_AND_SPACE = str.maketrans({**{c: '"' for c in QUOTE_MARKS}, **{c: " " for c in _SPACES}})
_QUOTE = f"[{re.escape(QUOTE_MARKS)}]"
_SPACE = f"[{re.escape(_SPACES.replace(' ', ''))}]"
"""(Sources of the patterns a text past ASCII is read by: compiled at the first such text.)"""


def _marked(text: str) -> str:
    """``text`` with every quote mark ``"`` and every whitespace character a space (the same length). A text with a
    character past ASCII is read by patterns, in C: ``str.translate`` looks each of its characters up in a dict
    (70 ns a character: 30 ms for a conversation of half a megabyte), where an ASCII text takes its own path."""
    if text.isascii():
        return text.translate(_QUOTES_AND_SPACE)
    return compiled(_SPACE).sub(" ", compiled(_QUOTE).sub('"', text))


_SEP = "\x00"
_UNSTABLE = re.compile('[ "]')
_FEW = 32


def normalize(text: str) -> str:
    """Case-fold, turn every quote mark into ``"`` and collapse whitespace runs to one space."""
    return " ".join(_marked(text.casefold()).split())


def compact(text: str) -> str:
    """Letters and digits only, case-folded: a value however it is spaced or signed ("DE44 5001 …", "sk_/liv/…")."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


MAX_MISSES = 2_000
"""Occurrences of a needle that fail their word boundaries before a search gives up (periodic text)."""
_NONWORD = re.compile(r"[^\w]")


class SearchBudgetExceeded(Exception):
    """A verbatim search met more boundary misses than :data:`MAX_MISSES` (adversarial, periodic text), or the
    gate's time budget ran out (:func:`within`)."""


def within(deadline: float | None, stage: str, clock: Callable[[], float] | None = None) -> None:
    """Raise :class:`SearchBudgetExceeded` past ``deadline`` (a ``time.perf_counter()`` value; None: no budget),
    saying in which ``stage``: every loop of the gate over messages calls it, so a check past its budget stops
    its work, not only its answer. ``clock``: the caller's own (default ``time.perf_counter``)."""
    if deadline is not None and (clock or time.perf_counter)() > deadline:
        raise SearchBudgetExceeded(f"the gate's time budget ran out while {stage}")


def _next_candidate(haystack: str, needle: str, pos: int, check_start: bool) -> int:
    """The next place ``needle`` may stand after a miss at ``pos``: past the next non-word character when the
    needle must start a word (a needle starting a word cannot start inside one), else one further."""
    if check_start:
        boundary = _NONWORD.search(haystack, pos + 1)
        return -1 if boundary is None else haystack.find(needle, boundary.end())
    return haystack.find(needle, pos + 1)


def find_bounded(haystack: str, needle: str) -> int:
    """Index of the first occurrence of ``needle`` in ``haystack`` on word boundaries, else -1.

    A boundary is only required where the needle itself begins or ends with a word character:
    quoting ``pay`` must not match inside ``repay``, but ``"pay"`` may follow a letter. After a miss
    the search resumes at the next word start, so its cost stays linear; more than
    :data:`MAX_MISSES` misses raise :class:`SearchBudgetExceeded`.
    """
    if not needle:
        return -1
    check_start = _is_word(needle[0])
    check_end = _is_word(needle[-1])
    start = haystack.find(needle)
    misses = 0
    while start != -1:
        end = start + len(needle)
        ok_start = not check_start or start == 0 or not _is_word(haystack[start - 1])
        ok_end = not check_end or end == len(haystack) or not _is_word(haystack[end])
        if ok_start and ok_end:
            return start
        misses += 1
        if misses > MAX_MISSES:
            raise SearchBudgetExceeded(f"more than {MAX_MISSES} near-matches of a {len(needle):,}-character text")
        start = _next_candidate(haystack, needle, start, check_start)
    return -1


def _starts(lengths: list[int]) -> list[int]:
    """Where each message starts in the joined string (one separator between messages)."""
    starts = list(accumulate(map((1).__add__, lengths), initial=0))
    starts.pop()
    return starts


class _View(msgspec.Struct, frozen=True):
    """One searchable string over a group of messages and where each message starts in it."""

    text: str
    starts: list[int]

    def message_at(self, pos: int) -> tuple[int, int]:
        """Group-local index of the message holding ``pos``, and where the next one starts."""
        i = bisect.bisect_right(self.starts, pos) - 1
        return i, self.starts[i + 1] if i + 1 < len(self.starts) else len(self.text)

    def seek(self, needle: str, newest: bool, past: int | None = None) -> int:
        """Where ``needle`` stands next: the first place (with ``newest`` the last), or, ``past`` message ``past``,
        the first place in a later message (with ``newest`` the last place in an earlier one); -1 where none."""
        if past is None:
            return self.text.rfind(needle) if newest else self.text.find(needle)
        if newest:
            return self.text.rfind(needle, 0, self.starts[past])
        return self.text.find(needle, self.starts[past + 1]) if past + 1 < len(self.starts) else -1

    def find(self, needle: str, limit: int, *, newest: bool = False) -> list[int]:
        """Group-local indices of up to ``limit`` messages holding ``needle`` on word boundaries, in the order
        found: the first ones, or with ``newest`` the last ones (searched from the end)."""
        hits: list[int] = []
        hay = self.text
        check_start, check_end = _is_word(needle[0]), _is_word(needle[-1])
        pos = self.seek(needle, newest)
        misses = 0
        while pos != -1 and len(hits) < limit:
            end = pos + len(needle)
            if (not check_start or pos == 0 or not _is_word(hay[pos - 1])) and (
                not check_end or end == len(hay) or not _is_word(hay[end])
            ):
                i, _ = self.message_at(pos)
                hits.append(i)
                pos = self.seek(needle, newest, past=i)
            else:
                misses += 1
                if misses > MAX_MISSES:
                    raise SearchBudgetExceeded(
                        f"more than {MAX_MISSES} near-matches of a {len(needle):,}-character text"
                    )
                # from the end, the next candidate starts before this one (each miss moves on by a character)
                pos = hay.rfind(needle, 0, end - 1) if newest else _next_candidate(hay, needle, pos, check_start)
        return hits

    def holds(self, i: int, needle: str) -> bool:
        """Whether message ``i`` holds ``needle`` on word boundaries, as this view spells it."""
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self.text)
        return find_bounded(self.text[self.starts[i] : end], needle) != -1

    def joined(self, more: _View) -> _View:
        """This view and then ``more``, one separator between them."""
        offset = len(self.text) + 1
        return _View(self.text + _SEP + more.text, self.starts + [offset + s for s in more.starts])

    def collapsed(self) -> _View:
        """The same view with every run of spaces made one space (only the runs are touched)."""
        hay = self.text
        ends = [*self.starts[1:], len(hay) + 1]
        lengths = [end - start - 1 for start, end in zip(self.starts, ends, strict=True)]
        pieces: list[str] = []
        prev = 0
        pos = hay.find("  ")
        while pos != -1:
            end = pos + 2
            while end < len(hay) and hay[end] == " ":
                end += 1
            pieces.append(hay[prev : pos + 1])
            lengths[bisect.bisect_right(self.starts, pos) - 1] -= end - pos - 1
            prev = end
            pos = hay.find("  ", end)
        pieces.append(hay[prev:])
        return _View("".join(pieces), _starts(lengths))


class TextIndex:
    """Searchable view of a group of messages.

    The messages are joined with a separator and case-folded once, so a normalised needle is
    looked up with ``str.find`` over one string and never matches across two messages. Where the
    text has the needle's exact spacing and quote marks (as a rule: agents copy what they quote),
    that first look decides. Otherwise a second look normalises fully: the few messages holding
    the needle's longest word one by one, or, when that word is common, the whole group once
    (quote marks unified, whitespace runs collapsed; cached). A needle is found exactly when
    :func:`normalize` on some message would find it; the locations reported are those of the first
    look that finds any. ``positions`` are the transcript indices of the messages in this group,
    in order.
    """

    def __init__(self, positions: tuple[int, ...], texts: tuple[str, ...]) -> None:
        self.positions = positions
        self.texts = texts
        # A separator inside a message only acts as a boundary there: starts come from lengths.
        folded = _SEP.join(texts).casefold()
        lengths = [len(t) for t in texts]
        if len(folded) != sum(lengths) + max(len(texts) - 1, 0):  # case folding grew characters (ß -> ss)
            lengths = [len(t.casefold()) for t in texts]
        self._exact = _View(folded, _starts(lengths))
        self._normalised: _View | None = None

    def extended(self, positions: tuple[int, ...], texts: tuple[str, ...]) -> TextIndex:
        """This index with more messages after its own: only the new texts are folded."""
        if not texts:
            return self
        if not self.texts:
            return TextIndex(positions, texts)
        more = TextIndex(positions, texts)
        grown = object.__new__(TextIndex)
        grown.positions = self.positions + positions
        grown.texts = self.texts + texts
        grown._exact = self._exact.joined(more._exact)
        # Runs of spaces never cross the separator: the new part is normalised on its own.
        grown._normalised = None if self._normalised is None else self._normalised.joined(more._full())
        return grown

    def _full(self) -> _View:
        """The group with quote marks unified and every whitespace run made one space (built once)."""
        if self._normalised is None:
            view = _View(_marked(self._exact.text), self._exact.starts)
            self._normalised = view.collapsed() if "  " in view.text else view
        return self._normalised

    def find_text(self, needle: str, limit: int, *, newest: bool = False) -> list[int]:
        """Transcript indices of up to ``limit`` messages holding the normalised ``needle``, in order: the first
        such messages, or with ``newest`` the last ones (what a quote stands for: the user's latest words)."""
        if not needle or _SEP in needle:
            return []
        exact = self._exact
        # The longest piece without spaces or quote marks stands verbatim in the case-folded text
        # of every message the needle can match: scanning for it finds the candidates.
        anchor = max(_UNSTABLE.split(needle), key=len)
        hits: list[int] = []
        missed: list[int] = []
        pos = exact.seek(anchor, newest) if anchor else -1
        while pos != -1 and len(hits) < limit and len(missed) <= _FEW:  # each candidate's message, then past it
            i, _ = exact.message_at(pos)
            (hits if exact.holds(i, needle) else missed).append(i)
            pos = exact.seek(anchor, newest, past=i)
        if not hits:
            hits = self._second_look(needle, limit, anchor, missed, newest)
        return sorted(self.positions[i] for i in hits[:limit])

    def _second_look(self, needle: str, limit: int, anchor: str, missed: list[int], newest: bool) -> list[int]:
        """What the first look missed, in the order it looked (newest first with ``newest``)."""
        if anchor and len(missed) <= _FEW:  # every candidate was seen: normalise them one by one
            return [i for i in missed if find_bounded(normalize(self.texts[i]), needle) != -1]
        # A common anchor: look for the needle itself, then normalise the whole group once.
        return self._exact.find(needle, limit, newest=newest) or self._full().find(needle, limit, newest=newest)

    def containing(self, anchor: str, limit: int) -> list[int]:
        """Transcript indices of up to ``limit`` messages whose case-folded text contains ``anchor`` anywhere."""
        hits: list[int] = []
        if not anchor or _SEP in anchor:
            return hits
        view, folded = self._exact, anchor.casefold()
        pos = view.seek(folded, False)
        while pos != -1 and len(hits) < limit:
            i, _ = view.message_at(pos)
            hits.append(self.positions[i])
            pos = view.seek(folded, False, past=i)
        return hits

    def find_pattern(self, anchor: str, pattern: re.Pattern[str], limit: int) -> list[int]:
        """Transcript indices of up to ``limit`` messages where ``pattern`` matches.

        ``anchor`` (case-folded, no whitespace) must stand in every text the pattern can match; it
        narrows the messages the regular expression is run on.
        """
        hits: list[int] = []
        if not anchor or _SEP in anchor or " " in anchor:
            return hits
        view = self._exact
        pos = view.seek(anchor, False)
        while pos != -1 and len(hits) < limit:
            i, _ = view.message_at(pos)
            if pattern.search(self.texts[i]):
                hits.append(self.positions[i])
            pos = view.seek(anchor, False, past=i)
        return hits
