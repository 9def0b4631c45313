"""Conversations grow by their new messages and always equal a whole build (issue 13)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator import InputError, Message, ToolCall, Transcript
from validator.gate.index import user_index
from validator.inputs.conversations import Conversations


class _Weak(dict[str, Any]):
    """A host message the cache can refer to weakly."""


def _one(source: dict[str, Any]) -> list[Message]:
    if source["kind"] == "call":
        return [Message("assistant", source["text"], (ToolCall(source["id"], "read"),))]
    if source["kind"] == "result":
        return [Message("tool", source["text"], (), source["id"], "read")]
    if source["kind"] == "pair":  # one host message that makes two transcript messages
        return [Message("user", source["text"]), Message("assistant", "ok")]
    if source["kind"] == "none":
        return []
    return [Message(source["kind"], source["text"])]


def _convert(sources: Sequence[dict[str, Any]], start: int, before: Sequence[Message]) -> list[list[Message]]:
    return [_one(s) for s in sources]


def _whole(sources: Sequence[dict[str, Any]]) -> Transcript:
    return Transcript([m for s in sources for m in _one(s)])


def _conversations(**options: Any) -> Conversations[dict[str, Any]]:
    return Conversations(_convert, content=lambda s: s["text"], **options)


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"kind": "user", "text": "start"}]
    calls = 0
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["user", "assistant", "call", "pair", "none", "system"]))
        text = draw(st.sampled_from(["send it", "pay Bob", "hello", "", "Never mind"]))
        if kind == "call":
            calls += 1
            out.append({"kind": "call", "text": text, "id": f"c{calls}"})
            out.append({"kind": "result", "text": text, "id": f"c{calls}"})
        else:
            out.append({"kind": kind, "text": text})
    return out


@pytest.mark.usefixtures("frozen_heap")  # each weak example collects: the other tests' objects are not its
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(histories(), st.data())
def test_every_turn_equals_a_whole_build_whatever_the_host_did(
    history: list[dict[str, Any]], data: st.DataObject
) -> None:
    conversations = _conversations()
    weak = data.draw(st.booleans())  # host messages the cache refers to weakly (as LangChain's), or dicts
    if weak:
        history = [_Weak(s) for s in history]
    shown: list[dict[str, Any]] = []
    taken = 0
    for end in sorted(set(data.draw(st.lists(st.integers(1, len(history)), min_size=1, max_size=5)))):
        shown, taken = shown + history[taken:end], end
        what = data.draw(st.sampled_from(["append", "copy", "edit", "drop"]))
        if what == "copy":  # a checkpointer hands back equal copies
            shown = [type(s)(s) for s in shown]
        elif what == "edit" and len(shown) > 1:  # an earlier message replaced
            i = data.draw(st.integers(0, len(shown) - 2))
            shown = [*shown[:i], {**shown[i], "text": shown[i]["text"] + " (edited)"}, *shown[i + 1 :]]
        elif what == "drop" and len(shown) > 1:  # history trimmed from the front (a summariser)
            shown = shown[1:]
            if shown[0]["kind"] == "result":
                shown = shown[1:] or [{"kind": "user", "text": "x"}]
        if weak:
            shown = [s if isinstance(s, _Weak) else _Weak(s) for s in shown]
            gc.collect()  # what the host let go is gone from the cache too
        try:
            whole = _whole(shown)
        except InputError:
            with pytest.raises(InputError):
                conversations.transcript(shown, key="k")
            continue
        got = conversations.transcript(shown, key="k")
        assert got == whole and got.digest == whole.digest
        assert user_index(got).texts == user_index(whole).texts


def test_calls_of_one_ai_message_share_one_transcript_and_only_new_messages_are_converted() -> None:
    seen: list[int] = []

    def counting(sources: Sequence[dict[str, Any]], start: int, before: Sequence[Message]) -> list[list[Message]]:
        seen.append(len(sources))
        return _convert(sources, start, before)

    conversations = Conversations(counting, content=lambda s: s["text"])
    history = [{"kind": "user", "text": f"m{i}"} for i in range(1000)]
    first = conversations.transcript(history, key="k")
    assert conversations.transcript(history, key="k") is first  # a second and third call of the same turn
    assert conversations.transcript(list(history), key="k") is first
    later = conversations.transcript([*history, {"kind": "assistant", "text": "done"}], key="k")
    assert seen == [1000, 1] and later == Transcript([*first, Message("assistant", "done")])
    assert (conversations.builds, conversations.extensions) == (1, 1)


def test_memory_is_bounded_by_conversations_and_by_characters() -> None:
    conversations = _conversations(size=3, max_chars=50)
    for k in range(10):
        conversations.transcript([{"kind": "user", "text": "x" * 10}], key=k)
    assert len(conversations) == 3
    conversations.transcript([{"kind": "user", "text": "x" * 45}], key="big")
    assert len(conversations) == 1  # the newest stays, however large


def test_an_unnamed_conversation_is_kept_only_when_its_first_message_comes_back() -> None:
    """A server that parses each request afresh keeps nothing of it; a loop that grows its own list is
    kept from its second check on (issue 26)."""
    conversations = _conversations(size=4)
    for _ in range(25):  # stateless: every request's messages are new objects
        fresh = [{"kind": "user", "text": "Pay 50 EUR to Bob."}, {"kind": "assistant", "text": "ok"}]
        assert conversations.transcript(fresh, key=("anon", id(fresh[0])), anchor=fresh[0]) == _whole(fresh)
    assert len(conversations) == 0 and len(conversations._sightings) <= 4
    grown = [{"kind": "user", "text": "Pay 50 EUR to Bob."}]
    key = ("anon", id(grown[0]))
    conversations.transcript(grown, key=key, anchor=grown[0])
    grown.append({"kind": "assistant", "text": "ok"})
    assert conversations.transcript(grown, key=key, anchor=grown[0]) == _whole(grown)
    assert len(conversations) == 1
    grown.append({"kind": "user", "text": "Thanks."})
    assert conversations.transcript(grown, key=key, anchor=grown[0]) == _whole(grown)
    assert conversations.extensions >= 1


def test_a_recycled_identity_never_mixes_two_conversations() -> None:
    """The key of an unnamed conversation is an object's ``id``, which Python reuses once the object is
    gone: a later conversation under the same key is still built from its own messages."""
    conversations = _conversations()
    for text in ("Pay Bob.", "Pay Eve.", "Pay Carol."):
        first = {"kind": "user", "text": text}
        messages = [first, {"kind": "assistant", "text": "ok"}]
        for _ in range(3):
            assert conversations.transcript(messages, key="same-key", anchor=first) == _whole(messages)


def test_the_cache_never_keeps_host_messages_alive() -> None:
    """LangChain's messages (and any the cache can refer to weakly) die with the host's list (issue 26)."""
    from langchain_core.messages import AIMessage, HumanMessage
    from validator.integrations.langchain import conversations, transcript_from_state

    from validator import Validator

    validator = Validator()
    messages = [HumanMessage("Please pay Bob 50 EUR.", id="h-1"), AIMessage("On it.", id="a-1")]
    gone = [weakref.ref(m) for m in messages]
    for _ in range(3):
        transcript = transcript_from_state({"messages": messages}, validator=validator)
    cache = validator.transcripts.of("langchain", conversations)
    assert len(cache) == 1 and transcript.messages[0].content == "Please pay Bob 50 EUR."
    del messages
    gc.collect()
    assert all(r() is None for r in gone)
    again = [HumanMessage("Please pay Bob 50 EUR.", id="h-1"), AIMessage("On it.", id="a-1")]
    assert transcript_from_state({"messages": again}, validator=validator) == transcript  # by id, reads, content
    assert cache.builds == 1  # found again, not rebuilt
    assert len(Validator().transcripts.of("langchain", conversations)) == 0  # another validator's are its own


def test_seen_finds_a_conversation_decoded_again_or_grown_and_only_the_same_users() -> None:
    """:class:`Seen` (issue 61): the same messages as new objects are the transcript seen (with what was derived
    from it); a longer one is the seen one extended; another user's, or messages equal but not the same (a
    ``1`` for a ``1.0``, a ``True`` for a ``1``), are not; and it keeps at most ``size`` transcripts."""
    from validator.inputs.conversations import Seen
    from validator.inputs.transcript import CHARS

    def msgs(amount: object = 1.0) -> list[Message]:
        return [
            Message("user", "Pay Bob."),
            Message("assistant", "", (ToolCall("c1", "lookup", {"amount": amount}),)),
            Message("tool", "ok", tool_call_id="c1", name="lookup"),
        ]

    seen = Seen(size=3)
    first = seen.adopt(Transcript(msgs()), "u-1")
    first.fact(CHARS)
    assert seen.adopt(Transcript(msgs()), "u-1") is first and seen.found == 1
    longer = seen.adopt(Transcript([*msgs(), Message("user", "Thanks.")]), "u-1")
    assert longer.messages[:3] == first.messages and longer.messages[0] is first.messages[0] and seen.found == 2
    other = Transcript(msgs())
    assert seen.adopt(other, "u-2") is other  # another user's checks never find it
    for amount in (1, True):
        kind = Transcript(msgs(amount))
        assert seen.adopt(kind, "u-1") is kind  # equal in Python, not in the digest: not the one seen
    assert len(seen._kept) == 3


class _Odd(str):
    """A content whose ``==`` and ``!=`` both say "not equal" (a host's own string type may answer anything)."""

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = str.__hash__


class _Sent:
    def __init__(self, id_: str, content: str) -> None:
        self.id, self.content = id_, content


def test_a_message_of_the_same_id_is_the_same_only_when_its_content_is_equal_by_eq() -> None:
    """A copy of a message (same id, new objects) is the message seen only when ``==`` says its content is equal:
    a content type whose ``!=`` says otherwise is converted again, never taken for the text seen before."""
    from operator import attrgetter

    conversations: Conversations[_Sent] = Conversations(
        lambda sources, start, before: [[Message(role="user", content=str(s.content))] for s in sources],
        content=attrgetter("content"),
        reads=lambda s: ("user", s.id),
    )
    conversations.transcript([_Sent("m1", _Odd("Please pay A."))], key="k")
    again = conversations.transcript([_Sent("m1", _Odd("Please pay B."))], key="k")
    assert again.messages[0].content == "Please pay B."
