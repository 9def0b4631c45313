"""The layout is the pipeline: stages import one way, the core imports no framework, names are public."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import typing
from pathlib import Path

import pytest

import validator

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "langchain_anthropic", "agents", "pydantic_ai")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    mapped = ((ROOT / "validator", "validator"), (ROOT / "integrations", "validator.integrations"))
    for base, prefix in (*mapped, (ROOT / "evals", "validator.evals")):
        for path in base.rglob("*.py"):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([prefix, *parts])] = path
    return found


def _imports(path: Path, module: str, known: set[str]) -> set[str]:
    """Modules ``path`` imports at run time (``TYPE_CHECKING`` blocks left out), as known module names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    out: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            # importing a.b.c runs a.b's __init__ too (the root package is always initialised first)
            for i in range(2, len(parts) + 1):
                candidate = ".".join(parts[:i])
                # a module's own packages are initialised before it: an edge to them is no loop
                if candidate in known and candidate != module and not module.startswith(candidate + "."):
                    out.add(candidate)
            if name == "validator" and module != "validator":
                out.add("validator")
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_loops() -> None:
    modules = _modules()
    graph = {m: _imports(p, m, set(modules)) for m, p in modules.items()}
    # the root package re-exports the public surface: edges into it from below are not loops of stages
    graph = {
        m: {d for d in deps if d != "validator" or m.startswith("validator.integrations")} for m, deps in graph.items()
    }
    assert _cycles(graph) == []


