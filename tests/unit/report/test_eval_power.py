"""Evals decide with power on demand's runs: one eval run scores pass (1) or fail (0), the base
is re-run beside the head, each selective round is a block, and the label is the triggers' rule
(`compare_skill` fed with `SkillEvidence.eval_reruns`; docs/pr-comment.md, "Evals")."""

from __future__ import annotations

from tests.helpers import comment_examples as ex

from evolve_action.report import (
    Label,
    Plan,
    QueryRuns,
    Reruns,
    SkillEvidence,
    compare_skill,
    render_pr_comment,
)

BASE = ex.evals([(2, 2), (2, 2), (2, 2)], ran_at="2026-11-20T10:00:00Z")


def evidence(head: list[tuple[int, int]], rr: Reruns | None) -> SkillEvidence:
    return SkillEvidence(
        plugin="data-tools",
        skill="csv-report",
        base=ex.results(None, BASE),
        head=ex.results(None, ex.evals(head, ran_at="2026-11-21T10:00:00Z")),
        eval_reruns={ex.KEY: rr} if rr is not None else {},
    )


def runs(
    passed: list[int], n: int, rounds: list[list[tuple[int, int]]] | None = None
) -> tuple[QueryRuns, ...]:
    """Eval cases e1, e2, … with `passed` of `n` runs in the first block each, and per round
    (pass, runs) blocks."""
    return tuple(
        QueryRuns(
            query=f"e{i}",
            should_trigger=True,
            hits=p + sum(h for h, _ in (rounds or [[]] * len(passed))[i - 1]),
            runs=n + sum(r for _, r in (rounds or [[]] * len(passed))[i - 1]),
            rounds=tuple((rounds or [[]] * len(passed))[i - 1]),
        )
        for i, p in enumerate(passed, start=1)
    )


def evals_tier(ev: SkillEvidence, plan: Plan | None = None):  # type: ignore[no-untyped-def]
    (row,) = compare_skill(ev, plan=plan)
    assert row.evals is not None
    return row.evals


def test_two_of_three_cases_failing_on_every_run_is_undecided_at_one_run_a_side() -> None:
    tier = evals_tier(evidence([(0, 2), (0, 2), (2, 2)], None))
    assert tier.label is Label.UNDECIDED  # 67 % of the "100 % → 33 % · undecided"
    assert tier.test is not None and tier.test.head_runs == 3


def test_with_paired_reruns_two_broken_cases_are_a_regression() -> None:
    rr = Reruns(
        base=runs([1, 1, 1], 1, [[(3, 3)], [(3, 3)], [(0, 0)]]),
        base_fresh=True,
        head=runs([0, 0, 0], 0, [[(0, 3)], [(0, 3)], [(0, 0)]]),
        t_prev=0.0555,
        t=0.222,
        final=False,
    )
    tier = evals_tier(evidence([(0, 2), (0, 2), (2, 2)], rr), Plan(cap=18))
    assert tier.label is Label.REGRESSION, tier.reason
    assert tier.test is not None and tier.test.p_down < 0.001
    assert tier.base_reruns == 9 and tier.extra_head_runs == 6
    body = render_pr_comment(
        compare_skill(evidence([(0, 2), (0, 2), (2, 2)], rr), plan=Plan(cap=18)),
        ex.facts(),
    )
    assert (
        "100 % → 33 % · **−67 pts** · 🔴 regression · 3 runs a side" in body
    )  # per case, on average
    assert "passed in 4/4 runs → passed in 0/4 runs" in body


def test_an_unchanged_skill_with_enough_runs_is_a_decided_no_change() -> None:
    rr = Reruns(
        base=runs([4, 4, 4], 4),
        base_fresh=True,
        head=runs([3, 3, 3], 3),
        t_prev=0.0555,
        t=0.222,
        final=False,
    )
    tier = evals_tier(evidence([(2, 2), (2, 2), (2, 2)], rr), Plan(cap=18))
    assert tier.label is Label.NO_CHANGE, tier.reason  # "100 % → 100 %" with 4 runs a side
    body = render_pr_comment(
        compare_skill(evidence([(2, 2), (2, 2), (2, 2)], rr), plan=Plan(cap=18)),
        ex.facts(),
    )
    assert "100 % → 100 % · ±0 pts · ✅ no change · 4 runs a side" in body


def test_an_errored_rerun_is_no_outcome_never_a_fail() -> None:
    """Runs without an outcome are not in `QueryRuns` at all: a case with none stays as stored."""
    rr = Reruns(base=runs([1, 1], 1), base_fresh=True, head=(), final=True)
    tier = evals_tier(evidence([(2, 2), (2, 2), (2, 2)], rr))
    assert tier.test is not None and tier.test.cases == 2  # e3 has no base run: unpaired
    assert tier.label is not Label.REGRESSION
