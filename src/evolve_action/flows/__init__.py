"""Flows: the user-level jobs as plain functions over typed options that return data.

Owns: `run_all` (checks → triggers → evals → report), `run_demo` (the example repository copied and
evaluated end to end, offline by default), `regenerate_report` (load → build → write → gate) and
`trigger_options` (the one builder of the trigger engine's options). `run_pr` and `run_gate` (the GitHub Action's jobs). `plan_shards`, `run_shard` and
`merge_fragments` (scale-out over a CI matrix). `run_export` (stored results in the formats of
AgentEvals and skill-creator). `run_init` (drafted triggers and evals for skills that have none).
Guarantees: flows never parse argv and never print: engine progress goes to the `Reporter`, each
finished step to `on_step`, and the outcome is returned for the CLI to print and map to an exit code.
Never does: stage work itself (the stage packages do).

Files (private; import from this package):
- `_action`: the GitHub Action's jobs: `pr` (and its local preview), `run` and `gate`, composing
  the PR job's stages:
  - `_pr_job`: the job's options, knobs and running state, and the helpers every stage shares;
  - `_pr_touched`: which skills a PR touches, and Tier 0 on them;
  - `_pr_evaluate`: the touched skills' missing or stale cases, power on demand and the ledger;
  - `_pr_compare`: the report and the base → head comparison;
  - `_pr_publish`: the commit-back, the sticky comment, the summary's cost line, the outputs.
- `_checks`: `run checks --listing`: the listing check run and folded into the check report.
- `_confinement`: which commands start agents, and the one console line about their confinement.
- `_demo`: the demo: copy, backend choice, scripted environment, the closing summary.
- `_draft`: drafting for `init`: the request, the answer, the quality gates, the drafted files.
- `_init`: `init`: draft trigger queries and eval cases for skills without definitions, check
  and plan them, write the example workflows.
- `_export`: `export`: stored results as AgentEvals JSONL rows and skill-creator workspace artefacts
  (`_export_skill_creator`: the skill-creator documents).
- `_ledger`: a PR's runs and looks across workflow runs (fingerprints, merge, the file and ref
  stores).
- `_power`: power on demand: the sequential loop of more base and head runs.
- `_power_evals`: power on demand for evals: paired base reruns and selective rounds of eval cases.
- `_preflight`: what the run commands settle before any session: the filter check, removing
  unusable results files on request, the cost confirmation's threshold and question.
- `_report`: the report flow: load stored results, build the reports, write them, evaluate the gate.
- `_shard`: scale-out: plan shards, run one shard into fragments, merge the fragments.
- `_run_all`: `run all` as a function: checks → triggers → evals → report.
- `_tiers`: typed options for the tier engines, built from plain values (no argparse).
"""

from evolve_action.flows._action import (
    exit_for,
    run_gate,
    run_pr,
)
from evolve_action.flows._checks import ListingChecked, with_listing_check
from evolve_action.flows._confinement import (
    ConfinementLine,
    confinement_line,
    runs_agents,
    says_unconfined,
)
from evolve_action.flows._demo import (
    CODEX_MODEL,
    DEFAULT_MODEL,
    DEFAULT_RUNS,
    DUMMY_KEY,
    POLICY_RESOURCE,
    Backend,
    DemoBackendReady,
    DemoCopied,
    DemoOptions,
    DemoOutcome,
    DemoSummary,
    ScriptedServer,
    SkillFigures,
    add_trigger_query,
    bundled_examples,
    choose_backend,
    copy_examples,
    demo_models,
    demo_policy,
    render_summary,
    run_demo,
    scripted_environ,
    scripted_server,
    summarise,
)
from evolve_action.flows._export import (
    EXPORT_FORMATS,
    ExportedSkill,
    ExportOptions,
    ExportOutcome,
    check_formats,
    run_export,
)
from evolve_action.flows._init import (
    WORKFLOW_SECRET,
    WORKFLOWS,
    CheckedQuery,
    InitOptions,
    InitOutcome,
    InitPlanned,
    SkillDraft,
    run_init,
)
from evolve_action.flows._pr_job import (
    COMMENT_MARKER,
    UNCONFINED,
    ActionOutcome,
    PrOptions,
)
from evolve_action.flows._preflight import (
    CONFIRM_VAR,
    DEFAULT_CONFIRM_ABOVE_USD,
    NOTHING_TO_PLAN,
    CostQuestion,
    check_filters,
    confirm_threshold,
    cost_question,
    discard_unusable_results,
    no_model_error,
    skips_confirmation,
)
from evolve_action.flows._report import Migration, ReportOptions, ReportOutcome, regenerate_report
from evolve_action.flows._run_all import (
    ChecksDone,
    EvalsReady,
    ModelChoice,
    PlanCollector,
    ReportDone,
    RunAllOptions,
    RunAllOutcome,
    RunAllStep,
    TriggersReady,
    run_all,
    sweep_models,
)
from evolve_action.flows._shard import (
    CostEstimate,
    MergeOutcome,
    ShardPlan,
    estimate_cost,
    merge_fragments,
    parse_shard,
    plan_shards,
    run_shard,
)
from evolve_action.flows._tiers import BuiltTriggerOptions, trigger_options

__all__ = [
    "CODEX_MODEL",
    "COMMENT_MARKER",
    "CONFIRM_VAR",
    "DEFAULT_CONFIRM_ABOVE_USD",
    "DEFAULT_MODEL",
    "DEFAULT_RUNS",
    "DUMMY_KEY",
    "EXPORT_FORMATS",
    "NOTHING_TO_PLAN",
    "POLICY_RESOURCE",
    "UNCONFINED",
    "WORKFLOWS",
    "WORKFLOW_SECRET",
    "ActionOutcome",
    "Backend",
    "BuiltTriggerOptions",
    "CheckedQuery",
    "ChecksDone",
    "ConfinementLine",
    "CostEstimate",
    "CostQuestion",
    "DemoBackendReady",
    "DemoCopied",
    "DemoOptions",
    "DemoOutcome",
    "DemoSummary",
    "EvalsReady",
    "ExportOptions",
    "ExportOutcome",
    "ExportedSkill",
    "InitOptions",
    "InitOutcome",
    "InitPlanned",
    "ListingChecked",
    "MergeOutcome",
    "Migration",
    "ModelChoice",
    "PlanCollector",
    "PrOptions",
    "ReportDone",
    "ReportOptions",
    "ReportOutcome",
    "RunAllOptions",
    "RunAllOutcome",
    "RunAllStep",
    "ScriptedServer",
    "ShardPlan",
    "SkillDraft",
    "SkillFigures",
    "TriggersReady",
    "add_trigger_query",
    "bundled_examples",
    "check_filters",
    "check_formats",
    "choose_backend",
    "confinement_line",
    "confirm_threshold",
    "copy_examples",
    "cost_question",
    "demo_models",
    "demo_policy",
    "discard_unusable_results",
    "estimate_cost",
    "exit_for",
    "merge_fragments",
    "no_model_error",
    "parse_shard",
    "plan_shards",
    "regenerate_report",
    "render_summary",
    "run_all",
    "run_demo",
    "run_export",
    "run_gate",
    "run_init",
    "run_pr",
    "run_shard",
    "runs_agents",
    "says_unconfined",
    "scripted_environ",
    "scripted_server",
    "skips_confirmation",
    "summarise",
    "sweep_models",
    "trigger_options",
    "with_listing_check",
]
