"""Grading: deterministic assertions, the LLM judge and its workspace tools.

Owns: the six deterministic assertion types, the tri-state `Verdict`,
the per-case aggregation (`grade_case`), the grade summary, and the judge (one `anthropic`
conversation per case for all `llm` assertions, read-only workspace tools, judge model resolution).
Guarantees: grading never raises for a bad assertion or a judge failure: it is a failed verdict with
evidence. Never does: print or read `os.environ`; the one impure part is deliberate: this package is
the only place `command` assertions run, with an allowlisted environment.

Files (private; import from this package):
- `_assertions`: Deterministic grading of Tier 2 assertions, and the per-case verdict.
- `_suite`: Grading of AgentV / AgentEvals suite cases: every evaluator type, composites, verdict bands.
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
    BORDERLINE_THRESHOLD,
    DEFAULT_EVALUATOR,
    PASS_THRESHOLD,
    EvaluatorResult,
    SuiteContext,
    SuiteGrade,
    grade_suite_case,
    judge_error,
    suite_expectations,
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
