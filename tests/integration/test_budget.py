"""`--max-cost-usd` (issue 14 item 2): scheduling stops at the cap, finished work stays, a re-run continues.

The real Claude Code CLI against the scripted model server, whose answers report a million input
tokens each (about $3 a request for claude-sonnet-4-6): the first unit fits the cap by the
budget's prior and runs; its measured spend passes the cap, so the second unit never starts and
the closing line names it. A re-run without the cap runs only the skipped unit (the server's
request log shows no session for the finished one).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import scripted_env, skill_md, triggers_doc, write

from evolve_action.cli import main

pytestmark = pytest.mark.integration

MODEL = "claude-sonnet-4-6"
POLICY = """
default: {text: "OK", usage: {input_tokens: 1000000, output_tokens: 10}}
"""
QUERY = {"alpha-tool": "Polish the alpha report", "beta-tool": "Polish the beta report"}


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


def prompts(log: Path) -> list[str]:
    """The first-turn user prompt of every agent request in the server's log."""
    found = []
    for line in log.read_text().splitlines():
        record = json.loads(line)
        if record.get("path") == "/v1/messages" and record.get("turn") == 1:
            found.append(str(record.get("prompt")))
    return found


def test_the_budget_stops_scheduling_and_a_rerun_continues(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    repo = tmp_path / "repo"
    write(repo, ".claude-plugin/plugin.json", '{"name": "tools", "version": "1.0.0"}\n')
    for skill, query in QUERY.items():
        write(repo, f"skills/{skill}/SKILL.md", skill_md(skill, f"{skill} things. Use when asked."))
        write(repo, f"evals/{skill}/triggers.json", triggers_doc([(query, False)]))
    log = tmp_path / "requests.jsonl"
    srv = model_server(POLICY, log_path=log)
    env = scripted_env(tmp_path, srv.base_url)
    args = ["run", "triggers", "--root", str(repo), "--model", MODEL, "--runs", "1", "--jobs", "1"]

    code, out, err = run_cli([*args, "--max-cost-usd", "1"], env, tmp_path)
    assert code == 0, out + err
    assert (repo / "evals/alpha-tool/results.json").is_file()
    assert not (repo / "evals/beta-tool/results.json").exists()
    (line,) = [ln for ln in err.splitlines() if ln.startswith("WARN: budget: ")]
    assert "of $1.00 (--max-cost-usd); 1 unit not run, a re-run continues" in line
    assert line.endswith(f"tools/beta-tool triggers anthropic/{MODEL}")
    assert "budget: --max-cost-usd 1.00 reached" in out  # the skipped unit's own line
    assert prompts(log) == [QUERY["alpha-tool"]]

    code, out, err = run_cli([*args, "--new"], env, tmp_path)
    assert code == 0, out + err
    assert (repo / "evals/beta-tool/results.json").is_file()
    assert prompts(log) == [QUERY["alpha-tool"], QUERY["beta-tool"]]  # no duplicate session
    assert "budget" not in err


@pytest.mark.parametrize("tier", ["triggers", "evals", "all"])
def test_a_negative_cap_is_a_usage_error(tmp_path: Path, tier: str) -> None:
    write(tmp_path, ".claude-plugin/plugin.json", '{"name": "tools", "version": "1.0.0"}\n')
    write(tmp_path, "skills/a/SKILL.md", skill_md("a", "A things. Use when asked."))
    code, _, err = run_cli(["run", tier, "--max-cost-usd", "-1", "--dry-run"], {}, tmp_path)
    assert code == 2
    assert "--max-cost-usd -1.0: want a number of US dollars, 0 or more" in err
