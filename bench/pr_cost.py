"""Benchmark: what one PR costs — sessions, wall time and dollars of `evolve-action pr --local`.

Builds the README tour's repository once (`evolve-action demo --out tour --model
anthropic/claude-sonnet-5`, the demo's own scripted server), then for each scenario copies it,
makes one edit and runs `evolve-action pr --local` (a fresh process, as a user would) against the
scripted model server started here with the demo's policy and a fixed answer latency
(`latency_ms`, default 2,000 ms per model request), so sessions cost wall time as a real model's do:

- `description`: the tour's change (`csv-report`'s description broken by the README's `perl` line):
  a regression, found by the trigger sweep and power on demand (paired base reruns).
- `new-eval`: a new eval case in `csv-report`'s `evals.jsonc` (only that case runs).
- `no-change`: a sentence added to `csv-report`'s SKILL.md body (the description is unchanged:
  every trigger query is re-run and compared).

For each: the verdict line of the comment, the exit code, agent sessions (distinct sessions the
server saw, the judge's calls apart), wall time, and dollars at list prices from the usage the
server reported (`harness._meter.metered_cost_usd`: fresh input, cache writes ×1.25 and cache reads
×0.1 of the input price, output), with the 1-minute load before and after.

Also: the cache hit rate (share of cacheable prompt tokens read from the server's prompt cache,
`read / (read + written)`), and the distinct system prompts of the agent sessions (the per-request
billing line aside). `--log-dir DIR` keeps each scenario's request log (`DIR/<scenario>.jsonl`,
bodies included).

    .venv/bin/python bench/pr_cost.py [--latency-ms 2000] [--only description] [--json]
    .venv/bin/python bench/pr_cost.py --cli-src <checkout of another commit>/src   # its CLI

The figures depend on the defaults of the code it runs (`max_runs`, spending, selective rounds);
`--cli-src` runs another commit's CLI against this commit's scripted server (its prompt cache).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evolve_action.flows import scripted_environ
from evolve_action.flows._demo import demo_policy_text
from evolve_action.harness import metered_cost_usd
from evolve_action.harness._meter import pricing_for
from evolve_action.modelserver import ModelServer, Policy
from evolve_action.modelserver._cache import BILLING_PREFIX

MODEL = "anthropic/claude-sonnet-5"
SKILL = "plugins/project-tools/skills/csv-report/SKILL.md"
EVALS = "plugins/project-tools/evals/csv-report/evals.jsonc"


def _description(tour: Path) -> None:
    path = tour / SKILL
    text = path.read_text(encoding="utf-8")
    path.write_text(
        re.sub(r"(?m)^description: .*$", "description: Converts dates between time zones.", text),
        encoding="utf-8",
    )


def _new_eval(tour: Path) -> None:
    path = tour / EVALS
    text = path.read_text(encoding="utf-8")
    case = (
        '\n    {\n      "id": "totals-again",\n      "prompt": "Summarise sales.csv into report.md '
        'with the order count, total and average amount per region.",\n      "files": '
        '["files/sales.csv"],\n      "assertions": [{ "type": "file_exists", "path": '
        '"report.md" }],\n    },'
    )
    path.write_text(text.replace('"evals": [', '"evals": [' + case, 1), encoding="utf-8")


def _no_change(tour: Path) -> None:
    path = tour / SKILL
    path.write_text(
        path.read_text(encoding="utf-8") + "\nKeep the report's numbers right-aligned.\n",
        encoding="utf-8",
    )


SCENARIOS: dict[str, Callable[[Path], None]] = {
    "description": _description,
    "new-eval": _new_eval,
    "no-change": _no_change,
}


CLI_SRC: str | None = None
"""`--cli-src`: the source tree the `evolve-action` processes run (PYTHONPATH), else ours."""


def _env(tmp: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["HOME"] = str(tmp / "home")
    if CLI_SRC:
        env["PYTHONPATH"] = CLI_SRC
    return env


def _systems(requests: Sequence[dict[str, Any]]) -> int:
    """Distinct system prompts, the billing line aside."""
    seen = set()
    for r in requests:
        system = (r.get("body") or {}).get("system")
        blocks = system if isinstance(system, list) else [{"text": system}]
        seen.add(
            json.dumps(
                [b for b in blocks if not str(b.get("text", "")).startswith(BILLING_PREFIX)],
                sort_keys=True,
            )
        )
    return len(seen)


def build_tour(tmp: Path) -> Path:
    """The tour's repository after `demo` (committed, evaluated)."""
    subprocess.run(
        [sys.executable, "-m", "evolve_action", "demo", "--out", "tour", "--model", MODEL],
        cwd=tmp,
        env=_env(tmp),
        check=True,
        capture_output=True,
    )
    return tmp / "tour"


