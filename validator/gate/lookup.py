"""Looking up the standing authorizations a justification cites, before the gate checks them.

The only I/O of the gate stage: each cited id is read from the store. A store that cannot answer
makes that authorization ``unavailable`` (the gate then blocks with ``AUTHORIZATION_UNAVAILABLE``),
never valid.
"""

from __future__ import annotations

import asyncio

from validator.exceptions import StoreError
from validator.gate.authorizations import Resolved, StandingAuthorization
from validator.inputs.action import AuthorizationEvidence, PendingAction, parse_justification
from validator.store.base import AsyncAuthorizationStore, AuthorizationStore

__all__ = ["Resolved", "aresolve", "cited_ids", "resolve"]


def cited_ids(action: PendingAction) -> list[str]:
    """The authorization ids the action's justification cites (none when it does not parse)."""
    justification, _ = parse_justification(action.justification)
    if justification is None:
        return []
    return [e.authorization_id for e in justification.evidence if isinstance(e, AuthorizationEvidence)]


def _failure(exc: Exception) -> StoreError:
    return exc if isinstance(exc, StoreError) else StoreError(f"{type(exc).__name__}: {exc}")


def resolve(store: AuthorizationStore | None, action: PendingAction) -> Resolved:
    """Every cited standing authorization, read from ``store`` (None: no store, so none exists)."""
    resolved: dict[str, StandingAuthorization | StoreError | None] = {}
    for auth_id in cited_ids(action):
        try:
            resolved[auth_id] = store.get(auth_id) if store is not None else None
        except Exception as exc:
            resolved[auth_id] = _failure(exc)
    return resolved


async def aresolve(store: AuthorizationStore | None, action: PendingAction) -> Resolved:
    """Async twin of :func:`resolve`: the store's own async reads, else its sync reads in a thread."""
    ids = cited_ids(action)
    if not ids:
        return {}
    if not isinstance(store, AsyncAuthorizationStore):
        return await asyncio.to_thread(resolve, store, action)
    resolved: dict[str, StandingAuthorization | StoreError | None] = {}
    for auth_id in ids:
        try:
            resolved[auth_id] = await store.aget(auth_id)
        except Exception as exc:
            resolved[auth_id] = _failure(exc)
    return resolved
