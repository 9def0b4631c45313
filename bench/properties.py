"""The request grammar's structural properties in full: every seed, and every proved request of BFCL.

For each proved request, ``--per-seed`` variants of each kind (a word the grammar does not know inserted, the
verb's object swapped for a noun of another kind, a word of another language inserted, a zero-width or
non-Latin punctuation character inserted), words drawn from wordfreq's public lists (never from the language
pack). The property: no variant is proved. The tests run a seeded sample (tests/gate/test_grammar_properties.py).

Run: ``python bench/properties.py [--per-seed N] [--no-bfcl]``; the last line is
``properties: N seeds, M variants, V still proved``. ``--context [--lines N]``: the whole-context properties
instead (validator.devtools.context_properties: lines of a public corpus after and before each seed's request).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

from validator import Policy
from validator.devtools.properties import proved, seeds, violations
from validator.gate.checks import sense_of
from validator.gate.reader import ToolSense, read
from validator.inputs.action import PendingAction
from validator.text.split import sentences

ROOT = Path(__file__).resolve().parent.parent


def _utility() -> Any:
    spec = importlib.util.spec_from_file_location("bench_utility", ROOT / "bench" / "utility.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_utility"] = module
    spec.loader.exec_module(module)
    return module


def bfcl_proved() -> list[tuple[str, ToolSense]]:
    """Every sentence of a BFCL user turn that proves the request for the ground-truth call it precedes."""
    utility = _utility()
    installed = utility.package_dir()
    if installed is None:
        return []
    policy = Policy.load(utility.POLICY_PATH)
    backend = utility.load_backend()
    found: dict[tuple[str, str], tuple[str, ToolSense]] = {}
    for entry, truth in utility.load_category(installed / "data", "base"):
        if any(backend.load(name) is None for name in entry["involved_classes"]):
            continue
        methods = utility.instantiate(entry, backend, False)
        for turn, calls in zip(entry["question"], truth, strict=True):
            text = utility.user_text(turn)
            for call in calls:
                tool, positional, named = utility.parse_call(call)
                if policy.for_tool(tool).exempt:
                    continue
                args = utility.named_args(methods[tool][1], positional, named)
                sense = sense_of(tool, policy.for_tool(tool), PendingAction(tool, args))
                for s in sentences(text):
                    sentence = text[s.start : s.end]
                    reading = read(sentence, sense)
                    if reading is not None and reading.proof == "proved":
                        found.setdefault((sentence, tool), (sentence, sense))
    return list(found.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-seed", type=int, default=40, help="variants of each kind per proved request")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-bfcl", action="store_true", help="the packaged seeds only")
    parser.add_argument("--context", action="store_true", help="the whole-context properties (corpus lines around)")
    parser.add_argument("--lines", type=int, default=None, help="with --context: corpus lines per language")
    args = parser.parse_args(argv)
    if args.context:
        return _context(args.lines)
    started = time.perf_counter()
    extra = () if args.no_bfcl else tuple(bfcl_proved())
    all_seeds = [s for s in seeds(extra) if proved(s)]
    found = violations(all_seeds, args.per_seed, args.seed)
    tried = len(all_seeds) * args.per_seed
    for name, cases in found.items():
        print(f"{name:<14} {tried:>7} variants, {len(cases)} still proved")
        for seed, variant in cases[:5]:
            print(f"    {seed!r} -> {variant!r}")
    total = sum(len(v) for v in found.values())
    print(f"({len(extra)} proved BFCL requests among the seeds; {time.perf_counter() - started:.1f} s)")
    print(f"properties: {len(all_seeds)} seeds, {tried * len(found)} variants, {total} still proved")
    return 0


def _context(lines: int | None) -> int:
    """The whole-context properties over the packaged seeds (validator.devtools.context_properties)."""
    from validator.devtools.context_properties import violations as context_violations

    started = time.perf_counter()
    all_seeds = [s for s in seeds() if proved(s)]
    found = context_violations(all_seeds, limit=lines)
    for name, tried in found.tried.items():
        cases = found.violations.get(name, [])
        print(f"{name:<17} {tried:>7} placed, {len(cases)} violations")
        for seed, line in cases[:5]:
            print(f"    {seed!r} with {line!r}")
    kept = sorted(found.kept.items(), key=lambda kv: (-kv[1], kv[0]))
    print(f"lines after a request that left it proved ({len(kept)}; read each):")
    for line, n in kept:
        print(f"    {n:>3}  {line!r}")
    total = sum(len(v) for v in found.violations.values())
    print(f"({time.perf_counter() - started:.1f} s)")
    print(f"context properties: {len(all_seeds)} seeds, {sum(found.tried.values())} placements, {total} violations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
