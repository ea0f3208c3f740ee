"""Benchmark: parallel efficiency of `--jobs`, and 1 vs 4 shards, against a slow scripted model.

- `jobs`: one skill with 8 trigger queries, `run triggers --runs 1 --no-early-stop --jobs J` for J
  in 1, 2, 4, 8 with the real Claude Code CLI talking to the scripted model server, which waits a
  fixed `--latency` (default 3 s) before every answer. Agent sessions wait on the model, so on a
  2-core machine they should overlap: efficiency(J) = (T1 / J) / TJ, where T1 is the wall time at
  one job (1.0 = perfect; the ideal for J sessions at once).
- `shards`: a synthetic marketplace of 8 skills (2 queries each, all new) run once unsharded
  (`run triggers --jobs 1`) and once as 4 concurrent processes `run triggers --shard i/4
  --fragments DIR --jobs 1` on copies of the same commit, then `merge`: wall times, the speed-up,
  and the merge time.

    .venv/bin/python bench/scale.py [--sections jobs,shards] [--latency 3.0] [--json]

Offline (127.0.0.1 only). Prints the 1-minute load average before and after each section.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.helpers.agents import csv_trigger_repo, skill_md, triggers_doc, write

from evolve_action.modelserver import ModelServer, Policy

MODEL = "claude-sonnet-4-6"


def _env(tmp: Path, base_url: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp / "home"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "evolve_action", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"exit {p.returncode}: {err.decode()}")


def _shard(tmp: Path, i: int) -> list[str]:
    return ["--shard", f"{i}/4", "--fragments", str(tmp / "frags" / str(i))]


def _server(latency: float) -> ModelServer:
    policy = Policy.from_dict(
        {"latency_ms": int(latency * 1000), "rules": [{"name": "r", "route": {"threshold": 0.2}}]}
    )
    return ModelServer(policy, port=0).start()


def jobs_section(latency: float) -> dict[str, Any]:
    rows = []
    server = _server(latency)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-jobs-") as d:
            tmp = Path(d)
            queries = [(f"Tidy up CSV spreadsheet number {i}", True) for i in range(8)]
            base = csv_trigger_repo(tmp / "base", queries)
            for jobs in (1, 2, 4, 8):
                repo = tmp / f"repo-{jobs}"
                shutil.copytree(base, repo)
                args = ["run", "triggers", "--root", str(repo), "--model", MODEL, "--runs", "1"]
                args += ["--no-early-stop", "--jobs", str(jobs)]
                t0 = time.perf_counter()
                _wait([_cli(args, _env(tmp, server.base_url), tmp)])
                rows.append({"jobs": jobs, "seconds": time.perf_counter() - t0})
    finally:
        server.stop()
    t1 = rows[0]["seconds"]
    for r in rows:
        r["efficiency"] = (t1 / r["jobs"]) / r["seconds"]
    return {"latency_seconds": latency, "sessions": 8, "rows": rows}


def shards_section(latency: float) -> dict[str, Any]:
    server = _server(latency)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-shards-") as d:
            tmp = Path(d)
            base = tmp / "base"
            write(base, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
            for i in range(8):
                name = f"skill-{i}"
                write(base, f"skills/{name}/SKILL.md", skill_md(name, f"Do {name} work."))
                queries = [(f"Please do {name} work now", True), (f"What is {i} + {i}?", False)]
                write(base, f"evals/{name}/triggers.json", triggers_doc(queries))
            env = _env(tmp, server.base_url)
            flags = ["--model", MODEL, "--runs", "1", "--no-early-stop", "--jobs", "1"]
            plain = tmp / "plain"
            shutil.copytree(base, plain)
            t0 = time.perf_counter()
            _wait([_cli(["run", "triggers", "--root", str(plain), *flags], env, tmp)])
            unsharded = time.perf_counter() - t0
            sharded_repo = tmp / "sharded"
            shutil.copytree(base, sharded_repo)
            t0 = time.perf_counter()
            procs = [
                _cli(
                    [*("run", "triggers", "--root", str(sharded_repo)), *flags, *_shard(tmp, i)],
                    env,
                    tmp,
                )
                for i in range(1, 5)
            ]
            _wait(procs)
            sharded = time.perf_counter() - t0
            t0 = time.perf_counter()
            merge = ["merge", "--root", str(sharded_repo), str(tmp / "frags")]
            _wait([_cli(merge, env, tmp)])
            merged = time.perf_counter() - t0
    finally:
        server.stop()
    return {
        "latency_seconds": latency,
        "sessions": 16,
        "unsharded_seconds": unsharded,
        "four_shards_seconds": sharded,
        "speedup": unsharded / sharded,
        "merge_seconds": merged,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default="jobs,shards")
    ap.add_argument("--latency", type=float, default=3.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out: dict[str, Any] = {}
    for section in args.sections.split(","):
        before = os.getloadavg()[0]
        out[section] = (jobs_section if section == "jobs" else shards_section)(args.latency)
        out[section]["load_before"], out[section]["load_after"] = before, os.getloadavg()[0]
        if not args.json:
            print(json.dumps({section: out[section]}, indent=2), flush=True)
    if args.json:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
