"""Command line: ``check``, ``policy check``, ``schema``, ``prepare-tools``, ``doctor``.

Exit codes of ``check``: 0 approved, 1 blocked or ask_user, 2 bad input. With ``--jsonl`` it
reads one check input a line and writes one line for each (its verdict, or an error object naming
the problem); it exits 0 unless the batch itself could not run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from .checkinput import DEFAULT_LIMITS, CheckInput
from .claude.doctor import diagnose, shape_problems
from .claude.tools import DEFAULT_SEARCH_TOOL, DEFAULT_VALIDATOR_TOOL, prepare_tools
from .cli_eval import eval_app
from .cli_state import StoreOption, open_store_or_exit, register
from .engine import Validator
from .exceptions import FieldProblem, InputError, ValidatorUsageError
from .judge import Judge
from .policy import Policy
from .schemas import SCHEMAS, schema_json
from .store import stateful_validator
from .strict import StrictJudge
from .verdict import Decision, Verdict

__all__ = ["app", "main"]

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Did the user authorize this action?")
policy_app = typer.Typer(no_args_is_help=True, help="Work with policy files.")
app.add_typer(policy_app, name="policy")
register(app)
app.add_typer(eval_app, name="eval")

EXIT_APPROVED, EXIT_REFUSED, EXIT_BAD_INPUT = 0, 1, 2
_COLOURS = {Decision.APPROVE: "green", Decision.BLOCK: "red", Decision.ASK_USER: "yellow"}


def _out() -> Console:
    return Console(highlight=False)


def _err() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _read(path: str) -> bytes:
    limit = DEFAULT_LIMITS.max_bytes
    if path == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        try:
            with open(path, "rb") as fh:
                data = fh.read(limit + 1)
        except OSError as exc:
            raise InputError([FieldProblem("", f"cannot read {path}: {exc.strerror or exc}")], source=path) from None
    if len(data) > limit:
        raise InputError([FieldProblem("", f"input is over {limit:,} bytes")], source=path)
    return data


def _report_input_error(exc: InputError) -> None:
    console = _err()
    console.print(f"[bold red]{escape(exc.source)}: {len(exc.problems)} problem(s)[/]")
    for p in exc.problems:
        console.print(f"  [red]•[/] {escape(str(p))}")


def _load_policy(path: Path | None) -> Policy | None:
    return Policy.load(path) if path is not None else None


def render(verdict: Verdict, console: Console) -> None:
    """Print a verdict for people: decision, code, reasoning, next step, then the findings."""
    colour = _COLOURS[verdict.decision]
    body = [f"[bold]{escape(verdict.tool)}[/] ({verdict.risk}{', exempt' if verdict.exempt else ''})"]
    body.append(
        f"[bold {colour}]{verdict.decision.value.upper()}[/]  code [bold]{verdict.code.value}[/]"
        f"  confidence {verdict.confidence}"
    )
    body.append(escape(verdict.reasoning))
    if verdict.suggested_next_step:
        body.append(f"[bold]Next step:[/] {escape(verdict.suggested_next_step)}")
    judge = verdict.judge or "none (decided by code)"
    body.append(f"[dim]judge: {escape(judge)} · {verdict.latency_ms:.2f} ms[/]")
    console.print(Panel("\n".join(body), title="verdict", border_style=colour))
    f = verdict.findings
    if f.justification_problems:
        for p in f.justification_problems:
            console.print(f"  [red]•[/] {escape(p)}")
    if f.quotes or f.authorizations:
        table = Table(title="evidence", show_lines=False)
        for col in ("#", "evidence", "status", "where"):
            table.add_column(col)
        for q in f.quotes:
            where = ", ".join(map(str, q.locations)) or "nowhere"
            table.add_row(str(q.index + 1), escape(q.quote[:70]), q.status, escape(where))
        for a in f.authorizations:
            table.add_row(
                str(a.index + 1), f"authorization {escape(a.authorization_id)}", a.status, escape(a.detail[:70])
            )
        console.print(table)
    values = [("target", v) for v in f.targets] + [("entity", v) for v in f.entities]
    if values:
        table = Table(title="where the values came from")
        for col in ("", "argument", "value", "status", "where"):
            table.add_column(col)
        for label, v in values:
            where = v.authorization_id or ", ".join(map(str, v.locations)) or "-"
            kind = f"{label} ({v.kind})" if v.kind else label
            table.add_row(kind, escape(v.path), escape(repr(v.value)[:50]), v.status, escape(where))
        console.print(table)
    if f.intent is not None:
        matched = f.intent.matched or ("negated" if f.intent.negated else "not named")
        console.print(f"intent: {escape(matched)} (looked for {escape(', '.join(f.intent.intents))})")


def _check_one(validator: Validator, data: bytes, as_json: bool, agent_request: dict[str, Any] | None) -> int:
    verdict = validator.check(CheckInput.from_json(data), agent_request=agent_request)
    if as_json:
        _out().print_json(verdict.to_json()) if sys.stdout.isatty() else print(verdict.to_json())
    else:
        render(verdict, _out())
    return EXIT_APPROVED if verdict.approved else EXIT_REFUSED


def _check_lines(validator: Validator, data: bytes) -> int:
    for n, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        record: dict[str, Any]
        try:
            record = {"line": n, "verdict": validator.check(CheckInput.from_json(line)).to_dict()}
        except InputError as exc:
            record = {"line": n, **exc.to_dict()}
        except Exception as exc:  # a bug must not end the batch; it is reported on its line
            record = {"line": n, "error": "internal_error", "detail": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(record, ensure_ascii=False), flush=True)
    return 0


@app.command()
def check(
    file: Annotated[str, typer.Argument(help="Check input JSON file, or - for standard input.")],
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
) -> None:
    """Validate a pending action: 0 approved, 1 blocked or ask_user, 2 bad input."""
    try:
        agent = _read_json_object(agent_request, "--agent-request") if agent_request else None
        opened = open_store_or_exit(store)
        validator = stateful_validator(opened, policy=_load_policy(policy), judge=_make_judge(judge, model, agent))
        data = _read(file)
        code = _check_lines(validator, data) if jsonl else _check_one(validator, data, as_json, agent)
    except InputError as exc:
        _report_input_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    raise typer.Exit(code)


def _make_judge(name: str, model: str | None, agent: dict[str, Any] | None) -> Judge:
    if name == "strict":
        if model or agent:
            raise InputError(
                [FieldProblem("--judge", "--model and --agent-request need --judge anthropic")], source="options"
            )
        return StrictJudge()
    if name == "anthropic":
        if not model and not agent:
            raise InputError(
                [FieldProblem("--model", "the anthropic judge needs --model or --agent-request")], source="options"
            )
        try:
            from .claude.judge import AnthropicJudge
        except ImportError:
            raise InputError(
                [FieldProblem("--judge", "the anthropic judge needs: pip install 'action-validator[anthropic]'")],
                source="options",
            ) from None
        return AnthropicJudge(model=model)
    raise InputError(
        [FieldProblem("--judge", f"unknown judge {name!r}; available: strict, anthropic")], source="options"
    )


def _read_json(path: Path | str, what: str) -> Any:
    data = _read(str(path))
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InputError([FieldProblem("", f"not valid JSON: {exc}")], source=what) from None


def _read_json_object(path: Path | str, what: str) -> dict[str, Any]:
    data = _read_json(path, what)
    if not isinstance(data, dict):
        raise InputError([FieldProblem("", f"must be a JSON object, got {type(data).__name__}")], source=what)
    return data


@app.command("prepare-tools")
def prepare_tools_command(
    file: Annotated[str, typer.Argument(help="JSON list of Anthropic tool definitions, or - for standard input.")],
    validator_name: Annotated[str, typer.Option(help="Name of the validator tool.")] = DEFAULT_VALIDATOR_TOOL,
    search_name: Annotated[str, typer.Option(help="Name of the tool search tool.")] = DEFAULT_SEARCH_TOOL,
    quality: Annotated[bool, typer.Option(help="Let the verdict carry quality notes.")] = True,
) -> None:
    """Print the tools with the search tool and the deferred validator tool added (send them from turn one)."""
    try:
        tools = _read_json(file, file)
        if not isinstance(tools, list):
            raise InputError(
                [FieldProblem("", f"must be a JSON list of tools, got {type(tools).__name__}")], source=file
            )
        try:
            prepared = prepare_tools(tools, validator_name=validator_name, search_name=search_name, quality=quality)
        except ValidatorUsageError as exc:
            raise InputError([FieldProblem("", str(exc))], source=file) from None
    except InputError as exc:
        _report_input_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    print(json.dumps(prepared, indent=2, ensure_ascii=False))


@app.command()
def doctor(
    agent: Annotated[Path | None, typer.Argument(help="JSON body of the agent's request.")] = None,
    validator_request: Annotated[Path | None, typer.Argument(help="JSON body of the validator's request.")] = None,
    pair: Annotated[Path | None, typer.Option(help='A recorded pair: {"agent": {...}, "validator": {...}}.')] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Explain a cache miss: does the validator request extend the agent's byte for byte, and where not?"""
    try:
        if pair is not None:
            both = _read_json_object(pair, str(pair))
            first, second = both.get("agent"), both.get("validator")
            if not isinstance(first, dict) or not isinstance(second, dict):
                raise InputError([FieldProblem("agent|validator", "the pair needs two objects")], source=str(pair))
        elif agent is not None and validator_request is not None:
            first = _read_json_object(agent, str(agent))
            second = _read_json_object(validator_request, str(validator_request))
        else:
            raise InputError([FieldProblem("", "give AGENT and VALIDATOR files, or --pair FILE")], source="doctor")
        for side, body in (("agent", first), ("validator", second)):
            problems = [FieldProblem(f"{side}.{path}", problem) for path, problem in shape_problems(body)]
            if problems:
                raise InputError(problems, source="doctor")
    except InputError as exc:
        _report_input_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    report = diagnose(first, second)
    print(json.dumps(report.to_dict(), indent=2) if as_json else report.render())
    raise typer.Exit(0 if report.extends else 1)


