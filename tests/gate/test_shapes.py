"""The parses of sentence shapes kept on disk (validator/gate/shapes.py): a process reads what another parsed, the
same parse Earley gives, without building Lark's parser; a folder anyone else may write is never used; a file
that does not read is parsed again (issue 61: no parser built per process)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.gate import shapes
from validator.gate.grammar import Grammar, _salt
from validator.gate.shapes import FOLDER_ENV, ShapeStore
from validator.language import english
from validator.text.sentences import sentence_spans

ROOT = Path(__file__).resolve().parents[2]


def _sentences() -> list[str]:
    """Every sentence of the everyday benchmark sets' requests (the grammar's parses and its failures)."""
    found: list[str] = []
    for name in ("everyday.jsonl", "everyday_holdout.jsonl", "everyday_holdout2.jsonl"):
        for line in (ROOT / "bench" / name).read_text(encoding="utf-8").splitlines():
            text = json.loads(line)["text"]
            found += [text[a:b] for a, b in sentence_spans(text)]
    return found


SENTENCES = _sentences()


def _store(folder: Path) -> ShapeStore:
    folder.mkdir(mode=0o700, exist_ok=True)
    return ShapeStore(folder, _salt(english()))


def test_a_fresh_grammar_reads_every_shape_another_parsed_without_building_a_parser(tmp_path: Path) -> None:
    store = _store(tmp_path / "shapes")
    first = Grammar(english(), store)
    parsed = [first.parse(s) for s in SENTENCES]
    assert {p.problem for p in parsed} >= {None, "no_parse"}  # parses and failures alike
    again = Grammar(english(), store)
    assert [again.parse(s) for s in SENTENCES] == parsed
    assert again._parser is None  # neither the literals nor any shape needed Lark
    without = Grammar(english())
    assert [without.parse(s) for s in SENTENCES] == parsed


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_a_kept_parse_equals_earleys_whatever_was_kept_before(sentences: list[str], rng: object) -> None:
    import random
    import tempfile

    assert isinstance(rng, random.Random)
    with tempfile.TemporaryDirectory() as folder:
        store = _store(Path(folder) / "shapes")
        for s in sentences:
            Grammar(english(), store).parse(s)  # each sentence kept by a process of its own
        mixed = rng.sample(sentences, len(sentences))
        assert [Grammar(english(), store).parse(s) for s in mixed] == [Grammar(english()).parse(s) for s in mixed]


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: "",
        lambda text: text[: len(text) // 2],
        lambda text: text.replace('"key":"', '"key":"0', 1),
        lambda text: text.replace('"nodes":[', '"nodes":[["start",[]],', 1),  # the checksum no longer holds
        lambda text: "[]",
        lambda text: json.dumps({"key": json.loads(text)["key"], "sum": "", "body": {}}),
    ],
)
def test_a_file_that_does_not_read_is_parsed_again_and_rewritten(tmp_path: Path, damage: object) -> None:
    store = _store(tmp_path / "shapes")
    sentence = "Please email ann@example.com the meeting notes."
    expected = Grammar(english()).parse(sentence)
    Grammar(english(), store).parse(sentence)
    files = sorted(store.folder.glob("*.json"))
    for f in files:
        f.write_text(damage(f.read_text()))  # type: ignore[operator]
    fresh = Grammar(english(), store)
    assert fresh.parse(sentence) == expected
    assert fresh._parser is not None  # the damaged files were not believed
    assert Grammar(english(), store).parse(sentence) == expected and all(json.loads(f.read_text()) for f in files)


def test_a_tree_naming_places_past_its_sentence_is_not_believed(tmp_path: Path) -> None:
    store = _store(tmp_path / "shapes")
    sentence = "Pay Eve 50 EUR."
    grammar = Grammar(english(), store)
    shape = tuple(w.classes for w in grammar.words(sentence))
    body = shapes._encoded(*grammar._tree(grammar.words(sentence)))
    body["nodes"][0][1].append(["W", 99])  # a token of a word the sentence does not have
    store._write(store._key("shape", shapes._shape_text(shape)), body)
    assert store.parsed(shape) is None


def test_only_a_private_folder_of_this_user_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FOLDER_ENV, str(tmp_path / "cache"))
    store = ShapeStore.default("salt")
    assert store is not None and store.folder == tmp_path / "cache" / "shapes"
    assert oct(store.folder.stat().st_mode & 0o777) == oct(0o700)
    store.folder.chmod(0o770)  # the group may write: nothing is read from it, nothing written
    assert ShapeStore.default("salt") is None
    store.folder.chmod(0o700)
    other = tmp_path / "elsewhere"
    other.mkdir(mode=0o700)
    store.folder.rmdir()
    store.folder.symlink_to(other)  # a link: not followed
    assert ShapeStore.default("salt") is None
    monkeypatch.setenv(FOLDER_ENV, "")
    assert ShapeStore.default("salt") is None
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)  # someone else's folder
    monkeypatch.setenv(FOLDER_ENV, str(tmp_path / "mine"))
    assert ShapeStore.default("salt") is None


def test_the_users_cache_folder_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    from validator.store import folders as _folders

    monkeypatch.delenv(FOLDER_ENV)
    monkeypatch.setattr(_folders.sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    store = ShapeStore.default("salt")
    assert store is not None and store.folder == tmp_path / "xdg" / "action-validator" / "shapes"
    asked: list[str] = []  # where no XDG folder rules (macOS, Windows): platformdirs' cache folder
    monkeypatch.setattr(_folders.sys, "platform", "darwin")
    monkeypatch.setattr(platformdirs, "user_cache_path", lambda name: asked.append(name) or tmp_path / name)
    store = ShapeStore.default("salt")
    assert store is not None and store.folder == tmp_path / "action-validator" / "shapes" and asked


def test_another_grammar_or_version_reads_none_of_it(tmp_path: Path) -> None:
    store = _store(tmp_path / "shapes")
    Grammar(english(), store).parse("Pay Eve 50 EUR.")
    other = replace(english(), grammar=english().grammar + "\n// another grammar\n")
    assert _salt(other) != _salt(english())
    elsewhere = ShapeStore(store.folder, _salt(other))
    assert elsewhere.literals() is None
    assert ShapeStore(store.folder, _salt(english()) + "x").literals() is None


def test_what_is_kept_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shapes, "MAX_FILES", 10)
    store = _store(tmp_path / "shapes")
    grammar = Grammar(english(), store)
    for s in SENTENCES[:60]:
        grammar.parse(s)
    assert 0 < len(list(store.folder.glob("*.json"))) <= 10


def test_what_is_kept_is_bounded_in_bytes_and_a_huge_tree_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by a reviewer: a very ambiguous sentence of an outside message made a 10 MB file, and the bound
    counted files, not bytes."""
    monkeypatch.setattr(shapes, "MAX_TOTAL", 20_000)
    store = _store(tmp_path / "shapes")
    grammar = Grammar(english(), store)
    for s in SENTENCES[:60]:
        grammar.parse(s)
    assert 0 < sum(f.stat().st_size for f in store.folder.glob("*.json")) <= 20_000 + shapes._MAX_BYTES
    monkeypatch.setattr(shapes, "_MAX_BYTES", 200)  # every tree is now over the bound: none is written
    before = {f.name for f in store.folder.glob("*.json")}
    Grammar(english(), store).parse("Please email person0@acme.example the report and the invoice today.")
    assert {f.name for f in store.folder.glob("*.json")} <= before


