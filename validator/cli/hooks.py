"""``validator hook claude-code``: the Claude Code ``PreToolUse`` hook (JSON in on stdin, a decision out).

It fails closed: a bad input, a policy that does not load, a store that does not open, a crash of ours, or
its own deadline running out each answer ``deny`` with the reason, and exit 0 (Claude Code reads the
answer). Only when even that answer cannot be written does it exit 2, which Claude Code also treats as a
refusal of the call.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer

from validator.cli._common import StoreOption, new_app
from validator.cli.hookwire import (
    IDLE_SECONDS,
    POLICY_FILE,
    STORE_ENV,
    HookOptions,
    find_policy,
    key_of,
    peer_uid,
    read_all,
)

__all__ = ["POLICY_FILE", "find_policy", "late", "register"]


hooks = new_app("Pre-tool hooks of agent hosts (Claude Code).")


class _Deadline(Exception):
    pass


def _deny(reason: str) -> dict[str, Any]:
    """``hook_output("deny", reason)`` of :mod:`validator.integrations.claude_code`, written here again on
    purpose: the answer to a crash or a deadline must not depend on importing the adapter that failed."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _answer(
    raw: bytes,
    policy: Path | None,
    store: str | None,
    judge: str,
    model: str | None,
    allow: bool = True,
    *,
    resolved: bool = False,
) -> dict[str, Any]:
    from validator.cli.check import _make_judge
    from validator.engine.stateful import stateful_validator
    from validator.exceptions import InputError
    from validator.integrations.claude_code import hook_answer, validator_guard
    from validator.policy import Policy
    from validator.store import open_store

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return _deny(f"The action validator could not read the hook input, so the call does not run: {exc}")
    try:
        found = policy if resolved else find_policy(policy, data)
        validator = stateful_validator(
            open_store(store),
            policy=Policy.load(found) if found is not None else None,
            judge=_make_judge(judge, model, None),
        )
    except InputError as exc:
        return _deny(
            "The action validator is not set up, so the call does not run: " + "; ".join(map(str, exc.problems))
        )
    return hook_answer(data, validator_guard(validator), allow=allow)


def claude_code(
    policy: Annotated[
        Path | None,
        typer.Option(help="Policy file; else .claude/action-validator.toml of the project, else of ~/.claude."),
    ] = None,
    store: StoreOption = None,
    judge: Annotated[str, typer.Option(help="Judge: strict (offline, no model) or anthropic.")] = "strict",
    model: Annotated[str | None, typer.Option(help="Model of the anthropic judge.")] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds before it answers deny on its own (keep it under the hook's timeout).")
    ] = 50.0,
    allow: Annotated[
        bool,
        typer.Option(
            "--allow/--no-allow",
            help="Allow what code proved (the default, as auto mode does); --no-allow only denies and asks, and "
            "Claude Code's own permissions decide the rest.",
        ),
    ] = True,
    persistent: Annotated[
        bool,
        typer.Option(
            help="Answer through a local hook process this command starts and reuses (same answers, a few "
            "milliseconds a call instead of half a second); any failure falls back to answering here."
        ),
    ] = False,
    serve: Annotated[
        Path | None, typer.Option(hidden=True, help="Be the persistent hook process on this socket.")
    ] = None,
    serve_key: Annotated[str | None, typer.Option(hidden=True)] = None,
    default_policy: Annotated[bool, typer.Option(hidden=True, help="The built-in policy, none looked up.")] = False,
) -> None:
    """Decide one Claude Code PreToolUse call: hook input on stdin, the permission decision on stdout."""
    options = HookOptions(policy=policy, store=store, judge=judge, model=model, timeout=timeout, allow=allow)
    if serve is not None and serve_key is not None:
        _serve(serve, serve_key, options, resolved=default_policy or policy is not None)
        return
    answer = _timed_answer(sys.stdin.buffer.read(), options)
    try:
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    except Exception:  # no answer could be written: exit 2, which Claude Code treats as a refusal
        raise typer.Exit(2) from None


