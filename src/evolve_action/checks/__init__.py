"""Tier 0: static checks of a plugin repository, and the advisory skill signals.

Owns: `run_checks` (marketplace, manifest, SKILL.md and eval-spec checks in evolve's order and
wording; evolve's conventions only where the repository opts in) and its verdict `CheckReport`; the advisory skill signals (size and conciseness scores,
`signals` here means skill signals, not OS signals). Guarantees: pure over the repository; every
problem is a `Finding`. Never does: print, read `os.environ`; only the listing check
(`check_listing`) starts a process (the CLI, against a scripted server on loopback) and writes (its cache).

Files (private; import from this package):
- `_engine`: Tier 0: static checks of a plugin repository (engine spec §5).
- `_listing`: the listing check: does each skill's description reach the model (real CLI, cached).
- `_render`: `run checks` output: the console text and the `--json` document of a `CheckReport`.
- `_signals`: Advisory skill signals of `run checks` (engine spec §5.6): size and conciseness scores.
"""

from evolve_action.checks._engine import (
    CheckOptions,
    CheckReport,
    PreExisting,
    run_checks,
    split_pre_existing,
)
from evolve_action.checks._listing import (
    CACHE_NAME as LISTING_CACHE_NAME,
)
from evolve_action.checks._listing import (
    NOT_SHOWN,
    Install,
    InstallSet,
    ListingCache,
    ListingReport,
    ListingStatus,
    SetListing,
    SkillListing,
    check_listing,
    install_sets,
    listing_findings,
    listing_models,
    status_of,
)
from evolve_action.checks._render import (
    CLAUDE_CODE_RULES,
    console_message,
    passed_line,
    render_text,
    report_document,
)
from evolve_action.checks._signals import (
    LISTING_BUDGET_CHARS,
    SkillSignal,
    conciseness_score,
    prose_lines,
    size_score,
    with_listing,
)

__all__ = [
    "CLAUDE_CODE_RULES",
    "LISTING_BUDGET_CHARS",
    "LISTING_CACHE_NAME",
    "NOT_SHOWN",
    "CheckOptions",
    "CheckReport",
    "Install",
    "InstallSet",
    "ListingCache",
    "ListingReport",
    "ListingStatus",
    "PreExisting",
    "SetListing",
    "SkillListing",
    "SkillSignal",
    "check_listing",
    "conciseness_score",
    "console_message",
    "install_sets",
    "listing_findings",
    "listing_models",
    "passed_line",
    "prose_lines",
    "render_text",
    "report_document",
    "run_checks",
    "size_score",
    "split_pre_existing",
    "status_of",
    "with_listing",
]
