"""``validator serve`` (the HTTP decision service) and ``validator token`` (its bearer tokens)."""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from validator.cli._options import StoreOption, YesOption, confirmed, new_app
from validator.exceptions import StoreError, UsageError
from validator.extras import missing_extra

__all__ = ["register"]

CONFIG_ENV = "VALIDATOR_SERVICE_CONFIG"
token_app = new_app("Bearer tokens of the decision service (validator serve).")


def _err(text: str) -> None:
    print(f"validator: {text}", file=sys.stderr)


def _service() -> Any:
    try:
        import uvicorn  # noqa: F401 - serve runs it; checked here so that a missing one is the same one line

        import validator.integrations.service as service
        import validator.integrations.service.app  # noqa: F401 - fastapi: the package imports it only when used
    except ImportError as exc:
        _err(str(missing_extra("service", "the decision service", exc)))
        raise typer.Exit(2) from None
    return service


def app_from_environment() -> Any:
    """The ASGI app of one worker, from the settings ``validator serve`` put in the environment."""
    service = _service()
    settings = json.loads(os.environ[CONFIG_ENV])
    from validator.policy import Policy

    policy = Policy.load(settings["policy"]) if settings.get("policy") else None
    _structured_logs()
    config = service.ServiceConfig(
        store_url=_resolved(settings["store"]),
        policy=policy,
        rate_per_second=settings["rate"],
        burst=settings["burst"],
        request_policy_tenants=frozenset(settings.get("request_policy") or ()),
        trusted_user_tenants=frozenset(settings.get("trust_user_id") or ()),
        tenant_checks=int(settings.get("tenant_checks") or 3),
        allow_volatile_store=bool(settings.get("allow_volatile_store")),
    )
    return service.create_app(config)


def _resolved(store: Any) -> str:
    """The store URL a worker opens: given whole, or read from the file or environment variable the command
    named (so that a password never stands on a command line or in the settings a worker inherits)."""
    if isinstance(store, str):
        return store
    if "file" in store:
        return _first_line(Path(store["file"]).read_text(encoding="utf-8"))
    return os.environ[store["env"]].strip()


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _store_source(store: str | None, store_file: Path | None, store_env: str | None) -> tuple[str, Any]:
    """``(url, what the settings carry)``: the URL, and either the URL itself or where to read it again."""
    given = [x for x in (store, store_file, store_env) if x]
    if len(given) > 1:
        raise UsageError("give the store once: --store, --store-file or --store-env")
    if store_file is not None:
        try:
            url = _first_line(store_file.read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"--store-file {store_file}: {exc.strerror or exc}") from None
        if not url:
            raise UsageError(f"--store-file {store_file}: the file holds no store URL")
        return url, {"file": str(store_file.resolve())}
    if store_env is not None:
        url = os.environ.pop(store_env, "").strip()  # the workers inherit the environment: not this
        if not url:
            raise UsageError(f"--store-env {store_env}: that environment variable is not set or empty")
        return url, {"file": _private_copy(url)}
    url = store or "memory://"
    return url, ({"file": _private_copy(url)} if _has_secret(url) else url)