def test_core_imports_no_framework() -> None:
    for module, path in _modules().items():
        if module.startswith("validator.integrations"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(n.split(".")[0] in FRAMEWORKS for n in names), (module, names)


def test_store_imports_no_stage_above_it() -> None:
    """The store is below everything: its records are its own types, so it reads nothing of the gate,
    the engine, the judges, the recorder or the integrations (nor the root package that re-exports them)."""
    modules = _modules()
    above = ("validator.gate", "validator.engine", "validator.judges", "validator.record", "validator.integrations")
    for module in [m for m in modules if m.startswith("validator.store")]:
        deps = _imports(modules[module], module, set(modules))
        assert [d for d in deps if d.startswith(above) or d == "validator"] == [], module


def test_the_gate_returns_findings_and_one_function_decides() -> None:
    """The gate finds; :func:`validator.decision.decide` decides (principle 7's table in one place): no module of
    the gate imports a code, a decision, a verdict or a refusal text (the findings' types stand below the verdict:
    ``validator.findings``), at its top or inside a function; and neither the gate nor the judges import the
    decision (it stands above both)."""
    modules = _modules()
    for module in [m for m in modules if m.startswith(("validator.gate", "validator.judges"))]:
        tree = ast.parse(modules[module].read_text(encoding="utf-8"))
        every = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
        names = [n.module or "" for n in every if isinstance(n, ast.ImportFrom)]
        names += [a.name for n in every if isinstance(n, ast.Import) for a in n.names]
        names += [f"{n.module}.{a.name}" for n in every if isinstance(n, ast.ImportFrom) for a in n.names]
        assert [n for n in names if n == "validator.decision"] == [], module
        if module.startswith("validator.gate"):
            assert [n for n in names if n.startswith("validator.verdict")] == [], module


def test_text_is_below_every_reader_of_it() -> None:
    """``validator.text`` (search, entities, sentences, the lexer, times, paths) is what the gate, the blind view
    and the ledger read words with: it imports the inputs, the language pack and the findings' types, nothing of
    a stage above it (at its top or inside a function). The judges read words through it and the transcript's
    own facts, never through the gate; the ledger spends by the findings, never reading a sentence itself."""
    modules = _modules()
    known = set(modules)
    above = (
        "validator.gate",
        "validator.judges",
        "validator.state",
        "validator.engine",
        "validator.decision",
        "validator.record",
        "validator.policy",
        "validator.store",
        "validator.integrations",
        "validator.cli",
    )
    for module in [m for m in modules if m.startswith("validator.text")]:
        deps = _imports(modules[module], module, known)
        wrong = [d for d in deps if d.startswith(above) or d == "validator"]
        wrong += [d for d in deps if d.startswith("validator.verdict")]
        assert wrong == [], module
    for module in [m for m in modules if m.startswith("validator.judges")]:
        assert [d for d in _imports(modules[module], module, known) if d.startswith("validator.gate")] == [], module
    ledger = _imports(modules["validator.state.ledger"], "validator.state.ledger", known)
    assert not {"validator.gate.reader", "validator.gate.grammar", "validator.text.lexer"} & ledger


CONTEXT_STATE = {"validator.integrations._host"}
"""Modules that may keep a context variable: ``validation_context(...)``, the documented block a hand-written
loop opens so ``@guarded`` tools find their conversation (the host opts in, by name, around its own calls)."""


def test_no_hidden_state_in_the_core_or_the_adapters() -> None:
    """No context variables (the check's rules and its store session are values it carries), no ``global``
    statements, and no registry an import fills (control-flow signals are a value on the lifecycle)."""
    for module, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            assert not isinstance(node, ast.Global), (module, node.lineno)
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("ContextVar"):
                assert module in CONTEXT_STATE, (module, node.lineno)
        for node in tree.body:  # module-level calls that register something elsewhere
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                called = ast.unparse(node.value.func)
                assert not called.startswith(("register", "add_")) and ".register" not in called, (module, called)


CACHES = ("Conversations", "HeldConversations", "TranscriptCaches", "Remembered", "OrderedDict", "WeakValueDictionary")


def test_no_module_level_caches() -> None:
    """A cache of what checks read (conversations, verdicts, questions) belongs to the validator (or the adapter
    object) that made it, never to a module: two validators in one process share nothing, and a cache dies
    with its owner. (Memos of pure functions, ``functools.cache``, are not state: they return what the function
    would.) Context variables: only the documented one (``CONTEXT_STATE``)."""
    for module, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            if not isinstance(value, ast.Call):
                continue
            called = ast.unparse(value.func).split("[")[0].rsplit(".", 1)[-1]
            assert called not in CACHES, (module, node.lineno, called)
            assert called != "ContextVar" or module in CONTEXT_STATE, (module, node.lineno)


SEAMS = ("Store", "AuthorizationStore", "RequestLedger", "VerdictCache", "AuditLog", "Counters", "Recorder")


def test_seams_are_base_classes_never_sniffed() -> None:
    """The store and the recorder are base classes (httpx's ``BaseTransport`` shape): what a store or a recorder
    can do is a method with a default, so no module asks ``isinstance`` of a seam, ``hasattr``/``getattr`` of
    one of its methods, or declares a ``runtime_checkable`` protocol to ask it."""
    for module, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name | ast.Attribute) and ast.unparse(node).endswith("runtime_checkable"):
                raise AssertionError((module, node.lineno, "runtime_checkable"))
            if not isinstance(node, ast.Call) or not node.args:
                continue
            called = ast.unparse(node.func)
            if called == "isinstance" and len(node.args) == 2:
                kinds = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                assert not kinds & set(SEAMS), (module, node.lineno, ast.unparse(node))
            if called in ("hasattr", "getattr") and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                sniffed = node.args[1].value
                assert sniffed not in ("through", "appends_to", "session", "put", "aget", "add_block"), (
                    module,
                    node.lineno,
                    sniffed,
                )


def test_the_engine_has_one_pipeline_and_two_thin_shells() -> None:
    """``validate``/``avalidate`` (and ``answer``/``aanswer``) run the same generator of steps; the only
    difference between the shells is :func:`validator.shells.run` against :func:`validator.shells.arun`."""
    from validator.engine.pipeline import Validator

    def body(name: str) -> str:  # the statements after the docstring
        function = ast.parse(inspect.getsource(getattr(Validator, name)).strip()).body[0]
        assert isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        return "\n".join(ast.unparse(statement) for statement in function.body[1:])

    for sync, asynchronous in (("validate", "avalidate"), ("answer", "aanswer")):
        one, two = body(sync), body(asynchronous)
        assert one.count("run(") == 1, one
        assert one.replace("run(", "await arun(") == two, (one, two)


