"""Every code block of the README is what it says (issue 14): JSON blocks are parsed as check inputs, TOML
blocks as policies; Python and shell blocks run against the installed wheel from an empty folder
(tests/test_install.py, issue 28); a block that cannot run says why in an HTML comment right above it
(``<!-- not run: ... -->``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from validator import CheckInput, Policy

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"(?:<!-- not run: (?P<why>[^>]*) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)
BLOCKS = [(m["lang"], m["body"], m["why"], README[: m.start()].count("\n") + 1) for m in BLOCK.finditer(README)]


def _ids(kind: str) -> list[Any]:
    return [pytest.param(body, why, id=f"line{line}") for lang, body, why, line in BLOCKS if lang == kind]


@pytest.mark.parametrize(("body", "why"), _ids("json"))
def test_json_blocks_are_what_they_say(body: str, why: str | None) -> None:
    CheckInput.from_json(body)


@pytest.mark.parametrize(("body", "why"), _ids("toml"))
def test_toml_blocks_are_policies(body: str, why: str | None) -> None:
    Policy.from_toml(body)


@pytest.mark.parametrize(("body", "why"), _ids("python"))
def test_every_python_block_runs_and_parses(body: str, why: str | None) -> None:
    assert why is None, "every Python block runs (tests/test_install.py runs it against the installed wheel)"
    compile(body, "README.md", "exec")


@pytest.mark.parametrize(("body", "why"), _ids("sh"))
def test_a_shell_block_that_does_not_run_says_why(body: str, why: str | None) -> None:
    assert why is None or why.strip(), "a block that does not run says why"


def test_every_block_is_covered() -> None:
    kinds = {lang for lang, _, _, _ in BLOCKS}
    assert kinds <= {"python", "json", "toml", "sh", ""}, kinds  # "": sample output, shown not run
