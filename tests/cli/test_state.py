"""validator auth|audit|store and check --store, against the real redis-server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from validator.cli import app

runner = CliRunner()
CHECK = {
    "messages": [{"role": "user", "content": "Follow up with the Acme people from today's call."}],
    "action": {
        "tool": "send_email",
        "args": {"to": "ann@acme.example"},
        "justification": {"reason": "standing permission", "evidence": [{"authorization_id": "AUTH"}]},
    },
    "policy": {"tools": {"send_email": {"targets": ["to"], "intents": ["send", "follow up"]}}},
    "user_id": "u-1",
}


def test_grant_check_audit_revoke(redis_store: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("VALIDATOR_SPOOL", str(tmp_path / "spool.jsonl"))
    monkeypatch.setenv("VALIDATOR_STORE_URL", f"{redis_store.url}?namespace={redis_store.ns}")  # no --store: env
    result = runner.invoke(
        app,
        [
            "auth",
            "grant",
            "--user",
            "u-1",
            "--tool",
            "send_*",
            "--where",
            "to=*@acme.example",
            "--expires",
            "90d",
            "--quote",
            "You may always send follow-ups to the Acme people after sales calls.",
        ],
    )
    assert result.exit_code == 0, result.output
    auth_id = result.stdout.strip()
    assert auth_id.startswith("auth_") and redis_store.get(auth_id) is not None
    listed = json.loads(runner.invoke(app, ["auth", "list", "--user", "u-1", "--json"]).stdout)
    assert [(a["id"], a["state"], a["where"]) for a in listed] == [(auth_id, "active", {"to": "*@acme.example"})]
    assert auth_id in runner.invoke(app, ["auth", "list", "--user", "u-1"]).stdout
    narrow = runner.invoke(app, ["auth", "list", "--user", "u-1"], env={"COLUMNS": "30"}).stdout
    assert auth_id in narrow  # never cut, however narrow the terminal: it is what `auth revoke` takes
    check = tmp_path / "check.json"
    check.write_text(json.dumps(CHECK).replace("AUTH", auth_id))
    assert runner.invoke(app, ["check", "--json", str(check)]).exit_code == 0
    unasked = runner.invoke(app, ["auth", "revoke", auth_id])  # no terminal to ask on, no --yes: nothing changes
    assert unasked.exit_code == 2 and "pass --yes" in unasked.stderr and redis_store.get(auth_id).revoked is None
    revoked = runner.invoke(app, ["auth", "revoke", auth_id, "--yes"])
    assert revoked.exit_code == 0 and revoked.stdout.startswith(f"revoked {auth_id} at ")
    assert runner.invoke(app, ["auth", "revoke", "auth_nope", "--yes"]).exit_code == 1
    blocked = runner.invoke(app, ["check", "--json", str(check)])
    assert blocked.exit_code == 1 and json.loads(blocked.stdout)["code"] == "AUTHORIZATION_REVOKED"
    tail = runner.invoke(app, ["audit", "tail", "-n", "5"])
    lines = tail.stdout.strip().splitlines()
    assert len(lines) == 2 and "APPROVED" in lines[0] and "AUTHORIZATION_REVOKED" in lines[1]
    entry_id = lines[1].split()[0]
    shown = json.loads(runner.invoke(app, ["audit", "show", entry_id]).stdout)
    assert shown["verdict"]["code"] == "AUTHORIZATION_REVOKED" and shown["user_id"] == "u-1"
    out = tmp_path / "audit.jsonl"
    exported = runner.invoke(app, ["audit", "export", "-o", str(out), "--batch", "1"])
    assert exported.exit_code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["verdict"]["code"] for r in rows] == ["APPROVED", "AUTHORIZATION_REVOKED"]
    assert runner.invoke(app, ["audit", "show", "0-1"]).exit_code == 1


def test_store_urls_from_flag_and_environment(redis_url: str, monkeypatch: Any) -> None:
    health = runner.invoke(app, ["store", "health", "--store", redis_url])
    assert health.exit_code == 0 and json.loads(health.stdout)["ok"] is True
    monkeypatch.setenv("VALIDATOR_STORE_URL", "redis://127.0.0.1:1/0")
    down = runner.invoke(app, ["store", "health"])
    assert down.exit_code == 1 and json.loads(down.stdout)["ok"] is False
    bad = runner.invoke(app, ["store", "health", "--store", "ftp://x"])
    assert bad.exit_code == 2 and "unknown store URL" in bad.stderr
    grant = runner.invoke(
        app, ["auth", "grant", "--user", "u", "--tool", "t", "--quote", "ok", "--store", "redis://127.0.0.1:1/0"]
    )
    assert grant.exit_code == 1 and "redis write of a standing authorization failed" in grant.stderr
    bad_where = runner.invoke(
        app, ["auth", "grant", "--user", "u", "--tool", "t", "--quote", "ok", "--where", "nonsense"]
    )
    assert bad_where.exit_code == 2
    bad_expiry = runner.invoke(
        app, ["auth", "grant", "--user", "u", "--tool", "t", "--quote", "ok", "--expires", "soon"]
    )
    assert bad_expiry.exit_code == 2


def test_bad_flags_are_typed_errors_never_tracebacks(tmp_path: Path) -> None:
    grant = ["auth", "grant", "--user", "u", "--tool", "send_money", "--quote", "ok"]
    for extra, problem in [
        (["--expires", "999999999999d"], "past the year 9999"),
        (["--expires", "2020-01-01T00:00:00+00:00"], "already past"),
        (["--where", "amount=<=abc"], "a bound is an operator and a number"),
        (["--user", " "], "must not be empty"),
        (["--tool", ""], "must not be empty"),
    ]:
        result = runner.invoke(app, [*grant, *extra])
        said = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())  # rich draws a box and wraps
        assert result.exit_code == 2 and problem in said, (extra, said)
        assert result.exception is None or isinstance(result.exception, SystemExit)
    lost = runner.invoke(app, [*grant, "--where", "amount=<=500"])  # the default store would forget it at once
    assert lost.exit_code == 2 and "needs a store that outlives it" in lost.stderr and not lost.stdout
    kept = runner.invoke(app, [*grant, "--where", "amount=<=500", "--store", "memory://"])  # said outright
    assert kept.exit_code == 0 and "memory:// keeps nothing" in kept.stderr
    for args in (["audit", "tail", "-n", "0"], ["audit", "export", "--batch", "0"]):
        assert runner.invoke(app, args).exit_code == 2, args
    for args in (["audit", "tail"], ["audit", "show", "1-0"], ["audit", "export"], ["auth", "list", "--user", "u"]):
        unnamed = runner.invoke(app, args)
        assert unnamed.exit_code == 2 and "needs a store that outlives it" in unnamed.stderr, args
    empty = runner.invoke(app, ["audit", "tail", "--store", "memory://"])
    assert empty.exit_code == 0 and "no audit records" in empty.stderr
    (tmp_path / "a-file").write_text("")
    export = runner.invoke(
        app, ["audit", "export", "--store", "memory://", "-o", str(tmp_path / "a-file" / "out.jsonl")]
    )
    assert export.exit_code == 2 and "cannot write" in export.stderr


def test_tenant_commands_work_on_the_namespace_the_service_keeps(redis_store: Any) -> None:
    from validator.store import open_store, tenant_url

    url = f"{redis_store.url}?namespace={redis_store.ns}"
    grant = ["auth", "grant", "--user", "u-1", "--tool", "send_*", "--quote", "always", "--store", url]
    made = runner.invoke(app, [*grant, "--tenant", "acme"])
    assert made.exit_code == 0, made.output
    auth_id = made.stdout.strip()
    assert tenant_url(url, "acme") == f"{redis_store.url}?namespace={redis_store.ns}:acme"
    assert open_store(tenant_url(url, "acme")).get(auth_id) is not None  # where the service's tenant reads
    assert redis_store.get(auth_id) is None  # not the operator's own namespace
    listed = runner.invoke(app, ["auth", "list", "--user", "u-1", "--json", "--store", url, "--tenant", "acme"])
    assert [a["id"] for a in json.loads(listed.stdout)] == [auth_id]
    elsewhere = runner.invoke(app, ["auth", "list", "--user", "u-1", "--json", "--store", url, "--tenant", "globex"])
    assert json.loads(elsewhere.stdout) == []
    bad = runner.invoke(app, [*grant, "--tenant", "Not A Name"])
    assert bad.exit_code == 2 and "--tenant: tenant names are" in bad.stderr


def test_a_store_url_names_one_namespace() -> None:
    import pytest

    from validator.exceptions import StoreError
    from validator.store import tenant_url, url_namespace

    assert url_namespace("redis://h:1/0") == "validator" and url_namespace("redis://h:1/0?namespace=ops") == "ops"
    assert (
        tenant_url("redis://h:1/0?retention_days=7", "acme")
        == "redis://h:1/0?namespace=validator:acme&retention_days=7"
    )
    for bad in ("redis://h:1/0?namespace=a&namespace=b", "redis://h:1/0?namespace="):
        with pytest.raises(StoreError, match="one non-empty namespace"):
            url_namespace(bad)  # the store, its tenants and its tokens would each read another
        result = runner.invoke(app, ["audit", "tail", "--store", bad, "--tenant", "acme"])
        assert result.exit_code == 2 and "namespace" in result.stderr
