"""Unit tests of the trigger engine: hit detection, verdicts, early stop, scoring, and the engine loop
driven by a scripted in-memory harness (no agent processes)."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.helpers.triggers import (
    BROKEN,
    BUSY,
    HIT,
    MISS,
    QUERIES,
    SCRIPT,
    ScriptedHarness,
    call,
    engine,
    make_repo,
    transcript,
)

from evolve_action import events, plan
from evolve_action import results as res
from evolve_action.catalog import build_catalog, resolve_models
from evolve_action.errors import SpecError
from evolve_action.harness import ErrorClass, ToolCall, Transcript
from evolve_action.repo import discover
from evolve_action.triggers import (
    QueryOutcome,
    RunRecord,
    RunResult,
    TriggerOptions,
    classify_run,
    decided,
    is_hit,
    passes,
    run,
    score,
    should_launch,
)


@pytest.mark.parametrize(
    ("tool", "hit"),
    [
        (call("Skill", skill="pdf"), True),
        (call("Skill", skill="docs-kit:pdf"), True),
        (call("Skill", skill="/pdf"), True),
        (call("Skill", skill="pdf-extra"), False),
        (call("Skill", skill="docs-kit:pdf-extra"), False),
        (call("Skill", skill="xpdf"), False),
        (call("Skill", skill="pdf", args="x"), True),
        (call("Skill", command="pdf"), False),
        (call("Read", file_path="/ws/.claude/skills/pdf/SKILL.md"), True),
        (call("Read", file_path=".claude/skills/pdf/SKILL.md"), True),
        (call("Read", file_path="skills/pdf/SKILL.md"), True),
        (call("Read", file_path="/ws/.claude/skills/./pdf/SKILL.md"), True),
        (call("Read", file_path="/ws/.claude/skills/pdf-extra/SKILL.md"), False),
        (call("Read", file_path="/ws/.claude/skills/pdf/README.md"), False),
        (call("Read", file_path="/ws/notes/pdf.md"), False),
        (call("Grep", pattern="skills/pdf/SKILL.md"), False),
        (call("Bash", command="cat skills/pdf/SKILL.md"), False),
    ],
    ids=lambda v: v.raw_input if isinstance(v, ToolCall) else str(v),
)
def test_is_hit(tool: ToolCall, hit: bool) -> None:
    assert is_hit(tool, "pdf") is hit


@pytest.mark.parametrize(
    ("t", "expected"),
    [
        (
            transcript(call("Read", file_path="/x/README.md"), call("Skill", skill="pdf")),
            RunResult.HIT,
        ),
        (transcript(call("Skill", skill="other")), RunResult.MISS),
        (transcript(), RunResult.MISS),
        (transcript(error=ErrorClass.OVERLOADED), RunResult.ERROR),
        (transcript(error=ErrorClass.TIMEOUT), RunResult.ERROR),
        (transcript(call("Skill", skill="pdf"), error=ErrorClass.TIMEOUT), RunResult.HIT),
        (
            transcript(
                call("Read", file_path="a"), error=ErrorClass.RUN_ERROR, subtype="error_max_turns"
            ),
            RunResult.MISS,
        ),
        (transcript(error=ErrorClass.RUN_ERROR, subtype="error_during_execution"), RunResult.ERROR),
    ],
    ids=[
        "read-then-skill",
        "other-skill",
        "no-calls",
        "overloaded",
        "timeout",
        "hit-then-timeout",
        "turn-cap",
        "run-error",
    ],
)
def test_classify_run(t: Transcript, expected: RunResult) -> None:
    assert classify_run(t, "pdf") is expected


@pytest.mark.parametrize(
    ("hits", "completed", "should", "ok"),
    [
        (2, 3, True, True),
        (1, 3, True, False),
        (1, 2, True, True),
        (0, 1, True, False),
        (1, 3, False, True),
        (2, 3, False, False),
        (1, 2, False, False),
        (0, 2, False, True),
    ],
)
def test_pass_rule(hits: int, completed: int, should: bool, ok: bool) -> None:
    assert passes(hits, completed, should) is ok


@pytest.mark.parametrize(
    ("h", "m", "r", "should", "expected"),
    [
        (2, 0, 1, True, True),  # 2 hits of 3: passes whatever comes
        (0, 2, 1, True, True),  # 2 misses of 3 for a should-trigger: fails whatever comes
        (0, 2, 1, False, True),  # 2 misses of 3 for a should-not: passes
        (2, 0, 1, False, True),  # 2 hits of 3 for a should-not: fails
        (1, 1, 1, True, False),
        (1, 0, 2, True, False),
        (0, 0, 3, True, False),
        (0, 0, 0, True, True),
        (1, 0, 1, True, True),  # one hit, one errored, one left: every outcome passes
        (0, 1, 1, False, False),  # should-not: a hit would make 1/2 = 0.5, a failure
    ],
)
def test_decided(h: int, m: int, r: int, should: bool, expected: bool) -> None:
    # Brute force over every outcome (hit, miss, error) of the remaining runs.
    verdicts = set()
    for outcome in itertools.product("hme", repeat=r):
        hh, mm = h + outcome.count("h"), m + outcome.count("m")
        if hh + mm:
            verdicts.add(passes(hh, hh + mm, should))
    brute = len(verdicts) <= 1 and (h + m > 0 or r == 0)
    assert brute is expected
    assert decided(h, m, r, should) is brute


@pytest.mark.parametrize("should", [True, False])
@pytest.mark.parametrize("runs", [1, 2, 3, 4, 5])
def test_early_stop_never_changes_a_verdict(should: bool, runs: int) -> None:
    """Sequential simulation over every outcome sequence: same verdict as making every run."""
    for seq in itertools.product("hme", repeat=runs):
        full_h, full_m = seq.count("h"), seq.count("m")
        full = passes(full_h, full_h + full_m, should) if full_h + full_m else None
        h = m = started = 0
        outcomes = iter(seq)
        while should_launch(
            hits=h, misses=m, in_flight=0, remaining=runs - started, should_trigger=should
        ):
            o = next(outcomes)
            started += 1
            h += o == "h"
            m += o == "m"
        got = passes(h, h + m, should) if h + m else None
        if full is not None and got is not None:
            assert got == full, (seq, h, m)
        if got is None:
            assert started == runs  # an undecided query never stops early


def test_should_launch_waves() -> None:
    kw = {"should_trigger": True}
    assert should_launch(hits=0, misses=0, in_flight=0, remaining=3, **kw)
    assert should_launch(hits=0, misses=0, in_flight=1, remaining=2, **kw)
    assert not should_launch(
        hits=0, misses=0, in_flight=2, remaining=1, **kw
    )  # 2 in flight may settle it
    assert not should_launch(hits=1, misses=0, in_flight=1, remaining=1, **kw)
    assert should_launch(hits=1, misses=1, in_flight=0, remaining=1, **kw)
    assert not should_launch(hits=2, misses=0, in_flight=0, remaining=1, **kw)


def rec(*results: str) -> tuple[RunRecord, ...]:
    kinds = {"h": RunResult.HIT, "m": RunResult.MISS, "e": RunResult.ERROR}
    return tuple(RunRecord(result=kinds[r], seconds=1.25 if r != "e" else 9.0) for r in results)


def test_score_counts_completed_runs_only() -> None:
    q = QueryOutcome(query="q", should_trigger=True, runs=rec("h", "e", "m"))
    r = score(q, spec_hash="abc", estimate=res.Estimate(input_tokens=5))
    assert (r.hits, r.runs, r.passed, r.avg_run_seconds) == (1, 2, True, 1.3)
    assert r.spec_hash == "abc" and r.estimate == res.Estimate(input_tokens=5)
    assert q.errored == 1 and q.status == "passed"


def test_score_all_errored_has_no_verdict() -> None:
    q = QueryOutcome(query="q", should_trigger=False, runs=rec("e", "e", "e"))
    r = score(q, spec_hash="abc", estimate=None)
    assert (r.hits, r.runs, r.passed, r.avg_run_seconds) == (None, None, None, None)
    assert q.status == "errored"
    # ...so `--new` plans it again as an incomplete run.
    reason = plan.trigger_reason(
        r,
        fresh_spec_hash="abc",
        stored_content_hash="",
        fresh_content_hash="",
        selection=plan.Selection(new=True),
        executes=True,
    )
    assert reason is plan.Reason.INCOMPLETE


# --- the engine loop with a scripted harness ------------------------------------------------


@pytest.mark.parametrize(
    ("early", "sessions"), [(True, 8), (False, 12)], ids=["early-stop", "no-early-stop"]
)
def test_engine_verdicts_and_early_stop(tmp_path: Path, early: bool, sessions: int) -> None:
    root, harness, reporter, outcome = engine(tmp_path, SCRIPT, QUERIES, early_stop=early, jobs=3)
    assert len(harness.calls) == sessions == outcome.sessions
    assert harness.max_active <= 3
    (unit,) = outcome.units
    verdicts = {q.query: (q.passed, q.hits, q.completed) for q in unit.queries}
    runs = 2 if early else 3
    assert verdicts == {
        "merge pdf": (True, runs, runs),
        "watermark": (True, 0, runs),
        "weather": (False, 0, runs),
        "csv": (True, 0, runs),
    }
    stored = res.load_results(root / "evals" / "pdf").file
    assert stored is not None
    entry = stored.models["anthropic/claude-sonnet-4-6"].triggers
    assert entry is not None
    assert [r.query for r in entry.results] == [q for q, _ in QUERIES]  # authored order
    assert entry.summary.passed == 3 and entry.summary.failed == 1 and entry.summary.total == 4
    assert entry.header.runs_per_query == 3 and entry.header.executed
    finished = reporter.of(events.UnitFinished)
    assert finished[0].passed == 3 and finished[0].total == 4 and finished[0].errored == 0


def test_engine_retries_transient_failures_and_records_errors(tmp_path: Path) -> None:
    script = {
        "merge pdf": [BUSY, HIT],  # 529 then fine: retried, counted once
        "watermark": [BROKEN],  # every run fails for good: errors, no verdict
        "weather": [BROKEN, MISS, MISS],  # one errored run, verdict from the two completed
    }
    queries = [("merge pdf", True), ("watermark", False), ("weather", True)]
    root, _harness, reporter, outcome = engine(
        tmp_path, script, queries, early_stop=False, jobs=1, retries=2
    )
    (unit,) = outcome.units
    by = {q.query: q for q in unit.queries}
    assert [r.result for r in by["merge pdf"].runs] == [RunResult.HIT] * 3
    assert sum(r.attempts for r in by["merge pdf"].runs) >= 4
    assert by["watermark"].errored == 3 and by["watermark"].passed is None
    assert (
        by["weather"].errored == 1
        and by["weather"].completed == 2
        and by["weather"].passed is False
    )
    assert outcome.failed
    done = {e.label: e for e in reporter.of(events.ItemDone)}
    assert done["watermark"].status == "errored" and "errored=3" in done["watermark"].detail
    stored = res.load_results(root / "evals" / "pdf").file
    assert stored is not None
    entry = stored.models["anthropic/claude-sonnet-4-6"].triggers
    assert entry is not None
    # Issue 8: a query whose runs all errored reached no verdict, so nothing is stored for it.
    assert [r.query for r in entry.results] == ["merge pdf", "weather"]
    assert entry.summary.total == 2 and entry.summary.passed == 1 and entry.summary.failed == 1


def test_engine_writes_after_every_query(tmp_path: Path) -> None:
    seen: list[int] = []

    class Peek(events.RecordingReporter):
        def emit(self, event: events.Event) -> None:
            super().emit(event)
            if isinstance(event, events.ItemDone):
                f = res.load_results(tmp_path / "repo" / "evals" / "pdf").file
                assert f is not None
                t = f.models["anthropic/claude-sonnet-4-6"].triggers
                seen.append(len(t.results) if t else 0)

    root = make_repo(tmp_path / "repo", QUERIES)
    models = resolve_models(
        build_catalog(), model_flags=["claude-sonnet-4-6"], available={"claude"}
    ).models
    options = TriggerOptions(
        repo=discover(root, root), models=models, environ={}, count_tokens=False, jobs=1
    )
    asyncio.run(
        run(options, Peek(), ScriptedHarness(SCRIPT), make_workspace=lambda *a, **k: tmp_path)
    )
    assert seen == [1, 2, 3, 4]


def test_engine_dry_run_and_rerun_plans(tmp_path: Path) -> None:
    root, harness, _, outcome = engine(tmp_path, SCRIPT, QUERIES, dry_run=True)
    assert harness.calls == [] and outcome.units == ()
    assert [c.case for c in outcome.plan.cases] == [q for q, _ in QUERIES]
    assert not (root / "evals" / "pdf" / "results.json").exists()


# Regressions found in review (QA regressions for the trigger engine: unwritable results stop the run before any session).


def test_unwritable_results_stop_the_run_before_any_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evolve_action.results as results  # the facade: the engine calls `results.check_writable`

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

    from evolve_action.triggers import _engine as triggers

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


def test_units_of_one_set_that_run_at_once_are_admitted_together_within_the_cap(
    tmp_path: Path,
) -> None:
    """One unit per model, run side by side: a cap that fits one unit's estimate but not two
    admits the first and skips the second (each alone against the spend so far admitted both)."""
    from evolve_action.harness import Budget
    from evolve_action.harness._budget import first_request_usd

    root = make_repo(tmp_path / "repo", QUERIES)
    models = resolve_models(
        build_catalog(),
        model_flags=["claude-sonnet-4-6", "claude-haiku-4-5"],
        available={"claude"},
    ).models
    probe = Budget(limit_usd=100.0)
    tokens = len((root / "skills" / "pdf" / "SKILL.md").read_bytes()) // 4
    each = [probe.estimate_usd("triggers", m, tokens, len(QUERIES)) for m in models]
    cap = 0.95 * sum(each)
    floors = [first_request_usd(m.model.pricing, tokens) for m in models if m.model.pricing]
    assert max(*each, *floors) <= cap  # either unit alone fits; both together do not
    budget = Budget(limit_usd=cap)
    options = TriggerOptions(
        repo=discover(root, root),
        models=models,
        environ={},
        count_tokens=False,
        jobs=2,
        runs=1,
        early_stop=False,
        budget=budget,
    )
    reporter = events.RecordingReporter()
    outcome = asyncio.run(
        run(options, reporter, ScriptedHarness(SCRIPT), make_workspace=lambda *a, **k: tmp_path)
    )
    assert [u.model for u in outcome.units if u.queries] == [models[0].model.key]
    assert [s.model for s in budget.skipped] == [models[1].model.key]
