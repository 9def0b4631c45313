"""The validator's cost where users run it, each row against its host or its floor, measured in one run.

One realistic history (``bench/gate_latency.py``'s transcripts: user turns with addresses, agent
steps, outside tool outputs with IBANs; every fifth user turn also carries an invoice line with an
amount, a URL and colons) of 1,000 and 10,000 messages, and one action the strict judge approves
(``send_email`` to the address the user's last turn names, quoting it). The rows:

- **checkpointed agent** (``create_agent`` with ``InMemorySaver``, then ``SqliteSaver``): each user turn
  is a new ``invoke`` on the same thread, so the checkpointer hands the agent new message objects;
  the turn makes three guarded calls. The validator's own time (inside its middleware, the tool's run
  left out) for the turn's first call and for the later ones, as a share of the turn's wall time;
- **stateless server**: the history arrives as JSON with every request (no message ids, no cache): a
  cold ``Validator.check`` of the bytes (decoded afresh), against the sum of its stages' floors (an
  untyped decode, a SHA-256 of the bytes, one casefold of the text, seven ``str.find``); and a check
  whose last four messages are new since the conversation's last one, named (``conversation=``) and
  unnamed (the messages found by their bytes);
- **service**: the shipped ``ServiceClient`` against a ``validator serve`` on loopback, against the
  same check in process;
- **one-shot CLI**: ``validator check FILE`` (a verdict drawn for people) and ``validator check --json FILE``
  (what a host reads) on a tiny input, against ``python -c pass``, the three run in turn;
- **memory**: what the per-conversation cache keeps after 25 stateless Anthropic-format requests
  (entries, and characters against the text of one request).

Run: ``python bench/hosts.py`` (``--quick``: 1,000 messages only, fewer repeats). The issue's targets
(issue 26) are printed beside each figure; the machine is noisy, so read the ratios, measured side by side.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_path import agent_loop, timed
from gate_latency import POLICY, build
from service_load import _start

from validator import MemoryRecorder, Message, Validator
from validator.inputs.conversations import Seen
from validator.inputs.held import RecentInputs
from validator.text.search import normalize

ASK = "Please email person0@acme.example the report."
QUOTE = "email person0@acme.example the report"
JUSTIFICATION = {"reason": "The user asked.", "evidence": [{"quote": QUOTE}]}
ARGS = {"to": "person0@acme.example", "body": "the report"}
ASK_THREE = " ".join(f"Please email person{k}@acme.example the report." for k in range(3))
"""A turn asking for three emails (one email sent twice would be its request spent)."""


def _email(k: int) -> dict[str, Any]:
    quote = f"email person{k}@acme.example the report"
    justification = {"reason": "The user asked.", "evidence": [{"quote": quote}]}
    return {"to": f"person{k}@acme.example", "body": "the report", "justification": justification}


def median_ms(fn: Callable[[], Any], repeats: int) -> float:
    fn()
    times = []
    gc.collect()
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def history(size: int) -> list[Message]:
    """The realistic history, its last message the user's request."""
    out = []
    for i, m in enumerate(build(size, n_actions=1, seed=size).messages):
        if m.role == "user" and i % 25 == 0:
            extra = (
                f" Invoice #{i}: 1,250.00 EUR, due 2026-12-{1 + i % 28:02d}; see https://portal.acme.example/inv/{i}."
            )
            m = Message(role="user", content=m.content + extra)
        out.append(m)
    return [*out, Message(role="user", content=ASK)]


def check_bytes(messages: list[Message]) -> bytes:
    body = {
        "messages": msgspec.to_builtins(messages),
        "action": {"tool": "send_email", "args": ARGS, "justification": JUSTIFICATION},
        "user_id": "u",
    }
    return msgspec.json.encode(body)


def as_langchain(messages: list[Message]) -> list[Any]:
    """``messages`` as LangChain messages (the tool calls' arguments left out: the agent's earlier steps)."""
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

    seed: list[BaseMessage] = []
    for m in messages:
        if m.role == "user":
            seed.append(HumanMessage(m.content))
        elif m.role == "assistant":
            seed.append(
                AIMessage(m.content, tool_calls=[{"id": c.id, "name": c.name, "args": {}} for c in m.tool_calls])
            )
        else:
            seed.append(ToolMessage(m.content, tool_call_id=m.tool_call_id or "", name=m.name))
    return seed


