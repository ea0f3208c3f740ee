"""skill-creator's workspace documents from one results entry (seed 003's `references/schemas.md`):
`grading_json`, `timing_json`, `eval_metadata_json`, `benchmark_json` and `benchmark_markdown`.

Owns: those pure builders. Guarantees: deterministic (no clock), field names exactly the
documented ones (see `flows._export`, which writes them). Never does: read or write files.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evolve_action.results import (
    EvalResult,
    EvalsEntry,
    GradedAssertion,
    ResultsFile,
)

WITH, WITHOUT = "with_skill", "without_skill"
"""The two configurations of a run, as skill-creator names them."""


def _seconds(result: EvalResult) -> float | None:
    t = result.timing
    if t is None:
        return None
    if t.total_duration_seconds is not None:
        return t.total_duration_seconds
    if t.executor_duration_seconds is not None:
        return t.executor_duration_seconds
    if t.duration_ms is not None:
        return t.duration_ms / 1000
    return None


# ---------------------------------------------------------------------------------------------
# skill-creator artefacts


def _expectation(e: GradedAssertion) -> dict[str, Any]:
    return {"text": e.text, "passed": bool(e.passed), "evidence": e.evidence}


def grading_json(result: EvalResult) -> dict[str, Any]:
    """skill-creator's `grading.json` for one run (`references/schemas.md`; seed 003).

    `expectations[{text, passed, evidence}]` (skipped ones listed under
    `user_notes_summary.uncertainties` instead), `summary{passed, failed, total, pass_rate}`,
    seed 003's top-level `pass_rate` and `metrics`, `execution_metrics` and `timing` when
    measured, and empty `claims`.
    """
    graded = [e for e in result.expectations if e.passed is not None]
    skipped = [e for e in result.expectations if e.passed is None]
    s = result.summary
    if s is not None:
        passed, failed, total = s.passed, s.failed, s.passed + s.failed  # skips left out
        rate = s.pass_rate
    else:
        passed = sum(1 for e in graded if e.passed)
        failed = len(graded) - passed
        total = len(graded)
        rate = None
    if rate is None:
        rate = passed / total if total else 0.0
    notes: list[str] = [f"skipped: {e.text} — {e.evidence}" for e in skipped]
    if result.runtime_error:
        notes.insert(0, f"runtime error: {result.runtime_error}")
    doc: dict[str, Any] = {
        "expectations": [_expectation(e) for e in graded],
        "summary": {"passed": passed, "failed": failed, "total": total, "pass_rate": rate},
        "pass_rate": rate,
    }
    em = result.execution_metrics
    metrics: dict[str, Any] = {}
    secs = _seconds(result)
    if secs is not None:
        metrics["execution_time_ms"] = round(secs * 1000)
    tokens = _total_tokens(result)
    if tokens is not None:
        metrics["tokens_used"] = tokens
    if em is not None and em.total_tool_calls is not None:
        metrics["tool_calls"] = em.total_tool_calls
    doc["metrics"] = metrics
    if em is not None:
        doc["execution_metrics"] = {
            "tool_calls": dict(em.tool_calls),
            "total_tool_calls": em.total_tool_calls or 0,
            "total_steps": em.total_steps or 0,
            "files_created": list(em.files_created),
            "errors_encountered": em.errors_encountered or 0,
            "output_chars": em.output_chars or 0,
            "transcript_chars": em.transcript_chars or 0,
        }
    if secs is not None:
        doc["timing"] = {"executor_duration_seconds": secs, "total_duration_seconds": secs}
    doc["claims"] = []
    doc["user_notes_summary"] = {"uncertainties": notes, "needs_review": [], "workarounds": []}
    return doc


def _total_tokens(result: EvalResult) -> int | None:
    if result.timing is not None and result.timing.total_tokens is not None:
        return result.timing.total_tokens
    return result.measured.total_tokens if result.measured is not None else None


def timing_json(result: EvalResult) -> dict[str, Any]:
    """skill-creator's `timing.json`: `total_tokens`, `duration_ms`, `total_duration_seconds`
    (0 when the results file did not measure it)."""
    secs = _seconds(result)
    tokens = _total_tokens(result)
    doc: dict[str, Any] = {
        "total_tokens": tokens or 0,
        "duration_ms": round(secs * 1000) if secs is not None else 0,
        "total_duration_seconds": round(secs, 3) if secs is not None else 0.0,
    }
    if secs is not None:
        doc["executor_duration_seconds"] = secs
    return doc


def eval_metadata_json(number: int, result: EvalResult, prompt: str) -> dict[str, Any]:
    """skill-creator's `eval_metadata.json`: `eval_id` (an integer, as the viewer sorts on it),
    `eval_name` (evolve's id), `prompt` and `assertions[{id, text}]`."""
    return {
        "eval_id": number,
        "eval_name": result.name or result.id,
        "prompt": prompt,
        "assertions": [
            {"id": f"assertion-{i}", "text": e.text} for i, e in enumerate(result.expectations, 1)
        ],
    }


def _stats(values: Sequence[float]) -> dict[str, float]:
    """skill-creator's `calculate_stats`: mean, sample stddev, min, max, rounded to 4 places."""
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    n = len(values)
    mean = sum(values) / n
    stddev = math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1)) if n > 1 else 0.0
    return {
        "mean": round(mean, 4),
        "stddev": round(stddev, 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def _run_entry(number: int, name: str, configuration: str, r: EvalResult) -> dict[str, Any]:
    g = grading_json(r)
    t = timing_json(r)
    s = g["summary"]
    errors = (r.execution_metrics.errors_encountered or 0) if r.execution_metrics else 0
    return {
        "eval_id": number,
        "eval_name": name,
        "configuration": configuration,
        "config": configuration,
        "run_number": 1,
        "pass_rate": s["pass_rate"],
        "result": {
            "pass_rate": s["pass_rate"],
            "passed": s["passed"],
            "failed": s["failed"],
            "total": s["total"],
            "time_seconds": t["total_duration_seconds"],
            "tokens": t["total_tokens"],
            "tool_calls": g["metrics"].get("tool_calls", 0),
            "errors": errors + (1 if r.runtime_error else 0),
        },
        "expectations": g["expectations"],
        "notes": g["user_notes_summary"]["uncertainties"],
    }


def _ordered(entry: EvalsEntry) -> list[tuple[int, str, EvalResult | None, EvalResult | None]]:
    """(number, id, with-skill result, baseline result) in stored order; numbers from 1."""
    base = {r.id: r for r in (entry.baseline.results if entry.baseline is not None else ())}
    out: list[tuple[int, str, EvalResult | None, EvalResult | None]] = []
    seen: set[str] = set()
    for r in entry.results:
        out.append((len(out) + 1, r.id, r, base.get(r.id)))
        seen.add(r.id)
    for rid, b in base.items():
        if rid not in seen:
            out.append((len(out) + 1, rid, None, b))
    return out


def benchmark_json(
    rf: ResultsFile, model: str, entry: EvalsEntry, *, skill_path: str = ""
) -> dict[str, Any]:
    """skill-creator's `benchmark.json` for one skill × model (one run per configuration).

    The viewer's shape (`metadata`, `runs[]` with `configuration` and a nested `result`,
    `run_summary` with `with_skill`/`without_skill` stats and `delta` strings, `notes`), plus seed
    003's `summaries{<config>{mean_pass_rate, stddev}}` and `deltas{pass_rate_delta,
    tokens_delta}`. Runs with a runtime error are listed but left out of the statistics.
    """
    runs: list[dict[str, Any]] = []
    counted: dict[str, list[EvalResult]] = {WITH: [], WITHOUT: []}
    names: list[str] = []
    for number, rid, with_r, base_r in _ordered(entry):
        name = (with_r.name if with_r is not None and with_r.name else "") or rid
        names.append(rid)
        for configuration, r in ((WITH, with_r), (WITHOUT, base_r)):
            if r is None:
                continue
            run = _run_entry(number, name, configuration, r)
            runs.append(run)
            if not r.runtime_error:
                counted[configuration].append(r)
    summary: dict[str, Any] = {}
    for configuration in (WITH, WITHOUT):
        rs = counted[configuration]
        # a figure the results file did not measure is left out (never counted as 0)
        summary[configuration] = {
            "pass_rate": _stats([grading_json(r)["summary"]["pass_rate"] for r in rs]),
            "time_seconds": _stats([s for r in rs if (s := _seconds(r)) is not None]),
            "tokens": _stats([t for r in rs if (t := _total_tokens(r)) is not None]),
        }
    a, b = summary[WITH], summary[WITHOUT]
    d_rate = a["pass_rate"]["mean"] - b["pass_rate"]["mean"]
    d_time = a["time_seconds"]["mean"] - b["time_seconds"]["mean"]
    d_tokens = a["tokens"]["mean"] - b["tokens"]["mean"]
    summary["delta"] = {
        "pass_rate": f"{d_rate:+.2f}",
        "time_seconds": f"{d_time:+.1f}",
        "tokens": f"{d_tokens:+.0f}",
    }
    notes = []
    if entry.baseline is None:
        notes.append("no baseline (without-skill) results are stored for this model")
    errored = sum(
        1 for _, _, w, b in _ordered(entry) for r in (w, b) if r is not None and r.runtime_error
    )
    if errored:
        notes.append(
            f"{errored} run(s) ended in a runtime error and are left out of the statistics"
        )
    return {
        "metadata": {
            "skill_name": rf.skill,
            "skill_path": skill_path,
            "executor_model": model,
            "analyzer_model": "",
            "timestamp": entry.header.ran_at,
            "evals_run": names,
            "runs_per_configuration": 1,
        },
        "runs": runs,
        "run_summary": summary,
        "summaries": {
            c: {
                "mean_pass_rate": summary[c]["pass_rate"]["mean"],
                "stddev": summary[c]["pass_rate"]["stddev"],
            }
            for c in (WITH, WITHOUT)
        },
        "deltas": {"pass_rate_delta": round(d_rate, 4), "tokens_delta": round(d_tokens)},
        "notes": notes,
    }


def benchmark_markdown(benchmark: Mapping[str, Any]) -> str:
    """`benchmark.md` as skill-creator's `aggregate_benchmark.py` writes it."""
    meta = benchmark["metadata"]
    rs = benchmark["run_summary"]
    a, b, d = rs[WITH], rs[WITHOUT], rs["delta"]
    lines = [
        f"# Skill Benchmark: {meta['skill_name']}",
        "",
        f"**Model**: {meta['executor_model']}",
        f"**Date**: {meta['timestamp']}",
        f"**Evals**: {', '.join(map(str, meta['evals_run']))} "
        f"({meta['runs_per_configuration']} runs each per configuration)",
        "",
        "## Summary",
        "",
        "| Metric | With Skill | Without Skill | Delta |",
        "|--------|------------|---------------|-------|",
        f"| Pass Rate | {a['pass_rate']['mean'] * 100:.0f}% ± {a['pass_rate']['stddev'] * 100:.0f}% "
        f"| {b['pass_rate']['mean'] * 100:.0f}% ± {b['pass_rate']['stddev'] * 100:.0f}% "
        f"| {d['pass_rate']} |",
        f"| Time | {a['time_seconds']['mean']:.1f}s ± {a['time_seconds']['stddev']:.1f}s "
        f"| {b['time_seconds']['mean']:.1f}s ± {b['time_seconds']['stddev']:.1f}s "
        f"| {d['time_seconds']}s |",
        f"| Tokens | {a['tokens']['mean']:.0f} ± {a['tokens']['stddev']:.0f} "
        f"| {b['tokens']['mean']:.0f} ± {b['tokens']['stddev']:.0f} | {d['tokens']} |",
    ]
    if benchmark.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in benchmark["notes"]]
    return "\n".join(lines) + "\n"
