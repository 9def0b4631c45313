"""What every command shares: consoles, exit codes, the one error printer, reading input, opening the store."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from validator.cli._safe import safe
from validator.exceptions import FieldProblem, InputError, StoreError
from validator.inputs.checkinput import DEFAULT_LIMITS
from validator.store import open_store
from validator.store.base import Store

__all__ = [
    "EXIT_APPROVED",
    "new_app",
    "EXIT_BAD_INPUT",
    "EXIT_NOT_RECORDED",
    "EXIT_REFUSED",
    "StoreOption",
    "bad_input",
    "err",
    "fail",
    "open_store_or_exit",
    "out",
    "read_bytes",
    "read_json",
    "read_json_object",
]

EXIT_APPROVED, EXIT_REFUSED, EXIT_BAD_INPUT, EXIT_NOT_RECORDED = 0, 1, 2, 3

StoreOption = Annotated[
    str | None,
    typer.Option("--store", envvar="VALIDATOR_STORE_URL", help="memory:// (default) or redis://host:port/db"),
]


def new_app(help: str, **settings: Any) -> typer.Typer:
    """A command group as every one of ours is: plain help (a flag shows no type, as in click and git),
    ``-h`` beside ``--help``, no shell-completion commands, the group's help when called bare."""
    settings.setdefault("no_args_is_help", True)
    return typer.Typer(
        help=help,
        add_completion=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
        **settings,
    )


def out() -> Console:
    return Console(highlight=False)


def err() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def bad_input(exc: InputError) -> typer.Exit:
    """Print every problem of a bad input (its source and each field path) and return exit 2."""
    console = err()
    console.print(f"[bold red]{safe(exc.source)}: {len(exc.problems)} problem(s)[/]")
    for p in exc.problems:
        console.print(f"  [red]•[/] {safe(str(p))}")
    return typer.Exit(EXIT_BAD_INPUT)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one error line and exit with ``code``."""
    err().print(f"[red]{safe(message)}[/]")
    raise typer.Exit(code)


def open_store_or_exit(url: str | None) -> Store:
    try:
        return open_store(url)
    except StoreError as exc:
        fail(str(exc), EXIT_BAD_INPUT)


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
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InputError([FieldProblem("", f"not valid JSON: {exc}")], source=what) from None


def read_json_object(path: Path | str, what: str) -> dict[str, Any]:
    data = read_json(path, what)
    if not isinstance(data, dict):
        raise InputError([FieldProblem("", f"must be a JSON object, got {type(data).__name__}")], source=what)
    return data
