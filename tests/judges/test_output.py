"""A judge's answer (:class:`JudgeOutput`) is checked when it is built, strictly, each problem named by its field;
a model's answer is read into one (:func:`parse_verdict`) with the same checks; a bad one never approves."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import Policy, Validator
from validator.exceptions import JudgeOutputError, UsageError
from validator.findings import IntentFinding
from validator.judges.base import MAX_USER_SENTENCE, JudgeOutput
from validator.judges.model import parse_verdict
from validator.testing import ScriptedJudge
from validator.verdict import Code, Usage

GOOD: dict[str, Any] = {"approved": True, "reasoning": "The user asked.", "confidence": "high"}


def test_a_good_answer_keeps_its_fields_and_is_a_value() -> None:
    out = JudgeOutput(
        **GOOD,
        suggested_next_step=None,
        code=Code.APPROVED,
        escalate=False,
        intent=IntentFinding(intents=("email",)),
        usage=Usage(input_tokens=3),
        quality_notes=["a note"],  # type: ignore[arg-type]  # a list is kept as a tuple
        user_sentence="email Bob",
        view="blind",
    )
    assert out.quality_notes == ("a note",) and out.code is Code.APPROVED and out.usage == Usage(input_tokens=3)
    assert out == JudgeOutput(**{**dataclasses.asdict(out), "intent": out.intent, "usage": out.usage})
    assert hash(JudgeOutput(**GOOD)) == hash(JudgeOutput(**GOOD))
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.approved = False  # type: ignore[misc]
    refused = JudgeOutput(**{**GOOD, "approved": False}, code="ACTION_NOT_REQUESTED")  # type: ignore[arg-type]
    assert refused.code is Code.ACTION_NOT_REQUESTED


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("approved", "true", "approved: must be true or false, not str"),
        ("approved", 1, "approved: must be true or false, not int"),
        ("approved", None, "approved: must be true or false, not NoneType"),
        ("reasoning", "", "reasoning: must not be empty"),
        ("reasoning", 7, "reasoning: must be a string, not int"),
        ("reasoning", "ok \ud800", "reasoning: must be text (it holds a lone surrogate)"),
        ("confidence", "certain", "confidence: must be one of 'high', 'medium', 'low', not 'certain'"),
        ("confidence", "HIGH", "confidence: must be one of"),
        ("suggested_next_step", 3, "suggested_next_step: must be a string or None, not int"),
        ("code", "NOT_A_CODE", "code: must be a Code (or a code's name) or None, not str"),
        ("escalate", "no", "escalate: must be true or false, not str"),
        ("intent", {"intents": []}, "intent: must be an IntentFinding or None, not dict"),
        ("usage", {"input_tokens": 1}, "usage: must be a Usage or None, not dict"),
        ("quality_notes", "note", "quality_notes: must be a list of strings, not str"),
        ("quality_notes", (1,), "quality_notes: must be a list of strings, not tuple"),
        ("quality_notes", ("\udfff",), "quality_notes: must be text (it holds a lone surrogate)"),
        ("user_sentence", "x" * (MAX_USER_SENTENCE + 1), f"user_sentence: must be 0 to {MAX_USER_SENTENCE} characters"),
        ("user_sentence", b"pay", "user_sentence: must be a string or None, not bytes"),
        ("view", "everything", "view: must be one of 'blind', 'shared_prefix' or None, not 'everything'"),
    ],
)
def test_each_bad_field_is_named(field: str, value: Any, problem: str) -> None:
    with pytest.raises(UsageError, match=r"^JudgeOutput: ") as exc:
        JudgeOutput(**{**GOOD, field: value})
    assert problem in str(exc.value)


def test_every_problem_is_named_at_once_and_an_unknown_field_is_a_type_error() -> None:
    with pytest.raises(UsageError) as exc:
        JudgeOutput(approved="yes", reasoning="", confidence="sure")  # type: ignore[arg-type]
    assert all(f"{name}:" in str(exc.value) for name in ("approved", "reasoning", "confidence"))
    with pytest.raises(TypeError, match="colour"):
        JudgeOutput(**GOOD, colour="red")  # type: ignore[call-arg]


def test_a_models_answer_is_read_with_the_same_checks() -> None:
    read = parse_verdict("m", {**GOOD, "confidence": " High ", "quality_notes": ["n"], "user_sentence": ""})
    assert read.confidence == "high" and read.quality_notes == ("n",) and read.user_sentence is None
    for data, problem in [
        ({**GOOD, "approved": "true"}, "verdict does not parse: approved: must be true or false, not str"),
        ({"approved": True}, "verdict lacks required fields: confidence, reasoning"),
        ({**GOOD, "reasoning": "\ud800"}, "reasoning: must be text"),
        ({**GOOD, "code": "APPROVED"}, "unknown fields: code"),
        ({**GOOD, 3: "x"}, "unknown fields: 3"),
        (["approved"], "not an object"),
    ]:
        with pytest.raises(JudgeOutputError) as exc:
            parse_verdict("m", data)
        assert problem in str(exc.value), exc.value


ANSWERS = st.fixed_dictionaries(
    {
        "approved": st.one_of(st.booleans(), st.sampled_from(["true", 1, None])),
        "reasoning": st.one_of(st.text(max_size=20), st.integers()),
        "confidence": st.sampled_from(["high", "medium", "low", "HIGH", "", 2]),
    },
    optional={
        "suggested_next_step": st.one_of(st.none(), st.text(max_size=10), st.integers()),
        "quality_notes": st.one_of(st.lists(st.text(max_size=5)), st.text(max_size=5), st.lists(st.integers())),
        "user_sentence": st.one_of(st.none(), st.text(max_size=10), st.integers()),
        "view": st.sampled_from(["blind", "shared_prefix", "all"]),
    },
)


@settings(max_examples=300, deadline=None)
@given(ANSWERS)
def test_a_models_answer_is_an_output_or_a_judge_error_never_anything_else(data: dict[str, Any]) -> None:
    try:
        out = parse_verdict("m", data)
    except JudgeOutputError:
        return
    assert type(out.approved) is bool and isinstance(out.reasoning, str) and out.reasoning
    assert out.confidence in ("high", "medium", "low") and all(isinstance(n, str) for n in out.quality_notes)


def test_a_scripted_answer_that_does_not_check_never_approves() -> None:
    policy = Policy.from_dict({"tools": {"send_email": {"risk": "general"}}})
    judge = ScriptedJudge([{**GOOD, "approved": "yes"}] * 2)
    verdict = Validator(policy, judge=judge).validate(
        [{"role": "user", "content": "Email bob@example.com the notes."}],
        {
            "tool": "send_email",
            "args": {"to": "bob@example.com", "body": "the notes"},
            "justification": {"reason": "asked", "evidence": [{"quote": "Email bob@example.com the notes."}]},
        },
    )
    assert judge.calls and not verdict.approved and verdict.code is Code.JUDGE_UNAVAILABLE, verdict.reasoning


class _Sly(str):
    """A str subclass with methods of its own: read as the text it holds."""

    def __len__(self) -> int:
        return 3

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


def test_a_str_subclass_is_read_as_the_plain_text_it_holds() -> None:
    out = JudgeOutput(approved=True, reasoning=_Sly("ok"), confidence=_Sly("high"), quality_notes=(_Sly("n"),))
    assert type(out.reasoning) is str and type(out.confidence) is str and type(out.quality_notes[0]) is str
    with pytest.raises(UsageError, match="user_sentence: must be 0 to"):
        JudgeOutput(**GOOD, user_sentence=_Sly("x" * (MAX_USER_SENTENCE + 1)))  # its own len says 3
    with pytest.raises(UsageError, match="confidence: must be one of"):
        JudgeOutput(approved=True, reasoning="r", confidence=_Sly("certain"))  # its own == says yes to anything


def test_a_deep_or_huge_value_is_named_in_few_words_never_a_crash() -> None:
    deep: list[Any] = []
    for _ in range(5_000):
        deep = [deep]
    for value in (deep, "x" * 1_000_000):
        with pytest.raises(JudgeOutputError) as exc:
            parse_verdict("m", {**GOOD, "confidence": value})
        assert len(str(exc.value)) < 400
