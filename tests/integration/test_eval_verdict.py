"""The evals verdict end to end: `pr --local` with the real Claude Code CLI and the scripted server.

A skill `steps` whose SKILL.md body holds one step line (`STEP-LINE: write done.txt`). The scripted
agent runs a shell command that reads the installed SKILL.md and writes `done.txt` only while that
line is there, so cases `a` and `b` (which assert `done.txt`) pass exactly while the body keeps it;
case `c` passes whatever the body says. Power on demand re-runs the base commit's version of the
cases beside the head's (paired, same model and harness), then a round of 3 more runs a side of
every case, then selective rounds:

- deleting the line breaks `a` and `b` on every run: a `regression` (after round 1: 4 vs 4 runs a
  side, exact p ≈ 6·10⁻⁴ at a slice of 0.008);
- rewording another line changes nothing: never a regression nor an improvement (`no change`
  once round 1 makes 4 runs a side of 3 all-passing cases);
- a lone case that passes with chance ½ on both sides (`when.chance`, seeded) never gets a
  verdict (`max_runs` 6 bounds its runs).

Sessions: the regression and the cosmetic PR each run the head's sweep (3 + 3 baselines), the
base's first block (3) and round 1 (3 cases × 3 runs × 2 sides), about 27 each; the flaky PR ~13.
"""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evolve_action.events import RecordingReporter
from evolve_action.flows import PrOptions, run_pr
from evolve_action.report import Label

pytestmark = pytest.mark.integration

BODY = """---
name: steps
description: Finish a job by writing done.txt. Use when asked to finish the job.
---

# Steps

Read the task first.
STEP-LINE: write done.txt when the job is finished.
"""

# The agent reads the installed SKILL.md (the workspace's `.claude/skills/`) and writes done.txt
# only when the step line is there.
CHECK = "grep -qs STEP-LINE .claude/skills/*/SKILL.md && echo ok > done.txt; echo checked"

POLICY = f"""
seed: 11
rules:
  - name: flaky
    when: {{prompt: '\\[case-f\\]', chance: 0.5}}
    steps:
      - {{tool: Bash, input: {{command: "echo ok > done.txt"}}}}
      - "Finished the job."
  - name: flaky-miss
    when: {{prompt: '\\[case-f\\]'}}
    text: "Finished the job."
  - name: follow-the-skill
    when: {{prompt: '\\[case-'}}
    steps:
      - {{tool: Bash, input: {{command: {json.dumps(CHECK)}}}}}
      - "Finished the job."
"""


def evals_doc(ids: list[str]) -> str:
    cases = []
    for i in ids:
        asserts: list[dict[str, Any]] = (
            [{"type": "regex", "pattern": "Finished"}]
            if i == "c"
            else [{"type": "file_exists", "path": "done.txt"}]
        )
        cases.append(
            {"id": i, "prompt": f"[case-{i}] Finish the job, please.", "assertions": asserts}
        )
    return json.dumps({"skill_name": "steps", "evals": cases}, indent=2) + "\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout


def repo(tmp: Path, name: str, ids: list[str]) -> Path:
    root = tmp / name
    files = {
        ".claude-plugin/plugin.json": '{"name": "kit", "version": "1.0.0"}\n',
        "skills/steps/SKILL.md": BODY,
        "evals/steps/evals.json": evals_doc(ids),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
    return root


def pr(root: Path, tmp: Path, srv: Any, max_runs: int) -> Any:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp / "home"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    outcome = run_pr(
        PrOptions(
            environ=env,
            cwd=root,
            local=True,
            base="main",
            jobs=2,
            max_runs=max_runs,
            fail_on="never",
        ),
        reporter=RecordingReporter(),
        commands=io.StringIO(),
    )
    (row,) = [r for r in outcome.rows if r.skill == "steps"]
    assert row.evals is not None, outcome.comment
    return row.evals, outcome.comment


def test_a_body_edit_that_breaks_two_of_three_cases_is_a_regression_a_cosmetic_one_is_not(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    srv = model_server(POLICY)
    root = repo(tmp_path, "broken", ["a", "b", "c"])
    (root / "skills/steps/SKILL.md").write_text(BODY.replace("STEP-LINE: write", "Then write"))
    tier, comment = pr(root, tmp_path, srv, 18)
    assert tier.label is Label.REGRESSION, comment
    assert tier.test is not None and tier.test.base_rate == 1.0 and tier.test.head_rate < 0.34
    assert tier.base_reruns >= 3 and tier.extra_head_runs >= 3  # paired: both sides re-ran
    assert "runs a side" in comment and "🔴 regression" in comment
    assert git(root, "status", "--porcelain") == " M skills/steps/SKILL.md\n"  # nothing committed

    cosmetic = repo(tmp_path, "cosmetic", ["a", "b", "c"])
    (cosmetic / "skills/steps/SKILL.md").write_text(BODY.replace("Read the task", "Read the job"))
    tier, comment = pr(cosmetic, tmp_path, srv, 18)
    assert tier.label not in (Label.REGRESSION, Label.IMPROVEMENT), comment
    assert tier.label is Label.NO_CHANGE, comment
    assert tier.test is not None and tier.test.base_runs >= 12 and tier.test.head_runs >= 12


def test_a_lone_flaky_case_never_makes_a_verdict(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    srv = model_server(POLICY)
    root = repo(tmp_path, "flaky", ["f"])
    (root / "skills/steps/SKILL.md").write_text(BODY.replace("Read the task", "Read the job"))
    tier, comment = pr(root, tmp_path, srv, 6)
    assert tier.label is Label.UNDECIDED, comment
    assert tier.test is not None and tier.test.base_runs > 1 and tier.test.head_runs > 1
    assert "more runs per case per side would decide it" in comment or "max_runs" in comment

    # `pr --local` again on the same content: it evaluates a fresh copy of the working tree,
    # without the first run's results (as "Re-run jobs" checks out a head whose results commit it
    # lacks). The ledger holds the comparison closed at the cap: no session starts, and the
    # verdict rests on the head run the first run's looks tested (issue 48).
    before = len(srv.requests)
    again, comment = pr(root, tmp_path, srv, 6)
    assert srv.requests[before:] == [], "a closed eval comparison started sessions"
    assert again.label is Label.UNDECIDED, comment
    assert again.test == tier.test
