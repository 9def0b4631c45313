"""A policy document as it is read (TOML or JSON): msgspec records, strict (no coercion: ``"true"`` is not a boolean,
``1`` not a string; an unknown field names the one it most likely meant). :func:`read_document` names every problem
of a refused document by its path (:func:`validator.exceptions.problems_of` reads these records), and builds the
records of a good one."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from validator._types import Risk
from validator.exceptions import FieldProblem, PolicyError, problem_from_msgspec, problems_of
from validator.policy import Ask, IntentBy, Returns

__all__ = ["read_document"]


def read_document(data: Any, source: str) -> _PolicyDoc:
    """``data`` read as a policy document; raises :class:`PolicyError` naming each field and its problem."""
    problems = problems_of(data, _PolicyDoc) + _contradictions(data)
    if not problems:
        try:
            return _resolved(msgspec.convert(data, _PolicyDoc, strict=True))
        except msgspec.ValidationError as exc:  # a value the reader above passed and msgspec did not: its words
            problems = [problem_from_msgspec(exc)]
    raise PolicyError(problems, source=source)


def _contradictions(data: Any) -> list[FieldProblem]:
    """A tool that says both ``guarded`` and ``exempt``, each the same value (``guarded`` means not exempt)."""
    tools = data.get("tools") if isinstance(data, dict) else None
    found = []
    for name, tool in tools.items() if isinstance(tools, dict) else ():
        said = (tool.get("guarded"), tool.get("exempt")) if isinstance(tool, dict) else ()
        if all(type(v) is bool for v in said) and len(set(said)) == 1:
            found.append(FieldProblem(f"tools.{name}", "'guarded' and 'exempt' contradict each other"))
    return found


def _resolved(doc: _PolicyDoc) -> _PolicyDoc:
    """``doc`` with each tool's ``exempt`` as ``guarded`` says it where given (its opposite)."""
    tools = {
        name: msgspec.structs.replace(tool, exempt=not tool.guarded) if tool.guarded is not None else tool
        for name, tool in doc.tools.items()
    }
    return msgspec.structs.replace(doc, tools=tools)


class _Strict(msgspec.Struct, forbid_unknown_fields=True):
    pass


class _ToolDoc(_Strict):
    exempt: bool = False
    risk: Risk = "general"
    targets: list[str] = msgspec.field(default_factory=list)
    intents: list[str] = msgspec.field(default_factory=list)
    description: str = ""
    amounts: list[str] = msgspec.field(default_factory=list)
    currency: str | None = None
    ask: Ask = "when_unsure"
    step_of: list[str] = msgspec.field(default_factory=list)
    delegate: list[str] = msgspec.field(default_factory=list)
    kinds: dict[str, str] = msgspec.field(default_factory=dict)
    content: list[str] = msgspec.field(default_factory=list)
    returns: Returns | None = None
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    intent: IntentBy = "code"
    guarded: bool | None = None


class _SettingsDoc(_Strict):
    low_confidence: Literal["ask_user", "block"] = "ask_user"
    ungrounded_targets: Literal["judge", "block"] = "judge"
    quality: Literal["advise", "ask_user"] = "advise"
    enforce: bool = True
    answer_grant_days: Annotated[int, msgspec.Meta(ge=1, le=3650)] = 30


class _ServerDoc(_Strict):
    trusted: bool = False


class _PolicyDoc(_Strict):
    tools: dict[str, _ToolDoc] = msgspec.field(default_factory=dict)
    settings: _SettingsDoc = msgspec.field(default_factory=_SettingsDoc)
    servers: dict[str, _ServerDoc] = msgspec.field(default_factory=dict)
