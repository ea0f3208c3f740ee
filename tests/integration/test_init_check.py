"""`evolve-action init --scripted --check`: the drafted triggers run once with the real Claude Code
CLI against the scripted model server, in a throwaway copy; the repository gets no results file."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from evolve_action.cli import main

pytestmark = pytest.mark.integration

CSV_BODY = """# Totals

- Total the amount column of sales.csv for each region
- Summarise last quarter's spreadsheet for the board
- Average the order values in orders.csv per customer

## Not for

- Draw a bar chart of the monthly revenue
"""

HEADER_BODY = """# Headers

- Put an SPDX license identifier comment at the top of main.py
- Add the MIT license comment to every Go source file
"""


def _skill(root: Path, name: str, description: str, body: str) -> None:
    d = root / "skills" / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\n{body}", encoding="utf-8"
    )


def test_check_runs_the_drafted_triggers_once_and_lists_the_wrong_ones(
    tmp_path: Path, claude_cli: Path
) -> None:
    root = tmp_path / "repo"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "tools"}\n', encoding="utf-8")
    _skill(root, "csv-report", "Total and average the columns of CSV files per group.", CSV_BODY)
    _skill(root, "license-header", "Add SPDX license headers to source files.", HEADER_BODY)
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["init", "--scripted", "--check", "--evals", "0", "--skill", "csv-report"],
        environ={},
        stdout=out,
        stderr=err,
        cwd=root,
    )
    text = out.getvalue()
    assert code == 0, err.getvalue() + text
    assert "csv-report: 6 should + 5 should-not queries" in text
    # The demo policy's route rule picks the listed skill whose description shares the most
    # words with the query: the spreadsheet requests (the task asked twice, framed apart) share
    # none with csv-report's description, so their one run misses; the others go the right way.
    checked = [line for line in text.splitlines() if line.startswith("check: ")]
    assert checked == [
        "check: one run of every drafted query with anthropic/claude-sonnet-5",
        "check: tools/csv-report missed (should trigger): "
        "Quick task: summarise last quarter's spreadsheet for the board.",
        "check: tools/csv-report missed (should trigger): "
        "Before I send it to the team, summarise last quarter's spreadsheet for the board.",
    ], text
    assert list(root.rglob("results.*")) == []
    assert not (root / "EVALUATION.md").exists()


def test_init_then_run_all_scripted_end_to_end(tmp_path: Path, claude_cli: Path) -> None:
    root = tmp_path / "repo"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "tools"}\n', encoding="utf-8")
    _skill(root, "csv-report", "Total and average the columns of CSV files per group.", CSV_BODY)
    _skill(root, "license-header", "Add SPDX license headers to source files.", HEADER_BODY)
    out = io.StringIO()
    argv = ["init", "--scripted", "--evals", "1", "--skill", "csv-report"]
    assert main(argv, environ={}, stdout=out, cwd=root) == 0, out.getvalue()
    drafted = re.search(r"csv-report: (\d+) should \+ (\d+) should-not queries", out.getvalue())
    assert drafted is not None and int(drafted.group(1)) >= 5 and int(drafted.group(2)) >= 5
    queries = int(drafted.group(1)) + int(drafted.group(2))
    run_out, run_err = io.StringIO(), io.StringIO()
    code = main(
        [
            "run",
            "all",
            "--new",
            "--scripted",
            "--model",
            "anthropic/claude-sonnet-5",
            "--runs",
            "1",
        ],
        environ={},
        stdout=run_out,
        stderr=run_err,
        cwd=root,
    )
    text = run_out.getvalue()
    assert code == 0, run_err.getvalue() + text
    assert "run: --scripted: the agent and the judge talk to the scripted model server" in text
    assert (
        f"=== csv-report / anthropic/claude-sonnet-5 [triggers] ({queries} queries x 1 runs" in text
    )
    assert "=== csv-report / anthropic/claude-sonnet-5 [evals]" in text
    assert (root / "evals" / "csv-report" / "results.json").is_file()
    assert (root / "EVALUATION.md").is_file()
