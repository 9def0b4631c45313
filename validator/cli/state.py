"""Command line for shared state: ``auth grant|list|revoke``, ``audit tail|show|export``, ``store health``.

Every command that touches state takes ``--store URL`` (``redis://host:port/db``), or reads
``VALIDATOR_STORE_URL`` when the flag is absent; ``auth`` and ``audit`` refuse to run on the default
``memory://``, which keeps nothing after the command, unless ``--store memory://`` is said. ``--tenant``
works on a tenant's namespace as the decision service keeps it.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from validator._json import dumps
from validator.cli._common import EXIT_BAD_INPUT, err, open_state_store, open_store_or_exit
from validator.cli._options import StoreOption, TenantOption, YesOption, confirmed, new_app
from validator.cli._safe import clip, plain, safe
from validator.exceptions import StoreError
from validator.gate.authorizations import is_bound
from validator.store.records import StandingAuthorization, new_authorization_id

__all__ = ["parse_expiry", "register"]
_SPAN = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _err(message: str) -> None:
    err().print(f"[red]{escape(message)}[/]")


def parse_expiry(text: str, now: datetime) -> datetime:
    """``90d``, ``12h``, ``30m``, ``2w`` from now, or an ISO date-time."""
    span = _SPAN.match(text.strip())
    try:
        if span:
            when = now + timedelta(**{_UNITS[span.group(2)]: int(span.group(1))})
        else:
            when = datetime.fromisoformat(text)
            when = when if when.tzinfo else when.replace(tzinfo=UTC)
    except ValueError:
        raise typer.BadParameter(
            f"{text!r}: use 90d, 12h, 30m, 2w or an ISO date-time", param_hint="--expires"
        ) from None
    except OverflowError:
        raise typer.BadParameter(f"{text!r} is past the year 9999", param_hint="--expires") from None
    if when <= now:
        raise typer.BadParameter(f"{text!r} is already past: it would grant nothing", param_hint="--expires")
    return when


def _constraints(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        arg, sep, pattern = item.partition("=")
        if not sep or not arg.strip() or not pattern:
            raise typer.BadParameter(
                f"{item!r}: use ARG=PATTERN (a glob such as *@acme.example, or <=500)", param_hint="--where"
            )
        if pattern.lstrip().startswith(("<", ">", "==")) and not is_bound(pattern):
            raise typer.BadParameter(
                f"{item!r}: a bound is an operator and a number, such as <=500 or >0", param_hint="--where"
            )
        out[arg.strip()] = pattern
    return out


def _fail(exc: StoreError) -> typer.Exit:
    _err(str(exc))
    return typer.Exit(1)


auth_app = new_app("Standing authorizations: what the user allowed once.")
audit_app = new_app("The audit log: every verdict, once.")
store_app = new_app("The shared store.")


@auth_app.command("grant")
def grant(
    user: Annotated[str, typer.Option(help="The user who grants it.")],
    tool: Annotated[str, typer.Option(help="A tool name or glob (send_*).")],
    quote: Annotated[str, typer.Option(help="The user's own words that grant it.")],
    where: Annotated[
        list[str] | None, typer.Option(metavar="ARG=PATTERN", help="A constraint on an argument; repeat for more.")
    ] = None,
    expires: Annotated[str | None, typer.Option(help="90d, 12h, 30m, 2w, or an ISO date-time.")] = None,
    store: StoreOption = None,
    tenant: TenantOption = None,
) -> None:
    """Grant a standing authorization; prints its id."""
    now = datetime.now(UTC)
    for value, hint in ((user, "--user"), (tool, "--tool"), (quote, "--quote")):
        if not value.strip():
            raise typer.BadParameter("must not be empty", param_hint=hint)
    auth = StandingAuthorization(
        id=new_authorization_id(),
        user_id=user,
        tool=tool,
        where=_constraints(where or []),
        quote=quote,
        created=now,
        expires=parse_expiry(expires, now) if expires else None,
    )
    opened = open_state_store(store, tenant, "auth grant")
    try:
        opened.put(auth)
    except StoreError as exc:
        raise _fail(exc) from None
    print(auth.id)


@auth_app.command("list")
def list_(
    user: Annotated[str, typer.Option(help="Whose authorizations.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print them as JSON.")] = False,
    store: StoreOption = None,
    tenant: TenantOption = None,
) -> None:
    """List a user's standing authorizations, with their state."""
    try:
        items = open_state_store(store, tenant, "auth list").list(user)
    except StoreError as exc:
        raise _fail(exc) from None
    now = datetime.now(UTC)
    if as_json:
        print(dumps([{**a.to_dict(), "state": a.status(now)} for a in items], indent=2))
        return
    table = Table(title=f"standing authorizations of {user}")
    # An id is never cut (it is what `auth revoke` takes); long text folds, and a cut quote says its length.
    table.add_column("id", no_wrap=True, min_width=max((len(a.id) for a in items), default=2))
    for col in ("tool", "where", "state", "expires", "user's words"):
        table.add_column(col, overflow="fold")
    for a in items:
        expiry = a.expires.strftime("%Y-%m-%d %H:%M") if a.expires else "-"
        where = ", ".join(f"{k}={v}" for k, v in a.where.items()) or "-"
        table.add_row(safe(a.id), safe(a.tool), safe(where), a.status(now), expiry, clip(a.quote, 80))
    width = max(Console().width, 60 + max((len(a.id) for a in items), default=0))
    Console(highlight=False, emoji=False, width=width).print(table)


