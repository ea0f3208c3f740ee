"""QA: Ctrl-C (SIGINT) during `run triggers` against a slow scripted server.

Exit 130, every finished query is on disk, and no agent process survives the run (found by
the unique `ANTHROPIC_BASE_URL` of this test's server in `/proc/*/environ`).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.helpers.agents import MODEL, agents_using, csv_trigger_repo, scripted_env


def test_sigint_exits_130_keeps_finished_queries_and_leaves_no_agents(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    queries = [(f"Tidy up CSV spreadsheet number {i}", True) for i in range(1, 6)]
    root = tmp_path / "repo"
    csv_trigger_repo(root, queries)
    srv = model_server(
        {"latency_ms": 700, "rules": [{"name": "route", "route": {"threshold": 0.2}}]}
    )
    env = scripted_env(tmp_path, srv.base_url)
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
                if done and agents_using(srv.base_url):
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
    while agents_using(srv.base_url) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert agents_using(srv.base_url) == []
