"""Authored specs: trigger and eval models, loading, schema and semantic validation, findings.

Owns: the authored trigger/eval models and their normalisation (integer ids → strings,
expectations → `llm` assertions, bare strings are `llm` assertions), loading them from a skill's
eval dir, the shipped JSON Schemas and semantic rules (`validate_*`), and `Finding`/`Severity`.
Guarantees: every authored problem is a `SpecError` (loading) or a `Finding` (validation) that names
the file and line. Never does: print, run agents, read `os.environ`. The validators (`jsonschema`)
are loaded on first use only (start-up time).

Files (private; import from this package):
- `_evaluators`: Evaluator specs of AgentV v2 and AgentEvals suites: parsing, aliases, per-type fields.
- `_findings`: Findings: what static checks and validation report about authored files.
- `_load`: Loading authored Tier 1/Tier 2 definitions: `triggers.<ext>` and `evals.<ext>`.
- `_model`: The authored Tier 1/Tier 2 definitions as values: models, fixture staging, model restriction.
- `_suites`: AgentEvals `EVAL.yaml` and AgentV v2 suite files: reading, aliases, prompts, binding
  into `EvalCase`s (issue 23).
- `_validation`: Validation of authored files against our JSON Schemas and evolve's semantic rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evolve_action.specs._evaluators import (
    AGGREGATORS,
    EVALUATOR_TYPES,
    EvaluatorSpec,
    parse_evaluators,
)
from evolve_action.specs._findings import Finding, Severity
from evolve_action.specs._load import (
    load_evals,
    load_triggers,
    parse_evals,
    parse_evals_lenient,
    parse_triggers,
)
from evolve_action.specs._model import (
    Assertion,
    EvalCase,
    EvalsSpec,
    Source,
    SuiteCase,
    model_allowed,
    resolve_fixture,
    staged_path,
)
from evolve_action.specs._suites import (
    SUITE_ID_SEPARATOR,
    Suite,
    SuiteProblem,
    load_authored_evals,
    load_suite,
    read_suite,
    suite_eval_cases,
    suite_notes,
)

if TYPE_CHECKING:
    from evolve_action.specs._validation import (
        SCHEMA_BASE,
        SCHEMA_NAMES,
        load_schema,
        schema_validator,
        validate_evals,
        validate_suite,
        validate_triggers,
    )

_LAZY = frozenset(
    {
        "SCHEMA_BASE",
        "SCHEMA_NAMES",
        "load_schema",
        "schema_validator",
        "validate_evals",
        "validate_suite",
        "validate_triggers",
    }
)


def __getattr__(name: str) -> Any:
    # `jsonschema` is slow to import and only validation needs it: load `_validation` on first use.
    if name in _LAZY:
        from evolve_action.specs import _validation

        return getattr(_validation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AGGREGATORS",
    "EVALUATOR_TYPES",
    "SCHEMA_BASE",
    "SCHEMA_NAMES",
    "SUITE_ID_SEPARATOR",
    "Assertion",
    "EvalCase",
    "EvalsSpec",
    "EvaluatorSpec",
    "Finding",
    "Severity",
    "Source",
    "Suite",
    "SuiteCase",
    "SuiteProblem",
    "load_authored_evals",
    "load_evals",
    "load_schema",
    "load_suite",
    "load_triggers",
    "model_allowed",
    "parse_evals",
    "parse_evals_lenient",
    "parse_evaluators",
    "parse_triggers",
    "read_suite",
    "resolve_fixture",
    "schema_validator",
    "staged_path",
    "suite_eval_cases",
    "suite_notes",
    "validate_evals",
    "validate_suite",
    "validate_triggers",
]
