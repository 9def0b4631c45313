from __future__ import annotations

from typing import Any

import pytest

from validator import AuthorizationEvidence, QuoteEvidence, parse_justification
from validator.inputs.checkinput import pending_action


def test_well_formed_justification() -> None:
    j, problems = parse_justification({"reason": "r", "evidence": [{"quote": "q"}, {"authorization_id": " auth_1 "}]})
    assert problems == []
    assert j is not None
    assert j.evidence == (QuoteEvidence("q"), AuthorizationEvidence("auth_1"))


def test_justification_as_json_string_is_accepted() -> None:
    j, problems = parse_justification('{"reason": "r", "evidence": []}')
    assert problems == [] and j is not None and j.evidence == ()


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (None, "justification is missing"),
        ("because the user said so", "justification is plain text"),
        (["x"], "justification must be an object, got list"),
        ({"evidence": []}, "justification.reason is missing or empty"),
        ({"reason": "  ", "evidence": []}, "justification.reason is missing or empty"),
        ({"reason": "r"}, "justification.evidence is missing"),
        ({"reason": "r", "evidence": "q"}, "justification.evidence is missing"),
        ({"reason": "r", "evidence": [{"quote": ""}]}, "justification.evidence[0].quote must be a non-empty string"),
        ({"reason": "r", "evidence": [{"quote": 3}]}, "justification.evidence[0].quote must be a non-empty string"),
        ({"reason": "r", "evidence": [{"quote": "a", "authorization_id": "b"}]}, "exactly one key"),
        ({"reason": "r", "evidence": [{"url": "a"}]}, "has key 'url'"),
        ({"reason": "r", "evidence": [{"quote": "x" * 5001}]}, "5,001 characters; at most 5,000"),
        ({"reason": "r", "evidence": [{"quote": "q"}] * 51}, "51 items; at most 50"),
        ({"reason": "r", "evidence": [], "approved": True}, "unknown keys: approved"),
    ],
)
def test_malformed_justification_names_the_problem(raw: Any, problem: str) -> None:
    j, problems = parse_justification(raw)
    assert j is None
    assert any(problem in p for p in problems), problems


def test_justification_inside_args_is_moved_out() -> None:
    action = pending_action("send_email", {"to": "a@b.example", "justification": {"reason": "r", "evidence": []}})
    assert dict(action.args) == {"to": "a@b.example"}
    assert action.justification == {"reason": "r", "evidence": []}
