"""The base → head comparison and its noise rule (compare.py, docs/pr-comment.md)."""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

import pytest

from evolve_action.plan import Tier
from evolve_action.report import (
    ALPHA,
    MIN_SHARED,
    CaseStatus,
    ComparisonRow,
    Flips,
    Interval,
    Label,
    SkillEvidence,
    classify,
    compare,
    compare_skill,
    label_counts,
    sign_test,
    wilson,
)
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
# Statistics with hand-computed values


@pytest.mark.parametrize(
    ("k", "n", "want"),
    [
        (0, 0, 1.0),
        (0, 5, 1.0),
        (5, 5, 1 / 32),  # all five the same way
        (6, 6, 1 / 64),
        (5, 6, 7 / 64),  # C(6,5) + C(6,6) = 7
        (7, 8, 9 / 256),  # 8 + 1
        (8, 10, 56 / 1024),  # 45 + 10 + 1
        (3, 4, 5 / 16),
        (1, 1, 0.5),
        (9, 8, 0.0),
    ],
)
def test_sign_test_exact_values(k: int, n: int, want: float) -> None:
    assert sign_test(k, n) == pytest.approx(want, abs=1e-15)


def test_sign_test_large_n_is_exact_and_finite() -> None:
    n = 2000
    p = sign_test(1100, n)
    assert 0 < p < 1e-5
    assert p == pytest.approx(sum(comb(n, i) for i in range(1100, n + 1)) / 2**n)


@pytest.mark.parametrize(
    ("passed", "n", "low", "high"),
    [
        (8, 10, 0.490162, 0.943318),
        (0, 10, 0.0, 0.277532),
        (10, 10, 0.722468, 1.0),
        (1, 2, 0.094531, 0.905469),
        (30, 40, 0.598060, 0.858129),
    ],
)
def test_wilson_known_values(passed: int, n: int, low: float, high: float) -> None:
    ci = wilson(passed, n)
    assert ci == Interval(low=pytest.approx(low, abs=2e-6), high=pytest.approx(high, abs=2e-6))


def test_wilson_empty_is_none() -> None:
    assert wilson(0, 0) is None
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_min_shared_follows_alpha() -> None:
    assert 0.5**MIN_SHARED <= ALPHA < 0.5 ** (MIN_SHARED - 1)
    assert MIN_SHARED == 6


# ---------------------------------------------------------------------------------------------
# The rule, table-driven (shared, down, up) → label


@pytest.mark.parametrize(
    ("shared", "down", "up", "label", "more"),
    [
        # 6 of 6 flip down: p = 1/64 = 0.0156 ≤ 0.025, net 6 ≥ 10 % of 6
        (6, 6, 0, Label.REGRESSION, None),
        (6, 0, 6, Label.IMPROVEMENT, None),
        # 5 of 5: p = 1/32 = 0.031 > 0.025 and only 5 shared → can never decide
        (5, 5, 0, Label.UNDERPOWERED, 1),
        (3, 0, 0, Label.UNDERPOWERED, 3),
        (0, 0, 0, Label.UNDERPOWERED, 6),
        # 40 shared, 7 down 1 up: p = 9/256 = 0.035 > 0.025 → within noise
        (40, 7, 1, Label.WITHIN_NOISE, None),
        # 40 shared, 8 down 0 up: p = 1/256, net 8 ≥ 4 → regression
        (40, 8, 0, Label.REGRESSION, None),
        # 40 shared, 6 down 0 up: p = 1/64 ≤ 0.025, net 6 ≥ 4 → regression
        (40, 6, 0, Label.REGRESSION, None),
        # 40 shared, 4 down: net 4 = 10 % is material, but 4 flips can never reach p ≤ 0.025
        (40, 4, 0, Label.UNDERPOWERED, 20),
        # 40 shared, 3 down: net 3 < 4 is not material → within noise
        (40, 3, 0, Label.WITHIN_NOISE, None),
        (40, 0, 0, Label.WITHIN_NOISE, None),
        (40, 5, 5, Label.WITHIN_NOISE, None),
        # 10 shared, 1 down: net 1 = 10 % is material, 1 flip → underpowered; 6 flips at 1/10 each
        (10, 1, 0, Label.UNDERPOWERED, 50),
        # significant and material only together: 300 shared, 40 down 16 up →
        # p = P(X ≥ 40 | 56) ≈ 0.0008 but net 24 < 30 (10 %) → within noise
        (300, 40, 16, Label.WITHIN_NOISE, None),
        (300, 46, 10, Label.REGRESSION, None),
    ],
)
def test_classify(shared: int, down: int, up: int, label: Label, more: int | None) -> None:
    v = classify(Flips(shared=shared, down=down, up=up))
    assert v.label is label, v.reason
    assert v.more_cases == more
    assert v.reason


def test_classify_materiality_blocks_a_significant_but_small_shift() -> None:
    f = Flips(shared=300, down=40, up=16)
    assert f.p_regression <= ALPHA
    assert classify(f).label is Label.WITHIN_NOISE


def test_flips_properties() -> None:
    f = Flips(shared=20, down=7, up=1)
    assert f.discordant == 8
    assert f.p_regression == pytest.approx(9 / 256)
    assert f.p_improvement == pytest.approx(255 / 256)
    assert f.net_share == pytest.approx(-0.3)


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
    assert t.delta == -0.6
    assert t.head.ci == wilson(4, 10)
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
    assert e.label is Label.IMPROVEMENT  # 7 up of 7: p = 1/128
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
    assert e.label is Label.UNDERPOWERED and e.more_cases == 4
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
    assert one(base, head).label is Label.WITHIN_NOISE


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
    assert row.triggers is not None and row.triggers.label is Label.WITHIN_NOISE
    assert row.evals is not None and row.evals.label is Label.NEW
    assert row.label is Label.WITHIN_NOISE  # within noise outranks new


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
    assert e.label is Label.WITHIN_NOISE


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
