"""The Claude Code hook's persistent form (issue 61): a real hook process started by the command, reused, and
every way it can fail falling back to the one-shot hook or denying, never allowing."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.test_claude_code import _decision, _hook_input
from validator import examples
from validator.cli import hookwire
from validator.cli.hookwire import HookOptions, ask, key_of, private_dir, socket_path

POLICY = examples.policy_path()
CLI = str(Path(sys.executable).with_name("validator"))

pytestmark = pytest.mark.skipif(getattr(socket, "SO_PEERCRED", None) is None, reason="Unix sockets with SO_PEERCRED")


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private runtime folder for the hook's sockets (short: a socket's path is at most about 100 bytes);
    every hook process started in it is stopped after."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="hk", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    for sock in (folder / "action-validator").glob("*.sock"):
        _stop(sock)
    shutil.rmtree(folder, ignore_errors=True)


def _path(options: HookOptions, policy: Path) -> Path:
    folder = private_dir()
    assert folder is not None
    path = socket_path(folder, key_of(options, policy))
    assert path is not None
    return path


def _stop(sock: Path) -> None:
    """Stop the process serving ``sock`` (its pid read from the kernel, as the client reads its uid)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(sock))
            pid, _, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if pid != os.getpid():  # a fake of this test's own is closed by the test
            os.kill(pid, signal.SIGTERM)
    except OSError:
        pass


def _inputs(tmp_path: Path) -> list[tuple[str, dict[str, Any]]]:
    email = {"to": "bob@acme.example", "subject": "Notes", "body": "The notes."}
    pay = {"recipient": "DE44500105175407324931", "amount": 4800}
    cases = [
        ("allow", "Email bob@acme.example the notes.", "mcp__mail__send_email", email),
        ("ask", "Summarize my inbox.", "mcp__mail__send_money", pay),
        ("deny", "Do not email bob@acme.example.", "mcp__mail__send_email", email),
    ]
    out = []
    for expected, user, tool, args in cases:
        folder = tmp_path / expected
        folder.mkdir()
        out.append((expected, _hook_input(folder, user, tool, args)))
    return out


