"""Reporting: rollups, the gate, rendering, JUnit and the pure report build.

Owns: the rollup of results into per-plugin summaries (`plugin_summary`, `rollup_entries`), the
gate (`gate_issues`, maturity), the build (`build_report`: loaded results in, documents out), rendering `EVALUATION.md`, plugin pages and the PR summary through
Jinja templates, and JUnit XML. Guarantees: everything here is pure over data and deterministic
(same results, same bytes). Never does: read or write files, print.

Files (private; import from this package):
- `_build`: The report build: loaded results in, rendered documents out (pure).
- `_gate`: The `report --check` gate: plugin maturity, thresholds and the issue algorithm.
- `_junit`: JUnit XML export of stored results (report spec §5.5).
- `_render`: Rendering of `EVALUATION.md`, per-plugin pages and the PR summary through Jinja templates.
- `_rollup`: Rollups and the rollup document (`EVALUATION.<fmt>`, schema 3).
"""

from evolve_action.report._build import ReportBuild, build_report, gate_models
from evolve_action.report._compare import (
    ALPHA,
    MATERIAL_SHARE,
    MIN_SHARED,
    CaseStatus,
    ComparisonRow,
    FailingCase,
    Flips,
    Interval,
    Label,
    NoiseVerdict,
    Rate,
    SkillEvidence,
    TierComparison,
    classify,
    compare,
    compare_skill,
    label_counts,
    sign_test,
    wilson,
)
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
    render_pr_summary,
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

__all__ = [
    "ALPHA",
    "COMMENT_LIMIT",
    "EM",
    "MARKER",
    "MATERIAL_SHARE",
    "MAX_FAILING_LISTED",
    "MIN_SHARED",
    "CaseStatus",
    "ComparisonRow",
    "FailingCase",
    "Flips",
    "GateOptions",
    "GatePlugin",
    "Interval",
    "Issue",
    "Label",
    "LoadedFile",
    "LoadedPlugin",
    "Maturity",
    "NoiseVerdict",
    "PluginSummary",
    "Rate",
    "ReportBuild",
    "RunFacts",
    "SkillEvidence",
    "Tier",
    "TierComparison",
    "active_model_keys",
    "build_report",
    "build_rollup_document",
    "build_suites",
    "cell_text",
    "classify",
    "classify_maturity",
    "comment_length",
    "compare",
    "compare_skill",
    "digest_of",
    "evidence_digest",
    "excluded_rows",
    "filter_file",
    "gate_issues",
    "gate_models",
    "github_text",
    "group",
    "label_counts",
    "parse_maturity",
    "pct",
    "plugin_summary",
    "provider_caps",
    "render_junit",
    "render_plugin_page",
    "render_pr_comment",
    "render_pr_summary",
    "render_root",
    "rollup_entries",
    "secs",
    "sign_test",
    "spct",
    "sum_estimates",
    "sum_measured",
    "usd",
    "wilson",
    "xml_escape",
]
