"""The closed-world request reader: is this sentence, as a whole, the user asking for this action?

A finding here is one of three values (the design's principle 7):

- **proved**: the sentence fits a small positive grammar. It opens with nothing but politeness,
  greetings and at most a request frame (the language pack's ``fillers``, ``greetings``,
  ``requests``, ``questions``), then the action's verb in its base (imperative) form, then its
  objects and modifiers; or the verb is a second imperative joined to the first by a coordinator
  with no subject of its own ("find the file and delete it"). No token anywhere in the sentence
  belongs to a risk class (negators, conditions and deferrals, contrasts, hypotheticals, reported
  speech, retractions, a question not made by a request frame) unless the grammar accounts for it
  (the frame "don't forget to" is not a negation; "ask Ann if she's free" is not a condition), and
  no later words of the user take it back.
- **disproved**: a negation provably governs the verb: it stands before the verb in its sentence
  with no coordinator between them ("Do not, even though the vendor insists, pay the invoice"), or a
  later sentence of the user's negates the same action.
- **unknown**: everything else. A construction nobody anticipated lands here, never on proved.

Allow-list, not deny-list: the reader proves a request only when every word before the verb is
accounted for. Sentence splitting survives abbreviations, decimals, single line breaks, lists (an
item is a sentence whose frame is its list's lead-in) and markdown emphasis. Every word list lives
in the language pack (:mod:`validator.language`); this module holds no English.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from validator.findings import Proof
from validator.language import LanguagePack, Phrase, english, english_verb_lemmas, fold_apostrophes

__all__ = [
    "Reading",
    "Sentence",
    "Token",
    "clauses",
    "declares",
    "names",
    "refers_back",
    "frame_tokens",
    "read",
    "sentences",
    "takes_back",
    "tokens",
]

_HIDDEN = "\x00"
_ITEM = re.compile(r"[ \t]*(?:[-*\u2022+]|\d{1,3}[.)]|[a-zA-Z][.)])[ \t]+(?=\S)")
_INLINE_ITEM = re.compile(r"(?<=[:;.!?])[ \t]+\d{1,2}[.)][ \t]+(?=\S)")
_END = re.compile(r"[.!?\uff1f\uff01\u3002\u2049\u203d\u2048]+[\"'\u201d\u2019)\]]*(?=\s|$)")
_MARKUP = re.compile(r"\*\*|__|~~|`|^[ \t]*#+[ \t]")
_PUNCT_KEPT = frozenset(",;:()")
_DASHES = frozenset({"-", "\u2013", "\u2014", "--"})
_STRIP = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb()[]{}<>,;:!?.*_~`"
_WORDLIKE = re.compile(r"^[a-z][a-z'\-]*$")
_MAX_WILD = 6
_DOTTED = re.compile(r"^(?:[a-z]\.)+[a-z]$")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a text: where it stands, and the lead-in of its list when it is a list item."""

    start: int
    end: int
    lead: str | None = None
    """For a list item, the text of the sentence that introduced the list ("Perform the following tasks:")."""


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    kind: Literal["word", "number", "value", "punct", "question"]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Reading:
    """What the reader found for one intent in one sentence."""

    proof: Proof
    problem: str | None = None
    """For a reading that is not proved: ``negated``, ``conditional``, ``question``, ``hypothetical``,
    ``contrast``, ``reported``, ``retracted``, ``not_a_request`` or ``not_named``."""
    detail: str = ""
    """The words behind the problem."""
    multiple: bool = False
    """The request asks for several actions ("pay each of", "every month")."""
    clause: tuple[tuple[int, int], ...] | None = None
    """For a proved request: where in the sentence its values count (the verb's clause and the segments
    after it that continue the request rather than state something)."""


# -- sentences ------------------------------------------------------------------------------------------


