"""Exceptions raised by the action validator, the one signal it raises on purpose, and the field problems an
input error names (every problem of a document read against msgspec records, by its path: :func:`problems_of`; a
pydantic error read into them, for the eval cases' models: :func:`problems_from_pydantic`).

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

import re
import types
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, reduce
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

if TYPE_CHECKING:
    from pydantic import ValidationError

    from validator.verdict import Usage, Verdict

__all__ = [
    "ActionBlocked",
    "is_control_flow",
    "problem_from_msgspec",
    "problems_from_pydantic",
    "problems_of",
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
    return reduce(_at, loc, prefix)


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"``, naming the one of ``known`` closest to an unknown ``name``, or ``""``
    (:mod:`difflib` imported here: a process that meets no unknown field never loads it)."""
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


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
            msg += _did_you_mean(str(loc[-1]), known) if loc else ""
        elif err["type"] == "missing":
            msg = "is required"
        elif err["type"].endswith("_type"):
            msg = f"{msg}, got {type(err.get('input')).__name__}"
        problems.append(FieldProblem(_path_of(loc, prefix), msg))
    return problems


# -- every problem of a document, by its path ---------------------------------------------------------


_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)


def problem_from_msgspec(exc: Exception) -> FieldProblem:
    """msgspec's refusal (it names the first problem only) as a field problem (``$.messages[0].role`` becomes
    ``messages[0].role``)."""
    found = _AT.match(str(exc))
    if found is None or not found["path"]:
        return FieldProblem("", str(exc))
    return FieldProblem(found["path"].lstrip("."), found["what"])


def problems_of(value: Any, kind: Any, path: str = "") -> list[FieldProblem]:
    """Every way ``value`` (decoded JSON or TOML) is not a ``kind`` (a msgspec record, or a type of one's fields),
    each at its path: the check input's and the policy document's problems (msgspec itself stops at the first).
    Types are strict (``1`` is not ``true``, ``"1"`` not ``1``); an unknown field names the field it most likely
    meant."""
    found: list[FieldProblem] = []
    _reader(kind)(value, path, found)
    return found


Check = Callable[[Any, str, list[FieldProblem]], None]
"""``check(value, path, found)``: appends to ``found`` every problem of ``value`` at ``path``."""


def _at(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _named(value: Any) -> str:
    return type(value).__name__


_SHAPES: dict[Any, str] = {
    list: "list",
    dict: "dictionary",
    str: "string",
    bool: "boolean",
    int: "integer",
    type(None): "null",
}
"""The shapes the records use, by the Python type decoded JSON (or TOML) has for each."""


@cache
def _reader(kind: Any) -> Check:
    """The problem reader of ``kind``, built once per type from its annotations (a history of thousands of
    messages is read without asking ``typing`` about each of them)."""
    import msgspec  # imported where a record is read: a process naming no problem of one need not

    origin, args = get_origin(kind), get_args(kind)
    if origin is Annotated:
        return _annotated(_reader(args[0]), args[1:])
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return _record(kind)
    if origin is Union or origin is types.UnionType:
        return _union(args)
    if origin is Literal:
        return _literal(args)
    if kind is Any:
        return _anything
    shape = origin or kind
    if shape not in _SHAPES:  # a type the records do not use yet: teach this reader it first
        raise TypeError(f"no problem reader for {shape!r}")
    if shape is list:
        return _list(_reader(args[0]))
    if shape is dict and args:
        return _mapping(_reader(args[1]))
    return _shaped(shape)


def _is(value: Any, shape: Any) -> bool:
    """Whether ``value`` has ``shape`` (a subclass's instance too: an ``OrderedDict``, a str ``Enum``'s member, a
    TOML library's own tables; never a boolean for an integer)."""
    if shape is type(None):
        return value is None
    if shape is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, shape)


def _anything(value: Any, path: str, found: list[FieldProblem]) -> None:
    return None


def _annotated(inner: Check, metas: tuple[Any, ...]) -> Check:
    for meta in metas:  # a bound this reader does not name would be refused without its words: teach it first
        if any(getattr(meta, bound, None) is not None for bound in ("gt", "lt", "multiple_of", "pattern", "tz")):
            raise TypeError(f"no problem reader for {meta!r}")

    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        before = len(found)
        inner(value, path, found)
        if len(found) == before:  # of its type: then its bounds
            for meta in metas:
                _bounds(value, meta, path, found)

    return check


