"""Benchmark: the verdict rule's false alarms, power and sessions per PR, at the sizes a PR sees.

Simulates base → head comparisons of one tier of one skill × model (no agent, no I/O) and labels
each with the product's rule, `evolve_action.report.stratified_test` + `decide`, the functions the
PR comment uses (docs/pr-comment.md "The rule"). Four tables:

1. **legacy**: the rule before issue 22 (majority verdict per case, sign test on the flips), kept
   here verbatim as `legacy_label` so today's table can be compared with the new one.
2. **fixed**: the new rule with one look: `runs` stored base runs against `runs` head runs per case.
3. **sequential**: the new rule with more runs on demand (issue 22 item 2): start from 3 stored base
   runs and a 3-run head sweep per case; while undecided, add `step` head runs and `step` paired base
   runs per case, up to `cap` runs per side; alpha spent over the looks. Reports false alarms, power
   and the sessions per PR (head runs + base reruns), mean and 95th percentile, against today's
   fixed 3-run sweep (3 sessions per case).

4. **selective** (issue 34, the product's rule): as 3, but each round's runs go only to the cases
   whose pooled runs are not all alike plus the spot-checked share of the rest (`report.selected`),
   each round a block of its own in the test (`Stratum.rounds`), caps 6–18; with `--early-stop`
   the stored base and the head's sweep are early-stopped.

Rate profiles (a case's true per-run pass probability `p`; base and head draw independently):

- **A/A** (no true change; a false alarm is any `improvement` or `regression`; goal ≤ 5 %):
  `uniform` (p ~ U(0, 1) per case per PR), `coin` (every p = 0.5: the most flips), `mixed` (a case is
  flaky, p = 0.5, with probability 0.2, else steady at 0.97), and `steady` (p = 0.97 or 0.03).
- **power**: base p ~ U(0.3, 1.0) per case; at head every case's p drops by 20 points. The figure is
  how often the comparison is labelled `regression`.

With `--early-stop` the 3-run sweeps stop a query once its majority verdict is decided, as
`run triggers` does by default (2 equal runs of 3), to check the rule stays safe on such evidence.

    .venv/bin/python bench/noise.py [--sims 5000] [--seq-sims 2000] [--seed 11] [--json]
                                    [--only legacy|fixed|sequential|selective]
                                    [--spending obrien-fleming]

Seeded (each cell has its own generator derived from the seed and the cell), so the tables are
reproducible bit for bit.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from evolve_action.report import (
    Outcome,
    Plan,
    Spending,
    StratifiedTest,
    Stratum,
    Sweep,
    decide,
    early_stopped,
    information,
    selected,
    stratified_test,
)
from evolve_action.triggers import decided

CASES = tuple(int(x) for x in os.environ.get("NOISE_CASES", "5,10,20,40").split(","))
RUNS = (1, 2, 3, 5)
CAPS = (3, 6, 9, 12, 15)
SWEEP = 3
"""Runs per case of today's head sweep (and of the stored base)."""
DROP = 0.20

Draw = Callable[[random.Random], float]

AA: dict[str, Draw] = {
    "uniform": lambda r: r.random(),
    "coin": lambda r: 0.5,
    "mixed": lambda r: 0.5 if r.random() < 0.2 else 0.97,
    "steady": lambda r: 0.97 if r.random() < 0.5 else 0.03,
}


def _power_p(r: random.Random) -> float:
    return 0.3 + 0.7 * r.random()


def _seed(seed: int, scenario: str, cases: int, runs: int) -> int:
    return seed * 1_000_003 + sum(map(ord, scenario)) * 10_007 + cases * 101 + runs


# ---------------------------------------------------------------------------------------------
# 1. The legacy rule (before issue 22), kept verbatim for comparison


LEGACY_ALPHA = 0.025
LEGACY_MATERIAL = 0.10
LEGACY_MIN_SHARED = 6


def _sign_test(k: int, n: int) -> float:
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return sum(math.comb(n, i) for i in range(k, n + 1)) / (1 << n)


@functools.cache
def legacy_label(shared: int, down: int, up: int) -> str:
    """The old `compare.classify`: sign test on majority-verdict flips, 10 % net material."""
    d = down + up
    material = max(math.ceil(LEGACY_MATERIAL * shared - 1e-9), 1)
    if shared > 0:
        if down - up >= material and _sign_test(down, d) <= LEGACY_ALPHA:
            return "regression"
        if up - down >= material and _sign_test(up, d) <= LEGACY_ALPHA:
            return "improvement"
    if shared < LEGACY_MIN_SHARED:
        return "underpowered"
    if abs(down - up) >= material and d < LEGACY_MIN_SHARED:
        return "underpowered"
    return "within noise"


def verdict_probability(p: float, runs: int) -> float:
    """P(at least ⌈runs/2⌉ of `runs` independent runs pass), each passing with probability `p`."""
    need = math.ceil(runs / 2)
    return sum(math.comb(runs, h) * p**h * (1 - p) ** (runs - h) for h in range(need, runs + 1))


def _legacy_cell(rng: random.Random, cases: int, runs: int, sims: int, draw: Draw, drop: float):
    counts: dict[str, int] = {}
    for _ in range(sims):
        down = up = 0
        for _ in range(cases):
            p = draw(rng)
            qb = verdict_probability(p, runs)
            qh = qb if drop == 0 else verdict_probability(max(0.0, p - drop), runs)
            b = rng.random() < qb
            h = rng.random() < qh
            if b and not h:
                down += 1
            elif h and not b:
                up += 1
        label = legacy_label(cases, down, up)
        counts[label] = counts.get(label, 0) + 1
    return counts


