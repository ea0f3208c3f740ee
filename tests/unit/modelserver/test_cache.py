"""The scripted server's prompt cache follows the API's rules, one test per rule (issue 40 item 2).

Requests are built as Claude Code sends them: tools, a system prompt whose first line is the
per-request billing header, then messages, with `cache_control` breakpoints. Tokens are
ceil(characters / 4) per block, so a block of `4 * n` characters is `n` tokens.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from evolve_action.modelserver import ModelServer
from evolve_action.modelserver._cache import (
    LOOKBACK,
    PromptCache,
    cache_blocks,
    min_cacheable_tokens,
)

MODEL = "claude-sonnet-4-5"  # minimum 1,024 tokens
CC = {"type": "ephemeral"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def text(n_tokens: int, tag: str = "x", cc: dict[str, Any] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": (tag * (4 * n_tokens))[: 4 * n_tokens]}
    if cc is not None:
        block["cache_control"] = cc
    return block


def body(
    *,
    system_tokens: int = 2000,
    billing: str = "cc_version=1.0.abc",
    tool_tag: str = "t",
    messages: list[dict[str, Any]] | None = None,
    system_cc: dict[str, Any] | None = CC,
) -> dict[str, Any]:
    return {
        "model": MODEL,
        "tools": [{"name": "Read", "description": tool_tag * 400, "input_schema": {}}],
        "system": [
            {"type": "text", "text": f"x-anthropic-billing-header: {billing};"},
            text(system_tokens, "s", system_cc),
        ],
        "messages": messages
        if messages is not None
        else [{"role": "user", "content": [text(50, "q", CC)]}],
    }


def ask(cache: PromptCache, b: dict[str, Any], *, start: bool = True) -> tuple[int, int, int]:
    split, ticket = cache.lookup(str(b.get("model", MODEL)), cache_blocks(b))
    if start:
        ticket.started()
    return split.read, split.written, split.plain


def test_one_cache_for_every_session_read_after_the_first_write() -> None:
    cache = PromptCache(Clock())
    r1 = ask(cache, body())
    r2 = ask(cache, body())
    assert r1[0] == 0 and r1[1] > 2000
    assert r2 == (r1[1], 0, r1[2])  # the second session reads all the first wrote


def test_the_billing_line_does_not_break_the_prefix() -> None:
    cache = PromptCache(Clock())
    first = ask(cache, body(billing="cc_version=1.0.abc"))
    second = ask(cache, body(billing="cc_version=1.0.def"))
    assert second[0] == first[1] and second[1] == 0


def test_a_change_before_the_breakpoint_misses_one_after_it_does_not() -> None:
    cache = PromptCache(Clock())
    ask(cache, body())
    assert ask(cache, body(tool_tag="u"))[0] == 0  # tools come first: a tool change misses
    ask(cache, body())
    after = [
        {"role": "user", "content": [text(50, "q", CC)]},
        {"role": "assistant", "content": [text(10, "a")]},
        {"role": "user", "content": [text(20, "z")]},  # no breakpoint: plain input
    ]
    read, written, plain = ask(cache, body(messages=after))
    assert read > 0 and written == 0 and plain >= 30


def test_order_is_tools_then_system_then_messages() -> None:
    blocks = cache_blocks(body())
    kinds = [json.loads(b.key)[0] for b in blocks]
    assert kinds == ["tool", "system", "system", "user"]
    assert [b.ttl is not None for b in blocks] == [False, False, True, True]
    assert not blocks[1].keyed  # the billing line


def test_lookback_finds_an_entry_up_to_20_blocks_before_a_breakpoint() -> None:
    def conversation(extra: int) -> list[dict[str, Any]]:
        # As Claude Code does: the breakpoint moves to the last message.
        msgs: list[dict[str, Any]] = [{"role": "user", "content": [text(50, "q")]}]
        for i in range(extra):
            last = i == extra - 1
            msgs.append(
                {"role": "assistant" if i % 2 == 0 else "user", "content": [text(5, str(i % 10))]}
                if not last
                else {"role": "user", "content": [text(5, "e", CC)]}
            )
        return msgs

    # Only the message breakpoint: the system block has none, so the first request's entry is
    # at its last block and a later request finds it by looking back.
    cache = PromptCache(Clock())
    base = ask(cache, body(system_cc=None))
    near = ask(cache, body(system_cc=None, messages=conversation(LOOKBACK)))
    assert near[0] == base[1]  # 20 blocks past the entry: still found
    cache = PromptCache(Clock())
    ask(cache, body(system_cc=None))
    far = ask(cache, body(system_cc=None, messages=conversation(LOOKBACK + 1)))
    assert far[0] == 0  # 21 blocks past: not found, all written again


def test_an_entry_is_usable_once_the_writing_answer_has_started() -> None:
    cache = PromptCache(Clock())
    split, ticket = cache.lookup(MODEL, cache_blocks(body()))
    assert ask(cache, body(), start=False)[0] == 0  # arrived before the answer started: a miss
    ticket.started()
    assert ask(cache, body())[0] == split.written
    cache = PromptCache(Clock())
    _, failed = cache.lookup(MODEL, cache_blocks(body()))
    failed.abandoned()  # an error status: nothing was cached
    assert ask(cache, body())[0] == 0


def test_entries_live_five_minutes_from_their_last_use_or_an_hour_when_asked() -> None:
    clock = Clock()
    cache = PromptCache(clock)
    first = ask(cache, body())
    clock.now += 299
    assert ask(cache, body())[0] == first[1]  # read: refreshed for 5 more minutes
    clock.now += 299
    assert ask(cache, body())[0] == first[1]
    clock.now += 301
    assert ask(cache, body())[0] == 0  # expired: written again
    hour = {"type": "ephemeral", "ttl": "1h"}
    one_hour = [{"role": "user", "content": [text(50, "q", hour)]}]
    cache = PromptCache(clock)
    long = ask(cache, body(system_cc=hour, messages=one_hour))
    clock.now += 3000
    assert ask(cache, body(system_cc=hour, messages=one_hour))[0] == long[0] + long[1]
    clock.now += 3601
    assert ask(cache, body(system_cc=hour, messages=one_hour))[0] == 0


def test_a_prefix_shorter_than_the_model_minimum_is_not_cached() -> None:
    assert min_cacheable_tokens("claude-sonnet-4-5") == 1024
    assert min_cacheable_tokens("anthropic/claude-haiku-4-5-20251001") == 4096
    assert min_cacheable_tokens("claude-opus-4-6") == 4096
    assert min_cacheable_tokens("claude-sonnet-4-6") == 2048
    cache = PromptCache(Clock())
    small = body(system_tokens=1500)
    assert ask(cache, small)[1] > 1500  # 1,500 + tools ≥ 1,024: written for Sonnet 4.5
    haiku = {**small, "model": "claude-haiku-4-5"}
    read, written, plain = ask(cache, haiku)
    assert (read, written) == (0, 0) and plain > 1500  # below Haiku 4.5's 4,096: plain input
    assert ask(cache, haiku)[:2] == (0, 0)


def test_the_server_reports_the_split_as_usage() -> None:
    def post(srv: ModelServer, b: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(
            srv.base_url + "/v1/messages",
            data=json.dumps({**b, "max_tokens": 10}).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return dict(json.loads(resp.read())["usage"])

    with ModelServer({"default": "OK"}, port=0) as srv:
        first = post(srv, body(billing="a"))
        second = post(srv, body(billing="b"))
    assert first["cache_read_input_tokens"] == 0
    assert first["cache_creation_input_tokens"] > 2000
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["cache_creation_input_tokens"] == 0
    assert second["input_tokens"] == first["input_tokens"]
