"""`evolve-action run all`: checks → triggers → evals → report, in one command.

Owns: the flags of `run all` (the union of the triggers and evals flags, engine spec §2.3), turning
them into `flows.RunAllOptions`, printing each step as the flow finishes it (`_steps.StepPrinter`)
and the exit code: 0 done, 1 failures under `--strict`, 2 unusable input. The steps themselves are
`flows.run_all`. With `--scripted` the run talks to the scripted model server (the demo's policy),
started here for the run.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any

from evolve_action import plan
from evolve_action.catalog import BoundModel
from evolve_action.cli._common import (
    Handler,
    Invocation,
    confirm_cost,
    default_models,
    discard_unusable_results,
    needs_confirmation,
    print_budget,
    print_estimate,
    print_notices,
    require_positive,
    with_install_flag,
)
from evolve_action.cli._evals import (
    add_eval_flags,
    add_selection_flags,
    options_from_args,
    pick_reporter,
)
from evolve_action.cli._flags import add_trigger_flags
from evolve_action.cli._steps import StepPrinter, finish
from evolve_action.config import resolve_repository
from evolve_action.errors import UsageError
from evolve_action.flows import (
    RunAllOptions,
    check_filters,
    estimate_cost,
    parse_shard,
    run_all,
    run_shard,
    scripted_server,
)
from evolve_action.triggers import DEFAULT_RUNS


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
    add_run_all_flags(parser)
    add_shard_flags(parser, plan_hint="`evolve-action plan --shards N`")
    parser.add_argument(
        "--scripted",
        action="store_true",
        help="the agent and the judge talk to the built-in scripted model server with the "
        "demo's policy (offline, free; e.g. after `init --scripted`)",
    )
    parser.set_defaults(handler=handle)
    # `run triggers|evals --shard I/N`: one tier of the same scale-out (registered before `all`).
    for tier in ("triggers", "evals"):
        sub = subparsers.choices[tier]
        add_shard_flags(sub, plan_hint=f"`evolve-action plan --shards N --tier {tier}`")
        sub.set_defaults(handler=_or_shard(sub.get_default("handler"), tier))


def _or_shard(handler: Handler, tier: str) -> Handler:
    """`handler`, unless `--shard`/`--fragments` is given: then one shard of `tier` alone."""

    def dispatch(inv: Invocation) -> int:
        if inv.args.shard is None and inv.args.fragments is None:
            return handler(inv)
        return handle_shard(inv, (tier,))

    return dispatch


def add_shard_flags(parser: argparse.ArgumentParser, *, plan_hint: str) -> None:
    """`--shard I/N` and `--fragments DIR` (run all, run triggers, run evals)."""
    parser.add_argument(
        "--shard",
        default=None,
        metavar="I/N",
        help=f"run shard I of N of {plan_hint} (1-based)",
    )
    parser.add_argument(
        "--fragments",
        type=Path,
        default=None,
        metavar="DIR",
        help="with --shard: write result fragments to DIR for `merge`; touch no results file",
    )


def add_run_all_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that decide what `run all` plans (shared with `plan`)."""
    add_selection_flags(parser)
    add_eval_flags(parser)
    add_trigger_flags(
        parser,
        runs_default=DEFAULT_RUNS,
        runs_help="trigger sessions per query (default 3)",
        early_stop_help="always make every trigger run (default: stop once a query's verdict "
        "cannot change)",
    )
    parser.add_argument("--no-report", action="store_true", help="do not regenerate the reports")


