"""The exact stratified test and the sequential rule (report/_stats.py, docs/pr-comment.md)."""

from __future__ import annotations

import random
from math import comb

import pytest

from evolve_action.report import (
    ALPHA,
    Outcome,
    Plan,
    Spending,
    Stratum,
    Sweep,
    alpha_spent,
    decide,
    early_stopped,
    information,
    stratified_test,
    wilson,
)
from evolve_action.report._stats import Interval, _records


def test_hypergeometric_stratum_exact_value() -> None:
    """One query 3/3 → 0/3: P(head gets 0 of the 3 passes among 6 runs) = 1/C(6,3) = 1/20."""
    t = stratified_test([Stratum.counts(3, 3, 0, 3)])
    assert t.p_down == pytest.approx(1 / 20)
    assert t.p_up == pytest.approx(1.0)
    assert (t.cases, t.base_runs, t.head_runs, t.delta) == (1, 3, 3, -1.0)


def test_strata_convolve() -> None:
    """Two queries 3/3 → 1/3: P(T ≤ 2) over two independent hypergeometrics (4 passes of 6)."""
    h = [comb(4, y) * comb(2, 3 - y) / 20 for y in range(4)]  # 0, 4, 12, 4 / 20
    want = sum(h[a] * h[b] for a in range(4) for b in range(4) if a + b <= 2)
    t = stratified_test([Stratum.counts(3, 3, 1, 3)] * 2)
    assert t.p_down == pytest.approx(want)


def test_uninformative_strata_do_not_move_the_test() -> None:
    t = stratified_test([Stratum.counts(3, 3, 3, 3), Stratum.counts(0, 3, 0, 3)])
    assert (t.p_down, t.p_up, t.informative) == (1.0, 1.0, 0)
    assert t.ci is not None and t.ci.low < 0 < t.ci.high  # smoothed: still uncertain


def test_eval_scores_one_run_each_side_is_a_sign_flip_test() -> None:
    """Six cases each 2/4 → 4/4 expectations: every sign flip equally likely, p = 1/64."""
    s = [Stratum(base=(30,), head=(60,), scale=60)] * 6
    t = stratified_test(s)
    assert t.p_up == pytest.approx(1 / 64)
    assert t.delta == 0.5


def test_early_stopped_records_and_detection() -> None:
    sweep = Sweep(planned=3, should_trigger=True)
    assert _records(sweep) == {(2, 2): 1, (0, 2): 1, (1, 3): 2, (2, 3): 2}
    assert early_stopped([(2, 2, True), (1, 3, True)], 3)
    assert not early_stopped([(3, 3, True), (2, 2, True)], 3)  # 3/3 cannot follow early stop
    assert not early_stopped([(1, 3, True), (2, 3, True)], 3)  # nothing stopped short


def test_should_not_trigger_counts_good_runs() -> None:
    assert _records(Sweep(planned=3, should_trigger=False)) == {
        (0, 2): 1,
        (2, 2): 1,
        (1, 3): 2,
        (2, 3): 2,
    }


@pytest.mark.parametrize(
    ("passed", "n", "low", "high"),
    [(0, 10, 0.0, 0.277533), (10, 10, 0.722467, 1.0), (5, 10, 0.236593, 0.763407)],
)
def test_wilson_known_values(passed: int, n: int, low: float, high: float) -> None:
    assert wilson(passed, n) == Interval(low=low, high=high)
    assert wilson(0, 0) is None


def test_spending_functions() -> None:
    for kind in Spending:
        assert alpha_spent(0.0, spending=kind) == 0.0
        assert alpha_spent(1.0, spending=kind) == ALPHA
        xs = [alpha_spent(t / 10, spending=kind) for t in range(11)]
        assert xs == sorted(xs)
    assert alpha_spent(0.3) < 1e-4  # O'Brien–Fleming keeps almost all for the cap
    assert information(3, 3, 10) == pytest.approx(0.3)
    assert information(3, 3, None) == 1.0


