"""`evolve-action report`: regenerate EVALUATION.md / EVALUATION.<fmt> / plugin pages; gate; JUnit.

Owns: the `report` subcommand's flags, resolving them with the config into `flows.ReportOptions`,
and printing a `flows.ReportOutcome` (the `migrate:`/`stale-results:`/`report:`/`WARN:`/`FAIL:`
lines of report spec §5.1). Never does: load, build, write or gate (that is
`flows.regenerate_report` over the pure `report.build_report`).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from evolve_action.cli._common import Invocation
from evolve_action.cli._flags import add_repo_flags
from evolve_action.config import resolve_repository, with_flags
from evolve_action.errors import UsageError
from evolve_action.flows import ReportOptions, ReportOutcome, regenerate_report
from evolve_action.harness import available_harnesses
from evolve_action.report import GateOptions, parse_maturity

__all__ = ["generate", "print_report", "register", "resolve_options"]


def register(subparsers: Any) -> None:
    """Add `report` to the top-level subcommands."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "report",
        help="regenerate EVALUATION.md and EVALUATION.<fmt> from stored results; gate with --check",
        description=(
            "Regenerate EVALUATION.md, per-plugin EVALUATION.md pages and EVALUATION.<fmt> from the "
            "committed results files. With --check, gate on pass-rate thresholds and exit 1 on a "
            "breach in a gated plugin."
        ),
    )
    add_repo_flags(p)
    p.add_argument("--results-format", default=None, help="json, jsonc or yaml (default: json)")
    p.add_argument(
        "--migrate", action="store_true", help="upgrade schema 3/4 results files in place first"
    )
    p.add_argument("--check", action="store_true", help="gate on thresholds; exit 1 on a FAIL")
    p.add_argument(
        "--strict",
        action="store_true",
        default=None,
        help="gate every configured model and fail on stale results",
    )
    p.add_argument("--min-triggers-pass-rate", type=float, default=None, metavar="RATE")
    p.add_argument("--min-evals-pass-rate", type=float, default=None, metavar="RATE")
    p.add_argument(
        "--maturity",
        default=None,
        metavar="LEVELS",
        help="gated plugin maturity levels, comma-separated (default: stable,unstable,prerelease)",
    )
    p.add_argument("--junit", default=None, metavar="PATH", help="also write JUnit XML to PATH")
    p.add_argument(
        "--stale-results",
        default=None,
        choices=("keep", "drop"),
        help="model entries outside the configured models: keep on disk (default) or drop",
    )
    p.set_defaults(handler=handle)


def handle(inv: Invocation) -> int:
    """Resolve options from config and flags, then generate (and gate)."""
    opts = resolve_options(inv.args, inv.environ, inv.cwd)
    return generate(opts, stdout=inv.stdout, stderr=inv.stderr, cwd=inv.cwd).exit_code


def resolve_options(
    args: argparse.Namespace, environ: Mapping[str, str], cwd: Path
) -> ReportOptions:
    """Build `ReportOptions` from parsed flags, `.evolve.<ext>` and `EVOLVE_*`."""
    repo, config = resolve_repository(args.root, cwd, args.layout, environ)
    maturity_flag = None
    if args.maturity is not None:
        maturity_flag = tuple(t.strip() for t in args.maturity.split(",") if t.strip())
        if not maturity_flag:
            raise UsageError(
                "--maturity: no maturity levels given (want stable, unstable, or prerelease)"
            )
    config = with_flags(
        config,
        {
            "results_format": args.results_format,
            "report.thresholds.triggers_min_pass_rate": args.min_triggers_pass_rate,
            "report.thresholds.evals_min_pass_rate": args.min_evals_pass_rate,
            "report.thresholds.maturity": maturity_flag,
            "report.strict": args.strict,
            "report.junit": args.junit,
            "stale_results": args.stale_results,
        },
    )
    th = config.report.thresholds
    try:
        maturity = parse_maturity(th.maturity)
    except ValueError as exc:
        raise UsageError(f"report.thresholds.maturity: {exc}") from None
    junit = Path(config.report.junit) if config.report.junit else None
    return ReportOptions(
        repo=repo,
        config=config,
        results_format=config.results_format,
        migrate=bool(args.migrate),
        check=bool(args.check),
        gate=GateOptions(
            triggers_min_pass_rate=th.triggers_min_pass_rate,
            evals_min_pass_rate=th.evals_min_pass_rate,
            models=tuple(th.models) if th.models is not None else None,
            maturity=maturity,
            strict=config.report.strict,
        ),
        junit=junit,
        stale_results=config.stale_results,
        harnesses_here=frozenset(available_harnesses(environ, dry_run=True)),
    )


def print_report(outcome: ReportOutcome, *, stdout: TextIO, stderr: TextIO) -> None:
    """Print a report outcome as report spec §5.1 words it (`migrate:`, `report:`, WARN/FAIL)."""
    if outcome.migrated is not None:
        for m in outcome.migrated:
            stdout.write(
                f"migrate: upgraded {m.plugin}/{m.skill} from schema {m.from_schema} to 5\n"
            )
        if outcome.migrated:
            n = len(outcome.migrated)
            stdout.write(
                f"migrate: upgraded {n} results {'file' if n == 1 else 'files'} to schema 5\n"
            )
        else:
            stdout.write("migrate: results files already at schema 5\n")
    for notice in outcome.notices:
        stderr.write(notice + "\n")
    n = outcome.plugins if outcome.repo_plugins is None else outcome.repo_plugins
    counted = f"{n} plugin{'' if n == 1 else 's'}"
    if outcome.repo_plugins is not None and outcome.plugins != outcome.repo_plugins:
        counted += f", {outcome.plugins} with results"
    stdout.write(
        f"report: regenerated EVALUATION.md and EVALUATION.{outcome.results_format} ({counted})\n"
    )
    if not outcome.checked:
        return
    for level in ("WARN", "FAIL"):
        for issue in outcome.issues:
            if issue.level == level:
                stderr.write(issue.line() + "\n")
    if outcome.exit_code == 0:
        stdout.write("report: thresholds met\n")


def generate(opts: ReportOptions, *, stdout: TextIO, stderr: TextIO, cwd: Path) -> ReportOutcome:
    """Regenerate the reports through the flow and print the outcome."""
    outcome = regenerate_report(opts, cwd=cwd)
    print_report(outcome, stdout=stdout, stderr=stderr)
    return outcome
