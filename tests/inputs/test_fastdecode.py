"""The one-pass decoder and the careful parser give the same answer on any input (issue 13)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.inputs.test_checkinput import GOOD
from validator import CheckInput, InputError, Limits
from validator.exceptions import problem_from_msgspec, problems_of
from validator.inputs import checkinput, fastdecode

LIMITS = Limits(max_depth=12)

_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
EDGES: list[Any] = ["", "x", "user", "text", 0, 1.5, True, None, [], {}, [{}], {"type": "text", "text": "t"}]
_payload = st.one_of(st.sampled_from(EDGES), _json)
_keys = [
    "messages",
    "action",
    "policy",
    "user_id",
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "name",
    "author",
    "id",
    "args",
    "tool",
    "justification",
    "type",
    "text",
    "cache_control",
    "colour",
]


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            found.extend(_places(v, (*path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found.extend(_places(v, (*path, i)))
    return found


def _mutate(doc: Any, path: tuple[Any, ...], how: str, payload: Any, key: str) -> Any:
    doc = json.loads(json.dumps(doc))
    if not path:
        return payload if how == "replace" else doc
    node = doc
    for p in path[:-1]:
        node = node[p]
    last = path[-1]
    if how == "replace":
        node[last] = payload
    elif how == "delete":
        del node[last]
    elif how == "add" and isinstance(node[last], dict):
        node[last][key] = payload
    elif how == "add" and isinstance(node[last], list):
        node[last].append(payload)
    return doc


def _answer(parse: Any, text: bytes) -> tuple[str, Any]:
    try:
        item = parse(text)
    except InputError:
        return ("refused", None)
    return ("accepted", (item.transcript.messages, item.action, item.user_id, item.policy))


def _careful(text: bytes) -> CheckInput:
    return CheckInput.from_dict(_strict_loads(text), limits=LIMITS)


def _strict_loads(text: bytes) -> Any:
    try:
        return checkinput.strictjson.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError([]) from exc


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.data(),
    st.sampled_from(["replace", "delete", "add"]),
    _payload,
    st.sampled_from(_keys),
)
def test_fast_and_careful_agree_on_any_mutation_of_a_good_input(
    data: st.DataObject, how: str, payload: Any, key: str
) -> None:
    path = data.draw(st.sampled_from(_places(GOOD)))
    doc = _mutate(GOOD, path, how, payload, key)
    text = json.dumps(doc).encode()
    fast = _answer(lambda t: CheckInput.from_json(t, limits=LIMITS), text)
    careful = _answer(_careful, text)
    assert fast == careful, (doc, fast, careful)


def test_fast_and_careful_agree_on_every_edge_value_in_every_place() -> None:
    for path in _places(GOOD):
        for how in ("replace", "delete", "add"):
            for payload in EDGES:
                for key in ("colour", "id", "type"):
                    doc = _mutate(GOOD, path, how, payload, key)
                    text = json.dumps(doc).encode()
                    fast = _answer(lambda t: CheckInput.from_json(t, limits=LIMITS), text)
                    assert fast == _answer(_careful, text), doc


@pytest.mark.parametrize(
    "text",
    [
        b'{"messages": [{"role": "user", "content": "a", "content": "b"}], "action": {"tool": "t"}}',
        b'{"messages": [{"role": "user", "content": "\\ud800"}], "action": {"tool": "t"}}',
        b'{"messages": [{"role": "user", "content": "a"}], "action": {"tool": "t", "args": {"n": 1e400}}}',
        b'{"messages": [{"role": "user", "content": "a"}], "action": {"tool": "t", "args": {"n": NaN}}}',
        b'{"messages": [{"role": "user", "content": "a"}], "action": {"tool": "t", "args": '
        + b'{"a": [' * 20
        + b"1"
        + b"]}" * 20
        + b"}}",
        b'{"messages": [{"role": "user", "content": 1}], "action": {"tool": "t"}}',
    ],
)
def test_what_strict_json_refuses_is_refused_with_its_path(text: bytes) -> None:
    with pytest.raises(InputError) as exc:
        CheckInput.from_json(text, limits=LIMITS)
    assert exc.value.problems and all(p.problem for p in exc.value.problems)


def test_a_refusal_only_the_fast_decoder_makes_is_still_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(data: bytes, *, max_depth: int) -> Any:
        raise ValueError("refused by the fast decoder")

    monkeypatch.setattr(fastdecode, "decode", refuse)
    with pytest.raises(InputError, match="refused by the fast decoder"):
        CheckInput.from_json(json.dumps(GOOD))


def test_the_decoders_refusal_names_the_field() -> None:
    try:
        fastdecode.decode(b'{"messages": [{"role": 5}], "action": {"tool": "t"}}', max_depth=64)
    except Exception as exc:
        found = problem_from_msgspec(exc)
    assert (found.path, found.problem) == ("messages[0].role", "Expected `str`, got `int`")


@pytest.mark.parametrize("levels", range(8, 16))
@pytest.mark.parametrize("leaf", ["1", "1e400", '"x"', "[]", "{}"])
def test_depth_and_numbers_in_free_form_parts_match_the_careful_parser(levels: int, leaf: str) -> None:
    for part in ("args", "justification"):
        nested = "[" * levels + leaf + "]" * levels
        text = f'{{"messages": [{{"role": "user", "content": "a"}}], "action": {{"tool": "t", "{part}": {nested}}}}}'
        if part == "args":
            text = text.replace(f'"args": {nested}', f'"args": {{"a": {nested}}}')
        fast = _answer(lambda t: CheckInput.from_json(t, limits=LIMITS), text.encode())
        assert fast == _answer(_careful, text.encode()), text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(["replace", "delete", "add"]), _payload, st.sampled_from(_keys))
def test_the_problem_reader_refuses_exactly_what_msgspec_refuses(
    data: st.DataObject, how: str, payload: Any, key: str
) -> None:
    """One definition, two readers of it: the records' converter and the reader that names every problem."""
    import msgspec

    doc = _mutate(GOOD, data.draw(st.sampled_from(_places(GOOD))), how, payload, key)
    found = problems_of(doc, fastdecode.CheckIn)
    try:
        msgspec.convert(doc, fastdecode.CheckIn)
    except msgspec.ValidationError as exc:
        assert found, (doc, exc)
        where = problem_from_msgspec(exc).path  # msgspec names a missing field's object, the reader the field
        assert any(p.path.startswith(where) for p in found), (doc, exc, found)
    else:
        assert found == [], (doc, found)