def _abbreviation(text: str, dot: int, pack: LanguagePack) -> bool:
    """Whether the period at ``dot`` ends an abbreviation, an initial or a number's point, not a sentence."""
    if dot + 1 < len(text) and text[dot + 1].isdigit():
        return True
    k = dot
    while k > 0 and (text[k - 1].isalpha() or text[k - 1] == "."):
        k -= 1
    word = text[k:dot].lower()
    if not word and dot > 0 and text[dot - 1].isdigit():  # "1." as a list marker: after a colon or a sentence end
        n = dot
        while n > 0 and text[n - 1].isdigit():
            n -= 1
        before = text[:n].rstrip()
        return dot - n <= 2 and (not before or before[-1] in ":;.!?")
    if k > 0 and not text[k - 1].isspace() and text[k - 1] not in "([\"'":  # "acme.example.", "report-old.pdf."
        return False
    if word in pack.number_abbreviations:
        return text[dot + 1 : dot + 3].strip()[:1].isdigit()
    return bool(word) and (word in pack.abbreviations or len(word) == 1 or _DOTTED.match(word) is not None)


def _split_block(text: str, start: int, end: int, pack: LanguagePack) -> list[tuple[int, int]]:
    """The sentences of one paragraph or list item (a single line break never ends a sentence)."""
    out: list[tuple[int, int]] = []
    last = start
    cuts = [(m.start(), m.end()) for m in _END.finditer(text, start, end)]
    cuts += [(m.start(), m.start()) for m in _INLINE_ITEM.finditer(text, start, end)]
    for s, e in sorted(cuts):
        if e > s and text[s] == "." and e - s == 1 and _abbreviation(text, s, pack):
            continue
        if s < last:
            continue
        out.append((last, e))
        last = e
    out.append((last, end))
    return out


def _pieces(text: str, s: int, e: int, pack: LanguagePack) -> list[tuple[int, int]]:
    """The sentences of one block, trimmed; a pasted part (NUL) splits a sentence and is left out."""
    out: list[tuple[int, int]] = []
    for ps, pe in _split_block(text, s, e, pack):
        for m in re.finditer(r"[^\x00]+", text[ps:pe]):
            a, b = ps + m.start(), ps + m.end()
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if b > a:
                out.append((a, b))
    return out


@lru_cache(maxsize=1024)
def _sentences(text: str) -> tuple[Sentence, ...]:
    pack = english()
    blocks: list[tuple[int, int, bool]] = []  # (start, end, is a list item)
    pos, block_start, in_item = 0, 0, False
    for line in text.split("\n"):
        marker = _ITEM.match(line)
        if not line.strip() or marker is not None:
            if pos > block_start:
                blocks.append((block_start, pos, in_item))
            block_start, in_item = (pos + marker.end(), True) if marker is not None else (pos + len(line) + 1, False)
        pos += len(line) + 1
    if len(text) > block_start:
        blocks.append((block_start, len(text), in_item))
    found: list[Sentence] = []
    lead: str | None = None
    for s, e, item in blocks:
        pieces = _pieces(text, s, e, pack)
        for a, b in pieces:
            marker = re.match(r"\d{1,2}[.)][ \t]+", text[a:b])
            if marker is not None and not item and lead is not None:  # "tasks: 1. pay Bob. 2. email Ann"
                found.append(Sentence(a + marker.end(), b, lead))
                continue
            found.append(Sentence(a, b, lead if item else None))
            if not item:
                lead = text[a:b] if text[a:b].endswith(":") else None
    return tuple(found)


def sentences(text: str) -> tuple[Sentence, ...]:
    """The sentences of ``text`` (pasted parts, blanked to NUL, split them and are left out)."""
    return _sentences(text)


# -- tokens ---------------------------------------------------------------------------------------------


def _kind(core: str) -> Literal["word", "number", "value"]:
    if _WORDLIKE.match(core):
        return "word"
    if core.replace(",", "").replace(".", "").isdigit():
        return "number"
    return "value"


