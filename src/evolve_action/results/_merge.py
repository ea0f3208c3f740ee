"""Pure operations on results entries: summaries, partial-rerun merge, snapshot rotation.

Owns: summary aggregation (`summarise_triggers`, `summarise_evals`, `summarise_grades`, report
spec §1.3); `merge_cases` (engine spec §7.3); entry replacement with `previous` rotation and the
without-skill `baseline` (`replace_trigger_entry`, `replace_eval_entry`, `trim_eval_result`,
§1.4–1.5); `with_entry`, `foreign_model_keys` and `drop_models`.

Guarantees: pure functions of their arguments (new values are built, nothing is mutated);
rounding is Go's (`round1`, `round6`) exactly where evolve applies it. Never does: I/O, decide
which cases run (see `plan`), encode (see `_codec`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

import msgspec

from evolve_action.encoding import round1, round6
from evolve_action.results._model import (
    SCHEMA_VERSION,
    EntryHeader,
    Estimate,
    EvalResult,
    EvalsEntry,
    EvalSnapshot,
    EvalSummary,
    GradeSummary,
    Measured,
    ModelEntry,
    ResultsFile,
    Timing,
    TriggerResult,
    TriggersEntry,
    TriggerSnapshot,
    TriggerSummary,
)

__all__ = [
    "drop_models",
    "foreign_model_keys",
    "merge_cases",
    "replace_eval_entry",
    "replace_trigger_entry",
    "summarise_evals",
    "summarise_grades",
    "summarise_triggers",
    "trim_eval_result",
    "with_entry",
]


# --------------------------------------------------------------------------------------------
# Summaries (report spec §1.3)
# --------------------------------------------------------------------------------------------


def _sum_estimates(estimates: Iterable[Estimate | None]) -> Estimate | None:
    present = [e for e in estimates if e is not None]
    if not present:
        return None
    tokens = 0
    cost = 0.0
    any_cost = False
    for e in present:
        tokens += e.input_tokens
        if e.input_cost_usd is not None:
            cost += e.input_cost_usd
            any_cost = True
    return Estimate(input_tokens=tokens, input_cost_usd=round6(cost) if any_cost else None)


def _sum_measured(items: Iterable[Measured | None]) -> Measured | None:
    sums: dict[str, int] = {}
    cost = 0.0
    any_cost = False
    for m in items:
        if m is None:
            continue
        for name in (
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
            "output_tokens",
        ):
            v = getattr(m, name)
            if v is not None:
                sums[name] = sums.get(name, 0) + v
        if m.cost_usd is not None:
            cost += m.cost_usd
            any_cost = True
    if not sums and not any_cost:
        return None
    return Measured(
        input_tokens=sums.get("input_tokens"),
        cache_read_input_tokens=sums.get("cache_read_input_tokens"),
        cache_creation_input_tokens=sums.get("cache_creation_input_tokens"),
        output_tokens=sums.get("output_tokens"),
        cost_usd=round6(cost) if any_cost else None,
    )


def _mean1(values: Sequence[float]) -> float | None:
    if not values:
        return None
    total = 0.0
    for v in values:
        total += v
    return round1(total / len(values))


def summarise_triggers(
    results: Sequence[TriggerResult], *, executed: bool = True
) -> TriggerSummary:
    """Summary over an entry's merged trigger results (§1.3); count-only gets total + estimate."""
    estimate = _sum_estimates(r.estimate for r in results)
    if not executed:
        return TriggerSummary(total=len(results), estimate=estimate)
    passed = sum(1 for r in results if r.passed is True)
    failed = sum(1 for r in results if r.passed is False)
    rate = round6(passed / (passed + failed)) if passed + failed > 0 else None
    secs = [r.avg_run_seconds for r in results if r.avg_run_seconds is not None]
    return TriggerSummary(
        passed=passed,
        failed=failed,
        total=len(results),
        pass_rate=rate,
        avg_run_seconds=_mean1(secs),
        estimate=estimate,
    )


