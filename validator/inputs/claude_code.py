"""Claude Code's session transcript (its JSONL lines) as a validator transcript: plain data, no SDK.

``user`` and ``assistant`` lines each hold an Anthropic Messages API message; every other line type is
skipped. Tool results arrive as ``user`` lines holding ``tool_result`` blocks and are the tool's words,
never the user's, and neither is text in a line that holds tool results; a ``user`` line Claude Code
wrote itself (``isMeta``, a compaction summary) is not the user's either. Lines of a subagent
(``isSidechain``) are not this conversation.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from validator.exceptions import FieldProblem, InputError
from validator.inputs.anthropic import convert_grouped
from validator.inputs.transcript import Message, Transcript

__all__ = [
    "CLAUDE_CODE_AUTHOR",
    "find_call",
    "pending_call",
    "read_session",
    "transcript_from_claude_code",
    "up_to_call",
    "used_ids",
]

CLAUDE_CODE_AUTHOR = "claude-code"
"""The author of ``user`` lines Claude Code wrote itself (``isMeta``, compaction summaries): not the user."""
MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
TRANSCRIPT_WAIT = 5.0
"""Seconds a hook waits for the session's transcript to hold the call it decides."""


def _lines(source: Iterable[str | bytes]) -> list[tuple[int, dict[str, Any]]]:
    """The conversation's ``user`` and ``assistant`` records, with their line numbers."""
    records: list[tuple[int, dict[str, Any]]] = []
    problems: list[FieldProblem] = []
    for n, line in enumerate(source, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            problems.append(FieldProblem(f"line {n}", f"not valid JSON: {exc}"))
            continue
        if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
            continue
        if record.get("isSidechain") is True:
            continue
        if not isinstance(record.get("message"), dict):
            problems.append(FieldProblem(f"line {n}.message", "must be an object"))
            continue
        records.append((n, record))
    if problems:
        raise InputError(problems, source="claude code transcript")
    return records


def _merged(records: list[tuple[int, dict[str, Any]]]) -> list[tuple[dict[str, Any], bool]]:
    """Anthropic messages, each with whether Claude Code wrote it (not the user). One assistant message
    written as several lines (one content block each, the same ``message.id``) is one message again."""
    out: list[tuple[dict[str, Any], bool]] = []
    last_id: Any = None
    for _, record in records:
        message = record["message"]
        content = message.get("content", "")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        role = message.get("role", record["type"])
        if role == "assistant" and out and out[-1][0]["role"] == "assistant" and message.get("id") == last_id:
            out[-1][0]["content"].extend(blocks)
            continue
        last_id = message.get("id") if role == "assistant" else None
        # Claude Code's own lines, and text it sends along with tool results ("Tool loaded."), are not typed by
        # the user: only a user line that answers no tool speaks for the user
        answers = any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)
        written = record.get("isMeta") is True or record.get("isCompactSummary") is True or answers
        out.append(({"role": role, "content": blocks}, written))
    return out


def transcript_from_claude_code(source: Iterable[str | bytes]) -> Transcript:
    """A validator transcript from a Claude Code session transcript (its JSONL lines); see the module docstring.

    Raises:
        InputError: naming each line that is not JSON, or whose ``message`` is not an object.
    """
    merged = _merged(_lines(source))
    groups = convert_grouped([m for m, _ in merged])
    messages: list[Message] = []
    for (_, written), group in zip(merged, groups, strict=True):
        for m in group:
            if written and m.role == "user":
                m = Message(role="user", content=m.content, author=CLAUDE_CODE_AUTHOR)
            messages.append(m)
    return Transcript(messages)


def _read_transcript(path: str) -> Transcript:
    file = Path(path)
    if file.stat().st_size > MAX_TRANSCRIPT_BYTES:
        raise InputError([FieldProblem("transcript_path", f"is over {MAX_TRANSCRIPT_BYTES:,} bytes")])
    with file.open("rb") as fh:
        return transcript_from_claude_code(fh)


