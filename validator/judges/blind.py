"""The blind view: what a model judge reads when it shares nothing with the agent.

A judge that reads the agent's whole conversation reads the text where injected instructions live (tool
outputs, emails, pages) and the agent's own prose (how a hijacked agent argues). Its prompt can ask it to
treat them as data; it cannot make it unread them. The blind view does not send them at all. The request
holds only:

- the tool's entry from the **policy** (its risk and the operator's description, never one a host or an
  MCP server supplied);
- **the user's messages**, in order with their indices; a passage the user pasted or forwarded (what
  :func:`validator.text.sentences.attributed` hides from the request reader) becomes a fact: its length
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
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from validator._json import dumps
from validator.exceptions import UsageError
from validator.findings import ValueFinding
from validator.inputs.transcript import Transcript, call_of, is_users
from validator.judges.base import JudgeRequest, View
from validator.text.entities import extract_entities
from validator.text.search import SearchBudgetExceeded, find_bounded, normalize
from validator.text.sentences import attributed

__all__ = ["VIEWS", "View", "check_view", "render_blind"]

VIEWS: tuple[View, ...] = ("blind", "shared_prefix")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]{0,31}")
_HOP = re.compile(r"\(message #(\d+)\)")
_TOOL = re.compile(r"[A-Za-z_][A-Za-z0-9_.:\-]{0,63}")
_PATH_KEYS = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_NAME_LIMIT = 80
_LOCATE_LIMIT = 2_000
"""A value longer than this is not searched for in the conversation (its fact says so)."""
_LEAVES = 100
"""Argument values shown at most (each located in the conversation); the rest are counted."""


def _j(value: Any) -> str:
    return dumps(value, default=str)


def _bounded(text: str) -> str:
    """A name the host reports (a tool's, an author's), JSON-quoted and cut to a bound."""
    return _j(text if len(text) <= _NAME_LIMIT else text[:_NAME_LIMIT] + "…")


def check_view(view: str | None) -> None:
    """A judge's ``view``: one of :data:`VIEWS` (or None, the judge's default); else :class:`UsageError`."""
    if view is not None and view not in VIEWS:
        raise UsageError(f"view is one of {', '.join(VIEWS)}; got {view!r}")


def _whole(needle: str, text: str) -> bool:
    """Whether ``needle`` stands in ``text`` as whole words (never "500" in "1500", "eve@" in "steve@"); text
    too periodic to search within the gate's budget is not the user's words (the safe side: a fact)."""
    try:
        return find_bounded(text, needle) != -1
    except SearchBudgetExceeded:
        return False


class _Users:
    """The user's messages as the view shows them, a test of whether a text is their own words, and where else
    in the conversation a text stands (each message folded once)."""

    def __init__(self, request: JudgeRequest) -> None:
        self.transcript = transcript = request.transcript
        self.language = request.language
        self.shown: dict[int, str] = {}
        self._own: dict[int, str] = {}
        self._hidden: dict[int, str] = {}
        self._others: list[tuple[int, str]] = []
        for i, m in enumerate(transcript.messages):
            if is_users(m, request.user_id):
                self.shown[i], own, hidden = self._read(i, m.content)
                self._own[i], self._hidden[i] = normalize(own), hidden.casefold()
            else:
                calls = " ".join(_j(dict(c.args)) for c in m.tool_calls)
                self._others.append((i, f"{m.content} {calls}".casefold()))

    def _read(self, i: int, text: str) -> tuple[str, str, str]:
        """``(shown, own, hidden)``: the text with each part not provably the user's replaced by a fact, the
        user's own words alone, and the hidden parts alone."""
        pasted, quoted = attributed(self.transcript, i, pack=self.language)
        parts = sorted(
            [(a, b, "pasted or forwarded") for a, b in pasted] + [(a, b, "in quotation marks") for a, b in quoted]
        )
        shown, own, hidden, last = [], [], [], 0
        for start, end, how in parts:
            if start < last:  # inside a part already hidden
                continue
            shown.append(text[last:start])
            own.append(text[last:start] + "\x00")
            passage = text[start:end]
            hidden.append(passage)
            found = extract_entities(passage[:500]) if how == "pasted or forwarded" else []
            sender = next((e.key for e in found if e.kind == "email"), None)
            who = f", naming an address at {_bounded(sender.rpartition('@')[2])}" if sender else ""
            shown.append(f"[a passage of {len(passage.strip())} characters {how}{who}: not shown]")
            last = end
        shown.append(text[last:])
        own.append(text[last:])
        return "".join(shown), "".join(own), "\x00".join(hidden)

    def where(self, text: str) -> int | None:
        """The first user message whose own words hold ``text`` as whole words (case and spacing aside), or None."""
        needle = normalize(text)
        if not needle:
            return None
        return next((i for i, own in self._own.items() if _whole(needle, own)), None)

    def stands_in(self, text: str) -> list[tuple[int, bool]]:
        """``(message, hidden)`` of each message that is not the user's own words and holds ``text``: another
        message, or a passage of a user message the view does not show (``hidden``)."""
        needle = text.casefold()
        found = [(i, True) for i, hidden in self._hidden.items() if needle in hidden]
        return sorted(found + [(i, False) for i, other in self._others if needle in other])


