"""SIGTERM/SIGHUP take the SIGINT path, and a kill -9 leaves no agent and (after the next start) no temp dir.

Real processes throughout: `python -m evolve_action run triggers` with the real Claude Code CLI against a
slow scripted model server. Agents are found by the unique `ANTHROPIC_BASE_URL` of each test's server
in `/proc/*/environ`; temp dirs by a private `TMPDIR`.
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
    csv_trigger_repo,
    kill_live_agents,
    live_agents,
    scripted_env,
    skill_md,
    write,
)
from tests.integration.test_triggers_cli import MODEL

from evolve_action import harness as sandbox

QUERIES = [(f"Tidy up CSV spreadsheet number {i}", True) for i in range(1, 7)]


def _start(
    tmp_path: Path, srv: Any, *, sandbox_off: bool = False
) -> tuple[subprocess.Popen[bytes], Path, Path, dict[str, str]]:
    root = tmp_path / "repo"
    csv_trigger_repo(root, QUERIES)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**scripted_env(tmp_path, srv.base_url), "TMPDIR": str(tmpdir)}
    if sandbox_off:
        env["EVOLVE_SANDBOX_ENABLED"] = "false"
    args = ["run", "triggers", "--root", str(root), "--model", "claude-sonnet-4-6"]
    args += ["--jobs", "2", "--runs", "1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolve_action", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return proc, root / "evals" / "csv-clean" / "results.json", tmpdir, env


def _wait_mid_run(proc: subprocess.Popen[bytes], results: Path, tmpdir: Path) -> list[str]:
    """Wait until at least one query is on disk and an agent is running; return the finished ones."""
    done: list[str] = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
        if results.exists():
            doc = json.loads(results.read_text())
            done = [r["query"] for r in doc["models"][MODEL]["triggers"]["results"]]
            if done and any(pid != proc.pid for pid in live_agents(tmpdir)):
                break
    return done


def _agents(tmpdir: Path, proc: subprocess.Popen[bytes]) -> list[int]:
    """Agents of the run whose `TMPDIR` is `tmpdir`, not counting the run itself."""
    return [pid for pid in live_agents(tmpdir) if pid != proc.pid]


def _wait_no_agents(tmpdir: Path, seconds: float = 20) -> list[int]:
    deadline = time.monotonic() + seconds
    while live_agents(tmpdir) and time.monotonic() < deadline:
        time.sleep(0.2)
    return live_agents(tmpdir)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_behave_as_sigint(
    tmp_path: Path, model_server: Any, claude_cli: Path, sig: signal.Signals, code: int
) -> None:
    srv = model_server(
        {"latency_ms": 700, "rules": [{"name": "route", "route": {"threshold": 0.2}}]}
    )
    proc, results, tmpdir, _ = _start(tmp_path, srv)
    try:
        done = _wait_mid_run(proc, results, tmpdir)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert 1 <= len(done) < len(QUERIES), "the run finished before it could be interrupted"
    text = stderr.decode()
    assert proc.returncode == code, text
    assert "interrupted" in text and "Traceback" not in text
    kept = [
        r["query"] for r in json.loads(results.read_text())["models"][MODEL]["triggers"]["results"]
    ]
    assert set(done) <= set(kept)
    # No agent outlives the run, and no workspace or config dir is left in TMPDIR.
    assert _wait_no_agents(tmpdir) == []
    assert sorted(p.name for p in tmpdir.iterdir()) == []


@pytest.mark.parametrize("sandbox_off", [False, True], ids=["default", "no-sandbox"])
def test_kill_9_leaves_no_agent_and_next_start_sweeps_temp_dirs(
    tmp_path: Path, model_server: Any, claude_cli: Path, sandbox_off: bool
) -> None:
    if not sandbox_off and not sandbox.probe(os.environ).available:
        pytest.skip("bubblewrap cannot run here: the default path is the no-sandbox one")
    srv = model_server(
        {"latency_ms": 1500, "rules": [{"name": "route", "route": {"threshold": 0.2}}]}
    )
    proc, results, tmpdir, env = _start(tmp_path, srv, sandbox_off=sandbox_off)
    try:
        _wait_mid_run(proc, results, tmpdir)
        assert _agents(tmpdir, proc), "no agent was running when the test killed the run"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        left = _wait_no_agents(tmpdir)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_live_agents(tmpdir)
    assert left == [], "agents outlived a kill -9 of their parent"
    stale = [p.name for p in tmpdir.iterdir()]
    assert stale and all(n.startswith("evolve-action.") for n in stale), stale
    # The next start (any command) sweeps the dead run's scratch dir.
    again = subprocess.run(
        [sys.executable, "-m", "evolve_action", "run", "checks", "--root", str(tmp_path / "repo")],
        env=env,
        capture_output=True,
        check=False,
    )
    assert again.returncode in (0, 1), again.stderr.decode()
    assert [p.name for p in tmpdir.iterdir()] == []


def test_missing_fixture_stops_the_run_without_leaking_a_workspace(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
    write(root, "skills/good/SKILL.md", skill_md("good", "Good skill. Use when asked."))
    cases = [
        {
            "id": f"c{i}",
            "prompt": f"Do thing {i}.",
            "assertions": [{"type": "regex", "pattern": "."}],
        }
        for i in range(3)
    ]
    cases.append({**cases[0], "id": "gone", "files": ["files/missing.txt"]})
    write(root, "evals/good/evals.json", json.dumps({"evals": cases}))
    srv = model_server({"latency_ms": 300})
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**scripted_env(tmp_path, srv.base_url), "TMPDIR": str(tmpdir)}
    args = ["run", "evals", "--root", str(root), "--model", "claude-sonnet-5", "--jobs", "2"]
    proc = subprocess.run(
        [sys.executable, "-m", "evolve_action", *args], env=env, capture_output=True, check=False
    )
    assert proc.returncode == 2, proc.stderr.decode()
    assert b"missing.txt" in proc.stderr and b"Traceback" not in proc.stderr
    assert b"ERROR:" not in proc.stderr  # no SDK logging noise from the cancelled sessions
    assert [p.name for p in tmpdir.iterdir()] == []
    assert live_agents(tmpdir) == []


def test_a_timed_out_session_prints_no_sdk_logging_noise(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
    write(root, "skills/good/SKILL.md", skill_md("good", "Good skill. Use when asked."))
    case = {"id": "slow", "prompt": "Slow.", "timeout_seconds": 3}
    case["assertions"] = [{"type": "regex", "pattern": "."}]
    write(root, "evals/good/evals.json", json.dumps({"evals": [case]}))
    srv = model_server({"rules": [{"name": "slow", "delay_ms": 30000, "text": "late"}]})
    env = scripted_env(tmp_path, srv.base_url)
    args = ["run", "evals", "--root", str(root), "--model", "claude-sonnet-5", "--no-baseline"]
    proc = subprocess.run(
        [sys.executable, "-m", "evolve_action", *args], env=env, capture_output=True, check=False
    )
    err = proc.stderr.decode()
    assert "timed out after 3s" in err
    assert "ERROR:" not in err and "claude_agent_sdk" not in err, err


def test_sigterm_during_evals_removes_workspaces_and_config_dirs(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
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
    srv = model_server({"latency_ms": 3000})
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**scripted_env(tmp_path, srv.base_url), "TMPDIR": str(tmpdir)}
    args = ["run", "evals", "--root", str(root), "--model", "claude-sonnet-5", "--jobs", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolve_action", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        names: list[str] = []
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
            names = [p.name for d in tmpdir.iterdir() for p in d.iterdir()]
            if any(n.startswith("claude-home.") for n in names) and _agents(tmpdir, proc):
                break
        assert _agents(tmpdir, proc), "no agent was running when the test signalled the run"
        assert any(n.startswith(("evals.", "baseline.")) for n in names), names
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, stderr.decode()
    assert b"interrupted" in stderr
    assert _wait_no_agents(tmpdir) == []
    assert [p.name for p in tmpdir.iterdir()] == []
