"""The package as a user gets it: the wheel is built, installed with each extra set into a fresh environment,
and the documentation's snippets and the CLI run from an empty folder against it, never against this checkout.

Each code block of the documentation (the README, then the site) runs in reading order in one folder that
starts empty (so ``validator init`` early on writes the ``policy.toml`` a later snippet loads), each Python
block with the interpreter of the environment holding exactly the extras its imports name, each shell line
with the base install's ``validator``. Model calls go to a scripted Messages API on a mock transport (the
real SDK), and a connection off this machine fails the snippet. Environments are made with uv (fast, and a fresh one
every time); ``make test-fast`` leaves these tests out (marker ``install``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.docs import BLOCKS, PAGES
from tests.test_extras import MODULES
from tests.test_package import _build_wheel
from validator.extras import EXTRAS, extra_for, install_hint

# under pytest-xdist one worker runs this file, in order (make test's --dist loadfile): the README's and the docs'
# blocks build on each other in one folder (`validator init` writes the policy the next blocks load)
pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parent.parent
INSTALL_PAGE = PAGES["docs/install.md"]
UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
OURS = {**dict(MODULES), "validator.integrations.langchain_tools": "langchain"}
"""Our modules that need an extra, beside the third-party modules of :data:`validator.extras.EXTRAS`."""


class Environments:
    """One fresh virtual environment per set of extras, made on first use, the wheel installed into it."""

    def __init__(self, folder: Path, wheel: Path) -> None:
        self.folder, self.wheel = folder, wheel
        self.made: dict[tuple[str, ...], Path] = {}

    def python(self, *extras: str, brought: tuple[str, ...] = ()) -> Path:
        """``brought``: packages the application brings beside ours (the OpenTelemetry SDK)."""
        key = tuple(sorted(set(extras))) + tuple(sorted(set(brought)))
        if key not in self.made:
            assert UV, "uv is part of the dev extra: scripts/setup.sh dev installs it"
            env = self.folder / ("-".join(key) or "base")
            subprocess.run([UV, "venv", "-q", "--python", sys.executable, str(env)], check=True, capture_output=True)
            ours = sorted(set(extras))
            spec = f"{self.wheel}[{','.join(ours)}]" if ours else str(self.wheel)
            done = subprocess.run(
                [UV, "pip", "install", "-q", "--python", str(env / "bin" / "python"), spec, *brought],
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, done.stderr[-3000:]
            self.made[key] = env / "bin" / "python"
        return self.made[key]

    def script(self, *extras: str) -> Path:
        return self.python(*extras).parent / "validator"


@pytest.fixture(scope="session")
def envs(tmp_path_factory: pytest.TempPathFactory) -> Environments:
    built = tmp_path_factory.mktemp("wheel")
    return Environments(tmp_path_factory.mktemp("envs"), _build_wheel(built))


@pytest.fixture(scope="session")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's empty folder, shared by the documentation's blocks in their order."""
    return tmp_path_factory.mktemp("empty")


def _env(tmp: Path) -> dict[str, str]:
    """A user's environment: no path into this checkout, no key, no store URL, a terminal 100 wide."""
    drop = ("PYTHONPATH", "VALIDATOR_STORE_URL", "ANTHROPIC_API_KEY", "VIRTUAL_ENV", "CLAUDE_PROJECT_DIR")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(COLUMNS="100", HOME=str(tmp), VALIDATOR_SPOOL=str(tmp / "spool.jsonl"))
    return env


def _run(argv: list[str | Path], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=_env(cwd.parent), capture_output=True, text=True, timeout=300, **kwargs
    )


# -- the documentation, block by block --------------------------------------------------------


BROUGHT = {"opentelemetry.sdk": "opentelemetry-sdk"}
"""What an application brings itself beside our extras, by the module a block imports (the OpenTelemetry SDK:
our extra brings the API only)."""


def _imports(body: str) -> list[str]:
    """The modules a Python block imports, as written."""
    return re.findall(r"^\s*(?:from|import) ([\w.]+)", body, re.M)


def brought_by(body: str) -> tuple[str, ...]:
    imported = _imports(body)
    return tuple(sorted({p for m, p in BROUGHT.items() for i in imported if i == m or i.startswith(m + ".")}))


def extras_of(body: str) -> set[str]:
    """The extras a Python block needs: those its imports name, ours or a framework's."""
    needed: set[str] = set()
    for module in _imports(body):
        ours = [extra for name, extra in OURS.items() if module == name or module.startswith(name + ".")]
        needed |= set(ours) if module.startswith("validator") else {e for e in [extra_for(module)] if e}
    return needed