def summarise_evals(results: Sequence[EvalResult], *, executed: bool = True) -> EvalSummary:
    """Summary over an entry's merged eval results (§1.3).

    Errored (`runtime_error`) and verdict-less results are excluded from `pass_rate`; errored
    ones still count in `avg_run_seconds` because they carry timing. Count-only gets only
    `total` and `estimate`.
    """
    estimate = _sum_estimates(r.estimate for r in results)
    if not executed:
        return EvalSummary(total=len(results), estimate=estimate)
    passed = failed = errored = 0
    for r in results:
        if r.runtime_error:
            errored += 1
        elif r.passed is True:
            passed += 1
        elif r.passed is False:
            failed += 1
    rate = round6(passed / (passed + failed)) if passed + failed > 0 else None
    secs = [
        r.timing.executor_duration_seconds
        for r in results
        if r.timing is not None and r.timing.executor_duration_seconds is not None
    ]
    return EvalSummary(
        passed=passed,
        failed=failed,
        errored=errored or None,
        total=len(results),
        pass_rate=rate,
        avg_run_seconds=_mean1(secs),
        estimate=estimate,
        measured=_sum_measured(r.measured for r in results),
    )


class _Graded(Protocol):
    @property
    def passed(self) -> bool | None: ...


def summarise_grades(assertions: Sequence[_Graded]) -> GradeSummary:
    """A case's grade summary: skips (`passed is None`) are counted apart and excluded from the rate.

    Takes stored `GradedAssertion`s or fresh `grading.Verdict`s: the one definition of the counts
    and `pass_rate = round6(p/(p+f))` (None when nothing executed).
    """
    passed = sum(1 for a in assertions if a.passed is True)
    failed = sum(1 for a in assertions if a.passed is False)
    skipped = sum(1 for a in assertions if a.passed is None)
    rate = round6(passed / (passed + failed)) if passed + failed > 0 else None
    return GradeSummary(
        passed=passed, failed=failed, total=len(assertions), pass_rate=rate, skipped=skipped
    )


# --------------------------------------------------------------------------------------------
# Replacing an entry: merge (§1.5 / engine §7.3), previous rotation and baseline (§1.4)
# --------------------------------------------------------------------------------------------

_R = TypeVar("_R", TriggerResult, EvalResult)


def merge_cases(
    valid_keys: Sequence[str],
    fresh: Mapping[str, _R],
    stored: Sequence[_R],
    key: Callable[[_R], str],
) -> tuple[_R, ...]:
    """Walk the cases valid for this model in authored order: fresh result, else stored, else none.

    Cases removed from the spec are pruned; cases never run stay absent. A key listed twice
    (a duplicate query, which checks reject) is kept once, at its first position.
    """
    by_key: dict[str, _R] = {}
    for r in stored:
        by_key.setdefault(key(r), r)
    out: list[_R] = []
    seen: set[str] = set()
    for k in valid_keys:
        if k in seen:
            continue
        seen.add(k)
        picked = fresh.get(k)
        if picked is None:
            picked = by_key.get(k)
        if picked is not None:
            out.append(picked)
    return tuple(out)


def _final_header(header: EntryHeader, old: EntryHeader | None, complete: bool) -> EntryHeader:
    # While a unit is still running, keep the stored content hash: the entry's content hash
    # covers every result in it, and refreshing it early would hide the staleness of cases that
    # have not re-run yet from a later `--modified` (engine spec §13.8). Set on the last write.
    if complete or old is None or not old.content_hash:
        return header
    return msgspec.structs.replace(header, content_hash=old.content_hash)


def replace_trigger_entry(
    old: TriggersEntry | None,
    *,
    header: EntryHeader,
    fresh: Mapping[str, TriggerResult],
    valid_queries: Sequence[str],
    complete: bool = True,
) -> TriggersEntry:
    """The entry to store after a trigger unit ran `fresh` (keyed by query), per §1.4.

    `valid_queries` are the spec's queries valid for this model (model restriction applied,
    selection filters ignored), in authored order. `header` is the new header (`ran_at` now,
    fresh `content_hash`, `runs_per_query` when executed). `complete=False` marks an
    intermediate write while the unit still has cases in flight (see `_final_header`).
    """
    merged = merge_cases(valid_queries, fresh, old.results if old else (), lambda r: r.query)
    executed = header.executed
    if executed:
        previous = (
            TriggerSnapshot(ran_at=old.header.ran_at, summary=old.summary, results=old.results)
            if old is not None and old.header.executed
            else None
        )
    else:
        previous = old.previous if old is not None else None
    return TriggersEntry(
        header=_final_header(header, old.header if old else None, complete),
        results=merged,
        summary=summarise_triggers(merged, executed=executed),
        previous=previous,
    )