def test_a_relative_folder_is_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FOLDER_ENV, "relative/cache")
    assert ShapeStore.default("salt") is None


def test_a_folder_that_cannot_be_written_costs_nothing_but_time(tmp_path: Path) -> None:
    store = _store(tmp_path / "shapes")
    store.folder.chmod(0o500)
    try:
        assert Grammar(english(), store).parse("Pay Eve 50 EUR.") == Grammar(english()).parse("Pay Eve 50 EUR.")
    finally:
        store.folder.chmod(0o700)


def test_a_one_shot_check_reads_the_shapes_a_process_before_it_kept(tmp_path: Path) -> None:
    env = {**os.environ, FOLDER_ENV: str(tmp_path)}
    check = [sys.executable, "-m", "validator", "check", "--example", "vendor_invoice", "--json"]
    runs = [subprocess.run(check, env=env, capture_output=True, text=True, check=False) for _ in range(2)]
    assert runs[0].returncode == runs[1].returncode == 1
    verdicts = [json.loads(r.stdout) for r in runs]
    assert verdicts[0]["code"] == verdicts[1]["code"] and verdicts[0]["reasoning"] == verdicts[1]["reasoning"]
    assert len(list((tmp_path / "shapes").glob("*.json"))) > 1


def test_what_is_not_a_plain_file_of_its_size_is_not_read(tmp_path: Path) -> None:
    store = _store(tmp_path / "shapes")
    sentence = "Pay Eve 50 EUR."
    Grammar(english(), store).parse(sentence)
    for f in store.folder.glob("*.json"):
        f.unlink()
        os.mkfifo(f)  # a pipe no one writes: the read must not wait for one
    assert Grammar(english(), store).parse(sentence) == Grammar(english()).parse(sentence)
    for f in store.folder.glob("*.json"):
        f.unlink()
        f.write_bytes(b" " * (shapes._MAX_BYTES + 1))
    fresh = Grammar(english(), store)
    assert fresh.parse(sentence) == Grammar(english()).parse(sentence) and fresh._parser is not None


