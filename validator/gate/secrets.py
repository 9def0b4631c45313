"""Secrets: the values whose leaving is harm whatever their host (a key, a token, a password, a PIN).

Two closed sources, nothing guessed:

- **shapes** (:data:`SHAPES`): the forms credentials are issued in (a Stripe ``sk_live_…`` key, an OpenAI or
  Anthropic ``sk-…`` key, a GitHub ``ghp_…`` token, a Slack ``xoxb-…`` token, an AWS ``AKIA…`` key id, a
  Google ``AIza…`` key, a GitLab ``glpat-…`` token, a JSON Web Token, a PEM private key's header), and an
  assignment of one in an environment file or a config (``DB_PASSWORD=…``, ``"api_key": "…"``);
- **declared** by the user (:func:`declared_secrets`): a string after a secret's noun in the user's own words
  ("my password is hunter2", "PIN: 4821", "the wifi password is …").

:func:`secrets_in` finds both in a text; the gate grounds each one found in a guarded call's arguments as a
value of kind ``secret`` (it counts only where the user's request names it for that call), and egress
(:mod:`validator.gate.egress`) refuses an exempt call that carries one in a link.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Hashable, Iterable, Iterator
from urllib.parse import unquote

from validator.gate.index import is_users
from validator.inputs.transcript import Fact, Message, Transcript

__all__ = ["SHAPES", "declared_secrets", "secrets_in", "users_secrets"]

SHAPES: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![\w-])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}"),
    re.compile(r"(?<![\w-])sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"(?<![\w-])gh[pousr]_[A-Za-z0-9]{30,}"),
    re.compile(r"(?<![\w-])github_pat_[A-Za-z0-9_]{30,}"),
    re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"),
    re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}"),
    re.compile(r"(?<![\w-])glpat-[A-Za-z0-9_-]{20,}"),
    re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----"),
)
"""The issued forms of credentials: each match is a secret, in any text."""

_ASSIGNED = re.compile(
    r"(?i)[\"']?\b([A-Z0-9_.-]*(?:password|passwd|secret|token|api[_-]?key|private[_-]?key|access[_-]?key)"
    r"[A-Z0-9_.-]*)[\"']?\s*[:=]\s*[\"']?([^\s\"',;&]{4,200})"
)
"""An assignment in a config or an environment file (``DB_PASSWORD=…``, ``"api_key": "…"``): its name, its
value."""
_NOT_SECRET_NAMES = re.compile(r"(?i)page|cursor|next|continuation|sync|csrf|count|type|expir|length|url")
"""Names that hold a secret's word and no secret (``next_page_token``, ``token_type``, ``password_length``)."""

_DECLARED = re.compile(
    r"(?i)\b(?:password|passcode|passphrase|pin(?:\s+code)?|api\s+key|access\s+token|token|secret(?:\s+key)?|"
    r"security\s+code|cvv|cvc)\s*(?:is|was|:|=)\s*[\"'“]?([^\s\"'”,;]{4,200})"
)
"""A secret's noun, then ``is`` / ``:`` / ``=`` and the value (the user's own words only)."""
_SECRET_LIKE = re.compile(r"\d|[^\w]|_|[A-Z]")
"""A declared value is a secret when it holds a digit, a sign or a capital ("hunter2", "Tr0ub4dor&3"): "the
password is wrong" declares no password."""
_TRAILING = ".!?)"


def secrets_in(text: str, declared: Iterable[str] = ()) -> Iterator[str]:
    """Each secret in ``text``: a match of :data:`SHAPES`, an assigned value, or a ``declared`` string in it."""
    seen: set[str] = set()
    for shape in SHAPES:
        for m in shape.finditer(text):
            if m.group(0) not in seen:
                seen.add(m.group(0))
                yield m.group(0)
    for value in _assigned(text):
        if value not in seen:
            seen.add(value)
            yield value
    for value in declared:
        if value not in seen and (value in text or _encoded_in(value, text)):
            seen.add(value)
            yield value


ENCODED_MIN = 8
"""A known secret this long or longer is looked for in its encodings too."""


def _encoded_in(value: str, text: str) -> bool:
    """Whether ``text`` carries a known secret in a form an agent may be asked to use: percent-encoded (even
    twice), split by signs ("sk_/liv/e_4e…", "Hun-ter-2xy"), reversed, in any case, in base64 (standard or for
    links) or in hexadecimal. Closed forms only: an encoding of its own (a cipher) is beyond any reader."""
    if len(value) < ENCODED_MIN:
        return False
    plain = text
    for _ in range(3):
        unquoted = unquote(plain)
        if unquoted == plain:
            break
        plain = unquoted
    compact = _compact(plain)
    mine = _compact(value)
    if len(mine) >= ENCODED_MIN and (mine in compact or mine[::-1] in compact):
        return True
    raw = value.encode("utf-8", "surrogatepass")  # a lone surrogate (Python input) is no crash
    forms = (
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        raw.hex(),
    )
    folded = plain.casefold()
    return any(form[: max(ENCODED_MIN, len(form) - 2)].casefold() in folded for form in forms)


def _compact(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def declared_secrets(texts: Iterable[str]) -> frozenset[str]:
    """The strings the user's words declare secrets ("my password is hunter2" → ``hunter2``)."""
    out = set()
    for text in texts:
        for m in _DECLARED.finditer(text):
            value = m.group(1).rstrip(_TRAILING)
            if len(value) >= 4 and _SECRET_LIKE.search(value):
                out.add(value)
    return frozenset(out)


def _secrets_of(messages: Iterable[Message], user_id: Hashable) -> frozenset[str]:
    uid = user_id if isinstance(user_id, str) else None
    out: set[str] = set()
    for m in messages:
        if not m.content:
            continue
        if is_users(m, uid):
            out |= declared_secrets([m.content])
        out.update(v for v in _assigned(m.content[:_READ]))  # a .env read, a config pasted: whoever showed it
        out.update(match.group(0) for shape in SHAPES for match in shape.finditer(m.content[:_READ]))
    return frozenset(out)


def _users_secrets(transcript: Transcript, user_id: Hashable) -> frozenset[str]:
    return _secrets_of(transcript.messages, user_id)


def _more_secrets(found: frozenset[str], longer: Transcript, start: int, user_id: Hashable) -> frozenset[str]:
    return found | _secrets_of(longer.messages[start:], user_id)


USERS_SECRETS: Fact[frozenset[str]] = Fact("the secrets of the conversation", _users_secrets, _more_secrets)


def users_secrets(transcript: Transcript, user_id: str | None = None) -> frozenset[str]:
    """The strings the conversation shows are the user's secrets: those the user's own messages declare, and
    every value assigned to a secret's name in any message (``DB_PASSWORD=…`` in a file the agent read). Found
    again in an argument in any form, they count as secrets (computed once per transcript and user)."""
    return transcript.fact(USERS_SECRETS, user_id)


_READ = 200_000
"""Characters of a message read for assigned secrets."""


def _assigned(text: str) -> Iterator[str]:
    for m in _ASSIGNED.finditer(text):
        value = m.group(2).rstrip(_TRAILING)
        if len(value) >= 4 and not _NOT_SECRET_NAMES.search(m.group(1)):
            yield value
