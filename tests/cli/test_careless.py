"""Careless input gets one clear line: an empty file, a misspelt policy key, a policy that names no tool, a
folder that is not there, a tool the policy does not name, ``-V``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from validator import CheckInput, InputError, Policy, Validator, __version__
from validator.cli import app
from validator.inputs.checkinput import EMPTY
from validator.policy.lint import lint

runner = CliRunner()


@pytest.mark.parametrize("content", ["", "  \n\t", "\n"])
def test_an_empty_input_says_it_is_empty(tmp_path: Path, content: str) -> None:
    path = tmp_path / "check.json"
    path.write_text(content)
    result = runner.invoke(app, ["check", str(path)])
    assert result.exit_code == 2 and "the input is empty" in result.output and "Expecting value" not in result.output
    with pytest.raises(InputError) as caught:
        CheckInput.from_json(content)
    assert caught.value.problems[0].problem == EMPTY


def test_a_misspelt_policy_key_is_told_the_one_it_meant(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text('[tools.send_email]\ntarget = ["to"]\n[setings]\nenforce = true\n[tools.pay]\nrisk = "dangerous"\n')
    result = runner.invoke(app, ["policy", "check", str(path)])
    assert result.exit_code == 2
    assert "tools.send_email.target: unknown field; did you mean 'targets'?" in result.output
    assert "setings: unknown field; did you mean 'settings'?" in result.output


def test_a_policy_naming_no_tool_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text("")
    result = runner.invoke(app, ["policy", "check", str(path)])
    assert result.exit_code == 0 and "warning:" in result.output and "names no tools" in result.output
    assert next(str(w) for w in lint(Policy())).startswith("tools: the policy names no tools")


def test_init_refuses_a_folder_that_is_not_there(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    result = runner.invoke(app, ["init", str(missing)])
    assert result.exit_code == 2 and "does not exist" in result.output and not missing.exists()
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    result = runner.invoke(app, ["init", str(a_file)])
    assert result.exit_code == 2 and "is not a folder" in result.output
    assert runner.invoke(app, ["init", str(tmp_path)]).exit_code == 0 and (tmp_path / "policy.toml").exists()


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_the_version_flag(flag: str) -> None:
    result = runner.invoke(app, [flag])
    assert result.exit_code == 0 and result.output.strip() == f"action-validator {__version__}"


def _fax(tool: str) -> dict[str, object]:
    return {
        "messages": [{"role": "user", "content": "Please fax the signed contract to +49 30 1234 5678."}],
        "action": {
            "tool": tool,
            "args": {"number": "+49 30 1234 5678"},
            "justification": {
                "reason": "asked",
                "evidence": [{"quote": "fax the signed contract to +49 30 1234 5678"}],
            },
        },
        "user_id": "u",
    }


def test_a_tool_the_policy_does_not_name_is_named_in_the_reasoning() -> None:
    unnamed = Validator(Policy.from_dict({"tools": {"send_email": {}}})).check(json.dumps(_fax("send_fax")))
    assert not unnamed.approved and "`send_fax` is not in the policy" in unnamed.reasoning
    assert "[tools.send_fax]" in unnamed.reasoning
    named = Validator(Policy.from_dict({"tools": {"send_fax": {"intents": ["send"]}}})).check(
        json.dumps(_fax("send_fax"))
    )
    assert "is not in the policy" not in named.reasoning


@pytest.mark.parametrize("group", [[], ["policy"], ["auth"], ["audit"], ["store"], ["eval"], ["token"], ["hook"]])
def test_help_lists_each_command_whole(group: list[str]) -> None:
    """No command's description is cut with "..." in a listing (only the usage line's ``[ARGS]...``)."""
    result = runner.invoke(app, [*group, "--help"], terminal_width=80)
    assert result.exit_code == 0
    cut = [line for line in result.output.splitlines() if line.rstrip().endswith("...") and "[ARGS]" not in line]
    assert cut == [], cut


def test_a_value_is_never_broken_inside_a_word_in_the_verdict_table() -> None:
    from rich.console import Console

    from validator.cli.checkrun import render

    iban = "DE89370400440532013000"
    data = {
        "messages": [{"role": "user", "content": f"Please pay {iban} 50 EUR for the invoice."}],
        "action": {
            "tool": "send_money",
            "args": {"recipient": iban, "amount": 50, "currency": "EUR"},
            "justification": {"reason": "asked", "evidence": [{"quote": f"pay {iban} 50 EUR"}]},
        },
        "user_id": "u",
    }
    policy = Policy.from_dict({"tools": {"send_money": {"risk": "dangerous", "targets": ["recipient"]}}})
    verdict = Validator(policy).check(json.dumps(data))
    for width in (60, 80):
        console = Console(width=width, record=True, highlight=False)
        render(verdict, console)
        table = console.export_text().split("where the values came from")[1]
        assert iban in table, table


def test_print_input_writes_an_example_without_its_policy() -> None:
    """``--print-input`` gives the service's quick start an input it accepts (it refuses one carrying a policy)."""
    from validator import examples

    for name in examples.names():
        result = runner.invoke(app, ["check", "--example", name, "--print-input"])
        assert result.exit_code == 0, result.output
        printed = json.loads(result.output)
        assert "policy" not in printed and CheckInput.from_json(result.output).policy is None
    refused = runner.invoke(app, ["check", "--print-input"])
    assert refused.exit_code == 2 and "--print-input: give --example NAME" in refused.output