@lru_cache(maxsize=2048)
def tokens(sentence: str) -> tuple[Token, ...]:
    """Words (lower case, apostrophes folded), numbers, values (addresses, paths, ids), kept punctuation
    (``, ; : ( )`` and dashes) and question marks, each with its place in ``sentence``."""
    pack = english()
    folded = fold_apostrophes(sentence).lower()
    if len(folded) != len(sentence):  # a character whose lower case is longer ("İ"): keep positions
        folded = "".join(c if len(c.lower()) != 1 else c.lower() for c in fold_apostrophes(sentence))
    folded = _MARKUP.sub(lambda m: " " * len(m.group()), folded)
    out: list[Token] = []
    for run in re.finditer(r"\S+", folded):
        raw, base = run.group(), run.start()
        if raw in _DASHES:
            out.append(Token("-", "punct", base, base + len(raw)))
            continue
        a, b = 0, len(raw)
        while a < b and raw[a] in _STRIP:
            a += 1
        while b > a and (raw[b - 1] in _STRIP or raw[b - 1] in pack.question_marks):
            b -= 1
        for i, ch in enumerate(raw[:a]):
            if ch in _PUNCT_KEPT:
                out.append(Token(ch, "punct", base + i, base + i + 1))
        core = raw[a:b]
        if core and any(c in pack.question_marks for c in core):  # "why?!", an emoji inside a run
            out.append(Token("?", "question", base + a, base + b))
            core = "".join(c for c in core if c not in pack.question_marks)
        if core:
            out.append(Token(core, _kind(core), base + a, base + b))
        for i, ch in enumerate(raw[b:], b):
            if ch in pack.question_marks:
                out.append(Token("?", "question", base + i, base + i + 1))
            elif ch in _PUNCT_KEPT:
                out.append(Token(ch, "punct", base + i, base + i + 1))
    return tuple(out)


# -- phrases --------------------------------------------------------------------------------------------


def _match_at(texts: Sequence[str], i: int, p: Phrase, soft: frozenset[str] = frozenset()) -> int:
    """The index after ``p`` when it stands at ``texts[i]`` (``*`` takes one to six words; a ``soft`` word
    such as "really" may stand between its words), else -1."""
    k = i
    for n, want in enumerate(p):
        if want == "*":
            nxt = p[n + 1] if n + 1 < len(p) else None
            for w in range(1, _MAX_WILD + 1):
                if k + w >= len(texts):
                    return -1
                if texts[k + w - 1] in (",", ";", ":", "?"):
                    return -1
                if nxt is None or texts[k + w] == nxt:
                    k += w
                    break
            else:
                return -1
            continue
        while n and k < len(texts) and texts[k] != want and texts[k] in soft:
            k += 1
        if k >= len(texts) or texts[k] != want:
            return -1
        k += 1
    return k


def _find(texts: Sequence[str], phrases: Sequence[Phrase], start: int = 0, end: int | None = None) -> list[int]:
    """Start indices in ``texts[start:end]`` where one of ``phrases`` stands."""
    stop = len(texts) if end is None else end
    return [i for i in range(start, stop) for p in phrases if p[0] == texts[i] and _match_at(texts, i, p) != -1]


@dataclass(frozen=True, slots=True)
class _Lead:
    end: int
    """Index of the first token after the lead."""
    question: bool
    gerund: bool
    wish: bool
    """A wish or a result frame: the verb is a past participle a few words on ("I'd like the money sent")."""
    result: bool
    """A result frame ("Ensure the doors are locked"): the participle follows one of the pack's links."""
    covered: frozenset[int]


def _lead(texts: Sequence[str], pack: LanguagePack) -> _Lead:
    """The longest run of fillers, greetings, frames and at most one leading adjunct ("For the GOOG
    position,") at the start of a sentence. Frame and filler words are accounted for; an adjunct's
    words are not (they are still read for risk)."""
    i, question, gerund, wish, result, adjunct = 0, False, False, False, False, False
    covered: set[int] = set()
    groups = (
        (pack.greetings, "greeting"),
        (pack.questions, "question"),
        (pack.requests, "request"),
        (pack.wishes, "wish"),
        (pack.results, "result"),
        (pack.fillers, "filler"),
        (pack.continuations, "continuation"),
    )
    framed = False
    while i < len(texts):
        if texts[i] in (",", "-", ":") or texts[i] in pack.soft:
            covered.add(i)
            i += 1
            continue
        for phrases, kind in groups:
            if kind == "continuation" and not framed:
                continue  # "assist in" continues a frame; it never opens one
            best = max((_match_at(texts, i, p, pack.soft) for p in phrases if p[0] == texts[i]), default=-1)
            if best != -1:
                framed = framed or kind in ("question", "request")
                if kind == "question":
                    question = True
                if kind in ("wish", "result"):
                    wish, result = True, kind == "result"
                gerund = any(_match_at(texts, i, p, pack.soft) == best for p in pack.gerund_frames)
                covered.update(range(i, best))
                i = best
                break
        else:
            if not adjunct and any(_match_at(texts, i, p) != -1 for p in pack.adjuncts):
                comma = next((k for k in range(i + 1, min(len(texts), i + 16)) if texts[k] in (",", ";", ":", "?")), -1)
                if comma != -1 and texts[comma] == ",":
                    adjunct, i = True, comma + 1
                    continue
            break
        if wish:
            break
    return _Lead(i, question, gerund, wish, result, frozenset(covered))