def test_a_file_nested_past_what_json_reads_is_parsed_again(tmp_path: Path) -> None:
    store = _store(tmp_path / "shapes")
    sentence = "Pay Eve 50 EUR."
    Grammar(english(), store).parse(sentence)
    for f in store.folder.glob("*.json"):
        f.write_text("[" * 100_000)  # the literals' file too: the grammar is built from its own terminals
    fresh = Grammar(english(), store)
    assert fresh.parse(sentence) == Grammar(english()).parse(sentence) and fresh._parser is not None


def test_a_folder_moved_into_its_place_later_is_never_used(tmp_path: Path) -> None:
    """Found by a reviewer: the folder was checked once and then reached by its path, so whoever may write its
    parent could put another folder (or a link to one) in its place. The store keeps the folder it opened."""
    store = _store(tmp_path / "shapes")
    other = tmp_path / "theirs"
    other.mkdir()
    other.chmod(0o777)
    (tmp_path / "shapes").rename(tmp_path / "moved")
    (tmp_path / "shapes").symlink_to(other)
    sentence = "Email bob@acme.example the minutes."
    assert Grammar(english(), store).parse(sentence) == Grammar(english()).parse(sentence)
    assert not list(other.iterdir()) and list((tmp_path / "moved").glob("*.json"))
    assert Grammar(english(), store)._parser is None  # read back from the folder it opened


def test_a_tree_deeper_than_a_sentences_is_not_read(tmp_path: Path) -> None:
    """Found by a reviewer: a chain of 5,000 nodes under a short sentence's shape passed every check and made the
    reading recurse past Python's limit."""
    store = _store(tmp_path / "shapes")
    sentence = "Pay Eve 50 EUR."
    grammar = Grammar(english(), store)
    grammar.parse(sentence)
    shape = tuple(w.classes for w in grammar.words(sentence))
    chain = [["x", [["W", 0]]]] + [["x", [i]] for i in range(5_000)]
    body = {"root": 5_000, "stuck": None, "nodes": chain}
    with pytest.raises(ValueError, match="deeper"):
        shapes._decoded(body, len(shape))
    store._write(store._key("shape", shapes._shape_text(shape)), body)
    assert store._read(store._key("shape", shapes._shape_text(shape))) == body  # it reads: only its depth refuses it
    assert Grammar(english(), store).parse(sentence) == Grammar(english()).parse(sentence)


def test_the_key_holds_the_code_that_parses_and_keeps() -> None:
    """Found by a reviewer: the package's version alone named the code (it does not change between commits), so a
    change of the parser's options or of the encoding would have read trees kept before it."""
    from validator.gate import compiled, earley, tree
    from validator.gate import grammar as grammar_module

    source = b"".join(Path(m.__file__ or "").read_bytes() for m in (grammar_module, earley, compiled, tree, shapes))
    assert grammar_module._code() == hashlib.sha256(source).hexdigest()
    assert grammar_module._code() in _salt(english())


def test_the_key_holds_larks_version_read_without_importing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lark's ``__init__.py`` states its version: its SHA-256 is in the key, so another Lark reads no tree kept by
    this one; when that file cannot be found the key holds Lark's own ``__version__``."""
    import importlib.util

    import lark

    from validator.gate import grammar as grammar_module

    stated = Path(lark.__file__ or "").read_bytes()
    assert f'"{lark.__version__}"'.encode() in stated
    assert hashlib.sha256(stated).hexdigest() in _salt(english())
    grammar_module._lark.cache_clear()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(grammar_module, "find_spec", lambda name: None)
    try:
        assert grammar_module._lark() == lark.__version__
    finally:
        grammar_module._lark.cache_clear()


def test_a_process_reading_kept_shapes_never_imports_lark(tmp_path: Path) -> None:
    """A one-shot check whose sentences' shapes a process before it kept reads them without Lark (about 30 ms of
    imports); a shape no one kept imports it and parses."""
    code = (
        "import sys\n"
        "from validator import Message, Transcript, Validator\n"
        "text = sys.argv[1]\n"
        "args = {'to': 'eve@example.com', 'body': 'the report'}\n"
        "call = {'tool': 'send_email', 'args': args, 'find_evidence': True}\n"
        "verdict = Validator().validate(Transcript([Message(role='user', content=text)]), call, user_id='u')\n"
        "print(verdict.code.value, 'lark' in sys.modules)\n"
    )
    env = {**os.environ, FOLDER_ENV: str(tmp_path)}

    def run(text: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", code, text], env=env, capture_output=True, text=True, check=True)
        return done.stdout.split()

    first = run("Please email eve@example.com the report.")
    assert first[1] == "True"  # nothing kept: Lark parsed it
    assert run("Please email eve@example.com the report.") == [first[0], "False"]
    assert run("Email the report to eve@example.com, please.")[1] == "True"  # a shape no one kept
