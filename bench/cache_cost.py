"""Validator cost per check: the shared prefix against the validators a user could run instead.

A scripted email agent runs a 200-turn task against the cache emulator
(``validator.devtools.emulator``: the documented caching rules behind an httpx2 transport, on a
simulated clock; tokens by ``validator.devtools.tokens``), once with 15 s between turns and once
with 75 s. Every turn the agent reads a message (a tool result of about 700 tokens) and calls a
tool, caching its system prompt and its newest message; every 5th turn it proposes a guarded
``send_email``, validated four ways side by side, each against its own emulated cache:

- **shared**: ``AnthropicJudge`` appends the validator's turn to the agent's own request, so the
  history is read from the entry the agent's call just wrote;
- **standalone**: what ``AnthropicJudge`` sends when it cannot share (``share_prefix=False``): its
  own request carrying the whole history (prompt as ``system``, one transcript block a message),
  with breakpoints on the transcript only when ``StandaloneCaching`` expects them read back;
- **v1_uncached**: those very bytes with no breakpoint at all, billed with no cache (the seed's
  first version);
- **v1_cached**: those very bytes with breakpoints on the transcript on every check (the last
  block and every 20th before it), so a check reads the previous check's prefix while it is
  alive: a V1 that caches its own transcript block by block;
- **blind**: the default wherever the prefix is not shared (``view="blind"``): the user's messages, the
  call and code's facts (``validator.judges.blind``), never the tool results, with breakpoints as
  the standalone request places them.

A second table prices one check of each of the eval suite's conversations (the packaged
``evals/suite`` (``validator.evals``), each built as the agent's own request by ``validator.evals.agentrequest``)
in three ways: the shared prefix read from the cache the agent's own call just wrote, the same
request uncached, and the blind request (the first check of a conversation: nothing to read).

The agent's own calls are billed on the shared emulator directly (only what they write to the
cache matters here); the shared and standalone checks go through the real SDK and judge.

With 5 turns between checks, a 75 s gap puts 375 s between two checks: a standalone validator's
entries expire (5-minute TTL) before the next check, while the agent's own turns keep the shared
prefix alive. Rows for 10 and 50 turns average the first 2 and 10 checks of the same run (nothing
a check costs depends on the checks after it). Prices: claude-sonnet-4-6 (3 / 3.75 / 0.30 / 15 USD
per MTok). Run: ``python bench/cache_cost.py`` (writes ``bench/results/cache_cost.json``; ``--plot
PATH`` for the PNG, default ``bench/results/cache_cost.png``, skipped without matplotlib).
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from validator import Policy, ToolPolicy, Validator
from validator.devtools.emulator import CacheEmulator
from validator.judges.anthropic import AnthropicJudge, PriceTable, prepare_tools
from validator.judges.anthropic.requests import StandaloneCaching, transcript_breakpoints, without_markers

MODEL = "claude-sonnet-4-6"
EVERY = 5
TURNS = (10, 50, 200)
GAPS = (15.0, 75.0)
KINDS = ("shared", "v1_uncached", "v1_cached", "standalone", "blind")
VERDICT_TOKENS = 60
"""Output tokens of a verdict, in the suite's table (the same for every kind)."""
RESULTS = Path(__file__).parent / "results"
WORDS = "meeting invoice schedule budget client quarterly review report team project contract draft agenda".split()
PRICES = PriceTable()
POLICY = Policy(
    {"send_email": ToolPolicy(targets=("to",), intents=("email", "send")), "read_email": ToolPolicy(exempt=True)}
)
ACTION = {
    "tool": "send_email",
    "args": {"to": "ann@acme.example", "body": "Summary attached."},
    "justification": {
        "reason": "The user asked.",
        "evidence": [{"quote": "email ann@acme.example the quarterly report summary"}],
    },
}


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _tools() -> list[dict[str, Any]]:
    names = [
        "read_email",
        "send_email",
        "search_inbox",
        "create_event",
        "list_events",
        "archive_thread",
        "reply_to_user",
    ]
    return prepare_tools(
        [
            {
                "name": name,
                "description": f"{name.replace('_', ' ').capitalize()}. " + "Use it carefully. " * 10,
                "input_schema": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "to": {"type": "string"}, "body": {"type": "string"}},
                },
            }
            for name in names
        ],
        policy=POLICY,
    )