def trim_eval_result(r: EvalResult) -> EvalResult:
    """The snapshot form of an eval result: id, runtime_error, passed, estimate, measured,
    grade summary, fingerprint and `timing` reduced to `executor_duration_seconds`."""
    return EvalResult(
        id=r.id,
        runtime_error=r.runtime_error,
        passed=r.passed,
        estimate=r.estimate,
        measured=r.measured,
        summary=r.summary,
        timing=(
            Timing(executor_duration_seconds=r.timing.executor_duration_seconds)
            if r.timing is not None
            else None
        ),
        fingerprint=r.fingerprint,
    )


def _eval_snapshot(old: EvalsEntry) -> EvalSnapshot:
    return EvalSnapshot(
        ran_at=old.header.ran_at,
        summary=old.summary,
        results=tuple(trim_eval_result(r) for r in old.results),
    )


def _new_baseline(
    old: EvalSnapshot | None,
    fresh_baselines: Mapping[str, EvalResult],
    merged: Sequence[EvalResult],
    now: str,
) -> EvalSnapshot | None:
    by_id: dict[str, EvalResult] = {}
    if old is not None:
        for r in old.results:
            by_id.setdefault(r.id, r)
    for k, r in fresh_baselines.items():
        by_id[k] = trim_eval_result(r)
    kept = tuple(by_id[r.id] for r in merged if r.id in by_id)
    if not kept:
        return None
    ran_at = now if fresh_baselines else (old.ran_at if old is not None else now)
    return EvalSnapshot(ran_at=ran_at, summary=summarise_evals(kept), results=kept)


def replace_eval_entry(
    old: EvalsEntry | None,
    *,
    header: EntryHeader,
    fresh: Mapping[str, EvalResult],
    valid_ids: Sequence[str],
    fresh_baselines: Mapping[str, EvalResult] | None = None,
    complete: bool = True,
) -> EvalsEntry:
    """The entry to store after an eval unit ran `fresh` (keyed by id), per §1.4.

    `valid_ids` are the eval ids valid for this model, in authored order (ids are not narrowed
    by `--eval`: unlike evolve we keep other evals' stored results, engine spec §13.10b).
    `fresh_baselines` are the without-skill results re-run now, each with `fingerprint` set; they
    are overlaid on the stored baseline, pruned to the merged ids, and re-summarised. A count-only
    run (`header.executed` false) carries `previous` and `baseline` over unchanged.
    """
    merged = merge_cases(valid_ids, fresh, old.results if old else (), lambda r: r.id)
    executed = header.executed
    if executed:
        previous = _eval_snapshot(old) if old is not None and old.header.executed else None
        baseline = _new_baseline(
            old.baseline if old is not None else None, fresh_baselines or {}, merged, header.ran_at
        )
    else:
        previous = old.previous if old is not None else None
        baseline = old.baseline if old is not None else None
    return EvalsEntry(
        header=_final_header(header, old.header if old else None, complete),
        results=merged,
        summary=summarise_evals(merged, executed=executed),
        baseline=baseline,
        previous=previous,
    )


def with_entry(
    file: ResultsFile,
    model_key: str,
    *,
    triggers: TriggersEntry | None = None,
    evals: EvalsEntry | None = None,
) -> ResultsFile:
    """A copy of `file` with the given tier entries of `model_key` replaced (others kept)."""
    cur = file.models.get(model_key, ModelEntry())
    new = ModelEntry(
        triggers=triggers if triggers is not None else cur.triggers,
        evals=evals if evals is not None else cur.evals,
    )
    models = dict(file.models)
    models[model_key] = new
    return msgspec.structs.replace(file, schema=SCHEMA_VERSION, models=models)


def foreign_model_keys(file: ResultsFile, active: Iterable[str]) -> list[str]:
    """Model keys stored in `file` that are not in `active`, sorted (engine spec §7.5)."""
    act = set(active)
    return sorted(k for k in file.models if k not in act)


def drop_models(file: ResultsFile, keys: Iterable[str]) -> ResultsFile:
    """A copy of `file` without the given model keys (`--stale-results=drop`)."""
    gone = set(keys)
    return msgspec.structs.replace(
        file, models={k: v for k, v in file.models.items() if k not in gone}
    )
