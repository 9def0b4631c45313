"""The user's folders for this library (validator.store.folders): on Linux the XDG base directories, read without
platformdirs (and the tempfile it brings, in each one-shot process), the same folders platformdirs gives."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

from validator.store import folders as _folders

SETTINGS = [None, "", "  ", "/abs/folder", " /abs/padded ", "/abs/trailing ", "relative/folder", "~/folder"]


def _set(monkeypatch: pytest.MonkeyPatch, variable: str, value: str | None) -> None:
    monkeypatch.setattr(_folders.sys, "platform", "linux")
    if value is None:
        monkeypatch.delenv(variable, raising=False)
    else:
        monkeypatch.setenv(variable, value)


@pytest.mark.parametrize("configured", SETTINGS)
def test_the_cache_folder_on_linux_is_the_xdg_one(configured: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$XDG_CACHE_HOME`` when it is an absolute path, else ``~/.cache`` (a relative or blank one is ignored, as the
    XDG specification says); then ``action-validator``: the folder platformdirs gives, in every case."""
    _set(monkeypatch, "XDG_CACHE_HOME", configured)
    found = _folders.cache_folder()
    theirs = platformdirs.unix.Unix("action-validator").user_cache_path
    if configured is not None and configured.startswith("/"):
        assert found == Path(configured) / "action-validator"
    else:
        assert found == Path.home() / ".cache" / "action-validator"
    assert found == theirs


@pytest.mark.parametrize("configured", SETTINGS)
def test_the_state_folder_on_linux_is_the_xdg_one(configured: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$XDG_STATE_HOME`` when it is an absolute path, else ``~/.local/state``; then ``action-validator`` (where
    the audit spool lives): the folder platformdirs gives, in every case."""
    _set(monkeypatch, "XDG_STATE_HOME", configured)
    found = _folders.state_folder()
    theirs = platformdirs.unix.Unix("action-validator", appauthor=False).user_state_path
    if configured is not None and configured.startswith("/"):
        assert found == Path(configured) / "action-validator"
    else:
        assert found == Path.home() / ".local" / "state" / "action-validator"
    assert found == theirs


def test_elsewhere_and_without_a_home_platformdirs_gives_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[object, ...]] = []
    monkeypatch.setattr(platformdirs, "user_cache_path", lambda *a, **k: asked.append(a) or tmp_path / "cache")
    monkeypatch.setattr(platformdirs, "user_state_path", lambda *a, **k: asked.append((*a, k)) or tmp_path / "state")
    monkeypatch.setattr(_folders.sys, "platform", "darwin")
    assert (_folders.cache_folder(), _folders.state_folder()) == (tmp_path / "cache", tmp_path / "state")
    assert asked == [("action-validator",), ("action-validator", {"appauthor": False})]

    def homeless() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(_folders.sys, "platform", "linux")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(_folders.Path, "home", staticmethod(homeless))
    assert _folders.cache_folder() == tmp_path / "cache"
    monkeypatch.setattr(_folders.Path, "home", staticmethod(lambda: Path("relative/home")))
    assert _folders.cache_folder() == tmp_path / "cache"  # a relative home: platformdirs reads the user's entry


@pytest.mark.parametrize("home", ["", "relative/home", "/abs/home"])
def test_a_home_that_is_no_absolute_path_is_read_as_platformdirs_reads_it(
    home: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$HOME`` empty or relative: platformdirs reads the user's entry instead (``os.path.expanduser`` would make
    an empty one ``/``); an absolute one is the home."""
    monkeypatch.setattr(_folders.sys, "platform", "linux")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", home)
    assert _folders.cache_folder() == platformdirs.unix.Unix("action-validator").user_cache_path
    assert _folders.state_folder() == platformdirs.unix.Unix("action-validator", appauthor=False).user_state_path
    if home.startswith("/"):
        assert _folders.cache_folder() == Path(home) / ".cache" / "action-validator"


def test_a_one_shot_check_imports_no_platformdirs(tmp_path: Path) -> None:
    """Neither the parse cache nor the audit spool imports platformdirs on Linux (a process, as hosts run it)."""
    import json
    import os
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("the XDG folders are read without platformdirs on Linux only")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("VALIDATOR_CACHE_DIR", "VALIDATOR_SPOOL_DIR")}
    env["XDG_CACHE_HOME"], env["XDG_STATE_HOME"] = str(tmp_path / "cache"), str(tmp_path / "state")
    code = (
        "import sys\n"
        "from validator.cli.entry import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "finally:\n"
        "    print('platformdirs' in sys.modules, file=sys.stderr)\n"
    )
    example = root / "validator" / "examples" / "authorized_email.json"
    done = subprocess.run(
        [sys.executable, "-c", code, "check", "--json", str(example)], capture_output=True, env=env, cwd=root
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["code"] == "APPROVED"
    assert done.stderr.decode().splitlines()[-1] == "False"
    assert (tmp_path / "cache" / "action-validator" / "shapes").is_dir()
