"""A one-hour cache write costs twice the input rate, a five-minute one 1.25× (Anthropic's list
prices): the meter prices the part `usage.cache_creation` reports as written to the one-hour cache
at its own rate, and an answer without that split as five-minute writes."""

from __future__ import annotations

import json

import pytest

from evolve_action.catalog import Pricing
from evolve_action.harness._gateway_rules import worst_case
from evolve_action.harness._meter import ResponseMeter, metered_cost_usd, pricing_for

SONNET = pricing_for("claude-sonnet-4-6")


def _streamed(usage: dict[str, object]) -> float:
    start = {"type": "message_start", "message": {"model": "claude-sonnet-4-6", "usage": usage}}
    meter = ResponseMeter(content_type="text/event-stream", status=200)
    meter.feed(f"event: message_start\ndata: {json.dumps(start)}\n\n".encode())
    meter.feed(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    return meter.result().cost_usd


def test_one_hour_writes_cost_twice_the_input_rate_and_five_minute_ones_a_quarter_more() -> None:
    assert isinstance(SONNET, Pricing)
    rate = SONNET.input_per_mtok / 1e6
    usage = {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_creation_input_tokens": 3_000,
        "cache_creation": {"ephemeral_5m_input_tokens": 1_000, "ephemeral_1h_input_tokens": 2_000},
    }
    assert _streamed(usage) == pytest.approx(1_000 * rate * 1.25 + 2_000 * rate * 2.0)
    without_split = {k: v for k, v in usage.items() if k != "cache_creation"}
    assert _streamed(without_split) == pytest.approx(3_000 * rate * 1.25)


@pytest.mark.parametrize("one_hour", [-5, 10_000])
def test_a_split_outside_the_total_is_clamped(one_hour: int) -> None:
    assert isinstance(SONNET, Pricing)
    cost = metered_cost_usd(
        SONNET,
        input_tokens=0,
        output_tokens=0,
        cache_creation_input_tokens=100,
        cache_creation_1h_input_tokens=one_hour,
    )
    factor = 2.0 if one_hour > 0 else 1.25
    assert cost == pytest.approx(100 * SONNET.input_per_mtok / 1e6 * factor)


def test_the_gateway_reserves_one_hour_writes_at_their_rate() -> None:
    """A request asking for the one-hour cache anywhere may be billed 2× for its prompt: the
    reservation prices it so, or the cap could be passed by the difference."""
    assert isinstance(SONNET, Pricing)
    block = {"type": "text", "text": "x" * 4_000}
    five = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1,
        "messages": [{"role": "user", "content": [block]}],
    }
    hour = json.loads(json.dumps(five))
    hour["messages"][0]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    size = 4_000
    rate = SONNET.input_per_mtok / 1e6
    assert worst_case(five, size, SONNET).fixed_usd == pytest.approx(1_000 * rate * 1.25)
    assert worst_case(hour, size, SONNET).fixed_usd == pytest.approx(1_000 * rate * 2.0)
    deep: object = hour
    for _ in range(5_000):
        deep = [deep]
    assert worst_case(
        {"model": "m", "max_tokens": 1, "messages": deep}, size, SONNET
    ).fixed_usd == (pytest.approx(1_000 * rate * 2.0))
