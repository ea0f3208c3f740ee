"""Warm-up (issue 40 item 3): a request whose prompt prefix another request is writing waits until
that answer starts, at most `wait_seconds`; nothing else ever waits."""

from __future__ import annotations

import asyncio
import json

from evolve_action.harness._warmup import Warmup, prefix_key


def body(billing: str = "a", system: str = "You are Claude Code.", query: str = "q") -> bytes:
    return json.dumps(
        {
            "model": "claude-sonnet-4-6",
            "tools": [{"name": "Read", "description": "read", "input_schema": {}}],
            "system": [
                {"type": "text", "text": f"x-anthropic-billing-header: cc_version={billing};"},
                {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}},
            ],
            "messages": [{"role": "user", "content": query}],
        }
    ).encode()


def test_the_key_is_the_shared_prefix_only() -> None:
    assert prefix_key(body("a", query="x")) == prefix_key(body("b", query="y"))
    assert prefix_key(body(system="other")) != prefix_key(body())
    assert prefix_key(b"not json") is None
    assert prefix_key(b'{"messages": []}') is None


def test_a_wave_waits_for_the_first_answer_to_start() -> None:
    async def main() -> list[str]:
        warm = Warmup(wait_seconds=30)
        order: list[str] = []
        first = await warm.hold(body("1"))  # nobody writes it: goes at once

        async def follower(name: str) -> None:
            done = await warm.hold(body(name))
            order.append(name)
            done(True)

        waiting = [asyncio.create_task(follower(n)) for n in ("2", "3")]
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        order.append("first answer starts")
        first(True)
        await asyncio.gather(*waiting)
        assert warm.held == 2
        late = await warm.hold(body("4"))  # written: never held
        late(True)
        assert warm.held == 2
        return order

    assert asyncio.run(main()) == ["first answer starts", "2", "3"]


def test_the_wait_is_bounded_and_a_failed_writer_hands_over() -> None:
    async def main() -> None:
        warm = Warmup(wait_seconds=0.05)
        await warm.hold(body("1"))  # its answer never starts
        await warm.hold(body("2"))  # returns after the bound
        assert warm.held == 1
        warm2 = Warmup(wait_seconds=30)
        failed = await warm2.hold(body("1"))
        task = asyncio.create_task(warm2.hold(body("2")))
        await asyncio.sleep(0)
        failed(False)  # an error: the waiter becomes the writer
        writer = await task
        third = asyncio.create_task(warm2.hold(body("3")))
        await asyncio.sleep(0)
        assert not third.done()  # it waits for the new writer
        writer(True)
        (await third)(True)

    asyncio.run(main())


def test_other_prefixes_never_wait() -> None:
    async def main() -> None:
        warm = Warmup(wait_seconds=30)
        await warm.hold(body(system="one"))
        other = await asyncio.wait_for(warm.hold(body(system="two")), timeout=5)
        other(True)
        assert warm.held == 0

    asyncio.run(main())
