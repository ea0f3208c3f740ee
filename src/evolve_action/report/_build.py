"""The report build: loaded results in, rendered documents out (pure).

Owns: `build_report` — the rollup summaries, the rollup document (`EVALUATION.<fmt>`), the root and
per-plugin `EVALUATION.md` and the JUnit XML, as texts keyed by their path relative to the
repository root, in writing order — and `gate_models` (the model matrix the strict gate expects).

Guarantees: pure and deterministic (same inputs, same bytes; `tool_version` is a parameter). Every
string of the rollup document (names, display names, keys) is neutralised as the Markdown reports'
are (`sanitise.neutralise_markdown`: a reader that renders it shows no HTML, image or mention;
ordinary text is unchanged). Never does: read or write files, print (the report flow in `flows`
loads, writes and gates).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from evolve_action import encoding
from evolve_action.catalog import RUNNABLE_HARNESSES, Catalog
from evolve_action.report._junit import build_suites, render_junit
from evolve_action.report._render import render_plugin_page, render_root
from evolve_action.report._rollup import (
    LoadedPlugin,
    PluginSummary,
    build_rollup_document,
    excluded_rows,
    plugin_summary,
    provider_caps,
)
from evolve_action.sanitise import neutralise_markdown

__all__ = ["ReportBuild", "build_report", "gate_models"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportBuild:
    """The rendered reports of one repository."""

    documents: tuple[tuple[str, str], ...]
    """(path relative to the repository root, text), in writing order: `EVALUATION.md`,
    `EVALUATION.<fmt>`, then the plugin pages (not for a single-plugin layout)."""
    rollup_name: str
    """`EVALUATION.<fmt>`: its siblings of other formats are removed after writing."""
    summaries: Mapping[str, PluginSummary]
    """Rollup summary per plugin with results."""
    plugins: int
    """Plugins in the rollup document."""
    junit: str | None
    """JUnit XML, when asked for."""


def build_report(
    plugins: Sequence[LoadedPlugin],
    *,
    catalog: Catalog,
    active: frozenset[str] | None,
    single: bool,
    results_format: encoding.Format,
    tool_version: str,
    junit: bool = False,
) -> ReportBuild:
    """Render every report document from the loaded results (plugins without results get none)."""
    caps = provider_caps(catalog)
    with_files = [p for p in plugins if p.files]
    summaries = {p.name: plugin_summary(p, active) for p in with_files}
    doc = build_rollup_document(summaries.values(), tool_version)
    rollup_name = f"EVALUATION.{results_format}"
    documents: list[tuple[str, str]] = [
        (
            "EVALUATION.md",
            render_root(
                with_files,
                summaries,
                single=single,
                active=active,
                caps=caps,
                excluded=excluded_rows(catalog, active),
            ),
        ),
        (
            rollup_name,
            encoding.encode_document(
                doc.to_json(), results_format, encoding.ROLLUP_COMMENT, text=neutralise_markdown
            ),
        ),
    ]
    if not single:
        for lp in with_files:
            page = _plugin_page(lp.rel_dir, lp.name)
            if page is not None:
                documents.append((page, render_plugin_page(lp, active=active, caps=caps)))
    return ReportBuild(
        documents=tuple(documents),
        rollup_name=rollup_name,
        summaries=summaries,
        plugins=len(doc.plugins),
        junit=render_junit(build_suites(with_files, active)) if junit else None,
    )


def gate_models(
    catalog: Catalog,
    active: frozenset[str] | None,
    harnesses: Sequence[str] | None = None,
    *,
    runnable: frozenset[str] = RUNNABLE_HARNESSES,
) -> tuple[list[str], list[str]]:
    """The strict-mode model matrix: `(required, not required)` model keys.

    Required: every active model (all catalog models when unrestricted) that an allowed harness
    (config `harnesses`, else all) this tool can run here (`runnable`: the CLIs installed) supports; evidence for the others could never
    be produced here, so it is not asked for. Deliberate deviation from evolve (report spec §7
    quirk 10): evolve uses only the `models` tokens, so a configured model no allowed harness
    can run is reported missing forever.
    """
    allowed = [h.strip() for h in harnesses or () if h.strip()]
    usable = [h for h in sorted(runnable & RUNNABLE_HARNESSES) if not allowed or h in allowed]
    required: list[str] = []
    skipped: list[str] = []
    for m in catalog.models:
        if active is not None and m.key not in active:
            continue
        (required if any(m.supports(h) for h in usable) else skipped).append(m.key)
    return required, skipped


def _plugin_page(rel_dir: str, name: str) -> str | None:
    """`<plugin>/EVALUATION.md`; a plugin on the root itself (a marketplace's `./` entry) gets
    `EVALUATION.<name>.md` beside the root page (None when its name is not a safe file name)."""
    if rel_dir != ".":
        return PurePosixPath(rel_dir, "EVALUATION.md").as_posix()
    if not name or not all(c.isalnum() or c in "-_." for c in name) or name.startswith("."):
        return None
    return f"EVALUATION.{name}.md"
