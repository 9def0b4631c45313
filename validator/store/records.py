"""The records the store keeps, as plain data: a standing authorization (what it means is the gate's).

A standing authorization is what the user said once and the agent may cite later: the user's own
words, a scope (a tool name or glob, constraints on arguments) and a lifetime. Whether one covers an
action is decided by :mod:`validator.gate.authorizations`; the store only keeps, lists and revokes it.
"""

from __future__ import annotations

import fnmatch
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from validator._types import Risk

__all__ = ["AuthorizationState", "StandingAuthorization", "new_authorization_id"]

AuthorizationState = Literal["active", "expired", "revoked"]


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
    """Constraints: argument path to pattern (see :mod:`validator.gate.authorizations`)."""
    expires: datetime | None = None
    revoked: datetime | None = None
    risk: Risk = "general"
    """The risk the grant was given for: its tool glob never covers a riskier tool."""

    def status(self, now: datetime) -> AuthorizationState:
        if self.revoked is not None and self.revoked <= now:
            return "revoked"
        if self.expires is not None and self.expires <= now:
            return "expired"
        return "active"

    def covers_tool(self, tool: str) -> bool:
        return fnmatch.fnmatchcase(tool, self.tool)

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
            "risk": self.risk,
        }


def new_authorization_id() -> str:
    """A fresh, unguessable authorization id."""
    return f"auth_{secrets.token_hex(8)}"
