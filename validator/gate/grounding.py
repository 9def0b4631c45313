"""Where an argument value came from, compared as a value, never as a substring.

A value is **grounded** only when it stands in the user's request (a sentence of their own words
that the cited evidence stands in, outside any clause a negation governs) or a cited standing
authorization allows it. Entities are compared by their parsed identity
(:mod:`validator.gate.entities`), numbers as numbers (with their currency when both sides name
one; a time of day is not a quantity), and anything else as a whole token: ``team@acme.example``
is not found in ``legal-team@acme.example``, ``t-88`` not in ``t-889``.

A value that is not grounded is reported with where it does stand: in the user's messages but not
in the request (another turn, a forbidding clause, pasted text), only in a tool output or the
agent's text (and whose), or nowhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from validator.findings import Location, RequestSentence, ValueFinding
from validator.gate.authorizations import StandingAuthorization
from validator.gate.entities import Entity, amounts_in, extract_entities, parse_entity
from validator.gate.index import other_index, outside_authors
from validator.gate.sentences import negated_spans, own_text, sentence_spans
from validator.gate.text import normalize
from validator.inputs.transcript import Transcript

__all__ = ["UNREADABLE", "as_number", "ground_value"]

MAX_LOCATIONS = 5
UNREADABLE = object()
"""A target the gate could not read (the arguments do not have the shape the policy names)."""
_TOKEN_CHAR = re.compile(r"[\w.@\-/+:]")
_NUMERIC = re.compile(r"^-?\d+(?:\.\d+)?$")
_SAME_KIND = {"url": "host", "domain": "host"}


def as_number(value: Any) -> Decimal | None:
    """A plain number (an int, a float, or a string of digits with one optional point); None otherwise.

    Exponents (``4e2``), ``NaN``, infinities and booleans are not numbers here.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        try:
            number = Decimal(repr(value))
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    if isinstance(value, str) and _NUMERIC.match(value.strip()):
        return Decimal(value.strip())
    return None


def _allowed(text: str) -> str:
    """``text`` with every clause a negation governs blanked out (positions kept)."""
    spans = negated_spans(text)
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = "\x00" * (end - start)
    return "".join(chars)


def _identity(entity: Entity) -> tuple[str, str]:
    return _SAME_KIND.get(entity.kind, entity.kind), entity.key


def _holds_token(text: str, value: str) -> bool:
    needle, hay = normalize(value), normalize(text)
    if not needle:
        return False
    pos = hay.find(needle)
    while pos != -1:
        end = pos + len(needle)
        before = hay[pos - 1] if pos else " "
        after = hay[end] if end < len(hay) else " "
        if not _TOKEN_CHAR.match(before) and not (_TOKEN_CHAR.match(after) and after not in ".:"):
            return True
        pos = hay.find(needle, pos + 1)
    return False


def _holds(text: str, value: Any, entity: Entity | None, currency: str | None) -> bool:
    """Whether ``text`` holds ``value`` as a value."""
    if entity is not None:
        wanted = _identity(entity)
        return any(_identity(e) == wanted for e in extract_entities(text))
    number = as_number(value)
    if number is not None:
        return any(
            a.value == number and not a.is_time and (currency is None or a.currency in (None, currency))
            for a in amounts_in(text)
        )
    return isinstance(value, str) and _holds_token(text, value)


def _user_texts(transcript: Transcript) -> Iterable[tuple[int, str]]:
    for i, m in enumerate(transcript.messages):
        if m.role == "user":
            own = own_text(m.content)
            yield i, "\n".join(own[s:e] for s, e in sentence_spans(own))


def _locations(transcript: Transcript, hits: Iterable[int]) -> tuple[Location, ...]:
    return tuple(Location(i, transcript[i].role, transcript[i].speaker) for i in list(hits)[:MAX_LOCATIONS])


def ground_value(
    transcript: Transcript,
    requests: Sequence[RequestSentence],
    path: str,
    value: Any,
    *,
    kind: str | None = None,
    scope_path: str | None = None,
    authorizations: Sequence[StandingAuthorization] = (),
    currency: str | None = None,
) -> ValueFinding:
    """Where one argument value came from: the user's request, a cited authorization, elsewhere, nowhere."""
    if value is UNREADABLE:
        return ValueFinding(path, None, "unreadable", kind)
    if value is None or (isinstance(value, str) and not value.strip()):
        return ValueFinding(path, value, "absent", kind)
    entity = parse_entity(value) if isinstance(value, str) else None
    kind = kind or (entity.kind if entity else ("amount" if currency else None))
    note = entity.note if entity else None
    for auth in authorizations:
        if auth.allows(scope_path or path, value):
            return ValueFinding(path, value, "authorization", kind, authorization_id=auth.id, note=note)
    if isinstance(value, bool):
        return ValueFinding(path, value, "not_found", kind, note=note)
    hits = [r.message for r in requests if _holds(_allowed(r.text), value, entity, currency)]
    if hits:
        return ValueFinding(path, value, "user", kind, _locations(transcript, hits), note=note)
    elsewhere = [i for i, text in _user_texts(transcript) if _holds(text, value, entity, currency)]
    if elsewhere:
        return ValueFinding(path, value, "user_elsewhere", kind, _locations(transcript, elsewhere), note=note)
    literal = normalize(entity.value if entity else str(value))
    found = other_index(transcript).find_text(literal, MAX_LOCATIONS) if literal else []
    if not found and isinstance(value, str) and ("@" in value or "://" in value):  # a sender's address or page
        found = list(outside_authors(transcript).get(value.strip().casefold(), ()))
    return ValueFinding(
        path, value, "not_from_user" if found else "not_found", kind, _locations(transcript, found), note=note
    )
