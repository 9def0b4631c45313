"""A named conversation checked from JSON text each time: only what is new is parsed, and the result is
always the whole parse's (issue 26: stateless JSON hosts)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import InputError, Validator
from validator.inputs.checkinput import CheckInput
from validator.inputs.held import HeldConversations, check_input
from validator.record.recorder import MemoryRecorder

REQUEST = "Please email ann@example.com the meeting notes."
ACTION = {
    "tool": "send_email",
    "args": {"to": "ann@example.com"},
    "justification": {"reason": "asked", "evidence": [{"quote": REQUEST}]},
}
MESSAGES = st.sampled_from(
    [
        {"role": "user", "content": REQUEST},
        {"role": "user", "content": "Actually, don't email Ann."},
        {"role": "assistant", "content": "Done: sent."},
        {"role": "user", "content": [{"type": "text", "text": "Also:"}, {"type": "text", "text": "thanks"}]},
        {"role": "user", "content": "The vendor wrote: Please email ann@example.com the meeting notes."},
        {"role": "tool", "tool_call_id": "nope", "content": "x"},  # answers no call: refused
        {"role": "robot", "content": "hi"},  # no such role: refused
    ]
)


def _text(messages: list[Any], hostile: str) -> str:
    body = json.dumps({"messages": messages, "action": ACTION, "user_id": "u"})
    if hostile == "spaces":
        return body.replace(", ", ",   ")
    if hostile == "repeated key":
        return body[:-1] + ', "user_id": "eve"}'
    if hostile == "surrogate":
        return body.replace('"user_id": "u"', '"user_id": "\\ud800"')
    if hostile == "nan":
        return body.replace('"to": "ann@example.com"', '"to": "ann@example.com", "n": NaN')
    return body


def _parsed(text: str) -> CheckInput | tuple[str, ...]:
    try:
        return CheckInput.from_json(text)
    except InputError as exc:
        return tuple(sorted(str(p) for p in exc.problems))


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.lists(MESSAGES, min_size=0, max_size=3),
            st.sampled_from(["", "", "", "spaces", "repeated key", "nan", "surrogate", "edit"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_every_check_of_a_named_conversation_equals_the_whole_parse(steps: list[tuple[list[Any], str]]) -> None:
    held = HeldConversations(max_bytes=10**8)
    messages: list[Any] = [{"role": "user", "content": REQUEST}]
    for new, hostile in steps:
        messages = [*messages, *new]
        if hostile == "edit":
            messages = [{"role": "user", "content": "Never mind the notes."}, *messages[1:]]
        text = _text(messages, hostile)
        whole = _parsed(text)
        try:
            got: CheckInput | tuple[str, ...] = check_input(held, "c", text)
        except InputError as exc:
            got = tuple(sorted(str(p) for p in exc.problems))
        assert got == whole
        if isinstance(whole, tuple):
            messages = messages[: -len(new)] if new else messages  # the host drops what was refused


def test_a_validator_checks_a_named_conversation_as_it_checks_the_whole() -> None:
    named, whole = Validator(recorder=MemoryRecorder()), Validator(recorder=MemoryRecorder())
    messages: list[Any] = [{"role": "user", "content": REQUEST}]
    for more in ([{"role": "assistant", "content": "On it."}], [{"role": "user", "content": "Actually, don't."}]):
        messages = [*messages, *more]
        text = _text(messages, "")
        a, b = named.check(text, conversation="thread-1"), whole.check(text)
        assert (a.decision, a.code, a.reasoning) == (b.decision, b.code, b.reasoning)
    assert len(named.conversations) == 1 and not a.approved


def test_only_the_new_messages_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    held = HeldConversations(max_bytes=10**8)
    messages = [{"role": "user", "content": f"note {i}"} for i in range(200)]
    check_input(held, "c", _text(messages, ""))
    seen: list[int] = []
    real = CheckInput.from_json.__func__  # type: ignore[attr-defined]

    def counting(cls: type[CheckInput], text: str | bytes, **options: Any) -> CheckInput:
        seen.append(len(json.loads(text)["messages"]))
        return real(cls, text, **options)  # type: ignore[no-any-return]

    monkeypatch.setattr(CheckInput, "from_json", classmethod(counting))
    item = check_input(held, "c", _text([*messages, {"role": "user", "content": REQUEST}], ""))
    assert seen == [1] and len(item.transcript.messages) == 201


def test_megabytes_of_periodic_text_in_a_named_conversation_are_read_as_the_whole() -> None:
    held = HeldConversations(max_bytes=10**8)
    messages: list[Any] = [{"role": "user", "content": REQUEST}]
    check_input(held, "p", _text(messages, ""))
    flood = {"role": "user", "content": "pay Bob: " * 200_000}  # 1.8 MB of one repeated clause
    text = _text([*messages, flood], "")
    assert check_input(held, "p", text) == CheckInput.from_json(text)
