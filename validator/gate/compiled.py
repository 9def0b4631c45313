"""The request grammar compiled ahead: what Lark makes of the pack's grammar file before it builds a parser,
shipped as data so that no process compiles it again.

Lark turns a grammar file into terminals and rules on every start (about 70 ms for ``english.lark``: it parses
the file with its own grammar, then expands the EBNF); it keeps that work only for its LALR parser, as a pickle
in the shared temporary folder. Here it is JSON beside the grammar (``english_grammar.json``), built by
``python -m validator.devtools.grammar`` (``make grammar``) and keyed by the grammar text's SHA-256 and Lark's
version, with the SHA-256 of its own contents: a pack whose grammar differs, a Lark of another version, or a file
cut short or edited compiles as before. JSON and never a pickle: reading it runs no code. A test holds the
shipped file to a fresh compile of the shipped grammar.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import lark
from lark.grammar import Rule
from lark.lexer import TerminalDef
from lark.load_grammar import Grammar as LarkGrammar
from lark.load_grammar import load_grammar

from validator.language import shipped_text

__all__ = ["FILE", "START", "compile_grammar", "compiled", "dump", "written"]

FILE = "english_grammar.json"
"""The compiled grammar shipped beside the grammar file, in :mod:`validator.language`."""
START = ("start",)
"""The grammar's start rule (Lark's default), the one symbol it is compiled for."""
_FORMAT = 1

Compiled = tuple[list[TerminalDef], list[Rule], list[str]]


def compile_grammar(text: str) -> Compiled:
    """The terminals, rules and ignored terminals Lark compiles ``text`` into, as :class:`Grammar
    <validator.gate.grammar.Grammar>` builds it (every token kept in the tree)."""
    grammar, _ = load_grammar(text, "<string>", None, True)  # type: ignore[no-untyped-call]  # Lark leaves it untyped
    terminals, rules, ignore = grammar.compile(list(START), set())
    return list(terminals), list(rules), list(ignore)


def _key(text: str) -> str:
    """The SHA-256 of ``text`` (the grammar's, or the file's lines after its head)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def written(head: dict[str, Any], ignore: Any, terminals: Sequence[Any], rules: Sequence[Any]) -> str:
    """The file as :func:`dump` writes it: its head on the first line, the SHA-256 of every line after it (a file
    cut short or edited is not read, checked without serializing anything again), then one line a rule."""
    lines = [f'"ignore": {json.dumps(ignore)}, "terminals": [']
    lines += [json.dumps(t) + "," for t in terminals]
    lines += ['], "rules": [']
    lines += [json.dumps(r) + "," for r in rules]
    lines += ["]}"]
    body = "\n".join(lines).replace(",\n]", "\n]") + "\n"
    return json.dumps({**head, "body": _key(body)})[:-1] + ",\n" + body


def dump(text: str) -> str:
    """The compiled form of the grammar ``text`` as the shipped file holds it (JSON, one line a rule)."""
    terminals, rules, ignore = compile_grammar(text)
    head = {"format": _FORMAT, "sha256": _key(text), "lark": lark.__version__}
    return written(head, ignore, [t.serialize() for t in terminals], [r.serialize() for r in rules])


def _terminal(data: dict[str, Any]) -> TerminalDef:
    terminal = TerminalDef.deserialize(data, {})
    terminal.pattern.flags = frozenset(terminal.pattern.flags)  # JSON has lists; Lark hashes a pattern's flags
    return terminal


def _rule(data: dict[str, Any]) -> Rule:
    rule = Rule.deserialize(data, {})
    rule.options.empty_indices = tuple(rule.options.empty_indices)
    return rule


class _Ahead(LarkGrammar):
    """A grammar Lark takes in place of a file's text, whose compile is the shipped one: for one Lark, which owns
    the rules it is given."""

    def __init__(self, ahead: Compiled) -> None:
        super().__init__([], [], [])
        self._ahead = ahead

    def compile(self, start: Sequence[str], terminals_to_keep: Any) -> Compiled:
        if tuple(start) != START or terminals_to_keep:  # pragma: no cover - Grammar asks for nothing else
            raise ValueError(f"the grammar was compiled for {START}, every terminal dropped; asked {start}")
        return self._ahead


def compiled(text: str, shipped: str | None = None) -> LarkGrammar | None:
    """The shipped compile of the grammar ``text``, for one Lark (``shipped``: the file's contents, by default the
    one beside the English grammar), or None when it is of another grammar, format or Lark version, or
    unreadable: then Lark compiles ``text`` itself."""
    try:
        if shipped is None:
            shipped = shipped_text(FILE)
        data = json.loads(shipped)
        if (data["format"], data["sha256"], data["lark"]) != (_FORMAT, _key(text), lark.__version__):
            return None
        if data["body"] != _key(shipped.partition("\n")[2]):
            return None  # cut short or edited since it was written
        terminals = [_terminal(t) for t in data["terminals"]]
        rules = [_rule(r) for r in data["rules"]]
        ignore = data["ignore"]
        if not isinstance(ignore, list) or not all(isinstance(i, str) for i in ignore):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):  # compile afresh
        return None
    if not rules or not terminals:
        return None
    return _Ahead((terminals, rules, ignore))
