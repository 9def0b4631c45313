"""The command line as its peers behave: ``--version``, ``-h`` on every command, flags without a type."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

import validator
from validator.cli import app

runner = CliRunner()


def _commands(group: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    if hasattr(group, "commands"):  # a group (typer carries its own copy of click)
        for name, sub in group.commands.items():
            found += _commands(sub, (*path, name))
    return found


COMMANDS = _commands(typer.main.get_command(app))


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"action-validator {validator.__version__}"


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "validator")
def test_every_command_answers_h_and_help_alike(path: tuple[str, ...]) -> None:
    short = runner.invoke(app, [*path, "-h"], prog_name="validator")
    long = runner.invoke(app, [*path, "--help"], prog_name="validator")
    assert short.exit_code == long.exit_code == 0, short.output
    assert short.stdout == long.stdout
    assert "Usage: validator" in short.stdout
    # a flag takes no value, so its help shows none (typer's rich help printed `--json <bool>`)
    assert "<bool>" not in short.stdout and "list[" not in short.stdout
