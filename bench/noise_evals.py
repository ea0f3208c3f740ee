"""Benchmark: the evals verdict's false alarms, power, sessions and dollars per PR (issue 41).

Simulates base → head comparisons of a skill's eval cases (no agent, no I/O) run on the schedule
of power on demand for evals (`flows/_power_evals.py`, the `auto` default: the base re-run) and
labels each look with the product's rule — `report.stratified_test` + `decide` at the alpha slice
of `report.information`, rounds chosen by `report.selected` — the functions the PR comment uses
(docs/pr-comment.md, "Evals"). One eval run scores 1 (the case passed) or 0.

The schedule: the head's sweep (1 run per case, committed) and the base's first block (1 fresh
run per case) make look 1; round 1 gives every case `step` (3) more runs a side (a fixed design);
later rounds go to the cases whose pooled runs are not all alike plus spot checks; each round is a
block of its own; up to `cap` (`max_runs`, 18) runs per case per side.

Profiles (a case's true per-run pass probability; base and head draw independently):

- **deterministic**: every case passes on every run at base (p = 1); a true drop of D points
  breaks round(D · cases) cases outright at head (p = 0): a body edit deleting a step line.
- **flaky**: a third of the cases pass with p = 0.5, the rest with p = 0.95; a true drop of D
  points lowers every case's p by D at head.

Columns: A/A false alarms (any `regression` or `improvement` when nothing changed; goal ≤ 5 %,
with the 95 % Wilson interval), the same when the author re-runs the workflow up to 3 times
until it turns green (without the ledger each attempt starts afresh; with it, attempts continue
one test, so re-running equals running on: the single-run figure), power (a true drop called
`regression`), the A/A `no change` share, and sessions and dollars per PR (mean), at
`--usd-per-session` (default $0.086: what the scripted eval sessions of
tests/integration/test_eval_verdict.py measured, 13 sessions for $1.11).

    .venv/bin/python bench/noise_evals.py [--sims 2000] [--seed 11] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from evolve_action.config import DEFAULT_MAX_RUNS
from evolve_action.report import (
    Outcome,
    Plan,
    Stratum,
    decide,
    information,
    selected,
    stratified_test,
    wilson,
)

CASES = (3, 5, 10)
DROPS = (0.30, 0.50)
STEP = 3
ATTEMPTS = 3

Profile = Callable[[random.Random, int, float], list[tuple[float, float]]]


def deterministic(rng: random.Random, n: int, drop: float) -> list[tuple[float, float]]:
    broken = set(rng.sample(range(n), round(drop * n)))
    return [(1.0, 0.0 if i in broken else 1.0) for i in range(n)]


def flaky(rng: random.Random, n: int, drop: float) -> list[tuple[float, float]]:
    out = []
    for i in range(n):
        p = 0.5 if i % 3 == 0 else 0.95
        out.append((p, max(0.0, p - drop)))
    return out


PROFILES: dict[str, Profile] = {"deterministic": deterministic, "flaky": flaky}


def _runs(rng: random.Random, p: float, n: int) -> tuple[int, ...]:
    return tuple(1 if rng.random() < p else 0 for _ in range(n))


@dataclass(slots=True)
class _Case:
    key: str
    pb: float
    ph: float
    base: tuple[int, ...]
    head: tuple[int, ...]
    rounds: list[tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)

    def pooled(self) -> tuple[int, ...]:
        return self.base + self.head + tuple(x for b, h in self.rounds for x in b + h)


def _test(cs: list[_Case]):  # type: ignore[no-untyped-def]
    return stratified_test([Stratum(base=c.base, head=c.head, rounds=tuple(c.rounds)) for c in cs])


def eval_pr(
    rng: random.Random, profile: Profile, n: int, drop: float, plan: Plan, cap: int
) -> tuple[Outcome, int]:
    """One simulated PR on power on demand's schedule for evals; (last label, sessions)."""
    salt = rng.getrandbits(64)
    cs = []
    for i, (pb, ph) in enumerate(profile(rng, n, drop)):
        cs.append(_Case(f"{salt}:{i}", pb, ph, _runs(rng, pb, 1), _runs(rng, ph, 1)))
    sessions = 2 * n  # the head's sweep and the base's first block
    per_side, t_prev, round_no = 1, 0.0, 0
    while True:
        final = per_side + 1 > cap
        t = 1.0 if final else information(per_side, per_side, cap)
        d = decide(_test(cs), plan, t_prev=t_prev, t=t, final=final)
        if d.outcome is not Outcome.CONTINUE:
            return d.outcome, sessions
        t_prev = t
        step = min(STEP, cap - per_side)
        while True:  # a round that passes every case by makes no look
            round_no += 1
            added = False
            for c in cs:
                if round_no == 1 or selected(c.key, c.pooled(), round_no):
                    c.rounds.append((_runs(rng, c.pb, step), _runs(rng, c.ph, step)))
                    sessions += 2 * step
                    added = True
                else:
                    c.rounds.append(((), ()))
            per_side += step
            if added or per_side + 1 > cap:
                break
            step = min(STEP, cap - per_side)