def frame_tokens(texts: Sequence[str]) -> frozenset[int]:
    """Indices of the tokens the sentence's opening frames account for ("don't forget to", "no worries")."""
    return _lead(texts, english()).covered


# -- verbs ----------------------------------------------------------------------------------------------


def warm() -> None:
    """Load what the reader reads with (the language pack, the verb table) now: the first check of a
    process must not spend its gate budget on a one-time load (under load, seconds: the first checks of
    a busy process were refused ``GATE_BUDGET_EXCEEDED``)."""
    english()
    lemma("paying")


@lru_cache(maxsize=65_536)
def lemma(word: str) -> str:
    """The verb lemma of a word (``paid`` -> ``pay``), from the shipped verb table; the word itself when the
    table does not know it as a verb form (a word nobody listed is not guessed into a verb: it then
    matches only an intent spelled the same way)."""
    if not word.isalpha():
        return word
    known = _verb_lemmas(word)
    return known[0].lower() if known else word


@lru_cache(maxsize=65_536)
def _verb_lemmas(word: str) -> tuple[str, ...]:
    """The verb lemmas the table gives for ``word`` (empty: not a known verb form)."""
    return english_verb_lemmas(word)


@lru_cache(maxsize=65_536)
def _is_base_verb(word: str) -> bool:
    return word in _verb_lemmas(word)


def intent_phrase(intent: str) -> tuple[str | None, ...]:
    """An intent's words as lemmas; ``None`` for ``*`` (up to four words)."""
    return tuple(
        None if w == "*" else lemma(w) for w in re.findall(r"\*|[a-z0-9][\w']*", fold_apostrophes(intent.lower()))
    )


def _intent_end(lemmas: Sequence[str], p: Sequence[str | None], i: int) -> int:
    """The index after the intent ``p`` when it stands at ``i`` (a ``*`` skips up to four words), else -1."""
    k, gap = i, 0
    for want in p:
        if want is None:
            gap = 4
            continue
        end = min(len(lemmas), k + gap + 1)
        j = next((j for j in range(k, end) if lemmas[j] == want), None)
        if j is None:
            return -1
        k, gap = j + 1, 0
    return k


# -- reading --------------------------------------------------------------------------------------------

_BREAKS = frozenset({"and", "or", "then", "but", "instead", "rather", "otherwise", "yet", ";"})


_NEAR = 6


def _governing_negation(texts: Sequence[str], covered: frozenset[int], i: int, pack: LanguagePack) -> int | None:
    """The index of a negation that provably governs the word at ``i``: before it, outside any frame, with
    no coordinator between them, and either near it in one stretch without a comma ("I do not want you to
    pay") or opening the sentence ("Do not, even though the vendor insists, pay"). A negation inside an
    earlier clause ("If it is not enough, fill the tank") does not govern: the reading is unknown."""
    found = None
    for k in pack.negations(list(texts)):
        if k >= i or k in covered or any(t in _BREAKS for t in texts[k + 1 : i]) or pack.reports(texts, k, i):
            continue
        near = i - k <= _NEAR and all(t not in (",", ":", "-", "(", ")") for t in texts[k + 1 : i])
        opening = all(j in covered or texts[j] in pack.negation_openers for j in range(k))
        if near or opening:
            found = k
    return found


