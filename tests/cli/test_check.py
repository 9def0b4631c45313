from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from validator.cli import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "validator" / "examples"
runner = CliRunner()


@pytest.mark.parametrize(
    ("example", "exit_code", "code"),
    [
        ("authorized_email", 0, "APPROVED"),
        ("vendor_invoice", 1, "EVIDENCE_NOT_FROM_USER"),
        ("fabricated_quote", 1, "EVIDENCE_NOT_FOUND"),
        ("delete_instead_of_archive", 4, "ACTION_NOT_REQUESTED"),  # ask_user: 4, not a block's 1
    ],
)
def test_examples_with_the_example_policy(example: str, exit_code: int, code: str) -> None:
    result = runner.invoke(
        app, ["check", "--json", "--policy", str(EXAMPLES / "policy.toml"), str(EXAMPLES / f"{example}.json")]
    )
    assert result.exit_code == exit_code, result.output
    assert json.loads(result.stdout)["code"] == code


def test_delete_example_suggests_archiving() -> None:
    result = runner.invoke(
        app,
        [
            "check",
            "--json",
            "--policy",
            str(EXAMPLES / "policy.toml"),
            str(EXAMPLES / "delete_instead_of_archive.json"),
        ],
    )
    assert "`archive_thread`" in json.loads(result.stdout)["suggested_next_step"]


def test_readable_output_names_code_and_next_step() -> None:
    result = runner.invoke(app, ["check", str(EXAMPLES / "vendor_invoice.json")])
    assert result.exit_code == 1
    for text in ("BLOCK", "EVIDENCE_NOT_FROM_USER", "Next step", "billing@supplies.example", "not_from_user"):
        assert text in result.stdout


def test_stdin_and_bad_input_exit_2() -> None:
    result = runner.invoke(app, ["check", "-"], input='{"messages": [], "action": {"tool": "x"}}')
    assert result.exit_code == 2
    assert "messages: must hold at least one message" in result.stderr
    result = runner.invoke(app, ["check", "-"], input="{oops")
    assert result.exit_code == 2 and "not valid JSON" in result.stderr
    result = runner.invoke(app, ["check", "/nonexistent/file.json"])
    assert result.exit_code == 2 and "cannot read" in result.stderr


def test_unknown_judge_and_bad_policy_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", "--judge", "oracle", str(EXAMPLES / "vendor_invoice.json")])
    assert result.exit_code == 2 and "unknown judge 'oracle'" in result.stderr
    bad = tmp_path / "p.toml"
    bad.write_text('[tools.x]\nrisk = "lethal"\n')
    result = runner.invoke(app, ["check", "--policy", str(bad), str(EXAMPLES / "vendor_invoice.json")])
    assert result.exit_code == 2 and "tools.x.risk" in result.stderr


def test_jsonl_batch_writes_one_line_each_and_exits_with_the_most_severe_line() -> None:
    good = (EXAMPLES / "authorized_email.json").read_text().replace("\n", " ")
    blocked = (EXAMPLES / "vendor_invoice.json").read_text().replace("\n", " ")
    lines = "\n".join(
        [good, "{broken", "", blocked, '{"messages": [{"role": "user", "content": "x"}], "action": {"tool": 5}}']
    )
    result = runner.invoke(app, ["check", "--jsonl", "-"], input=lines)
    assert result.exit_code == 2, result.output  # a bad line outranks the block and the approval
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["line"] for r in records] == [1, 2, 4, 5]
    # No policy: send_email is general; the lexicon's message verbs make "email …" a request for it (and "tell her
    # …" too: its text fills the body, which holds it word for word).
    assert (records[0]["verdict"]["decision"], records[0]["verdict"]["code"]) == ("approve", "APPROVED")
    assert records[1]["error"] == "invalid_input" and "not valid JSON" in records[1]["problems"][0]["problem"]
    assert records[2]["verdict"]["code"] == "EVIDENCE_NOT_FROM_USER"
    assert records[3]["problems"][0]["path"] == "action.tool"


