"""The PR job's notices as annotations: GitHub shows at most ten a step, so the tenth says how many
more there are (they are all in the summary)."""

from __future__ import annotations

import io

from evolve_action.flows._action import _Log
from evolve_action.flows._pr_job import MAX_ANNOTATIONS


def _annotations(stream: io.StringIO) -> list[str]:
    return [line for line in stream.getvalue().splitlines() if line.startswith("::notice")]


def test_past_ten_notices_the_last_annotation_counts_the_rest() -> None:
    out = io.StringIO()
    state = _Log(out)
    for i in range(14):
        state.notice(f"note {i}")
    state.flush_notices()
    shown = _annotations(out)
    assert len(shown) == MAX_ANNOTATIONS
    assert shown[-1] == "::notice::and 5 more notices: see the step summary"
    assert len(state.notes) == 14  # every one still reaches the comment and the summary


def test_ten_notices_are_all_annotated() -> None:
    out = io.StringIO()
    state = _Log(out)
    for i in range(10):
        state.notice(f"note {i}")
    state.flush_notices()
    assert _annotations(out)[-1] == "::notice::note 9" and len(_annotations(out)) == 10
