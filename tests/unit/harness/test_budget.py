"""The budget's bookkeeping: the prior, the measured mean, and "stop scheduling" once refused."""

from __future__ import annotations

import pytest

from evolve_action.catalog import BoundModel, build_catalog
from evolve_action.harness import Budget, Transcript, Usage, session_cost_usd
from evolve_action.harness._budget import (
    AGENT_CONTEXT_TOKENS,
    SESSION_CONTEXT_TOKENS,
    first_request_usd,
)
from evolve_action.harness._gateway_rules import BYTES_PER_TOKEN, MIN_OUTPUT_TOKENS, worst_case


def sonnet() -> BoundModel:
    (model,) = [m for m in build_catalog({}).models if m.key == "anthropic/claude-sonnet-4-6"]
    return BoundModel(model=model, harness="claude", cli_model=model.id)


def admit(budget: Budget, sessions: int = 1, tier: str = "triggers", skill: str = "a") -> bool:
    return budget.admit(
        plugin="p", skill=skill, tier=tier, model=sonnet(), sessions=sessions, prompt_tokens=100
    )


def test_no_cap_admits_everything_and_still_counts_the_spend() -> None:
    budget = Budget()
    assert admit(budget, sessions=10_000)
    budget.charge("triggers", sonnet(), 2.5)
    assert budget.spent_usd == 2.5 and budget.summary() == ""


def test_the_prior_is_used_until_a_session_is_measured() -> None:
    budget = Budget(limit_usd=10.0)
    pricing = sonnet().model.pricing
    assert pricing is not None
    rate, out = pricing.input_per_mtok / 1e6, pricing.output_per_mtok / 1e6
    # The prompt cache priced (issue 40): a session that finds the fixed context cached reads it
    # on both requests; its own first message (3,000 tokens of context + 100) is written once
    # and read once.
    prior = budget.session_estimate_usd("triggers", sonnet(), 100)
    assert prior == pytest.approx((2 * 20_000 * 0.1 + 3100 * 1.25 + 3100 * 0.1) * rate + 200 * out)
    # Ten sessions of a new prefix: one write of the fixed context, 19 reads.
    ten = budget.estimate_usd("triggers", sonnet(), 100, 10)
    assert ten == pytest.approx(
        (20_000 * 1.25 + 19 * 20_000 * 0.1 + 10 * (3100 * 1.25 + 3100 * 0.1)) * rate + 2000 * out
    )
    assert ten < 10 * 2 * 20_100 * rate  # well below every token at the full input price
    budget.charge("triggers", sonnet(), 0.5)
    budget.charge("triggers", sonnet(), 1.5)
    assert budget.session_estimate_usd("triggers", sonnet(), 100) == 1.0
    assert budget.session_estimate_usd("evals", sonnet(), 100) > 0  # other tier: its own prior


def test_once_a_unit_is_refused_no_later_unit_starts() -> None:
    budget = Budget(limit_usd=3.0)
    budget.charge("triggers", sonnet(), 1.0)  # mean 1.0 a session from now on
    assert admit(budget, sessions=2, skill="a")  # 1 + 2 <= 3
    budget.charge("triggers", sonnet(), 1.0)
    assert not admit(budget, sessions=2, skill="b")  # 2 + 2 > 3
    assert not admit(budget, sessions=0, skill="c")  # stopped: even a free unit waits
    assert [s.skill for s in budget.skipped] == ["b", "c"]
    assert budget.summary().startswith(
        "budget: stopped at $2.00 of $3.00 (--max-cost-usd); 2 units"
    )


def test_a_session_costs_the_larger_of_its_report_and_its_priced_usage() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=0)
    assert session_cost_usd(Transcript(usage=usage, total_cost_usd=0.0), sonnet()) == 3.0
    assert session_cost_usd(Transcript(usage=usage, total_cost_usd=5.0), sonnet()) == 5.0
    assert session_cost_usd(Transcript(), sonnet()) == 0.0


def test_the_gateways_meter_is_the_sessions_cost_when_it_priced_every_request() -> None:
    from evolve_action.harness import Metered

    usage = Usage(input_tokens=1_000_000)  # what the agent reported: $3.00 at list prices
    metered = Metered(requests=3, input_tokens=100, cache_read_input_tokens=900_000, cost_usd=0.27)
    assert session_cost_usd(Transcript(usage=usage, metered=metered), sonnet()) == 0.27
    unpriced = Metered(requests=3, input_tokens=1_000_000, unpriced=1)
    assert session_cost_usd(Transcript(usage=usage, metered=unpriced), sonnet()) == 3.0
    assert session_cost_usd(Transcript(usage=usage, metered=Metered()), sonnet()) == 3.0


def test_a_unit_is_admitted_only_when_the_gateway_can_reserve_its_first_request() -> None:
    """The estimate is what a unit is likely to cost; the model gateway also needs room to reserve
    a request's worst case. A measured session of $0.01 fits $0.07 of room, but the gateway's
    least reservation for a session's first request (its prompt written to the cache, 256 output
    tokens) does not: the unit is refused up front, with a reason that says so."""
    model = sonnet()
    pricing = model.model.pricing
    assert pricing is not None
    floor = first_request_usd(pricing, 100)
    # One definition: what the gateway reserves for a request of that many estimated tokens.
    data = {"model": "claude-sonnet-4-6", "max_tokens": MIN_OUTPUT_TOKENS}
    tokens = AGENT_CONTEXT_TOKENS + SESSION_CONTEXT_TOKENS + 100
    assert floor == pytest.approx(worst_case(data, tokens * BYTES_PER_TOKEN, pricing).usd)
    assert floor == pytest.approx(tokens * 3.75e-6 + 256 * 15e-6)

    budget = Budget(limit_usd=0.08)
    budget.charge("triggers", model, 0.01)
    assert budget.estimate_usd("triggers", model, 100, 1) == pytest.approx(0.01)
    assert not admit(budget, sessions=1)
    assert budget.skip_reason() == (
        f"budget: --max-cost-usd 0.08 leaves 0.07 (spent 0.01), less than the model gateway "
        f"reserves for one request of anthropic/claude-sonnet-4-6 ({floor:.3f}: its prompt "
        f"written to the prompt cache and 256 output tokens); raise the cap to run it"
    )
    spent = Budget(limit_usd=0.08)  # the estimate does not fit either: the usual reason
    spent.charge("triggers", model, 0.074)
    assert not admit(spent, sessions=1)
    assert spent.skip_reason().startswith("budget: --max-cost-usd 0.08 reached (spent 0.07;")
    roomy = Budget(limit_usd=0.01 + floor)
    roomy.charge("triggers", model, 0.01)
    assert admit(roomy, sessions=1)
    assert Budget(limit_usd=0.0).admit(  # a unit without sessions needs no request
        plugin="p", skill="a", tier="triggers", model=model, sessions=0, prompt_tokens=100
    )
