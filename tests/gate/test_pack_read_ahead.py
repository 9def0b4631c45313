"""The English pack's tables ship read ahead (validator.language.READ_AHEAD): the shipped file is a fresh read of the
shipped english.toml, the pack read from it is the pack read from the TOML, and a file of another text, cut short,
edited or of another format is never read (issue 61: a one-shot process reads the TOML in about ten milliseconds)."""

from __future__ import annotations

import json
import tomllib
from dataclasses import fields
from importlib import resources
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.language import (
    APOSTROPHES,
    OUTSIDE_THE_GRAMMAR,
    READ_AHEAD,
    LanguagePack,
    _loaded,
    _read_ahead,
    _words_of,
    english,
    fold_apostrophes,
    load_pack,
    phrase,
    read_ahead,
    shipped_text,
)


def _toml() -> str:
    return resources.files("validator.language").joinpath("english.toml").read_text(encoding="utf-8")


def _shipped() -> str:
    return resources.files("validator.language").joinpath(READ_AHEAD).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["english.toml", "english.lark", READ_AHEAD, "english_verbs.txt"])
def test_a_shipped_file_reads_from_the_folder_as_through_the_resources(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``shipped_text`` reads the pack's files from its folder (no :mod:`importlib.resources` in a process that
    never needs it); where the package is no folder (a zipped install) it reads them through the resources."""
    through = resources.files("validator.language").joinpath(name).read_text(encoding="utf-8")
    assert shipped_text(name) == through
    import validator.language as language

    monkeypatch.setattr(language, "__file__", "/no/such/folder/validator/language/__init__.py")
    assert shipped_text(name) == through
    with pytest.raises(OSError):
        shipped_text("no-such-file.toml")


def test_the_shipped_file_is_a_fresh_read_of_the_shipped_toml() -> None:
    assert _shipped() == read_ahead(_toml()), "run `make grammar` after editing english.toml"


def test_what_is_read_ahead_is_what_tomllib_reads_types_and_all() -> None:
    data = _read_ahead(_toml())
    assert data is not None
    assert data == tomllib.loads(_toml())
    # json.dumps tells 1 from 1.0 from true, which == does not
    assert json.dumps(data, sort_keys=True) == json.dumps(tomllib.loads(_toml()), sort_keys=True)


def _tables(pack: LanguagePack) -> dict[str, object]:
    """Every field of a pack (a pack is compared by identity)."""
    return {f.name: getattr(pack, f.name) for f in fields(pack)}


def test_the_english_pack_is_the_pack_of_its_toml() -> None:
    assert _tables(english()) == _tables(load_pack(_toml()))


def _written(head: dict[str, object], body: str) -> str:
    return json.dumps(head) + "\n" + body


@pytest.mark.parametrize(
    "damage",
    ["other toml", "edited", "cut short", "other format", "no head", "not json", "a list", "empty"],
)
def test_a_file_of_another_text_cut_short_edited_or_of_another_format_is_never_read(damage: str) -> None:
    toml, shipped = _toml(), _shipped()
    first, _, body = shipped.partition("\n")
    head = json.loads(first)
    cases = {
        "other toml": (toml + "\n# edited\n", shipped),
        "edited": (toml, first + "\n" + body.replace('"e.g"', '"e.x"', 1)),
        "cut short": (toml, shipped[: len(shipped) // 2]),
        "other format": (toml, _written({**head, "format": 2}, body)),
        "no head": (toml, body),
        "not json": (toml, "{" + shipped),
        "a list": (toml, _written({**head, "body": _sha(json.dumps([1]) + "\n")}, json.dumps([1]) + "\n")),
        "empty": (toml, ""),
    }
    text, file = cases[damage]
    assert file != shipped or text != toml
    assert _read_ahead(text, file) is None
    # what is not read ahead is read from the TOML: the same pack
    if text == toml:
        assert _tables(_loaded(toml, _read_ahead(toml, file), None, None)) == _tables(load_pack(toml))


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- what each process reads of the pack: as fast as it can, as it always read ---------------------------------

_TEXT = st.text(alphabet=st.sampled_from([*APOSTROPHES, "'", "a", "B", "İ", "Σ", "ς", " ", "\n", "\t", ".", "é", "😀"]))


@settings(max_examples=500, deadline=None)
@given(_TEXT)
def test_an_apostrophe_look_alike_is_folded_and_nothing_else(text: str) -> None:
    """``fold_apostrophes`` (a pattern) is the character table it replaced: each look-alike ``'``, the rest kept."""
    assert fold_apostrophes(text) == text.translate({ord(c): "'" for c in APOSTROPHES})


_TABLE = st.recursive(
    _TEXT | st.integers() | st.booleans(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=12,
)


def _words_one_by_one(node: Any) -> set[str]:
    """The pack's words as they were read before: :func:`phrase` of each key and text on its own."""
    if isinstance(node, dict):
        return {w for k, v in node.items() for w in (*phrase(str(k)), *_words_one_by_one(v))}
    if isinstance(node, list):
        return {w for item in node for w in _words_one_by_one(item)}
    return set(phrase(node)) if isinstance(node, str) else set()


@settings(max_examples=300, deadline=None)
@given(_TABLE)
def test_the_words_a_pack_mentions_are_those_of_each_text_read_alone(table: Any) -> None:
    """Every text of the tables read at once (one a line) gives the words each gives alone: no word joined
    across two texts, none lost, case folded as for one (a final sigma included)."""
    assert _words_of({"t": table}) == _words_one_by_one({"t": table})


def test_the_english_pack_mentions_what_its_tables_say() -> None:
    data = _read_ahead(_toml())
    assert data is not None
    assert english().mentioned == _words_one_by_one({k: v for k, v in data.items() if k not in OUTSIDE_THE_GRAMMAR})


@pytest.mark.parametrize("text", ["don\ud800\u2019t", "\u2019\u00b4`" * 350_000, "`a" * 500_000])
def test_hostile_text_is_folded_as_the_table_folds_it(text: str) -> None:
    """Lone surrogates and a megabyte of look-alikes, past ASCII or not: folded as the character table folds them."""
    assert fold_apostrophes(text) == text.translate({ord(c): "'" for c in APOSTROPHES})
