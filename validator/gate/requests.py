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
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import cast, get_args

from validator.gate.grammar import (
    OWNER_BACK,
    OWNER_USER,
    Action,
    Declaration,
    Parse,
    Phrase,
    Reading,
    Value,
    grammar,
)
from validator.gate.lexer import Word
from validator.gate.reader import (
    PROVABLE,
    Fill,
    Read,
    ToolSense,
    acted_on_kinds,
    beside,
    declared,
    fits,
    forbidden_values,
    fragment_fills,
    not_alone,
    owned_by,
    read_parse,
    same_value,
    unread,
)
from validator.gate.sentences import own_words
from validator.gate.split import sentences
from validator.gate.text import SearchBudgetExceeded
from validator.inputs.transcript import Fact, Transcript
from validator.language import english
from validator.language.rules import ALL_ON, Rule, Rules
from validator.policy import Policy
from validator.verdict.findings import IntentFinding, Proof, RequestFill, RequestProblem, RequestSentence

__all__ = [
    "delegated_instructions",
    "negated_anywhere",
    "read_request",
    "requests_tool",
    "suggest_tool",
    "suggestion",
    "why_not_requested",
]

_PRIORITY: dict[str, int] = {
    "negated": 0,
    "later_words": 1,
    "earlier_words": 1,
    "beside_words": 1,
    "retracted": 1,
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


_NOT_TARGETS = frozenset({"money", "number", "measure", "time", "text"})
"""Kinds of a request's values a forbidden address or account is never compared with."""


@dataclass(frozen=True, slots=True)
class _Sentence:
    """A sentence of a user message: where it stands, its own words and the message's text there."""

    message: int
    start: int
    end: int
    text: str
    original: str


def _user_sentences(transcript: Transcript, message: int, rules: Rules) -> list[_Sentence]:
    own = own_words(transcript, message, rules)
    content = transcript.messages[message].content
    return [_Sentence(message, x.start, x.end, own[x.start : x.end], content[x.start : x.end]) for x in sentences(own)]


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

    __slots__ = ("alone_facts", "by_message", "chars", "objs", "parsed", "reads")

    def __init__(self, carried: _Read | None = None) -> None:
        # dict(...) of a dict copies it in one step (no other thread runs in between)
        self.by_message: dict[int, tuple[tuple[_Sentence, Parse], ...]]
        self.by_message = dict(carried.by_message) if carried else {}
        self.parsed: dict[tuple[str, str], Parse] = dict(carried.parsed) if carried else {}
        """Sentences of the user's words (their text and the message's text there), parsed."""
        self.objs: dict[int, Parse] = dict(carried.objs) if carried else {}
        """Every kept parse, by its id (held here, so no other object can take its id while the memo lives)."""
        self.reads: dict[tuple[int, ToolSense], Read | None] = dict(carried.reads) if carried else {}
        """``read_parse`` of a kept parse, by the parse and the tool (the same tool reads the same each check)."""
        self.alone_facts: dict[tuple[int, ToolSense, tuple[ToolSense, ...], bool], tuple[bool, tuple[Value, ...]]]
        self.alone_facts = dict(carried.alone_facts) if carried else {}
        """:func:`_alone_facts` of a kept parse (whether a later request stands on its own is then a comparison of
        its values with the request's)."""
        self.chars: int = carried.chars if carried else 0

    def parse(self, text: str, original: str, verbs: frozenset[str], phrasal: frozenset[str]) -> Parse:
        """The parse of a sentence (its text, and the message's text there) in this reading's vocabulary: the one
        kept, or parsed now and kept within the bound (first writer wins: another check may keep it first)."""
        key = (text, original)
        kept = self.parsed.get(key)
        if kept is not None:
            return kept
        found = grammar().parse(text, original=original, verbs=verbs, phrasal=phrasal)
        if self.chars + len(text) > MAX_READ_CHARS:
            return found
        kept = self.parsed.setdefault(key, found)
        if kept is found:
            self.objs[id(found)] = found
            self.chars += len(text)
        return kept

    def _kept(self, parse: Parse) -> bool:
        return self.objs.get(id(parse)) is parse

    def alone(
        self, parse: Parse, tool: ToolSense, others: Sequence[ToolSense], mine: Read | None
    ) -> tuple[bool, tuple[Value, ...]]:
        """:func:`_alone_facts`, computed once for a kept parse, a tool and the policy's other tools."""
        if not self._kept(parse):
            return _alone_facts(parse, tool, others, mine)
        key = (id(parse), tool, tuple(others), mine is not None and mine.proof == "proved")
        found = self.alone_facts.get(key)
        if found is None:
            found = _alone_facts(parse, tool, others, mine)
            if len(self.alone_facts) >= MAX_KEPT_READINGS:
                self.alone_facts.clear()
            self.alone_facts[key] = found
        return found

    def reading(self, parse: Parse, tool: ToolSense) -> Read | None:
        """``read_parse(parse, tool)``, computed once for a kept parse and a tool."""
        if not self._kept(parse):
            return read_parse(parse, tool)
        key = (id(parse), tool)
        if key in self.reads:
            return self.reads[key]
        found = read_parse(parse, tool)
        if len(self.reads) >= MAX_KEPT_READINGS:
            self.reads.clear()
        self.reads[key] = found
        return found


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
    lambda transcript, key: _Read(),
    lambda found, longer, start, key: _Read(found),  # the prefix's messages are the same: what was found holds
)


