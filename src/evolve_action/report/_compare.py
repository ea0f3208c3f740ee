"""Base → head comparison of a pull request's touched skills, and the label of each move (pure).

Owns: reading the evidence out of two schema-5 results files (the PR base's and the head's): per
case, its verdict and the scores of its runs (triggers: runs that behaved as expected out of
`runs`; evals: runs that passed, every assertion and expectation met); the per-tier figures of each skill × model
(like-for-like rates over the shared cases, the change, case pass rates, flipped cases, lift vs
the without-skill baseline) and the label: `regression`, `authoring error`, `not evaluated`,
`improvement`, `not comparable`, `undecided`, `base unknown`, `no change`, `new`, `removed`, `not re-run`. Runs the
job added for power on demand (`Reruns`: fresh paired runs of the base's version, extra head runs;
for evals `SkillEvidence.eval_reruns`, one 0/1 outcome per eval run) join the stored evidence here, so one function labels every look of the sequential rule; runs of
selective rounds (`QueryRuns.rounds`) become blocks of their own (`Stratum.rounds`), and an
`undecided` last look carries an estimate of the runs a decision needs. The test and the rule are `_stats`
(`stratified_test`, `decide`); they are written down in `docs/pr-comment.md` ("The rule");
`bench/noise.py` measures them. The values it reads and answers are `_rows`; one side of a tier
(its valid cases, rate, failing and flipped cases) is read by `_evidence`; this module pairs the
sides, tests and labels each tier, and composes the rows.

Guarantees: a pure function of its inputs (no I/O, no clock, no randomness); rows are sorted by
(plugin, skill, model key) and case lists keep the head's result order, so equal evidence gives
equal rows. Errored and verdict-less cases are invalid: they are excluded from rates, n and the
paired test, and counted separately (never as failures). Untrusted text (queries, eval names,
runtime errors, assertion texts) is carried as is: sanitising it is the renderer's job
(`pr_comment`).

Never does: I/O, rendering, reading git or the environment, starting runs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import msgspec

from evolve_action.encoding import round6
from evolve_action.plan import Tier
from evolve_action.report._evidence import (
    Side,
    eval_failing,
    eval_powered,
    eval_side,
    extended,
    flipped_cases,
    fresh_side,
    incomparable,
    lift,
    pad,
    rate_of,
    shared_keys,
    trigger_failing,
    trigger_side,
)
from evolve_action.report._render import EM
from evolve_action.report._rows import (
    ComparisonRow,
    FailingCase,
    FlippedCase,
    Flips,
    Label,
    Rate,
    Reruns,
    SkillEvidence,
    TierComparison,
)
from evolve_action.report._stats import (
    Outcome,
    Plan,
    StratifiedTest,
    Stratum,
    decide,
    runs_to_decide,
    stratified_test,
)
from evolve_action.results import (
    EntryHeader,
    EvalResult,
    EvalsEntry,
    ModelEntry,
    TriggerResult,
    TriggersEntry,
)

__all__ = ["compare", "compare_skill", "label_counts"]


_PRIORITY = tuple(Label)
"""Row label = the first of the tiers' labels in this order (declaration order of `Label`)."""

_OUTCOME_LABEL = {
    Outcome.REGRESSION: Label.REGRESSION,
    Outcome.IMPROVEMENT: Label.IMPROVEMENT,
    Outcome.NO_CHANGE: Label.NO_CHANGE,
    Outcome.UNDECIDED: Label.UNDECIDED,
    Outcome.CONTINUE: Label.UNDECIDED,
}


def _pts(d: float) -> str:
    v = round(d * 100)
    return f"{'+' if v > 0 else '−' if v < 0 else '±'}{abs(v)} pts"


def _reason(label: Label, test: StratifiedTest, level: float, plan: Plan, unit: str) -> str:
    assert test.delta is not None and test.ci is not None
    p = test.p_down if test.delta < 0 else test.p_up
    what = (
        f"{_pts(test.delta)} over {test.cases} shared {unit} "
        f"({test.base_runs} → {test.head_runs} runs; 95 % CI {_pts(test.ci.low)} to "
        f"{_pts(test.ci.high)}); exact one-sided p = {p:.2g}"
    )
    material = f"{plan.material * 100:.0f} pts"
    if label is Label.REGRESSION or label is Label.IMPROVEMENT:
        return f"{what} ≤ {level:g} and the change is at least {material}"
    if label is Label.NO_CHANGE:
        if p <= level:
            return f"{what}: significant, but under {material}"
        return (
            f"{what}: under {material}, and a change of {plan.ruled_out * 100:.0f} pts or more "
            "is ruled out"
        )
    if not test.informative:
        return f"{what}: every case scored the same in all its runs; more runs would tell"
    return f"{what} > {level:g}: a change of {material} or more is still plausible"


