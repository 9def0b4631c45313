"""The middleware walks a conversation's messages for a reused call id only when the conversation cannot be read
whole: a conversation that reads (a :class:`Transcript`) has each call id once and every tool answer after its
call, so no message before a call used its id. A property holds the two to each other on conversations with ids
drawn from a few (repeated, missing, answered before their call), then the middleware's refusals are checked."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from validator.integrations.langchain import transcript_from_langchain, used_before

from validator.exceptions import InputError

IDS = ["c1", "c2", "c3", None]

_call = st.fixed_dictionaries({"id": st.sampled_from(IDS), "name": st.just("send_email"), "args": st.just({})})
_message: st.SearchStrategy[BaseMessage] = st.one_of(
    st.just(HumanMessage("Please email ann@acme.example the report.")),
    st.lists(_call, min_size=1, max_size=2).map(lambda calls: AIMessage("", tool_calls=calls)),
    st.sampled_from(["c1", "c2", "c3"]).map(lambda i: ToolMessage("sent", tool_call_id=i, name="send_email")),
    st.just(AIMessage("Done.")),
)


def _reads(messages: list[BaseMessage]) -> bool:
    try:
        transcript_from_langchain(messages)
    except InputError:
        return False
    return True


@settings(max_examples=600, deadline=None)
@given(messages=st.lists(_message, max_size=8), call_id=st.sampled_from(["c1", "c2", "c3"]))
def test_a_conversation_that_reads_whole_used_no_call_id_before_its_call(
    messages: list[BaseMessage], call_id: str
) -> None:
    if used_before(messages, call_id):
        assert not _reads(messages), (messages, call_id)


@settings(max_examples=200, deadline=None)
@given(messages=st.lists(_message, max_size=8), call_id=st.sampled_from(["c1", "c2", "c3"]))
def test_the_middleware_refuses_a_reused_id_first_and_an_unreadable_conversation_after(
    messages: list[BaseMessage], call_id: str
) -> None:
    """What the middleware's start decides matches the walk: a reused id's refusal wherever the messages used the
    id before the call, else the conversation's own (unreadable) or none."""
    from validator.integrations.middleware import ActionValidatorMiddleware

    from validator import Policy, ToolPolicy, Validator

    state: dict[str, Any] = {"messages": messages}
    call = {"id": call_id, "name": "send_email", "args": {"to": "ann@acme.example"}}
    middleware = ActionValidatorMiddleware(Validator(Policy({"send_email": ToolPolicy(targets=("to",))})))
    guarded = middleware._start(call, state, lambda: "u")
    code = guarded.refusal.code.value if guarded.refusal is not None else None
    if used_before(messages, call_id):
        assert code == "TOOL_CALL_ID_REUSED", (messages, call_id, code)
    elif not _reads(messages):
        assert code == "INTERNAL_ERROR" and guarded.transcript is None, (messages, call_id, code)
    else:
        assert code is None and guarded.transcript is not None