def _kept_parse(transcript: Transcript, rules: Rules, tool: ToolSense, text: str, original: str) -> Parse:
    """The parse of one sentence of the transcript's user words (a cited one) in ``tool``'s vocabulary: parsed once
    per transcript (its sentences are kept with the transcript's others, under the same bound)."""
    return transcript.fact(_READ, (rules, tool.verbs, tool.phrasal)).parse(text, original, tool.verbs, tool.phrasal)


def _in_time(deadline: float | None) -> None:
    """Raise :class:`SearchBudgetExceeded` past ``deadline`` (the check then answers with what it proved: nothing)."""
    if deadline is not None and time.perf_counter() > deadline:
        raise SearchBudgetExceeded("the gate's time budget ran out while reading the user's sentences")


def _read_sentences(
    transcript: Transcript,
    message: int,
    rules: Rules,
    tool: ToolSense,
    others: Sequence[ToolSense] = (),
    deadline: float | None = None,
) -> tuple[tuple[tuple[_Sentence, Parse], ...], _Read]:
    """The user's sentences of ``message`` with their parses in ``tool``'s (and ``others``') vocabulary: parsed
    once per transcript and vocabulary (a sentence said again is parsed once); with the transcript's kept reading
    (for :meth:`_Read.reading`). Past ``deadline``, :class:`SearchBudgetExceeded`."""
    verbs, phrasal = _vocabulary(tool, others)
    kept = transcript.fact(_READ, (rules, verbs, phrasal))
    read = kept.by_message.get(message)
    if read is not None:
        return read, kept
    found: list[tuple[_Sentence, Parse]] = []
    chars = 0
    for n, s in enumerate(_user_sentences(transcript, message, rules)):
        if n % 64 == 63:
            _in_time(deadline)
        chars += len(s.text)
        found.append((s, kept.parse(s.text, s.original, verbs, phrasal)))
    read = tuple(found)
    if kept.chars + chars <= MAX_READ_CHARS:  # the message's sentences, kept in order
        read = kept.by_message.setdefault(message, read)
        kept.chars += chars
    return read, kept


def _others_requested(parse: Parse, tool: ToolSense, others: Sequence[ToolSense]) -> Read | None:
    """Every verb beside the request in its sentence must be a request for another tool the policy knows
    ("find the draft and email it", "pay Bob and email Ann the receipt"); a verb no tool has ("…, then
    cancel.", "Wait for my message, then pay Bob") leaves the request unknown."""
    own_work = english().own_work
    for reading in parse.readings:
        for action in beside(reading, tool):
            if action.verb in own_work and not action.negated:
                continue  # "Summarize my inbox, then email Bob the summary": reaches no one
            if not any(fits(reading, action, o) for o in others):
                return Read("unknown", "beside_words", f"'{action.verb}' is no request of a tool the policy knows")
    return None


