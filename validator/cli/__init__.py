"""Command line: ``init``, ``check``, ``policy check``, ``schema``, ``prepare-tools``, ``doctor``, ``auth``,
``audit``, ``store``, ``eval``, ``serve``, ``token``, ``hook claude-code``.

One package, one way to register subcommands: each module has ``register(app)``; one error printer
(:func:`validator.cli._common.bad_input`); one table of exit codes (:mod:`validator.cli._common`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from validator.cli import check, evals, hooks, policy, serve, state, tools
from validator.cli._common import new_app

__all__ = ["app", "main"]

app = new_app("Did the user authorize this action?")


def _version(shown: bool) -> None:
    if shown:
        from validator import __version__

        print(f"action-validator {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Did the user authorize this action? Exit codes: see `validator check --help`."""


for _module in (check, policy, tools, state, evals, serve, hooks):
    _module.register(app)


def main() -> None:
    """Entry point of the ``validator`` script."""
    app()
