"""Options: the arguments that say *how* a call acts (a flag, a mode, a scope, an attachment, a list of invitees).

Every argument of a guarded call is a target (grounded: :mod:`validator.gate.grounding`), content (the agent's
wording: :func:`validator.gate.checks._content_findings`) or an option. An option's value must be the tool's
declared default (``ToolPolicy.options``) or stand in the user's request for it; anything else is *widened*
(``permanently_delete=true`` after "Archive thread t-88"; an attachment nobody named; ``include_history``,
``invite_all``): unknown, so asked by the strict judge, decided by a model judge on a general tool knowing the
finding, and asked on a dangerous one.

What "stands in the request" means is closed and read in the proved clauses only:

- a flag switched on (``true``): every word of the option's name (``permanently_delete``: *permanently*,
  *delete*; words such as *is*, *enable*, *flag* aside) is a word of the clause, and the request holds no
  negation ("Delete t-88, but not permanently" proves nothing);
- a flag switched off (``false`` where the default is ``true``): the same words, under a negation ("don't notify
  anyone" for ``notify=false``);
- any other value (a mode, a scope, an attachment's name): the value itself, compared as the gate compares any
  value (:func:`~validator.gate.grounding.ground_value`), or every word of it standing in the clause with no
  negation ("attach the Q3 report" for ``Q3_report.pdf``: *q3*, *report*; the extension aside).

A general tool's argument the policy does not classify is read too when it is a flag switched on: the tool's
default is not declared, so a ``true`` the request does not name is widened as well. A dangerous tool's
unclassified arguments are each the agent's choice unless the request holds them (``_chosen`` in
:mod:`validator.gate.checks`); its declared options are read here instead, so their defaults ask nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from validator.findings import RequestSentence, ValueFinding
from validator.language import LanguagePack
from validator.language.lexicon import tool_words
from validator.text.paths import entries, lookup, scalar_leaves

__all__ = ["WIDENED_NOTE", "option_findings", "unclassified"]

WIDENED_NOTE = "not the tool's default ({default}), and the user's request does not ask for it"
UNDECLARED_NOTE = "a flag the policy declares no default for, switched on, and the user's request does not name it"

_NAME_FILLERS = frozenset(
    {"is", "are", "has", "have", "do", "does", "should", "the", "a", "an", "to", "of", "by", "for", "with", "flag"}
    | {"enable", "enabled", "use", "opt", "set", "mode"}
)
"""Words of an option's name that say it is a flag, not what it does (``is_private``, ``enable_sharing``)."""
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_WORD = re.compile(r"[^\W_]+")
MAX_OPTION_WORDS = 12
"""An option value of more words than this is no mode or name: it is compared as a value only."""

Ground = Callable[..., ValueFinding]


def option_findings(
    args: Mapping[str, Any],
    options: Mapping[str, Any],
    requests: Sequence[RequestSentence],
    ground: Ground,
    pack: LanguagePack,
) -> Iterator[ValueFinding]:
    """A finding for each declared option whose value is neither its default nor asked for (``pack``: the language
    of the request)."""
    said = _said(requests, pack)
    for name, default in options.items():
        found, value = lookup(args, name)
        if found == "found" and value is not None and not _same(value, default):
            yield from _read(name, value, default, said, ground)
        key = name.rsplit(".", 1)[-1]
        for path, _, nested in (e for e in entries(args) if e[1] == key):  # the same option inside an object
            if path != name and nested is not None and not _same(nested, default):
                yield from _read(path, nested, default, said, ground)


def unclassified(
    args: Mapping[str, Any], classified: Sequence[str], requests: Sequence[RequestSentence], pack: LanguagePack
) -> Iterator[ValueFinding]:
    """A general tool's arguments the policy does not classify, at any depth, that widen what the call does while
    the request names none of them: a flag switched on (``true``, or ``"true"`` / ``"yes"`` / ``"on"``), and a
    file path (an attachment under any name: ``"/etc/passwd"``, ``"~/.ssh/id_rsa"``, ``"../notes"``)."""
    said = _said(requests, pack)
    for path, value in scalar_leaves(args):
        top = path.split(".", 1)[0].split("[", 1)[0]
        if top == "justification" or top in classified or path in classified:
            continue
        name = re.split(r"[.\[]", path)[-1].rstrip("]") or top
        if _switched_on(value):
            if not _flag_asked(name if not name.isdigit() else top, True, said):
                yield ValueFinding(path, value, "widened", "option", note=UNDECLARED_NOTE)
        elif isinstance(value, str) and _PATH.match(value.strip()) and value.strip().casefold() not in said.text:
            yield ValueFinding(path, value, "widened", "option", note=PATH_NOTE)


