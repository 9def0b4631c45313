"""The public surface: exports, exceptions, schemas, prompts and the built wheel."""

from __future__ import annotations

import inspect
import json
import math
import pickle
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import validator
from validator import examples, exceptions
from validator.findings import Findings
from validator.schemas import SCHEMAS, schema, schema_json
from validator.verdict import Code, Decision, Usage, plain_data, verdict_adapter

ROOT = Path(__file__).resolve().parent.parent


def test_all_is_sorted_and_complete() -> None:
    assert validator.__all__ == sorted(validator.__all__, key=str.casefold)
    public = {n for n in dir(validator) if not n.startswith("_")} - {"__version__"}
    modules = {n for n in public if inspect.ismodule(getattr(validator, n))}
    assert set(validator.__all__) == public - modules


def test_every_exception_is_exported_and_pickles() -> None:
    classes = [c for c in vars(exceptions).values() if inspect.isclass(c) and issubclass(c, exceptions.ValidatorError)]
    for cls in classes:
        assert cls.__name__ in validator.__all__
    samples = [
        exceptions.InputError([exceptions.FieldProblem("a.b", "bad")]),
        exceptions.PolicyError([exceptions.FieldProblem("tools.x", "bad")], source="p.toml"),
        exceptions.PackError([exceptions.FieldProblem("roles.adjuncts", "the table is missing")]),
        exceptions.JudgeError("strict", "boom"),
        exceptions.JudgeTimeout("strict", 1.5),
        exceptions.JudgeOutputError("strict", "unparseable"),
        exceptions.JudgeServiceError("anthropic", "odd", None),
        exceptions.JudgeTransportError("anthropic", "overloaded", 529),
        exceptions.JudgeRequestRejected("anthropic", "bad request", 400),
        exceptions.StoreError("down"),
        exceptions.StoreBusy("busy"),
        exceptions.SetupError("no key"),
        exceptions.UsageError("misuse"),
    ]
    assert {type(s) for s in samples} == set(classes) - {exceptions.ValidatorError}
    # the one signal: not an error, but it pickles and is exported too
    signal = exceptions.ActionBlocked(validator.validate([{"role": "user", "content": "hi"}], {"tool": "x"}))
    assert not isinstance(signal, exceptions.ValidatorError) and "ActionBlocked" in validator.__all__
    samples.append(signal)
    for s in samples:
        again = pickle.loads(pickle.dumps(s))
        assert type(again) is type(s) and str(again) == str(s)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_committed_schemas_match_the_models(name: str) -> None:
    assert (ROOT / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8") == schema_json(name)


@pytest.mark.parametrize("example", [examples.check_path(n) for n in examples.names()], ids=lambda p: p.stem)
def test_examples_and_their_verdicts_follow_the_schemas(example: Path) -> None:
    data = json.loads(example.read_text())
    jsonschema.validate(data, schema("check-input"))
    verdict = validator.check(data, policy=validator.Policy.load(examples.policy_path()))
    jsonschema.validate(verdict.to_dict(), schema("verdict"))
    assert validator.Verdict.from_dict(verdict.to_dict()) == verdict


_VERDICT_FIELDS = st.fixed_dictionaries(
    {
        "findings": st.from_type(Findings),
        "reasoning": st.text(max_size=20),
        "tool": st.text(max_size=10),
        "latency_ms": st.floats(allow_nan=True, allow_infinity=True),
        "usage": st.none() | st.from_type(Usage),
        "judge_errors": st.lists(st.text(max_size=5), max_size=2).map(tuple),
        "quality_notes": st.lists(st.text(max_size=5), max_size=2).map(tuple),
        "shadow_of": st.none() | st.sampled_from(list(Code)),
    }
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    _VERDICT_FIELDS,
    st.sampled_from(
        [
            (Decision.APPROVE, Code.APPROVED),
            (Decision.BLOCK, Code.EVIDENCE_NOT_FOUND),
            (Decision.ASK_USER, Code.ACTION_NOT_REQUESTED),
        ]
    ),
)
def test_a_verdicts_data_is_what_its_pydantic_adapter_dumps(
    fields: dict[str, Any], decided: tuple[Decision, Code]
) -> None:
    """A process without pydantic (a one-shot check) writes a verdict without it (``plain_data``); the adapter stays
    the schema's home and writes it where pydantic is imported: the two agree on every verdict, lone surrogates,
    non-finite numbers and tuples included."""
    decision, code = decided
    verdict = validator.Verdict(
        approved=decision is Decision.APPROVE, decision=decision, code=code, confidence="high", risk="general", **fields
    )
    assert json.dumps(plain_data(verdict)) == json.dumps(verdict_adapter().dump_python(verdict, mode="json"))
    assert verdict.to_dict() == verdict_adapter().dump_python(verdict, mode="json") or math.isnan(verdict.latency_ms)


class _Text(str):
    pass


@pytest.mark.parametrize(
    "changed",
    [
        {"reasoning": _Text("a host's own text type")},
        {"latency_ms": __import__("uuid").UUID(int=7)},
        {"judge_errors": (b"bytes",)},
        {"quality_notes": (__import__("datetime").datetime(2026, 12, 7),)},
    ],
)
def test_a_verdict_holding_other_values_is_written_by_the_adapter_as_before(changed: dict[str, Any]) -> None:
    """msgspec writes some values otherwise than pydantic (bytes as base64), or not at all (a str subclass): a
    verdict holding any value but plain text, numbers, booleans and None is written by the adapter, never a crash."""
    import dataclasses

    verdict = dataclasses.replace(validator.Verdict.blocked("t", "r", code=Code.EVIDENCE_NOT_FOUND), **changed)
    assert plain_data(verdict) is None
    with warnings.catch_warnings():  # pydantic warns of a value its field's type does not say, as it always did
        warnings.simplefilter("ignore")
        assert json.dumps(verdict.to_dict()) == json.dumps(verdict_adapter().dump_python(verdict, mode="json"))


def test_prompts_load() -> None:
    assert "Another AI reads this" in validator.load_prompt("justification")
    assert "ONLY THE USER CAN AUTHORIZE" in validator.load_prompt("validator")
    with pytest.raises(validator.UsageError, match="no prompt named 'nope'"):
        validator.load_prompt("nope")


def test_prompts_load_without_importlib_resources() -> None:
    """The prompts' folder is found beside the module (the one-shot hook reads the justification's prompt in each
    call: :mod:`importlib.resources` would bring :mod:`tempfile` and the compressors)."""
    code = (
        "import sys; from validator.prompts import load_prompt, prompt_names; "
        "print(len(load_prompt('justification')) > 0, 'validator' in prompt_names(), "
        "'importlib.resources' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.split() == ["True", "True", "False"]


def _build_wheel(folder: Path) -> Path:
    """The project's wheel, built into ``folder`` from a copy of the sources (setuptools writes a
    ``build/`` folder beside them: never in the checkout)."""
    import shutil

    source = folder / "src"
    skip = shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis")
    shutil.copytree(ROOT, source, ignore=skip)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(folder)]
    subprocess.run([*command, str(source)], check=True, capture_output=True)
    (wheel,) = folder.glob("*.whl")
    return wheel


def test_wheel_ships_packages_and_prompts(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "validator/_prompts/justification.md",
        "validator/_prompts/validator.md",
        "validator/engine/pipeline.py",
        "validator/integrations/langchain.py",
        "validator/integrations/_host.py",
    } <= names
    # every module of the tree is in the wheel (a package missing from pyproject's list is not)
    tree = {f"validator/{p.relative_to(ROOT / 'validator').as_posix()}" for p in (ROOT / "validator").rglob("*.py")}
    for folder in ("integrations", "evals"):  # the top-level folders the package maps
        tree |= {f"validator/{folder}/{p.relative_to(ROOT / folder).as_posix()}" for p in (ROOT / folder).rglob("*.py")}
    assert "validator/evals/suite/cases.jsonl" in names
    # the language pack's data, the grammar compiled ahead and the tables read ahead among it (a wheel without them
    # compiles the grammar and reads the TOML in every process)
    for data in ("english.toml", "english.lark", "english_verbs.txt", "english_grammar.json", "english_toml.json"):
        assert f"validator/language/{data}" in names
    assert {n for n in tree if "__pycache__" not in n} - names == set()
    # one import namespace: nothing but validator (and its metadata) goes into site-packages
    assert {n.split("/")[0] for n in names} - {"validator"} == {n.split("/")[0] for n in names if ".dist-info/" in n}


_PROBE = (
    "import importlib.util, validator.integrations._host as h, validator.integrations.langgraph; "
    "print(h.__file__); print(importlib.util.find_spec('integrations'))"
)


def _probe(cwd: Path, env: dict[str, str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return done.stdout.split("\n")


def _installed_wheel(tmp_path: Path) -> Path:
    """The project's wheel, installed (without its dependencies) into a folder of its own."""
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(_build_wheel(tmp_path))],
        check=True,
        capture_output=True,
    )
    return site


def test_wheel_and_editable_install_import_integrations_the_same_way(tmp_path: Path) -> None:
    import os

    site = _installed_wheel(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # the wheel: validator.integrations from site-packages, no top-level `integrations`
    from_wheel = _probe(tmp_path, {**env, "PYTHONPATH": str(site)})
    assert from_wheel[0] == str(site / "validator" / "integrations" / "_host.py")
    assert from_wheel[1] == "None"
    # the editable install of `make test`: the same names, mapped to the repository's integrations/
    editable = _probe(tmp_path, env)
    assert editable[0] == str(ROOT / "integrations" / "_host.py")
    assert editable[1] == "None"


_BLOCKED_EXTRAS = """
import importlib.abc, runpy, sys
EXTRAS = ("anthropic", "langchain", "langchain_core", "langgraph", "langchain_anthropic", "claude_agent_sdk",
          "google", "pydantic_ai", "agents", "fastapi", "uvicorn", "redis", "matplotlib", "lemminflect")
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in EXTRAS:
            raise ImportError(f"{name} is not part of the base install")
        return None
sys.meta_path.insert(0, Block())
sys.argv = ["validator", *sys.argv[1:]]
runpy.run_module("validator", run_name="__main__")
"""


def test_the_claude_code_hook_runs_from_the_wheel_with_the_base_install_only(tmp_path: Path) -> None:
    """``validator hook claude-code < input.json`` from a plain install: no extra is imported."""
    import json
    import os

    site = _installed_wheel(tmp_path)
    transcript = tmp_path / "session.jsonl"
    call = {"type": "tool_use", "id": "toolu_1", "name": "mcp__mail__send_email", "input": {"to": "bob@acme.example"}}
    lines = [
        {"type": "user", "message": {"role": "user", "content": "Email bob@acme.example the notes."}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [call]}},
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    hook_input = {
        "session_id": "s1",
        "transcript_path": str(transcript),
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "mcp__mail__send_email",
        "tool_input": {"to": "bob@acme.example"},
        "tool_use_id": "toolu_1",
    }
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CLAUDE_PROJECT_DIR")}
    env.update(PYTHONPATH=str(site), HOME=str(tmp_path))
    argv = [
        sys.executable,
        "-c",
        _BLOCKED_EXTRAS,
        "hook",
        "claude-code",
        "--policy",
        str(examples.policy_path()),
    ]
    done = subprocess.run(argv, input=json.dumps(hook_input), env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow", answer
    assert "no justification (the host cannot carry one)" in answer["permissionDecisionReason"].lower()


def test_every_folder_that_ships_files_is_a_listed_package() -> None:
    """setuptools warns ("Package '…' is absent from the packages configuration", 30 lines of it on every
    install) for a folder it ships files from that ``packages`` does not list: every such folder is listed."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(config["packages"])
    mapped = {"validator": ROOT / "validator", **{k: ROOT / v for k, v in config["package-dir"].items()}}
    for package, folder in mapped.items():
        for sub in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
            if "__pycache__" in sub.parts or not any(f.is_file() for f in sub.iterdir()):
                continue
            name = ".".join([package, *sub.relative_to(folder).parts])
            assert name in listed, (
                f"{sub.relative_to(ROOT)} ships files but {name} is not in [tool.setuptools] packages"
            )
