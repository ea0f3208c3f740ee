"""Planning: which case × model runs and why, from fingerprints and stored results.

Owns: the case reasons (`missing`, `modified`, `failed`, `stale`, `errored`…), the plan model
(`Plan`, `PlannedUnit`, `PlannedCase`, `Selection`), the inputs gatherer (`build_inputs`), the
fingerprints of skills and specs, and sharding. Guarantees: planning is pure over data; a plan can be
printed, split into shards and executed. Never does: run agents, write results, print.

Files (private; import from this package):
- `_fingerprint`: Fingerprints: the hashes that decide which stored results are still current.
- `_model`: The values of planning: tiers, reasons, the planning inputs and the plan itself.
- `_select`: Planning: which cases run, for which model, and why (engine spec §7, report spec §1.5).
- `_staging`: An installable view of a skill whose directory is a root (issue 30).
"""

from evolve_action.plan._fingerprint import (
    NO_FRONTMATTER,
    eval_content_hash,
    eval_fingerprint,
    eval_spec_hash,
    eval_spec_json,
    is_modified,
    skill_content_hash,
    trigger_content_hash,
    trigger_spec_hash,
)
from evolve_action.plan._model import (
    EvalCaseInput,
    Plan,
    PlanModel,
    PlannedCase,
    PlannedUnit,
    Reason,
    Selection,
    SetInput,
    Tier,
    TriggerCaseInput,
)
from evolve_action.plan._select import (
    build_inputs,
    eval_reason,
    needs_baseline,
    plan,
    render,
    shard,
    stale_tier,
    to_json_lines,
    trigger_reason,
)
from evolve_action.plan._staging import (
    is_root_skill,
    staged_copy,
    staged_skill,
    staged_skills_dir,
)

__all__ = [
    "NO_FRONTMATTER",
    "EvalCaseInput",
    "Plan",
    "PlanModel",
    "PlannedCase",
    "PlannedUnit",
    "Reason",
    "Selection",
    "SetInput",
    "Tier",
    "TriggerCaseInput",
    "build_inputs",
    "eval_content_hash",
    "eval_fingerprint",
    "eval_reason",
    "eval_spec_hash",
    "eval_spec_json",
    "is_modified",
    "is_root_skill",
    "needs_baseline",
    "plan",
    "render",
    "shard",
    "skill_content_hash",
    "staged_copy",
    "staged_skill",
    "staged_skills_dir",
    "stale_tier",
    "to_json_lines",
    "trigger_content_hash",
    "trigger_reason",
    "trigger_spec_hash",
]
