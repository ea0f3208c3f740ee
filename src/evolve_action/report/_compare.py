"""Base → head comparison of a pull request's touched skills, with one noise-labelling rule (pure).

Owns: reading per-case verdicts out of two schema-5 results files (the PR base's and the head's),
the per-tier figures of each skill × model (pass rate, n, Wilson 95 % interval, Δ, lift vs the
without-skill baseline), the paired flip count, the exact one-sided sign test, and the label:
`improvement`, `regression`, `within noise`, `underpowered`, `not comparable`, `new`, `removed`.
The rule is written down in `docs/pr-comment.md`; `bench/noise.py` measures its A/A false-alarm
rate and its power through `classify`, the same function the rows use.

Guarantees: a pure function of its inputs (no I/O, no clock, no randomness); rows are sorted by
(plugin, skill, model key) and failing cases keep the head's result order, so equal evidence
gives equal rows. Errored and verdict-less cases are invalid: they are excluded from rates, n and
the paired test, and counted separately (never as failures). Untrusted text (queries, eval names,
runtime errors, assertion texts) is carried as is: sanitising it is the renderer's job
(`pr_comment`).

Never does: I/O, rendering, reading git or the environment.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from evolve_action.encoding import round6
from evolve_action.plan import Tier
from evolve_action.results import (
    EntryHeader,
    EvalResult,
    EvalsEntry,
    EvalSnapshot,
    ModelEntry,
    ResultsFile,
    TriggersEntry,
)

__all__ = [
    "ALPHA",
    "MATERIAL_SHARE",
    "MIN_SHARED",
    "CaseStatus",
    "ComparisonRow",
    "FailingCase",
    "Flips",
    "Interval",
    "Label",
    "NoiseVerdict",
    "Rate",
    "SkillEvidence",
    "TierComparison",
    "classify",
    "compare",
    "compare_skill",
    "label_counts",
    "sign_test",
    "wilson",
]

ALPHA = 0.025
"""One-sided level of the sign test, per direction: both directions are tested, so an A/A pair is
labelled `improvement` or `regression` with probability at most 2 × 0.025 = 0.05 whatever the
per-case rates (a two-sided 0.05 test; `bench/noise.py` measured up to 7.1 % at 0.05 per side)."""

MATERIAL_SHARE = 0.10
"""The net flips must be at least this share of the shared cases to be called a change."""

Z95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95 % interval."""


def _min_shared(alpha: float) -> int:
    n = 1
    while 0.5**n > alpha:
        n += 1
    return n


MIN_SHARED = _min_shared(ALPHA)
"""Fewest flips (all one way) whose sign test can reach `ALPHA`: 0.5⁶ = 0.016 ≤ 0.025 < 0.5⁵."""


class Label(StrEnum):
    """The noise label of a tier comparison or of a whole skill × model row."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NOT_COMPARABLE = "not comparable"
    UNDERPOWERED = "underpowered"
    WITHIN_NOISE = "within noise"
    NEW = "new"
    REMOVED = "removed"


_PRIORITY = tuple(Label)
"""Row label = the first of the tiers' labels in this order (declaration order of `Label`)."""


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


# ---------------------------------------------------------------------------------------------
# Statistics


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """A closed interval of rates in [0, 1]."""

    low: float
    high: float


def wilson(passed: int, n: int, z: float = Z95) -> Interval | None:
    """The Wilson score interval of `passed`/`n` (95 % by default); None when `n` is 0.

    Bounds are round6'd, so they print identically everywhere.
    """
    if n <= 0:
        return None
    if not 0 <= passed <= n:
        raise ValueError(f"passed={passed} outside 0..{n}")
    p = passed / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return Interval(low=round6(max(0.0, centre - half)), high=round6(min(1.0, centre + half)))


def sign_test(k: int, n: int) -> float:
    """Exact one-sided sign test: P(X ≥ k) for X ~ Binomial(n, ½); 1.0 when `k` ≤ 0.

    Computed with integers (exact up to the final division), so any `n` is fine.
    """
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return sum(math.comb(n, i) for i in range(k, n + 1)) / (1 << n)


@dataclass(frozen=True, slots=True, kw_only=True)
class Flips:
    """The paired view of the cases both sides share (each with a valid verdict on both)."""

    shared: int
    """Cases with a valid verdict at base and at head."""
    down: int
    """Shared cases that passed at base and fail at head."""
    up: int
    """Shared cases that failed at base and pass at head."""

    @property
    def discordant(self) -> int:
        """Cases whose verdict changed (`down + up`)."""
        return self.down + self.up

    @property
    def p_regression(self) -> float:
        """One-sided sign-test p-value of "more cases got worse than better"."""
        return sign_test(self.down, self.discordant)

    @property
    def p_improvement(self) -> float:
        """One-sided sign-test p-value of "more cases got better than worse"."""
        return sign_test(self.up, self.discordant)

    @property
    def net_share(self) -> float:
        """(up − down) / shared; 0.0 when nothing is shared."""
        return (self.up - self.down) / self.shared if self.shared else 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class NoiseVerdict:
    """What `classify` decided about a set of flips, and why."""

    label: Label
    reason: str
    """One plain sentence giving the numbers behind the label."""
    more_cases: int | None = None
    """`underpowered` only: how many more shared cases would let the rule decide."""


