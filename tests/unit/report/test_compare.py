"""The base → head comparison: evidence read from results files, paired, labelled (report/_compare.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import pytest

from evolve_action.plan import Tier
from evolve_action.report import (
    CaseStatus,
    ComparisonRow,
    Flips,
    Label,
    QueryRuns,
    Reruns,
    SkillEvidence,
    Stratum,
    Sweep,
    compare,
    compare_skill,
    label_counts,
    stratified_test,
    wilson,
)
from evolve_action.report._stats import _records
from evolve_action.results import (
    EntryHeader,
    EvalResult,
    EvalsEntry,
    EvalSnapshot,
    GradedAssertion,
    ModelEntry,
    ResultsFile,
    TriggerResult,
    TriggersEntry,
)

KEY = "anthropic/claude-sonnet-5"


def header(*, model: str = "claude-sonnet-5", harness: str = "claude", executed: bool = True):
    return EntryHeader(
        provider="anthropic",
        model=model,
        display="Claude Sonnet 5",
        harness=harness,
        executed=executed,
    )


def trig(verdicts: Sequence[bool | None], *, runs: int = 3, **kw: object) -> TriggersEntry:
    """Queries q0, q1, … all `should_trigger`; None = no verdict."""
    results = tuple(
        TriggerResult(
            query=f"q{i}",
            should_trigger=True,
            hits=None if v is None else (runs if v else 0),
            runs=None if v is None else runs,
            passed=v,
        )
        for i, v in enumerate(verdicts)
    )
    return TriggersEntry(header=header(**kw), results=results)  # type: ignore[arg-type]


def ev(
    verdicts: Sequence[bool | str | None],
    *,
    baseline: Sequence[bool] | None = None,
    ids: Sequence[str] | None = None,
    **kw: object,
) -> EvalsEntry:
    """Evals e0, e1, …; a str verdict is a runtime error, None no verdict."""
    names = ids if ids is not None else [f"e{i}" for i in range(len(verdicts))]
    results = []
    for i, v in zip(names, verdicts, strict=True):
        if isinstance(v, str):
            results.append(EvalResult(id=i, name=f"name {i}", runtime_error=v))
        else:
            exps = (GradedAssertion(type="llm", text=f"{i} does it", passed=v),)
            results.append(EvalResult(id=i, name=f"name {i}", passed=v, expectations=exps))
    snap = (
        EvalSnapshot(
            results=tuple(EvalResult(id=i, passed=b) for i, b in zip(names, baseline, strict=False))
        )
        if baseline is not None
        else None
    )
    return EvalsEntry(header=header(**kw), results=tuple(results), baseline=snap)  # type: ignore[arg-type]


def file(**models: ModelEntry) -> ResultsFile:
    return ResultsFile(
        plugin="p", skill="s", models={k.replace("__", "/"): v for k, v in models.items()}
    )


def one(base: ResultsFile | None, head: ResultsFile | None) -> ComparisonRow:
    rows = compare_skill(SkillEvidence(plugin="p", skill="s", base=base, head=head))
    assert len(rows) == 1
    return rows[0]


def m(triggers: TriggersEntry | None = None, evals: EvalsEntry | None = None) -> ResultsFile:
    return ResultsFile(
        plugin="p", skill="s", models={KEY: ModelEntry(triggers=triggers, evals=evals)}
    )


# ---------------------------------------------------------------------------------------------
# Rows from results files


def test_trigger_regression_row() -> None:
    base = m(triggers=trig([True] * 10))
    head = m(triggers=trig([False] * 6 + [True] * 4))
    row = one(base, head)
    assert row.label is Label.REGRESSION
    t = row.triggers
    assert t is not None and t.tier is Tier.TRIGGERS
    assert t.flips == Flips(shared=10, down=6, up=0)
    assert (t.base and t.base.passed, t.base and t.base.n) == (10, 10)
    assert t.head is not None and (t.head.passed, t.head.n, t.head.rate) == (4, 10, 0.4)
    assert t.delta == -0.6  # like for like: runs that behaved as expected, 30/30 → 12/30
    assert t.head.ci == wilson(4, 10)
    assert t.test is not None and t.test.p_down < 1e-6
    assert [f.key for f in t.failing] == [f"q{i}" for i in range(6)]
    assert {f.status for f in t.failing} == {CaseStatus.REGRESSED}
    assert t.failing[0].detail == "expected a trigger; hit in 0/3 runs"
    assert row.evals is None


def test_eval_improvement_with_lift() -> None:
    base = m(evals=ev([False] * 8, baseline=[False] * 8))
    head = m(evals=ev([True] * 7 + [False], baseline=[True] + [False] * 7))
    row = one(base, head)
    e = row.evals
    assert e is not None
    assert e.label is Label.IMPROVEMENT  # 7 up of 7, one run each: p = 1/128
    assert e.lift_base == 0.0
    assert e.lift_head == 0.75  # 7/8 − 1/8
    assert [(f.key, f.status) for f in e.failing] == [("e7", CaseStatus.STILL_FAILING)]
    assert e.failing[0].detail == "failed: e7 does it"
    assert e.failing[0].name == "name e7"


def test_errored_cases_are_excluded_never_failures() -> None:
    base = m(evals=ev([True] * 8))
    # six errored at head: they would be a "regression" if counted as failures
    head = m(evals=ev(["usage limit reached"] * 6 + [True, True]))
    e = one(base, head).evals
    assert e is not None
    assert e.head is not None and (e.head.passed, e.head.n, e.head.invalid) == (2, 2, 6)
    assert e.head.rate == 1.0 and e.delta == 0.0
    assert e.flips == Flips(shared=2, down=0, up=0)
    assert e.label is Label.UNDECIDED  # 2 shared cases cannot rule out a 20-point change
    assert e.unpaired == 6
    errored = [f for f in e.failing if f.status is CaseStatus.ERRORED]
    assert len(errored) == 6 and errored[0].detail == "usage limit reached"


def test_trigger_without_verdict_is_invalid() -> None:
    base = m(triggers=trig([True, True, None]))
    head = m(triggers=trig([True, None, True]))
    t = one(base, head).triggers
    assert t is not None and t.flips == Flips(shared=1, down=0, up=0)
    assert t.base is not None and t.base.invalid == 1
    assert [f.status for f in t.failing] == [CaseStatus.ERRORED]


def test_count_only_side_has_no_verdicts() -> None:
    base = m(triggers=trig([True] * 8))
    head = m(triggers=trig([True] * 8, executed=False))
    t = one(base, head).triggers
    assert t is not None and t.label is Label.REMOVED
    assert t.head is not None and t.head.n == 0 and t.head.invalid == 8


@pytest.mark.parametrize(
    ("kw", "why"),
    [({"harness": "codex"}, "harness claude → codex"), ({"model": "claude-opus-5"}, "model")],
)
def test_different_harness_or_model_is_not_comparable(kw: dict[str, str], why: str) -> None:
    base = m(triggers=trig([True] * 10))
    head = m(triggers=trig([False] * 10, **kw))
    row = one(base, head)
    assert row.label is Label.NOT_COMPARABLE
    assert row.triggers is not None and row.triggers.flips is None
    assert why in row.triggers.reason
    assert row.triggers.delta == -1.0  # the figures are still shown


def test_unrecorded_harness_does_not_block_comparison() -> None:
    base = m(triggers=trig([True] * 6, harness=""))
    head = m(triggers=trig([True] * 6))
    assert one(base, head).label is Label.NO_CHANGE


def test_new_and_removed_models() -> None:
    base = ResultsFile(
        plugin="p",
        skill="s",
        models={"anthropic/old": ModelEntry(triggers=trig([True] * 3))},
    )
    head = ResultsFile(
        plugin="p",
        skill="s",
        models={"anthropic/new": ModelEntry(triggers=trig([True] * 3))},
    )
    rows = compare_skill(SkillEvidence(plugin="p", skill="s", base=base, head=head))
    assert [(r.model_key, r.label) for r in rows] == [
        ("anthropic/new", Label.NEW),
        ("anthropic/old", Label.REMOVED),
    ]
    assert rows[0].triggers is not None and rows[0].triggers.label is Label.NEW
    assert rows[1].triggers is not None and rows[1].triggers.failing == ()


def test_new_skill_without_base_file() -> None:
    row = one(None, m(triggers=trig([True, False]), evals=ev([True])))
    assert row.label is Label.NEW
    assert row.triggers is not None and row.triggers.label is Label.NEW
    assert row.triggers.failing[0].status is CaseStatus.NO_BASE


def test_removed_skill_without_head_file() -> None:
    assert one(m(evals=ev([True])), None).label is Label.REMOVED


def test_new_tier_on_an_existing_model() -> None:
    base = m(triggers=trig([True] * 6))
    head = m(triggers=trig([True] * 6), evals=ev([True, False]))
    row = one(base, head)
    assert row.triggers is not None and row.triggers.label is Label.NO_CHANGE
    assert row.evals is not None and row.evals.label is Label.NEW
    assert row.label is Label.NO_CHANGE  # no change outranks new


def test_row_label_takes_the_most_severe_tier() -> None:
    base = m(triggers=trig([False] * 6), evals=ev([True] * 6))
    head = m(triggers=trig([True] * 6), evals=ev([False] * 6))
    row = one(base, head)
    assert row.triggers is not None and row.triggers.label is Label.IMPROVEMENT
    assert row.evals is not None and row.evals.label is Label.REGRESSION
    assert row.label is Label.REGRESSION


def test_changed_trigger_expectation_is_not_shared() -> None:
    base = m(triggers=trig([True] * 6))
    flipped = trig([True] * 6)
    results = (
        TriggerResult(query="q0", should_trigger=False, hits=0, runs=3, passed=True),
        *flipped.results[1:],
    )
    head = m(triggers=TriggersEntry(header=flipped.header, results=results))
    t = one(base, head).triggers
    assert t is not None and t.flips is not None and t.flips.shared == 5 and t.unpaired == 1


def test_cases_are_paired_by_id_not_position() -> None:
    base = m(evals=ev([True] * 6, ids=["a", "b", "c", "d", "e", "f"]))
    head = m(evals=ev([True] * 6, ids=["f", "e", "d", "c", "b", "a"]))
    e = one(base, head).evals
    assert e is not None and e.flips == Flips(shared=6, down=0, up=0)
    assert e.delta == 0.0
    assert e.label is Label.UNDECIDED  # one run of 6 cases cannot rule out a 20-point change


def test_compare_sorts_and_filters_models() -> None:
    ev_b = SkillEvidence(plugin="p", skill="b", base=m(triggers=trig([True])), head=None)
    ev_a = SkillEvidence(plugin="p", skill="a", base=None, head=m(triggers=trig([True])))
    rows = compare([ev_b, ev_a])
    assert [(r.skill, r.label) for r in rows] == [("a", Label.NEW), ("b", Label.REMOVED)]
    assert compare([ev_b, ev_a], models={"other/model"}) == ()
    assert label_counts(rows) == {Label.NEW: 1, Label.REMOVED: 1}


def test_compare_is_deterministic() -> None:
    evs = [
        SkillEvidence(
            plugin="p",
            skill="s",
            base=m(triggers=trig([True, False])),
            head=m(triggers=trig([False, True])),
        )
    ]
    assert compare(evs) == compare(evs)


# ---------------------------------------------------------------------------------------------
# The named cases of issue 22: 13 queries, base 12/13 passing at 3/3 runs


BASE13 = [3] * 12 + [0]


def hits13(hits: Sequence[int], *, runs: int = 3, ran_at: str = "") -> TriggersEntry:
    results = tuple(
        TriggerResult(query=f"q{i}", should_trigger=True, hits=h, runs=runs, passed=2 * h >= runs)
        for i, h in enumerate(hits)
    )
    h = EntryHeader(
        provider="anthropic", model="claude-sonnet-5", display="S", executed=True, ran_at=ran_at
    )
    return TriggersEntry(header=h, results=results)


def test_four_queries_falling_3_of_3_to_0_none_rising_is_a_regression() -> None:
    head = [0, 0, 0, 0] + [3] * 8 + [0]
    t = one(m(triggers=hits13(BASE13)), m(triggers=hits13(head))).triggers
    assert t is not None and t.label is Label.REGRESSION
    assert t.flips == Flips(shared=13, down=4, up=0)
    assert t.test is not None and t.test.p_down == pytest.approx((1 / 20) ** 4, rel=1e-6)


def test_seven_falling_one_rising_is_a_regression() -> None:
    head = [0] * 7 + [3] * 5 + [3]
    t = one(m(triggers=hits13(BASE13)), m(triggers=hits13(head))).triggers
    assert t is not None and t.label is Label.REGRESSION
    assert t.flips == Flips(shared=13, down=7, up=1)
    assert [f.fixed for f in t.flipped] == [False] * 7 + [True]
    assert t.flipped[-1].detail == "hit in 0/3 → 3/3 runs (expected a trigger)"


def test_unchanged_description_is_no_change() -> None:
    row = one(m(triggers=hits13(BASE13, ran_at="a")), m(triggers=hits13(BASE13, ran_at="b")))
    assert row.label is Label.NO_CHANGE
    assert row.triggers is not None and row.triggers.delta == 0.0


def test_a_tier_the_pr_did_not_rerun_has_no_label() -> None:
    same = hits13(BASE13, ran_at="2026-11-20T10:00:00Z")
    t = one(m(triggers=same), m(triggers=same)).triggers
    assert t is not None and t.label is Label.NOT_RERUN and t.level is None


def test_early_stopped_sweeps_are_tested_as_such() -> None:
    """2/2 → 0/2 under early stop carries one bit per query (p = 1/2 each), not 1/6."""
    base = hits13([2] * 12 + [0], runs=2)
    head = hits13([0] * 6 + [2] * 6 + [0], runs=2)
    base = TriggersEntry(
        header=msgspec.structs.replace(base.header, runs_per_query=3), results=base.results
    )
    head = TriggersEntry(
        header=msgspec.structs.replace(head.header, runs_per_query=3), results=head.results
    )
    t = one(m(triggers=base), m(triggers=head)).triggers
    assert t is not None and t.test is not None
    assert t.test.p_down == pytest.approx(0.5**6, rel=1e-6)
    assert t.label is Label.REGRESSION  # 1/64 ≤ 0.025; five such queries would be undecided


# ---------------------------------------------------------------------------------------------
# Base unknown, authoring errors, runs added by power on demand


def test_an_unreadable_base_is_base_unknown_never_new() -> None:
    head = m(triggers=hits13(BASE13))
    row = one(None, head)
    assert row.label is Label.NEW
    rows = compare_skill(
        SkillEvidence(plugin="p", skill="s", base=None, head=head, base_known=False)
    )
    assert [r.label for r in rows] == [Label.BASE_UNKNOWN]
    assert rows[0].triggers is not None and rows[0].triggers.label is Label.BASE_UNKNOWN
    assert "could not be read" in rows[0].triggers.reason


def test_a_refused_definition_is_an_authoring_error_not_a_failure() -> None:
    why = "error: evals/s/triggers.json:3: bad — authoring error: p/s's triggers did not run"
    base = m(triggers=hits13(BASE13, ran_at="a"))
    rows = compare_skill(
        SkillEvidence(plugin="p", skill="s", base=base, head=base, refused={Tier.TRIGGERS: why})
    )
    assert [r.label for r in rows] == [Label.AUTHORING_ERROR]
    assert rows[0].triggers is not None and rows[0].triggers.reason == why
    assert rows[0].triggers.test is None
    # Nothing stored on either side: one row still says so.
    rows = compare_skill(
        SkillEvidence(plugin="p", skill="s", base=None, head=None, refused={Tier.TRIGGERS: why})
    )
    assert [(r.model_key, r.label) for r in rows] == [("", Label.AUTHORING_ERROR)]


def qr(hits: Sequence[int], runs: int) -> tuple[QueryRuns, ...]:
    return tuple(
        QueryRuns(query=f"q{i}", should_trigger=True, hits=h, runs=runs) for i, h in enumerate(hits)
    )


def test_fresh_base_runs_replace_the_stored_base_and_extra_head_runs_extend_it() -> None:
    stored_base = m(triggers=hits13([0] * 13, ran_at="a"))  # an old, very different base
    head = m(triggers=hits13(BASE13, ran_at="b"))
    reruns = Reruns(base=qr(BASE13, 3), base_fresh=True, head=qr([3] * 13, 3))
    rows = compare_skill(
        SkillEvidence(plugin="p", skill="s", base=stored_base, head=head, reruns={KEY: reruns})
    )
    t = rows[0].triggers
    assert t is not None and t.test is not None
    assert t.base_reruns == 39 and t.extra_head_runs == 39
    assert t.test.base_runs == 39 and t.test.head_runs == 78
    assert t.label is not Label.IMPROVEMENT  # the stored 0/3s are not what was tested
    assert t.base_score == pytest.approx(12 / 13, abs=1e-6)
    # Without base_fresh the paired runs extend the stored base (3 stored + 3 fresh per query).
    paired = Reruns(base=qr(BASE13, 3), head=qr([3] * 13, 3))
    rows = compare_skill(
        SkillEvidence(plugin="p", skill="s", base=stored_base, head=head, reruns={KEY: paired})
    )
    t = rows[0].triggers
    assert t is not None and t.test is not None and t.test.base_runs == 78
    assert t.base_score == pytest.approx(6 / 13, abs=1e-6)


def test_a_missing_base_rerun_is_compared_not_new() -> None:
    head = m(triggers=hits13([0] * 6 + [3] * 7, ran_at="b"))
    reruns = Reruns(base=qr([3] * 13, 3))
    rows = compare_skill(
        SkillEvidence(plugin="p", skill="s", base=None, head=head, reruns={KEY: reruns})
    )
    assert [r.label for r in rows] == [Label.REGRESSION]


def test_a_non_final_look_continues_as_undecided_with_its_slice() -> None:
    base = m(triggers=hits13([3] * 10, ran_at="a"))
    head = m(triggers=hits13([3] * 8 + [2, 1], ran_at="b"))
    look = Reruns(t_prev=0.0, t=0.5, final=False)
    rows = compare_skill(
        SkillEvidence(plugin="p", skill="s", base=base, head=head, reruns={KEY: look})
    )
    t = rows[0].triggers
    assert t is not None and t.label is Label.UNDECIDED
    # Pocock-type spending: ln(1 + (e − 1)·t) of the 0.025 by t = 0.5 (62 %)
    assert t.level == pytest.approx(0.025 * math.log(1 + (math.e - 1) * 0.5))


def test_an_early_stopped_sweep_with_extra_runs_stays_exact() -> None:
    """Sweep + fixed extras: the null distribution is the convolution (no false exactness)."""
    alone = Stratum(
        base=(1, 1),
        head=(0, 0),
        base_sweep=Sweep(planned=3, should_trigger=True),
        head_sweep=Sweep(planned=3, should_trigger=True),
    )
    more = Stratum(
        base=(1, 1, 1, 1),
        head=(0, 0, 0, 0),
        base_sweep=Sweep(planned=3, should_trigger=True, extra=2),
        head_sweep=Sweep(planned=3, should_trigger=True, extra=2),
    )
    p1 = stratified_test([alone]).p_down
    p2 = stratified_test([more]).p_down
    assert p1 == pytest.approx(0.5, rel=1e-9)
    assert p2 < p1  # two more runs each side that agree are more evidence
    # every order of the sweep times the 2**2 orders of the extras
    with_extra = _records(Sweep(planned=3, should_trigger=True, extra=2))
    assert (
        sum(with_extra.values())
        == sum(_records(Sweep(planned=3, should_trigger=True)).values()) * 4
    )


def test_a_pr_that_only_adds_a_query_reruns_nothing_shared() -> None:
    """The head carries every base query over unchanged and adds one: nothing shared was re-run."""
    base = hits13(BASE13, ran_at="a")
    more = TriggerResult(query="new one", should_trigger=True, hits=3, runs=3, passed=True)
    head = TriggersEntry(
        header=msgspec.structs.replace(base.header, ran_at="b"), results=(*base.results, more)
    )
    t = one(m(triggers=base), m(triggers=head)).triggers
    assert t is not None and t.label is Label.NOT_RERUN
    changed = (msgspec.structs.replace(base.results[0], hits=2), *base.results[1:], more)
    t = one(m(triggers=base), m(triggers=msgspec.structs.replace(head, results=changed))).triggers
    assert t is not None and t.label is not Label.NOT_RERUN


def test_stale_evidence_not_run_is_not_evaluated_never_not_rerun_nor_no_change() -> None:
    why = "2 stale or missing queries not run: no credentials were given"
    base = m(triggers=hits13(BASE13, ran_at="a"))
    # The head carries the base's evidence (the PR re-ran nothing): `not re-run` without the
    # job's word, `not evaluated` with it.
    (carried,) = compare_skill(SkillEvidence(plugin="p", skill="s", base=base, head=base))
    assert carried.triggers is not None and carried.triggers.label is Label.NOT_RERUN
    (row,) = compare_skill(
        SkillEvidence(plugin="p", skill="s", base=base, head=base, unevaluated={Tier.TRIGGERS: why})
    )
    assert row.label is Label.NOT_EVALUATED
    assert row.triggers is not None and row.triggers.label is Label.NOT_EVALUATED
    assert row.triggers.reason == why and row.triggers.head_score is not None
    # Nothing stored on either side (a new skill, no credentials): still one row that says so.
    (new,) = compare_skill(
        SkillEvidence(plugin="p", skill="s", base=None, head=None, unevaluated={Tier.EVALS: why})
    )
    assert new.label is Label.NOT_EVALUATED and new.model_key == "" and new.triggers is None
    # An authoring error outranks it; a regression elsewhere in the row outranks both.
    (both,) = compare_skill(
        SkillEvidence(
            plugin="p",
            skill="s",
            base=base,
            head=base,
            refused={Tier.TRIGGERS: "bad"},
            unevaluated={Tier.TRIGGERS: why},
        )
    )
    assert both.label is Label.AUTHORING_ERROR
