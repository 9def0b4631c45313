"""LangChain messages to transcripts (validator.integrations.langchain): a checkpointer's copies of the same
messages are recognised by id without converting them again, and the result always equals a whole build."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)
from validator.integrations.langchain import _convert, _reads, transcript_from_langchain

from validator import InputError
from validator.inputs.conversations import Conversations

_TEXTS = ["Pay 50 EUR to Bob.", "Email bob@acme.example the minutes.", "Never mind.", "ok", ""]


@st.composite
def _conversation(draw: Any) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(draw(st.integers(1, 6))):
        text = draw(st.sampled_from(_TEXTS))
        if draw(st.booleans()):
            out.append(HumanMessage(text, id=f"h{i}"))
            continue
        calls = [{"id": f"c{i}", "name": "send_email", "args": {"to": draw(st.sampled_from(["bob", "eve"]))}}]
        out.append(AIMessage(text, tool_calls=calls, id=f"a{i}"))
        author = draw(st.sampled_from([None, "vendor@x.example"]))
        extra = {"author": author} if author else {}
        out.append(ToolMessage(text, tool_call_id=f"c{i}", name="send_email", id=f"t{i}", additional_kwargs=extra))
    return out


def _outcome(build: Any) -> Any:
    """A transcript, or the problems that refuse one (an edit may leave a tool result answering no call)."""
    try:
        return build()
    except InputError as exc:
        return [str(p) for p in exc.problems]


def _edited(message: BaseMessage, how: str) -> BaseMessage:
    """The same message (same id) with one thing the conversion reads changed."""
    if how == "content":
        return message.model_copy(update={"content": f"{message.content} Actually, pay Eve."})
    if how == "calls" and isinstance(message, AIMessage):
        return message.model_copy(update={"tool_calls": [{"id": "cx", "name": "send_money", "args": {}}]})
    if how == "author" and isinstance(message, ToolMessage):
        return message.model_copy(update={"additional_kwargs": {"author": "mallory@evil.example"}})
    return message


@settings(max_examples=150, deadline=None)
@given(_conversation(), st.data())
def test_copies_by_id_and_edits_of_the_same_id_both_give_the_whole_build(
    messages: list[BaseMessage], data: st.DataObject
) -> None:
    conversations: Conversations[BaseMessage] = Conversations(_convert, content=lambda m: m.content, reads=_reads)
    assert conversations.transcript(messages, key="t") == transcript_from_langchain(messages)
    for _ in range(3):
        copied = messages_from_dict(messages_to_dict(messages))  # what a checkpointer hands back: new objects
        i = data.draw(st.integers(0, len(copied) - 1))
        copied[i] = _edited(copied[i], data.draw(st.sampled_from(["none", "content", "calls", "author"])))
        if data.draw(st.booleans()):
            copied.append(HumanMessage("Thanks, go ahead.", id=f"n{len(copied)}"))
        cached = _outcome(lambda copied=copied: conversations.transcript(copied, key="t"))
        assert cached == _outcome(lambda copied=copied: transcript_from_langchain(copied))


def test_a_checkpointers_copies_are_not_converted_again() -> None:
    messages: list[BaseMessage] = [
        HumanMessage(f"Email person{i}@acme.example the report.", id=f"m{i}") for i in range(50)
    ]
    seen: list[int] = []

    def counting(sources: Any, start: int, before: Any) -> Any:
        seen.append(len(sources))
        return _convert(sources, start, before)

    conversations: Conversations[BaseMessage] = Conversations(counting, content=lambda m: m.content, reads=_reads)
    conversations.transcript(messages, key="t")
    copied = [*messages_from_dict(messages_to_dict(messages)), HumanMessage("Go ahead.", id="new")]
    assert conversations.transcript(copied, key="t") == transcript_from_langchain(copied)
    assert seen == [50, 1]  # the whole first build, then only the new message


def test_a_copy_whose_author_sits_in_a_mapping_that_reads_as_empty_is_read_again() -> None:
    """A tool message's author is read for what a checkpointer's copy may differ in, whatever the mapping it sits
    in says of its truth (a host may set its own mapping on the message after it is built): a copy that names
    another author is converted again, never taken for the message seen."""

    class Falsy(dict[str, Any]):
        def __bool__(self) -> bool:
            return False

    def messages(author: str) -> list[BaseMessage]:
        tool = ToolMessage("Invoice attached.", tool_call_id="c1", name="read_inbox", id="t1")
        tool.response_metadata = Falsy(author=author)  # set after it is built: kept as it is
        return [
            HumanMessage("Check my inbox.", id="h1"),
            AIMessage("", tool_calls=[{"id": "c1", "name": "read_inbox", "args": {}}], id="a1"),
            tool,
        ]

    conversations: Conversations[BaseMessage] = Conversations(_convert, content=lambda m: m.content, reads=_reads)
    first, copy = messages("billing@acme.example"), messages("mallory@evil.example")
    assert conversations.transcript(first, key="t") == transcript_from_langchain(first)
    assert conversations.transcript(copy, key="t") == transcript_from_langchain(copy)
    assert transcript_from_langchain(copy).messages[-1].author == "mallory@evil.example"
