"""The request grammar: is this sentence the user asking the assistant to do this action?

Sentence-level, deterministic, explainable. An intent word of the tool (any inflection: ``paid``,
``sent``, via ``lemminflect``) is a request when, in a sentence of the user's own words that the
evidence cites:

- it heads an imperative or a request addressed to the assistant: nothing but fillers before it
  in its clause ("please", "also", "and then"), or a request frame ("can you", "could you
  please", "I'd like you to", "I want you to", "go ahead and", "make sure to", "let's", "feel
  free to");
- no negation governs it ("don't", "never", "no need to", "under no circumstances", "forget
  about", "skip", "I refuse to", "we decided against", "nobody should", every ``n't`` and
  apostrophe look-alike);
- the sentence is not a question (unless the question is the request: "Can you pay Bob?"): "Did
  I delete...?", "Should I pay this invoice?";
- it is not conditional ("only after Finance confirms", "if it looks right", "unless"): a
  condition is named and asked about;
- no later user words take it back ("Wait, cancel that", "never mind", "just kidding", "no way").

Reported speech ("Bob asked me to pay X"), reports ("I paid the draft myself"), and words quoted
or pasted into the user's message are never requests: none of them puts the verb at the head of
a request. Anything the grammar cannot prove is not a request; the caller asks the user.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from validator import rules
from validator.findings import IntentFinding, RequestProblem, RequestSentence
from validator.gate.sentences import fold_apostrophes, negated_spans, negation_before, sentence_spans
from validator.inputs.transcript import Transcript
from validator.policy import Policy

__all__ = ["read_request", "requests_tool", "suggest_tool", "suggestion", "why_not_requested"]

_WORD = re.compile(r"[a-z0-9][\w']*")
_CLAUSE = re.compile(r"[,;:()]|\s[-\u2013\u2014]\s|\band\b|\bthen\b|\bbut\b|\bor\b")
_FILLER = (
    r"(?:please|pls|plz|kindly|just|now|then|also|and|so|ok|okay|alright|hey|hi|oh|great|thanks|quickly|finally|"
    r"first|next|assistant)"
)
_FRAME = re.compile(
    rf"^(?:{_FILLER}\s+)*"
    r"(?:(?:can|could|would|will)\s+you\s+"
    r"|i(?:'d|\s+would)\s+like\s+you\s+to\s+|i\s+(?:want|need)\s+you\s+to\s+|go\s+ahead\s+and\s+"
    r"|make\s+sure\s+(?:to|you)\s+|remember\s+to\s+|be\s+sure\s+to\s+|feel\s+free\s+to\s+|let(?:'s|\s+us)\s+"
    r"|you\s+(?:can|may|should)\s+(?:go\s+ahead\s+and\s+)?)?"
    rf"(?:{_FILLER}\s+)*$"
)
_ASKING = re.compile(r"^(?:\w+\s+)*?(?:can|could|would|will)\s+you\b")
_CONDITION = re.compile(
    r"\b(?:if|unless|provided(?:\s+that)?|as\s+long\s+as|in\s+case|assuming|only\s+(?:if|after|when|once|until|"
    r"before)|as\s+soon\s+as|once|whenever|in\s+the\s+event)\b"
    r"|^\s*when\b|\b(?:after|before|until)\s+(?:\w+\s+){0,3}\w+(?:s|ed)\b"
)
_RETRACTION = re.compile(
    r"\b(?:cancel\s+(?:that|it|this|the\s+\w+)|never\s?mind|scratch\s+that|forget\s+(?:it|that|about\s+it|what\s+i\s+"
    r"said)|don't\s+(?:do\s+(?:it|that|this)|bother)|do\s+not\s+do\s+(?:it|that|this)|hold\s+(?:off|on)|ignore\s+"
    r"(?:that|my\s+last|what\s+i\s+said|my\s+previous)|just\s+kidding|\bjk\b|no\s+way|not\s+anymore|changed\s+my\s+"
    r"mind|don't\s+(?:pay|send|transfer|delete|share|invite|post|email|forward|reply)|do\s+not\s+(?:pay|send|transfer|"
    r"delete|share|invite|post|email|forward|reply))|^\s*(?:no|stop|wait|nope)\b[\s.!,]*(?:$|don't|do\s+not|cancel)"
)
_MULTIPLE = re.compile(r"\b(?:each|every|all|both|monthly|weekly|daily|yearly|annually|recurring|twice|times)\b")
_MAX_FRAME_WORDS = 12
_PRIORITY: dict[RequestProblem, int] = {
    "negated": 0,
    "retracted": 1,
    "conditional": 2,
    "question": 3,
    "not_a_request": 4,
    "not_named": 5,
    "no_request": 6,
}


@lru_cache(maxsize=65_536)
def _lemma(word: str) -> str:
    """The verb lemma of a word: the dictionary's (``paid`` -> ``pay``), else the rules' for a word
    with a verb ending (``venmoed`` -> ``venmo``), else the word itself."""
    if not word.isalpha():
        return word
    from lemminflect import getAllLemmas, getLemma

    known = getAllLemmas(word, upos="VERB").get("VERB")
    if known:
        return str(known[0]).lower()
    if word.endswith(("ed", "ing", "s")):
        found = getLemma(word, upos="VERB")
        return str(found[0]).lower() if found else word
    return word


def _phrase(intent: str) -> list[str | None]:
    """An intent's words as lemmas; ``None`` for ``*`` (up to four words)."""
    return [None if w == "*" else _lemma(w) for w in re.findall(r"\*|[a-z0-9][\w']*", fold_apostrophes(intent.lower()))]


