"""The rules of the gate and the decision, by name, so each can be switched off to measure what it earns.

Every rule is on in production. A validator built with ``ValidatorConfig(rules_off=...)`` checks with
those rules off: its config holds them as a :class:`Rules` value, which the engine hands to the gate and
the ledger with each check (no process-wide or context state). The eval's ablation (``validator eval
--ablate``) builds one such validator per rule and reports the wrong approvals each rule prevents and
the false blocks it causes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from validator.exceptions import UsageError

__all__ = ["ALL_ON", "CONTEXT_PREFIX", "RULES", "Rule", "Rules"]


class Rule(StrEnum):
    """A rule's name: a member, so a misspelt rule fails where it is written (a string would be silently off)."""

    OUTSIDE_QUOTES = "outside-quotes"
    FABRICATED_QUOTES = "fabricated-quotes"
    PASTED_TEXT = "pasted-text"
    REQUEST_GRAMMAR = "request-grammar"
    WHOLE_CONTEXT = "whole-context"
    NEGATION = "negation"
    VALUE_IDENTITY = "value-identity"
    PROVENANCE = "provenance"
    EGRESS = "egress"
    DANGEROUS_VALUES_TO_USER = "dangerous-values-to-user"
    DANGEROUS_ARGUMENTS = "dangerous-arguments"
    OPTIONS = "options"
    ONE_REQUEST = "one-request"
    INJECTION_SIGNATURE = "injection-signature"


RULES: dict[Rule, str] = {
    Rule.OUTSIDE_QUOTES: "a quote found only outside the user's own words blocks (EVIDENCE_NOT_FROM_USER)",
    Rule.FABRICATED_QUOTES: "a quote found nowhere blocks (EVIDENCE_NOT_FOUND)",
    Rule.PASTED_TEXT: "pasted, forwarded and quoted text in a user message is not the user's",
    Rule.REQUEST_GRAMMAR: (
        "a request for the action must be proved: a complete parse of the whole sentence, every parse agreeing"
    ),
    Rule.WHOLE_CONTEXT: (
        "every sentence after the request, in its message and later, is read: anything not harmless makes it unknown"
    ),
    Rule.NEGATION: "a negation governs what follows it (requests and values under it do not count)",
    Rule.VALUE_IDENTITY: "targets and entities must stand in the user's request, compared as values",
    Rule.PROVENANCE: "a value looked up in the record the user named is delegated, not unknown",
    Rule.EGRESS: "an exempt call whose link carries the user's words to a host they never named goes to the user",
    Rule.DANGEROUS_VALUES_TO_USER: "a dangerous action with a value the user never gave goes to the user",
    Rule.DANGEROUS_ARGUMENTS: (
        "every argument of a dangerous action is compared, not only its targets (a role, a body)"
    ),
    Rule.OPTIONS: (
        "an option (a flag, a mode, an attachment) holds the tool's declared default or what the request asks for"
    ),
    Rule.ONE_REQUEST: "one request authorizes one dangerous action",
    Rule.INJECTION_SIGNATURE: (
        "an action no sentence of the user's names, that an outside party's text does, is blocked (INJECTION_SIGNATURE)"
    ),
}
"""Each rule and what it does (a rule's name is its value: ``rules_off`` takes names)."""


CONTEXT_PREFIX = "context."
"""A rule of the context table (``context.<row>``, :data:`validator.gate.context.TABLE`): its rows are checked by
name where a validator is configured (:class:`validator.engine.ValidatorConfig`)."""


@dataclass(frozen=True, slots=True)
class Rules:
    """Which rules a check runs with: all of :data:`RULES` but those ``off`` (for measuring only)."""

    off: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = sorted(n for n in set(self.off) - set(RULES) if not n.startswith(CONTEXT_PREFIX))
        if unknown:
            raise UsageError(f"unknown rules: {', '.join(unknown)}")

    def on(self, rule: Rule) -> bool:
        """Whether ``rule`` is on (always, outside an ablation)."""
        return rule not in self.off


ALL_ON = Rules()
"""Every rule on: production."""
