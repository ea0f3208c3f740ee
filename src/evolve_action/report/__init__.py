"""Reporting: rollups, the gate, rendering, JUnit and the pure report build.

Owns: the rollup of results into per-plugin summaries (`plugin_summary`, `rollup_entries`), the
gate (`gate_issues`, maturity), the build (`build_report`: loaded results in, documents out), rendering `EVALUATION.md` and plugin pages through
Jinja templates, and JUnit XML. Guarantees: everything here is pure over data and deterministic
(same results, same bytes). Never does: read or write files, print.

Files (private; import from this package):
- `_build`: The report build: loaded results in, rendered documents out (pure).
- `_gate`: The `report --check` gate: plugin maturity, thresholds and the issue algorithm.
- `_junit`: JUnit XML export of stored results (report spec §5.5).
- `_render`: Rendering of `EVALUATION.md` and per-plugin pages through Jinja templates.
- `_compare`: Base → head comparison of a PR's touched skills and the label of each move.
- `_rows`: The comparison's values: the evidence it reads, the rows and tiers it answers, the labels.
- `_evidence`: One side (base or head) of a tier comparison, read out of a results entry.
- `_pr_comment`: The sticky PR comment's body.
- `_stats`: Exact stratified tests and the sequential (alpha-spending) rule behind the labels.
- `_rollup`: Rollups and the rollup document (`EVALUATION.<fmt>`, schema 3).
"""

from evolve_action.report._build import ReportBuild, build_report, gate_models
from evolve_action.report._compare import compare, compare_skill, label_counts
from evolve_action.report._gate import (
    GateOptions,
    GatePlugin,
    Issue,
    Maturity,
    classify_maturity,
    gate_issues,
    parse_maturity,
)
from evolve_action.report._junit import build_suites, render_junit, xml_escape
from evolve_action.report._pr_comment import (
    COMMENT_LIMIT,
    MAX_FAILING_LISTED,
    NEXT_STEP_NO_EVALS,
    CheckLine,
    Revision,
    RunFacts,
    comment_length,
    digest_of,
    evidence_digest,
    github_text,
    render_pr_comment,
)
from evolve_action.report._render import (
    EM,
    MARKER,
    cell_text,
    group,
    pct,
    render_plugin_page,
    render_root,
    secs,
    spct,
    usd,
)
from evolve_action.report._rollup import (
    LoadedFile,
    LoadedPlugin,
    PluginSummary,
    active_model_keys,
    build_rollup_document,
    excluded_rows,
    filter_file,
    plugin_summary,
    provider_caps,
    rollup_entries,
    sum_estimates,
    sum_measured,
)
from evolve_action.report._rows import (
    CaseStatus,
    ComparisonRow,
    FailingCase,
    FlippedCase,
    Flips,
    Label,
    QueryRuns,
    Rate,
    Reruns,
    SkillEvidence,
    TierComparison,
)
from evolve_action.report._stats import (
    ALPHA,
    MATERIAL,
    NO_CHANGE_ALPHA,
    RULED_OUT,
    SPOT_SHARE,
    Interval,
    Outcome,
    Plan,
    Spending,
    StratifiedTest,
    Stratum,
    Sweep,
    alpha_spent,
    decide,
    early_stopped,
    equivalent,
    information,
    runs_to_decide,
    selected,
    spot_check,
    stratified_test,
    wilson,
)

__all__ = [
    "ALPHA",
    "COMMENT_LIMIT",
    "EM",
    "MARKER",
    "MATERIAL",
    "MAX_FAILING_LISTED",
    "NEXT_STEP_NO_EVALS",
    "NO_CHANGE_ALPHA",
    "RULED_OUT",
    "SPOT_SHARE",
    "CaseStatus",
    "CheckLine",
    "ComparisonRow",
    "FailingCase",
    "FlippedCase",
    "Flips",
    "GateOptions",
    "GatePlugin",
    "Interval",
    "Issue",
    "Label",
    "LoadedFile",
    "LoadedPlugin",
    "Maturity",
    "Outcome",
    "Plan",
    "PluginSummary",
    "QueryRuns",
    "Rate",
    "ReportBuild",
    "Reruns",
    "Revision",
    "RunFacts",
    "SkillEvidence",
    "Spending",
    "StratifiedTest",
    "Stratum",
    "Sweep",
    "Tier",
    "TierComparison",
    "active_model_keys",
    "alpha_spent",
    "build_report",
    "build_rollup_document",
    "build_suites",
    "cell_text",
    "classify_maturity",
    "comment_length",
    "compare",
    "compare_skill",
    "decide",
    "digest_of",
    "early_stopped",
    "equivalent",
    "evidence_digest",
    "excluded_rows",
    "filter_file",
    "gate_issues",
    "gate_models",
    "github_text",
    "group",
    "information",
    "label_counts",
    "parse_maturity",
    "pct",
    "plugin_summary",
    "provider_caps",
    "render_junit",
    "render_plugin_page",
    "render_pr_comment",
    "render_root",
    "rollup_entries",
    "runs_to_decide",
    "secs",
    "selected",
    "spct",
    "spot_check",
    "stratified_test",
    "sum_estimates",
    "sum_measured",
    "usd",
    "wilson",
    "xml_escape",
]
