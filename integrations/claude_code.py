"""Claude Code: the ``PreToolUse`` hook, as a thin translation of the host lifecycle (no SDK imported).

Claude Code runs a command hook before each tool call it matches, with JSON on standard input
(``session_id``, ``transcript_path``, ``cwd``, ``permission_mode``, ``hook_event_name``, ``tool_name``,
``tool_input``, ``tool_use_id``), and reads the decision from standard output::

    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow" | "deny" | "ask",
                            "permissionDecisionReason": "..."}}

- **The conversation** is the session's JSONL transcript (:func:`transcript_from_claude_code`): ``user``
  and ``assistant`` lines, each holding an Anthropic Messages API message; every other line type is
  skipped. Tool results arrive as ``user`` lines holding ``tool_result`` blocks and are the tool's words,
  never the user's, and neither is text in a line that holds tool results; a ``user`` line Claude Code
  wrote itself (``isMeta``, a compaction summary) is not the user's either. Lines of a subagent
  (``isSidechain``) are not this conversation.
- **No justification argument**: Claude Code's built-in and MCP tools have schemas the host cannot
  extend, so each call is checked with ``find_evidence``: the validator reads the user's own words for
  the request itself, and the verdict says the evidence was found (``findings.evidence == "found"``).
- **The tool's policy**: MCP tools are named ``mcp__<server>__<tool>``. A policy entry naming the full name
  applies; else an entry for ``<tool>`` applies to it on any server (:func:`policy_tool`).
- **The answer**: approve → ``allow``; ask_user → ``ask`` (Claude Code asks the person; the reason is
  shown to them); block → ``deny`` (the reason, the refusal text with its code and next step, is shown to
  the model). Any failure, ours included, answers ``deny``: :func:`hook_answer` never raises.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from validator.integrations._lifecycle import GuardedCall, ToolCallGuard

from validator.engine import BaseValidator
from validator.exceptions import FieldProblem, InputError
from validator.inputs.anthropic import convert_grouped
from validator.inputs.transcript import Message, Transcript
from validator.policy import Policy
from validator.verdict import Decision, Verdict

__all__ = [
    "CLAUDE_CODE_AUTHOR",
    "HookCall",
    "decide",
    "decide_call",
    "failure_reason",
    "hook_answer",
    "hook_call",
    "hook_output",
    "permission",
    "policy_tool",
    "read_session",
    "transcript_from_claude_code",
]

CLAUDE_CODE_AUTHOR = "claude-code"
"""The author of ``user`` lines Claude Code wrote itself (``isMeta``, compaction summaries): not the user."""
MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
TRANSCRIPT_WAIT = 5.0
"""Seconds a hook waits for the session's transcript to hold the call it decides."""
DECISIONS = {Decision.APPROVE: "allow", Decision.ASK_USER: "ask", Decision.BLOCK: "deny"}


def policy_tool(tool_name: str, policy: Policy) -> str:
    """The policy's name for a Claude Code tool: the full name when the policy names it, else the tool's own
    name of an MCP tool (``mcp__<server>__send_money`` → ``send_money``) when the policy names that, else the
    full name (the policy's defaults apply).

    A server's name and a tool's may both hold ``__``, so ``mcp__a__b__c`` reads as tool ``b__c`` of server
    ``a`` or tool ``c`` of server ``a__b``. Each reading gets its policy (an unnamed tool: the defaults), and
    the strictest wins: a server cannot name its payment tool ``x__read_inbox`` to be read as the exempt one.
    """
    if tool_name in policy.tools or not tool_name.startswith("mcp__"):
        return tool_name
    rest = tool_name[len("mcp__") :]
    readings: list[str] = []
    at = rest.find("__")
    while at != -1:
        tool = rest[at + 2 :]
        readings.append(tool if tool in policy.tools else tool_name)
        at = rest.find("__", at + 2)
    return max(readings, key=lambda name: _strictness(policy, name), default=tool_name)


def _strictness(policy: Policy, name: str) -> int:
    tool = policy.for_tool(name)
    return 0 if tool.exempt else 2 if tool.risk == "dangerous" else 1


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


