"""Issue 8 end to end: an agent or judge that cannot run never becomes a verdict.

The real Claude Code CLI (bundled in claude-agent-sdk) runs against the scripted model server. A
plugin's stored results are produced by a first, healthy sweep; then sweeps with a revoked key (the
server refuses every request, counting included), no key, an endpoint that is down, a key the
counting endpoint accepts but every agent call refuses (401 after the CLI's retries), an agent that
prints Claude Code's login banner, and a judge that always fails must leave the stored results
byte-identical and exit non-zero naming the cause. A sweep where one of three queries errors
records the other two and leaves the errored one as it was.
"""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import csv_trigger_repo, scripted_env, skill_md, write

from evolve_action.cli import main

pytestmark = pytest.mark.integration

MODEL = "claude-sonnet-4-6"
QUERIES = [
    ("Tidy up this messy CSV spreadsheet", True),
    ("Please tidy my CSV file columns", True),
    ("What is the capital of France?", False),
]
ROUTE = "rules:\n  - {name: route, route: {threshold: 0.2}}\n"
SILENT = "rules: []\n"  # the default rule answers OK: no skill is ever invoked


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


def triggers_args(repo: Path) -> list[str]:
    return ["run", "triggers", "--root", str(repo), "--model", MODEL, "--runs", "1", "--jobs", "1"]


def sessions(requests: list[dict[str, Any]]) -> set[str]:
    """Distinct agent sessions that reached `/v1/messages`."""
    return {
        str(r["session"])
        for r in requests
        if r.get("path") == "/v1/messages" and r.get("session") is not None
    }


@pytest.fixture
def stored(tmp_path: Path, model_server: Any, claude_cli: Path) -> tuple[Path, Path, bytes]:
    """A trigger repo whose results were written by a healthy sweep: (repo, results, bytes)."""
    repo = csv_trigger_repo(tmp_path / "repo", QUERIES)
    srv = model_server(ROUTE)
    code, _, err = run_cli(triggers_args(repo), scripted_env(tmp_path, srv.base_url), tmp_path)
    assert code == 0, err
    results = repo / "evals/csv-clean/results.json"
    data = results.read_bytes()
    entry = json.loads(data)["models"][f"anthropic/{MODEL}"]["triggers"]
    assert [r["passed"] for r in entry["results"]] == [True, True, True]
    return repo, results, data


def test_revoked_key_stops_before_any_session(
    tmp_path: Path, model_server: Any, stored: tuple[Path, Path, bytes]
) -> None:
    repo, results, before = stored
    srv = model_server("auth_error: 401\n")
    env = scripted_env(tmp_path, srv.base_url)
    code, out, err = run_cli(triggers_args(repo), env, tmp_path)
    assert code == 2
    assert "refused ANTHROPIC_API_KEY (HTTP 401" in err and "set a valid ANTHROPIC_API_KEY" in err
    assert results.read_bytes() == before
    assert [r["path"] for r in srv.requests] == ["/v1/messages/count_tokens"]
    assert "FAILED" not in out


def test_no_key_stops_before_any_session(
    tmp_path: Path, model_server: Any, stored: tuple[Path, Path, bytes]
) -> None:
    repo, results, before = stored
    srv = model_server(ROUTE)
    env = scripted_env(tmp_path, srv.base_url)
    del env["ANTHROPIC_API_KEY"]
    code, _, err = run_cli(triggers_args(repo), env, tmp_path)
    assert code == 2
    assert "no Anthropic credentials" in err and "CLAUDE_CODE_OAUTH_TOKEN" in err
    assert results.read_bytes() == before
    assert srv.requests == []
    # A dry run needs no credentials.
    code, out, err = run_cli([*triggers_args(repo), "--dry-run"], env, tmp_path)
    assert code == 0, err
    assert "csv-clean" in out


def test_endpoint_down_stops_before_any_session(
    tmp_path: Path, stored: tuple[Path, Path, bytes]
) -> None:
    repo, results, before = stored
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = scripted_env(tmp_path, f"http://127.0.0.1:{port}")
    code, _, err = run_cli(triggers_args(repo), env, tmp_path)
    assert code == 2
    assert f"cannot reach the model API at http://127.0.0.1:{port}" in err
    assert results.read_bytes() == before


@pytest.mark.parametrize(
    ("policy", "cause"),
    [
        # Counting accepts the key, every agent call is refused (the CLI retries, then errors).
        ("faults: [{status: 401}]\n", "credentials refused"),
        # The agent answers with Claude Code's login banner instead of working.
        ('default: "Not logged in · Please run /login"\n', "not authenticated: Not logged in"),
    ],
    ids=["agent-401", "login-banner"],
)
def test_every_session_failing_alike_changes_nothing(
    tmp_path: Path,
    model_server: Any,
    stored: tuple[Path, Path, bytes],
    policy: str,
    cause: str,
) -> None:
    repo, results, before = stored
    srv = model_server(policy)
    env = scripted_env(tmp_path, srv.base_url)
    code, out, err = run_cli([*triggers_args(repo), "--runs", "2"], env, tmp_path)
    assert code == 2, (out, err)
    assert "triggers: every agent session failed" in err and cause in err
    assert "stored results were left unchanged" in err
    assert results.read_bytes() == before
    assert "FAILED" not in out and "ERRORED" in out
    # The sweep stopped once the first three sessions failed alike (3 queries x 2 runs planned).
    # A refused credential is the gateway's to remember: after the first 401, confirmed by its
    # own request (no CLI session id), it refuses every later request itself, so only the first
    # session reaches the model at all.
    agents = sessions(srv.requests) - {""}
    assert len(agents) == (1 if "401" in policy else 3)
    if "401" in policy:
        assert "" in sessions(srv.requests)  # the gateway's own confirming request


