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

The schedule's constants (`step`, `max_runs`) are the product's (`PowerOptions`), and
`--attempts` drives the product's own loop instead of this simulator: "Re-run jobs" with the
PR's ledger through `flows._power_evals.more_eval_runs`, `Ledger` and `report.compare_skill`, with
fake sessions only (each session's outcome the next draw of its (side, case) stream; the scratch
copies and the base's content hash are names). Each PR's first workflow run, then up to four
re-runs of the same content, each with the head's eval run drawn anew (the re-run of a job whose
results commit is not in its checkout), while the label is not what the author wants (A/A: 🟢;
a drop: anything but 🔴). It counts the PRs whose label changed across the attempts and the
re-runs' sessions (their head runs included: a closed comparison needs none):

    .venv/bin/python bench/noise_evals.py --attempts [--prs 300] [--seed 11]
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
from pathlib import Path
from typing import Any

from evolve_action.events import RecordingReporter
from evolve_action.flows import _power, _power_evals
from evolve_action.flows._ledger import Ledger
from evolve_action.harness import Budget
from evolve_action.report import (
    Outcome,
    Plan,
    SkillEvidence,
    Stratum,
    compare_skill,
    decide,
    information,
    selected,
    stratified_test,
    wilson,
)
from evolve_action.results import EntryHeader, EvalResult, EvalsEntry, ModelEntry, ResultsFile

CASES = (3, 5, 10)
DROPS = (0.30, 0.50)
STEP = _power.PowerOptions().step
CAP = _power.PowerOptions().max_runs
ATTEMPTS = 3
RERUNS = 5
"""`--attempts`: the first workflow run and up to four re-runs of it."""
MODEL = "anthropic/claude-sonnet-5"

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


class _Streams:
    """Each (side, case)'s run outcomes, one seeded stream each, drawn in order."""

    def __init__(self, seed: int, rates: list[tuple[float, float]]) -> None:
        self.seed, self.rates = seed, rates
        self._rng: dict[tuple[str, int], random.Random] = {}

    def run(self, side: str, i: int) -> int:
        rng = self._rng.setdefault((side, i), random.Random(f"{self.seed}:{side}:{i}"))
        pb, ph = self.rates[i]
        return 1 if rng.random() < (pb if side == "base" else ph) else 0

    def sweep(self, stream: str, i: int) -> int:
        """The committed single run of case `i`: `stream` "stored" (the base's, at the base's
        rate), "head" or a re-run's (at the head's rate), each a stream of its own."""
        rng = self._rng.setdefault((stream, i), random.Random(f"{self.seed}:{stream}:{i}"))
        pb, ph = self.rates[i]
        return 1 if rng.random() < (pb if stream == "stored" else ph) else 0


def _eval_entry(passed: list[int], keys: list[str], content: str) -> EvalsEntry:
    header = EntryHeader(
        provider="anthropic",
        model="claude-sonnet-5",
        harness="claude",
        tool_version="0.1.0",
        executed=True,
        content_hash=content,
        ran_at="2026-01-01T00:00:00Z" if content == "B" else "2026-01-02T00:00:00Z",
    )
    return EvalsEntry(
        header=header,
        results=tuple(EvalResult(id=k, passed=bool(p)) for k, p in zip(keys, passed, strict=True)),
    )


