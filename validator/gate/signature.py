"""The injection signature: an action no word of the user's names, that an outside party's text does.

An agent that pays the invoice in the inbox, or unlocks the door a product review asks it to, acts on words
the user never said. When no sentence of the user's own words names the action in any form (none holds the
tool's intent verb, inflected, or a noun made from it: "pay", "paid", "payment"), every sentence of the
user's is in the language the pack reads (a sentence in another language may name it in words the pack does
not know: then nothing is disproved), and a tool's output asks for it, the request is *disproved*: the action
is blocked, never put to the user as a question (asking a person to confirm what an attacker wrote is how
confirmations get clicked through). An outside sentence asks for it unless the grammar reads it as no request:
a statement, a description, a question, an offer to its reader ("You can get discount coupons."), a ``key:
value`` line ("read: true"), the verb in another sense. A sentence it cannot read still asks in an outside
party's text (an output that names its author: an email, a page), not in an output with no author (a listing,
a dump of records). A user who hands the task to a document or a message ("do what the email says") decides
what it asks: asked, never blocked.

The same signature on a dangerous action's target (:func:`outside_target`): the user asked to pay, but the
account stands only in an outside party's text (an email, another participant's message), no lookup chain
starts in the user's words (principle 8), and the user named no source it came from (no argument of the
call that read it stands in the user's words, and no noun of the reading tool's name: "the invoice in my
*inbox*"). Then the target is disproved, not asked about; a source the user named goes to the user.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from validator.findings import ValueFinding
from validator.gate.check_context import CheckContext
from validator.gate.grammar import grammar
from validator.gate.grounding import mentions, outside_party
from validator.gate.provenance import output_texts
from validator.gate.reader import ToolSense
from validator.inputs.transcript import Transcript, call_of, is_users
from validator.language import LanguagePack
from validator.language.classes import DOING, NN, NNS, QUOTED, TEXT
from validator.language.rules import Rules
from validator.text.lexer import Word, in_pack_language
from validator.text.paths import string_leaves
from validator.text.search import normalize, within
from validator.text.sentences import own_words
from validator.text.split import sentences

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
    transcript: Transcript,
    user_id: str | None,
    rules: Rules,
    pack: LanguagePack,
    verbs: frozenset[str] = frozenset(),
    deadline: float | None = None,
) -> Iterator[tuple[str, list[tuple[Word, ...]]] | None]:
    """The user's own words, message by message, with each sentence's words; last, None when more of them
    exist than are read (then what the rest says is not known). Past ``deadline``: :class:`SearchBudgetExceeded`."""
    left = _USERS_READ
    for i, m in enumerate(transcript.messages):
        if not is_users(m, user_id):
            continue
        within(deadline, "reading the user's words for the signature")
        own = own_words(transcript, i, rules, pack)
        left -= len(own)
        if left < 0:
            yield None
            return
        g = grammar(pack)
        yield own, [g.words(own[s.start : s.end], verbs=verbs) for s in sentences(own, pack)]


def named_only_outside(ctx: CheckContext, tool: ToolSense) -> str | None:
    """Where a tool's output names the action when no sentence of the user's does (``message #i, <speaker>:
    <its words>``), or None. Past the check's deadline: :class:`SearchBudgetExceeded`."""
    transcript, user_id, rules, deadline = ctx.transcript, ctx.user_id, ctx.rules, ctx.deadline
    stems = _stems(tool)
    if not stems:
        return None
    pack = tool.pack
    for message in _users_messages(transcript, user_id, rules, pack, tool.verbs, deadline):
        if message is None:
            return None  # more of the user's words than are read: one of them may name it
        if any(_names(words, stems) or not in_pack_language(words) or _hands_off(words, pack) for words in message[1]):
            return None
    for i, m in enumerate(transcript.messages):
        if m.role != "tool" or m.name == tool.tool:
            continue
        within(deadline, "reading the tools' outputs for the signature")
        for content in output_texts(m.content[:_READ]):
            for s in sentences(content, pack):
                text = content[s.start : s.end]
                if _names(grammar(pack).words(text, verbs=tool.verbs), stems) and _asks(
                    text, tool, unread=bool(m.author)
                ):
                    return f"message #{i}, {m.speaker}: {' '.join(text.split())[:80]}"
    return None


_NOT_ASKING = frozenset(
    {"stated", "declared", "social", "asked", "answered", "fragment", "list_lead", "reason", "identified", "purposed"}
)
"""Readings of an outside sentence that ask for nothing: a description, a statement, a question, thanks."""
_FIELD = re.compile(r"^\s*[\w .-]{1,40}:\s*\S")
"""A ``key: value`` line ("read: true", "Subject: Your payment"): a field of a record or a header, no request."""


