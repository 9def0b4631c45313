"""Structural properties of the whole-context rule that need no attack wordings (the tests and
``bench/properties.py --context`` run them; ``chatterbot-corpus``, a development dependency, gives the lines).

For every proved request (the seeds of :mod:`validator.devtools.properties`), each line of a public corpus of
things people say (chatterbot-corpus's conversations, BSD, in 27 languages: nobody here wrote them) is put
around it, in its message and as a later user message:

- **unread after**: a line the grammar has no complete parse of, after the request, leaves it unproved;
- **withdrawal after**: a line that says no, not, never, stop, cancel, wait, forget or hold, after the
  request, leaves it unproved (the words define the property; the lines are the corpus's);
- **unread before**: a line the grammar has no complete parse of, before the request in its message, leaves
  it unproved;
- **greeting before**: a line the grammar reads as social talk only ("Good morning."), a sentence of its own
  before the request, leaves it proved.

The lines after the request that leave it proved are listed (``kept``): the grammar read each as harmless,
and the report shows them for a person to read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from validator.devtools.properties import Seed
from validator.findings import RequestSentence
from validator.gate.check_context import CheckContext
from validator.gate.grammar import grammar
from validator.gate.requests import read_request
from validator.inputs.transcript import Message, Transcript
from validator.text.sentences import own_words
from validator.text.split import sentences

__all__ = ["WITHDRAWING", "ContextFound", "corpus_lines", "in_context", "violations"]

WITHDRAWING = re.compile(r"\b(no|not|never|stop|cancel\w*|wait|forget|hold|don'?t|won'?t|isn'?t|nope)\b|n't\b", re.I)
"""What makes a corpus line a withdrawal for the property (its definition, not the pack's words)."""

_LANGUAGES = ("english", "german", "italian", "russian", "french", "spanish", "portuguese", "dutch")


@cache
def corpus_lines(language: str = "english") -> tuple[str, ...]:
    """Every line of chatterbot-corpus's conversations in ``language``, once each, in the corpus's order."""
    import chatterbot_corpus
    import yaml

    root = Path(chatterbot_corpus.__file__).parent / "data" / language
    seen: dict[str, None] = {}
    for path in sorted(root.glob("*.yml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        for conversation in (data or {}).get("conversations", []) or []:
            for line in conversation if isinstance(conversation, list) else []:
                text = " ".join(str(line).split())
                if text and len(text) <= 200:
                    seen.setdefault(text, None)
    return tuple(seen)


def in_context(seed: Seed, *, before: str = "", after: str = "", later: str = "") -> bool:
    """Whether ``seed``'s request is still proved with ``before`` and ``after`` around it in its message and
    ``later`` as the next user message."""
    head = f"{before} " if before else ""
    text = f"{head}{seed.sentence}{' ' + after if after else ''}"
    messages = [Message("user", text)]
    if later:
        messages += [Message("assistant", "Sure."), Message("user", later)]
    start = len(head)
    transcript = Transcript(messages)
    # the sentence of the user's own words that holds the request, as the gate finds a cited quote's ("Hi
    # Please pay …" is one sentence: a line with no full stop runs into the request; quoted text is blanked)
    own = own_words(transcript, 0)
    found = next(s for s in sentences(own) if s.start <= start < s.end)
    sentence = RequestSentence(0, found.start, found.end, own[found.start : found.end], 0, found.lead)
    return read_request(seed.sense, [sentence], CheckContext(transcript)).proof == "proved"


def _parsed(line: str) -> bool:
    return bool(grammar().parse(line).readings)


def _social(line: str) -> bool:
    readings = grammar().parse(line).readings
    return bool(readings) and all(r.kind == "social" for r in readings)


@dataclass
class ContextFound:
    """What the context properties found: violations by property, and the lines that kept a request proved."""

    tried: dict[str, int] = field(default_factory=dict)
    violations: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    """Lines after a request that left it proved, with how many seeds they did so for."""

    def add(self, name: str, seed: Seed, line: str, violated: bool) -> None:
        self.tried[name] = self.tried.get(name, 0) + 1
        found = self.violations.setdefault(name, [])
        if violated:
            found.append((seed.sentence, line))


def _lines(languages: tuple[str, ...], limit: int | None) -> Iterator[str]:
    for language in languages:
        yield from corpus_lines(language)[:limit]


def violations(seeds: list[Seed], *, languages: tuple[str, ...] = _LANGUAGES, limit: int | None = None) -> ContextFound:
    """Every seed with every corpus line (``limit`` lines per language) around it; see the module's text."""
    out = ContextFound()
    lines = list(dict.fromkeys(_lines(languages, limit)))
    parsed = {line: _parsed(line) for line in lines}
    for seed in seeds:
        assert in_context(seed), seed.sentence
        for line in lines:
            withdrawing = WITHDRAWING.search(line) is not None
            for where in ("after", "later"):
                proved = in_context(seed, **{where: line})
                if not parsed[line]:
                    out.add("unread after", seed, line, proved)
                if withdrawing:
                    out.add("withdrawal after", seed, line, proved)
                if proved:
                    out.kept[line] = out.kept.get(line, 0) + 1
            if not parsed[line]:
                out.add("unread before", seed, line, in_context(seed, before=line))
            elif line[-1] in ".!?" and _social(line):  # a sentence of its own, not run into the request
                out.add("greeting before", seed, line, not in_context(seed, before=line))
    return out
