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
    "RequestProblem",
    "RequestSentence",
    "ValueFinding",
    "ValueStatus",
]

QuoteStatus = Literal["user", "not_from_user", "not_found"]
AuthorizationStatus = Literal["valid", "not_found", "wrong_user", "expired", "revoked", "out_of_scope", "unavailable"]
ValueStatus = Literal["user", "authorization", "user_elsewhere", "not_from_user", "not_found", "absent", "unreadable"]
RequestProblem = Literal["not_named", "negated", "question", "not_a_request", "conditional", "retracted", "no_request"]


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
class RequestSentence:
    """A sentence of the user's own words (not pasted or forwarded text) that cited evidence stands in."""

    message: int
    """Index of the user message in the transcript."""
    start: int
    end: int
    text: str
    quote_index: int
    """The evidence item that points to it."""


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
    """Entity kind (``url``, ``domain``, ``email``, ``iban``, ``phone``, ``account``, ``amount``), or None."""
    locations: tuple[Location, ...] = ()
    authorization_id: str | None = None
    """The cited authorization that allows it, when ``status == "authorization"``."""
    note: str | None = None
    """What else the gate saw (look-alike characters, an address that does not parse, a currency)."""

    @property
    def grounded(self) -> bool:
        """Proved to be the user's choice: in their cited request sentence, or in a cited authorization."""
        return self.status in ("user", "authorization", "absent")

    def describe(self) -> str:
        where = {
            "user": "in the user's request",
            "authorization": f"allowed by standing authorization {self.authorization_id}",
            "user_elsewhere": "in the user's messages but not in the cited request (another turn, a "
            "forbidding clause, or pasted text): " + ", ".join(map(str, self.locations)),
            "not_from_user": "only in " + ", ".join(map(str, self.locations)),
            "not_found": "nowhere in the transcript",
            "absent": "absent from the arguments",
            "unreadable": "could not be read (the arguments do not have the shape the policy names)",
        }[self.status]
        if self.status == "user" and self.locations:
            where += f" ({self.locations[0]})"
        if self.note:
            where += f"; {self.note}"
        return f"{self.path}={_shown(self.value)}: {where}"


@dataclass(frozen=True, slots=True)
class IntentFinding:
    """Whether the user's cited words are a request for this action (the request grammar, in code)."""

    intents: tuple[str, ...]
    """The tool's intent words that were looked for."""
    matched: str | None = None
    """The intent word that heads a request to the assistant, if one was proved."""
    quote_index: int | None = None
    """The evidence item it was found in."""
    negated: bool = False
    """The intent stands only under a negation (``don't pay``, ``no need to pay``)."""
    problem: RequestProblem | None = None
    """Why no request was proved: the intent is not named, negated, in a question, not addressed to
    the assistant (a report, reported speech), conditional, or retracted later."""
    detail: str = ""
    """The words behind the problem: the condition, the retracting message, the question."""
    multiple: bool = False
    """The request itself asks for several actions ("pay each of", "every month")."""
    other_tool: str | None = None
    """Another tool, no riskier than this one, that the user's words do request (they said archive;
    the agent deletes)."""
    other_intent: str | None = None

    @property
    def requested(self) -> bool:
        return self.matched is not None


@dataclass(frozen=True, slots=True)
class Findings:
    """Everything the checks found for one action."""

    justification_problems: tuple[str, ...] = ()
    quotes: tuple[QuoteFinding, ...] = ()
    requests: tuple[RequestSentence, ...] = ()
    """The sentences of the user's own words the cited quotes stand in."""
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


SHOWN_CHARS = 120
"""Values longer than this are shortened in reasoning text, with their length stated."""


def _shown(value: object) -> str:
    text = repr(value)
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[: SHOWN_CHARS - 1]}… ({len(text):,} characters)"
