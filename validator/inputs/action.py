"""The pending action and the actor's justification for it.

The justification is written by the agent (a model), so a malformed one is not a developer's
input error: it is the agent failing to justify, and the pipeline blocks it with
``MISSING_JUSTIFICATION``, naming what is missing. :func:`parse_justification` therefore returns
problems instead of raising.

Shape::

    {"reason": "...", "evidence": [{"quote": "the user's own words"} | {"authorization_id": "auth_..."}]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FOUND",
    "AuthorizationEvidence",
    "Evidence",
    "Justification",
    "PendingAction",
    "QuoteEvidence",
    "justification_schema",
    "parse_justification",
]

MAX_QUOTES = 50
MAX_QUOTE_CHARS = 5_000
MAX_REASON_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class QuoteEvidence:
    """Words the actor says the user wrote."""

    quote: str


@dataclass(frozen=True, slots=True)
class AuthorizationEvidence:
    """A standing authorization the actor cites by id."""

    authorization_id: str


Evidence = QuoteEvidence | AuthorizationEvidence


@dataclass(frozen=True, slots=True)
class Justification:
    """Why the actor believes the user asked for this action."""

    reason: str
    evidence: tuple[Evidence, ...] = ()
    found: bool = False
    """True when no agent wrote it: the host could not carry a justification, so the validator reads the
    user's own words in the conversation for the request itself (:data:`FOUND`)."""

    @property
    def quotes(self) -> tuple[QuoteEvidence, ...]:
        return tuple(e for e in self.evidence if isinstance(e, QuoteEvidence))

    @property
    def authorizations(self) -> tuple[AuthorizationEvidence, ...]:
        return tuple(e for e in self.evidence if isinstance(e, AuthorizationEvidence))

    def to_dict(self) -> dict[str, Any]:
        if self.found:
            return {"found": True, "reason": self.reason, "evidence": []}
        return {
            "reason": self.reason,
            "evidence": [
                {"quote": e.quote} if isinstance(e, QuoteEvidence) else {"authorization_id": e.authorization_id}
                for e in self.evidence
            ],
        }


@dataclass(frozen=True, slots=True)
class PendingAction:
    """A tool call the agent wants to run, with its justification as the agent sent it."""

    tool: str
    """The tool's name."""
    args: Mapping[str, Any] = field(default_factory=dict)
    """The tool's arguments, without ``justification``."""
    justification: Any = None
    """The raw justification (a mapping, a JSON string, or anything the agent sent)."""
    call_id: str | None = None
    """The host's id of this tool call, when it has one (one request spends once per call)."""
    find_evidence: bool = False
    """The host cannot add a ``justification`` argument to this tool (Claude Code's MCP and built-in tools):
    with no justification, the validator finds the user's request in their own words itself. A
    justification the agent did send is read as usual."""

    parsed: Justification | None = field(init=False, repr=False, compare=False)
    """The justification as :func:`parse_justification` reads it, parsed once when the action is made (the
    found one, :data:`FOUND`, when the host cannot carry one and none was sent); None when it does not parse."""
    problems: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Why it does not parse (empty when it does)."""

    def __post_init__(self) -> None:
        parsed: Justification | None = FOUND
        problems: list[str] = []
        if self.justification is not None or not self.find_evidence:
            try:
                parsed, problems = parse_justification(self.justification)
            except Exception as exc:  # what the agent sent is never a crash: it is a justification that is unusable
                parsed, problems = None, [f"justification cannot be read: {type(exc).__name__}"]
        object.__setattr__(self, "parsed", parsed)
        object.__setattr__(self, "problems", tuple(problems))


FOUND = Justification(
    reason="No justification: the host cannot carry one. The validator read the user's own words for the request.",
    found=True,
)
"""The justification of a call whose host cannot carry one: no claim of the agent's, no quote. The gate reads
every sentence of the user's own words in the conversation as cited: what an agent citing all of them would
get, so finding the evidence is never weaker than citing it."""


def justification_schema() -> dict[str, Any]:
    """JSON Schema of the ``justification`` argument (strict-mode compatible), described for the agent."""
    from validator.prompts import load_prompt

    item = {"type": "object", "additionalProperties": False}
    return {
        "type": "object",
        "description": load_prompt("justification"),
        "properties": {
            "reason": {"type": "string", "description": "What the user asked for and how this action does it."},
            "evidence": {
                "type": "array",
                "description": "The user's own words quoted exactly, or standing authorizations.",
                "items": {
                    "anyOf": [
                        {**item, "properties": {"quote": {"type": "string"}}, "required": ["quote"]},
                        {
                            **item,
                            "properties": {"authorization_id": {"type": "string"}},
                            "required": ["authorization_id"],
                        },
                    ]
                },
            },
        },
        "required": ["reason", "evidence"],
        "additionalProperties": False,
    }


def parse_justification(raw: Any) -> tuple[Justification | None, list[str]]:
    """Parse the actor's justification; return it, or the list of what is missing or wrong."""
    if raw is None:
        return None, ["justification is missing: send {'reason': ..., 'evidence': [{'quote': ...}]}"]
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except RecursionError:
            return None, ["justification is JSON nested too deep to read"]
        except ValueError:
            return None, ["justification is plain text; it must be an object with 'reason' and 'evidence'"]
    if not isinstance(raw, Mapping):
        return None, [f"justification must be an object, got {type(raw).__name__}"]
    problems: list[str] = []
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        problems.append("justification.reason is missing or empty")
    elif len(reason) > MAX_REASON_CHARS:
        problems.append(f"justification.reason has {len(reason):,} characters; at most {MAX_REASON_CHARS:,}")
    unknown = sorted(set(raw) - {"reason", "evidence"})
    if unknown:
        problems.append(f"justification has unknown keys: {', '.join(map(str, unknown))}")
    items = raw.get("evidence")
    evidence: list[Evidence] = []
    if not isinstance(items, list):
        problems.append(
            "justification.evidence is missing; it must be a list of {'quote': ...} or {'authorization_id': ...}"
        )
    elif len(items) > MAX_QUOTES:
        problems.append(f"justification.evidence has {len(items)} items; at most {MAX_QUOTES}")
    else:
        for i, item in enumerate(items):
            parsed, problem = _parse_evidence(item, i)
            if problem:
                problems.append(problem)
            elif parsed is not None:
                evidence.append(parsed)
    if problems:
        return None, problems
    assert isinstance(reason, str)
    return Justification(reason=reason, evidence=tuple(evidence)), []


def _parse_evidence(item: Any, i: int) -> tuple[Evidence | None, str | None]:
    where = f"justification.evidence[{i}]"
    if not isinstance(item, Mapping) or len(item) != 1:
        return None, f"{where} must be an object with exactly one key, 'quote' or 'authorization_id'"
    if "quote" in item:
        quote = item["quote"]
        if not isinstance(quote, str) or not quote.strip():
            return None, f"{where}.quote must be a non-empty string"
        if len(quote) > MAX_QUOTE_CHARS:
            return None, f"{where}.quote has {len(quote):,} characters; at most {MAX_QUOTE_CHARS:,}"
        if not any(ch.isalnum() for ch in quote):
            return None, f"{where}.quote has no words: quote what the user wrote"
        return QuoteEvidence(quote), None
    if "authorization_id" in item:
        auth_id = item["authorization_id"]
        if not isinstance(auth_id, str) or not auth_id.strip():
            return None, f"{where}.authorization_id must be a non-empty string"
        return AuthorizationEvidence(auth_id.strip()), None
    return None, f"{where} has key {next(iter(item))!r}; expected 'quote' or 'authorization_id'"
