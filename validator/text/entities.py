"""Entities that say who or where an action reaches, parsed and compared as values.

A link in a message body is where a phishing or exfiltration attempt hides, so the evidence gate
grounds every entity found inside an action's arguments, not only its declared targets. Each kind
is parsed by the library its field uses, and two entities are the same only when their parsed
identities (:attr:`Entity.key`) are equal, never because one string contains the other:

- email addresses: ``email-validator`` (one ``@``, no quoted local part, an IDNA domain); identity
  ``local@domain`` with the local part case-folded and the domain in ASCII;
- URLs (any scheme) and bare host names (``pay.evil.example/login``, ``bit.ly/x``): ``urllib``
  and the public suffix list (``publicsuffixlist``, bundled, offline); identity the host (ASCII,
  lower case), so ``files.acme.co.uk`` never stands for ``files.acme.co``;
- IBANs: ``python-stdnum`` (compact, case-insensitive, checksum);
- phone numbers: ``phonenumbers`` (E.164; a date or a time is never a phone number);
- account numbers: 8 to 20 digits, identity the digits;
- amounts: a number with its currency when one is written next to it.

Host names that mix scripts (``acme`` spelt with a Cyrillic ``a``, U+0430) are flagged in :attr:`Entity.note`
(``confusable-homoglyphs``). Extraction is linear in the text: it walks runs of non-space
characters once and never backtracks over them.
"""

from __future__ import annotations

import re
import sys
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache
from typing import Literal
from urllib.parse import urlsplit

import msgspec

__all__ = [
    "AMBIGUOUS_CURRENCIES",
    "CURRENCIES",
    "SPECIAL_USE_DOMAINS",
    "Amount",
    "Entity",
    "EntityKind",
    "amounts_in",
    "extract_entities",
    "kind_of",
    "parse_entity",
    "plain_address",
    "settles",
]

EntityKind = Literal["url", "domain", "email", "iban", "phone", "account"]

RESERVED_TLDS = frozenset({"example", "test", "invalid", "localhost", "local", "internal", "onion"})
"""Special-use top-level names (RFC 2606, 6761, 6762): hosts under them are hosts too."""
DEFAULT_REGION = "US"
"""Region for phone numbers written without a country code."""
_EDGE = "<>()[]{}\"'`,;:!?.*"
_RUN = re.compile(r"\S+")
_HANDLE = re.compile(r"^@\w+$")
"""A handle ("@manager"): a name on a service, no address."""
_SCHEME = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{1,15})://")
_HOSTLIKE = re.compile(r"(?i)^(?:www\.)?[\w-]+(?:\.[\w-]+)+(?::\d{1,5})?(?:[/?#]\S*)?$")
_IBAN = re.compile(r"(?i)(?<![0-9a-z])[a-z]{2}\d{2}(?:[ -]?[0-9a-z]){11,30}(?![0-9a-z])")
_ACCOUNT = re.compile(r"(?<![\w.,])\d(?:[ -]?\d){7,19}(?![\w])(?![.,]\d)")

AMBIGUOUS_CURRENCIES: dict[str, frozenset[str]] = {
    "$?": frozenset({"USD", "CAD", "AUD", "NZD", "SGD", "HKD", "TWD", "MXN", "ARS", "CLP", "COP"}),
    "dollar?": frozenset({"USD", "CAD", "AUD", "NZD", "SGD", "HKD", "TWD", "JMD", "BSD", "FJD"}),
    "¥?": frozenset({"JPY", "CNY"}),
    "pound?": frozenset({"GBP", "EGP", "LBP", "SYP", "SDG", "SSP", "GIP", "FKP"}),
    "franc?": frozenset({"CHF", "XOF", "XAF", "XPF", "RWF", "BIF", "GNF", "KMF", "DJF", "CDF"}),
    "crown?": frozenset({"SEK", "NOK", "DKK", "CZK", "ISK"}),
    "rupee?": frozenset({"INR", "PKR", "LKR", "NPR", "MUR", "SCR"}),
    "peso?": frozenset({"MXN", "ARS", "CLP", "COP", "PHP", "UYU", "DOP", "CUP"}),
}
"""A sign or word several countries' currencies share, by the family it names: an amount written with one is
in a currency only where something settles which (the tool's policy declares that currency, or the user's
request names its code): "5000 pounds" from a user in Cairo is no GBP, "$" is not always USD."""

