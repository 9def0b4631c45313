"""Judges: whatever decides what code alone cannot.

- :mod:`.base`: the :class:`Judge` seam, :class:`JudgeRequest` and :class:`JudgeOutput`.
- :mod:`.runner`: calling a judge with a time limit and one retry.
- :mod:`.strict`: the embedded offline judge (and :mod:`.intent`, the words it reads).
- :mod:`.model`: what every model-backed judge shares (verdict tool, request text, guard).
- :mod:`.anthropic`: Claude as the validator, sharing the agent's prompt cache.
"""

from validator.judges.base import Judge, JudgeOutput, JudgeRequest
from validator.judges.strict import StrictJudge

__all__ = ["Judge", "JudgeOutput", "JudgeRequest", "StrictJudge"]
