"""What the gateway takes as cached: only a prefix its own answers cached, as the API would read it.

A prefix counts only where the API's rules (tools, system, each message block; an entry per
breakpoint, found from a breakpoint at most 20 blocks on; the model part of the key; the billing
line not) would read it, and only for 4 minutes after the answer that cached it.
"""

from __future__ import annotations

import json
from typing import Any

from evolve_action.harness._gateway_cache import FRESH_SECONDS, LOOKBACK, CachedPrefixes

SYSTEM = {"type": "text", "text": "S" * 8000, "cache_control": {"type": "ephemeral"}}
TOOLS = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}]


def request(
    *messages: str, model: str = "claude-sonnet-4-6", billing: str = "1", **extra: Any
) -> dict[str, Any]:
    """Tools, the billing line, the system prompt (a breakpoint), then user messages, the last a
    breakpoint."""
    blocks = [{"type": "text", "text": m} for m in messages]
    if blocks:
        blocks[-1]["cache_control"] = {"type": "ephemeral"}
    return {
        "model": model,
        "tools": TOOLS,
        "system": [{"type": "text", "text": f"x-anthropic-billing-header: {billing}"}, SYSTEM],
        "messages": [{"role": "user", "content": blocks}],
        **extra,
    }


def size(*blocks: Any) -> int:
    return sum(len(json.dumps(b, ensure_ascii=False).encode()) for b in blocks)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_only_a_prefix_an_answer_cached_counts_and_only_while_fresh() -> None:
    clock = Clock()
    cache = CachedPrefixes(clock)
    assert cache.cached_bytes(request("a")) == 0  # nothing seen yet
    cache.record(request("a"))
    shared = size(*TOOLS, SYSTEM)  # the billing line is no part of it
    # Another session's first request: its tools and system are read, its message is not.
    assert cache.cached_bytes(request("b", billing="2")) == shared
    # The same session's next request: the whole earlier prompt is read.
    first = {"type": "text", "text": "a"}
    assert cache.cached_bytes(request("a", "more")) == shared + size(first)
    assert cache.cached_bytes(request("b", model="claude-opus-4-6")) == 0  # the model is keyed
    changed = request("b")
    changed["system"][1] = {**SYSTEM, "text": "T" * 8000}
    assert cache.cached_bytes(changed) == 0
    # `thinking` and `tool_choice` invalidate cached messages, not the tools and system.
    assert cache.cached_bytes(request("a", "more", thinking={"type": "enabled"})) == shared
    clock.now += FRESH_SECONDS
    assert cache.cached_bytes(request("b")) == 0  # the API may have dropped it by now


def unmarked_system(body: dict[str, Any]) -> dict[str, Any]:
    body["system"][1] = {k: v for k, v in SYSTEM.items() if k != "cache_control"}
    return body


def test_a_cached_prefix_counts_only_where_a_breakpoint_finds_it() -> None:
    cache = CachedPrefixes(Clock())
    cache.record(request("a"))
    # The only breakpoint is on the last block: 21 blocks after the cached "a", too far back.
    far = unmarked_system(request("a", *[f"m{i}" for i in range(LOOKBACK + 1)]))
    assert cache.cached_bytes(far) == 0
    near = unmarked_system(request("a", *[f"m{i}" for i in range(LOOKBACK)]))
    read = size(*TOOLS, near["system"][1], {"type": "text", "text": "a"})  # the bytes it sends
    assert cache.cached_bytes(near) == read
    unmarked = unmarked_system(request("b"))
    unmarked["messages"][0]["content"][0].pop("cache_control")
    assert cache.cached_bytes(unmarked) == 0  # no breakpoint: the API reads nothing


def test_odd_request_shapes_are_never_taken_as_cached() -> None:
    cache = CachedPrefixes(Clock())
    for odd in ({}, {"system": 3, "messages": "x"}, {"tools": [1, None], "messages": [None]}):
        cache.record(odd)
        assert cache.cached_bytes(odd) == 0
