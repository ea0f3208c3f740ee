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
`bench/noise.py` measures them.

Guarantees: a pure function of its inputs (no I/O, no clock, no randomness); rows are sorted by
(plugin, skill, model key) and case lists keep the head's result order, so equal evidence gives
equal rows. Errored and verdict-less cases are invalid: they are excluded from rates, n and the
paired test, and counted separately (never as failures). Untrusted text (queries, eval names,
runtime errors, assertion texts) is carried as is: sanitising it is the renderer's job
(`pr_comment`).

Never does: I/O, rendering, reading git or the environment, starting runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from evolve_action.encoding import round6
from evolve_action.plan import Tier
from evolve_action.report._render import EM
from evolve_action.report._stats import (
    Interval,
    Outcome,
    Plan,
    StratifiedTest,
    Stratum,
    Sweep,
    decide,
    early_stopped,
    runs_to_decide,
    stratified_test,
    wilson,
)
from evolve_action.results import (
    EntryHeader,
    EvalResult,
    EvalsEntry,
    EvalSnapshot,
    ModelEntry,
    ResultsFile,
    TriggerResult,
    TriggersEntry,
)
from evolve_action.triggers import passes

__all__ = [
    "CaseStatus",
    "ComparisonRow",
    "FailingCase",
    "FlippedCase",
    "Flips",
    "Label",
    "QueryRuns",
    "Rate",
    "Reruns",
    "SkillEvidence",
    "TierComparison",
    "compare",
    "compare_skill",
    "label_counts",
]


class Label(StrEnum):
    """The label of a tier comparison or of a whole skill × model row (declaration order is the
    row priority: a row takes the first label any of its tiers has)."""

    REGRESSION = "regression"
    """A significant drop of at least `MATERIAL` (docs/pr-comment.md "The rule")."""
    AUTHORING_ERROR = "authoring error"
    """The head's definition file of this tier fails validation: it was refused, nothing ran
    (an error of the definition, not a failure of the skill)."""
    NOT_EVALUATED = "not evaluated"
    """The head's evidence for this tier is stale or missing and this job did not re-run it (no
    credentials, a fork, the budget, a cancellation): there is no verdict, and the stored figures
    are not the PR's (docs/pr-comment.md)."""
    IMPROVEMENT = "improvement"
    NOT_COMPARABLE = "not comparable"
    """Different model or harness on the two sides: no test."""
    UNDECIDED = "undecided"
    """Nothing decided and a material change still plausible: more runs would tell."""
    BASE_UNKNOWN = "base unknown"
    """The base's results could not be read (API or git failure, unreadable file): no test, and
    never `new`."""
    NO_CHANGE = "no change"
    """No material change: the estimate is under `MATERIAL` and a change of `RULED_OUT` is ruled
    out (or a significant change is too small to matter)."""
    NEW = "new"
    REMOVED = "removed"
    NOT_RERUN = "not re-run"
    """The head carries the base's own evidence for this tier (the PR re-ran nothing): no label."""


_PRIORITY = tuple(Label)
"""Row label = the first of the tiers' labels in this order (declaration order of `Label`)."""

_OUTCOME_LABEL = {
    Outcome.REGRESSION: Label.REGRESSION,
    Outcome.IMPROVEMENT: Label.IMPROVEMENT,
    Outcome.NO_CHANGE: Label.NO_CHANGE,
    Outcome.UNDECIDED: Label.UNDECIDED,
    Outcome.CONTINUE: Label.UNDECIDED,
}


class CaseStatus(StrEnum):
    """Why a head case is listed among the failing cases."""

    REGRESSED = "regressed"
    """Passed at base, fails at head (a flip)."""
    STILL_FAILING = "still failing"
    """Failed at base too."""
    NO_BASE = "no base verdict"
    """Fails at head; base had no valid verdict for it (new, errored or changed case)."""
    ERRORED = "errored"
    """No verdict at head (runtime error or missing verdict): invalid, not counted as a failure."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Flips:
    """The verdicts of the cases both sides share (each with a valid verdict on both)."""

    shared: int
    """Cases with a valid verdict at base and at head."""
    down: int
    """Shared cases that passed at base and fail at head (newly failing)."""
    up: int
    """Shared cases that failed at base and pass at head (fixed)."""

    @property
    def discordant(self) -> int:
        """Cases whose verdict changed (`down + up`)."""
        return self.down + self.up


@dataclass(frozen=True, slots=True, kw_only=True)
class FlippedCase:
    """A shared case whose verdict changed."""

    key: str
    """The trigger query or the eval id (untrusted text)."""
    name: str
    """The eval's name (evals only; untrusted)."""
    fixed: bool
    """True: failed at base, passes at head; False: newly failing."""
    detail: str
    """Base → head evidence, e.g. `hit in 3/3 → 0/3 runs (expected a trigger)`."""


