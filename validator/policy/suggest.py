"""Proposals for a policy's author, from the tool specs a host already has: never read by the gate.

A host describes its tools to the model with a JSON Schema of their arguments, in one of a few shapes:
OpenAI's function specs (``{"type": "function", "function": {"name", "description", "parameters"}}``, or the
bare ``{"name", "description", "parameters"}``; LangChain's ``convert_to_openai_tool`` writes these), an MCP
server's tool list (``{"tools": [{"name", "description", "inputSchema", "annotations"}]}``), and Anthropic's
tool definitions (``{"name", "description", "input_schema"}``). :func:`read_specs` reads any of them (one spec,
a list, or an object with ``tools``) into :class:`ToolSpec`.

:func:`propose` then suggests, per tool, what the author would otherwise type: intent verbs (from the name and
description, :func:`~validator.language.lexicon.suggest_intents`) and *content* arguments: string arguments
whose names say they hold the words of what is sent (``body``, ``message``, ``subject``, ``title``,
``description``: the pack's text and title argument kinds), and *options* with their defaults
(:func:`option_defaults`: what the schema says an argument is when the agent leaves it out: its ``default``, a
boolean's ``false``; an ``enum`` only with its ``default``). Each is a proposal to review, and nothing changes
until the author copies it into the policy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from validator.exceptions import FieldProblem, InputError
from validator.language import english
from validator.language.lexicon import suggest_intents, tool_words
from validator.policy import Policy, json_value

__all__ = ["Proposal", "ToolSpec", "option_defaults", "propose", "read_specs"]

_CONTENT_KINDS = ("text", "title")
"""The pack's argument kinds whose words name content (``[arguments.text]``, ``[arguments.title]``)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as its host describes it: its name, description and argument schema (JSON Schema ``properties``)."""

    name: str
    description: str = ""
    properties: Mapping[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    annotations: Mapping[str, Any] = field(default_factory=dict)
    """MCP's tool annotations (``readOnlyHint``, ``destructiveHint``…), as the server sent them: hints, never
    trusted for an untrusted server."""


@dataclass(frozen=True, slots=True)
class Proposal:
    """What to consider adding to one tool's entry."""

    tool: str
    intents: tuple[str, ...] = ()
    """Intent verbs, when the policy declares none."""
    content: tuple[str, ...] = ()
    """Arguments that hold the agent's wording (compared only where the user dictates it)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Arguments that say how the call acts, each with its default (any other value must be asked for)."""

    def toml(self) -> str:
        lines = [f"[tools.{_toml_key(self.tool)}]"]
        if self.intents:
            lines.append("intents = " + _toml(list(self.intents)))
        if self.content:
            lines.append("content = " + _toml(list(self.content)))
        if self.options:
            lines.append("options = " + _toml(dict(self.options)))
        return "\n".join(lines)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _toml(value: Any) -> str:
    """A JSON value as TOML (a JSON string is a TOML basic string; ``null`` never reaches here)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(str(k))} = {_toml(v)}" for k, v in value.items()) + " }"
    return "[" + ", ".join(_toml(v) for v in value) + "]"


def read_specs(data: Any, *, source: str = "tools") -> list[ToolSpec]:
    """The tools of a host's spec file (see the module docstring); raises :class:`InputError` naming what is off."""
    items = data.get("tools") if isinstance(data, Mapping) and "tools" in data else data
    if isinstance(items, Mapping):
        items = [items]
    if not isinstance(items, list):
        raise InputError(
            [FieldProblem("", "must be a tool spec, a list of them, or an object with 'tools'")], source=source
        )
    out: list[ToolSpec] = []
    problems: list[FieldProblem] = []
    for i, item in enumerate(items):
        spec = _spec(item)
        if spec is None:
            problems.append(FieldProblem(f"[{i}]", "not a tool spec: no 'name', or its schema is not an object"))
        else:
            out.append(spec)
    if problems:
        raise InputError(problems, source=source)
    return out


def _spec(item: Any) -> ToolSpec | None:
    if not isinstance(item, Mapping):
        return None
    wrapped = item.get("function")
    inner: Mapping[str, Any] = wrapped if isinstance(wrapped, Mapping) else item  # OpenAI's wrapped form
    name = inner.get("name")
    schema: Any = next((inner[k] for k in ("parameters", "inputSchema", "input_schema") if k in inner), {})
    if not isinstance(name, str) or not name or not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    return ToolSpec(
        name,
        str(inner.get("description") or ""),
        dict(properties) if isinstance(properties, Mapping) else {},
        tuple(r for r in required if isinstance(r, str)) if isinstance(required, list) else (),
        dict(item.get("annotations") or {}) if isinstance(item.get("annotations"), Mapping) else {},
    )


def content_arguments(spec: ToolSpec) -> tuple[str, ...]:
    """The string arguments whose names say they hold the words of what is sent: one of the pack's text or title
    words (``body``, ``message``, ``subject``, ``title``…)."""
    kinds = english().arguments
    words = frozenset().union(*(k.words for k in kinds if k.name in _CONTENT_KINDS))
    others = frozenset().union(*(k.words for k in kinds if k.name in _NOT_CONTENT_KINDS)) | _ID_WORDS
    return tuple(
        name
        for name, schema in spec.properties.items()
        if _is_string(schema) and set(tool_words(name)) & words and not set(tool_words(name)) & others
    )


_ID_WORDS = frozenset({"id", "ids", "key", "uuid", "url", "link", "path", "first", "last", "full"})
"""An argument named for an identifier, an address or a person's name is no content, whatever else its name says
(``message_id``, ``user_first_name``)."""
_NOT_CONTENT_KINDS = ("person", "payee", "participant", "account")
"""The pack's argument kinds of who an action reaches or acts as: never content."""


def _is_string(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def option_defaults(spec: ToolSpec, taken: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The arguments (not in ``taken``) whose schema says what they are when left out: a ``default`` that is a
    JSON value TOML can write (not ``null``), or ``false`` for a boolean without one. An ``enum`` without a
    default, or any other argument, is left for the author: code cannot tell a mode's safe value."""
    out: dict[str, Any] = {}
    for name, schema in spec.properties.items():
        if name in taken or not isinstance(schema, Mapping):
            continue
        if "default" in schema and json_value(schema["default"], null=False):  # TOML writes no null
            out[name] = schema["default"]
        elif schema.get("type") == "boolean" and "default" not in schema:
            out[name] = False
    return out


def propose(policy: Policy, specs: list[ToolSpec]) -> Iterator[Proposal]:
    """For each guarded tool (of the policy, or in ``specs`` and not exempt there), what to consider adding."""
    by_name = {s.name: s for s in specs}
    names = sorted({*policy.tools, *by_name})
    for name in names:
        tp = policy.for_tool(name)
        if tp.exempt:
            continue
        spec = by_name.get(name, ToolSpec(name, tp.description))
        intents = () if tp.intents else suggest_intents(name, tp.description or spec.description)
        content = tuple(p for p in content_arguments(spec) if p not in tp.content and p not in tp.targets)
        taken = frozenset((*tp.classified(name), *content))
        options = option_defaults(spec, taken)
        if intents or content or options:
            yield Proposal(name, intents, content, options)