@pytest.mark.parametrize(
    ("names", "status"),
    [
        (["authorized_email"], 0),
        (["authorized_email", "delete_instead_of_archive"], 4),  # ask_user outranks an approval
        (["delete_instead_of_archive", "vendor_invoice", "authorized_email"], 1),  # a block outranks ask_user
        ([], 2),  # nothing judged is nothing approved
    ],
)
def test_jsonl_exit_status_is_its_most_severe_line(names: list[str], status: int) -> None:
    policy = str(EXAMPLES / "policy.toml")
    lines = "\n".join((EXAMPLES / f"{n}.json").read_text().replace("\n", " ") for n in names)
    result = runner.invoke(app, ["check", "--jsonl", "--policy", policy, "-"], input=lines)
    assert result.exit_code == status, result.output
    assert len(result.stdout.splitlines()) == len(names)


def test_every_problem_of_a_command_is_listed_at_once(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"messages": [{"role": "bot", "content": "hi"}], "action": {"tool": 5, "args": {"a": NaN}},'
        ' "policy": {"tools": {"x": {"risk": "lethal"}}}, "extra": 1}'
    )
    result = runner.invoke(app, ["check", str(bad)])
    said = result.stderr
    assert result.exit_code == 2
    for problem in ("action.args.a: 'NaN'", "extra: unknown field", "messages[0].role", "action.tool", "tools.x.risk"):
        assert problem in said, (problem, said)
    # options, the policy file and the input: three sources, each problem named
    result = runner.invoke(app, ["check", "--model", "m", "--policy", str(tmp_path / "none.toml"), str(bad)])
    assert result.exit_code == 2
    assert "--model and --agent-request need --judge anthropic" in result.stderr
    assert "none.toml" in result.stderr and "extra: unknown field" in result.stderr


def test_example_by_name() -> None:
    result = runner.invoke(app, ["check", "--json", "--example", "vendor_invoice"])
    assert result.exit_code == 1 and json.loads(result.stdout)["code"] == "EVIDENCE_NOT_FROM_USER"
    unknown = runner.invoke(app, ["check", "--example", "nope"])
    assert unknown.exit_code == 2 and "the examples are: authorized_email" in unknown.stderr
    both = runner.invoke(app, ["check", "--example", "vendor_invoice", "x.json"])
    assert both.exit_code == 2 and "not both" in both.stderr
    neither = runner.invoke(app, ["check"])
    assert neither.exit_code == 2 and "--example NAME" in neither.stderr