# ---------------------------------------------------------------------------------------------
# Rows


@dataclass(frozen=True, slots=True, kw_only=True)
class Rate:
    """One side of a tier over its valid cases."""

    passed: int
    """Cases whose verdict passed."""
    n: int
    """Cases with a valid verdict (passed + failed)."""
    invalid: int
    """Cases without a valid verdict (errored, not executed, no verdict): excluded from `n`."""
    rate: float | None
    """Case pass rate: round6(passed / n); None when `n` is 0."""
    ci: Interval | None
    """Wilson 95 % interval of `rate`; None when `n` is 0."""
    score: float | None
    """Mean over the valid cases of the share of runs that behaved as expected (triggers) or
    that passed (evals); round6; None when `n` is 0. The tested quantity."""
    runs: int
    """Runs behind `score` (evals: one per case, plus power on demand's)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FailingCase:
    """A head case that failed, or that has no valid verdict (errored)."""

    key: str
    """The trigger query or the eval id (untrusted text)."""
    name: str
    """The eval's name (evals only; untrusted)."""
    status: CaseStatus
    detail: str
    """Why it failed: hits/runs and expectation, failed assertion texts, or the runtime error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TierComparison:
    """One tier of one skill × model, base → head."""

    tier: Tier
    label: Label
    reason: str
    """The numbers behind `label`, in one sentence."""
    base: Rate | None
    """All valid base cases; None when the base has no entry for this tier."""
    head: Rate | None
    """All valid head cases; None when the head has no entry for this tier."""
    test: StratifiedTest | None
    """Like for like: the shared cases' scores and the exact test; None when not paired."""
    level: float | None
    """The one-sided level each direction was tested at (the plan's alpha on a single look)."""
    delta: float | None
    """The change shown: `test.delta` (shared cases) when paired, else head.score − base.score
    when both sides have one (not comparable), else None."""
    flips: Flips | None
    """Verdict flips among the shared cases; None when the two sides are not paired."""
    flipped: tuple[FlippedCase, ...]
    """The shared cases whose verdict changed, newly failing first, each in head order."""
    unpaired: int
    """Cases valid on one side only (new, errored or changed on the other)."""
    lift_base: float | None
    """Evals: base case pass rate − without-skill baseline rate at base (round6)."""
    lift_head: float | None
    """Evals: head case pass rate − without-skill baseline rate at head (round6)."""
    failing: tuple[FailingCase, ...]
    """Head cases that failed or errored, in the head's result order."""
    base_reruns: int = 0
    """Runs of the base's version this job made (`Reruns.base`)."""
    extra_head_runs: int = 0
    """Head runs this job added beyond the stored sweep (power on demand)."""
    added: int = 0
    """Head cases with a valid verdict that the base does not have (new queries or evals): they
    ran for this PR but are not part of the paired test."""
    added_passed: int = 0
    """Of `added`, those that passed."""
    more_runs: int | None = None
    """`undecided` at the last look: about how many more runs per case per side a decision would
    need (`_stats.runs_to_decide`); None otherwise."""

    @property
    def base_score(self) -> float | None:
        """The base figure shown: like for like when paired, else the side's own score."""
        if self.test is not None:
            return self.test.base_rate
        return self.base.score if self.base is not None else None

    @property
    def head_score(self) -> float | None:
        """The head figure shown: like for like when paired, else the side's own score."""
        if self.test is not None:
            return self.test.head_rate
        return self.head.score if self.head is not None else None


