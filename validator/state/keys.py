"""Every key the engine's store-backed steps read or write, built here and nowhere else.

Each key is a SHA-256 over exactly what makes two checks "the same" for its step, with the user first,
so no key is ever shared across users:

- :func:`verdict_key` (verdict reuse): the user, the policy version, the judge (and the agent's model a
  judge without one of its own uses), the tool, its arguments, the justification and the transcript;
- :func:`retry_key` (the retry cap): the user, the user's latest turn, the tool and its target values;
- :func:`request_key` and :func:`grant_key` (the one-request ledger): a sentence of the user's, or a
  standing authorization in its period; :func:`spender` is what spends one (a call id with its tool and
  arguments, else the tool, arguments and conversation);
- :func:`cited_ids`: the standing authorizations a justification cites (read by id).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from validator._json import utf8
from validator.inputs.action import AuthorizationEvidence, Justification, PendingAction
from validator.inputs.transcript import Transcript
from validator.policy import ToolPolicy
from validator.record.recorder import hash_args
from validator.text.paths import leaves, lookup

__all__ = [
    "answered_call_key",
    "cited_ids",
    "grant_key",
    "outcome_key",
    "question_key",
    "request_key",
    "retry_key",
    "spender",
    "verdict_key",
]


def _sha(text: str) -> str:
    return hashlib.sha256(utf8(text)).hexdigest()


def verdict_key(
    transcript: Transcript,
    action: PendingAction,
    justification: Justification,
    *,
    user_id: str | None,
    agent_request: Mapping[str, Any] | None,
    policy_version: str,
    judge: str = "",
    language: str = "",
) -> str:
    """The key of this very check's judged verdict: known before the gate runs, so a store can read it ahead.
    ``language``: the digest of the pack a validator was given to read the user's words in (empty: the shipped
    English one, whose checks keep the keys they always had)."""
    material = [
        user_id,
        policy_version,
        judge,
        # a judge with no model of its own uses the agent's: another model is another judge
        (agent_request or {}).get("model"),
        action.tool,
        dict(action.args),
        justification.to_dict(),
        transcript.digest,
        *([language] if language else []),
    ]
    return _sha(json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str))


def retry_key(transcript: Transcript, action: PendingAction, tool_policy: ToolPolicy, user_id: str | None) -> str:
    """The same action in the same user turn: user, the user's latest message, tool and target values."""
    messages = transcript.messages
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)
    turn = "" if last is None else f"{last}:{messages[last].content}"
    targets = {t: sorted(map(str, leaves(lookup(action.args, t)[1]))) for t in tool_policy.targets}
    return _sha(f"{user_id}\x00{_sha(turn)}\x00{action.tool}\x00{hash_args(targets)}")


def request_key(user_id: str | None, text: str, start: int, end: int, step_of: str = "") -> str:
    """The ledger's key of one sentence (``text[start:end]``) of a user message, spent as a request (for a
    step of another tool's request, per step: ``step_of`` names the step's tool)."""
    step = f"\x00step:{step_of}" if step_of else ""
    return hashlib.sha256(f"{user_id}\x00{_sha(text)}{step}\x00{start}:{end}".encode()).hexdigest()


def grant_key(user_id: str | None, authorization_id: str, bucket: str) -> str:
    """The ledger's key of a standing authorization in one of its periods (``once``, ``2026-11``, ...)."""
    return hashlib.sha256(f"{user_id}\x00grant\x00{authorization_id}\x00{bucket}".encode()).hexdigest()


def spender(action: PendingAction, transcript: Transcript) -> str:
    """What makes a second check the same action: its call id *and* its tool and arguments (an id reused for
    other arguments is another action, which spends anew), else the tool, arguments and conversation."""
    what = hash_args({"tool": action.tool, "args": action.args})
    if action.call_id:
        return f"call:{action.call_id}:{what}"
    return "args:" + hash_args({"tool": action.tool, "args": action.args, "transcript": transcript.digest})


def cited_ids(action: PendingAction) -> list[str]:
    """The authorization ids the action's justification cites (none when it does not parse)."""
    justification = action.parsed
    if justification is None:
        return []
    return [e.authorization_id for e in justification.evidence if isinstance(e, AuthorizationEvidence)]


def outcome_key(question_id: str) -> str:
    """The key of a question's outcome once answered (:func:`validator.state.questions.decided`)."""
    return f"question-outcome:{question_id}"


def answered_call_key(user_id: str | None, call_id: str) -> str:
    """The key under which the answered verdict of a call waits for the agent's check of that call again."""
    return f"answered-call:{_sha(user_id or '')}:{_sha(call_id)}"


def question_key(question_id: str) -> str:
    """The key of a pending question (:mod:`validator.state.questions`): its record, and its one answer's mark."""
    return f"question:{question_id}"
