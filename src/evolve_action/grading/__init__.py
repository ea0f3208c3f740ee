"""Grading: deterministic assertions, the LLM judge and its workspace tools.

Owns: the six deterministic assertion types, the tri-state `Verdict`,
the per-case aggregation (`grade_case`), the grade summary, and the judge (one `anthropic`
conversation per case for all `llm` assertions, read-only workspace tools, judge model resolution).
Guarantees: grading never raises for a bad assertion or a judge failure: it is a failed verdict with
evidence. Never does: print or read `os.environ`; the one impure part is deliberate: this package is
the only place `command` assertions run, with an allowlisted environment.

Files (private; import from this package):
- `_assertions`: Deterministic grading of Tier 2 assertions, and the per-case verdict.
- `_suite`: Grading of AgentV / AgentEvals suite cases: dispatch, the judges (code, LLM, rubric),
  composites, required gates.
- `_suite_model`: the values of suite grading (context, results, verdict bands).
- `_suite_checks`: the deterministic suite evaluators (trajectory, fields, metrics, text, trigger).
- `_judge`: The LLM judge: one `anthropic` SDK conversation per eval case grades all of its `llm` assertions.
"""

from evolve_action.grading._assertions import (
    REGEX_FILE_CAP,
    GradedCase,
    Verdict,
    case_passed,
    grade_case,
    grade_deterministic,
)
from evolve_action.grading._judge import (
    GradingCache,
    Judge,
    JudgeRequest,
    ToolAnswer,
    ToolRefused,
    WorkspaceTools,
    build_prompt,
    client_from_env,
    resolve_judge_model,
)
from evolve_action.grading._suite import (
    DEFAULT_EVALUATOR,
    grade_suite_case,
    judge_error,
    suite_expectations,
)
from evolve_action.grading._suite_model import (
    BORDERLINE_THRESHOLD,
    PASS_THRESHOLD,
    EvaluatorResult,
    SuiteContext,
    SuiteGrade,
    verdict_for,
)

__all__ = [
    "BORDERLINE_THRESHOLD",
    "DEFAULT_EVALUATOR",
    "PASS_THRESHOLD",
    "REGEX_FILE_CAP",
    "EvaluatorResult",
    "GradedCase",
    "GradingCache",
    "Judge",
    "JudgeRequest",
    "SuiteContext",
    "SuiteGrade",
    "ToolAnswer",
    "ToolRefused",
    "Verdict",
    "WorkspaceTools",
    "build_prompt",
    "case_passed",
    "client_from_env",
    "grade_case",
    "grade_deterministic",
    "grade_suite_case",
    "judge_error",
    "resolve_judge_model",
    "suite_expectations",
    "verdict_for",
]
