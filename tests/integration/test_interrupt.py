"""QA: Ctrl-C (SIGINT) during `run triggers`, and a runner's SIGTERM mid-eval, against a slow
scripted server.

Exit 130 (143), every finished query is on disk, no traceback, and no agent process survives the
run, with or without bubblewrap (found by the unique `ANTHROPIC_BASE_URL` of this test's server in
`/proc/*/environ`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import (
    MODEL,
    csv_trigger_repo,
    live_agents,
    scripted_env,
    skill_md,
    write,
)

from evolve_action import harness as sandbox


def test_sigint_exits_130_keeps_finished_queries_and_leaves_no_agents(
    tmp_path: Path, model_server: Any, claude_cli: Path, agent_scratch: Path
) -> None:
    queries = [(f"Tidy up CSV spreadsheet number {i}", True) for i in range(1, 6)]
    root = tmp_path / "repo"
    csv_trigger_repo(root, queries)
    srv = model_server(
        {"latency_ms": 700, "rules": [{"name": "route", "route": {"threshold": 0.2}}]}
    )
    env = scripted_env(tmp_path, srv.base_url)
    scratch = agent_scratch  # its agents are this run's, not another test run's
    env["TMPDIR"] = str(scratch)
    args = ["run", "triggers", "--root", str(root), "--model", "claude-sonnet-4-6"]
    args += ["--jobs", "2", "--runs", "1"]
    results = root / "evals" / "csv-clean" / "results.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolve_action", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    done: list[str] = []
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
            if results.exists():
                doc = json.loads(results.read_text())
                done = [r["query"] for r in doc["models"][MODEL]["triggers"]["results"]]
                if done and live_agents(scratch):
                    break
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert 1 <= len(done) < len(queries), "the run finished before it could be interrupted"
    assert proc.returncode == 130, stderr.decode()
    assert b"Traceback" not in stderr
    doc = json.loads(results.read_text())
    kept = [r["query"] for r in doc["models"][MODEL]["triggers"]["results"]]
    assert set(done) <= set(kept) and all(q in dict(queries) for q in kept)
    deadline = time.monotonic() + 10
    while live_agents(scratch) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert live_agents(scratch) == []


@pytest.mark.parametrize("sandbox_off", [False, True], ids=["bwrap", "no-sandbox"])
def test_sigterm_mid_eval_leaves_no_agent_and_no_traceback(
    tmp_path: Path, model_server: Any, claude_cli: Path, sandbox_off: bool, agent_scratch: Path
) -> None:
    """A runner kills 2.5 s after its SIGTERM: the agents must be gone when the run has exited,
    and the run itself within 2 s while the model's answers are still in flight at the gateway
    (issue 37: GitHub kills a cancelled step ~10 s after signalling it, and the cancellation path
    must have run by then). The figures are printed; only the 2 s bound is asserted (without bubblewrap, as the
    action's image runs on GitHub).
    """
    if not sandbox_off and not sandbox.probe(os.environ).available:
        pytest.skip(f"no OS sandbox here: {sandbox.probe(os.environ).reason}")
    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
    write(root, "skills/good/SKILL.md", skill_md("good", "Good skill. Use when asked."))
    cases = [
        {
            "id": f"c{i}",
            "prompt": f"Do thing {i}.",
            "assertions": [{"type": "regex", "pattern": "."}],
        }
        for i in range(4)
    ]
    write(root, "evals/good/evals.json", json.dumps({"evals": cases}))
    srv = model_server({"latency_ms": 20000})  # answers in flight when the signal comes
    env = scripted_env(tmp_path, srv.base_url)
    scratch = agent_scratch  # its agents are this run's, not another test run's
    env["TMPDIR"] = str(scratch)
    if sandbox_off:
        env["EVOLVE_SANDBOX_ENABLED"] = "false"
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    args = ["run", "evals", "--root", str(root), "--model", "claude-sonnet-5", "--jobs", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolve_action", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if len([p for p in live_agents(scratch) if p != proc.pid]) >= 2:
                break
            time.sleep(0.1)
        assert [p for p in live_agents(scratch) if p != proc.pid], "no agent was running"
        time.sleep(0.5)  # the agents are waiting for the (slow) model
        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        while [p for p in live_agents(scratch) if p != proc.pid]:
            if time.monotonic() > signalled + 60:
                break
            time.sleep(0.05)
        gone = time.monotonic()
        _, stderr = proc.communicate(timeout=60)
        exited = time.monotonic()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = stderr.decode()
    print(
        f"\nSIGTERM figures ({'no-sandbox' if sandbox_off else 'bwrap'}): exit after "
        f"{exited - signalled:.2f} s, last agent gone after {gone - signalled:.2f} s"
    )
    assert proc.returncode == 143, text
    if sandbox_off:  # as the action's image runs on GitHub (bubblewrap's own teardown aside)
        assert exited - signalled < 2.0, f"the run took {exited - signalled:.2f} s to exit"
    assert "Traceback" not in text and "Exception ignored" not in text, text
    assert live_agents(scratch) == [], "agents outlived the run they belong to"
