"""Command line for evals: ``validator eval`` runs the suite, ``validator eval add`` grows it.

``validator eval [--cases FILE] [--judge SPEC ...] [--prompt NAME ...] [--replay] [--report DIR]``
runs every case under every judge (``strict``, ``anthropic:MODEL``) and prompt variant, plus the
worst case (a scripted judge that approves everything: what code alone guarantees, and what a model
check costs), prints the figures per judge x prompt, lists regressions against the baseline, and
exits 1 when a threshold fails (2 on bad input or missing recordings).

``validator eval propose [--audit EXPORT | --store URL] --inputs CHECKS.jsonl`` pairs the user's answers in
the audit with the validator's verdicts and writes the disagreements as candidate cases, labelled
with the user's answer, each with the ``eval add`` command that accepts it.

``validator eval add INPUT.json --expected block|pass [--audit ENTRY --store URL | --verdict FILE]``
turns an action seen in use into a case: the person says what the right decision was; the recorded
verdict (from the audit log, whose hashes must match the input, or a verdict JSON) adds its code
and reasoning to the case's notes and tags.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from validator.cli._common import Gather, bad_input, open_store_or_exit
from validator.cli._options import StoreOption, new_app
from validator.evals import packaged
from validator.evals._files import json_items, parse_json, read_text
from validator.evals.cases import check_case, load_cases
from validator.evals.propose import propose
from validator.evals.report import write_report
from validator.evals.runner import (
    PROMPTS,
    WORST_CASE,
    Matrix,
    baseline_outcomes,
    recorded_judges,
    regressions,
    run_matrix,
    split,
    usd,
)
from validator.evals.runner import ablate as run_ablation
from validator.exceptions import FieldProblem, InputError, StoreError
from validator.extras import install_hint
from validator.inputs.checkinput import CheckInput
from validator.judges.blind import VIEWS, View
from validator.policy import Policy
from validator.prompts import prompt_names
from validator.record.recorder import hash_args

__all__ = ["eval_app"]

eval_app = new_app(
    "Run the eval suite, or add a case to it (eval add).", invoke_without_command=True, no_args_is_help=False
)
OWN_CASES = Path("evals/cases.jsonl")
"""Where ``eval add`` appends by default: a project's own suite (the packaged one is read-only)."""


def _beside(cases: Path | None, name: str, packaged: Path) -> Path:
    """A suite's companion file: the packaged suite's own, or the file of that name beside ``--cases``."""
    return packaged if cases is None else cases.parent / name


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def _policy(path: Path | None, cases: Path | None = None) -> Policy | None:
    """``--policy``, else the suite's ``policy.toml`` (the packaged suite's, or the one beside ``--cases``)."""
    if path is not None:
        return Policy.load(path)
    found = _beside(cases, "policy.toml", packaged.policy_path())
    return Policy.load(found) if found.exists() else None


WIDE = 120
"""Below this many columns the results are printed a judge x prompt at a time, in lines of at most 80."""


def _print_results(console: Console, matrix: Matrix) -> None:
    if console.width >= WIDE:
        console.print(_table(matrix))
    else:
        console.print("eval results per judge x prompt")
        for line in _lines(matrix):
            console.print(line)
    if matrix.ablation:
        console.print(_ablation_table(matrix))
    for line in matrix.regressions:
        console.print(f"[red]regression:[/] {escape(line)}")
    for where, n in matrix.missing_recordings.items():
        console.print(
            f"[red]missing recordings:[/] {escape(where)}: {n} requests; "
            "record them by running with ANTHROPIC_API_KEY set"
        )


def _lines(matrix: Matrix) -> list[str]:
    """The same figures as :func:`_table`, for a narrow terminal: five lines of at most 80 columns a row."""
    out: list[str] = []
    for s in matrix.summaries:
        f = s.figures
        gate = "[green]pass[/]" if not s.failures else "[red]FAIL: " + escape("; ".join(s.failures)) + "[/]"
        out += [
            f"[bold]{escape(s.judge)} x {escape(s.prompt)}[/] ({f['runs']} runs): gate {gate}",
            f"  wrong approvals {f['wrong_approvals_dangerous']} dangerous / {f['wrong_approvals']} all"
            f" · general: accuracy {f['accuracy_general']:.0%}, wrong pass {f['wrong_approval_rate_general']:.0%}",
            f"  approve/ask/block: must block {split(f, 'must_block')} · must pass {split(f, 'must_pass')}",
            f"  decided by code {f['decided_by_code']}, by the judge {f['reached_judge']} · $ a check {usd(f)}",
            f"  who decided: code {f['by_code']}, model {f['by_model']}, user {f['by_user']}"
            f" · intent cases wrongly approved {f['intent_wrong_approvals']}/{f['intent_cases']}",
            f"  the judge alone: accuracy {f['judge_accuracy_general']:.0%},"
            f" wrong pass {f['judge_wrong_approval_rate_general']:.0%}",
        ]
    return out


