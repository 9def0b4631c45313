"""The audit recorder: every verdict appended once to the store's audit log, even through an outage.

When the store cannot take a record it goes to a local spool file (JSON lines, flushed to disk; one
per store, ``audit-spool-<hash of the store>.jsonl`` in ``$VALIDATOR_SPOOL_DIR``, else the
user's state folder, :func:`validator.store.folders.state_folder`: ``~/.local/state/action-validator`` on Linux)
and the verdict stands; the next record, or :meth:`AuditRecorder.flush`, sends the spooled records
first, in order. Appends are idempotent by event id, so a spool replayed after a crash never
duplicates a record. Nothing is written to the working directory, and no spool or lock file exists
while nothing is spooled. Several processes sharing a spool take turns through a portable file lock
(``filelock``). Only when neither the store nor the spool can take a record does recording fail
(the engine then writes the record to the last-resort sink and refuses to run an approved action).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import os
import threading
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from validator._json import dumps
from validator.exceptions import StoreError
from validator.record.recorder import AuditEvent, Recorder
from validator.store.base import SpendLost, Store
from validator.store.folders import state_folder

__all__ = ["AuditRecorder"]

log = logging.getLogger("validator.audit")


def _time(item: dict[str, Any]) -> datetime | None:
    try:
        at = datetime.fromisoformat(str(item.get("time")))
    except ValueError:
        return None
    return at if at.tzinfo is not None else None


def spool_folder() -> Path:
    """Where spools live: ``$VALIDATOR_SPOOL_DIR``, else the platform's per-user state directory."""
    configured = os.environ.get("VALIDATOR_SPOOL_DIR")
    if configured:
        return Path(configured)
    return state_folder()


class _SpoolLock:
    """A cross-process lock on ``<spool>.lock`` (``filelock``, portable), taken only to touch the spool;
    where no lock can be had (no writable folder), the store path still works."""

    def __init__(self, spool: Path) -> None:
        self.path = spool.with_suffix(spool.suffix + ".lock")
        self._lock: Any = None

    def __enter__(self) -> _SpoolLock:
        from filelock import FileLock

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock = FileLock(str(self.path))
            self._lock.acquire()
        except OSError as exc:
            log.warning("audit spool lock unavailable (%s): %s", self.path, exc)
            self._lock = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lock is not None:
            self._lock.release()
            self.path.unlink(missing_ok=True)  # leave nothing behind


class AuditRecorder(Recorder):
    """Records each :class:`AuditEvent` in ``store``; spools to ``spool`` while the store is down.

    ``spool=False``: no spool. A record the store cannot take then fails (an approval does not run):
    what a decision service wants, whose local disk is not the shared audit log.
    """

    def __init__(self, store: Store, spool: str | Path | Literal[False] | None = None) -> None:
        self.store = store
        self._direct = spool is False
        if spool is None or spool is False:
            # One spool per store: records spooled for one store are never flushed into another.
            tag = hashlib.sha256(store.identity.encode()).hexdigest()[:12]
            spool = os.environ.get("VALIDATOR_SPOOL") or spool_folder() / f"audit-spool-{tag}.jsonl"
        self.spool = Path(spool)
        self._lock = threading.Lock()
        self._home = store
        """Where spooled records go: the store itself, never one check's session of it (whose record alone
        carries that check's writes)."""

    def through(self, store: object, view: object) -> AuditRecorder:
        """This recorder appending through ``view`` (one check's session of ``store``: the check's queued
        writes then go with its audit append), when ``store`` is the one it appends to. Spool and lock are
        shared."""
        if store is not self.store:
            return self
        bound = copy.copy(self)
        bound.store = cast(Store, view)  # a session is the store it was opened on (``session`` returns Self)
        return bound

    def appends_to(self, store: object) -> bool:
        """Whether this recorder appends to ``store``."""
        return store is self.store

    def _spooled(self) -> list[dict[str, Any]]:
        """The spooled records, in order. A line that does not parse (a write cut short by a crash) is
        moved to ``<spool>.corrupt`` and logged: it must not stop every later record."""
        if not self.spool.exists():
            return []
        good: list[dict[str, Any]] = []
        bad: list[str] = []
        for line in self.spool.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                bad.append(line)
                continue
            if isinstance(item, dict) and isinstance(item.get("id"), str) and _time(item) is not None:
                good.append(item)
            else:
                bad.append(line)
        if bad:
            with self.spool.with_suffix(self.spool.suffix + ".corrupt").open("a", encoding="utf-8") as fh:
                fh.write("\n".join(bad) + "\n")
            log.error("%d unreadable lines of the audit spool moved to %s.corrupt", len(bad), self.spool)
            self._write_spool(good)
        return good

    def _write_spool(self, items: list[dict[str, Any]]) -> None:
        if not items:
            self.spool.unlink(missing_ok=True)
            return
        tmp = self.spool.with_suffix(self.spool.suffix + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for item in items:
                fh.write(dumps(item) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(self.spool)

    def _append_spool(self, item: dict[str, Any]) -> None:
        self.spool.parent.mkdir(parents=True, exist_ok=True)
        with self.spool.open("a", encoding="utf-8") as fh:
            fh.write(dumps(item) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def _send(self, item: dict[str, Any], store: Store | None = None) -> bool:
        at = _time(item)
        if at is None:  # checked when the spool is read; a record built here always has its time
            raise StoreError(f"audit record {item.get('id')!r} has no readable time")
        return (store or self.store).append_audit(item["id"], item, at)

    def _flush_locked(self) -> int:
        pending = self._spooled()
        done = added = 0
        try:
            for item in pending:
                added += self._send(item, self._home)  # False: the store had it already (a replayed flush)
                done += 1
        finally:
            if done:
                self._write_spool(pending[done:])
                log.info("flushed %d spooled audit records (%d new, %d left)", done, added, len(pending) - done)
        return added

    def flush(self) -> int:
        """Send spooled records to the store, in order; how many the store did not have yet. Raises
        StoreError if it is down."""
        with self._lock:
            if not self.spool.exists():
                return 0
            with _SpoolLock(self.spool):
                return self._flush_locked()

    @property
    def spooled(self) -> int:
        """Records waiting in the spool."""
        with self._lock:
            return len(self._spooled())

    def record(self, event: AuditEvent) -> None:
        item = event.to_dict()
        if self._direct:  # no spool: the store takes it, or the record fails
            self._send(item)
            return
        # A record that spends a user's request is the store's or nothing (never spooled): what is spooled
        # goes first, and a store that cannot take it fails this record too.
        carries = self.store.carries_spends()
        with self._lock:
            if not self.spool.exists():  # the usual case: nothing spooled, no file touched
                try:
                    self._send(item)
                    return
                except StoreError as exc:
                    if carries:  # not spooled: the approval and its spend are the store's or nothing
                        raise SpendLost(None, str(exc)) from exc
                    log.warning("audit store unavailable, spooling %s: %s", event.id, exc)
            with _SpoolLock(self.spool):  # one writer at a time, across processes too
                try:
                    self._flush_locked()
                    self._send(item)
                except StoreError as exc:
                    if carries:  # the spool could not be flushed first: the store is down, so nothing was spent
                        raise SpendLost(None, str(exc)) from exc
                    log.warning("audit store unavailable, spooling %s: %s", event.id, exc)
                    self._append_spool(item)  # an OSError here propagates: the verdict was not recorded

    async def arecord(self, event: AuditEvent) -> None:
        import asyncio

        # One ordered writer: appends go through the same lock as the sync path, in a thread.
        await asyncio.to_thread(self.record, event)
