"""``validator check``: validate a pending action from JSON (one, or one a line). This module is the command line's
options and help; what the command does is :mod:`validator.cli.checkrun`'s."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from validator import examples
from validator.cli import checkrun
from validator.cli._options import StoreOption

__all__ = ["register"]


def check(
    file: Annotated[
        str | None, typer.Argument(metavar="FILE", help="Check input JSON file, or - for standard input.")
    ] = None,
    example: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help=f"Check an example that ships with the package instead of FILE ({', '.join(examples.names())}); "
            "its policy is the example policy unless --policy names another.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One check input a line in, one result a line out.")] = False,
    policy: Annotated[
        Path | None, typer.Option(help="Policy file (TOML or JSON); overrides the input's own policy.")
    ] = None,
    judge: Annotated[str, typer.Option(help="Judge: strict (offline, no model) or anthropic.")] = "strict",
    model: Annotated[str | None, typer.Option(help="Model of the anthropic judge for standalone checks.")] = None,
    agent_request: Annotated[
        Path | None,
        typer.Option(help="JSON body of the agent's last Messages request: the anthropic judge shares its prefix."),
    ] = None,
    store: StoreOption = None,
    print_input: Annotated[
        bool,
        typer.Option(
            "--print-input",
            help="Print the --example's check input without its policy (the service refuses an input that carries "
            "one: it holds its own) and exit; e.g. > input.json, then curl --data @input.json.",
        ),
    ] = False,
) -> None:
    """Validate a pending action. Exit status: 0 approved, 1 blocked, 2 bad input, 3 the verdict could not be
    recorded, 4 ask_user (the person must confirm first); with --jsonl, the most severe line's."""
    options = checkrun.CheckOptions(
        file=file,
        example=example,
        as_json=as_json,
        jsonl=jsonl,
        policy=policy,
        judge=judge,
        model=model,
        agent_request=agent_request,
        store=store,
        print_input=print_input,
    )
    raise typer.Exit(checkrun.run(options))


def register(app: typer.Typer) -> None:
    app.command()(check)
