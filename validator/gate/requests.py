"""Does the user's cited sentence request this action? The reader over the transcript.

For each sentence of the user's own words the evidence cites, :func:`validator.gate.reader.read` gives one of
three values for the tool. A proved request is then read in its context, whole: every sentence after it, in its
message and in every later user message, must parse as something that cannot take it back (a greeting, thanks,
an acknowledgement, a fragment completing it, a request for another action or for this one with other values);
a later negation of the same action disproves it, anything else (a sentence the grammar cannot read, a question,
"Belay that.") leaves it unknown. The finding is proved when one cited sentence proves it; else disproved when
one disproves it; else unknown, with the reason.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from functools import partial
from typing import TypeVar, cast, get_args

import msgspec
from msgspec import structs

from validator.findings import IntentFinding, RequestFill, RequestProblem, RequestSentence
from validator.gate import context
from validator.gate.check_context import CheckContext
from validator.gate.grammar import grammar
from validator.gate.meaning import OWNER_BACK, Action, Parse, Reading
from validator.gate.provenance import output_texts
from validator.gate.reader import (
    Fill,
    Read,
    ToolSense,
    beside,
    declared,
    fits,
    fragment_fills,
    own_work,
    read_parse,
    value_key,
)
from validator.inputs.transcript import Fact, Transcript, is_users
from validator.language import LanguagePack
from validator.language.classes import (
    AHEAD,
    AND,
    CHEERS,
    COMMA,
    FILLER,
    GO,
    GREET,
    INTERJ,
    LIKE,
    LINK,
    MODAL,
    NAME,
    NEED,
    NN,
    NOT,
    OPEN,
    OPENV,
    PLEASE,
    PRIV,
    PROCEED,
    SEQ,
    THANK,
    THANKS,
    TO,
    VALUE,
    VB,
    VBZ,
    WANT,
    YOU,
    I,
)
from validator.language.rules import Rule, Rules
from validator.policy import Policy
from validator.text.lexer import Word
from validator.text.search import within
from validator.text.sentences import own_words, sentence_spans
from validator.text.split import sentences

__all__ = [
    "after_request",
    "delegated_instructions",
    "negated_anywhere",
    "read_request",
    "request_fill",
    "requests_tool",
    "suggest_tool",
    "verbs_in",
]

_PRIORITY: dict[str, int] = {
    "negated": 0,
    "held": 1,
    "later_words": 1,
    "earlier_words": 1,
    "addressed": 1,
    "beside_words": 1,
    "object_kind": 2,
    "unfilled": 2,
    "pronoun": 2,
    "ambiguous": 3,
    "unknown_word": 4,
    "no_parse": 5,
    "too_long": 5,
    "not_a_request": 6,
    "delegated": 6,
    "not_named": 8,
    "no_request": 9,
}


class _Sentence(msgspec.Struct, frozen=True):
    """A sentence of a user message: where it stands, its own words and the message's text there."""

    message: int
    start: int
    end: int
    text: str
    original: str


def _user_sentences(transcript: Transcript, message: int, rules: Rules, pack: LanguagePack) -> list[_Sentence]:
    own = own_words(transcript, message, rules, pack)
    content = transcript.messages[message].content
    split = sentences(own, pack)
    return [_Sentence(message, x.start, x.end, own[x.start : x.end], content[x.start : x.end]) for x in split]


def _vocabulary(tool: ToolSense, others: Sequence[ToolSense]) -> tuple[frozenset[str], frozenset[str]]:
    """The words read as verbs beyond the verb table, and the phrasal verbs, of ``tool`` and ``others``."""
    if not others:
        return tool.verbs, tool.phrasal
    return tool.verbs.union(*(o.verbs for o in others)), tool.phrasal.union(*(o.phrasal for o in others))