_CODES = (
    "USD",
    "CAD",
    "AUD",
    "NZD",
    "SGD",
    "HKD",
    "MXN",
    "ARS",
    "CLP",
    "PHP",
    "GBP",
    "EGP",
    "CHF",
    "JPY",
    "CNY",
    "SEK",
    "NOK",
    "DKK",
    "CZK",
    "ISK",
    "PLN",
    "INR",
    "PKR",
    "LKR",
    "HUF",
    "BGN",
    "ZAR",
    "BRL",
    "KRW",
    "ILS",
    "AED",
    "THB",
    "IDR",
    "MYR",
    "VND",
    "UAH",
    "XOF",
    "XAF",
)
"""ISO 4217 codes read as currencies (none that is also an English word: "try", "cop", "ron")."""

CURRENCIES: dict[str, str] = {
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "$": "$?",
    "dollar": "dollar?",
    "dollars": "dollar?",
    "buck": "dollar?",
    "bucks": "dollar?",
    "£": "GBP",
    "pound": "pound?",
    "pounds": "pound?",
    "franc": "franc?",
    "francs": "franc?",
    "¥": "¥?",
    "yen": "JPY",
    "yuan": "CNY",
    "rmb": "CNY",
    "crowns": "crown?",
    "rupee": "rupee?",
    "rupees": "rupee?",
    "peso": "peso?",
    "pesos": "peso?",
    "₹": "INR",
    **{code.lower(): code for code in _CODES},
}
"""Currency signs, words and ISO 4217 codes, each to its code, or to its family when several share it
(:data:`AMBIGUOUS_CURRENCIES`)."""


def settles(said: str, currency: str, settled: frozenset[str]) -> bool:
    """Whether an amount the user wrote with ``said`` (a code, or an ambiguous family) is in ``currency``:
    the same code, or a family holding it when ``settled`` (the policy's currency, the codes the request names)
    holds it too."""
    family = AMBIGUOUS_CURRENCIES.get(said)
    if family is None:
        return said == currency
    return currency in family and currency in settled


_CUR = "|".join(sorted((re.escape(c) for c in CURRENCIES), key=len, reverse=True))
_AMOUNT = re.compile(
    rf"(?i)(?<![\w.,])(?:({_CUR})\s?)?(-?\d{{1,3}}(?:[,.'\u00a0\u202f]\d{{3}})+|-?\d+)(?:([.,])(\d{{1,2}}))?(?![\d])"
    rf"(?:\s?({_CUR})(?![a-z]))?"
)
_SEVEN_DIGITS = re.compile(r"\d(?:\D{0,3}\d){6}")
_DATE = re.compile(r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?!\d)|^\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}(?!\d)")
"""A date (and whatever time follows it) is never an account number."""
_TIME_AFTER = re.compile(r"(?i)^\s?(?:am|pm|a\.m\.|p\.m\.|h\b|:\d|o'clock)")


class Entity(msgspec.Struct, frozen=True):
    """An entity found in a text (or a whole argument value)."""

    kind: EntityKind
    value: str
    """As written (surrounding punctuation removed)."""
    key: str
    """Its identity: two entities are the same exactly when kind and key are equal."""
    start: int = 0
    end: int = 0
    note: str | None = None
    """What is odd about it (mixed scripts in a host, an address that does not parse)."""
    link: str = ""
    """For a link or a host: ``scheme|host|path|query`` (lower-case scheme and host, the path without a
    trailing slash, the query as written; empty scheme when none is written). Links are the same only
    when all four are (:func:`same_link`); ``key`` holds the host alone."""


def _link(scheme: str, host: str, path: str, query: str) -> str:
    return "|".join((scheme.lower(), host, path.rstrip("/"), query))