def _wished(texts: Sequence[str], lead: _Lead, i: int, end: int, pack: LanguagePack) -> bool:
    """Whether the participle at ``i`` is what a wish or a result frame asks for: after a short subject
    with no clause, modal or finite verb in it ("I'd like the money transferred"), for a result after a
    present link and at most a few adverbs ("Ensure the doors are securely locked"), and followed by
    nothing, punctuation, a preposition or a particle: not by an agent ("paid by the client"), "or", or
    a noun (then it is an adjective: "Bob's deleted files")."""
    start, stop = lead.end, i
    if lead.result:
        link = next((k for k in range(start, i) if texts[k] in pack.result_links), -1)
        if link == -1 or any(t not in pack.result_adverbs for t in texts[link + 1 : i]):
            return False
        stop = link
    subject = texts[start:stop]
    if not subject or len(subject) > 6:
        return False
    for k in range(start, stop):
        word = texts[k]
        if word in pack.clause_words or word in (",", ";", ":", "-", "(", ")", "?"):
            return False
        inflected = word.isalpha() and word != lemma(word) and bool(_verb_lemmas(word))
        if inflected and (k == start or texts[k - 1] not in pack.determiners):  # "Bob knows", not "the files"
            return False
    after = texts[end] if end < len(texts) else None
    return after is None or after in pack.participle_followers or after.endswith("ly") or not _WORDLIKE.match(after)


def _head_ok(texts: Sequence[str], lead: _Lead) -> bool:
    """Whether the sentence's head word has the form its lead asks for (a base verb; a gerund after
    "would you mind")."""
    if lead.end >= len(texts) or lead.wish:
        return False
    head = texts[lead.end]
    return head.endswith("ing") if lead.gerund else head == lemma(head) and _is_base_verb(head)


def _action_noun(texts: Sequence[str], lead: _Lead, i: int, end: int, pack: LanguagePack) -> bool:
    """Whether the intent at ``i`` is the noun of a light verb heading the request ("place an order for",
    "make a copy of", "proceed with the purchase of"): the word itself, uninflected, after a determiner
    and at most three modifiers, followed by nothing, punctuation, a preposition or a value."""
    if end != i + 1 or texts[i] != lemma(texts[i]) or texts[i].endswith("ing"):
        return False
    if lead.gerund and not lead.wish:
        k = lead.end  # "proceed with" the purchase
    else:
        if not _head_ok(texts, lead) or lead.gerund:
            return False
        k = max((_match_at(texts, lead.end, p) for p in pack.light_verbs if p[0] == texts[lead.end]), default=-1)
        if k == -1:
            return False
    if k >= i or texts[k] not in pack.determiners or i - k - 1 > 3:
        return False
    if any(not _WORDLIKE.match(t) or t in pack.noun_followers for t in texts[k + 1 : i]):
        return False
    after = texts[end] if end < len(texts) else None
    return after is None or after in pack.noun_followers or not _WORDLIKE.match(after)


def _means(texts: Sequence[str], lead: _Lead, i: int, pack: LanguagePack) -> bool:
    """Whether the intent at ``i`` is the means of the request ("Help me out by ordering 100 shares")."""
    if i == 0 or texts[i - 1] not in pack.means or not texts[i].endswith("ing") or lead.wish:
        return False
    return i - 1 == lead.end or (i > lead.end + 1 and _head_ok(texts, lead))  # "help me out by ordering"


def _coordinated(texts: Sequence[str], lead: _Lead, i: int, pack: LanguagePack) -> bool:
    """Whether word ``i`` is a second imperative joined to the sentence's head verb ("... and delete it")."""
    head = lead.end
    if i <= head + 1 or not _is_base_verb(texts[head]):
        return False
    k = i
    frames = (*pack.requests, *pack.fillers)
    while k > head + 1:
        if any(k - len(c) > head and _match_at(texts, k - len(c), c) == k for c in pack.coordinators):
            return True
        back = next((len(f) for f in frames if k - len(f) > head and _match_at(texts, k - len(f), f) == k), 0)
        if not back and texts[k - 1] not in pack.soft:
            return False
        k -= back or 1
    return False


def _risks(texts: Sequence[str], skip: frozenset[int], pack: LanguagePack, question_ok: bool) -> tuple[str, int] | None:
    """The first risk-class token of the sentence not accounted for by the grammar: ``(class, index)``."""
    asking = {j for k in _find(texts, pack.asking_verbs) for j in range(k, min(len(texts), k + 5))}
    found: list[tuple[int, str]] = []
    for name, phrases in pack.risk_classes().items():
        hits = pack.negations(list(texts)) if name == "negated" else _find(texts, phrases)
        for k in hits:
            if k in skip:
                continue
            if texts[k] in ("if", "whether") and k in asking:
                continue  # "ask Ann if she's free": what is asked, not a condition
            if texts[k] == "no" and k + 1 < len(texts) and texts[k + 1] in pack.not_negating_after_no:
                continue
            found.append((k, name))
    marks = [k for k, t in enumerate(texts) if t == "?"]
    if marks and not (question_ok and marks == [len(texts) - 1]):
        found.append((marks[0], "question"))
    if not found:
        return None
    k, name = min(found)
    return name, k


