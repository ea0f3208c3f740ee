"""The line reporter: one tag per warning line, whoever produced the warning."""

from __future__ import annotations

import io

import pytest

from evolve_action.events import (
    Event,
    ItemDone,
    LineReporter,
    Progress,
    RunWarning,
    SweepStarted,
    UnitFinished,
    UnitStarted,
)


@pytest.mark.parametrize(
    ("message", "path", "line", "printed"),
    [
        ("plain note", None, None, "warn: plain note\n"),
        (
            "WARN: model x has no available harness",
            None,
            None,
            "WARN: model x has no available harness\n",
        ),
        ("warn: token cache unreadable", None, None, "warn: token cache unreadable\n"),
        (
            "WARN: stale query",
            "evals/a/triggers.json",
            4,
            "WARN: evals/a/triggers.json:4: stale query\n",
        ),
        ("shadowed", "evals/a/triggers.json", None, "warn: evals/a/triggers.json: shadowed\n"),
    ],
)
def test_a_warning_line_carries_exactly_one_tag(
    message: str, path: str | None, line: int | None, printed: str
) -> None:
    out = io.StringIO()
    LineReporter(out).emit(RunWarning(message=message, path=path, line=line))
    assert out.getvalue() == printed


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _unit(tier: str, items: int) -> list[Event]:
    start = UnitStarted(plugin="p", skill="s", model="m", tier=tier, items=items)
    done = [
        ItemDone(skill="s", model="m", tier=tier, label=f"q{i}", status="passed")
        for i in range(items)
    ]
    end = UnitFinished(plugin="p", skill="s", model="m", tier=tier, passed=items, total=items)
    return [start, *done, end]


def test_progress_counts_estimates_and_prices() -> None:
    clock, spend = Clock(), [0.0]
    progress = Progress(clock=clock, spent=lambda: spend[0])
    progress.add(SweepStarted(tier="triggers", units=2, items=8))
    progress.add(SweepStarted(tier="evals", units=1, items=4))
    assert progress.line() == "0/12 cases · 0/3 units · 0s elapsed · $0.00 spent"
    for event in _unit("triggers", 3):
        clock.now += 10 if isinstance(event, ItemDone) else 0
        progress.add(event)
    spend[0] = 0.4
    # 3 items in 30 s: 10 s each, 9 left.
    assert progress.remaining() == pytest.approx(90.0)
    assert progress.line() == "3/12 cases · 1/3 units · 30s elapsed · ~1m30s left · $0.40 spent"
    clock.now += 3600
    assert "1h00m elapsed" in progress.line()


def test_plain_progress_lines_are_periodic_never_per_item() -> None:
    out, clock = io.StringIO(), Clock()
    reporter = LineReporter(out, clock=clock, every=30.0)
    reporter.emit(SweepStarted(tier="triggers", units=2, items=40))
    for event in [*_unit("triggers", 20), *_unit("triggers", 20)]:
        clock.now += 2 if isinstance(event, ItemDone) else 0  # 80 s in all, 2 s per item
        reporter.emit(event)
    lines = [x for x in out.getvalue().splitlines() if x.startswith("progress: ")]
    # One line each time 30 s have passed since the last: at 30 s, 60 s (not 40 lines).
    assert lines == [
        "progress: 15/40 cases · 0/2 units · 30s elapsed · ~50s left",
        "progress: 30/40 cases · 1/2 units · 1m00s elapsed · ~20s left",
    ]


def test_live_progress_shows_the_whole_run_on_the_rewritten_line() -> None:
    out, clock = io.StringIO(), Clock()
    reporter = LineReporter(out, live=True, clock=clock)
    reporter.emit(SweepStarted(tier="evals", units=2, items=4))
    for event in _unit("evals", 2)[:2]:
        clock.now += 5
        reporter.emit(event)
    assert out.getvalue().endswith("  [1/2] q0 — 1/4 cases · 0/2 units · 10s elapsed · ~30s left")
    assert "progress: " not in out.getvalue()  # a terminal gets the live line, not periodic ones
