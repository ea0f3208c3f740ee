"""`evolve-action run evals`: Tier 2 behavioural evals from the command line.

Owns: the flags of `run evals` (engine spec §2.3), turning them into `evals.EvalsOptions`, picking a
reporter (plain lines, a live line on a terminal, JSON lines with `--json`), printing the plan for
`--dry-run` (human, or one JSON object per planned case with `--json`), and the exit code: 0 done
(failures reported), 1 failures under `--strict`, 2 unusable input (an `EvolveError`, mapped by
`cli.main`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from typing import Any, TextIO

from evolve_action import evals, flows, plan
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
)
from evolve_action.cli._flags import add_selection_flags as common_selection_flags
from evolve_action.config import Config, resolve_repository
from evolve_action.errors import UsageError
from evolve_action.events import JsonLinesReporter, LineReporter, Reporter
from evolve_action.harness import Budget, check_for_models, default_jobs, sweep_failed
from evolve_action.repo import Repository


def add_selection_flags(parser: argparse.ArgumentParser) -> None:
    """Scope and selection flags shared by `run evals` and `run all` (see `_common`)."""
    common_selection_flags(
        parser,
        jobs_help="concurrent cases (default: twice the CPUs, at most 8)",
        timeout_default=None,
        timeout_help="per agent run (default: 600 for evals)",
        new_help="only cases without a complete stored result",
        modified_help="only cases whose inputs changed since their stored result",
        failed_help="only cases whose stored result failed or errored",
        strict_help="exit 1 when an eval fails or errors",
    )


def add_eval_flags(parser: argparse.ArgumentParser) -> None:
    """The evals-tier flags (also accepted by `run all`)."""
    parser.add_argument(
        "--max-turns",
        type=int,
        default=None,
        help="agent turn cap per eval (default: config max_turns, else 20)",
    )
    parser.add_argument(
        "--judge-model",
        default=None,
        metavar="ID",
        help="LLM judge model (default: config judge_model, else anthropic/claude-sonnet-5)",
    )
    base = parser.add_mutually_exclusive_group()
    base.add_argument(
        "--baseline",
        dest="baseline",
        action="store_const",
        const=True,
        default=None,
        help="run without-skill baselines (default)",
    )
    base.add_argument(
        "--no-baseline",
        dest="baseline",
        action="store_const",
        const=False,
        help="skip the without-skill baselines",
    )


def register(subparsers: Any) -> None:
    """Add `evals` to `evolve-action run`."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "evals",
        help="Tier 2: run behavioural evals with the skill (and baselines without it), grade them",
        description=(
            "Run every eval of evals/<skill>/evals.<ext> through Claude Code with only the skill under "
            "test installed (and once without it, as a baseline), grade the workspace with the "
            "deterministic assertions and one LLM-judge conversation per case, and write "
            "results.<ext> after every finished case."
        ),
    )
    add_selection_flags(parser)
    parser.add_argument(
        "--eval", action="append", metavar="ID", help="only the eval with this id (repeatable)"
    )
    add_eval_flags(parser)
    parser.set_defaults(handler=handle)


def options_from_args(args: argparse.Namespace) -> evals.EvalsOptions:
    """Build the engine options from parsed flags (validating numbers)."""
    jobs = args.jobs if args.jobs is not None else default_jobs()
    require_positive("--jobs", jobs, "a positive number of concurrent cases")
    if args.timeout is not None:
        require_positive("--timeout", args.timeout, "a positive number of seconds")
    max_turns = getattr(args, "max_turns", None)
    if max_turns is not None:
        require_positive("--max-turns", max_turns, "a positive number of turns")
    fmt = args.results_format
    return evals.EvalsOptions(
        plugins=split_list(args.plugin),
        skills=split_list(args.skill),
        models=split_list(args.model),
        harnesses=split_list(args.harness),
        eval_ids=tuple(getattr(args, "eval", None) or ()),
        jobs=jobs,
        timeout=args.timeout,
        max_turns=max_turns,
        judge_model=getattr(args, "judge_model", None),
        baseline=getattr(args, "baseline", None),
        new=args.new,
        modified=args.modified,
        failed=args.failed,
        keep_workspaces=args.keep_workspaces,
        results_format=fmt,
        budget=budget_from(args),
    )