def read_session(path: str, call_id: str, *, wait: float = TRANSCRIPT_WAIT) -> Transcript:
    """The session's transcript once it holds the call (Claude Code may run the hook before it has written the
    call's line; lines are appended in order, so once the call is there, everything before it is too).

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
        if transcript is not None and _makes(transcript, call_id):
            return transcript
        if time.monotonic() >= deadline:
            problem = "does not exist" if transcript is None else f"does not hold the call {call_id!r}"
            raise InputError([FieldProblem("transcript_path", f"{problem} after {wait:g} s")], source="hook input")
        time.sleep(0.02)


@dataclass(frozen=True, slots=True)
class HookCall:
    """One ``PreToolUse`` hook input, read strictly (:func:`hook_call`)."""

    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    transcript_path: str
    session_id: str


def hook_call(data: Any) -> HookCall:
    """The hook input, or an :class:`InputError` naming each field that is missing or of the wrong type."""
    if not isinstance(data, Mapping):
        raise InputError([FieldProblem("", f"hook input must be a JSON object, got {type(data).__name__}")])
    problems: list[FieldProblem] = []
    event = data.get("hook_event_name")
    if event is not None and event != "PreToolUse":
        problems.append(FieldProblem("hook_event_name", f"must be PreToolUse, got {event!r}"))
    for name in ("tool_name", "tool_use_id", "transcript_path"):
        value = data.get(name)
        if not isinstance(value, str) or not value:
            problems.append(FieldProblem(name, "must be a non-empty string"))
    if not isinstance(data.get("tool_input", {}), Mapping):
        problems.append(FieldProblem("tool_input", "must be an object"))
    session = data.get("session_id", "")
    if not isinstance(session, str):
        problems.append(FieldProblem("session_id", "must be a string"))
    if problems:
        raise InputError(problems, source="hook input")
    return HookCall(
        data["tool_name"], dict(data.get("tool_input") or {}), data["tool_use_id"], data["transcript_path"], session
    )


def _used(transcript: Transcript, call_id: str) -> frozenset[str]:
    """The call id as used before this call: answered already, or made by more than one assistant message."""
    answered = transcript.answered(call_id)
    making = sum(1 for m in transcript if m.role == "assistant" and any(c.id == call_id for c in m.tool_calls))
    return frozenset({call_id}) if answered or making > 1 else frozenset()


def _upto_call(transcript: Transcript, call_id: str) -> Transcript:
    """The conversation up to the assistant message that makes this call (nothing after it counts)."""
    for k in range(len(transcript) - 1, -1, -1):
        if any(c.id == call_id for c in transcript[k].tool_calls):
            return Transcript(transcript.messages[: k + 1]) if k + 1 < len(transcript) else transcript
    return transcript


def permission(verdict: Verdict) -> tuple[str, str]:
    """``(permissionDecision, permissionDecisionReason)`` of a verdict."""
    decision = DECISIONS[verdict.decision]
    if decision == "allow":
        return decision, verdict.reasoning
    if decision == "ask":
        step = f" Next step: {verdict.suggested_next_step}" if verdict.suggested_next_step else ""
        return decision, f"The action validator asks you to confirm `{verdict.tool}`: {verdict.reasoning}{step}"
    return decision, verdict.message_for_agent()


def hook_output(decision: str, reason: str) -> dict[str, Any]:
    """The ``PreToolUse`` answer Claude Code reads (a command hook's stdout, an SDK hook callback's return)."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def failure_reason(exc: Exception) -> str:
    """Why a call the validator could not decide does not run: its input's problems, or our own failure."""
    if isinstance(exc, InputError):
        problems = "; ".join(str(p) for p in exc.problems)
        return f"The action validator could not read this call, so it does not run: {problems}"
    return f"The action validator failed on this call, so it does not run: {type(exc).__name__}: {exc}"


def decide(
    data: Any, guard: ToolCallGuard, *, transcript: Transcript | None = None, user_id: str | None = None
) -> Verdict:
    """The verdict on one hook input (``transcript``: the conversation, when the host has it already)."""
    return decide_call(data, guard, transcript=transcript, user_id=user_id)[1]


def decide_call(
    data: Any, guard: ToolCallGuard, *, transcript: Transcript | None = None, user_id: str | None = None
) -> tuple[GuardedCall, Verdict]:
    """The call a hook input makes and its verdict (an ``ask_user`` one stays open: the person answers it,
    :meth:`ToolCallGuard.settle`)."""
    call = hook_call(data)
    policy = guard.validator.policy
    tool = policy_tool(call.tool_name, policy)

    whole = transcript if transcript is not None else read_session(call.transcript_path, call.tool_use_id)
    messages = _upto_call(whole, call.tool_use_id)
    started = guard.start(
        tool,
        call.tool_input,
        call_id=call.tool_use_id,
        messages=messages,
        user_id=user_id,
        used=_used(whole, call.tool_use_id),
        find_evidence=True,
    )
    verdict = guard.decide(started)
    if verdict.decision is Decision.ASK_USER:
        return started, verdict
    return started, guard.outcome(started, verdict).verdict


def hook_answer(data: Any, guard: ToolCallGuard, *, user_id: str | None = None) -> dict[str, Any]:
    """The hook's answer to one input; a bad input or any failure is a ``deny`` naming the problem."""
    try:
        verdict = decide(data, guard, user_id=user_id)
    except Exception as exc:  # a bad input, or our own failure: the call never runs on it
        return hook_output("deny", failure_reason(exc))
    return hook_output(*permission(verdict))


def validator_guard(validator: BaseValidator) -> ToolCallGuard:
    """The lifecycle a Claude Code hook decides through."""
    return ToolCallGuard(validator)
