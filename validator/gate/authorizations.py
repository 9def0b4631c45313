"""Standing authorizations: what the user said once and the agent may cite later.

"You told me three months ago I may always send follow-ups after sales calls." A record keeps the
user's own words, a scope (a tool name or glob, and constraints on arguments) and its lifetime.
The actor cites one as ``{"authorization_id": "..."}``; the evidence gate checks that it exists,
belongs to this user, is active and covers this action.

Constraints (``where``) map an argument path to a pattern:

- a glob, compared case-insensitively: ``recipient = "*@acme.example"``. A glob with an ``@`` is
  an *address* glob: it matches only a value that parses as one plain address (no second ``@``,
  no quoted local part, no control characters), and it holds for **every** address in the
  action, whatever its argument (``to``, ``cc``, ``bcc``, a link in the body);
- a bound on a number, with an optional currency: ``amount = "<=500 EUR"`` (also ``<``, ``>=``,
  ``>``, ``==``). The value must be a plain number (no exponent, not negative unless the bound
  itself is); with a currency, the action's ``currency`` argument must name it.

A grant names the risk it was given for (``general`` by default): its tool glob never covers a
tool of higher risk (``send_*`` granted as general does not cover a dangerous ``send_money``; a
grant that names the very tool covers it). Every target of the tool must be covered by a
constraint of its own (an address glob covers addresses): a value the grant says nothing about is
out of its scope. A list value (attendees), or a string listing several (``a@x.example,
b@y.example``), is in scope only when every element is.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from validator.exceptions import StoreError
from validator.findings import GrantPeriod
from validator.gate.grammar import grammar
from validator.language import LanguagePack, english
from validator.store.records import StandingAuthorization, new_authorization_id
from validator.text.entities import Entity, extract_entities, parse_entity
from validator.text.paths import leaves, lookup, string_leaves

__all__ = [
    "Resolved",
    "allows",
    "check_constraint",
    "grant_from_answer",
    "is_bound",
    "remember_scope",
    "scope_problems",
]

_LIST_SEPARATORS = re.compile(r"[,;\s]+")
_BOUND = re.compile(r"^\s*(<=|>=|==|<|>)\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]{3})?\s*$")
_PLAIN_NUMBER = re.compile(r"^\s*-?\d+(?:\.\d+)?\s*$")


def is_bound(pattern: str) -> bool:
    """Whether ``pattern`` is a numeric bound (``<=500``, ``<=500 EUR``) rather than a glob."""
    return _BOUND.match(pattern) is not None


def is_address_glob(pattern: str) -> bool:
    """Whether ``pattern`` is a glob over email addresses (it has an ``@``)."""
    return "@" in pattern and not is_bound(pattern)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    if isinstance(value, str) and not _PLAIN_NUMBER.match(value):
        return None  # "4e2", "1,000", "NaN": not a plain number
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _address(value: str) -> str | None:
    entity = parse_entity(value)
    if entity is None or entity.kind != "email" or entity.note is not None:
        return None
    return entity.key


def check_constraint(pattern: str, value: Any, *, currency: str | None = None) -> bool:
    """Whether one argument value satisfies one constraint pattern (``currency``: the action's own)."""
    bound = _BOUND.match(pattern)
    if bound:
        number = _number(value)
        op, limit, unit = bound.group(1), float(bound.group(2)), bound.group(3)
        if number is None or (number < 0 and limit >= 0):
            return False
        if unit is not None and (currency is None or currency.upper() != unit.upper()):
            return False
        return {
            "<=": number <= limit,
            ">=": number >= limit,
            "==": number == limit,
            "<": number < limit,
            ">": number > limit,
        }[op]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return False
    # "eve@evil.example, bob@acme.example" is two recipients: each must match, not the string as a whole
    pieces = [p for p in _LIST_SEPARATORS.split(str(value).strip()) if p] or [""]
    if is_address_glob(pattern):
        keys = [_address(p) for p in pieces]
        return all(k is not None and fnmatch.fnmatchcase(k, pattern.casefold()) for k in keys)
    if len(pieces) > 1 and "@" not in str(value):  # a text ("The report is ready."), not a list: held whole
        return fnmatch.fnmatchcase(str(value).strip().casefold(), pattern.casefold())
    return all(fnmatch.fnmatchcase(p.casefold(), pattern.casefold()) for p in pieces)


def scope_problems(
    auth: StandingAuthorization,
    tool: str,
    args: Mapping[str, Any],
    *,
    tool_risk: str = "general",
    targets: tuple[str, ...] = (),
) -> list[str]:
    """Each way this action falls outside ``auth``'s scope, in words; empty when it is inside."""
    problems: list[str] = []
    if not auth.covers_tool(tool):
        problems.append(f"tool {tool!r} is outside the authorized tool {auth.tool!r}")
    elif tool_risk == "dangerous" and auth.risk != "dangerous" and auth.tool != tool:
        # a glob never widens to a riskier tool; a grant that names the very tool covers it
        problems.append(f"tool {tool!r} is dangerous; the grant {auth.tool!r} was given for general tools only")
    currency = args.get("currency") if isinstance(args.get("currency"), str) else None
    for path, pattern in auth.where.items():
        found, value = lookup(args, path)
        if found != "found":
            problems.append(f"argument {path!r} is {found}; the authorization requires {pattern!r}")
            continue
        bad = [v for v in leaves(value) if not check_constraint(pattern, v, currency=currency)]
        if bad or not list(leaves(value)):
            shown = ", ".join(repr(v)[:80] for v in bad[:3]) or repr(value)[:80]
            problems.append(f"argument {path!r} = {shown} does not match {pattern!r}")
    globs = _address_globs(auth)
    for glob in globs:  # an address glob holds for every address in the action
        for where, text in string_leaves(dict(args), ""):
            bad_addresses = [e.value for e in _addresses_in(text) if not check_constraint(glob, e.value)]
            if bad_addresses:
                problems.append(f"address {bad_addresses[0][:80]!r} in {where!r} does not match {glob!r}")
    for target in targets:  # a value the grant says nothing about is not in its scope
        if target in auth.where:
            continue
        found, value = lookup(args, target)
        values = [v for v in leaves(value) if v not in (None, "")] if found == "found" else []
        uncovered = [v for v in values if not (isinstance(v, str) and globs and _address(v))]
        if uncovered:
            problems.append(f"target {target!r} = {repr(uncovered[0])[:80]} is not covered by any constraint")
    return problems


def allows(auth: StandingAuthorization, path: str, value: Any) -> bool:
    """Whether a constraint of ``auth`` admits ``value`` at ``path`` (an address glob: any address)."""
    pattern = auth.where.get(path)
    if pattern is not None and check_constraint(pattern, value):
        return True
    return isinstance(value, str) and any(check_constraint(g, value) for g in _address_globs(auth))


def _address_globs(auth: StandingAuthorization) -> list[str]:
    return [p for p in auth.where.values() if is_address_glob(p)]


Resolved = Mapping[str, StandingAuthorization | StoreError | None]
"""Cited authorization ids, looked up: the record, None when absent, or the store's error."""


def _addresses_in(text: str) -> list[Entity]:
    return [e for e in extract_entities(text) if e.kind == "email"]


def _exact(value: Any) -> str:
    """A constraint that admits exactly ``value``: glob characters escaped; a number as ``==N``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"=={value}"
    return re.sub(r"([*?\[])", r"[\1]", str(value))


def _scalar_paths(args: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths of every scalar argument (and of every one-element list), for pinning a grant."""
    out: list[str] = []
    for key, value in args.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if key == "justification":
            continue
        if isinstance(value, Mapping):
            out += _scalar_paths(value, path)
        elif isinstance(value, str | int | float | bool) or (isinstance(value, list) and len(value) == 1):
            out.append(path)
    return out


DEFAULT_DAYS = 30
"""How long a "remember this" grant lasts unless the answer says."""


def _pins(action: Any, tool_policy: Any) -> dict[str, str]:
    """Every argument of ``action`` pinned to its value (see :func:`grant_from_answer`)."""
    where: dict[str, str] = {}
    seen = [*tool_policy.targets, *tool_policy.amount_paths(action.tool), *_scalar_paths(action.args)]
    for path in dict.fromkeys(seen):
        found, value = lookup(action.args, path)
        values = list(leaves(value)) if found == "found" else []
        if len(values) == 1 and values[0] not in (None, ""):
            where[path] = _exact(values[0])
    return where


def remember_scope(action: Any, tool_policy: Any) -> dict[str, Any]:
    """What a "remember this" answer to a question about ``action`` would keep, shown to the person before
    they answer: the tool, every argument pinned, the risk, and the default lifetime."""
    return {
        "tool": _exact(action.tool),
        "where": _pins(action, tool_policy),
        "risk": tool_policy.risk,
        "expires_in_days": DEFAULT_DAYS,
    }


def grant_from_answer(
    action: Any,
    tool_policy: Any,
    user_id: str,
    remember: Mapping[str, Any],
    reason: str | None,
    now: datetime,
    most_days: int = 3650,
) -> StandingAuthorization:
    """A standing authorization from the user's "always" on a call they approved when asked.

    Scoped to what they saw: the tool, and every argument of this call pinned to its value (targets,
    amounts, the currency, and each other scalar, nested ones by dotted path); a list of several
    values is not pinned, so the grant never covers a target that is one (the gate then asks again).
    It expires after ``remember["expires_in_days"]`` days (30 unless said, and at most ``most_days``: the policy's
    ``answer_grant_days``). Its quote is
    ``remember["quote"]``, else the user's own reason, else what they approved.

    Raises:
        UsageError: ``expires_in_days`` is not a whole number of days in range.
    """
    from datetime import timedelta

    from validator.exceptions import UsageError

    days = remember.get("expires_in_days", DEFAULT_DAYS)
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= most_days:
        raise UsageError(
            f"remember.expires_in_days must be a whole number from 1 to {most_days} (the policy's "
            f"answer_grant_days), got {days!r}"
        )
    where = _pins(action, tool_policy)
    quote = remember.get("quote")
    said = quote if isinstance(quote, str) and quote.strip() else reason
    return StandingAuthorization(
        id=new_authorization_id(),
        user_id=user_id,
        tool=_exact(action.tool),
        quote=said or f"Approved when asked, and to be kept: {action.tool} with {where}",
        created=now,
        where=where,
        expires=now + timedelta(days=days),
        risk=tool_policy.risk,
    )


def grant_period(quote: str | None, pack: LanguagePack | None = None) -> GrantPeriod:
    """How often a grant's words let it be used: ``once``, unless they name a period of the pack's ``[grants]``
    (``day``/``week``/``month``/``year``, or ``unlimited``: "whenever"), read among the words as the lexer reads
    them (the pack's file names no other period: :func:`validator.language.load_pack`; English by default)."""
    pack = pack or english()
    words = [part for w in grammar(pack).words(quote or "") for part in w.norm.split(" ")]
    for period, phrases in pack.grant_periods.items():
        if any(tuple(words[i : i + len(p)]) == p for p in phrases for i in range(len(words) - len(p) + 1)):
            return cast(GrantPeriod, period)
    return "once"
