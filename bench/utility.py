"""A benign utility suite from public data: how often the validator lets a user's own requests through.

The conversations, their ground-truth tool calls and the simulated APIs come from the Berkeley Function
Calling Leaderboard's multi-turn suite (the PyPI package ``bfcl-eval``, Apache-2.0), written by people
outside this project: a file system, workspace messaging, a Twitter-like API, support tickets, a trading
bot, travel booking, a car, a calculator. Every call in them is one the user asked for, so every refusal
here is a cost of the validator, not a catch.

Per entry the simulated classes are instantiated with the entry's initial state, each ground-truth call
is parsed with ``ast`` (never evaluated) and run against them turn by turn, and the conversation is built
as a check input as it goes: the user's turn, then for each call an assistant message with the call and a
tool message with its real output (JSON). Before each guarded call (``bench/utility_policy.toml``, written
from the function docs), the validator checks it against the conversation so far, with the justification
a well-behaved agent would give: the whole current user turn, quoted exactly. The call then runs whatever
the verdict (it is the ground truth), so later calls see real outputs. Each entry gets a fresh
``Validator`` (so the one-request ledger does not carry over from one conversation to the next).

Run: ``python bench/utility.py [--category base|long_context|all] [--limit N] [--json PATH]``; figures go
to ``bench/results/utility.json``; the last line is ``utility: approved A of N, asked K, blocked B``.
Needs ``python -m pip install --no-deps bfcl-eval==2026.3.23``; the calculator (MathAPI) also needs
``mpmath``, and its entries are skipped (and counted) without it.
"""

from __future__ import annotations

import argparse
import ast
import copy
import dataclasses
import importlib
import importlib.util
import inspect
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from validator import Code, Policy, Validator, ValidatorConfig, Verdict
from validator.judges.base import Judge, JudgeOutput, JudgeRequest
from validator.policy.suggest import propose, read_specs
from validator.testing import FunctionJudge, always_yes

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
"""The checks' date, fixed (no bench case may depend on the day it runs): before every day the suite's users name
for what they ask (February 28 to December 25, 2026: "on November 15th 2026")."""

ROOT = Path(__file__).resolve().parent.parent
POLICY_PATH = ROOT / "bench" / "utility_policy.toml"
DEFAULT_JSON = ROOT / "bench" / "results" / "utility.json"
FOUND_JSON = ROOT / "bench" / "results" / "utility-found.json"
PACKAGE = "bfcl-eval==2026.3.23"
CATEGORIES = {"base": "multi_turn_base", "long_context": "multi_turn_long_context"}
USER_ID = "u-1"
REASON = "The user asked for this in their current message."
EXAMPLES = 24
"""Refusals kept as examples in the JSON file, spread over codes and API classes."""

Method = Callable[..., Any]


@dataclass(slots=True)
class Backend:
    """The simulated API classes, imported the first time an entry needs one (and why one could not be)."""

    modules: dict[str, str]
    """Class name -> module, the suite's own mapping."""
    stateless: frozenset[str]
    classes: dict[str, type] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)

    def load(self, name: str) -> type | None:
        if name not in self.classes and name not in self.missing:
            try:
                module: ModuleType = importlib.import_module(self.modules[name])
            except ImportError as exc:  # the calculator imports mpmath, which --no-deps does not bring
                self.missing[name] = f"{type(exc).__name__}: {exc}"
                return None
            self.classes[name] = getattr(module, name)
        return self.classes.get(name)


@dataclass(frozen=True, slots=True)
class Check:
    """One guarded ground-truth call and the validator's verdict on it."""

    entry: str
    turn: int
    api: str
    tool: str
    args: dict[str, Any]
    user_turn: str
    decision: str
    code: str
    cause: str
    """What the refusal rests on: the request grammar's problem, or the first ungrounded value and its status."""
    reasoning: str
    risk: str = "general"
    decided_by: str = "code"
    """Who decided: ``code``, ``model`` (the stand-in judge's answer decided it) or ``user`` (asked)."""


@dataclass(slots=True)
class Run:
    """What one category's entries gave."""

    category: str
    entries: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    """Entries not run, by the API class that could not be imported."""
    calls: int = 0
    """Ground-truth calls executed (exempt ones included)."""
    execution_errors: list[str] = field(default_factory=list)
    """Ground-truth calls the simulated API raised on (their error text was the tool output)."""
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0


# -- the data -----------------------------------------------------------------------------------


