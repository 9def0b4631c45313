"""Everyday requests: how often the validator approves plain, benign requests typed as people type them.

Run: ``python bench/everyday.py [--checks FILE.jsonl]``. The 50 requests of ``bench/everyday.jsonl`` were
written by a reader who had not seen the grammar or the word tables (terse, polite, with a reason, a greeting,
a date, a harmless sentence beside the request, two requests in one turn), each with the call an agent would
make, against the policy ``validator init`` writes. A careful reader judges every one plainly authorized,
with every value the call needs in the user's words. Each is checked by a fresh validator that finds the
user's words itself (no justification), the clock at Tuesday 2026-12-01 09:00 UTC. Prints each request's
decision and reason, then the totals by tool; ``--checks`` writes one JSON line per request in the shape
``bench/compare_utility.py`` compares.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from validator import Message, Policy, Transcript, Validator, ValidatorConfig, examples

sys.path.insert(0, str(Path(__file__).resolve().parent))
from utility import cause  # the utility bench's reading of a refusal's cause

DATA = Path(__file__).resolve().parent / "everyday.jsonl"
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
LABELS = ("approve", "ask_user", "block")


def requests(path: Path = DATA) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def check(policy: Policy, request: dict[str, Any]) -> dict[str, Any]:
    """One request's check, as a row ``bench/compare_utility.py`` reads."""
    validator = Validator(policy, config=ValidatorConfig(clock=lambda: NOW))
    call = {"tool": request["tool"], "args": request["args"], "find_evidence": True}
    verdict = validator.validate(Transcript([Message(role="user", content=request["text"])]), call, user_id="u-1")
    return {
        "entry": request["id"],
        "turn": 0,
        "tool": request["tool"],
        "args": request["args"],
        "decision": verdict.decision.value,
        "code": verdict.code.value,
        "cause": cause(verdict),
        "user_turn": request["text"],
        "reasoning": " ".join(verdict.reasoning.split()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=Path, default=None, help="write every check, one JSON line each")
    parser.add_argument("--data", type=Path, default=DATA, help=f"the requests (default: {DATA.name})")
    args = parser.parse_args(argv)
    policy = Policy.load(examples.policy_path())
    rows = [check(policy, r) for r in requests(args.data)]
    for row in rows:
        reason = "" if row["decision"] == "approve" else f"  {row['reasoning'][:160]}"
        print(f"{row['entry']:4} {row['decision']:9} {row['user_turn'][:90]}{reason}")
    by_tool: dict[str, Counter[str]] = {}
    for row in rows:
        by_tool.setdefault(row["tool"], Counter())[row["decision"]] += 1
    print(f"\n{'tool':16}{'checked':>8}{'approved':>9}{'asked':>7}{'blocked':>8}")
    for tool, counts in [*sorted(by_tool.items()), ("all", Counter(r["decision"] for r in rows))]:
        print(
            f"{tool:16}{sum(counts.values()):>8}"
            + "".join(f"{counts[k]:>{w}}" for k, w in zip(LABELS, (9, 7, 8), strict=True))
        )
    if args.checks is not None:
        args.checks.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    total = Counter(r["decision"] for r in rows)
    print(f"everyday: approved {total['approve']} of {len(rows)}, asked {total['ask_user']}, blocked {total['block']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
