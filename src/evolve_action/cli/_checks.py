"""`evolve-action run checks`: Tier 0 static checks from the command line.

Owns: the flags of `run checks`, printing a `CheckReport` (rendered by `checks.render_text`: the
`FAIL:`/`WARN:` lines on stderr, the summary line and the advisory signals table on stdout; or
`checks.report_document` under `--json`), and GitHub Actions annotations. Exit codes: 0 ok (or
findings without `--strict`), 1 findings under `--strict`, 2 unusable input (raised as
`EvolveError`, mapped by `cli.main`).

Guarantees: output is a pure function of the `CheckReport` (same report, same bytes); findings
go to the streams of the `Invocation`, never to `sys.stdout` directly. Never does: run checks
itself (that is `checks.run_checks`; `flows.with_listing_check` for `--listing`), read
`os.environ` outside the invocation, write files.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from evolve_action.checks import (
    CLAUDE_CODE_RULES,
    CheckOptions,
    render_text,
    report_document,
    run_checks,
)
from evolve_action.cli._common import (
    Invocation,
    print_notices,
)
from evolve_action.cli._flags import add_repo_flags
from evolve_action.config import resolve_repository, with_flags
from evolve_action.flows import with_listing_check
from evolve_action.github import annotate
from evolve_action.repo import absolute
from evolve_action.specs import Finding, Severity


def register(subparsers: Any) -> None:
    """Add `checks` to `evolve-action run`."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "checks",
        help="Tier 0: validate manifests, SKILL.md frontmatter and authored eval files",
        description=(
            "Validate plugin manifests, marketplace manifests, SKILL.md frontmatter and the "
            "authored triggers/evals files. Exit 0 when clean (or findings without --strict), "
            "1 for findings under --strict, 2 for unusable input."
        ),
    )
    add_repo_flags(parser)
    parser.add_argument("--strict", action="store_true", help="exit 1 when there are findings")
    parser.add_argument(
        "--json", action="store_true", help="print one machine-readable JSON document on stdout"
    )
    parser.add_argument(
        "--license",
        default=None,
        metavar="X",
        help="required SKILL.md license, or 'any' (checks.license)",
    )
    parser.add_argument(
        "--no-signals", action="store_true", help="do not print the advisory skill signals"
    )
    parser.add_argument(
        "--no-marketplace", action="store_true", help="skip the marketplace manifest checks"
    )
    parser.add_argument(
        "--listing",
        action="store_true",
        help=(
            "also run the listing check: start the real Claude Code CLI once per set of skills "
            "installed together and model (offline, against a scripted server; cached) and "
            "report descriptions the model would not see (docs/checks.md)"
        ),
    )
    parser.add_argument(
        "--model",
        "--models",
        action="append",
        metavar="ID",
        help="models for --listing (the budget depends on the model; default: the config's "
        "models, else the catalog default)",
    )
    parser.set_defaults(handler=handle)


def handle(inv: Invocation) -> int:
    """Run the checks and render them; return the exit code."""
    args = inv.args
    repo, config = resolve_repository(args.root, inv.cwd, args.layout, inv.environ)
    config = with_flags(
        config,
        {
            "checks.license": args.license,
            "checks.signals": False if args.no_signals else None,
            "checks.marketplace": False if args.no_marketplace else None,
        },
    )
    actions = inv.environ.get("GITHUB_ACTIONS") == "true"
    for warning in config.warnings:
        inv.stderr.write(f"warn: {warning}\n")
        if actions:
            annotate(inv.stderr if args.json else inv.stdout, "warning", warning)
    print_notices(inv, repo, planning=False)
    report = run_checks(repo, config, CheckOptions())
    if args.listing:
        checked = with_listing_check(report, repo, config, inv.environ, args.model or ())
        inv.stderr.write(checked.line)
        report = checked.report
    if report.conventions != "evolve":
        inv.stderr.write(CLAUDE_CODE_RULES + "\n")
    prefix = _workspace_prefix(repo.root, inv.environ.get("GITHUB_WORKSPACE", ""))
    if args.json:
        inv.stdout.write(
            json.dumps(report_document(report, config.warnings), separators=(",", ":")) + "\n"
        )
        if actions:
            _annotate(inv.stderr, report.findings, prefix)
    else:
        out, err = render_text(report, strict=args.strict)
        inv.stderr.write(err)
        inv.stdout.write(out)
        inv.stdout.flush()
        inv.stderr.flush()
        if actions:
            _annotate(inv.stdout, report.findings, prefix)
    if report.failures and args.strict:
        return 1
    return 0


def _workspace_prefix(root: Path, workspace: str) -> str:
    """The root relative to `GITHUB_WORKSPACE` (`""` when equal or unknown): annotation paths are
    workspace-relative, finding paths root-relative."""
    if not workspace:
        return ""
    try:
        rel = absolute(root).relative_to(absolute(Path(workspace))).as_posix()
    except ValueError:
        return ""
    return "" if rel == "." else rel + "/"


def _annotate(stream: TextIO, findings: tuple[Finding, ...], prefix: str = "") -> None:
    for finding in findings:
        level = "error" if finding.severity == Severity.ERROR else "warning"
        relative = finding.path and not finding.path.startswith("/")
        annotate(
            stream,
            level,
            finding.message,
            file=prefix + finding.path if finding.path and relative else None,
            line=finding.line,
            title=f"evolve-action checks ({finding.check})" if finding.check else None,
        )