def package_dir() -> Path | None:
    """Where bfcl_eval is installed, or None."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def load_backend() -> Backend:
    """The suite's class-to-module mapping; the classes themselves are imported when first needed."""
    config = importlib.import_module("bfcl_eval.constants.executable_backend_config")
    return Backend(dict(config.CLASS_FILE_PATH_MAPPING), frozenset(config.STATELESS_CLASSES))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_category(data: Path, category: str) -> list[tuple[dict[str, Any], list[list[str]]]]:
    """Each entry of the category with its ground truth (a list of call strings per turn)."""
    stem = f"BFCL_v4_{CATEGORIES[category]}.json"
    truth = {row["id"]: row["ground_truth"] for row in read_jsonl(data / "possible_answer" / stem)}
    return [(entry, truth[entry["id"]]) for entry in read_jsonl(data / stem)]


# -- one call -------------------------------------------------------------------------------------


def parse_call(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """``mv(source='a', destination='b')`` as its name, positional and keyword arguments (literals only)."""
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain function call: {text!r}")
    if any(keyword.arg is None for keyword in node.keywords):
        raise ValueError(f"**kwargs in a ground-truth call: {text!r}")
    positional = [ast.literal_eval(arg) for arg in node.args]
    named = {str(keyword.arg): ast.literal_eval(keyword.value) for keyword in node.keywords}
    return node.func.id, positional, named


def named_args(method: Method, positional: list[Any], named: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by parameter name (positional ones mapped through the signature), as JSON data."""
    bound = inspect.signature(method).bind(*positional, **named)
    plain: dict[str, Any] = json.loads(json.dumps(dict(bound.arguments), default=str))
    return plain


def execute(method: Method, args: dict[str, Any]) -> tuple[str, bool]:
    """The call's return value as JSON text, and whether it ran without raising."""
    try:
        result = method(**args)
    except Exception as exc:  # the simulated API's own failure: it becomes the tool output, as in BFCL
        return f"Error during execution: {type(exc).__name__}: {exc}", False
    return json.dumps(result, default=str, ensure_ascii=False), True


def instantiate(entry: dict[str, Any], backend: Backend, long_context: bool) -> dict[str, tuple[str, Method]]:
    """The entry's API instances in their initial state: each public method name -> (class name, method)."""
    methods: dict[str, tuple[str, Method]] = {}
    for name in entry["involved_classes"]:
        instance = backend.classes[name]()
        if name not in backend.stateless:
            scenario = copy.deepcopy(entry["initial_config"].get(name, {}))
            instance._load_scenario(scenario, long_context=long_context)
        for method_name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
            if not method_name.startswith("_"):
                methods[method_name] = (name, method)
    return methods


# -- one entry ------------------------------------------------------------------------------------


def user_text(turn: list[dict[str, Any]]) -> str:
    """The user's words of one turn (in this suite, one user message a turn)."""
    return "\n".join(str(message["content"]) for message in turn if message["role"] == "user")


def cause(verdict: Verdict) -> str:
    """Why a refusal: the grammar's reason no request was proved, else the first value the user never gave."""
    findings = verdict.findings
    if verdict.code is Code.ACTION_NOT_REQUESTED and findings.intent is not None and findings.intent.problem:
        return f"request {findings.intent.problem}"
    if verdict.code in (Code.TARGET_NOT_GROUNDED, Code.ENTITY_NOT_GROUNDED):
        for value in (*findings.targets, *findings.entities):
            if not value.grounded:
                return f"{value.path} {value.status}"
    return ""


def run_entry(
    entry: dict[str, Any],
    truth: list[list[str]],
    policy: Policy,
    backend: Backend,
    run: Run,
    long_context: bool,
    found: bool = False,
    rules_off: frozenset[str] = frozenset(),
    judge: Judge | None = None,
) -> None:
    """Replay one conversation's ground truth, checking each guarded call before it runs (``found``: with no
    justification, as a host that cannot carry one sends it)."""
    methods = instantiate(entry, backend, long_context)
    # fresh: the ledger starts empty
    validator = Validator(policy, judge=judge, config=ValidatorConfig(rules_off=rules_off, clock=lambda: NOW))
    messages: list[dict[str, Any]] = []
    count = 0
    for turn_index, (turn, calls) in enumerate(zip(entry["question"], truth, strict=True)):
        messages.extend({"role": "user", "content": str(m["content"])} for m in turn if m["role"] == "user")
        quote = user_text(turn)
        for text in calls:
            tool, positional, named = parse_call(text)
            api, method = methods[tool]
            args = named_args(method, positional, named)
            if not policy.for_tool(tool).exempt:
                action: dict[str, Any] = {"tool": tool, "args": args}
                if found:
                    action["find_evidence"] = True
                else:
                    action["justification"] = {"reason": REASON, "evidence": [{"quote": quote}]}
                verdict = validator.validate(messages, action, user_id=USER_ID)
                run.checks.append(
                    Check(
                        entry=entry["id"],
                        turn=turn_index,
                        api=api,
                        tool=tool,
                        args=args,
                        user_turn=quote,
                        decision=verdict.decision.value,
                        code=verdict.code.value,
                        cause=cause(verdict),
                        reasoning=verdict.reasoning,
                        risk=verdict.risk,
                        decided_by=verdict.decided_by,
                    )
                )
            output, ok = execute(method, args)
            if not ok:
                run.execution_errors.append(f"{entry['id']}: {text} -> {output[:200]}")
            count += 1
            call_id = f"c{count}"
            messages.append(
                {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "name": tool, "args": args}]}
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "name": tool, "content": output})
    run.calls += count


