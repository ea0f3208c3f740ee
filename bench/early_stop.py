"""Benchmark: agent sessions saved by verdict-preserving early stop in `run triggers`.

Builds a fixture plugin (three skills, fifteen trigger queries), serves a routing policy from the scripted
model server, and runs the trigger tier twice through the real Claude Code CLI: with early stop (the
default) and with `--no-early-stop`. Most queries are decisive (the route policy always picks the same
skill for them); two are deliberately ambiguous (their rule calls the skill only in the 1st and 3rd
session it sees), so they need all three runs either way. Reports sessions, wall time and whether every
verdict is identical.

    .venv/bin/python bench/early_stop.py [--runs 3] [--jobs 2] [--json]

Offline: everything talks to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evolve_action import events, plan
from evolve_action.catalog import build_catalog, resolve_models
from evolve_action.harness import ClaudeCodeHarness
from evolve_action.modelserver import ModelServer, Policy
from evolve_action.repo import discover
from evolve_action.triggers import TriggerOptions, TriggersOutcome, run

SKILLS = {
    "pdf-tools": "Fill, merge and split PDF forms and documents. Use when the user asks to merge or fill PDF files.",
    "csv-clean": "Clean, dedupe and tidy CSV spreadsheet data. Use when the user asks to tidy CSV spreadsheets.",
    "md-lint": "Lint and fix Markdown headings, links and tables. Use when the user asks to lint Markdown docs.",
}
QUERIES = {
    "pdf-tools": [
        ("Merge these two PDF forms into one document", True),
        ("Fill in the fields of this PDF form", True),
        ("Tidy the columns of this CSV spreadsheet", False),
        ("What time zone is Tokyo in?", False),
        ("ambiguous-a: sort out the paperwork", True),
    ],
    "csv-clean": [
        ("Dedupe the rows of this CSV spreadsheet", True),
        ("Tidy this messy CSV spreadsheet data", True),
        ("Lint the headings of this Markdown file", False),
        ("Write a haiku about autumn", False),
        ("ambiguous-b: clean up the export", True),
    ],
    "md-lint": [
        ("Lint the Markdown docs and fix broken links", True),
        ("Fix the Markdown table formatting and headings", True),
        ("Split this PDF into single pages", False),
        ("Explain how TCP handshakes work", False),
        ("Reformat the quarterly report", False),
    ],
}
POLICY = {
    "rules": [
        {
            "name": "ambiguous-a",
            "when": {"prompt": "^ambiguous-a", "session": [1, 3]},
            "tool": "Skill",
            "input": {"skill": "pdf-tools"},
        },
        {
            "name": "ambiguous-b",
            "when": {"prompt": "^ambiguous-b", "session": [1, 3]},
            "tool": "Skill",
            "input": {"skill": "csv-clean"},
        },
        {
            "name": "ambiguous-rest",
            "when": {"prompt": "^ambiguous"},
            "text": "Which files do you mean?",
        },
        {"name": "route", "route": {"threshold": 0.3}},
    ]
}


def make_fixture(root: Path) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(
        '{"name": "bench-kit", "version": "1.0.0"}\n'
    )
    for name, desc in SKILLS.items():
        d = root / "skills" / name
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {desc}\n---\n# {name}\n\nSteps.\n"
        )
        e = root / "evals" / name
        e.mkdir(parents=True)
        doc = {"triggers": [{"query": q, "should_trigger": s} for q, s in QUERIES[name]]}
        (e / "triggers.json").write_text(json.dumps(doc, indent=2) + "\n")
    return root


def sweep(
    root: Path, srv: ModelServer, *, early: bool, runs: int, jobs: int
) -> tuple[TriggersOutcome, float, int]:
    srv.set_policy(Policy.from_dict(POLICY))  # fresh counters: both sweeps see the same script
    before = len(srv.messages())
    environ = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(root.parent / "home"),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-bench",
    }
    environ["PATH"] = os.environ.get("PATH", environ["PATH"])
    models = resolve_models(
        build_catalog(), model_flags=["claude-sonnet-4-6"], available={"claude"}
    ).models
    options = TriggerOptions(
        repo=discover(root, root),
        models=models,
        environ=environ,
        selection=plan.Selection(tiers=(plan.Tier.TRIGGERS,)),
        runs=runs,
        jobs=jobs,
        early_stop=early,
        count_tokens=False,
        tool_version="bench",
    )
    began = time.monotonic()
    outcome = asyncio.run(run(options, events.NullReporter(), ClaudeCodeHarness(environ)))
    return outcome, time.monotonic() - began, len(srv.messages()) - before


def verdicts(outcome: TriggersOutcome) -> dict[tuple[str, str], Any]:
    return {(u.skill, q.query): q.passed for u in outcome.units for q in u.queries}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows: dict[str, dict[str, Any]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="bench-early-stop.") as tmp,
        ModelServer(Policy.from_dict(POLICY), port=0, log_path=None) as srv,
    ):
        for label, early in (("early-stop", True), ("no-early-stop", False)):
            root = make_fixture(Path(tmp) / label / "repo")
            outcome, seconds, requests = sweep(
                root, srv, early=early, runs=args.runs, jobs=args.jobs
            )
            rows[label] = {
                "sessions": outcome.sessions,
                "runs": sum(len(q.runs) for u in outcome.units for q in u.queries),
                "errored_runs": sum(q.errored for u in outcome.units for q in u.queries),
                "api_requests": requests,
                "wall_seconds": round(seconds, 1),
                "queries": sum(len(u.queries) for u in outcome.units),
                "passed": sum(1 for u in outcome.units for q in u.queries if q.passed),
                "verdicts": verdicts(outcome),
            }
    a, b = rows["early-stop"], rows["no-early-stop"]
    same = a.pop("verdicts") == b.pop("verdicts")
    saved = 1 - a["sessions"] / b["sessions"] if b["sessions"] else 0.0
    report = {
        "runs": args.runs,
        "jobs": args.jobs,
        "identical_verdicts": same,
        "sessions_saved": round(saved, 3),
        **rows,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"runs per query: {args.runs}, jobs: {args.jobs}, queries: {a['queries']}")
        for label, row in rows.items():
            print(
                f"  {label:14} sessions={row['sessions']:3} runs={row['runs']:3} "
                f"api_requests={row['api_requests']:3} wall={row['wall_seconds']:6.1f}s passed={row['passed']}/{row['queries']}"
            )
        print(f"  sessions saved: {saved:.1%}; identical verdicts: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
