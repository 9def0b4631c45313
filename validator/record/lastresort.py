"""The last-resort sink: when neither the audit store nor its spool can take a record, the record
still leaves a trace, as one JSON line on standard error (``{"validator_unrecorded_verdict": ...}``)
that a log collector keeps. Writing it never raises."""

from __future__ import annotations

import logging
import sys

from validator._json import dumps
from validator.record.recorder import AuditEvent

__all__ = ["MARKER", "write"]

log = logging.getLogger("validator.audit")
MARKER = "validator_unrecorded_verdict"


def write(event: AuditEvent, error: str) -> None:
    """Write ``event`` to standard error as one structured line (and to the log)."""
    line = dumps({MARKER: event.to_dict(), "error": error})
    try:
        stream = sys.stderr or sys.__stderr__
        if stream is not None:
            stream.write(line + "\n")
            stream.flush()
    except Exception:  # the last resort must not fail the check itself
        pass
    log.critical("verdict %s for %s not recorded (%s); written to stderr", event.id, event.tool, error)
