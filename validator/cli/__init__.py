"""Command line: ``init``, ``check``, ``policy check``, ``schema``, ``prepare-tools``, ``doctor``, ``auth``,
``audit``, ``store``, ``eval``, ``serve``, ``token``, ``hook claude-code``.

One package, one way to register subcommands: each module has ``register(app)``; one error printer
(:func:`validator.cli._common.bad_input`); one table of exit codes (:mod:`validator.cli._common`).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from validator.cli import check, evals, hooks, policy, serve, state, tools
from validator.cli._common import new_app
from validator.extras import extra_for, install_hint

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
    """Entry point of the ``validator`` script. A command that needs an extra the install lacks says which,
    in one line, and exits 2 (never a traceback)."""
    try:
        app()
    except ModuleNotFoundError as exc:  # an installed library too old for a name we use is not a missing extra
        extra = extra_for(exc.name)
        if extra is None:
            raise
        message = str(exc) if install_hint(extra) in str(exc) else f"{exc.name} is missing: {install_hint(extra)}"
        print(f"validator: {message}", file=sys.stderr)
        raise SystemExit(2) from None