def test_one_errored_query_keeps_its_stored_result(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    repo = csv_trigger_repo(tmp_path / "repo", QUERIES)
    srv = model_server(SILENT)
    env = scripted_env(tmp_path, srv.base_url)
    code, _, err = run_cli(triggers_args(repo), env, tmp_path)
    assert code == 0, err
    results = repo / "evals/csv-clean/results.json"
    key = f"anthropic/{MODEL}"
    old = {
        r["query"]: r for r in json.loads(results.read_text())["models"][key]["triggers"]["results"]
    }
    assert [r["passed"] for r in old.values()] == [False, False, True]  # nothing triggered
    old_hash = json.loads(results.read_text())["models"][key]["triggers"]["content_hash"]

    # The skill changes (so every stored result is stale), then one query's sessions fail.
    write(
        repo,
        "skills/csv-clean/SKILL.md",
        skill_md("csv-clean", "Tidy CSV spreadsheets and files. Use when asked to tidy CSV."),
    )
    srv.set_policy(
        "rules:\n"
        "  - {name: broken, when: {prompt: 'columns'}, status: 400}\n"
        "  - {name: route, route: {threshold: 0.2}}\n"
    )
    code, out, err = run_cli(triggers_args(repo), env, tmp_path)
    assert code == 0, err  # failures are reported, not fatal; one error is not a failed sweep
    entry = json.loads(results.read_text())["models"][key]["triggers"]
    new = {r["query"]: r for r in entry["results"]}
    assert list(new) == [q for q, _ in QUERIES]
    assert new["Tidy up this messy CSV spreadsheet"]["passed"] is True  # a new verdict
    assert new["Please tidy my CSV file columns"] == old["Please tidy my CSV file columns"]
    assert new["What is the capital of France?"]["passed"] is True
    assert "ERRORED" in out and "API error 400" in out
    # The errored query kept the entry stale (old content hash): the next run plans it again.
    assert entry["content_hash"] == old_hash
    code, out, err = run_cli([*triggers_args(repo), "--dry-run"], env, tmp_path)
    assert code == 0, err
    assert "results complete" not in out and "columns" in out


# ------------------------------------------------------------------------------------------------
# Evals: a judge that cannot answer makes the case a runtime error, never a failed expectation.

EVALS = {
    "evals": [
        {
            "id": "greets",
            "prompt": "[case-greet] Say hello.",
            "assertions": ["The agent said hello"],
        }
    ]
}
EVAL_POLICY_OK = "rules:\n  - {name: answer, when: {prompt: 'case-greet'}, text: 'Hello!'}\n"
EVAL_POLICY_JUDGE_DOWN = (
    "rules:\n"
    "  - {name: judge-down, when: {tools: [submit_verdicts]}, status: 400}\n"
    "  - {name: answer, when: {prompt: 'case-greet'}, text: 'Hello!'}\n"
)


def test_judge_always_failing_changes_nothing(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    repo = tmp_path / "repo"
    write(repo, ".claude-plugin/plugin.json", '{"name": "demo", "version": "1.0.0"}\n')
    write(repo, "skills/greeter/SKILL.md", skill_md("greeter", "Greets. Use when greeting."))
    write(repo, "evals/greeter/evals.json", json.dumps(EVALS))
    srv = model_server(EVAL_POLICY_OK)
    env = scripted_env(tmp_path, srv.base_url)
    env["HOME"] = str(tmp_path / "home")
    args = ["run", "evals", "--root", str(repo), "--model", "claude-sonnet-5", "--no-baseline"]
    code, _, err = run_cli(args, env, tmp_path)
    assert code == 0, err
    results = repo / "evals/greeter/results.json"
    before = results.read_bytes()
    (row,) = json.loads(before)["models"]["anthropic/claude-sonnet-5"]["evals"]["results"]
    assert row["passed"] is True

    srv.set_policy(EVAL_POLICY_JUDGE_DOWN)
    code, out, err = run_cli(args, env, tmp_path)
    assert code == 2, (out, err)
    assert "evals: every agent session failed: judge error: HTTP 400" in err
    assert results.read_bytes() == before
    assert "judge error" in out and "FAILED" not in out

    # A revoked key stops the evals tier before any session too.
    srv.set_policy("auth_error: 401\n")
    srv.clear()
    code, out, err = run_cli(args, env, tmp_path)
    assert code == 2 and "refused ANTHROPIC_API_KEY (HTTP 401" in err
    assert results.read_bytes() == before
    assert [r["path"] for r in srv.requests] == ["/v1/messages/count_tokens"]