def _has_secret(url: str) -> bool:
    """Whether a store URL carries a password (in its user part or its query): the workers then read it from a
    private file, never from the settings they inherit in their environment."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    return bool(parts.password) or "password" in parse_qs(parts.query)


def _private_copy(url: str) -> str:
    """A file only this user reads, holding ``url`` for the workers, removed when the command ends."""
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="validator-serve-")  # mode 0700
    path = Path(folder) / "store-url"
    path.touch(mode=0o600)
    path.write_text(url + "\n", encoding="utf-8")
    atexit.register(shutil.rmtree, folder, True)
    return str(path)


def _structured_logs() -> None:
    """The service's own log lines (one JSON object a request) on standard error."""
    import logging

    logger = logging.getLogger("validator.service")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind: loopback unless told otherwise.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8321,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="memory:// (default) or redis://host:port/db (?cluster=true for a Redis Cluster). Read from this "
            "flag only (never from VALIDATOR_STORE_URL: --store-env VALIDATOR_STORE_URL says so); a password in "
            "it reaches the workers through a file only this user reads.",
        ),
    ] = None,
    store_file: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH",
            help="A file whose first line is the store URL (with its password): kept off the command line.",
        ),
    ] = None,
    store_env: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="An environment variable holding the store URL (with its password): kept off the command line.",
        ),
    ] = None,
    policy: Annotated[Path | None, typer.Option(help="Policy file (TOML or JSON).")] = None,
    workers: Annotated[int, typer.Option(help="Worker processes (more than one needs --store redis://...).")] = 1,
    judge: Annotated[str, typer.Option(help="Judge: strict (offline, the embedded default).")] = "strict",
    rate: Annotated[float, typer.Option(help="Checks a token may make a second, sustained.")] = 50.0,
    burst: Annotated[int, typer.Option(help="Checks a token may make at once.")] = 100,
    tenant_checks: Annotated[
        int,
        typer.Option(
            min=1,
            help="Checks of one tenant a worker runs at once (a tenant's heavy checks never hold more of the "
            "threads every tenant shares); beyond it a 429 with Retry-After.",
        ),
    ] = 3,
    trust_user_id: Annotated[
        list[str] | None,
        typer.Option(
            metavar="TENANT",
            help="A tenant whose tokens not bound to users may name any user_id (repeatable; '*' for every "
            "tenant). Every other tenant's token checks for the users it is bound to (token create --user), or "
            "names none (403).",
        ),
    ] = None,
    allow_request_policy: Annotated[
        list[str] | None,
        typer.Option(
            metavar="TENANT",
            help="A tenant whose check inputs may carry their own policy (repeatable). Every other tenant's "
            "checks run under --policy, and a check carrying a policy is refused (400).",
        ),
    ] = None,
    allow_volatile_store: Annotated[
        bool,
        typer.Option(
            help="Serve on a Redis that keeps nothing across a restart (no AOF, no snapshots), or that may evict "
            "keys (a maxmemory-policy other than noeviction): a restart or an eviction there wipes tokens, audit "
            "and the request ledger. For throwaway services only."
        ),
    ] = False,
    token_file: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH",
            help="With memory://, write the three bearer tokens to PATH (a new file, mode 0600) instead of "
            "printing them on standard output.",
        ),
    ] = None,
) -> None:
    """Run the decision service: POST /v1/check and the rest (see the README)."""
    service = _service()
    import uvicorn

    try:
        url, source = _store_source(store, store_file, store_env)
    except UsageError as exc:
        _err(str(exc))
        raise typer.Exit(2) from None
    if judge != "strict":
        _err("validator serve runs the strict judge; a model judge is configured in code (ServiceConfig.judge)")
        raise typer.Exit(2)
    if workers > 1 and url.startswith("memory:"):
        _err("--workers above 1 needs a shared store (--store redis://...): memory:// is one process's")
        raise typer.Exit(2)
    if policy is not None:
        from validator.exceptions import PolicyError
        from validator.policy import Policy

        try:
            Policy.load(policy)
        except PolicyError as exc:
            _err(str(exc))
            raise typer.Exit(2) from None
    allowed = sorted(set(allow_request_policy or ()))
    settings = {
        "store": source,
        "policy": str(policy) if policy else None,
        "rate": rate,
        "burst": burst,
        "request_policy": allowed,
        "trust_user_id": sorted(set(trust_user_id or ())),
        "tenant_checks": tenant_checks,
        "allow_volatile_store": allow_volatile_store,
    }
    if not url.startswith("memory:"):
        from validator.exceptions import SetupError

        try:  # before any worker starts: a volatile Redis is refused with one line, not a traceback per worker
            service.check_persistence(service.ServiceConfig(store_url=url, allow_volatile_store=allow_volatile_store))
        except SetupError as exc:
            _err(str(exc))
            raise typer.Exit(2) from None
    unbound = _cannot_bind(host, port)
    if unbound is not None:  # before any token is made or shown: nothing was served with it
        _err(f"cannot listen on {host}:{port}: {unbound}")
        raise typer.Exit(2)
    os.environ[CONFIG_ENV] = json.dumps(settings)
    _structured_logs()
    if url.startswith("memory:"):  # its tokens live in this process: make them, show them once
        tenants = service.MemoryTenants()
        made = [(who, tenants.create("default", scopes)) for who, scopes in _TOKENS]
        try:
            _show_tokens(made, token_file)
        except OSError as exc:
            _err(f"cannot write {token_file}: {exc.strerror or exc}")
            raise typer.Exit(2) from None
        config = service.ServiceConfig(
            store_url=url,
            policy=_policy(policy),
            rate_per_second=rate,
            burst=burst,
            request_policy_tenants=frozenset(allowed),
            trusted_user_tenants=frozenset(trust_user_id or ()),
            tenant_checks=tenant_checks,
        )
        app = service.create_app(config, tenants=tenants)
        uvicorn.run(app, host=host, port=port, timeout_graceful_shutdown=30, log_level="info", access_log=False)
        return
    uvicorn.run(
        "validator.cli.serve:app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        timeout_graceful_shutdown=30,
        log_level="info",
        access_log=False,  # the service logs each request itself, as one JSON line
    )


_TOKENS = (
    ("agent (check)", ["check"]),
    ("answers (answer)", ["answer"]),
    ("operator (grant, admin)", ["grant", "admin"]),
)
"""The tokens ``validator serve`` makes on ``memory://``: who holds each, and its scopes."""


