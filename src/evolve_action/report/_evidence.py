"""The per-tier evidence of a comparison: one side (base or head) of one skill × model × tier, read
out of a results entry, with the runs power on demand added.

Owns: a side's valid cases and their run scores (`Side`: `trigger_side`, `eval_side`,
`fresh_side`, `extended`, `eval_powered`, `pad`), its rate (`rate_of`) and the eval lift over
the without-skill baseline (`lift`), whether two sides can be compared (`incomparable`), the
shared cases (`shared_keys`), and the case lists (`trigger_failing`, `eval_failing`,
`flipped_cases`).
Guarantees: pure; errored and verdict-less cases are invalid (never in a side's cases, never
counted as failures); case lists keep the head's result order.
Never does: test or label a change (that is `_compare`), render, I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from evolve_action.encoding import round6
from evolve_action.plan import Tier
from evolve_action.report._rows import CaseStatus, FailingCase, FlippedCase, QueryRuns, Rate, Reruns
from evolve_action.report._stats import (
    Sweep,
    early_stopped,
    wilson,
)
from evolve_action.results import (
    EntryHeader,
    EvalResult,
    EvalsEntry,
    EvalSnapshot,
    TriggerResult,
    TriggersEntry,
)
from evolve_action.triggers import passes

__all__ = [
    "Side",
    "eval_failing",
    "eval_powered",
    "eval_side",
    "extended",
    "flipped_cases",
    "fresh_side",
    "incomparable",
    "lift",
    "pad",
    "rate_of",
    "shared_keys",
    "trigger_failing",
    "trigger_side",
]


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
class Side:
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


def trigger_side(entry: TriggersEntry) -> Side:
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
    return Side(entry.header, cases, invalid, order, 1, planned if stopped else None)


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
    return tuple(x + y for x, y in pad(a, b))


def pad(
    a: tuple[tuple[int, ...], ...], b: tuple[tuple[int, ...], ...]
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """Pairs of rounds, the shorter side padded with empty rounds."""
    n = max(len(a), len(b))
    return tuple(zip(a + ((),) * (n - len(a)), b + ((),) * (n - len(b)), strict=True))


def fresh_side(runs: Sequence[QueryRuns], header: EntryHeader) -> Side:
    """The base side made of this job's fresh runs of the base's version (fixed size)."""
    cases = {q.query: _query_case(q) for q in runs if q.runs > 0}
    invalid = sum(1 for q in runs if q.runs <= 0)
    return Side(header, cases, invalid, tuple(q.query for q in runs), 1, None)


def extended(side: Side, extra: Sequence[QueryRuns]) -> Side:
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


def eval_side(header: EntryHeader, results: Sequence[EvalResult]) -> Side:
    cases: dict[str, _Case] = {}
    invalid = 0
    for r in results:
        if header.executed and _eval_valid(r):
            cases[r.id] = _eval_case(r)
        else:
            invalid += 1
    return Side(header, cases, invalid, tuple(r.id for r in results), 1)


def rate_of(v: Side) -> Rate:
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


def lift(entry: EvalsEntry | None, rate: Rate | None) -> float | None:
    if entry is None or rate is None or rate.rate is None:
        return None
    base = _snapshot_rate(entry.baseline)
    return None if base is None else round6(rate.rate - base)


def incomparable(base: EntryHeader, head: EntryHeader) -> str | None:
    if (base.provider, base.model) != (head.provider, head.model) and base.model and head.model:
        return f"model {base.provider}/{base.model} → {head.provider}/{head.model}"
    if base.harness and head.harness and base.harness != head.harness:
        return f"harness {base.harness} → {head.harness}"
    return None


def trigger_failing(entry: TriggersEntry, base: Side | None) -> tuple[FailingCase, ...]:
    out: list[FailingCase] = []
    valid = trigger_side(entry).cases
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


def eval_failing(entry: EvalsEntry, base: Side | None) -> tuple[FailingCase, ...]:
    out: list[FailingCase] = []
    valid = eval_side(entry.header, entry.results).cases
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


def _status(key: str, base: Side | None) -> CaseStatus:
    if base is None or key not in base.cases:
        return CaseStatus.NO_BASE
    return CaseStatus.REGRESSED if base.cases[key].passed else CaseStatus.STILL_FAILING


def shared_keys(base: Side, head: Side) -> list[str]:
    return [
        k
        for k in head.order
        if k in head.cases and k in base.cases and base.cases[k].expect == head.cases[k].expect
    ]


def flipped_cases(
    tier: Tier, base: Side, head: Side, shared: Sequence[str], names: dict[str, str]
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


def eval_powered(
    bv: Side | None, hv: Side | None, rr: Reruns, header: EntryHeader
) -> tuple[Side | None, Side | None]:
    """The eval sides with power on demand's runs: a fresh base side (or the stored base's one
    run per case extended), the head's stored run extended; a case run more than once passes
    when at least half its runs passed, and says so in its detail."""
    if rr.base and (rr.base_fresh or bv is None):
        bv = fresh_side(rr.base, header)
    elif rr.base and bv is not None:
        bv = extended(bv, rr.base)
    if rr.head and hv is not None:
        hv = extended(hv, rr.head)
    return _eval_details(bv), _eval_details(hv)


def _eval_details(side: Side | None) -> Side | None:
    if side is None:
        return None
    cases = {
        k: dataclasses.replace(c, detail=f"passed in {sum(c.scores)}/{len(c.scores)} runs")
        if len(c.scores) > 1
        else c
        for k, c in side.cases.items()
    }
    return dataclasses.replace(side, cases=cases)
