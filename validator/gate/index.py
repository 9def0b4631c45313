"""The transcript's search indexes, built once per transcript: the user's own words, and everything else.

The user index holds the user's messages (a ``user`` message whose ``author`` names someone else
than the check's user is not theirs: in a group conversation only the user can authorize) with
every pasted part (a forwarded email, a quoted
reply, a passage in quotation marks) blanked out: only their own words. The other index holds
every message that is not the user's, and the parts the user pasted, at their message's position.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from validator.inputs.transcript import Fact, Transcript, is_users
from validator.language import LanguagePack, english
from validator.language.rules import ALL_ON, Rules
from validator.text.search import TextIndex
from validator.text.sentences import blank, pasted_by_message

__all__ = ["other_index", "outside_authors", "user_index"]


def _user(
    t: Transcript, user_id: str | None, rules: Rules, pack: LanguagePack, start: int = 0
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Positions and own words of the check's user's messages from ``start`` on."""
    pasted = pasted_by_message(t, rules, pack)
    messages = t.messages
    positions = tuple(i for i in range(start, len(messages)) if is_users(messages[i], user_id))
    texts = tuple(blank(messages[i].content, pasted[i]) if i in pasted else messages[i].content for i in positions)
    return positions, texts


def _other(
    t: Transcript, user_id: str | None, rules: Rules, pack: LanguagePack, start: int = 0
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Positions and texts of everything not the user's own from ``start`` on (pasted parts included)."""
    pasted = pasted_by_message(t, rules, pack)
    positions: list[int] = []
    texts: list[str] = []
    for i, m in enumerate(t.messages[start:], start):
        if not is_users(m, user_id):
            positions.append(i)
            texts.append(m.content)
        elif i in pasted:
            positions.append(i)
            texts.append("\x00".join(m.content[s:e] for s, e in pasted[i]))
    return tuple(positions), tuple(texts)


Parts = Callable[[Transcript, "str | None", Rules, LanguagePack, int], tuple[tuple[int, ...], tuple[str, ...]]]


def _index_fact(name: str, parts: Parts) -> Fact[TextIndex]:
    """The fact of the index over ``parts``, per ``(user id, the rules, the language)`` (whether pasted text is set
    apart, and how it is found): a longer transcript of the same conversation indexes only its new messages."""

    def build(transcript: Transcript, key: Hashable) -> TextIndex:
        return TextIndex(*parts(transcript, *_of_key(key), 0))

    def extend(index: TextIndex, longer: Transcript, start: int, key: Hashable) -> TextIndex:
        return index.extended(*parts(longer, *_of_key(key), start))

    return Fact(name, build, extend)


USER_INDEX = _index_fact("the index of the user's own words", _user)
OTHER_INDEX = _index_fact("the index of everything else", _other)


_Key = tuple[str | None, Rules, LanguagePack]


def _key(user_id: str | None, rules: Rules, pack: LanguagePack | None) -> _Key:
    """The index's key: the user, the rules it is read under (an ablation may not set pasted text apart) and the
    language pasted text is found by."""
    return user_id, rules, pack or english()


def _of_key(key: Hashable) -> _Key:
    if isinstance(key, tuple) and len(key) == 3 and isinstance(key[1], Rules) and isinstance(key[2], LanguagePack):
        return key[0], key[1], key[2]
    return None, ALL_ON, english()


def user_index(
    transcript: Transcript, user_id: str | None = None, rules: Rules = ALL_ON, pack: LanguagePack | None = None
) -> TextIndex:
    """Search index over the user's own words (built once per transcript, user, rules and language)."""
    return transcript.fact(USER_INDEX, _key(user_id, rules, pack))


def other_index(
    transcript: Transcript, user_id: str | None = None, rules: Rules = ALL_ON, pack: LanguagePack | None = None
) -> TextIndex:
    """Search index over every message that is not the user's, and the text the user pasted (built on
    first use: an action whose evidence all stands in the user's own words never needs it)."""
    return transcript.fact(OTHER_INDEX, _key(user_id, rules, pack))


def _authors(transcript: Transcript, key: Hashable = None, start: int = 0) -> dict[str, tuple[int, ...]]:
    found: dict[str, list[int]] = {}
    for i, m in enumerate(transcript.messages[start:], start):
        if m.author:
            found.setdefault(m.author.strip().casefold(), []).append(i)
    return {a: tuple(ix) for a, ix in found.items()}


def _more_authors(
    found: dict[str, tuple[int, ...]], longer: Transcript, start: int, key: Hashable
) -> dict[str, tuple[int, ...]]:
    more = _authors(longer, key, start)
    return {a: found.get(a, ()) + more.get(a, ()) for a in found.keys() | more.keys()} if more else found


def outside_authors(transcript: Transcript) -> dict[str, tuple[int, ...]]:
    """Case-folded outside authors of tool messages, each with the messages they wrote."""
    return transcript.fact(AUTHORS)


AUTHORS: Fact[dict[str, tuple[int, ...]]] = Fact("outside authors", _authors, _more_authors)
"""Case-folded outside authors of tool messages, each with the messages they wrote."""
