"""`evolve-action run checks`: Tier 0 static checks from the command line.

Owns: the flags of `run checks`, rendering a `CheckReport` as evolve does (`FAIL:`/`WARN:` lines on
stderr, the summary line, the advisory signals table on stdout), the `--json` document, and GitHub
Actions annotations. Exit codes: 0 ok (or findings without `--strict`), 1 findings under
`--strict`, 2 unusable input (raised as `EvolveError`, mapped by `cli.main`).

Guarantees: output is a pure function of the `CheckReport` (same report, same bytes); findings
go to the streams of the `Invocation`, never to `sys.stdout` directly. Never does: run checks
itself (that is `checks.run_checks`), read `os.environ` outside the invocation, write files.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any, TextIO

from evolve_action.checks import (
    LISTING_CACHE_NAME,
    CheckOptions,
    CheckReport,
    ListingReport,
    check_listing,
    listing_models,
    run_checks,
    with_listing,
)
from evolve_action.cli._common import Invocation, add_repo_flags, print_notices
from evolve_action.config import resolve_repository, with_flags
from evolve_action.github import annotate
from evolve_action.harness import default_cache_path
from evolve_action.repo import absolute
from evolve_action.specs import Finding, Severity

CLAUDE_CODE_RULES = (
    "checks: Claude Code's and the Agent Skills rules; evolve's stricter conventions (Codex "
    "manifests, no hooks/, license, 'Use when' phrase) apply with an .evolve.yaml (or "
    ".evolve.json) at the repository root"
)
"""Printed when the repository does not opt in to evolve's conventions (docs/checks.md)."""


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
        report = _with_listing(inv, report, repo, config)
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
        _render(inv.stdout, inv.stderr, report, strict=args.strict)
        if actions:
            _annotate(inv.stdout, report.findings, prefix)
    if report.failures and args.strict:
        return 1
    return 0


def _with_listing(inv: Invocation, report: CheckReport, repo: Any, config: Any) -> CheckReport:
    """Run the listing check and fold its findings and statuses into the report."""
    models = listing_models(config, inv.environ, inv.args.model or ())
    cache = default_cache_path(inv.environ, config.cache_dir).parent / LISTING_CACHE_NAME
    listing: ListingReport = asyncio.run(
        check_listing(
            repo,
            models=models,
            environ=inv.environ,
            cache_path=cache,
            install="plugin" if config.install == "plugin" else "skills",
        )
    )
    first = listing.sets[0] if listing.sets else None
    version = first.cli_version if first is not None else ""
    inv.stderr.write(
        f"listing: {len(listing.sets)} set(s) checked for {', '.join(m or 'the default model' for m in models)}"
        f" ({listing.started} CLI start(s), the rest cached){f'; {version}' if version else ''}\n"
    )
    statuses = {
        (sk.plugin, sk.skill): sk.status
        for sl in listing.sets
        if sl.set.kind == "plugin" and sl.model == (models[0] if models else "")
        for sk in sl.skills
    }
    return dataclasses.replace(
        report,
        findings=(*report.findings, *listing.findings),
        signals=with_listing(report.signals, statuses),
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _render(out: TextIO, err: TextIO, report: CheckReport, *, strict: bool) -> None:
    for finding in report.findings:
        tag = {Severity.ERROR: "FAIL", Severity.SIGNAL: "NOTE"}.get(finding.severity, "WARN")
        err.write(f"{tag}: {console_message(finding)}\n")
    if report.failures:
        if not strict:
            err.write(
                f"WARN: checks: {_plural(report.failures, 'failure')} (pass --strict to exit 1)\n"
            )
    else:
        out.write(
            f"checks: all checks passed ({report.layout} layout, "
            f"{_plural(report.plugins, 'plugin')})\n"
        )
    if report.signals:
        out.write("\nskill signals (advisory — informational, does not affect pass/fail):\n")
        listing = any(s.listing for s in report.signals)
        rows = [
            ("SKILL", "OVERALL", "SIZE", "CONCISE", "BUDGET")
            + (("LISTING",) if listing else ())
            + ("NOTE",)
        ]
        rows += [
            (
                s.skill,
                f"{s.overall:.0f}",
                f"{s.size:.0f}",
                f"{s.concise:.0f}",
                f"{s.budget_share:.1f}%",
                *((s.listing or "-",) if listing else ()),
                s.note,
            )
            for s in report.signals
        ]
        n = len(rows[0]) - 1
        widths = [max(len(r[i]) for r in rows) for i in range(n)]
        for row in rows:
            cells = [row[i].ljust(widths[i]) for i in range(n)]
            out.write("  ".join([*cells, row[n]]).rstrip() + "\n")
    out.flush()
    err.flush()


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


def console_message(finding: Finding) -> str:
    """The message with `:<line>` after its leading path when the line is known and not yet shown
    (`a/SKILL.md:2: name …`), so editors and terminals can jump to it."""
    message, path, line = finding.message, finding.path, finding.line
    if path and line and message.startswith(f"{path}: ") and f"line {line}" not in message:
        return f"{path}:{line}: {message[len(path) + 2 :]}"
    return message


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


def report_document(report: CheckReport, warnings: tuple[str, ...] = ()) -> dict[str, Any]:
    """The `--json` document: findings with path/line/pointer/check/severity/message, counts, verdict
    (and `conventions: claude-code` when evolve's conventions did not apply)."""
    return {
        "root": report.root.as_posix(),
        "layout": report.layout,
        "plugins": report.plugins,
        # only off evolve's conventions, so an evolve repository's document stays as it was
        **({"conventions": report.conventions} if report.conventions != "evolve" else {}),
        "verdict": report.verdict,
        "counts": {
            "findings": len(report.findings),
            "errors": report.failures,
            "warnings": report.warnings,
        },
        "findings": [
            {
                "check": f.check,
                "severity": str(f.severity),
                "path": f.path,
                "line": f.line,
                "pointer": f.pointer,
                "message": f.message,
            }
            for f in report.findings
        ],
        "signals": [
            {
                "plugin": s.plugin,
                "skill": s.skill,
                "path": s.path,
                "lines": s.lines,
                "overall": round(s.overall, 1),
                "size": round(s.size, 1),
                "concise": round(s.concise, 1),
                "budget_share": round(s.budget_share, 2),
                **({"listing": s.listing} if s.listing else {}),
            }
            for s in report.signals
        ],
        "config_warnings": list(warnings),
    }
