"""Where a value the user did not type came from: data-flow provenance through the agent's lookups.

Users delegate: "create a follow-up with the same participants as the Introductory meeting", "pay
the bill in bill-december.txt". The values then stand in a tool result, not in the user's words. A
value is **delegated** when the transcript shows the whole flow:

- it stands in the result of a tool call, as a *structured field* of that result (a JSON value or
  key, short enough to be a field: a list of participants, an IBAN field), not inside free text (a
  description, a review, an email body: text anyone may have written);
- in the *designated record*: when the result holds several records (a list of events, bookings
  keyed by id), the value's record is the one the call's own arguments name (its title holds the
  query); a record the agent picked among others is not designated;
- and every string argument of that call came from the user's request, in the user's words or, up
  to :data:`MAX_HOPS` hops back, delegated in turn ("participants[0] <- result of
  search_calendar_events(query='Introductory meeting') <- user, message #0").

Anything short of that stays *unknown* (where the value came from is not shown). Whether a
delegated value is enough is the policy's and the risk's business (:mod:`validator.gate.checks`):
it proves a general action's value; a dangerous action's only where its policy opts in
(``delegate``), and else the user is asked with the chain shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, cast

import msgspec

from validator.inputs.transcript import Fact, ToolCall, Transcript, call_of
from validator.language import english
from validator.text.entities import kind_of, parse_entity
from validator.text.paths import string_leaves
from validator.text.search import compact, normalize

__all__ = ["MAX_HOPS", "TEXT_WORDS", "Trace", "has_field", "output_texts", "records_of", "trace"]

MAX_HOPS = 2
"""Lookups a delegated value may pass through, counted from the user's words."""
_FIELD_WORDS = 8
"""A string leaf of more words than this is free text, not a field."""
_MAX_RESULT = 2_000_000
"""Results longer than this are not parsed (their values stay unknown)."""

InRequest = Callable[[Any], list[int]]
"""The user messages whose cited request holds a value, as a value (empty: not in the request)."""


class Hop(msgspec.Struct, frozen=True):
    message: int
    """The tool message holding the value."""
    tool: str
    call: str
    """The call's string arguments, shown (``query='Introductory meeting'``)."""
    field: str
    """Where in the result the value stands (``[0].participants[1]``)."""
    args: tuple[str, ...] = ()
    """The call's string arguments, as sent."""


class Trace(msgspec.Struct, frozen=True):
    """A complete flow from the user's words to a value: the hops, newest first, and the user message."""

    hops: tuple[Hop, ...]
    origin: int

    def describe(self, path: str) -> str:
        steps = [f"{h.field} of the result of {h.tool}({h.call}) (message #{h.message})" for h in self.hops]
        return " <- ".join([path, *steps, f"user, message #{self.origin}"])


TEXT_WORDS = 3
"""A string of a JSON output with fewer words than this is a field's value ("Open", "Bob Stone"), no text."""


def output_texts(content: str) -> Iterator[str]:
    """The texts of a tool's output as a reader reads them: each string of a JSON output of :data:`TEXT_WORDS`
    words or more (an MCP result's ``text``, a record's description; a field of a word or two, a status "Open",
    is a value), else the output itself."""
    value = _parsed(content)
    if value is None:
        yield content
        return
    for _, text in string_leaves(value, ""):
        if len(text.split()) >= TEXT_WORDS:
            yield text


def _parsed(content: str) -> Any:
    if len(content) > _MAX_RESULT or content[:1] not in "[{":
        return None
    try:
        return json.loads(content)
    except (ValueError, RecursionError):
        return None


def _same(leaf: Any, value: Any) -> bool:
    """Whether a field of a result *is* the value (not merely contains it)."""
    if isinstance(leaf, bool) or isinstance(value, bool):
        return leaf is value
    if isinstance(leaf, int | float) and not isinstance(value, str):
        return bool(leaf == value)
    a, b = normalize(str(leaf)).casefold(), normalize(str(value)).casefold()
    if a == b:
        return True
    if not isinstance(value, str) or len(str(leaf).split()) > _FIELD_WORDS:
        return False
    x, y = parse_entity(str(leaf)), parse_entity(value)
    return x is not None and y is not None and (x.kind, x.key, x.link) == (y.kind, y.key, y.link)


Step = str | int


