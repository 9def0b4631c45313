"""The evidence gate: what code can decide, code decides, before any judge runs.

- :mod:`.checks`: :func:`run_gate` over one action (quotes, cited authorizations, value provenance).
- :mod:`.authorizations`: standing authorizations, their constraints and how often their words let them be used.
- :mod:`.grounding` and :mod:`.provenance`: where each value of a call came from.
- :mod:`.requests`, :mod:`.context` and :mod:`.reader`: the user's request read for one tool.

It reads words with :mod:`validator.text` and reports :mod:`validator.findings`; it decides nothing.
"""

from validator.gate.checks import run_gate

__all__ = ["run_gate"]
