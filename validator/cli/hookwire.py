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
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from validator.cli._argv import plain_options

__all__ = [
    "IDLE_SECONDS",
    "MAX_PROCESSES",
    "MAX_TIMEOUT",
    "MIN_TIMEOUT",
    "STORE_ENV",
    "POLICY_FILE",
    "HookOptions",
    "ask",
    "deny",
    "find_policy",
    "held",
    "key_of",
    "late",
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


def deny(reason: str) -> dict[str, Any]:
    """``hook_output("deny", reason)`` of :mod:`validator.integrations.claude_code`, written here again on
    purpose: the answer to a crash or a deadline must not depend on importing the adapter that failed (nor, for
    the persistent client, on importing anything beyond the standard library)."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def late(timeout: float) -> dict[str, Any]:
    """The answer when the hook did not decide within ``timeout`` seconds."""
    return deny(f"The action validator did not decide within {timeout:g} s, so the call does not run.")


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
        option this reader does not know, a value missing, empty or starting with ``-``, a timeout out of range):
        the full command line reads those. What it reads, it reads as the full command line does, ``--store`` from
        ``$VALIDATOR_STORE_URL`` when not given included (a test holds the two equal)."""
        flags = {"--allow": ("allow", True), "--no-allow": ("allow", False), "--persistent": None}
        named = {
            "--policy": "policy",
            "--store": "store",
            "--judge": "judge",
            "--model": "model",
            "--timeout": "timeout",
        }
        read = plain_options(args, flags, named)
        if read is None or read[1]:  # the hook takes no words
            return None
        values = read[0]
        try:
            timeout = float(values.pop("timeout", 50.0))
        except ValueError:
            return None
        if not MIN_TIMEOUT <= timeout <= MAX_TIMEOUT:  # NaN too: the full command line reads what this does not
            return None
        policy = values.pop("policy", None)
        return HookOptions(policy=Path(policy) if policy else None, timeout=timeout, **values)


MIN_TIMEOUT, MAX_TIMEOUT = 0.001, 3600.0
"""The shortest and longest ``--timeout`` (seconds; Claude Code's own limit for a hook is far shorter)."""


def key_of(options: HookOptions, policy: Path | None) -> str:
    """The hash of everything an answer depends on besides the hook input and the working folder (see the
    module docstring): the policy file's path and bytes, every option, the whole environment (the store's URL,
    the API's key and address, the spool, ``HOME``: whatever the answer reads), the interpreter and the code
    (each of the package's files by its size and time: an upgrade is another process)."""
    try:
        if policy is not None and not policy.is_file():  # a folder, a FIFO (a read would wait), missing
            raise OSError("not a regular file")
        policy_bytes = policy.read_bytes() if policy is not None else b""
        where = str(policy.resolve()) if policy is not None else ""
    except (OSError, RuntimeError):  # unreadable, or a loop of links: a key of its own (the one-shot hook denies)
        policy_bytes, where = b"\x00unreadable", str(policy)
    parts = [
        PROTOCOL,
        sys.executable,
        _code_stamp(),
        where,
        hashlib.sha256(policy_bytes).hexdigest(),
        options.store or "",
        options.judge,
        options.model or "",
        options.allow,
        options.timeout,
        hashlib.sha256(json.dumps(sorted(os.environ.items())).encode("utf-8", "surrogateescape")).hexdigest(),
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _code_stamp() -> str:
    """The package's files (this one's folder's parent and the integrations' folder), each by its path, size and
    modification time: another version, or the same one edited in place, is another stamp."""
    import importlib.util

    roots = {Path(__file__).resolve().parents[1]}
    spec = importlib.util.find_spec("validator.integrations")
    if spec is not None and spec.submodule_search_locations:
        roots.update(Path(p).resolve() for p in spec.submodule_search_locations)
    seen = hashlib.sha256()
    for root in sorted(roots):
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(f for f in files if not f.endswith(".pyc")):
                st = os.stat(os.path.join(folder, name))
                seen.update(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return seen.hexdigest()


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
        try:
            conn.settimeout(min(left, MAX_TIMEOUT))
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
        and set(out) <= {"hookEventName", "permissionDecision", "permissionDecisionReason"}
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
            if _room_for_one_more(folder):
                _start(path, key, policy, options)
            return "unavailable", None
        if peer_uid(conn) != os.getuid():
            return "unavailable", None
        request = {
            "protocol": PROTOCOL,
            "key": key,
            "input": raw.decode("utf-8", "surrogateescape"),
            "cwd": os.getcwd(),  # relative paths in the input are read from here, as the one-shot hook reads them
            "until": time.time() + (deadline - time.monotonic()),  # past it the process does not decide
        }
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


MAX_PROCESSES = 8
"""The most hook processes one user's folder holds: past it a call whose key has none answers one-shot and starts
none (an environment that differs on every call, each its own key, must not leave a process a call behind)."""


def held(path: Path, wait: float = 0.2) -> bool:
    """Whether a process holds the socket at ``path`` (it answers, or is there and does not answer within
    ``wait`` seconds); a socket whose process is gone is removed on the way."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(wait)
    try:
        probe.connect(str(path))
        return True
    except (ConnectionRefusedError, FileNotFoundError):
        with contextlib.suppress(OSError):
            path.unlink()  # its process is gone (or there was none)
        return False
    except OSError:
        return True  # busy, or unknown: held
    finally:
        probe.close()


def _room_for_one_more(folder: Path) -> bool:
    """Whether a process may be started in ``folder``: the sockets of live processes, fewer than
    :data:`MAX_PROCESSES`."""
    return sum(held(sock) for sock in folder.glob("hook-*.sock")) < MAX_PROCESSES


def _start(path: Path, key: str, policy: Path | None, options: HookOptions) -> None:
    """Start the hook process for ``key`` in the background (its own session: it outlives this call)."""
    args = [sys.executable, "-m", "validator", "hook", "claude-code", "--serve", str(path), "--serve-key", key]
    args += ["--policy", str(policy.resolve())] if policy is not None else ["--default-policy"]
    args += ["--judge", options.judge, "--timeout", repr(options.timeout)]
    args += ["--model", options.model] if options.model else []
    args += ["--allow" if options.allow else "--no-allow"]
    env = {**os.environ, **({STORE_ENV: options.store} if options.store else {})}  # a password stays off `ps`
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    with contextlib.suppress(OSError):  # the one-shot hook answers this call and the next
        # spawned, not a Popen: nothing of this process waits for it or keeps an object of it
        os.posix_spawn(sys.executable, args, env, file_actions=quiet, setsid=True)


STORE_ENV = "VALIDATOR_HOOK_STORE"
"""How the client hands ``--store`` to the process it starts: in its environment, never on its command line."""
