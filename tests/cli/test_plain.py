"""The plain readings of the command line (``validator check`` and the one-shot hook without typer): what they read,
they read as the full command line does; what they do not, the full command line reads; a process they run imports
neither typer nor pydantic, and answers as the full command line's would."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from validator.cli import app, checkrun, hookrun
from validator.cli.checkrun import CheckOptions
from validator.cli.hookwire import HookOptions

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "validator" / "examples"
HOOK = ROOT / "examples" / "claude_code"
runner = CliRunner()

CHECK_WORDS = [
    "--json",
    "--jsonl",
    "--policy",
    "--policy=p.toml",
    "--policy=",
    "p.toml",
    "--judge",
    "strict",
    "--judge=anthropic",
    "--model",
    "m",
    "--model=-m",
    "--store",
    "memory://",
    "--store=redis://h:1/0",
    "--agent-request",
    "a.json",
    "-",
    "in.json",
    "--example",
    "authorized_email",
    "--print-input",
    "--help",
    "-h",
    "--",
    "--unknown",
    "--json=1",
    "-x",
]
HOOK_WORDS = [
    "--policy",
    "p.toml",
    "--policy=p.toml",
    "--policy=",
    "--store",
    "memory://",
    "--judge",
    "strict",
    "--model",
    "m",
    "--timeout",
    "5",
    "0.0005",
    "0.001",
    "3600",
    "3601",
    "nan",
    "1e-3",
    "--timeout=2.5",
    "--allow",
    "--no-allow",
    "--persistent",
    "--print-settings",
    "--serve",
    "--default-policy",
    "--help",
    "-x",
    "--",
]
ENVIRONMENTS = [None, "", "redis://env:1/0"]
CHECK_PIECES = [
    ["--json"],
    ["--jsonl"],
    ["--policy", "p.toml"],
    ["--policy=p.toml"],
    ["--judge", "strict"],
    ["--judge=anthropic"],
    ["--model", "m"],
    ["--store", "memory://"],
    ["--store=redis://h:1/0"],
    ["--agent-request", "a.json"],
    ["in.json"],
    ["-"],
]
HOOK_PIECES = [
    ["--policy", "p.toml"],
    ["--policy=p.toml"],
    ["--store", "memory://"],
    ["--judge", "strict"],
    ["--model", "m"],
    ["--timeout", "5"],
    ["--timeout=2.5"],
    ["--timeout", "1e-3"],
    ["--allow"],
    ["--no-allow"],
    ["--persistent"],
]


def _argv(pieces: list[list[str]], words: list[str]) -> st.SearchStrategy[list[str]]:
    """Command lines of whole options (most of them plain) with a stray word now and then."""
    piece = st.one_of(st.sampled_from(pieces), st.sampled_from(words).map(lambda w: [w]))
    return st.lists(piece, max_size=6).map(lambda parts: [w for part in parts for w in part])


@contextlib.contextmanager
def _store_env(value: str | None) -> Iterator[None]:
    before = os.environ.pop("VALIDATOR_STORE_URL", None)
    if value is not None:
        os.environ["VALIDATOR_STORE_URL"] = value
    try:
        yield
    finally:
        os.environ.pop("VALIDATOR_STORE_URL", None)
        if before is not None:
            os.environ["VALIDATOR_STORE_URL"] = before


def _full_check(args: list[str]) -> list[Any]:
    """The options the full command line hands to ``checkrun.run`` for ``check ARGS`` (none: it refused them)."""
    return _handed(checkrun, "run", ["check", *args])


def _full_hook(args: list[str]) -> list[Any]:
    """The options the full command line hands to ``hookrun.one_shot`` for ``hook claude-code ARGS``."""
    return _handed(hookrun, "one_shot", ["hook", "claude-code", *args])


def _handed(module: Any, runs: str, argv: list[str]) -> list[Any]:
    """The options the full command line hands to ``module.runs`` for ``argv`` (none: it refused them)."""
    seen: list[Any] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, runs, lambda options: seen.append(options) or 0)
        result = runner.invoke(app, argv)
    assert result.exit_code == 0 or not seen, result.output
    return seen


@settings(max_examples=500, deadline=None)
@given(_argv(CHECK_PIECES, CHECK_WORDS), st.sampled_from(ENVIRONMENTS))
def test_what_the_plain_check_reads_it_reads_as_the_full_command_line(args: list[str], env: str | None) -> None:
    with _store_env(env):
        plain = CheckOptions.parse(args)
        if plain is not None:
            assert _full_check(args) == [plain]


@settings(max_examples=300, deadline=None)
@given(_argv(HOOK_PIECES, HOOK_WORDS), st.sampled_from(ENVIRONMENTS))
def test_what_the_plain_hook_reads_it_reads_as_the_full_command_line(args: list[str], env: str | None) -> None:
    with _store_env(env):
        plain = HookOptions.parse(args)
        if plain is not None:
            assert _full_hook(args) == [plain]


@pytest.mark.parametrize(
    "args",
    [
        ["in.json"],
        ["--json", "in.json"],
        ["-", "--jsonl"],
        ["--policy", "p.toml", "--json", "in.json"],
        ["--policy=p.toml", "--store", "memory://", "in.json"],
        ["--judge", "anthropic", "--model", "m", "--agent-request", "a.json", "in.json"],
    ],
)
@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_forms_a_host_runs_are_read_plainly(args: list[str], env: str | None) -> None:
    with _store_env(env):
        plain = CheckOptions.parse(args)
        assert plain is not None
        assert _full_check(args) == [plain]
        assert plain.store == ("memory://" if "memory://" in args else env or None)


@pytest.mark.parametrize(
    "args",
    [[], ["--help"], ["a.json", "b.json"], ["--example", "authorized_email"], ["--policy="], ["--", "in.json"]],
)
def test_anything_else_is_left_to_the_full_command_line(args: list[str]) -> None:
    assert CheckOptions.parse(args) is None


@pytest.mark.parametrize(
    "args",
    [["--print-settings"], ["--serve", "s"], ["--timeout", "0.0005"], ["--timeout", "nan"], ["--policy", "-x"]],
)
def test_the_hooks_other_forms_are_left_to_the_full_command_line(args: list[str]) -> None:
    assert HookOptions.parse(args) is None


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_hook_reads_the_store_from_the_environment_as_the_full_command_line(env: str | None) -> None:
    """The persistent hook's client keys its process by the options it reads: with ``$VALIDATOR_STORE_URL`` set
    and no ``--store`` it read none, the process it started (read by the full command line) read the URL, and the
    two keys never met: every call fell back to the one-shot answer."""
    with _store_env(env):
        plain = HookOptions.parse(["--policy", "p.toml"])
        assert plain is not None and plain.store == (env or None)
        assert _full_hook(["--policy", "p.toml"]) == [plain]


# -- the processes ---------------------------------------------------------------------------------------------


_HEAVY = ("typer", "click", "pydantic", "rich")
"""What a plain check or hook never imports."""


def _script(
    args: list[str], stdin: bytes = b"", cwd: Path = ROOT, names: tuple[str, ...] = _HEAVY
) -> subprocess.CompletedProcess[bytes]:
    """``validator ARGS`` as a host runs it, reporting which of ``names`` the process imported on its last line of
    stderr."""
    code = (
        "import sys, json\n"
        "from validator.cli.entry import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "finally:\n"
        f"    names = {names!r}\n"
        "    print(json.dumps([m for m in names if m in sys.modules]), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "VALIDATOR_STORE_URL"}
    return subprocess.run([sys.executable, "-c", code, *args], input=stdin, capture_output=True, cwd=cwd, env=env)


@pytest.mark.parametrize(
    ("example", "exit_code", "code"),
    [
        ("authorized_email", 0, "APPROVED"),
        ("vendor_invoice", 1, "EVIDENCE_NOT_FROM_USER"),
        ("delete_instead_of_archive", 4, "ACTION_NOT_REQUESTED"),
    ],
)
def test_a_plain_check_answers_as_the_full_command_line_and_imports_neither(
    example: str, exit_code: int, code: str
) -> None:
    args = ["check", "--json", "--policy", str(EXAMPLES / "policy.toml"), str(EXAMPLES / f"{example}.json")]
    done = _script(args)
    full = runner.invoke(app, args)
    assert done.returncode == full.exit_code == exit_code, done.stderr
    plain, whole = json.loads(done.stdout), json.loads(full.stdout)
    for varies in ("latency_ms", "audit_id"):
        plain.pop(varies), whole.pop(varies)
    assert plain == whole and plain["code"] == code
    assert json.loads(done.stderr.splitlines()[-1]) == []


def test_a_check_with_no_policy_file_loads_no_toml_reader_resource_helper_or_spelling_aid() -> None:
    """What a one-shot check without a policy file never uses is never imported: the TOML reader (the pack's
    tables ship as JSON), :mod:`importlib.resources` (with :mod:`tempfile`, :mod:`shutil` and the compressors: the
    pack's files are read from its folder) and :mod:`difflib` (only an unknown field's "did you mean")."""
    done = _script(
        ["check", "--json", str(EXAMPLES / "authorized_email.json")],
        names=("tomllib", "importlib.resources", "difflib"),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["code"] == "APPROVED"
    assert json.loads(done.stderr.splitlines()[-1]) == []


def test_a_verdict_drawn_for_people_loads_no_emoji_table() -> None:
    """A verdict drawn for people reads no emoji codes (an outside party's ``:cross_mark:`` is text), so rich's
    table of them is never loaded (the panel's title is a text, not markup)."""
    done = _script(["check", str(EXAMPLES / "authorized_email.json")], names=("rich", "rich._emoji_codes"))
    assert done.returncode == 0, done.stderr
    assert "APPROVE" in done.stdout.decode()
    assert json.loads(done.stderr.splitlines()[-1]) == ["rich"]


def test_a_plain_check_of_a_bad_input_names_each_problem_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": [], "action": {"tool": "x"}, "extra": 1}')
    done = _script(["check", "--json", str(bad), "--policy", str(tmp_path / "none.toml")])
    assert done.returncode == 2
    for problem in ("extra: unknown field", "none.toml"):  # every problem of each input, as the full line names them
        assert problem in done.stderr.decode()
    assert _script(["check", str(tmp_path / "missing.json")]).returncode == 2


def test_a_plain_hook_answers_and_imports_neither() -> None:
    args = ["hook", "claude-code", "--policy", str(EXAMPLES / "policy.toml")]
    done = _script(args, (HOOK / "sample_hook_input.json").read_bytes(), cwd=HOOK)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "INJECTION_SIGNATURE" in answer["permissionDecisionReason"]
    assert json.loads(done.stderr.splitlines()[-1]) == []


def test_the_full_command_line_still_runs_what_the_plain_readings_leave() -> None:
    done = _script(["check", "--help"])
    assert done.returncode == 0 and b"--agent-request" in done.stdout
    assert "typer" in json.loads(done.stderr.splitlines()[-1])


@pytest.mark.parametrize("plain", [True, False])
def test_a_hook_with_no_input_to_read_denies(plain: bool) -> None:
    """A closed standard input was a traceback and exit 1, which Claude Code takes for a hook's own error: the call
    ran. Now the answer is a deny, on both paths."""
    full = ["--default-policy"]  # an option only the full command line reads (the hook's own process takes it)
    args = ["hook", "claude-code", "--policy", str(EXAMPLES / "policy.toml"), *([] if plain else full)]
    code = "import sys; from validator.cli.entry import main; main(sys.argv[1:])"
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" "$@" <&-', sys.executable, "-c", code, *args], capture_output=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
