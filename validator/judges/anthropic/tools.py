"""The two tools an agent carries from its first turn so the validator can share its prompt cache.

Anthropic's cache key covers ``tools`` byte for byte. The validator's request must send the very
``tools`` the agent sends, so the agent's tools include, from turn one, a client-side search tool
and the validator tool marked ``defer_loading: true``: the agent never sees the validator tool
(deferred tools stay out of its prompt until a ``tool_reference`` surfaces them), and the
validator request surfaces it with a fabricated search result.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from validator.exceptions import UsageError
from validator.inputs.action import justification_schema
from validator.judges.model import DEFAULT_VALIDATOR_TOOL, VERDICT_DESCRIPTION, verdict_schema
from validator.policy import Policy

__all__ = ["DEFAULT_SEARCH_TOOL", "DEFAULT_VALIDATOR_TOOL", "justify", "prepare_tools", "search_tool", "validator_tool"]

DEFAULT_SEARCH_TOOL = "tool_search"


def validator_tool(
    name: str = DEFAULT_VALIDATOR_TOOL, *, quality: bool = True, deferred: bool = True
) -> dict[str, Any]:
    """The validator tool: strict, its input schema is the verdict; deferred unless said otherwise."""
    tool: dict[str, Any] = {
        "name": name,
        "description": VERDICT_DESCRIPTION,
        "input_schema": verdict_schema(quality=quality),
        "strict": True,
    }
    if deferred:
        tool["defer_loading"] = True
    return tool


def search_tool(name: str = DEFAULT_SEARCH_TOOL) -> dict[str, Any]:
    """A client-side tool search tool (never deferred: a request needs one tool that is not)."""
    return {
        "name": name,
        "description": "Search for additional tools by name or keyword; returns references to matching tools.",
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Words to look for in tool names."}},
            "required": ["query"],
        },
    }


def justify(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of an Anthropic tool definition whose input requires ``justification``."""
    out = copy.deepcopy(dict(tool))
    schema = out.setdefault("input_schema", {"type": "object"})
    schema.setdefault("properties", {})["justification"] = justification_schema()
    required = schema.setdefault("required", [])
    if "justification" not in required:
        required.append("justification")
    return out


def prepare_tools(
    tools: Sequence[Mapping[str, Any]],
    *,
    validator_name: str = DEFAULT_VALIDATOR_TOOL,
    search_name: str = DEFAULT_SEARCH_TOOL,
    quality: bool = True,
    policy: Policy,
) -> list[dict[str, Any]]:
    """The agent's tools with the deferred validator tool and the search tool appended (in that order: the last
    tool may carry a cache breakpoint, and a deferred one cannot).

    Every tool ``policy`` guards (not exempt) also gets a required ``justification`` argument, the
    same schema and guidance (in the parameter's description) as every other integration gives it;
    the policy is required because an agent whose guarded tools lack it never sends one, and every
    guarded call would be refused. Call it once, at the start of a task, and send the result on every
    agent turn. Calling it
    again on its own output returns an equal list. Put cache breakpoints on ``system`` or on the
    messages (a deferred tool cannot carry ``cache_control``).

    Raises:
        UsageError: a tool is not an object with a name, or an agent tool already uses
            one of the two names for something else.
    """
    # The deferred validator tool before the search tool: a request's last tool is where a cache breakpoint goes
    # (LangChain's AnthropicPromptCachingMiddleware puts one there), and a deferred tool cannot carry one.
    ours = {validator_name: validator_tool(validator_name, quality=quality), search_name: search_tool(search_name)}
    out: list[dict[str, Any]] = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
            raise UsageError(f"tools[{i}] must be an object with a string 'name'")
        name = tool["name"]
        if name in ours:
            if dict(tool) != ours[name]:
                raise UsageError(
                    f"tools[{i}] is named {name!r}, which the validator needs; pick other names with "
                    "validator_name= / search_name="
                )
            continue
        guarded = policy is not None and not policy.for_tool(name).exempt
        out.append(justify(tool) if guarded else copy.deepcopy(dict(tool)))
    return [*out, *(copy.deepcopy(t) for t in ours.values())]
