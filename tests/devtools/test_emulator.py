"""The cache emulator follows the documented rules it claims to follow."""

from __future__ import annotations

from typing import Any

from validator.devtools.emulator import CacheEmulator
from validator.devtools.tokens import estimate_block

BIG = "word " * 6000  # ~7,500 tokens: above every minimum


def _req(messages: list[dict[str, Any]], *, model: str = "claude-sonnet-4-6", tools: Any = None) -> dict[str, Any]:
    return {
        "model": model,
        "tools": tools or [{"name": "t", "input_schema": {"type": "object"}}],
        "system": [{"type": "text", "text": BIG, "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
    }


def _user(text: str, cache: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cache:
        block["cache_control"] = {"type": "ephemeral"}
    return {"role": "user", "content": [block]}


def _emulator(now: list[float]) -> CacheEmulator:
    return CacheEmulator(lambda body: [{"type": "text", "text": "ok"}], clock=lambda: now[0])


def test_write_then_read_then_expire_after_five_minutes() -> None:
    now = [0.0]
    emu = _emulator(now)
    first = emu.usage(_req([_user("hi")]))
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 7000
    now[0] = 200
    second = emu.usage(_req([_user("hi")]))
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    now[0] = 200 + 299  # the hit at 200 refreshed the entry
    assert emu.usage(_req([_user("hi")]))["cache_read_input_tokens"] > 0
    now[0] = 200 + 299 + 301
    assert emu.usage(_req([_user("hi")]))["cache_read_input_tokens"] == 0


def test_lookback_is_twenty_blocks() -> None:
    now = [0.0]
    emu = _emulator(now)
    history = [
        _user(f"m{i}") if i % 2 == 0 else {"role": "assistant", "content": [{"type": "text", "text": f"a{i}"}]}
        for i in range(3)
    ]
    history[-1] = _user("m2", cache=True)
    written = emu.usage(_req(history))["cache_creation_input_tokens"]
    near = [
        *history[:-1],
        _user("m2"),
        *([{"role": "assistant", "content": "x"}, _user("y")] * 9),
        _user("z", cache=True),
    ]
    assert emu.usage(_req(near))["cache_read_input_tokens"] == written  # 19 blocks later: found
    far = [
        *history[:-1],
        _user("m2"),
        *([{"role": "assistant", "content": "x"}, _user("y")] * 10),
        _user("z", cache=True),
    ]
    # 21 blocks later: the walk back stops short of the history entry, reaching only the system entry
    assert emu.usage(_req(far))["cache_read_input_tokens"] < written


def test_minimum_length_and_prompt_parameters() -> None:
    now = [0.0]
    emu = _emulator(now)
    small = {
        "model": "claude-haiku-4-5",
        "system": [{"type": "text", "text": "short", "cache_control": {"type": "ephemeral"}}],
        "messages": [_user("x")],
    }
    assert emu.usage(small)["cache_creation_input_tokens"] == 0
    emu.usage(_req([_user("hi")]))
    other_tools = _req([_user("hi")], tools=[{"name": "t2", "input_schema": {"type": "object"}}])
    assert emu.usage(other_tools)["cache_read_input_tokens"] == 0
    assert emu.usage({**_req([_user("hi")]), "tool_choice": {"type": "any"}})["cache_read_input_tokens"] == 0


def test_disabled_bills_everything_as_input() -> None:
    emu = CacheEmulator(lambda body: [], enabled=False)
    usage = emu.usage(_req([_user("hi")]))
    assert (
        usage["cache_read_input_tokens"] == usage["cache_creation_input_tokens"] == 0 and usage["input_tokens"] > 7000
    )


def test_a_marker_nested_in_a_tool_result_is_a_breakpoint_and_not_part_of_the_hash() -> None:
    now = [0.0]
    emu = _emulator(now)

    def turn(marker: dict[str, Any] | None) -> dict[str, Any]:
        inner: dict[str, Any] = {"type": "text", "text": BIG}
        if marker:
            inner["cache_control"] = marker
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [inner]}]}

    first = emu.usage(_req([_user("hi"), turn({"type": "ephemeral"})]))
    assert first["cache_creation_input_tokens"] > 14000  # written through the tool result
    second = emu.usage(_req([_user("hi"), turn({"type": "ephemeral", "ttl": "5m"}), _user("more", cache=True)]))
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]


def test_a_deferred_tool_is_counted_where_a_tool_reference_inlines_it_not_in_the_prefix() -> None:
    now = [0.0]
    emu = _emulator(now)
    plain = {"name": "t", "input_schema": {"type": "object"}}
    deferred = {
        "name": "validate_action",
        "description": "Record your verdict. " * 50,
        "input_schema": {"type": "object", "properties": {"approved": {"type": "boolean"}}},
        "defer_loading": True,
    }
    definition = estimate_block(deferred)
    assert definition > 250
    reference = {
        "type": "tool_result",
        "tool_use_id": "toolu_s",
        "content": [{"type": "tool_reference", "tool_name": "validate_action"}],
    }
    search = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_s", "name": "s", "input": {}}]}
    history = [_user("hi", cache=True)]
    with_deferred = _req(history, tools=[deferred, plain])
    sizes = emu.block_sizes(with_deferred)
    assert sizes[0] == 0  # declared, deferred: not in the prefix
    assert sizes[1:] == emu.block_sizes(_req(history, tools=[plain]))
    # The prefix up to the history is the same size with or without the deferred tool ...
    first = emu.usage(with_deferred)
    assert (
        first["cache_creation_input_tokens"] == emu.usage(_req(history, tools=[plain]))["cache_creation_input_tokens"]
    )
    # ... and the definition is paid inline, in full, where the reference surfaces it.
    now[0] = 10
    surfaced = emu.usage(_req([*history, search, {"role": "user", "content": [reference]}], tools=[deferred, plain]))
    assert surfaced["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert surfaced["input_tokens"] == estimate_block(search["content"][0]) + estimate_block(reference) + definition


def test_the_clock_decides_expiry_for_a_simulated_gap() -> None:
    now = [0.0]
    emu = _emulator(now)
    history = [_user("hi", cache=True)]
    written = emu.usage(_req(history))["cache_creation_input_tokens"]
    for gap in (75.0, 75.0, 75.0):  # each read refreshes the entry
        now[0] += gap
        assert emu.usage(_req(history))["cache_read_input_tokens"] == written
    now[0] += 375.0  # longer than the TTL since the last read
    again = emu.usage(_req(history))
    assert again["cache_read_input_tokens"] == 0 and again["cache_creation_input_tokens"] == written
