"""What ``validator check`` does, without the command-line library: :class:`CheckOptions` (and :meth:`its reading
<CheckOptions.parse>` of the plainest command lines, which :mod:`validator.cli.entry` runs without typer), :func:`run`
(read the input, judge it, print the verdict or one result a line, and the exit status) and :func:`render` (a verdict
for people). The command line's options and help are :mod:`validator.cli.check`'s."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from validator import examples
from validator._json import dumps
from validator.cli._argv import plain_options
from validator.cli._common import (
    EXIT_APPROVED,
    EXIT_ASK_USER,
    EXIT_BAD_INPUT,
    EXIT_NOT_RECORDED,
    EXIT_REFUSED,
    Gather,
    bad_input,
    err,
    most_severe,
    open_store_or_exit,
    out,
    read_bytes,
    read_json_object,
)
from validator.cli._safe import clip, safe
from validator.engine import Validator
from validator.engine.stateful import stateful_validator
from validator.exceptions import FieldProblem, InputError, SetupError, UsageError
from validator.extras import extra_for, install_hint
from validator.inputs.checkinput import CheckInput
from validator.judges.base import Judge
from validator.judges.strict import StrictJudge
from validator.policy import Policy
from validator.verdict import Decision, Verdict

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["CheckOptions", "exit_status", "render", "run"]


@dataclass(frozen=True, kw_only=True)
class CheckOptions:
    """``validator check``'s options, as its command line gives them."""

    file: str | None = None
    example: str | None = None
    as_json: bool = False
    jsonl: bool = False
    policy: Path | None = None
    judge: str = "strict"
    model: str | None = None
    agent_request: Path | None = None
    store: str | None = None
    print_input: bool = False

    @staticmethod
    def parse(args: Sequence[str]) -> CheckOptions | None:
        """The options in ``args`` (those after ``check``) when they are of the plainest form: one FILE (or ``-``),
        the flags ``--json`` and ``--jsonl``, and ``--policy``, ``--judge``, ``--model``, ``--agent-request``,
        ``--store`` each with a value (``--name VALUE`` or ``--name=VALUE``); else None, and the full command line
        reads them (``--help``, ``--example``, a value that is empty or starts with ``-``, an option this reader does
        not know, two files). What it reads, it reads as the full command line does (a test holds the two equal)."""
        flags = {"--json": ("as_json", True), "--jsonl": ("jsonl", True)}
        named = {
            "--policy": "policy",
            "--judge": "judge",
            "--model": "model",
            "--agent-request": "agent_request",
            "--store": "store",
        }
        read = plain_options(args, flags, named)
        if read is None or len(read[1]) != 1:
            return None
        values, (file,) = read
        for path in ("policy", "agent_request"):
            if path in values:
                values[path] = Path(values[path])
        return CheckOptions(file=file, **values)


def run(options: CheckOptions) -> int:
    """Check what ``options`` name and print the verdict (or one result a line); the exit status (see
    :data:`validator.cli._common.SEVERITY`). A bad input exits 2 with each problem named (``SystemExit``)."""
    o = options
    if o.print_input:
        return _print_input(o.example, o.file)
    inputs = Gather()
    source = inputs.take(_source, o.file, o.example)
    policy = examples.policy_path() if o.example is not None and o.policy is None else o.policy
    agent = inputs.take(read_json_object, o.agent_request, "--agent-request") if o.agent_request else None
    chosen = inputs.take(_make_judge, o.judge, o.model, agent)
    loaded = inputs.take(_load_policy, policy)
    data = inputs.take(read_bytes, source) if source is not None else None
    parsed = inputs.take(CheckInput.from_json, data) if data is not None and not o.jsonl else None
    inputs.done()
    assert chosen is not None and data is not None  # Gather.done() exits on any problem
    validator = stateful_validator(open_store_or_exit(o.store), policy=loaded, judge=chosen)
    if parsed is None:
        return _check_lines(validator, data)
    try:
        return _check_one(validator, parsed, o.as_json, agent)
    except InputError as exc:  # what only the check itself can find (an --agent-request that does not fit)
        raise bad_input(exc) from None


_COLOURS = {Decision.APPROVE: "green", Decision.BLOCK: "red", Decision.ASK_USER: "yellow"}


def _load_policy(path: Path | None) -> Policy | None:
    return Policy.load(path) if path is not None else None


def render(verdict: Verdict, console: Console) -> None:
    """Print a verdict for people: decision, code, reasoning, next step, then the findings (rich is loaded by the
    console: a check printing JSON never loads it)."""
    from rich.panel import Panel
    from rich.text import Text

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
    console.print(Panel("\n".join(body), title=Text("verdict"), border_style=colour))  # a text: no markup read
    f = verdict.findings
    if f.justification_problems:
        for p in f.justification_problems:
            console.print(f"  [red]•[/] {safe(p)}")
    evidence = [
        (str(q.index + 1), clip(q.quote, 200), q.status, safe(", ".join(map(str, q.locations)) or "nowhere"))
        for q in f.quotes
    ] + [
        (str(a.index + 1), f"authorization {safe(a.authorization_id)}", a.status, clip(a.detail, 200))
        for a in f.authorizations
    ]
    if evidence:
        _rows(console, "evidence", ("#", "evidence", "status", "where"), evidence, whole=1)
    values = [("target", v) for v in f.targets] + [("entity", v) for v in f.entities]
    if values:
        rows = [
            (
                f"{label} ({v.kind})" if v.kind else label,
                safe(v.path),
                clip(repr(v.value), 120),
                v.status,
                safe(v.authorization_id or ", ".join(map(str, v.locations)) or "-"),
            )
            for label, v in values
        ]
        _rows(console, "where the values came from", ("", "argument", "value", "status", "where"), rows, whole=2)
    if f.intent is not None:
        matched = f.intent.matched or ("negated" if f.intent.negated else "not named")
        console.print(f"intent: {safe(matched)} (looked for {safe(', '.join(f.intent.intents))})")


