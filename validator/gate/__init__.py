"""The evidence gate: what code can decide, code decides, before any judge runs.

- :mod:`.checks`: :func:`run_gate` over one action (quotes, cited authorizations, value provenance).
- :mod:`.text`: normalisation and verbatim search over a transcript.
- :mod:`.entities`: URLs, email addresses, IBANs, account and phone numbers in free text.
- :mod:`.authorizations`: standing authorizations and their constraints.
- :mod:`.lookup`: reading the cited authorizations from the store (the gate's only I/O).
- :mod:`.paths`: dotted argument paths and their leaves.
"""

from validator.gate.checks import run_gate

__all__ = ["run_gate"]