def _earlier(
    transcript: Transcript,
    sentence: RequestSentence,
    tool: ToolSense,
    others: Sequence[ToolSense],
    fills: Sequence[Fill],
    rules: Rules,
    deadline: float | None = None,
) -> Read | None:
    """What the user wrote before ``sentence`` in the same turn that could change it: in its message and in
    the user's messages right before it, with no word of the agent's between ("Don't do anything until I say
    go. Pay Bob 50 EUR."; "Ignore my next message." sent just before; "Fwd from Eve" over a forwarded
    request). Read as the words after it are, but in an earlier message nothing takes it back for certain (an
    earlier "Never pay DE44…" and a request for it: the user decides). A lead-in ("Here is what the scammer
    wrote:") presents what follows: the request is not read as the user's own. Turns the agent answered are
    not read: they were settled, and a later request is the user's word after them."""
    first = sentence.message
    author = transcript.messages[first].author
    while (
        first > 0 and transcript.messages[first - 1].role == "user" and transcript.messages[first - 1].author == author
    ):
        first -= 1  # (another author's message in a group chat is not this user's turn)
    for i in range(first, sentence.message + 1):
        read, kept = _read_sentences(transcript, i, rules, tool, others, deadline)
        for s, parse in read:
            if i == sentence.message and s.end > sentence.start:
                break
            if _presents(parse) and not (i == sentence.message and sentence.lead is not None):
                return Read("unknown", "earlier_words", s.original)
            verdict = _harmless(parse, tool, others, fills, after=False, kept=kept)
            if verdict is not None:
                proof, detail = verdict
                if proof == "disproved" and i == sentence.message:
                    return Read("disproved", "negated", detail or s.original)
                return Read("unknown", "earlier_words", detail or s.original)
    return None


def _presents(parse: Parse) -> bool:
    """Whether a sentence ends in a colon: it presents what follows (a lead-in, a quotation, a list)."""
    ends = [w for w in parse.words if w.text.strip()]
    return bool(ends) and ends[-1].text == ":"


def _later(
    transcript: Transcript,
    sentence: RequestSentence,
    tool: ToolSense,
    others: Sequence[ToolSense],
    fills: Sequence[Fill],
    rules: Rules,
    completed: bool = False,
    deadline: float | None = None,
) -> Read | None:
    """What the user wrote after ``sentence`` that could take it back: a negation of the same action
    (disproved), or a sentence that is not harmless (unknown, naming it). ``completed``: the request's
    pronoun was filled by the fragment after it (that fragment is the request's own). More than
    :data:`MAX_LATER_SENTENCES` sentences after it are not read: unknown. A reply to the agent's words that is
    not a request read whole ("Yes.", "Ok", "Thanks!", "The lease is sorted."), or a sentence naming a noun of
    the request's, leaves it unknown, unless a sentence after it disproves it (a negation is a negation,
    whatever came before it)."""
    skip_fragment = completed
    count = 0
    nouns = frozenset[str]()  # the request's own, from its message's sentences (the loop reads them first)
    pending: Read | None = None
    for i in range(sentence.message, len(transcript.messages)):
        if transcript.messages[i].role != "user":
            continue
        own = own_words(transcript, i, rules)
        spoken = bool(own.strip()) and _agent_spoke_before(transcript, sentence.message, i)
        pasted = own.find("\x00", sentence.end if i == sentence.message else 0)
        if pasted != -1:  # text after the request that is not the user's own: what it says is not read
            content = transcript.messages[i].content
            return Read("unknown", "later_words", "pasted or quoted text after it: " + content[pasted : pasted + 80])
        read, kept = _read_sentences(transcript, i, rules, tool, others, deadline)
        if i == sentence.message:
            nouns = _nouns_of(sentence, read, tool)
        count += len(read)
        if count > MAX_LATER_SENTENCES:
            return Read("unknown", "later_words", f"more than {MAX_LATER_SENTENCES:,} sentences of the user's after it")
        _in_time(deadline)
        for s, parse in read:
            if i == sentence.message and s.start < sentence.end:
                continue
            if skip_fragment and parse.readings and all(r.kind == "fragment" for r in parse.readings):
                skip_fragment = False
                continue  # the fragment that completed a pronoun's request
            skip_fragment = False
            verdict = _harmless(parse, tool, others, fills, kept=kept)
            if verdict is not None:
                proof, detail = verdict
                return Read(proof, "negated" if proof == "disproved" else "later_words", detail or s.original)
            if pending is not None:
                continue
            if spoken and not all(r.kind in ("request", "negated") for r in parse.readings):
                # "Yes, please." means what it answers says ("Should I cancel it instead?"): no rule reads that
                pending = Read("unknown", "later_words", f"a reply to the assistant's words: {s.original}")
            elif nouns & _nouns_of_parse(parse, tool) and not _same_deed(parse, tool):
                pending = Read("unknown", "later_words", s.original)  # "The workshop is cancelled."
    return pending


