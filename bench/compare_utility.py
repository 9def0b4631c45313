"""Compares two runs of ``bench/utility.py --checks FILE``: what moved, call by call.

Run: ``python bench/compare_utility.py BEFORE.jsonl AFTER.jsonl [--show N]``. Prints the decisions before
and after by API class, then every call whose decision changed (approved -> asked first), with the
user's turn and the reason after. Both runs must be of the same data (the same entries, in order).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ORDER = {"approve": 0, "ask_user": 1, "block": 2}


def load(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def key(row: dict[str, Any]) -> tuple[str, int, str, str]:
    return row["entry"], row["turn"], row["tool"], json.dumps(row["args"], sort_keys=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--show", type=int, default=1_000, help="changed calls to print")
    args = parser.parse_args(argv)
    before, after = load(args.before), load(args.after)
    if [key(r) for r in before] != [key(r) for r in after]:
        print("the two runs did not check the same calls", file=sys.stderr)
        return 2
    moves: Counter[tuple[str, str]] = Counter(
        (b["decision"], a["decision"]) for b, a in zip(before, after, strict=True)
    )
    print("decision before -> after: count")
    for (b, a), n in sorted(moves.items(), key=lambda kv: (ORDER[kv[0][0]], ORDER[kv[0][1]])):
        print(f"  {b:>9} -> {a:<9} {n}")
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b["decision"] != a["decision"]]
    changed.sort(key=lambda pair: (ORDER[pair[0]["decision"]], -ORDER[pair[1]["decision"]]))
    for b, a in changed[: args.show]:
        call = f"{a['tool']}({json.dumps(a['args'], ensure_ascii=False)})"
        turn = " ".join(a["user_turn"].split())
        print(f"\n{a['entry']} turn {a['turn']}: {b['decision']} -> {a['decision']} {a['code']} {a['cause']}")
        print(f"  {call[:160]}")
        print(f"  user: {turn[:400]}")
    tally = Counter(r["decision"] for r in after)
    print(f"\nafter: approved {tally['approve']} of {len(after)}, asked {tally['ask_user']}, blocked {tally['block']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
