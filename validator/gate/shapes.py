"""The parse trees of sentence shapes kept on disk: a process reads a shape another process parsed without building
Lark's parser or running it (a one-shot ``validator check``, each call of the Claude Code hook: a new process
reading the same conversation's sentences).

A shape is a sentence's sequence of token classes (:class:`~validator.gate.grammar.Grammar` parses shapes, not
words: the tree is read again with each sentence's own words, by their places). A shape's tree, or where its parse
stopped, is one JSON file of rule names and token places (never a word), named by the SHA-256 of the shape and of
everything the tree depends on (the salt: the grammar's text, Lark's version, the code that parses and keeps it);
so are the grammar's literal words.

The folder is ``shapes`` in ``VALIDATOR_CACHE_DIR`` (an absolute path; empty: nothing kept) or in the user's cache
folder (:func:`validator.store.folders.cache_folder`: ``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux). It is made
0700, opened once, and used only when what was opened is a folder of this user that no one else may enter (not a
link): never a shared temporary folder; every file is reached through the open folder, so a folder moved into its
path later is never used. JSON, never a pickle: reading a file
runs no code. A file that is not a plain file, is over :data:`_MAX_BYTES`, does not read whole, names another key,
fails its own checksum or holds a malformed or too deep tree is passed over (the shape is parsed again and the
file rewritten); a file is written whole or not at all (written aside, then renamed). Past :data:`MAX_FILES` files
or :data:`MAX_TOTAL` bytes the older half is deleted. The folder is a cache: deleting it, or any file in it, at any
time changes nothing but time. A file that reads whole is believed, as the user's own files are.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import stat
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from validator.gate.tree import Leaf, Node, Parsed
from validator.store.folders import cache_folder

__all__ = ["FOLDER_ENV", "MAX_FILES", "MAX_TOTAL", "Shape", "ShapeStore", "private_folder"]

FOLDER_ENV = "VALIDATOR_CACHE_DIR"
"""The folder the shapes' folder is made in; set empty, no parse is kept on disk."""
MAX_FILES = 20_000
"""Files kept in the folder at most; past it, or past :data:`MAX_TOTAL` bytes, the older half is deleted."""
MAX_TOTAL = 256 * 1024 * 1024
"""Bytes kept in the folder at most (a parse is a few kilobytes; a very ambiguous one up to :data:`_MAX_BYTES`)."""
_FORMAT = 1
_MAX_DEPTH = 200
"""A tree deeper than this is not read (the benchmark sets' sentences: 17 at most)."""
_MAX_BYTES = 4 << 20
"""A file longer than this is neither written nor read: a parse whose tree is this large (a very ambiguous
sentence) is parsed again in each process (most parses are a few kilobytes; a reviewer measured a 41-token
sentence of 10 MB, slower to read back than to parse)."""

Shape = tuple[frozenset[str], ...]
"""A sentence's token classes, word by word."""


def private_folder(fd: int) -> bool:
    """Whether the open ``fd`` is a folder of this user that neither the group nor others may enter."""
    try:
        found = os.fstat(fd)
    except OSError:
        return False
    mine = not hasattr(os, "geteuid") or found.st_uid == os.geteuid()
    return stat.S_ISDIR(found.st_mode) and mine and not found.st_mode & 0o077


_AT_FOLDER = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd and os.scandir in os.supports_fd
"""Whether files can be opened relative to an open folder here (not on Windows: no folder is kept there; ``os.replace``
shares ``os.rename``'s support)."""


