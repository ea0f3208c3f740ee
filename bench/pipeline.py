"""Benchmark: wall times of the pipeline's everyday commands, measured as a user runs them.

Three sections, each repeated `--repeat` times (default 3) and reported as the median (with min and max):

- `corpus`: on a temporary copy of a marketplace repository (default: the sample corpus
  `/work/shared/corpus/bitwise-skills`; the original is never written to): the wall time of
  `run checks`, of planning (`run triggers --modified --dry-run --json`, `run evals --modified --dry-run`)
  and of `report`, each a fresh `evolve-action` process; plus the in-process throughput of decoding and
  re-encoding every results file of the copy (bytes → document → `ResultsFile` → document → bytes, the
  path `run` takes for every write), and how many of them round-trip byte for byte.
- `triggers`: `run triggers --runs 1 --jobs 2` on a fresh copy of `examples/` with the real Claude Code
  CLI talking to the scripted model server (the bundled demo policy): wall time, sessions, seconds per
  session (wall / sessions, i.e. throughput at 2 concurrent sessions) and the mean per-session time the
  results files record.
- `demo`: `evolve-action demo --scripted` end to end: wall time, agent sessions (trigger runs + eval runs
  with and without the skill, read back from the results files) and API requests (the server's log).

    .venv/bin/python bench/pipeline.py [--repeat 3] [--sections corpus,triggers,demo] [--json]

Offline: everything talks to 127.0.0.1 only. Prints the 1-minute load average before and after each
section, since the machine is often shared: read the figures with it.
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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evolve_action import encoding
from evolve_action import flows as demo
from evolve_action.modelserver import ModelServer
from evolve_action.results import from_document, to_document

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = Path("/work/shared/corpus/bitwise-skills")
MODEL = "anthropic/claude-sonnet-5"
CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")


def cli() -> list[str]:
    """The `evolve-action` next to this interpreter (the venv's), else the one on PATH."""
    here = Path(sys.executable).parent / "evolve-action"
    if here.exists():
        return [str(here)]
    found = shutil.which("evolve-action")
    if found is None:
        sys.exit("bench: evolve-action is not installed (pip install -e .)")
    return [found]


def load() -> float:
    return round(os.getloadavg()[0], 2)


def stats(values: Sequence[float], digits: int = 3) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def timed(argv: list[str], *, env: dict[str, str] | None = None, ok: Sequence[int] = (0,)) -> float:
    """Run one CLI process, return its wall time; fail loudly on an unexpected exit code."""
    began = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    if proc.returncode not in ok:
        sys.exit(f"bench: {' '.join(argv)} exited {proc.returncode}\n{proc.stderr[-2000:]}")
    return seconds


def results_files(root: Path) -> list[Path]:
    return sorted(p for ext in encoding.EXTENSIONS for p in root.glob(f"**/evals/*/results.{ext}"))


def roundtrip(path: Path, data: bytes) -> bytes:
    doc = encoding.decode_bytes(data, path)
    fmt = encoding.format_of(path)
    text = encoding.encode_document(to_document(from_document(doc)), fmt, encoding.RESULTS_COMMENT)
    return text.encode("utf-8")


def bench_corpus(corpus: Path, repeat: int) -> dict[str, Any]:
    evolve = cli()
    with tempfile.TemporaryDirectory(prefix="bench-pipeline.") as tmp:
        root = Path(tmp) / corpus.name
        shutil.copytree(corpus, root, symlinks=True)
        cmds: dict[str, tuple[list[str], Sequence[int]]] = {
            # The copy has missing fixtures, so `run checks` reports findings (exit 0 without --strict).
            "run checks": (["run", "checks"], (0,)),
            "run triggers --modified --dry-run --json": (
                ["run", "triggers", "--modified", "--dry-run", "--json"],
                (0,),
            ),
            "run evals --modified --dry-run": (["run", "evals", "--modified", "--dry-run"], (0,)),
            "report": (["report"], (0,)),
        }
        walls: dict[str, list[float]] = {name: [] for name in cmds}
        before = load()
        timed([*evolve, "--version"])  # warm the page cache / bytecode once, untimed
        for _ in range(repeat):
            for name, (args, ok) in cmds.items():
                walls[name].append(timed([*evolve, *args, "--root", str(root)], ok=ok))
        files = results_files(root)
        blobs = [(p, p.read_bytes()) for p in files]
        total_bytes = sum(len(b) for _, b in blobs)
        identical = sum(1 for p, b in blobs if roundtrip(p, b) == b)
        rates: list[float] = []
        for _ in range(repeat):
            began = time.perf_counter()
            for p, b in blobs:
                roundtrip(p, b)
            rates.append(time.perf_counter() - began)
        after = load()
    sweep = statistics.median(rates)
    return {
        "corpus": str(corpus),
        "load_before": before,
        "load_after": after,
        "wall_seconds": {name: stats(v) for name, v in walls.items()},
        "results_files": len(files),
        "results_bytes": total_bytes,
        "roundtrip_identical": identical,
        "roundtrip_seconds_all_files": stats(rates, 4),
        "roundtrip_files_per_second": round(len(files) / sweep, 1),
        "roundtrip_mb_per_second": round(total_bytes / sweep / 1e6, 2),
    }


def scripted_env(base_url: str, cache: Path) -> dict[str, str]:
    return demo.scripted_environ(os.environ, base_url=base_url, cache_dir=cache)


def count_sessions(root: Path) -> dict[str, int]:
    """Agent sessions recorded in the results files: trigger runs, eval runs, baseline runs."""
    trig = evals = base = 0
    for path in results_files(root):
        doc = encoding.decode_path(path)
        for entry in doc.get("models", {}).values():
            for row in (entry.get("triggers") or {}).get("results", []):
                trig += int(row.get("runs") or 0)
            ev = entry.get("evals") or {}
            evals += len(ev.get("results", []))
            base += len((ev.get("baseline") or {}).get("results", []))
    return {"trigger_sessions": trig, "eval_sessions": evals, "baseline_sessions": base}


def mean_trigger_run_seconds(root: Path) -> float:
    values = [
        float(row["avg_run_seconds"])
        for path in results_files(root)
        for entry in encoding.decode_path(path).get("models", {}).values()
        for row in (entry.get("triggers") or {}).get("results", [])
        if row.get("avg_run_seconds") is not None
    ]
    return statistics.fmean(values) if values else 0.0


def bench_triggers(repeat: int, jobs: int) -> dict[str, Any]:
    evolve = cli()
    walls: list[float] = []
    per_session: list[float] = []
    recorded: list[float] = []
    sessions: list[int] = []
    requests: list[int] = []
    before = load()
    with (
        tempfile.TemporaryDirectory(prefix="bench-triggers.") as tmp,
        ModelServer(demo.demo_policy(), port=0, keep_requests=True) as srv,
    ):
        env = scripted_env(srv.base_url, Path(tmp) / "cache")
        for i in range(repeat):
            root = Path(tmp) / f"run{i}" / "examples"
            shutil.copytree(REPO / "examples", root, symlinks=True)
            seen = len(srv.messages())
            argv = [*evolve, "run", "triggers", "--root", str(root), "--model", MODEL]
            wall = timed([*argv, "--runs", "1", "--jobs", str(jobs)], env=env)
            n = count_sessions(root)["trigger_sessions"]
            walls.append(wall)
            sessions.append(n)
            per_session.append(wall / n if n else 0.0)
            recorded.append(mean_trigger_run_seconds(root))
            requests.append(len(srv.messages()) - seen)
    return {
        "load_before": before,
        "load_after": load(),
        "jobs": jobs,
        "sessions": sessions,
        "api_requests": requests,
        "wall_seconds": stats(walls, 1),
        "wall_per_session_seconds": stats(per_session, 2),
        "recorded_avg_run_seconds": stats(recorded, 2),
    }


def bench_demo(repeat: int, jobs: int) -> dict[str, Any]:
    evolve = cli()
    walls: list[float] = []
    sessions: list[int] = []
    requests: list[int] = []
    before = load()
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIALS}
    with tempfile.TemporaryDirectory(prefix="bench-demo.") as tmp:
        for i in range(repeat):
            out = Path(tmp) / f"run{i}"
            log = Path(tmp) / f"run{i}.log"
            argv = [*evolve, "demo", "--scripted", "--jobs", str(jobs), "--out", str(out)]
            began = time.perf_counter()
            proc = subprocess.run(
                [*argv, "--log", str(log)],
                env=env,
                cwd=REPO,
                capture_output=True,
                text=True,
                check=False,
            )
            walls.append(time.perf_counter() - began)
            if proc.returncode != 0:
                sys.exit(f"bench: demo exited {proc.returncode}\n{proc.stderr[-2000:]}")
            sessions.append(sum(count_sessions(out).values()))
            requests.append(sum(1 for _ in log.open(encoding="utf-8")))
    return {
        "load_before": before,
        "load_after": load(),
        "jobs": jobs,
        "sessions": sessions,
        "api_requests": requests,
        "wall_seconds": stats(walls, 1),
    }


SECTIONS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "corpus": lambda a: bench_corpus(a.corpus, a.repeat),
    "triggers": lambda a: bench_triggers(a.repeat, a.jobs),
    "demo": lambda a: bench_demo(a.repeat, a.jobs),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median reported)")
    ap.add_argument("--sections", default="corpus,triggers,demo", help="comma-separated subset")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="marketplace repo to copy")
    ap.add_argument("--jobs", type=int, default=2, help="concurrent agent sessions")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args(argv)
    wanted = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in SECTIONS]
    if unknown or args.repeat < 1:
        ap.error(f"unknown section(s) {unknown}; choose from {sorted(SECTIONS)}; --repeat ≥ 1")
    if "corpus" in wanted and not args.corpus.is_dir():
        ap.error(f"--corpus {args.corpus}: not a directory")
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpus": os.cpu_count(),
        "repeat": args.repeat,
    }
    for name in wanted:
        report[name] = SECTIONS[name](args)
        if not args.json:
            print(f"== {name}", flush=True)
            print(json.dumps(report[name], indent=2), flush=True)
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