def legacy(sims: int, seed: int) -> list[dict[str, object]]:
    scenarios = {
        "aa_uniform": (AA["uniform"], 0.0),
        "aa_coin": (AA["coin"], 0.0),
        "aa_mixed": (AA["mixed"], 0.0),
        "power_drop20": (_power_p, DROP),
    }
    cells: list[dict[str, object]] = []
    for cases in CASES:
        for runs in RUNS:
            cell: dict[str, object] = {"cases": cases, "runs": runs}
            for name, (draw, drop) in scenarios.items():
                rng = random.Random(_seed(seed, name, cases, runs))
                c = _legacy_cell(rng, cases, runs, sims, draw, drop)
                if drop == 0:
                    cell[name] = (c.get("regression", 0) + c.get("improvement", 0)) / sims
                else:
                    cell[name] = c.get("regression", 0) / sims
                    cell[name + "_underpowered"] = c.get("underpowered", 0) / sims
            cells.append(cell)
    return cells


# ---------------------------------------------------------------------------------------------
# The new rule: simulated run evidence


def _runs(rng: random.Random, p: float, n: int) -> int:
    return sum(1 for _ in range(n) if rng.random() < p)


def _sweep(rng: random.Random, p: float, runs: int, early_stop: bool) -> tuple[int, int]:
    """(passes, runs) of one query's sweep; with early stop, as `run triggers` does it."""
    if not early_stop:
        return _runs(rng, p, runs), runs
    need = math.ceil(runs / 2) if runs % 2 else runs // 2  # pass iff passes/runs ≥ 0.5
    passes = done = 0
    while done < runs:
        passes += rng.random() < p
        done += 1
        misses = done - passes
        if passes >= need or misses > runs - need:
            break
    return passes, done


@dataclass(slots=True)
class _Case:
    pb: float
    ph: float
    xb: int = 0
    mb: int = 0
    yh: int = 0
    nh: int = 0


def _test(cases: Sequence[_Case], planned: int = 0):
    """The product's test; with `planned`, each side is checked for early-stopped sweeps the
    way `_compare` does it (all should-trigger queries)."""
    bs = hs = None
    if planned > 1:
        sweep = Sweep(planned=planned, should_trigger=True)
        if early_stopped([(c.xb, c.mb, True) for c in cases], planned):
            bs = sweep
        if early_stopped([(c.yh, c.nh, True) for c in cases], planned):
            hs = sweep
    return stratified_test(
        [Stratum.counts(c.xb, c.mb, c.yh, c.nh, base_sweep=bs, head_sweep=hs) for c in cases]
    )


def fixed_cell(
    rng: random.Random, cases: int, runs: int, sims: int, draw: Draw, drop: float, early: bool
) -> dict[Outcome, int]:
    counts = dict.fromkeys(Outcome, 0)
    plan = Plan()
    for _ in range(sims):
        cs = []
        for _ in range(cases):
            p = draw(rng)
            c = _Case(p, max(0.0, p - drop))
            c.xb, c.mb = _sweep(rng, c.pb, runs, early)
            c.yh, c.nh = _sweep(rng, c.ph, runs, early)
            cs.append(c)
        counts[decide(_test(cs, runs), plan).outcome] += 1
    return counts


def fixed(sims: int, seed: int, early: bool) -> list[dict[str, object]]:
    cells: list[dict[str, object]] = []
    for cases in CASES:
        for runs in RUNS:
            cell: dict[str, object] = {"cases": cases, "runs": runs}
            for name, draw in AA.items():
                rng = random.Random(_seed(seed, "fixed_aa_" + name, cases, runs))
                c = fixed_cell(rng, cases, runs, sims, draw, 0.0, early)
                cell["aa_" + name] = (c[Outcome.REGRESSION] + c[Outcome.IMPROVEMENT]) / sims
                cell["aa_" + name + "_no_change"] = c[Outcome.NO_CHANGE] / sims
            rng = random.Random(_seed(seed, "fixed_power", cases, runs))
            c = fixed_cell(rng, cases, runs, sims, _power_p, DROP, early)
            cell["power"] = c[Outcome.REGRESSION] / sims
            cell["power_no_change"] = c[Outcome.NO_CHANGE] / sims
            cells.append(cell)
    return cells


# ---------------------------------------------------------------------------------------------
# The new rule with more runs on demand


def sequential_pr(
    rng: random.Random, cases: int, cap: int, step: int, draw: Draw, drop: float, plan: Plan
) -> tuple[Outcome, int]:
    """One simulated PR: its final outcome and the sessions the action ran (head + base reruns)."""
    cs = []
    for _ in range(cases):
        p = draw(rng)
        c = _Case(p, max(0.0, p - drop))
        c.xb, c.mb = _runs(rng, c.pb, SWEEP), SWEEP  # stored base evidence: not run by this PR
        c.yh, c.nh = _runs(rng, c.ph, SWEEP), SWEEP
        cs.append(c)
    sessions = cases * SWEEP
    t_prev = 0.0
    per_side = SWEEP
    while True:
        final = per_side + step > cap
        t = 1.0 if final else information(per_side, per_side, cap)
        d = decide(_test(cs), plan, t_prev=t_prev, t=t, final=final)
        if d.outcome is not Outcome.CONTINUE:
            return d.outcome, sessions
        t_prev = t
        sessions += _round(rng, cs, step)
        per_side += step