class ShapeStore:
    """Shapes' parses and a grammar's literal words, on disk in ``folder`` under keys salted by ``salt`` (what
    the trees depend on besides the shape).

    The folder is opened once and every file is reached through that open folder: it must then be a private
    folder (:func:`private_folder`, checked on what was opened), and moving another folder to its path later,
    by anyone who may write its parent, changes nothing for this store.

    Raises:
        OSError: the folder cannot be opened, or is not private, or files cannot be reached through an open
            folder on this system.
    """

    def __init__(self, folder: Path, salt: str) -> None:
        if not _AT_FOLDER:
            raise OSError("files cannot be opened relative to an open folder on this system")
        self.folder = folder
        self._salt = salt
        self._lock = threading.Lock()
        self._kept: tuple[int, int] | None = None  # files and bytes in the folder, counted at the first write
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
        if not private_folder(fd):
            os.close(fd)
            raise OSError(f"{folder} is not a folder of this user's alone")
        self._fd = fd
        weakref.finalize(self, os.close, fd)

    @classmethod
    def default(cls, salt: str) -> ShapeStore | None:
        """The store in the user's cache folder (or ``VALIDATOR_CACHE_DIR``); None when it is set empty, or the
        folder cannot be made, or is not private."""
        base = os.environ.get(FOLDER_ENV)
        if base is None:
            root = cache_folder()
        elif not base:
            return None
        else:
            root = Path(base)
            if not root.is_absolute():  # a relative folder would be made in whatever folder the process runs in
                return None
        folder = root / "shapes"
        try:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
            folder.mkdir(mode=0o700, exist_ok=True)
            return cls(folder, salt)
        except OSError:
            return None

    # -- parses -------------------------------------------------------------------------------------------

    def parsed(self, shape: Shape) -> Parsed | None:
        """The parse kept for ``shape``; None when none is kept (or what is kept does not read)."""
        key = self._key("shape", _shape_text(shape))
        data = self._read(key)
        if data is None:
            return None
        try:
            return _decoded(data, len(shape))
        except (ValueError, TypeError, IndexError, KeyError, RecursionError):
            return None

    def keep(self, shape: Shape, parsed: Parsed) -> None:
        """Keep ``parsed`` as the parse of ``shape`` (nothing when the folder cannot be written)."""
        self._write(self._key("shape", _shape_text(shape)), _encoded(*parsed))

    # -- literals -----------------------------------------------------------------------------------------

    def literals(self) -> tuple[tuple[str, str], ...] | None:
        """The grammar's literal words and their terminals' names, as kept; None when none are."""
        data = self._read(self._key("literals", ""))
        if data is None:
            return None
        pairs = data.get("literals")
        if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p) for p in pairs
        ):
            return None
        return tuple((value, name) for value, name in pairs)

    def keep_literals(self, literals: Sequence[tuple[str, str]]) -> None:
        self._write(self._key("literals", ""), {"literals": [list(p) for p in literals]})

    # -- files --------------------------------------------------------------------------------------------

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha256(f"{_FORMAT}\n{self._salt}\n{kind}\n{text}".encode()).hexdigest()

    def _read(self, key: str) -> dict[str, Any] | None:
        """The body kept under ``key`` when its file reads whole and is the key's, else None."""
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)  # a pipe never waits
        try:
            fd = os.open(f"{key}.json", flags, dir_fd=self._fd)
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    return None
                text = f.read(_MAX_BYTES + 1)
            if len(text) > _MAX_BYTES:
                return None
            data = json.loads(text)
            body = data["body"]
            if data["key"] != key or data["sum"] != _checksum(body) or not isinstance(body, dict):
                return None
            return body
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return None

    def _write(self, key: str, body: dict[str, Any]) -> None:
        text = json.dumps({"key": key, "sum": _checksum(body), "body": body}, separators=(",", ":")).encode()
        if len(text) > _MAX_BYTES:
            return
        aside = f".writing-{secrets.token_hex(8)}.json"
        try:
            fd = os.open(
                aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600, dir_fd=self._fd
            )
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(text)
                os.replace(aside, f"{key}.json", src_dir_fd=self._fd, dst_dir_fd=self._fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(aside, dir_fd=self._fd)
                raise
        except OSError:
            return
        with self._lock:
            files, size = self._kept if self._kept is not None else self._count()
            files, size = files + 1, size + len(text)
            self._kept = self._prune() if files > MAX_FILES or size > MAX_TOTAL else (files, size)

    def _files(self) -> list[tuple[float, str, int]]:
        """``(written, name, bytes)`` of each file of the folder (one another process deletes meanwhile left out)."""
        found = []
        try:
            entries = list(os.scandir(self._fd))
        except OSError:
            return []
        for entry in entries:
            if entry.name.endswith(".json"):
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    found.append((info.st_mtime, entry.name, info.st_size))
        return found

    def _count(self) -> tuple[int, int]:
        found = self._files()
        return len(found), sum(size for _, _, size in found)

    def _prune(self) -> tuple[int, int]:
        """Delete the older half of the files; the files and bytes left."""
        found = sorted(self._files())
        gone = found[: len(found) // 2 + 1]
        for _, name, _ in gone:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=self._fd)
        left = found[len(gone) :]
        return len(left), sum(size for _, _, size in left)


def _checksum(body: Any) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _shape_text(shape: Shape) -> str:
    return "\n".join(" ".join(sorted(classes)) for classes in shape)


def _encoded(tree: Node | None, stuck: int | None) -> dict[str, Any]:
    """``{"root", "stuck", "nodes"}``: the tree's nodes, each ``[data, children]`` after its children (a node met
    twice is written once), a child a node's index, a token's ``[type, place]`` or null (a part left out)."""
    nodes: list[list[Any]] = []
    index: dict[int, int] = {}

    def node(item: Any) -> Any:
        if item is None:  # an optional part the parse left out, where Lark keeps its place
            return None
        if isinstance(item, Leaf):
            return [item.type, item.position]
        if id(item) not in index:
            children = [node(child) for child in item.children]
            nodes.append([str(item.data), children])
            index[id(item)] = len(nodes) - 1
        return index[id(item)]

    return {"root": None if tree is None else node(tree), "stuck": stuck, "nodes": nodes}


def _decoded(body: dict[str, Any], size: int) -> Parsed:
    """The parse :func:`_encoded` wrote, for a shape of ``size`` tokens; raises on anything malformed."""
    root, stuck, nodes = body["root"], body["stuck"], body["nodes"]
    if stuck is not None and not (type(stuck) is int and 0 <= stuck < size):
        raise ValueError("a stop past the sentence")
    if root is None:
        return None, stuck
    built: list[Node] = []
    depths: list[int] = []
    for data, children in nodes:
        if not isinstance(data, str) or not isinstance(children, list):
            raise TypeError("a malformed node")
        kids: list[Node | Leaf | None] = []
        depth = 1
        for child in children:
            if child is None:
                kids.append(None)
            elif type(child) is int and 0 <= child < len(built):  # a node written before this one
                kids.append(built[child])
                depth = max(depth, depths[child] + 1)
            elif isinstance(child, list) and len(child) == 2 and isinstance(child[0], str):
                place = child[1]
                if type(place) is not int or not 0 <= place < size:
                    raise ValueError("a token past the sentence")
                kids.append(Leaf(child[0], place))
            else:
                raise TypeError("a malformed child")
        if depth > _MAX_DEPTH:  # what reads the tree recurses by its depth
            raise ValueError("a tree deeper than a sentence's")
        built.append(Node(data, kids))
        depths.append(depth)
    if type(root) is not int or not 0 <= root < len(built):
        raise ValueError("no such root")
    return built[root], None