def _material(shared: int) -> int:
    """The smallest net flip count that is a material share of `shared` cases (at least 1)."""
    return max(math.ceil(MATERIAL_SHARE * shared - 1e-9), 1)


def _significant(shared: int, down: int, up: int) -> Label | None:
    if shared <= 0:
        return None
    d = down + up
    if down - up >= _material(shared) and sign_test(down, d) <= ALPHA:
        return Label.REGRESSION
    if up - down >= _material(shared) and sign_test(up, d) <= ALPHA:
        return Label.IMPROVEMENT
    return None


def _cases_to_resolve(shared: int, down: int, up: int) -> int | None:
    """More shared cases that, at the observed flip rates, would make the flips significant."""
    if shared <= 0 or down == up:
        return None
    for total in range(shared + 1, 20 * shared + 200):
        scale = total / shared
        d2, u2 = math.floor(down * scale + 1e-9), math.floor(up * scale + 1e-9)
        if _significant(total, d2, u2) is not None:
            return total - shared
    return None


def classify(flips: Flips) -> NoiseVerdict:
    """The noise rule over the shared cases (docs/pr-comment.md "The rule").

    1. `regression` (`improvement`): the one-sided exact sign test on the discordant cases gives
       p ≤ `ALPHA` for "down" ("up") **and** the net flips (down − up, resp. up − down) are at
       least `MATERIAL_SHARE` of the shared cases (and at least one).
    2. otherwise `underpowered` when no outcome could have been significant: fewer than
       `MIN_SHARED` shared cases, or the net flips are material but fewer than `MIN_SHARED` cases
       flipped in all (then even a one-sided set of flips cannot reach p ≤ `ALPHA`);
    3. otherwise `within noise`.
    """
    s, down, up = flips.shared, flips.down, flips.up
    d = down + up
    lean = "down" if down > up else "up"
    p = flips.p_regression if down > up else flips.p_improvement
    counts = f"{down} of {s} shared cases flipped to fail, {up} to pass"
    label = _significant(s, down, up)
    if label is not None:
        return NoiseVerdict(
            label=label,
            reason=f"{counts}; sign test p = {p:.3g} ≤ {ALPHA:g} and net {abs(down - up)} "
            f"≥ {MATERIAL_SHARE:.0%} of the shared cases",
        )
    if s < MIN_SHARED:
        more = MIN_SHARED - s
        return NoiseVerdict(
            label=Label.UNDERPOWERED,
            reason=f"only {s} shared case{'s' if s != 1 else ''} with a verdict on both sides; "
            f"no result over fewer than {MIN_SHARED} can reach p ≤ {ALPHA:g}",
            more_cases=more,
        )
    if abs(down - up) >= _material(s) and d < MIN_SHARED:
        return NoiseVerdict(
            label=Label.UNDERPOWERED,
            reason=f"{counts} (net {abs(down - up)} {lean}, a material share); fewer than "
            f"{MIN_SHARED} flips can never reach p ≤ {ALPHA:g}",
            more_cases=_cases_to_resolve(s, down, up),
        )
    if d == 0:
        return NoiseVerdict(
            label=Label.WITHIN_NOISE, reason=f"no verdict changed among {s} shared cases"
        )
    why = (
        f"p = {p:.3g} > {ALPHA:g}"
        if p > ALPHA
        else f"net {abs(down - up)} < {MATERIAL_SHARE:.0%} of the shared cases"
    )
    if down == up:
        why = "as many flips each way"
    return NoiseVerdict(label=Label.WITHIN_NOISE, reason=f"{counts}; {why}")


# ---------------------------------------------------------------------------------------------
# Rows