@auth_app.command("revoke")
def revoke(
    auth_id: Annotated[str, typer.Argument(metavar="ID", help="The authorization's id.")],
    store: StoreOption = None,
    tenant: TenantOption = None,
    yes: YesOption = False,
) -> None:
    """Revoke a standing authorization (every worker sees it at once: nothing caches them); asks first."""
    opened = open_state_store(store, tenant, "auth revoke")
    try:
        found = opened.get(auth_id)
        if found is None:
            _err(f"no standing authorization {auth_id}")
            raise typer.Exit(1)
        what = plain(f"{found.tool} for {found.user_id}: {found.quote[:60]!r}")  # written by whoever granted it
        confirmed(f"Revoke {plain(auth_id)} ({what})?", yes)
        revoked = opened.revoke(auth_id, datetime.now(UTC))
    except StoreError as exc:
        raise _fail(exc) from None
    print(f"revoked {revoked.id} at {revoked.revoked.isoformat() if revoked.revoked else '?'}")


def _line(entry_id: str, payload: dict[str, object]) -> str:
    verdict = payload.get("verdict")
    v = verdict if isinstance(verdict, dict) else {}
    who = f"user={payload.get('user_id')}  {payload.get('tool')}"
    return f"{entry_id}  {payload.get('time')}  {who}  {v.get('decision')} {v.get('code')}"


@audit_app.command("tail")
def tail(
    count: Annotated[int, typer.Option("-n", min=1, help="How many records.")] = 20,
    store: StoreOption = None,
    tenant: TenantOption = None,
) -> None:
    """The newest audit records, one line each."""
    try:
        entries = open_state_store(store, tenant, "audit tail").audit_tail(count)
    except StoreError as exc:
        raise _fail(exc) from None
    if not entries:
        _err("no audit records in this store")
    for entry_id, payload in entries:
        print(_line(entry_id, payload))


@audit_app.command("show")
def show(
    entry_id: Annotated[str, typer.Argument(metavar="ENTRY", help="The audit entry id (from tail).")],
    store: StoreOption = None,
    tenant: TenantOption = None,
) -> None:
    """One audit record, whole, as JSON."""
    try:
        payload = open_state_store(store, tenant, "audit show").audit_get(entry_id)
    except StoreError as exc:
        raise _fail(exc) from None
    if payload is None:
        _err(f"no audit record {entry_id}")
        raise typer.Exit(1)
    print(dumps(payload, indent=2))


@audit_app.command("export")
def export(
    output: Annotated[str, typer.Option("-o", help="A file, or - for standard output.")] = "-",
    batch: Annotated[int, typer.Option(min=1, help="Records read a round trip.")] = 1000,
    store: StoreOption = None,
    tenant: TenantOption = None,
) -> None:
    """Every audit record as JSON lines (``{"entry_id": ..., **record}``), oldest first."""
    opened = open_state_store(store, tenant, "audit export")
    try:
        out = sys.stdout if output == "-" else open(output, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        _err(f"cannot write {output}: {exc.strerror or exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    written, after = 0, None
    try:
        while True:
            entries = opened.audit_after(after, batch)
            for entry_id, payload in entries:
                out.write(dumps({"entry_id": entry_id, **payload}) + "\n")
                written += 1
            if len(entries) < batch:
                break
            after = entries[-1][0]
    except StoreError as exc:
        raise _fail(exc) from None
    finally:
        if out is not sys.stdout:
            out.close()
    Console(stderr=True, highlight=False, emoji=False).print(f"{written} records")


@store_app.command("health")
def health(store: StoreOption = None) -> None:
    """Is the store reachable? Prints what it reports; exits 1 when it is not."""
    report = open_store_or_exit(store).health()
    print(json.dumps(report, indent=2))
    raise typer.Exit(0 if report.get("ok") else 1)


def register(app: typer.Typer) -> None:
    app.add_typer(auth_app, name="auth")
    app.add_typer(audit_app, name="audit")
    app.add_typer(store_app, name="store")