def _run(args: list[str], data: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [CLI, "hook", "claude-code", *args],
        input=json.dumps(data).encode(),
        capture_output=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _served(options: HookOptions, data: dict[str, Any]) -> dict[str, Any]:
    """The persistent process's own answer (waiting for it to start), never the one-shot hook's."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        how, answer = ask(json.dumps(data).encode(), options, time.monotonic())
        if how == "answered" and answer is not None:
            return answer
        time.sleep(0.2)
    raise AssertionError("the hook process never answered")


def test_the_persistent_hook_answers_as_the_one_shot_hook_does(runtime: Path, tmp_path: Path) -> None:
    """The command with ``--persistent`` answers its first call itself (and starts the process), then through
    the process: the same answer, byte for byte, for an allow, an ask and a deny."""
    options = HookOptions(policy=POLICY)
    for expected, data in _inputs(tmp_path):
        once = _run(["--policy", str(POLICY)], data)
        assert _decision(once) == expected
        assert _run(["--persistent", "--policy", str(POLICY)], data) == once
        assert _served(options, data) == once
        assert _run(["--persistent", "--policy", str(POLICY)], data) == once
    sockets = list((runtime / "action-validator").glob("*.sock"))
    assert len(sockets) == 1 and oct(sockets[0].stat().st_mode & 0o777) == "0o600"


def test_a_store_named_by_the_environment_is_served_too(
    runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``$VALIDATOR_STORE_URL`` set and no ``--store``, the client read no store and the process it started (its
    command line read by typer) read the URL: their keys differed, the process served nothing, and every call fell
    back to the one-shot hook. Both read the URL now, and the process answers."""
    monkeypatch.setenv("VALIDATOR_STORE_URL", "memory://")
    options = HookOptions.parse(["--policy", str(POLICY)])
    assert options is not None and options.store == "memory://"
    expected, data = _inputs(tmp_path)[1]
    assert _decision(_served(options, data)) == expected


def test_a_folder_others_may_enter_or_another_user_owns_is_never_used(runtime: Path, tmp_path: Path) -> None:
    folder = runtime / "action-validator"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # whatever the umask
    assert private_dir() is None
    _, data = _inputs(tmp_path)[1]
    assert ask(json.dumps(data).encode(), HookOptions(policy=POLICY), time.monotonic()) == ("unavailable", None)
    assert _decision(_run(["--persistent", "--policy", str(POLICY)], data)) == "ask"  # the one-shot hook's
    assert not list(folder.iterdir())  # nothing was started there


class _Fake:
    """A process of the same user on the hook's socket that answers what it likes (or nothing)."""

    def __init__(self, path: Path, reply: bytes | None) -> None:
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(4)
        self.reply = reply
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                hookwire.read_all(conn, time.monotonic() + 5)
                if self.reply is None:
                    time.sleep(3)
                    continue
                with contextlib.suppress(OSError):  # the other side left (the fixture looking for a process)
                    conn.sendall(self.reply)

    def close(self) -> None:
        self.server.close()


@pytest.mark.parametrize(
    "reply",
    [
        b"not json",
        b'{"key": "another key", "answer": {}}',
        json.dumps({"answer": {"hookSpecificOutput": {"permissionDecision": "allow"}}}).encode(),
        b"[]",
    ],
)
def test_a_reply_that_is_not_an_answer_for_this_key_falls_back_to_the_one_shot_hook(
    runtime: Path, tmp_path: Path, reply: bytes
) -> None:
    _, data = _inputs(tmp_path)[1]  # a payment nobody asked for: the one-shot hook asks
    options = HookOptions(policy=POLICY)
    fake = _Fake(_path(options, POLICY), reply)
    try:
        assert ask(json.dumps(data).encode(), options, time.monotonic()) == ("unavailable", None)
        assert _decision(_run(["--persistent", "--policy", str(POLICY)], data)) == "ask"
    finally:
        fake.close()


def test_an_allow_for_a_hook_that_only_denies_and_asks_is_not_believed(runtime: Path, tmp_path: Path) -> None:
    _, data = _inputs(tmp_path)[0]
    options = HookOptions(policy=POLICY, allow=False)
    key = key_of(options, POLICY)
    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    fake = _Fake(_path(options, POLICY), json.dumps({"key": key, "answer": allow}).encode())
    try:
        assert ask(json.dumps(data).encode(), options, time.monotonic()) == ("unavailable", None)
        assert _run(["--persistent", "--no-allow", "--policy", str(POLICY)], data) == {}
    finally:
        fake.close()


def test_a_process_that_does_not_answer_in_time_is_a_deny(runtime: Path, tmp_path: Path) -> None:
    expected, data = _inputs(tmp_path)[0]
    assert expected == "allow"
    options = HookOptions(policy=POLICY, timeout=1.0)
    fake = _Fake(_path(options, POLICY), None)
    try:
        assert ask(json.dumps(data).encode(), options, time.monotonic()) == ("late", None)
        answer = _run(["--persistent", "--timeout", "1", "--policy", str(POLICY)], data)
        assert _decision(answer) == "deny" and "did not decide within 1 s" in json.dumps(answer)
    finally:
        fake.close()


def test_a_policy_edited_after_the_process_started_is_never_answered_under_the_old_one(
    runtime: Path, tmp_path: Path
) -> None:
    """The key holds the policy's bytes: the edited file is another key (another process, the one-shot hook
    meanwhile), and the old process, asked under the old key, refuses and exits."""
    policy = tmp_path / "policy.toml"
    shutil.copy(POLICY, policy)
    _, data = _inputs(tmp_path)[0]  # an email the user asked for
    options = HookOptions(policy=policy)
    old_key = key_of(options, policy)
    assert _decision(_run(["--persistent", "--policy", str(policy)], data)) == "allow"
    assert _decision(_served(options, data)) == "allow"
    text = policy.read_text(encoding="utf-8")
    never = 'intents = ["send", "email", "mail", "write to", "reply", "forward", "tell", "let * know"]'
    assert never in text
    policy.write_text(text.replace(never, 'intents = ["fax"]'), encoding="utf-8")  # "email" asks no more for it
    new_key = key_of(options, policy)
    assert new_key != old_key
    once = _run(["--policy", str(policy)], data)
    assert _decision(once) != "allow"
    assert _run(["--persistent", "--policy", str(policy)], data) == once
    old = socket_path(runtime / "action-validator", old_key)
    assert old is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(old))
        ask_old = {"key": old_key, "input": json.dumps(data), "cwd": str(tmp_path), "until": time.time() + 30}
        conn.sendall(json.dumps(ask_old).encode())
        conn.shutdown(socket.SHUT_WR)
        assert json.loads(hookwire.read_all(conn, time.monotonic() + 30) or b"{}") == {"key": None}
    deadline = time.monotonic() + 30
    while old.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not old.exists()  # it stopped, and took its socket with it


