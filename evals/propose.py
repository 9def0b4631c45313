"""User answers become cases: the audit's verdicts paired with the user's answers, as candidate cases.

Where the user and the validator disagreed, the user's answer is the label a person may accept
(``validator eval add``):

- ``escalation-approved``: the validator asked, the user approved (``Validator.answer``): ``pass``;
- ``block-overridden``: the validator blocked, the user overrode it (``Validator.feedback``): ``pass``;
- ``approval-rejected``: the validator approved, the user said it was wrong (``Validator.feedback``):
  ``block``.

Agreements (asked and rejected, approved and kept) are counted, not proposed. An answer is paired with
the last verdict the validator gave before it on the same call: the same user, tool, argument hash and
transcript hash (the user's answer is recorded under the hashes of the call they were asked about).

The audit keeps hashes, not conversations (a transcript is never copied into it), so a candidate needs
the check input the host kept: ``inputs`` are matched to the audit by tool and both hashes. A pair
without a matching input is still reported, with its hashes, so a person can find the conversation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from validator.exceptions import InputError
from validator.inputs.checkinput import CheckInput
from validator.record.recorder import hash_args
from validator.verdict import Code

__all__ = ["Candidate", "Proposals", "propose"]

_USER = frozenset({Code.APPROVED_BY_USER.value, Code.REJECTED_BY_USER.value})
_KINDS: dict[tuple[str, bool], tuple[str, Literal["block", "pass"]] | None] = {
    ("ask_user", True): ("escalation-approved", "pass"),
    ("block", True): ("block-overridden", "pass"),
    ("approve", False): ("approval-rejected", "block"),
    ("ask_user", False): None,  # asked, and the user said no: they agree
    ("approve", True): None,
    ("block", False): None,
}


@dataclass(frozen=True)
class Candidate:
    """One disagreement between the validator and the user, with the user's answer as the label."""

    kind: str
    expected: Literal["block", "pass"]
    verdict_entry: str
    """The audit entry of the validator's verdict (``eval add --audit`` checks the input against it)."""
    answer_entry: str
    tool: str
    validator_code: str
    answer: str
    """What the user's record says (the reasoning of their answer, with their words)."""
    args_hash: str
    transcript_hash: str
    verdict: Mapping[str, Any] = field(default_factory=dict)
    """The validator's verdict, as recorded."""
    check: dict[str, Any] | None = None
    """The check input that matched both hashes, or None when none did."""


@dataclass
class Proposals:
    """What :func:`propose` found."""

    candidates: list[Candidate] = field(default_factory=list)
    agreements: Counter[str] = field(default_factory=Counter)
    """Answers that agreed with the validator, by ``decision -> answer``."""
    unpaired: int = 0
    """User answers with no earlier verdict on the same call in the entries read."""


def _key(payload: Mapping[str, Any]) -> tuple[Any, ...]:
    return payload.get("user_id"), payload.get("tool"), payload.get("args_hash"), payload.get("transcript_hash")


def _inputs(inputs: Iterable[tuple[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Check inputs by ``(tool, args hash, transcript hash)``; a malformed one is an :class:`InputError` naming
    where it is."""
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    for where, raw in inputs:
        try:
            check = CheckInput.from_dict(raw)
        except InputError as exc:
            raise InputError(exc.problems, source=where) from None
        found[(check.action.tool, hash_args(dict(check.action.args)), check.transcript.digest)] = raw
    return found


def propose(entries: Iterable[tuple[str, Mapping[str, Any]]], inputs: Iterable[tuple[str, Any]] = ()) -> Proposals:
    """Pair each user answer in ``entries`` (audit records oldest first, ``(entry_id, record)``) with the
    validator's verdict before it, and propose the disagreements as cases (see the module docstring)."""
    matched = _inputs(inputs)
    last: dict[tuple[Any, ...], tuple[str, Mapping[str, Any]]] = {}
    out = Proposals()
    for entry_id, payload in entries:
        verdict = payload.get("verdict")
        if not isinstance(verdict, Mapping):
            continue
        key = _key(payload)
        if verdict.get("code") not in _USER:
            last[key] = entry_id, verdict
            continue
        before = last.pop(key, None)
        if before is None:
            out.unpaired += 1
            continue
        approved = verdict.get("code") == Code.APPROVED_BY_USER.value
        decided = str(before[1].get("decision"))
        kind = _KINDS.get((decided, approved))
        if kind is None:
            out.agreements[f"{decided} -> {'approved' if approved else 'rejected'}"] += 1
            continue
        tool, args_hash, transcript_hash = (
            str(payload.get("tool")),
            payload.get("args_hash"),
            payload.get("transcript_hash"),
        )
        out.candidates.append(
            Candidate(
                kind=kind[0],
                expected=kind[1],
                verdict_entry=before[0],
                answer_entry=entry_id,
                tool=tool,
                validator_code=str(before[1].get("code")),
                answer=str(verdict.get("reasoning", "")),
                args_hash=str(args_hash),
                transcript_hash=str(transcript_hash),
                verdict=before[1],
                check=matched.get((tool, args_hash, transcript_hash)),
            )
        )
    return out
