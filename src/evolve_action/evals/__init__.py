"""Tier 2 engine: behavioural evals with the skill under test, baselines without it.

Owns: the eval unit flow (plan, stage, run, grade, record), workspace staging and the assembly of
result rows. Guarantees: engines never print (events go to the `Reporter`); a failed session or
judge outage is data; results are written after every finished case. Never does: read
`os.environ`, start agent processes itself, run `command` assertions (grading does).

Files (private; import from this package):
- `_assembly`: Eval staging and result assembly: the per-case pieces of the Tier 2 engine (split from `evals`).
- `_engine`: Tier 2 engine: behavioural evals with the skill under test, baselines without it, grading, results.
"""

from evolve_action.evals._assembly import CaseRun, build_result, error_detail, stage_workspace
from evolve_action.evals._engine import (
    EvalsOptions,
    EvalsOutcome,
    EvalsPlan,
    make_judge,
    plan_evals,
    run_evals,
)

__all__ = [
    "CaseRun",
    "EvalsOptions",
    "EvalsOutcome",
    "EvalsPlan",
    "build_result",
    "error_detail",
    "make_judge",
    "plan_evals",
    "run_evals",
    "stage_workspace",
]