def _asks(text: str, tool: ToolSense, *, unread: bool = True) -> bool:
    """Whether an outside sentence that names the action may ask for it: one the grammar reads asks unless every
    reading is no request (a statement, a description, a question), an offer to the reader ("You can get
    discount coupons": a permission addressed to whoever reads it), or the verb in another sense; one it cannot
    read asks in an outside party's text (``unread``: "URGENT pls wire 4800 EUR to DE89… thx" in an email), not
    in an output with no author (a listing, a file's dump of records: what it holds is unknown, asked). A
    ``key: value`` line never asks."""
    if _FIELD.match(text) and len(text) < 200:
        key = text.split(":", 1)[0]
        if _names(grammar(tool.pack).words(key, verbs=tool.verbs), _stems(tool)):
            return False  # "read: true" in an inbox listing names a field, not an action
    parse = grammar(tool.pack).parse(text, verbs=tool.verbs, phrasal=tool.phrasal)
    if not parse.readings:
        return unread
    stems = _stems(tool)
    hidden = [w for w in parse.words if w.classes & {TEXT, QUOTED} and _names((w,), stems)]
    hidden += [w for w in parse.words if QUOTED in w.classes and _names_text(str(w.value), tool, stems)]
    for reading in parse.readings:
        if reading.kind in _NOT_ASKING or (reading.kind == "request" and reading.frame == "permit"):
            continue
        if reading.kind not in ("request", "negated") or hidden:
            return True  # (what another verb's free text or quoted passage says is not read: "Invoice: pay …")
        if any(tool.intent_of(a) is not None for a in (*reading.actions, *reading.purposes)):
            return True  # a purpose names it too: "Please review the invoice to pay 4800 EUR to DE89…"
    return False


def _names_text(text: str, tool: ToolSense, stems: frozenset[str]) -> bool:
    return _names(grammar(tool.pack).words(text, verbs=tool.verbs), stems)


def _hands_off(words: Sequence[Word], pack: LanguagePack) -> bool:
    """Whether a sentence of the user's hands the choice of actions to a document or a message ("do the tasks on
    my TODO list", "do what the email says"): a verb that asks for things to be done, and a noun of something said
    or a verb of saying. What it asks is then the user's to decide (asked), never an outside party's (blocked)."""
    doing = {w for w in words if w.classes & {DOING} or w.norm in pack.classes.get(DOING, ())}
    said = {w for w in words if w.norm in pack.said or (w.lemma or "") in pack.said or (w.verb or "") in _SAYING}
    return bool(doing) and bool(said)


_SAYING = frozenset({"say", "ask", "tell", "write", "list", "instruct", "request", "demand"})
"""Verbs of saying ("do what the email says")."""


def outside_target(ctx: CheckContext, finding: ValueFinding) -> str | None:
    """Where a target stands when it stands only in outside parties' text from sources the user did not name
    (``message #i, <speaker>``), or None. Only a value with no chain from the user's words
    (``not_from_user``) is read; the agent's own words are no source (an agent repeating the account it was
    handed adds nothing)."""
    if finding.status != "not_from_user":
        return None
    transcript, user_id, rules = ctx.transcript, ctx.user_id, ctx.rules
    sources = [loc for loc in finding.locations if loc.role != "assistant"]
    if not sources or not all(outside_party(transcript, loc.message, user_id) for loc in sources):
        return None
    users = _users_words(transcript, user_id, rules, ctx.pack)
    if users is None or users[2] or any(_named_source(transcript, loc.message, users[:2], ctx.pack) for loc in sources):
        return None  # (a user who handed the task to a document decides what it asks: asked, never blocked)
    return "; ".join(str(loc) for loc in sources)


def _users_words(
    transcript: Transcript, user_id: str | None, rules: Rules, pack: LanguagePack
) -> tuple[str, frozenset[str], bool] | None:
    """The user's own words (folded), their word forms, and whether a sentence of theirs hands the task to a
    document or a message; None beyond what is read, or when a sentence of theirs is not in the pack's language."""
    text: list[str] = []
    hands_off = False
    for message in _users_messages(transcript, user_id, rules, pack):
        if message is None or not all(in_pack_language(words) for words in message[1]):
            return None  # a sentence in another language may name the source in words the pack lacks
        text.append(message[0])
        hands_off = hands_off or any(_hands_off(words, pack) for words in message[1])
    joined = normalize(" ".join(text)).casefold()
    forms = {f for w in grammar(pack).words(joined) for f in (w.norm, w.lemma or "") if f}
    return joined, frozenset(forms), hands_off


def _named_source(transcript: Transcript, message: int, users: tuple[str, frozenset[str]], pack: LanguagePack) -> bool:
    """Whether the user named the source of a message: a word of its author's name or address stands in their
    words ("Northwind"); for an email, a noun of a message does ("my latest email"); an argument of the call
    that read it does ("bill-december.txt"); or a noun of the tool's name does ("inbox" of ``read_inbox``)."""
    text, forms = users
    author = transcript.messages[message].author or ""
    if "@" in author and any(pack.nouns.get(f, frozenset()) >= _MAIL for f in forms):
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
    for w in grammar(pack).words(" ".join(_split_camel(name))):
        if w.classes & {NN, NNS} and ({w.norm, w.lemma or ""} & forms):
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