def _test(**kw: object):
    base = dict(
        cases=10,
        base_runs=30,
        head_runs=30,
        base_rate=0.9,
        head_rate=0.9,
        delta=0.0,
        ci=Interval(low=-0.05, high=0.05),
        p_down=1.0,
        p_up=1.0,
        informative=1,
    )
    base.update(kw)
    from evolve_action.report import StratifiedTest

    return StratifiedTest(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "final", "want"),
    [
        ({"delta": -0.3, "p_down": 0.001}, True, Outcome.REGRESSION),
        ({"delta": 0.3, "p_up": 0.001}, True, Outcome.IMPROVEMENT),
        ({"delta": -0.01, "p_down": 0.0001}, True, Outcome.NO_CHANGE),  # significant, 1 point
        ({"delta": -0.3, "p_down": 0.03}, True, Outcome.UNDECIDED),
        ({"delta": -0.3, "p_down": 0.03}, False, Outcome.CONTINUE),
        ({"delta": 0.02, "ci": Interval(low=-0.25, high=0.3)}, True, Outcome.UNDECIDED),
        ({"delta": 0.02}, False, Outcome.NO_CHANGE),  # ruled out: stop early
    ],
)
def test_decide(kw: dict[str, object], final: bool, want: Outcome) -> None:
    assert decide(_test(**kw), Plan(), final=final).outcome is want


def test_an_interim_look_spends_only_its_slice() -> None:
    t = _test(delta=-0.3, p_down=0.01)
    # Pocock-type: 0.025 · ln(1 + (e − 1) · 0.2) = 0.0074 by t = 0.2, the other 0.0176 after
    assert decide(t, Plan(cap=10), t_prev=0.0, t=0.2, final=False).outcome is Outcome.CONTINUE
    assert decide(t, Plan(cap=10), t_prev=0.2, t=1.0, final=True).outcome is Outcome.REGRESSION
    late = decide(t, Plan(cap=10), t_prev=0.8, t=1.0, final=True)  # a thin last slice
    assert late.outcome is Outcome.UNDECIDED and late.level < 0.01


@pytest.mark.parametrize("runs", [1, 3])
@pytest.mark.parametrize("cases", [5, 10, 20])
@pytest.mark.parametrize("profile", ["coin", "uniform", "steady"])
def test_aa_grid_false_alarms_stay_under_five_percent(runs: int, cases: int, profile: str) -> None:
    """A/A: base and head drawn at the same per-query rates; 400 simulated PRs per cell, seeded.

    The bound is 5 %; with 400 PRs the binomial standard error at 5 % is 1.1 points, so the
    assertion allows 8 % (a rule that alarmed at 10 % would fail it with near certainty)."""
    rng = random.Random(f"{profile}-{cases}-{runs}")
    alarms = 0
    for _ in range(400):
        strata = []
        for _ in range(cases):
            p = {"coin": 0.5, "uniform": rng.random(), "steady": rng.choice((0.03, 0.97))}[profile]
            xb = sum(rng.random() < p for _ in range(runs))
            xh = sum(rng.random() < p for _ in range(runs))
            strata.append(Stratum.counts(xb, runs, xh, runs))
        out = decide(stratified_test(strata), Plan()).outcome
        alarms += out in (Outcome.REGRESSION, Outcome.IMPROVEMENT)
    assert alarms / 400 <= 0.08


def test_no_change_spends_its_own_level_over_the_looks() -> None:
    """Issue 38: "no change" rules a 20-point change out at this look's slice of
    NO_CHANGE_ALPHA, not at 95 % every time: an early look with a thin slice needs a narrower
    interval than a single look does, and the slices of all looks add up to the level."""
    import itertools

    from evolve_action.report import NO_CHANGE_ALPHA, alpha_spent, equivalent

    test = _test(delta=-0.05, se=0.07)  # 95 % interval −19 to +9 points
    plan = Plan(cap=18)
    assert equivalent(test, plan)  # one look: the 95 % bounds
    assert decide(test, plan).outcome is Outcome.NO_CHANGE
    assert not equivalent(test, plan, t_prev=0.0, t=0.2)  # an early look's thin slice
    assert decide(test, plan, t_prev=0.0, t=0.2, final=False).outcome is Outcome.CONTINUE
    assert equivalent(_test(delta=-0.05, se=0.04), plan, t_prev=0.0, t=0.2)
    cuts = [0.0, 0.1, 0.25, 0.5, 0.8, 1.0]
    slices = [
        alpha_spent(b, NO_CHANGE_ALPHA, plan.spending)
        - alpha_spent(a, NO_CHANGE_ALPHA, plan.spending)
        for a, b in itertools.pairwise(cuts)
    ]
    assert sum(slices) == pytest.approx(NO_CHANGE_ALPHA)
