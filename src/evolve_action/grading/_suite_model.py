"""The values of suite grading: the verdict bands, what evaluators read (`SuiteContext`), what
one evaluator and a whole case come to (`EvaluatorResult`, `SuiteGrade`), and the constructors of
a scored or skipped result.

Owns: `PASS_THRESHOLD`/`BORDERLINE_THRESHOLD` and `verdict_for`, the reply parser judges and
`is_json` share (`first_json_object`).
Guarantees: pure values and functions: nothing here runs a process, a judge or reads a file.
Never does: decide which evaluator runs (`_suite` dispatches) or grade anything itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolve_action.grading._judge import Judge
from evolve_action.harness import Transcript
from evolve_action.specs import EvaluatorSpec

__all__ = [
    "BORDERLINE_THRESHOLD",
    "PASS_THRESHOLD",
    "EvaluatorResult",
    "SuiteContext",
    "SuiteGrade",
    "first_json_object",
    "reference_answer",
    "scored",
    "skipped",
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
    required_missed: tuple[str, ...] = ()
    """Required rubric criteria / fields this evaluator missed: they fail the case (spec 1.0)."""
    error: str = ""
    """`judge error: …` when the judge could not answer (outage, no credentials): not a verdict
    on the agent (the eval engine may make the case a runtime error)."""


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


def scored(
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


def skipped(spec: EvaluatorSpec, why: str) -> EvaluatorResult:
    return EvaluatorResult(
        name=spec.name,
        type=spec.type,
        score=0.0,
        verdict="skipped",
        weight=spec.weight,
        required=spec.required,
        reasoning=why,
    )


def first_json_object(text: str) -> Mapping[str, Any] | None:
    """The reply's JSON object: the whole text, else inside ``` fences, else the first `{…}`."""
    text = text.strip()
    candidates = [text]
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fenced:
        candidates.append(fenced.group(1).strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for c in candidates:
        try:
            value = json.loads(c)
        except ValueError:
            continue
        if isinstance(value, Mapping):
            return value
    return None


def reference_answer(ctx: SuiteContext) -> str:
    """AV-FEB: the last expected message's content (an object as JSON), else `expected_output`."""
    if ctx.expected_messages:
        content = ctx.expected_messages[-1].get("content")
        if isinstance(content, str):
            return content
        if content is not None:
            return json.dumps(content, ensure_ascii=False)
        calls = ctx.expected_messages[-1].get("tool_calls")
        if calls is not None:
            return json.dumps(calls, ensure_ascii=False)
    return ctx.expected_output or ""
