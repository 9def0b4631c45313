"""Every code block of the documentation (the README and the site's pages, ``tests/docs.py``) is what it says:
JSON blocks are parsed as check inputs, TOML blocks as policies; Python and shell blocks run against the
installed wheel from an empty folder (tests/test_install.py); a block that cannot run says why in an HTML
comment right above it (``<!-- not run: ... -->``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.docs import BLOCKS, PAGES
from validator import CheckInput, Policy


def _ids(kind: str) -> list[Any]:
    return [pytest.param(b.body, b.why, id=b.where) for b in BLOCKS if b.lang == kind]


@pytest.mark.parametrize(("body", "why"), _ids("json"))
def test_json_blocks_are_what_they_say(body: str, why: str | None) -> None:
    CheckInput.from_json(body)


@pytest.mark.parametrize(("body", "why"), _ids("toml"))
def test_toml_blocks_are_policies(body: str, why: str | None) -> None:
    Policy.from_toml(body)


@pytest.mark.parametrize(("body", "why"), _ids("python"))
def test_every_python_block_runs_and_parses(body: str, why: str | None) -> None:
    assert why is None, "every Python block runs (tests/test_install.py runs it against the installed wheel)"
    compile(body, "documentation", "exec")


@pytest.mark.parametrize(("body", "why"), _ids("sh"))
def test_a_shell_block_that_does_not_run_says_why(body: str, why: str | None) -> None:
    assert why is None or why.strip(), "a block that does not run says why"


def test_every_block_is_covered() -> None:
    kinds = {b.lang for b in BLOCKS}
    assert kinds <= {"python", "json", "toml", "sh", ""}, kinds  # "": sample output, shown not run


def test_the_readme_is_short_and_the_site_holds_the_rest() -> None:
    """Issue 62: what a visitor needs in at most 300 lines (what it is, the two commands, install, a quick start,
    the hosts, links, the layout); the reference is the site, whose every page the README links."""
    import re

    readme = PAGES["README.md"]
    assert readme.count("\\n") <= 300
    for name in PAGES:
        if name.startswith("docs/") and name != "docs/index.md":
            assert f"]({name})" in readme, name
    assert not re.search(r"(?i)\\bissue \\d+|attacker's pass|this batch", readme)  # no project history here


def test_the_site_builds_in_strict_mode(tmp_path: Any) -> None:
    """``mkdocs build --strict``: a broken link, a missing anchor or a page left out of the navigation fails it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