def _nouns_of_parse(parse: Parse, tool: ToolSense) -> frozenset[str]:
    """The nouns of a sentence, each by its singular, for comparing nouns across sentences; not the tool's own
    verbs read as nouns ("email" in "Never email eve@…": the tool's verbs are compared as verbs)."""
    verbs = {i.verb for i in tool.intents} | tool.verbs
    keys = ((w, w.lemma or w.norm) for w in parse.words if w.classes & {"NN", "NNS"})
    return frozenset(key for w, key in keys if not (key in verbs or w.norm in verbs or (w.verb and w.verb in verbs)))


def _nouns_of(sentence: RequestSentence, read: Sequence[tuple[_Sentence, Parse]], tool: ToolSense) -> frozenset[str]:
    """Every noun of the request's sentence, its purpose's and its phrases' too ("for *the workshop*"): a
    later sentence naming one of them may be about the request ("The workshop is cancelled.")."""
    return frozenset().union(
        *(_nouns_of_parse(parse, tool) for s, parse in read if s.start < sentence.end and sentence.start < s.end)
    )


def _same_deed(parse: Parse, tool: ToolSense) -> bool:
    """Whether the sentence asks, every way it reads, for this tool's deed again ("Email Ann the report. Email
    Bob the report."): another request of its own naming its kind of thing as it does (it stood alone)."""
    return bool(parse.readings) and all(
        r.kind == "request" and r.actions and all(tool.intent_of(a) is not None and not a.negated for a in r.actions)
        for r in parse.readings
    )


def _filled_kinds(tool: ToolSense, fills: Sequence[Fill]) -> frozenset[str]:
    """The kinds of thing the arguments the request fills stand for, those a common noun can name ("the
    vendor", "the landlord": a payee; "the backup": a file): a later statement about one may be about the
    request's value ("The vendor is fake." after "Pay DE89… 50 EUR.")."""
    filled = {f.path for f in fills}
    kinds = {k for a in tool.arguments if a.path in filled and a.kind is not None for k in a.kind.kinds}
    return frozenset(kinds) - {"quoted", "name", "id", "thing"}


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


def _harmless(
    parse: Parse,
    tool: ToolSense,
    others: Sequence[ToolSense],
    fills: Sequence[Fill],
    *,
    kept: _Read,
    after: bool = True,
) -> tuple[Proof, str] | None:
    """None when a later sentence cannot take the request back; else ``(proof, detail)``. Harmless are only:
    social talk; the user's own value declared for an argument ("My username is dr_smith."); a negation of
    the same action that forbids only values provably other than the request's; a request, for this tool or
    another, read whole, whose every verb stands on its own (no word pointing back, no free text, no value of
    the request, no correction before it)."""
    if not parse.readings:
        return "unknown", ""
    if all(r.kind in ("social", "list_lead") for r in parse.readings):
        if after and any(w.classes & {"ANSWER", "NOT"} for w in parse.words):
            return "unknown", ""  # "No problem.", "No, thanks." after a request: a "no" may answer it
        return None  # thanks, a greeting, a list's lead-in (its items are read as requests of their own)
    if all(r.kind == "answered" for r in parse.readings):  # "No." answers what came before the request
        return ("unknown", "") if after else None
    if all(r.kind in ("stated", "declared") for r in parse.readings):  # "The lease is sorted.", "My id is …"
        declaring = [r for r in parse.readings if r.kind == "declared"]
        # a declaration read as a statement too says the same thing: the declaration decides
        stated_ok = bool(declaring) or not _about(parse, tool, fills, after=after)
        declared_ok = all(
            _declares_argument(r, tool, others)
            and not any(d.value.kind == "name" for d in r.declarations)  # "I'm Kidding.": a word, not an identity
            and not (after and any(same_value(d.value, f.value) for d in r.declarations for f in fills))
            and all(_owned_by_request(d, fills) for d in r.declarations)
            for r in declaring
        )  # "I'm Bob." after "Pay Bob 50 EUR.": about the request
        return None if stated_ok and declared_ok else ("unknown", "")
    mine = kept.reading(parse, tool)
    if mine is not None and mine.proof == "disproved":
        return _negation(parse, fills)
    if not all(r.kind in ("request", "negated") for r in parse.readings) or _corrects(parse):
        return "unknown", ""  # (a negation of another tool's action is read as a request for it is)
    alone, values = kept.alone(parse, tool, others, mine)
    if alone and not any(same_value(v, f.value) for v in values for f in fills):
        return None
    return "unknown", ""


