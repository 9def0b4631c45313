"""What a model may decide of a dangerous call's intent, by the policy's opt-in (``intent = "judge"``).

Code could not read the request (the call's intent is unknown) and the tool's policy lets a model judge on the
blind view decide it. The model's approval then counts only where code proved everything else. Before any
judge, this module finds what that is (:class:`~validator.findings.Judgeable`):

- **every value the user's**: each target, amount and entity stands in the user's own cited words (in a clause
  code proved none for, where no request was proved), a cited standing authorization, or a lookup the policy lets
  that argument use (``values``);
- **each target and each amount the only value of its role** in the user's own words, from the first cited
  sentence's message on: no other amount of money; for a target the lexer reads as one value of a kind (a path,
  a file name, an account, an address, an id) or a person's name, no other word of that kind ("Pay Bob 50 EUR."
  then "Bob says I owe 500 EUR, right?" never pays 500; "Delete /tmp/a; /tmp/b is the scammer's." never
  deletes /tmp/b: ``another_value``). A number or a phrase has no role code can list; the model reads it;
- **the sentences the model may cite**: the cited sentences of the user's own words in which the tool's intent
  verb stands as a word (a declaration, "My landlord's IBAN is DE89…, rent is 900 EUR.", never pays:
  ``no_verb``), not negated or framed in themselves, with no sentence of the user's after them that the context
  table leaves unknown or reads as taking them back, no frame in an earlier turn and no reply to another
  participant (``after``: an unread "Scratch that, I'll handle it myself." is never the model's alone).

:func:`validator.decision.decide` holds the model's answer to it: approved with high confidence, on the
blind view, citing words of one of these sentences that hold the verb. Nothing disproved reaches a judge at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from decimal import Decimal

from validator.findings import USERS_WORDS, Citable, IntentFinding, Judgeable, RequestSentence, ValueFinding
from validator.gate.check_context import CheckContext
from validator.gate.grammar import Grammar, grammar
from validator.gate.grounding import as_number, stands_in
from validator.gate.reader import ToolSense
from validator.gate.requests import after_request, verbs_in
from validator.inputs.action import PendingAction
from validator.inputs.transcript import is_users
from validator.language.classes import NAME, VALUE
from validator.policy import ToolPolicy
from validator.text.entities import amounts_in
from validator.text.lexer import Word
from validator.text.paths import lookup
from validator.text.sentences import own_words

__all__ = ["judgeable"]

_VALUE_CHARS = 500
"""The most of a target value read for its role (a longer one is no single word)."""
_LONGEST = 100_000
"""The most of one user message read for values (a longer one is read up to here)."""


def judgeable(
    ctx: CheckContext,
    action: PendingAction,
    tool_policy: ToolPolicy,
    intent: IntentFinding,
    requests: Sequence[RequestSentence],
    values: Sequence[ValueFinding],
    sense: ToolSense,
    others: Sequence[ToolSense],
) -> Judgeable | None:
    """What a model may decide of this call's intent (see the module docstring); None where the policy does not
    opt in, the tool is not dangerous, or the intent is not unknown (proved, or disproved: no judge decides it)."""
    opted = tool_policy.intent == "judge" and tool_policy.risk == "dangerous"
    if not opted or intent.requested or intent.proof != "unknown":
        return None
    # a looked-up value is bound to what the user named for it only by a proved clause: never the model's to read
    unproved = [v for v in values if v.status == "delegated" or (v.proof != "proved" and v.status not in USERS_WORDS)]
    if unproved:
        return Judgeable(problem="values", detail=unproved[0].describe())
    unbound = [v for v in values if v.status in USERS_WORDS]
    with_verb = [
        (s, spans)
        for s in requests
        if (spans := verbs_in(ctx, s, sense)) and all(stands_in(s.text, v.value, ctx.pack) for v in unbound)
    ]
    if not with_verb:
        return Judgeable(problem="no_verb", detail=", ".join(i.text for i in sense.intents))
    # from the first message a cited sentence or a value stands in: every value of a role said since is a rival
    first = min([s.message for s, _ in with_verb] + [loc.message for v in values for loc in v.locations])
    other = _another_value(ctx, action, tool_policy, values, first)
    if other is not None:
        return Judgeable(problem="another_value", detail=other)
    citable: list[Citable] = []
    taken_back = ""
    for s, spans in with_verb:
        after = after_request(ctx, s, sense, others)
        if after is not None:
            taken_back = taken_back or after.detail
            continue
        citable.append(Citable(s.message, s.start, s.end, s.text, spans))
    if not citable:
        return Judgeable(problem="after", detail=taken_back)
    return Judgeable(tuple(citable))


def _users_words(ctx: CheckContext, first: int) -> Iterator[str]:
    """The user's own words (pasted and quoted passages blanked) in each user message from ``first`` on, within the
    gate's budget."""
    transcript = ctx.transcript
    for i in range(first, len(transcript.messages)):
        if is_users(transcript.messages[i], ctx.user_id):
            ctx.within("reading the user's words for rival values")
            yield own_words(transcript, i, ctx.rules, ctx.pack)[:_LONGEST]