def _is_validator_request(body: dict[str, Any]) -> bool:
    """A shared validator request surfaces the validator tool with a tool_reference; a standalone one has only it."""
    if [t["name"] for t in body["tools"]] == ["validate_action"]:
        return True
    last = body["messages"][-1]["content"]
    return isinstance(last, list) and any(
        b.get("type") == "tool_result"
        and isinstance(b.get("content"), list)
        and b["content"][0].get("type") == "tool_reference"
        for b in last
    )


def _answer(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The emulated model: a verdict for validator requests, the next read for the agent."""
    if _is_validator_request(body):
        verdict = {
            "approved": True,
            "reasoning": "The user asked for this email in their first message.",
            "confidence": "high",
        }
        return [{"type": "tool_use", "id": "toolu_v", "name": "validate_action", "input": verdict}]
    turn = (len(body["messages"]) + 1) // 2
    return [{"type": "tool_use", "id": f"toolu_{turn}", "name": "read_email", "input": {"id": "next"}}]


@dataclass
class Run:
    gap: float
    check_turns: list[int] = field(default_factory=list)
    cost: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})
    usage: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {k: [] for k in KINDS})


def _client(emulator: CacheEmulator) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="sk-emulated", max_retries=0, http_client=httpx2.Client(transport=emulator.transport())
    )


def _v1(body: dict[str, Any], *, cached: bool) -> dict[str, Any]:
    """The standalone request's very bytes as a V1 sends them: no breakpoint at all, or breakpoints on its
    transcript (the last block and every 20th before it) on every check."""
    out: dict[str, Any] = without_markers(body)
    if cached:
        content = out["messages"][0]["content"]
        for i in transcript_breakpoints(len(content) - 1):  # the validation request comes last
            content[i]["cache_control"] = {"type": "ephemeral"}
    return out


def run(turns: int, gap: float, seed: int = 7) -> Run:
    rng = random.Random(seed)
    now = [0.0]
    apis = {kind: CacheEmulator(_answer, clock=lambda: now[0], enabled=kind != "v1_uncached") for kind in KINDS}
    judges = {
        "shared": AnthropicJudge(client=_client(apis["shared"])),
        "standalone": AnthropicJudge(
            MODEL,
            client=_client(apis["standalone"]),
            share_prefix=False,
            standalone_caching=StandaloneCaching(lambda: now[0]),
            view="shared_prefix",  # its own request, the whole transcript as data
        ),
        "blind": AnthropicJudge(
            MODEL, client=_client(apis["blind"]), view="blind", standalone_caching=StandaloneCaching(lambda: now[0])
        ),
    }
    validators = {kind: Validator(POLICY, judge=judge) for kind, judge in judges.items()}
    system = [
        {
            "type": "text",
            "text": "You are an email assistant. " + _text(rng, 2_400),
            "cache_control": {"type": "ephemeral"},
        }
    ]
    first = "Please email ann@acme.example the quarterly report summary when you have read the inbox."
    messages: list[dict[str, Any]] = [{"role": "user", "content": first}]
    result = Run(gap)
    tools = _tools()
    for turn in range(1, turns + 1):
        now[0] += gap
        for m in messages:  # the agent caches its newest message (one breakpoint moving forward)
            if isinstance(m["content"], list):
                for b in m["content"]:
                    b.pop("cache_control", None)
        last = messages[-1]
        if isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"]}]
        last["content"][-1]["cache_control"] = {"type": "ephemeral"}
        request = {
            "model": MODEL,
            "max_tokens": 2048,
            "system": system,
            "tools": tools,
            "tool_choice": {"type": "auto"},
            "messages": messages,
        }
        apis["shared"].usage(request)  # the agent's own call: only what it writes to the cache matters here
        if turn % EVERY == 0:
            result.check_turns.append(turn)
            for kind, validator in validators.items():
                verdict = validator.validate(None, ACTION, agent_request=request)
                assert verdict.approved and verdict.usage is not None, (kind, verdict.reasoning)
                assert (verdict.usage.cache == "shared") == (kind == "shared"), (kind, verdict.usage.cache)
                assert verdict.usage.cost_usd is not None
                result.cost[kind].append(verdict.usage.cost_usd)
                result.usage[kind].append(apis[kind].log[-1]["usage"])
            sent = apis["standalone"].log[-1]
            for kind in ("v1_uncached", "v1_cached"):
                usage = apis[kind].usage(_v1(sent["body"], cached=kind == "v1_cached"))
                usage["output_tokens"] = sent["usage"]["output_tokens"]  # the same verdict
                cost = PRICES.cost(MODEL, usage)
                assert cost is not None
                result.cost[kind].append(cost)
                result.usage[kind].append(usage)
        messages = [
            *messages,
            {"role": "assistant", "content": _answer(request)},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{turn}", "content": _text(rng, 520)}],
            },
        ]
    return result


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def row(r: Run, turns: int) -> dict[str, Any]:
    """USD per check over the checks of the first ``turns`` turns, and the ratios between the kinds."""
    n = sum(t <= turns for t in r.check_turns)
    cost = {k: _mean(r.cost[k][:n]) for k in KINDS}
    shared = r.usage["shared"][:n]
    reads = sum(u["cache_read_input_tokens"] for u in shared)
    total = reads + sum(u["cache_creation_input_tokens"] + u["input_tokens"] for u in shared)
    return {
        "turns": turns,
        "gap_s": r.gap,
        "checks": n,
        **{k: round(v, 6) for k, v in cost.items()},
        "shared_vs_v1_uncached": round(cost["shared"] / cost["v1_uncached"], 3),
        "shared_vs_v1_cached": round(cost["shared"] / cost["v1_cached"], 3),
        "v1_cached_vs_v1_uncached": round(cost["v1_cached"] / cost["v1_uncached"], 3),
        "standalone_vs_v1_uncached": round(cost["standalone"] / cost["v1_uncached"], 3),
        "standalone_vs_v1_cached": round(cost["standalone"] / cost["v1_cached"], 3),
        "blind_vs_shared": round(cost["blind"] / cost["shared"], 3),
        "shared_read_share": round(reads / total, 3),
    }


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'turns':>5} {'gap':>4} {'checks':>6} {'shared $':>9} {'v1 uncached $':>13} {'v1 cached $':>11} "
        f"{'standalone $':>12} {'blind $':>8} | {'to v1 uncached: shared':>22} {'v1 cached':>9} {'standalone':>10} "
        f"| {'to v1 cached: shared':>20} {'standalone':>10} | {'blind to shared':>15}"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['turns']:>5} {r['gap_s']:>3.0f}s {r['checks']:>6} {r['shared']:>9.4f} {r['v1_uncached']:>13.4f} "
            f"{r['v1_cached']:>11.4f} {r['standalone']:>12.4f} {r['blind']:>8.4f} "
            f"| {r['shared_vs_v1_uncached']:>21.3f}x "
            f"{r['v1_cached_vs_v1_uncached']:>8.3f}x {r['standalone_vs_v1_uncached']:>9.3f}x "
            f"| {r['shared_vs_v1_cached']:>19.3f}x {r['standalone_vs_v1_cached']:>9.3f}x "
            f"| {r['blind_vs_shared']:>14.3f}x"
        )
    return "\n".join(lines)


def plot(runs: list[Run], path: Path) -> bool:
    """Cost per check against turns, one panel per gap; False when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = {
        "v1_uncached": "V1, uncached",
        "v1_cached": "V1 caching its own transcript",
        "standalone": "library standalone mode",
        "shared": "shared agent prefix",
        "blind": "blind view (the default unshared)",
    }
    fig, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 4), sharey=True)
    for ax, r in zip(axes if len(runs) > 1 else [axes], runs, strict=True):
        for kind in ("v1_uncached", "v1_cached", "standalone", "shared", "blind"):
            style = "--" if kind in ("standalone", "blind") else "-"
            ax.plot(r.check_turns, [c * 100 for c in r.cost[kind]], style, label=labels[kind])
        ax.set_title(f"{r.gap:.0f} s between turns ({r.gap * EVERY:.0f} s between checks)")
        ax.set_xlabel("agent turns so far")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"cost per check (US cents, {MODEL})")
    axes[0].legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return True


