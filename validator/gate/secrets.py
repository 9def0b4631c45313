"""Secrets: the values whose leaving is harm whatever their host (a key, a token, a password, a PIN).

Two closed sources, nothing guessed:

- **shapes** (:data:`SHAPES`): the forms credentials are issued in (a Stripe ``sk_live_…`` key, an OpenAI or
  Anthropic ``sk-…`` key, a GitHub ``ghp_…`` token, a Slack ``xoxb-…`` token, an AWS ``AKIA…`` key id, a
  Google ``AIza…`` key, a GitLab ``glpat-…`` token, a JSON Web Token, a PEM private key's header), and an
  assignment of one in an environment file or a config (``DB_PASSWORD=…``, ``"api_key": "…"``);
- **declared** by the user (:func:`declared_secrets`): a string after a secret's noun in the user's own words
  ("my password is hunter2", "PIN: 4821", "the wifi password is …").

:func:`secrets_in` finds both in a text; the gate grounds each one found in a guarded call's arguments as a
value of kind ``secret`` (it counts only where the user's request names it for that call), and egress
(:mod:`validator.gate.egress`) refuses an exempt call that carries one in a link.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import cast
from urllib.parse import unquote

from validator.inputs.transcript import Fact, Message, Transcript, is_users
from validator.language import LanguagePack, english
from validator.language.classes import NAME, NN, NNS
from validator.text.patterns import compiled
from validator.text.search import compact

__all__ = ["SHAPES", "declared_secrets", "secrets_in", "users_secrets"]

SHAPES: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![\w-])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}"),
    re.compile(r"(?<![\w-])sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"(?<![\w-])gh[pousr]_[A-Za-z0-9]{30,}"),
    re.compile(r"(?<![\w-])github_pat_[A-Za-z0-9_]{30,}"),
    re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"),
    re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}"),
    re.compile(r"(?<![\w-])glpat-[A-Za-z0-9_-]{20,}"),
    re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----"),
)
"""The issued forms of credentials: each match is a secret, in any text."""

_SHAPE_MARKS: tuple[tuple[str, ...], ...] = (
    ("sk_", "rk_", "pk_"),
    ("sk-",),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ("github_pat_",),
    ("xox",),
    ("AKIA", "ASIA"),
    ("AIza",),
    ("glpat-",),
    ("eyJ",),
    ("-----BEGIN ",),
)
"""For each of :data:`SHAPES`, the literals one of which every match of it contains: a shape is looked for
only in a text holding one (a substring search is many times cheaper than the pattern's scan)."""
_MARKED = tuple(zip(SHAPES, _SHAPE_MARKS, strict=True))

# The patterns below are sources, compiled at their first use (validator.text.patterns): only a text holding one of
# their marks reaches them, and a one-shot check would compile them for nothing.
_ASSIGNED = (
    r"(?i)(password|passwd|secret|token|api[_-]?key|private[_-]?key|access[_-]?key)([A-Z0-9_.-]{0,40})"
    r"[\"']?\s*[:=]\s*[\"']?([^\s\"',;&]{4,200})"
)
"""An assignment in a config or an environment file (``DB_PASSWORD=…``, ``"api_key": "…"``): found from its
secret's word (the rest of the name and the value after it; the name's start is read back from there, at most
:data:`_NAME_BACK` characters). Starting from the word keeps it linear: a pattern starting at the name's first
character read a long run of name characters again from every word boundary inside it (``a.a.a.…``)."""
_NAME_BACK = 40
_NAME_TAIL = r"[A-Za-z0-9_.-]*\Z"
_NOT_SECRET_NAMES = r"(?i)page|cursor|next|continuation|sync|csrf|count|type|expir|length|url"
"""Names that hold a secret's word and no secret (``next_page_token``, ``token_type``, ``password_length``)."""

_DECLARED = (
    r"(?i)\b(pass\s*phrase|password|passwd|pwd|pw|passcode|pin(?:\s+code)?|api\s+key|access\s+token|token|"
    r"secret(?:\s+key)?|(?:wi-?fi|network)\s+key|security\s+code|cvv|cvc)"
    r"(?:\s+(?:for|of|to|on|at)(?:\s+[\w'-]+){1,3}?)?"  # "the password for my bank is …"
    r"(\s*\b(?:is|was)\b\s*:?|\s*[:=]|'s)"  # "… is", "… is:", ":", "=", "password's …"
    r"(?:\s*\b(?:now|still|currently|actually|just|simply|literally|really|also|basically|always)\b)*\s*"
    r"(?:[\"'“\u2018]([^\"'”\u2019\n]{4,200})[\"'”\u2019]|([^\s\"'”,;]{4,200}))"
)
"""A secret's noun (and whose it is: "for my bank"), then ``is`` / ``:`` / ``=`` / ``'s``, words of time ("now",
"still"), and the value (the user's own words only): a quoted passage whole, else one token (a passphrase's
words run to the end of its clause, :data:`_PHRASE_REST`)."""
_PHRASE_REST = r"(?:(?!\s+(?:and|but|or)\s+(?:my|the|our|his|her|their|your|its)\b)[^\n.,;!?\"”]){0,200}"
"""A passphrase's words after its first: to the clause's end, or to "and my …" (another declaration)."""
_ASSIGNED_MARKS = ("passw", "secret", "token", "key")
_DECLARED_MARKS = ("pass", "pw", "pin", "key", "token", "secret", "security", "cvv", "cvc")
"""The lowercase literals every match of :data:`_ASSIGNED` (and of :data:`_DECLARED`) contains."""
_SECRET_LIKE = r"\d|[^\w]|_|[A-Z]"
"""A declared value holding a digit, a sign or a capital ("hunter2", "Tr0ub4dor&3") is a secret however it is
declared."""
_SECRET_CLASSES = frozenset({NN, NNS, NAME})
"""The only classes a word of plain letters may have in the language and still be a declared secret ("my password
is monkey", a noun): any other says what the secret is or is no value ("wrong", "please", "here")."""
_TRAILING = ".!?)"


def secrets_in(text: str, declared: Iterable[str] = ()) -> Iterator[str]:
    """Each secret in ``text``: a match of :data:`SHAPES`, an assigned value, or a ``declared`` string in it."""
    seen: set[str] = set()
    for shape, _ in _shapes_in(text):
        for m in shape.finditer(text):
            if m.group(0) not in seen:
                seen.add(m.group(0))
                yield m.group(0)
    for value in _assigned(text):
        if value not in seen:
            seen.add(value)
            yield value
    views: tuple[str, str] | None = None  # the text decoded once, for every known secret (not once each)
    for value in declared:
        if value in seen:
            continue
        if value not in text:
            if len(value) < ENCODED_MIN:
                continue
            views = views or _views(text)
            if not _encoded_in(value, views):
                continue
        seen.add(value)
        yield value


ENCODED_MIN = 6
"""A known secret this long or longer is looked for in its encodings too."""


def _views(text: str) -> tuple[str, str]:
    """``text`` percent-decoded (up to three times), as ``(letters and digits only, case-folded)`` and
    ``case-folded``: what :func:`_encoded_in` compares a known secret with."""
    plain = text
    for _ in range(3):
        unquoted = unquote(plain)
        if unquoted == plain:
            break
        plain = unquoted
    return compact(plain), plain.casefold()


def _encoded_in(value: str, views: tuple[str, str]) -> bool:
    """Whether a text (its :func:`_views`) carries a known secret in a form an agent may be asked to use:
    percent-encoded (even twice), split by signs ("sk_/liv/e_4e…", "Hun-ter-2xy"), reversed, in any case, in
    base64 (standard or for links) or in hexadecimal. Closed forms only: an encoding of its own (a cipher) is
    beyond any reader."""
    bare, folded = views
    mine = compact(value)
    if len(mine) >= ENCODED_MIN and (mine in bare or mine[::-1] in bare):
        return True
    raw = value.encode("utf-8", "surrogatepass")  # a lone surrogate (Python input) is no crash
    forms = (
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        raw.hex(),
    )
    return any(form[: max(ENCODED_MIN, len(form) - 2)].casefold() in folded for form in forms)


def _shapes_in(
    text: str, among: Sequence[tuple[re.Pattern[str], tuple[str, ...]]] = _MARKED
) -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
    """Each of :data:`SHAPES` (of ``among``) that may match in ``text``, with its literals: those it holds one of."""
    return [(shape, marks) for shape, marks in among if _holds(text, marks)]


def _holds(text: str, marks: tuple[str, ...]) -> bool:
    return any(m in text for m in marks)


def _may_hold(text: str, marks: tuple[str, ...]) -> bool:
    """Whether a case-insensitive pattern whose every match holds one of ``marks`` may match ``text``. Exact
    on ASCII text (lowercasing is what the pattern's ignoring case does there); any other text is read in full
    (Unicode's case folding matches letters outside ASCII too: the Kelvin sign for ``k``, a long s for ``s``)."""
    if not text.isascii():
        return True
    lower = text.lower()
    return any(m in lower for m in marks)


def declared_secrets(texts: Iterable[str], pack: LanguagePack | None = None) -> frozenset[str]:
    """The strings the user's words declare secrets ("my password is hunter2" → ``hunter2``; "PIN: 4821"; "my
    password is 'correct horse battery staple'"; "the password for my bank is now hunterhunter")."""
    pack = pack or english()
    out = set()
    for text in texts:
        if not _may_hold(text, _DECLARED_MARKS):
            continue
        for m in compiled(_DECLARED).finditer(text):
            noun, _, quoted, token = m.groups()
            if quoted is not None:
                value = quoted.strip()
            elif "phrase" in noun.lower() and (rest := compiled(_PHRASE_REST).match(text, m.end(4))):
                value = (token + rest.group(0)).strip().rstrip(_TRAILING + ":")
            else:
                value = token.rstrip(_TRAILING + ":")
            if len(value) >= 4 and (quoted is not None or _names_a_secret(value, pack)):
                out.add(value)
    return frozenset(out)


def _names_a_secret(value: str, pack: LanguagePack) -> bool:
    """Whether a declared value not in quotation marks is a secret rather than words about one: one with a digit,
    a sign or a capital always; words of plain letters when one of them may be a secret's (:func:`_may_be_secret`:
    "the password is wrong", "my passphrase is not working" declare none)."""
    words = value.split()
    if len(words) == 1 and compiled(_SECRET_LIKE).search(value):
        return True
    classes = _word_classes(pack)
    return any(_may_be_secret(w.casefold(), pack, classes) for w in words)


@cache
def _word_classes(pack: LanguagePack) -> Mapping[str, frozenset[str]]:
    """The pack's words and their classes, built once per pack (not per declared value)."""
    return pack.word_classes()


def _may_be_secret(word: str, pack: LanguagePack, classes: Mapping[str, frozenset[str]]) -> bool:
    """Whether a word may be (part of) a secret: any with a digit, a sign or a capital; one of plain letters that
    says nothing about a secret: no state of one (the pack's ``[secrets]``: "wrong", "expired"), no word of the
    language's other classes (an adjective, "please", "here"), no adverb in -ly, no verb's inflected form
    ("changed"). A noun ("monkey") or a word no table knows ("hunterhunter", "staple") may be."""
    if compiled(_SECRET_LIKE).search(word):
        return True
    if word in pack.secret_states or word.endswith("ly") or not classes.get(word, _SECRET_CLASSES) <= _SECRET_CLASSES:
        return False
    return all(lemma == word for lemma in pack.verb_lemmas(word))


def _secrets_of(messages: Iterable[Message], key: Hashable) -> frozenset[str]:
    """The secrets of ``messages``; ``key``: the fact's, ``(user id, pack)`` (:func:`users_secrets`)."""
    user_id, pack = cast("tuple[object, LanguagePack]", key)
    uid = user_id if isinstance(user_id, str) else None
    said = [m for m in messages if m.content]
    reads = [m.content[:_READ] for m in said]
    joined = "\x00".join(reads)  # a literal absent from it is absent from every message: one search for all
    shapes = _shapes_in(joined)
    assigning = _may_hold(joined, _ASSIGNED_MARKS)
    out = set(declared_secrets((m.content for m in said if is_users(m, uid)), pack))
    for read in reads:
        if assigning:
            out.update(_assigned(read))  # a .env read, a config pasted: whoever showed it
        out.update(match.group(0) for shape, _ in _shapes_in(read, shapes) for match in shape.finditer(read))
    return frozenset(out)


def _users_secrets(transcript: Transcript, key: Hashable) -> frozenset[str]:
    return _secrets_of(transcript.messages, key)


def _more_secrets(found: frozenset[str], longer: Transcript, start: int, key: Hashable) -> frozenset[str]:
    return found | _secrets_of(longer.messages[start:], key)


USERS_SECRETS: Fact[frozenset[str]] = Fact("the secrets of the conversation", _users_secrets, _more_secrets)


def users_secrets(
    transcript: Transcript, user_id: str | None = None, pack: LanguagePack | None = None
) -> frozenset[str]:
    """The strings the conversation shows are the user's secrets: those the user's own messages declare (in
    ``pack``'s words, English by default), and every value assigned to a secret's name in any message
    (``DB_PASSWORD=…`` in a file the agent read). Found again in an argument in any form, they count as secrets
    (computed once per transcript, user and language)."""
    return transcript.fact(USERS_SECRETS, (user_id, pack or english()))


_READ = 200_000
"""Characters of a message read for assigned secrets."""


def _assigned(text: str) -> Iterator[str]:
    if not _may_hold(text, _ASSIGNED_MARKS):
        return
    for m in compiled(_ASSIGNED).finditer(text):
        head = compiled(_NAME_TAIL).search(text, max(0, m.start() - _NAME_BACK), m.start())
        name = (head.group(0) if head else "") + m.group(1) + m.group(2)
        value = m.group(3).rstrip(_TRAILING)
        if len(value) >= 4 and not compiled(_NOT_SECRET_NAMES).search(name):
            yield value
