"""When `base: auto` re-runs the base (flows/_power.py): missing, thin, another harness or version,
early-stopped; good stored evidence is used (and paired runs appended)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from evolve_action.events import RecordingReporter
from evolve_action.flows._ledger import Ledger, LedgerLook, LedgerRun
from evolve_action.flows._power import PowerOptions, PowerOutcome, _auto_reason, more_runs
from evolve_action.harness import Budget
from evolve_action.report import SkillEvidence
from evolve_action.results import (
    EntryHeader,
    ModelEntry,
    ResultsFile,
    TriggerResult,
    TriggersEntry,
)


def entry(hits: list[int], runs: int, **header: object) -> TriggersEntry:
    h = EntryHeader(
        provider="anthropic",
        model="claude-sonnet-5",
        harness="claude",
        tool_version="0.1.0",
        executed=True,
        runs_per_query=3,
    )
    h = msgspec.structs.replace(h, **header)  # type: ignore[arg-type]
    results = tuple(
        TriggerResult(query=f"q{i}", should_trigger=True, hits=k, runs=runs, passed=2 * k >= runs)
        for i, k in enumerate(hits)
    )
    return TriggersEntry(header=h, results=results)


HEAD = entry([3, 3, 0], 3)


@pytest.mark.parametrize(
    ("base", "known", "why"),
    [
        (None, True, "no stored base"),
        (None, False, "could not be read"),
        (entry([1, 1, 0], 1, runs_per_query=1), True, "thin stored base (1 runs per query)"),
        (entry([3, 3, 0], 3, harness="codex"), True, "made by codex"),
        (entry([3, 3, 0], 3, tool_version="0.0.9"), True, "made by version 0.0.9"),
        (entry([2, 2, 0], 2), True, "thin stored base"),
        (entry([3, 3, 0], 3), True, ""),
    ],
)
def test_auto_reruns_the_base_when_its_evidence_is_weak(
    base: TriggersEntry | None, known: bool, why: str
) -> None:
    got = _auto_reason(base, HEAD, known)
    assert (why in got) if why else got == ""


def test_an_early_stopped_stored_base_is_rerun() -> None:
    # A 5-run sweep that stopped at 3/3, 3/3 and 3/4 (decided): 3.3 runs per query, not thin.
    stopped = entry([3, 3, 3], 3, runs_per_query=5)
    stopped = msgspec.structs.replace(
        stopped, results=(*stopped.results[:2], msgspec.structs.replace(stopped.results[2], runs=4))
    )
    assert _auto_reason(stopped, HEAD, True) == "stored base early-stopped"


# ------------------------------------------------------------------ issue 32: the PR's ledger


def _loop(ledger: Ledger, base: TriggersEntry, head: TriggersEntry) -> PowerOutcome:
    """`more_runs` over one skill with a stored base (no git, no agent can start here)."""

    def file(e: TriggersEntry) -> ResultsFile:
        return ResultsFile(plugin="kit", skill="beta", models={"m": ModelEntry(triggers=e)})

    ev = SkillEvidence(plugin="kit", skill="beta", base=file(base), head=file(head))
    return more_runs(
        [ev],
        top=Path("/nonexistent"),
        prefix="",
        base_sha=None,
        environ={},
        genv={},
        options=PowerOptions(base="stored", max_runs=6),
        budget=Budget(limit_usd=0.0),  # nothing may run
        reporter=RecordingReporter(),
        ledger=ledger,
        attempt="2.1",
    )


def _ledger(*, closed: bool, t: float) -> tuple[Ledger, TriggersEntry, TriggersEntry]:
    base = entry([3, 3, 3], 3, ran_at="2026-01-01T00:00:00Z", content_hash="B")
    head = entry([3, 0, 3], 3, ran_at="2026-01-02T00:00:00Z", content_hash="H")
    tool = "claude 0.1.0"
    runs = tuple(
        LedgerRun(
            attempt="1.1",
            skill="kit/beta",
            model="m",
            side="head",
            query=r.query,
            should_trigger=True,
            content="H",
            tool=tool,
            hits=k,
            runs=3,
        )
        for r, k in zip(head.results, (3, 0, 3), strict=True)
    )
    look = LedgerLook(
        skill="kit/beta",
        model="m",
        base="B",
        head="H",
        tool=tool,
        attempt="1.1",
        t_prev=0.25,
        t=t,
        final=True,
        label="undecided",
        closed=closed,
    )
    return Ledger(runs=runs, looks=(look,)), base, head


def test_a_closed_comparison_in_the_ledger_is_looked_at_again_with_no_session() -> None:
    out = _loop(*_ledger(closed=True, t=1.0))
    rr = out.reruns["kit/beta"]["m"]
    assert out.sessions == 0 and out.reused == 9
    assert [q.runs for q in rr.head] == [3, 3, 3]  # the earlier workflow run's extra head runs
    assert (rr.t_prev, rr.t, rr.final) == (0.25, 1.0, True)  # the same look, the same slice
    assert out.recorded.empty


def test_ledger_runs_count_against_max_runs_and_close_the_test() -> None:
    out = _loop(*_ledger(closed=False, t=0.5))  # 3 sweep + 3 ledger runs per query = max_runs 6
    rr = out.reruns["kit/beta"]["m"]
    assert out.sessions == 0
    assert (rr.t_prev, rr.t, rr.final) == (0.5, 1.0, True)  # the alpha continues from 0.5
    (look,) = out.recorded.looks
    assert look.closed and look.attempt == "2.1" and look.t_prev == 0.5
