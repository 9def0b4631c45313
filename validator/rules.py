"""The rules of the gate and the decision, by name, so each can be switched off to measure what it earns.

Every rule is on in production. A validator built with ``ValidatorConfig(rules_off=...)`` checks with
those rules off (the engine applies them with :func:`switched_off` around each check: a context
variable, so it holds in the thread or task that runs the check and nowhere else); the eval's
ablation (``validator eval --ablate``) builds one such validator per rule and reports the wrong
approvals each rule prevents and the false blocks it causes.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

__all__ = ["RULES", "on", "switched_off"]

RULES: dict[str, str] = {
    "outside-quotes": "a quote found only outside the user's own words blocks (EVIDENCE_NOT_FROM_USER)",
    "fabricated-quotes": "a quote found nowhere blocks (EVIDENCE_NOT_FOUND)",
    "pasted-text": "pasted, forwarded and quoted text in a user message is not the user's",
    "request-grammar": "a request for the action must be proved: not a question, report, condition or retraction",
    "negation": "a negation governs what follows it (requests and values under it do not count)",
    "value-identity": "targets and entities must stand in the user's request, compared as values",
    "provenance": "a value looked up in the record the user named is delegated, not unknown",
    "egress": "an exempt call whose link carries the user's words to a host they never named goes to the user",
    "dangerous-values-to-user": "a dangerous action with a value the user never gave goes to the user",
    "dangerous-arguments": "every argument of a dangerous action is compared, not only its targets (a role, a body)",
    "one-request": "one request authorizes one dangerous action",
}
"""Each rule's name and what it does."""

_OFF: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("validator_rules_off", default=frozenset())


def on(rule: str) -> bool:
    """Whether ``rule`` is on here (always, outside an ablation)."""
    return rule not in _OFF.get()


@contextlib.contextmanager
def switched_off(*rules: str) -> Iterator[None]:
    """Run the block with ``rules`` off (for measuring them; never in production)."""
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        raise ValueError(f"unknown rules: {', '.join(unknown)}")
    if not rules:
        yield
        return
    token = _OFF.set(_OFF.get() | frozenset(rules))  # nested: what an outer block switched off stays off
    try:
        yield
    finally:
        _OFF.reset(token)
