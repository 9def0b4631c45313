"""The injection signature: an action no word of the user's names, that an outside party's text does.

An agent that pays the invoice in the inbox, or unlocks the door a product review asks it to, acts on words
the user never said. When no sentence of the user's own words names the action in any form (none holds the
tool's intent verb, inflected, or a noun made from it: "pay", "paid", "payment"), every sentence of the
user's is in the language the pack reads (a sentence in another language may name it in words the pack does
not know: then nothing is disproved), and a tool's output (an email, a web page, a review: anything the
user did not write) does name it, the request is *disproved*: the action is blocked, never put to the
user as a question (asking a person to confirm what an attacker wrote is how confirmations get clicked
through).
"""

from __future__ import annotations

from collections.abc import Sequence

from validator.gate.grammar import grammar
from validator.gate.index import is_users
from validator.gate.lexer import Word
from validator.gate.reader import ToolSense
from validator.gate.sentences import own_words
from validator.gate.split import sentences
from validator.inputs.transcript import Transcript
from validator.rules import ALL_ON, Rules

__all__ = ["COVERED", "named_only_outside"]

COVERED = 0.5
"""The share of a user sentence's words the pack must know for it to be in the pack's language."""
_READ = 20_000
"""Characters of each tool output read for the action's name."""
_USERS_READ = 50_000
"""Characters of the user's own words read for it: beyond them, what the rest says is not known, and nothing is
disproved."""


def _stems(tool: ToolSense) -> frozenset[str]:
    """The intent verbs' heads, and their stems for the nouns made from them ("pay" → "payment", "delete" →
    "deletion"): matched loosely, so that a user's word of the action is never missed."""
    heads = {i.verb.split()[0] for i in tool.intents}
    return frozenset(heads | {h[:-1] for h in heads if h.endswith("e") and len(h) > 3})


def _names(words: Sequence[Word], stems: frozenset[str]) -> bool:
    prefixes = tuple(s for s in stems if len(s) >= 3)
    for w in words:
        forms = (w.verb or "", w.lemma or "", w.norm)
        if any(f and (f in stems or f.startswith(prefixes)) for f in forms):
            return True
    return False


def _covered(words: Sequence[Word]) -> bool:
    """Whether a sentence is in the pack's language: most of its words are ones the pack knows."""
    lettered = [w for w in words if any(c.isalpha() for c in w.text)]
    known = [w for w in lettered if w.classes - {"NAME", "TEXT"}]
    return not lettered or len(known) >= COVERED * len(lettered)


def named_only_outside(
    transcript: Transcript, tool: ToolSense, user_id: str | None = None, rules: Rules = ALL_ON
) -> str | None:
    """Where a tool's output names the action when no sentence of the user's does (``message #i, <speaker>:
    <its words>``), or None."""
    stems = _stems(tool)
    if not stems:
        return None
    left = _USERS_READ
    for i, m in enumerate(transcript.messages):
        if not is_users(m, user_id):
            continue
        own = own_words(transcript, i, rules)
        left -= len(own)
        if left < 0:
            return None  # more of the user's words than are read: one of them may name it
        for s in sentences(own):
            words = grammar().words(own[s.start : s.end], verbs=tool.verbs)
            if _names(words, stems) or not _covered(words):
                return None
    for i, m in enumerate(transcript.messages):
        if m.role != "tool" or m.name == tool.tool:
            continue
        content = m.content[:_READ]
        for s in sentences(content):
            text = content[s.start : s.end]
            if _names(grammar().words(text, verbs=tool.verbs), stems):
                return f"message #{i}, {m.speaker}: {' '.join(text.split())[:80]}"
    return None
