"""``validator policy check``, ``validator policy suggest`` and ``validator schema``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from validator import examples
from validator.cli._common import EXIT_BAD_INPUT, bad_input, err, out
from validator.cli._options import new_app
from validator.exceptions import FieldProblem, InputError
from validator.policy import Policy
from validator.policy.lint import lint
from validator.policy.suggest import propose, read_specs
from validator.schemas import SCHEMAS, schema_json

__all__ = ["register"]

policy_app = new_app("Work with policy files.")


@policy_app.command("check")
def policy_check(file: Annotated[Path, typer.Argument(metavar="FILE", help="Policy file (TOML or JSON).")]) -> None:
    """Validate a policy file; print its tools, or every problem with its field."""
    try:
        loaded = Policy.load(file)
    except InputError as exc:
        raise bad_input(exc) from None
    console = out()
    console.print(f"[bold]{escape(str(file))}[/] (version {loaded.version})")
    for name, tp in sorted(loaded.tools.items()):
        # one block a tool: a long list of intents wraps at its commas, never inside a tool's name
        console.print(f"[bold]{escape(name)}[/]: {'exempt' if tp.exempt else 'guarded'}, {tp.risk}")
        intents = ", ".join(tp.intent_words(name)) + ("" if tp.intents else " (default)")
        for label, shown in (
            ("targets", ", ".join(tp.targets)),
            ("content", ", ".join(tp.content)),
            ("returns", tp.returns or ""),
            ("options", ", ".join(f"{k}={json.dumps(v)}" for k, v in tp.options.items())),
            ("intents", intents),
        ):
            if shown:
                console.print(f"  {label}: {escape(shown)}")
    console.print(
        f"settings: low_confidence={loaded.settings.low_confidence}, "
        f"ungrounded_targets={loaded.settings.ungrounded_targets}"
    )
    console.print("Tools not named here are guarded and general.")
    for warning in lint(loaded):
        console.print(f"[yellow]warning:[/] {escape(str(warning))}")


@policy_app.command("suggest")
def policy_suggest(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="Policy file (TOML or JSON).")],
    tools: Annotated[
        Path | None,
        typer.Option(
            "--tools",
            metavar="SPECS",
            help="The host's tool specs (JSON): OpenAI function specs, an MCP tool list, Anthropic tools.",
        ),
    ] = None,
) -> None:
    """Propose intent words for each guarded tool that declares none, and, from the host's tool specs, the
    arguments that are content (the agent's wording: a body, a subject, a title) and the options with the
    defaults their schemas give (a ``default``; ``false`` for a flag): any other value of an option is asked.

    Nothing changes until you copy a proposal into the policy: the gate reads only what the policy declares
    (intents, or the lexicon's defaults)."""
    try:
        loaded = Policy.load(file)
        specs = read_specs(_json_file(tools), source=str(tools)) if tools is not None else []
    except InputError as exc:
        raise bad_input(exc) from None
    proposals = list(propose(loaded, specs))
    if not proposals:
        print(f"# every guarded tool of {file} declares what these specs would propose; nothing to suggest")
        return
    print(f"# proposals for {file}: review each line, keep only what holds for the tool")
    for proposal in proposals:
        print()
        print(proposal.toml())


def _json_file(path: Path) -> object:
    """A JSON file's data; an unreadable or malformed file is an :class:`InputError` naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError([FieldProblem("", f"not a readable JSON file: {exc}")], source=str(path)) from None


def schema(name: Annotated[str, typer.Argument(metavar="NAME", help=f"One of: {', '.join(SCHEMAS)}.")]) -> None:
    """Print a JSON Schema: the check input or the verdict."""
    if name not in SCHEMAS:
        err().print(f"[red]unknown schema {escape(name)!r}; choose one of {', '.join(SCHEMAS)}[/]")
        raise typer.Exit(EXIT_BAD_INPUT)
    sys.stdout.write(schema_json(name))


def init(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="Where to write policy.toml.")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Replace a policy.toml that is already there.")] = False,
) -> None:
    """Write the example policy (an email-and-payments assistant's tools) into DIR as policy.toml."""
    target = folder / "policy.toml"
    if not folder.is_dir():  # a typo in DIR must not become a new folder
        what = "is not a folder" if folder.exists() else "does not exist"
        err().print(f"[red]{escape(str(folder))} {what}: create it first, or name a folder that is there[/]")
        raise typer.Exit(EXIT_BAD_INPUT)
    if target.exists() and not force:
        err().print(f"[red]{escape(str(target))} is already there; --force replaces it[/]")
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        target.write_bytes(examples.policy_path().read_bytes())
    except OSError as exc:
        err().print(f"[red]cannot write {escape(str(target))}: {escape(exc.strerror or str(exc))}[/]")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    loaded = Policy.load(target)
    print(f"wrote {target}: the example policy, {len(loaded.tools)} tools; tools it does not name are guarded")
    print(f"next: validator policy check {target}   ·   validator check --example vendor_invoice --policy {target}")


def register(app: typer.Typer) -> None:
    app.command()(init)
    app.add_typer(policy_app, name="policy")
    app.command()(schema)