def read(sentence: str, intent: str, *, lead_in: str | None = None, pack: LanguagePack | None = None) -> Reading | None:
    """How ``sentence`` stands to a request for ``intent``; None when the intent's verb is not in it."""
    pack = pack or english()
    p = intent_phrase(intent)
    if not p or p[0] is None:
        return None
    toks = tokens(sentence)
    texts = [t.text for t in toks]
    first = p[0]
    positions = [i for i, t in enumerate(texts) if t[:1] == first[:1] and lemma(t) == first]
    lemmas: list[str] | None = None
    readings: list[Reading] = []
    lead = _lead(texts, pack)
    multiple = any(t in pack.multiple for t in texts)
    for i in positions:
        if lemmas is None:
            lemmas = [lemma(t) if t[:1].isalpha() else t for t in texts]
        end = _intent_end(lemmas, p, i)
        if end == -1:
            continue
        readings.append(_reading(sentence, texts, lead, i, end, pack, multiple))
    if not readings:
        return None
    best = _best(readings)
    if best.proof == "proved" and lead_in is not None:
        return _under_lead(best, lead_in, pack)
    return best


def _reading(
    sentence: str, texts: Sequence[str], lead: _Lead, i: int, end: int, pack: LanguagePack, multiple: bool
) -> Reading:
    toks = tokens(sentence)
    negation = _governing_negation(texts, lead.covered, i, pack)
    if negation is not None:
        return Reading("disproved", "negated", sentence[toks[negation].start :].strip())
    word = texts[i]
    at_head = i == lead.end
    if lead.gerund:
        form_ok = word.endswith("ing")
    elif lead.wish:
        form_ok = word != lemma(word) and word.endswith(("ed", "t", "n", "id"))
        at_head = _wished(texts, lead, i, end, pack)
    else:
        form_ok = word == lemma(word) or _is_base_verb(word)
    as_noun = _action_noun(texts, lead, i, end, pack) or _means(texts, lead, i, pack)
    if not as_noun and (not form_ok or not (at_head or _coordinated(texts, lead, i, pack))):
        before = sentence[: toks[i].start].strip()
        return Reading("unknown", "not_a_request", f"{before} …" if before else sentence)
    skip = lead.covered | frozenset(range(i, end))
    risk = _risks(texts, skip, pack, lead.question)
    if risk is not None:
        name, k = risk
        return Reading("unknown", name, sentence[toks[k].start :].strip())
    return Reading("proved", multiple=multiple, clause=_clause_spans(sentence, toks, end, pack))


def _segments(toks: Sequence[Token], pack: LanguagePack, start: int = 0) -> list[tuple[int, int]]:
    """Token ranges of a sentence cut at ";" and at the pack's clause boundaries, from token ``start``."""
    cuts = [k for k in range(start, len(toks)) if toks[k].text == ";" or toks[k].text in pack.clause_boundaries]
    bounds = [start, *cuts, len(toks)]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _statement(texts: Sequence[str], pack: LanguagePack) -> bool:
    """Whether a segment (its boundary first) states something rather than continuing a request: a subject
    pronoun opens it, or a finite verb stands in it ("; DE89… is the scammer's account", "and tell her the
    report is ready")."""
    joiners = {c[0] for c in pack.coordinators if len(c) == 1}  # "and", "then", ","
    words = [t for t in texts[1:] if t not in pack.soft and t not in joiners]
    return bool(words) and (words[0] in pack.clause_subjects or any(t in pack.clause_verbs for t in words))


