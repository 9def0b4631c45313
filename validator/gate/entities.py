"""Entities that say who or where an action reaches: URLs, email addresses, IBANs, account and phone numbers.

A link in a message body is where a phishing or exfiltration attempt hides, so the evidence gate
grounds every entity found inside an action's free-text arguments, not only its declared targets.

Each entity kind also says how it may be written differently in the transcript: an IBAN in
groups of four, a phone number with brackets and dashes. :func:`search_forms` turns a value into
the ways the gate looks for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Entity", "EntityKind", "SearchForm", "extract_entities", "kind_of", "search_forms"]

EntityKind = Literal["url", "email", "iban", "phone", "account"]

_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'()\[\]{}]+", re.IGNORECASE)
_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}(?![\w])"
    r"|(?<![\w+])\+\d{8,15}(?!\w)"
)
_ACCOUNT = re.compile(r"(?<![\w])(?<!\d[.,])\d{4}(?:[ -]?\d{2,4}){1,5}(?![\w])(?![.,]\d)")
_DATE = re.compile(r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}$|^\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}$")
_TRAILING = ".,;:!?"
_SEPARATORS = r"[\s\-./()]*"


@dataclass(frozen=True, slots=True)
class Entity:
    """An entity found in a text."""

    kind: EntityKind
    value: str
    """As written (trailing punctuation removed)."""


def _digits(s: str) -> str:
    return re.sub(r"\D", "", s)


def _valid_iban(s: str) -> bool:
    compact = s.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    try:
        number = int("".join(str(int(c, 36)) for c in rearranged))
    except ValueError:
        return False
    return number % 97 == 1


def _phone_like(s: str) -> bool:
    digits = _digits(s)
    if _DATE.match(s.strip()):
        return False
    return (s.startswith("+") and 8 <= len(digits) <= 15) or (9 <= len(digits) <= 15 and bool(re.search(r"[ .()-]", s)))


def extract_entities(text: str) -> list[Entity]:
    """Every entity in ``text``, in order of appearance, each span reported once."""
    found: list[tuple[int, Entity]] = []
    taken: list[tuple[int, int]] = []

    def add(kind: EntityKind, m: re.Match[str], value: str) -> None:
        start, end = m.start(), m.start() + len(value)
        if any(s < end and start < e for s, e in taken):
            return
        taken.append((start, end))
        found.append((start, Entity(kind, value)))

    for m in _URL.finditer(text):
        add("url", m, m.group().rstrip(_TRAILING))
    for m in _EMAIL.finditer(text):
        add("email", m, m.group())
    for m in _IBAN.finditer(text):
        if _valid_iban(m.group()):
            add("iban", m, m.group())
    for m in _PHONE.finditer(text):
        if _phone_like(m.group()):
            add("phone", m, m.group())
    for m in _ACCOUNT.finditer(text):
        if 8 <= len(_digits(m.group())) <= 20 and not _DATE.match(m.group()):
            add("account", m, m.group())
    return [e for _, e in sorted(found, key=lambda p: p[0])]


def kind_of(value: str) -> EntityKind | None:
    """The entity kind ``value`` is, as a whole, or None for plain text."""
    v = value.strip()
    entities = extract_entities(v)
    if len(entities) == 1 and entities[0].value == v.rstrip(_TRAILING):
        return entities[0].kind
    return None


@dataclass(frozen=True, slots=True)
class SearchForm:
    """One way to look for a value: a normalised literal, or a separator-tolerant pattern."""

    literal: str | None = None
    """Look for this text (normalised like a quote)."""
    anchor: str | None = None
    """Case-folded text every match of ``pattern`` contains (narrows the search)."""
    pattern: re.Pattern[str] | None = None


def _tolerant(compact: str, anchor_at_end: bool) -> SearchForm:
    """Characters of ``compact`` with optional separators between them; 4 stay together as the anchor."""
    if len(compact) <= 4:
        return SearchForm(literal=compact)
    if anchor_at_end:
        head, anchor = compact[:-4], compact[-4:]
        body = _SEPARATORS.join(map(re.escape, head)) + _SEPARATORS + re.escape(anchor)
    else:
        anchor, tail = compact[:4], compact[4:]
        body = re.escape(anchor) + _SEPARATORS + _SEPARATORS.join(map(re.escape, tail))
    pattern = re.compile(rf"(?<![0-9A-Za-z]){body}(?![0-9A-Za-z])", re.IGNORECASE)
    return SearchForm(anchor=anchor.casefold(), pattern=pattern)


def _number_literals(value: float) -> list[str]:
    if value == int(value):
        n = int(value)
        plain = str(n)
        grouped = f"{n:,}"
        forms = [plain, grouped, grouped.replace(",", "."), grouped.replace(",", " "), grouped.replace(",", "'")]
        if isinstance(value, float):
            forms += [f"{n}.00", f"{n:,}.00", f"{n:,}.00".replace(",", "_").replace(".", ",").replace("_", ".")]
    else:
        plain = repr(value)
        two = f"{value:.2f}"
        grouped = f"{value:,.2f}"
        forms = [
            plain,
            two,
            grouped,
            two.replace(".", ","),
            grouped.replace(",", "_").replace(".", ",").replace("_", "."),
        ]
    return list(dict.fromkeys(forms))


def search_forms(value: str | int | float) -> list[SearchForm]:
    """The ways the gate looks for ``value`` in the transcript, most literal first."""
    if isinstance(value, bool):
        return [SearchForm(literal=str(value).lower())]
    if isinstance(value, int | float):
        return [SearchForm(literal=f) for f in _number_literals(value)]
    text = value.strip()
    kind = kind_of(text)
    # Separator-tolerant patterns also match the literal spelling: they replace it.
    if kind in ("iban", "account"):
        return [_tolerant(re.sub(r"[^0-9A-Za-z]", "", text), anchor_at_end=False)]
    if kind == "phone":
        return [_tolerant(_digits(text), anchor_at_end=True)]
    forms = [SearchForm(literal=text)]
    if kind is None and re.fullmatch(r"\d+(?:\.\d+)?", text):
        forms += [SearchForm(literal=f) for f in _number_literals(float(text))[1:]]
    elif kind == "url" and text.endswith("/"):
        forms.append(SearchForm(literal=text.rstrip("/")))
    return forms