def _makes(transcript: Transcript, call_id: str) -> bool:
    return any(c.id == call_id for m in transcript if m.role == "assistant" for c in m.tool_calls)


def pending_call(transcript: Transcript, tool: str, args: Mapping[str, Any]) -> str | None:
    """The id of the one call of ``tool`` with exactly ``args`` that no tool message answers yet, or None when
    there is none; an :class:`InputError` when there are several (which one the hook asks about is unknown)."""
    found = [
        c.id
        for m in transcript
        if m.role == "assistant"
        for c in m.tool_calls
        if c.name == tool and dict(c.args) == dict(args) and not transcript.answered(c.id)
    ]
    if len(found) > 1:
        problem = f"is missing, and {len(found)} unanswered calls of {tool} with these arguments match"
        raise InputError([FieldProblem("tool_use_id", problem)], source="hook input")
    return found[0] if found else None


def find_call(
    path: str,
    tool: str,
    args: Mapping[str, Any],
    *,
    wait: float | None = None,
    transcript: Transcript | None = None,
) -> str:
    """The id of the call a hook input without ``tool_use_id`` asks about: the session transcript's one unanswered
    call of ``tool`` with exactly ``args`` (waiting, as :func:`read_session` does, for its line; in ``transcript``
    when the host has it already, with no wait)."""
    wait = TRANSCRIPT_WAIT if wait is None else wait
    deadline = time.monotonic() + (0 if transcript is not None else wait)
    while True:
        try:
            found = pending_call(transcript if transcript is not None else _read_transcript(path), tool, args)
        except FileNotFoundError:
            found = None
        except InputError:
            if transcript is not None or time.monotonic() >= deadline:
                raise
            found = None  # created, not yet written whole (an empty file, a line half written): read it again
        if found is not None:
            return found
        if time.monotonic() >= deadline:
            problem = f"is missing, and the transcript holds no unanswered call of {tool} with these arguments"
            raise InputError([FieldProblem("tool_use_id", f"{problem} after {wait:g} s")], source="hook input")
        time.sleep(0.02)


def read_session(path: str, call_id: str, *, wait: float = TRANSCRIPT_WAIT) -> Transcript:
    """The session's transcript once it holds the call (Claude Code may run the hook before it has written the
    call's line, or with the file created and still empty; lines are appended in order, so once the call is
    there, everything before it is too).

    Raises:
        InputError: the transcript does not hold the call within ``wait`` seconds (the call is refused: it is
            never checked against a history that may lack its last messages).
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            transcript = _read_transcript(path)
        except FileNotFoundError:
            transcript = None
        except InputError:
            if time.monotonic() >= deadline:
                raise
            transcript = None  # created, not yet written whole (an empty file, a line half written): read it again
        if transcript is not None and _makes(transcript, call_id):
            return transcript
        if time.monotonic() >= deadline:
            problem = "does not exist" if transcript is None else f"does not hold the call {call_id!r}"
            raise InputError([FieldProblem("transcript_path", f"{problem} after {wait:g} s")], source="hook input")
        time.sleep(0.02)


def used_ids(transcript: Transcript, call_id: str) -> frozenset[str]:
    """The call id as used before this call: answered already, or made by more than one assistant message."""
    answered = transcript.answered(call_id)
    making = sum(1 for m in transcript if m.role == "assistant" and any(c.id == call_id for c in m.tool_calls))
    return frozenset({call_id}) if answered or making > 1 else frozenset()


def up_to_call(transcript: Transcript, call_id: str) -> Transcript:
    """The conversation up to the assistant message that makes this call (nothing after it counts)."""
    for k in range(len(transcript) - 1, -1, -1):
        if any(c.id == call_id for c in transcript[k].tool_calls):
            return Transcript(transcript.messages[: k + 1]) if k + 1 < len(transcript) else transcript
    return transcript
