"""The action's note for trigger misses of a skill Claude Code listed without its description."""

from __future__ import annotations

import pytest

from evolve_action import plan, triggers
from evolve_action.flows._pr_evaluate import _listing_notes
from evolve_action.triggers import QueryOutcome, RunRecord, RunResult
from evolve_action.triggers._engine import UnitOutcome


def _query(should: bool, result: RunResult) -> QueryOutcome:
    return QueryOutcome(
        query="q", should_trigger=should, runs=(RunRecord(result=result, seconds=1),)
    )


def _outcome(listing: str, *queries: QueryOutcome) -> triggers.TriggersOutcome:
    unit = UnitOutcome(plugin="p", skill="s", model="anthropic/m", queries=queries, listing=listing)
    return triggers.TriggersOutcome(plan=plan.Plan(), units=(unit,))


@pytest.mark.parametrize("listing", ["name-only", "missing"])
def test_misses_of_an_unlisted_description_are_explained_with_the_fix(listing: str) -> None:
    outcome = _outcome(
        listing,
        _query(True, RunResult.MISS),
        _query(True, RunResult.MISS),
        _query(False, RunResult.MISS),  # a correct silence is no miss
    )
    assert _listing_notes(outcome) == [
        f"⚠️ p/s on anthropic/m: 2 trigger misses with the {triggers.NOT_SHOWN_NOTE} "
        f"(listed {listing}) — {triggers.LISTING_FIX}"
    ]


@pytest.mark.parametrize(
    ("listing", "result"),
    [
        ("whole", RunResult.MISS),
        ("shortened", RunResult.MISS),
        ("", RunResult.MISS),
        ("name-only", RunResult.HIT),
    ],
)
def test_no_note_when_the_description_was_shown_or_nothing_missed(
    listing: str, result: RunResult
) -> None:
    assert _listing_notes(_outcome(listing, _query(True, result))) == []
