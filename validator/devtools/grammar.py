"""Build the compiled request grammar (``validator/language/english_grammar.json``) from ``english.lark``, and the
English pack's tables read ahead (``english_toml.json``) from ``english.toml``.

Lark compiles a grammar file on every start; :mod:`validator.gate.compiled` reads this file instead where it is
of the grammar being loaded and of the installed Lark. Run ``python -m validator.devtools.grammar >
validator/language/english_grammar.json`` (``make grammar``) after editing the grammar or upgrading Lark; a
stale file is never read (its key is the grammar's SHA-256 and Lark's version), and a test holds the shipped
file to what this prints. ``python -m validator.devtools.grammar toml > validator/language/english_toml.json``
(``make grammar`` too) after editing ``english.toml`` (:data:`validator.language.READ_AHEAD`).
"""

from __future__ import annotations

import sys
from importlib import resources

from validator.gate.compiled import dump
from validator.language import read_ahead

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args == ["toml"]:
        text = resources.files("validator.language").joinpath("english.toml").read_text(encoding="utf-8")
        sys.stdout.buffer.write(read_ahead(text).encode("utf-8"))  # UTF-8 whatever the console's encoding
        return
    text = resources.files("validator.language").joinpath("english.lark").read_text(encoding="utf-8")
    sys.stdout.buffer.write(dump(text).encode("utf-8"))


if __name__ == "__main__":
    main()