def _compare_tier(
    tier: Tier,
    base: Side | None,
    head: Side | None,
    failing: tuple[FailingCase, ...],
    lifts: tuple[float | None, float | None],
    names: dict[str, str],
    plan: Plan,
    rerun: bool,
    *,
    base_known: bool = True,
    refused: str | None = None,
    unevaluated: str | None = None,
    look: Reruns | None = None,
) -> TierComparison:
    brate = rate_of(base) if base is not None else None
    hrate = rate_of(head) if head is not None else None
    bn = brate.n if brate is not None else 0
    hn = hrate.n if hrate is not None else 0
    test: StratifiedTest | None = None
    more: int | None = None
    flips: Flips | None = None
    flipped: tuple[FlippedCase, ...] = ()
    level: float | None = None
    unpaired = 0
    added: list[str] = []
    unit = "queries" if tier is Tier.TRIGGERS else "cases"
    why = incomparable(base.header, head.header) if base and head else None
    if refused is not None:
        label, reason = Label.AUTHORING_ERROR, refused
    elif unevaluated is not None:
        label, reason = Label.NOT_EVALUATED, unevaluated
    elif why is not None:
        label, reason = Label.NOT_COMPARABLE, f"different {why}: the sides measure different things"
    elif head is None or (bn and not hn):
        label, unpaired = Label.REMOVED, bn
        reason = (
            f"no valid head verdicts ({hrate.invalid} without one)"
            if hrate is not None
            else "no head results for this tier"
        )
    elif base is None and not base_known:
        label, unpaired = Label.BASE_UNKNOWN, hn
        reason = "the base's results could not be read: nothing to compare with (see the note)"
    elif base is None or (hn and not bn):
        label, unpaired = Label.NEW, hn
        reason = (
            f"no valid base verdicts ({brate.invalid} without one)"
            if brate is not None
            else "no base results for this tier"
        )
    else:
        shared = shared_keys(base, head)
        unpaired = len(set(base.cases) | set(head.cases)) - len(shared)
        added = [k for k in head.order if k in head.cases and k not in base.cases]
        down = sum(1 for k in shared if base.cases[k].passed and not head.cases[k].passed)
        up = sum(1 for k in shared if not base.cases[k].passed and head.cases[k].passed)
        flips = Flips(shared=len(shared), down=down, up=up)
        flipped = flipped_cases(tier, base, head, shared, names)
        test = stratified_test(
            [
                Stratum(
                    base=base.cases[k].first,
                    head=head.cases[k].first,
                    scale=base.scale,
                    base_sweep=base.sweep(base.cases[k]),
                    head_sweep=head.sweep(head.cases[k]),
                    rounds=pad(base.cases[k].rounds, head.cases[k].rounds),
                )
                for k in shared
            ]
        )
        if not rerun:
            label = Label.NOT_RERUN
            reason = "the head carries the base's results for this tier: nothing was re-run"
        elif test.delta is None:
            label, reason = Label.UNDECIDED, f"no {unit} with a verdict on both sides"
        else:
            if look is None:
                decision = decide(test, plan)
            else:
                decision = decide(test, plan, t_prev=look.t_prev, t=look.t, final=look.final)
            label, level = _OUTCOME_LABEL[decision.outcome], decision.level
            reason = _reason(label, test, decision.level, plan, unit)
            if decision.outcome is Outcome.UNDECIDED:
                more = runs_to_decide(test, plan)
    return TierComparison(
        tier=tier,
        label=label,
        reason=reason,
        base=brate,
        head=hrate,
        test=test,
        level=level,
        delta=test.delta if test is not None else _side_delta(brate, hrate),
        flips=flips,
        flipped=flipped,
        unpaired=unpaired,
        lift_base=lifts[0],
        lift_head=lifts[1],
        failing=failing,
        base_reruns=sum(q.runs for q in look.base) if look is not None else 0,
        extra_head_runs=sum(q.runs for q in look.head) if look is not None else 0,
        added=len(added),
        added_passed=sum(1 for k in added if head is not None and head.cases[k].passed),
        more_runs=more,
    )


def _side_delta(base: Rate | None, head: Rate | None) -> float | None:
    if base is None or head is None or base.score is None or head.score is None:
        return None
    return round6(head.score - base.score)


