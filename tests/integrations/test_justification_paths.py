"""One way to add the justification: every path takes the policy, adds the parameter to guarded tools only,
with the same schema and the guidance in the parameter's description, never in the tool's (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, tool
from typer.testing import CliRunner
from validator.integrations._host import justification_description
from validator.integrations.langchain import justified_tool
from validator.integrations.langgraph import justified_tools
from validator.integrations.tools import guarded

from validator import Policy, ToolPolicy, Validator
from validator.cli import app
from validator.judges.anthropic import prepare_tools

POLICY = Policy({"send_email": ToolPolicy(targets=("to",)), "read_inbox": ToolPolicy(exempt=True)})
GUIDANCE = justification_description()


def send_email(to: str, body: str = "") -> str:
    """Send an email."""
    return to


def read_inbox() -> str:
    """Read the inbox."""
    return ""


def _facing(t: BaseTool) -> dict[str, Any]:
    schema = t.tool_call_schema
    assert isinstance(schema, type)
    return schema.model_json_schema()  # type: ignore[no-any-return]


def _justification(schema: dict[str, Any]) -> dict[str, Any] | None:
    props = schema.get("properties", {})
    if "justification" not in props:
        return None
    assert "justification" in schema.get("required", [])
    return props["justification"]  # type: ignore[no-any-return]


def test_every_path_adds_the_same_parameter_to_guarded_tools_only(tmp_path: Path) -> None:
    send, read = tool(send_email), tool(read_inbox)
    validator = Validator(POLICY)
    langchain_paths = {
        "middleware": [justified_tool(send), read],  # the middleware binds justified_tool to guarded tools only
        "node": justified_tools([send, read], POLICY),
        "decorator (tool)": [guarded(send, validator=validator), guarded(read, validator=validator)],
        "decorator (function)": [
            tool(guarded(send_email, validator=validator)),
            tool(guarded(read_inbox, validator=validator)),
        ],
    }
    for path, (g, e) in langchain_paths.items():
        field = _justification(_facing(g))
        assert field is not None and field["description"] == GUIDANCE, path
        assert _justification(_facing(e)) is None, path
        assert g.description == "Send an email." and "justification" not in g.description, path
    anthropic_tools = [
        {"name": "send_email", "description": "Send an email.", "input_schema": {"type": "object", "properties": {}}},
        {"name": "read_inbox", "description": "Read the inbox.", "input_schema": {"type": "object", "properties": {}}},
    ]
    prepared = {t["name"]: t for t in prepare_tools(anthropic_tools, policy=POLICY)}
    field = _justification(prepared["send_email"]["input_schema"])
    assert field is not None and field["description"] == GUIDANCE
    assert _justification(prepared["read_inbox"]["input_schema"]) is None
    assert prepared["send_email"]["description"] == "Send an email."
    (tmp_path / "tools.json").write_text(json.dumps(anthropic_tools))
    (tmp_path / "policy.json").write_text(json.dumps(POLICY.to_dict()))
    runner = CliRunner()
    out = runner.invoke(app, ["prepare-tools", str(tmp_path / "tools.json"), "--policy", str(tmp_path / "policy.json")])
    assert out.exit_code == 0, out.stderr
    assert {t["name"]: t for t in json.loads(out.stdout)} == prepared
    missing = runner.invoke(app, ["prepare-tools", str(tmp_path / "tools.json")])
    assert missing.exit_code == 2 and "--policy" in missing.stderr and "every guarded call is refused" in missing.stderr
