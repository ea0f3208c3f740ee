"""`run checks --listing`: the listing check run over a repository and folded into its report.

Owns: `with_listing_check` (start the listing check for the trigger tier's models, with its
cache beside the results cache, and fold its findings and statuses into the `CheckReport`), and the
one stderr line that says what it checked (`ListingChecked.line`). Never does: print, parse argv.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evolve_action.checks import (
    LISTING_CACHE_NAME,
    CheckReport,
    ListingReport,
    check_listing,
    listing_models,
    with_listing,
)
from evolve_action.config import Config
from evolve_action.harness import default_cache_path
from evolve_action.repo import Repository


@dataclass(frozen=True, slots=True)
class ListingChecked:
    """A report with the listing check folded in, and the line that says what was checked."""

    report: CheckReport
    line: str


def with_listing_check(
    report: CheckReport,
    repo: Repository,
    config: Config,
    environ: Mapping[str, str],
    model_flags: Sequence[str] = (),
) -> ListingChecked:
    """Run the listing check and fold its findings and statuses into the report."""
    models = listing_models(config, environ, model_flags)
    cache = default_cache_path(environ, config.cache_dir).parent / LISTING_CACHE_NAME
    listing: ListingReport = asyncio.run(
        check_listing(
            repo,
            models=models,
            environ=environ,
            cache_path=cache,
            install="plugin" if config.install == "plugin" else "skills",
        )
    )
    first = listing.sets[0] if listing.sets else None
    version = first.cli_version if first is not None else ""
    line = (
        f"listing: {len(listing.sets)} set(s) checked for {', '.join(m or 'the default model' for m in models)}"
        f" ({listing.started} CLI start(s), the rest cached){f'; {version}' if version else ''}\n"
    )
    statuses = {
        (sk.plugin, sk.skill): sk.status
        for sl in listing.sets
        if sl.set.kind == "plugin" and sl.model == (models[0] if models else "")
        for sk in sl.skills
    }
    folded = dataclasses.replace(
        report,
        findings=(*report.findings, *listing.findings),
        signals=with_listing(report.signals, statuses),
    )
    return ListingChecked(report=folded, line=line)
