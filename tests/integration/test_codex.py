"""The OpenAI Codex harness end to end: the real `codex` CLI against the scripted model server's
OpenAI Responses dialect, through `evolve-action run triggers|evals` as a user runs them.

Covers trigger hits, misses and a sibling skill name, a failing query that is an error and never a
miss, an eval whose agent writes a file and runs a command graded by every deterministic assertion
type and the judge, usage and cost in the results (`harness: codex`, valid against our schema), the
OpenAI key preflight, and the planning of a marketplace's OpenAI models once Codex is installed.
Skips (with the reason) when Codex is not installed: `evolve-action install codex`.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import skill_md, triggers_doc, write

from evolve_action.cli import main
from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import (
    ErrorClass,
    SessionSpec,
    agent_harness,
    create_workspace,
    find_codex,
    safe_env,
)
from evolve_action.modelserver import ModelServer
from evolve_action.results import load_results

pytestmark = pytest.mark.integration

MODEL = "openai/gpt-5.4"


@pytest.fixture(scope="module")
def codex_cli() -> Path:
    """The Codex CLI (PATH or this environment's own install); skips the test when absent."""
    try:
        return find_codex(os.environ)
    except EnvironmentProblem:
        pytest.skip("OpenAI Codex is not installed (evolve-action install codex)")


def codex_env(tmp_path: Path, srv: ModelServer, **extra: str) -> dict[str, str]:
    """An environment pointing Codex (and the judge) at the scripted server."""
    return safe_env(
        os.environ,
        extra={
            "HOME": str(tmp_path / "home"),
            "OPENAI_API_KEY": "sk-openai-scripted",
            "OPENAI_BASE_URL": f"{srv.base_url}/v1",
            "ANTHROPIC_API_KEY": "sk-scripted",
            "ANTHROPIC_BASE_URL": srv.base_url,
            "GITHUB_TOKEN": "ghp_must_not_leak",
            "INPUT_SECRET": "must-not-leak",
            **extra,
        },
    )


def cli(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


def trigger_repo(root: Path) -> Path:
    write(root, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
    write(
        root,
        "skills/frob/SKILL.md",
        skill_md("frob", "Frobnicate CSV spreadsheets and dedupe rows."),
    )
    write(
        root,
        "skills/frob-extra/SKILL.md",
        skill_md("frob-extra", "Render charts and plots from quarterly numbers."),
    )
    write(
        root,
        "evals/frob/triggers.json",
        triggers_doc(
            [
                ("please dedupe the rows of my csv spreadsheets", True),
                ("what is the weather like today", False),
                ("render charts and plots of quarterly numbers", False),
                ("[broken] dedupe csv rows", True),
            ]
        ),
    )
    return root


TRIGGER_POLICY = """
rules:
  - name: broken
    when: {prompt: '\\[broken\\]'}
    status: 400
    message: "scripted bad request"
  - name: route
    route: {threshold: 0.3, answer: "Used {skill}."}
"""


def test_triggers_hit_miss_sibling_and_error(
    codex_cli: Path, model_server: Any, tmp_path: Path
) -> None:
    srv = model_server(TRIGGER_POLICY)
    root = trigger_repo(tmp_path / "repo")
    env = codex_env(tmp_path, srv)
    code, out, err = cli(
        ["run", "triggers", "--root", str(root), "--model", MODEL, "--runs", "1"], env, tmp_path
    )
    assert code == 0, out + err
    doc = json.loads((root / "evals/frob/results.json").read_text("utf-8"))
    entry = doc["models"][MODEL]["triggers"]
    assert entry["harness"] == "codex"
    by_query = {r["query"]: r for r in entry["results"]}
    # A hit: Codex ran `cat …/.agents/skills/frob/SKILL.md`.
    assert by_query["please dedupe the rows of my csv spreadsheets"]["hits"] == 1
    # A miss, and the sibling frob-extra read is no hit for frob.
    assert by_query["what is the weather like today"]["hits"] == 0
    assert by_query["render charts and plots of quarterly numbers"]["hits"] == 0
    assert by_query["render charts and plots of quarterly numbers"]["passed"] is True
    # The failing query is an error, never a miss: no verdict stored, the run says why.
    assert "[broken] dedupe csv rows" not in by_query
    assert "error" in out.lower() and "scripted bad request" in out + err
    load_results(root / "evals/frob/results.json")  # validates against our schema
    # What Codex was asked: the Responses dialect, the skill listing from .agents/skills.
    calls = [r for r in srv.requests if r.get("path") == "/v1/responses"]
    assert calls and all(r["headers"].get("originator") == "codex_exec" for r in calls)
    assert {"frob", "frob-extra"} <= {s.rsplit(":", 1)[-1] for s in calls[0]["skills"]}
    sibling = [r for r in calls if r["prompt"].startswith("render charts")]
    assert "frob-extra/SKILL.md" in json.dumps(sibling[0]["reply"])
    # Neither the GitHub token nor INPUT_* reached Codex's shell.
    for r in calls:
        assert "ghp_must_not_leak" not in json.dumps(r["body"])
        assert "must-not-leak" not in json.dumps(r["body"])


EVALS: dict[str, Any] = {
    "skill_name": "greeter",
    "evals": [
        {
            "id": "write-and-run",
            "prompt": "[case-write] Create hello.txt and copy the input data.",
            "expected_output": "hello.txt with a greeting and copy.txt with the input data",
            "files": ["files/data/input.txt"],
            "expectations": ["hello.txt greets the user [ok]"],
            "assertions": [
                {"type": "file_exists", "path": "hello.txt"},
                {"type": "file_absent", "path": "goodbye.txt"},
                {"type": "regex", "path": "hello.txt", "pattern": "^Hello"},
                {"type": "not_regex", "path": "hello.txt", "pattern": "Goodbye"},
                {"type": "regex", "pattern": "Created hello"},
                {"type": "command", "run": "grep -q staged-data copy.txt"},
                {"type": "command", "run": 'test -z "$GITHUB_TOKEN$INPUT_SECRET"'},
                {"type": "tool_call", "tool": "^command_execution$", "pattern": "copy\\.txt"},
                {"type": "llm", "text": "The copy matches the input [ok]"},
            ],
        },
        {
            "id": "graded-fail",
            "prompt": "[case-write] Create hello.txt again (strict grader).",
            "files": ["files/data/input.txt"],
            "assertions": [
                {"type": "file_exists", "path": "missing.txt"},
                {"type": "regex", "path": "hello.txt", "pattern": "Goodbye"},
                {"type": "tool_call", "tool": "^file_change$"},
                {"type": "llm", "text": "The agent wrote a poem [bad]"},
            ],
        },
    ],
}

EVAL_POLICY = """
rules:
  - name: judge
    when: {tools: [submit_verdicts]}
    judge: {pass: '\\[ok\\]', fail: '\\[bad\\]'}
  - name: write
    when: {prompt: '\\[case-write\\]'}
    steps:
      - {text: "Writing.", tool: Write, input: {file_path: "{cwd}/hello.txt", content: "Hello, user!\\n"}}
      - {tool: Bash, input: {command: "cat data/input.txt > copy.txt && env && echo copied"}}
      - "Created hello.txt and copy.txt."
"""


@pytest.mark.parametrize("sandbox", ["ours", "codex's"])
def test_eval_writes_runs_and_is_graded(
    codex_cli: Path, model_server: Any, tmp_path: Path, sandbox: str
) -> None:
    # With bubblewrap, the whole CLI runs in our sandbox; without it (or switched off), Codex's own
    # `--sandbox workspace-write` confines its commands. The agent's work is the same either way.
    srv = model_server(EVAL_POLICY)
    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "demo", "version": "1.0.0"}\n')
    write(root, "skills/greeter/SKILL.md", skill_md("greeter", "Write greeting files."))
    write(root, "evals/greeter/evals.json", json.dumps(EVALS, indent=2))
    write(root, "evals/greeter/files/data/input.txt", "staged-data\n")
    env = codex_env(
        tmp_path, srv, **({"EVOLVE_SANDBOX_ENABLED": "false"} if sandbox != "ours" else {})
    )
    code, out, err = cli(
        ["run", "evals", "--root", str(root), "--model", MODEL, "--no-baseline"], env, tmp_path
    )
    assert code in (0, 1), out + err
    doc = json.loads((root / "evals/greeter/results.json").read_text("utf-8"))
    entry = doc["models"][MODEL]["evals"]
    assert entry["harness"] == "codex"
    results = {r["id"]: r for r in entry["results"]}
    good = results["write-and-run"]
    assert good["passed"] is True, json.dumps(good, indent=2)
    graded = good["expectations"]
    assert all(a["passed"] for a in graded), json.dumps(graded, indent=2)
    assert {a["type"] for a in graded} >= {
        "file_exists",
        "file_absent",
        "regex",
        "not_regex",
        "command",
        "tool_call",
        "llm",
    }
    bad = results["graded-fail"]
    assert bad["passed"] is False
    assert [a["passed"] for a in bad["expectations"]] == [False, False, False, False]
    # Usage from Codex's turn.completed, priced from the catalog (Codex reports no cost).
    measured = good["measured"]
    assert measured["input_tokens"] > 0 and measured["output_tokens"] > 0, measured
    assert measured["cost_usd"] > 0, measured
    load_results(root / "evals/greeter/results.json")
    # The scripted server saw Codex's shell calls and the judge's Anthropic call.
    paths = {r.get("path") for r in srv.requests}
    assert {"/v1/responses", "/v1/messages"} <= paths
    # The agent's `env` output went back to the model: no GitHub token, no INPUT_*, no
    # Anthropic key in Codex's environment; its own OpenAI key and home are there.
    bodies = json.dumps([r.get("body") for r in srv.requests if r.get("path") == "/v1/responses"])
    assert "CODEX_HOME=" in bodies and "OPENAI_API_KEY=" in bodies
    assert "ghp_must_not_leak" not in bodies and "must-not-leak" not in bodies
    assert "ANTHROPIC_API_KEY" not in bodies


def test_missing_or_refused_openai_key_stops_before_any_session(
    codex_cli: Path, model_server: Any, tmp_path: Path
) -> None:
    srv = model_server(TRIGGER_POLICY)
    root = trigger_repo(tmp_path / "repo")
    env = codex_env(tmp_path, srv)
    del env["OPENAI_API_KEY"]
    code, _, err = cli(["run", "triggers", "--root", str(root), "--model", MODEL], env, tmp_path)
    assert code == 2
    assert "no OpenAI credentials" in err and "OPENAI_API_KEY" in err
    refused = model_server({"auth_error": 401, "rules": []})
    code, _, err = cli(
        ["run", "triggers", "--root", str(root), "--model", MODEL],
        codex_env(tmp_path, refused),
        tmp_path,
    )
    assert code == 2
    assert "refused OPENAI_API_KEY" in err
    assert not (root / "evals/frob/results.json").exists()
    assert not [r for r in srv.requests + refused.requests if r.get("path") == "/v1/responses"]


def test_marketplace_plans_openai_models_once_codex_is_installed(
    codex_cli: Path, corpus: Path, tmp_path: Path
) -> None:
    root = tmp_path / "corpus"
    shutil.copytree(corpus, root)
    triggers = root / "plugins/golang/evals/go-docs/triggers.json"
    doc = json.loads(triggers.read_text("utf-8"))
    queries = doc["triggers"] if isinstance(doc, dict) else doc
    queries[0]["should_trigger"] = not queries[0]["should_trigger"]  # same query, new spec
    triggers.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    env = safe_env(os.environ, extra={"HOME": str(tmp_path / "home")})
    code, out, err = cli(
        ["run", "triggers", "--root", str(root), "--modified", "--dry-run", "--json"],
        env,
        tmp_path,
    )
    assert code == 0, err
    planned = [json.loads(line) for line in out.splitlines() if line.strip()]
    openai = {
        p["model"]
        for p in planned
        if p["model"].startswith("openai/")
        and p["skill"] == "go-docs"
        and p["reason"] == "modified"
    }
    # The OpenAI models whose stored evidence has spec hashes re-run the changed query.
    assert {"openai/gpt-5.6-sol", "openai/gpt-5.4-mini", "openai/gpt-5.3-codex-spark"} <= openai
    assert "openai/gpt-5.4 has no available harness" not in err


def test_a_hung_session_times_out_and_leaves_no_process(
    codex_cli: Path, model_server: Any, tmp_path: Path
) -> None:
    srv = model_server(
        {"rules": [{"name": "hang", "when": "hang", "delay_ms": 60000, "text": "late"}]}
    )
    env = codex_env(tmp_path, srv)
    ws = create_workspace(prefix="t.", skills=[], environ=env)
    spec = SessionSpec(
        prompt="hang", workspace=ws, model="gpt-5.4", harness="codex", timeout_seconds=3
    )
    started = time.monotonic()
    t = asyncio.run(agent_harness(env).run(spec))
    assert t.error is ErrorClass.TIMEOUT and time.monotonic() - started < 20
    port = str(srv.port)
    time.sleep(0.5)
    left = [
        p
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and port in _cmdline(p) and "codex" in _cmdline(p)
    ]
    assert left == []


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""
