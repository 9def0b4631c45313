"""The plain reading of a command line's options, shared by the readings :mod:`validator.cli.entry` runs without
typer (:meth:`CheckOptions.parse <validator.cli.checkrun.CheckOptions.parse>`, :meth:`HookOptions.parse
<validator.cli.hookwire.HookOptions.parse>`). Standard library only: the persistent hook's client reads with it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from validator._types import STORE_URL_ENV

__all__ = ["plain_options"]


def plain_options(
    args: Sequence[str], flags: Mapping[str, tuple[str, Any] | None], named: Mapping[str, str]
) -> tuple[dict[str, Any], list[str]] | None:
    """``(values, words)`` of ``args``: each flag's ``(field, value)`` (None: a flag read and dropped), each named
    option's value by its field (``--name VALUE`` or ``--name=VALUE``; the last one given wins), and the words that
    are no option (``-`` among them). None for anything else, which the full command line reads: an option not in
    ``flags`` or ``named``, a value missing, empty or starting with ``-``. ``store`` is ``$VALIDATOR_STORE_URL``
    where not given, as every command's ``--store`` is."""
    values: dict[str, Any] = {}
    words: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, eq, value = arg.partition("=")
        if arg in flags:
            flag = flags[arg]
            if flag is not None:
                values[flag[0]] = flag[1]
        elif name in named and (eq or rest):
            value = value if eq else rest.pop(0)
            if not value or value.startswith("-"):  # "--policy=$UNSET", "--policy -x"
                return None
            values[named[name]] = value
        elif arg == "-" or not arg.startswith("-"):
            words.append(arg)
        else:
            return None
    values.setdefault("store", os.environ.get(STORE_URL_ENV) or None)
    return values, words