PRELUDE = """
import os, socket, sys
_connect = socket.socket.connect
def _loopback_only(self, address):
    import ipaddress
    host = address if isinstance(address, str) else address[0]
    if not (isinstance(address, str) or host == "localhost" or ipaddress.ip_address(host).is_loopback):
        raise SystemExit(f"the snippet tried to reach {address!r}: nothing off this machine")
    return _connect(self, address)
socket.socket.connect = _loopback_only
try:
    import anthropic, httpx2
except ImportError:
    pass
else:  # anthropic.Anthropic() as a user writes it, answered by a scripted API on a mock transport
    sys.path.insert(0, MOCK)
    from readme_mock import MockAPI, message, verdict_call
    _api = MockAPI([message([verdict_call()]) for _ in range(4)])
    _real = anthropic.Anthropic
    def _offline(**kwargs):
        client = httpx2.Client(transport=httpx2.MockTransport(_api.handler))
        return _real(api_key="sk-test", http_client=client, **kwargs)
    anthropic.Anthropic = _offline
    os.environ["ANTHROPIC_API_KEY"] = "sk-test"
del sys.path[0]
"""

RUN = [(lang, body, why, line) for lang, body, why, line in BLOCKS if lang in ("python", "sh") and why is None]


@pytest.mark.parametrize(("lang", "body", "line"), [(a, b, d) for a, b, _, d in RUN], ids=[d for *_, d in RUN])
def test_the_readme_runs_from_an_empty_folder(
    lang: str, body: str, line: int, envs: Environments, folder: Path
) -> None:
    if lang == "sh":
        _shell(body, envs, folder)
        return
    mock = folder.parent / "mock"
    mock.mkdir(exist_ok=True)
    shutil.copy(ROOT / "tests" / "anthropic_mock.py", mock / "readme_mock.py")
    code = PRELUDE.replace("MOCK", repr(str(mock))) + body
    extras = extras_of(body)
    for _ in range(3):  # a name imported lazily (AnthropicJudge) is found by running: its error names the extra
        done = _run([envs.python(*extras, brought=brought_by(body)), "-c", code], folder)
        named = re.search(r"pip install 'action-validator\[([\w-]+)\]'", done.stderr)
        if done.returncode == 0 or named is None or named[1] in extras:
            break
        extras.add(named[1])
    assert done.returncode == 0, f"{line} (extras {sorted(extras)}):\n{done.stderr[-3000:]}"
    for shown in re.findall(r"^\s*print\(.*\)\s*# (\S.*)$", body, re.M):  # "print(...)  # shown" comments
        if not shown.endswith("..."):
            assert shown in done.stdout, (line, shown, done.stdout)


def _shell(body: str, envs: Environments, folder: Path) -> None:
    (folder / "checks.jsonl").write_text(
        "\n".join(
            json.dumps(json.loads(p.read_text())) for p in sorted((ROOT / "validator" / "examples").glob("*.json"))
        )
        + "\n"
    )
    for raw in body.replace("\\\n", " ").splitlines():
        command = raw.split("  #")[0].strip()
        if not command or command.startswith("pip install"):  # the install is this environment
            continue
        args = command.split()
        assert args[0] == "validator", raw
        stdin = (ROOT / "validator" / "examples" / "vendor_invoice.json").read_text() if args[-1] == "-" else None
        done = _run([envs.script(), *args[1:]], folder, input=stdin)
        assert done.returncode in (0, 1, 4), (raw, done.stdout[-500:], done.stderr[-500:])
        assert "Traceback" not in done.stderr, (raw, done.stderr)


# -- the CLI from an empty folder, the base install -------------------------------------------------