WIDE = 100
"""A terminal at least this wide, and wide enough for every column's longest word, shows the findings as tables; a
narrower one as one block per row, so that no value (an IBAN, an address) and no word of where it came from is cut
or folded inside a word."""


def _rows(
    console: Console, title: str, columns: tuple[str, ...], rows: Sequence[tuple[str, ...]], *, whole: int
) -> None:
    """``rows`` under ``title``: a table on a wide terminal (column ``whole``, the value, never broken inside a
    word), else each row as a block of ``column: value`` lines, every word whole."""
    from rich.table import Table
    from rich.text import Text

    widest = [max(len(col), _widest_word([row[i] for row in rows], most=10_000)) for i, col in enumerate(columns)]
    table = Table(title=title, show_lines=False)
    for i, col in enumerate(columns):  # nothing cut: each column at least its longest word
        table.add_column(col, overflow="fold", min_width=widest[i])
    for row in rows:
        table.add_row(*row)
    if console.width >= WIDE:
        with console.capture() as captured:  # what the table looks like at this width: a word cut, then blocks
            console.print(table)
        shown = set(captured.get().split())
        if all(w in shown for row in rows for cell in row for w in Text.from_markup(cell, emoji=False).plain.split()):
            console.print(table)
            return
    console.print(f"[bold]{title}[/]")
    for row in rows:
        head, *rest = row
        console.print(f"  [bold]{head}[/]", soft_wrap=False)
        for col, value in zip(columns[1:], rest, strict=True):
            console.print(f"    {col or 'what'}: {value}", overflow="ignore", crop=False)


def _widest_word(texts: list[str], most: int = 64) -> int:
    """The length of the longest run of non-space characters in ``texts`` (at most ``most``)."""
    return min(most, max((len(word) for text in texts for word in text.split()), default=1))


def _check_one(validator: Validator, item: CheckInput, as_json: bool, agent_request: dict[str, Any] | None) -> int:
    verdict = validator.check(item, agent_request=agent_request)
    if as_json:
        out().print_json(verdict.to_json()) if sys.stdout.isatty() else print(verdict.to_json())
    else:
        render(verdict, out())
    if not verdict.recorded:
        err().print("[bold red]the verdict could not be recorded; it was written to standard error[/]")
    return exit_status(verdict)


def exit_status(verdict: Verdict) -> int:
    """The exit status of one verdict (see :data:`validator.cli._common.SEVERITY`)."""
    if not verdict.recorded:
        return EXIT_NOT_RECORDED
    if verdict.approved:
        return EXIT_APPROVED
    return EXIT_ASK_USER if verdict.decision is Decision.ASK_USER else EXIT_REFUSED


def _check_lines(validator: Validator, data: bytes) -> int:
    """One result a line; the status of the most severe line (a bad line: 2, a bug of ours: 1)."""
    codes: list[int] = []
    for n, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        record: dict[str, Any]
        try:
            verdict = validator.check(line)
            record = {"line": n, "verdict": verdict.to_dict()}
            codes.append(exit_status(verdict))
        except InputError as exc:
            record = {"line": n, **exc.to_dict()}
            codes.append(EXIT_BAD_INPUT)
        except Exception as exc:  # a bug must not end the batch; it is reported on its line, and fails closed
            record = {"line": n, "error": "internal_error", "detail": f"{type(exc).__name__}: {exc}"}
            codes.append(EXIT_REFUSED)
        print(dumps(record), flush=True)
    if not codes:  # nothing judged is nothing approved: `producer | validator check --jsonl - && run` must not run
        err().print("[red]no check input: every line was empty[/]")
        return EXIT_BAD_INPUT
    return most_severe(codes)


def _print_input(example: str | None, file: str | None) -> int:
    """Print the packaged example ``example``'s check input without its policy; 0, or 2 with the reason."""
    if example is None or file is not None:
        raise bad_input(
            InputError([FieldProblem("--print-input", "give --example NAME (and no FILE)")], source="options")
        )
    try:
        data = read_json_object(examples.check_path(example), f"example {example}")
    except UsageError as exc:
        raise bad_input(InputError([FieldProblem("--example", str(exc))], source="options")) from None
    data.pop("policy", None)
    print(dumps(data))
    return EXIT_APPROVED


def _source(file: str | None, example: str | None) -> str:
    """The input to read: FILE, or the packaged example ``--example`` names (exactly one of them)."""
    if file is not None and example is not None:
        raise InputError([FieldProblem("--example", "give FILE or --example NAME, not both")], source="options")
    if example is not None:
        try:
            return str(examples.check_path(example))
        except UsageError as exc:
            raise InputError([FieldProblem("--example", str(exc))], source="options") from None
    if file is None:
        raise InputError(
            [FieldProblem("FILE", "give a check input file (- for standard input), or --example NAME")],
            source="options",
        )
    return file


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
        except ModuleNotFoundError as exc:
            if extra_for(exc.name) is None:
                raise
            raise InputError(
                [FieldProblem("--judge", f"the anthropic judge needs: {install_hint('anthropic')}")],
                source="options",
            ) from None
        try:
            return AnthropicJudge(model=model)
        except SetupError as exc:
            raise InputError([FieldProblem("--judge", str(exc))], source="set-up") from None
    raise InputError(
        [FieldProblem("--judge", f"unknown judge {name!r}; available: strict, anthropic")], source="options"
    )
