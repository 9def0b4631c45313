"""The engine: policy, justification, evidence gate, judge, decision, record, in one check.

- :mod:`validator.engine.base`: :class:`BaseValidator`, what every validator is (the surface the host adapters
  take), with its options and :class:`ValidatorConfig`;
- :mod:`validator.engine.pipeline`: :class:`Validator` and its one-call forms (``validate``, ``avalidate``,
  ``check``);
- :mod:`validator.engine.plan`: a check planned once (tool policy, parsed justification, every store key);
- :mod:`validator.shells`: the check's steps written once, run by a sync and an async shell;
- :mod:`validator.engine.stateful`: a validator whose state lives in one shared store.
"""

from __future__ import annotations

from validator.engine.base import ActionInput, BaseValidator, MessagesInput, ValidatorConfig
from validator.engine.pipeline import Validator, avalidate, check, validate

__all__ = [
    "ActionInput",
    "BaseValidator",
    "MessagesInput",
    "Validator",
    "ValidatorConfig",
    "avalidate",
    "check",
    "validate",
]
