"""Every code block of the README runs as written (issue 14): Python blocks are executed, JSON blocks are
parsed as what they show, shell blocks are run line by line; a block that cannot run here says why in an
HTML comment right above it (``<!-- not run: ... -->``)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from tests.anthropic_mock import MockAPI, message, verdict_call
from validator import CheckInput, Policy, examples

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"(?:<!-- not run: (?P<why>[^>]*) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)
BLOCKS = [(m["lang"], m["body"], m["why"], README[: m.start()].count("\n") + 1) for m in BLOCK.finditer(README)]


def _ids(kind: str) -> list[Any]:
    return [pytest.param(body, why, id=f"line{line}") for lang, body, why, line in BLOCKS if lang == kind]


@pytest.fixture
def offline_claude(monkeypatch: pytest.MonkeyPatch) -> MockAPI:
    """``anthropic.Anthropic()`` as a user writes it, answered by a scripted API on a mock transport."""
    api = MockAPI([message([verdict_call()]) for _ in range(4)])
    real = anthropic.Anthropic

    def built(**kwargs: Any) -> anthropic.Anthropic:
        return real(api_key="sk-test", http_client=httpx2.Client(transport=httpx2.MockTransport(api.handler)), **kwargs)

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setattr(anthropic, "Anthropic", built)
    return api


@pytest.mark.parametrize(("body", "why"), _ids("python"))
def test_python_blocks_run_as_written(body: str, why: str | None, offline_claude: MockAPI) -> None:
    assert why is None, "every Python block runs"
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(body, "README.md", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(cwd)
    for expected in re.findall(r"# (\S.*)$", body, re.M):  # "print(...)  # shown" comments are checked
        line = next((ln for ln in body.splitlines() if ln.rstrip().endswith("# " + expected)), "")
        if line.lstrip().startswith("print(") and not expected.endswith("..."):
            assert expected in out.getvalue(), (expected, out.getvalue())


@pytest.mark.parametrize(("body", "why"), _ids("json"))
def test_json_blocks_are_what_they_say(body: str, why: str | None) -> None:
    CheckInput.from_json(body)


@pytest.mark.parametrize(("body", "why"), _ids("toml"))
def test_toml_blocks_are_policies(body: str, why: str | None) -> None:
    Policy.from_toml(body)


@pytest.mark.parametrize(("body", "why"), _ids("sh"))
def test_shell_blocks_run_or_say_why_not(body: str, why: str | None, tmp_path: Path) -> None:
    if why is not None:
        assert why.strip(), "a block that does not run says why"
        return
    (tmp_path / "checks.jsonl").write_text(examples.check_path("vendor_invoice").read_text().replace("\n", " ") + "\n")
    validator = str(Path(sys.executable).parent / "validator")
    for line in body.replace("\\\n", " ").splitlines():
        command = line.split("  #")[0].strip()
        if not command:
            continue
        args = shlex.split(command)
        assert args[0] == "validator", line
        stdin = examples.check_path("vendor_invoice").read_text() if args[-1] == "-" else None
        proc = subprocess.run(
            [validator, *[str(ROOT / a) if (ROOT / a).exists() else a for a in args[1:]]],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        assert proc.returncode in (0, 1), (line, proc.stdout[-500:], proc.stderr[-500:])
        if "--json" in args:
            json.loads(proc.stdout)


def test_every_block_is_covered() -> None:
    kinds = {lang for lang, _, _, _ in BLOCKS}
    assert kinds <= {"python", "json", "toml", "sh", ""}, kinds  # "": sample output, shown not run
