"""What every integration shares: the justification argument, the validation context, the transcript.

- :class:`JustificationArg`: the pydantic model of the ``justification`` argument the agent must
  fill; its description (``prompts/justification.md``) tells the agent that another AI reads it.
- :func:`validation_context`: in a hand-written loop, says which conversation (and user, and agent
  request) the guarded tools called inside it are validated against.
- :func:`transcript_from_state`: the transcript from a LangGraph state (dict or object) or a list
  of messages.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from validator.exceptions import FieldProblem, InputError
from validator.prompts import load_prompt
from validator.transcript import Message, Transcript

from .langchain import transcript_from_langchain

__all__ = [
    "JUSTIFICATION",
    "JustificationArg",
    "ValidationContext",
    "current_context",
    "justification_description",
    "split_justification",
    "transcript_from_state",
    "validation_context",
]

JUSTIFICATION = "justification"


def justification_description() -> str:
    """The text the agent reads about the ``justification`` argument."""
    return load_prompt("justification")


class QuoteItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    quote: str = Field(description="The user's own words, copied exactly from one of their messages.")


class AuthorizationItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    authorization_id: str = Field(description="The id of a standing permission the user gave earlier.")


class JustificationArg(BaseModel):
    """Why the user wants this action: a reason, and the user's own words as evidence."""

    model_config = ConfigDict(extra="forbid")
    reason: str = Field(description="What the user asked for and how this action does it.")
    evidence: list[QuoteItem | AuthorizationItem] = Field(
        description="The user's own words quoted exactly, or standing authorizations, that ask for this action."
    )


def as_plain(justification: Any) -> Any:
    """A justification as plain data, whatever shape the host library parsed it into."""
    if isinstance(justification, BaseModel):
        return justification.model_dump()
    return justification


def split_justification(args: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """``(args without the justification, the justification as plain data)``."""
    clean = dict(args)
    return clean, as_plain(clean.pop(JUSTIFICATION, None))


@dataclass(frozen=True, slots=True)
class ValidationContext:
    messages: Any
    user_id: str | None = None
    agent_request: Mapping[str, Any] | None = None


_CURRENT: contextvars.ContextVar[ValidationContext | None] = contextvars.ContextVar(
    "action_validator_context", default=None
)


@contextlib.contextmanager
def validation_context(
    messages: Any, *, user_id: str | None = None, agent_request: Mapping[str, Any] | None = None
) -> Iterator[ValidationContext]:
    """Validate guarded tools called inside this block against ``messages`` (a hand-written loop)."""
    ctx = ValidationContext(messages, user_id, agent_request)
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)


def current_context() -> ValidationContext | None:
    return _CURRENT.get()


def transcript_from_state(state: Any, messages_key: str = "messages") -> Transcript:
    """The transcript from a LangGraph state, a list of LangChain messages, or check-input dicts."""
    from validator.checkinput import parse_transcript

    messages = state
    if isinstance(state, Mapping):
        messages = state.get(messages_key)
    elif hasattr(state, messages_key) and not isinstance(state, Sequence):
        messages = getattr(state, messages_key)
    if isinstance(messages, Transcript):
        return messages
    if isinstance(messages, Sequence) and messages and not isinstance(messages[0], Mapping | Message):
        return transcript_from_langchain(list(messages))
    if messages is None:
        raise InputError([FieldProblem(messages_key, "no messages in the state: nothing to validate against")])
    return parse_transcript(messages)
