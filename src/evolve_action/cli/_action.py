"""`evolve-action pr`, `evolve-action gate` and `evolve-action run` (no tier): the action's modes.

Owns the flags of `pr` (`--local` and the pre-push gate's `--base`, `--out`, `--scripted`,
`--model`, `--runs`, `--jobs`, `--max-cost-usd`, `--base-evidence`, `--max-runs`, `--fail-on`,
`--write`) and `gate`, the action's `mode: run`
(`run` without a tier, under GitHub Actions). Inputs come from `INPUT_*` and the event from
`GITHUB_EVENT_PATH`, as the runner sets them (see docs/action.md); the jobs are
`flows.run_pr` and `flows.run_gate`. Prints the flow's lines and exits with its code.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from evolve_action.cli._common import (
    Invocation,
    budget_from,
    require_positive,
    split_list,
)
from evolve_action.cli._flags import add_repo_flags
from evolve_action.config import BASE_MODES
from evolve_action.errors import UsageError
from evolve_action.events import LineReporter
from evolve_action.flows import ActionOutcome, PrOptions, run_gate, run_pr, scripted_server
from evolve_action.github import FAIL_ON, is_actions


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `pr` and `gate` (`shard`, the action's third job mode, is in `_shard`)."""
    pr = subparsers.add_parser(
        "pr",
        help="the action's PR job: evaluate the touched skills, commit, comment (--local: preview)",
        description=(
            "On GitHub Actions (inputs from INPUT_*, the event from GITHUB_EVENT_PATH): Tier 0 on the "
            "whole repository, then the missing or stale cases of the skills the pull request "
            "touched, the report, the commit-back and the sticky comment. With --local: the same "
            "evaluation of your working tree against a base ref; nothing is posted or committed, "
            "the comment and the step summary are written to files."
        ),
    )
    pr.add_argument(
        "--local",
        action="store_true",
        help="preview on the working tree: no GitHub, nothing posted or committed",
    )
    pr.add_argument(
        "--base",
        metavar="REF",
        default=None,
        help="with --local: the base to compare against (default: merge base with origin/HEAD or main)",
    )
    pr.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="with --local: where to write pr-comment.md and step-summary.md (default: .evolve-action)",
    )
    pr.add_argument(
        "--scripted",
        action="store_true",
        help="with --local: the agent and the judge talk to the built-in scripted model server "
        "(the demo's policy; offline, free) instead of the Anthropic API",
    )
    local = pr.add_argument_group("with --local")
    local.add_argument(
        "--model",
        action="append",
        metavar="MODEL",
        help="model(s) to evaluate (repeatable or comma-separated; default: config `models`, else "
        "one default model)",
    )
    local.add_argument("--runs", type=int, default=None, help="trigger sessions per query (3)")
    local.add_argument("--jobs", type=int, default=None, help="concurrent agent sessions")
    local.add_argument(
        "--max-cost-usd", type=float, default=None, metavar="USD", help="spending cap for the run"
    )
    local.add_argument(
        "--base-evidence",
        choices=BASE_MODES,
        default=None,
        help="the base side: stored results, a rerun of the base commit's version, or auto "
        "(default: config pr.base, else auto)",
    )
    local.add_argument(
        "--max-runs",
        type=int,
        default=None,
        metavar="N",
        help="runs per query per side an undecided comparison may grow to (default: config "
        "pr.max_runs, else 6)",
    )
    local.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="regression",
        help="which outcome exits 1, as the action's fail_on (default: regression)",
    )
    local.add_argument(
        "--write",
        action="store_true",
        help="evaluate in place: update the results files and reports of the working tree",
    )
    pr.set_defaults(handler=handle_pr)
    gate = subparsers.add_parser(
        "gate",
        help="the action's release gate: committed evidence against the thresholds (no agent)",
        description=(
            "report --check --strict over the committed results, with the action's inputs "
            "(min_triggers_pass_rate, min_evals_pass_rate, fail_on): one annotation per breach, "
            "the step summary and the outputs. Read-only: it writes no report or results file. "
            "It gates the models the repository evaluates (report.thresholds.models, else "
            "config models, else the one default model)."
        ),
    )
    add_repo_flags(gate)
    gate.set_defaults(handler=handle_gate)


def handle_pr(inv: Invocation) -> int:
    """`evolve-action pr [--local]`."""
    args = inv.args
    local_only = {
        "--base": args.base is not None,
        "--out": args.out is not None,
        "--scripted": args.scripted,
        "--model": bool(args.model),
        "--runs": args.runs is not None,
        "--jobs": args.jobs is not None,
        "--max-cost-usd": args.max_cost_usd is not None,
        "--base-evidence": args.base_evidence is not None,
        "--max-runs": args.max_runs is not None,
        "--fail-on": args.fail_on != "regression",
        "--write": args.write,
    }
    given = [flag for flag, used in local_only.items() if used]
    if not args.local and given:
        raise UsageError(
            f"{', '.join(given)} go{'es' if len(given) == 1 else ''} with --local "
            "(on GitHub Actions the inputs decide)",
            hint="evolve-action pr --local --base main",
        )
    for flag, value in (
        ("--runs", args.runs),
        ("--jobs", args.jobs),
        ("--max-runs", args.max_runs),
    ):
        if value is not None:
            require_positive(flag, value, "at least 1")
    budget = budget_from(args)
    if not args.local and not is_actions(inv.environ):
        raise UsageError(
            "pr: not running in GitHub Actions (GITHUB_ACTIONS is not true)",
            hint="use `evolve-action pr --local` to preview a PR from your working tree",
        )
    out = args.out if args.out is None or args.out.is_absolute() else inv.cwd / args.out
    with contextlib.ExitStack() as stack:
        environ = dict(inv.environ)
        if args.scripted:
            server = stack.enter_context(scripted_server(environ, prefix="evolve-pr-"))
            environ = server.environ
            inv.stdout.write(
                f"pr: the agent and the judge talk to the scripted model server at "
                f"{server.base_url} (offline, free; the demo's policy)\n"
            )
        outcome = run_pr(
            PrOptions(
                environ=environ,
                cwd=inv.cwd,
                local=args.local,
                base=args.base,
                out_dir=out,
                models=split_list(args.model),
                runs=args.runs,
                jobs=args.jobs,
                max_cost_usd=budget.limit_usd if budget is not None else None,
                base_mode=args.base_evidence,
                max_runs=args.max_runs,
                fail_on=args.fail_on,
                write=args.write,
            ),
            reporter=LineReporter(inv.stdout),
            commands=inv.stdout,
        )
    return print_outcome(inv, outcome)


def handle_run(inv: Invocation) -> int:
    """`evolve-action run` without a tier: the action's `mode: run` under GitHub Actions."""
    if not is_actions(inv.environ):
        raise UsageError(
            "run: choose a tier: checks, triggers, evals or all",
            hint="evolve-action run all (without a tier, `run` is the GitHub Action's mode: run)",
        )
    outcome = run_pr(
        PrOptions(environ=inv.environ, cwd=inv.cwd, mode="run"),
        reporter=LineReporter(inv.stdout),
        commands=inv.stdout,
    )
    return print_outcome(inv, outcome)


def handle_gate(inv: Invocation) -> int:
    """`evolve-action gate`."""
    args = inv.args
    outcome = run_gate(
        inv.environ, inv.cwd, commands=inv.stdout, root=args.root, layout=args.layout
    )
    return print_outcome(inv, outcome)


def print_outcome(inv: Invocation, outcome: ActionOutcome) -> int:
    for line in outcome.lines:
        inv.stdout.write(line + "\n")
    return outcome.exit_code
