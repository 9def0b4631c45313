"""Command line: ``init``, ``check``, ``policy check``, ``schema``, ``prepare-tools``, ``doctor``, ``auth``,
``audit``, ``store``, ``eval``, ``serve``, ``token``, ``hook claude-code``.

One package, one way to register subcommands: each module has ``register(app)``; one error printer
(:func:`validator.cli._common.bad_input`); one table of exit codes (:mod:`validator.cli._common`).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from validator.extras import extra_for, install_hint

if TYPE_CHECKING:
    import typer

__all__ = ["app", "build", "main"]

MODULES = ("check", "policy", "tools", "state", "evals", "serve", "hooks")
"""The modules that register commands, in the order ``validator --help`` lists them."""

FAST = {"check": ("check",), "hook": ("hooks",)}
"""Commands a host runs once per action, and the only modules they need: ``validator check …`` and ``validator hook
…`` import neither the other commands nor what those use (the eval runner, the service, the doctor)."""


def _version(shown: bool) -> None:
    if shown:
        from validator import __version__

        print(f"action-validator {__version__}")
        raise SystemExit(0)


def build(modules: Sequence[str] = MODULES) -> typer.Typer:
    """The command group with the commands of ``modules`` registered (every one by default). typer is imported
    here, not with this package: the entry's own readings (:mod:`validator.cli.entry`) never load it."""
    import typer

    from validator.cli._options import new_app

    group = new_app("Did the user authorize this action?")

    @group.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ) -> None:
        """Did the user authorize this action? Exit codes: see `validator check --help`."""

    for name in modules:
        importlib.import_module(f"validator.cli.{name}").register(group)
    _whole_help(group)
    return group


def _whole_help(group: typer.Typer) -> None:
    """Each command's listed help given whole: click cuts a help it shortens itself ("…"), never a given one."""
    for info in group.registered_commands:
        if info.short_help is None:
            info.short_help = first_sentence(info.help or inspect.getdoc(info.callback) or "")
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _whole_help(sub.typer_instance)


def first_sentence(text: str) -> str:
    """The first sentence of a command's help, whole (what ``validator --help`` lists beside its name)."""
    first = text.strip().split("\n\n", 1)[0].replace("\n", " ")
    end = first.find(". ")
    return first if end == -1 else first[: end + 1]


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole command group, built when asked for (tests, ``python -m validator``)
        return build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``validator`` script. A command that needs an extra the install lacks says which,
    in one line, and exits 2 (never a traceback)."""
    args = list(sys.argv[1:] if argv is None else argv)
    modules = FAST.get(args[0], MODULES) if args else MODULES
    try:
        build(modules)(args=args, prog_name="validator")
    except ModuleNotFoundError as exc:  # an installed library too old for a name we use is not a missing extra
        extra = extra_for(exc.name)
        if extra is None:
            raise
        message = str(exc) if install_hint(extra) in str(exc) else f"{exc.name} is missing: {install_hint(extra)}"
        print(f"validator: {message}", file=sys.stderr)
        raise SystemExit(2) from None
