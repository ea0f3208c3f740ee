"""`evolve-action run triggers`: Tier 1 trigger accuracy from the command line.

Owns: the flags of `run triggers` (engine spec §2.3 plus `--no-early-stop`, `--dry-run`, `--json`),
turning them and the config into `triggers.TriggerOptions`, picking a reporter (a live progress line on
a terminal, plain lines otherwise, JSON lines with `--json`), printing the plan for `--dry-run` (human,
or one JSON object per planned case with `--json`), and the exit code: 0 done (failures reported),
1 failures under `--strict`, 2 unusable input (an `EvolveError`, mapped by `cli.main`).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from evolve_action import flows, plan, triggers
from evolve_action.cli._common import (
    Invocation,
    budget_from,
    confirm_cost,
    default_models,
    discard_unusable_results,
    parallelism_line,
    print_budget,
    print_estimate,
    print_notices,
    require_positive,
    split_list,
    with_install_flag,
)
from evolve_action.cli._flags import (
    add_selection_flags,
    add_trigger_flags,
)
from evolve_action.config import Config, resolve_repository
from evolve_action.events import JsonLinesReporter, LineReporter, Reporter
from evolve_action.flows import trigger_options
from evolve_action.harness import agent_harness, check_for_models, default_jobs, sweep_failed
from evolve_action.repo import Repository


def register(subparsers: Any) -> None:
    """Add `triggers` to `evolve-action run`."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "triggers",
        help="Tier 1: does each skill fire for the right prompts (real agent sessions)?",
        description=(
            "Send every query of evals/<skill>/triggers.<ext> to Claude Code --runs times with all of "
            "the plugin's skills installed, count the sessions that invoke the skill (a Skill call "
            "naming it, or a Read of its SKILL.md, anywhere in the session), and write "
            "results.<ext> after every finished query. Failed sessions are errors, never misses."
        ),
    )
    add_selection_flags(
        parser,
        jobs_help="concurrent agent sessions (default: twice the CPUs, at most 8)",
        timeout_default=triggers.DEFAULT_TIMEOUT_SECONDS,
        timeout_help="per session (default 120)",
        new_help="only queries without a complete result",
        modified_help="only queries whose query or skill changed",
        failed_help="only queries whose stored verdict failed",
        strict_help="exit 1 when a query fails or errors",
        keep_help="keep the temp workspaces",
    )
    add_trigger_flags(
        parser,
        runs_default=triggers.DEFAULT_RUNS,
        runs_help="sessions per query (default 3)",
        early_stop_help="always make every run (default: stop a query once its verdict cannot "
        "change)",
    )
    parser.set_defaults(handler=handle)


def options_from(
    inv: Invocation,
    *,
    resolved: tuple[Repository, Config] | None = None,
    require_cli: bool = True,
) -> triggers.TriggerOptions:
    """Resolve repository, config, models and flags into engine options.

    Shared by `run triggers` and `run all` (engine spec §2.3). `resolved` is the repository and
    config when the caller already resolved them (and printed the config warnings and checked the
    filters). The timeout is `--timeout` when given, else 120 s per session. A missing Claude Code
    CLI raises, unless `require_cli` is false: then no model is selected (`run all` skips the
    tier). A dry run plans as if the CLI were installed.
    """
    args = inv.args
    require_positive("--runs", args.runs, "at least 1")
    jobs = args.jobs if args.jobs is not None else default_jobs()
    require_positive("--jobs", jobs, "a positive number of concurrent sessions")
    timeout = args.timeout if args.timeout is not None else triggers.DEFAULT_TIMEOUT_SECONDS
    require_positive("--timeout", timeout, "a positive number of seconds")
    plugins, skills = split_list(args.plugin), split_list(args.skill)
    if resolved is None:
        repo, config = resolve_repository(args.root, inv.cwd, args.layout, inv.environ)
        config = with_install_flag(inv, config)
        for warning in config.warnings:
            inv.stderr.write(f"warn: {warning}\n")
        print_notices(inv, repo)
        flows.check_filters(repo, plugins=plugins, skills=skills)
        discard_unusable_results(inv, repo, plugins=plugins, skills=skills)
    else:
        repo, config = resolved
    models = default_models(inv, args.model or (), args.harness or (), config)
    built = trigger_options(
        repo,
        config,
        inv.environ,
        plugins=plugins,
        skills=skills,
        models=models,
        harnesses=args.harness or (),
        new=args.new,
        modified=args.modified,
        failed=args.failed,
        runs=args.runs,
        jobs=jobs,
        timeout=timeout,
        early_stop=not args.no_early_stop,
        keep_workspaces=args.keep_workspaces,
        dry_run=args.dry_run,
        results_format=args.results_format,
        require_cli=require_cli,
        budget=budget_from(args),
    )
    for warning in built.warnings:
        inv.stderr.write(f"WARN: {warning}\n")
    return built.options


def handle(inv: Invocation) -> int:
    """Run (or plan) the trigger tier and map the outcome to an exit code."""
    args = inv.args
    options = options_from(inv)
    reporter: Reporter
    if args.json:
        reporter = JsonLinesReporter(inv.stdout)
    else:
        budget = options.budget
        spent = None if budget is None else (lambda: budget.spent_usd)
        reporter = LineReporter(inv.stdout, live=_isatty(inv.stdout), spent=spent)
    if not options.models:  # before the dry run too: it exits as the run would
        raise flows.no_model_error()
    if args.dry_run:
        p, _, warnings = triggers.make_plan(options)
        for w in warnings:
            inv.stderr.write(f"warn: {w}\n")
        inv.stdout.write(plan.to_json_lines(p) if args.json else plan.render(p))
        print_estimate(inv, flows.estimate_cost([p], runs=options.runs, models=options.models))
        return 0
    if not args.json:
        inv.stdout.write(parallelism_line(options.jobs, "agent runs"))
    planned = triggers.make_plan(options)
    estimate = flows.estimate_cost([planned[0]], runs=options.runs, models=options.models)
    confirm_cost(inv, estimate, command="run triggers")
    if any(u.cases for u in planned[0].units):
        check_for_models(inv.environ, options.models, judge=False)  # exit 2 before any session
    harness = agent_harness(inv.environ)
    outcome = asyncio.run(triggers.run(options, reporter, harness, planned=planned))
    print_budget(inv, options.budget)
    if outcome.all_failed:
        raise sweep_failed(outcome.all_failed, tier="triggers")
    if outcome.failed:
        if args.strict:
            return 1
        inv.stderr.write("WARN: triggers: some queries failed (pass --strict to exit 1)\n")
    return 0


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
