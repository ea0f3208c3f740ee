"""The console lines of `run all`'s steps, shared by `run all`, `run triggers|evals --shard`,
`plan`'s `run all` flags and `demo`.

Owns: `StepPrinter` (each finished `flows.RunAllStep` printed on the invocation's streams as it
arrives: text, or JSON lines under `--json`) and `finish` (the exit code of a finished run and its
closing `WARN:` line). Never does: run a step (that is `flows.run_all`) or render a stage's own
output (checks, plans, dry runs and reports are rendered where they are owned).
"""

from __future__ import annotations

import json
from typing import Any

from evolve_action import plan
from evolve_action.catalog import BoundModel
from evolve_action.checks import passed_line
from evolve_action.cli._common import Invocation, parallelism_line
from evolve_action.cli._evals import print_dry_run
from evolve_action.cli._report import print_report
from evolve_action.flows import (
    ChecksDone,
    EvalsReady,
    ReportDone,
    RunAllOutcome,
    RunAllStep,
    TriggersReady,
)
from evolve_action.specs import Severity


def finish(inv: Invocation, outcome: RunAllOutcome, *, strict: bool) -> int:
    """Exit code and the closing `WARN:` line."""
    if outcome.failed:
        if strict:
            return 1
        inv.stderr.write("WARN: run: some checks or cases failed (pass --strict to exit 1)\n")
    return 0


class StepPrinter:
    """Prints each finished step of `run all` on the invocation's streams."""

    def __init__(self, inv: Invocation) -> None:
        self._inv = inv
        self.plans: list[plan.Plan] = []
        """The plans of a dry run, for its cost estimate."""
        self.models: list[BoundModel] = []
        """The models those plans run."""

    def __call__(self, step: RunAllStep) -> None:
        """Print one step's outcome."""
        inv = self._inv
        as_json = bool(getattr(inv.args, "json", False))
        if isinstance(step, ChecksDone):
            report = step.report
            for finding in report.findings:
                tag = "FAIL" if finding.severity == Severity.ERROR else "WARN"
                inv.stderr.write(f"{tag}: {finding.message}\n")
            if as_json:
                done: dict[str, Any] = {"event": "ChecksDone", "layout": report.layout}
                done["failures"] = report.failures
                inv.stdout.write(json.dumps(done, sort_keys=True) + "\n")
            elif not report.failures:
                inv.stdout.write(passed_line(report))
            else:
                inv.stdout.write(f"checks: {report.failures} failure(s)\n")
        elif isinstance(step, TriggersReady):
            for warning in step.warnings:
                inv.stderr.write(f"WARN: {warning}\n")
            if step.plan is not None:
                for w in step.plan_warnings:
                    inv.stderr.write(f"warn: {w}\n")
                self.plans.append(step.plan)
                self.models.extend(step.models)
                rendered = plan.to_json_lines(step.plan) if as_json else plan.render(step.plan)
                inv.stdout.write(rendered)
            elif step.skipped:
                inv.stderr.write("warn: triggers: no model has an available harness; skipped\n")
        elif isinstance(step, EvalsReady):
            if step.dry_run:
                self.plans.append(step.planned.plan)
                self.models.extend(step.planned.models)
                print_dry_run(inv, step.planned)
            elif not as_json:
                inv.stdout.write(parallelism_line(step.jobs, "evals"))
        elif isinstance(step, ReportDone):
            if as_json:  # the report's own lines go to stderr: stdout stays JSON lines
                print_report(step.outcome, stdout=inv.stderr, stderr=inv.stderr)
                report_done: dict[str, Any] = {"event": "ReportDone"}
                report_done["plugins"] = step.outcome.plugins
                inv.stdout.write(json.dumps(report_done, sort_keys=True) + "\n")
            else:
                print_report(step.outcome, stdout=inv.stdout, stderr=inv.stderr)
