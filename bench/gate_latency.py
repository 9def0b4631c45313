"""Policy + evidence gate latency on long transcripts.

For transcripts of 100, 1,000 and 10,000 messages of about 500 characters (user, agent and tool
messages from outside parties), it times the policy lookup and the evidence gate for pending
actions with 1 to 5 quotes and 1 to 3 targets (plus the entities in a free-text body). Quotes come
from user messages, from tool outputs, or nowhere; targets are emails and IBANs planted in user
messages or tool outputs. Each iteration uses a fresh ``Transcript`` object, so the search index is
built inside the timed region (the cold path a standalone check takes).

Run: ``python bench/gate_latency.py`` (``--quick`` for a short run). Prints p50/p99 per size and
the growth ratios measured side by side in this run.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import accumulate
from typing import Any

from validator import Message, Policy, ToolCall, ToolPolicy, Transcript
from validator.gate.checks import run_gate
from validator.inputs.checkinput import pending_action

COMMON = "the a to of and in for on is it that with please thanks this we you your our at by from be will can".split()
SYLLABLES = "ka lo mi ne ru sa ti vo pe da ri mo lu fe gi ba".split()


def _vocabulary(rng: random.Random, size: int = 4_000) -> list[str]:
    """Common function words plus ``size`` made-up content words (text with a natural spread of words)."""
    words = {"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(size)}
    return COMMON + sorted(words)


POLICY = Policy({"send_email": ToolPolicy(targets=("to", "cc", "bcc"), intents=("send", "email"))})
NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _sentence(rng: random.Random, vocabulary: list[str], weights: list[float], n: int = 500) -> str:
    """About ``n`` characters; word frequencies follow Zipf's law (rank r has weight 1/r), as in natural text."""
    out: list[str] = []
    size = 0
    while size < n:
        (w,) = rng.choices(vocabulary, cum_weights=weights)
        out.append(w)
        size += len(w) + 1
    return (" ".join(out)[: n - 1] + ".").capitalize()


def _iban(rng: random.Random) -> str:
    digits = "".join(rng.choice("0123456789") for _ in range(18))
    for check in range(100):
        candidate = f"DE{check:02d}{digits}"
        rearranged = candidate[4:] + candidate[:4]
        if int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1:
            return candidate
    raise AssertionError("no check digits")


@dataclass
class Case:
    messages: list[Message]
    actions: list[Any]


def build(n_messages: int, n_actions: int, seed: int) -> Case:
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng)
    weights = list(accumulate(1 / rank for rank in range(1, len(vocabulary) + 1)))
    messages: list[Message] = []
    users: list[int] = []
    tools: list[int] = []
    planted: list[str] = []
    for i in range(n_messages):
        kind = i % 5
        text = _sentence(rng, vocabulary, weights)
        if kind == 0:
            email = f"person{i}@acme.example"
            planted.append(email)
            text = text[:400] + f" Please email {email} the report."
            messages.append(Message(role="user", content=text))
            users.append(i)
        elif kind in (1, 3):
            messages.append(Message(role="assistant", content=text, tool_calls=(ToolCall(f"c{i}", "read_inbox"),)))
        else:
            iban = _iban(rng)
            messages.append(
                Message(
                    role="tool",
                    content=text[:420] + f" Pay {iban} today.",
                    tool_call_id=f"c{i - 1}",
                    name="read_inbox",
                    author=f"sender{i}@vendor.example",
                )
            )
            tools.append(i)
    actions = []
    for _ in range(n_actions):
        quotes = []
        for _ in range(rng.randint(1, 5)):
            r = rng.random()
            source = messages[rng.choice(users) if r < 0.7 or not tools else rng.choice(tools)].content.split()
            start = rng.randrange(0, len(source) - 12)
            words = source[start : start + rng.randint(4, 12)]  # whole words, as an agent quotes
            quote = " ".join(words) if r < 0.9 else "a sentence the user never wrote at all"
            quotes.append({"quote": quote})
        targets = rng.sample(["to", "cc", "bcc"], rng.randint(1, 3))
        args: dict[str, Any] = {t: rng.choice(planted) for t in targets}
        args["body"] = f"Hi, see https://files.acme.example/r{rng.randint(1, 99)} and call +49 30 1234 5678."
        actions.append(pending_action("send_email", args, {"reason": "asked", "evidence": quotes}))
    return Case(messages, actions)


def measure(case: Case, repeats: int, *, warm: bool = False) -> list[float]:
    """Milliseconds per check. Cold: a fresh transcript each check, so its index is built in the
    timed region (a standalone check). Warm: one transcript for all checks (an agent turn whose
    calls are validated against the same history). The collector is paused while timing, as
    ``timeit`` does."""
    times: list[float] = []
    shared = Transcript(case.messages)
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            for action in case.actions:
                transcript = shared if warm else Transcript(case.messages)
                start = time.perf_counter()
                tool_policy = POLICY.for_tool(action.tool)
                run_gate(transcript, action, tool_policy, user_id="u", now=NOW)
                times.append((time.perf_counter() - start) * 1000)
    finally:
        gc.enable()
    return times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (for CI smoke runs)")
    args = parser.parse_args(argv)
    sizes = (100, 1_000, 10_000)
    plan = {100: 400, 1_000: 400, 10_000: 60} if not args.quick else {100: 40, 1_000: 40, 10_000: 6}
    results: dict[tuple[int, bool], tuple[float, float]] = {}
    print(f"python {sys.version.split()[0]}; per size: distinct actions x 2 repeats")
    print(
        f"{'messages':>9} {'chars':>10} {'checks':>7} {'cold p50':>9} {'cold p99':>9} {'warm p50':>9} {'warm p99':>9}"
    )
    for size in sizes:
        case = build(size, n_actions=plan[size] // 2, seed=size)
        measure(case, 1)  # warm-up: imports, regex compilation
        row = []
        for warm in (False, True):
            times = measure(case, 2, warm=warm)
            results[size, warm] = (percentile(times, 0.5), percentile(times, 0.99))
            row += results[size, warm]
        chars = sum(len(m.content) for m in case.messages)
        print(f"{size:>9,} {chars:>10,} {len(times):>7} " + " ".join(f"{v:>9.3f}" for v in row))
    for warm in (False, True):
        label = "warm" if warm else "cold"
        g1 = results[1_000, warm][0] / results[100, warm][0]
        g2 = results[10_000, warm][0] / results[1_000, warm][0]
        print(f"{label}: p50 grows x{g1:.1f} from 100 to 1,000 messages, x{g2:.1f} from 1,000 to 10,000 (linear: x10)")
    for warm in (False, True):
        p99 = results[1_000, warm][1]
        label = "warm" if warm else "cold"
        print(f"target p99 <= 2 ms at 1,000 messages, {label}: {'met' if p99 <= 2.0 else 'NOT met'} ({p99:.3f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