def same_link(wanted: str, given: str) -> bool:
    """Whether the link ``given`` (in the user's words) names the link ``wanted`` (in the action): the
    same host, path and query, and the same scheme, or none written where the action's is http(s)."""
    w, g = wanted.split("|"), given.split("|")
    if w[1:] != g[1:]:
        return False
    return w[0] == g[0] or (not g[0] and w[0] in ("http", "https", ""))


class Amount(msgspec.Struct, frozen=True):
    """A number in a text, with its currency when one is written next to it."""

    value: Decimal
    currency: str | None
    start: int
    end: int
    is_time: bool = False
    """Followed by ``pm``, ``:30`` or the like: a time of day, not a quantity."""


@cache
def _psl() -> object:
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList(accept_unknown=False)


def _known_tld(tld: str) -> bool:
    if tld in RESERVED_TLDS:
        return True
    if not tld.isascii() or not tld.isalpha() or len(tld) < 2:
        return tld.startswith("xn--")
    return bool(_psl().is_public(tld))  # type: ignore[attr-defined]


def _ascii_host(host: str) -> str | None:
    host = host.strip(".").lower()
    if not host or len(host) > 253:
        return None
    try:
        return host.encode("idna").decode("ascii")
    except (UnicodeError, ValueError):
        return None


def _mixed_scripts(text: str) -> str | None:
    if text.isascii():
        return None
    from confusable_homoglyphs import categories, confusables

    if confusables.is_dangerous(text) or confusables.is_confusable(text, preferred_aliases=["latin"]):
        scripts = sorted(categories.unique_aliases(text) - {"COMMON"})
        return "look-alike characters (" + "+".join(scripts) + ")"
    return None


_ATEXT = r"A-Za-z0-9_!#$%&'*+\-/=?^`{|}~"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PLAIN_ADDRESS = re.compile(rf"[{_ATEXT}]+(?:\.[{_ATEXT}]+)*@(?:{_LABEL}\.)+{_LABEL}")
"""An address of ASCII's dot-atom before the ``@`` and host labels after it (:func:`plain_address`)."""
SPECIAL_USE_DOMAINS = ("arpa", "invalid", "local", "localhost", "onion", "test")
"""The names under which ``email-validator`` takes no address (its ``SPECIAL_USE_DOMAIN_NAMES``; a test holds the two
lists equal)."""


def _defaults() -> bool:
    """Whether ``email-validator`` would read with its own defaults: it is not imported yet (a host changes its
    settings after importing it), or its strictness and special-use names are those :func:`plain_address` reads
    by (else every address goes to it)."""
    loaded = sys.modules.get("email_validator")
    if loaded is None:
        return True
    names = getattr(loaded, "SPECIAL_USE_DOMAIN_NAMES", None)
    return getattr(loaded, "STRICT", True) is False and list(names or ()) == list(SPECIAL_USE_DOMAINS)


def plain_address(text: str) -> str | None:
    """The identity (``local@domain``, case folded) of an address ``email-validator`` accepts with the options
    :func:`_email` gives it, decided without it (it compiles tables of all Unicode at its import: some twenty
    milliseconds of a process's first address) for the plainest form of all: ASCII only, the dot-atom before the
    ``@``, host labels of letters, digits and inner hyphens after it (none with ``--``, none over 63 characters, the
    last ending in a letter, under no special-use name), 254 characters at most. None for any other text: then
    ``email-validator`` decides, as it does for every address once a host changed its strictness or its special-use
    names. A test holds this to ``email-validator`` over generated addresses."""
    if len(text) > 254 or not text.isascii() or _PLAIN_ADDRESS.fullmatch(text) is None or not _defaults():
        return None
    local, _, domain = text.partition("@")
    host = domain.lower()
    labels = host.split(".")
    if len(host) > 253 or "--" in host or not host[-1].isalpha() or any(len(label) > 63 for label in labels):
        return None
    if any(host == name or host.endswith("." + name) for name in SPECIAL_USE_DOMAINS):
        return None
    return f"{local.casefold()}@{host}"


