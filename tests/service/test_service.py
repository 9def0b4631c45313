"""``validator serve`` over real HTTP on loopback: security, limits, tenants, fail closed (issue 15)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from validator.integrations.service import ServiceClient, ServiceConfig, tenants_for

from tests.service.conftest import Running, body, free_port, start
from validator import Code, examples
from validator.testing import FunctionJudge

EMAIL = json.loads(examples.check_path("authorized_email").read_text())


def call(url: str, path: str, token: str | None, data: Any = None, method: str | None = None) -> tuple[int, Any]:
    raw = data if isinstance(data, bytes) else (json.dumps(data).encode() if data is not None else None)
    request = urllib.request.Request(url + path, data=raw, method=method or ("POST" if raw is not None else "GET"))
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, _parsed(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, _parsed(exc.read())


def _parsed(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return raw.decode()


def test_no_anonymous_access_and_no_stack_traces(service: Running) -> None:
    assert call(service.url, "/v1/check", None, EMAIL)[0] == 401
    status, answer = call(service.url, "/v1/check", "vt_not-a-token", EMAIL)
    assert status == 401 and answer["error"] == "a valid bearer token is required"
    # every error is an RFC 9457 problem, with our code
    assert {answer["type"], answer["title"], answer["status"], answer["code"]} == {
        "urn:action-validator:error:unauthorized",
        "Unauthorized",
        401,
        "unauthorized",
    }
    assert call(service.url, "/metrics", None)[0] == 401
    assert call(service.url, "/healthz", None) == (200, {"ok": True})
    assert call(service.url, "/readyz", None)[0] == 200


def test_the_vendor_invoice_is_blocked_and_the_users_email_approved(service: Running) -> None:
    client = ServiceClient(service.url, service.token)
    blocked = client.check(body())
    assert not blocked.approved and blocked.code is Code.EVIDENCE_NOT_FROM_USER
    approved = client.check(EMAIL)
    assert approved.approved and approved.code is Code.APPROVED
    both = client.check_batch([body(), EMAIL])
    assert [v.approved for v in both] == [False, True]


def test_bad_input_is_a_400_naming_the_field_and_the_client_refuses_it(service: Running) -> None:
    status, answer = call(service.url, "/v1/check", service.token, {**EMAIL, "user_id": 5})
    assert status == 400 and answer["problems"][0]["path"] == "user_id"
    refused = ServiceClient(service.url, service.token).check({**EMAIL, "user_id": 5})
    assert not refused.approved and refused.code is Code.SERVICE_UNAVAILABLE
    assert "answered 400 (invalid_input; user_id: " in refused.reasoning, refused.reasoning  # the problem, read
    status, answer = call(service.url, "/v1/check:batch", service.token, {"checks": [EMAIL, {"nope": 1}]})
    assert status == 200 and "verdict" in answer["results"][0] and "error" in answer["results"][1]


def test_size_and_rate_limits() -> None:
    small = start(ServiceConfig(max_body_bytes=2_000, rate_per_second=0.001, burst=3))
    try:
        huge = {**EMAIL, "messages": [{"role": "user", "content": "x" * 5_000}]}
        assert call(small.url, "/v1/check", small.token, huge)[0] == 413
        statuses = [call(small.url, "/v1/check", small.token, EMAIL)[0] for _ in range(3)]
        assert statuses[-1] == 429 and 200 in statuses
    finally:
        small.stop()


def test_tenants_never_see_or_spend_each_others_state(service: Running) -> None:
    other = service.tenants.create("globex", ["check", "grant", "admin"])
    grant = {"user_id": "u-1", "tool": "send_email", "where": {"to": "*@acme.example"}, "quote": "Always email Acme."}
    status, auth = call(service.url, "/v1/authorizations", service.token, grant)
    assert status == 201
    assert [a["id"] for a in call(service.url, "/v1/authorizations?user_id=u-1", service.token)[1]] == [auth["id"]]
    assert call(service.url, "/v1/authorizations?user_id=u-1", other)[1] == []
    cited = {
        **EMAIL,
        "action": {
            **EMAIL["action"],
            "justification": {
                "reason": "r",
                "evidence": [*EMAIL["action"]["justification"]["evidence"], {"authorization_id": auth["id"]}],
            },
        },
    }
    assert ServiceClient(service.url, service.token).check(cited).approved
    theirs = ServiceClient(service.url, other).check(cited)
    assert not theirs.approved and theirs.code is Code.AUTHORIZATION_NOT_FOUND
    mine = call(service.url, "/v1/audit", service.token)[1]
    assert len(mine) == 1 and len(call(service.url, "/v1/audit", other)[1]) == 1  # each tenant: its own check only
    assert call(service.url, f"/v1/audit/{mine[0]['entry_id']}", other)[0] == 404
    assert call(service.url, f"/v1/authorizations/{auth['id']}/revoke", other, {})[0] == 404
    assert call(service.url, f"/v1/authorizations/{auth['id']}/revoke", service.token, {})[0] == 200
    assert not ServiceClient(service.url, service.token).check(cited).approved


def test_the_client_fails_closed_on_a_dead_service_a_timeout_and_garbage() -> None:
    dead = ServiceClient(f"http://127.0.0.1:{free_port()}", "vt_x", timeout=2).check(EMAIL)
    assert not dead.approved and dead.code is Code.SERVICE_UNAVAILABLE and "Connection refused" in dead.reasoning

    def sleepy(request: Any) -> Any:
        time.sleep(3)
        return {"approved": True, "reasoning": "late", "confidence": "high"}

    slow = start(ServiceConfig(check_timeout=0.3, judge=lambda: FunctionJudge(sleepy)))
    try:
        late = ServiceClient(slow.url, slow.token).check(EMAIL)
        assert not late.approved and late.code is Code.SERVICE_UNAVAILABLE
    finally:
        slow.stop()


def test_a_store_that_is_down_gives_blocking_verdicts_and_readyz_503() -> None:
    down = start(ServiceConfig(store_url=f"redis://127.0.0.1:{free_port()}/0"), tenants=_memory_tenants())
    try:
        verdict = ServiceClient(down.url, down.token).check(EMAIL)
        assert not verdict.approved and verdict.code is Code.RECORDER_UNAVAILABLE  # the 503 keeps its code
        status, answer = call(down.url, "/v1/check", down.token, EMAIL)
        assert status == 503 and answer["approved"] is False and answer["code"] == "RECORDER_UNAVAILABLE"
        assert call(down.url, "/readyz", None)[0] == 503
    finally:
        down.stop()


def _memory_tenants() -> Any:
    from validator.integrations.service import MemoryTenants

    return MemoryTenants()


def test_the_openapi_document_is_committed_and_current() -> None:
    from pathlib import Path

    from validator.integrations.service import create_app

    committed = json.loads((Path(__file__).parents[2] / "schemas" / "openapi.json").read_text())
    assert committed == json.loads(json.dumps(create_app().openapi()))


def test_the_service_checks_openai_chat_completions_messages(service: Running) -> None:
    """The check input's messages as OpenAI Chat Completions sends them: a developer message, text parts, a
    null content, a call under ``function``: converted, then checked as any other input."""
    chat = [
        {"role": "developer", "content": "You are an email assistant."},
        {"role": "user", "content": [{"type": "text", "text": EMAIL["messages"][0]["content"]}]},
        {"role": "assistant", "content": None, "refusal": None},
    ]
    status, body = call(service.url, "/v1/check", service.token, {**EMAIL, "messages": chat})
    assert status == 200 and body["code"] == "APPROVED", body


@pytest.mark.parametrize("path", ["/v1/check", "/v1/check:batch"])
def test_metrics_count_requests_and_verdicts(service: Running, path: str) -> None:
    payload = EMAIL if path == "/v1/check" else {"checks": [EMAIL]}
    call(service.url, path, service.token, payload)
    status, text = call(service.url, "/metrics", service.token)
    assert status == 200 and 'validator_verdicts_total{code="APPROVED"} 1.0' in text
    assert f'validator_http_requests_total{{route="{path}",status="200"}} 1.0' in text


def test_metrics_label_routes_by_template_so_unknown_paths_cannot_grow_them(service: Running) -> None:
    for i in range(50):  # unauthenticated 404s under fifty paths, and a question id in a path
        call(service.url, f"/nothing/{i}", None)
    call(service.url, "/v1/questions/q_" + "a" * 32, service.token)
    status, text = call(service.url, "/metrics", service.token)
    assert status == 200 and "/nothing/" not in text and 'route="unmatched"' in text
    assert 'route="/v1/questions/{question_id}"' in text and "q_aaaa" not in text


# -- issue 23: the service as a security boundary ---------------------------------------------------------

EXEMPT_MONEY = {"tools": {"send_money": {"exempt": True}}}


def test_a_callers_policy_is_refused_unless_the_operator_allows_its_tenant() -> None:
    hijack = body(policy=EXEMPT_MONEY)
    running = start(ServiceConfig())
    try:
        status, answer = call(running.url, "/v1/check", running.token, hijack)
        assert status == 400 and answer["problems"][0]["path"] == "policy"
        status, answer = call(running.url, "/v1/check:batch", running.token, {"checks": [hijack, body()]})
        assert status == 200 and answer["results"][0]["error"]["problems"][0]["path"] == "policy"
        assert answer["results"][1]["verdict"]["approved"] is False  # the vendor invoice, under the server's policy
    finally:
        running.stop()
    allowed = start(ServiceConfig(request_policy_tenants=frozenset({"acme"})))
    try:  # the operator said so for this tenant: its policy applies (here, to its own harm)
        status, answer = call(allowed.url, "/v1/check", allowed.token, hijack)
        assert status == 200 and answer["code"] == "EXEMPT"
    finally:
        allowed.stop()


@pytest.mark.parametrize(
    ("path", "raw", "where"),
    [
        ("/v1/check:batch", b'{"checks": [{"messages": [], "action": {"tool": "a"}}], "checks": []}', "checks"),
        ("/v1/check:batch", b"[" * 100_000 + b"]" * 100_000, ""),
        ("/v1/check:batch", b'{"checks": [{"action": {"tool": "t", "args": {"n": 12345678901234567891}}}]}', "n"),
        ("/v1/authorizations", b'{"user_id": "u", "tool": "t", "quote": "\\ud800 x"}', "quote"),
        ("/v1/authorizations", b'{"user_id": "u", "user_id": "v", "tool": "t", "quote": "q"}', "user_id"),
    ],
    ids=["batch-duplicate-key", "batch-deep", "batch-big-integer", "grant-lone-surrogate", "grant-duplicate-key"],
)
def test_every_route_parses_with_the_check_inputs_strict_rules(
    service: Running, path: str, raw: bytes, where: str
) -> None:
    status, answer = call(service.url, path, service.token, raw)
    assert status == 400, answer
    text = json.dumps(answer)
    assert where in text and "Traceback" not in text


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/audit/1-2-3", "entry_id"),
        ("/v1/audit/x", "entry_id"),
        ("/v1/audit?after=x", "after"),
        ("/v1/audit?after=1-2%3Aauth", "after"),
        ("/v1/authorizations?user_id=%0Aroot", "user_id"),
        ("/v1/authorizations/auth%3A%2A/revoke", "auth_id"),
    ],
)
def test_odd_ids_are_a_400_naming_the_field_never_a_store_error(service: Running, path: str, field: str) -> None:
    """Checked before any store sees them (on Redis a colon was spliced into a key and answered 503; on the
    memory store ``?after=x`` was a 500)."""
    method = "POST" if path.endswith("/revoke") else "GET"
    status, answer = call(service.url, path, service.token, method=method)
    assert status == 400 and answer["problems"][0]["path"] == field, answer


def test_the_store_password_never_leaves_in_a_response_or_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.redis_server import RedisServer

    secret = "s3cret-Pa55-do-not-show"
    server = RedisServer(tmp_path, extra=("--requirepass", secret))
    server.start()
    url = f"redis://:{secret}@127.0.0.1:{server.port}/0"
    seen: list[str] = []
    caplog.set_level("DEBUG")
    running = start(ServiceConfig(store_url=url), tenants=_memory_tenants())
    try:

        def every_route() -> None:
            for path, data, method in [
                ("/readyz", None, "GET"),
                ("/healthz", None, "GET"),
                ("/v1/check", EMAIL, "POST"),
                ("/v1/check:batch", {"checks": [EMAIL]}, "POST"),
                ("/v1/audit", None, "GET"),
                ("/v1/audit/1-0", None, "GET"),
                ("/v1/authorizations?user_id=u-1", None, "GET"),
                ("/v1/authorizations", {"user_id": "u", "tool": "t", "quote": "q"}, "POST"),
                ("/metrics", None, "GET"),
            ]:
                seen.append(json.dumps(call(running.url, path, running.token, data, method=method)))

        every_route()
        assert call(running.url, "/readyz", None)[0] == 200
        server.stop()  # the store goes away: every error path runs
        every_route()
        assert call(running.url, "/readyz", None)[0] == 503
    finally:
        running.stop()
        server.stop()
    logged = "\n".join(r.getMessage() + (str(r.exc_info[1]) if r.exc_info else "") for r in caplog.records)
    assert secret not in "\n".join(seen) and secret not in logged
    assert "***" in "\n".join(seen)  # the readiness answer still says which store, redacted


@pytest.mark.parametrize(
    "url",
    [
        "redis://:PASS@h:1/0",
        "redis://bob:PASS@h:1/0",
        "redis://PASS@h:1/0",
        "redis://h:1/0?password=PASS",
        "unix:///tmp/r.sock?password=PASS",
    ],
)
def test_a_store_url_is_shown_without_its_password(url: str) -> None:
    from validator.store.base import redact_in, redacted

    assert "PASS" not in redacted(url) and "***" in redacted(url)
    assert "PASS" not in redact_in(f"failed ({url}): auth PASS refused", url)


@pytest.mark.parametrize("cached", [False, True], ids=["token-looked-up", "token-cached"])
@pytest.mark.parametrize("fault", ["stopped", "hung"])
def test_a_store_outage_is_a_quick_503_with_a_blocking_verdict_never_a_500_or_a_stall(
    tmp_path: Path, fault: str, cached: bool
) -> None:
    """Whether the token is looked up or was cached a moment ago (then the rate bucket or the check's own store
    calls fail), every check is a 503 with a blocking verdict."""
    import os
    import signal
    from concurrent.futures import ThreadPoolExecutor

    from tests.redis_server import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    config = ServiceConfig(store_url=server.url, token_cache_seconds=60 if cached else 0)
    # a long store timeout: while Redis hangs, no lookup can fail (and trip the fail-fast pause) before
    # /healthz has had seconds to answer, however slow this machine is
    from validator.integrations.service import RedisTenants

    running = start(config, tenants=RedisTenants(server.url, timeout=5.0))
    try:
        assert call(running.url, "/v1/check", running.token, EMAIL)[0] == 200
        assert server.process is not None
        if fault == "stopped":
            server.stop()
        else:
            os.kill(server.process.pid, signal.SIGSTOP)
        finished: list[str] = []

        def check(_: int) -> tuple[int, Any]:
            answer = call(running.url, "/v1/check", running.token, EMAIL)
            finished.append("check")
            return answer

        with ThreadPoolExecutor(8) as pool:
            pending = [pool.submit(check, i) for i in range(8)]
            time.sleep(0.2)  # the checks are waiting on the store now
            health = call(running.url, "/healthz", None)
            finished.append("healthz")
            ready = call(running.url, "/readyz", None)
            answers = [p.result() for p in pending]
        assert health == (200, {"ok": True})
        assert ready[0] == 503 and ready[1]["ok"] is False
        if fault == "hung":  # the event loop never waits on the store: /healthz answers first
            assert finished[0] == "healthz", finished
        refusals = {"SERVICE_UNAVAILABLE", "RECORDER_UNAVAILABLE", "REQUEST_LEDGER_UNAVAILABLE"}
        for status, verdict in answers:
            assert status == 503 and verdict["approved"] is False and verdict["code"] in refusals, verdict
        client = ServiceClient(running.url, running.token, timeout=10).check(EMAIL)
        assert not client.approved and client.code.value in refusals
        status, answer = call(running.url, "/v1/audit", running.token)
        assert status == 503 and "unavailable" in answer["error"]
    finally:
        if fault == "hung" and server.process is not None:
            os.kill(server.process.pid, signal.SIGCONT)
        running.stop()
        server.stop()


def test_a_revoked_token_stops_working_once_its_cached_identity_runs_out(tmp_path: Path) -> None:
    from tests.redis_server import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    tenants = tenants_for(server.url)
    running = start(ServiceConfig(store_url=server.url, token_cache_seconds=0.5), tenants=tenants)
    try:
        agent = tenants.create("acme")
        assert call(running.url, "/v1/check", agent, EMAIL)[0] == 200  # made a moment ago: works at once
        assert tenants.revoke(agent)
        deadline = time.monotonic() + 10
        while call(running.url, "/v1/check", agent, EMAIL)[0] == 200:
            assert time.monotonic() < deadline, "a revoked token was still accepted after 10 s"
            time.sleep(0.1)
        assert call(running.url, "/v1/check", agent, EMAIL)[0] == 401
        assert call(running.url, "/v1/check", running.token, EMAIL)[0] == 200  # the others are untouched
    finally:
        running.stop()
        server.stop()


def test_a_check_token_cannot_grant_nor_read_the_audit(service: Running) -> None:
    agent = service.tenants.create("acme")  # no scopes said: check only
    grant = {"user_id": "u-1", "tool": "*", "quote": "always pay", "risk": "dangerous"}
    status, answer = call(service.url, "/v1/authorizations", agent, grant)
    assert status == 403 and "'grant' scope" in answer["error"]
    for path in ("/v1/audit", "/metrics", "/v1/authorizations?user_id=u-1"):
        assert call(service.url, path, agent)[0] == 403
    assert call(service.url, "/v1/check", agent, EMAIL)[0] == 200
    assert call(service.url, "/v1/authorizations", service.token, grant)[0] == 201  # the operator's token may


def test_a_token_stored_before_scopes_existed_may_only_check() -> None:
    from validator.integrations.service.tokens import MemoryTenants, token_hash

    tenants = MemoryTenants()
    tenants._tenants[token_hash("vt_old")] = "acme"  # a record of the earlier format: the tenant alone
    found = tenants.identity_of("vt_old")
    assert found is not None and found.tenant == "acme" and found.scopes == {"check"}


def test_unknown_scopes_are_refused_when_a_token_is_made() -> None:
    from validator.integrations.service.tokens import MemoryTenants

    from validator.exceptions import UsageError

    with pytest.raises(UsageError, match="wizard"):
        MemoryTenants().create("acme", ["check", "wizard"])


def test_the_service_refuses_to_start_on_a_redis_that_keeps_nothing(tmp_path: Path) -> None:
    import subprocess
    import sys

    from validator.integrations.service import check_persistence

    from tests.redis_server import RedisServer
    from validator.exceptions import SetupError

    volatile = RedisServer(tmp_path, extra=("--appendonly", "no", "--save", ""))
    volatile.start()
    try:
        with pytest.raises(SetupError, match="keeps nothing across a restart"):
            check_persistence(ServiceConfig(store_url=volatile.url))
        check_persistence(ServiceConfig(store_url=volatile.url, allow_volatile_store=True))  # told so: it runs
        validator_cli = str(Path(sys.executable).with_name("validator"))
        refused = subprocess.run(
            [validator_cli, "serve", "--store", volatile.url, "--port", str(free_port())],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 2 and "--allow-volatile-store" in refused.stderr
        assert "Traceback" not in refused.stderr
    finally:
        volatile.stop()
    kept = RedisServer(tmp_path / "kept")
    (tmp_path / "kept").mkdir()
    kept.start()
    try:
        check_persistence(ServiceConfig(store_url=kept.url))  # appendonly yes: it runs
    finally:
        kept.stop()


def test_the_service_refuses_to_start_on_a_redis_that_may_evict_a_spent_request(tmp_path: Path) -> None:
    import subprocess
    import sys

    from validator.integrations.service import check_persistence

    from tests.redis_server import RedisServer
    from validator.exceptions import SetupError

    evicting = RedisServer(tmp_path, extra=("--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru"))
    evicting.start()
    try:
        with pytest.raises(SetupError, match="maxmemory-policy volatile-lru"):
            check_persistence(ServiceConfig(store_url=evicting.url))
        validator_cli = str(Path(sys.executable).with_name("validator"))
        refused = subprocess.run(
            [validator_cli, "serve", "--store", evicting.url, "--port", str(free_port())],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 2 and "noeviction" in refused.stderr and "Traceback" not in refused.stderr
        # a Redis switched to evicting while served: /readyz says it is not ready
        import redis as redis_client

        client = redis_client.Redis.from_url(evicting.url)
        client.config_set("maxmemory-policy", "noeviction")
        check_persistence(ServiceConfig(store_url=evicting.url))  # noeviction: it runs
        service = start(ServiceConfig(store_url=evicting.url))
        try:
            status, health = call(service.url, "/readyz", service.token, None, method="GET")
            assert status == 200 and health["ok"], health
            client.config_set("maxmemory-policy", "allkeys-lru")
            status, health = call(service.url, "/readyz", service.token, None, method="GET")
            assert status == 503 and "allkeys-lru" in health["error"], health
            assert call(service.url, "/readyz", None) == (503, {"ok": False})
        finally:
            service.stop()
            client.close()
    finally:
        evicting.stop()


def test_each_check_of_a_batch_costs_a_check() -> None:
    small = start(ServiceConfig(rate_per_second=0.001, burst=10, max_batch=64))
    try:
        status, answer = call(small.url, "/v1/check:batch", small.token, {"checks": [EMAIL] * 20})
        assert status == 429 and "a batch of 20 checks" in answer["error"]
        assert call(small.url, "/v1/check:batch", small.token, {"checks": [EMAIL] * 5})[0] == 200
    finally:
        small.stop()


def test_processes_on_one_redis_spend_from_one_rate_bucket(tmp_path: Path) -> None:
    from tests.redis_server import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    config = ServiceConfig(store_url=server.url, rate_per_second=0.001, burst=4)
    tenants = tenants_for(server.url)
    first = start(config, tenants)
    second = start(config, tenants_for(server.url))
    try:
        token = first.token  # one token, accepted by both (the token store is shared)
        statuses = [call((first, second)[i % 2].url, "/v1/check", token, EMAIL)[0] for i in range(6)]
        assert statuses.count(200) == 4 and statuses[-2:] == [429, 429], statuses
    finally:
        first.stop()
        second.stop()
        server.stop()


def _asked_check() -> dict[str, Any]:
    user = "Please email marta@acme.example that the Q3 report is ready. Never send anything to eve@evil.example."
    quote = {"reason": "asked", "evidence": [{"quote": "email marta@acme.example that the Q3 report is ready"}]}
    return {
        "messages": [{"role": "user", "content": user}],
        "action": {
            "tool": "send_email",
            "args": {"to": "carol@acme.example", "body": "The Q3 report is ready."},
            "justification": quote,
        },
        "user_id": "u-1",
    }


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ({"type": "approve"}, "APPROVED_BY_USER"),
        ({"type": "reject", "message": "not Carol"}, "REJECTED_BY_USER"),
        (
            {
                "type": "edit",
                "edited_action": {"name": "send_email", "args": {"to": "marta@acme.example", "body": "R"}},
            },
            "APPROVED_BY_USER",
        ),
        (
            {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "eve@evil.example", "body": "R"}}},
            "TARGET_NOT_GROUNDED",
        ),
        ({"type": "reject", "approved": True}, "REJECTED_BY_USER"),
    ],
    ids=["approve", "reject", "edit-safe", "edit-forbidden", "contradictory"],
)
def test_a_host_in_any_language_records_the_users_answer(answer: dict[str, Any], code: str) -> None:
    from validator import Policy

    policy = Policy.load(examples.policy_path())
    running = start(ServiceConfig(policy=policy))
    try:
        agent = running.tenants.create("acme", ["check"])
        person = running.tenants.create("acme", ["answer"])
        status, asked = call(running.url, "/v1/check", agent, _asked_check())
        assert status == 200 and asked["decision"] == "ask_user" and asked["question_id"].startswith("q_")
        question = asked["question_id"]
        status, shown = call(running.url, f"/v1/questions/{question}", person)
        assert status == 200 and shown["tool"] == "send_email" and shown["args"]["to"] == "carol@acme.example"
        assert shown["code"] == asked["code"] and "messages" not in shown
        status, decided = call(running.url, "/v1/answer", person, {"question_id": question, "answer": answer})
        assert status == 200 and decided["code"] == code, decided
        assert decided["approved"] is (code == "APPROVED_BY_USER")
        status, entries = call(running.url, "/v1/audit", running.token)
        assert entries[-1]["verdict"]["code"] == code  # recorded
        again = call(running.url, "/v1/answer", person, {"question_id": question, "answer": answer})
        assert again[0] == 409 and again[1]["error"] == "question_answered"  # answered once
        assert call(running.url, "/v1/answer", agent, {"question_id": question, "answer": answer})[0] == 403
        assert call(running.url, "/v1/answer", running.token, {"question_id": question, "answer": answer})[0] == 403
    finally:
        running.stop()


# --- issue 43: a batch's copies, strict edges, secrets off the command line -------------------------------


def test_copies_of_one_call_in_a_batch_are_checked_once(service: Running) -> None:
    """Five copies of one email under one call id: the first is checked, the rest reuse its id."""
    one = json.loads(json.dumps(EMAIL))
    one["action"]["call_id"] = "call_1"
    other = json.loads(json.dumps(EMAIL))
    other["action"]["call_id"] = "call_2"
    status, answer = call(service.url, "/v1/check:batch", service.token, {"checks": [one] * 5 + [other]})
    assert status == 200, answer
    codes = [r["verdict"]["code"] for r in answer["results"]]
    assert codes[0] == "APPROVED" and codes[1:5] == ["TOOL_CALL_ID_REUSED"] * 4, codes
    assert all(not r["verdict"]["approved"] for r in answer["results"][1:5])
    assert "more than once in this batch" in answer["results"][1]["verdict"]["reasoning"]


@pytest.mark.parametrize("media", [None, "text/plain", "application/xml", "application/x-www-form-urlencoded"])
def test_a_body_not_declared_json_is_a_415(service: Running, media: str | None) -> None:
    request = urllib.request.Request(service.url + "/v1/check", data=json.dumps(EMAIL).encode(), method="POST")
    request.add_header("Authorization", f"Bearer {service.token}")
    if media is not None:
        request.add_header("Content-Type", media)
    else:
        request.remove_header("Content-type")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, answer = response.status, _parsed(response.read())
    except urllib.error.HTTPError as exc:
        status, answer = exc.code, _parsed(exc.read())
    if media is None:  # urllib sends form-encoded when told nothing
        assert status == 415, answer
    else:
        assert status == 415 and "application/json" in answer["error"], answer
    ok = call(service.url, "/v1/check", service.token, EMAIL)  # with its charset too
    assert ok[0] == 200


@pytest.mark.parametrize(
    "path",
    [
        "/v1/audit/99999999999999999999-99999999999999999999",
        "/v1/audit?after=99999999999999999999-1",
        "/v1/audit/18446744073709551616-0",
    ],
)
def test_an_audit_id_beyond_a_stream_ids_range_is_a_400(service: Running, path: str) -> None:
    status, answer = call(service.url, path, service.token)
    assert status == 400 and answer["problems"][0]["path"] in ("entry_id", "after"), answer
    assert call(service.url, "/v1/audit/18446744073709551615-0", service.token)[0] == 404  # in range: not found


GRANT = {"user_id": "u-1", "tool": "send_email", "quote": "Always email Acme."}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"where": []}, "non-empty object"),
        ({"where": False}, "non-empty object"),
        ({"where": 0}, "non-empty object"),
        ({"where": ""}, "non-empty object"),
        ({"where": None}, "non-empty object"),
        ({"where": {}}, "non-empty object"),
        ({"where": {"to;rm": "*"}}, "argument path"),
        ({"user_id": "\u0000"}, "printable"),
        ({"user_id": "u" * 100_000}, "printable"),
        ({"user_id": "a\u2028b"}, "printable"),
    ],
)
def test_a_grant_with_no_real_constraint_or_an_unlistable_user_is_a_400(
    service: Running, change: dict[str, Any], words: str
) -> None:
    status, answer = call(service.url, "/v1/authorizations", service.token, {**GRANT, **change})
    assert status == 400 and words in json.dumps(answer), answer
    ok = call(service.url, "/v1/authorizations", service.token, {**GRANT, "where": {"to": "*@acme.example"}})
    assert ok[0] == 201


@pytest.mark.parametrize("number", ["1e-400", "-1e-400", "0.5e-330"])
def test_a_number_that_underflows_is_refused_with_its_path_as_one_that_overflows_is(
    service: Running, number: str
) -> None:
    raw = json.dumps(EMAIL).replace('"to": ', f'"amount": {number}, "to": ', 1).encode()
    status, answer = call(service.url, "/v1/check", service.token, raw)
    assert status == 400 and "action.args.amount" in json.dumps(answer), answer
    assert "underflows" in json.dumps(answer)
    status, answer = call(service.url, "/v1/check", service.token, raw.replace(number.encode(), b"1e400"))
    assert status == 400 and "action.args.amount" in json.dumps(answer), answer


@pytest.mark.parametrize("how", ["file", "env", "flag"])
def test_the_store_password_stays_off_the_command_line_and_out_of_the_environment(tmp_path: Path, how: str) -> None:
    """``--store-file`` and ``--store-env`` keep the password off every command line; given in ``--store`` (the
    operator's own command line), the workers still get it only through a private file, never in their
    environment."""
    import os
    import subprocess
    import sys

    from tests.redis_server import RedisServer

    secret = "s3cret-Pa55-never-in-ps"
    server = RedisServer(tmp_path, extra=("--requirepass", secret))
    server.start()
    url = f"redis://:{secret}@127.0.0.1:{server.port}/0"
    port = free_port()
    env = dict(os.environ)
    if how == "file":
        (tmp_path / "store-url").write_text(url + "\n")
        source = ["--store-file", str(tmp_path / "store-url")]
    elif how == "env":
        env["MY_STORE"] = url
        source = ["--store-env", "MY_STORE"]
    else:
        source = ["--store", url]
    validator_cli = str(Path(sys.executable).with_name("validator"))
    process = subprocess.Popen(
        [validator_cli, "serve", *source, "--port", str(port), "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.2)
        else:
            raise AssertionError("the service did not become ready")
        children = subprocess.run(["pgrep", "-f", f"--port {port}"], capture_output=True, text=True).stdout.split()
        workers = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        for pid in {str(process.pid), *children, *workers}:
            for part in ("cmdline", "environ"):
                try:
                    seen = Path(f"/proc/{pid}/{part}").read_bytes()
                except OSError:
                    continue  # gone meanwhile
                if part == "environ" and how == "env" and pid == str(process.pid):
                    continue  # the operator's own variable as the command started (the workers never get it)
                if part == "cmdline" and how == "flag" and pid == str(process.pid):
                    continue  # the operator typed it there; the workers never see it
                assert secret.encode() not in seen, (pid, part)
    finally:
        process.terminate()
        process.wait(timeout=60)
        server.stop()


def test_a_store_given_twice_or_from_nowhere_is_one_line() -> None:
    import subprocess
    import sys

    validator_cli = str(Path(sys.executable).with_name("validator"))
    twice = subprocess.run(
        [validator_cli, "serve", "--store", "memory://", "--store-env", "X"], capture_output=True, text=True, timeout=60
    )
    assert twice.returncode == 2 and "give the store once" in twice.stderr
    unset = subprocess.run(
        [validator_cli, "serve", "--store-env", "NO_SUCH_VARIABLE_HERE"], capture_output=True, text=True, timeout=60
    )
    assert unset.returncode == 2 and "NO_SUCH_VARIABLE_HERE" in unset.stderr and "Traceback" not in unset.stderr


def _asking_service() -> tuple[Running, str, str]:
    from validator import Policy

    running = start(ServiceConfig(policy=Policy.load(examples.policy_path()), question_seconds=60))
    return running, running.tenants.create("acme", ["check"]), running.tenants.create("acme", ["answer"])


def test_an_answer_is_only_ever_to_a_question_the_service_asked() -> None:
    running, agent, person = _asking_service()
    try:
        approve = {"type": "approve"}
        # the old form, the check inline: refused, pointing to question_id (it approved checks nobody asked about)
        old = call(running.url, "/v1/answer", person, {"check": _asked_check(), "answer": approve})
        assert old[0] == 400 and "question_id" in json.dumps(old[1])
        # an approvable check never becomes a question, so nothing can answer it and nothing is spent
        status, verdict = call(running.url, "/v1/check", agent, EMAIL)
        assert status == 200 and verdict["approved"] and verdict.get("question_id") is None
        # unknown, malformed
        unknown = call(running.url, "/v1/answer", person, {"question_id": "q_" + "A" * 32, "answer": approve})
        assert unknown[0] == 404 and unknown[1]["error"] == "question_not_found"
        bad = call(running.url, "/v1/answer", person, {"question_id": "../x", "answer": approve})
        assert bad[0] == 400 and bad[1]["problems"][0]["path"] == "question_id"
        # another tenant's question: its record is in another namespace
        status, asked = call(running.url, "/v1/check", agent, _asked_check())
        other = running.tenants.create("globex", ["answer"])
        foreign = call(running.url, "/v1/answer", other, {"question_id": asked["question_id"], "answer": approve})
        assert foreign[0] == 404
        assert call(running.url, f"/v1/questions/{asked['question_id']}", other)[0] == 404
        # an answer that cannot be read is a rejection (fail closed), and it is the question's one answer
        wrong = call(running.url, "/v1/answer", person, {"question_id": asked["question_id"], "answer": {"type": "x"}})
        assert wrong[0] == 200 and wrong[1]["code"] == "REJECTED_BY_USER", wrong
        late = call(running.url, "/v1/answer", person, {"question_id": asked["question_id"], "answer": approve})
        assert late[0] == 409
    finally:
        running.stop()


def test_replayed_answers_approve_once() -> None:
    running, agent, person = _asking_service()
    try:
        _, asked = call(running.url, "/v1/check", agent, _asked_check())
        body_ = {"question_id": asked["question_id"], "answer": {"type": "approve"}}
        codes = [call(running.url, "/v1/answer", person, body_) for _ in range(3)]
        assert [c[0] for c in codes] == [200, 409, 409]
        _, entries = call(running.url, "/v1/audit?count=1000", running.token)
        assert sum(e["verdict"]["code"] == "APPROVED_BY_USER" for e in entries) == 1
    finally:
        running.stop()


def test_an_expired_question_cannot_be_answered() -> None:
    from validator import Policy

    running = start(ServiceConfig(policy=Policy.load(examples.policy_path()), question_seconds=0.5))
    try:
        agent = running.tenants.create("acme", ["check"])
        person = running.tenants.create("acme", ["answer"])
        _, asked = call(running.url, "/v1/check", agent, _asked_check())
        time.sleep(1.0)
        late = call(
            running.url, "/v1/answer", person, {"question_id": asked["question_id"], "answer": {"type": "approve"}}
        )
        assert late[0] == 404 and late[1]["error"] == "question_not_found"
    finally:
        running.stop()


def test_an_edit_answers_with_the_edited_calls_verdict_and_closes_the_question() -> None:
    running, agent, person = _asking_service()
    try:
        status, asked = call(running.url, "/v1/check", agent, _asked_check())
        edit = {
            "type": "edit",
            "edited_action": {"name": "send_email", "args": {"to": "marta@acme.example", "body": "R"}},
        }
        status, decided = call(running.url, "/v1/answer", person, {"question_id": asked["question_id"], "answer": edit})
        assert status == 200 and decided["approved"] and decided["tool"] == "send_email"
        again = call(running.url, "/v1/answer", person, {"question_id": asked["question_id"], "answer": edit})
        assert again[0] == 409
    finally:
        running.stop()


def test_a_batch_puts_a_question_for_each_call_it_asks_about() -> None:
    running, agent, person = _asking_service()
    try:
        _, answer = call(running.url, "/v1/check:batch", agent, {"checks": [_asked_check(), EMAIL]})
        first, second = (r["verdict"] for r in answer["results"])
        assert first["decision"] == "ask_user" and first["question_id"].startswith("q_")
        assert second.get("question_id") is None
        done = call(
            running.url, "/v1/answer", person, {"question_id": first["question_id"], "answer": {"type": "reject"}}
        )
        assert done[0] == 200 and done[1]["code"] == "REJECTED_BY_USER"
    finally:
        running.stop()


@pytest.mark.usefixtures("frozen_heap")
def test_400_checks_at_once_on_a_healthy_redis_are_answered_or_told_to_wait_never_a_5xx(tmp_path: Path) -> None:
    """A busy store is not a down store: the connections are pooled, a request waits for one, and only a
    store that fails is a 503 (before: 100 x 200 and 300 x 503 "Timeout connecting to server")."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from tests.redis_server import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    running = start(ServiceConfig(store_url=server.url, rate_per_second=10_000, burst=10_000), tenants_for(server.url))
    try:
        agent = running.tenants.create("acme", ["check"])
        checks = []
        for i in range(400):
            one = json.loads(json.dumps(EMAIL))
            one["action"]["call_id"] = f"call-{i}"
            one["user_id"] = f"u-{i}"
            checks.append(one)
        gate = threading.Barrier(400, timeout=60)

        def one(check: dict[str, Any]) -> tuple[int, dict[str, str]]:
            raw = json.dumps(check).encode()
            request = urllib.request.Request(running.url + "/v1/check", data=raw, method="POST")
            request.add_header("Authorization", f"Bearer {agent}")
            request.add_header("Content-Type", "application/json")
            gate.wait()
            try:
                with urllib.request.urlopen(request, timeout=120) as response:
                    return response.status, dict(response.headers.items())
            except urllib.error.HTTPError as exc:
                return exc.code, dict(exc.headers)

        with ThreadPoolExecutor(400) as pool:
            answers = list(pool.map(one, checks))
        statuses = [s for s, _ in answers]
        assert not [s for s in statuses if s >= 500], sorted(set(statuses))
        assert all({k.lower(): v for k, v in h.items()}.get("retry-after") for s, h in answers if s != 200)
        assert set(statuses) <= {200, 429} and statuses.count(200) > 0
    finally:
        running.stop()
        server.stop()


def test_checks_recover_at_once_after_a_redis_restart(tmp_path: Path) -> None:
    """Pooled connections from before a restart are replaced, not failed on."""
    from tests.redis_server import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    running = start(ServiceConfig(store_url=server.url), tenants_for(server.url))
    try:
        agent = running.tenants.create("acme", ["check"])
        assert call(running.url, "/v1/check", agent, EMAIL)[0] == 200
        server.stop()
        server.start()
        again = json.loads(json.dumps(EMAIL))
        again["action"]["call_id"] = "call-after-restart"
        status, verdict = call(running.url, "/v1/check", agent, again)
        assert status == 200, verdict
    finally:
        running.stop()
        server.stop()


def test_a_payment_whose_record_the_store_refuses_spends_nothing(tmp_path: Path) -> None:
    """The request is spent in the script that records the approval: a record the server refuses (the audit
    stream's key holding a string: XADD fails inside the script) leaves the request unspent."""
    import redis

    from tests.redis_server import RedisServer
    from validator import Policy

    server = RedisServer(tmp_path)
    server.start()
    policy = Policy.load(examples.policy_path())  # send_money: dangerous, its request spent once
    running = start(ServiceConfig(store_url=server.url, policy=policy), tenants_for(server.url))
    client = redis.Redis.from_url(server.url, decode_responses=True)
    iban = "DE89370400440532013000"
    pay = {
        "messages": [{"role": "user", "content": f"Please pay {iban} 50 EUR for the lunch."}],
        "action": {
            "tool": "send_money",
            "call_id": "call-pay-1",
            "args": {"recipient": iban, "amount": 50, "currency": "EUR"},
            "justification": {"reason": "asked", "evidence": [{"quote": f"pay {iban} 50 EUR"}]},
        },
        "user_id": "u-1",
    }
    try:
        agent = running.tenants.create("acme", ["check"])
        assert call(running.url, "/v1/check", agent, body())[0] == 200  # the tenant's audit stream exists
        [stream] = [k for k in client.keys("*:audit") if client.type(k) == "stream"]
        client.delete(stream)
        client.set(stream, "not a stream")
        status, verdict = call(running.url, "/v1/check", agent, pay)
        assert not verdict["approved"], verdict
        assert verdict["code"] == Code.REQUEST_LEDGER_UNAVAILABLE.value, (status, verdict)
        assert client.keys("*:spent:*") == []
        client.delete(stream)
        status, verdict = call(running.url, "/v1/check", agent, pay)
        assert (status, verdict["code"]) == (200, "APPROVED"), verdict
        assert len(client.keys("*:spent:*")) == 1
        second = json.loads(json.dumps(pay))
        second["action"]["call_id"] = "call-pay-2"
        assert call(running.url, "/v1/check", agent, second)[1]["code"] == "REQUEST_ALREADY_USED"
    finally:
        client.close()
        running.stop()
        server.stop()


def test_an_answer_token_bound_to_a_user_answers_only_that_users_questions() -> None:
    from validator.exceptions import UsageError

    running, agent, _ = _asking_service()
    try:
        mine = running.tenants.create("acme", ["answer"], user="u-1")
        theirs = running.tenants.create("acme", ["answer"], user="u-2")
        status, asked = call(running.url, "/v1/check", agent, _asked_check())  # u-1's question
        assert status == 200 and asked["question_id"]
        qid = asked["question_id"]
        approve = {"question_id": qid, "answer": {"type": "approve"}}
        assert call(running.url, f"/v1/questions/{qid}", theirs)[0] == 404  # as if it did not exist
        assert call(running.url, "/v1/answer", theirs, approve)[0] == 404
        assert call(running.url, f"/v1/questions/{qid}", mine)[1]["user_id"] == "u-1"
        status, answered = call(running.url, "/v1/answer", mine, approve)
        assert (status, answered["code"]) == (200, "APPROVED_BY_USER")
        # a bound token does nothing else
        assert call(running.url, "/v1/check", mine, _asked_check())[0] == 403
        assert call(running.url, "/v1/authorizations?user_id=u-1", mine)[0] == 403
        assert call(running.url, "/v1/audit", mine)[0] == 403
        for scopes in (["grant"], ["answer", "grant"], ["check", "admin"]):
            with pytest.raises(UsageError, match="may only check and answer"):
                running.tenants.create("acme", scopes, user="u-1")
        for user in ("", "a\nb", "x" * 257):
            with pytest.raises(UsageError, match="printable"):
                running.tenants.create("acme", ["answer"], user=user)
    finally:
        running.stop()


def test_the_user_is_whoever_the_token_vouches_for_never_whoever_the_body_says() -> None:
    running = start(ServiceConfig(), trust=False)
    try:
        agent = running.tenants.create("acme", ["check"])  # bound to no user, its tenant not trusted to name one
        ann = running.tenants.create("acme", ["check", "answer"], users=["u-ann"])
        both = running.tenants.create("acme", ["check"], users=["u-ann", "u-bob"])
        named = {**EMAIL, "user_id": "u-eve"}
        status, answer = call(running.url, "/v1/check", agent, named)
        assert status == 403 and answer["error"] == "user_not_vouched" and "--trust-user-id" in answer["detail"]
        anonymous = {k: v for k, v in EMAIL.items() if k != "user_id"}
        assert call(running.url, "/v1/check", agent, anonymous)[0] == 200  # no user named: one user's service
        assert call(running.url, "/v1/check", ann, {**EMAIL, "user_id": "u-ann"})[0] == 200
        status, answer = call(running.url, "/v1/check", ann, named)
        assert status == 403 and "bound to" in answer["detail"]
        assert call(running.url, "/v1/check", both, {**EMAIL, "user_id": "u-bob"})[0] == 200
        status, batch = call(running.url, "/v1/check:batch", both, {"checks": [{**EMAIL, "user_id": "u-bob"}, named]})
        assert status == 200 and "verdict" in batch["results"][0]
        assert batch["results"][1]["status"] == 403 and batch["results"][1]["error"]["error"] == "user_not_vouched"
        with ServiceClient(running.url, agent) as client:  # the client reads the problem: its code and detail
            refused = client.check(named)
        assert not refused.approved and "answered 403 (user_not_vouched; " in refused.reasoning, refused.reasoning
    finally:
        running.stop()
    trusted = start(ServiceConfig(trusted_user_tenants=frozenset({"acme"})))
    try:
        assert (
            call(trusted.url, "/v1/check", trusted.tenants.create("acme", ["check"]), {**EMAIL, "user_id": "x"})[0]
            == 200
        )
        other = trusted.tenants.create("globex", ["check"])
        assert call(trusted.url, "/v1/check", other, {**EMAIL, "user_id": "x"})[0] == 403
    finally:
        trusted.stop()


def test_a_bound_token_keeps_its_user_in_the_redis_token_store(tmp_path: Path) -> None:
    from validator.integrations.service.tokens import token_hash

    from tests.redis_server import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    try:
        tenants = tenants_for(server.url)
        token = tenants.create("acme", ["answer"], user="ann|the second")  # a "|" of its own
        who = tenants.identity_of(token)
        assert who is not None and (who.tenant, who.scopes, who.users) == (
            "acme",
            frozenset({"answer"}),
            frozenset({"ann|the second"}),
        )
        assert dict(tenants.list())[token_hash(token)].users == {"ann|the second"}
        several = tenants.identity_of(tenants.create("acme", ["check", "answer"], users=["ann", "bob|2"]))
        assert several is not None and several.users == {"ann", "bob|2"} and several.scopes == {"check", "answer"}
        plain = tenants.identity_of(tenants.create("acme", ["check"]))
        assert plain is not None and not plain.users
    finally:
        server.stop()


def test_the_quick_starts_printed_input_is_checked_by_the_service(service: Running) -> None:
    """The README's quick start: ``validator check --example NAME --print-input > input.json``, then the curl line
    posts it: every packaged example is checked (200), none refused for carrying a policy."""
    from typer.testing import CliRunner

    from validator.cli import app

    for name in examples.names():
        printed = CliRunner().invoke(app, ["check", "--example", name, "--print-input"])
        status, answer = call(service.url, "/v1/check", service.token, json.loads(printed.output))
        assert status == 200 and answer["code"], (name, answer)
    status, answer = call(
        service.url, "/v1/check", service.token, json.loads(examples.check_path("vendor_invoice").read_text())
    )
    assert status == 400 and answer["problems"][0]["path"] == "policy"  # the example as shipped carries one


def test_serve_shows_its_tokens_as_a_block_or_in_a_file_and_none_when_it_cannot_listen(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    validator_cli = str(Path(sys.executable).with_name("validator"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = subprocess.run(
            [validator_cli, "serve", "--port", str(port)], capture_output=True, text=True, timeout=60
        )
    assert refused.returncode == 2 and "cannot listen on 127.0.0.1" in refused.stderr
    assert "vt_" not in refused.stdout + refused.stderr  # no token was made for a service that never ran
    path = tmp_path / "tokens"
    port = free_port()
    proc = subprocess.Popen(
        [validator_cli, "serve", "--port", str(port), "--token-file", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        lines = path.read_text().splitlines()
        assert [line.split()[0] for line in lines] == ["agent", "answers", "operator"]
        assert all(line.split()[-1].startswith("vt_") for line in lines) and path.stat().st_mode & 0o777 == 0o600
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert "vt_" not in out and str(path) in out


def test_readyz_shows_anyone_whether_it_is_ready_and_an_admin_its_own_tenants_audit(service: Running) -> None:
    """``/readyz``: ``{"ok"}`` to anyone (a load balancer); to an admin token the store's details and its own
    tenant's ``audit_records``, what its ``/v1/audit`` lists (never another tenant's)."""
    assert call(service.url, "/readyz", None) == (200, {"ok": True})
    assert call(service.url, "/readyz", service.token)[1]["audit_records"] == 0
    for _ in range(3):
        call(service.url, "/v1/check", service.token, EMAIL)
    listed = call(service.url, "/v1/audit", service.token)[1]
    status, ready = call(service.url, "/readyz", service.token)
    assert status == 200 and ready["audit_records"] == len(listed) == 3
    other = service.tenants.create("globex", ["admin"])
    assert call(service.url, "/readyz", other)[1]["audit_records"] == 0  # its own tenant's only
    assert call(service.url, "/readyz", None) == (200, {"ok": True})  # no address, no version, no count


def test_an_answer_remembers_the_call_it_answers_within_the_policys_bound_never_wider() -> None:
    running, agent, person = _asking_service()
    try:
        asked = [
            call(
                running.url,
                "/v1/check",
                agent,
                {**_asked_check(), "action": {**_asked_check()["action"], "call_id": f"c{i}"}},
            )[1]
            for i in range(3)
        ]
        ids = [a["question_id"] for a in asked]
        # a free quote may widen the grant ("every time" never spends): an answer token may not
        wide = {"type": "approve", "remember": {"expires_in_days": 7, "quote": "Always, every time, whenever."}}
        status, refused = call(running.url, "/v1/answer", person, {"question_id": ids[0], "answer": wide})
        assert status == 403 and refused["error"] == "remember_too_wide"
        # longer than the policy's bound (30 days): approved, the grant not kept
        long = {"type": "approve", "remember": {"expires_in_days": 3650}}
        status, decided = call(running.url, "/v1/answer", person, {"question_id": ids[1], "answer": long})
        assert status == 200 and decided["code"] == "APPROVED_BY_USER" and decided["authorization_id"] is None
        assert "answer_grant_days" in decided["reasoning"]
        # within it: kept, scoped to the call
        short = {"type": "approve", "remember": {"expires_in_days": 7}}
        status, decided = call(running.url, "/v1/answer", person, {"question_id": ids[2], "answer": short})
        assert status == 200 and decided["authorization_id"], decided
    finally:
        running.stop()


def test_one_tenants_heavy_checks_hold_only_their_share_and_the_others_run() -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from validator.judges.base import JudgeOutput, JudgeRequest
    from validator.testing import FunctionJudge

    release = threading.Event()

    def slow_for_heavy(request: JudgeRequest) -> JudgeOutput:
        if "SLOW" in request.transcript.messages[0].content:
            release.wait(20)
        return JudgeOutput(approved=False, reasoning="no", confidence="high")

    running = start(ServiceConfig(judge=lambda: FunctionJudge(slow_for_heavy), tenant_checks=2, check_timeout=30))
    heavy = running.tenants.create("heavy", ["check"])
    light = running.tenants.create("light", ["check"])
    first = EMAIL["messages"][0]
    slow = {**EMAIL, "messages": [{**first, "content": "SLOW. " + first["content"]}, *EMAIL["messages"][1:]]}
    try:
        with ThreadPoolExecutor(4) as pool:
            held = [pool.submit(call, running.url, "/v1/check", heavy, slow) for _ in range(2)]
            time.sleep(0.5)  # both of heavy's slots are held now
            status, answer = call(running.url, "/v1/check", heavy, slow)
            assert status == 429 and "checks running" in answer["error"], answer
            quick = [call(running.url, "/v1/check", light, EMAIL)[0] for _ in range(10)]
            assert quick == [200] * 10  # the other tenant is not starved
            release.set()
            assert [f.result()[0] for f in held] == [200, 200]
        assert call(running.url, "/v1/check", heavy, EMAIL)[0] == 200  # its slots came back
        batch = {"checks": [EMAIL] * 5}  # a batch's checks wait for a slot instead
        status, results = call(running.url, "/v1/check:batch", heavy, batch)
        assert status == 200 and all("verdict" in r for r in results["results"])
    finally:
        release.set()
        running.stop()


def test_the_agent_learns_the_answer_to_its_own_question_once() -> None:
    running, agent, person = _asking_service()
    try:
        check = {**_asked_check(), "action": {**_asked_check()["action"], "call_id": "call-learn"}}
        status, asked = call(running.url, "/v1/check", agent, check)
        assert status == 200 and asked["decision"] == "ask_user"
        qid = asked["question_id"]
        status, seen = call(running.url, f"/v1/questions/{qid}/status", agent)
        assert status == 200 and seen["status"] == "pending" and "verdict" not in seen
        other = running.tenants.create("acme", ["check"])
        assert call(running.url, f"/v1/questions/{qid}/status", other)[0] == 404  # not its question
        status, decided = call(running.url, "/v1/answer", person, {"question_id": qid, "answer": {"type": "approve"}})
        assert status == 200 and decided["code"] == "APPROVED_BY_USER"
        status, seen = call(running.url, f"/v1/questions/{qid}/status", agent)
        assert seen["status"] == "approved" and seen["verdict"]["code"] == "APPROVED_BY_USER"
        assert call(running.url, f"/v1/questions/{qid}", person)[1]["status"] == "approved"  # no longer waiting
        # the same call checked again, the user silent since (the agent said something): the answer, once
        check = {**check, "messages": [*check["messages"], {"role": "assistant", "content": "I asked you."}]}
        status, again = call(running.url, "/v1/check", agent, check)
        assert status == 200 and again["code"] == "APPROVED_BY_USER" and again.get("question_id") in (None, qid)
        # a word of the user's since the question: checked anew
        status, asked = call(
            running.url, "/v1/check", agent, {**check, "action": {**check["action"], "call_id": "c-2"}}
        )
        qid = asked["question_id"]
        call(running.url, "/v1/answer", person, {"question_id": qid, "answer": {"type": "approve"}})
        later = {**check, "action": {**check["action"], "call_id": "c-2"}}
        later["messages"] = [*check["messages"], {"role": "user", "content": "Actually, wait."}]
        status, fresh = call(running.url, "/v1/check", agent, later)
        assert fresh["code"] != "APPROVED_BY_USER"
    finally:
        running.stop()


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_tenants_questions_hold_at_most_its_quota(kind: str, tmp_path: Path) -> None:
    from tests.redis_server import RedisServer
    from validator import Policy

    server = RedisServer(tmp_path) if kind == "redis" else None
    url = "memory://"
    if server is not None:
        server.start()
        url = server.url
    size = 3_000  # about what one question of _asked_check holds
    config = ServiceConfig(store_url=url, policy=Policy.load(examples.policy_path()), question_bytes=2 * size + 500)
    running = start(config)
    try:
        agent = running.tenants.create("acme", ["check"])
        answers = [
            call(
                running.url,
                "/v1/check",
                agent,
                {**_asked_check(), "action": {**_asked_check()["action"], "call_id": f"q{i}"}},
            )
            for i in range(6)
        ]
        statuses = [status for status, _ in answers]
        assert 200 in statuses and 429 in statuses, statuses
        refused = next(body for status, body in answers if status == 429)
        assert not refused["approved"] and "of its" in refused["reasoning"] and "bytes" in refused["reasoning"]
        other = running.tenants.create("globex", ["check"])  # another tenant's quota is its own
        assert call(running.url, "/v1/check", other, _asked_check())[0] == 200
    finally:
        running.stop()
        if server is not None:
            server.stop()


def test_the_token_file_appears_whole_and_never_replaces_a_file(tmp_path: Path) -> None:
    """``--token-file``: the tokens are written aside and linked in, so a reader that waits for the file reads it
    whole; a file already at the path is kept as it was (the command then says it cannot write), and nothing is
    left aside either way."""
    from validator.cli.serve import _write_new

    path = tmp_path / "tokens"
    _write_new(path, "agent  vt_a\n")
    assert path.read_text() == "agent  vt_a\n" and path.stat().st_mode & 0o777 == 0o600
    with pytest.raises(FileExistsError):
        _write_new(path, "agent  vt_b\n")
    assert path.read_text() == "agent  vt_a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokens"]
