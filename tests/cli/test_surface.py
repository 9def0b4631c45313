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


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "--no-progress"],
        ["check", "--example", "vendor_invoice"],
        ["check", "--example", "delete_instead_of_archive"],
        ["policy", "check", "POLICY"],
        ["--help"],
        ["check", "--help"],
    ],
    ids=lambda a: " ".join(a),
)
def test_output_fits_an_80_column_terminal(args: list[str]) -> None:
    from validator import examples

    args = [str(examples.policy_path()) if a == "POLICY" else a for a in args]
    result = runner.invoke(app, args, env={"COLUMNS": "80"}, prog_name="validator")
    assert result.exit_code in (0, 1, 4), result.output
    widest = max(len(line) for line in result.output.splitlines())
    assert widest <= 80, (widest, result.output)
