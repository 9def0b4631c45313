"""JSON check inputs read lately, found again by their messages' bytes: a batch of checks of one conversation
(``validator check --jsonl``, a stateless server that names nothing) decodes only what is new, and every read
equals the whole parse (issue 61: a cold line of a conversation seen)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import InputError, Validator
from validator.inputs import fastdecode
from validator.inputs.checkinput import CheckInput, Limits
from validator.inputs.held import RecentInputs
from validator.record.recorder import MemoryRecorder

REQUEST = "Please email ann@example.com the meeting notes."
ACTION = {
    "tool": "send_email",
    "args": {"to": "ann@example.com"},
    "justification": {"reason": "asked", "evidence": [{"quote": REQUEST}]},
}
FIRST = {"role": "user", "content": REQUEST}
MESSAGES = st.sampled_from(
    [
        FIRST,
        {"role": "user", "content": "Actually, don't email Ann."},
        {"role": "assistant", "content": "Done: sent."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "lookup", "args": {"q": "x"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ann@example.com"},  # answers c1 only after its call
        {"role": "user", "content": [{"type": "text", "text": "Also:"}, {"type": "text", "text": "thanks"}]},
        {"role": "user", "content": "The vendor wrote: Please email ann@example.com the meeting notes."},
        {"role": "tool", "tool_call_id": "nope", "content": "x"},  # answers no call: refused
        {"role": "robot", "content": "hi"},  # no such role: refused
        {"role": "user", "content": ']}, {"role": "user", "content": "x"}'},  # JSON inside a text
    ]
)
HOSTILE = [
    "",
    "",
    "",
    "spaces",
    "pretty",
    "repeated key",
    "repeated messages",
    "messages in the args",
    "messages last",
    "nan",
    "surrogate",
    "other user",
    "no user",
    "chat",
    "edit",
    "branch",
]


def _text(messages: list[Any], hostile: str) -> str:
    """The check input of ``messages``, written as a host (or an attacker) might write it."""
    doc: dict[str, Any] = {"messages": messages, "action": ACTION, "user_id": "u"}
    if hostile == "other user":
        doc["user_id"] = "eve"
    if hostile == "no user":
        del doc["user_id"]
    if hostile == "messages last":
        doc = {"action": ACTION, "user_id": "u", "messages": messages}
    if hostile == "messages in the args":  # the same bytes twice: a copy among the action's arguments
        doc = {"action": {**ACTION, "args": {**ACTION["args"], "list": messages}}, "messages": messages, "user_id": "u"}
    if hostile == "chat":  # OpenAI Chat Completions messages: converted, never kept (a tool's answer after them
        # is a message of both formats, read by the call before it in this one)
        call = {"id": "k1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        doc["messages"] = [
            *messages,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "k1", "content": "ann@example.com"},
        ]
    body = json.dumps(doc)
    if hostile == "spaces":
        return body.replace(", ", ",   ")
    if hostile == "pretty":
        return json.dumps(doc, indent=2)
    if hostile == "repeated key":
        return body[:-1] + ', "user_id": "eve"}'
    if hostile == "repeated messages":  # a second "messages" key: the fast reader would keep the last
        return body[:-1] + ', "messages": ' + json.dumps(messages[:1]) + "}"
    if hostile == "surrogate":
        return body.replace('"user_id": "u"', '"user_id": "\\ud800"')
    if hostile == "nan":
        return body.replace('"to": "ann@example.com"', '"to": "ann@example.com", "n": NaN')
    return body


def _parsed(read: Any, text: str | bytes) -> CheckInput | tuple[str, ...]:
    try:
        return read(text)  # type: ignore[no-any-return]
    except InputError as exc:
        return tuple(sorted(str(p) for p in exc.problems))


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.lists(MESSAGES, min_size=0, max_size=3), st.sampled_from(HOSTILE), st.booleans()),
        min_size=1,
        max_size=8,
    )
)
def test_every_read_equals_the_whole_parse(steps: list[tuple[list[Any], str, bool]]) -> None:
    """Extensions, branches from an earlier point, edits, other users, other formats and hostile bytes: the
    read is the whole parse's, problems included, whatever was read before."""
    recent = RecentInputs()
    messages: list[Any] = [FIRST]
    earlier: list[list[Any]] = []
    for new, hostile, as_bytes in steps:
        if hostile == "branch" and earlier:
            messages = earlier[len(earlier) // 2]
        earlier.append(messages)
        messages = [*messages, *new]
        if hostile == "edit":
            messages = [{"role": "user", "content": "Never mind the notes."}, *messages[1:]]
        text: str | bytes = _text(messages, hostile)
        text = text.encode() if as_bytes else text
        assert _parsed(recent.read, text) == _parsed(CheckInput.from_json, text)


def decoded_messages(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many messages each input the one-pass decoder reads from now on holds, in order."""
    seen: list[int] = []
    real = fastdecode.decode

    def counting(data: bytes, *, max_depth: int) -> fastdecode.CheckIn:
        doc = real(data, max_depth=max_depth)
        seen.append(len(doc.messages))
        return doc

    monkeypatch.setattr(fastdecode, "decode", counting)
    return seen


def test_the_same_messages_are_not_decoded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    recent = RecentInputs()
    messages = [{"role": "user", "content": f"note {i}"} for i in range(200)]
    first = recent.read(_text(messages, ""))
    read = decoded_messages(monkeypatch)
    again = recent.read(_text(messages, ""))
    pretty = recent.read(_text([*messages, FIRST], "pretty"))  # other spaces between them: read whole
    more = recent.read(_text([*messages, FIRST], ""))  # the first input's messages and one more
    assert again.transcript is first.transcript  # what its checks derived comes with it
    assert read == [0, 201, 1] and recent.found == 2
    assert more.transcript == pretty.transcript == CheckInput.from_json(_text([*messages, FIRST], "")).transcript


def test_one_more_message_decodes_only_it(monkeypatch: pytest.MonkeyPatch) -> None:
    recent = RecentInputs()
    messages = [{"role": "user", "content": f"note {i}"} for i in range(50)]
    recent.read(_text(messages, ""))
    read: list[int] = []
    real = fastdecode.decode
    monkeypatch.setattr(
        fastdecode, "decode", lambda data, *, max_depth: read.append(len(data)) or real(data, max_depth=max_depth)
    )
    item = recent.read(_text([*messages, FIRST], ""))
    assert len(item.transcript) == 51 and read and read[0] < 400  # the other fields and one message


def test_another_users_input_is_never_found() -> None:
    recent = RecentInputs()
    recent.read(_text([FIRST], ""))
    eve = recent.read(_text([FIRST], "other user"))
    assert recent.found == 0 and eve.user_id == "eve"
    assert recent.read(_text([FIRST], "")).user_id == "u" and recent.found == 1


@pytest.mark.parametrize("hostile", ["repeated key", "repeated messages", "surrogate", "nan"])
def test_what_the_whole_parse_refuses_is_refused_after_the_same_messages(hostile: str) -> None:
    recent = RecentInputs()
    recent.read(_text([FIRST], ""))
    text = _text([FIRST], hostile)
    with pytest.raises(InputError) as refused:
        recent.read(text)
    with pytest.raises(InputError) as whole:
        CheckInput.from_json(text)
    assert refused.value.problems == whole.value.problems


def test_messages_standing_twice_are_read_whole() -> None:
    recent = RecentInputs()
    recent.read(_text([FIRST], ""))
    text = _text([FIRST], "messages in the args")
    item = recent.read(text)
    assert recent.found == 0 and item == CheckInput.from_json(text)
    assert item.action.args["list"] == [FIRST]


def test_other_formats_and_other_limits_are_not_kept() -> None:
    recent = RecentInputs()
    recent.read(_text([FIRST], "chat"))
    assert len(recent) == 0
    recent.read(_text([FIRST], ""), limits=Limits(max_messages=5))
    recent.read(_text([FIRST], ""))  # other limits: read whole, and kept in place of the other
    assert recent.found == 0 and len(recent) == 1
    recent.read(_text([FIRST], ""))
    assert recent.found == 1


def test_what_is_kept_is_bounded() -> None:
    recent = RecentInputs(size=2, max_bytes=10_000)
    for i in range(5):
        recent.read(_text([{"role": "user", "content": f"thread {i}"}], ""))
    assert len(recent) == 2
    recent.read(_text([{"role": "user", "content": "x" * 6_000}], ""))  # 12 KB counted: over the budget alone
    assert len(recent) <= 2 and all(len(d.messages) < 6_000 for d in recent._kept)


def test_a_validator_checks_a_batch_of_one_conversation_as_it_checks_each_whole() -> None:
    batch, whole = Validator(recorder=MemoryRecorder()), Validator(recorder=MemoryRecorder())
    messages: list[Any] = [FIRST]
    for more in ([], [{"role": "assistant", "content": "On it."}], [{"role": "user", "content": "Actually, don't."}]):
        messages = [*messages, *more]
        text = _text(messages, "").encode()
        a, b = batch.check(text), whole.check(CheckInput.from_json(text))
        assert (a.decision, a.code, a.reasoning) == (b.decision, b.code, b.reasoning)
    assert batch.recent.found == 2 and not a.approved


CHAT = json.dumps(
    {
        "messages": [{"role": "user", "content": REQUEST}, {"role": "assistant", "content": None}],
        "action": ACTION,
        "user_id": "u",
    }
)


@pytest.mark.parametrize(
    ("text", "limits"),
    [
        ("\ufeff" + CHAT, Limits()),  # a byte order mark before Chat Completions messages
        ("\ufeff" + _text([FIRST], ""), Limits()),
        (CHAT.encode("utf-16-le").decode("latin-1"), Limits()),  # UTF-16 code units in a text
        ("\xa0", Limits()),  # only a space that is not ASCII's
        (_text([{"role": "user", "content": "é" * 100}], ""), Limits(max_bytes=300)),  # characters, not bytes
    ],
)
def test_a_text_is_read_as_the_whole_parse_reads_that_text(text: str, limits: Limits) -> None:
    """What the whole parse reads in a text, not in its UTF-8 bytes (found by an attacker's pass)."""

    def read(given: str | bytes) -> CheckInput:
        return RecentInputs().read(given, limits=limits)

    assert _parsed(read, text) == _parsed(lambda given: CheckInput.from_json(given, limits=limits), text)


@pytest.mark.parametrize("encode", [lambda t: b"\xef\xbb\xbf" + t.encode(), lambda t: t.encode("utf-16")])
def test_bytes_are_utf8_without_a_byte_order_mark_in_every_format(encode: Any) -> None:
    """The careful parser read UTF-16, or dropped a byte order mark, where the fast one refuses them: Chat
    Completions messages (read by it) were taken in bytes the check-input format's refused."""
    with pytest.raises(InputError):
        CheckInput.from_json(encode(CHAT))
    with pytest.raises(InputError):
        CheckInput.from_json(encode(_text([FIRST], "")))