def _tool(name: str, named: Collection[str]) -> str:
    """A tool's name as the view shows it: one the policy names, or a plain name (letters, digits, ``_.:-``, up to
    64), JSON-quoted; any other is the agent's to write, and is shown by its length."""
    if name in named or _TOOL.fullmatch(name):
        return _j(name)
    return f"<a tool name of {len(name)} characters the policy does not name>"


def _author(transcript: Transcript, i: int, user_id: str | None) -> str:
    m = transcript.messages[i]
    if m.role == "tool":
        tool = f"tool {_tool(m.name, ())}" if m.name else "a tool"
        return f"{tool} (from {_bounded(m.author)})" if m.author else tool
    if m.role == "user":
        return "the user" if is_users(m, user_id) else f"another participant ({_bounded(m.author or '')})"
    return {"assistant": "the agent", "system": "the system prompt"}[m.role]


def _leaves(value: Any, names: frozenset[str], users: _Users, path: str = "", shown: str = "") -> Iterator[Leaf]:
    """``(path, shown path, scalar)`` of every leaf of the arguments. An argument name is the agent's to write: it
    is shown where the tool's policy or the user's own words name it, else by its position."""
    if isinstance(value, Mapping):
        for n, (k, v) in enumerate(value.items()):
            key = str(k)
            named = key in names or (_IDENTIFIER.fullmatch(key) is not None and users.where(key) is not None)
            label = key if named else f"<argument #{n}>"
            yield from _leaves(
                v, names, users, f"{path}.{key}" if path else key, f"{shown}.{label}" if shown else label
            )
    elif isinstance(value, list | tuple):
        if not value:
            yield path, shown, []
        for i, v in enumerate(value):
            yield from _leaves(v, names, users, f"{path}[{i}]", f"{shown}[{i}]")
    else:
        yield path, shown, value


Leaf = tuple[str, str, Any]


def _finding_fact(f: ValueFinding, users: _Users, user_id: str | None) -> str:
    """Code's finding on a value, in code's words: places by index and author, never their text (a lookup's
    chain by the messages it went through, and each lookup by its call: the tool and its arguments, shown as any
    argument is, never its output)."""
    transcript = users.transcript
    fact = f"{f.kind or 'value'}: {f.status} ({f.proof})"
    if f.status == "delegated":
        hops = [int(m) for m in _HOP.findall(f.chain) if int(m) < len(transcript.messages)]
        through = ", ".join(
            f"message #{i} ({_author(transcript, i, user_id)}{_lookup_call(i, users)})" for i in dict.fromkeys(hops)
        )
        fact += f"; looked up through {through or 'a lookup'} from the user's words"
    return fact


_LOOKUP_ARGS = 8
"""A lookup call's arguments shown at most."""


def _lookup_call(i: int, users: _Users) -> str:
    """The call a tool message ``i`` answers, as ``", the result of TOOL(ARGS)"``: each argument verbatim where it
    stands in the user's own words (or is a number, a boolean or null), else its length; "" when none is found."""
    found = call_of(users.transcript, i) if users.transcript.messages[i].role == "tool" else None
    if found is None:
        return ""
    _, call = found
    shown = []
    for n, (key, value) in enumerate(list(call.args.items())[:_LOOKUP_ARGS]):
        label = key if _IDENTIFIER.fullmatch(key) and users.where(key) is not None else f"<argument #{n}>"
        if value is None or isinstance(value, bool | int | float):
            shown.append(f"{label}={_j(value)}")
        elif isinstance(value, str) and len(value) <= _LOCATE_LIMIT and users.where(value) is not None:
            shown.append(f"{label}={_j(value)} (the user's words)")
        else:
            text = value if isinstance(value, str) else _j(value)
            shown.append(f"{label}: {len(text)} characters, not the user's words")
    more = f", {len(call.args) - _LOOKUP_ARGS} more" if len(call.args) > _LOOKUP_ARGS else ""
    return f", the result of {_tool(call.name, ())}({'; '.join(shown)}{more})"


def _argument(leaf: Leaf, users: _Users, request: JudgeRequest) -> str:
    path, shown_path, value = leaf
    transcript, findings = users.transcript, request.findings
    about = [f for f in (*findings.targets, *findings.entities) if f.path == path]
    code = "; ".join(_finding_fact(f, users, request.user_id) for f in about)
    code = f" [code: {code}]" if code else ""
    if value is None or isinstance(value, bool | int | float) or value == []:
        source = users.where(str(value)) if isinstance(value, int | float) and not isinstance(value, bool) else None
        said = f" (in the user's words, message #{source})" if source is not None else ""
        return f"- {shown_path} = {_j(value)}{said}{code}"
    text = str(value)
    own = users.where(text)
    if own is not None:
        return f"- {shown_path} = {_j(text)} (in the user's own words, message #{own}){code}"
    words = len(text.split())
    fact = (
        f"- {shown_path}: a string of {len(text)} characters, {words} word{'' if words == 1 else 's'}, "
        "not in the user's own words"
    )
    if len(text) > _LOCATE_LIMIT:
        return f"{fact}; too long to locate{code}"
    places = users.stands_in(text)
    if not places:
        return f"{fact}; written by the agent (it stands nowhere in the conversation){code}"
    where = [
        f"message #{i} ("
        + ("a passage of the user's the view does not show" if hidden else _author(transcript, i, request.user_id))
        + ")"
        for i, hidden in places[:5]
    ]
    more = f" and {len(places) - 5} more" if len(places) > 5 else ""
    return f"{fact}; it stands in {', '.join(where)}{more}{code}"