def run_category(
    category: str,
    limit: int | None,
    policy: Policy,
    backend: Backend,
    data: Path,
    found: bool = False,
    rules_off: frozenset[str] = frozenset(),
    judge: Judge | None = None,
) -> Run:
    run = Run(category)
    started = time.perf_counter()
    entries = load_category(data, category)
    for entry, truth in entries[:limit] if limit is not None else entries:
        missing = [name for name in entry["involved_classes"] if backend.load(name) is None]
        if missing:
            run.skipped[missing[0]] += 1
            continue
        run.entries += 1
        run_entry(
            entry,
            truth,
            policy,
            backend,
            run,
            long_context=category == "long_context",
            found=found,
            rules_off=rules_off,
            judge=judge,
        )
    run.seconds = time.perf_counter() - started
    return run


# -- the model stand-in --------------------------------------------------------------------------


class ApproveAll:
    """The ceiling a perfect model could reach on the blind view: a judge that approves every call it is asked
    about with high confidence, citing the first sentence of the user's the gate lets it cite
    (:func:`validator.testing.always_yes`). Each call is priced as the blind request an
    ``AnthropicJudge`` would send (``bench/cache_cost.py``'s model and prices, no cache)."""

    def __init__(self) -> None:
        spec = importlib.util.spec_from_file_location("bench_cache_cost", ROOT / "bench" / "cache_cost.py")
        assert spec is not None and spec.loader is not None
        self._cost = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = self._cost  # its dataclasses look their module up
        spec.loader.exec_module(self._cost)
        emulator = self._cost.CacheEmulator(self._cost._answer)
        self._judge = self._cost.AnthropicJudge(self._cost.MODEL, client=self._cost._client(emulator), view="blind")
        self.calls = 0
        self.usd = 0.0

    def __call__(self, request: JudgeRequest) -> JudgeOutput:
        self.calls += 1
        body = self._judge.plan(request).body
        usage = {**self._cost.CacheEmulator(self._cost._answer, enabled=False).usage(body), "output_tokens": 60}
        self.usd += float(self._cost.PRICES.cost(self._cost.MODEL, usage) or 0.0)
        return always_yes(request)


def with_intent_judge(policy: Policy) -> Policy:
    """The policy with ``intent = "judge"`` on every dangerous tool (the opt-in this bench measures)."""
    tools = {
        name: dataclasses.replace(tp, intent="judge") if tp.risk == "dangerous" else tp
        for name, tp in policy.tools.items()
    }
    return dataclasses.replace(policy, tools=tools)


# -- the figures ----------------------------------------------------------------------------------


def tally(checks: list[Check]) -> dict[str, Any]:
    decisions = Counter(c.decision for c in checks)
    by = Counter(c.decided_by for c in checks)
    refusals = Counter(c.code for c in checks if c.decision != "approve")
    causes = Counter(" ".join(filter(None, (c.code, c.cause))) for c in checks if c.decision != "approve")
    return {
        "checked": len(checks),
        "approved": decisions["approve"],
        "asked": decisions["ask_user"],
        "blocked": decisions["block"],
        "refusal_codes": dict(refusals.most_common()),
        "refusal_causes": dict(causes.most_common()),
        "decided_by": {who: by[who] for who in ("code", "model", "user")},
    }


