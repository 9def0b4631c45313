from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.anthropic_mock import MockAPI, message, verdict_call
from tests.judges.test_anthropic import ACTION, AGENT_REQUEST, POLICY
from validator.cli import app
from validator.devtools.doctor import diagnose, first_difference

runner = CliRunner()
LONG = "word " * 8000  # about 10,000 tokens by the estimator: above every model's minimum


def _agent() -> dict[str, Any]:
    agent = copy.deepcopy(AGENT_REQUEST)
    agent["system"][0]["text"] = "You are an email assistant. " + LONG
    return agent


def _validator_request(agent: dict[str, Any]) -> dict[str, Any]:
    from validator import Validator
    from validator.judges.anthropic import AnthropicJudge

    api = MockAPI([message([verdict_call()])])
    Validator(POLICY, judge=AnthropicJudge(client=api.client())).validate(None, ACTION, agent_request=agent)
    return api.bodies[0]


def test_the_judges_own_request_extends_the_agents() -> None:
    agent = _agent()
    report = diagnose(agent, _validator_request(agent))
    assert report.extends and report.difference is None
    assert [str(b) for b in report.agent_breakpoints] == ["system[0] (5m)", "messages[2].content[0] (5m)"]
    assert [str(b) for b in report.validator_breakpoints][-1] == "messages[4].content[0] (5m)"
    assert report.cached_tokens > 10_000 and report.cached_share > 0.8
    assert "yes" in report.render().splitlines()[0]


def test_first_difference_names_field_block_and_key() -> None:
    agent = _agent()
    validator = _validator_request(agent)
    changed = copy.deepcopy(validator)
    changed["tools"][0]["description"] = "Send an e-mail."
    report = diagnose(agent, changed)
    assert not report.extends and report.difference is not None
    assert report.difference.startswith("tools[0].description: agent")
    assert report.cached_tokens == 0
    changed = copy.deepcopy(validator)
    changed["messages"][1]["content"][0]["text"] = "Reading!"
    assert (
        diagnose(agent, changed).difference == 'messages[1].content[0].text: agent "Reading." vs validator "Reading!"'
    )
    changed = copy.deepcopy(validator)
    changed["tool_choice"] = {"type": "any"}
    assert diagnose(agent, changed).difference.startswith("tool_choice.type")  # type: ignore[union-attr]
    changed = copy.deepcopy(validator)
    changed["thinking"] = {"type": "adaptive"}
    assert diagnose(agent, changed).difference == "thinking: only the validator request sets it"


def test_key_order_counts() -> None:
    assert (
        first_difference({"a": 1, "b": 2}, {"b": 2, "a": 1}, "x")
        == "x: keys differ or are in another order ('a' vs 'b')"
    )


def test_notes_explain_uncacheable_prefixes() -> None:
    short = copy.deepcopy(AGENT_REQUEST)
    report = diagnose(short, _validator_request(short))
    assert report.extends and report.cached_tokens == 0
    assert any("minimum" in n for n in report.notes)
    bare = _agent()
    bare["system"] = bare["system"][0]["text"]
    bare["messages"][2]["content"][0].pop("cache_control")
    report = diagnose(bare, _validator_request(bare))
    assert report.cached_tokens == 0 and any("no cache breakpoint" in n for n in report.notes)


def test_doctor_cli(tmp_path: Path) -> None:
    agent = _agent()
    validator = _validator_request(agent)
    (tmp_path / "a.json").write_text(json.dumps(agent))
    (tmp_path / "v.json").write_text(json.dumps(validator))
    result = runner.invoke(app, ["doctor", str(tmp_path / "a.json"), str(tmp_path / "v.json")])
    assert result.exit_code == 0 and "byte for byte: yes" in result.stdout
    validator["system"] = "changed"
    (tmp_path / "pair.json").write_text(json.dumps({"agent": agent, "validator": validator}))
    result = runner.invoke(app, ["doctor", "--pair", str(tmp_path / "pair.json"), "--json"])
    assert result.exit_code == 1 and json.loads(result.stdout)["difference"].startswith("system")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 2 and "--pair" in result.stderr


