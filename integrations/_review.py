"""Asking the user: LangChain's human-in-the-loop request and decision shapes, with the validator's reasons.

The interrupt carries what LangChain's ``HumanInTheLoopMiddleware`` sends (so the UIs and agent-chat
front ends that render it render ours), with one more key, ``action_validator``: why the validator
asks (code, reasoning, the agent's justification, the gate's findings, the suggested next step).

- **Per call** (LangChain's ``per_call`` mode), :func:`approval_request`:
  ``{"type": "tool_approval", "tool_call_id", "name", "args", "description", "action_validator"}``,
  answered with one decision.
- **Batched** (LangChain's ``batched`` mode), :func:`batched_request`:
  ``{"action_requests": [{"name", "args", "description"}], "review_configs": [{"action_name",
  "allowed_decisions"}], "action_validator": [...]}``, answered with ``{"decisions": [...]}`` in order.

Decisions (:func:`read_review`): ``{"type": "approve"}`` (with ``"remember": {"expires_in_days": N}``
or ``"remember": true`` to grant it from now on), ``{"type": "edit", "edited_action": {"name",
"args"}}``, ``{"type": "reject", "message": "..."}``, ``{"type": "respond", "message": "..."}`` (LangChain's: the
call does not run, and the person's message goes back to the agent as the tool's answer, a success; recorded
as the user's rejection with that message); a ``{"decisions": [...]}`` holding one of them;
``{tool_call_id: decision}`` for several calls; and, as before, ``True`` / ``False`` and
``{"approved": bool, "reason": str}``. Answers are read strictly: a key a shape does not have, a
value of the wrong type, or two shapes at once (``{"type": "reject", "approved": true}``) is a
rejection that says what was unreadable, never an approval; so is anything else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from validator._json import dumps
from validator.exceptions import UsageError
from validator.verdict import Verdict

__all__ = [
    "ALLOWED_DECISIONS",
    "AskConfig",
    "Item",
    "Review",
    "approval_request",
    "ask_configs",
    "batched_request",
    "read_review",
]

ALLOWED_DECISIONS = ["approve", "edit", "reject", "respond"]

Describe = Callable[[Mapping[str, Any], Any, Any], str]
"""LangChain's description factory: ``(tool_call, state, runtime) -> str`` (state and runtime: the host's, or
None where the host has none)."""


@dataclass(frozen=True, slots=True)
class AskConfig:
    """How the person may answer about one tool, with the meaning of LangChain's ``InterruptOnConfig``: the
    decisions offered (any other is a rejection saying so, never an approval) and the description shown (a text,
    or a factory of one; by default the validator's own question). The validator decides *whether* to ask."""

    allowed_decisions: tuple[str, ...] = tuple(ALLOWED_DECISIONS)
    description: str | Describe | None = None


def ask_configs(interrupt_on: Mapping[str, Any] | None) -> dict[str, AskConfig]:
    """LangChain's ``interrupt_on`` (``{tool: True | InterruptOnConfig}``) as :class:`AskConfig` by tool.

    Raises:
        UsageError: ``False`` (the validator, not this table, decides whether to ask: a tool never put to the
            person is the policy's ``ask = "never"``), or a config without a non-empty list of known decisions.
    """
    out: dict[str, AskConfig] = {}
    for tool, config in (interrupt_on or {}).items():
        if config is True:
            out[tool] = AskConfig()
            continue
        if not isinstance(config, Mapping):
            raise UsageError(
                f"interrupt_on[{tool!r}] must be True or a config with allowed_decisions (a tool the person is never "
                f"asked about is the policy's ask = 'never'), got {config!r}"
            )
        allowed = config.get("allowed_decisions")
        unknown = sorted(set(allowed or ()) - set(ALLOWED_DECISIONS)) if isinstance(allowed, list | tuple) else None
        if not allowed or unknown is None or unknown or set(config) - {"allowed_decisions", "description"}:
            raise UsageError(
                f"interrupt_on[{tool!r}] needs allowed_decisions, a non-empty list of {', '.join(ALLOWED_DECISIONS)}"
                f" (and optionally a description), got {dict(config)!r}"
            )
        describe = config.get("description")
        if describe is not None and not (isinstance(describe, str) or callable(describe)):
            raise UsageError(f"interrupt_on[{tool!r}].description must be text or a callable, got {describe!r}")
        out[tool] = AskConfig(tuple(dict.fromkeys(allowed)), describe)
    return out


@dataclass(frozen=True, slots=True)
class Review:
    """The user's decision on one call."""

    approved: bool
    reason: str | None = None
    """A rejection's message, or what made the answer unreadable."""
    edited_args: dict[str, Any] | None = None
    """An edit: the arguments the user wants instead (the call runs with them)."""
    remember: Mapping[str, Any] | None = None
    """An approval to keep: the scope of the standing authorization to create (``{}``: the defaults)."""
    unreadable: bool = False
    response: str | None = None
    """A ``respond`` decision: the person's message, which the agent reads as the tool's answer (the call does
    not run)."""

    @property
    def kind(self) -> str | None:
        """Which of LangChain's decisions this is (None: an unreadable answer, a rejection already)."""
        if self.unreadable:
            return None
        if self.response is not None:
            return "respond"
        if self.edited_args is not None:
            return "edit"
        return "approve" if self.approved else "reject"


def _why(verdict: Verdict, justification: Any) -> dict[str, Any]:
    return {
        "code": verdict.code.value,
        "decision": verdict.decision.value,
        "reasoning": verdict.reasoning,
        "question": verdict.question_for_user(),
        "confidence": verdict.confidence,
        "suggested_next_step": verdict.suggested_next_step,
        "justification": justification,
        "findings": verdict.to_dict().get("findings"),
    }


def description(tool: str, args: Mapping[str, Any], verdict: Verdict) -> str:
    """What the person asked reads: the call, where its values came from and what was not clear, in plain words
    (the grammar's terms stay in ``reasoning``, beside it in the interrupt's value)."""
    return f"{verdict.question_for_user()}\nArguments: {dumps(dict(args), default=str)}"


class Item(NamedTuple):
    """One call put to the person."""

    call_id: str
    tool: str
    args: Mapping[str, Any]
    verdict: Verdict
    justification: Any
    config: AskConfig
    host: tuple[Any, Any] = (None, None)
    """The host's state and runtime, for a description factory (None where the host has none)."""

    def description(self) -> str:
        """What the person reads: the tool's configured description (a text, or its factory's), else the
        validator's own question."""
        described = self.config.description
        if described is None:
            return description(self.tool, self.args, self.verdict)
        if isinstance(described, str):
            return described
        state, runtime = self.host
        return str(described({"name": self.tool, "args": dict(self.args), "id": self.call_id}, state, runtime))


def approval_request(item: Item) -> dict[str, Any]:
    """The per-call interrupt value: LangChain's ``ToolApprovalRequest``, the decisions offered, and the
    validator's reasons."""
    return {
        "type": "tool_approval",
        "tool_call_id": item.call_id,
        "name": item.tool,
        "args": dict(item.args),
        "description": item.description(),
        "allowed_decisions": list(item.config.allowed_decisions),
        "action_validator": _why(item.verdict, item.justification),
    }


def batched_request(items: Sequence[Item]) -> dict[str, Any]:
    """The batched interrupt value: LangChain's ``HITLRequest`` for the items, each tool's decisions in its review
    config, and the validator's reasons in the same order."""
    configs = {item.tool: item.config for item in items}
    return {
        "action_requests": [
            {"name": item.tool, "args": dict(item.args), "description": item.description()} for item in items
        ],
        "review_configs": [
            {"action_name": tool, "allowed_decisions": list(c.allowed_decisions)} for tool, c in configs.items()
        ],
        "action_validator": [
            {"tool_call_id": item.call_id, **_why(item.verdict, item.justification)} for item in items
        ],
    }


def _unreadable(answer: Any, why: str) -> Review:
    return Review(
        False, f"the answer {str(answer)[:200]!r} could not be read ({why}): treated as a rejection", unreadable=True
    )


_KEYS: dict[str, frozenset[str]] = {
    "approve": frozenset({"type", "remember", "message"}),
    "reject": frozenset({"type", "message"}),
    "edit": frozenset({"type", "edited_action", "message"}),
    "respond": frozenset({"type", "message"}),
    "legacy": frozenset({"approved", "reason"}),
}
"""The keys each decision shape may have; any other key makes the answer unreadable."""


def _shape(answer: Mapping[str, Any]) -> str | None:
    """Which decision shape a mapping is, or None when it is none or several at once."""
    if "type" in answer and "approved" in answer:
        return None  # {"type": "reject", "approved": true}: contradictory, whatever the values say
    if "approved" in answer:
        return "legacy"
    kind = answer.get("type")
    return kind if isinstance(kind, str) and kind in _KEYS and kind != "legacy" else None


def read_review(
    answer: Any, *, call_id: str, tool: str, index: int = 0, allowed: Sequence[str] = ALLOWED_DECISIONS
) -> Review:
    """The user's decision on call ``call_id`` (the ``index``-th of a batched request) of ``tool``; a decision
    ``allowed`` does not hold is a rejection that says so."""
    review = _read(answer, call_id=call_id, tool=tool, index=index)
    kind = review.kind
    if kind is not None and kind not in allowed:
        why = f"the decision {kind!r} is not offered for {tool} (offered: {', '.join(allowed)})"
        return _unreadable(answer, why)
    return review


def _read(answer: Any, *, call_id: str, tool: str, index: int) -> Review:
    if isinstance(answer, Mapping) and call_id in answer:
        answer = answer[call_id]
    if isinstance(answer, Mapping) and "decisions" in answer:
        decisions = answer["decisions"]
        if not isinstance(decisions, list) or not 0 <= index < len(decisions):
            return _unreadable(answer, f"no decision for call {index + 1}")
        answer = decisions[index]
    if isinstance(answer, bool):
        return Review(answer)
    return _decision(answer, tool)


def _decision(answer: Any, tool: str) -> Review:
    """One decision, read strictly."""
    if not isinstance(answer, Mapping):
        return _unreadable(answer, "expected a decision such as {'type': 'approve'}")
    shape = _shape(answer)
    if shape is None:
        return _unreadable(
            answer, "not one decision: give one of approve, edit, reject, respond (or approved: true/false)"
        )
    extra = sorted(str(k) for k in answer if k not in _KEYS[shape])
    if extra:
        return _unreadable(answer, f"unknown key(s) {', '.join(extra)} for a {shape!r} decision")
    message = answer.get("message", answer.get("reason"))
    if message is not None and not isinstance(message, str):
        return _unreadable(answer, "a message or reason must be text")
    if shape == "legacy":
        if not isinstance(answer["approved"], bool):
            return _unreadable(answer, "'approved' must be true or false")
        return Review(answer["approved"], message)
    return _typed(answer, shape, tool)


def _typed(answer: Mapping[str, Any], kind: str, tool: str) -> Review:
    """A decision of LangChain's shapes (approve, reject, respond, edit), its keys already checked."""
    if kind == "approve":
        remember = answer.get("remember")
        if remember is True:
            remember = {}
        if remember is not None and not isinstance(remember, Mapping):
            return _unreadable(answer, "'remember' must be true or an object")
        return Review(True, remember=remember)
    message = answer.get("message")
    if kind == "reject":
        return Review(False, message if isinstance(message, str) and message else None)
    if kind == "respond":
        if not isinstance(message, str) or not message.strip():
            return _unreadable(answer, "a respond decision needs the message the agent reads")
        return Review(False, message, response=message)
    if kind == "edit":
        edited = answer.get("edited_action")
        if not isinstance(edited, Mapping) or not isinstance(edited.get("args"), Mapping):
            return _unreadable(answer, "an edit needs edited_action with args")
        if edited.get("name", tool) != tool:
            return _unreadable(answer, f"an edit cannot change the tool ({tool!r} to {edited.get('name')!r})")
        return Review(True, edited_args=dict(edited["args"]))
    return _unreadable(answer, f"unknown decision type {kind!r}")
