"""The example policy and the example checks that ship with the package.

``validator init`` writes the policy into a folder; ``validator check --example NAME`` checks one of the
example pending actions (the vendor's invoice, the email the user asked for, ...). From Python::

    from validator import Policy, examples

    policy = Policy.load(examples.policy_path())
    data = examples.check_path("vendor_invoice").read_text()
"""

from __future__ import annotations

from pathlib import Path

from validator.exceptions import UsageError

__all__ = ["check_path", "names", "policy_path"]

_HERE = Path(__file__).resolve().parent


def policy_path() -> Path:
    """The example policy (TOML): an email-and-payments assistant's tools, their risks and targets."""
    return _HERE / "policy.toml"


def names() -> list[str]:
    """The names of the example checks (``vendor_invoice``, ...)."""
    return sorted(p.stem for p in _HERE.glob("*.json"))


def check_path(name: str) -> Path:
    """The check input (JSON) of the example named ``name``."""
    path = _HERE / f"{name}.json"
    if name not in names():
        raise UsageError(f"no example named {name!r}; the examples are: {', '.join(names())}")
    return path