def _literal(values: tuple[Any, ...]) -> Check:
    listed = ", ".join(map(repr, values[:-1])) + (f" or {values[-1]!r}" if len(values) > 1 else repr(values[0]))

    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        if not any(_is(value, type(a)) and value == a for a in values):
            found.append(FieldProblem(path, f"must be one of {listed}, got {value!r}"))

    return check


def _wrong(value: Any, shape: Any, path: str, found: list[FieldProblem]) -> bool:
    """Whether ``value`` is not of ``shape``; if so, the problem is in ``found``."""
    if _is(value, shape):
        return False
    found.append(FieldProblem(path, f"Input should be a valid {_SHAPES[shape]}, got {_named(value)}"))
    return True


def _shaped(shape: type) -> Check:
    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        _wrong(value, shape, path, found)

    return check


def _list(item: Check) -> Check:
    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        if _wrong(value, list, path, found):
            return
        for i, each in enumerate(value):
            item(each, _at(path, i), found)

    return check


def _mapping(item: Check) -> Check:
    """A dictionary of text keys, each value read by ``item``."""

    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        if _wrong(value, dict, path, found):
            return
        for key, each in value.items():
            if not isinstance(key, str):
                found.append(FieldProblem(path, f"a key should be a string, got {_named(key)}"))
                continue
            item(each, _at(path, key), found)

    return check


def _shape_of(kind: Any) -> Any:
    """The shape a type of the records takes (a record is a dictionary)."""
    import msgspec

    bare = get_args(kind)[0] if get_origin(kind) is Annotated else kind
    if isinstance(bare, type) and issubclass(bare, msgspec.Struct):
        return dict
    return get_origin(bare) or bare


def _record(kind: Any) -> Check:
    import msgspec

    fields = tuple((f.encode_name, _reader(f.type), f.required) for f in msgspec.structs.fields(kind))
    names = frozenset(name for name, _, _ in fields)

    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        if _wrong(value, dict, path, found):
            return
        for key in value:
            if key not in names:
                found.append(FieldProblem(_at(path, str(key)), f"unknown field{_did_you_mean(str(key), names)}"))
        for name, read, required in fields:
            if name in value:
                read(value[name], _at(path, name), found)
            elif required:
                found.append(FieldProblem(_at(path, name), "is required"))

    return check


def _union(members: tuple[Any, ...]) -> Check:
    """Fine when a member takes the value; else the problems of the member of its shape, or one line."""
    every = tuple((_shape_of(m), _reader(m)) for m in members)
    present = tuple(r for r in every if r[0] is not type(None))  # what an optional field that holds something is

    def names(options: tuple[tuple[Any, Check], ...]) -> str:
        return " or ".join(_SHAPES.get(shape, "object") for shape, _ in options)

    expected_every, expected_present = names(every), names(present)

    def check(value: Any, path: str, found: list[FieldProblem]) -> None:
        options = every if value is None else present
        if len(options) == 1:
            options[0][1](value, path, found)
            return
        tried = []
        for _, read in options:
            seen: list[FieldProblem] = []
            read(value, path, seen)
            if not seen:
                return
            tried.append(seen)
        for (shape, _), seen in zip(options, tried, strict=True):
            if _is(value, shape):  # the member of the value's own shape says what is wrong inside it
                found.extend(seen)
                return
        expected = expected_every if value is None else expected_present
        found.append(FieldProblem(path, f"Input should be a {expected}, got {_named(value)}"))

    return check


def _bounds(value: Any, meta: Any, path: str, found: list[FieldProblem]) -> None:
    """A text's length, or a number's range, as ``meta`` (a ``msgspec.Meta``) bounds it."""
    if isinstance(value, str):
        low, high = getattr(meta, "min_length", None), getattr(meta, "max_length", None)
        if low is not None and len(value) < low:
            found.append(FieldProblem(path, f"String should have at least {low} character{'s' * (low != 1)}"))
        if high is not None and len(value) > high:
            found.append(FieldProblem(path, f"String should have at most {high} character{'s' * (high != 1)}"))
    elif _is(value, int):
        low, high = getattr(meta, "ge", None), getattr(meta, "le", None)
        if low is not None and value < low:
            found.append(FieldProblem(path, f"Input should be greater than or equal to {low}"))
        if high is not None and value > high:
            found.append(FieldProblem(path, f"Input should be less than or equal to {high}"))
