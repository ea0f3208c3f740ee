"""`run checks` output: a `CheckReport` as console text and as the `--json` document.

Owns: the console lines (`FAIL:`/`WARN:`/`NOTE:` per finding, the summary line, the advisory
signals table: `render_text`; the summary line alone: `passed_line`), a finding's console message with its line (`console_message`), the
`--json` document (`report_document`) and the note for a repository off evolve's conventions
(`CLAUDE_CODE_RULES`). Guarantees: pure functions of the report (same report, same bytes).
Never does: write to a stream, annotate for GitHub (the CLI does).
"""

from __future__ import annotations

from typing import Any

from evolve_action.checks._engine import CheckReport
from evolve_action.specs import Finding, Severity

CLAUDE_CODE_RULES = (
    "checks: Claude Code's and the Agent Skills rules; evolve's stricter conventions (Codex "
    "manifests, no hooks/, license, 'Use when' phrase) apply with an .evolve.yaml (or "
    ".evolve.json) at the repository root"
)
"""Printed when the repository does not opt in to evolve's conventions (docs/checks.md)."""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def render_text(report: CheckReport, *, strict: bool) -> tuple[str, str]:
    """The console text of a report as `(stdout, stderr)`: the findings and the not-strict warning
    on stderr; the summary line and the signals table on stdout."""
    err: list[str] = []
    out: list[str] = []
    for finding in report.findings:
        tag = {Severity.ERROR: "FAIL", Severity.SIGNAL: "NOTE"}.get(finding.severity, "WARN")
        err.append(f"{tag}: {console_message(finding)}\n")
    if report.failures:
        if not strict:
            err.append(
                f"WARN: checks: {_plural(report.failures, 'failure')} (pass --strict to exit 1)\n"
            )
    else:
        out.append(passed_line(report))
    if report.signals:
        out.append("\nskill signals (advisory — informational, does not affect pass/fail):\n")
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
            out.append("  ".join([*cells, row[n]]).rstrip() + "\n")
    return "".join(out), "".join(err)


def passed_line(report: CheckReport) -> str:
    """The summary line of a report without failures (`checks: all checks passed (…)`)."""
    return (
        f"checks: all checks passed ({report.layout} layout, {_plural(report.plugins, 'plugin')})\n"
    )


def console_message(finding: Finding) -> str:
    """The message with `:<line>` after its leading path when the line is known and not yet shown
    (`a/SKILL.md:2: name …`), so editors and terminals can jump to it."""
    message, path, line = finding.message, finding.path, finding.line
    if path and line and message.startswith(f"{path}: ") and f"line {line}" not in message:
        return f"{path}:{line}: {message[len(path) + 2 :]}"
    return message


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
