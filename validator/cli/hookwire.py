"""The persistent form of the Claude Code hook: a client that imports only the standard library, and the wire
it shares with the hook process it starts and reuses (``validator hook claude-code --persistent``).

Claude Code starts the hook once per tool call; the one-shot hook pays Python's imports and the grammar's
build each time (about half a second). With ``--persistent`` the hook answers through a local process that
keeps them warm:

- **Where.** A Unix socket in a folder only the user may enter (``$XDG_RUNTIME_DIR/action-validator``, else
  ``~/.cache/action-validator/run``; created ``0700``, refused if another user owns it or others may enter it),
  named by a key: the hash of everything the answer depends on (this version, the policy file's path and
  bytes, the store, the judge and its model, ``--allow``, ``--timeout``, the API key's hash). Another policy,
  or the same file edited, is another key, so another process.
- **Who.** Each side reads the other's uid from the kernel (``SO_PEERCRED``): the client talks only to a process
  of its own user, and the process answers only its own user's clients.
- **What.** The process answers exactly as the one-shot hook does (the same function, a fresh store per call
  for ``memory://``, the policy file read again on every call: a policy edited since it started makes it
  answer "not mine" and exit). It exits after :data:`IDLE_SECONDS` without a call.
- **Fail closed.** Any failure on the client's side (no process yet, a folder that is not private, another
  uid, a reply that is not a verified answer for this key) falls back to the one-shot hook, within the same
  deadline; a process that does not answer in time is a ``deny``, never an ``allow``. With no process yet the
  client starts one in the background for the next calls.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import struct
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "IDLE_SECONDS",
    "POLICY_FILE",
    "HookOptions",
    "ask",
    "find_policy",
    "key_of",
    "peer_uid",
    "private_dir",
    "read_all",
    "valid_answer",
]

POLICY_FILE = "action-validator.toml"
"""The policy's file name in a project's ``.claude`` folder and in the user's ``~/.claude``."""

PROTOCOL = "hook-wire/1"
IDLE_SECONDS = 900.0
"""A hook process with no call for this long exits."""
MAX_MESSAGE = 16 * 1024 * 1024
"""The most bytes either side reads of one message (a hook input is far smaller)."""
_DECISIONS = frozenset({"allow", "deny", "ask"})


def find_policy(explicit: Path | None, data: Any) -> Path | None:
    """The policy file, in this order: ``--policy``; the project's ``.claude/action-validator.toml`` (the
    project is ``$CLAUDE_PROJECT_DIR``, else the hook input's ``cwd``); the user's
    ``~/.claude/action-validator.toml``. None: the built-in default policy."""
    if explicit is not None:
        return explicit
    cwd = data.get("cwd") if isinstance(data, dict) else None
    project = os.environ.get("CLAUDE_PROJECT_DIR") or (cwd if isinstance(cwd, str) and cwd else None)
    candidates = [Path(project) / ".claude" / POLICY_FILE] if project else []
    candidates.append(Path.home() / ".claude" / POLICY_FILE)
    return next((c for c in candidates if c.is_file()), None)


@dataclass(frozen=True)
class HookOptions:
    """The hook's options, as ``validator hook claude-code`` takes them."""

    policy: Path | None = None
    store: str | None = None
    judge: str = "strict"
    model: str | None = None
    timeout: float = 50.0
    allow: bool = True

    @staticmethod
    def parse(args: Sequence[str]) -> HookOptions | None:
        """The options in ``args`` (those after ``hook claude-code``), or None for anything else (``--help``, an
        option this reader does not know, a value missing): the full command line reads those."""
        values: dict[str, Any] = {}
        named = {
            "--policy": "policy",
            "--store": "store",
            "--judge": "judge",
            "--model": "model",
            "--timeout": "timeout",
        }
        rest = list(args)
        while rest:
            arg = rest.pop(0)
            name, eq, value = arg.partition("=")
            if arg in ("--allow", "--no-allow"):
                values["allow"] = arg == "--allow"
            elif arg == "--persistent":
                continue
            elif name in named and (eq or rest):
                values[named[name]] = value if eq else rest.pop(0)
            else:
                return None
        try:
            timeout = float(values.pop("timeout", 50.0))
        except ValueError:
            return None
        policy = values.pop("policy", None)
        return HookOptions(policy=Path(policy) if policy else None, timeout=timeout, **values)


