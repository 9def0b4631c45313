"""Reading the eval tooling's files (cases, recordings, baselines) with typed errors that name them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from validator.exceptions import FieldProblem, InputError


def read_text(path: Path, what: str) -> str:
    """The file's text; an unreadable or non-UTF-8 file is an :class:`InputError` naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError([FieldProblem("", f"cannot read the {what}: {exc}")], source=str(path)) from None


def parse_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError([FieldProblem("", f"not valid JSON: {exc}")], source=where) from None


def json_lines(text: str, path: Path) -> list[tuple[str, Any]]:
    """``(file:line, value)`` for each non-blank line of a JSON-lines text."""
    return [
        (f"{path}:{n}", parse_json(line, f"{path}:{n}")) for n, line in enumerate(text.splitlines(), 1) if line.strip()
    ]


def json_items(path: Path, what: str) -> list[tuple[str, Any]]:
    """``(where, value)`` for each item of a JSON-lines file, or of a ``.json`` file holding a list."""
    text = read_text(path, what)
    if path.suffix != ".json":
        return json_lines(text, path)
    data = parse_json(text, str(path))
    if not isinstance(data, list):
        raise InputError([FieldProblem("", f"a .json {what} holds a list")], source=str(path))
    return [(f"{path}[{i}]", item) for i, item in enumerate(data)]