_ON = frozenset({"true", "yes", "on"})
_PATH = re.compile(r"(?:~|\.{1,2})?/[^\s]*|[A-Za-z]:\\\S*|\.{1,2}\\\S*")
"""A file path: absolute, from home, relative with ``./`` or ``../``, or a Windows drive's."""
PATH_NOTE = "a file path the policy does not classify, and the user's request does not name it"


def _switched_on(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().casefold() in _ON)


class _Said:
    """The words of the proved clauses, stemmed, and whether a negation stands among them."""

    __slots__ = ("negated", "stems", "text", "words")

    def __init__(
        self, stems: frozenset[str], negated: bool, text: str = "", words: frozenset[str] = frozenset()
    ) -> None:
        self.stems = stems
        self.words = words
        self.negated = negated
        self.text = text
        """The proved clauses' words, case-folded, whole (a path the user wrote stands in it verbatim)."""


def _said(requests: Sequence[RequestSentence], pack: LanguagePack) -> _Said:
    negatives = pack.negatives
    words = [w.casefold() for r in requests for w in re.findall(r"[^\W_]+(?:'[a-z]+)?", r.valued())]
    text = " ".join(r.valued() for r in requests).casefold()
    return _Said(frozenset(_stem(w) for w in words), any(w in negatives for w in words), text, frozenset(words))


def _holds(word: str, said: _Said) -> bool:
    """Whether the proved clauses hold ``word``: itself, or a form of it whose stem has four letters or more (a
    shorter one says too little: "notes" is no form of "not")."""
    stem = _stem(word)
    return word.casefold() in said.words or (len(stem) >= _STEM_MIN and stem in said.stems)


_STEM_MIN = 4


def _read(name: str, value: Any, default: Any, said: _Said, ground: Ground) -> Iterator[ValueFinding]:
    note = WIDENED_NOTE.format(default=_shown(default))
    if isinstance(value, bool):
        if not _flag_asked(name, value, said):
            yield ValueFinding(name, value, "widened", "option", note=note)
        return
    if isinstance(value, Mapping):
        base = default if isinstance(default, Mapping) else {}
        for key, item in value.items():
            if key not in base or not _same(item, base[key]):
                yield from _read(f"{name}.{key}", item, base.get(key), said, ground)
        return
    if isinstance(value, list | tuple):
        base_items = list(default) if isinstance(default, list | tuple) else []
        for i, item in enumerate(value):
            if not any(_same(item, d) for d in base_items):
                yield from _element(f"{name}[{i}]", item, note, said, ground)
        return
    yield from _element(name, value, note, said, ground)


def _element(path: str, value: Any, note: str, said: _Said, ground: Ground) -> Iterator[ValueFinding]:
    if isinstance(value, Mapping | list | tuple):
        yield from _read(path, value, None, said, ground)
        return
    if isinstance(value, bool):
        if not _flag_asked(path.split(".")[-1].split("[")[0], value, said):
            yield ValueFinding(path, value, "widened", "option", note=note)
        return
    finding = ground(path, value, kind="option", target=False)
    if finding.status == "user" or (isinstance(value, str) and _words_asked(value, said)):
        return
    yield ValueFinding(path, value, "widened", "option", note=note)


def _flag_asked(name: str, value: bool, said: _Said) -> bool:
    words = [w for w in tool_words(name) if w not in _NAME_FILLERS]
    if not words or not all(_holds(w, said) for w in words):
        return False
    return said.negated is not value  # on: no negation in the request; off: under one


_PLAIN_NAME = re.compile(r"[\w .,()'-]+")
"""A name as a person writes it: no path separator, no wildcard (``../../notes``, ``*notes*`` name nothing)."""


def _words_asked(value: str, said: _Said) -> bool:
    if not _PLAIN_NAME.fullmatch(value.strip()):
        return False
    words = [w.casefold() for w in _WORD.findall(_EXTENSION.sub("", value.strip()))]
    if not words or len(words) > MAX_OPTION_WORDS or said.negated:
        return False
    return all(_holds(w, said) for w in words)


@lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    """One closed ending off (``including`` → ``includ``, ``deletes`` → ``delet``, ``permanently`` →
    ``permanent``), then a final ``e``: the forms of one word compare equal."""
    w = word.casefold()
    for ending in ("ing", "ed", "es", "ly", "s"):
        if w.endswith(ending) and len(w) - len(ending) >= 3:
            w = w[: -len(ending)]
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: ``1`` and ``True`` differ, ``1`` and ``1.0`` do not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "not given"
    return repr(value)
