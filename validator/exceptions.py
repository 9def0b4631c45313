"""Exceptions raised by the action validator, the one signal it raises on purpose, and the field problems an
input error names (a pydantic error read into them: :func:`problems_from_pydantic`).

Errors (something went wrong)::

    ValidatorError
    ├── InputError            bad check input: names each field path and its problem
    │   ├── PolicyError           a policy that cannot be loaded or is inconsistent
    │   └── PackError             a language pack's file that lacks a table or holds a wrong one
    ├── JudgeError            a judge could not produce a usable verdict (retried once, then blocks)
    │   ├── JudgeTimeout
    │   ├── JudgeOutputError      a verdict that does not parse, contradicts itself, or calls other tools
    │   └── JudgeServiceError     the model service failed the call (``status_code``)
    │       ├── JudgeTransportError   it could not answer now (connection, 429, 5xx, 529)
    │       └── JudgeRequestRejected  it refused the request (4xx, credentials)
    ├── StoreError            a store (standing authorizations, audit) failed
    ├── SetupError            it cannot work as set up: no API key, a malformed base URL, an unknown model
    └── UsageError            the developer used the library wrongly (the one usage error)

Signals (nothing went wrong; the host must change course)::

    ActionBlocked             a guarded function was called and not approved (carries the verdict)

None of the errors ever turns into an approval: inside :meth:`Validator.validate` every failure
becomes a blocking verdict with its own code; outside it (parsing input, loading a policy, a
mistaken call) they are raised so the caller can report them. Host frameworks' own control-flow
signals (LangGraph's interrupts) are never turned into verdicts: each adapter passes its framework's to
its lifecycle, a validator whose judge may raise one names them in ``ValidatorConfig.control_flow``, and
those paths re-raise them (no process-wide registry: importing an integration changes nothing).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

    from validator.verdict import Usage, Verdict

__all__ = [
    "ActionBlocked",
    "is_control_flow",
    "problems_from_pydantic",
    "FieldProblem",
    "InputError",
    "JudgeError",
    "JudgeOutputError",
    "JudgeRequestRejected",
    "JudgeServiceError",
    "JudgeTimeout",
    "JudgeTransportError",
    "PackError",
    "PolicyError",
    "SetupError",
    "StoreError",
    "UsageError",
    "ValidatorError",
]


class ValidatorError(Exception):
    """Root of every error this library raises."""


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """One problem with one field of an input."""

    path: str
    """Where, as a path such as ``messages[2].tool_call_id``."""
    problem: str
    """What is wrong, in words a developer can act on."""

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}" if self.path else self.problem


def _render(what: str, problems: Sequence[FieldProblem]) -> str:
    lines = [f"{what}: {len(problems)} problem{'s' if len(problems) != 1 else ''}"]
    lines += [f"  - {p}" for p in problems]
    return "\n".join(lines)


class InputError(ValidatorError):
    """A check input (transcript, action, limits) that cannot be validated as given."""

    def __init__(self, problems: Sequence[FieldProblem], *, source: str = "check input") -> None:
        self.problems = tuple(problems)
        self.source = source
        super().__init__(_render(f"invalid {source}", self.problems))

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_input_error, (type(self), self.problems, self.source))

    def to_dict(self) -> dict[str, object]:
        """The error as JSON-ready data (what the CLI prints in ``--jsonl`` mode)."""
        return {
            "error": "invalid_input",
            "source": self.source,
            "problems": [{"path": p.path, "problem": p.problem} for p in self.problems],
        }


def _rebuild_input_error(cls: type[InputError], problems: tuple[FieldProblem, ...], source: str) -> InputError:
    return cls(problems, source=source)


class PolicyError(InputError):
    """A tool policy (Python, JSON or TOML) that is malformed or contradicts itself."""

    def __init__(self, problems: Sequence[FieldProblem], *, source: str = "policy") -> None:
        super().__init__(problems, source=source)


class PackError(InputError):
    """A language pack's file that cannot be read as a pack: a table it needs is missing, or one holds what the
    pack cannot take (each problem names the table)."""

    def __init__(self, problems: Sequence[FieldProblem], *, source: str = "language pack") -> None:
        super().__init__(problems, source=source)


class JudgeError(ValidatorError):
    """A judge failed to return a usable verdict."""

    usage: Usage | None = None
    """What the failed call was billed, when the model answered (an unusable verdict still costs)."""

    def __init__(self, judge: str, detail: str) -> None:
        self.judge = judge
        self.detail = detail
        super().__init__(f"judge {judge!r} failed: {detail}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.judge, self.detail))


class JudgeTimeout(JudgeError):
    """A judge did not answer within its time limit."""

    def __init__(self, judge: str, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(judge, f"no answer within {seconds:g} s")

    def __reduce__(self) -> tuple[object, ...]:
        return (JudgeTimeout, (self.judge, self.seconds))


class JudgeOutputError(JudgeError):
    """A judge answered, but its verdict does not parse or contradicts itself."""


class JudgeServiceError(JudgeError):
    """The model service failed the call; ``status_code`` is its HTTP status, when there was one."""

    def __init__(self, judge: str, detail: str, status_code: int | None = None) -> None:
        self.status_code = status_code
        super().__init__(judge, detail if status_code is None else f"HTTP {status_code}: {detail}")
        self.detail = detail

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.judge, self.detail, self.status_code))


class JudgeTransportError(JudgeServiceError):
    """The model service could not answer now: a connection error, 429, 5xx or 529 overloaded."""


class JudgeRequestRejected(JudgeServiceError):
    """The model service refused the request itself (4xx, missing or bad credentials)."""


class StoreError(ValidatorError):
    """A store failed to read or write (unreachable, corrupt record)."""


class StoreBusy(StoreError):
    """Every pooled connection to the store stayed in use until the wait ran out: the store is busy, not down
    (the service answers 429 with ``Retry-After``, never 503)."""


class ActionBlocked(Exception):
    """Signal: a guarded tool was called and the validator did not approve it; the tool did not run.

    Raised by guarded plain functions outside a framework that can carry a refusal back to the
    model. ``verdict`` says which check failed and what to do next. It is not a
    :class:`ValidatorError`: nothing failed, the validator did its job.
    """

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        super().__init__(verdict.message_for_agent())

    def __reduce__(self) -> tuple[object, ...]:
        return (ActionBlocked, (self.verdict,))


class SetupError(ValidatorError):
    """The validator cannot work as it is set up: no API key, a malformed base URL, an unknown model.

    Raised when it is built (a judge's constructor), never as a verdict; the CLI exits 2 with it.
    """


class UsageError(ValidatorError):
    """Error caused by a usage mistake of the application developer: a sync call inside a running
    event loop, a tool that cannot be guarded, a verdict built with contradicting fields."""


def is_control_flow(exc: BaseException, signals: Iterable[type[BaseException]]) -> bool:
    """Whether ``exc`` is one of a host framework's control-flow ``signals`` (or a subclass of one): never
    a failed check, so never a verdict. Signals are given as a value (``ValidatorConfig.control_flow``, an
    adapter's own), never registered process-wide; nothing is matched by class name."""
    return any(isinstance(exc, signal) for signal in signals)


# Union members and tagged models add their own names to an error's location: keep the data path.
_UNION_TAG = re.compile(r"^(function-|tagged-)|^\w+\[.*\]$|^(str|int|float|bool|list|dict|none)$")


def _path_of(loc: tuple[int | str, ...], prefix: str = "") -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def problems_from_pydantic(
    exc: ValidationError,
    prefix: str = "",
    fields: Callable[[tuple[int | str, ...]], Collection[str]] | None = None,
) -> list[FieldProblem]:
    """The problems of ``exc``, each at its data path. ``fields``: the field names a document allows under a
    location (its parent's path): an unknown field then names the one it most likely meant."""
    problems: list[FieldProblem] = []
    for err in exc.errors(include_url=False):
        # Union members and tagged models add their own names to the location; keep the data path.
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and _UNION_TAG.match(p)))
        msg = err["msg"]
        if err["type"] == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            msg = f"must be one of {expected}, got {err.get('input')!r}"
        elif err["type"] == "extra_forbidden":
            msg = "unknown field"
            known = fields(loc[:-1]) if fields is not None and loc else ()
            close = difflib.get_close_matches(str(loc[-1]), sorted(known), n=1, cutoff=0.6) if loc else []
            if close:
                msg += f"; did you mean '{close[0]}'?"
        elif err["type"] == "missing":
            msg = "is required"
        elif err["type"].endswith("_type"):
            msg = f"{msg}, got {type(err.get('input')).__name__}"
        problems.append(FieldProblem(_path_of(loc, prefix), msg))
    return problems