def _round(rng: random.Random, cs: Sequence[_Case], step: int) -> int:
    """One round of power on demand: `step` head runs and `step` paired base runs per case
    (interleaved); the sessions it took."""
    for c in cs:
        c.yh += _runs(rng, c.ph, step)
        c.nh += step
        c.xb += _runs(rng, c.pb, step)
        c.mb += step
    return 2 * step * len(cs)


@dataclass(slots=True)
class _Blocks:
    """One case of a selective PR: its first block (stored base, head sweep) and its rounds."""

    key: str
    pb: float
    ph: float
    first: tuple[int, int, int, int]
    """(base passes, base runs, head passes, head runs) of the first block."""
    rounds: list[tuple[int, int, int, int]]

    def pooled(self) -> list[int]:
        ones = self.first[0] + self.first[2] + sum(r[0] + r[2] for r in self.rounds)
        runs = self.first[1] + self.first[3] + sum(r[1] + r[3] for r in self.rounds)
        return [1] * ones + [0] * (runs - ones)


def _scores(passes: int, runs: int) -> tuple[int, ...]:
    return (1,) * passes + (0,) * (runs - passes)


def _selective_test(cs: Sequence[_Blocks], planned: int):
    """The product's test with a block per round (`Stratum.rounds`), sweeps checked as `_test`."""
    bs = hs = None
    if planned > 1:
        sweep = Sweep(planned=planned, should_trigger=True)
        if early_stopped([(c.first[0], c.first[1], True) for c in cs], planned):
            bs = sweep
        if early_stopped([(c.first[2], c.first[3], True) for c in cs], planned):
            hs = sweep
    return stratified_test(
        [
            Stratum(
                base=_scores(c.first[0], c.first[1]),
                head=_scores(c.first[2], c.first[3]),
                base_sweep=bs,
                head_sweep=hs,
                rounds=tuple((_scores(r[0], r[1]), _scores(r[2], r[3])) for r in c.rounds),
            )
            for c in cs
        ]
    )


def selective_pr(
    rng: random.Random,
    cases: int,
    cap: int,
    step: int,
    draw: Draw,
    drop: float,
    plan: Plan,
    early: bool = False,
    share: float | None = None,
) -> tuple[Outcome, int]:
    """One simulated PR under the selective rule (`report.selected`): each round adds `step`
    base and `step` head runs only to the cases whose pooled runs are not all alike, plus the
    spot-checked share of the rest; a block per round in the test. Looks at the same information
    fractions as `sequential_pr` (a case run every round), up to `cap` runs per side."""
    salt = rng.getrandbits(64)
    cs: list[_Blocks] = []
    sessions = 0
    for i in range(cases):
        p = draw(rng)
        ph = max(0.0, p - drop)
        xb, mb = _sweep(rng, p, SWEEP, early)  # stored base evidence: not run by this PR
        yh, nh = _sweep(rng, ph, SWEEP, early)
        sessions += nh
        cs.append(_Blocks(f"{salt}:{i}", p, ph, (xb, mb, yh, nh), []))
    extra = {} if share is None else {"share": share}
    planned = SWEEP if early else 0
    t_prev = 0.0
    round_no = 0
    added = True
    while True:
        per_side = SWEEP + step * round_no
        final = per_side + step > cap
        if added or final:  # a round that passed every case by makes no look (as the product)
            t = 1.0 if final else information(per_side, per_side, cap)
            d = decide(_selective_test(cs, planned), plan, t_prev=t_prev, t=t, final=final)
            if d.outcome is not Outcome.CONTINUE:
                return d.outcome, sessions
            t_prev = t
        round_no += 1
        added = False
        for c in cs:
            if selected(c.key, c.pooled(), round_no, **extra):
                c.rounds.append((_runs(rng, c.pb, step), step, _runs(rng, c.ph, step), step))
                sessions += 2 * step
                added = True


def _p95(xs: list[int]) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[-1] if len(xs) > 1 else float(xs[0])


def sequential(sims: int, seed: int, spending: Spending, step: int = 3) -> list[dict[str, object]]:
    plan = Plan(spending=spending)
    cells: list[dict[str, object]] = []
    for cases in CASES:
        for cap in CAPS:
            cell: dict[str, object] = {"cases": cases, "cap": cap, "today": cases * SWEEP}
            worst = 0.0
            for name, draw in AA.items():
                rng = random.Random(_seed(seed, "seq_aa_" + name, cases, cap))
                outs = [sequential_pr(rng, cases, cap, step, draw, 0.0, plan) for _ in range(sims)]
                alarms = sum(o in (Outcome.REGRESSION, Outcome.IMPROVEMENT) for o, _ in outs)
                worst = max(worst, alarms / sims)
                if name in ("uniform", "mixed"):
                    ss = [s for _, s in outs]
                    cell[f"aa_{name}_sessions_mean"] = statistics.fmean(ss)
                    cell[f"aa_{name}_sessions_p95"] = _p95(ss)
                    cell[f"aa_{name}_no_change"] = (
                        sum(o is Outcome.NO_CHANGE for o, _ in outs) / sims
                    )
            cell["aa_worst"] = worst
            rng = random.Random(_seed(seed, "seq_power", cases, cap))
            outs = [sequential_pr(rng, cases, cap, step, _power_p, DROP, plan) for _ in range(sims)]
            ss = [s for _, s in outs]
            cell["power"] = sum(o is Outcome.REGRESSION for o, _ in outs) / sims
            cell["power_no_change"] = sum(o is Outcome.NO_CHANGE for o, _ in outs) / sims
            cell["power_sessions_mean"] = statistics.fmean(ss)
            cell["power_sessions_p95"] = _p95(ss)
            cells.append(cell)
    return cells