def test_a_bad_input_gets_every_problem_by_its_path() -> None:
    bad = {
        "messages": [{"role": "bot", "content": 5}, {"role": "user", "tool_calls": "x", "colour": 1}],
        "action": {"args": [], "call_id": ""},
        "user_id": 7,
        "extra": True,
    }
    for parse in (lambda d: CheckInput.from_dict(d), lambda d: CheckInput.from_json(json.dumps(d))):
        with pytest.raises(InputError) as exc:
            parse(bad)
        assert sorted(p.path for p in exc.value.problems) == [
            "action.args",
            "action.call_id",
            "action.tool",
            "extra",
            "messages[0].content",
            "messages[0].role",
            "messages[1].colour",
            "messages[1].tool_calls",
            "user_id",
        ], exc.value.problems


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([b"e", b"E", b"-", b"0", b"7", b".", b" ", b"x", b"." + b"0" * 300]), max_size=30))
def test_the_underflow_prefilter_finds_what_the_pattern_finds(pieces: list[bytes]) -> None:
    """``strictjson._may_underflow`` (``bytes.find`` at each ``e-``/``E-``) says what ``_TINY.search`` says."""
    from validator.inputs.strictjson import _TINY, _may_underflow

    body = b"".join(pieces)
    assert _may_underflow(body) == bool(_TINY.search(body))


_FREE_PLACES = [
    ("action.args", lambda d, n: d["action"]["args"].update(amount=n)),
    ("action.justification", lambda d, n: d["action"].update(justification=n)),
    ("action.justification", lambda d, n: d["action"]["justification"].update(score=[[n]])),
    ("policy", lambda d, n: d.update(policy={"tools": {"send_money": {"cap": n}}})),
    ("messages[1].tool_calls[0].args", lambda d, n: d["messages"][1]["tool_calls"][0]["args"].update(limit=n)),
]


@pytest.mark.parametrize(("place", "put"), _FREE_PLACES)
@pytest.mark.parametrize("number", ["1e-400", "-1e-400", "0.5e-330", "1E-999", "0." + "0" * 250 + "1e-99"])
def test_a_number_that_underflows_is_refused_in_every_free_form_part(place: str, put: Any, number: str) -> None:
    """The fast decoder looks for an underflowing number only where a free-form part holds a float zero (what
    one reads as): every such place is one, and the refusal is the careful parser's, naming the place."""
    doc = json.loads(json.dumps(GOOD))
    put(doc, 12345.5)
    raw = json.dumps(doc).replace("12345.5", number).encode()
    with pytest.raises(ValueError, match="underflows"):
        fastdecode.decode(raw, max_depth=12)
    with pytest.raises(InputError) as refused:
        CheckInput.from_json(raw, limits=LIMITS)
    assert any(p.path.startswith(place) and "underflows" in p.problem for p in refused.value.problems)
    fine = raw.replace(number.encode(), b"0.0")  # a plain zero is a zero
    assert fastdecode.decode(fine, max_depth=12) is not None
