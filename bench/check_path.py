"""The whole check path, stage by stage, each against its floor measured in the same run.

Transcripts of 1,000 and 10,000 messages of about 500 characters (``bench/gate_latency.py`` builds
them: user, agent and outside tool messages with planted addresses and IBANs). For each size:

- **decode**: ``CheckInput.from_json`` on the check input's bytes, against an untyped
  ``msgspec.json.decode`` of the same bytes (reading them at all);
- **digest**: the transcript digest, against ``sha256`` over the raw input bytes;
- **index**: the gate's user and other indexes, against one ``casefold`` of the joined text;
- **gate**: ``run_gate`` on an indexed transcript, against seven ``str.find`` over the folded text;
- **check**: one ``validator check --jsonl`` line in process (``Validator.check`` of the line's bytes:
  decode, gate, strict judge, record, the JSON out), against the issue's target of 2.5 ms at 1,000
  messages: a line of a conversation the validator has checked before (each line the whole input: its
  messages are found by their bytes among the inputs read lately, :class:`validator.inputs.held.RecentInputs`,
  and only the rest is decoded, onto the transcript read before with what its checks derived); **decoded
  afresh**, the same line with its messages decoded again (the transcript then found among those its checks
  read lately, :class:`validator.inputs.conversations.Seen`); and **first sight**, a conversation it has not
  read (every sentence lexed, every secret looked for), against the former;
- **next turn**: the same conversation two messages later through the per-conversation cache
  (:class:`validator.inputs.conversations.Conversations`), against a whole rebuild.

Then an agent loop: a real ``create_agent`` with a scripted model whose every step proposes one
guarded ``send_email``, run with and without ``ActionValidatorMiddleware`` on a 1,000- and a
10,000-message history; the validator's cost per guarded call after the first is the difference,
shown against the agent loop's own cost per step.

Run: ``python bench/check_path.py`` (``--quick`` for a short run). Medians of CPU-bound loops; the
machine is noisy, so read the ratios, which are measured side by side.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gate_latency import NOW, POLICY, build

from validator import CheckInput, MemoryRecorder, Message, Transcript, Validator
from validator._json import dumps
from validator.gate.checks import run_gate
from validator.gate.index import other_index, user_index
from validator.inputs.anthropic import _groups, convert
from validator.inputs.conversations import Conversations, Seen
from validator.inputs.held import RecentInputs
from validator.text.search import normalize


def median_ms(fn: Callable[[], Any], repeats: int) -> float:
    """Median wall time of ``fn`` in milliseconds, the collector paused as ``timeit`` does."""
    fn()
    times = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1000)
    finally:
        gc.enable()
    return statistics.median(times)


def _anthropic(m: Message) -> dict[str, Any]:
    """The message as an Anthropic Messages API turn (for the next-turn measurement)."""
    if m.role == "assistant":
        blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}]
        blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.args)} for c in m.tool_calls]
        return {"role": "assistant", "content": blocks}
    if m.role == "tool":
        return {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}],
        }
    return {"role": "user", "content": m.content}


Row = tuple[str, float, str, float]


def stages(size: int, repeats: int) -> list[Row]:
    """Each stage of a check on a ``size``-message transcript, with its floor."""
    case = build(size, n_actions=4, seed=size)
    action = case.actions[0]
    line = msgspec.json.encode(
        {
            "messages": msgspec.to_builtins(case.messages),  # Structs to the check-input format
            "action": {"tool": action.tool, "args": dict(action.args), "justification": action.justification},
            "user_id": "u",
        }
    )
    validator = Validator(POLICY, recorder=MemoryRecorder())
    transcript = CheckInput.from_json(line).transcript
    user_index(transcript, "u")
    other_index(transcript, "u")
    folded = "\x00".join(m.content for m in case.messages).casefold()
    needles = [normalize(str(e.get("quote", ""))) for e in action.justification["evidence"]]
    needles = (needles + [str(v).casefold() for v in action.args.values()] * 7)[:7]
    tool_policy = POLICY.for_tool(action.tool)

    def structure() -> Transcript:
        return Transcript(case.messages)

    def indexed() -> Any:
        fresh = Transcript(case.messages)
        return user_index(fresh, "u"), other_index(fresh, "u")

    def gate() -> Any:
        return run_gate(transcript, action, tool_policy, user_id="u", now=NOW)

    def check_line() -> str:
        return dumps({"line": 1, "verdict": validator.check(line).to_dict()})

    def check_afresh() -> str:  # its messages decoded again: what its checks derived is found all the same
        validator.recent = RecentInputs()
        return check_line()

    def check_first_sight() -> str:  # a conversation this validator has not read: nothing derived is kept
        validator.transcripts.seen = Seen()
        return check_afresh()

    growing: list[Any] = [None, *(_anthropic(m) for m in case.messages)]
    conversations = Conversations(_groups, content=lambda m: m.get("content") if isinstance(m, dict) else m)
    conversations.transcript(growing, key="bench")

    def next_turn_cached() -> Any:
        growing.extend(({"role": "assistant", "content": "On it."}, {"role": "user", "content": "Thanks, go ahead."}))
        return validator.validate(conversations.transcript(growing, key="bench"), action, user_id="u")

    def next_turn_whole() -> Any:
        validator.transcripts.seen = Seen()
        return validator.validate(Transcript(convert(growing[1:])), action, user_id="u")

    base = median_ms(structure, repeats)
    return [
        (
            "decode",
            median_ms(lambda: CheckInput.from_json(line), repeats),
            "untyped msgspec decode",
            median_ms(lambda: msgspec.json.decode(line), repeats),
        ),
        (
            "digest",
            median_ms(lambda: structure().digest, repeats) - base,
            "sha256 of the raw input",
            median_ms(lambda: hashlib.sha256(line).hexdigest(), repeats),
        ),
        (
            "index",
            median_ms(indexed, repeats) - base,
            "one casefold of the joined text",
            median_ms(lambda: "\x00".join(m.content for m in case.messages).casefold(), repeats),
        ),
        (
            "gate searches",
            median_ms(gate, repeats),
            "7 x str.find",
            median_ms(lambda: [folded.find(n) for n in needles], repeats),
        ),
        ("check --jsonl, one line", median_ms(check_line, repeats), "target", 2.5 if size == 1_000 else 25.0),
        ("check --jsonl, decoded afresh", median_ms(check_afresh, repeats), "one line", median_ms(check_line, repeats)),
        (
            "check --jsonl, first sight",
            median_ms(check_first_sight, repeats),
            "one line, seen",
            median_ms(check_line, repeats),
        ),
        (
            "next turn, cached",
            median_ms(next_turn_cached, repeats),
            "next turn, rebuilt",
            median_ms(next_turn_whole, repeats),
        ),
    ]


def timed(validator: Validator, own: list[float]) -> Any:
    """``ActionValidatorMiddleware`` over ``validator``, its own time per guarded call appended to ``own`` in
    milliseconds (what the handler does, the tool's run and what follows it, is the agent's)."""
    from validator.integrations.middleware import ActionValidatorMiddleware

    class Timed(ActionValidatorMiddleware):
        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            inner = [0.0]

            def timed_handler(r: Any) -> Any:
                start = time.perf_counter()
                try:
                    return handler(r)
                finally:
                    inner[0] += time.perf_counter() - start

            start = time.perf_counter()
            out = super().wrap_tool_call(request, timed_handler)
            own.append((time.perf_counter() - start - inner[0]) * 1000)
            return out

    return Timed(validator)


def _args(i: int, justification: dict[str, Any]) -> dict[str, Any]:
    return {"to": f"person{i}@acme.example", "body": "the report", "justification": justification}


def agent_loop(size: int, steps: int, repeats: int) -> tuple[float, float, float]:
    """A ``create_agent`` loop on a ``size``-message history: its own milliseconds per step without the
    validator, and the validator's own time per guarded call (inside the middleware, the tool's run
    and the model's call left out), for the first call of the conversation and the median of the rest."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from validator.integrations.testing import ScriptedChatModel

    own: list[float] = []
    case = build(size, n_actions=1, seed=size)
    history: list[BaseMessage] = []
    for m in case.messages:
        if m.role == "user":
            history.append(HumanMessage(m.content))
        elif m.role == "assistant":
            calls = [{"id": c.id, "name": c.name, "args": dict(c.args)} for c in m.tool_calls]
            history.append(AIMessage(m.content, tool_calls=calls))
        else:
            history.append(ToolMessage(m.content, tool_call_id=m.tool_call_id or "", name=m.name))
    # one email a step, each asked for in a sentence of its own (the same email again would be the request spent)
    history.append(HumanMessage(" ".join(f"Please email person{i}@acme.example the report." for i in range(steps))))

    def justification(i: int) -> dict[str, Any]:
        return {"reason": "The user asked.", "evidence": [{"quote": f"email person{i}@acme.example the report"}]}

    @tool
    def send_email(to: str, body: str = "", justification: dict[str, Any] | None = None) -> str:
        """Send an email."""
        return f"sent to {to}"

    def script() -> list[AIMessage]:
        turns = [
            AIMessage("", tool_calls=[{"id": f"s{i}", "name": "send_email", "args": _args(i, justification(i))}])
            for i in range(steps)
        ]
        return [*turns, AIMessage("done")]

    def run(guarded: bool) -> float:
        model = ScriptedChatModel(responses=script())
        middleware = [timed(Validator(POLICY, recorder=MemoryRecorder()), own)] if guarded else []
        agent = create_agent(model, [send_email], middleware=middleware)
        start = time.perf_counter()
        out = agent.invoke({"messages": list(history)})
        elapsed = (time.perf_counter() - start) * 1000
        results = [m for m in out["messages"][len(history) :] if isinstance(m, ToolMessage)]
        assert len(results) == steps and all(r.status == "success" for r in results), results[-1:]
        return elapsed

    run(False)
    plain = statistics.median(run(False) for _ in range(repeats)) / (steps + 1)
    firsts, rest = [], []
    for _ in range(repeats):
        own.clear()
        run(True)
        firsts.append(own[0])
        rest.extend(own[1:])
    return plain, statistics.median(firsts), statistics.median(rest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 messages only, few iterations (CI smoke runs)")
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else 40
    print(f"python {sys.version.split()[0]}; medians of {repeats} runs, milliseconds")
    sizes = (1_000,) if args.quick else (1_000, 10_000)
    for size in sizes:
        print(f"\n{size:,} messages")
        print(f"{'stage':<29} {'ms':>8}   {'floor':<34} {'ms':>8} {'ratio':>7}")
        for stage, ms, floor, floor_ms in stages(size, repeats if size == 1_000 else max(3, repeats // 4)):
            print(f"{stage:<29} {ms:>8.3f}   {floor:<34} {floor_ms:>8.3f} {ms / floor_ms:>6.1f}x")
    print("\nagent loop (create_agent, scripted model, one guarded send_email a step)")
    print(f"{'history':>8} {'agent ms/step':>14} {'validator, 1st call':>20} {'later calls':>12} {'share':>7}")
    for size in sizes:
        plain, first, later = agent_loop(size, steps=4 if args.quick else 10, repeats=2 if args.quick else 5)
        print(f"{size:>8,} {plain:>14.3f} {first:>20.3f} {later:>12.3f} {later / plain:>6.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