def _seed(seed: int, *parts: object) -> int:
    return seed * 1_000_003 + sum(map(ord, ":".join(map(str, parts)))) * 10_007


def _rate(k: int, n: int) -> dict[str, float]:
    ci = wilson(k, n)
    assert ci is not None
    return {"rate": k / n, "low": ci.low, "high": ci.high}


def cells(sims: int, seed: int, cap: int, usd: float) -> list[dict[str, object]]:
    plan = Plan(cap=cap)
    out: list[dict[str, object]] = []
    for name, profile in PROFILES.items():
        for n in CASES:
            cell: dict[str, object] = {"profile": name, "cases": n}
            rng = random.Random(_seed(seed, name, n, "aa"))
            aa = [eval_pr(rng, profile, n, 0.0, plan, cap) for _ in range(sims)]
            alarms = sum(o in (Outcome.REGRESSION, Outcome.IMPROVEMENT) for o, _ in aa)
            cell["aa"] = _rate(alarms, sims)
            cell["aa_no_change"] = sum(o is Outcome.NO_CHANGE for o, _ in aa) / sims
            cell["aa_sessions"] = statistics.fmean(s for _, s in aa)
            cell["aa_usd"] = usd * float(cell["aa_sessions"])  # type: ignore[arg-type]
            # Re-run until green without the ledger: each attempt a fresh PR comparison.
            rng = random.Random(_seed(seed, name, n, "rerun"))
            green = 0
            for _ in range(sims):
                for _ in range(ATTEMPTS):
                    o, _s = eval_pr(rng, profile, n, 0.0, plan, cap)
                    if o is Outcome.IMPROVEMENT:
                        green += 1
                        break
            improvements = sum(o is Outcome.IMPROVEMENT for o, _ in aa)
            cell["rerun_green_fresh"] = _rate(green, sims)
            cell["rerun_green_ledger"] = _rate(improvements, sims)
            for drop in DROPS:
                rng = random.Random(_seed(seed, name, n, drop))
                got = [eval_pr(rng, profile, n, drop, plan, cap) for _ in range(sims)]
                tag = f"drop{round(drop * 100)}"
                cell[f"{tag}_power"] = _rate(sum(o is Outcome.REGRESSION for o, _ in got), sims)
                cell[f"{tag}_sessions"] = statistics.fmean(s for _, s in got)
                cell[f"{tag}_usd"] = usd * float(cell[f"{tag}_sessions"])  # type: ignore[arg-type]
            out.append(cell)
    return out


def _ci(x: object) -> str:
    assert isinstance(x, dict)
    return f"{100 * x['rate']:.1f} % ({100 * x['low']:.1f}–{100 * x['high']:.1f})"


def table(cs: list[dict[str, object]]) -> str:
    lines = [
        "| profile | cases | A/A false alarms (95 % CI) | re-run ×3 until 🟢: no ledger | "
        "with the ledger | A/A `no change` | A/A sessions / $ | −30 pts → 🔴 | sessions / $ | "
        "−50 pts → 🔴 | sessions / $ |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cs:
        lines.append(
            f"| {c['profile']} | {c['cases']} | {_ci(c['aa'])} | {_ci(c['rerun_green_fresh'])} | "
            f"{_ci(c['rerun_green_ledger'])} | {100 * float(c['aa_no_change']):.1f} % | "  # type: ignore[arg-type]
            f"{c['aa_sessions']:.1f} / ${c['aa_usd']:.2f} | {_ci(c['drop30_power'])} | "
            f"{c['drop30_sessions']:.1f} / ${c['drop30_usd']:.2f} | {_ci(c['drop50_power'])} | "
            f"{c['drop50_sessions']:.1f} / ${c['drop50_usd']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sims", type=int, default=2000, help="simulated PRs per cell")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--cap", type=int, default=DEFAULT_MAX_RUNS, help="max_runs")
    ap.add_argument("--usd-per-session", type=float, default=0.086)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    got = cells(args.sims, args.seed, args.cap, args.usd_per_session)
    seconds = round(time.perf_counter() - t0, 1)
    if args.json:
        json.dump({"seed": args.seed, "cells": got, "seconds": seconds}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"## evals\n\n{table(got)}\n")
    print(
        f"seed {args.seed}; {args.sims} sims per cell; cap {args.cap}; "
        f"${args.usd_per_session} per session; {seconds} s; 1-minute load "
        f"{load:.2f} → {os.getloadavg()[0]:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