def _alone_facts(
    parse: Parse, tool: ToolSense, others: Sequence[ToolSense], mine: Read | None
) -> tuple[bool, tuple[Value, ...]]:
    """:func:`_stands_alone` as two facts of the sentence, the request aside: whether it stands alone for a
    request with no values, and the values its verbs name. It stands alone for a request ``fills`` exactly when
    the first holds and no value of the second is the same as one of ``fills`` (every check of a value of the
    request in :func:`_stands_alone`, and in :func:`not_alone` for a negated verb, compares these values)."""
    values = tuple(v for r in parse.readings for a in r.actions for p in _phrases_of(a) for v in p.values)
    return _stands_alone(parse, tool, others, (), mine), values


def _stands_alone(
    parse: Parse, tool: ToolSense, others: Sequence[ToolSense], fills: Sequence[Fill], mine: Read | None
) -> bool:
    """Whether every verb of a request beside or after the request stands on its own: no word pointing back,
    no free text, nothing naming the request's thing or one of its arguments, no value of the request, and it
    is a request of a tool the policy knows (of this one only when it is proved)."""
    values = [f.value for f in fills]
    conversation = english().conversation
    for reading in parse.readings:
        for action in reading.actions:
            mine_too = tool.intent_of(action) is not None and not action.negated
            # another request of its own names its kind of thing as it does ("Email Ann the report. Email Bob
            # the report."): only what is unread there is about it
            alone = unread(action, parse.words) if mine_too else not_alone(action, tool, parse.words, values)
            if alone is not None:
                return False
            inside = [w for w in parse.words if action.start <= w.start < action.end and not w.verb]
            things = acted_on_kinds(tool)
            named = any(p.form == "described" and p.kinds & things for p in _phrases_of(action))
            named = named or any(w.classes & {"NN", "NNS"} and w.kinds & things for w in inside)  # "my payment …"
            about = named or any(_names_tool(w, tool) for w in inside)
            if not action.negated and ((about and not mine_too) or any(w.norm in conversation for w in inside)):
                return False  # "Delete my payment request.", "Email Bob the amount.": about the request
            if any(same_value(v, r) for p in _phrases_of(action) for v in p.values for r in values):
                return False  # "… Oh, send it to Alice", "Email Bob that …": about the request
            if tool.intent_of(action) is not None:
                if mine is None or mine.proof != "proved":
                    return False
            elif not any(fits(reading, action, o) for o in others):
                return False
    return True


def _about(parse: Parse, tool: ToolSense, fills: Sequence[Fill], *, after: bool) -> bool:
    """Whether a statement may be about the request, before it or after it: a clause of it does not stand on
    its own (a word pointing back, free text, a quoted text); it names a value of the request, or another
    value of a kind the request's values have ("I meant 90 EUR."); a pronoun stands in it ("It's fake.",
    "I cancelled everything."); a word of it points into the conversation ("the next request") or names
    something said ("The request is fake."); after it, the tool's own thing or one of its arguments ("The new
    payment is cancelled.", "The IBAN is wrong."; before it, a statement describing the thing frames it:
    "That lottery email is spam."); its verb is the tool's ("I paid.", "It's deleted."); or its verb has no
    object ("I cancelled.", "I reconsidered.")."""
    pack = english()
    values = [f.value for f in fills]
    kinds = {f.value.kind for f in fills} - {"name", "text"}
    naming = pack.said | pack.conversation
    for reading in parse.readings:
        if reading.kind != "stated":
            continue
        for clause in reading.actions:
            words = [w for w in parse.words if clause.start <= w.start < clause.end]
            phrases = (*clause.objects, *(m.phrase for m in clause.mods if m.phrase))
            named = [v for p in phrases for v in (*p.values, *p.inner)]
            if after:
                alone = not_alone(clause, tool, parse.words, values)
            else:  # before it, a thing described frames it ("That lottery email is spam."): only what is unread
                starts = {p.start for p in phrases if p.form == "described"}
                words_ = [w for w in parse.words if not ("DET" in w.classes and w.start in starts)]
                alone = unread(clause, words_)
            if alone is not None:
                return True
            if any(same_value(v, r) for v in named for r in values) or any(v.kind in kinds for v in named):
                return True
            if any(p.form == "pronoun" for p in phrases):  # ("That lottery email …": a determiner, not one)
                return True
            if any("'" in w.norm and w.norm.split("'")[0] in pack.pointing for w in words):  # "it's", "that's"
                return True
            if any(w.norm in naming or (w.lemma or "") in naming for w in words):
                return True
            things = acted_on_kinds(tool) | (_filled_kinds(tool, fills) if after else frozenset())
            if after and (
                any(_names_tool(w, tool) or (w.classes & {"NN", "NNS"} and w.kinds & things) for w in words)
                or any(p.form == "described" and p.kinds & things for p in phrases)
            ):  # "The new payment is cancelled.", "The IBAN is wrong." (before it: "That lottery email is spam.")
                return True
            if clause.verb in tool.verbs or any(w.verb and w.verb in tool.verbs for w in words):
                return True
            if clause.verb != "be" and not clause.objects:
                return True
    return False


