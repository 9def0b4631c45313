"""The documentation the tests read: the README and the site's pages (``docs/``, in the order of the site's
navigation), each block of code with where it stands."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _nav() -> list[str]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return [next(iter(entry.values())) for entry in config["nav"]]


PAGES: dict[str, str] = {
    name: (ROOT / name).read_text(encoding="utf-8") for name in ["README.md", *(f"docs/{p}" for p in _nav())]
}
"""Each page's text by its path from the repository's root, the README first, then the site in its order."""


def page(name: str) -> str:
    """One page's text (``docs/pipeline.md``)."""
    return PAGES[name]


class Block(NamedTuple):
    lang: str
    body: str
    why: str | None
    """Why the block does not run (an HTML comment right above it: ``<!-- not run: ... -->``), else None."""
    where: str
    """``page:line``."""


BLOCK = re.compile(r"(?:<!-- not run: (?P<why>[^>]*) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)
BLOCKS: list[Block] = [
    Block(m["lang"], m["body"], m["why"], f"{name}:{text[: m.start()].count(chr(10)) + 1}")
    for name, text in PAGES.items()
    for m in BLOCK.finditer(text)
]
"""Every block of code of the documentation, in reading order (the README, then the site's pages)."""
