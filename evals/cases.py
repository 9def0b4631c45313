"""Eval cases: a check input, with what it should give and why it is in the suite.

One case a line in a JSONL file (or a JSON list), in the standalone check format plus::

    {"id": "vendor-invoice-pay",              # unique in the suite
     "title": "A vendor email demands immediate payment; the agent pays it",
     "expected": "block" | "pass",            # block: it must not be approved
     "risk": "dangerous" | "general",         # the policy's, or riskier (data leaving by email is dangerous)
     "tags": ["vendor-invoice", "payment"],   # the patterns it covers
     "messages": [...], "action": {...}, "user_id": "u-1", "policy": {...}?,
     "expect_suggestion": "archive_thread"?,  # a block's suggested next step must name it
     "authorizations": [ {standing authorization record} ]?,   # the store the case runs against
     "notes": "..."?}

``case-schema.json`` (``validator schema eval-case``) documents it. :func:`load_cases` rejects a
malformed case with the file, the line and the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError
from validator.evals._files import json_items

from validator.exceptions import FieldProblem, InputError, problems_from_pydantic
from validator.inputs.checkinput import CheckInput
from validator.policy import Policy
from validator.store.memory import MemoryAuthorizationStore
from validator.store.records import StandingAuthorization

__all__ = ["CaseDoc", "EvalCase", "check_case", "load_cases"]


class _AuthorizationDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    user_id: str
    tool: str
    where: dict[str, str] = Field(default_factory=dict)
    quote: str
    created: AwareDatetime
    expires: AwareDatetime | None = None
    revoked: AwareDatetime | None = None


class CaseDoc(BaseModel):
    """The JSON shape of a case (the check input's keys, plus the case's own)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    title: str = ""
    expected: Literal["block", "pass"]
    risk: Literal["dangerous", "general"]
    tags: list[str] = Field(default_factory=list)
    messages: list[dict[str, Any]]
    action: dict[str, Any]
    policy: dict[str, Any] | None = None
    user_id: str | None = None
    expect_suggestion: str | None = None
    authorizations: list[_AuthorizationDoc] = Field(default_factory=list)
    notes: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class EvalCase:
    """A loaded, checked case."""

    id: str
    title: str
    expected: Literal["block", "pass"]
    risk: Literal["dangerous", "general"]
    tags: tuple[str, ...]
    check: CheckInput
    policy: Policy
    expect_suggestion: str | None = None
    authorizations: tuple[StandingAuthorization, ...] = ()
    notes: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def store(self) -> MemoryAuthorizationStore:
        """A fresh store holding the case's standing authorizations."""
        store = MemoryAuthorizationStore()
        for auth in self.authorizations:
            store.put(auth)
        return store


def _case(doc: CaseDoc, raw: dict[str, Any], default_policy: Policy, where: str) -> EvalCase:
    try:
        check = CheckInput.from_dict({k: raw[k] for k in ("messages", "action", "policy", "user_id") if k in raw})
    except InputError as exc:
        raise InputError([FieldProblem(p.path, p.problem) for p in exc.problems], source=where) from None
    policy = check.policy or default_policy
    tool_policy = policy.for_tool(check.action.tool)
    if tool_policy.exempt:
        raise InputError(
            [FieldProblem("action.tool", f"{check.action.tool!r} is exempt: nothing to judge")], source=where
        )
    if tool_policy.risk == "dangerous" and doc.risk == "general":
        raise InputError(
            [FieldProblem("risk", f"says 'general' but the policy makes {check.action.tool!r} 'dangerous'")],
            source=where,
        )
    if doc.risk == "dangerous" and tool_policy.risk == "general":
        # a case may be riskier than its tool's class (data leaving through a general tool): the validator
        # then treats the tool as dangerous for this case, and the case is scored as dangerous
        tools = {**policy.tools, check.action.tool: replace(tool_policy, risk="dangerous")}
        policy = Policy(tools, policy.settings)
    auths = tuple(StandingAuthorization(**dict(a)) for a in doc.authorizations)  # the fields are the record's
    return EvalCase(
        id=doc.id,
        title=doc.title,
        expected=doc.expected,
        risk=doc.risk,
        tags=tuple(doc.tags),
        check=check,
        policy=policy,
        expect_suggestion=doc.expect_suggestion,
        authorizations=auths,
        notes=doc.notes,
        raw=raw,
    )


def check_case(raw: Any, policy: Policy, where: str) -> EvalCase:
    """One case object, checked as :func:`load_cases` checks each line (``eval add`` uses it too)."""
    if not isinstance(raw, dict):
        raise InputError([FieldProblem("", f"a case is an object, got {type(raw).__name__}")], source=where)
    try:
        doc = CaseDoc.model_validate(raw)
    except ValidationError as exc:
        raise InputError(problems_from_pydantic(exc), source=where) from None
    return _case(doc, raw, policy, where)


def load_cases(path: str | Path, policy: Policy | None = None) -> list[EvalCase]:
    """Load and check every case of a ``.jsonl`` (or ``.json``) file.

    Raises:
        InputError: naming the file and line (``evals/cases.jsonl:12``) and the field.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError([FieldProblem("", f"no case file at {path}")], source=str(path))
    default_policy = policy or Policy()
    cases: list[EvalCase] = []
    seen: dict[str, str] = {}
    for where, raw in json_items(path, "case file"):
        case = check_case(raw, default_policy, where)
        if case.id in seen:
            raise InputError([FieldProblem("id", f"{case.id!r} is already used at {seen[case.id]}")], source=where)
        seen[case.id] = where
        cases.append(case)
    if not cases:
        raise InputError([FieldProblem("", "the file holds no cases")], source=str(path))
    return cases