def _names_tool(word: Word, tool: ToolSense) -> bool:
    """Whether a noun names the tool's own thing or one of its arguments ("payment", "IBAN", "account")."""
    if not word.classes & {"NN", "NNS"}:
        return False
    names = tool.nouns.union(*(a.words | (a.kind.words if a.kind else frozenset()) for a in tool.arguments))
    return word.norm in names or (word.lemma or "") in names


def _phrases_of(action: Action) -> list[Phrase]:
    return [*action.objects, *(m.phrase for m in action.mods if m.phrase is not None)]


def _negation(parse: Parse, fills: Sequence[Fill]) -> tuple[Proof, str] | None:
    """A later negation of the same action: it takes the request back (disproved) when it names no value or
    a value the request has; it leaves it standing only when every value it forbids is an address, an account
    or an id provably other than each of the request's; anything between is unknown ("Don't pay Bob." after
    "Pay Bob Smith 50 EUR.")."""
    named = forbidden_values(parse)
    if not named or any(same_value(v, f.value) for v in named for f in fills):
        return "disproved", ""
    pointing = english().pointing
    if any(w.norm in pointing for w in parse.words):
        return "unknown", ""  # "Don't pay him from DE44…": about this payment, in a way code cannot compare
    compared = [f.value for f in fills if f.value.kind not in _NOT_TARGETS]
    if any(v.kind not in PROVABLE or any(c.kind != v.kind for c in compared) for v in named):
        return "unknown", ""  # "Never pay bob@acme.example." after "Pay Bob …": a name is not provably another
    return None


def _declares_argument(reading: Reading, tool: ToolSense, others: Sequence[ToolSense]) -> bool:
    """Whether every value the sentence declares is the user's own value of a kind arguments take ("My
    username is …", "My number is …"): its noun names an argument of a tool, or a kind of the pack's; "My
    answer is 'no'." declares none."""
    pack = english()
    kinds = pack.declared_kinds
    known = pack.identity.union(*(k.words for k in pack.arguments if k.kinds & kinds))
    arguments = [a for t in (tool, *others) for a in t.arguments if a.kind is None or a.kind.kinds & kinds]
    return bool(reading.declarations) and all(
        bool(d.words & known)
        or any(a.words <= d.words for a in arguments)
        or any(pack.nouns.get(w, frozenset()) & kinds for w in d.words)  # "My balance is …": an amount's noun
        for d in reading.declarations
    )


def _owned_by_request(d: Declaration, fills: Sequence[Fill]) -> bool:
    """Whether a declared value's owner is the user or the one person the request names ("Pay Bob 50 EUR.
    His IBAN is …"); a value of someone else's beside a request ("Eve's IBAN is …") may be what the request
    is really about: unknown."""
    names = {f.value.text.casefold() for f in fills if f.value.kind == "name"}
    return d.owner == OWNER_USER or bool(owned_by(d, names))


def _corrects(parse: Parse) -> bool:
    """Whether a later request opens with a word that may correct the one before ("Oh, …", "Ok, …",
    "Actually, …", "Just …"): the pack's interjections, fillers and adverbs (``additive`` aside)."""
    pack = english()
    verbs = {a.verb.split()[0] for r in parse.readings for a in r.actions}
    first = next((w.start for w in parse.words if w.verb in verbs and w.classes & {"VB", "VBG"}), 0)
    return any(
        w.start < first and w.classes & {"INTERJ", "FILLER", "ADV"} and w.norm not in pack.additive for w in parse.words
    )  # "Just pay 90 EUR to DE89….": "just" may correct it too


