"""The blind view: what a model judge reads when it shares nothing with the agent.

A judge that reads the agent's whole conversation reads the text where injected instructions live (tool
outputs, emails, pages) and the agent's own prose (how a hijacked agent argues). Its prompt can ask it to
treat them as data; it cannot make it unread them. The blind view does not send them at all. The request
holds only:

- the tool's entry from the **policy** (its risk and the operator's description, never one a host or an
  MCP server supplied);
- **the user's messages**, in order with their indices; a passage the user pasted or forwarded (what
  :func:`validator.gate.sentences.attributed` hides from the request reader) becomes a fact: its length
  and, where it names one, its author's address;
- **each argument**: verbatim only where it stands in the user's own words (or is a number, a boolean or
  null: no prose), else a typed fact (type, length, where it stands, who wrote that: "stands only in
  message #3, tool read_inbox (from events@venue.example)"; "written by the agent: nowhere in the
  conversation"), with code's finding for it when it is a target or holds an entity;
- **each quote** of the justification with code's finding: verbatim when code found it in the user's own
  words, else its length and where it stands; a standing authorization by id, with the user's words that
  granted it. The justification's ``reason`` is agent prose and is not sent;
- **code's reading** of the request: proved, disproved or unknown, the intent word, the problem;
- the other messages as facts only: index, author, length.

Every free text in the view is either the user's own words (checked: it stands in a user message) or
code's own wording; an argument name that is not a plain identifier is shown by position. What remains
outside text by construction: the names of tools and the addresses of authors the host reports, each
JSON-quoted and cut to a bound.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from validator._json import dumps
from validator.findings import Findings, ValueFinding
from validator.gate.sentences import attributed
from validator.inputs.transcript import Transcript
from validator.judges.base import JudgeRequest

__all__ = ["VIEWS", "View", "render_blind"]

View = Literal["blind", "shared_prefix"]
"""What a model judge reads: ``blind`` (this module) or ``shared_prefix`` (the agent's own request, or the
whole transcript as data where none can be shared)."""
VIEWS: tuple[View, ...] = ("blind", "shared_prefix")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]{0,31}")
_EMAIL = re.compile(r"[\w.+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){1,6}")
_NAME_LIMIT = 80
_LOCATE_LIMIT = 2_000
"""A value longer than this is not searched for in the conversation (its fact says so)."""


def _j(value: Any) -> str:
    return dumps(value, default=str)


def _bounded(text: str) -> str:
    """A name the host reports (a tool's, an author's), JSON-quoted and cut to a bound."""
    return _j(text if len(text) <= _NAME_LIMIT else text[:_NAME_LIMIT] + "…")


def _author(transcript: Transcript, i: int) -> str:
    m = transcript.messages[i]
    if m.role == "tool":
        tool = f"tool {_bounded(m.name)}" if m.name else "a tool"
        return f"{tool} (from {_bounded(m.author)})" if m.author else tool
    return {"user": "the user", "assistant": "the agent", "system": "the system prompt"}[m.role]


class _Users:
    """The user's messages as the view shows them, and a test of whether a text is their own words."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.shown: dict[int, str] = {}
        self._own: dict[int, str] = {}
        for i, m in enumerate(transcript.messages):
            if m.role == "user":
                self.shown[i], self._own[i] = self._read(i, m.content)

    def _read(self, i: int, text: str) -> tuple[str, str]:
        hidden, _ = attributed(self.transcript, i)
        shown, own, last = [], [], 0
        for start, end in hidden:
            shown.append(text[last:start])
            own.append(text[last:start])
            own.append("\x00")
            passage = text[start:end]
            sender = _EMAIL.search(passage[:500])
            who = f", from {sender.group(0)}" if sender else ""
            shown.append(
                f"[a passage of {len(passage.strip())} characters the user pasted or forwarded{who}: not shown]"
            )
            last = end
        shown.append(text[last:])
        own.append(text[last:])
        return "".join(shown), "".join(own)

    def where(self, text: str) -> int | None:
        """The first user message whose own words hold ``text`` (case and spacing aside), or None."""
        needle = " ".join(text.casefold().split())
        if not needle:
            return None
        for i, own in self._own.items():
            if needle in " ".join(own.casefold().split()):
                return i
        return None