def _usage_dollars(requests: Sequence[dict[str, Any]]) -> tuple[dict[str, int], float]:
    pricing = pricing_for(MODEL.split("/", 1)[1])
    assert pricing is not None
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    )
    totals = dict.fromkeys(keys, 0)
    for r in requests:
        usage = r.get("usage") or {}
        for k in keys:
            totals[k] += int(usage.get(k) or 0)
    return totals, metered_cost_usd(pricing, **totals)


def run_scenario(
    tmp: Path, tour: Path, name: str, latency_ms: int, log_dir: Path | None = None
) -> dict[str, Any]:
    work = tmp / name
    shutil.copytree(tour, work, symlinks=True)
    SCENARIOS[name](work)
    text = demo_policy_text() + f"\nlatency_ms: {latency_ms}\n"
    load = os.getloadavg()[0]
    log = None if log_dir is None else log_dir / f"{name}.jsonl"
    with ModelServer(Policy.from_yaml(text), port=0, log_path=log) as srv:
        env = scripted_environ(_env(tmp), base_url=srv.base_url, cache_dir=tmp / f"cache-{name}")
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "evolve_action", "pr", "--local"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - began
        requests = [r for r in srv.requests if r.get("path") == "/v1/messages"]
    agent = [r for r in requests if r.get("forced_tool") != "submit_verdicts"]
    sessions = len({r.get("session") for r in agent})
    tokens, dollars = _usage_dollars(requests)
    comment = work / ".evolve-action" / "pr-comment.md"
    lines = comment.read_text(encoding="utf-8").splitlines() if comment.is_file() else []
    verdict = next((ln for ln in lines if ln.startswith("#")), "")
    summary = work / ".evolve-action" / "step-summary.md"
    text = summary.read_text(encoding="utf-8") if summary.is_file() else ""
    found = re.search(
        r"Estimated before the run: ([0-9–]+) agent sessions, about \$([0-9.]+)", text
    )
    return {
        "scenario": name,
        "exit": done.returncode,
        "verdict": verdict.lstrip("# ").strip(),
        "sessions": sessions,
        "judge_calls": len(requests) - len(agent),
        "seconds": round(seconds, 1),
        "dollars": round(dollars, 2),
        "estimate_sessions": found.group(1) if found else "",
        "estimate_usd": float(found.group(2)) if found else None,
        "tokens": tokens,
        "cache_hit_rate": round(
            tokens["cache_read_input_tokens"]
            / max(1, tokens["cache_read_input_tokens"] + tokens["cache_creation_input_tokens"]),
            3,
        ),
        "system_prompts": _systems(agent),
        "load_1min_before": round(load, 2),
        "load_1min_after": round(os.getloadavg()[0], 2),
        "stdout_tail": done.stdout.splitlines()[-3:],
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--latency-ms", type=int, default=2000)
    ap.add_argument("--only", choices=sorted(SCENARIOS), action="append")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--log-dir", type=Path)
    ap.add_argument("--cli-src", type=Path)
    args = ap.parse_args(argv)
    global CLI_SRC
    CLI_SRC = str(args.cli_src.resolve()) if args.cli_src else None
    if args.log_dir:
        args.log_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="evolve-pr-cost.") as t:
        tmp = Path(t)
        tour = build_tour(tmp)
        rows = [
            run_scenario(tmp, tour, n, args.latency_ms, args.log_dir)
            for n in args.only or SCENARIOS
        ]
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(
        "| scenario | verdict | exit | sessions | system prompts | judge calls | wall | dollars "
        "| estimate (before power) | cache hit rate | 1-min load |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['scenario']} | {r['verdict']} | {r['exit']} | {r['sessions']} | "
            f"{r['system_prompts']} | {r['judge_calls']} | {r['seconds']} s | "
            f"${r['dollars']:.2f} | {r['estimate_sessions']} sessions, "
            f"${r['estimate_usd'] or 0:.2f} | {r['cache_hit_rate']:.1%} | "
            f"{r['load_1min_before']} → {r['load_1min_after']} |"
        )
    print(
        f"answer latency {args.latency_ms} ms; tokens: " + json.dumps([r["tokens"] for r in rows])
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