def test_the_cli_from_an_empty_folder(envs: Environments, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    validator = envs.script()

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return _run([validator, *args], work, input=stdin)

    assert run("--version").stdout.startswith("action-validator ")
    assert run("-h").returncode == 0 and "<bool>" not in run("check", "-h").stdout
    assert run("init").returncode == 0 and (work / "policy.toml").is_file()
    assert run("init").returncode == 2  # never overwritten unasked
    assert run("policy", "check", "policy.toml").returncode == 0
    assert run("check", "--example", "authorized_email").returncode == 0
    assert run("check", "--example", "vendor_invoice").returncode == 1  # blocked
    assert run("check", "--example", "delete_instead_of_archive").returncode == 4  # ask_user
    lines = "\n".join(
        (ROOT / "validator" / "examples" / f"{n}.json").read_text().replace("\n", " ")
        for n in ("authorized_email", "delete_instead_of_archive")
    )
    batch = run("check", "--jsonl", "--policy", "policy.toml", "-", stdin=lines)
    assert batch.returncode == 4 and len(batch.stdout.splitlines()) == 2  # the most severe line: ask_user
    suite = run("eval", "--no-progress")  # the packaged suite, with no file of this folder
    assert suite.returncode == 0, suite.stdout[-2000:] + suite.stderr[-2000:]
    assert "worst-case" in suite.stdout
    lost = run("auth", "grant", "--user", "u", "--tool", "send_*", "--quote", "always")
    assert lost.returncode == 2 and "needs a store that outlives it" in lost.stderr and not lost.stdout
    tried = run("auth", "grant", "--user", "u", "--tool", "send_*", "--quote", "always", "--store", "memory://")
    assert tried.returncode == 0 and tried.stdout.startswith("auth_")
    assert run("audit", "tail").returncode == 2
    assert sorted(p.name for p in work.iterdir()) == ["policy.toml"]  # nothing else written into the folder


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["serve"], "service"),
        (["eval", "--report", "report", "--no-progress"], "report"),
        (["check", "--example", "vendor_invoice", "--judge", "anthropic", "--model", "claude-haiku-4-5"], "anthropic"),
        (["check", "--example", "vendor_invoice", "--store", "redis://127.0.0.1:1/0"], "redis"),
        (["token", "list", "--store", "redis://127.0.0.1:1/0"], "service"),
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else a,
)
def test_a_missing_extra_is_one_line(args: list[str], extra: str, envs: Environments, tmp_path: Path) -> None:
    done = _run([envs.script(), *args], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert install_hint(extra) in done.stderr, done.stderr


@pytest.mark.parametrize(("module", "extra"), sorted(OURS.items()))
def test_an_adapter_without_its_extra_names_it(module: str, extra: str, envs: Environments, tmp_path: Path) -> None:
    done = _run([envs.python(), "-c", f"import {module}"], tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].endswith(install_hint(extra)), done.stderr


# -- each extra set, in an environment of its own ---------------------------------------------------


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_each_extra_installs_and_imports_what_it_brings(extra: str, envs: Environments, tmp_path: Path) -> None:
    ours = [m for m, e in OURS.items() if e == extra]
    code = "; ".join(f"import {m}" for m in [*ours, *(f"{t}" for t in EXTRAS[extra])])
    done = _run([envs.python(extra), "-c", code], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_report_extra_draws_the_charts(envs: Environments, tmp_path: Path) -> None:
    done = _run([envs.script("report"), "eval", "--report", "report", "--no-progress"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert {"report.md", "report.json", "accuracy.png", "confusion.png"} <= {
        p.name for p in (tmp_path / "report").iterdir()
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(envs: Environments, tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [str(envs.script("service")), "serve", "--port", str(port)],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr and proc.stderr.read()
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_the_service_extra_serves_and_the_base_install_is_its_client(
    served: str, envs: Environments, tmp_path: Path
) -> None:
    code = (
        "from validator.integrations.service import ServiceClient\n"
        f"v = ServiceClient({served!r}, token='vt_not-issued').check("
        "{'messages': [{'role': 'user', 'content': 'hi'}], 'action': {'tool': 'send_email'}})\n"
        "import sys; print(v.approved, v.code.value, 'fastapi' in sys.modules)\n"
    )
    done = _run([envs.python(), "-c", code], tmp_path)  # the client with the base install: no FastAPI
    assert done.returncode == 0, done.stderr
    approved, code_value, fastapi = done.stdout.split()
    assert approved == "False" and fastapi == "False" and code_value != "APPROVED"


# -- a user's type checker -------------------------------------------------------------------------

USER_CODE = """
from validator import ActionBlocked, Policy, Validator, Verdict
from validator.integrations.tools import guarded


@guarded
def send(to: str) -> str:
    return to


@guarded(validator=Validator(Policy()))
async def pay(to: str, amount: int) -> int:
    return amount


reveal_type(send)
reveal_type(pay)
text: str = send("bob@acme.example", justification={"reason": "asked", "evidence": []})
try:
    pass
except ActionBlocked as exc:
    verdict: Verdict = exc.verdict
"""


def test_a_users_mypy_strict_reads_the_installed_types(envs: Environments, tmp_path: Path) -> None:
    (tmp_path / "user.py").write_text(USER_CODE)
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable", str(envs.python())]
    done = _run([*mypy, "user.py"], tmp_path)
    notes = [line for line in done.stdout.splitlines() if "Revealed type" in line]
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert errors == [], done.stdout  # no import-untyped: py.typed ships
    assert re.search(r'"def \(\*Any, \*\*Any\) -> (builtins\.)?str"', notes[0]), notes
    assert re.search(r"Coroutine\[Any, Any, (builtins\.)?int\]", notes[1]), notes


# -- the documentation's sample output, generated ---------------------------------------------

OUTPUT = re.compile(r"<!-- output of: (?P<command>[^>]*?) -->\n```\n(?P<shown>.*?)```", re.S)
SAMPLES = [(m["command"], m["shown"], name) for name, text in PAGES.items() for m in OUTPUT.finditer(text)]


def _steady(text: str) -> str:
    """What two runs print alike: timings vary, so each is read as some milliseconds, and a table pads
    the line around it, so runs of spaces are read as one."""
    return re.sub(r" +", " ", re.sub(r"\d[\d.,]* ?ms\b", "#ms", text)).rstrip()  # and pads the line to fit


@pytest.mark.parametrize(("command", "shown", "page"), SAMPLES, ids=[c for c, _, _ in SAMPLES])
def test_the_docs_sample_output_is_what_the_command_prints(
    command: str, shown: str, page: str, envs: Environments, tmp_path: Path
) -> None:
    """The documentation shows what the command prints from an empty folder, 100 columns wide. With
    ``UPDATE_README=1`` the test writes it there instead (then commit the page)."""
    args = command.split()
    assert args[0] == "validator", command
    extras: set[str] = set()
    for _ in range(3):  # as a user would: run it, and install the extra its one line names
        done = _run([envs.script(*extras), *args[1:]], tmp_path)
        named = re.search(r"pip install 'action-validator\[([\w-]+)\]'", done.stderr)
        if named is None or named[1] in extras:
            break
        extras.add(named[1])
    assert "Traceback" not in done.stderr, done.stderr
    printed = done.stdout.rstrip() + "\n"
    if os.environ.get("UPDATE_README") == "1":
        readme = ROOT / page
        text = readme.read_text(encoding="utf-8")
        block = f"<!-- output of: {command} -->\n```\n"
        start = text.index(block) + len(block)
        readme.write_text(text[:start] + printed + text[text.index("```", start) :], encoding="utf-8")
        return
    assert _steady(shown) == _steady(printed), (
        f"{page}: the sample of `{command}` is stale: UPDATE_README=1 rewrites it"
    )


# -- the install page's lines, as written, from a clone --------------------------------------------


def _install_blocks() -> list[list[str]]:
    """The shell blocks of the install page: each a list of its ``pip install`` lines (comments off)."""
    section = INSTALL_PAGE
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    lines = [[raw.split("  #")[0].strip() for raw in b.splitlines() if raw.startswith("pip install")] for b in blocks]
    return [block for block in lines if block]


def test_the_readmes_install_lines_work_from_a_clone(tmp_path: Path) -> None:
    """``pip install .`` with extras, and a wheel built with ``python -m build``, each in a fresh environment with
    pip, run as the install page writes them in a copy of the repository; then the CLI and the extras from an empty
    folder."""
    blocks = _install_blocks()
    assert len(blocks) == 2, blocks  # from the clone; a wheel built in it
    clone = tmp_path / "action-validator"
    skip = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache")
    shutil.copytree(ROOT, clone, ignore=skip)
    empty = tmp_path / "project"
    empty.mkdir()
    assert UV, "uv is part of the dev extra: scripts/setup.sh dev installs it"
    for n, block in enumerate(blocks):
        env = tmp_path / f"env{n}"
        subprocess.run([UV, "venv", "-q", "--seed", "--python", sys.executable, str(env)], check=True)
        path = {"PATH": f"{env / 'bin'}:{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(env)}
        for line in block:
            done = subprocess.run(
                ["bash", "-c", line],
                cwd=clone,
                env={**_env(tmp_path), **path},
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-3000:])
        extras = sorted(set(re.findall(r"\[([\w,-]+)\]", " ".join(block))[0].split(",")))
        modules = [m for extra in extras for m in EXTRAS[extra]]
        done = _run([env / "bin" / "python", "-c", "; ".join(f"import {m}" for m in modules)], empty)
        assert done.returncode == 0, (block, done.stderr[-2000:])
        done = _run([env / "bin" / "validator", "check", "--example", "vendor_invoice"], empty)
        assert done.returncode == 1 and "Traceback" not in done.stderr, (block, done.stdout[-500:], done.stderr)


def test_the_crewai_adapter_in_an_environment_of_its_own(envs: Environments, tmp_path: Path) -> None:
    """The wheel with the ``crewai`` extra alone (CrewAI's OpenTelemetry pins part it from Google ADK): the
    adapter's checks against the real CrewAI, and the offline example, from an empty folder."""
    for name in ("examples/crewai_crew.py", "tests/integrations/crewai_env_checks.py"):
        shutil.copy(ROOT / name, tmp_path)
    python = envs.python("crewai")
    done = _run([python, tmp_path / "crewai_env_checks.py"], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count("ok  ") == 5, done.stdout
    done = _run([python, tmp_path / "crewai_crew.py"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (
        "was not run (INJECTION_SIGNATURE)" in done.stdout
        and "happened  > EMAIL SENT to bob@acme.example" in done.stdout
    )
    assert "PAID" not in done.stdout
