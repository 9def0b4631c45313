"""Text written by an agent or an outside party, made safe to print on a terminal.

Control characters (the escape that starts an ANSI sequence, a carriage return, erase-line, ...)
and bidirectional overrides (which reorder what the eye sees) are shown as ``\\u`` escapes, and
rich markup is escaped, so a quote can never overwrite or disguise the verdict around it. Cut text
says how long it was.
"""

from __future__ import annotations

import re

__all__ = ["clip", "plain", "safe"]

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\ud800-\udfff]"
)


def plain(text: str) -> str:
    """``text`` with control and bidirectional-override characters escaped, for a line printed without rich
    (a prompt): nothing in it can move the cursor or reorder what the eye sees."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def safe(text: str) -> str:
    """``text`` with control and bidirectional-override characters escaped, and rich markup escaped."""
    from rich.markup import escape  # here: a command that prints no markup never loads rich

    return escape(plain(text))


def clip(text: str, n: int) -> str:
    """``text`` cut to ``n`` characters, saying so with its length (never silently)."""
    if len(text) <= n:
        return safe(text)
    return safe(text[: n - 1]) + f"… ({len(text):,} characters)"
