"""Benchmark: what one agent session costs in wall time, per harness (Claude Code vs OpenAI Codex).

One skill with 8 trigger queries, `run triggers --runs 1 --no-early-stop --jobs 1` (sessions one
after another), against the scripted model server answering at once (no model latency): the wall
time per session is the harness's own overhead (CLI start-up, the request round trips, teardown).
Run for `anthropic/claude-sonnet-4-6` (Claude Code) and `openai/gpt-5.4` (Codex, skipped when it
is not installed: `evolve-action install codex`). `--repeat N` takes the median of N runs.

    .venv/bin/python bench/harness_overhead.py [--repeat 3] [--json]

Offline (127.0.0.1 only). Prints the 1-minute load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.helpers.agents import csv_trigger_repo

from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import find_codex
from evolve_action.modelserver import ModelServer, Policy

QUERIES = 8
MODELS = ("anthropic/claude-sonnet-4-6", "openai/gpt-5.4")
POLICY = "rules:\n  - {name: route, route: {threshold: 0.2}}\n"


def _env(tmp: Path, base_url: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp / "home"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
        "OPENAI_BASE_URL": f"{base_url}/v1",
        "OPENAI_API_KEY": "sk-scripted",
    }
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    return env


def one_run(model: str, srv: ModelServer) -> float:
    """Wall seconds of one `run triggers` over QUERIES queries (fresh repo, nothing stored)."""
    with tempfile.TemporaryDirectory(prefix="bench-harness.") as tmp_dir:
        tmp = Path(tmp_dir)
        queries = [(f"tidy my CSV spreadsheet number {i}", i % 2 == 0) for i in range(QUERIES)]
        repo = csv_trigger_repo(tmp / "repo", queries)
        cmd = [sys.executable, "-m", "evolve_action", "run", "triggers", "--root", str(repo)]
        cmd += ["--model", model, "--runs", "1", "--no-early-stop", "--jobs", "1"]
        started = time.monotonic()
        proc = subprocess.run(cmd, env=_env(tmp, srv.base_url), capture_output=True, text=True)
        wall = time.monotonic() - started
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{model}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rows: list[dict[str, Any]] = []
    with ModelServer(Policy.from_yaml(POLICY), port=0, keep_requests=False) as srv:
        for model in MODELS:
            if model.startswith("openai/"):
                try:
                    find_codex(os.environ)
                except EnvironmentProblem:
                    print(f"{model}: skipped (Codex is not installed)", file=sys.stderr)
                    continue
            walls = [one_run(model, srv) for _ in range(args.repeat)]
            median = statistics.median(walls)
            rows.append(
                {
                    "model": model,
                    "sessions": QUERIES,
                    "wall_seconds": round(median, 2),
                    "per_session_seconds": round(median / QUERIES, 2),
                    "runs": [round(w, 2) for w in walls],
                }
            )
    load_after = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"load": [load_before, load_after], "rows": rows}, indent=2))
        return
    print(f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after")
    print(f"{'model':32} {'sessions':>8} {'wall s':>8} {'s/session':>10}")
    for r in rows:
        print(
            f"{r['model']:32} {r['sessions']:>8} {r['wall_seconds']:>8} "
            f"{r['per_session_seconds']:>10}   runs {r['runs']}"
        )


if __name__ == "__main__":
    main()
