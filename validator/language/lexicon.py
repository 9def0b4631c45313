"""The built-in lexicon: which verbs ask for which kind of action.

A tool the policy gives no intents is asked for by the verbs of its *families*, read from the words
of its name and, failing that, of its description: ``send_email`` is a message tool (email, reply,
forward, tell, let … know, …), ``send_money`` a payment tool (pay, transfer, wire, settle, …).
The request grammar (:mod:`validator.gate.requests`) matches the verbs in any inflection (``paid``,
``sent``), so the lexicon lists base forms only. A payment tool never borrows the message verbs
("send" alone does not ask for money to leave). The verbs and the name words live in the language
pack (:mod:`validator.language`), with every other English word list of the gate.
"""

from __future__ import annotations

import re

from validator.language import english, english_verb_lemmas

__all__ = ["FAMILIES", "TRIGGERS", "default_intents", "families_of", "own_name", "suggest_intents", "tool_words"]

FAMILIES: dict[str, tuple[str, ...]] = english().families
"""Verb families, base forms; ``*`` stands for up to four words (``let * know``). From the language pack."""

TRIGGERS: dict[str, frozenset[str]] = english().triggers
"""Words of a tool's name (or description) that put it in a family. From the language pack."""


def tool_words(text: str) -> list[str]:
    """The lower-case words of a tool name (``send_email``, ``deleteThread``) or a description."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", text)]


def families_of(tool: str, description: str = "") -> list[str]:
    """The families a tool belongs to: from its name, else from its description."""
    for text in (tool, description):
        words = set(tool_words(text))
        found = [family for family, triggers in TRIGGERS.items() if words & triggers]
        if "payment" in found and "message" in found:
            found.remove("message")  # "send_money" is a payment: "send" alone does not ask for it
        if found:
            return found
    return []


def default_intents(tool: str, description: str = "") -> tuple[str, ...]:
    """Intent words for a tool the policy gives none: its families' verbs, else the verb of its name.

    ``send_email`` gives the message verbs (email, send, reply, forward, tell, ...); ``send_money``
    the payment verbs; ``frobnicate_widget`` gives ``("frobnicate",)``.
    """
    families = families_of(tool, description)
    if families:
        return tuple(dict.fromkeys(verb for family in families for verb in FAMILIES[family]))
    words = tool_words(own_name(tool))
    return (words[0],) if words else ()


def own_name(tool: str) -> str:
    """A tool's own name without the host's namespace: an MCP tool's after its server
    (``mcp__github__get_issue`` → ``get_issue``; the server's words never make the verb, "mcp" is none). Its
    families are still read from the whole name (a ``payments`` server's ``create`` is a payment: the stricter)."""
    if tool.startswith("mcp__"):
        rest = tool[len("mcp__") :]
        if "__" in rest:
            return rest.split("__", 1)[1]
    return tool


def suggest_intents(tool: str, description: str = "") -> tuple[str, ...]:
    """Intent words to *propose* to a policy's author for a tool: its families' verbs, or, for a tool in no
    family, the verbs of its name and of its description in their base form ("Locks the doors of the
    vehicle." proposes "lock"). Only a proposal: the gate reads the intents the policy declares (or the
    lexicon's defaults), never these on its own."""
    if families_of(tool, description):
        return default_intents(tool, description)
    found: list[str] = []
    for word in (*tool_words(own_name(tool)), *tool_words(description)):
        found += [lemma for lemma in english_verb_lemmas(word) if lemma not in english().not_verbs]
    return tuple(dict.fromkeys(found)) or default_intents(tool, description)
