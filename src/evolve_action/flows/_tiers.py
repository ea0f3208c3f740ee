"""Typed options for the tier engines, built from plain values (no argparse).

Owns: `trigger_options` — the one builder of `triggers.TriggerOptions` (models resolved against the
catalog and the harnesses this machine can run, the selection, the token cache), shared by
`run triggers`, `run all` and the demo (engine spec §2.3).

Guarantees: pure apart from looking for the agent CLI on PATH; the selection warnings are returned,
never printed. Never does: parse argv, print, start agents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from evolve_action import __version__, plan, triggers
from evolve_action.catalog import build_catalog, resolve_models
from evolve_action.config import Config, resolve_results_format
from evolve_action.harness import Budget, available_harnesses, default_cache_path
from evolve_action.repo import Repository

__all__ = ["BuiltTriggerOptions", "trigger_options"]


class BuiltTriggerOptions(NamedTuple):
    """Trigger engine options and the warnings of model selection."""

    options: triggers.TriggerOptions
    warnings: tuple[str, ...]


def trigger_options(
    repo: Repository,
    config: Config,
    environ: Mapping[str, str],
    *,
    plugins: tuple[str, ...] = (),
    skills: tuple[str, ...] = (),
    models: Sequence[str] = (),
    harnesses: Sequence[str] = (),
    new: bool = False,
    modified: bool = False,
    failed: bool = False,
    runs: int = triggers.DEFAULT_RUNS,
    jobs: int = 1,
    timeout: int | None = None,
    early_stop: bool = True,
    keep_workspaces: bool = False,
    dry_run: bool = False,
    results_format: str | None = None,
    require_cli: bool = True,
    budget: Budget | None = None,
) -> BuiltTriggerOptions:
    """Resolve models and selection into `TriggerOptions` (timeout: 120 s per session by default).

    A missing Claude Code CLI raises, unless `require_cli` is false: then no model is selected
    (`run all` skips the tier). A dry run plans as if the CLI were installed.
    """
    selection = resolve_models(
        build_catalog(config.providers),
        model_flags=models,
        config_models=config.models,
        config_harnesses=config.harnesses,
        harness_flags=harnesses,
        available=available_harnesses(environ, dry_run=dry_run, required=require_cli),
        tier="triggers",
    )
    options = triggers.TriggerOptions(
        repo=repo,
        models=selection.models,
        environ=dict(environ),
        selection=plan.Selection(
            new=new,
            modified=modified,
            failed=failed,
            plugins=plugins,
            skills=skills,
            tiers=(plan.Tier.TRIGGERS,),
        ),
        runs=runs,
        jobs=jobs,
        timeout_seconds=timeout if timeout is not None else triggers.DEFAULT_TIMEOUT_SECONDS,
        early_stop=early_stop,
        keep_workspaces=keep_workspaces,
        dry_run=dry_run,
        results_format=resolve_results_format(results_format, config),
        install=config.install,
        budget=budget,
        tool_version=__version__,
        token_cache=default_cache_path(environ, config.cache_dir),
        listing=not dry_run,
    )
    return BuiltTriggerOptions(options, tuple(selection.warnings))
