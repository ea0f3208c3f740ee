"""Sessions of one job send the same prompt prefix (issue 40): the prompt cache can serve them all.

Claude Code writes its working directory and its memory directory (under `CLAUDE_CONFIG_DIR`) into
its system prompt. Each session sees fixed paths (`harness._placement`): under bubblewrap its own
directories bound at one fixed pair, without it a slot (`slot.N`) per concurrent session. The real
CLI against the scripted model server; the tools and the system prompt of every first request are
compared byte for byte, the per-request `x-anthropic-billing-header` line aside.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import MODEL, agent_tmp, csv_trigger_repo, scripted_env

from evolve_action import harness
from evolve_action.cli import main
from evolve_action.modelserver._cache import cache_blocks

QUERIES = [("tidy my csv", True), ("what time is it", False), ("clean this spreadsheet", True)]
POLICY = {"rules": [{"name": "r", "route": {"threshold": 0.2}}]}


def prefix_of(body: dict[str, Any]) -> str:
    """Tools then system, as the cache sees them, without the billing line."""
    system = body.get("system")
    blocks = system if isinstance(system, list) else [{"type": "text", "text": system}]
    kept = [
        b for b in blocks if not str(b.get("text", "")).startswith("x-anthropic-billing-header:")
    ]
    return json.dumps([body.get("tools"), kept], sort_keys=True)


@pytest.mark.parametrize(
    ("sandboxed", "agents"),
    [(True, ""), (False, ""), (True, "nobody,64321:64321")],
    ids=["bubblewrap", "slots", "bubblewrap-agent-uids"],
)
def test_two_sessions_of_one_job_send_the_same_prefix(
    tmp_path: Path, model_server: Any, sandboxed: bool, agents: str
) -> None:
    """`agents`: as root, concurrent sessions each run as an agent uid of their own, each in its
    own copy of the set's workspace (`harness.session_copy`): the prompt is the same."""
    env_extra: dict[str, str] = {}
    if sandboxed:
        probe = harness.probe(os.environ)
        if not probe.available:
            pytest.skip(f"no bubblewrap here: {probe.reason}")
    else:
        env_extra["EVOLVE_SANDBOX_ENABLED"] = "false"
    if agents:
        if os.geteuid() != 0:
            pytest.skip("switching agents to unprivileged users needs root")
        env_extra["EVOLVE_AGENT_USER"] = agents
    server = model_server(POLICY)
    repo = csv_trigger_repo(tmp_path / "repo", QUERIES)
    with agent_tmp() as scratch:
        env = {**scripted_env(tmp_path, server.base_url), **env_extra, "TMPDIR": str(scratch)}
        out, err = io.StringIO(), io.StringIO()
        argv = ["run", "triggers", "--runs", "1", "--no-early-stop", "--root", str(repo)]
        argv += ["--model", MODEL]  # a model whose system prompt holds the memory path
        # Under bubblewrap concurrent sessions share the fixed paths; slots are one per concurrent
        # session, so one at a time shows that consecutive sessions reuse slot 0.
        argv += ["--jobs", "2" if sandboxed else "1"]
        code = main(argv, env, stdout=out, stderr=err, cwd=repo)
    assert code == 0, out.getvalue() + err.getvalue()
    firsts: dict[str, dict[str, Any]] = {}
    for r in server.requests:
        if r.get("path") == "/v1/messages" and r["body"].get("tools"):
            firsts.setdefault(r["headers"].get("x-claude-code-session-id", ""), r["body"])
    assert len(firsts) == len(QUERIES)
    prefixes = {prefix_of(b) for b in firsts.values()}
    assert len(prefixes) == 1, "sessions of one job sent different prefixes"
    text = next(iter(prefixes))
    assert "claude-home." not in text  # no per-session directory in the prompt
    assert ("/sandbox/config/projects/" if sandboxed else "/slot.0/config/projects/") in text


def test_a_wave_of_sessions_writes_the_shared_prefix_once(
    tmp_path: Path, model_server: Any
) -> None:
    """Issue 40 item 3: three sessions start at once; the first request writes Claude Code's
    tools-and-system prefix, the others wait (at the gateway) for its answer to start and read it."""
    server = model_server({**POLICY, "latency_ms": 1500})
    repo = csv_trigger_repo(tmp_path / "repo", QUERIES)
    with agent_tmp() as scratch:
        env = {**scripted_env(tmp_path, server.base_url), "TMPDIR": str(scratch)}
        out, err = io.StringIO(), io.StringIO()
        argv = ["run", "triggers", "--runs", "1", "--no-early-stop", "--root", str(repo)]
        argv += ["--model", MODEL, "--jobs", "3"]
        code = main(argv, env, stdout=out, stderr=err, cwd=repo)
    assert code == 0, out.getvalue() + err.getvalue()
    agent = [r for r in server.requests if r.get("path") == "/v1/messages" and r.get("tools")]
    firsts: dict[str, dict[str, Any]] = {}
    for r in agent:
        firsts.setdefault(r["headers"].get("x-claude-code-session-id", ""), r)
    assert len(firsts) == len(QUERIES)
    prefix = sum(b.tokens for b in cache_blocks(next(iter(firsts.values()))["body"]))
    writes = sorted(r["usage"]["cache_creation_input_tokens"] for r in firsts.values())
    reads = sorted(r["usage"]["cache_read_input_tokens"] for r in firsts.values())
    assert writes[-1] > 10_000 and writes[-2] < 10_000, (writes, reads, prefix)
    assert reads[0] == 0 and reads[1] > 10_000