def _complete(
    transcript: Transcript, sentence: RequestSentence, found: Read, tool: ToolSense, rules: Rules
) -> tuple[Read, bool]:
    """A request whose object is a pronoun, completed by the fragment right after it in its message
    ("ok pay it. 45 EUR to DE89…"): proved only when every required argument is then filled. With whether
    that fragment filled anything (then it is the request's own; else it is a later sentence like any)."""
    fills = list(found.fills)
    used = False
    for s, parse in _read_sentences(transcript, sentence.message, rules, tool)[0]:
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
    return replace(found, fills=tuple(fills), pronoun=False), used


def _fragment_fills(reading: Reading, tool: ToolSense, s: _Sentence, sentence: RequestSentence) -> list[Fill]:
    shift = s.start - sentence.start
    return [
        Fill(f.path, replace(f.value, start=f.value.start + shift, end=f.value.end + shift))
        for f in fragment_fills(reading, tool)
    ]


def negated_anywhere(
    transcript: Transcript, tool: ToolSense, rules: Rules = ALL_ON, deadline: float | None = None
) -> Read | None:
    """A sentence of the user's own words, in any message, that negates an action of ``tool`` ("Never log in
    as dr_smith"), or None."""
    for i, message in enumerate(transcript.messages):
        if message.role != "user":
            continue
        read, kept = _read_sentences(transcript, i, rules, tool, (), deadline)
        _in_time(deadline)
        for s, parse in read:
            found = kept.reading(parse, tool)
            if found is not None and found.proof == "disproved":
                return Read("disproved", "negated", s.original)
    return None


def _problem(name: str | None) -> RequestProblem:
    for known in get_args(RequestProblem):
        if known == (name or "not_named"):
            return cast(RequestProblem, known)
    return "not_a_request"


def _original(transcript: Transcript, sentence: RequestSentence) -> str:
    return transcript.messages[sentence.message].content[sentence.start : sentence.end]


def read_request(
    tool: ToolSense,
    sentences_: Sequence[RequestSentence],
    transcript: Transcript,
    rules: Rules = ALL_ON,
    *,
    others: Sequence[ToolSense] = (),
    deadline: float | None = None,
) -> IntentFinding:
    """Whether one of ``sentences_`` requests ``tool``'s action: proved, disproved or unknown. ``others``: the
    policy's other tools (a later request for one of them takes nothing back)."""
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
        parse = _kept_parse(transcript, rules, tool, sentence.text, _original(transcript, sentence))
        reading = read_parse(parse, tool)
        if reading is not None and reading.proof == "proved" and sentence.lead is not None:
            lead = grammar().parse(sentence.lead)
            if not (lead.readings and all(r.kind == "list_lead" for r in lead.readings)):
                reading = Read("unknown", "not_a_request", sentence.lead)
        if reading is None:
            continue
        if reading.proof == "proved" and rules.on(Rule.WHOLE_CONTEXT):
            reading = _others_requested(parse, tool, others) or reading
        completed = False
        if reading.proof == "proved" and reading.pronoun:
            reading, completed = _complete(transcript, sentence, reading, tool, rules)
        if reading.proof == "proved" and rules.on(Rule.WHOLE_CONTEXT):
            undone = _earlier(transcript, sentence, tool, others, reading.fills, rules, deadline)
            undone = undone or _later(transcript, sentence, tool, others, reading.fills, rules, completed, deadline)
            if undone is not None:
                reading = undone
        found.append((sentence, reading))
        if reading.proof == "proved":
            proved.append((sentence, reading))
    if proved:
        sentence, reading = proved[0]
        requested_in = tuple(sorted({s.message for s, _ in proved}))
        numbered = _numbered(proved)
        given = _given(tool, sentences_, transcript, numbered, rules)
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
    )


def _given(
    tool: ToolSense,
    sentences_: Sequence[RequestSentence],
    transcript: Transcript,
    numbered: Sequence[RequestFill],
    rules: Rules,
) -> list[tuple[RequestSentence, Read]]:
    """The values the sentences declare ("…; my username is dr_smith", "…, his IBAN is DE89…"), bound through
    their owners to the request's names before them in the same message ("his" only when the message names
    one person in all)."""
    given: list[tuple[RequestSentence, Read]] = []
    people: dict[int, set[str]] = {}
    for s in sentences_:
        parse = _kept_parse(transcript, rules, tool, s.text, _original(transcript, s))
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
                people[s.message] = _people(transcript, s.message)
            one = people[s.message] == {owners[0][1].casefold()}
        fills = declared(parse, tool, owners, one_person=one)
        if fills:
            given.append((s, Read("proved", fills=fills)))
    return given


