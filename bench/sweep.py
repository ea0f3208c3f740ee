"""Benchmark: whole-repository commands with nothing to run, against the CLI's start-up.

For each size (default 300 and 1,000 skills) `bench/synth_full.py` writes a marketplace whose
results files have the size and shape of real ones (15 models, snapshots, graded expectations:
about 330 KB each) and whose evidence is complete and current. Then, interleaved, `--repeat`
times each, as fresh processes on a fresh copy of the repository:

- `evolve-action --version` (the CLI's start-up),
- `run all --modified` (checks, both tiers planned, nothing runs, the report is rewritten),
- `report` (the reports), and
- `report --check --strict` (the gate, with staleness).

Wall time, CPU time (user + system) and peak RSS come from `wait4`; on a shared machine the
CPU-time ratio is the steadier one. Each command must exit 0, and `run all` must start no
agent session (the model URL points at a closed port). Prints medians, the ratio to start-up and
the 1-minute load average before and after.

    .venv/bin/python bench/sweep.py [--sizes 300,1000] [--repeat 3] [--json]
    PYTHONPATH=/path/to/other/src .venv/bin/python bench/sweep.py   # another source tree
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.synth_full import generate

COMMANDS: dict[str, list[str]] = {
    "start-up": ["--version"],
    "run all --modified": ["run", "all", "--modified"],
    "report": ["report"],
    "gate": ["report", "--check", "--strict"],
}


def _load() -> float:
    return os.getloadavg()[0]


def run_once(repo: Path, args: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """One fresh `python -m evolve_action ARGS` in `repo`: (seconds, peak RSS MiB, CPU seconds)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolve_action", *args],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert proc.stdout is not None
    text = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"evolve-action {' '.join(args)} exited {code}:\n{text[-3000:]}")
    if args[:2] == ["run", "all"] and ("sessions" in text and "0 sessions" not in text):
        raise SystemExit(f"an agent session started:\n{text[-3000:]}")
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def measure(size: int, repeat: int, tmp: Path) -> dict[str, Any]:
    src = generate(tmp / f"src-{size}", size)
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    results_bytes = sum(p.stat().st_size for p in src.rglob("results.json"))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp / "home"),
        "ANTHROPIC_API_KEY": "sk-unused",  # nothing is stale: no session may start
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in COMMANDS}
    for i in range(repeat):
        for name, args in COMMANDS.items():
            repo = tmp / f"run-{size}-{i}-{name.replace(' ', '_')}"
            shutil.copytree(src, repo, symlinks=True)
            samples[name].append(run_once(repo, args, env))
            shutil.rmtree(repo, ignore_errors=True)
    shutil.rmtree(src, ignore_errors=True)
    start = statistics.median(s for s, _, _ in samples["start-up"])
    start_cpu = statistics.median(c for _, _, c in samples["start-up"])
    out: dict[str, Any] = {"skills": size, "results_mb": round(results_bytes / 1e6, 1)}
    for name, got in samples.items():
        seconds = [s for s, _, _ in got]
        cpu = statistics.median(c for _, _, c in got)
        out[name] = {
            "median_s": round(statistics.median(seconds), 2),
            "min_s": round(min(seconds), 2),
            "max_s": round(max(seconds), 2),
            "x_start_up": round(statistics.median(seconds) / start, 1),
            "cpu_s": round(cpu, 2),
            "cpu_x_start_up": round(cpu / start_cpu, 1),
            "peak_mib": round(max(m for _, m, _ in got)),
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300,1000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {"load_before": round(_load(), 2), "sizes": []}
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            report["sizes"].append(measure(size, args.repeat, Path(tmp)))
    report["load_after"] = round(_load(), 2)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"1-minute load {report['load_before']} → {report['load_after']}")
    for r in report["sizes"]:
        print(f"{r['skills']} skills ({r['results_mb']} MB of results files):")
        for name in COMMANDS:
            m = r[name]
            print(
                f"  {name:20s} {m['median_s']:6.2f} s ({m['min_s']}–{m['max_s']}) "
                f"{m['x_start_up']:5.1f}× start-up; CPU {m['cpu_s']} s = "
                f"{m['cpu_x_start_up']}× start-up's; {m['peak_mib']} MiB"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