@dataclass(frozen=True, slots=True, kw_only=True)
class ComparisonRow:
    """One touched skill × model key."""

    plugin: str
    skill: str
    model_key: str
    """`provider/bare-id`."""
    display: str
    """The model's display name (the key when no header has one)."""
    harness: str
    """The head's harness (else the base's); "" when unrecorded."""
    label: Label
    """`new`/`removed` for a model on one side only, else the first tier label by priority
    (`Label` declaration order)."""
    triggers: TierComparison | None
    evals: TierComparison | None

    @property
    def tiers(self) -> tuple[TierComparison, ...]:
        """The tiers present, triggers first."""
        return tuple(t for t in (self.triggers, self.evals) if t is not None)


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryRuns:
    """Runs of one trigger query made by this job for the comparison only (never committed)."""

    query: str
    should_trigger: bool
    hits: int
    runs: int
    """Completed runs (errored runs are not counted)."""
    rounds: tuple[tuple[int, int], ...] = ()
    """Of `hits`/`runs`, those made in each selective round, (hits, runs) per round ((0, 0):
    the round passed this query by); the rest belong to the first block (a fresh base's
    catch-up, or runs added to every query). Each round is a block of its own in the test."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reruns:
    """What power on demand added to one skill × model's triggers comparison, and the look.

    `base` runs (made in this job, against the same model, interleaved with the head's) extend
    the stored base; with `base_fresh` the base side is those runs only and the stored base is not
    tested (it was missing, thin, early-stopped or another version's). `head` runs extend the
    head's stored sweep. `t_prev`, `t` and `final` place this look in the sequential plan
    (`_stats.decide`).
    """

    base: tuple[QueryRuns, ...] = ()
    base_fresh: bool = False
    head: tuple[QueryRuns, ...] = ()
    t_prev: float = 0.0
    t: float = 1.0
    final: bool = True
    head_sweep: TriggersEntry | None = None
    """The head sweep the comparison rests on when it is not the head results' own: an earlier
    workflow run's, kept by the PR's ledger, so a re-run of the same content tests the same
    evidence and a decided verdict stays decided (docs/pr-comment.md, "Runs across workflow
    runs")."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillEvidence:
    """A touched skill's results file at the PR base and at the head (None when absent)."""

    plugin: str
    skill: str
    base: ResultsFile | None
    head: ResultsFile | None
    base_known: bool = True
    """False: the base's results could not be read (`base` None means unknown, not absent)."""
    refused: Mapping[Tier, str] = field(default_factory=dict)
    """Tiers whose head definition was refused as an authoring error, with the message."""
    unevaluated: Mapping[Tier, str] = field(default_factory=dict)
    """Tiers with stale or missing head evidence that this job did not run, with why (e.g.
    `2 stale or missing queries not run: no credentials were given`): labelled `not evaluated`."""
    reruns: Mapping[str, Reruns] = field(default_factory=dict)
    """Model key → the runs this job added for the comparison (power on demand)."""
    eval_reruns: Mapping[str, Reruns] = field(default_factory=dict)
    """Model key → the eval runs power on demand added (`QueryRuns` per eval case: `query` is
    the eval id, `hits` the runs that passed, `should_trigger` True) and the look."""


@dataclass(frozen=True, slots=True)
class _Case:
    """One valid case of one side."""

    passed: bool
    scores: tuple[int, ...]
    """Run scores on the tier's integer scale."""
    detail: str
    """Evidence in words (`3/3 runs`, `2/3 expectations`)."""
    expect: bool
    """Triggers: `should_trigger` (a changed expectation unpairs the case)."""
    extra: int = 0
    """Fixed-size runs appended after a stored early-stopped sweep (in `scores`)."""
    rounds: tuple[tuple[int, ...], ...] = ()
    """The scores of each selective round (the tail of `scores`, in round order)."""

    @property
    def first(self) -> tuple[int, ...]:
        """The first block's scores: `scores` without the rounds'."""
        return self.scores[: len(self.scores) - sum(len(r) for r in self.rounds)]


@dataclass(frozen=True, slots=True)
class _Side:
    """One side of a tier: valid cases by key, plus what the failing list needs."""

    header: EntryHeader
    cases: dict[str, _Case]
    invalid: int
    order: tuple[str, ...]
    scale: int
    planned: int | None = None
    """Triggers: the sweep's planned runs when the side's runs were early-stopped, else None."""

    def sweep(self, case: _Case) -> Sweep | None:
        if not self.planned:
            return None
        return Sweep(planned=self.planned, should_trigger=case.expect, extra=case.extra)


def _trigger_case(r: TriggerResult) -> _Case | None:
    if r.passed is None or not r.runs or r.hits is None or not 0 <= r.hits <= r.runs:
        return None
    good = r.hits if r.should_trigger else r.runs - r.hits
    scores = (1,) * good + (0,) * (r.runs - good)
    return _Case(r.passed, scores, f"{r.hits}/{r.runs}", r.should_trigger)


def _trigger_side(entry: TriggersEntry) -> _Side:
    cases: dict[str, _Case] = {}
    invalid = 0
    for r in entry.results:
        c = _trigger_case(r) if entry.header.executed else None
        if c is None:
            invalid += 1
        else:
            cases[r.query] = c
    planned = entry.header.runs_per_query or max((len(c.scores) for c in cases.values()), default=0)
    records = [(sum(c.scores), len(c.scores), c.expect) for c in cases.values()]
    stopped = planned > 1 and early_stopped(records, planned)
    order = tuple(r.query for r in entry.results)
    return _Side(entry.header, cases, invalid, order, 1, planned if stopped else None)


def _query_case(q: QueryRuns, before: _Case | None = None) -> _Case:
    """A trigger case from runs made by this job, appended to `before`'s when given."""
    rounds = tuple(_good(h, n, q.should_trigger) for h, n in q.rounds)
    in_rounds = sum(n for _, n in q.rounds)
    good = q.hits - sum(h for h, _ in q.rounds)
    first = _good(good, q.runs - in_rounds, q.should_trigger)
    old = before if before is not None else _Case(False, (), "", q.should_trigger)
    scores = old.first + first + tuple(x for r in old.rounds + rounds for x in r)
    total_good = sum(scores)
    hits = total_good if q.should_trigger else len(scores) - total_good
    return _Case(
        passes(hits, len(scores), q.should_trigger),
        scores,
        f"{hits}/{len(scores)}",
        q.should_trigger,
        old.extra + q.runs - in_rounds,
        _zip_rounds(old.rounds, rounds),
    )


def _good(hits: int, runs: int, should_trigger: bool) -> tuple[int, ...]:
    """0/1 scores of `runs` runs with `hits` hits (1: the run behaved as expected)."""
    good = hits if should_trigger else runs - hits
    return (1,) * good + (0,) * (runs - good)


def _zip_rounds(
    a: tuple[tuple[int, ...], ...], b: tuple[tuple[int, ...], ...]
) -> tuple[tuple[int, ...], ...]:
    """Round-wise concatenation (a stored side's rounds and this job's, or either alone)."""
    return tuple(x + y for x, y in _pad(a, b))


def _pad(
    a: tuple[tuple[int, ...], ...], b: tuple[tuple[int, ...], ...]
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """Pairs of rounds, the shorter side padded with empty rounds."""
    n = max(len(a), len(b))
    return tuple(zip(a + ((),) * (n - len(a)), b + ((),) * (n - len(b)), strict=True))


def _fresh_side(runs: Sequence[QueryRuns], header: EntryHeader) -> _Side:
    """The base side made of this job's fresh runs of the base's version (fixed size)."""
    cases = {q.query: _query_case(q) for q in runs if q.runs > 0}
    invalid = sum(1 for q in runs if q.runs <= 0)
    return _Side(header, cases, invalid, tuple(q.query for q in runs), 1, None)


def _extended(side: _Side, extra: Sequence[QueryRuns]) -> _Side:
    """`side` with this job's extra runs appended to its cases (same query and expectation)."""
    cases = dict(side.cases)
    for q in extra:
        before = cases.get(q.query)
        if before is not None and before.expect == q.should_trigger and q.runs > 0:
            cases[q.query] = _query_case(q, before)
    return dataclasses.replace(side, cases=cases)


def _eval_valid(r: EvalResult) -> bool:
    return not r.runtime_error and r.passed is not None


def _eval_case(r: EvalResult) -> _Case:
    """One eval run: it scores 1 when the case passed (every deterministic assertion and judged
    expectation held), else 0 (docs/pr-comment.md, "One eval run's outcome")."""
    graded = [a.passed for a in r.expectations if a.passed is not None]
    if graded:
        detail = f"{sum(graded)}/{len(graded)} expectations"
    elif r.summary is not None and r.summary.total:
        detail = f"{r.summary.passed}/{r.summary.total} assertions"
    else:
        detail = "passed" if r.passed else "failed"
    return _Case(bool(r.passed), (1 if r.passed else 0,), detail, True)


def _eval_side(header: EntryHeader, results: Sequence[EvalResult]) -> _Side:
    cases: dict[str, _Case] = {}
    invalid = 0
    for r in results:
        if header.executed and _eval_valid(r):
            cases[r.id] = _eval_case(r)
        else:
            invalid += 1
    return _Side(header, cases, invalid, tuple(r.id for r in results), 1)


def _rate(v: _Side) -> Rate:
    n = len(v.cases)
    k = sum(c.passed for c in v.cases.values())
    scores = [sum(c.scores) / (len(c.scores) * v.scale) for c in v.cases.values()]
    return Rate(
        passed=k,
        n=n,
        invalid=v.invalid,
        rate=round6(k / n) if n else None,
        ci=wilson(k, n),
        score=round6(sum(scores) / n) if n else None,
        runs=sum(len(c.scores) for c in v.cases.values()),
    )


def _snapshot_rate(snap: EvalSnapshot | None) -> float | None:
    if snap is None:
        return None
    valid = [r for r in snap.results if _eval_valid(r)]
    if not valid:
        return None
    return round6(sum(1 for r in valid if r.passed) / len(valid))


def _lift(entry: EvalsEntry | None, rate: Rate | None) -> float | None:
    if entry is None or rate is None or rate.rate is None:
        return None
    base = _snapshot_rate(entry.baseline)
    return None if base is None else round6(rate.rate - base)


def _incomparable(base: EntryHeader, head: EntryHeader) -> str | None:
    if (base.provider, base.model) != (head.provider, head.model) and base.model and head.model:
        return f"model {base.provider}/{base.model} → {head.provider}/{head.model}"
    if base.harness and head.harness and base.harness != head.harness:
        return f"harness {base.harness} → {head.harness}"
    return None


def _trigger_failing(entry: TriggersEntry, base: _Side | None) -> tuple[FailingCase, ...]:
    out: list[FailingCase] = []
    valid = _trigger_side(entry).cases
    for r in entry.results:
        expect = "a trigger" if r.should_trigger else "no trigger"
        hits = f"{r.hits if r.hits is not None else '?'}/{r.runs if r.runs is not None else '?'}"
        if r.query not in valid:
            out.append(
                FailingCase(
                    key=r.query,
                    name="",
                    status=CaseStatus.ERRORED,
                    detail=f"no valid verdict (expected {expect}; hits {hits})",
                )
            )
        elif not valid[r.query].passed:
            out.append(
                FailingCase(
                    key=r.query,
                    name="",
                    status=_status(r.query, base),
                    detail=f"expected {expect}; hit in {hits} runs",
                )
            )
    return tuple(out)


def _eval_detail(r: EvalResult) -> str:
    failed = [a.text for a in r.expectations if a.passed is False]
    if failed:
        return "failed: " + "; ".join(failed)
    if r.summary is not None and r.summary.failed:
        return f"{r.summary.failed} of {r.summary.total} assertions failed"
    return "failed"


def _eval_failing(entry: EvalsEntry, base: _Side | None) -> tuple[FailingCase, ...]:
    out: list[FailingCase] = []
    valid = _eval_side(entry.header, entry.results).cases
    for r in entry.results:
        if r.id not in valid:
            detail = r.runtime_error or (
                "not executed (count-only)" if not entry.header.executed else "no verdict"
            )
            out.append(FailingCase(key=r.id, name=r.name, status=CaseStatus.ERRORED, detail=detail))
        elif not valid[r.id].passed:
            out.append(
                FailingCase(
                    key=r.id, name=r.name, status=_status(r.id, base), detail=_eval_detail(r)
                )
            )
    return tuple(out)


def _status(key: str, base: _Side | None) -> CaseStatus:
    if base is None or key not in base.cases:
        return CaseStatus.NO_BASE
    return CaseStatus.REGRESSED if base.cases[key].passed else CaseStatus.STILL_FAILING


def _shared(base: _Side, head: _Side) -> list[str]:
    return [
        k
        for k in head.order
        if k in head.cases and k in base.cases and base.cases[k].expect == head.cases[k].expect
    ]


def _flipped(
    tier: Tier, base: _Side, head: _Side, shared: Sequence[str], names: dict[str, str]
) -> tuple[FlippedCase, ...]:
    down: list[FlippedCase] = []
    up: list[FlippedCase] = []
    for k in dict.fromkeys(shared):
        b, h = base.cases[k], head.cases[k]
        if b.passed == h.passed:
            continue
        if tier is Tier.TRIGGERS:
            expect = "a trigger" if h.expect else "no trigger"
            detail = f"hit in {b.detail} → {h.detail} runs (expected {expect})"
        else:
            detail = f"{b.detail} → {h.detail}"
        flip = FlippedCase(key=k, name=names.get(k, ""), fixed=h.passed, detail=detail)
        (up if h.passed else down).append(flip)
    return (*down, *up)


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
    base: _Side | None,
    head: _Side | None,
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
    brate = _rate(base) if base is not None else None
    hrate = _rate(head) if head is not None else None
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
    why = _incomparable(base.header, head.header) if base and head else None
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
        shared = _shared(base, head)
        unpaired = len(set(base.cases) | set(head.cases)) - len(shared)
        added = [k for k in head.order if k in head.cases and k not in base.cases]
        down = sum(1 for k in shared if base.cases[k].passed and not head.cases[k].passed)
        up = sum(1 for k in shared if not base.cases[k].passed and head.cases[k].passed)
        flips = Flips(shared=len(shared), down=down, up=up)
        flipped = _flipped(tier, base, head, shared, names)
        test = stratified_test(
            [
                Stratum(
                    base=base.cases[k].first,
                    head=head.cases[k].first,
                    scale=base.scale,
                    base_sweep=base.sweep(base.cases[k]),
                    head_sweep=head.sweep(head.cases[k]),
                    rounds=_pad(base.cases[k].rounds, head.cases[k].rounds),
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
    if rr is not None and rr.head_sweep is not None and h is not None:
        h = rr.head_sweep  # the sweep an earlier workflow run's looks rested on (the ledger)
    bv = _trigger_side(b) if b is not None else None
    hv = _trigger_side(h) if h is not None else None
    rerun = _rerun(b, h)
    if rr is not None and Tier.TRIGGERS not in ev.refused:
        if rr.base and (rr.base_fresh or bv is None):
            header = h.header if h is not None else (b.header if b is not None else EntryHeader())
            bv = _fresh_side(rr.base, header)
        elif rr.base and bv is not None:
            bv = _extended(bv, rr.base)
        if rr.head and hv is not None:
            hv = _extended(hv, rr.head)
        rerun = rerun or bool(rr.base or rr.head)
    failing = _trigger_failing(h, bv) if h is not None else ()
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
        unevaluated=ev.unevaluated.get(Tier.TRIGGERS),
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
    bv = _eval_side(b.header, b.results) if b is not None else None
    hv = _eval_side(h.header, h.results) if h is not None else None
    rerun = _rerun(b, h)
    if Tier.EVALS in ev.refused:
        rr = None
    if rr is not None:
        bv, hv = _eval_powered(bv, hv, rr, (h or b).header)  # type: ignore[union-attr]
        rerun = rerun or bool(rr.base or rr.head)
    failing = _eval_failing(h, bv) if h is not None else ()
    lifts = (
        _lift(b, _rate(bv) if bv is not None else None),
        _lift(h, _rate(hv) if hv is not None else None),
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
        unevaluated=ev.unevaluated.get(Tier.EVALS),
        look=rr,
    )


def _eval_powered(
    bv: _Side | None, hv: _Side | None, rr: Reruns, header: EntryHeader
) -> tuple[_Side | None, _Side | None]:
    """The eval sides with power on demand's runs: a fresh base side (or the stored base's one
    run per case extended), the head's stored run extended; a case run more than once passes
    when at least half its runs passed, and says so in its detail."""
    if rr.base and (rr.base_fresh or bv is None):
        bv = _fresh_side(rr.base, header)
    elif rr.base and bv is not None:
        bv = _extended(bv, rr.base)
    if rr.head and hv is not None:
        hv = _extended(hv, rr.head)
    return _eval_details(bv), _eval_details(hv)


def _eval_details(side: _Side | None) -> _Side | None:
    if side is None:
        return None
    cases = {
        k: dataclasses.replace(c, detail=f"passed in {sum(c.scores)}/{len(c.scores)} runs")
        if len(c.scores) > 1
        else c
        for k, c in side.cases.items()
    }
    return dataclasses.replace(side, cases=cases)


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
    hmodels = evidence.head.models if evidence.head is not None else {}
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
