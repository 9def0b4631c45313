"""The retry cap (validator.state.retrycap): the same blocked action stops costing judge calls."""

from __future__ import annotations

from typing import Any

from tests.conftest import POLICY
from validator import Code, Decision, Validator, ValidatorConfig
from validator.testing import FunctionJudge

USER = "Please email bob@acme.example the minutes."
GOOD = {"reason": "asked", "evidence": [{"quote": "email bob@acme.example the minutes"}]}


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