def _rerun(b: TriggersEntry | EvalsEntry | None, h: TriggersEntry | EvalsEntry | None) -> bool:
    """False when the head's tier is the base's own evidence: the same run time and results, or
    (a PR that only added or removed cases) every case both sides have carried over unchanged,
    so no shared case was re-run and there is nothing to test."""
    if b is None or h is None:
        return True
    if b.header.ran_at and b.header.ran_at == h.header.ran_at and b.results == h.results:
        return False
    before = {_case_key(r): r for r in b.results}
    if set(before) == {_case_key(r) for r in h.results}:
        return True  # the same cases: a new run time says they were run again
    shared = [r for r in h.results if _case_key(r) in before]
    return not shared or any(before[_case_key(r)] != r for r in shared)


def _case_key(r: TriggerResult | EvalResult) -> str:
    return r.query if isinstance(r, TriggerResult) else r.id


def _triggers(
    b: TriggersEntry | None,
    h: TriggersEntry | None,
    plan: Plan,
    ev: SkillEvidence,
    rr: Reruns | None,
) -> TierComparison | None:
    if b is None and h is None and not _told(Tier.TRIGGERS, ev):
        return None
    kept = rr is not None and rr.head_sweep is not None  # `h` is that sweep (`_kept_heads`)
    bv = trigger_side(b) if b is not None else None
    hv = trigger_side(h) if h is not None else None
    rerun = _rerun(b, h)
    if rr is not None and Tier.TRIGGERS not in ev.refused:
        if rr.base and (rr.base_fresh or bv is None):
            header = h.header if h is not None else (b.header if b is not None else EntryHeader())
            bv = fresh_side(rr.base, header)
        elif rr.base and bv is not None:
            bv = extended(bv, rr.base)
        if rr.head and hv is not None:
            hv = extended(hv, rr.head)
        rerun = rerun or bool(rr.base or rr.head)
    failing = trigger_failing(h, bv) if h is not None else ()
    return _compare_tier(
        Tier.TRIGGERS,
        bv,
        hv,
        failing,
        (None, None),
        {},
        plan,
        rerun,
        base_known=ev.base_known or bool(rr and rr.base),
        refused=ev.refused.get(Tier.TRIGGERS),
        unevaluated=None if kept else ev.unevaluated.get(Tier.TRIGGERS),
        look=rr,
    )


def _told(tier: Tier, ev: SkillEvidence) -> bool:
    """The job has something to say about `tier` even with no results on either side."""
    return tier in ev.refused or tier in ev.unevaluated


def _evals(
    b: EvalsEntry | None,
    h: EvalsEntry | None,
    plan: Plan,
    ev: SkillEvidence,
    rr: Reruns | None = None,
) -> TierComparison | None:
    if b is None and h is None and not _told(Tier.EVALS, ev):
        return None
    kept = rr is not None and rr.head_sweep is not None  # `h` is that run (`_kept_heads`)
    bv = eval_side(b.header, b.results) if b is not None else None
    hv = eval_side(h.header, h.results) if h is not None else None
    rerun = _rerun(b, h)
    if Tier.EVALS in ev.refused:
        rr = None
    if rr is not None:
        bv, hv = eval_powered(bv, hv, rr, (h or b).header)  # type: ignore[union-attr]
        rerun = rerun or bool(rr.base or rr.head)
    failing = eval_failing(h, bv) if h is not None else ()
    lifts = (
        lift(b, rate_of(bv) if bv is not None else None),
        lift(h, rate_of(hv) if hv is not None else None),
    )
    names = {r.id: r.name for r in h.results} if h is not None else {}
    return _compare_tier(
        Tier.EVALS,
        bv,
        hv,
        failing,
        lifts,
        names,
        plan,
        rerun,
        base_known=ev.base_known or bool(rr and rr.base),
        refused=ev.refused.get(Tier.EVALS),
        unevaluated=None if kept else ev.unevaluated.get(Tier.EVALS),
        look=rr,
    )


def _display(*entries: ModelEntry | None) -> tuple[str, str]:
    display = harness = ""
    for m in entries:
        if m is None:
            continue
        for e in (m.triggers, m.evals):
            if e is None:
                continue
            display = display or e.header.display
            harness = harness or e.header.harness
    return display, harness


