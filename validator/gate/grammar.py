"""The request grammar, read by Lark's Earley parser: a sentence's complete parses, and what each means.

The grammar is a file of the language pack (``validator/language/english.lark``), the lexer gives each
token every class it has (:mod:`validator.text.lexer`), and Lark's Earley parser finds every complete parse
of the tokens (``ambiguity="explicit"``: a shared tree with ``_ambig`` nodes where parses differ). Each parse
is then read into a :class:`Reading`: the sentence's kind (a request, a negated request, a social sentence, a
fragment, a list's lead-in), its frame, each action's verb, objects and phrases, with every value in its
place. A rule the parse uses whose phrase the pack's tables do not license (a phrase "by the client" where
a deadline is read) is dropped from the readings.

A sentence gets no reading when a token has no class, when no complete parse exists, when it has more
tokens than :data:`MAX_TOKENS` (its words are split no further: a megabyte without a sentence end costs one
pass over its values, not a million tokens), or when its parses mean more than
:data:`MAX_READINGS` different things: then it is unknown, and the caller says why (:class:`Parse`). Whether the
readings agree on what a check reads is the reader's business (:mod:`validator.gate.reader`), per tool.

Cost: Earley is cubic in the worst case and, in Python, about a millisecond a token for this grammar. A
sentence is parsed once per shape: the tree of a class sequence is kept (:class:`Grammar`'s cache, and on disk
for the processes after this one: :mod:`validator.gate.shapes`) and read again with another sentence's words, so
"Pay Eve 50 EUR." and "Pay Bob 900 USD." share one parse. Lark's parser is built only for a shape no one parsed.
"""

from __future__ import annotations

import hashlib
import secrets
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from msgspec import structs

from validator._types import VERSION
from validator.gate.meaning import Parse, Reading
from validator.gate.semantics import Semantics, TooAmbiguous
from validator.gate.shapes import Shape, ShapeStore
from validator.gate.tree import Parsed
from validator.language import LanguagePack, english
from validator.language.classes import ASK, END, KNOW, MARKER, REPORTING, SAY, SAYING, TEXT
from validator.text.lexer import Word, lex, lex_bounded

if TYPE_CHECKING:
    from lark import Lark

__all__ = ["MAX_TOKENS", "Grammar", "grammar"]

MAX_TOKENS = 80
"""A sentence of more tokens is not parsed: unknown at once (the parse is cubic in the worst case)."""

