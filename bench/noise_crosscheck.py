"""Cross-check: `bench/noise.py`'s default-path simulator against the real loop, label for label.

Drives the product's own `flows._power.more_runs` (with a PR ledger, as on GitHub), `Ledger` and
`report.compare_skill` on simulated PRs whose agent sessions are fake: each session's outcome is
the next draw of the same per-(side, query) stream the simulator reads (`noise.Outcomes`), so the
two see the same runs and must reach the same label with the same number of sessions. The fakes
replace only what would start an agent or read git: `_one_round` (one run of the selected queries
on one side), the scratch copies' paths and the base's content hash. Everything that decides —
the auto base mode, the rounds, the selection, the looks, the test, the label — is the product's.

    .venv/bin/python bench/noise_crosscheck.py [--prs 300] [--seed 5] [--cases 5,10,20]

Prints the agreement per cell and exits 1 on any disagreement (listing the first few).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import noise

from evolve_action.events import RecordingReporter
from evolve_action.flows import _power
from evolve_action.flows._ledger import Ledger
from evolve_action.harness import Budget
from evolve_action.report import Plan, SkillEvidence, compare_skill
from evolve_action.results import EntryHeader, ModelEntry, ResultsFile, TriggerResult, TriggersEntry

MODEL = "anthropic/claude-sonnet-5"


def _entry(records: Sequence[tuple[int, int]], keys: Sequence[str], content: str) -> TriggersEntry:
    header = EntryHeader(
        provider="anthropic",
        model="claude-sonnet-5",
        harness="claude",
        tool_version="0.1.0",
        executed=True,
        content_hash=content,
        runs_per_query=noise.SWEEP,
        ran_at="2026-01-01T00:00:00Z" if content == "B" else "2026-01-02T00:00:00Z",
    )
    return TriggersEntry(
        header=header,
        results=tuple(
            TriggerResult(query=k, should_trigger=True, hits=h, runs=n, passed=2 * h >= n)
            for k, (h, n) in zip(keys, records, strict=True)
        ),
    )


@contextmanager
def _fake_sessions(outcomes: noise.Outcomes, keys: Sequence[str]) -> Iterator[None]:
    """`_one_round` answers from `outcomes`; the scratch copies and the base hash are names."""
    index = {k: i for i, k in enumerate(keys)}

    def one_round(root: Path, *args: Any, **kwargs: Any) -> Any:
        only = kwargs.get("only", args[7] if len(args) > 7 else None)
        side = "base" if root.name == "base" else "head"
        queries = [
            SimpleNamespace(
                query=k, should_trigger=True, hits=int(outcomes.run(side, index[k])), completed=1
            )
            for k in keys
            if only is None or k in only
        ]
        if not queries:
            return None
        return SimpleNamespace(units=(SimpleNamespace(queries=queries),), sessions=len(queries))

    saved = (
        _power._one_round,
        _power.skill_hash,
        _power.Scratch.base,
        _power.Scratch.head,
    )
    _power._one_round = one_round  # type: ignore[assignment]
    _power.skill_hash = lambda *a, **k: "B"  # type: ignore[assignment]
    _power.Scratch.base = lambda self: Path("/fake/base")  # type: ignore[assignment,method-assign]
    _power.Scratch.head = lambda self: Path("/fake/head")  # type: ignore[assignment,method-assign]
    try:
        yield
    finally:
        (
            _power._one_round,
            _power.skill_hash,
            _power.Scratch.base,
            _power.Scratch.head,
        ) = saved  # type: ignore[assignment,method-assign]


def real_pr(
    outcomes: noise.Outcomes,
    salt: str,
    *,
    cap: int = 18,
    ledger: Ledger | None = None,
    attempt: str = "1.1",
    sweep_side: str = "head",
) -> tuple[str, int, Ledger]:
    """One PR through the real loop: its label (as the comment shows it), the sessions (head
    sweep + power on demand) and what the job adds to the ledger. `sweep_side` names the stream
    of the head's sweep (a re-run of the workflow run draws its sweep anew)."""
    n = len(outcomes.rates)
    keys = [f"q{i}{salt}" for i in range(n)]
    stored = [outcomes.sweep("stored", i) for i in range(n)]
    sweep = [outcomes.sweep(sweep_side, i) for i in range(n)]

    def file(e: TriggersEntry) -> ResultsFile:
        return ResultsFile(plugin="kit", skill="s", models={MODEL: ModelEntry(triggers=e)})

    base, head = file(_entry(stored, keys, "B")), file(_entry(sweep, keys, "H"))
    ev = SkillEvidence(plugin="kit", skill="s", base=base, head=head)
    with _fake_sessions(outcomes, keys):
        got = _power.more_runs(
            [ev],
            _power.PowerJob(
                top=Path("/nonexistent"),
                prefix="",
                base_sha="0" * 40,
                environ={},
                genv={},
                options=_power.PowerOptions(max_runs=cap),
                budget=Budget(),
                reporter=RecordingReporter(),
                ledger=ledger if ledger is not None else Ledger(),
                attempt=attempt,
            ),
        )
    shown = SkillEvidence(
        plugin="kit", skill="s", base=base, head=head, reruns=got.reruns.get("kit/s", {})
    )
    (row,) = compare_skill(shown, plan=Plan())
    assert row.triggers is not None
    return row.triggers.label.value, sum(n for _, n in sweep) + got.sessions, got.recorded