def _kept_heads(evidence: SkillEvidence) -> dict[str, ModelEntry]:
    """The head's entries per model key, each tier whose look rests on an earlier workflow run's
    head sweep (`Reruns.head_sweep`, kept by the PR's ledger) standing on that sweep: the same
    content tests the same evidence, so a decided verdict stays decided, even when this job's
    results of that content are stale or missing (it ran no sweep for a closed test)."""
    heads = dict(evidence.head.models) if evidence.head is not None else {}
    for key, rr in evidence.reruns.items():
        if isinstance(rr.head_sweep, TriggersEntry):
            entry = heads.get(key) or ModelEntry()
            heads[key] = msgspec.structs.replace(entry, triggers=rr.head_sweep)
    for key, rr in evidence.eval_reruns.items():
        if isinstance(rr.head_sweep, EvalsEntry):
            entry = heads.get(key) or ModelEntry()
            heads[key] = msgspec.structs.replace(entry, evals=rr.head_sweep)
    return heads


def compare_skill(
    evidence: SkillEvidence, *, models: Collection[str] | None = None, plan: Plan | None = None
) -> tuple[ComparisonRow, ...]:
    """The rows of one touched skill: one per model key on either side, sorted by key.

    `models`, when given, restricts the rows to those keys (e.g. the models this run selected).
    A key on the head only is `new` (`base unknown` when the base could not be read), on the
    base only `removed`. `plan` (default: one look at the default levels) is the rule's
    parameters; `evidence.reruns` the runs power on demand added and each one's look. A refused
    definition (`evidence.refused`) labels its tier `authoring error`, stale or missing evidence
    the job did not run (`evidence.unevaluated`) `not evaluated` (never `no change` nor `not
    re-run`); a skill with no results on either side gets one row (model key "") when its
    definition was refused, its evidence was not run or its base could not be read, so the
    comment says so.
    """
    plan = plan or Plan()
    bmodels = evidence.base.models if evidence.base is not None else {}
    hmodels = _kept_heads(evidence)
    rows: list[ComparisonRow] = []
    keys = sorted(set(bmodels) | set(hmodels))
    if not keys and (evidence.refused or evidence.unevaluated):
        keys = [""]  # nothing stored on either side: one row says what was refused or not run
    for key in keys:
        if models is not None and key not in models and key:
            continue
        b, h = bmodels.get(key), hmodels.get(key)
        rr = evidence.reruns.get(key)
        trig = _triggers(b.triggers if b else None, h.triggers if h else None, plan, evidence, rr)
        evs = _evals(
            b.evals if b else None,
            h.evals if h else None,
            plan,
            evidence,
            evidence.eval_reruns.get(key),
        )
        if trig is None and evs is None:
            continue
        present = {t.label for t in (trig, evs) if t is not None}
        if Label.AUTHORING_ERROR in present:
            label = Label.AUTHORING_ERROR
        elif Label.NOT_EVALUATED in present:
            label = Label.NOT_EVALUATED
        elif b is None and not (rr is not None and rr.base) and key not in evidence.eval_reruns:
            label = Label.NEW if evidence.base_known else Label.BASE_UNKNOWN
        elif h is None:
            label = Label.REMOVED
        else:
            label = next(lbl for lbl in _PRIORITY if lbl in present)
        display, harness = _display(h, b)
        rows.append(
            ComparisonRow(
                plugin=evidence.plugin,
                skill=evidence.skill,
                model_key=key,
                display=display or key or EM,
                harness=harness,
                label=label,
                triggers=trig,
                evals=evs,
            )
        )
    if not keys and not evidence.base_known:  # nothing on either side and the base unreadable
        rows.append(
            ComparisonRow(
                plugin=evidence.plugin,
                skill=evidence.skill,
                model_key="",
                display=EM,
                harness="",
                label=Label.BASE_UNKNOWN,
                triggers=None,
                evals=None,
            )
        )
    return tuple(rows)


def compare(
    skills: Iterable[SkillEvidence],
    *,
    models: Collection[str] | None = None,
    plan: Plan | None = None,
) -> tuple[ComparisonRow, ...]:
    """The rows of every touched skill, sorted by (plugin, skill, model key)."""
    rows = [r for ev in skills for r in compare_skill(ev, models=models, plan=plan)]
    return tuple(sorted(rows, key=lambda r: (r.plugin, r.skill, r.model_key)))


def label_counts(rows: Iterable[ComparisonRow]) -> dict[Label, int]:
    """Rows per label, in `Label` order, labels with no rows omitted."""
    counts = dict.fromkeys(Label, 0)
    for r in rows:
        counts[r.label] += 1
    return {lbl: c for lbl, c in counts.items() if c}
