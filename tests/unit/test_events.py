"""The line reporter: one tag per warning line, whoever produced the warning."""

from __future__ import annotations

import io

import pytest

from evolve_action.events import LineReporter, RunWarning


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