def crosscheck(prs: int, seed: int, cases: Sequence[int]) -> list[str]:
    """Simulator and real loop on the same PRs (A/A mixed and a 20-point drop); disagreements."""
    bad: list[str] = []
    for q in cases:
        for name, draw, drop in (
            ("aa_mixed", noise.AA["mixed"], 0.0),
            ("aa_uniform", noise.AA["uniform"], 0.0),
            ("drop20", noise._power_p, noise.DROP),
        ):
            rng = random.Random(f"{seed}:{name}:{q}")
            agree = 0
            for k in range(prs):
                rates = []
                for _ in range(q):
                    p = draw(rng)
                    rates.append((p, max(0.0, p - drop)))
                pr_seed = rng.getrandbits(48)
                salt = f"-{pr_seed}"
                sim, sim_sessions = noise.default_pr(
                    noise.Outcomes(pr_seed, rates), Plan(), salt=salt
                )
                real, real_sessions, _ = real_pr(noise.Outcomes(pr_seed, rates), salt)
                if (sim.value, sim_sessions) == (real, real_sessions):
                    agree += 1
                else:
                    bad.append(
                        f"{name} q={q} pr={k}: simulated {sim.value}/{sim_sessions}, real {real}/{real_sessions}"
                    )
            print(f"{name:10} {q:3} queries: {agree}/{prs} PRs agree (label and sessions)")
    return bad


ATTEMPTS = 5


def attempts(prs: int, seed: int, q: int, name: str) -> dict[str, object]:
    """ "Re-run jobs" with the PR's ledger, through the real loop: each PR's first workflow run,
    then up to `ATTEMPTS` − 1 re-runs of the same commit, each with a sweep drawn anew, while the
    label is not what the author wants (A/A: 🟢 `improvement`; a 20-point drop: anything but
    🔴). Counts the false alarms (A/A: any attempt labelled a change) or the regressions still
    called after re-running, the labels that changed, and the sessions of the re-runs' power
    on demand (their sweeps aside)."""
    draw, drop = noise.DEFAULT_PROFILES[name]
    rng = random.Random(f"{seed}:attempts:{name}:{q}")
    first_alarm = any_alarm = last_red = changed = rerun_sessions = 0
    for _ in range(prs):
        rates = []
        for _ in range(q):
            p = draw(rng)
            rates.append((p, max(0.0, p - drop)))
        pr_seed = rng.getrandbits(48)
        outcomes = noise.Outcomes(pr_seed, rates)
        label, _, ledger = real_pr(outcomes, f"-{pr_seed}")
        labels = [label]
        for a in range(2, ATTEMPTS + 1):
            wanted = label == "improvement" if drop == 0 else label != "regression"
            if wanted:
                break
            sweep_side = f"head-rerun{a}"
            label, sessions, more = real_pr(
                noise.Outcomes(pr_seed, rates),
                f"-{pr_seed}",
                ledger=ledger,
                attempt=f"1.{a}",
                sweep_side=sweep_side,
            )
            sweep_runs = sum(
                noise.Outcomes(pr_seed, rates).sweep(sweep_side, i)[1] for i in range(q)
            )
            rerun_sessions += sessions - sweep_runs
            ledger = ledger.merge(more)
            labels.append(label)
        alarm = [x in ("regression", "improvement") for x in labels]
        first_alarm += alarm[0]
        any_alarm += any(alarm)
        last_red += labels[-1] == "regression"
        changed += len(set(labels)) > 1
    return {
        "cases": q,
        "profile": name,
        "prs": prs,
        "first_alarm": first_alarm,
        "any_alarm": any_alarm,
        "last_red": last_red,
        "changed": changed,
        "rerun_sessions": rerun_sessions,
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--prs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--cases", default="5,10,20")
    ap.add_argument(
        "--attempts", action="store_true", help="re-run jobs with the ledger (up to 5 attempts)"
    )
    ap.add_argument(
        "--profiles", default="aa_uniform,aa_mixed,aa_coin,drop20", help="--attempts: profiles"
    )
    args = ap.parse_args(argv)
    cases = [int(x) for x in args.cases.split(",")]
    if args.attempts:
        for q in cases:
            for name in args.profiles.split(","):
                c = attempts(args.prs, args.seed, q, name)
                n = int(c["prs"])  # type: ignore[call-overload]
                what = (
                    "still 🔴 after re-running" if name == "drop20" else "false alarm, any attempt"
                )
                k = int(c["last_red" if name == "drop20" else "any_alarm"])  # type: ignore[call-overload]
                print(
                    f"| {q} | {name} | {n} | first attempt {noise._ci(int(c['first_alarm']), n)} | "  # type: ignore[call-overload]
                    f"{what} {noise._ci(k, n)} | labels changed {c['changed']} | "
                    f"re-runs' sessions {c['rerun_sessions']} |"
                )
        return 0
    bad = crosscheck(args.prs, args.seed, cases)
    for line in bad[:10]:
        print("DISAGREE", line)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