def pick_reporter(inv: Invocation, budget: Budget | None = None) -> Reporter:
    """JSON lines with `--json`; otherwise plain lines (a live progress line on a terminal, a
    periodic `progress:` line elsewhere) showing `budget`'s spend so far when given."""
    if inv.args.json:
        return JsonLinesReporter(inv.stdout)
    live = bool(getattr(inv.stdout, "isatty", lambda: False)())
    spent = None if budget is None else (lambda: budget.spent_usd)
    return LineReporter(inv.stdout, live=live, spent=spent)


def print_plan(out: TextIO, planned: plan.Plan, *, as_json: bool) -> None:
    """`--dry-run`: the plan as text, or one JSON object per planned case."""
    out.write(plan.to_json_lines(planned) if as_json else plan.render(planned))
    out.flush()


def handle(inv: Invocation) -> int:
    """Run (or plan) the evals tier and return the exit code."""
    args = inv.args
    options = options_from_args(args)
    repository, config = resolve_repository(args.root, inv.cwd, args.layout, inv.environ)
    models = default_models(inv, options.models, options.harnesses, config)
    options = dataclasses.replace(options, models=models)
    for warning in config.warnings:
        inv.stderr.write(f"warn: {warning}\n")
    print_notices(inv, repository)
    flows.check_filters(repository, plugins=options.plugins, skills=options.skills)
    discard_unusable_results(inv, repository, plugins=options.plugins, skills=options.skills)
    planned = evals.plan_evals(repository, config, options, environ=inv.environ)
    check_eval_ids(planned, options.eval_ids)
    if not planned.models:  # before the dry run too: it exits as the run would
        for w in planned.warnings:
            inv.stderr.write(f"{w}\n")
        raise flows.no_model_error()
    if args.dry_run:
        print_dry_run(inv, planned)
        print_estimate(inv, flows.estimate_cost([planned.plan], runs=1, models=planned.models))
        return 0
    estimate = flows.estimate_cost([planned.plan], runs=1, models=planned.models)
    confirm_cost(inv, estimate, command="run evals")
    outcome = run_planned(inv, repository, config, options, planned)
    print_budget(inv, options.budget)
    if outcome.all_failed:
        raise sweep_failed(outcome.all_failed, tier="evals")
    return finish(inv, outcome, strict=args.strict)


def print_dry_run(inv: Invocation, planned: evals.EvalsPlan) -> None:
    """`--dry-run`: the planning warnings on stderr, the plan on stdout."""
    for w in planned.warnings:
        inv.stderr.write(f"{w}\n")
    print_plan(inv.stdout, planned.plan, as_json=inv.args.json)


def run_planned(
    inv: Invocation,
    repository: Repository,
    config: Config,
    options: evals.EvalsOptions,
    planned: evals.EvalsPlan,
    *,
    check_credentials: bool = True,
) -> evals.EvalsOutcome:
    """Run a planned sweep with the CLI's reporter (used by `run evals` and `run all`).

    With cases to run, the credentials preflight runs first (exit 2 before any session) unless
    the caller already ran it (`check_credentials=False`).
    """
    if check_credentials and planned.plan.cases:
        check_for_models(inv.environ, planned.models)
    if not inv.args.json:
        inv.stdout.write(parallelism_line(options.jobs, "evals"))
    return asyncio.run(
        evals.run_evals(
            repository,
            config,
            options,
            environ=inv.environ,
            reporter=pick_reporter(inv, options.budget),
            planned=planned,
        )
    )


def check_eval_ids(planned: evals.EvalsPlan, eval_ids: tuple[str, ...]) -> None:
    """Raise `UsageError` when an `--eval` id names no eval of the selected skills.

    Otherwise a typo plans nothing and exits 0 ("0 cases to run"), which reads like success.
    """
    known = {c.id for s in planned.sets for c in (s.evals or ())}
    unknown = [i for i in dict.fromkeys(eval_ids) if i not in known]
    if unknown:
        shown = sorted(known)
        more = f", … ({len(shown) - 20} more)" if len(shown) > 20 else ""
        raise UsageError(
            f"--eval {', '.join(unknown)}: no eval with this id in the selected skills",
            hint=f"ids: {', '.join(shown[:20]) or '(none)'}{more}",
        )


def finish(inv: Invocation, outcome: evals.EvalsOutcome, *, strict: bool) -> int:
    """Exit code and the closing `WARN:` line (evolve's wording)."""
    if outcome.ok:
        return 0
    if strict:
        return 1
    inv.stderr.write("WARN: evals: some evals failed (pass --strict to exit 1)\n")
    return 0
