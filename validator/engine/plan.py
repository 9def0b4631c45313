"""A check planned once: the tool's policy, the parsed justification and every store key, before any I/O.

Everything a check reads from a store is named by its plan, so a store can read it all ahead in one round
trip (:meth:`~validator.store.base.RequestLedger.session`), and the steps that read it later use the same
keys instead of building them again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import msgspec

from validator.inputs.action import Justification, PendingAction
from validator.inputs.transcript import Transcript
from validator.policy import Policy, ToolPolicy
from validator.state.keys import cited_ids, retry_key, verdict_key

__all__ = ["CheckPlan"]


class CheckPlan(msgspec.Struct, frozen=True, kw_only=True):
    """One check of one action, planned; see the module docstring."""

    transcript: Transcript
    action: PendingAction
    user_id: str | None
    agent_request: Mapping[str, Any] | None
    edited: tuple[str, ...]
    """The argument paths a person set in the host's own review step (see ``Validator.validate``)."""
    tool_policy: ToolPolicy
    justification: Justification | None
    """The justification as the agent gave it, parsed (None: it does not parse; the gate says why)."""
    cited: tuple[str, ...]
    """The standing authorizations it cites."""
    retry_key: str
    """The retry cap's key of this action in this user turn."""
    verdict_key: str | None
    """Where its judged verdict is kept for reuse (None: no reuse, or no justification to key it on)."""

    @classmethod
    def of(
        cls,
        transcript: Transcript,
        action: PendingAction,
        *,
        policy: Policy,
        judge: str,
        reuse: bool,
        user_id: str | None = None,
        agent_request: Mapping[str, Any] | None = None,
        edited: Collection[str] = (),
        language: str = "",
    ) -> CheckPlan:
        tool_policy = policy.for_tool(action.tool)
        justification = action.parsed
        kept = None
        if reuse and justification is not None:
            kept = verdict_key(
                transcript,
                action,
                justification,
                user_id=user_id,
                agent_request=agent_request,
                policy_version=policy.version,
                judge=judge,
                language=language,
            )
        return cls(
            transcript=transcript,
            action=action,
            user_id=user_id,
            agent_request=agent_request,
            edited=tuple(edited),
            tool_policy=tool_policy,
            justification=justification,
            cited=tuple(cited_ids(action)),
            retry_key=retry_key(transcript, action, tool_policy, user_id),
            verdict_key=kept,
        )
