"""What the typer commands share: the command group's settings, the options several commands take, asking before an
irreversible change."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from validator._types import STORE_URL_ENV
from validator.cli._common import EXIT_BAD_INPUT, EXIT_REFUSED, fail

__all__ = ["StoreOption", "TenantOption", "YesOption", "confirmed", "new_app"]

TenantOption = Annotated[
    str | None,
    typer.Option(
        "--tenant",
        metavar="TENANT",
        help="A tenant of the decision service (validator serve): its own namespace on the --store server.",
    ),
]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do it without asking.")]

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        envvar=STORE_URL_ENV,
        help="memory:// (default) or redis://host:port/db (?cluster=true: a Redis Cluster)",
    ),
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


def confirmed(question: str, yes: bool) -> None:
    """Ask before an irreversible change; ``--yes`` answers for a script. Without a terminal to ask on and
    without ``--yes``, nothing changes (exit 2): a pipe never says yes by accident."""
    if yes:
        return
    if not sys.stdin.isatty():
        fail(f"{question} Not asked (no terminal): pass --yes to do it without asking", EXIT_BAD_INPUT)
    if not typer.confirm(question, default=False, err=True):
        fail("nothing changed", EXIT_REFUSED)
