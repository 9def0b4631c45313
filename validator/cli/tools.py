"""``validator prepare-tools`` and ``validator doctor``: setting up and diagnosing the Claude path."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from validator.cli._common import bad_input, read_json, read_json_object
from validator.devtools.doctor import diagnose, shape_problems
from validator.exceptions import FieldProblem, InputError, UsageError
from validator.extras import install_hint
from validator.judges.anthropic.tools import DEFAULT_SEARCH_TOOL, DEFAULT_VALIDATOR_TOOL, prepare_tools
from validator.policy import Policy

__all__ = ["register"]

LIVE_MODEL = os.environ.get("VALIDATOR_LIVE_MODEL", "claude-haiku-4-5")


def prepare_tools_command(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="JSON list of Anthropic tool definitions, or - for standard input.")
    ],
    validator_name: Annotated[str, typer.Option(help="Name of the validator tool.")] = DEFAULT_VALIDATOR_TOOL,
    search_name: Annotated[str, typer.Option(help="Name of the tool search tool.")] = DEFAULT_SEARCH_TOOL,
    quality: Annotated[bool, typer.Option(help="Let the verdict carry quality notes.")] = True,
    policy: Annotated[
        Path | None,
        typer.Option(help="Policy file (TOML or JSON): its guarded tools get the required justification argument."),
    ] = None,
) -> None:
    """Print the tools with the search tool and the deferred validator tool added (send them from turn one),
    and the justification argument on every tool the policy guards."""
    try:
        if policy is None:
            raise InputError(
                [
                    FieldProblem(
                        "--policy",
                        "is required: without it no tool asks for a justification, and every guarded call is refused",
                    )
                ],
                source="prepare-tools",
            )
        loaded = Policy.load(policy)
        tools = read_json(file, file)
        if not isinstance(tools, list):
            raise InputError(
                [FieldProblem("", f"must be a JSON list of tools, got {type(tools).__name__}")], source=file
            )
        try:
            prepared = prepare_tools(
                tools, validator_name=validator_name, search_name=search_name, quality=quality, policy=loaded
            )
        except UsageError as exc:
            raise InputError([FieldProblem("", str(exc))], source=file) from None
    except InputError as exc:
        raise bad_input(exc) from None
    print(json.dumps(prepared, indent=2, ensure_ascii=False))


def doctor(
    agent: Annotated[Path | None, typer.Argument(metavar="AGENT", help="JSON body of the agent's request.")] = None,
    validator_request: Annotated[
        Path | None, typer.Argument(metavar="VALIDATOR", help="JSON body of the validator's request.")
    ] = None,
    pair: Annotated[Path | None, typer.Option(help='A recorded pair: {"agent": {...}, "validator": {...}}.')] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    live: Annotated[
        bool, typer.Option("--live", help="Run a short agent conversation on the real API (needs ANTHROPIC_API_KEY).")
    ] = False,
    emulate: Annotated[bool, typer.Option(help="With --live: run against the caching emulator, offline.")] = False,
    model: Annotated[str, typer.Option(help="With --live: the model of the agent and the validator.")] = LIVE_MODEL,
    turns: Annotated[int, typer.Option(min=1, max=20, help="With --live: how many agent turns.")] = 3,
    hook: Annotated[
        bool,
        typer.Option(
            "--hook",
            help="Check the Claude Code hook instead: that a settings file runs it and its command is found.",
        ),
    ] = False,
) -> None:
    """Explain a cache miss: does the validator request extend the agent's byte for byte, and where not?

    With ``--hook``: the Claude Code settings files that run ``validator hook claude-code``, and whether each
    command is found (a missing one means no call is checked); exit 1 on any problem.

    With ``--live``: run the shared-prefix validator on a short agent conversation and print, per
    check, the tokens read, written and paid in full, the cost, the latency and whether the deferred
    validator tool was loaded, then the cost ratio against standalone checks.
    """
    if hook:
        from validator.cli.hooks import settings_problems

        found, trouble = settings_problems()
        for line in found:
            print(f"ok       {line}")
        for line in trouble:
            print(f"problem  {line}")
        raise typer.Exit(1 if trouble else 0)
    if live:
        _live(model, turns, emulate)
        return
    try:
        if pair is not None:
            both = read_json_object(pair, str(pair))
            first, second = both.get("agent"), both.get("validator")
            if not isinstance(first, dict) or not isinstance(second, dict):
                raise InputError([FieldProblem("agent|validator", "the pair needs two objects")], source=str(pair))
        elif agent is not None and validator_request is not None:
            first = read_json_object(agent, str(agent))
            second = read_json_object(validator_request, str(validator_request))
        else:
            raise InputError([FieldProblem("", "give AGENT and VALIDATOR files, or --pair FILE")], source="doctor")
        for side, body in (("agent", first), ("validator", second)):
            problems = [FieldProblem(f"{side}.{path}", problem) for path, problem in shape_problems(body)]
            if problems:
                raise InputError(problems, source="doctor")
    except InputError as exc:
        raise bad_input(exc) from None
    report = diagnose(first, second)
    print(json.dumps(report.to_dict(), indent=2) if as_json else report.render())
    raise typer.Exit(0 if report.extends else 1)


def _live(model: str, turns: int, emulate: bool) -> None:
    from validator.devtools.live import emulated_client, run_live

    if emulate:
        client = emulated_client(model)
    else:
        if not os.environ.get("ANTHROPIC_API_KEY"):
            problem = "doctor --live needs ANTHROPIC_API_KEY (or --emulate to run against the caching emulator)"
            raise bad_input(InputError([FieldProblem("ANTHROPIC_API_KEY", problem)], source="doctor --live"))
        try:
            import anthropic
        except ImportError:
            problem = f"doctor --live needs: {install_hint('anthropic')}"
            raise bad_input(InputError([FieldProblem("--live", problem)], source="doctor --live")) from None
        client = anthropic.Anthropic(max_retries=0)
    report = run_live(client, model, turns=turns, emulated=emulate)
    print(report.render())
    raise typer.Exit(0 if all(c.loaded and c.cache == "shared" for c in report.checks) else 1)


def register(app: typer.Typer) -> None:
    app.command("prepare-tools")(prepare_tools_command)
    app.command()(doctor)
