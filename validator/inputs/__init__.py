"""Inputs: wire formats to the typed transcript and pending action, parsed once.

- :mod:`.transcript`: :class:`Message`, :class:`ToolCall`, :class:`Transcript` (messages with authors).
- :mod:`.action`: :class:`PendingAction` and the agent's justification.
- :mod:`.checkinput`: the JSON check input (CLI, service) with its limits.
- :mod:`.anthropic`: an Anthropic Messages API ``messages`` list to a transcript.
"""

from validator.inputs.action import (
    AuthorizationEvidence,
    Justification,
    PendingAction,
    QuoteEvidence,
    justification_schema,
    parse_justification,
)
from validator.inputs.anthropic import transcript_from_anthropic
from validator.inputs.checkinput import (
    CheckInput,
    Limits,
    parse_action,
    parse_transcript,
    pending_action,
    read_action,
    read_messages,
)
from validator.inputs.transcript import Message, ToolCall, Transcript, content_text

__all__ = [
    "AuthorizationEvidence",
    "CheckInput",
    "content_text",
    "Justification",
    "justification_schema",
    "Limits",
    "Message",
    "parse_action",
    "parse_justification",
    "parse_transcript",
    "pending_action",
    "PendingAction",
    "QuoteEvidence",
    "read_action",
    "read_messages",
    "ToolCall",
    "Transcript",
    "transcript_from_anthropic",
]