class _Read:
    """The user's sentences of one transcript as the grammar read them with one vocabulary, by message, and
    what each says of a tool: computed when a check first asks, kept with the transcript (a :class:`Fact`)
    and carried to its extensions, so a conversation's sentences are read once, not once a check. Bounded:
    past :data:`MAX_READ_CHARS` characters of sentences a transcript's reading is computed and not kept.

    Several checks may read one transcript at once: a parse is kept first-writer-wins (:meth:`keep`), and a
    memo of a parse is used only for the very object it was computed for (``objs`` holds each kept parse by
    its id, so an id there always names a live object; a parse not kept is never memoised)."""

    __slots__ = (
        "by_message",
        "chars",
        "facts",
        "fixed",
        "frames",
        "objs",
        "owned",
        "pack",
        "parsed",
        "phrasal",
        "reads",
        "requested",
        "turn_ahead",
        "turn_frames",
        "verbs",
    )

    def __init__(self, key: Hashable, carried: _Read | None = None) -> None:
        """``key``: the fact's key, ``(rules, pack, verbs, phrasal)``: what every sentence here is read with."""
        _, pack, verbs, phrasal = cast("tuple[Rules, LanguagePack, frozenset[str], frozenset[str]]", key)
        self.pack, self.verbs, self.phrasal = pack, verbs, phrasal
        # dict(...) of a dict copies it in one step (no other thread runs in between)
        self.by_message: dict[int, tuple[tuple[_Sentence, Parse], ...]]
        self.by_message = dict(carried.by_message) if carried else {}
        self.parsed: dict[tuple[str, str], Parse] = dict(carried.parsed) if carried else {}
        """Sentences of the user's words (their text and the message's text there), parsed."""
        self.objs: dict[int, Parse] = dict(carried.objs) if carried else {}
        """Every kept parse, by its id (held here, so no other object can take its id while the memo lives)."""
        self.reads: dict[tuple[int, ToolSense], Read | None] = dict(carried.reads) if carried else {}
        """``read_parse`` of a kept parse, by the parse and the tool (the same tool reads the same each check)."""
        self.requested: dict[tuple[int, ToolSense, tuple[ToolSense, ...]], context.RequestFacts]
        self.requested = dict(carried.requested) if carried else {}
        """:func:`~validator.gate.context.request_facts` of a kept parse (whether a later request stands on its own
        is then a comparison of its values with the request's)."""
        self.facts: dict[tuple[int, Hashable], bool | frozenset[str]] = dict(carried.facts) if carried else {}
        """The context rows' facts of a kept parse alone (:meth:`fact`), by the parse and what the fact is."""
        self.fixed: dict[tuple[int, Hashable], context.Fixed] = dict(carried.fixed) if carried else {}
        """What the context rows that do not read the request's values say of a kept parse (:meth:`rows`)."""
        self.chars: int = carried.chars if carried else 0
        self.owned: dict[int, tuple[bool, int]] = dict(carried.owned) if carried else {}
        """Of each user message read after a request (by index): whether it holds words of the user's own, and
        where its first part that is not theirs begins (-1: none)."""
        self.frames: dict[int, str | None] = dict(carried.frames) if carried else {}
        """The sentence of each user message (by index) that frames the turns after it (:func:`_framed_before`),
        or None: kept for a message whose sentences are."""
        self.turn_frames: dict[int, str | None] = dict(carried.turn_frames) if carried else {}
        """The frame the user messages before a turn hold (:func:`_framed_before`), by the turn's first message:
        read from those messages alone, so found once for every later check of the turn."""
        self.turn_ahead: dict[tuple[int, frozenset[str]], tuple[tuple[_Ahead, ...], int | None]]
        self.turn_ahead = dict(carried.turn_ahead) if carried else {}
        """The take-backs given ahead before a turn (:func:`_taken_back_ahead`), by the turn's first message and
        the verbs of the tool's deed: those found, the newest first, and how many of the user messages before the
        turn they were read from (None: all of them). A check reads further only when none found governs it."""

    def parse(self, text: str, original: str) -> Parse:
        """The parse of a sentence (its text, and the message's text there) in this reading's pack and vocabulary:
        the one kept, or parsed now and kept within the bound (first writer wins: another check may keep it
        first)."""
        key = (text, original)
        kept = self.parsed.get(key)
        if kept is not None:
            return kept
        found = grammar(self.pack).parse(text, original=original, verbs=self.verbs, phrasal=self.phrasal)
        if self.chars + len(text) > MAX_READ_CHARS:
            return found
        kept = self.parsed.setdefault(key, found)
        if kept is found:
            self.objs[id(found)] = found
            self.chars += len(text)
        return kept

    def own(self, transcript: Transcript, message: int, rules: Rules) -> tuple[bool, int]:
        """Whether user message ``message`` holds words of the user's own, and where its first part that is not
        theirs (pasted, of unclear authorship) begins, -1 where none: read once per transcript."""
        found = self.owned.get(message)
        if found is None:
            own = own_words(transcript, message, rules, self.pack)
            found = (bool(own.strip()), own.find("\x00"))
            if len(self.owned) < MAX_KEPT_READINGS:
                self.owned[message] = found
        return found

    def _kept(self, parse: Parse) -> bool:
        return self.objs.get(id(parse)) is parse

    def request(self, parse: Parse, tool: ToolSense, others: Sequence[ToolSense]) -> context.RequestFacts:
        """:func:`~validator.gate.context.request_facts` of another request, computed once for a kept parse, a tool
        and the policy's other tools (its reading for the tool: :meth:`reading`)."""
        key = (id(parse), tool, tuple(others))
        return self._once(
            parse, self.requested, key, lambda: context.request_facts(parse, tool, others, self.reading(parse, tool))
        )

    def fact(self, parse: Parse, what: Hashable, compute: Callable[[], context.F]) -> context.F:
        """A context row's fact of ``parse`` alone (``what`` names it, with the tool where it depends on one; the
        reading's pack and rules are this reading's own), computed once for a kept parse."""
        found = self._once(parse, self.facts, (id(parse), what), compute)  # ``what`` names one kind of fact
        return cast(context.F, found)

    def rows(self, parse: Parse, what: Hashable, compute: Callable[[], context.Fixed]) -> context.Fixed:
        """What the context rows that do not read the request's values say of a kept parse, and which of those that
        do may speak of it, computed once for ``what`` (everything else they read:
        :func:`~validator.gate.context.judge`)."""
        return self._once(parse, self.fixed, (id(parse), what), compute)

    def reading(self, parse: Parse, tool: ToolSense) -> Read | None:
        """``read_parse(parse, tool)``, computed once for a kept parse and a tool."""
        return self._once(parse, self.reads, (id(parse), tool), lambda: read_parse(parse, tool))

    def _once(self, parse: Parse, kept: dict[K, V], key: K, compute: Callable[[], V]) -> V:
        """``compute()`` for a parse kept here, remembered in ``kept`` by ``key`` (at most
        :data:`MAX_KEPT_READINGS` of them, then read again); for a parse not kept, computed and not remembered."""
        if not self._kept(parse):
            return compute()
        try:
            return kept[key]
        except KeyError:  # not read yet (a kept value may be None: no word of the sentence is the tool's verb)
            pass
        found = compute()
        if len(kept) >= MAX_KEPT_READINGS:
            kept.clear()
        kept[key] = found
        return found


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MAX_LATER_SENTENCES = 10_000
"""How many sentences of the user's after a request are read for a take-back: past it the request is unknown (the
user is asked), so a megabyte of short sentences costs a bounded time and gets a verdict of its own."""

MAX_KEPT_READINGS = 20_000
"""How many tool readings of kept parses one transcript keeps (then they are read again)."""

MAX_READ_CHARS = 250_000
"""How many characters of user sentences one transcript keeps parsed per vocabulary: a kept parse with its
sentence costs about 140 bytes a character (measured: 1.3 MB for the 9,400 characters of 200 user turns), so
35 MB at most; past it sentences are parsed again when read."""

_READ: Fact[_Read] = Fact(
    "the user's sentences, parsed",
    lambda transcript, key: _Read(key),
    lambda found, longer, start, key: _Read(key, found),  # the prefix's messages are the same: what was found holds
)


def _kept_reading(ctx: CheckContext, tool: ToolSense, others: Sequence[ToolSense] = ()) -> _Read:
    """The transcript's kept reading in ``tool``'s (and ``others``') vocabulary, under the check's rules and pack."""
    verbs, phrasal = _vocabulary(tool, others)
    return ctx.transcript.fact(_READ, (ctx.rules, tool.pack, verbs, phrasal))


def _kept_parse(ctx: CheckContext, tool: ToolSense, text: str, original: str) -> Parse:
    """The parse of one sentence of the transcript's user words (a cited one) in ``tool``'s vocabulary: parsed once
    per transcript (its sentences are kept with the transcript's others, under the same bound)."""
    return _kept_reading(ctx, tool).parse(text, original)


def _read_cited(ctx: CheckContext, tool: ToolSense, sentence: RequestSentence) -> tuple[Parse, Read | None]:
    """A cited sentence's parse (:func:`_kept_parse`) and how it stands to a request for ``tool``
    (:func:`~validator.gate.reader.read_parse`): both once per transcript, so each later call of a turn reads the
    request again for the price of two lookups."""
    kept = _kept_reading(ctx, tool)
    parse = kept.parse(sentence.text, _original(ctx.transcript, sentence))
    return parse, kept.reading(parse, tool)


def _in_time(deadline: float | None) -> None:
    """Raise :class:`SearchBudgetExceeded` past ``deadline`` (the check then answers with what it proved: nothing)."""
    within(deadline, "reading the user's sentences", time.perf_counter)  # the reader's own clock


def _read_sentences(
    ctx: CheckContext, message: int, tool: ToolSense, others: Sequence[ToolSense] = (), kept: _Read | None = None
) -> tuple[tuple[tuple[_Sentence, Parse], ...], _Read]:
    """The user's sentences of ``message`` with their parses in ``tool``'s (and ``others``') vocabulary: parsed
    once per transcript and vocabulary (a sentence said again is parsed once); with the transcript's kept reading
    (for :meth:`_Read.reading`; ``kept``: that reading, when the caller holds it). Past the check's deadline,
    :class:`SearchBudgetExceeded`."""
    transcript, deadline = ctx.transcript, ctx.deadline
    kept = kept or _kept_reading(ctx, tool, others)
    read = kept.by_message.get(message)
    if read is not None:
        return read, kept
    found: list[tuple[_Sentence, Parse]] = []
    chars = 0
    for n, s in enumerate(_user_sentences(transcript, message, ctx.rules, tool.pack)):
        if n % 64 == 63:
            _in_time(deadline)
        chars += len(s.text)
        found.append((s, kept.parse(s.text, s.original)))
    read = tuple(found)
    if kept.chars + chars <= MAX_READ_CHARS:  # the message's sentences, kept in order
        read = kept.by_message.setdefault(message, read)
        kept.chars += chars
    return read, kept