def _fields(node: Any, path: tuple[Step, ...] = ()) -> Iterator[tuple[tuple[Step, ...], Any]]:
    """Every scalar leaf of a parsed result, and every key of its mappings, with its path."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*path, k), k
            yield from _fields(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _fields(v, (*path, i))
    else:
        yield path, node


def _shown(path: Sequence[Step]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "(the whole result)"


def _records(node: Any) -> list[Any] | None:
    """The items of a container of several records (mappings), or None."""
    items = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
    dicts = [x for x in items if isinstance(x, dict)]
    return items if len(dicts) >= 2 else None


def _matches(texts: Sequence[str], name: str) -> bool:
    """Whether a record's texts hold one of the call's arguments: a field that *is* it, its identity, never a
    prefix or a part of it ("Bob Stone" is no record of "Bob"; "water bill March" none of "water bill")."""
    key = " ".join(normalize(name).casefold().split())
    if not key:
        return False
    return any(" ".join(normalize(t).casefold().split()) == key for t in texts)


def _selects(records: Sequence[Any], keys: Sequence[str], chosen: int, names: Sequence[str]) -> bool:
    """Whether the call's arguments select record ``chosen`` among ``records``: for one of its arguments, it is
    the only record whose identity is it (:func:`_identity_texts`). A record the agent picked among several
    ("Bob Stone" and "Bob Mal" for "Bob"), or one that names it in another field (Eve's, whose manager is Bob), is
    not designated."""
    return any(
        [i for i, r in enumerate(records) if _is_record_of(r, name, keys[i] if keys else None)] == [chosen]
        for name in names
    )


def _is_record_of(record: Any, name: str, key: str | None = None) -> bool:
    """Whether a record's identity is ``name`` (:func:`_identity_texts`; a record keyed by an id counts its key)."""
    return _matches([*_identity_texts(record, name), *([key] if key is not None else [])], name)


def _identity_texts(record: Any, name: str) -> list[str]:
    """The texts of a record's identity that may equal ``name``: its own fields named for what it is (a name, a
    title, an id, an address, a handle; :data:`validator.language.LanguagePack.identity_fields`, with only words of
    ``[records] qualifiers`` beside: ``full_name``, ``company_name``, never ``manager_name``, which is someone
    else's), or, for a bare value, the value. A name the user gave in words ("Bob", "water bill") is compared with
    the record's name or title where it has one: a record whose ``id`` is "Bob" while its ``name`` is Eve's is
    Eve's."""
    if not isinstance(record, dict):
        return [t for _, t in string_leaves(record, "")]
    pack = english()
    fields, own_words = pack.identity_fields, pack.identity_fields | pack.record_qualifiers
    keyed = [(set(_key_words(str(k))), str(v)) for k, v in record.items() if isinstance(v, str | int)]
    texts = [(words, text) for words, text in keyed if words & fields and words <= own_words]
    naming = [text for words, text in texts if words & _NAMING and not words & _HANDLES]
    return naming if naming and not _address(name) else [text for _, text in texts]


_NAMING = frozenset({"name", "title"})
"""Words of a record's field that hold what it is called (``name``, ``full_name``, ``title``)."""
_HANDLES = frozenset({"user", "username", "screen", "nick"})
"""Words of a field that holds a handle, not a name (``user_name``, ``screen_name``)."""


def _key_words(key: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", key)]


def _address(text: str) -> bool:
    """Whether a lookup's argument is an address of one thing (``bill-december.txt``, ``c-17``, a link) rather
    than words describing what to find ("Bob", "water bill", and names joined by a hyphen or an apostrophe:
    "Jean-Luc", "O'Brien"): one token holding a digit or a sign of an address."""
    word = text.strip()
    return bool(word) and not any(ch.isspace() for ch in word) and _ADDRESS_SIGNS.search(word) is not None


_ADDRESS_SIGNS = re.compile(r"[\d@/\\.:#_]")


def _own_texts(record: dict[Any, Any]) -> list[str]:
    """A record's own fields' texts (not those of the records inside it)."""
    return [str(v) for v in record.values() if isinstance(v, str)]


def _designated(root: Any, path: tuple[Step, ...], leaf: Any, names: Sequence[str], scalar: bool) -> bool:
    """Whether every record the path passes through is the one the call's arguments select (a record keyed
    by an id counts its key as one of its texts), and the record the value is a field of is about what the
    call asked for: it holds one of the arguments, or has no text of its own beside the value ("Bob"'s
    record, not his spouse's inside it; ``{"user_id": "USR002"}`` for a lookup by name), unless the call
    looked up an address (a file's content is the file's, whatever it names). ``scalar``: the
    action's argument takes one value, so a value the agent picked among several of a list is not designated."""
    node = root
    innermost: dict[Any, Any] | None = None
    inside = False  # the innermost record is a field of another record (his spouse's, his manager's)
    chosen_record = True  # the node is the root, or the record the call's arguments selected among several
    through_list = False  # a list (or a mapping of records by id) on the path so far
    listed = False  # the innermost record stands in one (a search's results): it must say whose it is
    key: str | None = None  # the id a mapping of records keys the innermost one by
    entered_by: str | None = None  # the id the node was reached by, from a mapping of records
    for n, step in enumerate(path):
        through_list = through_list or isinstance(node, list) or _by_id(node)
        if _records(node) is not None:
            keys = [str(k) for k in node] if isinstance(node, dict) else []
            records = list(node.values()) if isinstance(node, dict) else list(node)
            chosen = keys.index(str(step)) if keys else int(step)
            if not _selects(records, keys, chosen, names):
                return False
        if isinstance(node, dict):
            inside = inside or (innermost is not None and not chosen_record)
            innermost, listed, key = node, through_list, entered_by
        if n == len(path) - 1 and scalar and isinstance(node, list) and len(node) > 1:
            return False  # one account of Bob's several: the agent's choice
        if n < len(path) - 1:
            # a wrapper with no text of its own ({"Introductory meeting": {...}}) is no record of someone
            chosen_record = _records(node) is not None or (isinstance(node, dict) and not _own_texts(node))
            entered_by = str(step) if _by_id(node) else None
            node = node[step]
    if any(_address(name) for name in names):
        return True  # a lookup by an address (a file, a link, an id) returns that thing, whole
    if innermost is None:
        return not through_list  # a value the lookup answered with, not one of a search's list ([EVE])
    if _another_of_its_kind(innermost, leaf):
        return False  # Bob's record holds two IBANs (his, and a "previous_account_closed"): which one, he did not say
    if inside:  # a record inside the named one is someone else's unless it is itself what the user named
        return any(_is_record_of(innermost, name) for name in names)
    if (listed or isinstance(node, list)) and not any(_is_record_of(innermost, name, key) for name in names):
        # a record of a search's results ([{"iban": …}]), or a value of a list in a record ({"results": [EVE]}),
        # that says nothing of whose it is
        return False
    own = _own_texts(innermost)
    others = [t for t in own if t != str(leaf)]
    return not others or any(_is_record_of(innermost, name) for name in names)


def _by_id(node: Any) -> bool:
    """Whether ``node`` is a mapping of records by their ids (``{"c_17": {...}}``): each value a record, no text
    of its own."""
    return isinstance(node, dict) and bool(node) and all(isinstance(v, dict) for v in node.values())


def _another_of_its_kind(record: dict[Any, Any], leaf: Any) -> bool:
    """Whether the record's own fields hold another value of the leaf's kind (a second IBAN, address, phone):
    the record is designated, but which of its values the user meant, it does not say."""
    if not isinstance(leaf, str):
        return False
    kind = kind_of(leaf)
    if kind is None:
        return False
    mine = parse_entity(leaf)
    for value in record.values():
        if not isinstance(value, str) or value == leaf or kind_of(value) != kind:
            continue
        other = parse_entity(value)
        if other is not None and mine is not None and other.key != mine.key:
            return True
    return False


def trace(
    transcript: Transcript,
    value: Any,
    candidates: Sequence[int],
    in_request: InRequest,
    hops: int = MAX_HOPS,
    *,
    designates: Callable[[str], bool] | None = None,
    scalar: bool = False,
    sources: frozenset[str] = frozenset(),
) -> tuple[Trace | None, str | None]:
    """The flow that brought ``value`` into the action, from the tool messages in ``candidates``; else
    None and, when the value stands in a result but not as its designated field, why (for the finding).
    ``designates``: when the request names the argument's value, which of a lookup's arguments ask for it;
    the lookup holding the value must have one, and only those select its record. Only a tool of ``sources``
    (the policy declares it returns the user's own records) designates; text an outside party wrote (an email,
    however structured), a web page, a search result delegate nothing. A source an earlier call wrote the value
    into, from anywhere but the user's words, designates nothing either (an injected "update Bob's contact")."""
    why: str | None = None
    for message in candidates:
        m = transcript.messages[message]
        if m.role != "tool":
            continue
        if m.author:
            why = why or f"in message #{message}, which an outside party wrote ({m.author})"
            continue
        found = call_of(transcript, message)
        root = _parsed(m.content)
        if found is None or root is None:
            why = why or f"in the free text of message #{message}, not a field of a structured result"
            continue
        at_call, call = found
        if call.name not in sources:
            why = why or f"in the result of {call.name} (message #{message}): no source of the user's records"
            continue
        writer = _written_before(transcript, value, at_call, in_request)
        if writer is not None:
            why = why or f"in the result of {call.name}, after {writer} wrote it there (not from the user's words)"
            continue
        fields = [(p, leaf) for p, leaf in _fields(root) if _same(leaf, value)]
        if not fields:
            why = why or f"in the free text of the result of {call.name} (message #{message}), not a field"
            continue
        leaves = list(string_leaves(dict(call.args), ""))
        names = [text for _, text in leaves if designates is None or designates(text)]
        shown = ", ".join(f"{p}={t!r}" for p, t in leaves)
        if not names:
            why = why or f"looked up by {call.name}({shown}), not by what the user named for it"
            continue
        origin = _origin(transcript, call, message, in_request, hops - 1, sources)
        if origin is None:
            why = why or f"in the result of {call.name} (message #{message}), whose arguments the user did not give"
            continue
        at, earlier = origin
        for path, leaf in fields:
            if _designated(root, path, leaf, names, scalar):
                hop = Hop(message, call.name, shown, _shown(path), tuple(t for _, t in leaves))
                return Trace((hop, *earlier), at), None
        why = why or f"in a record of the result of {call.name} (message #{message}) its arguments do not select"
    return None, why


def records_of(transcript: Transcript, names: Sequence[str], sources: frozenset[str]) -> tuple[tuple[str, ...], ...]:
    """The texts of each record a source of the user's records returned whose identity is one of ``names``
    (Bob's contact for "Bob", :func:`_is_record_of`): what the user's own records say is that one's. Read by the
    ledger, which counts a payment to any of them as a payment to the name (once per transcript, names and
    sources: both of the ledger's readings of one check share it)."""
    if not names or not sources:
        return ()
    return transcript.fact(_RECORDS, (tuple(names), sources))


def _records_named(transcript: Transcript, key: Hashable) -> tuple[tuple[str, ...], ...]:
    names, sources = cast(tuple[tuple[str, ...], frozenset[str]], key)
    found: list[tuple[str, ...]] = []
    for message, m in enumerate(transcript.messages):
        if m.role != "tool" or m.author or not m.content:
            continue
        call = call_of(transcript, message)
        root = _parsed(m.content) if call is not None and call[1].name in sources else None
        for record in _dicts(root):
            if any(_is_record_of(record, name) for name in names):
                found.append(tuple(_own_texts(record)))  # its own fields: a record inside it is someone else's
    return tuple(found)


_RECORDS: Fact[tuple[tuple[str, ...], ...]] = Fact("the user's records of a name", _records_named)


def _dicts(root: Any) -> Iterator[dict[Any, Any]]:
    """Every mapping inside a parsed result, at any depth (walked without recursion: a result may be deep)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _written_before(transcript: Transcript, value: Any, before: int, in_request: InRequest) -> str | None:
    """A call before ``before`` that carried ``value`` in its arguments (it may have written it into the source
    read after it) when the value is not the user's own: the call, shown; else None."""
    if in_request(str(value)):
        return None
    wanted = compact(str(value))
    for m in transcript.messages[:before]:
        for call in m.tool_calls:
            if any(_same(leaf, value) for _, leaf in _fields(dict(call.args))) or (
                len(wanted) >= 4 and any(wanted in compact(text) for _, text in string_leaves(dict(call.args), ""))
            ):
                return f"{call.name}({', '.join(sorted(map(str, call.args)))})"
    return None


def has_field(transcript: Transcript, message: int, value: Any) -> bool:
    """Whether the structured result in ``message`` has ``value`` as one of its fields (a delegated
    amount's currency must stand in its source too)."""
    root = _parsed(transcript.messages[message].content)
    return root is not None and any(_same(leaf, value) for _, leaf in _fields(root))


def _origin(
    transcript: Transcript,
    call: ToolCall,
    message: int,
    in_request: InRequest,
    hops: int,
    sources: frozenset[str] = frozenset(),
) -> tuple[int, tuple[Hop, ...]] | None:
    """Where every string argument of ``call`` came from: the user's request (the first user message
    that holds one), or earlier lookups while ``hops`` remain; None when one argument came from nowhere
    shown, or the call has no string argument (a lookup the user named nothing of)."""
    args = list(string_leaves(dict(call.args), ""))
    if not args:
        return None
    origin: int | None = None
    chain: tuple[Hop, ...] = ()
    for _, text in args:
        users = in_request(text)
        if users:
            origin = users[0] if origin is None else min(origin, users[0])
            continue
        if hops <= 0:
            return None
        earlier = [i for i in range(message) if transcript.messages[i].role == "tool"]
        found, _ = trace(transcript, text, earlier[::-1], in_request, hops, sources=sources)
        if found is None:
            return None
        origin = found.origin if origin is None else min(origin, found.origin)
        chain = chain or found.hops
    return (origin, chain) if origin is not None else None