SELECTIVE_CAPS = (6, 12, 15, 18)


def selective(
    sims: int, seed: int, spending: Spending, early: bool, step: int = 3
) -> list[dict[str, object]]:
    """Table 4: the product's rule (selective rounds, a block per round) per size and cap."""
    plan = Plan(spending=spending)
    cells: list[dict[str, object]] = []
    for cases in CASES:
        for cap in SELECTIVE_CAPS:
            cell: dict[str, object] = {"cases": cases, "cap": cap}
            for name, draw in AA.items():
                rng = random.Random(_seed(seed, "sel_aa_" + name, cases, cap))
                outs = [
                    selective_pr(rng, cases, cap, step, draw, 0.0, plan, early) for _ in range(sims)
                ]
                cell[f"aa_{name}"] = (
                    sum(o in (Outcome.REGRESSION, Outcome.IMPROVEMENT) for o, _ in outs) / sims
                )
                ss = [s for _, s in outs]
                cell[f"aa_{name}_sessions_mean"] = statistics.fmean(ss)
                cell[f"aa_{name}_sessions_p95"] = _p95(ss)
                cell[f"aa_{name}_no_change"] = sum(o is Outcome.NO_CHANGE for o, _ in outs) / sims
            rng = random.Random(_seed(seed, "sel_power", cases, cap))
            outs = [
                selective_pr(rng, cases, cap, step, _power_p, DROP, plan, early)
                for _ in range(sims)
            ]
            ss = [s for _, s in outs]
            cell["power"] = sum(o is Outcome.REGRESSION for o, _ in outs) / sims
            cell["power_undecided"] = sum(o is Outcome.UNDECIDED for o, _ in outs) / sims
            cell["power_sessions_mean"] = statistics.fmean(ss)
            cell["power_sessions_p95"] = _p95(ss)
            cells.append(cell)
    return cells


# ---------------------------------------------------------------------------------------------
# Repeated attempts (issue 32): "re-run until green", with and without the PR's ledger

ATTEMPTS = (1, 3, 5)
ATTEMPT_CASES = (5, 10, 20)
ATTEMPT_CAP = 9


def attempts_pr(
    rng: random.Random,
    cases: int,
    draw: Draw,
    drop: float,
    plan: Plan,
    *,
    attempts: int,
    rounds: int | None,
    ledger: bool,
    until: Callable[[Outcome], bool],
    step: int = 3,
    cap: int = ATTEMPT_CAP,
) -> tuple[Outcome, int]:
    """One PR whose author re-runs the workflow until `until(label)` or `attempts` ran.

    Each attempt adds at most `rounds` rounds of power on demand (None: until the rule decides
    or the cap; a number: the budget stops it). Without the ledger every attempt starts over: a
    fresh head sweep and fresh paired runs against the same stored base, and a budget stop
    spends the rest of the alpha. With it, attempts continue one test: the runs add up, the
    information fraction continues, a budget stop keeps the rest of the alpha, and a closed test
    (decided, or at the cap) gives the same label again without a run. Returns the last label
    and the sessions of all attempts.
    """
    stored = []
    for _ in range(cases):
        p = draw(rng)
        stored.append((p, max(0.0, p - drop), _runs(rng, p, SWEEP)))
    cs: list[_Case] = []
    t_prev, per_side, sessions = 0.0, SWEEP, 0
    closed: Outcome | None = None
    outcome = Outcome.UNDECIDED
    for a in range(attempts):
        if not ledger or a == 0:  # a fresh head sweep against the stored base
            cs = [_Case(pb, ph, xb, SWEEP, _runs(rng, ph, SWEEP), SWEEP) for pb, ph, xb in stored]
            t_prev, per_side = 0.0, SWEEP
            sessions += cases * SWEEP
        if closed is not None:
            outcome = closed
        else:
            done = 0
            while True:
                at_cap = per_side + step > cap
                stop = at_cap or (rounds is not None and done >= rounds)
                t = information(per_side, per_side, cap)
                if at_cap or (stop and not ledger):
                    t = 1.0
                d = decide(_test(cs), plan, t_prev=t_prev, t=max(t, t_prev), final=stop)
                t_prev = max(t, t_prev)
                if d.outcome is not Outcome.CONTINUE:
                    outcome = d.outcome
                    break
                sessions += _round(rng, cs, step)
                per_side += step
                done += 1
            if ledger and (outcome is not Outcome.UNDECIDED or t_prev >= 1.0):
                closed = outcome
        if until(outcome):
            break
    return outcome, sessions