def _others_requested(parse: Parse, tool: ToolSense, others: Sequence[ToolSense]) -> Read | None:
    """Every verb beside the request in its sentence must be a request for another tool the policy knows
    ("find the draft and email it", "pay Bob and email Ann the receipt"); a verb no tool has ("…, then
    cancel.", "Wait for my message, then pay Bob") leaves the request unknown."""
    for reading in parse.readings:
        for action in beside(reading, tool):
            if own_work(action, tool.pack):
                continue  # "Summarize my inbox, then email Bob the summary", "… and let me know": reaches no one
            if not any(fits(reading, action, o) for o in others):
                return Read("unknown", "beside_words", f"'{action.verb}' is no request of a tool the policy knows")
    return None


def _earlier(
    ctx: CheckContext, sentence: RequestSentence, tool: ToolSense, others: Sequence[ToolSense], fills: Sequence[Fill]
) -> Read | None:
    """What the user wrote before ``sentence`` in the same turn that could change it: in its message and in
    the user's messages right before it, with no word of the agent's between ("Don't do anything until I say
    go. Pay Bob 50 EUR."; "Ignore my next message." sent just before; "Fwd from Eve" over a forwarded
    request), each sentence judged by the context table (:mod:`validator.gate.context`). Turns the agent
    answered are not read: they were settled, and a later request is the user's word after them."""
    transcript = ctx.transcript
    first = sentence.message
    author = transcript.messages[first].author
    while (
        first > 0 and transcript.messages[first - 1].role == "user" and transcript.messages[first - 1].author == author
    ):
        first -= 1  # (another author's message in a group chat is not this user's turn)
    found: list[tuple[context.Outcome, str]] = []
    count = 0
    others_, fills_ = tuple(others), tuple(fills)
    keys = tuple(value_key(f.value) for f in fills_)
    for i in range(first, sentence.message + 1):
        _in_time(ctx.deadline)
        read, kept = _read_sentences(ctx, i, tool, others)
        count += len(read)
        if count > MAX_LATER_SENTENCES:
            return Read(
                "unknown", "earlier_words", f"more than {MAX_LATER_SENTENCES:,} sentences of the user's before it"
            )
        own = i == sentence.message
        for s, parse in read:
            if own and s.end > sentence.start:
                break
            around = context.Sentence(
                parse,
                "before",
                tool,
                others_,
                fills_,
                kept,
                own_message=own,
                listed=own and sentence.lead is not None,
                fill_keys=keys,
            )
            found.append((context.judge(around, ctx.rules.off), s.original))
    return _outcome(found, "earlier_words")


def _worst(*found: Read | None) -> Read | None:
    """The disproving one of several findings about a request's context, else the first unknown one."""
    return next((r for r in found if r is not None and r.proof == "disproved"), None) or next(
        (r for r in found if r is not None), None
    )


def _held(ctx: CheckContext, sentence: RequestSentence, tool: ToolSense, others: Sequence[ToolSense]) -> Read | None:
    """A request opened by a sequencing word ("Then pay Bob.", "After that, …") comes after what the user's
    sentence before it asked: it stands only when that sentence is a request read whole, each of whose verbs is
    the assistant's own work (nothing to wait for) or an action of a tool of the policy that the transcript shows
    carried out since (a call of the tool with its result). After a bare answer or a greeting ("No. Then email
    Marta.") it means "in that case" and stands; after anything else (a question, a check, a wait, a condition,
    a sentence the grammar cannot read) it is unknown: what it waits for, no rule reads."""
    transcript = ctx.transcript
    before = _sentence_before(ctx, sentence, tool, others)
    if before is None:
        return Read("unknown", "held", "", row="held")
    message, text, parse = before
    if parse.readings and all(r.kind in ("answered", "social") for r in parse.readings):
        if _replies(transcript, message):  # "Sure. After that, pay …" to "Should I wait for Bob first?"
            return Read("unknown", "held", text, row="reply")
        return None  # "No. Then email Marta.": after an answer or a greeting, "then" is "in that case"
    if not parse.readings or not all(r.kind == "request" for r in parse.readings):
        return Read("unknown", "held", text, row="held")
    tools = (tool, *others)
    for reading in parse.readings:
        for action in reading.actions:
            if action.negated:
                return Read("unknown", "held", text, row="held")
            if own_work(action, tool.pack):
                continue  # "Summarize my inbox. Then email Bob the summary.": the assistant's own work
            fitting = [t.tool for t in tools if fits(reading, action, t)]
            if not fitting or not any(_done_since(transcript, message, name) for name in fitting):
                return Read("unknown", "held", text, row="held")
    return None


def _held_in_sentence(
    transcript: Transcript, sentence: RequestSentence, parse: Parse, tool: ToolSense, others: Sequence[ToolSense]
) -> Read | None:
    """A request that comes after another verb of its sentence ("Get Bob's approval, then pay him.", "Email Bob
    the invoice for approval, then pay it.", "Check the balance and pay Bob."): joined by "then", or after a verb
    of checking or waiting, it stands only when each verb before it is the assistant's own work on a thing the
    tables know ("Find the report, then email it to Bob.") or an action of a tool of the policy the transcript
    shows carried out since; else it is unknown (``held``): what it waits for, no rule reads."""
    conditions = tool.pack.conditions
    for reading in parse.readings:
        at = next((n for n, a in enumerate(reading.actions) if tool.intent_of(a) is not None and not a.negated), None)
        if at is None:
            continue
        waits = reading.actions[at].sequenced or any(a.verb in conditions for a in reading.actions[:at])
        if not waits:
            continue
        for before in reading.actions[:at]:
            if before.negated or before.verb in conditions:
                return Read("unknown", "held", _original(transcript, sentence), row="held")
            if (
                own_work(before, tool.pack)
                and not any(p.carried for p in before.objects)
                and not _waits_on_someone(before)
            ):
                continue
            fitting = [t.tool for t in (tool, *others) if fits(reading, before, t)]
            if not any(_done_since(transcript, sentence.message, name) for name in fitting):
                return Read("unknown", "held", _original(transcript, sentence), row="held")
    return None


_SOMEONE = frozenset({"name", "email", "phone", "handle"})
"""Kinds of value that name a person: own work from or with one waits on them."""


def _waits_on_someone(action: Action) -> bool:
    """Own work that needs another person ("Get a receipt *from Bob*, then pay him."): what it waits for is
    theirs to give, so the request after it holds until the transcript shows the step done."""
    return any(v.kind in _SOMEONE for p in action.phrases for v in p.values)


