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
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from validator.cli import hookrun
from validator.cli._options import StoreOption, new_app
from validator.cli.hookwire import (
    IDLE_SECONDS,
    MAX_TIMEOUT,
    MIN_TIMEOUT,
    POLICY_FILE,
    STORE_ENV,
    HookOptions,
    find_policy,
    held,
    key_of,
    late,
    peer_uid,
    read_all,
)

__all__ = ["POLICY_FILE", "find_policy", "register"]


hooks = new_app("Pre-tool hooks of agent hosts (Claude Code).")


def claude_code(
    policy: Annotated[
        Path | None,
        typer.Option(help="Policy file; else .claude/action-validator.toml of the project, else of ~/.claude."),
    ] = None,
    store: StoreOption = None,
    judge: Annotated[str, typer.Option(help="Judge: strict (offline, no model) or anthropic.")] = "strict",
    model: Annotated[str | None, typer.Option(help="Model of the anthropic judge.")] = None,
    timeout: Annotated[
        float,
        typer.Option(
            min=MIN_TIMEOUT,
            max=MAX_TIMEOUT,
            help="Seconds before it answers deny on its own (keep it under the hook's timeout).",
        ),
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
    print_settings: Annotated[
        bool,
        typer.Option(
            "--print-settings",
            help="Print the .claude/settings.json entry for this hook, with this install's command by its absolute "
            "path (and the options given), and exit.",
        ),
    ] = False,
) -> None:
    """Decide one Claude Code PreToolUse call: hook input on stdin, the permission decision on stdout."""
    options = HookOptions(policy=policy, store=store, judge=judge, model=model, timeout=timeout, allow=allow)
    if print_settings:
        print(json.dumps(settings_entry(options, persistent=persistent), indent=2))
        return
    if serve is not None and serve_key is not None:
        _serve(serve, serve_key, options, resolved=default_policy or policy is not None)
        return
    raise typer.Exit(hookrun.one_shot(options))


MATCHER = "mcp__.*"
"""The tools the printed settings guard: every MCP tool (the ones that reach third parties); a read-only one the
policy exempts, by name or by a pattern (``[tools."mcp__*__get_*"]``, ``exempt = true``), passes at once."""


def installed_command() -> str:
    """This install's ``validator`` by its absolute path (Claude Code runs hooks with its own ``PATH``)."""
    import shutil

    found = Path(sys.argv[0]).resolve() if Path(sys.argv[0]).name == "validator" else None
    if found is None or not found.is_file():
        which = shutil.which("validator") or shutil.which("validator", path=str(Path(sys.executable).parent))
        found = Path(which).resolve() if which else Path(sys.executable).with_name("validator")
    return str(found)


def settings_entry(options: HookOptions, *, persistent: bool) -> dict[str, Any]:
    """The ``.claude/settings.json`` entry running this hook with ``options``."""
    import shlex

    words = [installed_command(), "hook", "claude-code"]
    words += ["--persistent"] if persistent else []
    words += ["--policy", str(options.policy.resolve())] if options.policy is not None else []
    words += ["--store", options.store] if options.store else []
    words += ["--judge", options.judge] if options.judge != "strict" else []
    words += ["--model", options.model] if options.model else []
    words += ["--no-allow"] if not options.allow else []
    words += ["--timeout", f"{options.timeout:g}"] if options.timeout != 50.0 else []
    hook = {"type": "command", "command": shlex.join(words), "timeout": max(60, int(options.timeout) + 10)}
    return {"hooks": {"PreToolUse": [{"matcher": MATCHER, "hooks": [hook]}]}}


def settings_problems(project: Path | None = None) -> tuple[list[str], list[str]]:
    """What ``validator doctor --hook`` reports: the hook commands found in Claude Code's settings files (the
    project's ``.claude/settings.json`` and ``settings.local.json``, the user's ``~/.claude/settings.json``) that
    run this hook, each found or missing; and the problems (a command that does not resolve, none at all)."""
    import shlex
    import shutil

    where = project or Path(os.environ.get("CLAUDE_PROJECT_DIR") or ".")
    files = [where / ".claude" / "settings.json", where / ".claude" / "settings.local.json"]
    files.append(Path.home() / ".claude" / "settings.json")
    files = list(dict.fromkeys(f.resolve() for f in files))  # the project may be the home folder
    found: list[str] = []
    problems: list[str] = []
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            problems.append(f"{file}: cannot be read: {exc}")
            continue
        entries = ((data.get("hooks") or {}).get("PreToolUse") or []) if isinstance(data, dict) else []
        for entry in entries if isinstance(entries, list) else []:
            for hook in (entry.get("hooks") or []) if isinstance(entry, dict) else []:
                command = hook.get("command", "") if isinstance(hook, dict) else ""
                if "hook claude-code" not in command:
                    continue
                try:
                    program = shlex.split(command)[0]
                except (ValueError, IndexError):
                    problems.append(f"{file}: the command {command!r} cannot be read")
                    continue
                resolved = program if os.path.isabs(program) else shutil.which(program)
                if resolved is None or not os.access(resolved, os.X_OK):
                    problems.append(
                        f"{file}: the hook command {program!r} is not found, so Claude Code cannot run it and no "
                        f"call is checked; `validator hook claude-code --print-settings` prints an entry with the "
                        f"installed command's absolute path"
                    )
                else:
                    found.append(f"{file}: {command} (matcher {entry.get('matcher', '')!r})")
    if not found and not problems:
        problems.append(
            "no Claude Code settings file runs `validator hook claude-code`: "
            "`validator hook claude-code --print-settings` prints the entry to add"
        )
    return found, problems


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
    if held(path, wait=0.5):
        return  # another process serves this key already (or holds it without answering: not a second one)
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
        answer = hookrun.timed_answer(
            fields["input"].encode("utf-8", "surrogateescape"), options, resolved=resolved, budget=budget
        )
    finally:
        os.chdir("/")
    _send(conn, {"key": key, "answer": answer})
    # a deadline that fired mid-check may have left a library's lock held or a cache half-filled: this process
    # serves no more (the next call starts a fresh one)
    return answer != late(options.timeout)


def _send(conn: Any, reply: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # the client left: this process serves the next one
        conn.sendall(json.dumps(reply).encode())


def register(app: typer.Typer) -> None:
    hooks.command("claude-code")(claude_code)
    app.add_typer(hooks, name="hook")
