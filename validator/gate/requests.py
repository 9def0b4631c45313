"""Does the user's cited sentence request this action? The closed-world reader, over the transcript.

For each sentence of the user's own words the evidence cites, :func:`validator.gate.reader.read`
gives one of three values for each intent word of the tool: *proved* (the sentence as a whole is a
request for it in the reader's positive grammar), *disproved* (a negation governs the verb), or
*unknown* (anything else). A proved request still falls to *unknown* when later words of the user
take something back ("Wait, cancel that", "Never mind"), and to *disproved* when a later sentence
of the user's negates the same action ("Actually, don't pay him"). The finding is proved when one
cited sentence proves it; else disproved when one disproves it; else unknown, with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from validator.findings import IntentFinding, RequestProblem, RequestSentence
from validator.gate.reader import Reading, read, sentences, takes_back, tokens
from validator.gate.sentences import own_words
from validator.inputs.transcript import Transcript
from validator.language import english
from validator.policy import Policy
from validator.rules import ALL_ON, Rules

__all__ = ["read_request", "requests_tool", "suggest_tool", "suggestion", "why_not_requested"]

_PRIORITY: dict[str, int] = {
    "negated": 0,
    "retracted": 1,
    "conditional": 2,
    "question": 3,
    "hypothetical": 4,
    "contrast": 5,
    "reported": 6,
    "not_a_request": 7,
    "not_named": 8,
    "no_request": 9,
    "delegated": 7,
}


def _later(transcript: Transcript, sentence: RequestSentence, intents: Sequence[str], rules: Rules) -> Reading | None:
    """What the user said after ``sentence`` that undoes it: a later negation of the same action
    (disproved), or a take-back (unknown: which request it takes back is not shown).

    One pass over the user's own words from ``sentence`` on: what came before it cannot undo it, so a
    long history costs nothing here (the request is usually in the latest turn)."""
    retracted: str | None = None
    for i in range(sentence.message, len(transcript.messages)):
        message = transcript.messages[i]
        if message.role != "user":
            continue
        own = own_words(transcript, i, rules)
        for x in sentences(own):
            if i == sentence.message and x.start < sentence.end:
                continue
            text = own[x.start : x.end]
            if retracted is None and takes_back(text):
                retracted = message.content[x.start : x.end]
            if _other_values(text, sentence.text):
                continue  # "Email Bob the minutes. Never email eve@…": it forbids eve@…, not the request
            for intent in intents:
                later = read(text, intent)
                if later is not None and later.proof == "disproved":
                    return Reading("disproved", "negated", message.content[x.start : x.end])
    return None if retracted is None else Reading("unknown", "retracted", retracted)


def _other_values(later: str, request: str) -> bool:
    """Whether a later sentence names a value (an address, an id, a number) the request does not: its
    negation then concerns that value, not the request."""
    mine = {t.text for t in tokens(request) if t.kind in ("value", "number")}
    return any(t.kind in ("value", "number") and t.text not in mine for t in tokens(later))


def negated_anywhere(transcript: Transcript, intents: Sequence[str], rules: Rules = ALL_ON) -> Reading | None:
    """A sentence of the user's own words, in any message, that negates an action named by ``intents``
    ("Never log in as dr_smith"), or None."""
    for i, message in enumerate(transcript.messages):
        if message.role != "user":
            continue
        own = own_words(transcript, i, rules)
        for x in sentences(own):
            text = own[x.start : x.end]
            for intent in intents:
                found = read(text, intent)
                if found is not None and found.proof == "disproved":
                    return Reading("disproved", "negated", message.content[x.start : x.end])
    return None


def _clause(sentence: RequestSentence, reading: Reading) -> tuple[tuple[int, int, int], ...]:
    """``(message, start, end)`` of each span of the proved verb's clause, in the message's text."""
    spans = reading.clause or ((0, len(sentence.text)),)
    return tuple((sentence.message, sentence.start + a, sentence.start + b) for a, b in spans)


def _problem(name: str | None) -> RequestProblem:
    known: dict[str, RequestProblem] = {p: p for p in _PRIORITY}  # type: ignore[misc]
    return known.get(name or "not_named", "not_a_request")


def read_request(
    intents: Sequence[str], sentences_: Sequence[RequestSentence], transcript: Transcript, rules: Rules = ALL_ON
) -> IntentFinding:
    """Whether one of ``sentences_`` requests an action named by ``intents``: proved, disproved or unknown."""
    if not rules.on("request-grammar") and sentences_:
        return IntentFinding(
            tuple(intents), matched="(request grammar off)", proof="proved", quote_index=sentences_[0].quote_index
        )
    if not sentences_:
        return IntentFinding(tuple(intents), problem="no_request")
    found: list[tuple[str, RequestSentence, Reading]] = []
    for sentence in sentences_:
        for intent in intents:
            reading = read(sentence.text, intent, lead_in=sentence.lead)
            if reading is not None:
                found.append((intent, sentence, reading))
    proved: list[tuple[str, RequestSentence, Reading]] = []
    for intent, sentence, reading in list(found):
        if reading.proof == "proved":
            undone = _later(transcript, sentence, intents, rules)
            if undone is None:
                proved.append((intent, sentence, reading))
            else:
                found.append((intent, sentence, undone))
    if proved:
        intent, sentence, reading = proved[0]
        return IntentFinding(
            tuple(intents),
            matched=intent,
            proof="proved",
            quote_index=sentence.quote_index,
            multiple=reading.multiple,
            clauses=tuple(span for _, s, r in proved for span in _clause(s, r)),
        )
    if not found:
        return IntentFinding(tuple(intents), problem="not_named")
    # disproved only when every reading that names the action is: one unknown reading leaves it unknown
    unknown = [f for f in found if f[2].proof == "unknown"]
    candidates = unknown or found
    intent, sentence, worst = min(candidates, key=lambda f: _PRIORITY.get(f[2].problem or "not_named", 8))
    return IntentFinding(
        tuple(intents),
        proof=worst.proof,
        quote_index=sentence.quote_index,
        negated=worst.problem == "negated",
        problem=_problem(worst.problem),
        detail=worst.detail,
    )


_SOURCE_READ = 20_000
"""Characters of each tool output read for the actions a delegated source asks for (bounded work)."""


def delegated_instructions(
    intents: Sequence[str], sentences_: Sequence[RequestSentence], transcript: Transcript, rules: Rules = ALL_ON
) -> IntentFinding | None:
    """A typed finding when the user's cited words delegate instructions to a source ("follow the
    instructions in landlord-notices.txt") and a tool output after them names this action: *unknown*,
    shown to the judge and the user, never proved."""
    pack = english()
    found = read_request(pack.instructions, sentences_, transcript, rules)
    if not found.requested or not found.clauses:
        return None
    after = found.clauses[0][0]
    for i in range(after + 1, len(transcript.messages)):
        m = transcript.messages[i]
        if m.role != "tool":
            continue
        content = m.content[:_SOURCE_READ]
        for x in sentences(content):
            text = content[x.start : x.end]
            if any(read(text, intent) is not None for intent in intents):
                where = f"message #{i}, {m.speaker}: {' '.join(text.split())[:80]}"
                return IntentFinding(tuple(intents), problem="delegated", detail=where, quote_index=found.quote_index)
    return None


def requests_tool(
    intents: Sequence[str], sentences_: Sequence[RequestSentence], transcript: Transcript, rules: Rules = ALL_ON
) -> str | None:
    """The intent word a request among ``sentences_`` names, for one of ``intents``; None when none is proved."""
    return read_request(intents, sentences_, transcript, rules).matched


_RANK = {"general": 0, "dangerous": 1}


def suggest_tool(
    policy: Policy, tool: str, sentences: Sequence[RequestSentence], transcript: Transcript, rules: Rules = ALL_ON
) -> tuple[str, str] | None:
    """A tool, no riskier than ``tool``, that the user's cited words do request: ``(tool, intent word)``.

    A suggestion never points to a riskier action than the one refused.
    """
    this = _RANK[policy.for_tool(tool).risk]
    for name, tp in policy.tools.items():
        if name == tool or tp.exempt or _RANK[tp.risk] > this:
            continue
        matched = requests_tool(tp.intent_words(name), sentences, transcript, rules)
        if matched is not None:
            return name, matched
    return None


def suggestion(intent: IntentFinding, tool: str) -> str | None:
    """The next step that names the tool the user did ask for, when there is one."""
    if intent.other_tool is None:
        return None
    return f"The user asked to {intent.other_intent}: use `{intent.other_tool}` instead of `{tool}`, or ask the user."


def why_not_requested(intent: IntentFinding, sentences: int, *, found: bool = False) -> str:
    """The reason the reader gives, in words (the texts live in :mod:`validator.refusals`); ``found``: the
    sentences are every one of the user's own, read because the host could not carry a justification."""
    from validator.refusals import request_reason

    return request_reason(intent.problem or "not_named", intent.detail, sentences, found=found)
