"""When `base: auto` re-runs the base (flows/_power.py): missing, thin, another harness or version,
early-stopped; good stored evidence is used (and paired runs appended)."""

from __future__ import annotations

import msgspec
import pytest

from evolve_action.flows._power import _auto_reason
from evolve_action.results import EntryHeader, TriggerResult, TriggersEntry


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


def test_a_selective_round_reads_the_pooled_runs_only() -> None:
    """The stored base, the head's sweep and this job's runs pooled per query, in no side's order:
    a query whose runs differ is run; swapping which side made which runs changes nothing."""
    from evolve_action.flows._power import _Track
    from evolve_action.report import SkillEvidence, selected

    def track(base: TriggersEntry, head: TriggersEntry) -> _Track:
        ev = SkillEvidence(plugin="p", skill="s", base=None, head=None)
        return _Track(ev=ev, model="m", head_entry=head, base_entry=base, key="p/s")

    a, b = entry([3, 3, 0], 3), entry([3, 0, 0], 3)
    one, other = track(a, b), track(b, a)
    assert one.pooled() == other.pooled()
    assert one.pooled()["q1"] == (1, 1, 1, 0, 0, 0)
    chosen = one.select()
    assert "q1" in chosen  # 3/3 against 0/3: can move the test
    assert chosen == {q for q, runs in one.pooled().items() if selected(q, runs, 0)}
    fresh = track(a, b)
    fresh.fresh = True  # the stored base is not tested: only the head's sweep (and fresh runs)
    assert fresh.pooled()["q0"] == (1, 1, 1)
