"""Issue 9 item 1: concurrent writers of one results file serialise and keep every row.

Each writer is a real process (multiprocessing, `spawn`) driving `ResultsWriter` exactly as the
engines do: one `put_*` per finished case, for its own (model, tier) unit. Several processes
writing one file at once (triggers + evals tiers, other models) must leave every row of every
unit on disk; a writer that finds the lock taken says so through its `on_wait` callback.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path
from typing import Any

import pytest

from evolve_action import results as R
from evolve_action.errors import SpecError

HAIKU = "anthropic/claude-haiku-4-5"
SONNET = "anthropic/claude-sonnet-4-5"
CASES = 25


def _header() -> R.EntryHeader:
    return R.EntryHeader(
        provider="anthropic",
        model="m",
        display="M",
        harness="claude",
        tool_version="0.1.0",
        ran_at="2026-08-01T00:00:00Z",
        executed=True,
        content_hash="h",
        timeout_seconds=120,
    )


def _writer_process(results_dir: str, model: str, tier: str, cases: int, start: Any) -> None:
    """Run one unit of `cases` cases, writing after each one (the engines' contract)."""
    d = Path(results_dir)
    loaded = R.load_results(d, plugin="p", skill="s")
    writer = R.ResultsWriter(d, loaded.file, "json", plugin="p", skill="s")
    keys = [f"{tier}-{model}-{i}" for i in range(cases)]
    start.wait()
    if tier == "triggers":
        trec = R.TriggerUnitRecord(None, header=_header(), valid_queries=keys, planned=keys)
        for k in keys:
            writer.put_triggers(
                model, trec.add(R.TriggerResult(query=k, should_trigger=True, passed=True))
            )
    else:
        erec = R.EvalUnitRecord(None, header=_header(), valid_ids=keys, planned=keys)
        for k in keys:
            writer.put_evals(model, erec.add(R.EvalResult(id=k, passed=True)))


def _run_writers(d: Path, units: list[tuple[str, str]]) -> None:
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    procs = [
        ctx.Process(target=_writer_process, args=(str(d), model, tier, CASES, start))
        for model, tier in units
    ]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0


def _rows(d: Path) -> dict[tuple[str, str], set[str]]:
    file = R.load_results(d).file
    assert file is not None
    out: dict[tuple[str, str], set[str]] = {}
    for model, entry in file.models.items():
        if entry.triggers is not None:
            out[(model, "triggers")] = {r.query for r in entry.triggers.results}
        if entry.evals is not None:
            out[(model, "evals")] = {r.id for r in entry.evals.results}
    return out


def _expected(units: list[tuple[str, str]]) -> dict[tuple[str, str], set[str]]:
    return {(m, t): {f"{t}-{m}-{i}" for i in range(CASES)} for m, t in units}


@pytest.mark.parametrize(
    "units",
    [
        [(HAIKU, "triggers"), (HAIKU, "evals")],
        [(HAIKU, "triggers"), (HAIKU, "evals"), (SONNET, "triggers")],
    ],
    ids=["two-writers", "three-writers"],
)
def test_concurrent_writers_keep_every_row(tmp_path: Path, units: list[tuple[str, str]]) -> None:
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    _run_writers(d, units)
    assert _rows(d) == _expected(units)


def test_a_writer_keeps_rows_written_by_another_run_before_it_started_writing(
    tmp_path: Path,
) -> None:
    # The stale in-memory snapshot (loaded at plan time) must not win over what is on disk.
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    stale = R.ResultsWriter(d, None, "json", plugin="p", skill="s")  # "loaded" before the other run
    _run_writers(d, [(SONNET, "evals")])
    rec = R.TriggerUnitRecord(None, header=_header(), valid_queries=["q"], planned=["q"])
    stale.put_triggers(HAIKU, rec.add(R.TriggerResult(query="q", should_trigger=True)))
    rows = _rows(d)
    assert rows[(HAIKU, "triggers")] == {"q"}
    assert rows[(SONNET, "evals")] == _expected([(SONNET, "evals")])[(SONNET, "evals")]


def _waiting_writer(results_dir: str, messages: Any) -> None:
    d = Path(results_dir)
    writer = R.ResultsWriter(d, None, "json", plugin="p", skill="s", on_wait=messages.put)
    rec = R.EvalUnitRecord(None, header=_header(), valid_ids=["1"], planned=["1"])
    writer.put_evals(HAIKU, rec.add(R.EvalResult(id="1", passed=True)))
    messages.put("written")


def test_a_writer_waits_for_the_lock_and_says_so(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    ctx = mp.get_context("spawn")
    messages = ctx.Queue()
    with R.lock_results(d):  # another "run" holds the lock
        proc = ctx.Process(target=_waiting_writer, args=(str(d), messages))
        proc.start()
        first = messages.get(timeout=60)
        assert "waiting for lock on" in first
        assert "held by another evolve-action run" in first
        assert not (d / "results.json").exists()  # nothing written while the lock is held
    assert messages.get(timeout=60) == "written"
    proc.join(60)
    assert proc.exitcode == 0
    assert _rows(d) == {(HAIKU, "evals"): {"1"}}


def test_lock_timeout_is_a_clear_error(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    ctx = mp.get_context("spawn")
    holder_ready = ctx.Event()
    release = ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(d), holder_ready, release))
    holder.start()
    try:
        assert holder_ready.wait(60)
        seen: list[str] = []
        with (
            pytest.raises(SpecError, match="held the results lock for over"),
            R.lock_results(d, on_wait=seen.append, timeout=0.2),
        ):
            pass  # pragma: no cover - never acquired
        assert len(seen) == 1
    finally:
        release.set()
        holder.join(60)


def _hold_lock(results_dir: str, ready: Any, release: Any) -> None:
    with R.lock_results(Path(results_dir)):
        ready.set()
        release.wait(60)
        time.sleep(0)


@pytest.mark.integration
def test_two_real_runs_of_one_skill_keep_both_models(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    """Two concurrent `evolve-action run triggers` (two models, one results file) keep all rows."""
    import json
    import subprocess
    import sys

    from tests.helpers.agents import csv_trigger_repo, scripted_env

    queries = [(f"Tidy up CSV spreadsheet number {i}", True) for i in range(1, 4)]
    root = tmp_path / "repo"
    csv_trigger_repo(root, queries)
    srv = model_server({"latency_ms": 200, "rules": [{"name": "r", "route": {"threshold": 0.2}}]})
    env = scripted_env(tmp_path, srv.base_url)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "evolve_action",
                "run",
                "triggers",
                "--root",
                str(root),
                "--model",
                model,
                "--jobs",
                "2",
                "--runs",
                "1",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for model in ("claude-sonnet-4-6", "claude-haiku-4-5")
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, out + err
    doc = json.loads((root / "evals" / "csv-clean" / "results.json").read_text())
    assert sorted(doc["models"]) == ["anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-6"]
    for entry in doc["models"].values():
        assert [r["query"] for r in entry["triggers"]["results"]] == [q for q, _ in queries]


def test_the_trigger_engine_reports_the_lock_wait_through_its_reporter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While another holder has the lock, the engine's write waits and says so as a Warning."""
    import threading
    import types

    from tests.helpers.triggers import QUERIES, SCRIPT, ScriptedHarness, engine

    from evolve_action import events

    results_dir = tmp_path / "repo" / "evals" / "pdf"
    acquired, writer_waiting = threading.Event(), threading.Event()

    def hold() -> None:
        with R.lock_results(results_dir):
            acquired.set()
            writer_waiting.wait(60)  # released once the engine's writer polls for it

    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        writer_waiting.set()
        real_sleep(seconds)

    monkeypatch.setattr(
        "evolve_action.results._store.time",
        types.SimpleNamespace(
            monotonic=time.monotonic, sleep=sleep, time_ns=time.time_ns, time=time.time
        ),
    )
    real_run = ScriptedHarness.run

    async def run(self: ScriptedHarness, spec: Any, *, stop: Any = None) -> Any:
        if not acquired.is_set():
            threading.Thread(target=hold, daemon=True).start()
            assert acquired.wait(60)
        return await real_run(self, spec, stop=stop)

    monkeypatch.setattr(ScriptedHarness, "run", run)
    _, _, reporter, _ = engine(tmp_path, SCRIPT, QUERIES, jobs=1)
    waits = [
        e.message
        for e in reporter.events
        if isinstance(e, events.RunWarning) and "waiting for lock on" in e.message
    ]
    assert waits and "held by another evolve-action run" in waits[0]
    assert "results.json" in waits[0] or "results.*" in waits[0]
    file = R.load_results(results_dir).file
    assert file is not None
    (entry,) = file.models.values()
    assert entry.triggers is not None
    assert sorted(r.query for r in entry.triggers.results) == sorted(q for q, _ in QUERIES)
