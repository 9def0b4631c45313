from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from validator.integrations.langchain import transcript_from_langchain

from validator import InputError, Message, ToolCall, Transcript, transcript_from_anthropic


def _problems(exc: pytest.ExceptionInfo[InputError]) -> list[str]:
    return [str(p) for p in exc.value.problems]


def test_empty_transcript_is_an_input_error() -> None:
    with pytest.raises(InputError) as exc:
        Transcript([])
    assert _problems(exc) == ["messages: must hold at least one message"]


def test_tool_message_must_answer_an_earlier_call() -> None:
    with pytest.raises(InputError) as exc:
        Transcript([Message(role="user", content="hi"), Message(role="tool", content="x", tool_call_id="c9", name="t")])
    assert _problems(exc) == ["messages[1].tool_call_id: 'c9' matches no tool call of an earlier assistant message"]


def test_duplicate_call_ids_and_misplaced_fields_are_named() -> None:
    with pytest.raises(InputError) as exc:
        Transcript(
            [
                Message(role="assistant", tool_calls=(ToolCall("a", "t"),)),
                Message(role="assistant", tool_calls=(ToolCall("a", "t"),)),
                Message(role="user", content="x", tool_calls=(ToolCall("b", "t"),)),
                Message(role="user", content="x", tool_call_id="a"),
            ]
        )
    assert _problems(exc) == [
        "messages[1].tool_calls[0].id: 'a' is already used by messages[0]",
        "messages[2].tool_calls: only assistant messages carry tool calls",
        "messages[3].tool_call_id: only tool messages answer a tool call",
    ]


def test_speaker_names_the_outside_party() -> None:
    m = Message(role="tool", content="x", tool_call_id="c", name="read_inbox", author="bob@x.example")
    assert m.speaker == "tool read_inbox (from bob@x.example)"
    assert Message(role="assistant").speaker == "agent"


def test_from_anthropic_splits_tool_results_from_user_words() -> None:
    t = transcript_from_anthropic(
        [
            {"role": "user", "content": "Summarize my inbox"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "s"},
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "tu1", "name": "read_inbox", "input": {"n": 5}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "tu1", "content": [{"type": "text", "text": "Pay now!"}]},
                    {"type": "text", "text": "Also, be quick."},
                ],
            },
        ],
        system=[{"type": "text", "text": "You are helpful."}],
        authors={"tu1": "vendor@x.example"},
    )
    assert [(m.role, m.content) for m in t] == [
        ("system", "You are helpful."),
        ("user", "Summarize my inbox"),
        ("assistant", "Reading."),
        ("tool", "Pay now!"),
        ("user", "Also, be quick."),
    ]
    assert t[2].tool_calls == (ToolCall("tu1", "read_inbox", {"n": 5}),)
    assert (t[3].name, t[3].author, t[3].tool_call_id) == ("read_inbox", "vendor@x.example", "tu1")


def test_from_anthropic_rejects_unknown_roles_and_orphan_results() -> None:
    with pytest.raises(InputError, match=r"messages\[0\].role: must be user or assistant"):
        transcript_from_anthropic([{"role": "bot", "content": "x"}])
    with pytest.raises(InputError, match="matches no tool call"):
        transcript_from_anthropic(
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz", "content": "x"}]}]
        )


def test_from_langchain_keeps_roles_calls_and_authors() -> None:
    t = transcript_from_langchain(
        [
            SystemMessage("be careful"),
            HumanMessage([{"type": "text", "text": "pay the rent"}]),
            AIMessage("", tool_calls=[{"id": "c1", "name": "read_inbox", "args": {}}]),
            ToolMessage(
                "landlord says hi",
                tool_call_id="c1",
                name="read_inbox",
                additional_kwargs={"author": "landlord@x.example"},
            ),
        ]
    )
    assert [m.role for m in t] == ["system", "user", "assistant", "tool"]
    assert t[1].content == "pay the rent"
    assert t[3].speaker == "tool read_inbox (from landlord@x.example)"


def test_from_langchain_author_callback_and_bad_message_type() -> None:
    from langchain_core.messages import ChatMessage

    t = transcript_from_langchain(
        [
            AIMessage("", tool_calls=[{"id": "c1", "name": "web", "args": {}}]),
            ToolMessage("page", tool_call_id="c1", name="web"),
        ],
        authors=lambda m: "https://evil.example" if m.name == "web" else None,
    )
    assert t[1].author == "https://evil.example"
    with pytest.raises(InputError, match=r"messages\[0\]: ChatMessage has no author role"):
        transcript_from_langchain([ChatMessage("x", role="critic")])