def key_of(options: HookOptions, policy: Path | None) -> str:
    """The hash of everything an answer depends on besides the hook input (see the module docstring)."""
    from validator import __version__

    try:
        policy_bytes = policy.read_bytes() if policy is not None else b""
    except OSError:
        policy_bytes = b"\x00unreadable"
    parts = [
        PROTOCOL,
        __version__,
        str(policy.resolve()) if policy is not None else "",
        hashlib.sha256(policy_bytes).hexdigest(),
        options.store or os.environ.get("VALIDATOR_STORE_URL") or "",
        options.judge,
        options.model or "",
        options.allow,
        options.timeout,
        hashlib.sha256(os.environ.get("ANTHROPIC_API_KEY", "").encode()).hexdigest(),
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def private_dir() -> Path | None:
    """The folder the hook's sockets live in, made ``0700`` if missing; None when it is not private to this user
    (another owner, or others may enter it) or cannot be made."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "action-validator" if runtime else Path.home() / ".cache" / "action-validator" / "run"
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = base.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return base


MAX_SOCKET_PATH = 100
"""The longest socket path used (the kernel's limit is 104 to 108 bytes): a longer one is no persistent hook."""


def socket_path(folder: Path, key: str) -> Path | None:
    """Where the process for ``key`` listens; None when that path is too long for a socket."""
    path = folder / f"hook-{key[:32]}.sock"
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket, as the kernel reports it (None: unknown)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def read_all(conn: socket.socket, deadline: float) -> bytes | None:
    """Every byte until the other side closes its end, within ``deadline`` (a ``time.monotonic`` value) and
    :data:`MAX_MESSAGE`; None past either."""
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        conn.settimeout(left)
        try:
            chunk = conn.recv(65536)
        except (TimeoutError, OSError):
            return None
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_MESSAGE:
            return None
        chunks.append(chunk)


def valid_answer(answer: Any, allow: bool) -> bool:
    """Whether ``answer`` is a hook answer the one-shot hook could have written."""
    if not isinstance(answer, dict):
        return False
    if answer == {}:
        return not allow  # --no-allow: an approval is no answer
    out = answer.get("hookSpecificOutput")
    return (
        set(answer) == {"hookSpecificOutput"}
        and isinstance(out, dict)
        and out.get("hookEventName") == "PreToolUse"
        and out.get("permissionDecision") in _DECISIONS
        and (out["permissionDecision"] != "allow" or allow)
    )


Asked = tuple[str, dict[str, Any] | None]
"""How the persistent process answered: ``("answered", answer)``, ``("late", None)`` (it took the whole
deadline: deny), or ``("unavailable", None)`` (fall back to the one-shot hook)."""


def ask(raw: bytes, options: HookOptions, started: float) -> Asked:
    """The hook's answer to ``raw`` from the persistent process for these options (started if there is none)."""
    if not hasattr(socket, "AF_UNIX") or getattr(socket, "SO_PEERCRED", None) is None:
        return "unavailable", None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return "unavailable", None  # the one-shot hook names the problem
    policy = find_policy(options.policy, data)
    folder = private_dir()
    if folder is None:
        return "unavailable", None
    key = key_of(options, policy)
    path = socket_path(folder, key)
    if path is None:
        return "unavailable", None
    deadline = started + options.timeout
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(max(0.01, min(1.0, deadline - time.monotonic())))
        try:
            conn.connect(str(path))
        except OSError:
            _start(path, key, policy, options)
            return "unavailable", None
        if peer_uid(conn) != os.getuid():
            return "unavailable", None
        request = {"protocol": PROTOCOL, "key": key, "input": raw.decode("utf-8", "surrogateescape")}
        try:
            conn.sendall(json.dumps(request).encode("utf-8", "surrogateescape"))
            conn.shutdown(socket.SHUT_WR)
        except OSError:
            return "unavailable", None
        reply = read_all(conn, deadline)
    finally:
        conn.close()
    if reply is None:
        return ("late", None) if time.monotonic() >= deadline else ("unavailable", None)
    try:
        found = json.loads(reply)
    except (ValueError, RecursionError):
        return "unavailable", None
    if not isinstance(found, dict) or found.get("key") != key or not valid_answer(found.get("answer"), options.allow):
        return "unavailable", None
    return "answered", found["answer"]


def _start(path: Path, key: str, policy: Path | None, options: HookOptions) -> None:
    """Start the hook process for ``key`` in the background (its own session: it outlives this call)."""
    args = [sys.executable, "-m", "validator", "hook", "claude-code", "--serve", str(path), "--serve-key", key]
    args += ["--policy", str(policy)] if policy is not None else ["--default-policy"]
    args += ["--store", options.store] if options.store else []
    args += ["--judge", options.judge, "--timeout", repr(options.timeout)]
    args += ["--model", options.model] if options.model else []
    args += ["--allow" if options.allow else "--no-allow"]
    with contextlib.suppress(OSError):  # the one-shot hook answers this call and the next
        subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
