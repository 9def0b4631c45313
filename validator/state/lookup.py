"""Looking up the standing authorizations a justification cites, before the gate checks them.

The only I/O of the gate stage: each cited id is read from the store. A store that cannot answer
makes that authorization ``unavailable`` (the gate then blocks with ``AUTHORIZATION_UNAVAILABLE``),
never valid.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from validator.exceptions import StoreError
from validator.gate.authorizations import Resolved, scope_problems
from validator.inputs.action import PendingAction
from validator.policy import ToolPolicy
from validator.store.base import AuthorizationStore
from validator.store.records import StandingAuthorization

log = logging.getLogger("validator.authorizations")

__all__ = ["Resolved", "aresolve", "resolve", "standing", "with_standing"]


def _failure(exc: Exception) -> StoreError:
    return exc if isinstance(exc, StoreError) else StoreError(f"{type(exc).__name__}: {exc}")


def resolve(store: AuthorizationStore | None, ids: Sequence[str]) -> Resolved:
    """Every cited standing authorization (``ids``), read from ``store`` (None: no store, so none exists)."""
    resolved: dict[str, StandingAuthorization | StoreError | None] = {}
    for auth_id in ids:
        try:
            resolved[auth_id] = store.get(auth_id) if store is not None else None
        except Exception as exc:
            resolved[auth_id] = _failure(exc)
    return resolved


async def aresolve(store: AuthorizationStore | None, ids: Sequence[str]) -> Resolved:
    """Async twin of :func:`resolve`: the store's own async reads, else its sync reads in a thread."""
    if not ids:
        return {}
    if store is None:
        return resolve(store, ids)
    resolved: dict[str, StandingAuthorization | StoreError | None] = {}
    for auth_id in ids:
        try:
            resolved[auth_id] = await store.aget(auth_id)
        except Exception as exc:
            resolved[auth_id] = _failure(exc)
    return resolved


def standing(
    store: AuthorizationStore | None, action: PendingAction, tool_policy: ToolPolicy, user_id: str | None, now: datetime
) -> list[StandingAuthorization]:
    """The user's own active standing authorizations whose whole scope covers ``action``, looked up by the
    validator itself (cited or not). A store that cannot answer finds none: the check goes on without them."""
    if store is None or user_id is None or tool_policy.exempt:
        return []
    try:
        granted = store.list(user_id)
    except Exception as exc:
        log.warning("standing authorizations of %s could not be listed: %s", user_id, exc)
        return []
    args, risk, targets = dict(action.args), tool_policy.risk, tool_policy.targets
    return [
        a
        for a in granted
        if a.user_id == user_id
        and a.status(now) == "active"
        and not scope_problems(a, action.tool, args, tool_risk=risk, targets=targets)
    ]


def with_standing(
    action: PendingAction, resolved: Resolved, found: list[StandingAuthorization]
) -> tuple[PendingAction, Resolved]:
    """The action with the authorizations found for it added to its evidence, as if the agent had cited them
    (only to a justification that parses: an action without one is refused whatever the user granted)."""
    justification = action.justification
    new = [a for a in found if a.id not in resolved]
    if not new or not isinstance(justification, Mapping) or not isinstance(justification.get("evidence"), list):
        return action, resolved
    evidence = [*justification["evidence"], *({"authorization_id": a.id} for a in new)]
    grown = replace(action, justification={**justification, "evidence": evidence})
    return grown, {**resolved, **{a.id: a for a in new}}