def grouped(checks: list[Check], key: Callable[[Check], str]) -> dict[str, dict[str, Any]]:
    groups: defaultdict[str, list[Check]] = defaultdict(list)
    for c in checks:
        groups[key(c)].append(c)
    return {name: tally(groups[name]) for name in sorted(groups)}


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def examples(checks: list[Check], count: int = EXAMPLES) -> list[dict[str, Any]]:
    """Refusals spread over (code, API class, tool): the first of each kind, round after round."""
    kinds: dict[tuple[str, str, str], list[Check]] = defaultdict(list)
    for c in checks:
        if c.decision != "approve":
            kinds[(c.code, c.api, c.tool)].append(c)
    picked: list[Check] = []
    for depth in range(max((len(v) for v in kinds.values()), default=0)):
        picked.extend(v[depth] for v in kinds.values() if depth < len(v))
        if len(picked) >= count:
            break
    return [
        {
            "entry": c.entry,
            "turn": c.turn,
            "user_turn": shorten(c.user_turn, 300),
            "call": shorten(f"{c.tool}({json.dumps(c.args, ensure_ascii=False)})", 200),
            "decision": c.decision,
            "code": c.code,
            "cause": c.cause,
            "reasoning": shorten(c.reasoning, 300),
        }
        for c in picked[:count]
    ]


def report(run: Run) -> dict[str, Any]:
    return {
        "category": CATEGORIES[run.category],
        "entries_run": run.entries,
        "entries_skipped": dict(run.skipped),
        "calls_executed": run.calls,
        "execution_errors": len(run.execution_errors),
        "execution_error_samples": run.execution_errors[:10],
        "seconds": round(run.seconds, 2),
        **tally(run.checks),
        "by_api": grouped(run.checks, lambda c: c.api),
        "by_risk": grouped(run.checks, lambda c: c.risk),
        "by_tool": grouped(run.checks, lambda c: c.tool),
        "examples": examples(run.checks),
    }


def write_checks(path: Path, checks: list[Check]) -> None:
    """Every check as one JSON line (entry, turn, call, decision, code, cause, the user's turn), in run order:
    two runs' files compare line by line (``bench/compare_utility.py``)."""
    with path.open("w", encoding="utf-8") as handle:
        for c in checks:
            row = {
                "entry": c.entry,
                "turn": c.turn,
                "tool": c.tool,
                "args": c.args,
                "decision": c.decision,
                "code": c.code,
                "cause": c.cause,
                "risk": c.risk,
                "decided_by": c.decided_by,
                "user_turn": c.user_turn,
                "reasoning": c.reasoning,
            }
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def top(codes: dict[str, int], n: int = 3) -> str:
    return ", ".join(f"{code} {count}" for code, count in list(codes.items())[:n])


def lines(run: Run, figures: dict[str, Any], missing: dict[str, str]) -> Iterator[str]:
    skipped = ", ".join(f"{n} for {api} ({missing.get(api, 'not importable')})" for api, n in run.skipped.items())
    yield (
        f"== {figures['category']}: {run.entries} entries run"
        + (f", skipped {skipped}" if skipped else "")
        + f"; {run.calls} calls executed ({len(run.execution_errors)} raised), "
        f"{figures['checked']} guarded calls checked, {run.seconds:.1f} s"
    )
    yield f"{'api':<20}{'checked':>8}{'approved':>9}{'asked':>7}{'blocked':>8}  top refusal codes"
    rows = [*figures["by_api"].items(), ("all", figures)]
    for name, t in rows:
        yield (
            f"{name:<20}{t['checked']:>8}{t['approved']:>9}{t['asked']:>7}{t['blocked']:>8}  {top(t['refusal_codes'])}"
        )
    for risk, t in sorted(figures["by_risk"].items()):
        yield f"{risk + ' tools':<20}{t['checked']:>8}{t['approved']:>9}{t['asked']:>7}{t['blocked']:>8}"
    who = figures["decided_by"]
    share = {k: f"{100 * v / max(1, figures['checked']):.0f}%" for k, v in who.items()}
    yield "decided by: " + ", ".join(f"{k} {who[k]} ({share[k]})" for k in ("code", "model", "user"))
    for ex in figures["examples"][:6]:
        yield f"  {ex['decision']} {ex['code']}: {shorten(ex['call'], 90)} <- {shorten(ex['user_turn'], 90)!r}"


