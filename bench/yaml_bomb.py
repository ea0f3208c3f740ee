"""Benchmark: a YAML alias bomb ("billion laughs") is refused quickly and with bounded memory.

Runs each case as a fresh process, the way a user would, and reports its wall time, peak RSS
(from `wait4`) and exit code, next to the same command on the unmodified example repository:

- `run checks` with the bomb in a skill's `triggers.yaml` (issue 9: 6.5 GB and killed at 120 s
  before aliases were counted);
- `run checks` with the bomb in `.evolve.yaml`;
- `report` with the bomb in a `results.yaml`;
- `run checks` with a `triggers.yaml` nested 900 levels deep (was `internal error:
  RecursionError`).

    .venv/bin/python bench/yaml_bomb.py [--repeat 3] [--levels 9] [--json]

Offline; every case uses a temporary copy of `examples/`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TRIGGERS = "plugins/release-tools/evals/commit-message/triggers.yaml"
RESULTS = "plugins/release-tools/evals/commit-message/results.yaml"


def laughs(key: str, levels: int) -> str:
    """9**(levels+1) values once expanded, from a few hundred bytes."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + f"\n{key}: *a{levels}\n"


def run_child(argv: list[str]) -> dict[str, Any]:
    """Run `argv`, return wall seconds, peak RSS (MiB) and exit code."""
    start = time.perf_counter()
    pid = os.spawnv(os.P_NOWAIT, argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    return {
        "wall_s": wall,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "exit": os.waitstatus_to_exitcode(status),
    }


def prepare(tmp: Path, case: str, levels: int) -> tuple[Path, list[str]]:
    root = tmp / case
    shutil.copytree(EXAMPLES, root)
    cli = [sys.executable, "-m", "evolve_action"]
    devnull = ["--root", str(root)]
    if case == "checks: clean examples":
        return root, [*cli, "run", "checks", *devnull]
    if case == "checks: bomb in triggers.yaml":
        (root / TRIGGERS).write_text(laughs("triggers", levels))
        return root, [*cli, "run", "checks", *devnull]
    if case == "checks: bomb in .evolve.yaml":
        (root / ".evolve.yaml").write_text(laughs("models", levels))
        return root, [*cli, "run", "checks", *devnull]
    if case == "report: bomb in results.yaml":
        (root / RESULTS).write_text("schema: 5\n" + laughs("models", levels))
        return root, [*cli, "report", *devnull]
    if case == "checks: triggers.yaml nested 900 deep":
        (root / TRIGGERS).write_text("triggers:\n  - query: " + "[" * 900 + "]" * 900 + "\n")
        return root, [*cli, "run", "checks", *devnull]
    raise AssertionError(case)


CASES = (
    "checks: clean examples",
    "checks: bomb in triggers.yaml",
    "checks: bomb in .evolve.yaml",
    "report: bomb in results.yaml",
    "checks: triggers.yaml nested 900 deep",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (median reported)")
    parser.add_argument("--levels", type=int, default=9, help="alias levels (9 → 9**10 values)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="yaml-bomb-") as tmp_name:
        tmp = Path(tmp_name)
        for case in CASES:
            _, argv = prepare(tmp, case, args.levels)
            runs: list[dict[str, Any]] = []
            for _ in range(args.repeat):
                with open(os.devnull, "w") as sink:  # quiet child output
                    saved = os.dup(1), os.dup(2)
                    os.dup2(sink.fileno(), 1)
                    os.dup2(sink.fileno(), 2)
                    try:
                        runs.append(run_child(argv))
                    finally:
                        os.dup2(saved[0], 1)
                        os.dup2(saved[1], 2)
                        os.close(saved[0])
                        os.close(saved[1])
            walls = [r["wall_s"] for r in runs]
            rows.append(
                {
                    "case": case,
                    "wall_s_median": statistics.median(walls),
                    "wall_s_min": min(walls),
                    "wall_s_max": max(walls),
                    "peak_rss_mib_max": max(r["peak_rss_mib"] for r in runs),
                    "exit": sorted({r["exit"] for r in runs}),
                    "command": " ".join(argv[1:]),
                }
            )
    load_after = os.getloadavg()[0]
    summary = {
        "levels": args.levels,
        "expanded_values": 9 ** (args.levels + 1),
        "repeat": args.repeat,
        "cpus": os.cpu_count(),
        "load_1min": [round(load_before, 2), round(load_after, 2)],
        "python": sys.version.split()[0],
        "rows": rows,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(
        f"alias bomb of {summary['expanded_values']:,} values; {args.repeat} runs per case; "
        f"{summary['cpus']} CPUs; 1-min load {load_before:.2f} -> {load_after:.2f}"
    )
    print(f"{'case':40} {'wall (median, min-max)':>26} {'peak RSS':>10} exit")
    for r in rows:
        wall = f"{r['wall_s_median']:.2f} s ({r['wall_s_min']:.2f}-{r['wall_s_max']:.2f})"
        print(f"{r['case']:40} {wall:>26} {r['peak_rss_mib_max']:>7.1f} MiB {r['exit']}")


if __name__ == "__main__":
    main()
