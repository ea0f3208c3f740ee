"""Tier 1 engine: trigger accuracy (does the agent pick the right skill for a query).

Owns: the trigger unit flow (`run`, `make_plan`), early stop, the per-run classification and the
per-query verdicts (`classify_run`, `decided`, `passes`, `score`). Guarantees: engines never print
(events go to the `Reporter`); a failed session is data; results are written after every finished
unit. Never does: read `os.environ`, start agent processes itself (the harness does).

Files (private; import from this package):
- `_engine`: Tier 1: trigger accuracy through the real agent (engine spec §8).
- `_verdicts`: Tier 1 pure core: hit detection, verdicts, verdict-preserving early stop, scoring (split from `triggers`).
"""

from evolve_action.triggers._engine import (
    DEFAULT_RUNS,
    DEFAULT_TIMEOUT_SECONDS,
    LISTING_FIX,
    NOT_SHOWN_NOTE,
    TriggerOptions,
    TriggersOutcome,
    make_plan,
    run,
)
from evolve_action.triggers._verdicts import (
    QueryOutcome,
    RunRecord,
    RunResult,
    classify_run,
    decided,
    is_hit,
    passes,
    score,
    should_launch,
)

__all__ = [
    "DEFAULT_RUNS",
    "DEFAULT_TIMEOUT_SECONDS",
    "LISTING_FIX",
    "NOT_SHOWN_NOTE",
    "QueryOutcome",
    "RunRecord",
    "RunResult",
    "TriggerOptions",
    "TriggersOutcome",
    "classify_run",
    "decided",
    "is_hit",
    "make_plan",
    "passes",
    "run",
    "score",
    "should_launch",
]
