"""``validator prepare-tools`` and ``validator doctor``: setting up and diagnosing the Claude path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from validator.cli._common import bad_input, read_json, read_json_object
from validator.devtools.doctor import diagnose, shape_problems
from validator.exceptions import FieldProblem, InputError, UsageError
from validator.judges.anthropic.tools import DEFAULT_SEARCH_TOOL, DEFAULT_VALIDATOR_TOOL, prepare_tools

__all__ = ["register"]


def prepare_tools_command(
    file: Annotated[str, typer.Argument(help="JSON list of Anthropic tool definitions, or - for standard input.")],
    validator_name: Annotated[str, typer.Option(help="Name of the validator tool.")] = DEFAULT_VALIDATOR_TOOL,
    search_name: Annotated[str, typer.Option(help="Name of the tool search tool.")] = DEFAULT_SEARCH_TOOL,
    quality: Annotated[bool, typer.Option(help="Let the verdict carry quality notes.")] = True,
) -> None:
    """Print the tools with the search tool and the deferred validator tool added (send them from turn one)."""
    try:
        tools = read_json(file, file)
        if not isinstance(tools, list):
            raise InputError(
                [FieldProblem("", f"must be a JSON list of tools, got {type(tools).__name__}")], source=file
            )
        try:
            prepared = prepare_tools(tools, validator_name=validator_name, search_name=search_name, quality=quality)
        except UsageError as exc:
            raise InputError([FieldProblem("", str(exc))], source=file) from None
    except InputError as exc:
        raise bad_input(exc) from None
    print(json.dumps(prepared, indent=2, ensure_ascii=False))


def doctor(
    agent: Annotated[Path | None, typer.Argument(help="JSON body of the agent's request.")] = None,
    validator_request: Annotated[Path | None, typer.Argument(help="JSON body of the validator's request.")] = None,
    pair: Annotated[Path | None, typer.Option(help='A recorded pair: {"agent": {...}, "validator": {...}}.')] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Explain a cache miss: does the validator request extend the agent's byte for byte, and where not?"""
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


def register(app: typer.Typer) -> None:
    app.command("prepare-tools")(prepare_tools_command)
    app.command()(doctor)
