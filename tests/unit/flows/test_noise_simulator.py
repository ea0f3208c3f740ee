"""bench/noise.py's default-path simulator agrees with the real loop, label for label (issue 38).

A few simulated PRs only (the full cross-check is `bench/noise_crosscheck.py`, hundreds per
cell): the product's `more_runs`, `Ledger` and `compare_skill` with fake sessions that answer from
the same per-(side, query) draws the simulator reads. A change to the loop that the simulator does
not mirror (or the reverse) fails here before the published figures drift from the product.
"""

from __future__ import annotations

import importlib
import random
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("noise"), importlib.import_module("noise_crosscheck")
    finally:
        sys.path.remove(str(BENCH))


@pytest.mark.parametrize("profile", ["aa_mixed", "aa_uniform", "drop20"])
def test_the_simulator_and_the_real_loop_agree(bench, profile: str) -> None:  # type: ignore[no-untyped-def]
    noise, cross = bench
    draw, drop = noise.DEFAULT_PROFILES[profile]
    rng = random.Random(f"unit:{profile}")
    seen = set()
    for q in (5, 10):
        for _ in range(6):
            rates = [(p, max(0.0, p - drop)) for p in (draw(rng) for _ in range(q))]
            seed = rng.getrandbits(48)
            sim, sim_sessions = noise.default_pr(
                noise.Outcomes(seed, rates), noise.Plan(), salt=f"-{seed}"
            )
            real, real_sessions, _ = cross.real_pr(noise.Outcomes(seed, rates), f"-{seed}")
            assert (sim.value, sim_sessions) == (real, real_sessions)
            seen.add(real)
    assert seen - {"undecided"}  # the PRs reached decisions, not only the cap


def test_a_rerun_with_the_ledger_keeps_every_label_and_starts_no_session(bench) -> None:  # type: ignore[no-untyped-def]
    _, cross = bench
    got = cross.attempts(8, 3, 5, "aa_coin")
    assert got["changed"] == 0 and got["rerun_sessions"] == 0
