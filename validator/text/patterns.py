"""Regular expressions compiled at their first use, once per process.

A pattern only some texts reach (a secret's assignment, a quote mark past ASCII) compiled where its module is
imported costs its compile in every process that imports the module, each one-shot check and hook call among
them (the biggest take a millisecond or two: :mod:`re` compiles in Python); compiled here, it costs it in the
first process that reads such a text, and a dictionary lookup after that."""

from __future__ import annotations

import re
from functools import cache

__all__ = ["compiled"]


@cache
def compiled(source: str, flags: int = 0) -> re.Pattern[str]:
    """``source`` compiled with ``flags`` (the first call compiles it, every later one finds it)."""
    return re.compile(source, flags)