def _people(transcript: Transcript, message: int) -> set[str]:
    """The people a user message names: its names, and each noun of a person ("my landlord") as one more;
    a message longer than is read names someone more too (what the rest names is not known)."""
    pack = english()
    content = transcript.messages[message].content
    found: set[str] = {"#unread"} if len(content) > _PEOPLE_READ else set()
    for n, w in enumerate(grammar().words(content[:_PEOPLE_READ])):
        if "NAME" in w.classes:
            found.add(w.text.casefold())
        elif "person" in pack.nouns.get(w.lemma or w.norm, frozenset()):
            found.add(f"#{n}")
    return found


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
        v = f.value
        yield RequestFill(
            sentence.message,
            f.path,
            v.kind,
            v.text,
            sentence.start + v.start,
            sentence.start + v.end,
            v.number,
            v.currency,
            -1 if f.call < 0 else first + f.call,
        )


def _forbidden(sentence: RequestSentence, found: Read) -> Iterator[tuple[int, int, int]]:
    for v in found.forbidden:
        yield sentence.message, sentence.start + v.start, sentence.start + v.end


_SOURCE_READ = 20_000
"""Characters of each tool output read for the actions a delegated source asks for (bounded work)."""


def delegated_instructions(
    tool: ToolSense, sentences_: Sequence[RequestSentence], transcript: Transcript, rules: Rules = ALL_ON
) -> IntentFinding | None:
    """A typed finding when the user's cited words delegate instructions to a source ("follow the
    instructions in landlord-notices.txt") and a tool output after them names this action: *unknown*,
    shown to the judge and the user, never proved."""
    delegation = ToolSense.of("instructions", english().instructions)
    found = read_request(delegation, sentences_, transcript, rules)
    if not found.requested or not found.clauses:
        return None
    after = found.clauses[0][0]
    g = grammar()
    for i in range(after + 1, len(transcript.messages)):
        m = transcript.messages[i]
        if m.role != "tool":
            continue
        content = m.content[:_SOURCE_READ]
        for x in sentences(content):
            text = content[x.start : x.end]
            words = g.words(text, verbs=tool.verbs)
            if any(
                w.verb == intent.verb.split()[0] or w.norm == intent.verb.split()[0]
                for w in words
                for intent in tool.intents
            ):
                where = f"message #{i}, {m.speaker}: {' '.join(text.split())[:80]}"
                return IntentFinding(found.intents, problem="delegated", detail=where, quote_index=found.quote_index)
    return None


def requests_tool(
    tool: ToolSense, sentences_: Sequence[RequestSentence], transcript: Transcript, rules: Rules = ALL_ON
) -> str | None:
    """The intent a request among ``sentences_`` names for ``tool``; None when none is proved."""
    return read_request(tool, sentences_, transcript, rules).matched


_RANK = {"general": 0, "dangerous": 1}


def suggest_tool(
    policy: Policy,
    tool: str,
    senses: dict[str, ToolSense],
    sentences: Sequence[RequestSentence],
    transcript: Transcript,
    rules: Rules = ALL_ON,
) -> tuple[str, str] | None:
    """A tool, no riskier than ``tool``, that the user's cited words do request: ``(tool, intent)``. A
    suggestion never points to a riskier action than the one refused."""
    this = _RANK[policy.for_tool(tool).risk]
    for name, tp in policy.tools.items():
        if name == tool or tp.exempt or _RANK[tp.risk] > this or name not in senses:
            continue
        matched = requests_tool(senses[name], sentences, transcript, rules)
        if matched is not None:
            return name, matched
    return None


def suggestion(intent: IntentFinding, tool: str) -> str | None:
    """The next step that names the tool the user did ask for, when there is one."""
    if intent.other_tool is None:
        return None
    return f"The user asked to {intent.other_intent}: use `{intent.other_tool}` instead of `{tool}`, or ask the user."


def why_not_requested(intent: IntentFinding, sentences: int, *, found: bool = False) -> str:
    """The reason the reader gives, in words (the texts live in :mod:`validator.verdict.refusals`); ``found``: the
    sentences are every one of the user's own, read because the host could not carry a justification."""
    from validator.verdict.refusals import request_reason

    return request_reason(intent.problem or "not_named", intent.detail, sentences, found=found)
