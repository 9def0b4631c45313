"""Wiring a shared store into a validator: authorizations, the audit log and verdict reuse in one place."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from validator.engine import Validator
from validator.record.audit import AuditRecorder
from validator.record.recorder import Recorder, Recorders
from validator.state.reuse import VerdictReuse
from validator.store.base import Store

__all__ = ["stateful_validator"]


def stateful_validator(
    store: Store,
    *,
    reuse_ttl: timedelta | None = timedelta(minutes=10),
    spool: str | Literal[False] | None = None,
    extra_recorders: tuple[Recorder, ...] = (),
    **kwargs: Any,
) -> Validator:
    """A :class:`~validator.Validator` whose authorizations, audit log and verdict reuse live in ``store``.

    ``spool``: where audit records wait while the store is down (default: the state folder), or
    ``False`` for none (a record the store cannot take then fails, and an approval does not run).
    """
    recorder = Recorders(AuditRecorder(store, spool), *extra_recorders)
    reuse = VerdictReuse(store, reuse_ttl) if reuse_ttl else None
    return Validator(authorizations=store, recorder=recorder, reuse=reuse, ledger=store, **kwargs)
