"""Prompt texts, loaded from files in one place.

The texts live in the repository's top-level ``prompts/`` folder; the wheel ships them inside the
package as ``validator/_prompts`` (see ``pyproject.toml``). A source checkout or an editable
install reads the folder itself.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from validator.exceptions import UsageError

__all__ = ["load_prompt", "prompt_names"]


def _folder() -> Path:
    """The prompts' folder: ``_prompts`` beside this module (a wheel), else the checkout's ``prompts/``. Found from
    this module's own path, as the language pack's files are (:func:`validator.language.shipped_text`): no
    :mod:`importlib.resources`, with the :mod:`tempfile` it brings, in each call of the one-shot hook."""
    here = Path(__file__).resolve().parent
    packaged = here / "_prompts"
    if packaged.is_dir():
        return packaged
    return here.parent / "prompts"


def prompt_names() -> list[str]:
    """The names of the shipped prompts (file names without ``.md``)."""
    return sorted(p.stem for p in _folder().glob("*.md"))


@cache
def load_prompt(name: str) -> str:
    """The text of prompt ``name`` (``justification``, ``validator``, ...)."""
    path = _folder() / f"{name}.md"
    if not path.is_file():
        raise UsageError(f"no prompt named {name!r}; shipped prompts: {', '.join(prompt_names())}")
    return path.read_text(encoding="utf-8").strip()
