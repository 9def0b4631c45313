"""Policy lint: a policy that loads may still leave an action unchecked; these warnings say where.

- a dangerous tool with no targets: the gate then compares every identifier-like argument (ids,
  paths, addresses), which may be more or less than the policy means;
- a money tool (a payment tool by its name or description) that names no amount argument: the
  gate assumes ``amount``; a tool whose amount is called otherwise would go unchecked;
- an exempt tool whose name or description says it sends, pays, shares, posts or opens links or
  addresses: exempt tools pass with no check at all, so one that reaches a third party is a hole.

Each warning names the tool and the reason; none stops the policy from loading.
"""

from __future__ import annotations

from dataclasses import dataclass

from validator.language.lexicon import families_of, tool_words
from validator.policy import Policy

__all__ = ["PolicyWarning", "lint"]

_OUTWARD = frozenset({"message", "payment", "share", "post"})
_LINK_WORDS = frozenset(
    {
        "url",
        "urls",
        "link",
        "links",
        "fetch",
        "browse",
        "http",
        "webhook",
        "upload",
        "address",
        "web",
        "internet",
        "download",
    }
)


@dataclass(frozen=True, slots=True)
class PolicyWarning:
    """One way a policy may leave an action unchecked."""

    tool: str
    problem: str

    def __str__(self) -> str:
        return f"tools.{self.tool}: {self.problem}" if self.tool else f"tools: {self.problem}"


def lint(policy: Policy) -> list[PolicyWarning]:
    """Every warning for ``policy``, tool by tool."""
    found: list[PolicyWarning] = []
    if not policy.tools:
        found.append(
            PolicyWarning(
                "",
                "the policy names no tools: every tool is guarded and general, none is dangerous (a payment or a "
                "deletion is checked as an email is) and none is exempt; name the tools your agent has",
            )
        )
    for name, tp in sorted(policy.tools.items()):
        if tp.exempt:
            words = set(tool_words(name)) | set(tool_words(tp.description))
            if words & {"user", "me", "myself"}:  # reply_to_user, notify_me: they reach the user
                continue
            outward = sorted(set(families_of(name, tp.description)) & _OUTWARD) + sorted(words & _LINK_WORDS)
            if outward:
                found.append(
                    PolicyWarning(
                        name,
                        f"exempt, but its name or description says it reaches outside ({', '.join(outward)}): "
                        "an exempt tool passes with no check at all",
                    )
                )
            continue
        if tp.risk == "dangerous" and not tp.targets:
            found.append(
                PolicyWarning(
                    name,
                    "dangerous with no targets: every identifier-like argument (an id, a path, an address) is "
                    "compared with the user's words; declare targets to say which",
                )
            )
        if tp.is_money(name) and not tp.amounts and "amount" not in tp.targets:
            found.append(
                PolicyWarning(
                    name,
                    'moves money but names no amount argument: the gate assumes "amount"; declare '
                    "amounts = [...] if it is called otherwise",
                )
            )
    return found
