"""``validator check``: validate a pending action from JSON (one, or one a line)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from validator._json import dumps
from validator.cli._common import (
    EXIT_APPROVED,
    EXIT_NOT_RECORDED,
    EXIT_REFUSED,
    StoreOption,
    bad_input,
    err,
    open_store_or_exit,
    out,
    read_bytes,
    read_json_object,
)
from validator.cli._safe import clip, safe
from validator.engine import Validator
from validator.engine.stateful import stateful_validator
from validator.exceptions import FieldProblem, InputError, SetupError
from validator.inputs.checkinput import CheckInput
from validator.judges.base import Judge
from validator.judges.strict import StrictJudge
from validator.policy import Policy
from validator.verdict import Decision, Verdict

__all__ = ["register", "render"]

_COLOURS = {Decision.APPROVE: "green", Decision.BLOCK: "red", Decision.ASK_USER: "yellow"}


def _load_policy(path: Path | None) -> Policy | None:
    return Policy.load(path) if path is not None else None


def render(verdict: Verdict, console: Console) -> None:
    """Print a verdict for people: decision, code, reasoning, next step, then the findings."""
    colour = _COLOURS[verdict.decision]
    body = [f"[bold]{safe(verdict.tool)}[/] ({verdict.risk}{', exempt' if verdict.exempt else ''})"]
    body.append(
        f"[bold {colour}]{verdict.decision.value.upper()}[/]  code [bold]{verdict.code.value}[/]"
        f"  confidence {verdict.confidence}"
    )
    body.append(safe(verdict.reasoning))
    if verdict.suggested_next_step:
        body.append(f"[bold]Next step:[/] {safe(verdict.suggested_next_step)}")
    judge = verdict.judge or "none (decided by code)"
    body.append(f"[dim]judge: {safe(judge)} · {verdict.latency_ms:.2f} ms[/]")
    console.print(Panel("\n".join(body), title="verdict", border_style=colour))
    f = verdict.findings
    if f.justification_problems:
        for p in f.justification_problems:
            console.print(f"  [red]•[/] {safe(p)}")
    if f.quotes or f.authorizations:
        table = Table(title="evidence", show_lines=False)
        for col in ("#", "evidence", "status", "where"):
            table.add_column(col)
        for q in f.quotes:
            where = ", ".join(map(str, q.locations)) or "nowhere"
            table.add_row(str(q.index + 1), clip(q.quote, 200), q.status, safe(where))
        for a in f.authorizations:
            table.add_row(str(a.index + 1), f"authorization {safe(a.authorization_id)}", a.status, clip(a.detail, 200))
        console.print(table)
    values = [("target", v) for v in f.targets] + [("entity", v) for v in f.entities]
    if values:
        table = Table(title="where the values came from")
        for col in ("", "argument", "value", "status", "where"):
            table.add_column(col)
        for label, v in values:
            where = v.authorization_id or ", ".join(map(str, v.locations)) or "-"
            kind = f"{label} ({v.kind})" if v.kind else label
            table.add_row(kind, safe(v.path), clip(repr(v.value), 120), v.status, safe(where))
        console.print(table)
    if f.intent is not None:
        matched = f.intent.matched or ("negated" if f.intent.negated else "not named")
        console.print(f"intent: {safe(matched)} (looked for {safe(', '.join(f.intent.intents))})")


def _check_one(validator: Validator, data: bytes, as_json: bool, agent_request: dict[str, Any] | None) -> int:
    verdict = validator.check(CheckInput.from_json(data), agent_request=agent_request)
    if as_json:
        out().print_json(verdict.to_json()) if sys.stdout.isatty() else print(verdict.to_json())
    else:
        render(verdict, out())
    if not verdict.recorded:
        err().print("[bold red]the verdict could not be recorded; it was written to standard error[/]")
        return EXIT_NOT_RECORDED
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
        print(dumps(record), flush=True)
    return 0


def check(
    file: Annotated[str, typer.Argument(metavar="FILE", help="Check input JSON file, or - for standard input.")],
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
    """Validate a pending action: 0 approved, 1 blocked or ask_user, 2 bad input, 3 verdict not recorded."""
    try:
        agent = read_json_object(agent_request, "--agent-request") if agent_request else None
        opened = open_store_or_exit(store)
        validator = stateful_validator(opened, policy=_load_policy(policy), judge=_make_judge(judge, model, agent))
        data = read_bytes(file)
        code = _check_lines(validator, data) if jsonl else _check_one(validator, data, as_json, agent)
    except InputError as exc:
        raise bad_input(exc) from None
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
            from validator.judges.anthropic.judge import AnthropicJudge
        except ImportError:
            raise InputError(
                [FieldProblem("--judge", "the anthropic judge needs: pip install 'action-validator[anthropic]'")],
                source="options",
            ) from None
        try:
            return AnthropicJudge(model=model)
        except SetupError as exc:
            raise InputError([FieldProblem("--judge", str(exc))], source="set-up") from None
    raise InputError(
        [FieldProblem("--judge", f"unknown judge {name!r}; available: strict, anthropic")], source="options"
    )


def register(app: typer.Typer) -> None:
    app.command()(check)
