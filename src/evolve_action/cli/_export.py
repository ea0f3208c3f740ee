"""`evolve-action export`: stored results as AgentEvals JSONL rows and skill-creator artefacts.

Owns: the `export` subcommand's flags, resolving them into `flows.ExportOptions`, and printing
a `flows.ExportOutcome` (one `export:` line per skill × model, then how to open the
skill-creator viewer). Never does: read results or write files (that is `flows.run_export`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evolve_action.cli._common import Invocation
from evolve_action.cli._flags import add_repo_flags
from evolve_action.config import resolve_repository
from evolve_action.errors import UsageError
from evolve_action.flows import (
    EXPORT_FORMATS,
    ExportOptions,
    ExportOutcome,
    check_formats,
    run_export,
)

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add `export` to the top-level subcommands."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "export",
        help="write stored results as AgentEvals JSONL rows and skill-creator workspace files",
        description=(
            "Read the committed results files and write them in the formats of the founding "
            "documents' other tools: AgentEvals result rows (one JSONL file per skill, model and "
            "configuration) and skill-creator's workspace artefacts (grading.json, timing.json, "
            "eval_metadata.json, benchmark.json) that skill-creator's eval viewer opens. Results "
            "files are only read."
        ),
    )
    add_repo_flags(p)
    p.add_argument(
        "--out",
        type=Path,
        default=Path("evolve-export"),
        metavar="DIR",
        help="directory to write into (default: evolve-export)",
    )
    p.add_argument(
        "--format",
        action="append",
        default=None,
        metavar="FORMAT",
        help="agentevals or skill-creator (repeatable; default: both)",
    )
    p.add_argument(
        "--results",
        action="append",
        type=Path,
        default=None,
        metavar="FILE",
        help="export this results file instead of the repository's (repeatable)",
    )
    p.add_argument(
        "--skill",
        action="append",
        default=None,
        metavar="NAME",
        help="only this skill (repeatable)",
    )
    p.add_argument(
        "--model",
        action="append",
        default=None,
        metavar="MODEL",
        help="only this model: provider/id or bare id (repeatable)",
    )
    p.set_defaults(handler=handle)


def handle(inv: Invocation) -> int:
    """Resolve the options, export, print what was written."""
    args = inv.args
    formats = tuple(dict.fromkeys(args.format or EXPORT_FORMATS))
    check_formats(formats)
    files = tuple(p if p.is_absolute() else inv.cwd / p for p in (args.results or ()))
    repo = None
    if not files:
        repo, _ = resolve_repository(args.root, inv.cwd, args.layout, inv.environ)
    elif args.root is not None or args.layout is not None:
        raise UsageError("--results reads the given files only: drop --root/--layout")
    out: Path = args.out if args.out.is_absolute() else inv.cwd / args.out
    opts = ExportOptions(
        out_dir=out,
        repo=repo,
        results_files=files,
        formats=formats,
        skills=tuple(args.skill or ()),
        models=tuple(args.model or ()),
    )
    outcome = run_export(opts)
    print_outcome(outcome, out, stdout=inv.stdout, stderr=inv.stderr)
    return 0


def print_outcome(outcome: ExportOutcome, out: Path, *, stdout: Any, stderr: Any) -> None:
    """`export:` lines, the viewer command, then notes on stderr."""
    for e in outcome.exported:
        stdout.write(
            f"export: {e.skill_path} {e.model}: {e.cases} case(s), {e.baseline_cases} baseline "
            f"case(s), {len(e.written)} file(s)\n"
        )
    benches = [p for p in outcome.written if p.name == "benchmark.json"]
    if benches:
        stdout.write(
            "export: open a workspace in skill-creator's viewer with\n"
            f"  python <skill-creator>/eval-viewer/generate_review.py {benches[0].parent} "
            f"--benchmark {benches[0]}\n"
        )
    if outcome.exported:
        stdout.write(f"export: {len(outcome.written)} file(s) under {out}\n")
    for note in outcome.notes:
        stderr.write(note + "\n")