def attempts_table_cells(sims: int, seed: int) -> list[dict[str, object]]:
    plan = Plan()
    green: Callable[[Outcome], bool] = lambda o: o is Outcome.IMPROVEMENT  # noqa: E731
    not_red: Callable[[Outcome], bool] = lambda o: o is not Outcome.REGRESSION  # noqa: E731
    profiles = (("aa", AA["uniform"], 0.0, green), ("power", _power_p, DROP, not_red))
    cells: list[dict[str, object]] = []
    for cases in ATTEMPT_CASES:
        for rounds in (None, 1):
            for k in ATTEMPTS:
                cell: dict[str, object] = {"cases": cases, "rounds": rounds, "attempts": k}
                for ledger in (False, True):
                    tag = "ledger" if ledger else "fresh"
                    for kind, draw, drop, until in profiles:
                        # The same simulated PRs with and without the ledger.
                        name = f"att_{kind}_{cases}_{rounds}"  # and for every `k`
                        rng = random.Random(_seed(seed, name, cases, 0))
                        outs = [
                            attempts_pr(
                                rng,
                                cases,
                                draw,
                                drop,
                                plan,
                                attempts=k,
                                rounds=rounds,
                                ledger=ledger,
                                until=until,
                            )
                            for _ in range(sims)
                        ]
                        bad = Outcome.IMPROVEMENT if kind == "aa" else Outcome.REGRESSION
                        cell[f"{kind}_{tag}"] = sum(o is bad for o, _ in outs) / sims
                        cell[f"{kind}_{tag}_sessions"] = statistics.fmean(s for _, s in outs)
                cells.append(cell)
    return cells


# ---------------------------------------------------------------------------------------------
# 6. The default path (issue 38): exactly what the action does at its defaults

DEFAULT_CASES = (5, 10, 20, 40)


class Outcomes:
    """The runs of one simulated PR: per (side, query) a stream of pass/fail draws, so the
    simulator and the real loop (`bench/noise_crosscheck.py`) see the same k-th run of a query on
    a side whatever order they make them in. Sides: `stored` (the base's committed sweep),
    `base` (fresh base runs) and `head` (`head…`: another stream of head runs, e.g. the sweep
    of a re-run workflow run)."""

    def __init__(self, seed: int, rates: Sequence[tuple[float, float]]) -> None:
        self.rates = list(rates)
        self.seed = seed
        self._streams: dict[tuple[str, int], random.Random] = {}

    def run(self, side: str, i: int) -> bool:
        """The next run of query `i` on `side` (True: it behaved as expected)."""
        stream = self._streams.get((side, i))
        if stream is None:
            stream = random.Random(f"{self.seed}:{side}:{i}")
            self._streams[(side, i)] = stream
        p = self.rates[i][1] if side.startswith("head") else self.rates[i][0]
        return stream.random() < p

    def sweep(self, side: str, i: int, planned: int = SWEEP) -> tuple[int, int]:
        """(passes, runs) of an early-stopped sweep (`run triggers`' rule, `triggers.decided`)."""
        hits = misses = 0
        while hits + misses < planned and not decided(hits, misses, planned - hits - misses, True):
            if self.run(side, i):
                hits += 1
            else:
                misses += 1
        return hits, hits + misses


@dataclass(slots=True)
class _Query:
    """One query of a default-path PR: the stored base sweep, the head sweep, this job's first
    block of fresh base runs, and its selective rounds."""

    key: str
    stored: tuple[int, int]
    sweep: tuple[int, int]
    fresh: tuple[int, int] = (0, 0)
    head0: tuple[int, int] = (0, 0)
    """Head runs outside the selective rounds (the head catching up alone: block 0)."""
    rounds: list[tuple[int, int, int, int]] = field(default_factory=list)
    """(base passes, base runs, head passes, head runs) per selective round ((0,0,0,0): passed by)."""

    def head_runs(self) -> int:
        """Head runs this job made (rounds and block 0)."""
        return self.head0[1] + sum(r[3] for r in self.rounds)


def _mean_runs(records: Sequence[tuple[int, int]]) -> float:
    valid = [n for _, n in records if n]
    return sum(valid) / len(valid) if valid else 0.0


def default_test(qs: Sequence[_Query], fresh: bool) -> StratifiedTest:
    """The test `compare_skill` makes of a default-path PR (base: fresh first block, fixed size,
    or the stored sweep; head: its sweep; sweeps weighted when every record is one an
    early-stopped sweep can end with and one stopped short; a block per selective round)."""
    stopped_head = early_stopped([(*q.sweep, True) for q in qs], SWEEP)
    stopped_base = not fresh and early_stopped([(*q.stored, True) for q in qs], SWEEP)
    strata = []
    for q in qs:
        first = q.fresh if fresh else q.stored
        rounds = tuple((_scores(r[0], r[1]), _scores(r[2], r[3])) for r in q.rounds)
        head = (q.sweep[0] + q.head0[0], q.sweep[1] + q.head0[1])
        strata.append(
            Stratum(
                base=_scores(*first),
                head=_scores(*head),
                base_sweep=Sweep(planned=SWEEP, should_trigger=True) if stopped_base else None,
                head_sweep=(
                    Sweep(planned=SWEEP, should_trigger=True, extra=q.head0[1])
                    if stopped_head
                    else None
                ),
                rounds=rounds,
            )
        )
    return stratified_test(strata)


def thin_reason(stored: Sequence[tuple[int, int]]) -> str:
    """`flows._power._auto_reason` for a stored base of the same harness and tool: a `SWEEP`-run
    sweep is thin only when it made fewer runs without having stopped early."""
    if _mean_runs(stored) < SWEEP and not early_stopped([(*r, True) for r in stored], SWEEP):
        return "thin"
    return ""


