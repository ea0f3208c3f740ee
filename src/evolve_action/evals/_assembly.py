"""Eval staging and result assembly: the per-case pieces of the Tier 2 engine (split from `evals`).

Owns: staging a case's workspace (`stage_workspace`: fixtures copied byte-for-byte before
`git init`, only the skill under test installed, none for a baseline; engine spec §4.3, §9.2)
and turning one finished run into a results row (`CaseRun`, `build_result`, `graded_assertions`,
`error_detail`; §12.2). The package `__init__` exports its public names.

Guarantees: result assembly is pure (no I/O, no clock); a missing or escaping fixture is a
`SpecError` naming the eval and the fixture. Never does: run agents, grade, plan or write
results (see `evals`, `grading`, `plan`, `results`).
"""

from __future__ import annotations

import collections
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evolve_action import grading, harness, specs
from evolve_action import results as res
from evolve_action.catalog import BoundModel, measured_cost_usd
from evolve_action.encoding import round1, tail_bytes, trim_space
from evolve_action.errors import SpecError
from evolve_action.harness import Transcript, create_workspace

__all__ = [
    "CaseRun",
    "build_result",
    "error_detail",
    "graded_assertions",
    "stage_workspace",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseRun:
    """One finished agent run of a case (with or without the skill), graded or errored."""

    transcript: Transcript
    runtime_error: str
    graded: grading.GradedCase | None
    """None when the run errored (never graded), or for a suite case (see `suite`)."""
    workspace: Path
    suite: grading.SuiteGrade | None = None
    """A suite case's grade (its evaluators' scores and verdict)."""


# ---------------------------------------------------------------------------------------------
# Workspaces


def _check_dest(dest: str, label: str = "") -> str:
    clean = posixpath.normpath(dest.replace("\\", "/"))
    if clean.startswith("/") or clean == ".." or clean.startswith("../") or clean == ".":
        where = f"{label}: " if label else ""
        raise SpecError(f'{where}fixture path "{dest}" escapes the workspace')
    return clean


def stage_workspace(
    case: specs.EvalCase,
    *,
    skill_dir: Path | None,
    environ: Mapping[str, str],
    baseline: bool = False,
) -> Path:
    """A fresh `evals.*` (or `baseline.*`) workspace for `case` (engine spec §4.3, §9.2).

    Fixtures land at their staged destination (`files/a/b` → `a/b`, other refs by basename),
    byte-for-byte with mode 0644; only `skill_dir` is installed under `.claude/skills/` (none for a
    baseline); then `git init` and one commit holding everything. A missing fixture raises
    `SpecError` (`fixture <dest>: <error>`), which aborts the sweep as in evolve.
    """
    files: list[tuple[str, bytes]] = []
    for ref in case.fixtures:
        dest = _check_dest(ref.dest, case.label)
        if harness.escapes(ref.source, harness.repository_root(ref.source.parent)):
            # never follow a link out of the repository into a workspace
            raise SpecError(
                f"{case.label}: fixture {dest}: a symlink leaving the repository",
                path=ref.source,
                hint="fixtures must be files inside the repository (`run checks` reports these)",
            )
        try:
            data = ref.source.read_bytes()
        except OSError as exc:
            raise SpecError(
                f"{case.label}: fixture {dest}: {exc.strerror or exc}",
                path=ref.source,
                hint=(
                    "add the file or fix the eval's `files`; results of finished cases are "
                    "already saved (re-run with --new to continue)"
                ),
            ) from None
        files.append((dest, data))
    skills = [] if baseline or skill_dir is None else [skill_dir]
    return create_workspace(
        prefix="baseline." if baseline else "evals.",
        skills=skills,
        environ=environ,
        files=files,
    )


# ---------------------------------------------------------------------------------------------
# Result assembly (pure)


def _measured(t: Transcript, model: BoundModel) -> res.Measured | None:
    u = t.usage
    if u is None:
        return None
    cost = measured_cost_usd(
        model.model.pricing,
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens or 0,
        cache_read_input_tokens=u.cache_read_input_tokens,
        cache_creation_input_tokens=u.cache_creation_input_tokens,
        reported_usd=t.total_cost_usd,
    )
    return res.Measured(
        input_tokens=u.input_tokens,
        cache_read_input_tokens=u.cache_read_input_tokens,
        cache_creation_input_tokens=u.cache_creation_input_tokens,
        output_tokens=u.output_tokens,
        cost_usd=cost,
    )


def _metrics(t: Transcript) -> res.ExecutionMetrics:
    counts = collections.Counter(c.name for c in t.tool_calls)
    return res.ExecutionMetrics(
        tool_calls=dict(sorted(counts.items())), total_tool_calls=len(t.tool_calls)
    )


def graded_assertions(
    assertions: Sequence[specs.Assertion], verdicts: Sequence[grading.Verdict]
) -> tuple[res.GradedAssertion, ...]:
    """Results `expectations`: the normalised assertion echo, `text` = describe(), verdict, source."""
    return tuple(
        res.GradedAssertion(
            type=a.type,
            path=a.path,
            pattern=a.pattern,
            run=a.run,
            cwd=a.cwd,
            tool=a.tool,
            requires=a.requires,
            expect_exit=a.expect_exit,
            text=a.describe(),
            passed=v.passed,
            evidence=v.evidence,
            source=str(a.source),
        )
        for a, v in zip(assertions, verdicts, strict=True)
    )


def build_result(
    case: specs.EvalCase,
    run: CaseRun,
    *,
    model: BoundModel,
    fingerprint_hex: str,
    estimate: res.Estimate | None,
    baseline: bool = False,
) -> res.EvalResult:
    """The eval result of one run (§12.2); a baseline result carries `fingerprint`, no estimate/hash."""
    timing_secs = round1(run.transcript.duration_seconds)
    spec_hash = "" if baseline else fingerprint_hex
    fp = fingerprint_hex if baseline else ""
    est = None if baseline else estimate
    if run.runtime_error or (run.graded is None and run.suite is None):
        return res.EvalResult(
            id=case.id,
            name=case.name,
            runtime_error=run.runtime_error or "not graded",
            estimate=est,
            timing=res.Timing(executor_duration_seconds=timing_secs),
            spec_hash=spec_hash,
            fingerprint=fp,
        )
    if run.suite is not None:  # a suite case: its evaluators' grade
        passed, expectations = run.suite.passed, tuple(grading.suite_expectations(run.suite))
    else:
        graded = run.graded
        assert graded is not None  # the error branch above took ungraded runs
        passed, expectations = (
            graded.passed,
            tuple(graded_assertions(case.assertions, graded.verdicts)),
        )
    measured = _measured(run.transcript, model)
    return res.EvalResult(
        id=case.id,
        name=case.name,
        passed=passed,
        estimate=est,
        measured=measured,
        expectations=expectations,
        summary=res.summarise_grades(expectations),
        execution_metrics=_metrics(run.transcript),
        timing=res.Timing(
            total_tokens=measured.total_tokens if measured is not None else None,
            executor_duration_seconds=timing_secs,
        ),
        spec_hash=spec_hash,
        fingerprint=fp,
    )


def error_detail(t: Transcript, reason: str) -> str:
    """evolve's `[ERROR]` detail: the reason plus the trimmed stderr tail (last 200 bytes)."""
    tail = " ".join(trim_space(t.stderr_tail).split("\n"))
    if len(tail.encode("utf-8")) > 200:
        tail = "…" + tail_bytes(tail, 200)
    if reason and tail:
        return f"{reason}; stderr: {tail}"
    return reason or tail or "(no error output)"