_CACHE = 4096
"""Parse trees kept, by the sentence's shape; and sentences' words and parses kept, by the sentence."""
_MEMO_CHARS = 4_000
"""A text this long or longer is lexed and parsed each time it is read, never kept (a memo of sentences, not of
documents: its memory stays within :data:`_CACHE` times this)."""

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Recent(Generic[K, V]):
    """The last ``size`` values computed, by key; safe to share between threads."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, compute: Callable[[], V]) -> V:
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        value = compute()  # outside the lock: two threads may compute one value, never wait on each other
        with self._lock:
            self._kept[key] = value
            if len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return value


class Grammar:
    """The pack's grammar, compiled once, with the parse trees of the shapes it has seen; ``shapes``: where the
    parses of shapes are kept across processes (:mod:`validator.gate.shapes`; None: in memory only). Lark's
    parser is built the first time a shape is parsed that no store holds."""

    def __init__(self, pack: LanguagePack, shapes: ShapeStore | None = None) -> None:
        self.pack = pack
        self.shapes = shapes
        self._parser: tuple[Lark, bool] | None = None
        self._building = threading.Lock()
        kept = shapes.literals() if shapes is not None else None
        self.literals = kept if kept is not None else self._literals()
        """The grammar's literal words ("to", "please") with their terminals' names, which the lexer classes."""
        self._trees: _Recent[Shape, Parsed] = _Recent(_CACHE)
        self._words: _Recent[tuple[str, str | None, frozenset[str]], tuple[Word, ...]] = _Recent(_CACHE)
        self._parses: _Recent[tuple[str, str | None, frozenset[str], frozenset[str]], Parse] = _Recent(_CACHE)

    @property
    def lark(self) -> Lark:
        """Lark's Earley parser of the grammar, built at first use."""
        return self._built()[0]

    @property
    def precompiled(self) -> bool:
        """Whether the parser was built from the grammar compiled ahead (:mod:`validator.gate.compiled`)."""
        return self._built()[1]

    def _built(self) -> tuple[Lark, bool]:
        with self._building:
            if self._parser is None:
                from validator.gate import earley  # Lark, imported only to parse a shape no store holds

                self._parser = earley.build(self.pack.grammar)
            return self._parser

    def _literals(self) -> tuple[tuple[str, str], ...]:
        from validator.gate import earley

        found = earley.literals(self.lark)
        if self.shapes is not None:
            self.shapes.keep_literals(found)
        return found

    def words(
        self, sentence: str, *, original: str | None = None, verbs: frozenset[str] = frozenset()
    ) -> tuple[Word, ...]:
        """The tokens of ``sentence`` (:func:`~validator.text.lexer.lex`); a sentence read again (each check of
        a conversation reads its user's sentences) is lexed once."""
        if len(sentence) >= _MEMO_CHARS:
            return self._lexed(sentence, original, verbs)
        return self._words.get((sentence, original, verbs), lambda: self._lexed(sentence, original, verbs))

    def _lexed(self, sentence: str, original: str | None, verbs: frozenset[str]) -> tuple[Word, ...]:
        return lex(sentence, original=original, verbs=verbs, literals=self.literals, pack=self.pack)

    def parse(
        self,
        sentence: str,
        *,
        original: str | None = None,
        verbs: frozenset[str] = frozenset(),
        phrasal: frozenset[str] = frozenset(),
    ) -> Parse:
        """Every reading of ``sentence`` (see the module docstring). ``verbs``: words read as verbs beyond the
        verb table; ``phrasal``: phrasal verbs read besides the pack's ("log in" of a policy's intents). A
        sentence read again is parsed once (a :class:`Parse` is immutable)."""
        if len(sentence) >= _MEMO_CHARS:
            return self._parsed(sentence, original, verbs, phrasal)
        key = (sentence, original, verbs, phrasal)
        return self._parses.get(key, lambda: self._parsed(sentence, original, verbs, phrasal))

    def _parsed(self, sentence: str, original: str | None, verbs: frozenset[str], phrasal: frozenset[str]) -> Parse:
        words, cut = lex_bounded(
            sentence, original=original, verbs=verbs, literals=self.literals, pack=self.pack, limit=MAX_TOKENS
        )
        marker = next(
            (i for i, w in enumerate(words) if w.classes & {MARKER, REPORTING, SAY, SAYING, ASK, KNOW}),
            None,
        )
        if marker is not None:  # free text may open here: every later token may be text, but a last "."
            last = len(words) - 1
            words = tuple(
                structs.replace(w, classes=w.classes | {TEXT})
                if i > marker and not (i == last and END in w.classes)
                else w
                for i, w in enumerate(words)
            )
        unknown = next((w for w in words if not w.classes), None)
        if unknown is not None:
            return Parse(words, frozenset(), "unknown_word", unknown.text)
        if cut:  # split no further than the limit: too long, whatever the count of the first words
            return Parse(words, frozenset(), "too_long", f"more than {MAX_TOKENS} tokens")
        if len(words) > MAX_TOKENS:
            return Parse(words, frozenset(), "too_long", f"{len(words)} tokens")
        tree, stuck = self._trees.get(tuple(w.classes for w in words), lambda: self._tree(words))
        if tree is None:  # where the parse stopped: this sentence's word there
            return Parse(words, frozenset(), "no_parse", words[stuck].text if stuck is not None else "(the end)")
        try:
            readings = frozenset(r for r in Semantics(words, self.pack, phrasal).values(tree) if isinstance(r, Reading))
        except TooAmbiguous as exc:
            return Parse(words, frozenset(), "ambiguous", f"{exc} has too many readings")
        if not readings:  # every parse put a phrase where its preposition does not take its noun
            return Parse(words, frozenset(), "no_parse", "a phrase whose noun its preposition does not take")
        return Parse(words, readings)

    def _tree(self, words: Sequence[Word]) -> Parsed:
        """The parse tree of the words' classes, or None and the index of the token the parse stopped at: as kept
        by the store, else parsed (and kept)."""
        shape = tuple(w.classes for w in words)
        if self.shapes is not None:
            kept = self.shapes.parsed(shape)
            if kept is not None:
                return kept
        from validator.gate import earley

        parsed = earley.parse(self.lark, words)
        if parsed is None:  # pragma: no cover - a grammar bug: no parse, never a crash (and nothing kept)
            return None, None
        if self.shapes is not None:
            self.shapes.keep(shape, parsed)
        return parsed


def grammar(pack: LanguagePack | None = None) -> Grammar:
    """The compiled grammar of ``pack`` (English by default), built once a pack."""
    return _grammar(pack or english())


@cache
def _grammar(pack: LanguagePack) -> Grammar:
    return Grammar(pack, ShapeStore.default(_salt(pack)))


def _salt(pack: LanguagePack) -> str:
    """What a shape's parse depends on besides the shape: the grammar's text, Lark's version (:func:`_lark`), and the
    code that parses and keeps it (:func:`_code`), by the SHA-256 of their source (a change of either, released or
    not, reads no tree kept before it)."""
    return "\n".join((_sha256(pack.grammar.encode("utf-8")), _lark(), VERSION, _code()))


@cache
def _lark() -> str:
    """Lark's version, read without importing Lark (a process whose shapes are kept never does): the SHA-256 of its
    package's ``__init__.py``, which states it; Lark's own ``__version__`` when that file cannot be read."""
    spec = find_spec("lark")
    try:
        return _sha256(Path(spec.origin if spec is not None and spec.origin else "").read_bytes())
    except OSError:
        from validator.gate import earley

        return earley.VERSION


@cache
def _code() -> str:
    """The SHA-256 of the code a kept tree depends on: this module, the parser's (its options, its token matcher, the
    grammar compiled ahead it is built from), the tree's and the store's (their encoding)."""
    here = sys.modules[__name__].__file__
    try:
        if here is None:
            raise OSError("no source")
        return _sha256(b"".join((Path(here).parent / f"{name}.py").read_bytes() for name in _CODE))
    except OSError:  # no source shipped: no tree is kept across processes
        return secrets.token_hex(16)


_CODE = ("grammar", "earley", "compiled", "tree", "shapes")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
