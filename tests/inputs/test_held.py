"""A named conversation checked from JSON text each time: only what is new is decoded, and the result is
always the whole parse's (issue 26: stateless JSON hosts)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.inputs.test_recent import decoded_messages
from validator import InputError, Validator
from validator.inputs.checkinput import CheckInput, Limits
from validator.inputs.held import NamedInputs, check_input
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
    held = NamedInputs(max_bytes=10**8)
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


def test_only_the_new_messages_are_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The messages of the conversation's last input are decoded once: a later input with the same messages and one
    more decodes its other fields and that one (spaces of its own between them: read whole)."""
    held = NamedInputs(max_bytes=10**8)
    messages = [{"role": "user", "content": f"note {i}"} for i in range(200)]
    first = check_input(held, "c", _text(messages, ""))
    seen = decoded_messages(monkeypatch)
    again = check_input(held, "c", _text(messages, ""))
    more = check_input(held, "c", _text([*messages, {"role": "user", "content": REQUEST}], ""))
    spaced = check_input(held, "c", _text([*messages, {"role": "user", "content": REQUEST}], "spaces"))
    assert again.transcript is first.transcript  # what its checks derived comes with it
    assert seen == [0, 1, 201] and len(more.transcript.messages) == 201
    assert spaced == CheckInput.from_json(_text([*messages, {"role": "user", "content": REQUEST}], "spaces"))


def test_a_named_conversation_is_found_only_for_its_tenant_its_user_and_its_limits() -> None:
    """Another tenant's conversation of the same name, another user's input, or other limits: read whole, equal to
    the whole parse (and a refused input leaves the conversation as it was)."""
    held = NamedInputs(max_bytes=10**8)
    messages: list[Any] = [{"role": "user", "content": f"note {i}"} for i in range(20)]
    first = check_input(held, "c", _text(messages, ""), tenant="a")
    for tenant, text, limits in (
        ("b", _text(messages, ""), None),
        ("a", _text(messages, "").replace('"user_id": "u"', '"user_id": "eve"'), None),
        ("a", _text(messages, ""), Limits(max_messages=5_000)),
    ):
        options = {} if limits is None else {"limits": limits}
        got = check_input(held, "c", text, tenant=tenant, **options)  # type: ignore[arg-type]
        assert got == CheckInput.from_json(text, **options) and got.transcript is not first.transcript  # type: ignore[arg-type]
    latest = check_input(held, "c", _text(messages, ""), tenant="a")  # each of those was the latest in turn
    refused = _text([*messages, {"role": "robot", "content": "hi"}], "")
    with pytest.raises(InputError):
        check_input(held, "c", refused, tenant="a")
    assert check_input(held, "c", _text(messages, ""), tenant="a").transcript is latest.transcript


def test_what_is_held_is_bounded() -> None:
    """Past its budget (three times each input's messages' JSON and 4 KiB each), the least recent conversation is
    let go; one over the whole budget is never held."""
    one = _text([{"role": "user", "content": "x" * 1000}], "")
    held = NamedInputs(max_bytes=3 * 10_000)
    for n in range(8):
        check_input(held, f"c{n}", one)
    assert 0 < len(held) < 8 and held.latest("", "c7") is not None and held.latest("", "c0") is None
    tiny = NamedInputs(max_bytes=100)
    check_input(tiny, "c", one)
    assert len(tiny) == 0


def test_megabytes_of_periodic_text_in_a_named_conversation_are_read_as_the_whole() -> None:
    held = NamedInputs(max_bytes=10**8)
    messages: list[Any] = [{"role": "user", "content": REQUEST}]
    check_input(held, "p", _text(messages, ""))
    flood = {"role": "user", "content": "pay Bob: " * 200_000}  # 1.8 MB of one repeated clause
    text = _text([*messages, flood], "")
    assert check_input(held, "p", text) == CheckInput.from_json(text)