@policy_app.command("check")
def policy_check(file: Annotated[Path, typer.Argument(help="Policy file (TOML or JSON).")]) -> None:
    """Validate a policy file; print its tools, or every problem with its field."""
    try:
        loaded = Policy.load(file)
    except InputError as exc:
        _report_input_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    console = _out()
    table = Table(title=f"{file} (version {loaded.version})")
    for col in ("tool", "guarded", "risk", "targets", "intents"):
        table.add_column(col)
    for name, tp in sorted(loaded.tools.items()):
        intents = ", ".join(tp.intent_words(name)) + ("" if tp.intents else " (default)")
        table.add_row(name, "exempt" if tp.exempt else "guarded", tp.risk, ", ".join(tp.targets) or "-", intents)
    console.print(table)
    console.print(
        f"settings: low_confidence={loaded.settings.low_confidence}, "
        f"ungrounded_targets={loaded.settings.ungrounded_targets}"
    )
    console.print("Tools not named here are guarded and general.")


@app.command()
def schema(name: Annotated[str, typer.Argument(help=f"One of: {', '.join(SCHEMAS)}.")]) -> None:
    """Print a JSON Schema: the check input or the verdict."""
    if name not in SCHEMAS:
        _err().print(f"[red]unknown schema {escape(name)!r}; choose one of {', '.join(SCHEMAS)}[/]")
        raise typer.Exit(EXIT_BAD_INPUT)
    sys.stdout.write(schema_json(name))


def main() -> None:
    """Entry point of the ``validator`` script."""
    app()