def real_pr(
    streams: _Streams, salt: str, cap: int, ledger: Ledger, attempt: str, head: str
) -> tuple[str, int, Ledger]:
    """One workflow run of a PR through the product's eval loop: the label the comment shows,
    the sessions (the head's run of every case, unless its comparison is closed in the ledger,
    and power on demand's) and what the job adds to the ledger. `head` names the stream of the
    head's committed run (a re-run draws it anew)."""
    n = len(streams.rates)
    keys = [f"e{i}{salt}" for i in range(n)]
    index = {k: i for i, k in enumerate(keys)}
    files = {
        side: ResultsFile(
            plugin="kit",
            skill="s",
            models={
                MODEL: ModelEntry(
                    evals=_eval_entry([streams.sweep(stream, i) for i in range(n)], keys, side)
                )
            },
        )
        for side, stream in (("B", "stored"), ("H", head))
    }

    def one_round(root: Any, *args: Any) -> tuple[dict[str, tuple[int, int]], int]:
        only = args[7]
        side = "base" if root.name == "base" else "head"
        return {k: (streams.run(side, index[k]), 1) for k in keys if k in only}, len(only)

    fakes: list[tuple[object, str, object]] = [
        (_power_evals, "_one_round", one_round),
        (_power_evals, "skill_hash", lambda *a, **k: "B"),
        (_power.Scratch, "base", lambda self: Path("/fake/base")),
        (_power.Scratch, "head", lambda self: Path("/fake/head")),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in fakes]
    for owner, name, fake in fakes:
        setattr(owner, name, fake)
    try:
        job = _power.PowerJob(
            top=Path("/nonexistent"),
            prefix="",
            base_sha="0" * 40,
            environ={},
            genv={},
            options=_power.PowerOptions(max_runs=cap),
            budget=Budget(),
            reporter=RecordingReporter(),
            ledger=ledger,
            attempt=attempt,
        )
        ev = SkillEvidence(plugin="kit", skill="s", base=files["B"], head=files["H"])
        closed = _power.settled(job, key="kit/s#evals", model=MODEL, fp=("B", "H", "claude 0.1.0"))
        got = _power_evals.more_eval_runs([ev], job).power
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)
    shown = SkillEvidence(
        plugin="kit",
        skill="s",
        base=files["B"],
        head=files["H"],
        eval_reruns=got.reruns.get("kit/s", {}),
    )
    (row,) = compare_skill(shown, plan=Plan(cap=cap))
    assert row.evals is not None
    sweep = 0 if closed is not None else n  # the planner runs no head sweep for a closed test
    return row.evals.label.value, sweep + got.sessions, got.recorded


def attempts(prs: int, seed: int, profile: str, n: int, drop: float, cap: int) -> dict[str, int]:
    """`RERUNS` workflow runs at most of each of `prs` PRs through the real loop (module doc)."""
    rng = random.Random(_seed(seed, "attempts", profile, n, drop))
    changed = first = any_alarm = last_red = rerun_sessions = 0
    for k in range(prs):
        rates = PROFILES[profile](rng, n, drop)
        streams = _Streams(rng.getrandbits(48), rates)
        label, _, ledger = real_pr(streams, f"-{k}", cap, Ledger(), "1.1", "head")
        labels = [label]
        for a in range(2, RERUNS + 1):
            if (label == "improvement") if drop == 0 else (label != "regression"):
                break
            label, sessions, more = real_pr(
                streams, f"-{k}", cap, ledger, f"1.{a}", f"head-rerun{a}"
            )
            rerun_sessions += sessions
            ledger = ledger.merge(more)
            labels.append(label)
        alarm = [x in ("regression", "improvement") for x in labels]
        first += alarm[0] if drop == 0 else labels[0] == "regression"
        any_alarm += any(alarm)
        last_red += labels[-1] == "regression"
        changed += len(set(labels)) > 1
    return {
        "prs": prs,
        "first": first,
        "any_alarm": any_alarm,
        "last_red": last_red,
        "changed": changed,
        "rerun_sessions": rerun_sessions,
    }


def attempts_table(prs: int, seed: int, cap: int) -> str:
    lines = [
        "| profile | cases | true drop | PRs | first run: false alarm (A/A) or 🔴 | after "
        "re-running: A/A false alarm at any attempt; drop: still 🔴 | PRs whose label changed | "
        "re-runs' sessions |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for profile in PROFILES:
        for n in CASES:
            for drop in (0.0, *DROPS):
                c = attempts(prs, seed, profile, n, drop, cap)
                after = c["any_alarm"] if drop == 0 else c["last_red"]
                lines.append(
                    f"| {profile} | {n} | {round(drop * 100)} pts | {prs} | "
                    f"{_ci(_rate(c['first'], prs))} | {_ci(_rate(after, prs))} | "
                    f"{c['changed']} | {c['rerun_sessions']} |"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sims", type=int, default=2000, help="simulated PRs per cell")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--cap", type=int, default=CAP, help="max_runs")
    ap.add_argument("--usd-per-session", type=float, default=0.086)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--attempts", action="store_true", help="re-run jobs with the ledger")
    ap.add_argument("--prs", type=int, default=300, help="--attempts: PRs per cell")
    args = ap.parse_args(argv)
    if args.attempts:
        t0 = time.perf_counter()
        print(attempts_table(args.prs, args.seed, args.cap))
        print(
            f"\nseed {args.seed}; {args.prs} PRs per cell; cap {args.cap}; "
            f"{time.perf_counter() - t0:.1f} s"
        )
        return 0
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
