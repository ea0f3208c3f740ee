"""An AgentEvals suite end to end: the real Claude Code CLI against the scripted model server.

One `EVAL.yaml` bound to a skill by `metadata.skill` carries a code judge, a checklist rubric
(weights, a required criterion), a composite with a safety gate and a tool trajectory. The case
runs with the skill and without it (the baseline); every evaluator's score and both verdicts are
checked in the skill's results file, which stays schema-5 valid.

"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from evolve_action.cli import main
from evolve_action.specs import schema_validator

pytestmark = pytest.mark.integration

SKILL_MD = """---
name: greeter
description: Use when the user asks for a greeting file; writes greeting.txt with a friendly hello.
---

# Greeter

Write `greeting.txt` containing `Hello from greeter`.
"""

SUITE = """
name: greeter-suite
metadata:
  skill: greeter
execution:
  evaluators:
    - name: file-check
      type: code_judge
      script: ["python3", "judges/check.py"]
    - name: quality
      type: rubric
      rubrics:
        - {id: greets, expected_outcome: "Greets the user [ok]", weight: 2, required: true}
        - {id: poem, expected_outcome: "Writes a poem [bad]", weight: 1}
    - name: gate
      type: composite
      aggregator: {type: safety_gate, required: [safe]}
      evaluators:
        - {name: safe, type: contains, value: "Greeting"}
        - {name: done, type: contains, value: "written"}
    - name: path
      type: tool_trajectory
      mode: in_order
      expected:
        - {tool: Skill}
        - {tool: Write}
evalcases:
  - id: lift
    criteria: Writes greeting.txt
    input: "[case-lift] Please write the greeting file for the user."
"""

JUDGE = """import json, os, sys
payload = json.load(sys.stdin)
workspace = payload.get("workspace_path") or payload.get("workspacePath") or "."
ok = os.path.isfile(os.path.join(workspace, "greeting.txt"))
print(json.dumps({"score": 1 if ok else 0, "hits": ["greeting.txt written"] if ok else [],
                  "misses": [] if ok else ["no greeting.txt"]}))
"""

POLICY = """
rules:
  - name: judge
    when: {tools: [submit_verdicts]}
    judge: {pass: '\\[ok\\]', fail: '\\[bad\\]'}
  - name: lift-write
    when: {prompt: '\\[case-lift\\]', any_tool_result: 'greeter', turn: 2}
    tool: Write
    input: {file_path: "{cwd}/greeting.txt", content: "Hello from greeter\\n"}
  - name: lift-done
    when: {prompt: '\\[case-lift\\]', turn: '>=3'}
    text: "Greeting written."
  - name: lift-route
    when: {prompt: '\\[case-lift\\]'}
    route: {skills: [greeter], threshold: 0.05, answer: "I have no greeting instructions."}
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def scores(result: dict[str, Any]) -> dict[str, str]:
    """Expectation text → the score its evidence starts with (`score 0.67`)."""
    return {e["text"]: e["evidence"].split(" w=")[0] for e in result["expectations"]}


def test_suite_with_code_judge_rubric_safety_gate_and_trajectory(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    repo = tmp_path / "repo"
    write(repo, ".claude-plugin/plugin.json", json.dumps({"name": "demo", "version": "1.0.0"}))
    write(repo, "skills/greeter/SKILL.md", SKILL_MD)
    write(repo, "evals/suites/EVAL.yaml", SUITE)
    write(repo, "evals/suites/judges/check.py", JUDGE)
    srv = model_server(POLICY)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    out, err = io.StringIO(), io.StringIO()
    args = ["run", "evals", "--root", str(repo), "--model", "claude-sonnet-5", "--timeout", "120"]
    code = main(args, env, stdout=out, stderr=err, cwd=tmp_path)
    assert code == 0, err.getvalue()

    results = repo / "evals/greeter/results.json"
    doc = json.loads(results.read_text())
    assert list(schema_validator("results").iter_errors(doc)) == []
    entry = doc["models"]["anthropic/claude-sonnet-5"]["evals"]
    (case,) = entry["results"]
    assert case["id"] == "greeter-suite::lift"
    assert case["passed"] is True, json.dumps(case, indent=1)
    assert scores(case) == {
        "file-check (code_judge)": "score 1.00",
        "quality (rubric)": "score 0.67",
        # Each rubric criterion is an expectation of its own, with the judge's verdict.
        "quality/[greets] Greets the user [ok]": "scripted judge: passed (matches pass /\\[ok\\]/)",
        "quality/[poem] Writes a poem [bad]": "scripted judge: failed (matches fail /\\[bad\\]/)",
        "gate (composite)": "score 1.00",
        "gate/safe (contains)": "score 1.00",
        "gate/done (contains)": "score 1.00",
        "path (tool_trajectory)": "score 1.00",
    }

    (base,) = entry["baseline"]["results"]
    assert base["id"] == "greeter-suite::lift" and base["passed"] is False
    assert base["fingerprint"] == case["spec_hash"]

    # a second run with --modified plans nothing; editing the judge script reruns the case
    before = len(srv.requests)
    code = main(
        [*args, "--modified"], env, stdout=io.StringIO(), stderr=io.StringIO(), cwd=tmp_path
    )
    assert code == 0 and len(srv.requests) == before
    write(repo, "evals/suites/judges/check.py", JUDGE + "# edited\n")
    dry = io.StringIO()
    main([*args, "--modified", "--dry-run"], env, stdout=dry, stderr=io.StringIO(), cwd=tmp_path)
    assert "modified" in dry.getvalue() and "greeter-suite::lift" in dry.getvalue()