def rerun_stopped(stored: Sequence[tuple[int, int]]) -> str:
    """`auto` before issue 38: an early-stopped (or thin) stored base was re-run fresh."""
    if _mean_runs(stored) < SWEEP or early_stopped([(*r, True) for r in stored], SWEEP):
        return "thin or early-stopped"
    return ""


def default_pr(
    outcomes: Outcomes,
    plan: Plan,
    *,
    cap: int = 18,
    step: int = SWEEP,
    salt: str = "",
    auto: Callable[[Sequence[tuple[int, int]]], str] = thin_reason,
) -> tuple[Outcome, int]:
    """One PR on the default path (`base: auto`, `max_runs` 18, a 3-run early-stopped sweep on
    each side, the stored base committed by the base's own PR): `flows._power._Track.run`, step
    by step, through the product's `stratified_test` / `decide` / `information` / `selected`.
    Returns the last look's outcome and the sessions power on demand and the head sweep ran."""
    n = len(outcomes.rates)
    qs = [
        _Query(
            key=f"q{i}{salt}", stored=outcomes.sweep("stored", i), sweep=outcomes.sweep("head", i)
        )
        for i in range(n)
    ]
    sessions = sum(q.sweep[1] for q in qs)
    sweep = _mean_runs([q.sweep for q in qs])
    fresh = bool(auto([q.stored for q in qs]))
    stored = 0.0 if fresh else _mean_runs([q.stored for q in qs])
    if not fresh and cap <= max(sweep, stored):
        return decide(default_test(qs, fresh), plan).outcome, sessions
    cap_plan = replace(plan, cap=cap)

    def look(t_prev: float, t: float, final: bool) -> Outcome:
        return decide(default_test(qs, fresh), cap_plan, t_prev=t_prev, t=t, final=final).outcome

    decided_ = (Outcome.REGRESSION, Outcome.IMPROVEMENT, Outcome.NO_CHANGE)
    t_prev = 0.0
    last: Outcome | None = None
    if not fresh:
        t = information(stored, sweep, cap)
        last = look(0.0, t, False)
        if last in decided_:
            return last, sessions
        t_prev = t
    round_no = 0
    full_b, full_h = stored, sweep
    for _ in range(2 * cap + 2):  # `_Track.run`'s loop, branch by branch
        made = [q for q in qs if q.head_runs()]
        h_runs = sweep + (sum(q.head_runs() for q in made) / len(made) if made else 0.0)
        b_runs = stored + (1.0 if fresh and qs[0].fresh[1] else 0.0)  # read at round 0 only
        only = False
        if fresh and not qs[0].fresh[1] and not round_no:
            for i, q in enumerate(qs):  # the fresh base's first block: one run of every query
                q.fresh = (int(outcomes.run("base", i)), 1)
            sessions += n
            added = n
        elif full_b + 1 <= cap:
            if not round_no:
                full_b, full_h = b_runs, h_runs
            k = min(step, int(cap - full_b), int(cap - full_h))
            if k <= 0:
                break
            round_no += 1
            only = True
            added = 0
            for i, q in enumerate(qs):
                if selected(q.key, _pooled(q, fresh), round_no):
                    b = sum(outcomes.run("base", i) for _ in range(k))
                    h = sum(outcomes.run("head", i) for _ in range(k))
                    q.rounds.append((b, k, h, k))
                    added += 2 * k
                else:
                    q.rounds.append((0, 0, 0, 0))
            sessions += added
            full_b, full_h = full_b + k, full_h + k
        else:  # the base at the cap: the head catches up alone (every query, block 0)
            k = min(step, int(cap - h_runs))
            if k <= 0:
                break
            for i, q in enumerate(qs):
                h = sum(outcomes.run("head", i) for _ in range(k))
                q.head0 = (q.head0[0] + h, q.head0[1] + k)
            sessions += n * k
            added = n * k
        if not only:
            full_b = stored + max((q.fresh[1] + sum(r[1] for r in q.rounds) for q in qs), default=0)
            full_h = sweep + max((q.head_runs() for q in qs), default=0)
        at_cap = full_b + 1 > cap and full_h + 1 > cap
        final = at_cap or (added == 0 and not only)
        if not final and added == 0:
            continue
        t = max(t_prev, information(full_b, full_h, cap))
        if at_cap:
            t = 1.0
        last = look(t_prev, t, final)
        if final or last in decided_:
            return last, sessions
        t_prev = t
    if last is None:
        return decide(default_test(qs, fresh), plan).outcome, sessions
    return look(t_prev, 1.0, True), sessions


