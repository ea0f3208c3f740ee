"""`run evals` end to end: the real Claude Code CLI against the scripted model server.

One sweep of a single-plugin fixture (6 evals, baselines on) covers: an agent that writes files and
runs commands, every assertion type passing and failing where it should, the judge's verdicts matched
by id (the scripted server answers the judge through the `anthropic` SDK), a lift over the
without-skill baseline, runtime-error rows for a crash (the agent's shell kills the CLI), a timeout and `max_turns`, an untouched stored
entry of another model, the environment allowlist (the agent's shell and `command` assertions never see
`GITHUB_TOKEN`/`INPUT_*`), and a second `--new` run that starts no session at all.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from evolve_action.cli import main

pytestmark = pytest.mark.integration

SKILL_MD = """---
name: greeter
description: Use when the user asks for a greeting file; writes greeting.txt with a friendly hello.
---

# Greeter

Write `greeting.txt` containing `Hello from greeter`.
"""

OK = "[ok]"
BAD = "[bad]"

EVALS: dict[str, Any] = {
    "skill_name": "greeter",
    "evals": [
        {
            "id": "write-and-run",
            "prompt": "[case-write] Create hello.txt and copy the input data.",
            "expected_output": "hello.txt with a greeting and copy.txt with the input data",
            "files": ["files/data/input.txt", "files/data/marker", "fixtures/cfg/settings.ini"],
            "expectations": [f"hello.txt greets the user {OK}"],
            "assertions": [
                {"type": "file_exists", "path": "hello.txt"},
                {"type": "file_exists", "path": "data/input.txt"},
                {"type": "file_exists", "path": "settings.ini"},
                {"type": "file_absent", "path": "cfg/settings.ini"},
                {"type": "regex", "path": "hello.txt", "pattern": "^Hello"},
                {"type": "not_regex", "path": "hello.txt", "pattern": "Goodbye"},
                {"type": "regex", "pattern": "Created hello"},
                {"type": "not_regex", "pattern": "error"},
                {"type": "command", "run": "grep -q staged-data copy.txt"},
                {"type": "command", "run": "exit 4", "expect_exit": 4},
                {"type": "command", "run": "cat marker", "cwd": "data"},
                {"type": "command", "run": "true", "requires": "no-such-tool-xyz"},
                {
                    "type": "command",
                    "run": 'env > cmd-env.txt; test -z "$GITHUB_TOKEN$INPUT_ANTHROPIC_API_KEY$INPUT_SECRET"',
                },
                {"type": "tool_call", "tool": "^Write$", "pattern": "hello\\.txt"},
                {"type": "tool_call", "tool": "Bash", "pattern": "copy\\.txt"},
                f"The copy matches the input {OK}",
            ],
        },
        {
            "id": "all-fail",
            "prompt": "[case-write] Create hello.txt and copy the input data (strict grader).",
            "files": ["files/data/input.txt"],
            "assertions": [
                {"type": "file_exists", "path": "missing.txt"},
                {"type": "file_absent", "path": "hello.txt"},
                {"type": "regex", "path": "hello.txt", "pattern": "Goodbye"},
                {"type": "not_regex", "path": "hello.txt", "pattern": "Hello"},
                {"type": "not_regex", "path": "missing.txt", "pattern": "x"},
                {"type": "regex", "pattern": "(?i)failure"},
                {"type": "command", "run": "test -f nothing-here"},
                {"type": "tool_call", "tool": "^Edit$"},
                {"type": "tool_call", "tool": "Bash", "pattern": "rm -rf"},
                {"type": "llm", "text": f"The agent wrote a poem {BAD}"},
                {"type": "llm", "text": f"The agent was polite {OK}"},
            ],
        },
        {
            "id": "lift",
            "prompt": "[case-lift] Please write the greeting file for the user.",
            "assertions": [
                {"type": "regex", "path": "greeting.txt", "pattern": "Hello from greeter"},
                {"type": "tool_call", "tool": "^Skill$"},
            ],
        },
        {
            "id": "crash",
            "prompt": "[case-crash] Do the thing.",
            "assertions": [{"type": "file_exists", "path": "x"}],
        },
        {
            "id": "slow",
            "prompt": "[case-slow] Take your time.",
            "timeout_seconds": 4,
            "assertions": [{"type": "file_exists", "path": "x"}],
        },
        {
            "id": "loop",
            "prompt": "[case-loop] Keep going.",
            "max_turns": 2,
            "assertions": [{"type": "file_exists", "path": "x"}],
        },
    ],
}

POLICY = """
rules:
  - name: judge
    when: {tools: [submit_verdicts]}
    judge: {pass: '\\[ok\\]', fail: '\\[bad\\]'}
  - name: write
    when: {prompt: '\\[case-write\\]'}
    steps:
      - {tool: Write, input: {file_path: "{cwd}/hello.txt", content: "Hello, user!\\n"}}
      - {tool: Bash, input: {command: "cat data/input.txt > copy.txt && env && echo copied"}}
      - "Created hello.txt and copy.txt."
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
  - name: crash
    when: {prompt: '\\[case-crash\\]'}
    steps:
      - {tool: Bash, input: {command: "kill -9 $CLAUDE_PID"}}
      - "survived"
  - name: slow
    when: {prompt: '\\[case-slow\\]'}
    delay_ms: 30000
    text: "too late"
  - name: loop
    when: {prompt: '\\[case-loop\\]'}
    steps:
      - {tool: Bash, input: {command: "echo 1"}}
      - {tool: Bash, input: {command: "echo 2"}}
      - {tool: Bash, input: {command: "echo 3"}}
      - {tool: Bash, input: {command: "echo 4"}}
      - "never reached"
