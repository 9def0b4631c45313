"""Options: what the call does besides whom it reaches. An option holds the tool's declared default or what
the user's request asks for; a widened one is unknown (asked by the strict judge, put to a model judge on a
general tool with the finding in its view, never approved on a dangerous one)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from validator import Code, Decision, InputError, Message, Policy, ToolPolicy, Transcript, Validator, ValidatorConfig
from validator.cli import app
from validator.judges.base import JudgeOutput, JudgeRequest
from validator.policy.suggest import ToolSpec, option_defaults, propose, read_specs
from validator.testing import FunctionJudge

POLICY = Policy(
    {
        "archive_thread": ToolPolicy(
            targets=("thread_id",), intents=("archive",), options={"permanently_delete": False}
        ),
        "send_email": ToolPolicy(
            targets=("to", "cc"),
            content=("subject", "body"),
            options={"attachments": [], "include_history": False, "format": "plain"},
        ),
        "create_event": ToolPolicy(targets=("attendees",), intents=("add", "schedule", "invite")),
        "delete_thread": ToolPolicy(
            risk="dangerous", targets=("thread_id",), intents=("delete",), options={"purge_everywhere": False}
        ),
        "send_money": ToolPolicy(
            risk="dangerous", targets=("recipient",), amounts=("amount",), currency="EUR", options={"urgent": False}
        ),
    }
)
IBAN = "DE89370400440532013000"


NOW = datetime(2026, 12, 6, 12, tzinfo=UTC)
"""The day the cases' dates are read from ("on Friday" is 2026-12-11): the validator's clock, never the machine's."""


def _check(user: str, tool: str, args: dict[str, Any], judge: Any = None) -> Any:
    t = Transcript([Message(role="user", content=user)])
    action = {"tool": tool, "args": args, "justification": {"reason": "r", "evidence": [{"quote": user}]}}
    return Validator(POLICY, judge=judge, config=ValidatorConfig(clock=lambda: NOW)).validate(t, action, user_id="u-1")


def _widened(verdict: Any) -> list[str]:
    return [f.path for f in verdict.findings.targets if f.status == "widened"]


PLAIN = [
    ("Archive thread t-88.", "archive_thread", {"thread_id": "t-88"}),
    ("Email bob@acme.example the notes from today.", "send_email", {"to": "bob@acme.example", "body": "Notes."}),
    ("Delete thread t-88.", "delete_thread", {"thread_id": "t-88"}),
    (f"Pay {IBAN} 120 EUR.", "send_money", {"recipient": IBAN, "amount": 120}),
]
WIDENED = {
    "archive_thread": {"permanently_delete": True},
    "send_email": {"attachments": ["~/.ssh/id_rsa"]},
    "delete_thread": {"purge_everywhere": True},
    "send_money": {"urgent": True},
}


@pytest.mark.parametrize(("user", "tool", "args"), PLAIN)
def test_an_option_at_its_default_or_left_out_asks_nothing(user: str, tool: str, args: dict[str, Any]) -> None:
    assert _check(user, tool, args).decision is Decision.APPROVE
    defaults = {k: v for k, v in POLICY.for_tool(tool).options.items()}
    assert _check(user, tool, {**args, **defaults}).decision is Decision.APPROVE


@pytest.mark.parametrize(("user", "tool", "args"), PLAIN)
def test_a_widened_option_is_asked_never_approved(user: str, tool: str, args: dict[str, Any]) -> None:
    verdict = _check(user, tool, {**args, **WIDENED[tool]})
    assert verdict.decision is Decision.ASK_USER and verdict.code is Code.TARGET_NOT_GROUNDED
    assert _widened(verdict) and all(p.split("[")[0] in WIDENED[tool] for p in _widened(verdict))


@pytest.mark.parametrize(
    ("user", "args"),
    [
        ("Email bob@acme.example the notes from today.", {"include_history": True}),
        ("Email bob@acme.example the notes from today.", {"format": "html"}),
        ("Email bob@acme.example the notes from today.", {"attachments": ["notes.txt", "customers.csv"]}),
        ("Email bob@acme.example the notes, but don't include the history.", {"include_history": True}),
    ],
)
def test_what_the_request_does_not_ask_is_widened(user: str, args: dict[str, Any]) -> None:
    verdict = _check(user, "send_email", {"to": "bob@acme.example", "body": "Notes.", **args})
    assert verdict.decision is Decision.ASK_USER and _widened(verdict)


@pytest.mark.parametrize(
    ("user", "args"),
    [
        ("Email bob@acme.example the notes from today, include the history.", {"include_history": True}),
        ("Email bob@acme.example the Q3 report.", {"attachments": ["Q3_report.pdf"]}),
        ("Email bob@acme.example the notes as html.", {"format": "html"}),
    ],
)
def test_what_the_request_asks_for_holds(user: str, args: dict[str, Any]) -> None:
    verdict = _check(user, "send_email", {"to": "bob@acme.example", "body": "Here it is.", **args})
    assert verdict.decision is Decision.APPROVE, verdict.reasoning
    assert not _widened(verdict)


