"""Start-up time of `evolve-action --version`: N fresh processes, median/min/max wall time.

    .venv/bin/python bench/startup.py                  # 10 runs of .venv/bin/evolve-action
    .venv/bin/python bench/startup.py --runs 30 --json
    PYTHONPATH=/path/to/other/src .venv/bin/python bench/startup.py   # another source tree

The first run (which may write `.pyc` files) is discarded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--exe", default=str(Path(sys.executable).with_name("evolve-action")))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    subprocess.run([args.exe, "--version"], stdout=subprocess.DEVNULL, check=True)
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run([args.exe, "--version"], stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    ms = {
        "runs": args.runs,
        "median_ms": round(statistics.median(times) * 1000),
        "min_ms": round(min(times) * 1000),
        "max_ms": round(max(times) * 1000),
    }
    print(json.dumps(ms) if args.json else " ".join(f"{k}={v}" for k, v in ms.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