@pytest.mark.parametrize(
    "hostile", ["repeated key", "repeated messages", "surrogate", "nan", "messages in the args", "chat", "pretty"]
)
def test_after_the_same_messages_a_named_input_reads_as_the_whole_parse(hostile: str) -> None:
    """A second ``messages`` key, a repeated key elsewhere, a lone surrogate or ``NaN`` in the other fields, the
    messages standing twice, another format, other spaces: after an input of the same messages, each is read (or
    refused, with the same problems) as the whole parse reads it."""
    from tests.inputs.test_recent import FIRST
    from tests.inputs.test_recent import _text as text_of

    held = NamedInputs(max_bytes=10**8)
    check_input(held, "c", text_of([FIRST], ""))
    text = text_of([FIRST], hostile)
    assert _named(held, text) == _parsed(text)
    assert _named(held, text_of([FIRST], "")) == _parsed(text_of([FIRST], ""))


def _named(held: NamedInputs, text: str) -> CheckInput | tuple[str, ...]:
    try:
        return check_input(held, "c", text)
    except InputError as exc:
        return tuple(sorted(str(p) for p in exc.problems))


@pytest.mark.parametrize("where", ["args", "messages", "user_id", "top"])
def test_json_nested_a_thousand_deep_is_refused_as_the_whole_parse_refuses_it(where: str) -> None:
    """JSON nested past what the splitter can recurse into (a thousand levels) is refused with the whole parse's
    problems by every reader of JSON text: a named conversation, the inputs read lately, a validator's check with
    a name and without, and the service's splitter says it is no list of messages (never a ``RecursionError``)."""
    from validator.inputs import sent
    from validator.inputs.held import RecentInputs

    deep = "[" * 1000 + "]" * 1000
    body = {"messages": [{"role": "user", "content": REQUEST}], "action": ACTION, "user_id": "u"}
    text = json.dumps(body)
    text = {
        "args": text.replace('"to": "ann@example.com"', f'"to": "ann@example.com", "x": {deep}'),
        "messages": text.replace('"content": "Please', f'"extra": {deep}, "content": "Please'),
        "user_id": text.replace('"user_id": "u"', f'"user_id": {deep}'),
        "top": deep,
    }[where]
    whole = _parsed(text)
    assert isinstance(whole, tuple) and whole  # refused
    held = NamedInputs(max_bytes=10**8)
    check_input(held, "c", json.dumps(body))
    assert _named(held, text) == whole
    recent = RecentInputs()
    recent.read(json.dumps(body))
    with pytest.raises(InputError) as refused:
        recent.read(text)
    assert tuple(sorted(str(p) for p in refused.value.problems)) == whole
    for name in (None, "c"):
        with pytest.raises(InputError):
            Validator(recorder=MemoryRecorder()).check(text, conversation=name)
    with pytest.raises(ValueError, match="not a check input"):
        sent.split(text.encode())


def test_tiny_messages_are_counted_by_the_entry_each_holds() -> None:
    """Ten thousand messages of a few bytes hold a transcript entry each: counted by :data:`PER_MESSAGE`, not by
    their bytes alone (which counted them at under half of what they hold)."""
    from validator.inputs.held import PER_CONVERSATION, PER_MESSAGE, RecentInputs

    text = _text([{"role": "user", "content": "x"}] * 10_000, "")
    held = NamedInputs(max_bytes=10**9)
    check_input(held, "c", text)
    kept = held.latest("", "c")
    assert kept is not None and held._bytes == 3 * len(kept.messages) + PER_MESSAGE * 10_000 + PER_CONVERSATION
    small = NamedInputs(max_bytes=3 * len(kept.messages) + PER_CONVERSATION)
    assert check_input(small, "c", text) == CheckInput.from_json(text)
    assert len(small) == 0  # its bytes fit, its entries do not
    recent = RecentInputs(max_bytes=3 * len(kept.messages) + 10_000)  # its bytes fit, its entries do not
    recent.read(text)
    assert len(recent) == 0