def test_prepare_tools_cli(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "send_email", "input_schema": {"type": "object"}}]))
    (tmp_path / "policy.toml").write_text('[tools.send_email]\ntargets = ["to"]\n')
    policy = ["--policy", str(tmp_path / "policy.toml")]
    result = runner.invoke(app, ["prepare-tools", str(tmp_path / "tools.json"), *policy])
    assert result.exit_code == 0
    assert [t["name"] for t in json.loads(result.stdout)] == ["send_email", "validate_action", "tool_search"]
    (tmp_path / "bad.json").write_text(json.dumps({"name": "x"}))
    result = runner.invoke(app, ["prepare-tools", str(tmp_path / "bad.json"), *policy])
    assert result.exit_code == 2 and "must be a JSON list" in result.stderr
    (tmp_path / "clash.json").write_text(json.dumps([{"name": "tool_search"}]))
    result = runner.invoke(app, ["prepare-tools", str(tmp_path / "clash.json"), *policy])
    assert result.exit_code == 2 and "which the validator needs" in result.stderr


def test_markers_alone_do_not_break_the_prefix_but_are_noted() -> None:
    agent = _agent()
    validator = _validator_request(agent)
    moved = copy.deepcopy(validator)
    moved["messages"][2]["content"][0].pop("cache_control")  # the agent's marker, dropped
    report = diagnose(agent, moved)
    assert report.extends and report.difference is None
    assert any(n.startswith("only cache markers differ (messages[2].content[0]") for n in report.notes), report.notes


def test_doctor_names_malformed_requests(tmp_path: Path) -> None:
    agent = _agent()
    for broken, field in [
        ({**agent, "messages": "hi"}, "agent.messages: must be a list of messages, got str"),
        ({**agent, "messages": [1]}, "agent.messages[0]: must be an object, got int"),
        ({**agent, "tools": {"name": "x"}}, "agent.tools: must be a list of objects"),
        ({**agent, "messages": [{"role": "user"}]}, "agent.messages[0].content: must be a string or a list"),
    ]:
        (tmp_path / "pair.json").write_text(json.dumps({"agent": broken, "validator": agent}))
        result = runner.invoke(app, ["doctor", "--pair", str(tmp_path / "pair.json")])
        assert result.exit_code == 2 and field in " ".join(result.stderr.split()), result.stderr


def test_a_marker_nested_in_a_tool_result_is_read_as_the_agents_breakpoint() -> None:
    agent = _agent()
    result = agent["messages"][2]["content"][0]
    del result["cache_control"]
    result["content"] = [{"type": "text", "text": "Minutes: all good.", "cache_control": {"type": "ephemeral"}}]
    report = diagnose(agent, _validator_request(agent))
    assert report.extends and report.cached_tokens > 10_000
    assert not any("not on its last block" in n for n in report.notes), report.notes


def test_doctor_live_runs_the_same_code_offline_against_the_emulator() -> None:
    from typer.testing import CliRunner

    from validator.cli import app

    result = CliRunner().invoke(app, ["doctor", "--live", "--emulate", "--turns", "2", "--model", "claude-sonnet-4-6"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("validator doctor --live: claude-sonnet-4-6, 2 checks, against the caching emulator")
    assert "read" in lines[1] and "written" in lines[1] and "tool loaded by reference" in lines[1]
    rows = [line.split() for line in lines[2:4]]
    assert [r[0] for r in rows] == ["1", "2"] and all(r[1] == "APPROVED" and r[2] == "shared" for r in rows)
    assert all(int(r[3].replace(",", "")) > 0 and r[-1] == "yes" for r in rows)  # read from cache; tool loaded
    ratio = float(lines[4].rsplit(" ", 1)[1])
    assert 0 < ratio < 1


def test_doctor_live_without_a_key_is_a_setup_error(monkeypatch: Any) -> None:
    from typer.testing import CliRunner

    from validator.cli import app

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = CliRunner().invoke(app, ["doctor", "--live"])
    assert result.exit_code == 2 and "ANTHROPIC_API_KEY" in result.stderr