def suite() -> dict[str, Any]:
    """One check of each eval-suite conversation the gate leaves to the judge, priced three ways (see the module
    docstring): mean input tokens and USD per check, and how many cases were priced."""
    from validator.evals import packaged
    from validator.evals.agentrequest import agent_request
    from validator.evals.cases import load_cases

    from validator.judges.base import JudgeRequest

    shared_judge = AnthropicJudge(client=_client(CacheEmulator(_answer)))
    blind_judge = AnthropicJudge(MODEL, client=_client(CacheEmulator(_answer)), view="blind")
    tokens: dict[str, list[int]] = {"shared_cached": [], "shared_uncached": [], "blind": []}
    cost: dict[str, list[float]] = {k: [] for k in tokens}
    cases = load_cases(packaged.cases_path(), Policy.load(packaged.policy_path()))
    for case in cases:
        agent = agent_request(case, MODEL)
        checker = Validator(case.policy, authorizations=case.store())
        shared = checker.prepare(
            case.check.transcript, case.check.action, user_id=case.check.user_id, agent_request=agent
        )
        blind = checker.prepare(case.check.transcript, case.check.action, user_id=case.check.user_id)
        if not isinstance(shared, JudgeRequest) or not isinstance(blind, JudgeRequest):
            continue  # decided by code: no judge request at all
        cache = CacheEmulator(_answer, clock=lambda: 0.0)
        cache.usage(agent)  # the agent's own call wrote its prefix
        bodies = {
            "shared_cached": (cache, shared_judge.plan(shared).body),
            "shared_uncached": (CacheEmulator(_answer, enabled=False), shared_judge.plan(shared).body),
            "blind": (CacheEmulator(_answer, enabled=False), blind_judge.plan(blind).body),
        }
        for kind, (api, body) in bodies.items():
            usage = {**api.usage(body), "output_tokens": VERDICT_TOKENS}
            tokens[kind].append(
                int(usage["input_tokens"])
                + int(usage["cache_read_input_tokens"])
                + int(usage["cache_creation_input_tokens"])
            )
            priced = PRICES.cost(MODEL, usage)
            assert priced is not None
            cost[kind].append(priced)
    price = PRICES.price(MODEL)
    assert price is not None
    means = {k: _mean(v) for k, v in cost.items()}
    return {
        "cases": len(cases),
        "priced": len(cost["blind"]),
        "input_tokens": {k: round(_mean([float(t) for t in v]), 1) for k, v in tokens.items()},
        "usd_per_check": {k: round(v, 6) for k, v in means.items()},
        "blind_vs_shared_cached": round(means["blind"] / means["shared_cached"], 3),
        "blind_vs_shared_uncached": round(means["blind"] / means["shared_uncached"], 3),
        "price_per_mtok": {
            "input": price.input,
            "cache_write_5m": price.cache_write_5m,
            "cache_read": round(price.cache_read, 6),
            "output": price.output,
        },
    }