def run_all_options(inv: Invocation) -> RunAllOptions:
    """Resolve the `run all` flags (and the repository) into the flow's options."""
    args = inv.args
    options = options_from_args(args)
    runs = getattr(args, "runs", DEFAULT_RUNS)  # `run evals --shard` has no --runs
    require_positive("--runs", runs, "at least 1")
    repository, config = resolve_repository(args.root, inv.cwd, args.layout, inv.environ)
    config = with_install_flag(inv, config)
    models = default_models(inv, options.models, options.harnesses, config)
    options = dataclasses.replace(options, models=models)
    for warning in config.warnings:
        inv.stderr.write(f"warn: {warning}\n")
    print_notices(inv, repository)
    check_filters(repository, plugins=options.plugins, skills=options.skills)
    discard_unusable_results(inv, repository, plugins=options.plugins, skills=options.skills)
    return RunAllOptions(
        repository=repository,
        config=config,
        environ=inv.environ,
        evals=options,
        runs=runs,
        early_stop=not getattr(args, "no_early_stop", False),
        dry_run=args.dry_run,
        report=not getattr(args, "no_report", False),
        strict=bool(args.strict),
    )


def handle(inv: Invocation) -> int:
    """Resolve the flags, run the flow (printing each step as it finishes), map to an exit code."""
    args = inv.args
    if args.fragments is not None and args.shard is None:
        raise UsageError("--fragments needs --shard I/N")
    if args.shard is not None:
        if args.scripted:
            raise UsageError("--scripted does not go with --shard (run one shard for real)")
        return handle_shard(inv, ("triggers", "evals"))
    with contextlib.ExitStack() as stack:
        if args.scripted:
            server = stack.enter_context(scripted_server(inv.environ, prefix="evolve-run-"))
            inv = dataclasses.replace(inv, environ=server.environ)
            inv.stdout.write(
                f"run: --scripted: the agent and the judge talk to the scripted model server "
                f"at {server.base_url} (offline, free; the demo's policy)\n"
            )
        return _run(inv)


def _run(inv: Invocation) -> int:
    args = inv.args
    options = run_all_options(inv)
    printer = StepPrinter(inv)
    reporter = pick_reporter(inv, options.evals.budget)

    def confirm(plans: list[plan.Plan], models: list[BoundModel]) -> None:
        """Ask before an estimate above the threshold, on the plans the run then executes."""
        estimate = estimate_cost(plans, runs=options.runs, models=models)
        confirm_cost(inv, estimate, command="run all")

    outcome = run_all(
        options,
        reporter=reporter,
        on_step=printer,
        cwd=inv.cwd,
        confirm=None if args.dry_run or not needs_confirmation(inv) else confirm,
    )
    print_budget(inv, options.evals.budget)
    if args.dry_run:
        estimate = estimate_cost(printer.plans, runs=options.runs, models=printer.models)
        print_estimate(inv, estimate)
        return 0
    return finish(inv, outcome, strict=bool(args.strict))


def handle_shard(inv: Invocation, tiers: tuple[str, ...]) -> int:
    """`--shard I/N [--fragments DIR]` of `run all` (both agent tiers) or of one tier."""
    args = inv.args
    if args.fragments is not None and args.shard is None:
        raise UsageError("--fragments needs --shard I/N")
    index, total = parse_shard(args.shard)
    opts = dataclasses.replace(run_all_options(inv), tiers=tiers)
    if args.dry_run:
        raise UsageError("--shard: use `evolve-action plan --shards N` to see the shards")
    fragments = args.fragments
    if fragments is not None and not fragments.is_absolute():
        fragments = inv.cwd / fragments
    sp, sharded = run_shard(
        opts,
        index,
        total,
        reporter=pick_reporter(inv, opts.evals.budget),
        fragments=fragments,
        on_step=StepPrinter(inv),
        cwd=inv.cwd,
    )
    if args.json:
        record = {"event": "Shard", "index": index, "total": total, "plan_id": sp.plan_id}
        inv.stdout.write(json.dumps(record, sort_keys=True) + "\n")
    else:
        inv.stdout.write(f"shard {index}/{total} of plan {sp.plan_id}\n")
    print_budget(inv, opts.evals.budget)
    if sharded is None:
        return 0
    return finish(inv, sharded, strict=bool(args.strict))