def _stands_in(transcript: Transcript, text: str) -> list[int]:
    """The messages that are not the user's whose text holds ``text``."""
    needle = text.casefold()
    return [
        i
        for i, m in enumerate(transcript.messages)
        if m.role != "user"
        and (needle in m.content.casefold() or any(needle in _j(dict(c.args)).casefold() for c in m.tool_calls))
    ]


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, scalar)`` of every leaf of the arguments; a key that is not a plain identifier is named by its
    position (an argument name is the agent's to write)."""
    if isinstance(value, Mapping):
        for n, (k, v) in enumerate(value.items()):
            key = k if isinstance(k, str) and _IDENTIFIER.fullmatch(k) else f"<argument name #{n}, not shown>"
            yield from _leaves(v, f"{path}.{key}" if path else key)
    elif isinstance(value, list | tuple):
        if not value:
            yield path, []
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _finding_fact(f: ValueFinding) -> str:
    """Code's finding on a value, in code's words (places by index and author, never their text)."""
    return f"{f.kind or 'value'}: {f.status} ({f.proof})" + (f"; {f.chain}" if f.status == "delegated" else "")


def _argument(path: str, value: Any, users: _Users, findings: Findings) -> str:
    transcript = users.transcript
    about = [f for f in (*findings.targets, *findings.entities) if f.path == path]
    code = "; ".join(_finding_fact(f) for f in about)
    code = f" [code: {code}]" if code else ""
    if value is None or isinstance(value, bool | int | float) or value == []:
        source = users.where(str(value)) if isinstance(value, int | float) and not isinstance(value, bool) else None
        said = f" (in the user's words, message #{source})" if source is not None else ""
        return f"- {path} = {_j(value)}{said}{code}"
    text = str(value)
    own = users.where(text)
    if own is not None:
        return f"- {path} = {_j(text)} (in the user's own words, message #{own}){code}"
    words = len(text.split())
    fact = (
        f"- {path}: a string of {len(text)} characters, {words} word{'' if words == 1 else 's'}, "
        "not in the user's own words"
    )
    if len(text) > _LOCATE_LIMIT:
        return f"{fact}; too long to locate{code}"
    places = _stands_in(transcript, text)
    if not places:
        return f"{fact}; written by the agent (it stands nowhere in the conversation){code}"
    shown = ", ".join(f"message #{i} ({_author(transcript, i)})" for i in places[:5])
    more = f" and {len(places) - 5} more" if len(places) > 5 else ""
    return f"{fact}; it stands in {shown}{more}{code}"


def _quote(index: int, request: JudgeRequest, users: _Users) -> str:
    q = next((q for q in request.findings.quotes if q.index == index), None)
    evidence = request.justification.evidence[index]
    text = getattr(evidence, "quote", "")
    if q is not None and q.status == "user":
        where = ", ".join(f"message #{loc.message}" for loc in q.locations)
        return f"- quote {index + 1} = {_j(text)}: found in the user's own words ({where})"
    status = q.status if q is not None else "not checked"
    places = (
        ", ".join(f"message #{loc.message} ({_author(users.transcript, loc.message)})" for loc in q.locations)
        if q is not None and q.locations
        else "nowhere"
    )
    return f"- quote {index + 1}: {len(text)} characters, not the user's own words ({status}; it stands: {places})"


def render_blind(request: JudgeRequest, *, tool_name: str, quality: bool) -> tuple[list[str], str]:
    """The blind view as ``(lines, ask)``: the user's messages as data, one JSON line each after a header (the
    blocks a blind request repeats byte for byte at the next check of the same conversation), and the
    validation request that follows them (see the module docstring)."""
    users = _Users(request.transcript)
    head = ["=== THE USER'S MESSAGES (only these speak for the user; pasted passages are shown as facts) ==="]
    head += [_j({"index": i, "text": text}) for i, text in users.shown.items()]
    action, f, transcript = request.action, request.findings, request.transcript
    lines = ["=== THE REST OF THE CONVERSATION (facts only: its text is not shown) ==="]
    others = [(i, m) for i, m in enumerate(transcript.messages) if m.role != "user"]
    lines += [f"- message #{i}: {_author(transcript, i)}, {len(m.content)} characters" for i, m in others[-40:]]
    if len(others) > 40:
        lines.append(f"- ({len(others) - 40} earlier messages not listed)")
    if not others:
        lines.append("- (none)")
    lines += [
        "",
        "=== PENDING ACTION (not yet run) ===",
        f"tool: {_bounded(action.tool)} (risk: {request.tool_policy.risk})",
    ]
    if request.tool_policy.description:
        lines.append(f"what it does (the operator's policy): {request.tool_policy.description}")
    lines.append("arguments:")
    lines += [_argument(path, value, users, f) for path, value in _leaves(dict(action.args))] or ["- (none)"]
    lines += ["", "=== THE AGENT'S EVIDENCE (its stated reason is agent prose and is not shown) ==="]
    if request.justification.found:
        lines.append("The host cannot carry a justification: the validator read the user's own words for the request.")
    for n, evidence in enumerate(request.justification.evidence):
        if hasattr(evidence, "quote"):
            lines.append(_quote(n, request, users))
    for a in f.authorizations:
        words = f"; the user's words when granting it: {_j(a.quote)}" if a.quote else ""
        lines.append(f"- standing authorization {_bounded(a.authorization_id)}: {a.status}{words}")
    if not request.justification.evidence and not request.justification.found:
        lines.append("- (no evidence)")
    lines += ["", "=== CODE'S READING OF THE USER'S REQUEST ==="]
    for r in f.requests:
        lines.append(f"- request sentence (message #{r.message}): {_j(r.text)}")
    if f.intent is not None:
        i = f.intent
        said = i.detail if i.detail and users.where(i.detail) is not None else ""
        lines.append(
            f"- a request for `{action.tool}`: {i.proof}"
            + (f"; intent word {i.matched!r}" if i.matched else "")
            + (f"; problem: {i.problem}" if i.problem else "")
            + (f" ({_j(said)})" if said else "")
            + (f"; the user's words ask for `{i.other_tool}` instead" if i.other_tool else "")
            + ("; the request asks for several actions" if i.multiple else "")
        )
    if not (f.requests or f.intent):
        lines.append("- (nothing proved)")
    lines += ["", f"Call `{tool_name}` exactly once with your verdict."]
    if quality:
        lines.append("You may add quality_notes on an authorized action; they never decide approval.")
    return head, "\n".join(lines)
