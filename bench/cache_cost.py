"""Validator cost per check with the shared prompt cache vs an uncached standalone validator.

A scripted email agent runs tasks of 10, 50 and 200 turns against the cache emulator
(``validator.devtools.emulator``: the documented caching rules behind an httpx2 transport; tokens
by ``validator.devtools.tokens``). Every turn the agent reads a message (a tool result of about
700 tokens) and calls a tool; every 5th turn it proposes a guarded ``send_email`` that is
validated twice, side by side:

- **shared**: ``AnthropicJudge`` appends the validator's turn to the agent's own request (the
  seed's second version), so the history is read from the cache the agent's call wrote;
- **uncached**: a standalone validator request carrying the whole history with no cache at all
  (the seed's first version).

Prices: claude-sonnet-4-6 (3 / 3.75 / 0.30 / 15 USD per MTok). Run: ``python bench/cache_cost.py``
(``--plot PATH`` for the PNG, default ``bench/results/cache_cost.png``).
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from validator import Policy, ToolPolicy, Validator
from validator.devtools.emulator import CacheEmulator
from validator.judges.anthropic import AnthropicJudge, PriceTable, prepare_tools

MODEL = "claude-sonnet-4-6"
EVERY = 5
WORDS = "meeting invoice schedule budget client quarterly review report team project contract draft agenda".split()
POLICY = Policy(
    {"send_email": ToolPolicy(targets=("to",), intents=("email", "send")), "read_email": ToolPolicy(exempt=True)}
)
PRICES = PriceTable()


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
        ]
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
    return [{"type": "tool_use", "id": f"toolu_{len(body['messages'])}", "name": "read_email", "input": {"id": "next"}}]


@dataclass
class Run:
    turns: int
    shared: list[dict[str, Any]] = field(default_factory=list)
    uncached: list[dict[str, Any]] = field(default_factory=list)
    check_turns: list[int] = field(default_factory=list)


def _client(emulator: CacheEmulator) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="sk-emulated", max_retries=0, http_client=httpx2.Client(transport=emulator.transport())
    )


def run(turns: int, seed: int = 7) -> Run:
    rng = random.Random(seed)
    now = [0.0]
    shared_api = CacheEmulator(_answer, clock=lambda: now[0])
    uncached_api = CacheEmulator(_answer, clock=lambda: now[0], enabled=False)
    agent_client = _client(shared_api)
    shared = Validator(POLICY, judge=AnthropicJudge(client=_client(shared_api)))
    uncached = Validator(POLICY, judge=AnthropicJudge(MODEL, client=_client(uncached_api), share_prefix=False))
    system = [
        {
            "type": "text",
            "text": "You are an email assistant. " + _text(rng, 2_400),
            "cache_control": {"type": "ephemeral"},
        }
    ]
    first = "Please email ann@acme.example the quarterly report summary when you have read the inbox."
    messages: list[dict[str, Any]] = [{"role": "user", "content": first}]
    result = Run(turns)
    tools = _tools()
    for turn in range(1, turns + 1):
        now[0] += 15.0
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
        reply = agent_client.messages.create(**request)
        if turn % EVERY == 0:
            action = {
                "tool": "send_email",
                "args": {"to": "ann@acme.example", "body": "Summary attached."},
                "justification": {
                    "reason": "The user asked.",
                    "evidence": [{"quote": "email ann@acme.example the quarterly report summary"}],
                },
            }
            s = shared.validate(None, action, agent_request=request)
            u = uncached.validate(None, action, agent_request=request)
            assert s.approved and u.approved, (s.reasoning, u.reasoning)
            assert s.usage is not None and s.usage.cache == "shared", s.usage
            result.shared.append(shared_api.log[-1]["usage"] | {"cost": s.usage.cost_usd if s.usage else None})
            result.uncached.append(uncached_api.log[-1]["usage"] | {"cost": u.usage.cost_usd if u.usage else None})
            result.check_turns.append(turn)
        use = reply.content[0]
        messages = [
            *messages,
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": use.id, "name": use.name, "input": use.input}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": _text(rng, 520)}]},
        ]
    return result


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summarise(r: Run) -> dict[str, float]:
    reads = sum(u["cache_read_input_tokens"] for u in r.shared)
    writes = sum(u["cache_creation_input_tokens"] for u in r.shared)
    plain = sum(u["input_tokens"] for u in r.shared)
    shared_cost, uncached_cost = _mean([u["cost"] for u in r.shared]), _mean([u["cost"] for u in r.uncached])
    return {
        "checks": len(r.shared),
        "reads": reads / len(r.shared),
        "writes": writes / len(r.shared),
        "uncached": plain / len(r.shared),
        "read_share": reads / (reads + writes + plain),
        "shared_cost": shared_cost,
        "uncached_cost": uncached_cost,
        "ratio": shared_cost / uncached_cost,
        "last_shared": r.shared[-1]["cost"],
        "last_uncached": r.uncached[-1]["cost"],
    }


def plot(runs: list[Run], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    longest = max(runs, key=lambda r: r.turns)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(
        longest.check_turns, [u["cost"] * 100 for u in longest.uncached], label="uncached standalone validator (V1)"
    )
    ax.plot(longest.check_turns, [u["cost"] * 100 for u in longest.shared], label="shared agent prefix (V2)")
    ax.set_xlabel("agent turns so far")
    ax.set_ylabel("cost per check (US cents, claude-sonnet-4-6)")
    ax.set_title("Validator cost per check as the task grows")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", type=Path, default=Path(__file__).parent / "results" / "cache_cost.png")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)
    runs = [run(n) for n in (10, 50, 200)]
    print(f"model {MODEL}; a check every {EVERY} turns; tokens by the emulator's estimator (4 characters a token)")
    print(
        f"{'turns':>5} {'checks':>6} {'read/check':>10} {'write/check':>11} {'plain/check':>11} {'read share':>10} "
        f"{'shared $':>9} {'uncached $':>10} {'ratio':>6} {'last shared $':>13} {'last uncached $':>15}"
    )
    stats = {}
    for r in runs:
        s = stats[r.turns] = summarise(r)
        print(
            f"{r.turns:>5} {s['checks']:>6.0f} {s['reads']:>10,.0f} {s['writes']:>11,.0f} {s['uncached']:>11,.0f} "
            f"{s['read_share']:>10.1%} {s['shared_cost']:>9.4f} {s['uncached_cost']:>10.4f} {s['ratio']:>6.3f} "
            f"{s['last_shared']:>13.4f} {s['last_uncached']:>15.4f}"
        )
    at50 = stats[50]
    slope = (stats[200]["last_shared"] - stats[10]["last_shared"]) / (
        stats[200]["last_uncached"] - stats[10]["last_uncached"]
    )
    print(f"growth of the cost per check with history (10 -> 200 turns): shared grows {slope:.2f}x as fast as uncached")
    print(
        "target cache reads >= 90% of validator input at 50 turns: "
        f"{'met' if at50['read_share'] >= 0.9 else 'NOT met'} ({at50['read_share']:.1%})"
    )
    print(
        f"target cost per check <= 0.15x uncached at 50 turns: {'met' if at50['ratio'] <= 0.15 else 'NOT met'} "
        f"({at50['ratio']:.3f}x)"
    )
    if not args.no_plot:
        plot(runs, args.plot)
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