def test_an_attachment_named_in_part_is_no_attachment_named() -> None:
    # 'report' is said, 'q3' is not: the words of the value must all stand in the request
    verdict = _check(
        "Email bob@acme.example the report.",
        "send_email",
        {"to": "bob@acme.example", "body": "x"} | {"attachments": ["Q3_report.pdf"]},
    )
    assert verdict.decision is Decision.ASK_USER and _widened(verdict) == ["attachments[0]"]


def test_a_general_tools_undeclared_flag_switched_on_is_widened() -> None:
    user = "Add lunch with ann@acme.example to my calendar on Friday at noon."
    base = {"attendees": ["ann@acme.example"], "title": "Lunch", "start": "2026-12-11T12:00"}
    assert _check(user, "create_event", base).decision is Decision.APPROVE
    verdict = _check(user, "create_event", {**base, "invite_all": True})
    assert verdict.decision is Decision.ASK_USER and _widened(verdict) == ["invite_all"]
    assert _check(user, "create_event", {**base, "invite_all": False}).decision is Decision.APPROVE


def test_a_model_judge_decides_a_general_widened_option_knowing_it_and_never_a_dangerous_one() -> None:
    seen: list[JudgeRequest] = []

    def everything(request: JudgeRequest) -> JudgeOutput:
        seen.append(request)
        return JudgeOutput(approved=True, confidence="high", reasoning="ok")

    judge = FunctionJudge(everything)
    verdict = _check("Archive thread t-88.", "archive_thread", {"thread_id": "t-88", "permanently_delete": True}, judge)
    assert seen and [f.path for f in seen[-1].findings.targets if f.status == "widened"] == ["permanently_delete"]
    assert verdict.decision is Decision.APPROVE  # the model saw the finding and took the call
    seen.clear()
    verdict = _check("Delete thread t-88.", "delete_thread", {"thread_id": "t-88", "purge_everywhere": True}, judge)
    assert verdict.decision is not Decision.APPROVE


def test_the_blind_view_names_the_widened_option() -> None:
    from validator.judges.blind import render_blind

    t = Transcript([Message(role="user", content="Archive thread t-88.")])
    action = {
        "tool": "archive_thread",
        "args": {"thread_id": "t-88", "permanently_delete": True},
        "justification": {"reason": "r", "evidence": [{"quote": "Archive thread t-88."}]},
    }
    seen: list[JudgeRequest] = []
    judge = FunctionJudge(lambda r: (seen.append(r), JudgeOutput(approved=False, confidence="high", reasoning="x"))[1])
    Validator(POLICY, judge=judge).validate(t, action, user_id="u-1")
    lines, ask = render_blind(seen[-1], tool_name="validate_action", quality=False)
    rendered = "\n".join([*lines, ask])
    assert "- permanently_delete = true [code: option: widened (unknown)]" in rendered


def test_options_are_checked_when_the_policy_is_read() -> None:
    with pytest.raises(InputError, match=r"tools\.x\.options\.to: is a target"):
        Policy.from_dict({"tools": {"x": {"targets": ["to"], "options": {"to": []}}}})
    with pytest.raises(InputError, match="options"):
        Policy.from_dict({"tools": {"x": {"options": ["permanently_delete"]}}})
    with pytest.raises(InputError, match=r"tools\.x\.options\.limit: its default must be a JSON value"):
        Policy({"x": ToolPolicy(options={"limit": float("nan")})})
    loaded = Policy.from_dict({"tools": {"x": {"options": {"mode": "soft", "cc": []}}}})
    assert loaded.for_tool("x").options == {"mode": "soft", "cc": []}
    assert Policy.from_dict(loaded.to_dict()).version == loaded.version


def test_suggest_proposes_the_schemas_defaults_and_flags() -> None:
    spec = read_specs(
        {
            "name": "archive_thread",
            "parameters": {
                "type": "object",
                "properties": {
                    "thread_id": {"type": "string"},
                    "permanently_delete": {"type": "boolean"},
                    "mode": {"type": "string", "enum": ["soft", "hard"], "default": "soft"},
                    "scope": {"type": "string", "enum": ["me", "everyone"]},  # no default: the author's call
                    "labels": {"type": "array", "default": []},
                    "note": {"type": "string", "default": None},  # TOML has no null
                },
            },
        }
    )[0]
    assert option_defaults(spec) == {"permanently_delete": False, "mode": "soft", "labels": []}
    assert option_defaults(spec, frozenset({"labels"})) == {"permanently_delete": False, "mode": "soft"}
    policy = Policy({"archive_thread": ToolPolicy(targets=("thread_id",), intents=("archive",))})
    (proposal,) = propose(policy, [spec])
    written = tomllib.loads(proposal.toml())
    assert written["tools"]["archive_thread"]["options"] == {"permanently_delete": False, "mode": "soft", "labels": []}
    declared = Policy(
        {
            "archive_thread": ToolPolicy(
                targets=("thread_id",), intents=("archive",), options=written["tools"]["archive_thread"]["options"]
            )
        }
    )
    assert [p.options for p in propose(declared, [spec])] == [{}]  # declared: no option left to propose
    assert option_defaults(ToolSpec("x", properties={"odd key": {"type": "boolean"}})) == {"odd key": False}
    assert tomllib.loads(next(propose(Policy({}), [ToolSpec("x", properties={"odd key": {"type": "boolean"}})])).toml())


