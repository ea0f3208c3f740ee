"""skill-creator's in-skill definitions run in place (issue 12 item 5).

A repository of bare skills (no manifest) whose skill keeps skill-creator's `evals/evals.json`
(integer id, `expected_output`, `expectations`, a fixture under `evals/files/`) and a trigger eval
set as a bare array (`evals/trigger-queries.json`): the real Claude Code CLI runs both against the
scripted model server, the results land in `evals/<skill>/results.json` outside the skill, the
skill directory is byte-for-byte unchanged, and a second `--new`/`--modified` run plans nothing.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import scripted_env, skill_md, write

from evolve_action.cli import main

pytestmark = pytest.mark.integration

MODEL = "claude-sonnet-5"
POLICY = """
rules:
  - name: judge
    when: {tools: [submit_verdicts]}
    judge: {pass: 'sample', fail: 'never-matches-xyz'}
  - name: read-fixture
    when: {prompt: '\\[case-read\\]'}
    steps:
      - {tool: Bash, input: {command: "cat sample.txt"}}
      - "The sample says: hello sample"
  - name: route
    route: {threshold: 0.2}
"""


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


def skill_creator_repo(root: Path) -> Path:
    write(
        root,
        "skills/sample-reader/SKILL.md",
        skill_md(
            "sample-reader", "Read sample text files aloud. Use when asked to read a sample file."
        ),
    )
    evals = {
        "skill_name": "sample-reader",
        "evals": [
            {
                "id": 1,
                "prompt": "[case-read] Read sample.txt and tell me what it says.",
                "expected_output": "The text of sample.txt",
                "files": ["evals/files/sample.txt"],
                "expectations": ["The answer quotes the sample"],
            }
        ],
    }
    write(root, "skills/sample-reader/evals/evals.json", json.dumps(evals, indent=2))
    write(root, "skills/sample-reader/evals/files/sample.txt", "hello sample\n")
    queries = [
        {"query": "Read the sample file sample.txt to me", "should_trigger": True},
        {"query": "What is the capital of France?", "should_trigger": False},
    ]
    write(root, "skills/sample-reader/evals/trigger-queries.json", json.dumps(queries, indent=2))
    return root


def tree_digest(directory: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        h.update(path.relative_to(directory).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def test_skill_creator_definitions_run_in_place(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    repo = skill_creator_repo(tmp_path / "my-skills")
    skill_dir = repo / "skills/sample-reader"
    before = tree_digest(skill_dir)
    srv = model_server(POLICY)
    env = scripted_env(tmp_path, srv.base_url)
    common = ["--root", str(repo), "--model", MODEL, "--jobs", "1"]

    code, out, err = run_cli(["run", "triggers", *common, "--runs", "1"], env, repo)
    assert code == 0, out + err
    code, out, err = run_cli(["run", "evals", *common, "--no-baseline"], env, repo)
    assert code == 0, out + err

    results = json.loads((repo / "evals/sample-reader/results.json").read_text())
    assert (results["plugin"], results["skill"]) == ("my-skills", "sample-reader")
    entry = results["models"][f"anthropic/{MODEL}"]
    verdicts = {r["query"]: r["passed"] for r in entry["triggers"]["results"]}
    assert verdicts == {
        "Read the sample file sample.txt to me": True,
        "What is the capital of France?": True,
    }
    (case,) = entry["evals"]["results"]
    assert case["id"] == "1"
    assert case["passed"] is True, json.dumps(case, indent=1)
    assert case["expectations"][0]["text"] == "The answer quotes the sample"

    # Results live outside the skill: the skill's bytes (and so its fingerprints) are unchanged.
    assert tree_digest(skill_dir) == before
    assert not list(skill_dir.rglob("results.*"))
    for again in (["triggers"], ["evals", "--no-baseline"]):
        code, out, _ = run_cli(
            ["run", *again, *common, "--new", "--modified", "--dry-run"], env, repo
        )
        assert code == 0
        assert "0 case(s) in 0 unit(s) to run; 1 unit(s) up to date\n" in out, out
        assert out.strip().endswith("estimate: no agent sessions, $0.00"), out


def test_a_standalone_skill_repository_runs_in_place(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    """Issue 30: the repository is the skill (root SKILL.md, skill-creator's files beside it, no
    manifest), checked out under another directory name, with a case saved without assertions:
    triggers and evals run, the draft case is not run, and a second run plans nothing."""
    import subprocess

    repo = tmp_path / "checkout"
    skill_creator_repo(tmp_path / "src")
    (tmp_path / "src/skills/sample-reader").rename(repo)
    doc = json.loads((repo / "evals/evals.json").read_text())
    doc["evals"].append({"id": 2, "prompt": "Read it again", "expected_output": "hello"})
    write(repo, "evals/evals.json", json.dumps(doc, indent=2))
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    srv = model_server(POLICY)
    env = scripted_env(tmp_path, srv.base_url)
    common = ["--model", MODEL, "--jobs", "1"]

    code, out, err = run_cli(["run", "triggers", *common, "--runs", "1"], env, repo / "evals")
    assert code == 0, out + err
    code, out, err = run_cli(["run", "evals", *common, "--no-baseline"], env, repo)
    assert code == 0, out + err
    assert "sample-reader/sample-reader: 1 eval case not graded yet (2)" in out + err

    results = json.loads((repo / "evals/sample-reader/results.json").read_text())
    assert (results["plugin"], results["skill"]) == ("sample-reader", "sample-reader")
    entry = results["models"][f"anthropic/{MODEL}"]
    verdicts = {r["query"]: r["passed"] for r in entry["triggers"]["results"]}
    assert verdicts == {
        "Read the sample file sample.txt to me": True,
        "What is the capital of France?": True,
    }
    [case] = entry["evals"]["results"]
    assert (case["id"], case["passed"]) == ("1", True), json.dumps(case, indent=1)
    for again in (["triggers"], ["evals", "--no-baseline"]):
        code, out, _ = run_cli(
            ["run", *again, *common, "--new", "--modified", "--dry-run"], env, repo
        )
        assert code == 0
        assert "0 case(s) in 0 unit(s) to run; 1 unit(s) up to date\n" in out, out


def test_skills_linked_one_by_one_are_installed_for_triggers(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    """Issue 30: `.claude/skills/<x> -> ../../.agents/skills/<x>` (Claude plus Codex): the trigger
    tier installs the linked skills (from copies), so the skill under test is loaded."""
    from tests.helpers.repo_shapes import linked_project_skills

    repo = linked_project_skills(tmp_path / "linked")
    srv = model_server(POLICY)
    env = scripted_env(tmp_path, srv.base_url)
    code, out, err = run_cli(
        ["run", "triggers", "--model", MODEL, "--jobs", "1", "--runs", "1"], env, repo
    )
    assert code == 0, out + err
    assert "ERRORED" not in out + err and "was not loaded" not in out + err
    results = json.loads((repo / "evals/ship/results.json").read_text())
    runs = results["models"][f"anthropic/{MODEL}"]["triggers"]["results"]
    assert len(runs) == 2 and not any(r.get("runtime_error") for r in runs)
    listed = {s for r in srv.requests if r["path"] == "/v1/messages" for s in r.get("skills", [])}
    assert {"plan", "ship"} <= listed