def _cannot_bind(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (taken, not an address of this machine), or None."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(infos[0][4])
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _show_tokens(made: list[tuple[str, str]], path: Path | None) -> None:
    """The tokens as a short block: on standard output, or in a new file of mode 0600 at ``path``."""
    width = max(len(who) for who, _ in made)
    lines = [f"{who:<{width}}  {token}" for who, token in made]
    if path is not None:
        _write_new(path, "\n".join(lines) + "\n")
        print(f"validator serve: the bearer tokens of tenant 'default' are in {path} (mode 0600)", flush=True)
        return
    print("validator serve: bearer tokens of tenant 'default' (shown once):", *lines, sep="\n  ", flush=True)


def _write_new(path: Path, text: str) -> None:
    """``text`` in a new file of mode 0600 at ``path``, whole when it appears: written aside in the same folder,
    then linked in (a reader waiting for the file never reads it half written; a file already there is never
    replaced: ``FileExistsError``)."""
    aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.link(aside, path)
    finally:
        os.unlink(aside)


def _policy(path: Path | None) -> Any:
    from validator.policy import Policy

    return Policy.load(path) if path else None


@token_app.command("create")
def create(
    tenant: Annotated[str, typer.Option(help="The tenant (a store namespace of its own).")],
    store: StoreOption = None,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            metavar="SCOPE",
            help="What the token may do (repeatable): check, answer, grant, admin. Without it: check only, "
            "so an agent's token can never grant itself a standing authorization.",
        ),
    ] = None,
    user: Annotated[
        list[str] | None,
        typer.Option(
            metavar="USER_ID",
            help="Bind the token to a user (repeatable): it checks only calls naming one of its users, and sees "
            "and answers only their questions (scopes check and answer only).",
        ),
    ] = None,
) -> None:
    """Make a token for TENANT and print it (once: the store keeps only its hash)."""
    url = store or "memory://"
    if url.startswith("memory:"):
        _err("a token in memory:// dies with this command; pass --store redis://... (validator serve prints its own)")
        raise typer.Exit(2)
    try:
        print(_service().tenants_for(url).create(tenant, scope or ["check"], users=user or ()))
    except (StoreError, UsageError) as exc:
        _err(str(exc))
        raise typer.Exit(2) from None


def _token_store(store: str | None, command: str) -> Any:
    """The service's token store beside ``store``; a memory one dies with the command, so it is refused."""
    url = store or "memory://"
    if url.startswith("memory:"):
        _err(
            f"{command}: memory:// tokens live in the validator serve process that printed them; pass --store redis://..."
        )
        raise typer.Exit(2)
    try:
        return _service().tenants_for(url)
    except StoreError as exc:
        _err(f"{command}: {exc}")
        raise typer.Exit(2) from None


@token_app.command("list")
def list_tokens(
    store: StoreOption = None,
    tenant: Annotated[str | None, typer.Option(metavar="TENANT", help="Only this tenant's tokens.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print them as JSON.")] = False,
) -> None:
    """Every token as its SHA-256 (the store keeps nothing else of it), with its tenant and scopes."""
    try:
        found = [(h, who) for h, who in _token_store(store, "token list").list() if tenant in (None, who.tenant)]
    except StoreError as exc:
        _err(str(exc))
        raise typer.Exit(2) from None
    if as_json:
        rows = [
            {"sha256": h, "tenant": who.tenant, "scopes": sorted(who.scopes), "users": sorted(who.users)}
            for h, who in found
        ]
        print(json.dumps(rows, indent=2))
        return
    if not found:
        _err("no tokens" + (f" of tenant {tenant}" if tenant else ""))
    for digest, who in found:  # one line each, whatever the terminal's width: the hash is what revoke takes
        bound = "".join(f"  user={u!r}" for u in sorted(who.users))
        print(f"{digest}  {who.tenant}  {','.join(s for s in _service().SCOPES if s in who.scopes)}{bound}")


@token_app.command("revoke")
def revoke(
    token: Annotated[str, typer.Argument(metavar="TOKEN", help="The token, or its SHA-256 (from token list).")],
    store: StoreOption = None,
    yes: YesOption = False,
) -> None:
    """End a token at once, for every service process on the store; asks first."""
    tokens = _token_store(store, "token revoke")
    try:
        who = tokens.describe(token)
        if who is None:
            _err("no such token")
            raise typer.Exit(1)
        digest = _service().token_key(token)
        scopes = ",".join(sorted(who.scopes))
        confirmed(f"Revoke token {digest[:16]}… of tenant {who.tenant} ({scopes})?", yes)
        tokens.revoke(token)
    except StoreError as exc:
        _err(str(exc))
        raise typer.Exit(2) from None
    print(f"revoked token {digest[:16]}… of tenant {who.tenant}; every service process refuses it from now on")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.add_typer(token_app, name="token")
