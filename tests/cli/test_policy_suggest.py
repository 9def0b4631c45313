"""``validator policy suggest``: proposals for the author, never read by the gate."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from validator import Policy
from validator.cli import app
from validator.language.lexicon import suggest_intents


def test_it_proposes_verbs_from_the_name_and_description_of_each_tool_without_intents(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[tools.lockDoors]\ndescription = "Locks or unlocks the doors of the vehicle."\n'
        '[tools.send_money]\nrisk = "dangerous"\n[tools.send_email]\nintents = ["send"]\n'
        "[tools.read_inbox]\nexempt = true\n"
    )
    result = CliRunner().invoke(app, ["policy", "suggest", str(policy)])
    assert result.exit_code == 0, result.output
    assert '[tools.lockDoors]\nintents = ["lock", "unlock"]' in result.output
    assert "[tools.send_money]" in result.output and '"pay"' in result.output
    assert "send_email" not in result.output and "read_inbox" not in result.output  # declared, exempt
    assert Policy.load(policy).for_tool("lockDoors").intents == ()  # the file is not touched


def test_a_payment_tool_is_proposed_no_verb_of_its_name_alone() -> None:
    assert "send" not in suggest_intents("send_money")  # "send" alone never asks for money to leave
    assert suggest_intents("frobnicate_widget") == ("frobnicate",)


def test_a_bad_policy_file_is_a_typed_error(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[tools.x]\nrisk = "deadly"\n')
    result = CliRunner().invoke(app, ["policy", "suggest", str(policy)])
    assert result.exit_code != 0 and "risk" in result.output


def test_an_mcp_tools_verb_is_its_own_names_never_the_namespaces() -> None:
    from validator.language.lexicon import default_intents, own_name

    assert own_name("mcp__github__get_issue") == "get_issue" and own_name("send_email") == "send_email"
    assert default_intents("mcp__github__get_issue") == ("get",)  # never "mcp"
    assert "mcp" not in suggest_intents("mcp__github__create_pull_request")
    assert "github" not in suggest_intents("mcp__github__create_pull_request")
    assert "pay" in default_intents("mcp__payments__create")  # the families still read the whole name: stricter