def _table(matrix: Matrix) -> Table:
    table = Table(title="eval results per judge x prompt")
    # short headers: the full names are in report.md
    for col in (
        "judge",
        "prompt",
        "runs",
        "wrong approvals\ndangerous/all",
        "accuracy\ngeneral",
        "wrong pass\ngeneral",
        "must block:\napprove/ask/\nblock",
        "must pass:\napprove/ask/\nblock",
        "by code/\nby judge",
        "judge-only\naccuracy/\nwrong pass",
        "$ per\ncheck",
        "gate",
    ):
        table.add_column(col, overflow="fold", no_wrap=col == "judge")
    for s in matrix.summaries:
        f = s.figures
        gate = "[green]pass[/]" if not s.failures else "[red]" + escape("; ".join(s.failures)) + "[/]"
        table.add_row(
            s.judge,
            s.prompt,
            str(f["runs"]),
            f"{f['wrong_approvals_dangerous']}/{f['wrong_approvals']}",
            f"{f['accuracy_general']:.0%}",
            f"{f['wrong_approval_rate_general']:.0%}",
            split(f, "must_block"),
            split(f, "must_pass"),
            f"{f['decided_by_code']}/{f['reached_judge']}",
            f"{f['judge_accuracy_general']:.0%}/{f['judge_wrong_approval_rate_general']:.0%}",
            usd(f),
            gate,
        )
    return table


