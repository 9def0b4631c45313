"""Validating the tool calls of a raw Anthropic loop: three lines in a hand-written agent.

Typical usage::

    tools = prepare_tools(my_tools, policy=policy)            # once: justification + validator tools
    response = client.messages.create(**request)              # request["tools"] is that list
    checked = check_tool_uses(response, request, validator)
    results = [run_tool(use) for use in checked.allowed] + checked.refused

``allowed`` holds the approved ``tool_use`` blocks with ``justification`` stripped from their input;
``refused`` holds a ``tool_result`` block (``is_error: true``, with the reasoning and the suggested
next step) for every other call, so the next user turn answers every call. With an Anthropic judge
the validator shares ``request``'s prompt cache. Either order works: most loops append the response
to ``request["messages"]`` before checking it, and a last assistant message holding exactly the
response's tool uses is read as the response itself, not as an earlier use of their ids.
:func:`acheck_tool_uses` is the async twin, for ``AsyncAnthropic`` loops.

A call the validator escalates is refused until the user answers: ``checked.asked`` holds its approval
request (LangChain's per-call shape, the validator's reasons under ``action_validator``), and
``checked = checked.answer({tool_use_id: {"type": "approve"}})`` settles it (approve, edit, reject, read
strictly; an edit is validated again as a new call, and the block that runs carries the edit).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from validator.integrations._host import split_justification
from validator.integrations._lifecycle import GuardedCall, ToolCallGuard

from validator.engine import BaseValidator
from validator.exceptions import InputError, UsageError
from validator.inputs.anthropic import conversations, transcript_from_anthropic
from validator.inputs.conversations import Conversations
from validator.inputs.transcript import Transcript
from validator.shells import Io, Steps, arun, run
from validator.verdict import Decision, Verdict

__all__ = ["CheckedToolUses", "acheck_tool_uses", "check_tool_uses"]


@dataclass(frozen=True)
class CheckedToolUses:
    """The outcome for every ``tool_use`` block of one response.

    ``asked`` holds the approval request (LangChain's per-call shape, the validator's reasons under
    ``action_validator``) of each call the validator escalated to the user; such a call stays in
    ``refused`` until :meth:`answer` settles it, so a loop that never asks still answers every call.
    """

    allowed: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    asked: list[dict[str, Any]] = field(default_factory=list)
    _waiting: dict[str, tuple[dict[str, Any], GuardedCall]] = field(default_factory=dict, repr=False)
    _guard: ToolCallGuard | None = field(default=None, repr=False)

    def answer(self, answers: Any) -> CheckedToolUses:
        """The outcome once the user answered the asked calls: ``{tool_use_id: decision}``, or
        ``{"decisions": [...]}`` in the order of ``asked`` (approve, edit, reject; read strictly, an edit
        validated again as a new call). An asked call the answers do not name stays refused."""
        return run(self._answering(answers))

    async def aanswer(self, answers: Any) -> CheckedToolUses:
        """Async twin of :meth:`answer`."""
        return await arun(self._answering(answers))

    def _answering(self, answers: Any) -> Steps[CheckedToolUses]:
        out, settled = self._rest()
        for i, (call_id, (block, call)) in enumerate(self._waiting.items()):
            guard, verdict = self._guard, self.verdicts[call_id]
            if guard is None or not _answers(answers, call_id):
                settled[call_id] = verdict
                continue
            outcome = yield from Io(
                partial(guard.settle, call, verdict, answers, index=i),
                partial(guard.asettle, call, verdict, answers, index=i),
            )
            _add(out, {**block, "input": outcome.args}, outcome.verdict)
        return _merged(out, self, settled)

    def _rest(self) -> tuple[CheckedToolUses, dict[str, Verdict]]:
        refused = [r for r in self.refused if r.get("tool_use_id") not in self._waiting]
        return CheckedToolUses(list(self.allowed), refused, {}), {}


def _answers(answers: Any, call_id: str) -> bool:
    """Whether ``answers`` speaks about this call (by its id, or as a list of decisions in order)."""
    return isinstance(answers, Mapping) and (call_id in answers or "decisions" in answers)


def _merged(out: CheckedToolUses, before: CheckedToolUses, unanswered: dict[str, Verdict]) -> CheckedToolUses:
    verdicts = {**before.verdicts, **out.verdicts}
    waiting = {k: v for k, v in before._waiting.items() if k in unanswered}
    refused = [*out.refused, *(r for r in before.refused if r.get("tool_use_id") in unanswered)]
    asked = [a for a in before.asked if a.get("tool_call_id") in unanswered]
    return CheckedToolUses(out.allowed, refused, verdicts, asked, waiting, before._guard)


def _plain(response: Any) -> dict[str, Any]:
    if isinstance(response, Mapping):
        return dict(response)
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        data = dump(mode="json", exclude_none=True)
        if isinstance(data, dict):
            return data
    raise UsageError(f"expected a Messages API response, got {type(response).__name__}")


def _used_ids(messages: Any) -> set[str]:
    """Tool use ids the request's history already holds."""
    found: set[str] = set()
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, Mapping) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, Mapping) and block.get("type") in ("tool_use", "server_tool_use", "tool_result"):
                found.add(str(block.get("id") or block.get("tool_use_id")))
    return found