def _framed(parse: Parse, pack: LanguagePack) -> Read | None:
    """A request whose own sentence holds a word that makes it a game, a test, an example ("Pay DE44… for a dry
    run.", "the hypothetical IBAN …"): unknown. (A noun of a thing the tables know, "the demo", is no frame.)"""
    frames, nouns = pack.frame_words, pack.nouns
    for w in parse.words:
        if (w.norm in frames or (w.verb or "") in frames) and w.norm not in nouns and (w.lemma or "") not in nouns:
            return Read("unknown", "framed", w.text, row="frame")
    return None


_FRAMES_READ = 40
"""User messages before a request's turn read for a frame that still governs it."""


def _turn_of(transcript: Transcript, message: int) -> int:
    """The first message of the turn of ``message`` (the user's messages right before it are its turn)."""
    first = message
    while first > 0 and transcript.messages[first - 1].role == "user":
        first -= 1
    return first


def _turns_before(transcript: Transcript, first: int) -> Iterator[int]:
    """The user messages before the turn that begins at message ``first``, the newest first: the last
    :data:`_FRAMES_READ` of them."""
    seen = 0
    for i in range(first - 1, -1, -1):
        if transcript.messages[i].role != "user":
            continue
        seen += 1
        if seen > _FRAMES_READ:
            return
        yield i


def _framed_before(ctx: CheckContext, sentence: RequestSentence, tool: ToolSense) -> Read | None:
    """A sentence of an earlier turn, answered already, that frames what follows ("Ignore my next message.",
    "Please translate my next message.", "Don't act on my next message.", "We're role-playing."): it keeps
    governing the turns after it, so the request is unknown. Read in the last :data:`_FRAMES_READ` user messages
    before the request's turn, by their words (a sentence the grammar cannot read frames just the same)."""
    first = _turn_of(ctx.transcript, sentence.message)
    kept = _kept_reading(ctx, tool)
    try:
        frame = kept.turn_frames[first]
    except KeyError:
        frame = kept.turn_frames.setdefault(first, _frame_before(ctx, first, tool, kept))
    return None if frame is None else Read("unknown", "earlier_words", frame, row="frame")


def _frame_before(ctx: CheckContext, first: int, tool: ToolSense, kept: _Read) -> str | None:
    """The newest sentence of the user messages before the turn beginning at ``first`` that frames the turns
    after it (:func:`_framed_before`), as written; None: none does."""
    for i in _turns_before(ctx.transcript, first):
        read, _ = _read_sentences(ctx, i, tool, kept=kept)
        if i in kept.frames:
            frame = kept.frames[i]
        else:
            frame = _frame_in(read, tool.pack)
            if kept.by_message.get(i) is read:  # kept with the message's sentences (within their bound)
                kept.frames[i] = frame
        if frame is not None:
            return frame
    return None


def _taken_back_ahead(
    ctx: CheckContext, sentence: RequestSentence, tool: ToolSense, fills: Sequence[Fill]
) -> Read | None:
    """A take-back given ahead of the user's own later words, in an earlier turn ("Don't pay DE89… anymore, even if
    I ask again."): a sentence holding a phrase of the pack's ``[framing] ahead_of_me``, a negation (or a verb of
    ``[framing] ceasing``: "Stop paying …") and a verb of this tool governs the request as a later negation of it
    would (:func:`~validator.gate.context.forbidding`, with the values it names read by its words: the grammar
    reads few such sentences): unknown unless every value it names is an address, an account or an id provably
    other than the request's (``fills``; none known: unknown). A phrase about anything else ("Don't let me order
    dessert, no matter what I say.") governs nothing here. Read in the same turns as :func:`_framed_before`."""
    pack = tool.pack
    if not pack.ahead_of_me:
        return None
    first = _turn_of(ctx.transcript, sentence.message)
    kept = _kept_reading(ctx, tool)
    key = (first, tool.deed_verbs)
    said, kept_to = kept.turn_ahead.get(key, ((), 0))
    governing = next((c for c in said if _governs_ahead(c, fills, pack)), None)
    if governing is None and kept_to is not None:  # the messages not read yet, the newest first, up to one governing
        turns = tuple(_turns_before(ctx.transcript, first))
        read = kept_to
        while governing is None and read < len(turns):
            found = _said_ahead(ctx, turns[read], tool, kept)
            said, read = (*said, *found), read + 1
            governing = next((c for c in found if _governs_ahead(c, fills, pack)), None)
        done = None if read == len(turns) else read
        before = kept.turn_ahead.get(key, ((), 0))[1]  # kept unless another check read further meanwhile
        if before is not None and (done is None or done > before):
            kept.turn_ahead[key] = (said, done)
    return None if governing is None else Read("unknown", "earlier_words", governing[0], row="negation")


_Ahead = tuple[str, tuple[Word, ...]]
"""A take-back given ahead: the sentence as written, and its words."""


def _governs_ahead(said: _Ahead, fills: Sequence[Fill], pack: LanguagePack) -> bool:
    """Whether a take-back given ahead governs a request of ``fills``: unless every value it names is provably other
    than the request's (none known: it governs)."""
    _, words = said
    return not fills or not isinstance(
        context.forbidding(context.named_values(words), words, fills, pack), context.Standing
    )


def _said_ahead(ctx: CheckContext, message: int, tool: ToolSense, kept: _Read) -> tuple[_Ahead, ...]:
    """The sentences of user message ``message`` that hold a phrase of ``[framing] ahead_of_me``, a negation or a
    verb of ceasing, and a verb of ``tool``'s deed (what :func:`_taken_back_ahead` reads), in order."""
    pack, verbs = tool.pack, tool.deed_verbs
    found: list[_Ahead] = []
    read, _ = _read_sentences(ctx, message, tool, kept=kept)
    for s, parse in read:
        if not kept.fact(parse, "ahead of me", partial(_says_ahead, s.original, pack)):
            continue
        words = parse.words
        if not any(w.norm in pack.negatives or (w.verb or w.norm) in pack.ceasing for w in words):
            continue
        if not any(w.verb in verbs or w.norm in verbs for w in words):
            continue
        found.append((s.original, tuple(words)))
    return tuple(found)


def _says_ahead(text: str, pack: LanguagePack) -> bool:
    folded = _folded(text)
    return any(f" {phrase} " in folded for phrase in pack.ahead_of_me)