def test_options_the_client_does_not_read_go_to_the_full_command_line() -> None:
    assert HookOptions.parse(["--help"]) is None
    assert HookOptions.parse(["--policy"]) is None
    assert HookOptions.parse(["--timeout", "soon"]) is None
    parsed = HookOptions.parse(["--persistent", "--policy=p.toml", "--no-allow", "--timeout", "9", "--judge", "x"])
    assert parsed == HookOptions(policy=Path("p.toml"), allow=False, timeout=9.0, judge="x")


@pytest.mark.parametrize("args", [["--policy="], ["--policy", "loop.toml"]])
def test_options_and_files_the_client_cannot_use_get_the_one_shot_hooks_answer(
    runtime: Path, tmp_path: Path, args: list[str]
) -> None:
    """Whatever the client cannot read or use (an empty value, a policy that is a loop of links), the command
    answers as the one-shot hook does, and exits 0: never a traceback (exit 1 lets the call run)."""
    (tmp_path / "loop.toml").symlink_to(tmp_path / "loop.toml")
    _, data = _inputs(tmp_path)[0]
    once = _run_in(tmp_path, ["--policy", str(POLICY), *args], data)
    assert _run_in(tmp_path, ["--persistent", "--policy", str(POLICY), *args], data) == once
    assert _run_in(tmp_path, ["--persistent", "--policy", str(POLICY), *args], data) == once


@pytest.mark.parametrize("timeout", ["1e10", "inf", "nan", "0", "-1"])
def test_a_timeout_no_deadline_can_hold_is_refused_with_exit_2_which_blocks_the_call(
    runtime: Path, tmp_path: Path, timeout: str
) -> None:
    """A deadline of 0 (none), a negative, infinite or not-a-number one, or one past an hour: the command refuses
    its options and exits 2, which Claude Code takes as blocking the call (never the silent run of a hook over
    its own timeout), persistent or not."""
    _, data = _inputs(tmp_path)[0]
    for persistent in ([], ["--persistent"]):
        done = subprocess.run(
            [CLI, "hook", "claude-code", *persistent, "--policy", str(POLICY), "--timeout", timeout],
            input=json.dumps(data).encode(),
            capture_output=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert done.returncode == 2 and b"--timeout" in done.stderr and b"allow" not in done.stdout, done


def _run_in(folder: Path, args: list[str], data: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [CLI, "hook", "claude-code", *args],
        input=json.dumps(data).encode(),
        capture_output=True,
        timeout=120,
        cwd=folder,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_a_relative_transcript_path_is_read_from_the_asking_clients_folder(runtime: Path, tmp_path: Path) -> None:
    """The process serves every project: a relative path in the input (or in ``--policy``) is read from the folder
    of the client that asks, as the one-shot hook reads it, never from the folder of the one that started it."""
    email = {"to": "bob@acme.example", "subject": "Notes", "body": "The notes."}
    answers = []
    for name, words in (("a", "Email bob@acme.example the notes."), ("b", "Do not email bob@acme.example.")):
        folder = tmp_path / name
        folder.mkdir()
        data = _hook_input(folder, words, "mcp__mail__send_email", email)
        data["transcript_path"] = "t.jsonl"
        shutil.copy(POLICY, folder / "policy.toml")
        for policy in (str(POLICY), "policy.toml"):
            once = _run_in(folder, ["--policy", policy], data)
            _run_in(folder, ["--persistent", "--policy", policy], data)  # the first starts the process
            assert _served_in(folder, data, Path(policy)) == once
            assert _run_in(folder, ["--persistent", "--policy", policy], data) == once
        answers.append(_decision(once))
    assert answers == ["allow", "deny"]


def _served_in(folder: Path, data: dict[str, Any], policy: Path = POLICY) -> dict[str, Any]:
    here = os.getcwd()
    os.chdir(folder)
    try:
        return _served(HookOptions(policy=policy), data)
    finally:
        os.chdir(here)


def _pid(sock: Path) -> int:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(sock))
        pid, _, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return int(pid)


def test_a_client_that_leaves_or_gave_up_costs_the_process_nothing(runtime: Path, tmp_path: Path) -> None:
    """A client that closes without waiting, or whose deadline has passed, gets nothing decided for it (nothing
    spent, nothing recorded), and the same process answers the next call."""
    _, data = _inputs(tmp_path)[0]
    options = HookOptions(policy=POLICY)
    _served(options, data)
    sock = _path(options, POLICY)
    pid = _pid(sock)
    key = key_of(options, POLICY)
    late = {"key": key, "input": json.dumps(data), "cwd": str(tmp_path), "until": time.time() - 1}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(sock))
        conn.sendall(json.dumps(late).encode())
        conn.shutdown(socket.SHUT_WR)
        assert hookwire.read_all(conn, time.monotonic() + 30) == b""  # no answer: nothing was decided
    for _ in range(3):  # clients that leave before their answer
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(sock))
            conn.sendall(json.dumps({**late, "until": time.time() + 30}).encode())
    assert _decision(_served(options, data)) == "allow"
    assert _pid(sock) == pid