def _matches(lemmas: Sequence[str], phrase: Sequence[str | None], i: int) -> bool:
    """Whether ``phrase`` stands at word ``i`` (a ``*`` skips up to four words)."""
    k, gap = i, 0
    for want in phrase:
        if want is None:
            gap = 4
            continue
        end = min(len(lemmas), k + gap + 1)
        j = next((j for j in range(k, end) if lemmas[j] == want), None)
        if j is None:
            return False
        k, gap = j + 1, 0
    return True


_WANT = re.compile(
    rf"^(?:{_FILLER}\s+)*(?:i(?:'d|\s+would)\s+like|i\s+want|i\s+need|please\s+get|please\s+have)\s+(?:[\w'@.-]+\s+){{0,6}}$"
)


def _wanted_done(prefix: str, word: str, lemma: str) -> bool:
    """ "I'd like the money transferred", "I want the report sent to Bob": a wish for a thing done, addressed
    to the assistant, with the verb as a past participle."""
    return bool(_WANT.match(prefix)) and word != lemma and word.endswith(("ed", "t", "n", "id"))


@dataclass(frozen=True, slots=True)
class _Reading:
    intent: str
    sentence: RequestSentence
    problem: RequestProblem | None
    detail: str
    multiple: bool


def _retractions(transcript: Transcript, start: int = 0) -> list[tuple[int, int, str]]:
    """``(message, position, words)`` of every place the user takes something back (one pass per transcript)."""
    found: list[tuple[int, int, str]] = []
    for i, m in enumerate(transcript.messages[start:], start):
        if m.role != "user":
            continue
        folded = fold_apostrophes(m.content).lower()
        for s, e in sentence_spans(folded):
            hit = _RETRACTION.search(folded, s, e)
            if hit is not None:
                found.append((i, s, m.content[s:e]))
    return found


def _more_retractions(found: list[tuple[int, int, str]], longer: Transcript, start: int) -> list[tuple[int, int, str]]:
    more = _retractions(longer, start)
    return [*found, *more] if more else found


def _retracted(transcript: Transcript, sentence: RequestSentence) -> str | None:
    """The words by which the user later took ``sentence`` back, if they did."""
    for message, position, words in transcript.memo("gate.retractions", _retractions, _more_retractions):
        if message > sentence.message or (message == sentence.message and position >= sentence.end):
            return words
    return None


@dataclass(frozen=True, slots=True)
class _Parsed:
    """One sentence, read once for every intent word looked for in it."""

    folded: str
    words: list[re.Match[str]]
    texts: list[str]
    negated: list[tuple[int, int]]
    breaks: list[int]
    question: bool


@lru_cache(maxsize=1024)
def _parse(text: str, negation: bool) -> _Parsed:
    folded = fold_apostrophes(text).lower()
    words = list(_WORD.finditer(folded))
    return _Parsed(
        folded,
        words,
        [w.group() for w in words],
        negated_spans(folded) if negation else [],
        [m.end() for m in _CLAUSE.finditer(folded)],
        folded.rstrip().endswith("?"),
    )