def test_init_writes_the_example_policy(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 0 and (tmp_path / "policy.toml").read_bytes() == (EXAMPLES / "policy.toml").read_bytes()
    (tmp_path / "policy.toml").write_text("# mine\n")
    again = runner.invoke(app, ["init", str(tmp_path)])
    assert again.exit_code == 2 and "--force" in again.stderr
    assert (tmp_path / "policy.toml").read_text() == "# mine\n"  # never overwritten unasked
    assert runner.invoke(app, ["init", str(tmp_path), "--force"]).exit_code == 0


def test_policy_check(tmp_path: Path) -> None:
    result = runner.invoke(app, ["policy", "check", str(EXAMPLES / "policy.toml")])
    assert result.exit_code == 0 and "send_money" in result.stdout and "dangerous" in result.stdout
    bad = tmp_path / "p.toml"
    bad.write_text('[tools.x]\nexempt = true\nrisk = "dangerous"\n')
    result = runner.invoke(app, ["policy", "check", str(bad)])
    assert result.exit_code == 2 and "tools.x: a dangerous tool cannot be exempt" in result.stderr


def test_schema_command() -> None:
    result = runner.invoke(app, ["schema", "verdict"])
    assert result.exit_code == 0 and json.loads(result.stdout)["title"] == "Verdict"
    assert runner.invoke(app, ["schema", "nope"]).exit_code == 2


def test_installed_script_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "validator", "check", "--json", str(EXAMPLES / "vendor_invoice.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["code"] == "EVIDENCE_NOT_FROM_USER"


def _serve(reply: dict) -> tuple[Any, list[dict]]:
    """A loopback stand-in for the Messages API: answers every POST with ``reply``, records bodies."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            body = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


def test_anthropic_judge_from_the_cli_honours_the_sdk_environment(tmp_path: Path) -> None:
    import os

    from tests.anthropic_mock import message, verdict_call
    from tests.judges.test_anthropic import ACTION, AGENT_REQUEST

    server, seen = _serve(message([verdict_call()]))
    try:
        (tmp_path / "agent.json").write_text(json.dumps(AGENT_REQUEST))
        check = {
            "messages": [{"role": "user", "content": "Please email bob@acme.example the minutes."}],
            "action": ACTION,
        }
        (tmp_path / "check.json").write_text(json.dumps(check))
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-test",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}",
        }
        cmd = [sys.executable, "-m", "validator", "check", "--json", "--judge", "anthropic"]
        proc = subprocess.run(
            [*cmd, "--agent-request", str(tmp_path / "agent.json"), str(tmp_path / "check.json")],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        verdict = json.loads(proc.stdout)
        assert verdict["judge"] == "anthropic" and verdict["usage"]["cache"] == "shared"
        assert seen[0]["messages"][: len(AGENT_REQUEST["messages"])] == AGENT_REQUEST["messages"]
        proc = subprocess.run(
            [*cmd, "--model", "claude-haiku-4-5", str(tmp_path / "check.json")],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["usage"]["cache"] == "blind" and seen[1]["model"] == "claude-haiku-4-5"
    finally:
        server.shutdown()
        server.server_close()


def test_anthropic_judge_options_are_checked() -> None:
    result = runner.invoke(app, ["check", "--judge", "anthropic", str(EXAMPLES / "vendor_invoice.json")])
    assert result.exit_code == 2 and "needs --model or --agent-request" in result.stderr
    result = runner.invoke(app, ["check", "--model", "claude-haiku-4-5", str(EXAMPLES / "vendor_invoice.json")])
    assert result.exit_code == 2 and "need --judge anthropic" in result.stderr


def test_a_payment_the_transcript_shows_done_goes_to_the_user_with_no_store(tmp_path: Path) -> None:
    """The CLI keeps nothing between runs: the transcript is its ledger."""
    ask = "Pay 50 EUR to DE89370400440532013000 for the invoice."
    args = {"recipient": "DE89370400440532013000", "amount": 50, "currency": "EUR"}
    action = {"tool": "send_money", "args": args, "call_id": "c2"}
    action["justification"] = {"reason": "The user asked.", "evidence": [{"quote": ask}]}
    first: dict[str, Any] = {"messages": [{"role": "user", "content": ask}], "action": action}
    done = [
        {"role": "assistant", "tool_calls": [{"id": "c1", "name": "send_money", "args": args}]},
        {"role": "tool", "tool_call_id": "c1", "name": "send_money", "content": "Transfer executed"},
        {"role": "user", "content": "Thanks!"},
    ]
    again = {**first, "messages": [*first["messages"], *done]}
    failed = {
        **first,
        "messages": [
            *first["messages"],
            {**done[0]},
            {**done[1], "is_error": True, "content": "Action `send_money` was not run (LOW_CONFIDENCE): unsure."},
        ],
    }
    ran_anyway = {**first, "messages": [*first["messages"], {**done[0]}, {**done[1], "is_error": True}]}
    policy = str(EXAMPLES / "policy.toml")
    cases = (
        (first, 0, "APPROVED"),
        (again, 4, "REQUEST_ALREADY_USED"),
        (failed, 0, "APPROVED"),  # the validator kept it from running
        (ran_anyway, 4, "REQUEST_ALREADY_USED"),  # an error the tool flagged: whether it ran, code cannot tell
    )
    for data, exit_code, code in cases:
        result = runner.invoke(app, ["check", "--json", "--policy", policy, "-"], input=json.dumps(data))
        assert (result.exit_code, json.loads(result.stdout)["code"]) == (exit_code, code), result.output


@pytest.mark.parametrize("width", [40, 60, 80, 99, 100, 110, 140, 200])
def test_every_value_and_every_word_of_where_it_came_from_appears_whole_at_any_width(width: int) -> None:
    """Issue 62: at 80 columns the findings' table cropped its values (``messag / read_i / billin``). Now every
    value, argument, status and word of each location is printed whole, whatever the terminal's width: a table
    where it fits, one block per row where it does not."""
    from rich.console import Console

    from validator import Validator, examples
    from validator.cli.checkrun import render
    from validator.inputs.checkinput import CheckInput

    verdict = Validator().check(CheckInput.from_json(examples.check_path("vendor_invoice").read_bytes()))
    console = Console(width=width, record=True, color_system=None)
    render(verdict, console)
    shown = console.export_text()
    findings = verdict.findings
    words = [q.quote for q in findings.quotes]
    for v in (*findings.targets, *findings.entities):
        words += [repr(v.value), v.path, v.status, *(w for loc in v.locations for w in str(loc).split())]
    for q in findings.quotes:
        words += [q.status, *(w for loc in q.locations for w in str(loc).split())]
    tokens = set(shown.split())
    for word in (w for phrase in words for w in phrase.split()):
        assert word in tokens, (width, word)


_LOADED = """
import contextlib, io, json, sys
from validator.cli.entry import main
sys.argv = ["validator", *json.loads(sys.argv[1])]
if len(sys.argv) > 2 and sys.argv[1] == "hook":
    sys.stdin = open(sys.argv.pop(), encoding="utf-8")
shown = io.StringIO()
with contextlib.redirect_stdout(shown):
    try:
        main()
    except SystemExit:
        pass
print(json.dumps({"out": shown.getvalue(), "rich": "rich" in sys.modules}))
"""


@pytest.mark.parametrize(
    ("args", "rich"),
    [
        (["check", "--json", str(EXAMPLES / "vendor_invoice.json")], False),
        (["check", "--jsonl", "LINES"], False),
        (["hook", "claude-code", "--policy", str(EXAMPLES / "policy.toml"), "SAMPLE"], False),
        (["check", str(EXAMPLES / "vendor_invoice.json")], True),  # for people: rich draws the panel
    ],
)
def test_a_check_printing_json_and_the_hook_never_load_rich(args: list[str], rich: bool, tmp_path: Path) -> None:
    """What prints JSON for a program (``check --json``, ``--jsonl``, the Claude Code hook) answers without loading
    rich (about 25 ms of each one-shot process); the verdict for people is drawn by it."""
    sample = ROOT / "examples" / "claude_code"
    lines = tmp_path / "lines.jsonl"
    lines.write_text(json.dumps(json.loads((EXAMPLES / "vendor_invoice.json").read_text(encoding="utf-8"))) + "\n")
    given = {"SAMPLE": str(sample / "sample_hook_input.json"), "LINES": str(lines)}
    args = [given.get(a, a) for a in args]
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, json.dumps(args)],
        cwd=sample,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout.splitlines()[-1])
    assert shown["rich"] is rich
    assert "EVIDENCE_NOT_FROM_USER" in shown["out"] or "INJECTION_SIGNATURE" in shown["out"], shown["out"]


def test_a_wide_terminal_shows_an_emoji_code_as_written_in_the_findings_table() -> None:
    """On a terminal wide enough for the findings table, a cell holding an emoji code (``:cross_mark:``) is drawn as
    written, in the table (the words shown are read as the table draws them, codes and all)."""
    import io

    from rich.console import Console

    from validator.cli.checkrun import WIDE, _rows

    console = Console(file=io.StringIO(), width=WIDE + 40, highlight=False, emoji=False)
    _rows(console, "evidence", ("#", "evidence"), [("1", "pay :cross_mark: now")], whole=1)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert ":cross_mark:" in shown and "\u274c" not in shown
    assert "\u2502" in shown or "\u2503" in shown  # drawn as a table, not as blocks