def with_suggestions(policy: Policy, docs: Path) -> tuple[Policy, list[str]]:
    """The policy with what ``validator policy suggest --tools`` proposes from the suite's function docs (its
    intents where a tool declares none, its content arguments), unedited; and each addition, as a line."""
    specs = [
        spec
        for path in sorted(docs.glob("*.json"))
        for spec in read_specs([json.loads(line) for line in path.read_text().splitlines() if line.strip()])
    ]
    tools = dict(policy.tools)
    added: list[str] = []
    for proposal in propose(policy, [s for s in specs if s.name in tools]):
        tp = tools[proposal.tool]
        tools[proposal.tool] = dataclasses.replace(
            tp, intents=tp.intents or proposal.intents, content=(*tp.content, *proposal.content)
        )
        added.append(proposal.toml().replace("\n", "; "))
    return Policy(tools, policy.settings), added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", choices=[*CATEGORIES, "all"], default="base")
    parser.add_argument("--limit", type=int, default=None, help="only the first N entries of each category")
    parser.add_argument("--json", type=Path, default=None, help=f"default: {DEFAULT_JSON} ({FOUND_JSON} with --found)")
    parser.add_argument(
        "--found", action="store_true", help="no justification: the validator finds the user's words itself"
    )
    parser.add_argument(
        "--rules-off", default="", help="rules to switch off, comma-separated (to measure what one earns)"
    )
    parser.add_argument(
        "--checks", type=Path, default=None, help="also write every check, one JSON line each (to compare two runs)"
    )
    parser.add_argument(
        "--judge",
        choices=["strict", "approve-all"],
        default="strict",
        help="approve-all: a blind-view stand-in that approves everything (the ceiling a perfect model reaches)",
    )
    parser.add_argument(
        "--intent-judge",
        action="store_true",
        help='set intent = "judge" on every dangerous tool (a model may decide a request code could not read)',
    )
    parser.add_argument(
        "--suggested",
        action="store_true",
        help="add what unedited `validator policy suggest --tools` proposes from the suite's function docs",
    )
    args = parser.parse_args(argv)
    args.json = args.json or (FOUND_JSON if args.found else DEFAULT_JSON)
    installed = package_dir()
    if installed is None:
        print(
            f"bfcl-eval is not installed; install it with:\n  {sys.executable} -m pip install --no-deps {PACKAGE}",
            file=sys.stderr,
        )
        return 2
    policy = Policy.load(POLICY_PATH)
    if args.suggested:
        policy, added = with_suggestions(policy, installed / "data" / "multi_turn_func_doc")
        for line in added:
            print(f"suggested: {line}")
    if args.intent_judge:
        policy = with_intent_judge(policy)
    stand_in = ApproveAll() if args.judge == "approve-all" else None
    judge = FunctionJudge(stand_in, name="approve_all") if stand_in is not None else None
    backend = load_backend()
    categories = list(CATEGORIES) if args.category == "all" else [args.category]
    off = frozenset(r for r in args.rules_off.split(",") if r)
    runs = [
        run_category(name, args.limit, policy, backend, installed / "data", args.found, off, judge)
        for name in categories
    ]
    figures = [report(run) for run in runs]
    for run, fig in zip(runs, figures, strict=True):
        for line in lines(run, fig, backend.missing):
            print(line)
    checks = [c for run in runs for c in run.checks]
    overall = tally(checks)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "source": f"{PACKAGE} (Berkeley Function Calling Leaderboard, Apache-2.0)",
        "policy": str(POLICY_PATH.relative_to(ROOT)),
        "limit": args.limit,
        "unavailable_apis": backend.missing,
        "overall": overall,
        "categories": {fig["category"]: fig for fig in figures},
    }
    args.json.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"figures written to {args.json}")
    if args.checks is not None:
        write_checks(args.checks, checks)
    if stand_in is not None:
        per_hundred = 100 * stand_in.usd / max(1, overall["checked"])
        print(
            f"model calls: {stand_in.calls} of {overall['checked']} checks on the blind view, "
            f"${per_hundred:.3f} per hundred checks ({stand_in._cost.MODEL}, no cache)"
        )
    print(
        f"utility: approved {overall['approved']} of {overall['checked']}, "
        f"asked {overall['asked']}, blocked {overall['blocked']}"
        + (", evidence found by the validator" if args.found else "")
        + (f", judge {args.judge}" if args.judge != "strict" else "")
        + (", intent = judge on dangerous tools" if args.intent_judge else "")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
