"""QA regressions for the trigger engine: unwritable results stop the run before any session."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.test_triggers import QUERIES, SCRIPT, engine

from evolve_action.errors import SpecError


def test_unwritable_results_stop_the_run_before_any_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evolve_action import results

    calls: list[Path] = []
    real = results.check_writable

    def refuse(results_dir: Path, fmt: str, *, root: Path | None = None) -> None:
        calls.append(results_dir)
        (results_dir / "results.json").mkdir()
        real(results_dir, fmt, root=root)  # type: ignore[arg-type]

    monkeypatch.setattr(results, "check_writable", refuse)
    with pytest.raises(SpecError, match="cannot write results: the path exists"):
        engine(tmp_path, SCRIPT, QUERIES)
    assert [p.name for p in calls] == ["pdf"]
