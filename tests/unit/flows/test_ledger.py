"""The PR ledger's pure core: matching by fingerprints, merge, codec, history, the file store."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from evolve_action.errors import EvolveError
from evolve_action.flows._ledger import (
    _KEYS,
    FileStore,
    Ledger,
    LedgerLook,
    LedgerRun,
    history,
    ledger_json,
    parse_ledger,
)
from evolve_action.report import QueryRuns


def run(
    attempt: str,
    side: str = "base",
    *,
    content: str = "B1",
    hits: int = 1,
    runs: int = 2,
    query: str = "q1",
    tool: str = "claude-code 2.0",
) -> LedgerRun:
    return LedgerRun(
        attempt=attempt,
        skill="kit/beta",
        model="m",
        side=side,  # type: ignore[arg-type]
        query=query,
        should_trigger=True,
        content=content,
        tool=tool,
        hits=hits,
        runs=runs,
    )


def look(
    attempt: str, *, t: float, label: str = "undecided", closed: bool = False, head: str = "H1"
) -> LedgerLook:
    return LedgerLook(
        skill="kit/beta",
        model="m",
        base="B1",
        head=head,
        tool="claude-code 2.0",
        attempt=attempt,
        t_prev=0.0,
        t=t,
        final=True,
        label=label,
        closed=closed,
    )


def test_prior_sums_matching_runs_over_attempts_and_drops_other_fingerprints() -> None:
    ledger = Ledger(
        runs=(
            run("1.1"),
            run("2.1", hits=2, runs=2),
            run("2.1", content="B0"),  # another base version
            run("3.1", tool="claude-code 2.1"),  # another tool version
            run("2.1", "head", content="H1", hits=0, runs=3),
            run("2.1", "head", content="H0", runs=5),  # an earlier push's head
        ),
        looks=(look("1.1", t=0.3), look("2.1", t=0.6), look("2.1", t=0.9, head="H0")),
    )
    prior = ledger.prior(skill="kit/beta", model="m", base="B1", head="H1", tool="claude-code 2.0")
    assert prior.base == (QueryRuns(query="q1", should_trigger=True, hits=3, runs=4),)
    assert prior.head == (QueryRuns(query="q1", should_trigger=True, hits=0, runs=3),)
    assert prior.look is not None and prior.look.t == 0.6
    stored = ledger.prior(
        skill="kit/beta", model="m", base="B1", head="H1", tool="claude-code 2.0", with_base=False
    )
    assert stored.base == ()


def test_a_closed_look_wins_over_a_further_open_one() -> None:
    ledger = Ledger(looks=(look("1.1", t=0.5, closed=True, label="regression"), look("2.1", t=0.7)))
    prior = ledger.prior(skill="kit/beta", model="m", base="B1", head="H1", tool="claude-code 2.0")
    assert prior.look is not None and prior.look.closed and prior.look.attempt == "1.1"


def test_merge_is_a_union_where_one_attempts_larger_count_wins() -> None:
    a = Ledger(runs=(run("1.1", runs=2), run("2.1")), looks=(look("1.1", t=0.2),))
    b = Ledger(runs=(run("1.1", runs=4, hits=3), run("3.1")), looks=(look("1.1", t=0.4),))
    merged = a.merge(b)
    assert merged == b.merge(a)
    assert {(r.attempt, r.runs) for r in merged.runs} == {("1.1", 4), ("2.1", 2), ("3.1", 2)}
    assert [lk.t for lk in merged.looks] == [0.4]
    assert merged.merge(a) == merged  # idempotent: writing what was read changes nothing


def test_codec_round_trips_and_names_the_file_when_broken(tmp_path: Path) -> None:
    ledger = Ledger(
        runs=(run("1.1"), run("1.1", "head", content="H1")), looks=(look("1.1", t=0.25),)
    )
    assert parse_ledger(ledger_json(ledger), where="x") == ledger
    with pytest.raises(
        EvolveError, match=r"refs/evolve-action/ledger/pr-3:ledger.json: unreadable"
    ):
        parse_ledger('{"version": 9}', where="refs/evolve-action/ledger/pr-3:ledger.json")


def test_file_store_merges_on_write(tmp_path: Path) -> None:
    path = tmp_path / ".evolve-action" / "ledger.json"
    one, two = FileStore(path), FileStore(path)
    assert one.load().empty
    one.save(Ledger(runs=(run("local 1"),)))
    two.save(Ledger(runs=(run("local 2"),)))  # a second writer keeps the first's runs
    assert {r.attempt for r in FileStore(path).load().runs} == {"local 1", "local 2"}


def test_history_counts_workflow_runs_and_says_when_an_earlier_label_differed() -> None:
    ledger = Ledger(
        runs=(run("1.1"), run("2.1"), run("0.1", content="B0")),
        looks=(
            look("1.1", t=0.4, label="undecided"),
            look("2.1", t=1.0, closed=True, label="regression"),
        ),
    )
    n, differed = history(ledger, {("kit/beta", "m"): ("B1", "H1", "claude-code 2.0")})
    assert n == 2
    assert differed == ("kit/beta (m): an earlier workflow run said undecided",)
    same = Ledger(runs=ledger.runs, looks=(look("1.1", t=0.4), look("2.1", t=0.8)))
    assert history(same, {("kit/beta", "m"): ("B1", "H1", "claude-code 2.0")}) == (2, ())


def test_selective_rounds_stay_blocks_of_their_own_across_attempts() -> None:
    """Issue 34 × 32: each attempt's selective rounds come back as separate strata (pooling
    rounds would not be exact), numbered over both sides, the rest pooled as block 0."""
    from evolve_action.flows._ledger import runs_of

    def side(attempt: str, which: str, content: str) -> tuple:  # type: ignore[type-arg]
        q = QueryRuns(query="q", should_trigger=True, hits=3, runs=5, rounds=((1, 2), (2, 2)))
        return runs_of(attempt, "kit/beta", "m", which, content, "claude 1", [q])  # type: ignore[arg-type]

    one = Ledger(runs=(*side("1.1", "base", "B"), *side("1.1", "head", "H")))
    blocks = sorted((r.side, r.block, r.hits, r.runs) for r in one.runs)
    assert blocks == [
        ("base", 0, 0, 1),
        ("base", 1, 1, 2),
        ("base", 2, 2, 2),
        ("head", 0, 0, 1),
        ("head", 1, 1, 2),
        ("head", 2, 2, 2),
    ]
    two = one.merge(Ledger(runs=(*side("2.1", "base", "B"), *side("2.1", "head", "H"))))
    assert parse_ledger(ledger_json(two), where="x") == two
    prior = two.prior(skill="kit/beta", model="m", base="B", head="H", tool="claude 1")
    assert prior.rounds == 4  # attempt 1's two rounds, then attempt 2's
    (base,) = prior.base
    assert (base.hits, base.runs) == (6, 10)
    assert base.rounds == ((1, 2), (2, 2), (1, 2), (2, 2))


def test_the_sweep_a_look_rested_on_comes_back_apart_from_the_extra_runs() -> None:
    """Issue 38: the head sweep of the attempt a look names is kept (block SWEEP, with its planned
    runs), round-trips, and is neither an extra head run nor a selective round."""
    from dataclasses import replace

    from evolve_action.flows._ledger import SWEEP

    sweep = replace(run("1.1", "head", content="H1", hits=2, runs=2), block=SWEEP, planned=3)
    other = replace(sweep, attempt="2.1", hits=0)  # a re-run's sweep: no look rests on it
    closed = replace(look("1.1", t=0.3, closed=True, label="regression"), sweep="1.1")
    ledger = Ledger().merge(
        Ledger(runs=(sweep, other, run("1.1", "head", content="H1")), looks=(closed,))
    )
    assert parse_ledger(ledger_json(ledger), where="x") == ledger
    prior = ledger.prior(skill="kit/beta", model="m", base="B1", head="H1", tool="claude-code 2.0")
    assert prior.sweep == (sweep,)
    assert prior.head == (QueryRuns(query="q1", should_trigger=True, hits=1, runs=2),)
    assert prior.rounds == 0
    legacy = Ledger(runs=ledger.runs, looks=(replace(closed, sweep=""),))
    assert (
        legacy.prior(
            skill="kit/beta", model="m", base="B1", head="H1", tool="claude-code 2.0"
        ).sweep
        == ()
    )


def test_the_codec_names_every_field_once() -> None:
    """The one key list both directions read: a field added to an entry must be written and read."""
    for kind in (LedgerRun, LedgerLook):
        keys = _KEYS[kind]
        assert len(keys) == len(set(keys))
        assert set(keys) == {f.name for f in dataclasses.fields(kind)}
