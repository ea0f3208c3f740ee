"""Benchmark: the noise label's A/A false-alarm rate and its power at the sizes a PR sees.

Simulates base → head comparisons of one tier of one skill × model and labels each with
`evolve_action.compare.classify`, the function the PR comment uses (docs/pr-comment.md):

- **A/A** (no true change): every case has a true per-run pass probability `p`; base and head are two
  independent draws at the same `p`s. A false alarm is any `improvement` or `regression` label
  (goal: at most 5 %). Three distributions of `p`: `uniform` (each case's `p` drawn from U(0, 1)
  for each simulated PR), `coin` (every `p` = 0.5: the most verdict flips) and `mixed` (a case is
  flaky, `p` = 0.5, with probability 0.2, else steady at `p` = 0.97).
- **power**: base `p` ~ U(0.3, 1.0) per case; at head every case's `p` drops by 20 points
  (clipped at 0). The figure is how often the comparison is labelled `regression`.

A case's verdict over `runs` runs follows the trigger rule (engine spec §8.6): it passes when the
passing share of its runs is ≥ 0.5, i.e. at least ⌈runs/2⌉ of them pass; the verdict probability
is computed exactly from the binomial, so a simulated case costs one random draw per side. All
cases have a verdict on both sides (no errored cases), so every case is shared.

    .venv/bin/python bench/noise.py [--sims 5000] [--seed 11] [--json] [--alpha 0.05]

Seeded (each cell has its own generator derived from the seed and the cell), so the table is
reproducible bit for bit.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import random
import sys
import time
from collections.abc import Callable, Sequence

from evolve_action.report import Flips, Label, classify
from evolve_action.report import _compare as compare

CASES = (5, 10, 20, 40)
RUNS = (1, 2, 3, 5)
DROP = 0.20


def verdict_probability(p: float, runs: int) -> float:
    """P(at least ⌈runs/2⌉ of `runs` independent runs pass), each passing with probability `p`."""
    need = math.ceil(runs / 2)
    return sum(math.comb(runs, h) * p**h * (1 - p) ** (runs - h) for h in range(need, runs + 1))


@functools.cache
def _label(shared: int, down: int, up: int) -> Label:
    return classify(Flips(shared=shared, down=down, up=up)).label


def _simulate(
    rng: random.Random,
    cases: int,
    runs: int,
    sims: int,
    base_p: Callable[[random.Random], float],
    drop: float,
) -> dict[Label, int]:
    counts = dict.fromkeys(Label, 0)
    for _ in range(sims):
        down = up = 0
        for _ in range(cases):
            p = base_p(rng)
            qb = verdict_probability(p, runs)
            qh = qb if drop == 0 else verdict_probability(max(0.0, p - drop), runs)
            b = rng.random() < qb
            h = rng.random() < qh
            if b and not h:
                down += 1
            elif h and not b:
                up += 1
        counts[_label(cases, down, up)] += 1
    return counts


def _seed(seed: int, scenario: str, cases: int, runs: int) -> int:
    return seed * 1_000_003 + sum(map(ord, scenario)) * 10_007 + cases * 101 + runs


SCENARIOS: dict[str, tuple[Callable[[random.Random], float], float]] = {
    "aa_uniform": (lambda r: r.random(), 0.0),
    "aa_coin": (lambda r: 0.5, 0.0),
    "aa_mixed": (lambda r: 0.5 if r.random() < 0.2 else 0.97, 0.0),
    "power_drop20": (lambda r: 0.3 + 0.7 * r.random(), DROP),
}


def _true_drop(runs: int) -> float:
    """The mean verdict-level pass-rate drop implied by the power scenario (numeric integral)."""
    steps = 2000
    total = 0.0
    for i in range(steps):
        p = 0.3 + 0.7 * (i + 0.5) / steps
        total += verdict_probability(p, runs) - verdict_probability(max(0.0, p - DROP), runs)
    return total / steps


def run(sims: int, seed: int) -> dict[str, object]:
    cells: list[dict[str, object]] = []
    for cases in CASES:
        for runs in RUNS:
            cell: dict[str, object] = {"cases": cases, "runs": runs}
            for name, (base_p, drop) in SCENARIOS.items():
                rng = random.Random(_seed(seed, name, cases, runs))
                counts = _simulate(rng, cases, runs, sims, base_p, drop)
                if drop == 0:
                    alarms = counts[Label.REGRESSION] + counts[Label.IMPROVEMENT]
                    cell[name] = alarms / sims
                else:
                    cell[name] = counts[Label.REGRESSION] / sims
                    cell[name + "_underpowered"] = counts[Label.UNDERPOWERED] / sims
                    cell[name + "_improvement"] = counts[Label.IMPROVEMENT] / sims
            cell["verdict_drop"] = _true_drop(runs)
            cells.append(cell)
    return {
        "sims_per_cell": sims,
        "seed": seed,
        "alpha": compare.ALPHA,
        "material_share": compare.MATERIAL_SHARE,
        "cells": cells,
    }


def _pct(x: object) -> str:
    assert isinstance(x, float)
    return f"{100 * x:.1f} %"


def table(result: dict[str, object]) -> str:
    cells = result["cells"]
    assert isinstance(cells, list)
    lines = [
        "| cases × runs | A/A false alarms, p ~ U(0,1) | p = 0.5 | mixed | "
        "power: −20 pts per run → `regression` | `underpowered` | verdict-level drop |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cells:
        assert isinstance(c, dict)
        lines.append(
            f"| {c['cases']} × {c['runs']} | {_pct(c['aa_uniform'])} | {_pct(c['aa_coin'])} | "
            f"{_pct(c['aa_mixed'])} | "
            f"{_pct(c['power_drop20'])} | {_pct(c['power_drop20_underpowered'])} | "
            f"{100 * c['verdict_drop']:.0f} pts |"
        )
    worst = max(float(c[k]) for c in cells for k in ("aa_uniform", "aa_coin", "aa_mixed"))
    lines.append("")
    lines.append(f"worst A/A false-alarm rate: {100 * worst:.1f} %")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sims", type=int, default=5000, help="simulated PRs per cell and scenario")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument(
        "--alpha",
        type=float,
        help="override the per-direction level (e.g. 0.05, the untuned draft) for comparison",
    )
    args = ap.parse_args(argv)
    if args.alpha is not None:  # a what-if only: the product rule is compare.ALPHA
        compare.ALPHA = args.alpha
        compare.MIN_SHARED = compare._min_shared(args.alpha)
    t0 = time.perf_counter()
    result = run(args.sims, args.seed)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(table(result))
        print(
            f"{args.sims} simulations per cell and scenario, seed {args.seed}, "
            f"{result['seconds']} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