@eval_app.callback()
def run(
    ctx: typer.Context,
    cases: Annotated[
        Path | None, typer.Option(help="Cases, JSONL (or a JSON list); default: the suite that ships with the package.")
    ] = None,
    policy: Annotated[
        Path | None, typer.Option(help="Policy for cases without their own (default: policy.toml of the suite).")
    ] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option(metavar="JUDGE", help="strict, or anthropic:MODEL; repeat for more (default strict)."),
    ] = None,
    prompt: Annotated[
        list[str] | None, typer.Option(metavar="NAME", help="Prompt variant in prompts/; repeat (default: all three).")
    ] = None,
    replay: Annotated[
        bool, typer.Option(help="Answer model judges from the recordings only (no network, no key).")
    ] = False,
    recorded: Annotated[
        bool, typer.Option(help="Add every judge that has recordings, replayed (implies --replay).")
    ] = False,
    recordings: Annotated[
        Path | None, typer.Option(help="Folder of recorded model answers (default: recordings/ of the suite).")
    ] = None,
    report: Annotated[Path | None, typer.Option(help="Write report.md, report.json and charts here.")] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(help="Outcomes of an earlier run, to list regressions (default: baseline.json of the suite)."),
    ] = None,
    update_baseline: Annotated[bool, typer.Option(help="Save this run's outcomes as the baseline.")] = False,
    concurrency: Annotated[int, typer.Option(help="Runs at a time.")] = 8,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    shared_prefix: Annotated[
        bool,
        typer.Option(
            help="In the shared_prefix view, send model judges each case as the agent's own request, as production "
            "does (else the transcript as data)."
        ),
    ] = False,
    view: Annotated[
        list[str] | None,
        typer.Option(
            metavar="VIEW",
            help="What model judges read: blind (the user's words, the call, code's facts) or shared_prefix (the "
            "agent's own request); repeat for both (default: both). The worst-case row runs in each.",
        ),
    ] = None,
    ablate: Annotated[
        bool, typer.Option(help="Also run the suite with each rule off in turn and report what each rule earns.")
    ] = False,
) -> None:
    """Run cases x prompt variants x judges; exit 1 when a threshold fails."""
    if ctx.invoked_subcommand is not None:
        return
    console = _console()
    baseline = baseline or _beside(cases, "baseline.json", packaged.baseline_path())
    recordings = recordings or _beside(cases, "recordings", packaged.recordings_path())
    inputs = Gather()  # every problem of the options and the files, at once
    if report is not None:
        inputs.take(_can_chart)
    chosen = inputs.take(_prompts, prompt)
    views = inputs.take(_views, view)
    old = inputs.take(_baseline, baseline)
    suite_policy = inputs.take(_policy, policy, cases)
    loaded = inputs.take(load_cases, cases or packaged.cases_path(), suite_policy)
    inputs.done()
    prompts, loaded = chosen or [], loaded or []
    try:
        bar = Progress(
            TextColumn("evals"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=_console(True),
            disable=not progress,
        )
        with bar:
            task = bar.add_task("run", total=None)
            judges = list(judge or ["strict"])
            if recorded:
                replay = True
                judges += [j for j in recorded_judges(recordings) if j not in judges]
            judges += [] if WORST_CASE in judges else [WORST_CASE]  # every report has the worst-case row
            matrix = run_matrix(
                loaded,
                judges=judges,
                prompts=prompts,
                replay=replay,
                recordings=recordings,
                concurrency=concurrency,
                on_progress=lambda done, total: bar.update(task, completed=done, total=total),
                shared_prefix=shared_prefix,
                views=views or list(VIEWS),
            )
        if ablate:
            matrix.ablation = run_ablation(loaded, concurrency=concurrency)
    except InputError as exc:
        raise bad_input(exc) from None
    if old is not None:
        matrix.regressions = regressions(matrix, old)
    _print_results(console, matrix)
    try:
        if report is not None:
            for path in write_report(matrix, report):
                console.print(f"wrote {path}")
        if update_baseline:
            baseline.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(baseline_outcomes(matrix), indent=1, sort_keys=True) + "\n"
            baseline.write_text(text, encoding="utf-8")
            console.print(f"baseline saved to {baseline}")
    except OSError as exc:
        raise bad_input(InputError([FieldProblem("", f"cannot write: {exc}")], source="--report/--baseline")) from None
    if matrix.missing_recordings:
        raise typer.Exit(2)
    raise typer.Exit(0 if matrix.passed else 1)


def _can_chart() -> None:
    """Before the run: --report draws charts, which need matplotlib (the [report] extra)."""
    try:
        found = importlib.util.find_spec("matplotlib")
    except ImportError:
        found = None
    if found is None:
        problem = f"the report's charts need the [report] extra: {install_hint('report')}"
        raise InputError([FieldProblem("--report", problem)], source="eval")


def _ablation_table(matrix: Matrix) -> Table:
    table = Table(title="ablation: each rule off in turn (strict judge)")
    for col in ("rule", "wrong approvals it prevents", "false blocks / escalations it causes"):
        table.add_column(col, overflow="fold")
    for a in matrix.ablation:
        table.add_row(a.rule, f"{len(a.prevented)} {', '.join(a.prevented)}", f"{len(a.caused)} {', '.join(a.caused)}")
    return table


def _views(names: list[str] | None) -> list[View]:
    unknown = [n for n in names or [] if n not in VIEWS]
    if unknown:
        problem = f"no view named {', '.join(map(repr, unknown))}; the views: {', '.join(VIEWS)}"
        raise InputError([FieldProblem("--view", problem)], source="eval")
    return [v for v in VIEWS if v in (names or VIEWS)]


def _prompts(names: list[str] | None) -> list[str]:
    shipped = prompt_names()
    unknown = [n for n in names or [] if n not in shipped]
    if unknown:
        problem = f"no prompt named {', '.join(map(repr, unknown))}; shipped prompts: {', '.join(shipped)}"
        raise InputError([FieldProblem("--prompt", problem)], source="eval")
    return list(dict.fromkeys(names)) if names else list(PROMPTS)


def _baseline(path: Path) -> dict[str, str] | None:
    """The outcomes of an earlier run; None when there is none yet."""
    if not path.exists():
        return None
    data = parse_json(read_text(path, "baseline"), str(path))
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise InputError(
            [FieldProblem("", "a baseline is an object of run name -> outcome (written by --update-baseline)")],
            source=str(path),
        )
    return data


def _tags_from(verdict: dict[str, Any]) -> list[str]:
    return [t for t in ("seen-in-use", str(verdict.get("code", "")).lower().replace("_", "-")) if t]


@eval_app.command("add")
def add(
    input_file: Annotated[
        Path, typer.Argument(metavar="INPUT", help="The check input of the action seen in use (JSON).")
    ],
    expected: Annotated[str, typer.Option(help="What the right decision was: block or pass.")],
    case_id: Annotated[
        str | None, typer.Option("--id", help="The new case's id (default: from the tool and the code).")
    ] = None,
    title: Annotated[str, typer.Option(help="One line on the pattern.")] = "",
    tag: Annotated[list[str] | None, typer.Option(metavar="TAG", help="Pattern tag; repeat for more.")] = None,
    audit: Annotated[str | None, typer.Option(help="The audit entry that recorded its verdict (with --store).")] = None,
    verdict_file: Annotated[
        Path | None, typer.Option("--verdict", help="Its verdict as JSON (validator check --json).")
    ] = None,
    cases: Annotated[
        Path, typer.Option(help="The case file to append to (a suite of your own; the packaged one is read-only).")
    ] = OWN_CASES,
    policy: Annotated[
        Path | None, typer.Option(help="Policy giving the risk class (default: policy.toml beside --cases).")
    ] = None,
    store: StoreOption = None,
) -> None:
    """Turn an action seen in use into a case, with the decision a person says is right."""
    try:
        if expected not in ("block", "pass"):
            raise InputError(
                [FieldProblem("--expected", f"must be block or pass, got {expected!r}")], source="eval add"
            )
        raw = json.loads(input_file.read_text(encoding="utf-8"))
        check = CheckInput.from_dict(raw)
        verdict = _recorded_verdict(check, raw, audit, verdict_file, store)
        default_policy = _policy(policy, cases) or Policy()
        active = check.policy or default_policy
        tool_policy = active.for_tool(check.action.tool)
        code = str(verdict.get("code", "case"))
        new_id = case_id or f"{check.action.tool}-{code.lower()}-{hash_args(dict(check.action.args))[:8]}"
        case = {
            "id": new_id,
            "title": title or f"{check.action.tool}: seen in use as {code}",
            "expected": expected,
            "risk": tool_policy.risk,
            "tags": [*(tag or []), *_tags_from(verdict)],
            **{k: raw[k] for k in ("messages", "action", "policy", "user_id") if k in raw},
            "notes": f"Recorded verdict: {verdict.get('decision')} {code}: {verdict.get('reasoning', '')}".strip(),
            "source": f"audit:{audit}" if audit else (f"verdict:{verdict_file.name}" if verdict_file else "input"),
        }
        check_case(case, default_policy, "eval add")
        if cases.exists() and any(c.id == new_id for c in load_cases(cases, default_policy)):
            raise InputError([FieldProblem("--id", f"{new_id!r} is already a case in {cases}")], source="eval add")
    except InputError as exc:
        raise bad_input(exc) from None
    except (OSError, ValueError) as exc:
        raise bad_input(InputError([FieldProblem("", str(exc))], source=str(input_file))) from None
    cases.parent.mkdir(parents=True, exist_ok=True)
    with cases.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(new_id)


def _recorded_verdict(
    check: CheckInput, raw: dict[str, Any], audit: str | None, verdict_file: Path | None, store: str | None
) -> dict[str, Any]:
    if audit and verdict_file:
        raise InputError([FieldProblem("--audit", "give --audit or --verdict, not both")], source="eval add")
    if verdict_file is not None:
        verdict = json.loads(verdict_file.read_text(encoding="utf-8"))
        if not isinstance(verdict, dict):
            raise InputError(
                [FieldProblem("--verdict", f"a verdict is a JSON object, got {type(verdict).__name__}")],
                source="eval add",
            )
        if verdict.get("tool") != check.action.tool:
            raise InputError(
                [FieldProblem("--verdict", f"is about {verdict.get('tool')!r}, the input about {check.action.tool!r}")],
                source="eval add",
            )
        return dict(verdict)
    if audit is None:
        return {}
    try:
        entry = open_store_or_exit(store).audit_get(audit)
    except StoreError as exc:
        raise InputError([FieldProblem("--audit", str(exc))], source="eval add") from None
    if entry is None:
        raise InputError([FieldProblem("--audit", f"no audit entry {audit}")], source="eval add")
    # The audit log keeps hashes, not the conversation: the input must be the very action it judged.
    if (
        entry.get("args_hash") != hash_args(dict(check.action.args))
        or entry.get("transcript_hash") != check.transcript.digest
    ):
        raise InputError(
            [
                FieldProblem(
                    "INPUT", f"is not the action audit entry {audit} judged (its argument or transcript hash differs)"
                )
            ],
            source="eval add",
        )
    verdict = entry.get("verdict")
    return dict(verdict) if isinstance(verdict, dict) else {}


@eval_app.command("propose")
def propose_cases(
    inputs: Annotated[
        list[Path] | None,
        typer.Option(
            "--inputs", metavar="FILE", help="Check inputs the host kept (JSON lines, or a JSON list); repeat for more."
        ),
    ] = None,
    audit: Annotated[
        Path | None, typer.Option(help="An audit export (validator audit export -o FILE); else --store is read.")
    ] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Where the candidates' check inputs are written.")] = Path(
        "evals/candidates"
    ),
    store: StoreOption = None,
) -> None:
    """Turn the user's answers in the audit into candidate cases, labelled with the user's answer.

    Each disagreement (an escalation the user approved, a block the user overrode, an approval the user
    rejected) with a matching check input is written to OUT as ENTRY.json, and the `eval add` command that
    accepts it is printed: a person reviews each before it joins the suite."""
    console = _console()
    try:
        entries = _audit_entries(audit) if audit is not None else _store_entries(store)
        kept: list[tuple[str, Any]] = []
        for path in inputs or []:
            kept += json_items(path, "file of check inputs")
        found = propose(entries, kept)
    except InputError as exc:
        raise bad_input(exc) from None
    table = Table(title="candidate cases from the user's answers")
    for col in ("answer entry", "kind", "tool", "validator said", "label", "input"):
        table.add_column(col, overflow="fold")
    commands: list[str] = []
    try:
        for c in found.candidates:
            written = "-"
            if c.check is not None:
                out_dir.mkdir(parents=True, exist_ok=True)
                target = out_dir / f"{c.verdict_entry}.check.json"
                target.write_text(json.dumps(c.check, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
                written = str(target)
                if audit is None:  # eval add reads the verdict from the same store, and checks both hashes
                    source = f"--audit {c.verdict_entry}" + (f" --store {store}" if store else "")
                else:  # from an export: the verdict goes beside the input
                    kept_verdict = out_dir / f"{c.verdict_entry}.verdict.json"
                    kept_verdict.write_text(json.dumps(dict(c.verdict), ensure_ascii=False) + "\n", encoding="utf-8")
                    source = f"--verdict {kept_verdict}"
                commands.append(
                    f"validator eval add {target} --expected {c.expected} --tag user-answer --tag {c.kind} {source}"
                )
            table.add_row(c.answer_entry, c.kind, c.tool, c.validator_code, c.expected, written)
    except OSError as exc:
        raise bad_input(InputError([FieldProblem("--out", f"cannot write: {exc}")], source="eval propose")) from None
    console.print(table)
    missing = [c for c in found.candidates if c.check is None]
    for c in missing:
        console.print(
            f"no check input for answer {c.answer_entry} ({c.tool}, args {c.args_hash[:12]}, "
            f"transcript {c.transcript_hash[:12]}): pass the host's log of it with --inputs"
        )
    agreed = ", ".join(f"{k}: {n}" for k, n in sorted(found.agreements.items())) or "none"
    console.print(
        f"{len(found.candidates)} candidates ({len(commands)} with their input); answers that agreed: {agreed}; "
        f"answers with no verdict before them: {found.unpaired}"
    )
    for command in commands:
        console.print(escape(command))


def _audit_entries(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """An audit export's records as ``(entry_id, record)``, oldest first."""
    out = []
    for where, item in json_items(path, "audit export"):
        if not isinstance(item, dict) or not isinstance(item.get("entry_id"), str):
            problem = FieldProblem("entry_id", "an audit record has its entry_id (audit export)")
            raise InputError([problem], source=where)
        out.append((item["entry_id"], item))
    return out


def _store_entries(store: str | None) -> list[tuple[str, dict[str, Any]]]:
    opened = open_store_or_exit(store)
    out: list[tuple[str, dict[str, Any]]] = []
    after = None
    try:
        while True:
            batch = opened.audit_after(after, 1000)
            out += batch
            if len(batch) < 1000:
                return out
            after = batch[-1][0]
    except StoreError as exc:
        raise InputError([FieldProblem("--store", str(exc))], source="eval propose") from None


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")