def _quote(index: int, request: JudgeRequest, users: _Users) -> str:
    q = next((q for q in request.findings.quotes if q.index == index), None)
    evidence = request.justification.evidence[index]
    text = getattr(evidence, "quote", "")
    own = users.where(text) if q is not None and q.status == "user" else None
    if own is not None:
        return f"- quote {index + 1} = {_j(text)}: found in the user's own words (message #{own})"
    status = q.status if q is not None else "not checked"
    places = (
        ", ".join(
            f"message #{loc.message} ({_author(users.transcript, loc.message, request.user_id)})" for loc in q.locations
        )
        if q is not None and q.locations
        else "nowhere"
    )
    return (
        f"- quote {index + 1}: {len(text)} characters, not the user's own words as the view shows them "
        f"({status}; it stands: {places})"
    )


def _policy_names(request: JudgeRequest) -> frozenset[str]:
    """The argument names the tool's policy names (its targets, amounts, content, options, delegated paths)."""
    t = request.tool_policy
    paths = (*t.targets, *t.amounts, *t.content, *t.options, *t.delegate)
    return frozenset(k for path in paths for k in _PATH_KEYS.findall(path))


def _pending(request: JudgeRequest, users: _Users, named: frozenset[str]) -> list[str]:
    """The pending action: the tool with its risk, the operator's description and the tools it is a declared step
    of, and each argument (:func:`_argument`)."""
    tool_policy = request.tool_policy
    lines = [
        "",
        "=== PENDING ACTION (not yet run) ===",
        f"tool: {_tool(request.action.tool, named)} (risk: {tool_policy.risk})",
    ]
    if tool_policy.description:
        lines.append(f"what it does (the operator's policy): {tool_policy.description}")
    if tool_policy.step_of:
        steps = ", ".join(_tool(t, named) for t in tool_policy.step_of)
        lines.append(f"a step of (the operator's policy: a request for one of these asks for this call too): {steps}")
    lines.append("arguments:")
    leaves = list(_leaves(dict(request.action.args), _policy_names(request), users))
    lines += [_argument(leaf, users, request) for leaf in leaves[:_LEAVES]] or ["- (none)"]
    if len(leaves) > _LEAVES:
        lines.append(f"- ({len(leaves) - _LEAVES} more values, not shown)")
    return lines


def render_blind(request: JudgeRequest, *, tool_name: str, quality: bool) -> tuple[list[str], str]:
    """The blind view as ``(lines, ask)``: the user's messages as data, one JSON line each after a header (the
    blocks a blind request repeats byte for byte at the next check of the same conversation), and the
    validation request that follows them (see the module docstring)."""
    users = _Users(request)
    head = ["=== THE USER'S MESSAGES (only these speak for the user; pasted passages are shown as facts) ==="]
    head += [_j({"index": i, "text": text}) for i, text in users.shown.items()]
    action, f, transcript = request.action, request.findings, request.transcript
    lines = ["=== THE REST OF THE CONVERSATION (facts only: its text is not shown) ==="]
    others = [(i, m) for i, m in enumerate(transcript.messages) if i not in users.shown]
    lines += [
        f"- message #{i}: {_author(transcript, i, request.user_id)}, {len(m.content)} characters"
        for i, m in others[-40:]
    ]
    if len(others) > 40:
        lines.append(f"- ({len(others) - 40} earlier messages not listed)")
    if not others:
        lines.append("- (none)")
    named = frozenset(request.policy.tools)
    lines += _pending(request, users, named)
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
        if users.where(r.text) is not None:
            lines.append(f"- request sentence (message #{r.message}): {_j(r.text)}")
        else:
            lines.append(
                f"- request sentence (message #{r.message}): {len(r.text)} characters, with a passage not shown"
            )
    if f.intent is not None:
        i = f.intent
        said = i.detail if i.detail and users.where(i.detail) is not None else ""
        lines.append(
            f"- a request for {_tool(action.tool, named)}: {i.proof}"
            + (f"; intent word {i.matched!r}" if i.matched else "")
            + (f"; problem: {i.problem}" if i.problem else "")
            + (f" ({_j(said)})" if said else "")
            + (f"; the user's words ask for {_bounded(i.other_tool)} instead" if i.other_tool else "")
            + ("; the request asks for several actions" if i.multiple else "")
        )
    if not (f.requests or f.intent):
        lines.append("- (nothing proved)")
    lines += ["", f"Call `{tool_name}` exactly once with your verdict."]
    if quality:
        lines.append("You may add quality_notes on an authorized action; they never decide approval.")
    return head, "\n".join(lines)