def suite_table(found: dict[str, Any]) -> str:
    lines = [
        f"eval suite: {found['priced']} of {found['cases']} conversations reach the judge; one check each, "
        f"{VERDICT_TOKENS} output tokens; {MODEL} at "
        + ", ".join(f"{k} {v:g}" for k, v in found["price_per_mtok"].items())
        + " USD/MTok",
        f"{'request':>16} {'input tokens':>12} {'USD per check':>13}",
    ]
    for kind in ("shared_cached", "shared_uncached", "blind"):
        lines.append(f"{kind:>16} {found['input_tokens'][kind]:>12.0f} {found['usd_per_check'][kind]:>13.5f}")
    cached, uncached = found["blind_vs_shared_cached"], found["blind_vs_shared_uncached"]
    lines.append(f"blind to shared, cached: {cached:.3f}x; uncached: {uncached:.3f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=RESULTS / "cache_cost.json")
    parser.add_argument("--plot", type=Path, default=RESULTS / "cache_cost.png")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)
    runs = [run(max(TURNS), gap) for gap in GAPS]
    rows = [row(r, n) for r in runs for n in TURNS]
    print(f"model {MODEL}; a check every {EVERY} turns; USD per check; tokens by the emulator's estimator")
    print(table(rows))
    saved = [1 - r["shared_vs_v1_cached"] for r in rows]
    print(
        f"shared prefix against a V1 caching its own transcript: saves {min(saved):.0%} to {max(saved):.0%}; "
        f"against an uncached V1: {min(r['shared_vs_v1_uncached'] for r in rows):.3f}x to "
        f"{max(r['shared_vs_v1_uncached'] for r in rows):.3f}x"
    )
    ok = all(r["standalone"] <= r["v1_uncached"] for r in rows)
    print(f"standalone mode <= uncached V1 in every row: {'yes' if ok else 'NO'}")
    found = suite()
    print(suite_table(found))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    document = {"model": MODEL, "check_every_turns": EVERY, "unit": "USD per check", "rows": rows, "suite": found}
    args.json.write_text(json.dumps(document, indent=2) + "\n")
    print(f"json: {args.json}")
    if not args.no_plot:
        print(f"plot: {args.plot}" if plot(runs, args.plot) else "plot: skipped (matplotlib is not installed)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
