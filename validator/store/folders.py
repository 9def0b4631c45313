"""The user's own folders for this library: where parses are cached, where unrecorded verdicts are spooled.

Where the XDG base directories rule (Linux, the BSDs) they are read here: ``$XDG_CACHE_HOME`` or ``$XDG_STATE_HOME``
when it is an absolute path (a relative one is ignored, as the specification says), else ``~/.cache`` or
``~/.local/state``, then ``action-validator``: what ``platformdirs`` gives, without importing it and the
:mod:`tempfile` it brings (some milliseconds of each one-shot process, for one path). Elsewhere (macOS, Windows),
and where no absolute home folder is known, ``platformdirs`` gives them as before."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["APP", "cache_folder", "state_folder"]

APP = "action-validator"

_XDG = ("linux", "freebsd", "openbsd", "netbsd", "dragonfly")
"""Platforms whose user folders are the XDG base directories."""


def _xdg(variable: str, default: str) -> Path | None:
    """``$variable`` when it is an absolute path, else ``~/default``, then :data:`APP`; None off the XDG platforms or
    without a home folder."""
    if not sys.platform.startswith(_XDG):
        return None
    configured = os.environ.get(variable, "")
    if os.path.isabs(configured):
        return Path(configured) / APP
    given = os.environ.get("HOME")
    if given is not None and not os.path.isabs(given):
        return None  # a relative or empty $HOME: platformdirs reads the user's entry instead
    try:
        home = Path.home()
    except RuntimeError:  # no $HOME and no user entry: platformdirs answers as it does
        return None
    return home / default / APP if home.is_absolute() else None


def cache_folder() -> Path:
    """This library's folder in the user's cache (``platformdirs.user_cache_path(APP)`` off the XDG platforms)."""
    found = _xdg("XDG_CACHE_HOME", ".cache")
    if found is not None:
        return found
    from platformdirs import user_cache_path

    return user_cache_path(APP)


def state_folder() -> Path:
    """This library's folder in the user's state (``platformdirs.user_state_path(APP, appauthor=False)`` off the XDG
    platforms)."""
    found = _xdg("XDG_STATE_HOME", os.path.join(".local", "state"))
    if found is not None:
        return found
    from platformdirs import user_state_path

    return user_state_path(APP, appauthor=False)
