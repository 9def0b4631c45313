"""The engine: policy, justification, evidence gate, judge, decision, record, in one check.

- :mod:`validator.engine.pipeline`: :class:`Validator` and its one-call forms (``validate``, ``avalidate``,
  ``check``);
- :mod:`validator.engine.plan`: a check planned once (tool policy, parsed justification, every store key);
- :mod:`validator.shells`: the check's steps written once, run by a sync and an async shell;
- :mod:`validator.engine.stateful`: a validator whose state lives in one shared store.
"""

from __future__ import annotations

from validator.engine.pipeline import (
    ActionInput,
    MessagesInput,
    Validator,
    ValidatorConfig,
    avalidate,
    check,
    validate,
)

__all__ = ["ActionInput", "MessagesInput", "Validator", "ValidatorConfig", "avalidate", "check", "validate"]