@dataclass(frozen=True, slots=True, kw_only=True)
class Rate:
    """A pass rate over the valid cases of one side."""

    passed: int
    n: int
    """Cases with a valid verdict (passed + failed)."""
    invalid: int
    """Cases without a valid verdict (errored, not executed, no verdict): excluded from `n`."""
    rate: float | None
    """round6(passed / n); None when `n` is 0."""
    ci: Interval | None
    """Wilson 95 % interval; None when `n` is 0."""


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
    """None when the base has no entry for this tier."""
    head: Rate | None
    """None when the head has no entry for this tier."""
    delta: float | None
    """round6(head.rate − base.rate), when both rates exist."""
    flips: Flips | None
    """The paired view; None when the two sides are not paired (new, removed, not comparable)."""
    more_cases: int | None
    """`underpowered`: shared cases that would let the rule decide."""
    unpaired: int
    """Cases valid on one side only (new, errored or changed on the other): re-running them adds
    shared cases."""
    lift_base: float | None
    """Evals: base rate − without-skill baseline rate at base (round6); None otherwise."""
    lift_head: float | None
    """Evals: head rate − without-skill baseline rate at head (round6); None otherwise."""
    failing: tuple[FailingCase, ...]
    """Head cases that failed or errored, in the head's result order."""


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
    (regression, improvement, not comparable, underpowered, within noise, new, removed)."""
    triggers: TierComparison | None
    evals: TierComparison | None

    @property
    def tiers(self) -> tuple[TierComparison, ...]:
        """The tiers present, triggers first."""
        return tuple(t for t in (self.triggers, self.evals) if t is not None)


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillEvidence:
    """A touched skill's results file at the PR base and at the head (None when absent)."""

    plugin: str
    skill: str
    base: ResultsFile | None
    head: ResultsFile | None


@dataclass(frozen=True, slots=True)
class _Verdicts:
    """One side of a tier: valid verdicts by case key, plus what the failing list needs."""

    header: EntryHeader
    passed: dict[str, bool]
    invalid: int
    order: tuple[str, ...]
    expect: dict[str, bool]
    """Triggers: `should_trigger` per query (a changed expectation unpairs the case)."""


def _trigger_verdicts(entry: TriggersEntry) -> _Verdicts:
    passed: dict[str, bool] = {}
    invalid = 0
    for r in entry.results:
        if entry.header.executed and r.passed is not None and (r.runs or 0) > 0:
            passed[r.query] = r.passed
        else:
            invalid += 1
    return _Verdicts(
        entry.header,
        passed,
        invalid,
        tuple(r.query for r in entry.results),
        {r.query: r.should_trigger for r in entry.results},
    )


def _eval_valid(r: EvalResult) -> bool:
    return not r.runtime_error and r.passed is not None


def _eval_verdicts(header: EntryHeader, results: Sequence[EvalResult]) -> _Verdicts:
    passed: dict[str, bool] = {}
    invalid = 0
    for r in results:
        if header.executed and _eval_valid(r) and r.passed is not None:
            passed[r.id] = r.passed
        else:
            invalid += 1
    return _Verdicts(header, passed, invalid, tuple(r.id for r in results), {})