def _uses(content: Any) -> list[str]:
    blocks = content if isinstance(content, list) else []
    return [str(b.get("id")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use"]


@dataclass(frozen=True)
class _Prepared:
    content: list[dict[str, Any]]
    used: set[str]
    transcript: Transcript | None
    problem: str
    request: Mapping[str, Any]


def _prepare(response: Any, request: Mapping[str, Any], cache: Conversations[Any]) -> _Prepared:
    """The response's blocks, the ids the history already used, and the transcript to check them in."""
    reply = _plain(response)
    content = [dict(b) for b in reply.get("content", []) if isinstance(b, Mapping)]
    earlier = list(request.get("messages") or [])
    last = earlier[-1] if earlier else None
    if (
        isinstance(last, Mapping)
        and last.get("role") == "assistant"
        and _uses(content)
        and _uses(last.get("content")) == _uses(content)
    ):  # the loop appended the response before checking it: that message is the response
        earlier = earlier[:-1]
        request = {**request, "messages": earlier}
    history = [*earlier, {"role": "assistant", "content": content}]
    try:
        transcript = transcript_from_anthropic(history, system=request.get("system"), cache=cache)
        problem = ""
    except InputError as exc:  # every call is refused, none crashes the loop
        transcript, problem = None, "; ".join(map(str, exc.problems))[:500]
    uses = _uses(content)
    twice = {i for i in uses if uses.count(i) > 1}  # two calls under one id: neither can be told apart
    return _Prepared(content, _used_ids(earlier) | twice, transcript, problem, request)


def _start(guard: ToolCallGuard, p: _Prepared, block: Mapping[str, Any], user_id: str | None) -> GuardedCall:
    transcript = p.transcript

    def unreadable() -> Transcript:
        raise ValueError(p.problem)

    return guard.start(
        str(block.get("name")),
        block.get("input") if isinstance(block.get("input"), Mapping) else {},
        call_id=str(block.get("id")),
        messages=transcript if transcript is not None else unreadable,
        user_id=user_id,
        agent_request=p.request,
        used=p.used,
    )


def check_tool_uses(
    response: Any, request: Mapping[str, Any], validator: BaseValidator, *, user_id: str | None = None
) -> CheckedToolUses:
    """Validate each ``tool_use`` of ``response`` (produced by ``request``); see the module docstring."""
    return run(_checking(response, request, validator, user_id))


async def acheck_tool_uses(
    response: Any, request: Mapping[str, Any], validator: BaseValidator, *, user_id: str | None = None
) -> CheckedToolUses:
    """Async twin of :func:`check_tool_uses` (the validator's async path: no blocked event loop)."""
    return await arun(_checking(response, request, validator, user_id))


def _checking(
    response: Any, request: Mapping[str, Any], validator: BaseValidator, user_id: str | None
) -> Steps[CheckedToolUses]:
    p = _prepare(response, request, validator.transcripts.of("anthropic", conversations))
    guard = ToolCallGuard(validator)
    out = CheckedToolUses(_guard=guard)
    for block in p.content:
        if block.get("type") == "tool_use":
            call = _start(guard, p, block, user_id)
            _add(out, block, (yield from Io(partial(guard.decide, call), partial(guard.adecide, call))), call)
    return out


def _add(out: CheckedToolUses, block: Mapping[str, Any], verdict: Verdict, call: GuardedCall | None = None) -> None:
    """One call's outcome: its approved block (justification stripped), or the refusal's tool_result (and,
    for an escalated call, its approval request)."""
    args, _ = split_justification(block.get("input") or {})
    call_id = str(block.get("id"))
    out.verdicts[call_id] = verdict
    if verdict.approved:
        out.allowed.append({**block, "input": args})
        return
    out.refused.append(
        {"type": "tool_result", "tool_use_id": block["id"], "is_error": True, "content": verdict.message_for_agent()}
    )
    if call is not None and out._guard is not None and verdict.decision is Decision.ASK_USER:
        out.asked.append(out._guard.request(call, verdict))
        out._waiting[call_id] = (dict(block), call)