def test_exports_are_sorted_and_report_the_public_module() -> None:
    assert validator.__all__ == sorted(validator.__all__, key=str.casefold)
    for name in validator.__all__:
        obj = getattr(validator, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__ == "validator", name


def test_an_export_named_by_the_public_module_still_resolves_its_annotations() -> None:
    """Renaming an exported class's module to ``validator`` (whose namespace lacks the names its annotations use)
    broke ``typing.get_type_hints`` on it, and with it a user's pydantic model with a ``validator.Verdict`` field;
    its annotations are resolved before the rename (found while measuring a lazy verdict adapter, issue 61)."""
    import pydantic

    verdict = validator.Verdict.blocked("send_email", "no request")
    assert validator.Verdict.__module__ == "validator"
    assert typing.get_type_hints(validator.Verdict)["findings"] is validator.Findings
    assert typing.get_type_hints(validator.check)["return"] is validator.Verdict

    class Kept(pydantic.BaseModel):
        verdict: validator.Verdict

    assert Kept.model_validate({"verdict": verdict.to_dict()}).verdict == verdict


def test_every_error_is_exported() -> None:
    def subclasses(cls: type) -> set[type]:
        return {cls} | {s for c in cls.__subclasses__() for s in subclasses(c)}

    for cls in subclasses(validator.ValidatorError):
        if not cls.__name__.startswith("_") and cls.__qualname__.count(".") == 0 and "testing" not in cls.__module__:
            assert getattr(validator, cls.__name__, None) is cls, cls


OWN_ENVIRONMENT = {"validator.integrations.crewai"}
"""Adapters whose framework cannot share the dev environment (CrewAI's pins): imported where it is installed, by
``tests/test_install.py``, and here only to see that its absence names its extra (tests/test_extras.py)."""


@pytest.mark.parametrize("module", sorted(m for m in _modules() if not m.endswith("__main__")))
def test_every_module_imports(module: str) -> None:
    if module in OWN_ENVIRONMENT and importlib.util.find_spec(module.rsplit(".", 1)[1]) is None:
        pytest.skip(f"{module}: its framework has an environment of its own (tests/test_install.py)")
    importlib.import_module(module)


def test_integrations_come_from_the_package_namespace() -> None:
    import validator.integrations._host as host

    assert host.__name__ == "validator.integrations._host"
    assert Path(host.__file__).resolve() == ROOT / "integrations" / "_host.py"


def test_the_readme_layout_lists_every_module_on_a_line_of_its_own() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Layout")
    block = readme[readme.index("```\n", start) + 4 : readme.index("```\n", readme.index("```\n", start) + 4)]
    listed: set[str] = set()
    package = ""
    for line in block.splitlines():
        name = line.split()[0] if line.strip() else ""
        if not line.startswith(" ") and name.endswith("/"):
            package = name
        elif name.endswith(".py"):
            listed.add(package + name)
    shipped = {
        str(p.relative_to(ROOT))
        for folder in ("validator", "integrations", "evals")
        for p in (ROOT / folder).rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    }
    assert sorted(shipped - listed) == [] and sorted(listed - shipped) == []


def _class_names_written_as_strings(path: Path, names: frozenset[str]) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
    ]


def test_word_classes_are_one_closed_set() -> None:
    """Every class code reads is a constant of :mod:`validator.language.classes`, and each constant is a class a
    token can have: one the English grammar declares or names as a literal, one of the pack's ``[classes]``, or
    one the lexer makes. No module of the gate, the text package or the pack writes a class name as a string (a
    misspelt one would be a comparison never true)."""
    from validator.gate.grammar import grammar
    from validator.language import classes, english

    grammar_text = (ROOT / "validator" / "language" / "english.lark").read_text(encoding="utf-8")
    declared = {n for line in grammar_text.splitlines() if line.startswith("%declare") for n in line.split()[1:]}
    literals = {name for _, name in grammar().literals}
    assert set(english().classes) >= classes.PACK_TABLES, sorted(classes.PACK_TABLES - set(english().classes))
    assert classes.LEXER_MADE - {classes.POSS} <= declared, sorted(classes.LEXER_MADE - declared)
    assert literals >= classes.ENGLISH_LITERALS, sorted(classes.ENGLISH_LITERALS - literals)
    constants = {v for k, v in vars(classes).items() if k.isupper() and isinstance(v, str)}
    assert constants == classes.ALL
    names = frozenset(declared | literals | set(english().classes) | classes.ALL) - {"I"}  # ("I": also a value)
    readers = [*(ROOT / "validator" / "gate").glob("*.py"), *(ROOT / "validator" / "text").glob("*.py")]
    for path in [*readers, ROOT / "validator" / "language" / "__init__.py"]:
        assert _class_names_written_as_strings(path, names) == [], path


