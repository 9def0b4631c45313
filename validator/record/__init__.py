"""Recording every verdict: the recorder seam, the audit recorder with its spool, the block-rate monitor."""

from validator.record.recorder import AuditEvent, MemoryRecorder, Recorder, Recorders, hash_args

__all__ = ["AuditEvent", "hash_args", "MemoryRecorder", "Recorder", "Recorders"]