def _email(raw: str, start: int) -> Entity | None:
    text = raw[7:] if raw.lower().startswith("mailto:") else raw
    plain = plain_address(text)
    if plain is not None:  # what email-validator makes of it, an ASCII host: no look-alike characters
        return Entity("email", raw, plain, start, start + len(raw), None)
    from email_validator import EmailNotValidError, validate_email

    try:
        parsed = validate_email(text, check_deliverability=False, allow_quoted_local=False, allow_domain_literal=False)
    except EmailNotValidError as exc:
        # Something shaped like an address that is not one address: its own text is its identity,
        # so it is only ever grounded by the very same text, and the finding says why.
        return Entity("email", raw, raw.casefold(), start, start + len(raw), f"not a single plain address: {exc}")
    key = f"{parsed.local_part.casefold()}@{(parsed.ascii_domain or parsed.domain).lower()}"
    return Entity("email", raw, key, start, start + len(raw), _mixed_scripts(parsed.domain))


def _url(raw: str, start: int) -> Entity | None:
    try:
        parts = urlsplit(raw)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return Entity("url", raw, raw.casefold(), start, start + len(raw), "not a readable URL")
    if not host:
        return Entity("url", raw, raw.casefold(), start, start + len(raw), "a URL without a host")
    ascii_host = _ascii_host(host) or host
    port = f":{parts.port}" if parts.port else ""
    link = _link(parts.scheme, ascii_host + port, parts.path, parts.query)
    return Entity("url", raw, ascii_host, start, start + len(raw), _mixed_scripts(host), link)


def _bare_host(raw: str, start: int) -> Entity | None:
    if not _HOSTLIKE.match(raw) or "@" in raw:
        return None
    host = re.split(r"[/?#:]", raw, maxsplit=1)[0]
    labels = host.split(".")
    if any(not label for label in labels) or all(label.isdigit() for label in labels):
        return None
    ascii_host = _ascii_host(host)
    if ascii_host is None or not _known_tld(ascii_host.rsplit(".", 1)[-1]):
        return None
    kind: EntityKind = "url" if len(host) < len(raw) else "domain"
    rest = urlsplit("//" + raw)
    link = _link("", ascii_host + raw[len(host) :].split("/", 1)[0].split("?")[0], rest.path, rest.query)
    return Entity(kind, raw, ascii_host, start, start + len(raw), _mixed_scripts(host), link)


def _trim(run: str, start: int) -> tuple[str, int]:
    """A run without the punctuation around it (an address in brackets, a link ending a sentence)."""
    left = 0
    while left < len(run) and run[left] in _EDGE and run[left] != '"':
        left += 1
    if left < len(run) and run[left] == '"':  # an opening quote, unless it opens a quoted local part
        close, at = run.find('"', left + 1), run.find("@", left)
        if close == -1 or at == -1 or close > at:
            left += 1
            while left < len(run) and run[left] in _EDGE and run[left] != '"':
                left += 1
    right = len(run)
    while right > left and run[right - 1] in _EDGE:
        right -= 1
    return run[left:right], start + left


def _iban(raw: str, start: int) -> Entity | None:
    """The longest valid IBAN the candidate starts with (it may have swallowed a following number)."""
    from stdnum import iban

    pieces = re.split(r"([ -])", raw)
    for k in range(len(pieces), 0, -2):
        head = "".join(pieces[:k])
        compact = re.sub(r"[ -]", "", head).upper()
        if 15 <= len(compact) <= 34 and iban.is_valid(compact):
            return Entity("iban", head, compact, start, start + len(head))
    if " " not in raw and "-" not in raw:  # letters run on after it: "DE89…3000bob@acme.example"
        for n in range(min(len(raw), 34), 14, -1):
            if iban.is_valid(raw[:n].upper()):
                return Entity("iban", raw[:n], raw[:n].upper(), start, start + n)
    return None


@cache
def _phonenumbers() -> object:
    import phonenumbers

    return phonenumbers


def _phones(text: str, region: str) -> list[Entity]:
    pn = _phonenumbers()
    found: list[Entity] = []
    try:
        matches = list(pn.PhoneNumberMatcher(text, region))  # type: ignore[attr-defined]
    except Exception:  # the matcher gives up on text it cannot scan: no phone numbers, never a crash
        return found
    for m in matches:
        if not pn.is_valid_number(m.number):  # type: ignore[attr-defined]
            continue
        e164 = pn.format_number(m.number, pn.PhoneNumberFormat.E164)  # type: ignore[attr-defined]
        found.append(Entity("phone", m.raw_string, e164, m.start, m.end))
    return found


