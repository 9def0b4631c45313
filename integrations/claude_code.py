"""Claude Code: the ``PreToolUse`` hook, as a thin translation of the host lifecycle (no SDK imported).

Claude Code runs a command hook before each tool call it matches, with JSON on standard input
(``session_id``, ``transcript_path``, ``cwd``, ``permission_mode``, ``hook_event_name``, ``tool_name``,
``tool_input``, ``tool_use_id``), and reads the decision from standard output::

    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow" | "deny" | "ask",
                            "permissionDecisionReason": "..."}}

- **The conversation** is the session's JSONL transcript, read by :mod:`validator.inputs.claude_code`
  (``user`` and ``assistant`` lines; tool results and Claude Code's own lines are never the user's words).
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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from validator.integrations._lifecycle import GuardedCall, ToolCallGuard

from validator.engine import BaseValidator
from validator.exceptions import FieldProblem, InputError
from validator.inputs.claude_code import (
    CLAUDE_CODE_AUTHOR,
    TRANSCRIPT_WAIT,
    find_call,
    read_session,
    transcript_from_claude_code,
    up_to_call,
    used_ids,
)
from validator.inputs.transcript import Transcript
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
        at = rest.find("__", at + 1)  # every split, overlapping ones too: "a___b" is a_ + _b and a + b
    return max(readings, key=lambda name: _strictness(policy, name), default=tool_name)


def _strictness(policy: Policy, name: str) -> int:
    tool = policy.for_tool(name)
    return 0 if tool.exempt else 2 if tool.risk == "dangerous" else 1


@dataclass(frozen=True, slots=True)
class HookCall:
    """One ``PreToolUse`` hook input, read strictly (:func:`hook_call`)."""

    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    """Empty when the host sent none: the call is then the transcript's one unanswered call of this tool with
    these arguments (:func:`~validator.inputs.claude_code.find_call`)."""
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
    for name in ("tool_name", "transcript_path"):
        value = data.get(name)
        if not isinstance(value, str) or not value:
            problems.append(FieldProblem(name, "must be a non-empty string"))
    if not isinstance(data.get("tool_use_id", ""), str):  # missing or empty: found in the transcript by its line
        problems.append(FieldProblem("tool_use_id", "must be a string"))
    if not isinstance(data.get("tool_input", {}), Mapping):
        problems.append(FieldProblem("tool_input", "must be an object"))
    session = data.get("session_id", "")
    if not isinstance(session, str):
        problems.append(FieldProblem("session_id", "must be a string"))
    if problems:
        raise InputError(problems, source="hook input")
    return HookCall(
        data["tool_name"],
        dict(data.get("tool_input") or {}),
        data.get("tool_use_id", ""),
        data["transcript_path"],
        session,
    )


def permission(verdict: Verdict) -> tuple[str, str]:
    """``(permissionDecision, permissionDecisionReason)`` of a verdict."""
    decision = DECISIONS[verdict.decision]
    if decision == "allow":
        return decision, verdict.reasoning
    if decision == "ask":  # shown to the person: the call, where its values came from, what was not clear
        return decision, f"The action validator asks you: {verdict.question_for_user()}"
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
    data: Any,
    guard: ToolCallGuard,
    *,
    transcript: Transcript | None = None,
    user_id: str | None = None,
    wait: float = TRANSCRIPT_WAIT,
) -> tuple[GuardedCall, Verdict]:
    """The call a hook input makes and its verdict (an ``ask_user`` one stays open: the person answers it,
    :meth:`ToolCallGuard.settle`). ``wait``: seconds the session's transcript may take to hold the call (the
    host may run the hook before it wrote the call's line; past it the call is refused)."""
    call = hook_call(data)
    policy = guard.validator.policy
    tool = policy_tool(call.tool_name, policy)

    # a host that sent no tool_use_id: the call is the transcript's one unanswered call with these arguments
    call_id = call.tool_use_id or find_call(
        call.transcript_path, call.tool_name, call.tool_input, transcript=transcript, wait=wait
    )
    whole = transcript if transcript is not None else read_session(call.transcript_path, call_id, wait=wait)
    messages = up_to_call(whole, call_id)
    started = guard.start(
        tool,
        call.tool_input,
        call_id=call_id,
        messages=messages,
        user_id=user_id,
        used=used_ids(whole, call_id),
        find_evidence=True,
    )
    verdict = guard.decide(started)
    if verdict.decision is Decision.ASK_USER:
        return started, verdict
    return started, guard.outcome(started, verdict).verdict


def hook_answer(data: Any, guard: ToolCallGuard, *, user_id: str | None = None, allow: bool = True) -> dict[str, Any]:
    """The hook's answer to one input; a bad input or any failure is a ``deny`` naming the problem. With
    ``allow=False`` (``validator hook claude-code --no-allow``) an approval is no answer (``{}``): the hook only
    denies and asks, and Claude Code's own permissions decide the rest (its prompt, its rules, its mode)."""
    try:
        verdict = decide(data, guard, user_id=user_id)
    except Exception as exc:  # a bad input, or our own failure: the call never runs on it
        return hook_output("deny", failure_reason(exc))
    decision, reason = permission(verdict)
    if decision == "allow" and not allow:
        return {}
    return hook_output(decision, reason)


def validator_guard(validator: BaseValidator) -> ToolCallGuard:
    """The lifecycle a Claude Code hook decides through."""
    return ToolCallGuard(validator)
