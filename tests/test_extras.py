"""Each extra: the table that names it agrees with pyproject.toml, and without it an import or a command
says in one line which extra to install (never a bare traceback)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from validator.extras import EXTRAS, extra_for, install_hint

ROOT = Path(__file__).resolve().parent.parent
BLOCKED = """
import importlib.abc, runpy, sys
BLOCK = {blocked!r}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCK:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name.split(".")[0])
        return None
sys.meta_path.insert(0, Block())
"""


def test_the_table_names_every_extra_of_pyproject() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS) == set(declared) - {"dev"}
    assert extra_for("langgraph.prebuilt") == "langchain" and extra_for("json") is None


MODULES = [
    ("validator.integrations.langchain", "langchain"),
    ("validator.integrations.langgraph", "langchain"),
    ("validator.integrations.middleware", "langchain"),
    ("validator.integrations.testing", "langchain"),
    ("validator.integrations.claude", "langchain"),
    ("validator.integrations.pydantic_ai", "pydantic-ai"),
    ("validator.integrations.openai_agents", "openai-agents"),
    ("validator.integrations.claude_agent_sdk", "claude-agent-sdk"),
    ("validator.integrations.google_adk", "google-adk"),
    ("validator.integrations.crewai", "crewai"),
    ("validator.integrations.service.app", "service"),
    ("validator.judges.anthropic.judge", "anthropic"),
    ("validator.store.redis", "redis"),
]


@pytest.mark.parametrize(("module", "extra"), MODULES)
def test_an_import_without_its_extra_names_the_extra(module: str, extra: str) -> None:
    blocked = EXTRAS[extra]
    code = BLOCKED.format(blocked=blocked) + f"import {module}\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: ") and install_hint(extra) in last, last


ALL = sorted({m for modules in EXTRAS.values() for m in modules})
COMMANDS = [
    (["serve"], "service"),
    (["token", "list", "--store", "redis://127.0.0.1:1/0"], "service"),
    (["eval", "--report", "REPORT", "--no-progress"], "report"),
    (["doctor", "--live", "--emulate"], "anthropic"),
    (["check", "--example", "vendor_invoice", "--judge", "anthropic", "--model", "m"], "anthropic"),
    (["check", "--example", "vendor_invoice", "--store", "redis://127.0.0.1:1/0"], "redis"),
]


@pytest.mark.parametrize(("args", "extra"), COMMANDS, ids=lambda a: " ".join(a) if isinstance(a, list) else a)
def test_a_command_without_its_extra_says_so_in_one_line(args: list[str], extra: str, tmp_path: Path) -> None:
    args = [str(tmp_path / "report") if a == "REPORT" else a for a in args]
    code = (
        BLOCKED.format(blocked=ALL)
        + "sys.argv = ['validator', *sys.argv[1:]]\nimport runpy\nrunpy.run_module('validator', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and install_hint(extra) in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2, done.stderr  # the line (and the source it came from)
