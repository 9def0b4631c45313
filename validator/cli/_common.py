"""What every command shares: consoles, exit codes, the one error printer, reading input, opening the store. No
typer here (a command exits with ``SystemExit``, as typer's own exit does): ``validator check`` and the one-shot hook
run without the command-line library (:mod:`validator.cli.entry`); what only typer's commands share is in
:mod:`validator.cli._options`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from validator.cli._safe import safe
from validator.exceptions import FieldProblem, InputError, StoreError, UsageError
from validator.inputs.checkinput import DEFAULT_LIMITS
from validator.store import MemoryStore, open_store, tenant_url
from validator.store.base import Store

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "EXIT_APPROVED",
    "EXIT_ASK_USER",
    "EXIT_BAD_INPUT",
    "EXIT_NOT_RECORDED",
    "EXIT_REFUSED",
    "Gather",
    "bad_input",
    "err",
    "fail",
    "most_severe",
    "open_state_store",
    "open_store_or_exit",
    "out",
    "read_bytes",
    "read_json",
    "read_json_object",
]

T = TypeVar("T")

EXIT_APPROVED, EXIT_REFUSED, EXIT_BAD_INPUT, EXIT_NOT_RECORDED, EXIT_ASK_USER = 0, 1, 2, 3, 4
"""The exit status of ``validator check`` (the README's table): 0 approved; 1 blocked (a refusal, and a bug of
ours on a ``--jsonl`` line, which fails closed); 2 bad input, nothing judged; 3 the verdict could not be
recorded (a refusal; its record went to standard error); 4 ``ask_user``: the person must confirm first."""

SEVERITY = (EXIT_APPROVED, EXIT_ASK_USER, EXIT_REFUSED, EXIT_BAD_INPUT, EXIT_NOT_RECORDED)
"""Least to most severe: ``--jsonl`` exits with its most severe line's status."""


def most_severe(codes: Iterable[int]) -> int:
    return max(codes, key=SEVERITY.index, default=EXIT_APPROVED)


def out() -> Console:
    """The console for people on standard output (rich is imported here, when a command prints for people: a
    check printing JSON and the hook never load it). Emoji codes print as written: ``:cross_mark:`` in an
    outside party's quote is text, never a mark beside the verdict (:mod:`validator.cli._safe`)."""
    from rich.console import Console

    return Console(highlight=False, emoji=False)


def err() -> Console:
    """The console for people on standard error (emoji codes as written, as :func:`out`)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def bad_input(*excs: InputError) -> SystemExit:
    """Print every problem of each bad input (its source and each field path) and return exit 2."""
    console = err()
    for exc in excs:
        console.print(f"[bold red]{safe(exc.source)}: {len(exc.problems)} problem(s)[/]")
        for p in exc.problems:
            console.print(f"  [red]•[/] {safe(str(p))}")
    return SystemExit(EXIT_BAD_INPUT)


class Gather:
    """A command's inputs read one after another, each problem kept, so one run names them all (a bad
    option, an unreadable policy and a malformed input file are three lines, not the first of them).

    ``take(fn, ...)`` returns ``fn(...)``, or None when it raised :class:`InputError`; ``done()`` raises
    the exit of :func:`bad_input` with every error taken."""

    def __init__(self) -> None:
        self.errors: list[InputError] = []

    def take(self, fn: Callable[..., T], *args: Any) -> T | None:
        try:
            return fn(*args)
        except InputError as exc:
            self.errors.append(exc)
            return None

    def done(self) -> None:
        if self.errors:
            raise bad_input(*self.errors)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one error line and exit with ``code``."""
    err().print(f"[red]{safe(message)}[/]")
    raise SystemExit(code)


def open_store_or_exit(url: str | None) -> Store:
    try:
        return open_store(url)
    except StoreError as exc:
        fail(str(exc), EXIT_BAD_INPUT)


def open_state_store(url: str | None, tenant: str | None, command: str) -> Store:
    """The store a state command (``auth``, ``audit``) works on: one named (``--store`` or
    ``VALIDATOR_STORE_URL``), since the default ``memory://`` lives only as long as the command: a grant
    there is gone when it prints its id, and an audit there holds nothing. ``--store memory://`` said
    outright is allowed (to try the commands), with a warning. ``--tenant``: that tenant's namespace, as
    the decision service keeps it."""
    if url is None:
        fail(
            f"{command} needs a store that outlives it: pass --store redis://host:port/db (or set "
            "VALIDATOR_STORE_URL); --store memory:// to try it, keeping nothing",
            EXIT_BAD_INPUT,
        )
    if tenant is not None:
        try:
            url = tenant_url(url, tenant)
        except (UsageError, StoreError) as exc:
            fail(f"--tenant: {exc}", EXIT_BAD_INPUT)
    opened = open_store_or_exit(url)
    if isinstance(opened, MemoryStore):
        err().print("[yellow]warning: memory:// keeps nothing from one command to the next[/]")
    return opened


def read_bytes(path: str) -> bytes:
    """A file's bytes (``-`` for standard input), at most the input size limit."""
    limit = DEFAULT_LIMITS.max_bytes
    if path == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        try:
            with open(path, "rb") as fh:
                data = fh.read(limit + 1)
        except OSError as exc:
            raise InputError([FieldProblem("", f"cannot read {path}: {exc.strerror or exc}")], source=path) from None
    if len(data) > limit:
        raise InputError([FieldProblem("", f"input is over {limit:,} bytes")], source=path)
    return data


def read_json(path: Path | str, what: str) -> Any:
    data = read_bytes(str(path))
    if not data or data.isspace():
        raise InputError([FieldProblem("", f"{path} is empty: give a JSON document")], source=what)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InputError([FieldProblem("", f"not valid JSON: {exc}")], source=what) from None


def read_json_object(path: Path | str, what: str) -> dict[str, Any]:
    data = read_json(path, what)
    if not isinstance(data, dict):
        raise InputError([FieldProblem("", f"must be a JSON object, got {type(data).__name__}")], source=what)
    return data