def _read(intent: str, sentence: RequestSentence, transcript: Transcript) -> list[_Reading]:
    phrase = _phrase(intent)
    if not phrase or phrase[0] is None:
        return []
    parsed = _parse(sentence.text, rules.on("negation"))
    folded, words, negated, breaks, question = (
        parsed.folded,
        parsed.words,
        parsed.negated,
        parsed.breaks,
        parsed.question,
    )
    # Inflections of a verb share its first letter (pay/paid, send/sent, tell/told): only those words
    # are looked up, so a long sentence costs a scan, not a lemma per word.
    initials = {w[0] for w in phrase if w}
    if not any(t[0] in initials for t in parsed.texts):
        return []
    lemmas = [_lemma(t) if t[0] in initials else t for t in parsed.texts]
    readings: list[_Reading] = []
    for i, w in enumerate(words):
        if lemmas[i] != phrase[0] or not _matches(lemmas, phrase, i):
            continue
        clause_start = max((b for b in breaks if b <= w.start()), default=0)
        words_before = folded[clause_start : w.start()].split()
        # no request frame is longer than a dozen words: a longer prefix is no frame (and is never
        # handed to the frame patterns, whose repetitions would cost more on long text)
        prefix = " ".join(words_before[-_MAX_FRAME_WORDS - 1 :]) + " " if words_before else ""
        problem: RequestProblem | None = None
        detail = ""
        if any(s <= w.start() < e for s, e in negated) or negation_before(parsed.texts, i):
            problem, detail = "negated", sentence.text
        elif question and (len(words_before) > _MAX_FRAME_WORDS or not _ASKING.match(prefix)):
            problem, detail = "question", sentence.text
        elif len(words_before) > _MAX_FRAME_WORDS or not (
            _FRAME.match(prefix) or _wanted_done(prefix, w.group(), lemmas[i])
        ):
            problem, detail = "not_a_request", sentence.text
        elif (cond := _CONDITION.search(folded)) is not None:
            problem, detail = "conditional", sentence.text[cond.start() :].strip()
        elif (same := _RETRACTION.search(folded, w.end())) is not None:
            problem, detail = "retracted", sentence.text[same.start() :]
        elif (later := _retracted(transcript, sentence)) is not None:
            problem, detail = "retracted", later
        readings.append(_Reading(intent, sentence, problem, detail, bool(_MULTIPLE.search(folded))))
    return readings


def read_request(intents: Sequence[str], sentences: Sequence[RequestSentence], transcript: Transcript) -> IntentFinding:
    """Whether one of ``sentences`` requests an action named by ``intents``; the first proof, or why none."""
    if not rules.on("request-grammar") and sentences:
        return IntentFinding(tuple(intents), matched="(request grammar off)", quote_index=sentences[0].quote_index)
    found: list[_Reading] = []
    for sentence in sentences:
        for intent in intents:
            found += _read(intent, sentence, transcript)
    for r in found:
        if r.problem is None:
            return IntentFinding(
                tuple(intents), matched=r.intent, quote_index=r.sentence.quote_index, multiple=r.multiple
            )
    if not sentences:
        return IntentFinding(tuple(intents), problem="no_request")
    if not found:
        return IntentFinding(tuple(intents), problem="not_named")
    worst = min(found, key=lambda r: _PRIORITY[r.problem or "not_named"])
    return IntentFinding(
        tuple(intents),
        quote_index=worst.sentence.quote_index,
        negated=worst.problem == "negated",
        problem=worst.problem,
        detail=worst.detail,
    )


def requests_tool(intents: Sequence[str], sentences: Sequence[RequestSentence], transcript: Transcript) -> str | None:
    """The intent word a request among ``sentences`` names, for one of ``intents``; None when none is proved."""
    return read_request(intents, sentences, transcript).matched


_RANK = {"general": 0, "dangerous": 1}


def suggest_tool(
    policy: Policy, tool: str, sentences: Sequence[RequestSentence], transcript: Transcript
) -> tuple[str, str] | None:
    """A tool, no riskier than ``tool``, that the user's cited words do request: ``(tool, intent word)``.

    A suggestion never points to a riskier action than the one refused.
    """
    this = _RANK[policy.for_tool(tool).risk]
    for name, tp in policy.tools.items():
        if name == tool or tp.exempt or _RANK[tp.risk] > this:
            continue
        matched = requests_tool(tp.intent_words(name), sentences, transcript)
        if matched is not None:
            return name, matched
    return None


def suggestion(intent: IntentFinding, tool: str) -> str | None:
    """The next step that names the tool the user did ask for, when there is one."""
    if intent.other_tool is None:
        return None
    return f"The user asked to {intent.other_intent}: use `{intent.other_tool}` instead of `{tool}`, or ask the user."


def why_not_requested(intent: IntentFinding, sentences: int) -> str:
    """The reason the request grammar gives, in words."""
    detail = f' ("{intent.detail[:160]}")' if intent.detail else ""
    return {
        "not_named": f"none of the {sentences} cited sentence(s) of the user names this action",
        "negated": f"the user's words name it only under a negation{detail}",
        "question": f"the user asked a question, not for the action{detail}",
        "not_a_request": "the user's words name it, but not as a request to the assistant (a report, "
        f"reported speech, or a statement){detail}",
        "conditional": f"the request is conditional{detail}",
        "retracted": f"the user took the request back later{detail}",
        "no_request": "no sentence of the user's own words is cited (pasted or forwarded text is not the user's)",
    }.get(intent.problem or "not_named", "no request for it was proved")
