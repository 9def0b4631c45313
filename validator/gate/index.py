"""The transcript's search indexes, built once per transcript: the user's own words, and everything else.

The user index holds the user's messages (a ``user`` message whose ``author`` names someone else
than the check's user is not theirs: in a group conversation only the user can authorize) with
every pasted part (a forwarded email, a quoted
reply, a passage in quotation marks) blanked out: only their own words. The other index holds
every message that is not the user's, and the parts the user pasted, at their message's position.
"""

from __future__ import annotations

from validator import rules
from validator.gate.sentences import blank, pasted_by_message
from validator.gate.text import TextIndex
from validator.inputs.transcript import Message, Transcript

__all__ = ["is_users", "other_index", "outside_authors", "user_index"]


def _key(name: str) -> str:
    """A memo key that tells an ablation run (pasted-text off) from a normal one."""
    return name if rules.on("pasted-text") else f"{name}:pasted-off"


def is_users(message: Message, user_id: str | None) -> bool:
    """Whether a message is the check's user's own: role ``user``, and no other ``author`` named."""
    return message.role == "user" and (message.author is None or message.author == user_id)


def _user(t: Transcript, user_id: str | None) -> TextIndex:
    pasted = pasted_by_message(t)
    positions = tuple(i for i, m in enumerate(t.messages) if is_users(m, user_id))
    texts = tuple(blank(t.messages[i].content, pasted[i]) if i in pasted else t.messages[i].content for i in positions)
    return TextIndex(positions, texts)


def _other(t: Transcript, user_id: str | None) -> TextIndex:
    pasted = pasted_by_message(t)
    positions: list[int] = []
    texts: list[str] = []
    for i, m in enumerate(t.messages):
        if not is_users(m, user_id):
            positions.append(i)
            texts.append(m.content)
        elif i in pasted:
            positions.append(i)
            texts.append("\x00".join(m.content[s:e] for s, e in pasted[i]))
    return TextIndex(tuple(positions), tuple(texts))


def user_index(transcript: Transcript, user_id: str | None = None) -> TextIndex:
    """Search index over the user's own words (built once per transcript and user)."""
    return transcript.memo(_key(f"gate.user_index:{user_id}"), lambda t: _user(t, user_id))


def other_index(transcript: Transcript, user_id: str | None = None) -> TextIndex:
    """Search index over every message that is not the user's, and the text the user pasted (built on
    first use: an action whose evidence all stands in the user's own words never needs it)."""
    return transcript.memo(_key(f"gate.other_index:{user_id}"), lambda t: _other(t, user_id))


def _authors(transcript: Transcript) -> dict[str, tuple[int, ...]]:
    found: dict[str, list[int]] = {}
    for i, m in enumerate(transcript.messages):
        if m.author:
            found.setdefault(m.author.strip().casefold(), []).append(i)
    return {a: tuple(ix) for a, ix in found.items()}


def outside_authors(transcript: Transcript) -> dict[str, tuple[int, ...]]:
    """Case-folded outside authors of tool messages, each with the messages they wrote."""
    return transcript.memo("gate.authors", _authors)
