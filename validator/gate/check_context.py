"""What every step of one check reads with, carried as one value: the transcript, whose words are the user's, the
rules, the deadline, the clock and the language pack.

:func:`~validator.gate.checks.run_gate` builds it once; each step of the gate takes it in place of the five or six
parameters it used to pass on by hand, so no step can read the transcript with one user and the rules of another.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from validator.inputs.transcript import Transcript
from validator.language import LanguagePack, english
from validator.language.rules import ALL_ON, Rules
from validator.text.search import within

__all__ = ["CheckContext"]


class CheckContext(msgspec.Struct, frozen=True):
    """One check's reading context (immutable: a step that reads with other rules makes its own copy)."""

    transcript: Transcript
    user_id: str | None = None
    """Whose ``user`` messages are the user's own (None: every one without another author named)."""
    rules: Rules = ALL_ON
    """The rules the gate runs with (all, outside an ablation)."""
    deadline: float | None = None
    """A ``time.perf_counter()`` value past which the gate stops its work (None: no budget)."""
    now: datetime | None = None
    """The check's clock ("today", "tomorrow", whether a grant has expired); None: no date is compared."""
    pack: LanguagePack = msgspec.field(default_factory=english)
    """The language the user's words are read in."""

    def within(self, stage: str) -> None:
        """Raise :class:`~validator.text.search.SearchBudgetExceeded` past the deadline, naming ``stage``."""
        within(self.deadline, stage)
