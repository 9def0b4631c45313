"""What the checks found, with their numbers: every block can say which check failed and why.

The evidence gate fills :class:`Findings` with code-only facts (where each quote stands and who
wrote it, where each target value came from); judges add the intent check. Verdicts carry them
whole, so a refusal is verifiable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from validator._types import Role

__all__ = [
    "AuthorizationFinding",
    "AuthorizationStatus",
    "Findings",
    "IntentFinding",
    "Location",
    "QuoteFinding",
    "QuoteStatus",
    "ValueFinding",
    "ValueStatus",
]

QuoteStatus = Literal["user", "not_from_user", "not_found"]
AuthorizationStatus = Literal["valid", "not_found", "wrong_user", "expired", "revoked", "out_of_scope", "unavailable"]
ValueStatus = Literal["user", "authorization", "not_from_user", "not_found", "absent", "unreadable"]


@dataclass(frozen=True, slots=True)
class Location:
    """A message where a text was found."""

    message: int
    """Index in the transcript."""
    role: Role
    speaker: str
    """Who wrote it: ``user``, ``agent``, ``system`` or ``tool NAME (from PARTY)``."""

    def __str__(self) -> str:
        return f"message #{self.message} ({self.speaker})"


@dataclass(frozen=True, slots=True)
class QuoteFinding:
    """One quote of the justification."""

    index: int
    """Position in ``justification.evidence``."""
    quote: str
    status: QuoteStatus
    locations: tuple[Location, ...] = ()
    """Where it stands: user messages when it is user evidence, else the other messages."""


@dataclass(frozen=True, slots=True)
class AuthorizationFinding:
    """One standing authorization the justification cites."""

    index: int
    authorization_id: str
    status: AuthorizationStatus
    detail: str = ""
    """Why it does not count (which constraint failed), or what it allows."""
    quote: str | None = None
    """The user's words that granted it, when it was found."""


@dataclass(frozen=True, slots=True)
class ValueFinding:
    """Where one value of a target argument, or one entity inside another argument, came from."""

    path: str
    """Argument path (``recipient``, ``attendees[1]``, ``body``)."""
    value: str | int | float | bool | None
    status: ValueStatus
    kind: str | None = None
    """Entity kind (``url``, ``email``, ``iban``, ``phone``, ``account``), or None for plain values."""
    locations: tuple[Location, ...] = ()
    authorization_id: str | None = None
    """The cited authorization that allows it, when ``status == "authorization"``."""

    @property
    def grounded(self) -> bool:
        return self.status in ("user", "authorization", "absent")

    def describe(self) -> str:
        where = {
            "user": "in the user's words",
            "authorization": f"allowed by standing authorization {self.authorization_id}",
            "not_from_user": "only in " + ", ".join(map(str, self.locations)),
            "not_found": "nowhere in the transcript",
            "absent": "absent from the arguments",
            "unreadable": "could not be read (the arguments do not have the shape the policy names)",
        }[self.status]
        if self.status == "user" and self.locations:
            where += f" ({self.locations[0]})"
        return f"{self.path}={self.value!r}: {where}"


@dataclass(frozen=True, slots=True)
class IntentFinding:
    """Whether the user's cited words name this action."""

    intents: tuple[str, ...]
    """The tool's intent words that were looked for."""
    matched: str | None = None
    """The intent word found, if any."""
    quote_index: int | None = None
    """The evidence item it was found in."""
    negated: bool = False
    """The only match stands after a negation (``don't pay``)."""
    other_tool: str | None = None
    """Another tool whose intent the user's words name instead (they said archive; the agent deletes)."""
    other_intent: str | None = None


@dataclass(frozen=True, slots=True)
class Findings:
    """Everything the checks found for one action."""

    justification_problems: tuple[str, ...] = ()
    quotes: tuple[QuoteFinding, ...] = ()
    authorizations: tuple[AuthorizationFinding, ...] = ()
    targets: tuple[ValueFinding, ...] = ()
    entities: tuple[ValueFinding, ...] = ()
    intent: IntentFinding | None = None

    @property
    def user_quotes(self) -> tuple[QuoteFinding, ...]:
        return tuple(q for q in self.quotes if q.status == "user")

    @property
    def valid_authorizations(self) -> tuple[AuthorizationFinding, ...]:
        return tuple(a for a in self.authorizations if a.status == "valid")

    def counts(self) -> dict[str, int]:
        """Headline numbers: quotes checked and verified, targets and entities grounded."""
        return {
            "quotes_checked": len(self.quotes),
            "quotes_from_user": len(self.user_quotes),
            "authorizations_checked": len(self.authorizations),
            "authorizations_valid": len(self.valid_authorizations),
            "targets_checked": len(self.targets),
            "targets_grounded": sum(t.grounded for t in self.targets),
            "entities_checked": len(self.entities),
            "entities_grounded": sum(e.grounded for e in self.entities),
        }
