"""The evals that measure the validator and its judge: cases, the matrix and its bars, reports, recordings,
and candidate cases proposed from the audit (``validator eval``)."""