def late(timeout: float) -> dict[str, Any]:
    """The answer when the hook did not decide within ``timeout`` seconds."""
    return _deny(f"The action validator did not decide within {timeout:g} s, so the call does not run.")


def _timed_answer(
    raw: bytes, options: HookOptions, *, resolved: bool = False, budget: float | None = None
) -> dict[str, Any]:
    """:func:`_answer` within ``options.timeout`` (or the ``budget`` left of it: a deny past it), any failure of
    ours a deny."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise _Deadline

    seconds = options.timeout if budget is None else budget
    timed = hasattr(signal, "setitimer") and seconds > 0
    o = options
    try:
        if timed:
            signal.signal(signal.SIGALRM, expired)
            signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return _answer(raw, o.policy, o.store, o.judge, o.model, o.allow, resolved=resolved)
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except _Deadline:
        return late(options.timeout)
    except Exception as exc:  # fail closed: whatever went wrong, the call does not run
        return _deny(f"The action validator failed, so the call does not run: {type(exc).__name__}: {exc}")


def _serve(path: Path, key: str, options: HookOptions, *, resolved: bool) -> None:
    """The persistent hook process (:mod:`validator.cli.hookwire`): answers its own user's calls for ``key`` on
    the socket at ``path``, one at a time, until :data:`IDLE_SECONDS` pass without one or its policy changes."""
    import dataclasses
    import socket

    os.chdir("/")  # every call says where it stands; the process stands nowhere of its own
    store = os.environ.pop(STORE_ENV, None)  # handed over off the command line; not part of the environment keyed
    if store:
        options = dataclasses.replace(options, store=store)
    if key_of(options, options.policy if resolved else None) != key:
        return  # started for other options than it was given: nothing to serve
    try:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with probe:
            probe.connect(str(path))
        return  # another process serves this key already
    except OSError:
        path.unlink(missing_ok=True)  # a socket its process left behind
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        os.chmod(path, 0o600)
        bound = path.stat().st_ino
        server.listen(16)
        server.settimeout(IDLE_SECONDS)
        _grammar_warm()
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                return
            with conn:
                if not _serve_one(conn, key, options, resolved):
                    return
    finally:
        server.close()
        try:
            if path.stat().st_ino == bound:  # still ours (a later process may have taken the name)
                path.unlink()
        except (OSError, UnboundLocalError):
            pass


def _grammar_warm() -> None:
    from validator.gate.reader import warm

    warm()


def _serve_one(conn: Any, key: str, options: HookOptions, resolved: bool) -> bool:
    """Answer one connection; False when this process must stop (its policy or its code changed since it
    started). A client that left before its answer costs nothing but that answer."""
    import time

    if peer_uid(conn) != os.getuid():
        return True  # another user's process: no answer
    raw = read_all(conn, time.monotonic() + 5.0)
    try:
        request = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        request = None
    fields = request if isinstance(request, dict) else {}
    until, cwd = fields.get("until"), fields.get("cwd")
    if (
        fields.get("key") != key
        or not isinstance(fields.get("input"), str)
        or not isinstance(cwd, str)
        or not isinstance(until, int | float)
    ):
        _send(conn, {"key": None})
        return True
    if key_of(options, options.policy if resolved else None) != key:  # the policy file or the code changed: stop
        _send(conn, {"key": None})
        return False
    budget = min(options.timeout, until - time.time())
    if not budget > 0:
        return True  # its client gave up: nothing is decided (nor spent, nor recorded) for it
    try:
        os.chdir(cwd)  # relative paths in the input read as from the client's folder, as the one-shot hook's do
    except OSError:
        _send(conn, {"key": None})
        return True
    try:
        answer = _timed_answer(
            fields["input"].encode("utf-8", "surrogateescape"), options, resolved=resolved, budget=budget
        )
    finally:
        os.chdir("/")
    _send(conn, {"key": key, "answer": answer})
    return True


def _send(conn: Any, reply: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # the client left: this process serves the next one
        conn.sendall(json.dumps(reply).encode())


def register(app: typer.Typer) -> None:
    hooks.command("claude-code")(claude_code)
    app.add_typer(hooks, name="hook")