def test_tests_mirror_the_package() -> None:
    """A folder of tests per package (``tests/gate`` for ``validator.gate``, ``tests/service`` for
    ``validator.integrations.service``), so a module's tests are found where the module is."""
    packages = {m.rsplit(".", 1)[-1] for m, p in _modules().items() if p.name == "__init__.py"}
    folders = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= packages, sorted(folders - packages)


def _worded(node: ast.expr) -> bool:
    """Whether an expression writes words of its own: a string, or an f-string or sum whose literal parts hold a
    letter (``f"{why} {reasoning}"`` only composes texts written elsewhere)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and any(c.isalpha() for c in node.value)
    if isinstance(node, ast.JoinedStr):
        return any(_worded(v) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.BinOp):
        return _worded(node.left) or _worded(node.right)
    return False


def test_one_module_writes_refusal_texts() -> None:
    """A verdict's reasoning and next step are written in validator/refusals.py: every other module composes them
    from there, so one code reads the same on every path (the gate, the judges, the decision, the engine, the
    adapters, the service)."""
    found = []
    for module, path in _modules().items():
        if module in ("validator.verdict.refusals",) or ".devtools" in module or ".evals" in module:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            texts = [kw.value for kw in node.keywords if kw.arg in ("reasoning", "suggested_next_step")]
            called = ast.unparse(node.func)
            if called.endswith(("blocked", "GateResult", "_to_the_user", "_refusal", "service_unavailable")):
                texts += node.args[1:2]
            found += [f"{module}:{node.lineno}" for text in texts if _worded(text)]
    assert found == []


def test_at_most_ten_loose_modules() -> None:
    """What belongs together is a package (the verdict: its codes, findings and refusals; the
    language: the pack, the lexicon, the rules; the policy and its lint); at most ten modules stand alone."""
    loose = sorted(p.name for p in (ROOT / "validator").glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(loose) <= 10, loose


def test_evals_live_at_the_top_level_mapped_to_validator_evals() -> None:
    assert (ROOT / "evals" / "__init__.py").exists() and not (ROOT / "validator" / "evals").exists()
    assert _modules()["validator.evals.runner"] == ROOT / "evals" / "runner.py"


ADAPTER_LINES = 250
OVER = {"middleware": 387, "openai_agents": 392}
"""Adapters still over the bound, each at most its size when the lifecycle landed (issue 45's remainder: what
is left in them is their host's own shape, to be moved into the lifecycle next). A number here only goes down."""


def _adapter_sizes() -> dict[str, int]:
    """Each adapter's lines, with the integrations modules only it imports (the service package aside)."""
    mods = {p.stem: p for p in (ROOT / "integrations").glob("*.py") if p.stem != "__init__"}
    adapters = [m for m in mods if not m.startswith("_") and m != "testing"]
    uses = {m: {d for d in _names(p) if d in mods} for m, p in mods.items()}
    sizes = {}
    for a in adapters:
        own = [d for d in uses[a] if d not in adapters and sum(d in uses[b] for b in adapters) == 1]
        sizes[a] = sum(len(mods[m].read_text(encoding="utf-8").splitlines()) for m in (a, *own))
    return sizes


def _names(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("validator.integrations."):
            found.add((node.module or "").split(".")[2])
    return found


def test_adapters_only_translate() -> None:
    """An adapter translates its host's call and its host's way of asking into the lifecycle
    (``ToolCallGuard.run``) and nothing else: at most 250 lines, counting the integrations modules only it
    imports. None keeps its own memo of questions or verdicts (the guard's store holds them)."""
    for adapter, size in _adapter_sizes().items():
        assert size <= OVER.get(adapter, ADAPTER_LINES), (adapter, size)
        source = (ROOT / "integrations" / f"{adapter}.py").read_text(encoding="utf-8")
        assert "_asked" not in source and "_reviews" not in source and "_judged" not in source, adapter


def test_the_readme_layout_names_each_box_of_the_pipeline() -> None:
    """The design's pipeline (adapter, inputs, engine, gate, judges, decision, state, record, store): each box is
    one folder or module a newcomer finds from the README's Layout."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme[readme.index("## Layout") :]
    boxes = {
        "host adapter": "integrations/_lifecycle.py",
        "inputs": "validator/inputs/",
        "engine": "validator/engine/",
        "gate": "validator/gate/",
        "judges": "validator/judges/",
        "decision": "validator/decision.py",
        "state": "validator/state/",
        "record": "validator/record/",
        "store": "validator/store/",
    }
    for box, where in boxes.items():
        row = next((line for line in layout.splitlines() if line.startswith(f"| {box}")), "")
        assert f"`{where}`" in row, box
        assert (ROOT / where).exists(), where


def test_every_refusing_code_has_its_next_step() -> None:
    """Issue 60: a code that refuses tells the agent what to do next, from the one table of texts; the codes
    without one are named here (what approves, and what carries the judge's or the user's own words)."""
    from validator.verdict.codes import Code
    from validator.verdict.refusals import NEXT_STEPS, next_step

    own_words = {Code.APPROVED, Code.EXEMPT, Code.APPROVED_BY_USER, Code.NOT_ENFORCED}
    own_words |= {Code.JUDGE_REJECTED, Code.REJECTED_BY_USER}  # the model's suggestion, the user's answer
    assert sorted(c.value for c in Code if c not in NEXT_STEPS and c not in own_words) == []
    for code in NEXT_STEPS:
        text = next_step(code, tool="send_email", paths="to")
        assert text.endswith((".", ")")) and "{" not in text, code


def test_every_request_problem_and_context_row_has_its_words() -> None:
    """Every problem the request reader reports has its reason in the one table of texts (no fallback text for a
    problem added later), and every row a context outcome names (the table's, and the reader's own ``held``,
    ``reply``, ``frame``, ``addressed``) says what it found."""
    from typing import get_args

    from validator.findings import RequestProblem
    from validator.verdict.refusals import CONTEXT_ROWS, FOUND_REASONS, REQUEST_REASONS

    problems = set(get_args(RequestProblem))
    assert problems == set(REQUEST_REASONS) and set(FOUND_REASONS) <= problems
    named: set[str] = set()
    for module in ("context", "requests"):
        tree = ast.parse((ROOT / "validator" / "gate" / f"{module}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("Unknown", "Disproved") and node.args:
                first = node.args[0]
                named |= {first.value} if isinstance(first, ast.Constant) else set()
            if isinstance(node, ast.keyword) and node.arg == "row" and isinstance(node.value, ast.Constant):
                named.add(node.value.value)
    assert len(named) > 15 and sorted(named - set(CONTEXT_ROWS)) == []


def test_the_lifecycle_is_written_once_for_both_shells() -> None:
    """Issue 60: ``ToolCallGuard``'s sync and async twins take the same steps (a generator of effects run by
    :mod:`validator.shells`), never two hand-written bodies that could drift apart."""
    from validator.integrations._lifecycle import ToolCallGuard

    def body(name: str) -> str:
        function = ast.parse(inspect.getsource(getattr(ToolCallGuard, name)).strip()).body[0]
        assert isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        return "\n".join(ast.unparse(statement) for statement in function.body[1:])

    for sync, asynchronous in (("decide", "adecide"), ("run", "arun"), ("settle", "asettle")):
        one, two = body(sync), body(asynchronous)
        assert one.startswith("return run(self._"), one
        assert one.replace("return run(", "return await arun(") == two, (one, two)
