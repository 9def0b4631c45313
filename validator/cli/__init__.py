"""Command line: ``check``, ``policy check``, ``schema``, ``prepare-tools``, ``doctor``, ``auth``, ``audit``,
``store``, ``eval``, ``serve``, ``token``, ``hook claude-code``.

One package, one way to register subcommands: each module has ``register(app)``; one error printer
(:func:`validator.cli._common.bad_input`). Exit codes of ``check``: 0 approved, 1 blocked or
ask_user, 2 bad input. With ``--jsonl`` it reads one check input a line and writes one line for
each (its verdict, or an error object naming the problem); it exits 0 unless the batch itself could
not run.
"""

from __future__ import annotations

import typer

from validator.cli import check, evals, hooks, policy, serve, state, tools

__all__ = ["app", "main"]

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Did the user authorize this action?")
for _module in (check, policy, tools, state, evals, serve, hooks):
    _module.register(app)


def main() -> None:
    """Entry point of the ``validator`` script."""
    app()
