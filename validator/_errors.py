"""Turn pydantic validation errors into :class:`FieldProblem` lists with readable paths."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection

from pydantic import ValidationError

from validator.exceptions import FieldProblem

# Union members and tagged models add their own names to an error's location: keep the data path.
_UNION_TAG = re.compile(r"^(function-|tagged-)|^\w+\[.*\]$|^(str|int|float|bool|list|dict|none)$")


def path_of(loc: tuple[int | str, ...], prefix: str = "") -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def problems_from_pydantic(
    exc: ValidationError,
    prefix: str = "",
    fields: Callable[[tuple[int | str, ...]], Collection[str]] | None = None,
) -> list[FieldProblem]:
    """The problems of ``exc``, each at its data path. ``fields``: the field names a document allows under a
    location (its parent's path): an unknown field then names the one it most likely meant."""
    problems: list[FieldProblem] = []
    for err in exc.errors(include_url=False):
        # Union members and tagged models add their own names to the location; keep the data path.
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and _UNION_TAG.match(p)))
        msg = err["msg"]
        if err["type"] == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            msg = f"must be one of {expected}, got {err.get('input')!r}"
        elif err["type"] == "extra_forbidden":
            msg = "unknown field"
            known = fields(loc[:-1]) if fields is not None and loc else ()
            close = difflib.get_close_matches(str(loc[-1]), sorted(known), n=1, cutoff=0.6) if loc else []
            if close:
                msg += f"; did you mean '{close[0]}'?"
        elif err["type"] == "missing":
            msg = "is required"
        elif err["type"].endswith("_type"):
            msg = f"{msg}, got {type(err.get('input')).__name__}"
        problems.append(FieldProblem(path_of(loc, prefix), msg))
    return problems
