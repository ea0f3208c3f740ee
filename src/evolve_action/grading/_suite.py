"""Grading of AgentV / AgentEvals suite cases: every evaluator type, composites, verdict bands.

Owns: running `specs.EvaluatorSpec`s against one finished agent session (`grade_suite_case`), the
verdict bands of the spec (`PASS_THRESHOLD`, `BORDERLINE_THRESHOLD`), required gates, and the
mapping of a grade into evolve's expectation entries (`suite_expectations`).

Guarantees: grading never raises for a bad evaluator, a failing judge script or a judge outage: it is
a scored result (0, with the reason in `misses`/`reasoning`) or `skipped`. Borderline is never a pass.

Never does: print or read `os.environ` (the caller passes `environ`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolve_action.encoding import compile_re2, truncate_bytes
from evolve_action.grading._judge import Judge
from evolve_action.harness import Transcript
from evolve_action.results import GradedAssertion
from evolve_action.specs import EvaluatorSpec

__all__ = [
    "BORDERLINE_THRESHOLD",
    "PASS_THRESHOLD",
    "EvaluatorResult",
    "SuiteContext",
    "SuiteGrade",
    "grade_suite_case",
    "suite_expectations",
    "verdict_for",
]

PASS_THRESHOLD = 0.8
"""A score at or above this is `pass` (AgentEvals 1.0 `verdicts.mdx`)."""
BORDERLINE_THRESHOLD = 0.6
"""A score at or above this (and below `PASS_THRESHOLD`) is `borderline`, which is not a pass."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteContext:
    """Everything evaluators of one case may read about the finished session."""

    case_id: str
    input_text: str
    """The flattened prompt the agent got."""
    expected_output: str | None = None
    expected_messages: tuple[Mapping[str, Any], ...] = ()
    criteria: str = ""
    transcript: Transcript
    workspace: Path
    eval_dir: Path
    """The eval file's directory (`code_judge` cwd)."""
    skill_name: str = ""
    environ: Mapping[str, str]
    judge: Judge | None = None
    timeout_seconds: float = 120.0
    input_messages: tuple[Mapping[str, Any], ...] = ()
    """The raw input messages (for `code_judge` stdin and `{{input_messages}}`)."""
    input_files: tuple[Path, ...] = ()
    guideline_files: tuple[Path, ...] = ()
    borderline_passes: bool = False
    """Count a borderline case as passed (off by default: the spec says borderline is not a pass)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluatorResult:
    """One evaluator's outcome."""

    name: str
    type: str
    score: float
    verdict: str
    """`pass`, `borderline`, `fail` or `skipped`."""
    weight: float = 1.0
    required: bool | float = False
    hits: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()
    reasoning: str = ""
    children: tuple[EvaluatorResult, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteGrade:
    """A case's grade: weighted score, verdict, pass flag, and every evaluator's result."""

    score: float
    verdict: str
    passed: bool
    results: tuple[EvaluatorResult, ...]


def verdict_for(score: float) -> str:
    """The spec's band for a score."""
    if score >= PASS_THRESHOLD:
        return "pass"
    if score >= BORDERLINE_THRESHOLD:
        return "borderline"
    return "fail"


def _result(
    spec: EvaluatorSpec,
    score: float,
    *,
    hits: Sequence[str] = (),
    misses: Sequence[str] = (),
    reasoning: str = "",
) -> EvaluatorResult:
    score = min(1.0, max(0.0, score))
    return EvaluatorResult(
        name=spec.name,
        type=spec.type,
        score=score,
        verdict=verdict_for(score),
        weight=spec.weight,
        required=spec.required,
        hits=tuple(hits),
        misses=tuple(misses),
        reasoning=reasoning,
    )


def _skipped(spec: EvaluatorSpec, why: str) -> EvaluatorResult:
    return EvaluatorResult(
        name=spec.name,
        type=spec.type,
        score=0.0,
        verdict="skipped",
        weight=spec.weight,
        required=spec.required,
        reasoning=why,
    )


async def _run_one(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    text = ctx.transcript.final_text
    value = str(spec.config.get("value", ""))
    if spec.type == "contains":
        ok = value in text
        return _result(spec, 1.0 if ok else 0.0)
    if spec.type == "equals":
        return _result(spec, 1.0 if text.strip() == value.strip() else 0.0)
    if spec.type == "regex":
        try:
            ok = compile_re2(value).search(text) is not None
        except ValueError as exc:
            return _result(spec, 0.0, misses=(f"invalid pattern: {exc}",))
        return _result(spec, 1.0 if ok else 0.0)
    if spec.type == "is_json":
        try:
            json.loads(text)
        except ValueError:
            return _result(spec, 0.0, misses=("output is not JSON",))
        return _result(spec, 1.0)
    return _skipped(spec, f"{spec.type}: not implemented yet")


def _gate_ok(r: EvaluatorResult) -> bool:
    if r.required is False or r.verdict == "skipped":
        return True
    threshold = PASS_THRESHOLD if r.required is True else float(r.required)
    return r.score >= threshold


async def grade_suite_case(evaluators: Sequence[EvaluatorSpec], ctx: SuiteContext) -> SuiteGrade:
    """Run every evaluator of a case; score = weighted mean; a missed required gate fails the case."""
    results = tuple([await _run_one(s, ctx) for s in evaluators])
    scored = [r for r in results if r.verdict != "skipped" and r.weight > 0]
    total = sum(r.weight for r in scored)
    score = sum(r.score * r.weight for r in scored) / total if total else 0.0
    verdict = verdict_for(score) if scored else "skipped"
    if not all(_gate_ok(r) for r in results):
        verdict = "fail"
    passed = verdict == "pass" or (verdict == "borderline" and ctx.borderline_passes)
    return SuiteGrade(score=score, verdict=verdict, passed=passed, results=results)


def _evidence(r: EvaluatorResult) -> str:
    parts = [f"score {r.score:.2f} w={r.weight:g}"]
    if r.required is True:
        parts[0] += " required"
    elif r.required is not False:
        parts[0] += f" required≥{r.required:g}"
    if r.hits:
        parts.append("hits: " + "; ".join(r.hits))
    if r.misses:
        parts.append("misses: " + "; ".join(r.misses))
    if r.reasoning:
        parts.append(r.reasoning)
    return truncate_bytes(" — ".join(parts), 200)


def suite_expectations(grade: SuiteGrade) -> tuple[GradedAssertion, ...]:
    """One evolve expectation per evaluator (composite members expanded), research §i.3."""
    out: list[GradedAssertion] = []

    def add(r: EvaluatorResult, prefix: str) -> None:
        passed = None if r.verdict == "skipped" else r.verdict == "pass" and _gate_ok(r)
        out.append(
            GradedAssertion(
                type="llm",
                text=f"{prefix}{r.name} ({r.type})",
                passed=passed,
                evidence=_evidence(r),
                source="assertion",
            )
        )
        for c in r.children:
            add(c, f"{prefix}{r.name}/")

    for r in grade.results:
        add(r, "")
    return tuple(out)
