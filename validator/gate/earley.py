"""Lark's Earley parser of the grammar: built, run on a sentence's tokens, and its tree turned into the grammar's own
(:mod:`validator.gate.tree`). The one module of the gate that imports Lark: :class:`~validator.gate.grammar.Grammar`
imports it the first time a shape is parsed that no store holds.

The lexer gives each token every class it has (:mod:`validator.text.lexer`); Lark's lexer does not run, and a
token matches a terminal when the terminal's name is one of its classes. Every complete parse is kept
(``ambiguity="explicit"``: a shared tree with ``_ambig`` nodes where parses differ).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import lark
from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedInput
from lark.lexer import Lexer

from validator.gate.compiled import compiled
from validator.gate.tree import Leaf, Node, Parsed
from validator.text.lexer import Word

__all__ = ["VERSION", "build", "literals", "parse"]

VERSION = lark.__version__
"""Lark's version (what a kept parse depends on)."""


class _Tok(Token):
    """A token carrying its word's place in the sentence and the word's classes (what a terminal matches)."""

    __slots__ = ("classes", "position")

    position: int
    classes: frozenset[str]


class _Given(Lexer):
    """The tokens, as the lexer made them: Lark's own lexer does not run."""

    def __init__(self, conf: Any) -> None:
        pass

    def lex(self, data: Any) -> Iterator[Any]:  # type: ignore[override]  # Lark passes a custom lexer the input
        yield from data


_OPTIONS: dict[str, Any] = {"parser": "earley", "lexer": _Given, "ambiguity": "explicit", "keep_all_tokens": True}
"""How the grammar is read: Earley with every parse kept, on the lexer's own tokens."""


def _matches(term: Any, token: Any) -> bool:
    return bool(term.name in token.classes)


def build(text: str) -> tuple[Lark, bool]:
    """The parser of the grammar ``text``, and whether it was built from the grammar compiled ahead
    (:mod:`validator.gate.compiled`; else ``text`` is compiled)."""
    ahead = compiled(text)
    parser: Lark | None = None
    if ahead is not None:
        try:
            parser = Lark(ahead, **_OPTIONS)
        except LarkError:  # what was shipped does not build: the text is compiled
            parser = None
    built = parser if parser is not None else Lark(text, **_OPTIONS)
    # A token may have several classes ("email": a verb and a noun): Earley tries each. Lark's basic matcher
    # compares one type; this one asks the token's classes (the parser's documented matcher seam).
    built.parser.parser.term_matcher = _matches
    return built, parser is not None


def literals(parser: Lark) -> tuple[tuple[str, str], ...]:
    """The grammar's literal words ("to", "please") with their terminals' names."""
    return tuple(sorted((t.pattern.value, t.name) for t in parser.terminals if t.pattern.type == "str"))


def parse(parser: Lark, words: Sequence[Word]) -> Parsed | None:
    """The parse tree of the words' classes, or None and the index of the token the parse stopped at; None for
    a failure of the grammar itself (no parse, never a crash)."""
    tokens = []
    for i, word in enumerate(words):
        token = _Tok("W", word.text)
        token.position = i
        token.classes = word.classes
        tokens.append(token)
    try:
        tree = parser.parse(tokens)
    except UnexpectedInput as exc:
        at = getattr(exc, "token", None)
        return None, (at.position if isinstance(at, _Tok) else None)
    except LarkError:  # pragma: no cover - a grammar bug
        return None
    return _own(tree, {}), None


def _own(item: Any, made: dict[int, Node]) -> Any:
    """Lark's ``item`` as the grammar's tree: a node met twice made once (the parses share it)."""
    if item is None:
        return None
    if isinstance(item, _Tok):
        return Leaf(str(item.type), item.position)
    found = made.get(id(item))
    if found is None:
        data = item.data
        found = Node(str(getattr(data, "value", data)), [_own(child, made) for child in item.children])
        made[id(item)] = found
    return found