def email_tool() -> Any:
    """The guarded ``send_email`` tool of the agent rows."""
    from langchain_core.tools import tool

    @tool
    def send_email(to: str, body: str = "", justification: dict[str, Any] | None = None) -> str:
        """Send an email."""
        return f"sent to {to}"

    return send_email


# -- checkpointed create_agent ----------------------------------------------------------------------


def checkpointed(size: int, saver_name: str, turns: int) -> tuple[float, float, float]:
    """``(turn ms, first guarded call ms, later calls ms)``, medians over ``turns`` user turns."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver
    from validator.integrations.testing import ScriptedChatModel

    seed = as_langchain(history(size)[:-1])
    send_email = email_tool()

    @tool
    def read_inbox() -> str:
        """Read the inbox."""
        return "nothing new"

    own: list[float] = []
    script: list[AIMessage] = [AIMessage("Ready.")]
    for t in range(turns + 1):  # three emails a turn, each asked for in its own sentence
        script += [
            AIMessage("", tool_calls=[{"id": f"t{t}c{k}", "name": "send_email", "args": _email(k)}]) for k in range(3)
        ]
        script.append(AIMessage("Done."))

    saver = (
        InMemorySaver() if saver_name == "memory" else SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    )
    agent = create_agent(
        ScriptedChatModel(responses=script),
        [send_email, read_inbox],
        middleware=[timed(Validator(POLICY, recorder=MemoryRecorder()), own)],
        checkpointer=saver,
    )
    config: Any = {"configurable": {"thread_id": f"bench-{size}"}}
    agent.invoke({"messages": seed}, config)
    walls, firsts, laters = [], [], []
    for t in range(turns + 1):
        own.clear()
        start = time.perf_counter()
        out = agent.invoke({"messages": [HumanMessage(ASK_THREE)]}, config)
        wall = (time.perf_counter() - start) * 1000
        results = [m for m in out["messages"][-7:] if isinstance(m, ToolMessage)]
        assert len(results) == 3 and all(r.status == "success" for r in results), results
        if t:  # the first turn warms the process
            walls.append(wall)
            firsts.append(own[0])
            laters.extend(own[1:])
    return statistics.median(walls), statistics.median(firsts), statistics.median(laters)


# -- issue 46's rows: the validator's cost against the loop's own ------------------------------------------


def readable_history(size: int) -> list[Message]:
    """:func:`history` whose user turns are only their requests ("Please email personN@acme.example the
    report."): every later sentence is one the grammar reads whole and finds harmless to an earlier request,
    so a check citing an early turn reads them all (the worst case of the later-words scan)."""
    out = []
    for m in history(size)[:-1]:
        if m.role == "user":
            m = Message(role="user", content=m.content[m.content.find("Please email") :].split(" Invoice")[0])
        out.append(m)
    return out


def loop_cost(size: int, cite_earlier: bool, turns: int) -> tuple[float, float]:
    """``(validator ms a turn, the loop's own ms a turn)``, medians over ``turns`` user turns of a
    ``create_agent`` with ``InMemorySaver`` (a new ``invoke`` a user turn, three guarded calls each). The agent
    acts on the turn's own request, or (``cite_earlier``) the turn asks for another email and the agent sends
    emails the user asked for in the history's first turns, each check reading every later sentence for a
    take-back (a turn of "Thanks!" would be a reply to the agent's "Done.", which leaves an earlier request
    unknown: no rule reads what it answers)."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from validator.integrations.testing import ScriptedChatModel

    seed = as_langchain(readable_history(size) if cite_earlier else history(size)[:-1])
    send_email = email_tool()

    def people(t: int) -> list[int]:
        return [5 * (3 * t + k) for k in range(3)] if cite_earlier else [1_000_000 + 3 * t + k for k in range(3)]

    script: list[AIMessage] = [AIMessage("Ready.")]
    for t in range(turns + 1):
        script += [
            AIMessage("", tool_calls=[{"id": f"t{t}c{k}", "name": "send_email", "args": _email(k)}]) for k in people(t)
        ]
        script.append(AIMessage("Done."))
    own: list[float] = []
    agent = create_agent(
        ScriptedChatModel(responses=script),
        [send_email],
        middleware=[timed(Validator(POLICY, recorder=MemoryRecorder()), own)],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": f"cost-{size}-{cite_earlier}"}}
    agent.invoke({"messages": seed}, config)
    mine, loop = [], []
    for t in range(turns + 1):
        said = (
            f"Please also email archive{t}@acme.example the agenda."
            if cite_earlier
            else " ".join(f"Please email person{k}@acme.example the report." for k in people(t))
        )
        own.clear()
        start = time.perf_counter()
        out = agent.invoke({"messages": [HumanMessage(said)]}, config)
        wall = (time.perf_counter() - start) * 1000
        results = [m for m in out["messages"][-7:] if isinstance(m, ToolMessage)]
        assert len(results) == 3 and all(r.status == "success" for r in results), results
        if t:  # the first turn warms the process
            mine.append(sum(own))
            loop.append(wall - sum(own))
    return statistics.median(mine), statistics.median(loop)


def jsonl_cold(size: int, lines: int) -> float:
    """Milliseconds per check of ``validator check --jsonl -`` fed ``lines`` checks of one ``size``-message
    conversation (each line the whole input, decoded for what its messages do not share with a line before),
    start-up left out: the time for ``lines`` less the time for one, over the rest."""
    data = check_bytes(history(size))
    cli = [str(Path(sys.executable).parent / "validator"), "check", "--jsonl", "-"]

    def run(n: int) -> float:
        feed = b"\n".join([data] * n) + b"\n"
        start = time.perf_counter()
        done = subprocess.run(cli, input=feed, capture_output=True, check=False)
        elapsed = (time.perf_counter() - start) * 1000
        assert done.stdout.count(b"\n") == n and b'"approved":true' in done.stdout.replace(b" ", b""), done.stdout[:300]
        return elapsed

    # start-up (about half a second) moves by tens of milliseconds between runs: interleaved, five of each
    ones, manys = [], []
    for _ in range(5):
        ones.append(run(1))
        manys.append(run(lines))
    return (statistics.median(manys) - statistics.median(ones)) / (lines - 1)


def big_check() -> tuple[float, int, str, float]:
    """``(ms, bytes, code, gate budget s)`` of a check of about 5.7 MB: the user's request, then three user
    messages of 1.9 MB of periodic text with no sentence end (well inside the documented limits)."""
    text = ("the quarterly numbers look fine and the team agrees " * 40_000)[:1_900_000]
    messages = [Message(role="user", content=ASK), *(Message(role="user", content=text) for _ in range(3))]
    data = check_bytes(messages)
    validator = Validator(POLICY, recorder=MemoryRecorder())
    start = time.perf_counter()
    verdict = validator.check(data)
    return (time.perf_counter() - start) * 1000, len(data), verdict.code.value, validator.config.gate_budget


# -- a stateless JSON server --------------------------------------------------------------------------


def stateless(size: int, repeats: int) -> tuple[float, float]:
    """``(cold check ms, sum of its stages' floors ms)``."""
    messages = history(size)
    data = check_bytes(messages)
    validator = Validator(POLICY, recorder=MemoryRecorder())
    verdict = validator.check(data)
    assert verdict.approved, verdict.reasoning
    text = "\x00".join(m.content for m in messages)
    folded = text.casefold()
    needles = ([normalize(QUOTE)] + [v.casefold() for v in ARGS.values()] * 3)[:7]
    floors = (
        median_ms(lambda: msgspec.json.decode(data), repeats)
        + median_ms(lambda: hashlib.sha256(data).hexdigest(), repeats)
        + median_ms(lambda: "\x00".join(m.content for m in messages).casefold(), repeats)
        + median_ms(lambda: [folded.find(n) for n in needles], repeats)
    )

    def cold() -> Any:
        validator.recent = RecentInputs()  # each input decoded afresh (what its checks derived may be found)
        return validator.check(data)

    return median_ms(cold, repeats), floors


def stateless_named(size: int, repeats: int, *, named: bool = True) -> float:
    """Median ms of a stateless server's check (the whole history as JSON) that names its conversation,
    when the last four messages are new since the conversation's last check; ``named=False``: one that names
    nothing (the validator finds the messages it read by their bytes, :class:`RecentInputs`)."""
    doc = json.loads(check_bytes(history(size)))
    prefix = json.dumps({**doc, "messages": doc["messages"][:-4]})
    data = json.dumps(doc)
    validator = Validator(POLICY, recorder=MemoryRecorder())
    times = []
    for i in range(repeats + 1):
        name = f"named-{size}-{i}" if named else None
        validator.recent = RecentInputs()  # nothing of the repeats before: only this conversation's last check
        validator.transcripts.seen = Seen()
        validator.check(prefix, conversation=name)
        start = time.perf_counter()
        verdict = validator.check(data, conversation=name)
        times.append((time.perf_counter() - start) * 1000)
        assert verdict.approved, verdict.reasoning
    return statistics.median(times[1:])


# -- the service ------------------------------------------------------------------------------------


def service(sizes: tuple[int, ...], repeats: int) -> list[tuple[int, float, float, float]]:
    """``(size, whole round trip ms, incremental round trip ms, in-process ms)`` per size, through the
    shipped client with kept-alive connections; the incremental check is a named conversation whose
    last four messages (a user turn) are new to the service."""
    from validator.integrations.service import ServiceClient

    proc, url, token, _ = _start(None)  # the agent's token (check)
    try:
        client = ServiceClient(url, token, timeout=60, keep_alive=True)
        validator = Validator(recorder=MemoryRecorder())  # the service's own default policy, in process
        out = []
        for size in sizes:
            data = check_bytes(history(size))
            doc = json.loads(data)
            there, here = client.check(data), validator.check(data)
            assert (there.decision, there.code) == (here.decision, here.code), (there.reasoning, here.reasoning)
            remote = median_ms(lambda data=data: client.check(data), repeats)  # type: ignore[misc]

            def here(data: bytes = data) -> Any:  # decoded afresh each time, as the service decodes each body
                validator.recent = RecentInputs()
                return validator.check(data)

            local = median_ms(here, repeats)
            out.append((size, remote, _incremental(client, doc, repeats), local))
        client.close()
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _incremental(client: Any, doc: dict[str, Any], repeats: int) -> float:
    """Median ms of a named conversation's check when its last four messages are new to the service."""
    prefix = {**doc, "messages": doc["messages"][:-4]}
    times = []
    for i in range(repeats + 1):
        name = f"bench-{len(doc['messages'])}-{i}-{time.monotonic_ns()}"
        client.check(prefix, conversation=name)  # the turns before, held by the service
        start = time.perf_counter()
        verdict = client.check(doc, conversation=name)
        times.append((time.perf_counter() - start) * 1000)
        assert verdict.code == client.check(doc).code
    return statistics.median(times[1:])


# -- the one-shot CLI -------------------------------------------------------------------------------


def one_shot(repeats: int) -> tuple[float, float, float]:
    """``(validator check FILE ms, validator check --json FILE ms, python -c pass ms)``, medians of separate
    processes run in turn (a verdict drawn for people, and the JSON a host reads)."""
    tiny = check_bytes([Message(role="user", content=ASK)])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "check.json"
        path.write_bytes(tiny)
        cli = [str(Path(sys.executable).parent / "validator"), "check", str(path)]
        commands = [cli, [*cli[:2], "--json", str(path)], [sys.executable, "-c", "pass"]]
        times: list[list[float]] = [[], [], []]
        for _ in range(repeats + 1):  # the first round warms the file system's caches: not counted
            for command, kept in zip(commands, times, strict=True):
                start = time.perf_counter()
                subprocess.run(command, capture_output=True, check=False)
                kept.append((time.perf_counter() - start) * 1000)
        human, json_, bare = (statistics.median(t[1:]) for t in times)
        return human, json_, bare


# -- memory ----------------------------------------------------------------------------------------


def cached_after_stateless(size: int, requests: int = 25) -> tuple[int, float]:
    """``(entries, cached characters / one request's text)`` of the Anthropic conversation cache after
    ``requests`` stateless requests, each parsed from JSON."""
    from validator.inputs import anthropic

    messages = history(size)
    wire = json.dumps(
        [
            {"role": "user" if m.role != "assistant" else "assistant", "content": m.content or "."}
            for m in messages
            if m.role != "tool"
        ]
    )
    cache = anthropic.conversations()  # a validator's own, as Validator.transcripts makes it
    for _ in range(requests):
        anthropic.transcript_from_anthropic(json.loads(wire), cache=cache)
    text = sum(len(m.content) for m in messages if m.role != "tool")
    return len(cache), cache._chars / max(1, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 messages only, few repeats (CI smoke runs)")
    args = parser.parse_args(argv)
    sizes = (1_000,) if args.quick else (1_000, 10_000)
    repeats = 3 if args.quick else 9
    print(f"python {sys.version.split()[0]}; medians, milliseconds; targets from issue 26 in brackets")

    print("\ncheckpointed create_agent, a new invoke per user turn, three guarded calls a turn")
    print(f"{'saver':<8} {'history':>8} {'turn':>9} {'1st call':>9} {'share':>6} [5%] {'later':>8} {'share':>6} [2%]")
    for saver in ("memory", "sqlite"):
        for size in sizes:
            turn, first, later = checkpointed(size, saver, turns=2 if args.quick else 4)
            shares = f"{first:>9.2f} {first / turn:>6.1%}      {later:>8.2f} {later / turn:>6.1%}"
            print(f"{saver:<8} {size:>8,} {turn:>9.2f} {shares}")

    print("\nstateless server: the history as JSON with each request (no ids); the last four messages new since the")
    print("conversation's last check: named, check(..., conversation=); unnamed, found by the bytes of its messages")
    print(f"{'history':>8} {'cold check':>11} {'floors':>8} {'ratio':>6} [2x] {'named':>8} {'ratio':>6} {'unnamed':>8}")
    for size in sizes:
        times = repeats if size == 1_000 else max(3, repeats // 3)
        cold, floors = stateless(size, times)
        named, unnamed = stateless_named(size, times), stateless_named(size, times, named=False)
        print(
            f"{size:>8,} {cold:>11.2f} {floors:>8.2f} {cold / floors:>5.1f}x      {named:>8.2f} {named / floors:>5.1f}x"
            f" {unnamed:>8.2f}"
        )

    print("\nservice: the shipped ServiceClient (kept-alive) against validator serve on loopback, one check at a time")
    print(f"{'history':>8} {'in process':>11} {'round trip':>11} {'ratio':>6} [1.15x] {'incremental':>12} {'ratio':>6}")
    for size, remote, held, local in service(sizes, repeats if len(sizes) == 1 else max(3, repeats // 3)):
        print(
            f"{size:>8,} {local:>11.2f} {remote:>11.2f} {remote / local:>5.2f}x"
            f"        {held:>12.2f} {held / local:>5.2f}x"
        )

    print("\nissue 46: the validator's own time against the loop's own, create_agent + the middleware")
    print(f"{'row':<58} {'validator':>10} {'loop':>8} {'ratio':>6}  target")
    plain, first, later = agent_loop(1_000, 3, 3 if args.quick else 9)
    print(
        f"{'whole history each invoke, 1,000 messages, per guarded call':<58} {later:>10.2f} {plain:>8.2f} "
        f"{later / plain:>6.2f}  0.25"
    )
    for cite, label, target in (
        (False, "InMemorySaver, a new turn per invoke", "0.10"),
        (True, "InMemorySaver, the agent cites an earlier turn", "0.10"),
    ):
        mine, loop = loop_cost(1_000, cite, 2 if args.quick else 4)
        print(f"{label:<58} {mine:>10.2f} {loop:>8.2f} {mine / loop:>6.2f}  {target}")
    cold = jsonl_cold(1_000, 31 if args.quick else 61)
    print(f"{'cold check, 1,000 messages, validator check --jsonl (per check)':<58} {cold:>10.2f}  target 5 ms")
    ms, size, code, budget = big_check()
    print(
        f"{f'a {size / 1e6:.1f} MB check (request, 3 x 1.9 MB without a sentence end)':<58} {ms:>10.0f}  "
        f"{code} (gate budget {budget:.0f} s)"
    )

    cli, as_json, bare = one_shot(3 if args.quick else 9)
    print(
        f"\none-shot CLI: validator check FILE {cli:.1f} ms ({cli / bare:.1f}x), validator check --json FILE "
        f"{as_json:.1f} ms ({as_json / bare:.1f}x), python -c pass {bare:.1f} ms [8x]"
    )

    entries, chars = cached_after_stateless(sizes[0])
    print(
        f"\nmemory: after 25 stateless Anthropic-format requests of {sizes[0]:,} messages the conversation cache "
        f"holds {entries} entries, {chars:.1f}x one request's text [nothing for an unnamed conversation; 3x]"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