def _clause_spans(sentence: str, toks: Sequence[Token], end: int, pack: LanguagePack) -> tuple[tuple[int, int], ...]:
    """Where the values of the verb whose words end at token ``end`` count: the sentence up to the verb and
    its segment, then every later segment that is not a statement ("…, and cc ann@…", "…; link her the
    page" count; "…; DE89… is the scammer's account" does not)."""
    texts = [t.text for t in toks]
    pieces = _segments(toks, pack, end)
    if not pieces:
        return ((0, len(sentence)),)
    first = pieces[0][1]
    embedded = next((k for k in range(end + 1, first) if texts[k] in pack.clause_verbs), None)
    if embedded is not None:  # "tell them eve@… is blocked": a statement inside; its subject is no object
        first = embedded - 1
    spans = [(0, toks[first].start if first < len(toks) else len(sentence))]
    for a, b in pieces[1:]:
        if not _statement(texts[a:b], pack):
            spans.append((toks[a].start, toks[b].start if b < len(toks) else len(sentence)))
    return tuple(spans)


def clauses(sentence: str, pack: LanguagePack | None = None) -> list[tuple[int, int]]:
    """The segments of a sentence, as character spans (cut at ";" and the pack's clause boundaries)."""
    pack = pack or english()
    toks = tokens(sentence)
    return [
        (toks[a].start if a else 0, toks[b].start if b < len(toks) else len(sentence)) for a, b in _segments(toks, pack)
    ] or [(0, len(sentence))]


def names(sentence: str, start: int, pack: LanguagePack | None = None) -> bool:
    """Whether the value at character ``start`` of ``sentence`` is introduced by name ("a file called
    'notes.txt'"), in a sentence with no risk word."""
    pack = pack or english()
    toks = tokens(sentence)
    k = next((j for j, t in enumerate(toks) if t.end > start), None)
    if k is None or k == 0 or toks[k - 1].text not in pack.naming_words:
        return False
    return _risks([t.text for t in toks], frozenset(), pack, question_ok=True) is None


def refers_back(clause: str, pack: LanguagePack | None = None) -> bool:
    """Whether a clause refers to something named before by a pronoun ("move it", "rename them")."""
    pack = pack or english()
    return any(t.text in pack.pronouns for t in tokens(clause))


def declares(clause: str, pack: LanguagePack | None = None) -> bool:
    """Whether a clause of the user's declares its value as theirs ("my username is dr_smith", "my card
    with id 'card1'"): a first person possessive and a link in it, and no risk word."""
    pack = pack or english()
    texts = [t.text for t in tokens(clause)]
    if not any(t in pack.declarers for t in texts) or not any(t in pack.declaration_links for t in texts):
        return False
    return _risks(texts, frozenset(), pack, question_ok=True) is None


_ORDER: dict[Proof, int] = {"proved": 0, "unknown": 1, "disproved": 2}


def _best(readings: Sequence[Reading]) -> Reading:
    """A proof if one occurrence gives it; a disproof only when every occurrence is disproved; else the
    first unknown."""
    return min(readings, key=lambda r: _ORDER[r.proof])


def _under_lead(reading: Reading, lead_in: str, pack: LanguagePack) -> Reading:
    """A list item's reading under its list's lead-in: a lead-in with a risk word makes the item unknown
    (disproved when a negation in it governs the list)."""
    texts = [t.text for t in tokens(lead_in)]
    lead = _lead(texts, pack)
    negation = _governing_negation(texts, lead.covered, len(texts), pack)
    if negation is not None:
        return Reading("disproved", "negated", lead_in)
    risk = _risks(texts, lead.covered, pack, question_ok=lead.question)
    if risk is not None:
        return Reading("unknown", risk[0], lead_in)
    return reading


def takes_back(sentence: str, pack: LanguagePack | None = None) -> bool:
    """Whether a later sentence of the user's takes back what came before ("Wait, cancel that", "Never mind")."""
    pack = pack or english()
    texts = [t.text for t in tokens(sentence) if t.kind != "punct" and t.kind != "question"]
    if not texts:
        return False
    if any(_match_at(texts, 0, p) == len(texts) for p in pack.retraction_sentences):
        return True
    lead = _lead(texts, pack)
    return any(
        not all(j in lead.covered for j in range(k, _phrase_end(texts, k, pack.retractions)))
        for k in _find(texts, pack.retractions)
    )


def _phrase_end(texts: Sequence[str], k: int, phrases: Sequence[Phrase]) -> int:
    return max(_match_at(texts, k, p) for p in phrases if p[0] == texts[k])
