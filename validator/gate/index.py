"""The transcript's search indexes, built once per transcript: the user's own words, and everything else.

The user index holds the user's messages with every pasted part (a forwarded email, a quoted
reply, a passage in quotation marks) blanked out: only their own words. The other index holds
every message that is not the user's, and the parts the user pasted, at their message's position.
"""

from __future__ import annotations

from validator.gate.sentences import blank, pasted_spans
from validator.gate.text import TextIndex
from validator.inputs.transcript import Transcript

__all__ = ["other_index", "outside_authors", "user_index"]


def _pasted(t: Transcript) -> dict[int, list[tuple[int, int]]]:
    """The pasted parts of every user message that has any (found once per transcript)."""
    found = {i: pasted_spans(m.content) for i, m in enumerate(t.messages) if m.role == "user"}
    return {i: spans for i, spans in found.items() if spans}


def _user(t: Transcript) -> TextIndex:
    pasted = t.memo("gate.pasted", _pasted)
    positions = tuple(i for i, m in enumerate(t.messages) if m.role == "user")
    texts = tuple(blank(t.messages[i].content, pasted[i]) if i in pasted else t.messages[i].content for i in positions)
    return TextIndex(positions, texts)


def _other(t: Transcript) -> TextIndex:
    pasted = t.memo("gate.pasted", _pasted)
    positions: list[int] = []
    texts: list[str] = []
    for i, m in enumerate(t.messages):
        if m.role != "user":
            positions.append(i)
            texts.append(m.content)
        elif i in pasted:
            positions.append(i)
            texts.append("\x00".join(m.content[s:e] for s, e in pasted[i]))
    return TextIndex(tuple(positions), tuple(texts))


def user_index(transcript: Transcript) -> TextIndex:
    """Search index over the user's own words (built once per transcript)."""
    return transcript.memo("gate.user_index", _user)


def other_index(transcript: Transcript) -> TextIndex:
    """Search index over every message that is not the user's, and the text the user pasted (built on
    first use: an action whose evidence all stands in the user's own words never needs it)."""
    return transcript.memo("gate.other_index", _other)


def _authors(transcript: Transcript) -> dict[str, tuple[int, ...]]:
    found: dict[str, list[int]] = {}
    for i, m in enumerate(transcript.messages):
        if m.author:
            found.setdefault(m.author.strip().casefold(), []).append(i)
    return {a: tuple(ix) for a, ix in found.items()}


def outside_authors(transcript: Transcript) -> dict[str, tuple[int, ...]]:
    """Case-folded outside authors of tool messages, each with the messages they wrote."""
    return transcript.memo("gate.authors", _authors)
