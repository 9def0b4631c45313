"""Verdict reuse: the same action against the same conversation is judged once.

The key (:func:`validator.state.keys.verdict_key`) hashes the user, the policy version, the judge, the
tool, its arguments, the justification, the transcript and the language pack a validator was given (none: the
shipped English one), so a reuse never crosses users, policy versions or languages. A retried call within
the TTL gets the stored verdict back, marked ``reused`` and with no usage
(nothing was billed again). The evidence gate still runs on every call (a standing authorization revoked
since is caught); only the judge's part is reused. Verdicts that record a failure (``JUDGE_UNAVAILABLE``,
``INTERNAL_ERROR``, ``RECORDER_UNAVAILABLE``) are never reused, and a store that cannot answer means no
reuse, never an approval.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta
from typing import Any

from validator.exceptions import StoreError
from validator.judges.base import JudgeRequest
from validator.state.keys import verdict_key
from validator.store.base import VerdictCache
from validator.verdict import Code, Verdict

__all__ = ["VerdictReuse"]

log = logging.getLogger("validator.state.reuse")
NEVER_REUSED = frozenset({Code.JUDGE_UNAVAILABLE, Code.INTERNAL_ERROR, Code.RECORDER_UNAVAILABLE})


class VerdictReuse:
    """Keeps judged verdicts in ``store`` for ``ttl``; see the module docstring."""

    def __init__(self, store: VerdictCache, ttl: timedelta = timedelta(minutes=10)) -> None:
        self.store = store
        self.ttl = ttl

    @staticmethod
    def key(request: JudgeRequest, policy_version: str, judge: str = "") -> str:
        return verdict_key(
            request.transcript,
            request.action,
            request.justification,
            user_id=request.user_id,
            agent_request=request.agent_request,
            policy_version=policy_version,
            judge=judge,
            language=request.language.digest if request.language is not None else "",
        )

    @staticmethod
    def _reused(data: dict[str, Any] | None) -> Verdict | None:
        if data is None:
            return None
        try:
            verdict = Verdict.from_dict(data)
        except Exception as exc:  # a corrupt stored verdict is just not reused
            log.warning("stored verdict is corrupt, judging again: %s", exc)
            return None
        return replace(verdict, reused=True, usage=None, judge_errors=())

    def get(self, key: str) -> Verdict | None:
        try:
            return self._reused(self.store.get_verdict(key))
        except StoreError as exc:
            log.warning("verdict reuse unavailable: %s", exc)
            return None

    async def aget(self, key: str) -> Verdict | None:
        try:
            return self._reused(await self.store.aget_verdict(key))
        except StoreError as exc:
            log.warning("verdict reuse unavailable: %s", exc)
            return None

    def put(self, key: str, verdict: Verdict) -> None:
        if verdict.code in NEVER_REUSED or verdict.reused:
            return
        try:
            self.store.put_verdict(key, verdict.to_dict(), self.ttl)
        except StoreError as exc:
            log.warning("verdict not kept for reuse: %s", exc)

    async def aput(self, key: str, verdict: Verdict) -> None:
        if verdict.code in NEVER_REUSED or verdict.reused:
            return
        try:
            await self.store.aput_verdict(key, verdict.to_dict(), self.ttl)
        except StoreError as exc:
            log.warning("verdict not kept for reuse: %s", exc)