def _pooled(q: _Query, fresh: bool) -> list[int]:
    """What `_Track.pooled` gives the selection: the head sweep, the stored base (when tested),
    and this job's runs of both sides, in no side's order."""
    ones = q.sweep[0] + q.fresh[0] + q.head0[0] + sum(r[0] + r[2] for r in q.rounds)
    runs = q.sweep[1] + q.fresh[1] + q.head0[1] + sum(r[1] + r[3] for r in q.rounds)
    if not fresh:
        ones, runs = ones + q.stored[0], runs + q.stored[1]
    return [1] * ones + [0] * (runs - ones)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of a binomial proportion k/n, by bisection on the
    binomial tails computed in log space (no SciPy)."""

    def pmf(i: int, p: float) -> float:
        if p <= 0.0 or p >= 1.0:
            return float(i == (0 if p <= 0.0 else n))
        log = math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
        return math.exp(log + i * math.log(p) + (n - i) * math.log1p(-p))

    def tail_ge(p: float) -> float:  # P(X ≥ k): rises with p
        return sum(pmf(i, p) for i in range(k, n + 1))

    def tail_le(p: float) -> float:  # P(X ≤ k): falls with p
        return sum(pmf(i, p) for i in range(k + 1))

    a = (1 - level) / 2

    def solve(f: Callable[[float], float], rising: bool) -> float:
        lo, hi = 0.0, 1.0
        for _ in range(50):
            mid = (lo + hi) / 2
            if (f(mid) < a) == rising:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(tail_ge, True)
    high = 1.0 if k == n else solve(tail_le, False)
    return low, high


DEFAULT_PROFILES: dict[str, tuple[Draw, float]] = {
    "aa_uniform": (AA["uniform"], 0.0),
    "aa_coin": (AA["coin"], 0.0),
    "aa_mixed": (AA["mixed"], 0.0),
    "aa_steady": (AA["steady"], 0.0),
    "drop20": (_power_p, DROP),
}


def default_cells(
    sims: int,
    seed: int,
    cases: Sequence[int] = DEFAULT_CASES,
    auto: Callable[[Sequence[tuple[int, int]]], str] = thin_reason,
) -> list[dict[str, object]]:
    """Table 6: the default path per size and profile: label counts and sessions per PR."""
    plan = Plan()
    cells: list[dict[str, object]] = []
    for q in cases:
        for name, (draw, drop) in DEFAULT_PROFILES.items():
            rng = random.Random(_seed(seed, "default_" + name, q, 0))
            counts = dict.fromkeys((o.value for o in Outcome), 0)
            sessions: list[int] = []
            for _ in range(sims):
                rates = []
                for _ in range(q):
                    p = draw(rng)
                    rates.append((p, max(0.0, p - drop)))
                pr = rng.getrandbits(48)
                out, ss = default_pr(Outcomes(pr, rates), plan, salt=f"-{pr}", auto=auto)
                counts[out.value] += 1
                sessions.append(ss)
            cells.append(
                {
                    "cases": q,
                    "profile": name,
                    "sims": sims,
                    "labels": counts,
                    "sessions_mean": statistics.fmean(sessions),
                    "sessions_p95": _p95(sessions),
                }
            )
    return cells


def _ci(k: int, n: int) -> str:
    low, high = clopper_pearson(k, n)
    return f"{100 * k / n:.1f} % ({100 * low:.1f}–{100 * high:.1f})"


def default_table(cells: list[dict[str, object]]) -> str:
    lines = [
        "| cases | profile | PRs | false alarms (A/A) or `regression` (−20 pts), 95 % CI | "
        "`no change`, 95 % CI | `undecided` | sessions per PR mean / p95 |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cells:
        labels = c["labels"]
        assert isinstance(labels, dict)
        n = int(c["sims"])  # type: ignore[call-overload]
        if c["profile"] == "drop20":
            hit = labels["regression"]
        else:
            hit = labels["regression"] + labels["improvement"]
        lines.append(
            f"| {c['cases']} | {c['profile']} | {n} | {_ci(hit, n)} | "
            f"{_ci(labels['no change'], n)} | {100 * labels['undecided'] / n:.1f} % | "
            f"{c['sessions_mean']:.1f} / {c['sessions_p95']:.0f} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Output


def _pct(x: object) -> str:
    assert isinstance(x, float | int)
    return f"{100 * x:.1f} %"


def legacy_table(cells: list[dict[str, object]]) -> str:
    lines = [
        "| cases × runs | A/A false alarms, p ~ U(0,1) | p = 0.5 | mixed | "
        "power: −20 pts per run → `regression` | `underpowered` |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cells:
        lines.append(
            f"| {c['cases']} × {c['runs']} | {_pct(c['aa_uniform'])} | {_pct(c['aa_coin'])} | "
            f"{_pct(c['aa_mixed'])} | {_pct(c['power_drop20'])} | "
            f"{_pct(c['power_drop20_underpowered'])} |"
        )
    return "\n".join(lines)


def fixed_table(cells: list[dict[str, object]]) -> str:
    lines = [
        "| cases × runs | A/A false alarms: U(0,1) | p = 0.5 | mixed | steady | "
        "A/A `no change` (U(0,1) / steady) | power: −20 pts → `regression` | … → `no change` |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cells:
        lines.append(
            f"| {c['cases']} × {c['runs']} | {_pct(c['aa_uniform'])} | {_pct(c['aa_coin'])} | "
            f"{_pct(c['aa_mixed'])} | {_pct(c['aa_steady'])} | "
            f"{_pct(c['aa_uniform_no_change'])} / {_pct(c['aa_steady_no_change'])} | "
            f"{_pct(c['power'])} | {_pct(c['power_no_change'])} |"
        )
    return "\n".join(lines)


def sequential_table(cells: list[dict[str, object]]) -> str:
    lines = [
        "| cases | cap (runs per side) | worst A/A false alarms | A/A `no change`: U(0,1) / mixed | "
        "A/A sessions mean / p95: U(0,1) | mixed | power: −20 pts → `regression` | "
        "… → `no change` | regressing PR sessions mean / p95 | today (fixed 3-run sweep) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cells:
        lines.append(
            f"| {c['cases']} | {c['cap']} | {_pct(c['aa_worst'])} | "
            f"{_pct(c['aa_uniform_no_change'])} / {_pct(c['aa_mixed_no_change'])} | "
            f"{c['aa_uniform_sessions_mean']:.1f} / {c['aa_uniform_sessions_p95']:.0f} | "
            f"{c['aa_mixed_sessions_mean']:.1f} / {c['aa_mixed_sessions_p95']:.0f} | "
            f"{_pct(c['power'])} | "
            f"{_pct(c['power_no_change'])} | "
            f"{c['power_sessions_mean']:.1f} / {c['power_sessions_p95']:.0f} | {c['today']} |"
        )
    return "\n".join(lines)


def attempts_table(cells: list[dict[str, object]]) -> str:
    lines = [
        "| cases | power rounds per attempt | attempts (at most) | A/A: false 🟢 `improvement`, "
        "re-run until 🟢: no ledger | with the ledger | sessions per PR: no ledger / ledger | "
        "−20 pts: still 🔴 `regression` after re-running until not 🔴: no ledger | with the ledger |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cells:
        rounds = "until decided or cap" if c["rounds"] is None else f"{c['rounds']} (budget)"
        lines.append(
            f"| {c['cases']} | {rounds} | {c['attempts']} | {_pct(c['aa_fresh'])} | "
            f"{_pct(c['aa_ledger'])} | {c['aa_fresh_sessions']:.0f} / "
            f"{c['aa_ledger_sessions']:.0f} | {_pct(c['power_fresh'])} | "
            f"{_pct(c['power_ledger'])} |"
        )
    return "\n".join(lines)


def selective_table(cells: list[dict[str, object]]) -> str:
    lines = [
        "| cases | cap | A/A false alarms: U(0,1) / p = 0.5 / mixed / steady | "
        "A/A `no change`: mixed | A/A sessions mean / p95: mixed | U(0,1) | p = 0.5 | "
        "power: −20 pts → `regression` | … `undecided` | regressing PR sessions mean / p95 |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cells:
        alarms = " / ".join(_pct(c[f"aa_{n}"]) for n in ("uniform", "coin", "mixed", "steady"))
        sessions = [
            f"{c[f'aa_{n}_sessions_mean']:.1f} / {c[f'aa_{n}_sessions_p95']:.0f}"
            for n in ("mixed", "uniform", "coin")
        ]
        lines.append(
            f"| {c['cases']} | {c['cap']} | {alarms} | {_pct(c['aa_mixed_no_change'])} | "
            f"{' | '.join(sessions)} | {_pct(c['power'])} | {_pct(c['power_undecided'])} | "
            f"{c['power_sessions_mean']:.1f} / {c['power_sessions_p95']:.0f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sims", type=int, default=5000, help="simulated PRs per cell (tables 1, 2)")
    ap.add_argument("--seq-sims", type=int, default=2000, help="simulated PRs per cell (table 3)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument(
        "--only", choices=("legacy", "fixed", "sequential", "attempts", "selective", "default")
    )
    ap.add_argument(
        "--default-sims", type=int, default=1500, help="simulated PRs per cell (default path)"
    )
    ap.add_argument(
        "--before",
        action="store_true",
        help="default path: `auto` as before issue 38 (an early-stopped stored base re-run)",
    )
    ap.add_argument(
        "--attempt-sims", type=int, default=1000, help="simulated PRs per cell (attempts table)"
    )
    ap.add_argument(
        "--early-stop", action="store_true", help="tables 2 and 4: early-stopped sweeps"
    )
    ap.add_argument(
        "--spending", choices=[s.value for s in Spending], default=Plan().spending.value
    )
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    result: dict[str, object] = {"seed": args.seed, "load_1min_before": round(load, 2)}
    if args.only in (None, "legacy"):
        result["legacy"] = legacy(args.sims, args.seed)
    if args.only in (None, "fixed"):
        result["fixed"] = fixed(args.sims, args.seed, args.early_stop)
    if args.only in (None, "sequential"):
        result["sequential"] = sequential(args.seq_sims, args.seed, Spending(args.spending))
    if args.only in (None, "attempts"):
        result["attempts"] = attempts_table_cells(args.attempt_sims, args.seed)
    if args.only in (None, "selective"):
        result["selective"] = selective(
            args.seq_sims, args.seed, Spending(args.spending), args.early_stop
        )
    if args.only in (None, "default"):
        result["default"] = default_cells(
            args.default_sims, args.seed, auto=rerun_stopped if args.before else thin_reason
        )
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["load_1min_after"] = round(os.getloadavg()[0], 2)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    for key, render in (
        ("legacy", legacy_table),
        ("fixed", fixed_table),
        ("sequential", sequential_table),
        ("attempts", attempts_table),
        ("selective", selective_table),
        ("default", default_table),
    ):
        cells = result.get(key)
        if isinstance(cells, list):
            print(f"## {key}\n\n{render(cells)}\n")
    print(
        f"seed {args.seed}; {args.sims} sims per cell (legacy, fixed), {args.seq_sims} "
        f"(sequential, spending {args.spending}); {result['seconds']} s; 1-minute load "
        f"{result['load_1min_before']} → {result['load_1min_after']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
