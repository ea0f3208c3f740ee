"""`evolve-action plan`, `evolve-action merge` and `evolve-action shard`: scale-out over a CI matrix.

Owns: the flags of `plan` (those of `run all` plus `--shards`) and of `merge`, and printing their
outcomes; the action's sharded trio (`shard`, and `plan`/`merge` without their CLI arguments:
`flows.run_pr` in that mode). `run all --shard i/N [--fragments DIR]` lives in `_all`. The work is
`flows.plan_shards` and `flows.merge_fragments`. Exit codes: 0 done, 2 unusable input (including a
refused merge).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any, Literal

from evolve_action.cli._action import print_outcome
from evolve_action.cli._all import add_run_all_flags, run_all_options
from evolve_action.cli._common import Invocation
from evolve_action.cli._flags import add_repo_flags
from evolve_action.cli._report import print_report
from evolve_action.config import resolve_repository
from evolve_action.errors import UsageError
from evolve_action.events import LineReporter, NullReporter
from evolve_action.flows import PrOptions, merge_fragments, plan_shards, run_pr
from evolve_action.github import is_actions

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add `shard` (the action's shard job), `plan` and `merge` to the top-level subcommands."""
    shard = subparsers.add_parser(
        "shard",
        help="the action's shard job: one shard of the touched skills' work into result fragments",
        description=(
            "On GitHub Actions: run shard `shard` (i/N) of what `mode: plan` planned and write its "
            "result fragments under `fragments`; nothing is committed or posted. Locally, use "
            "`run all --shard I/N --fragments DIR`."
        ),
    )
    shard.set_defaults(handler=handle_shard)
    p: argparse.ArgumentParser = subparsers.add_parser(
        "plan",
        help="split the planned units of `run all` into shards balanced by estimated cost",
        description=(
            "Plan `run all` (nothing runs) and split its units into N shards balanced by estimated "
            "cost (sessions x expected seconds), never splitting a unit or an eval set. Prints the "
            "plan id, the matrix and each shard's units."
        ),
    )
    add_run_all_flags(p)
    p.add_argument(
        "--shards",
        type=int,
        default=None,
        metavar="N",
        help="number of shards (default 1; without it under GitHub Actions: the action's mode: plan)",
    )
    p.add_argument(
        "--tier",
        choices=("all", "triggers", "evals"),
        default="all",
        help="plan one agent tier, for `run triggers|evals --shard` (default: both, for `run all`)",
    )
    p.set_defaults(handler=handle_plan)
    m: argparse.ArgumentParser = subparsers.add_parser(
        "merge",
        help="fold the result fragments of `run all --shard` into the results files",
        description=(
            "Fold the result fragments that `run all --shard i/N --fragments DIR` wrote into the "
            "results files (in unit-key order, whatever the order of DIRs), then regenerate the "
            "report. A missing, duplicate or foreign-plan shard is named and refuses the merge "
            "unless --allow-missing."
        ),
    )
    add_repo_flags(m)
    m.add_argument(
        "dirs",
        nargs="*",
        type=Path,
        metavar="DIR",
        help="fragment directories (none under GitHub Actions: the action's mode: merge)",
    )
    m.add_argument(
        "--allow-missing",
        action="store_true",
        help="merge what belongs to the plan and report missing, duplicate or foreign shards",
    )
    m.add_argument("--no-report", action="store_true", help="do not regenerate the reports")
    m.set_defaults(handler=handle_merge)


def handle_action_mode(inv: Invocation, mode: Literal["plan", "shard", "merge"]) -> int:
    """The action's sharded trio: `shard`, and `plan`/`merge` without their CLI arguments."""
    if not is_actions(inv.environ):
        raise UsageError(
            f"{mode}: the action's `mode: {mode}` runs under GitHub Actions only",
            hint="on your machine: evolve-action plan --shards N, run all --shard I/N "
            "--fragments DIR, merge DIR",
        )
    outcome = run_pr(
        PrOptions(environ=inv.environ, cwd=inv.cwd, mode=mode),
        reporter=LineReporter(inv.stdout),
        commands=inv.stdout,
    )
    return print_outcome(inv, outcome)


def handle_shard(inv: Invocation) -> int:
    """`evolve-action shard`: the action's `mode: shard`."""
    return handle_action_mode(inv, "shard")


def handle_plan(inv: Invocation) -> int:
    """Print the shard plan (JSON with `--json`)."""
    args = inv.args
    if args.shards is None and is_actions(inv.environ):
        return handle_action_mode(inv, "plan")
    if args.shards is None:
        args.shards = 1
    if args.shards < 1:
        raise UsageError(f"--shards {args.shards}: want at least 1")
    tiers = ("triggers", "evals") if args.tier == "all" else (args.tier,)
    options = dataclasses.replace(run_all_options(inv), tiers=tiers)
    sp = plan_shards(options, args.shards, reporter=NullReporter())
    if args.json:
        inv.stdout.write(json.dumps(sp.to_json(), sort_keys=True) + "\n")
        return 0
    inv.stdout.write(f"plan {sp.plan_id}: {len(sp.shards)} shard(s)\n")
    if sp.estimate is not None:
        inv.stdout.write(sp.estimate.line())
    for s in sp.shards:
        sessions = sum(u.sessions for u in s.units)
        inv.stdout.write(
            f"shard {s.label}: {len(s.units)} unit(s), {sessions} session(s), ~{s.cost_seconds} s\n"
        )
        for u in s.units:
            inv.stdout.write(f"  {u.plugin}/{u.skill} {u.tier} {u.model}: {len(u.cases)} case(s)\n")
    return 0


def handle_merge(inv: Invocation) -> int:
    """Merge fragments; print what was merged and any problems."""
    args = inv.args
    if not args.dirs and is_actions(inv.environ):
        return handle_action_mode(inv, "merge")
    if not args.dirs:
        raise UsageError(
            "merge: no fragment directory given",
            hint="evolve-action merge DIR… (the directories `run all --shard` wrote)",
        )
    repository, config = resolve_repository(args.root, inv.cwd, args.layout, inv.environ)
    dirs = [d if d.is_absolute() else inv.cwd / d for d in args.dirs]
    outcome = merge_fragments(
        repository,
        config,
        dirs,
        allow_missing=bool(args.allow_missing),
        report=not args.no_report,
        cwd=inv.cwd,
    )
    for problem in outcome.problems:
        inv.stderr.write(f"WARN: merge: {problem}\n")
    inv.stdout.write(
        f"merge: plan {outcome.plan_id}: {len(outcome.merged)} fragment(s) into "
        f"{len(outcome.written)} results file(s)\n"
    )
    if outcome.report is not None:
        print_report(outcome.report, stdout=inv.stdout, stderr=inv.stderr)
    return 0