"""

OTHER_MODEL_ENTRY = "anthropic/claude-opus-5"
# Claude Code's Write tool refuses to create files for some older model ids ("File has not been read
# yet"), so the scripted agent runs as claude-sonnet-5.


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_repo(root: Path) -> Path:
    write(root, ".claude-plugin/plugin.json", json.dumps({"name": "demo", "version": "1.0.0"}))
    write(root, "skills/greeter/SKILL.md", SKILL_MD)
    write(root, "evals/greeter/evals.json", json.dumps(EVALS, indent=2))
    write(root, "evals/greeter/files/data/input.txt", "staged-data\n")
    write(root, "evals/greeter/files/data/marker", "marker-ok\n")
    write(root, "evals/greeter/fixtures/cfg/settings.ini", "[x]\n")
    return root


def stored_other_model() -> dict[str, Any]:
    """A stored evals entry of another model; the sweep must leave it byte-for-byte alone."""
    return {
        "provider": "anthropic",
        "model": "claude-opus-5",
        "display": "Claude Opus 5",
        "harness": "claude",
        "tool_version": "0.7.0",
        "ran_at": "2026-08-15T07:11:18Z",
        "executed": True,
        "content_hash": "abc",
        "timeout_seconds": 600,
        "pricing": {"input_per_mtok": 5, "output_per_mtok": 25},
        "results": [
            {
                "id": "write-and-run",
                "passed": True,
                "spec_hash": "old",
                "timing": {"executor_duration_seconds": 12.5},
            }
        ],
        "summary": {"passed": 1, "failed": 0, "total": 1, "pass_rate": 1, "avg_run_seconds": 12.5},
    }


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


def verdicts(result: dict[str, Any]) -> list[tuple[str, bool | None]]:
    return [(e["text"], e["passed"]) for e in result["expectations"]]


def test_eval_sweep_end_to_end(tmp_path: Path, model_server: Any, claude_cli: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    other = {
        "schema": 5,
        "plugin": "demo",
        "skill": "greeter",
        "models": {OTHER_MODEL_ENTRY: {"evals": stored_other_model()}},
    }
    results_path = repo / "evals/greeter/results.json"
    results_path.write_text(json.dumps(other, indent=2) + "\n")
    srv = model_server(POLICY)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
        "GITHUB_TOKEN": "ghs_must_not_leak",
        "INPUT_ANTHROPIC_API_KEY": "sk-input-must-not-leak",
        "INPUT_SECRET": "input-secret",
    }
    args = [
        "run",
        "evals",
        "--root",
        str(repo),
        "--model",
        "claude-sonnet-5",
        "--jobs",
        "3",
        "--timeout",
        "120",
    ]
    code, out, err = run_cli(args, env, tmp_path)
    assert code == 0, err
    assert "WARN: evals: some evals failed (pass --strict to exit 1)" in err

    doc = json.loads(results_path.read_text())
    assert doc["models"][OTHER_MODEL_ENTRY]["evals"] == stored_other_model()
    entry = doc["models"]["anthropic/claude-sonnet-5"]["evals"]
    assert (
        entry["executed"] is True
        and entry["harness"] == "claude"
        and entry["timeout_seconds"] == 120
    )
    by_id = {r["id"]: r for r in entry["results"]}
    # Errored cases reached no verdict, so nothing is stored for them (issue 8): they stay new.
    assert list(by_id) == ["write-and-run", "all-fail", "lift"]

    # An agent that writes files and runs commands; every assertion type passes (one skips).
    ok = by_id["write-and-run"]
    assert ok["passed"] is True, json.dumps(ok, indent=1)
    assert [e["passed"] for e in ok["expectations"]] == [True] * 12 + [None] + [True] * 4
    assert ok["expectations"][0] == {
        "type": "llm",
        "text": f"hello.txt greets the user {OK}",
        "passed": True,
        "evidence": "scripted judge: passed (matches pass /\\[ok\\]/)",
        "source": "expectation",
    }
    assert ok["expectations"][12]["evidence"] == "skipped: no-such-tool-xyz not installed"
    assert ok["summary"] == {"passed": 16, "failed": 0, "total": 17, "pass_rate": 1, "skipped": 1}
    assert ok["execution_metrics"]["tool_calls"] == {"Bash": 1, "Write": 1}
    assert ok["measured"]["output_tokens"] > 0 and "cost_usd" in ok["measured"]
    assert ok["timing"]["executor_duration_seconds"] > 0 and ok["timing"]["total_tokens"] > 0
    assert len(ok["spec_hash"]) == 64

    # Every assertion type fails where it should; the judge's verdicts are matched by id.
    bad = by_id["all-fail"]
    assert bad["passed"] is False
    assert [e["passed"] for e in bad["expectations"]] == [False] * 10 + [True]
    assert bad["expectations"][9]["evidence"] == "scripted judge: failed (matches fail /\\[bad\\]/)"
    assert bad["expectations"][4]["evidence"] == "missing.txt missing"

    # Runtime errors are reported with their reasons (never graded, never stored).
    lines = {ln.split()[1]: ln for ln in out.splitlines() if ln.startswith("  ERRORED ")}
    for rid, needle in (
        ("crash", "exit code -9"),
        ("slow", "timed out after 4s"),
        ("loop", "max_turns"),
    ):
        line = lines[rid]
        if rid == "crash" and "exit code 137" in line:
            needle = "exit code 137"  # under bubblewrap the sandbox reports the SIGKILL as 128+9
        assert needle in line, line
    assert entry["summary"].get("errored", 0) == 0

    # The baseline ran without the skill: the lift case fails there and passes with the skill.
    assert by_id["lift"]["passed"] is True
    base = {r["id"]: r for r in entry["baseline"]["results"]}
    assert (
        base["lift"]["passed"] is False
        and base["lift"]["fingerprint"] == by_id["lift"]["spec_hash"]
    )
    assert base["write-and-run"]["passed"] is True
    assert "spec_hash" not in base["lift"] and "estimate" not in base["lift"]

    # The judge conversation went through the SDK, one per case with llm assertions (with + baseline).
    judge_reqs = [
        r
        for r in srv.requests
        if "submit_verdicts" in json.dumps(r.get("body", {}).get("tools", []))
    ]
    assert len(judge_reqs) == 4

    # Nothing secret reached the agent's shell or the command assertion (workspaces are gone, so the
    # agent's env dump is checked through the request log of its Bash tool result instead).
    dumps = json.dumps(srv.requests)
    assert "ghs_must_not_leak" not in dumps and "sk-input-must-not-leak" not in dumps
    assert "input-secret" not in dumps
    assert "ANTHROPIC_BASE_URL=" in dumps  # the agent's `env` output did reach the log

    # A second run with --new plans nothing for the complete cases: no new agent session.
    before = len(srv.requests)
    code, out, err = run_cli(
        [*args, "--new", "--no-baseline", "--eval", "write-and-run", "--eval", "lift"],
        env,
        tmp_path,
    )
    assert code == 0, err
    assert len(srv.requests) == before
    assert "skip" in out


ALL_POLICY = """
rules:
  - name: judge
    when: {tools: [submit_verdicts]}
    judge: {}
  - name: eval-write
    when: {prompt: 'case-all'}
    steps:
      - {tool: Write, input: {file_path: "{cwd}/greeting.txt", content: "Hello from greeter\\n"}}
      - "Wrote greeting.txt."
  - name: route
    route: {threshold: 0.2, answer: "Done."}
