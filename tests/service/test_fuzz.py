"""An API fuzz run against the real service, over every route (check, batch, answer, grant, audit, revoke): no
5xx, and no approval of input the parser refuses (issues 15, 23)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from validator.integrations.service import ServiceConfig

from tests.inputs.test_fastdecode import EDGES, _json, _mutate, _places
from tests.service.conftest import Running, start
from tests.service.test_service import EMAIL, call
from validator import CheckInput, InputError, Validator

PATHS = [
    "/v1/check",
    "/v1/check:batch",
    "/v1/answer",
    "/v1/authorizations",
    "/v1/audit",
    "/v1/audit/1-0",
    "/v1/authorizations/x/revoke",
]


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[Running]:
    running = start(ServiceConfig(rate_per_second=1_000_000, burst=1_000_000))
    yield running
    running.stop()


def _refused_locally(raw: bytes) -> bool:
    try:
        CheckInput.from_json(raw)
    except InputError:
        return True
    return False


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    st.data(),
    st.sampled_from(["replace", "delete", "add"]),
    st.one_of(st.sampled_from(EDGES), _json),
    st.sampled_from(["colour", "id", "type", "role", "tool"]),
    st.sampled_from(PATHS),
)
def test_no_5xx_and_no_approval_of_what_the_parser_refuses(
    fuzzed: Running, data: st.DataObject, how: str, payload: Any, key: str, path: str
) -> None:
    place = data.draw(st.sampled_from(_places(EMAIL)))
    doc = _mutate(EMAIL, place, how, payload, key)
    answered = {"check": doc, "answer": data.draw(st.sampled_from([{"type": "approve"}, payload, True]))}
    raw = data.draw(
        st.sampled_from(
            [
                json.dumps(doc).encode(),
                json.dumps({"checks": [doc]}).encode(),
                json.dumps(answered).encode(),
                b"\xff{",
                b"",
            ]
        )
    )
    status, answer = call(fuzzed.url, path, fuzzed.token, raw)
    assert status < 500, (path, raw[:200], answer)
    if path == "/v1/check" and status == 200:
        assert not _refused_locally(raw), raw[:200]
        if answer["approved"]:  # an approval over the wire is the one the library gives in process
            assert Validator().check(raw).approved
    if path == "/v1/check" and _refused_locally(raw):
        assert status == 400 and "problems" in answer
