"""Selective rounds keep the test exact (report/_stats.py `selected`, `Stratum.rounds`).

Exhaustive: every outcome of a small design under "no change" (each run passes with probability
p on both sides), weighed by its probability, the round run or not as the rule says; the chance
that the final p-value is at most a level never exceeds that level. A rule that reads the head's
runs (rather than the pooled runs) fails the same check, so the check can fail.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import pytest

from evolve_action.report import (
    Outcome,
    Plan,
    Stratum,
    decide,
    render_pr_comment,
    runs_to_decide,
    selected,
    spot_check,
    stratified_test,
)

Block = tuple[int, int, int, int]
"""(base passes, base runs, head passes, head runs)."""


def _ones(k: int, n: int) -> tuple[int, ...]:
    return (1,) * k + (0,) * (n - k)


def _outcomes(p: float, n: int) -> list[tuple[float, int]]:
    return [(math.comb(n, k) * p**k * (1 - p) ** (n - k), k) for k in range(n + 1)]


def _excess(p: float, first: int, more: int, cases: int, rule: Callable[[Block], bool]) -> float:
    """max over levels of P(p_down ≤ level) − level, the round's runs added where `rule` says."""
    per_case: list[list[tuple[float, Stratum]]] = []
    for _ in range(cases):
        opts: list[tuple[float, Stratum]] = []
        for (wb, b), (wh, h) in itertools.product(_outcomes(p, first), repeat=2):
            head0 = (_ones(b, first), _ones(h, first))
            if not rule((b, first, h, first)):
                opts.append((wb * wh, Stratum(base=head0[0], head=head0[1])))
                continue
            for (vb, b1), (vh, h1) in itertools.product(_outcomes(p, more), repeat=2):
                block = ((_ones(b1, more), _ones(h1, more)),)
                opts.append(
                    (wb * wh * vb * vh, Stratum(base=head0[0], head=head0[1], rounds=block))
                )
        per_case.append(opts)
    outs: list[tuple[float, float]] = []
    for combo in itertools.product(*per_case):
        w = math.prod(x for x, _ in combo)
        outs.append((w, stratified_test([s for _, s in combo]).p_down))
    return max(sum(w for w, q in outs if q <= level) - level for level in {q for _, q in outs})


def _pooled_rule(block: Block) -> bool:
    b, nb, h, nh = block
    return selected("q", _ones(b + h, nb + nh), 1, share=0.0)


def _head_rule(block: Block) -> bool:
    return block[2] >= block[0]  # more runs unless the head looks worse: reads the labels


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8, 0.95])
@pytest.mark.parametrize(("first", "more", "cases"), [(2, 2, 1), (3, 3, 1), (1, 3, 1), (2, 2, 2)])
def test_rounds_chosen_from_pooled_runs_keep_the_test_exact(
    p: float, first: int, more: int, cases: int
) -> None:
    assert _excess(p, first, more, cases, _pooled_rule) <= 1e-9


def test_a_rule_that_reads_the_heads_runs_breaks_it() -> None:
    assert _excess(0.5, 1, 3, 1, _head_rule) > 0.005


def test_the_spot_check_depends_on_the_key_and_round_only() -> None:
    picks = [spot_check(f"query {i}", r) for i in range(500) for r in (1, 2)]
    assert 0.06 < sum(picks) / len(picks) < 0.14  # SPOT_SHARE
    assert picks == [spot_check(f"query {i}", r) for i in range(500) for r in (1, 2)]
    assert selected("q", (1, 1, 0), 1, share=0.0)  # pooled runs differ: always
    assert not selected("q", (1, 1, 1), 1, share=0.0)
    assert selected("q", (0, 0), 1, share=1.0)


def test_a_round_is_a_block_of_its_own() -> None:
    # First block 3/3 → 3/3 (no information); a round 3/3 → 0/3: the rounds carry the evidence,
    # and the rates use every run.
    s = Stratum(base=(1, 1, 1), head=(1, 1, 1), rounds=(((1, 1, 1), (0, 0, 0)),))
    t = stratified_test([s] * 4)
    assert t.base_runs == 24 and t.head_runs == 24
    assert t.head_rate == 0.5 and t.base_rate == 1.0
    assert t.informative == 4
    assert t.p_down == pytest.approx(0.05**4, rel=1e-6)  # 1/C(6,3) per case


def test_an_undecided_comparison_says_about_how_many_more_runs_would_decide_it() -> None:
    # 5 cases, 3 runs a side, a 20-point estimate with a wide interval: undecided at the cap.
    strata = [Stratum.counts(3, 3, 2, 3)] * 3 + [Stratum.counts(2, 3, 2, 3)] * 2
    t = stratified_test(strata)
    assert decide(t, Plan()).outcome is Outcome.UNDECIDED
    more = runs_to_decide(t, Plan())
    assert more is not None and more >= 1
    # With that many more runs at the same rates the half-width has shrunk under |Δ|.
    n = 3 + more
    assert t.ci is not None and t.delta is not None
    half = (t.ci.high - t.ci.low) / 2
    assert half * math.sqrt(3 / n) <= abs(t.delta) + 1e-9
    # Decided comparisons carry no estimate in the comment (`more_runs` only when undecided).
    decided = stratified_test([Stratum.counts(3, 3, 3, 3)] * 10)
    assert decide(decided, Plan()).outcome is Outcome.NO_CHANGE


def test_the_comment_says_how_many_more_runs_an_undecided_verdict_needs() -> None:
    from tests.helpers import comment_examples as ex

    rows = ex.undecided()
    tier = rows[0].triggers
    assert tier is not None and tier.more_runs is not None
    body = render_pr_comment(rows, ex.facts(), revision=ex.REVISION)
    assert f"about {tier.more_runs} more runs per query per side would decide it" in body
    decided = render_pr_comment(ex.regression(), ex.facts(), revision=ex.REVISION)
    assert "more runs per query per side" not in decided
