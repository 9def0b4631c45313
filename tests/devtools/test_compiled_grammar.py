"""The request grammar ships compiled (validator.gate.compiled): the shipped file is a fresh compile of the
shipped grammar, a process reads it instead of compiling, and what it parses is what the grammar's text parses."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from importlib import resources
from pathlib import Path

import pytest

from validator.gate.compiled import FILE, START, compile_grammar, compiled, dump, written
from validator.gate.grammar import Grammar, grammar
from validator.language import english

ROOT = Path(__file__).resolve().parents[2]


def _shipped() -> str:
    return resources.files("validator.language").joinpath(FILE).read_text(encoding="utf-8")


def test_the_shipped_file_is_a_fresh_compile_of_the_shipped_grammar() -> None:
    assert _shipped() == dump(english().grammar), "run `make grammar` after editing english.lark or upgrading Lark"


def test_the_pack_grammar_is_read_compiled_and_another_grammar_is_compiled_afresh() -> None:
    assert grammar().precompiled
    other = replace(english(), grammar=english().grammar + "\n// another grammar\n")
    assert not Grammar(other).precompiled


def _edited(**changes: object) -> str:
    """The shipped file with ``changes``, written whole as the builder writes it: its body's key holds, so each case
    is refused for the change it makes."""
    data = {**json.loads(_shipped()), **changes}
    head = {k: data[k] for k in ("format", "sha256", "lark")}
    return written(head, data["ignore"], data["terminals"], data["rules"])


def _cut(text: str) -> str:
    """``text`` without its next-to-last rule's line, still JSON: the body no longer what its key says."""
    lines = text.splitlines(keepends=True)
    return "".join([*lines[:-3], lines[-2], lines[-1]])


@pytest.mark.parametrize(
    "shipped",
    [
        "",
        "not json",
        "[]",
        "{}",
        '{"format": 1}',
        "[" * 100_000,  # nested past the recursion limit
        _edited(sha256="0" * 64),  # another grammar's
        _edited(lark="0.0"),  # another Lark's
        _edited(format=2),  # another format
        _cut(_shipped()),  # cut short: its body's key no longer holds
        _shipped().replace('"priority": 0', '"priority": 1', 1),  # edited
        _edited(rules=[], terminals=[]),  # nothing to build a parser from
    ],
)
def test_a_file_of_another_grammar_lark_or_format_or_cut_short_is_never_read(shipped: str) -> None:
    assert compiled(english().grammar, shipped) is None


def test_a_file_whose_entries_are_broken_is_never_read() -> None:
    for broken in (_edited(rules=[{"origin": 1}]), _edited(terminals=[None]), _edited(ignore="abc")):
        assert compiled(english().grammar, broken) is None
    assert compiled(english().grammar, _edited()) is not None  # the helper writes what the builder writes


def test_what_is_read_is_what_lark_compiles_types_and_all() -> None:
    """Each terminal and rule as Lark compiles the text, field by field, with the types Lark gives them (a pattern's
    flags a frozenset, a rule's empty indices a tuple: JSON holds lists)."""
    ahead = compiled(english().grammar)
    assert ahead is not None
    terminals, rules, ignore = ahead.compile(list(START), set())
    fresh_terminals, fresh_rules, fresh_ignore = compile_grammar(english().grammar)
    assert ignore == list(fresh_ignore)
    assert [t.serialize() for t in terminals] == [t.serialize() for t in fresh_terminals]
    assert [r.serialize() for r in rules] == [r.serialize() for r in fresh_rules]
    for mine, theirs in zip(terminals, fresh_terminals, strict=True):
        assert (mine.name, mine.priority, type(mine.pattern)) == (theirs.name, theirs.priority, type(theirs.pattern))
        assert type(mine.pattern.flags) is type(theirs.pattern.flags) and hash(mine.pattern) == hash(theirs.pattern)
    for mine_rule, their_rule in zip(rules, fresh_rules, strict=True):
        assert mine_rule == their_rule and hash(mine_rule) == hash(their_rule)
        assert mine_rule.expansion == their_rule.expansion and mine_rule.alias == their_rule.alias
        assert type(mine_rule.options.empty_indices) is type(their_rule.options.empty_indices)
        assert mine_rule.options.serialize() == their_rule.options.serialize()


def test_the_compiled_grammar_parses_every_sentence_as_the_grammars_text_does() -> None:
    fresh = Grammar(replace(english(), grammar=english().grammar + "\n// compiled afresh\n"))
    ahead = Grammar(english())
    assert ahead.precompiled and not fresh.precompiled
    assert ahead.literals == fresh.literals
    sentences = []
    for name in ("everyday.jsonl", "everyday_holdout.jsonl", "everyday_holdout2.jsonl"):
        for line in (ROOT / "bench" / name).read_text(encoding="utf-8").splitlines():
            sentences += json.loads(line)["text"].replace("? ", "?\n").replace(". ", ".\n").splitlines()
    assert len(sentences) > 150
    parsed = 0
    for sentence in sentences:
        a, b = ahead.parse(sentence), fresh.parse(sentence)
        assert a == b, sentence
        parsed += not a.problem
    assert parsed > 50  # complete parses among them, not only sentences stopped before the parser


@pytest.mark.parametrize("pack", ["english()", "replace(english(), grammar=english().grammar + '//')"])
def test_a_process_builds_the_grammar_without_compiling_it(pack: str) -> None:
    probe = (
        "from dataclasses import replace\n"
        "import lark.lark\n"
        "def refuse(*a, **k):\n    raise SystemExit('compiled at run time')\n"
        "lark.lark.load_grammar = refuse\n"  # the name Lark's constructor compiles a grammar's text with
        "from validator.gate.grammar import Grammar\n"
        "from validator.language import english\n"
        f"g = Grammar({pack})\n"
        "assert g.precompiled and not g.parse('Pay Bob 50 EUR.').problem\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    if pack == "english()":
        assert done.returncode == 0, done.stderr
    else:  # the control: a grammar of no shipped file is compiled, here refused
        assert "compiled at run time" in done.stderr
