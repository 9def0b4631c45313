"""Small shared vocabularies: who wrote a message, how risky a tool is, how sure a judge is; the version; and the
environment variable naming the store.

They sit below every stage so the policy, the transcript, the findings and the verdict can all name
them without importing each other.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["ROLES", "STORE_URL_ENV", "VERSION", "Confidence", "Risk", "Role"]

VERSION = "0.1.0"
"""The package's version (``validator.__version__``; OpenTelemetry's instrumentation scope reads it here, below
every stage)."""

Role = Literal["user", "assistant", "tool", "system"]
"""Who wrote a message: only ``user`` speaks for the user."""
ROLES: tuple[Role, ...] = ("user", "assistant", "tool", "system")

Risk = Literal["dangerous", "general"]
"""``dangerous``: money, data leaving, deletion, permissions; ``general``: everything else guarded."""

Confidence = Literal["high", "medium", "low"]

STORE_URL_ENV = "VALIDATOR_STORE_URL"
"""The environment variable naming the store when no URL is given (empty: not given): read by ``open_store``, and by
each command line's ``--store`` (the persistent hook's client among them, which imports no store)."""