def _rate(v: _Verdicts) -> Rate:
    n = len(v.passed)
    k = sum(v.passed.values())
    return Rate(
        passed=k,
        n=n,
        invalid=v.invalid,
        rate=round6(k / n) if n else None,
        ci=wilson(k, n),
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


def _trigger_failing(entry: TriggersEntry, base: _Verdicts | None) -> tuple[FailingCase, ...]:
    out: list[FailingCase] = []
    valid = _trigger_verdicts(entry).passed
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
        elif not valid[r.query]:
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


def _eval_failing(entry: EvalsEntry, base: _Verdicts | None) -> tuple[FailingCase, ...]:
    out: list[FailingCase] = []
    valid = _eval_verdicts(entry.header, entry.results).passed
    for r in entry.results:
        if r.id not in valid:
            detail = r.runtime_error or (
                "not executed (count-only)" if not entry.header.executed else "no verdict"
            )
            out.append(FailingCase(key=r.id, name=r.name, status=CaseStatus.ERRORED, detail=detail))
        elif not valid[r.id]:
            out.append(
                FailingCase(
                    key=r.id, name=r.name, status=_status(r.id, base), detail=_eval_detail(r)
                )
            )
    return tuple(out)


def _status(key: str, base: _Verdicts | None) -> CaseStatus:
    if base is None or key not in base.passed:
        return CaseStatus.NO_BASE
    return CaseStatus.REGRESSED if base.passed[key] else CaseStatus.STILL_FAILING


def _paired(base: _Verdicts, head: _Verdicts) -> tuple[Flips, int]:
    shared = [
        k
        for k in head.order
        if k in head.passed
        and k in base.passed
        and base.expect.get(k, False) == head.expect.get(k, False)
    ]
    down = sum(1 for k in shared if base.passed[k] and not head.passed[k])
    up = sum(1 for k in shared if not base.passed[k] and head.passed[k])
    valid_keys = set(base.passed) | set(head.passed)
    return Flips(shared=len(shared), down=down, up=up), len(valid_keys) - len(shared)


def _compare_tier(
    tier: Tier,
    base: _Verdicts | None,
    head: _Verdicts | None,
    failing: tuple[FailingCase, ...],
    lifts: tuple[float | None, float | None],
) -> TierComparison:
    brate = _rate(base) if base is not None else None
    hrate = _rate(head) if head is not None else None
    bn = brate.n if brate is not None else 0
    hn = hrate.n if hrate is not None else 0
    flips: Flips | None = None
    more: int | None = None
    unpaired = 0
    why = _incomparable(base.header, head.header) if base and head else None
    if why is not None:
        label, reason = Label.NOT_COMPARABLE, f"different {why}: the sides measure different things"
    elif head is None or (bn and not hn):
        label, unpaired = Label.REMOVED, bn
        reason = (
            f"no valid head verdicts ({hrate.invalid} without one)"
            if hrate is not None
            else "no head results for this tier"
        )
    elif base is None or (hn and not bn):
        label, unpaired = Label.NEW, hn
        reason = (
            f"no valid base verdicts ({brate.invalid} without one)"
            if brate is not None
            else "no base results for this tier"
        )
    else:
        flips, unpaired = _paired(base, head)
        verdict = classify(flips)
        label, reason, more = verdict.label, verdict.reason, verdict.more_cases
    delta = None
    if brate is not None and hrate is not None and brate.rate is not None:
        delta = round6(hrate.rate - brate.rate) if hrate.rate is not None else None
    return TierComparison(
        tier=tier,
        label=label,
        reason=reason,
        base=brate,
        head=hrate,
        delta=delta,
        flips=flips,
        more_cases=more,
        unpaired=unpaired,
        lift_base=lifts[0],
        lift_head=lifts[1],
        failing=failing,
    )


def _triggers(b: TriggersEntry | None, h: TriggersEntry | None) -> TierComparison | None:
    if b is None and h is None:
        return None
    bv = _trigger_verdicts(b) if b is not None else None
    hv = _trigger_verdicts(h) if h is not None else None
    failing = _trigger_failing(h, bv) if h is not None else ()
    return _compare_tier(Tier.TRIGGERS, bv, hv, failing, (None, None))


def _evals(b: EvalsEntry | None, h: EvalsEntry | None) -> TierComparison | None:
    if b is None and h is None:
        return None
    bv = _eval_verdicts(b.header, b.results) if b is not None else None
    hv = _eval_verdicts(h.header, h.results) if h is not None else None
    failing = _eval_failing(h, bv) if h is not None else ()
    lifts = (
        _lift(b, _rate(bv) if bv is not None else None),
        _lift(h, _rate(hv) if hv is not None else None),
    )
    return _compare_tier(Tier.EVALS, bv, hv, failing, lifts)


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
    evidence: SkillEvidence, *, models: Collection[str] | None = None
) -> tuple[ComparisonRow, ...]:
    """The rows of one touched skill: one per model key on either side, sorted by key.

    `models`, when given, restricts the rows to those keys (e.g. the models this run selected).
    A key on the head only is `new`, on the base only `removed`.
    """
    bmodels = evidence.base.models if evidence.base is not None else {}
    hmodels = evidence.head.models if evidence.head is not None else {}
    rows: list[ComparisonRow] = []
    for key in sorted(set(bmodels) | set(hmodels)):
        if models is not None and key not in models:
            continue
        b, h = bmodels.get(key), hmodels.get(key)
        trig = _triggers(b.triggers if b else None, h.triggers if h else None)
        evs = _evals(b.evals if b else None, h.evals if h else None)
        if trig is None and evs is None:
            continue
        if b is None:
            label = Label.NEW
        elif h is None:
            label = Label.REMOVED
        else:
            present = {t.label for t in (trig, evs) if t is not None}
            label = next(lbl for lbl in _PRIORITY if lbl in present)
        display, harness = _display(h, b)
        rows.append(
            ComparisonRow(
                plugin=evidence.plugin,
                skill=evidence.skill,
                model_key=key,
                display=display or key,
                harness=harness,
                label=label,
                triggers=trig,
                evals=evs,
            )
        )
    return tuple(rows)


def compare(
    skills: Iterable[SkillEvidence], *, models: Collection[str] | None = None
) -> tuple[ComparisonRow, ...]:
    """The rows of every touched skill, sorted by (plugin, skill, model key)."""
    rows = [r for ev in skills for r in compare_skill(ev, models=models)]
    return tuple(sorted(rows, key=lambda r: (r.plugin, r.skill, r.model_key)))


def label_counts(rows: Iterable[ComparisonRow]) -> dict[Label, int]:
    """Rows per label, in `Label` order, labels with no rows omitted."""
    counts = dict.fromkeys(Label, 0)
    for r in rows:
        counts[r.label] += 1
    return {lbl: c for lbl, c in counts.items() if c}
