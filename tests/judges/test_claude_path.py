"""The Claude path under real set-ups: a forced or disabled tool choice, an auto one shared."""

from __future__ import annotations

from typing import Any

import pytest

from tests.anthropic_mock import MockAPI, message, verdict_call
from tests.conftest import POLICY
from validator import Validator
from validator.devtools.doctor import diagnose
from validator.judges.anthropic import AnthropicJudge, prepare_tools, shared_request
from validator.judges.anthropic.requests import NotShareable, check_shareable

USER = "Please email bob@acme.example the minutes."
GOOD = {"reason": "asked", "evidence": [{"quote": "email bob@acme.example the minutes"}]}
TOOLS = prepare_tools([{"name": "send_email", "input_schema": {"type": "object"}}], policy=POLICY)


def _agent(tool_choice: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": USER, "cache_control": {"type": "ephemeral"}}]}
        ],
    }
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    return body


@pytest.mark.parametrize(
    "choice", [{"type": "any"}, {"type": "tool", "name": "send_email"}, {"type": "none"}], ids=["any", "tool", "none"]
)
def test_a_forced_or_disabled_tool_choice_goes_standalone_and_says_why(choice: dict[str, Any]) -> None:
    agent = _agent(choice)
    with pytest.raises(NotShareable, match="tool_choice"):
        check_shareable(agent, validator_name="validate_action", search_name="tool_search")
    api = MockAPI([message([verdict_call()])])
    verdict = Validator(POLICY, judge=AnthropicJudge(client=api.client())).validate(
        None, {"tool": "send_email", "args": {"to": "bob@acme.example"}, "justification": GOOD}, agent_request=agent
    )
    assert verdict.approved, verdict.reasoning  # never a stream of JUDGE_UNAVAILABLE
    assert verdict.usage is not None and verdict.usage.cache is not None
    assert verdict.usage.cache.startswith("not shared") and "tool_choice" in verdict.usage.cache
    (body,) = api.bodies
    assert body.get("tool_choice") == {"type": "auto"} and body["tools"][-1]["name"] == "validate_action"
    assert any("tool_choice" in note for note in diagnose(agent, body).notes)


def test_an_auto_tool_choice_is_shared() -> None:
    agent = _agent({"type": "auto"})
    check_shareable(agent, validator_name="validate_action", search_name="tool_search")


def test_sharing_with_an_auto_choice_keeps_the_agents_bytes() -> None:
    from validator.judges.base import JudgeRequest

    agent = _agent({"type": "auto"})
    prepared = Validator(POLICY).prepare(
        None, {"tool": "send_email", "args": {"to": "bob@acme.example"}, "justification": GOOD}, agent_request=agent
    )
    assert isinstance(prepared, JudgeRequest)
    body = shared_request(agent, prepared, validator_name="validate_action", search_name="tool_search", quality=True)
    assert diagnose(agent, body).extends