def _in_run(raw: str, start: int) -> Entity | None:
    """The link, address or host name one run of non-space characters is, if any."""
    scheme = _SCHEME.search(raw)
    if scheme is not None:
        return _url(raw[scheme.start() :], start + scheme.start())
    if "@" in raw:  # "@manager": a handle, no address (the lexer reads it by its shape)
        return None if _HANDLE.match(raw) else _email(raw, start)
    if "." in raw:
        return _bare_host(raw, start)
    return None


def extract_entities(text: str, *, region: str = DEFAULT_REGION) -> list[Entity]:
    """Every entity in ``text``, in order of appearance, each span reported once."""
    return list(_extract(text, region))


@lru_cache(maxsize=4096)
def _extract(text: str, region: str) -> tuple[Entity, ...]:
    """:func:`extract_entities`, kept for the texts seen last (the same body, the same recipient, checked
    again on every call of a turn)."""
    found: list[Entity] = []
    for m in _RUN.finditer(text):
        run = m.group()
        if "@" not in run and "." not in run and ":" not in run:  # most words: no link, address or host
            continue
        raw, start = _trim(run, m.start())
        entity = _in_run(raw, start) if raw else None
        if entity is not None:
            found.append(entity)
    taken = [(e.start, e.end) for e in found if e.kind != "email"]  # "DE89…bob@x.example" hides no IBAN
    for m in _IBAN.finditer(text):
        if not any(s < m.end() and m.start() < e for s, e in taken):
            entity = _iban(m.group(), m.start())
            if entity is not None:
                found.append(entity)
                taken.append((entity.start, entity.end))
    if _SEVEN_DIGITS.search(text):  # a phone or account number has seven digits at least
        for entity in _phones(text, region):
            if not any(s < entity.end and entity.start < e for s, e in taken):
                found.append(entity)
                taken.append((entity.start, entity.end))
        for m in _ACCOUNT.finditer(text):
            digits = re.sub(r"\D", "", m.group())
            if _DATE.match(m.group()):
                continue
            if 8 <= len(digits) <= 20 and not any(s < m.end() and m.start() < e for s, e in taken):
                found.append(Entity("account", m.group(), digits, m.start(), m.end()))
                taken.append((m.start(), m.end()))
    return tuple(sorted(found, key=lambda e: e.start))


def parse_entity(value: str, *, region: str = DEFAULT_REGION) -> Entity | None:
    """The entity ``value`` is as a whole (an address, a link, an IBAN...), or None for plain text."""
    text = value.strip()
    entities = extract_entities(text, region=region)
    if len(entities) == 1 and entities[0].start <= 1 and entities[0].end >= len(text.rstrip(_EDGE)) - 1:
        return entities[0]
    return None


def kind_of(value: str) -> EntityKind | None:
    """The entity kind ``value`` is, as a whole, or None for plain text."""
    entity = parse_entity(value)
    return entity.kind if entity else None


def _number(whole: str, frac: str | None) -> Decimal | None:
    digits = re.sub(r"[,.'\u00a0\u202f]", "", whole)
    try:
        return Decimal(f"{digits}.{frac}" if frac else digits)
    except (InvalidOperation, ValueError):
        return None


def amounts_in(text: str) -> list[Amount]:
    """Every number in ``text`` with the currency written next to it (``4,800 EUR``, ``€50``, ``1.250,00``)."""
    found: list[Amount] = []
    for m in _AMOUNT.finditer(text):
        before, whole, _, frac, after = m.groups()
        number = _number(whole, frac)
        if number is None:
            continue
        code = before or after
        currency = CURRENCIES.get(code.lower()) if code else None
        is_time = currency is None and bool(_TIME_AFTER.match(text[m.end() : m.end() + 6]))
        found.append(Amount(number, currency, m.start(), m.end(), is_time))
    return found