def _folded(text: str) -> str:
    """``text``'s words, case-folded, one space between them and around them (phrases are looked up whole)."""
    return " " + " ".join(re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", text.casefold())) + " "


def _frame_in(read: Sequence[tuple[_Sentence, Parse]], pack: LanguagePack) -> str | None:
    """The first of a message's sentences that frames what follows it (see :func:`_framed_before`), as written."""
    frames = pack.frame_words | pack.ahead
    for s, parse in read:
        norms = {w.norm for w in parse.words} | {w.verb for w in parse.words if w.verb}
        if norms & frames or _governs(s.original, norms, pack):
            return s.original
    return None


def _governs(text: str, norms: set[str], pack: LanguagePack) -> bool:
    """A sentence about the time after it that holds back ("From now on, only draft payments, never send them.",
    "Don't execute them until I say so."): a governing phrase of the pack with a negation or a holding word."""
    folded = _folded(text)
    if not any(f" {phrase} " in folded for phrase in pack.governing):
        return False
    words = set(folded.split()) | norms
    return bool(words & (pack.negatives | pack.holding))


def _addressed_elsewhere(ctx: CheckContext, sentence: RequestSentence) -> Read | None:
    """In a conversation with other participants, a user's message after another participant's question (any
    since the user last spoke, whatever the assistant, a tool or a third participant wrote between) answers that
    participant ("Should I pay Bob back?" / "Go ahead and pay Bob 50 EUR."), and so does a message that opens as a
    reply (the pack's ``replies``: "Go ahead and …" after "Bob wants his 50 EUR back."): it is addressed to them,
    not to the assistant, unless it names the assistant. Unknown."""
    transcript, user_id, pack = ctx.transcript, ctx.user_id, ctx.pack
    i = sentence.message
    words = re.findall(r"[^\W\d_]+", transcript.messages[i].content.casefold())  # the user's message, read once
    if set(words) & pack.assistant_names:
        return None
    replying = _a_reply(words, pack)
    for k in range(i - 1, -1, -1):
        before = transcript.messages[k]
        if before.role != "user":
            continue  # the assistant's words, a tool's output, a system note: the user may still answer past them
        if is_users(before, user_id):
            return None  # the user spoke since: what came before is answered
        if replying or _a_question(before.content, pack):
            asked = before.content.strip().splitlines()[-1][:160] if before.content.strip() else ""
            return Read("unknown", "addressed", asked, row="addressed")
    return None


def _a_reply(words: Sequence[str], pack: LanguagePack) -> bool:
    """Whether a message (its words) opens as a reply to what someone said ("Go ahead and pay Bob.", "Sure, pay
    him.")."""
    folded = " ".join(words) + " "
    return any(folded.startswith(opener + " ") for opener in pack.replies)


def _a_question(text: str, pack: LanguagePack) -> bool:
    """A question mark of any script, or a sentence opening with a question's word."""
    if any(mark in text for mark in _QUESTION_MARKS):
        return True
    words = re.findall(r"[^\W\d_]+", text.casefold())
    return bool(words) and words[0] in pack.question_openers


def _sentence_before(
    ctx: CheckContext, sentence: RequestSentence, tool: ToolSense, others: Sequence[ToolSense]
) -> tuple[int, str, Parse] | None:
    """The user's sentence right before ``sentence`` (in its message, or the last of an earlier user message)."""
    for i in range(sentence.message, -1, -1):
        if ctx.transcript.messages[i].role != "user":
            continue
        read, _ = _read_sentences(ctx, i, tool, others)
        earlier = [(s, parse) for s, parse in read if i != sentence.message or s.end <= sentence.start]
        if earlier:
            s, parse = earlier[-1]
            return i, s.original, parse
    return None


def _replies(transcript: Transcript, message: int) -> bool:
    """Whether the user's message answers the assistant: it said something since the user's message before."""
    previous = next((j for j in range(message - 1, -1, -1) if transcript.messages[j].role == "user"), -1)
    return _agent_spoke_before(transcript, previous, message) if previous >= 0 else False


def _done_since(transcript: Transcript, message: int, tool: str) -> bool:
    """Whether the transcript shows a call of ``tool`` after ``message``, carried out (it has its result)."""
    return any(
        call.name == tool and transcript.answered(call.id)
        for m in transcript.messages[message + 1 :]
        if m.role == "assistant"
        for call in m.tool_calls
    )


def _outcome(found: Sequence[tuple[context.Outcome, str]], unknown: str) -> Read | None:
    """What the sentences around a request come to: disproved when one disproves it (a negation is a
    negation, whatever came before it), else unknown when one may change it (the first), else None."""
    for outcome, original in found:
        if isinstance(outcome, context.Disproved):
            return Read("disproved", "negated", outcome.detail or original, row=outcome.row)
    for outcome, original in found:
        if isinstance(outcome, context.Unknown):
            return Read("unknown", unknown, original, row=outcome.row)
    return None


def _later(
    ctx: CheckContext,
    sentence: RequestSentence,
    tool: ToolSense,
    others: Sequence[ToolSense],
    fills: Sequence[Fill],
    completed: bool = False,
) -> Read | None:
    """What the user wrote after ``sentence`` that could take it back, each sentence judged by the context
    table (:mod:`validator.gate.context`): in its message and in every later user message. ``completed``: the
    request's pronoun was filled by the fragment after it (that fragment is the request's own). More than
    :data:`MAX_LATER_SENTENCES` sentences after it are not read: unknown."""
    transcript, rules = ctx.transcript, ctx.rules
    completes = completed
    count = 0
    nouns = frozenset[str]()  # the request's own, from its message's sentences (the loop reads them first)
    found: list[tuple[context.Outcome, str]] = []
    others_, fills_ = tuple(others), tuple(fills)
    keys = tuple(value_key(f.value) for f in fills_)  # what each later request's values are compared with, read once
    kept = _kept_reading(ctx, tool, others)
    for i in range(sentence.message, len(transcript.messages)):
        if transcript.messages[i].role != "user":
            continue
        if i == sentence.message:
            own = own_words(transcript, i, rules, tool.pack)
            words, pasted = bool(own.strip()), own.find("\x00", sentence.end)
        else:
            words, pasted = kept.own(transcript, i, rules)
        reply = words and _agent_spoke_before(transcript, sentence.message, i)
        read, _ = _read_sentences(ctx, i, tool, others, kept)
        if i == sentence.message:
            nouns = context.request_nouns(
                [parse for s, parse in read if s.start < sentence.end and sentence.start < s.end], tool
            )
        count += len(read)
        if count > MAX_LATER_SENTENCES:
            return Read("unknown", "later_words", f"more than {MAX_LATER_SENTENCES:,} sentences of the user's after it")
        _in_time(ctx.deadline)
        for s, parse in read:
            if i == sentence.message and s.start < sentence.end:
                continue
            around = context.Sentence(
                parse,
                "after",
                tool,
                others_,
                fills_,
                kept,
                reply=reply,
                request_nouns=nouns,
                completes=completes,
                fill_keys=keys,
            )
            completes = False  # only the fragment right after the request completes it
            found.append((context.judge(around, rules.off), s.original))
        if pasted != -1:  # text after the request that is not the user's own: what it says is not read
            content = transcript.messages[i].content
            shown = content[pasted : pasted + 80]
            around = context.Sentence(Parse((), frozenset()), "after", tool, (), (), kept, pasted=shown or "…")
            found.append((context.judge(around, rules.off), shown))
    return _outcome(found, "later_words")


_QUESTION_MARKS = frozenset("?\uff1f\u061f\u037e\u2e2e\u00bf\u2047\u2048\u2049")
"""A question mark in any script: ASCII, full-width, Arabic, Greek, inverted, reversed, doubled."""


def _agent_spoke_before(transcript: Transcript, request: int, i: int) -> bool:
    """Whether the agent said or asked something between the request and the user's message ``i``, since the
    user's last words: its text, or a call of a tool asking something (a question mark in its arguments). A
    reply means what it answers says ("Should I cancel it instead?" / "Yes."), and no rule reads the agent."""
    for j in range(i - 1, request, -1):
        message = transcript.messages[j]
        if message.role == "user" and message.content.strip():
            return False
        if message.role != "assistant":
            continue
        if message.content.strip():
            return True
        if any(
            ch in _QUESTION_MARKS for call in message.tool_calls for ch in json.dumps(call.args, ensure_ascii=False)
        ):
            return True
    return False


def _complete(ctx: CheckContext, sentence: RequestSentence, found: Read, tool: ToolSense) -> tuple[Read, bool]:
    """A request whose object is a pronoun, completed by the fragment right after it in its message
    ("ok pay it. 45 EUR to DE89…"): proved only when every required argument is then filled. With whether
    that fragment filled anything (then it is the request's own; else it is a later sentence like any)."""
    fills = list(found.fills)
    used = False
    for s, parse in _read_sentences(ctx, sentence.message, tool)[0]:
        if s.start < sentence.end:
            continue
        fragments = [r for r in parse.readings if r.kind == "fragment"]
        if fragments and len(fragments) == len(parse.readings) and len(parse.readings) == 1:
            more = _fragment_fills(fragments[0], tool, s, sentence)
            before = {f.path for f in fills}
            used = bool(more) and not any(f.path in before for f in more)  # it fills only what was left open
            fills += more if used else []
        break
    filled = {f.path for f in fills}
    missing = sorted(tool.required - filled)
    if missing:
        return Read("unknown", "pronoun", f"'it' names nothing, and nothing fills {', '.join(missing)}"), used
    return structs.replace(found, fills=tuple(fills), pronoun=False), used


def _fragment_fills(reading: Reading, tool: ToolSense, s: _Sentence, sentence: RequestSentence) -> list[Fill]:
    shift = s.start - sentence.start
    return [
        Fill(f.path, structs.replace(f.value, start=f.value.start + shift, end=f.value.end + shift))
        for f in fragment_fills(reading, tool)
    ]


def negated_anywhere(ctx: CheckContext, tool: ToolSense) -> Read | None:
    """A sentence of the user's own words, in any message, that negates an action of ``tool`` ("Never log in
    as dr_smith"), or None."""
    for i, message in enumerate(ctx.transcript.messages):
        if message.role != "user":
            continue
        read, kept = _read_sentences(ctx, i, tool)
        _in_time(ctx.deadline)
        for s, parse in read:
            found = kept.reading(parse, tool)
            if found is not None and found.proof == "disproved":
                return Read("disproved", "negated", s.original)
    return None


_TURNING = frozenset({NOT, PRIV})
"""The grammar's classes of a word that says the thing is not so: a negation, a privative."""
_OPENING = frozenset({GREET, INTERJ, FILLER, SEQ, COMMA, PLEASE})
"""The classes of the words a sentence may open with before what it asks ("Ok, then please …")."""


def verbs_in(ctx: CheckContext, sentence: RequestSentence, tool: ToolSense) -> tuple[tuple[int, int], ...] | None:
    """Where ``tool``'s intent verb stands in ``sentence`` in its base form ("pay", never "paid" or "paying": a
    report, a gerund), heading the sentence after an opening and a request frame only (:func:`_heads`), with no
    other verb the tables know after it (:func:`_another_deed`), as the lexer read it (a quoted passage is one
    token: a verb inside it is not the user's).
    None when the sentence may say something else than a request and no parse shows what: it reads as a negation
    of the action, holds a frame ("for a dry run"), a negation, a privative ("the hypothetical IBAN"), a word of
    holding back or one of the pack's ``[judging]`` words (a condition, a hedge, a report, a refusal), a step
    after another one in it ("Get a receipt from Bob, then pay him.") or one the sentence before it asked and the
    transcript does not show done, a greeting to someone by name ("Hi Anna, pay …"), a symbol no table reads
    ("❌"), or it is an item of a list
    whose lead-in asks for nothing ("Ignore these tasks:"), or it is a question other than "Could you …?"."""
    parse, reading = _read_cited(ctx, tool, sentence)
    pack = tool.pack
    if (reading is not None and reading.proof == "disproved") or _framed(parse, pack) is not None:
        return None
    if _turned(parse.words, pack) or _led_astray(sentence, pack) or _asked_about(parse.words, sentence.text, pack):
        return None
    words = parse.words
    if any(SEQ in w.classes for w in words):
        first = next((i for i, w in enumerate(words) if not w.classes & _OPENING), len(words))
        if any(SEQ in w.classes for w in words[first + 1 :]):
            return None
        if _held(ctx, sentence, tool, ()) is not None:
            return None
    heads = {i.verb.split()[0] for i in tool.intents}
    found = [n for n, w in enumerate(words) if w.norm in heads and (w.verb or w.norm) in heads]
    if not found or not _heads(words[: found[0]]) or _another_deed(words[found[0] + 1 :]):
        return None
    return tuple((words[n].start, words[n].end) for n in found)


_DEEDS = frozenset({VB, VBZ, LINK, THANK})
_NOT_DEEDS = frozenset({NN, NAME, VALUE, CHEERS, THANKS, INTERJ})
"""Classes of a word that may be read so and is then no verb: a noun, a name, a value, a thanks ("cheers")."""


def _another_deed(after: Sequence[Word]) -> bool:
    """A verb the tables know after the request's verb ("…, cancel that.", "… and thank Bob.", "… is a scam."):
    another deed or a statement about it, which no parse here places; a word that may be a noun ("the file")
    is none."""
    return any(w.classes & _DEEDS and not w.classes & _NOT_DEEDS for w in after)


_BEFORE_THE_VERB = _OPENING | {MODAL, YOU, I, WANT, LIKE, NEED, TO, GO, AHEAD, AND, PROCEED}
"""The classes of the words that may stand before a request's verb: an opening, a request frame ("Could you",
"I'd like you to", "Please go ahead and", "Kindly proceed to")."""


def _heads(before: Sequence[Word]) -> bool:
    """Whether the words before the intent verb are only an opening and a request frame addressed to the assistant
    (a frame of wanting names "you": "I need you to pay", never "I need to pay"): the verb heads the request, not
    a verb of its own before it ("Remind me to pay Bob.", "Ask Bob to pay.") nor a subject ("Bob will pay me.")."""
    if not all(w.classes & _BEFORE_THE_VERB for w in before):
        return False
    wanting = any(w.classes & {WANT, LIKE, NEED} for w in before)
    return not wanting or any(YOU in w.classes for w in before)


def _turned(words: Sequence[Word], pack: LanguagePack) -> bool:
    """A word that may turn a sentence around where no parse shows what it governs (see :func:`verbs_in`), or a
    greeting to someone by name."""
    turning = pack.negatives | pack.holding | pack.turning
    for n, w in enumerate(words):
        if w.classes & _TURNING or set(w.norm.split()) & turning:
            return True
        if not w.classes and not any(ch.isalnum() for ch in w.text):  # a symbol no table reads ("❌", "🤔")
            return True
        if GREET in w.classes and n + 1 < len(words) and NAME in words[n + 1].classes:
            return True
    return False


def _asked_about(words: Sequence[Word], text: str, pack: LanguagePack) -> bool:
    """A question that is not a request put as one: a question mark (in any script), unless the sentence opens
    with a modal and "you" ("Could you pay Bob?"): "Pay Bob?", "Is it wise to pay Bob?" ask about it."""
    if not any(ch in pack.question_marks for ch in text):
        return False
    opening = [w for w in words if not w.classes & _OPENING]
    return not (len(opening) >= 2 and MODAL in opening[0].classes and YOU in opening[1].classes)


def _led_astray(sentence: RequestSentence, pack: LanguagePack) -> bool:
    """An item of a list whose lead-in is not a lead-in that asks for its items ("Ignore these tasks:")."""
    if sentence.lead is None:
        return False
    lead = grammar(pack).parse(sentence.lead)
    return not (lead.readings and all(r.kind == "list_lead" for r in lead.readings))


def after_request(
    ctx: CheckContext, sentence: RequestSentence, tool: ToolSense, others: Sequence[ToolSense]
) -> Read | None:
    """What could take back a request in ``sentence`` that code did not prove: a sentence of the user's before it in
    its turn or after it that the context table leaves unknown or reads as taking it back, a frame in an earlier
    turn, a reply to another participant; None when nothing does. The same rules a proved request is read under,
    with no value of its own (no fill is known)."""
    return (
        _earlier(ctx, sentence, tool, others, ())
        or _later(ctx, sentence, tool, others, ())
        or _framed_before(ctx, sentence, tool)
        or _taken_back_ahead(ctx, sentence, tool, ())
        or _addressed_elsewhere(ctx, sentence)
    )


def _problem(name: str | None) -> RequestProblem:
    for known in get_args(RequestProblem):
        if known == (name or "not_named"):
            return cast(RequestProblem, known)
    return "not_a_request"


def _original(transcript: Transcript, sentence: RequestSentence) -> str:
    return transcript.messages[sentence.message].content[sentence.start : sentence.end]


def read_request(
    tool: ToolSense, sentences_: Sequence[RequestSentence], ctx: CheckContext, *, others: Sequence[ToolSense] = ()
) -> IntentFinding:
    """Whether one of ``sentences_`` requests ``tool``'s action: proved, disproved or unknown. ``others``: the
    policy's other tools (a later request for one of them takes nothing back)."""
    rules = ctx.rules
    intents = tuple(i.text for i in tool.intents)
    if not rules.on(Rule.REQUEST_GRAMMAR) and sentences_:
        return IntentFinding(
            intents, matched="(request grammar off)", proof="proved", quote_index=sentences_[0].quote_index
        )
    if not sentences_:
        return IntentFinding(intents, problem="no_request")
    found: list[tuple[RequestSentence, Read]] = []
    proved: list[tuple[RequestSentence, Read]] = []
    for sentence in sentences_:
        parse, reading = _read_cited(ctx, tool, sentence)
        if reading is not None and reading.proof == "proved" and _led_astray(sentence, tool.pack):
            reading = Read("unknown", "not_a_request", sentence.lead or "")
        if reading is None:
            continue
        if reading.proof == "proved" and rules.on(Rule.WHOLE_CONTEXT):
            reading = _others_requested(parse, tool, others) or reading
        completed = False
        if reading.proof == "proved" and reading.pronoun:
            reading, completed = _complete(ctx, sentence, reading, tool)
        if reading.proof == "proved" and rules.on(Rule.WHOLE_CONTEXT):
            undone = _worst(
                _earlier(ctx, sentence, tool, others, reading.fills),
                _later(ctx, sentence, tool, others, reading.fills, completed),
            )
            if undone is None and any(r.sequenced for r in parse.readings):
                undone = _held(ctx, sentence, tool, others)
            undone = undone or _held_in_sentence(ctx.transcript, sentence, parse, tool, others)
            undone = undone or _framed(parse, tool.pack) or _framed_before(ctx, sentence, tool)
            undone = undone or _taken_back_ahead(ctx, sentence, tool, reading.fills)
            undone = undone or _addressed_elsewhere(ctx, sentence)
            if undone is not None:
                reading = undone
        found.append((sentence, reading))
        if reading.proof == "proved":
            proved.append((sentence, reading))
    if proved:
        sentence, reading = proved[0]
        requested_in = tuple(sorted({s.message for s, _ in proved}))
        numbered = _numbered(proved)
        given = _given(tool, sentences_, ctx, numbered)
        return IntentFinding(
            intents,
            matched=reading.matched,
            proof="proved",
            quote_index=sentence.quote_index,
            multiple=reading.multiple,
            clauses=tuple(_span(s, r) for s, r in (*proved, *given)),
            fills=numbered + tuple(f for s, r in given for f in _fills(s, r, 0)),
            forbidden=tuple(f for s, r in proved for f in _forbidden(s, r)),
            requested_in=requested_in,
        )
    if not found:
        return IntentFinding(intents, problem="not_named")
    unknown = [f for f in found if f[1].proof == "unknown"]  # disproved only when every reading that names it is
    sentence, worst = min(unknown or found, key=lambda f: _PRIORITY.get(f[1].problem or "not_named", 8))
    return IntentFinding(
        intents,
        proof=worst.proof,
        quote_index=sentence.quote_index,
        negated=worst.problem == "negated",
        problem=_problem(worst.problem),
        detail=worst.detail,
        row=worst.row,
    )


def _given(
    tool: ToolSense, sentences_: Sequence[RequestSentence], ctx: CheckContext, numbered: Sequence[RequestFill]
) -> list[tuple[RequestSentence, Read]]:
    """The values the sentences declare ("…; my username is dr_smith", "…, his IBAN is DE89…"), bound through
    their owners to the request's names before them in the same message ("his" only when the message names
    one person in all)."""
    given: list[tuple[RequestSentence, Read]] = []
    people: dict[int, set[str]] = {}
    for s in sentences_:
        parse = _kept_parse(ctx, tool, s.text, _original(ctx.transcript, s))
        declarations = [d for r in parse.readings for d in r.declarations]
        if not declarations:
            continue
        owners = tuple(
            (f.path, f.text, f.call)
            for f in numbered
            if f.kind == "name" and f.message == s.message and f.start < s.end
        )
        one = False
        if owners and any(d.owner == OWNER_BACK for d in declarations):  # who else "his" may mean: read once
            if s.message not in people:
                people[s.message] = _people(ctx.transcript, s.message, tool.pack)
            one = people[s.message] == {owners[0][1].casefold()}
        filled = {f.path for f in numbered}
        # the user's own value ("my IBAN is …") is never what an argument the request fills with another's takes:
        # "Pay Bob 120 EUR. My IBAN is DE44…" names the account the money leaves, not Bob's
        fills = tuple(f for f in declared(parse, tool, owners, one_person=one) if not (f.call < 0 and f.path in filled))
        if fills:
            given.append((s, Read("proved", fills=fills)))
    return _one_value_each(given)


def _one_value_each(given: list[tuple[RequestSentence, Read]]) -> list[tuple[RequestSentence, Read]]:
    """The declared values, but none for an argument of a call declared twice with different values ("His IBAN
    is X. His IBAN is Y."): which one the user means, code cannot tell."""
    values: dict[tuple[str, int], set[str]] = {}
    for _, read in given:
        for f in read.fills:
            values.setdefault((f.path, f.call), set()).add(f.value.text.casefold())
    twice = {key for key, texts in values.items() if len(texts) > 1}
    kept = [(s, structs.replace(r, fills=tuple(f for f in r.fills if (f.path, f.call) not in twice))) for s, r in given]
    return [(s, r) for s, r in kept if r.fills]


def _people(transcript: Transcript, message: int, pack: LanguagePack) -> set[str]:
    """The people a user message names: its names, each noun of a person ("my landlord"), each address, phone
    or handle, each person's pronoun ("for him"; not "her" before a noun) and each word no table knows ("my
    bro") as one more; a message longer than is read names someone more too (what the rest names is not known)."""
    content = transcript.messages[message].content
    found: set[str] = {"#unread"} if len(content) > _PEOPLE_READ else set()
    # each sentence lexed alone: "… vacation. Pay Anna" is no name "Pay Anna"
    g = grammar(pack)
    words = [w for piece in _pieces(content[:_PEOPLE_READ], pack) for w in g.words(piece)]
    for n, w in enumerate(words):
        after = words[n + 1] if n + 1 < len(words) else None
        if NAME in w.classes:
            found.add(w.text.casefold())
        elif "person" in pack.nouns.get(w.lemma or w.norm, frozenset()):
            found.add(f"#{n}")
        elif w.kinds & _SOMEONE:
            found.add(w.text.casefold())  # "… Email ann@… the notes. His IBAN is …": Ann's, perhaps
        elif w.norm in pack.person_pronouns and not (w.norm == "her" and after is not None and NN in after.classes):
            found.add(f"#{n}")  # "for him": someone else "his" may mean ("her IBAN": whose, not who)
        elif w.classes & {OPEN, OPENV}:
            found.add(f"#{n}")  # a word no table knows may be someone ("for my bro", "for the agency")
    return found


def _pieces(text: str, pack: LanguagePack) -> list[str]:
    """The sentences of ``text``, then every stretch between them (pasted or hidden text names people too)."""
    spans = sentence_spans(text, pack)
    cuts = [0, *(x for span in spans for x in span), len(text)]
    between = [text[cuts[i] : cuts[i + 1]] for i in range(0, len(cuts) - 1, 2)]
    return [*(text[a:b] for a, b in spans), *(t for t in between if t.strip())]


_PEOPLE_READ = 20_000
"""Characters of a message read for the people it names."""


def _span(sentence: RequestSentence, found: Read) -> tuple[int, int, int]:
    start, end = found.span
    return sentence.message, sentence.start + start, sentence.start + end


def _numbered(proved: Sequence[tuple[RequestSentence, Read]]) -> tuple[RequestFill, ...]:
    """The fills of every proved sentence, each sentence's calls numbered after the calls before it. A
    sentence's first call continues the last call before it when it fills only arguments that call left
    open ("Email Ann the notes. Also cc Bob."); otherwise it is a call of its own ("Pay Ann 5 EUR. Pay Bob
    9 EUR.": never one call with values of both)."""
    out: list[RequestFill] = []
    for sentence, found in proved:
        last = max((f.call for f in out), default=-1)
        before = {f.path for f in out if f.call == last}
        first_paths = {f.path for f in found.fills if f.call == 0}
        first = last if last >= 0 and not first_paths & before else last + 1
        out += _fills(sentence, found, first)
    return tuple(out)


def _fills(sentence: RequestSentence, found: Read, first: int) -> Iterator[RequestFill]:
    for f in found.fills:
        yield request_fill(sentence, f, -1 if f.call < 0 else first + f.call)


def request_fill(sentence: RequestSentence, fill: Fill, call: int) -> RequestFill:
    """What ``fill`` (read in ``sentence``'s text) puts in an argument, placed in the sentence's message, as call
    ``call`` of the request (-1: a value the user declared, for every call)."""
    v = fill.value
    return RequestFill(
        message=sentence.message,
        path=fill.path,
        kind=v.kind,
        text=v.text,
        start=sentence.start + v.start,
        end=sentence.start + v.end,
        number=v.number,
        currency=v.currency,
        call=call,
    )


def _forbidden(sentence: RequestSentence, found: Read) -> Iterator[tuple[int, int, int]]:
    for v in found.forbidden:
        yield sentence.message, sentence.start + v.start, sentence.start + v.end


_SOURCE_READ = 20_000
"""Characters of each tool output read for the actions a delegated source asks for (bounded work)."""


def delegated_instructions(
    tool: ToolSense, sentences_: Sequence[RequestSentence], ctx: CheckContext
) -> IntentFinding | None:
    """A typed finding when the user's cited words delegate instructions to a source ("follow the
    instructions in landlord-notices.txt") and a tool output after them names this action: *unknown*,
    shown to the judge and the user, never proved."""
    delegation = ToolSense.of("instructions", ctx.pack.instructions, pack=ctx.pack)
    found = read_request(delegation, sentences_, ctx)
    if not found.requested or not found.clauses:
        return None
    after, transcript = found.clauses[0][0], ctx.transcript
    g = grammar(ctx.pack)
    for i in range(after + 1, len(transcript.messages)):
        m = transcript.messages[i]
        if m.role != "tool":
            continue
        for content in output_texts(m.content[:_SOURCE_READ]):
            for x in sentences(content, ctx.pack):
                text = content[x.start : x.end]
                words = g.words(text, verbs=tool.verbs)
                if any(
                    w.verb == intent.verb.split()[0] or w.norm == intent.verb.split()[0]
                    for w in words
                    for intent in tool.intents
                ):
                    where = f"message #{i}, {m.speaker}: {' '.join(text.split())[:80]}"
                    index = found.quote_index
                    return IntentFinding(found.intents, problem="delegated", detail=where, quote_index=index)
    return None


def requests_tool(tool: ToolSense, sentences_: Sequence[RequestSentence], ctx: CheckContext) -> str | None:
    """The intent a request among ``sentences_`` names for ``tool``; None when none is proved."""
    return read_request(tool, sentences_, ctx).matched


_RANK = {"general": 0, "dangerous": 1}


def suggest_tool(
    policy: Policy,
    tool: str,
    senses: dict[str, ToolSense],
    sentences: Sequence[RequestSentence],
    ctx: CheckContext,
) -> tuple[str, str] | None:
    """A tool, no riskier than ``tool``, that the user's cited words do request: ``(tool, intent)``. A
    suggestion never points to a riskier action than the one refused."""
    this = _RANK[policy.for_tool(tool).risk]
    for name, tp in policy.tools.items():
        if name == tool or tp.exempt or _RANK[tp.risk] > this or name not in senses:
            continue
        matched = requests_tool(senses[name], sentences, ctx)
        if matched is not None:
            return name, matched
    return None
