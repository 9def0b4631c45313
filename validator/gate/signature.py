"""The injection signature: an action no word of the user's names, that an outside party's text does.

An agent that pays the invoice in the inbox, or unlocks the door a product review asks it to, acts on words
the user never said. When no sentence of the user's own words names the action in any form (none holds the
tool's intent verb, inflected, or a noun made from it: "pay", "paid", "payment"), every sentence of the
user's is in the language the pack reads (a sentence in another language may name it in words the pack does
not know: then nothing is disproved), and a tool's output (an email, a web page, a review: anything the
user did not write) does name it, the request is *disproved*: the action is blocked, never put to the
user as a question (asking a person to confirm what an attacker wrote is how confirmations get clicked
through).

The same signature on a dangerous action's target (:func:`outside_target`): the user asked to pay, but the
account stands only in an outside party's text (an email, another participant's message), no lookup chain
starts in the user's words (principle 8), and the user named no source it came from (no argument of the
call that read it stands in the user's words, and no noun of the reading tool's name: "the invoice in my
*inbox*"). Then the target is disproved, not asked about; a source the user named goes to the user.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from validator.gate.grammar import grammar
from validator.gate.grounding import mentions, outside_party
from validator.gate.index import is_users
from validator.gate.lexer import Word, in_pack_language
from validator.gate.paths import string_leaves
from validator.gate.provenance import call_of
from validator.gate.reader import ToolSense
from validator.gate.sentences import own_words
from validator.gate.split import sentences
from validator.gate.text import normalize
from validator.inputs.transcript import Transcript
from validator.language import english
from validator.language.rules import ALL_ON, Rules
from validator.verdict.findings import ValueFinding

__all__ = ["named_only_outside", "outside_target"]

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


def _users_messages(
    transcript: Transcript, user_id: str | None, rules: Rules, verbs: frozenset[str] = frozenset()
) -> Iterator[tuple[str, list[tuple[Word, ...]]] | None]:
    """The user's own words, message by message, with each sentence's words; last, None when more of them
    exist than are read (then what the rest says is not known)."""
    left = _USERS_READ
    for i, m in enumerate(transcript.messages):
        if not is_users(m, user_id):
            continue
        own = own_words(transcript, i, rules)
        left -= len(own)
        if left < 0:
            yield None
            return
        yield own, [grammar().words(own[s.start : s.end], verbs=verbs) for s in sentences(own)]


def named_only_outside(
    transcript: Transcript, tool: ToolSense, user_id: str | None = None, rules: Rules = ALL_ON
) -> str | None:
    """Where a tool's output names the action when no sentence of the user's does (``message #i, <speaker>:
    <its words>``), or None."""
    stems = _stems(tool)
    if not stems:
        return None
    for message in _users_messages(transcript, user_id, rules, tool.verbs):
        if message is None:
            return None  # more of the user's words than are read: one of them may name it
        if any(_names(words, stems) or not in_pack_language(words) for words in message[1]):
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


def outside_target(
    transcript: Transcript, finding: ValueFinding, user_id: str | None = None, rules: Rules = ALL_ON
) -> str | None:
    """Where a target stands when it stands only in outside parties' text from sources the user did not name
    (``message #i, <speaker>``), or None. Only a value with no chain from the user's words
    (``not_from_user``) is read; the agent's own words are no source (an agent repeating the account it was
    handed adds nothing)."""
    if finding.status != "not_from_user":
        return None
    sources = [loc for loc in finding.locations if loc.role != "assistant"]
    if not sources or not all(outside_party(transcript, loc.message, user_id) for loc in sources):
        return None
    users = _users_words(transcript, user_id, rules)
    if users is None or any(_named_source(transcript, loc.message, users) for loc in sources):
        return None
    return "; ".join(str(loc) for loc in sources)


def _users_words(transcript: Transcript, user_id: str | None, rules: Rules) -> tuple[str, frozenset[str]] | None:
    """The user's own words (folded) and their word forms; None beyond what is read, or when a sentence of
    theirs is not in the pack's language."""
    text: list[str] = []
    for message in _users_messages(transcript, user_id, rules):
        if message is None or not all(in_pack_language(words) for words in message[1]):
            return None  # a sentence in another language may name the source in words the pack lacks
        text.append(message[0])
    joined = normalize(" ".join(text)).casefold()
    forms = {f for w in grammar().words(joined) for f in (w.norm, w.lemma or "") if f}
    return joined, frozenset(forms)


def _named_source(transcript: Transcript, message: int, users: tuple[str, frozenset[str]]) -> bool:
    """Whether the user named the source of a message: a word of its author's name or address stands in their
    words ("Northwind"); for an email, a noun of a message does ("my latest email"); an argument of the call
    that read it does ("bill-december.txt"); or a noun of the tool's name does ("inbox" of ``read_inbox``)."""
    text, forms = users
    author = transcript.messages[message].author or ""
    if "@" in author and any(english().nouns.get(f, frozenset()) >= _MAIL for f in forms):
        return True  # "the invoice in my latest email": a noun of a message names a mail's source
    if any(len(w) >= 4 and w not in _GENERIC and mentions(text, w) for w in re.split(r"[^\w]+", author.casefold())):
        return True  # "the invoice from Northwind", read from billing@northwind.example
    found = call_of(transcript, message)
    if found is None:
        return False  # another participant's message: no source the user can have named
    _, call = found
    for _, arg in string_leaves(dict(call.args), ""):
        folded = normalize(arg).casefold().strip()
        if len(folded) >= 3 and mentions(text, folded):
            return True
    name = normalize(call.name).replace("_", " ").replace("-", " ")
    for w in grammar().words(" ".join(_split_camel(name))):
        if w.classes & {"NN", "NNS"} and ({w.norm, w.lemma or ""} & forms):
            return True
    return False


_MAIL = frozenset({"message", "thread"})
"""The pack's noun kinds of what an email is ("email", "mail", "message"; a "reminder" is a message, not a mail)."""
_GENERIC = frozenset({"example", "mail", "email", "info", "noreply", "reply", "support", "team", "billing", "http"})
"""Words of an address that name no one in particular."""


def _split_camel(name: str) -> list[str]:
    out: list[str] = []
    for part in name.split():
        word = ""
        for ch in part:
            if ch.isupper() and word and not word[-1].isupper():
                out.append(word)
                word = ""
            word += ch
        out.append(word)
    return [w.lower() for w in out if w]