def test_no_more_than_eight_processes_are_started_and_a_dead_ones_socket_is_cleared(
    runtime: Path, tmp_path: Path
) -> None:
    """An environment that differs on every call is a new key each time: past ``MAX_PROCESSES`` live processes the
    call answers one-shot and starts none; a socket whose process is gone is removed, and does not count."""
    folder = private_dir()
    assert folder is not None
    live = []
    for i in range(hookwire.MAX_PROCESSES):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(folder / f"hook-live{i}.sock"))
        sock.listen(8)
        live.append(sock)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(folder / "hook-dead.sock"))
    dead.close()  # its file stays: a process killed without cleaning up
    _, data = _inputs(tmp_path)[1]
    try:
        assert _decision(_run(["--persistent", "--policy", str(POLICY)], data)) == "ask"
        time.sleep(2)
        names = sorted(p.name for p in folder.iterdir())
        assert "hook-dead.sock" not in names
        assert len(names) == hookwire.MAX_PROCESSES  # the live ones, and no new one
    finally:
        for sock in live:
            sock.close()


def test_the_hooks_deadline_passes_every_except_exception_and_a_late_answer_is_never_trusted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The attacker's pass: the timer's exception was an ``Exception``, so a library's ``except Exception`` (the
    phone scan's "cannot scan this text") took it for "no phone numbers" and the check went on, past its deadline,
    to an allow. Now it passes every such handler; an answer that comes back past the deadline anyway is a deny;
    and a persistent process whose check a deadline cut stops serving (a lock may be held, a cache half-filled)."""
    from validator.cli import hookrun, hooks

    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}

    def swallowing(*args: Any, **kwargs: Any) -> dict[str, Any]:
        with contextlib.suppress(Exception):  # what the phone scan did
            time.sleep(3)
        return allow

    def stubborn(*args: Any, **kwargs: Any) -> dict[str, Any]:
        until = time.monotonic() + 0.6
        while time.monotonic() < until:
            with contextlib.suppress(BaseException):  # the worst a library could do
                time.sleep(0.05)
        return allow

    options = HookOptions(policy=POLICY, timeout=0.2)
    for answer in (swallowing, stubborn):
        monkeypatch.setattr(hookrun, "_answer", answer)
        started = time.monotonic()
        assert hookrun.timed_answer(b"{}", options) == hookwire.late(0.2)
        assert time.monotonic() - started < 2.5
    monkeypatch.setattr(hookrun, "timed_answer", lambda *a, **k: hookwire.late(options.timeout))
    monkeypatch.setattr(hooks, "key_of", lambda *a: "k")
    server, client = socket.socketpair()
    with server, client:
        client.sendall(json.dumps({"key": "k", "input": "{}", "cwd": "/", "until": time.time() + 30}).encode())
        client.shutdown(socket.SHUT_WR)
        assert hooks._serve_one(server, "k", options, True) is False  # this process serves no more


def test_a_policy_that_is_a_fifo_never_blocks_the_client(tmp_path: Path) -> None:
    fifo = tmp_path / "policy.toml"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert key_of(HookOptions(policy=fifo), fifo) != key_of(HookOptions(policy=POLICY), POLICY)
    assert time.monotonic() - started < 5
