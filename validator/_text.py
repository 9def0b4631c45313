"""Text normalisation and verbatim search over a transcript.

A quote matches a message when, after **whitespace, case and quote-mark normalisation** and
nothing else, it stands inside the message and starts and ends on word boundaries. Nothing
else is forgiven: no Unicode compatibility folding, no stemming, no fuzzy distance.

Search is built for long transcripts: the messages are case-folded once into one string per
role group and searched with ``str.find`` for the needle's longest token (its anchor); only the
messages that contain the anchor are normalised in full and checked. The cost is a few C-speed
passes over the text, not a Python loop over its characters.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["QUOTE_MARKS", "TextIndex", "normalize"]

QUOTE_MARKS = (
    "'\"`\u00b4\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2032\u2033\u2035\u2036"
    "\u00ab\u00bb\u2039\u203a\u300c\u300d\u300e\u300f\uff02\uff07"
)
"""Every character treated as a quote mark; all of them normalise to ``"``."""

_QUOTES_AND_SPACE = str.maketrans(
    {**{c: '"' for c in QUOTE_MARKS}, **{chr(c): " " for c in range(0x3000 + 1) if chr(c).isspace()}}
)
_SEP = "\x00"


def normalize(text: str) -> str:
    """Case-fold, turn every quote mark into ``"`` and collapse whitespace runs to one space."""
    return " ".join(text.casefold().translate(_QUOTES_AND_SPACE).split())


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def find_bounded(haystack: str, needle: str) -> int:
    """Index of the first occurrence of ``needle`` in ``haystack`` on word boundaries, else -1.

    A boundary is only required where the needle itself begins or ends with a word character:
    quoting ``pay`` must not match inside ``repay``, but ``"pay"`` may follow a letter.
    """
    if not needle:
        return -1
    check_start = _is_word(needle[0])
    check_end = _is_word(needle[-1])
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        ok_start = not check_start or start == 0 or not _is_word(haystack[start - 1])
        ok_end = not check_end or end == len(haystack) or not _is_word(haystack[end])
        if ok_start and ok_end:
            return start
        start = haystack.find(needle, start + 1)
    return -1


Verifier = Callable[[str, str], bool]
"""``(original message text, normalised message text) -> matched?``"""


@dataclass
class TextIndex:
    """Case-folded, searchable view of a group of messages.

    ``positions`` are the transcript indices of the messages in this group, in order.
    """

    positions: tuple[int, ...]
    texts: tuple[str, ...]
    _folded: str = field(init=False, repr=False)
    _starts: list[int] = field(init=False, repr=False)
    _normalised: dict[int, str] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        joined = _SEP.join(t.replace(_SEP, " ") for t in self.texts)
        folded = joined.casefold().translate(_QUOTES_AND_SPACE)
        if len(folded) == len(joined):
            lengths: Sequence[int] = [len(t) for t in self.texts]
        else:  # case folding grew some characters (ß -> ss): measure each message on its own
            parts = [t.replace(_SEP, " ").casefold() for t in self.texts]
            lengths = [len(p) for p in parts]
        starts, pos = [], 0
        for n in lengths:
            starts.append(pos)
            pos += n + 1
        self._folded = folded
        self._starts = starts

    def normalised(self, i: int) -> str:
        """The fully normalised text of the ``i``-th message of this group (cached)."""
        cached = self._normalised.get(i)
        if cached is None:
            cached = self._normalised[i] = normalize(self.texts[i])
        return cached

    def candidates(self, anchor: str) -> list[int]:
        """Group-local indices of the messages whose folded text contains ``anchor``."""
        found: list[int] = []
        if not anchor or _SEP in anchor:
            return found
        pos = self._folded.find(anchor)
        while pos != -1:
            i = bisect.bisect_right(self._starts, pos) - 1
            found.append(i)
            nxt = self._starts[i + 1] if i + 1 < len(self._starts) else len(self._folded)
            pos = self._folded.find(anchor, nxt)
        return found

    def find_text(self, needle: str, limit: int) -> list[int]:
        """Transcript indices of up to ``limit`` messages holding the normalised ``needle``."""
        if not needle:
            return []
        anchor = max(needle.split(" "), key=len)
        hits: list[int] = []
        for i in self.candidates(anchor):
            if find_bounded(self.normalised(i), needle) != -1:
                hits.append(self.positions[i])
                if len(hits) >= limit:
                    break
        return hits

    def find_pattern(self, anchor: str, pattern: re.Pattern[str], limit: int) -> list[int]:
        """Transcript indices of up to ``limit`` messages where ``pattern`` matches.

        ``anchor`` (case-folded) must stand in every text the pattern can match; it narrows the
        messages the regular expression is run on.
        """
        hits: list[int] = []
        for i in self.candidates(anchor):
            if pattern.search(self.texts[i]):
                hits.append(self.positions[i])
                if len(hits) >= limit:
                    break
        return hits
