"""A sentence shape's parse tree as the grammar's readers see it: nodes named by their rules, leaves by their token's
place in the sentence. Lark's parser makes the tree (:mod:`validator.gate.earley` turns its tree into this one), the
shapes' store writes and reads it (:mod:`validator.gate.shapes`), and :class:`~validator.gate.semantics.Semantics`
reads it with each sentence's own words; only the first needs Lark, so a process whose shapes are all kept never
imports it.
"""

from __future__ import annotations

__all__ = ["Leaf", "Node", "Parsed"]


class Leaf:
    """A token of the tree: its terminal's name and its word's place in the sentence."""

    __slots__ = ("position", "type")

    def __init__(self, type: str, position: int) -> None:  # Lark's name for a token's terminal
        self.type = type
        self.position = position

    def __repr__(self) -> str:
        return f"Leaf({self.type!r}, {self.position})"


class Node:
    """A node of the tree: the rule's name (``_ambig`` where parses differ: each child one of them) and its
    children (None: an optional part the parse left out, where it keeps its place). A node may be the child of
    several (the parses share it)."""

    __slots__ = ("children", "data")

    def __init__(self, data: str, children: list[Node | Leaf | None]) -> None:
        self.data = data
        self.children = children

    def __repr__(self) -> str:
        return f"Node({self.data!r}, {self.children!r})"


Parsed = tuple[Node | None, int | None]
"""A shape's parse tree, or None and the place of the token its parse stopped at (None: the end)."""