"""


def test_run_all_checks_triggers_evals_report(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    repo = tmp_path / "repo"
    write(repo, ".claude-plugin/plugin.json", json.dumps({"name": "demo", "version": "1.0.0"}))
    write(repo, "skills/greeter/SKILL.md", SKILL_MD)
    write(
        repo,
        "evals/greeter/triggers.json",
        json.dumps(
            {"triggers": [{"query": "write a friendly greeting file", "should_trigger": True}]}
        ),
    )
    evals_doc = {
        "evals": [
            {
                "id": "g",
                "prompt": "[case-all] greet",
                "assertions": [{"type": "file_exists", "path": "greeting.txt"}, "friendly"],
            }
        ]
    }
    write(repo, "evals/greeter/evals.json", json.dumps(evals_doc))
    srv = model_server(ALL_POLICY)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    args = [
        "run",
        "all",
        "--root",
        str(repo),
        "--model",
        "claude-sonnet-5",
        "--runs",
        "1",
        "--no-baseline",
    ]
    code, out, err = run_cli([*args, "--dry-run", "--json"], env, tmp_path)
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]  # every line is JSON
    planned = [p for p in lines if "event" not in p]
    assert [p["event"] for p in lines if "event" in p] == ["ChecksDone"]
    assert [(p["tier"], p["case"]) for p in planned] == [
        ("triggers", "write a friendly greeting file"),
        ("evals", "g"),
    ]
    assert srv.requests == []
    code, out, err = run_cli(args, env, tmp_path)
    assert code == 0, err
    doc = json.loads((repo / "evals/greeter/results.json").read_text())
    entry = doc["models"]["anthropic/claude-sonnet-5"]
    assert entry["triggers"]["results"][0]["passed"] is True
    assert entry["evals"]["results"][0]["passed"] is True
    assert "baseline" not in entry["evals"]
    assert (repo / "EVALUATION.md").is_file()
    assert out.index("checks:") < out.index("[triggers]") < out.index("[evals]")
