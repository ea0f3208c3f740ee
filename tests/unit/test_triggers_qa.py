"""QA regressions for the trigger engine: unwritable results stop the run before any session."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

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
    with pytest.raises(
        SpecError, match=r"cannot write results: the path exists|the results path is a directory"
    ):
        engine(tmp_path, SCRIPT, QUERIES)
    assert [p.name for p in calls] == ["pdf"]


def test_a_results_write_failing_mid_run_is_the_spec_error_not_a_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.test_triggers import ScriptedHarness

    real_run = ScriptedHarness.run

    async def run(self: ScriptedHarness, spec: Any, *, stop: Any = None) -> Any:
        target = tmp_path / "repo" / "evals" / "pdf" / "results.json"
        if not target.exists():
            target.mkdir()  # the atomic rename onto it fails with EISDIR
        return await real_run(self, spec, stop=stop)

    monkeypatch.setattr(ScriptedHarness, "run", run)
    with pytest.raises(SpecError, match="cannot write results") as info:
        engine(tmp_path, SCRIPT, QUERIES, jobs=1)
    assert info.value.hint is not None and "--new" in info.value.hint


def test_run_seconds_are_the_final_attempts_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.test_triggers import BUSY, HIT, ScriptedHarness

    from evolve_action import triggers

    clock = [0.0]
    real_run = ScriptedHarness.run
    monkeypatch.setattr(triggers, "time", SimpleNamespace(monotonic=lambda: clock[0]))

    async def run(self: ScriptedHarness, spec: Any, *, stop: Any = None) -> Any:
        t = await real_run(self, spec, stop=stop)
        clock[0] += 100.0 if t.error is not None else 2.0  # a failed attempt takes long
        return t

    monkeypatch.setattr(ScriptedHarness, "run", run)
    _root, _h, _r, outcome = engine(
        tmp_path, {"merge pdf": [BUSY, HIT]}, [("merge pdf", True)], jobs=1, retries=2
    )
    runs = outcome.units[0].queries[0].runs
    retried = [r for r in runs if r.attempts > 1]
    assert retried, "no run was retried"
    assert all(r.seconds == 2.0 for r in runs)
