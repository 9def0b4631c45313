"""The Claude path under real set-ups: forced tool choice, and a cap on retries."""

from __future__ import annotations

from typing import Any

import pytest

from tests.anthropic_mock import MockAPI, message, verdict_call
from tests.conftest import POLICY
from validator import Code, Decision, Validator, ValidatorConfig
from validator.devtools.doctor import diagnose
from validator.judges.anthropic import AnthropicJudge, prepare_tools, shared_request
from validator.judges.anthropic.requests import NotShareable, check_shareable
from validator.testing import FunctionJudge

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


def _blocked_times(validator: Validator, messages: list[dict[str, Any]], n: int) -> list[Code]:
    action = {"tool": "send_email", "args": {"to": "bob@acme.example"}, "justification": GOOD}
    return [validator.validate(messages, action, user_id="u-1").code for _ in range(n)]


def _refuse(request: Any) -> Any:
    return {"approved": False, "reasoning": "not asked", "confidence": "high"}


def test_the_same_blocked_action_is_capped_without_a_judge_call() -> None:
    calls = []

    def judge(request: Any) -> Any:
        calls.append(request)
        return {"approved": False, "reasoning": "not asked", "confidence": "high"}

    validator = Validator(POLICY, judge=FunctionJudge(judge))
    messages = [{"role": "user", "content": USER}]
    action = {"tool": "send_email", "args": {"to": "bob@acme.example"}, "justification": GOOD}
    codes = [validator.validate(messages, action, user_id="u-1").code for _ in range(4)]
    assert codes == [Code.JUDGE_REJECTED, Code.JUDGE_REJECTED, Code.RETRY_CAP_REACHED, Code.RETRY_CAP_REACHED]
    assert len(calls) == 2
    capped = validator.validate(messages, action, user_id="u-1")
    assert capped.decision is Decision.BLOCK and "ask the user" in (capped.suggested_next_step or "")
    # once the user speaks again, the count starts over
    again = [*messages, {"role": "assistant", "content": "Shall I?"}, {"role": "user", "content": USER + " Yes."}]
    assert validator.validate(again, action, user_id="u-1").code == Code.JUDGE_REJECTED
    # another user, or another action, has its own count
    assert validator.validate(messages, action, user_id="u-2").code == Code.JUDGE_REJECTED


def test_the_cap_is_configurable_and_counts_in_the_shared_store(redis_store: Any) -> None:
    from validator import stateful_validator
    from validator.store.redis import RedisStore

    other = RedisStore(redis_store.url, namespace=redis_store.ns)
    messages = [{"role": "user", "content": USER}]
    config = ValidatorConfig(retry_cap=3)
    first = stateful_validator(redis_store, policy=POLICY, reuse_ttl=None, config=config, judge=FunctionJudge(_refuse))
    second = stateful_validator(other, policy=POLICY, reuse_ttl=None, config=config, judge=FunctionJudge(_refuse))
    codes = _blocked_times(first, messages, 2) + _blocked_times(second, messages, 2)
    other.close()
    assert codes[:3] == [Code.JUDGE_REJECTED] * 3 and codes[3] == Code.RETRY_CAP_REACHED


def test_sharing_with_an_auto_choice_keeps_the_agents_bytes() -> None:
    from validator.judges.base import JudgeRequest

    agent = _agent({"type": "auto"})
    prepared = Validator(POLICY).prepare(
        None, {"tool": "send_email", "args": {"to": "bob@acme.example"}, "justification": GOOD}, agent_request=agent
    )
    assert isinstance(prepared, JudgeRequest)
    body = shared_request(agent, prepared, validator_name="validate_action", search_name="tool_search", quality=True)
    assert diagnose(agent, body).extends
