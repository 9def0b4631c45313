"""The optional parts of the install: which extra brings which module, and the one line that says so.

The base install (``pip install .`` in a clone) checks actions from Python, the command line and the
Claude Code hook. Each host adapter, the model judge, the Redis store, the decision service and the eval
charts need the libraries of one extra; without them, an import or a command names the extra to install
in one line (a :class:`ModuleNotFoundError`), never a bare ``No module named ...`` deep in a traceback.
"""

from __future__ import annotations

__all__ = ["EXTRAS", "extra_for", "install_hint", "missing_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "anthropic": ("anthropic",),
    "langchain": ("langchain_core", "langchain", "langgraph"),
    "claude-agents": ("langchain_anthropic", "anthropic"),
    "redis": ("redis",),
    "service": ("fastapi", "uvicorn", "redis"),
    "report": ("matplotlib",),
    "opentelemetry": ("opentelemetry",),
    "pydantic-ai": ("pydantic_ai",),
    "openai-agents": ("agents",),
    "claude-agent-sdk": ("claude_agent_sdk",),
    "google-adk": ("google",),
    "crewai": ("crewai",),
}
"""Each extra of ``pyproject.toml`` and the top-level modules it brings (a test keeps the two in step)."""


def install_hint(extra: str) -> str:
    """The install line for ``extra``: the package's, and the clone's (the package is on no registry yet)."""
    return f"pip install 'action-validator[{extra}]' (from a clone of its repository: pip install '.[{extra}]')"


def extra_for(module: str | None) -> str | None:
    """The extra that brings ``module`` (a dotted name is read by its top level); None for any other."""
    top = (module or "").split(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def missing_extra(extra: str, what: str, exc: ImportError) -> ImportError:
    """What to raise when ``what`` (a module or a command) cannot import ``exc.name``: one line naming the
    extra. Any other import error (a library too old to have a name we use) is returned as it was."""
    if not isinstance(exc, ModuleNotFoundError) or extra_for(exc.name) is None:
        return exc
    missing = exc.name
    return ModuleNotFoundError(
        f"{what} needs the [{extra}] extra ({missing} is missing): {install_hint(extra)}", name=missing
    )
