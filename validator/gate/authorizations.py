"""Standing authorizations: what the user said once and the agent may cite later.

"You told me three months ago I may always send follow-ups after sales calls." A record keeps the
user's own words, a scope (a tool name or glob, and constraints on arguments) and its lifetime.
The actor cites one as ``{"authorization_id": "..."}``; the evidence gate checks that it exists,
belongs to this user, is active and covers this action.

Constraints (``where``) map an argument path to a pattern:

- a glob, compared case-insensitively: ``recipient = "*@acme.example"``;
- a bound on a number: ``amount = "<=500"`` (also ``<``, ``>=``, ``>``, ``==``).

A list value (attendees), or a string listing several (``a@x.example, b@y.example``), is in scope
only when every element is.
"""

from __future__ import annotations

import fnmatch
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from validator.exceptions import StoreError
from validator.gate.paths import leaves, lookup

__all__ = [
    "AuthorizationState",
    "Resolved",
    "StandingAuthorization",
    "check_constraint",
    "is_bound",
    "new_authorization_id",
]

AuthorizationState = Literal["active", "expired", "revoked"]
_LIST_SEPARATORS = re.compile(r"[,;\s]+")
_BOUND = re.compile(r"^\s*(<=|>=|==|<|>)\s*(-?\d+(?:\.\d+)?)\s*$")


def is_bound(pattern: str) -> bool:
    """Whether ``pattern`` is a numeric bound (``<=500``) rather than a glob."""
    return _BOUND.match(pattern) is not None


def check_constraint(pattern: str, value: Any) -> bool:
    """Whether one argument value satisfies one constraint pattern."""
    bound = _BOUND.match(pattern)
    if bound:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            return False
        try:
            number = float(value)
        except ValueError:
            return False
        op, limit = bound.group(1), float(bound.group(2))
        return {
            "<=": number <= limit,
            ">=": number >= limit,
            "==": number == limit,
            "<": number < limit,
            ">": number > limit,
        }[op]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return False
    # "eve@evil.example, bob@acme.example" is two recipients: each must match, not the string as a whole
    pieces = [p for p in _LIST_SEPARATORS.split(str(value).strip()) if p] or [""]
    return all(fnmatch.fnmatchcase(p.casefold(), pattern.casefold()) for p in pieces)


@dataclass(frozen=True, kw_only=True)
class StandingAuthorization:
    """A scoped, revocable permission the user gave in their own words."""

    id: str
    user_id: str
    tool: str
    """A tool name, or a glob over tool names (``send_*``)."""
    quote: str
    """The user's own words that granted it."""
    created: datetime
    where: Mapping[str, str] = field(default_factory=dict)
    """Constraints: argument path to pattern."""
    expires: datetime | None = None
    revoked: datetime | None = None

    def status(self, now: datetime) -> AuthorizationState:
        if self.revoked is not None and self.revoked <= now:
            return "revoked"
        if self.expires is not None and self.expires <= now:
            return "expired"
        return "active"

    def covers_tool(self, tool: str) -> bool:
        return fnmatch.fnmatchcase(tool, self.tool)

    def scope_problems(self, tool: str, args: Mapping[str, Any]) -> list[str]:
        """Each way this action falls outside the scope, in words; empty when it is inside."""
        problems: list[str] = []
        if not self.covers_tool(tool):
            problems.append(f"tool {tool!r} is outside the authorized tool {self.tool!r}")
        for path, pattern in self.where.items():
            found, value = lookup(args, path)
            if found != "found":
                problems.append(f"argument {path!r} is {found}; the authorization requires {pattern!r}")
                continue
            bad = [v for v in leaves(value) if not check_constraint(pattern, v)]
            if bad or not list(leaves(value)):
                shown = ", ".join(repr(v) for v in bad[:3]) or repr(value)
                problems.append(f"argument {path!r} = {shown} does not match {pattern!r}")
        return problems

    def allows(self, path: str, value: Any) -> bool:
        """Whether a constraint of this authorization names ``path`` and admits ``value``."""
        pattern = self.where.get(path)
        return pattern is not None and check_constraint(pattern, value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "tool": self.tool,
            "where": dict(self.where),
            "quote": self.quote,
            "created": self.created.isoformat(),
            "expires": self.expires.isoformat() if self.expires else None,
            "revoked": self.revoked.isoformat() if self.revoked else None,
        }


def new_authorization_id() -> str:
    """A fresh, unguessable authorization id."""
    return f"auth_{secrets.token_hex(8)}"


Resolved = Mapping[str, StandingAuthorization | StoreError | None]
"""Cited authorization ids, looked up: the record, None when absent, or the store's error."""
