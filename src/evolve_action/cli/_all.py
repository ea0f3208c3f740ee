"""`evolve-action run all`: checks → triggers → evals → report, in one command.

Owns: the flags of `run all` (the union of the triggers and evals flags, engine spec §2.3) and the
order of the steps. Each step calls the owning engine's public API: `checks.run_checks`,
`triggers.run`, `evals.run_evals`, and `commands.report.generate`. Differences from evolve, on
purpose: the tiers run one after the other over the whole repository (all trigger units, then all eval
units) rather than interleaved per skill, so each engine keeps its own sweep; the results are the
same. Timeouts: 120 s per trigger session and 600 s per eval run unless `--timeout` is given (then it
applies to both). Check failures only count under `--strict`. Exit codes: 0 done, 1 failures under
`--strict`, 2 unusable input.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from evolve_action import evals, plan
from evolve_action.cli._common import (
    Invocation,
    add_trigger_flags,
    check_filters,
    discard_unusable_results,
    require_positive,
    results_format,
)
from evolve_action.cli._evals import (
    add_eval_flags,
    add_selection_flags,
    options_from_args,
    pick_reporter,
    print_dry_run,
    run_planned,
)
from evolve_action.config import Config, resolve_repository
from evolve_action.repo import Repository
from evolve_action.specs import Severity


def register(subparsers: Any) -> None:
    """Add `all` to `evolve-action run`."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "all",
        help="run checks, triggers and evals, then regenerate the reports",
        description=(
            "Tier 0 checks, then Tier 1 triggers, then Tier 2 evals (each with its own plan and "
            "--new/--modified/--failed selection), then regenerate EVALUATION.md. Check findings only "
            "fail the command under --strict."
        ),
    )
    add_selection_flags(parser)
    add_eval_flags(parser)
    add_trigger_flags(
        parser,
        runs_default=3,
        runs_help="trigger sessions per query (default 3)",
        early_stop_help="always make every trigger run (default: stop once a query's verdict "
        "cannot change)",
    )
    parser.add_argument("--no-report", action="store_true", help="do not regenerate the reports")
    parser.set_defaults(handler=handle)


def handle(inv: Invocation) -> int:
    """Run the four steps in order; return the exit code."""
    args = inv.args
    options = options_from_args(args)
    require_positive("--runs", args.runs, "at least 1")
    repository, config = resolve_repository(args.root, inv.cwd, args.layout, inv.environ)
    for warning in config.warnings:
        inv.stderr.write(f"warn: {warning}\n")
    check_filters(repository, plugins=options.plugins, skills=options.skills)
    discard_unusable_results(inv, repository, plugins=options.plugins, skills=options.skills)
    failed = _checks(inv, repository, config)
    checked: list[bool] = []
    trig_failed = _triggers(inv, repository, config, checked)
    planned = evals.plan_evals(repository, config, options, environ=inv.environ)
    if args.dry_run:
        print_dry_run(inv, planned)
        return 0
    outcome = run_planned(inv, repository, config, options, planned, check_credentials=not checked)
    if outcome.all_failed:
        from evolve_action.harness import sweep_failed

        raise sweep_failed(outcome.all_failed, tier="evals")
    if not args.no_report:
        _report(inv, repository, config, options)
    if failed or trig_failed or not outcome.ok:
        if args.strict:
            return 1
        inv.stderr.write("WARN: run: some checks or cases failed (pass --strict to exit 1)\n")
    return 0


def _checks(inv: Invocation, repository: Repository, config: Config) -> bool:
    from evolve_action.checks import CheckOptions, run_checks

    report = run_checks(repository, config, CheckOptions(signals=False))
    for finding in report.findings:
        tag = "FAIL" if finding.severity == Severity.ERROR else "WARN"
        inv.stderr.write(f"{tag}: {finding.message}\n")
    if not report.failures:
        inv.stdout.write(f"checks: all checks passed ({report.layout} layout)\n")
    else:
        inv.stdout.write(f"checks: {report.failures} failure(s)\n")
    return report.failures > 0 and bool(inv.args.strict)


def _triggers(inv: Invocation, repository: Repository, config: Config, checked: list[bool]) -> bool:
    """Tier 1 with the options of `run triggers`; returns True when a query failed.

    A missing Claude Code CLI skips the tier with a warning (the evals tier reports it too).
    With queries to run, the credentials preflight runs first (`checked` records that it did, so
    the evals tier does not repeat it); a sweep whose every session failed alike raises.
    """
    from evolve_action import harness as preflight
    from evolve_action import triggers
    from evolve_action.cli._triggers import options_from
    from evolve_action.harness import ClaudeCodeHarness

    args = inv.args
    topts = options_from(inv, resolved=(repository, config), require_cli=False)
    if args.dry_run:
        p, _, warnings = triggers.make_plan(topts)
        for w in warnings:
            inv.stderr.write(f"warn: {w}\n")
        inv.stdout.write(plan.to_json_lines(p) if args.json else plan.render(p))
        return False
    if not topts.models:
        inv.stderr.write("warn: triggers: no model has an available harness; skipped\n")
        return False
    if any(u.cases for u in triggers.make_plan(topts)[0].units):
        preflight.check_for_models(inv.environ, topts.models)
        checked.append(True)
    outcome = asyncio.run(triggers.run(topts, pick_reporter(inv), ClaudeCodeHarness(inv.environ)))
    if outcome.all_failed:
        raise preflight.sweep_failed(outcome.all_failed, tier="triggers")
    return outcome.failed


def _report(
    inv: Invocation, repository: Repository, config: Config, options: evals.EvalsOptions
) -> None:
    from evolve_action.cli._report import ReportOptions, generate

    generate(
        ReportOptions(
            repo=repository,
            config=config,
            results_format=results_format(options.results_format, config),
        ),
        stdout=inv.stdout,
        stderr=inv.stderr,
        cwd=inv.cwd,
    )
