"""`evolve-action demo`: evaluate a copy of the example repository end to end, offline by default.

Owns: the flags of `demo` and the console text around the run (where the copy is, which model
answers, the closing summary). The demo itself is `flows.run_demo`, which runs `flows.run_all` —
checks → triggers → evals → report — on the copy, so the demo exercises exactly the code a real
run does. Without Anthropic credentials in the environment (or
with `--scripted`) the agent and the judge talk to the scripted model server, started in-process
with the bundled demo policy; with credentials the demo refuses to spend money unless `--yes` is
given (it never prompts: CI has no stdin). Exit codes: those of `run all`; 2 when the example
repository is missing, `--out` is unusable, or credentials are present without `--yes`/`--scripted`;
130 on Ctrl-C, after one line naming the half-evaluated copy it leaves and how to finish it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evolve_action import flows
from evolve_action.cli._common import Invocation, require_positive, split_list
from evolve_action.cli._steps import StepPrinter, finish
from evolve_action.events import LineReporter
from evolve_action.harness import default_jobs

DEFAULT_RUNS = flows.DEFAULT_RUNS
DEFAULT_MODEL = flows.DEFAULT_MODEL
CODEX_MODEL = flows.CODEX_MODEL


def register(subparsers: Any) -> None:
    """Add `demo` to the top-level commands."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help="evaluate a copy of the example plugin repository end to end (offline by default)",
        description=(
            "Copy the example plugin repository (shipped with the package) to a fresh directory and run the whole "
            "pipeline on the copy: checks, triggers, evals (with and without each skill) and the "
            "report. Without ANTHROPIC_API_KEY/CLAUDE_CODE_OAUTH_TOKEN the real Claude Code CLI "
            "and the judge talk to the built-in scripted model server: offline, free, "
            "deterministic. Your own tree is never modified."
        ),
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help="the plugin repository to copy and evaluate (default: the example marketplace that "
        "ships with evolve-action)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to put the copy: a new or empty directory (default: a fresh temp dir, printed)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="concurrent agent sessions (default: twice the CPUs, at most 8)",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=DEFAULT_RUNS,
        help=f"trigger sessions per query (default {DEFAULT_RUNS})",
    )
    parser.add_argument(
        "--model",
        action="append",
        metavar="ID",
        help=(
            f"model(s) to evaluate, as for run all (default: {DEFAULT_MODEL}, plus "
            f"{CODEX_MODEL} when OpenAI Codex is installed)"
        ),
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the agents' temp workspaces (paths are printed)"
    )
    backend = parser.add_mutually_exclusive_group()
    backend.add_argument(
        "--scripted",
        action="store_true",
        help="use the scripted model server even when Anthropic credentials are set",
    )
    backend.add_argument(
        "--yes",
        action="store_true",
        help="with Anthropic credentials set: use the real API (this costs money)",
    )
    parser.add_argument(
        "--log",
        type=Path,
        default=None,
        metavar="FILE",
        help="append the scripted model server's request log (JSON lines) to FILE",
    )
    parser.set_defaults(handler=handle)


def handle(inv: Invocation) -> int:
    """Resolve the flags, run the demo flow (printing as it goes), print the summary."""
    args = inv.args
    jobs = args.jobs if args.jobs is not None else default_jobs()
    require_positive("--jobs", jobs, "a positive number of concurrent sessions")
    require_positive("--runs", args.runs, "at least 1")
    if args.root is None:
        source, label = flows.bundled_examples(), "the bundled examples"
    else:
        source = args.root if args.root.is_absolute() else inv.cwd / args.root
        label = str(args.root)
    target = (
        None if args.out is None else args.out if args.out.is_absolute() else inv.cwd / args.out
    )
    printer = _DemoPrinter(inv)
    try:
        outcome = _run(inv, source, label, target, jobs, printer)
    except KeyboardInterrupt:
        if printer.copy is not None:  # say what the interrupted demo left, and where
            inv.stderr.write(
                f"demo: interrupted: the half-evaluated copy is left in {printer.copy} (the "
                "cases that finished are recorded there); delete it, or finish it with "
                f"`evolve-action run all --root {printer.copy}`\n"
            )
        raise
    # The bundled examples fail a few cases on purpose: say so instead of run all's WARN line.
    code = 0 if args.root is None else finish(inv, outcome.run, strict=False)
    return _print_outcome(inv, outcome, code)


def _run(
    inv: Invocation,
    source: Path,
    label: str,
    target: Path | None,
    jobs: int,
    printer: _DemoPrinter,
) -> flows.DemoOutcome:
    args = inv.args
    return flows.run_demo(
        flows.DemoOptions(
            source=source,
            label=label,
            target=target,
            environ=inv.environ,
            jobs=jobs,
            runs=args.runs,
            models=split_list(args.model) if args.model else None,
            keep_workspaces=args.keep,
            scripted=args.scripted,
            yes=args.yes,
            log_path=None if args.log is None else inv.cwd / args.log,
        ),
        reporter=LineReporter(
            inv.stdout, live=bool(getattr(inv.stdout, "isatty", lambda: False)())
        ),
        on_step=printer,
        cwd=inv.cwd,
    )


def _print_outcome(inv: Invocation, outcome: flows.DemoOutcome, code: int) -> int:
    args = inv.args
    inv.stdout.write(flows.render_summary(outcome.summary))
    if outcome.run.failed and args.root is None:
        inv.stdout.write(
            "  (the failures are on purpose: the scripted agent makes realistic trigger and "
            "commit-message mistakes, so the report and the comment have something to show)\n"
        )
    if outcome.preview is not None and outcome.preview.files:
        inv.stdout.write(
            "\nPR preview: a change adding one trigger query to csv-report, as `evolve-action pr "
            "--local` shows it (only the new query ran)\n"
        )
        for line in outcome.preview.lines:
            inv.stdout.write(f"  {line}\n")
    inv.stdout.flush()
    return code


class _DemoPrinter:
    """Prints the demo's own lines, then each `run all` step as `run all` does."""

    def __init__(self, inv: Invocation) -> None:
        self._inv = inv
        self._steps = StepPrinter(inv)
        self.copy: Path | None = None
        """Where the examples were copied (once they were)."""

    def __call__(self, step: flows.DemoCopied | flows.DemoBackendReady | flows.RunAllStep) -> None:
        out = self._inv.stdout
        if isinstance(step, flows.DemoCopied):
            self.copy = step.copy
            out.write(f"demo: copied {step.label} to {step.copy} (your tree is not modified)\n")
        elif isinstance(step, flows.DemoBackendReady):
            if step.backend is flows.Backend.SCRIPTED:
                why = "--scripted" if step.credential else "no Anthropic credentials set"
                out.write(
                    f"demo: {why}: Claude Code and the judge talk to the scripted model server at "
                    f"{step.base_url} (offline, free; policy: evolve_action/"
                    f"{'/'.join(flows.POLICY_RESOURCE)})\n"
                )
            else:
                out.write(f"demo: using the real Anthropic API ({step.credential}, --yes)\n")
            out.flush()
            for warning in step.config_warnings:
                self._inv.stderr.write(f"warn: {warning}\n")
        else:
            self._steps(step)