def _another_value(
    ctx: CheckContext,
    action: PendingAction,
    tool_policy: ToolPolicy,
    values: Sequence[ValueFinding],
    first: int,
) -> str | None:
    """Another value of a target's or an amount's role in the user's own words from message ``first`` on, as
    ``"recipient: bob@… and eve@…"``; None when each is the only one."""
    texts = list(_users_words(ctx, first))
    amounts = set(tool_policy.amount_paths(action.tool))
    return _another_amount(action, amounts, texts) or _another_target(values, amounts, texts, grammar(ctx.pack))


def _another_amount(action: PendingAction, amounts: set[str], texts: Sequence[str]) -> str | None:
    """Another amount of money in ``texts`` than an amount argument's (a bare number too, where the argument's
    stands bare)."""
    for path in sorted(amounts):
        found, value = lookup(action.args, path)
        mine = _number(value) if found == "found" else None
        if mine is None:
            continue
        said = [a for text in texts for a in amounts_in(text) if not a.is_time]
        money = [a.value.normalize() for a in said if a.currency is not None]
        pool = money if mine in money else money + [a.value.normalize() for a in said if a.currency is None]
        others = sorted({v for v in pool if v != mine})
        if others:
            return f"{path}: {mine:f} and {', '.join(f'{o:f}' for o in others[:3])}"
    return None


def _another_target(values: Sequence[ValueFinding], amounts: set[str], texts: Sequence[str], g: Grammar) -> str | None:
    """Another word of a target's role (:func:`_role`) in ``texts``."""
    said: list[Word] | None = None  # the user's words, lexed once, when a target is a string
    for v in values:
        if v.path in amounts or not isinstance(v.value, str):
            continue
        said = said if said is not None else [w for text in texts for w in g.words(text)]
        words = g.words(v.value[:_VALUE_CHARS])
        role = _role(words, said)
        if role is None:
            continue
        roles = [r for w in said if (r := _role_of(w)) is not None]
        own = {w.norm for w in words}  # "Bob Smith": "smith" is no rival
        seen = sorted({norm for kinds, norm in roles if kinds & role[0]} - own)
        if seen:
            return f"{v.path}: {v.value} and {', '.join(seen[:3])}"
    return None


def _role(words: Sequence[Word], said: Sequence[Word]) -> tuple[frozenset[str], str] | None:
    """A target value's role: a value of a kind (a path, a file name, an account, an address, an id) or a person's
    name, as ``(kinds, norm)``, as the lexer reads it where it stands in the user's words (``said``: "Bob" alone
    reads as a verb, in "thank Bob" as a name), else alone; None when it is no single such word (a number, a
    phrase): no other value of its role can be listed. A name of several words is read by its first. ``words``:
    the value as the lexer reads it alone."""
    if not words:
        return None
    first = words[0].norm
    standing = [r for w in said if w.norm == first and (r := _role_of(w)) is not None]
    if standing:
        kinds = frozenset().union(*(k for k, _ in standing))
        return kinds, first
    return _role_of(words[0]) if len(words) == 1 else None


def _role_of(word: Word) -> tuple[frozenset[str], str] | None:
    if VALUE in word.classes and word.kinds:
        return word.kinds, word.norm
    if NAME in word.classes:
        return frozenset({NAME}), word.norm
    return None


def _number(value: object) -> Decimal | None:
    """An amount argument's number: a plain number (:func:`~validator.gate.grounding.as_number`: never NaN or an
    infinity), or the one amount a text holds ("50 EUR")."""
    number = as_number(value)
    if number is not None:
        return number.normalize()
    if isinstance(value, str):
        found = amounts_in(value)
        return found[0].value.normalize() if len(found) == 1 else None
    return None