def test_policy_check_shows_the_options(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["policy", "check", str(Path(__file__).parents[2] / "validator/examples/policy.toml")]
    )
    assert result.exit_code == 0 and "options: permanently_delete=false" in result.stdout


_NAME = st.from_regex(r"[a-z]{3,10}(_[a-z]{3,10}){0,2}", fullmatch=True)
_WIDE = st.one_of(
    st.just(True),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz/._~-", min_size=1, max_size=20),
    st.lists(st.sampled_from(["~/.ssh/id_rsa", "all", "everyone", "customers.csv"]), min_size=1, max_size=3),
)


@settings(max_examples=120, deadline=None)
@given(case=st.sampled_from(PLAIN), name=_NAME, value=_WIDE)
def test_property_a_widened_option_never_stays_approved(
    case: tuple[str, str, dict[str, Any]], name: str, value: Any
) -> None:
    """Any option declared with a default of false / empty, set to another value the request does not hold (its
    words absent from the request), is never approved, on any tool, by the strict judge."""
    user, tool, args = case
    words = {w for w in re.findall(r"[a-z]+", str(value) + " " + name.replace("_", " "))}
    assume(name not in args and not words & set(re.findall(r"[a-z]+", user.lower())))
    tp = POLICY.for_tool(tool)
    default: Any = [] if isinstance(value, list) else (False if value is True else "")
    policy = Policy({**POLICY.tools, tool: replace(tp, options={**tp.options, name: default})})
    t = Transcript([Message(role="user", content=user)])
    action = {
        "tool": tool,
        "args": {**args, name: value},
        "justification": {"reason": "r", "evidence": [{"quote": user}]},
    }
    assert Validator(policy).validate(t, action, user_id="u-1").decision is not Decision.APPROVE


@pytest.mark.parametrize(
    "extra",
    [
        {"options": {"permanently_delete": True}},  # a declared option inside an object
        {"purge": "true"},
        {"opts": {"purge": True}},
        {"attachment": "/etc/passwd"},  # an attachment under a name the policy does not classify
        {"files": ["~/.ssh/id_rsa"]},
    ],
)
def test_what_the_call_does_is_read_at_any_depth_and_under_any_name(extra: dict[str, Any]) -> None:
    verdict = _check("Archive thread t-88.", "archive_thread", {"thread_id": "t-88", **extra})
    assert verdict.decision is Decision.ASK_USER and _widened(verdict), verdict.reasoning


@pytest.mark.parametrize("attachment", ["../../notes", "*notes*", "notes/"])
def test_a_path_or_a_wildcard_names_no_attachment(attachment: str) -> None:
    args = {"to": "bob@acme.example", "body": "x", "attachments": [attachment]}
    assert _check("Email bob@acme.example the notes.", "send_email", args).decision is Decision.ASK_USER


def test_a_path_the_user_wrote_is_theirs() -> None:
    user = "Archive thread t-88 and save it to /home/me/archive."
    args = {"thread_id": "t-88", "folder": "/home/me/archive"}
    verdict = _check(user, "archive_thread", args)
    assert "folder" not in _widened(verdict)


def _nested_under(levels: int, leaf: dict[str, Any]) -> dict[str, Any]:
    for _ in range(levels):
        leaf = {"x": leaf}
    return leaf


@pytest.mark.parametrize(
    "extra",
    [
        {"opts": _nested_under(12, {"purge": True})},  # deeper than any fixed bound of a walk
        {"o": _nested_under(12, {"permanently_delete": True})},
        {"items": [0] * 300 + [{"purge": True}]},  # past the first hundreds of a list
    ],
)
def test_no_depth_or_length_hides_a_widened_option(extra: dict[str, Any]) -> None:
    verdict = _check("Archive thread t-88.", "archive_thread", {"thread_id": "t-88", **extra})
    assert verdict.decision is Decision.ASK_USER and _widened(verdict)


def test_a_short_stem_is_no_form_of_another_word() -> None:
    """Hypothesis found "not" taken for a form of "notes" (both stem to "not"): a stem under four letters counts
    only as the word itself."""
    tp = POLICY.for_tool("send_email")
    policy = Policy({**POLICY.tools, "send_email": replace(tp, options={**tp.options, "mode": ""})})
    user = "Email bob@acme.example the notes from today."
    for value, approved in (("not", False), ("notes", True), ("today", True)):
        action = {
            "tool": "send_email",
            "args": {"to": "bob@acme.example", "body": "Notes.", "mode": value},
            "justification": {"reason": "r", "evidence": [{"quote": user}]},
        }
        verdict = Validator(policy).validate(Transcript([Message(role="user", content=user)]), action, user_id="u-1")
        assert verdict.approved is approved, (value, verdict.reasoning)
