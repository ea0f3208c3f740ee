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
