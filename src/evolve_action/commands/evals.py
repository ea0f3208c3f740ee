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
import os
from typing import Any, TextIO

from evolve_action import evals, plan
from evolve_action.commands._common import Invocation, add_repo_flags
from evolve_action.config import resolve_repository
from evolve_action.errors import UsageError
from evolve_action.events import JsonLinesReporter, LineReporter, Reporter


def default_jobs() -> int:
    """evolve's default `--jobs`: `(NumCPU + 1) // 2`."""
    return ((os.cpu_count() or 1) + 1) // 2


def _split(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or ():
        out.extend(t.strip() for t in v.split(",") if t.strip())
    return tuple(out)


def add_selection_flags(parser: argparse.ArgumentParser) -> None:
    """Scope and selection flags shared by `run evals` and `run all`."""
    add_repo_flags(parser)
    parser.add_argument(
        "--plugin",
        "--plugins",
        action="append",
        metavar="NAME",
        help="only these plugins (repeatable, comma-separated)",
    )
    parser.add_argument(
        "--skill",
        "--skills",
        action="append",
        metavar="NAME",
        help="only these skills (repeatable, comma-separated)",
    )
    parser.add_argument(
        "--model",
        "--models",
        action="append",
        metavar="ID",
        help="models: all, a provider, or canonical/bare ids (repeatable, comma-separated)",
    )
    parser.add_argument(
        "--harness",
        "--harnesses",
        action="append",
        metavar="ID",
        help="only these harnesses (repeatable, comma-separated)",
    )
    parser.add_argument(
        "--jobs", type=int, default=None, help="concurrent cases (default: (CPUs+1)/2)"
    )
    parser.add_argument(
        "--timeout",
        type=int,
        default=None,
        metavar="SECONDS",
        help="per agent run (default: 600 for evals)",
    )
    parser.add_argument(
        "--new", action="store_true", help="only cases without a complete stored result"
    )
    parser.add_argument(
        "--modified",
        action="store_true",
        help="only cases whose inputs changed since their stored result",
    )
    parser.add_argument(
        "--failed", action="store_true", help="only cases whose stored result failed or errored"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the plan and run nothing")
    parser.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output: the plan (with --dry-run) or JSON-lines events",
    )
    parser.add_argument(
        "--keep-workspaces",
        action="store_true",
        help="keep the temp workspaces (paths are printed)",
    )
    parser.add_argument(
        "--results-format",
        choices=("json", "jsonc", "yaml", "yml"),
        default=None,
        help="results file format (default: config results_format, else json)",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when an eval fails or errors")


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
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: want a positive number of concurrent cases")
    if args.timeout is not None and args.timeout < 1:
        raise UsageError(f"--timeout {args.timeout}: want a positive number of seconds")
    max_turns = getattr(args, "max_turns", None)
    if max_turns is not None and max_turns < 1:
        raise UsageError(f"--max-turns {max_turns}: want a positive number of turns")
    fmt = args.results_format
    return evals.EvalsOptions(
        plugins=_split(args.plugin),
        skills=_split(args.skill),
        models=_split(args.model),
        harnesses=_split(args.harness),
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
        results_format="yaml" if fmt == "yml" else fmt,
    )


def pick_reporter(inv: Invocation) -> Reporter:
    """JSON lines with `--json`; otherwise plain lines (a live progress line on a terminal)."""
    if inv.args.json:
        return JsonLinesReporter(inv.stdout)
    live = bool(getattr(inv.stdout, "isatty", lambda: False)())
    return LineReporter(inv.stdout, live=live)


def print_plan(out: TextIO, planned: plan.Plan, *, as_json: bool) -> None:
    """`--dry-run`: the plan as text, or one JSON object per planned case."""
    out.write(plan.to_json_lines(planned) if as_json else plan.render(planned))
    out.flush()


def handle(inv: Invocation) -> int:
    """Run (or plan) the evals tier and return the exit code."""
    args = inv.args
    options = options_from_args(args)
    repository, config = resolve_repository(args.root, inv.cwd, args.layout, inv.environ)
    for warning in config.warnings:
        inv.stderr.write(f"warn: {warning}\n")
    planned = evals.plan_evals(repository, config, options, environ=inv.environ)
    if args.dry_run:
        for w in planned.warnings:
            inv.stderr.write(f"{w}\n")
        print_plan(inv.stdout, planned.plan, as_json=args.json)
        return 0
    if not planned.models:
        raise UsageError(
            "no model to run: no selected model has an available harness (claude)",
            hint="check --model and the config's models/harnesses",
        )
    if not args.json:
        inv.stdout.write(f"parallelism: {options.jobs} concurrent evals\n")
    outcome = asyncio.run(
        evals.run_evals(
            repository,
            config,
            options,
            environ=inv.environ,
            reporter=pick_reporter(inv),
            planned=planned,
        )
    )
    return finish(inv, outcome, strict=args.strict)


def finish(inv: Invocation, outcome: evals.EvalsOutcome, *, strict: bool) -> int:
    """Exit code and the closing `WARN:` line (evolve's wording)."""
    if outcome.ok:
        return 0
    if strict:
        return 1
    inv.stderr.write("WARN: evals: some evals failed (pass --strict to exit 1)\n")
    return 0
