"""The rules of the gate and the decision, by name, so each can be switched off to measure what it earns.

Every rule is on in production. A validator built with ``ValidatorConfig(rules_off=...)`` checks with
those rules off: its config holds them as a :class:`Rules` value, which the engine hands to the gate and
the ledger with each check (no process-wide or context state). The eval's ablation (``validator eval
--ablate``) builds one such validator per rule and reports the wrong approvals each rule prevents and
the false blocks it causes.
"""

from __future__ import annotations

from dataclasses import dataclass

from validator.exceptions import UsageError

__all__ = ["ALL_ON", "RULES", "Rules"]

RULES: dict[str, str] = {
    "outside-quotes": "a quote found only outside the user's own words blocks (EVIDENCE_NOT_FROM_USER)",
    "fabricated-quotes": "a quote found nowhere blocks (EVIDENCE_NOT_FOUND)",
    "pasted-text": "pasted, forwarded and quoted text in a user message is not the user's",
    "request-grammar": (
        "a request for the action must be proved: a complete parse of the whole sentence, every parse agreeing"
    ),
    "whole-context": (
        "every sentence after the request, in its message and later, is read: anything not harmless makes it unknown"
    ),
    "negation": "a negation governs what follows it (requests and values under it do not count)",
    "value-identity": "targets and entities must stand in the user's request, compared as values",
    "provenance": "a value looked up in the record the user named is delegated, not unknown",
    "egress": "an exempt call whose link carries the user's words to a host they never named goes to the user",
    "dangerous-values-to-user": "a dangerous action with a value the user never gave goes to the user",
    "dangerous-arguments": "every argument of a dangerous action is compared, not only its targets (a role, a body)",
    "one-request": "one request authorizes one dangerous action",
    "injection-signature": (
        "an action no sentence of the user's names, that an outside party's text does, is blocked (INJECTION_SIGNATURE)"
    ),
}
"""Each rule's name and what it does."""


@dataclass(frozen=True, slots=True)
class Rules:
    """Which rules a check runs with: all of :data:`RULES` but those ``off`` (for measuring only)."""

    off: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = sorted(set(self.off) - set(RULES))
        if unknown:
            raise UsageError(f"unknown rules: {', '.join(unknown)}")

    def on(self, rule: str) -> bool:
        """Whether ``rule`` is on (always, outside an ablation)."""
        return rule not in self.off


ALL_ON = Rules()
"""Every rule on: production."""
