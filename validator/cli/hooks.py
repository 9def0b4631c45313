"""``validator hook claude-code``: the Claude Code ``PreToolUse`` hook (JSON in on stdin, a decision out).

It fails closed: a bad input, a policy that does not load, a store that does not open, a crash of ours, or
its own deadline running out each answer ``deny`` with the reason, and exit 0 (Claude Code reads the
answer). Only when even that answer cannot be written does it exit 2, which Claude Code also treats as a
refusal of the call.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer

from validator.cli._common import StoreOption, new_app

__all__ = ["POLICY_FILE", "find_policy", "register"]

POLICY_FILE = "action-validator.toml"
"""The policy's file name in a project's ``.claude`` folder and in the user's ``~/.claude``."""

hooks = new_app("Pre-tool hooks of agent hosts (Claude Code).")


class _Deadline(Exception):
    pass


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
    raw: bytes, policy: Path | None, store: str | None, judge: str, model: str | None, allow: bool = True
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
        found = find_policy(policy, data)
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
) -> None:
    """Decide one Claude Code PreToolUse call: hook input on stdin, the permission decision on stdout."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise _Deadline

    timed = hasattr(signal, "setitimer") and timeout > 0
    try:
        if timed:
            signal.signal(signal.SIGALRM, expired)
            signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            answer = _answer(sys.stdin.buffer.read(), policy, store, judge, model, allow)
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except _Deadline:
        answer = _deny(f"The action validator did not decide within {timeout:g} s, so the call does not run.")
    except Exception as exc:  # fail closed: whatever went wrong, the call does not run
        answer = _deny(f"The action validator failed, so the call does not run: {type(exc).__name__}: {exc}")
    try:
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    except Exception:  # no answer could be written: exit 2, which Claude Code treats as a refusal
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    hooks.command("claude-code")(claude_code)
    app.add_typer(hooks, name="hook")
