"""Eval comparisons are final for their evidence, as trigger comparisons are (issue 38's rule,
flows/_power_evals.py with `flows._power.resume` and `record_look`): a decided eval comparison in
the PR's ledger keeps its label when "Re-run jobs" re-measures the head's eval run of the same
content, and starts no session."""

from __future__ import annotations

from pathlib import Path

from evolve_action.events import RecordingReporter
from evolve_action.flows._ledger import SWEEP, Ledger
from evolve_action.flows._power import PowerJob, PowerOptions
from evolve_action.flows._power_evals import EvalPowerOutcome, more_eval_runs
from evolve_action.harness import Budget, SkippedUnit
from evolve_action.report import SkillEvidence, compare_skill
from evolve_action.results import EntryHeader, EvalResult, EvalsEntry, ModelEntry, ResultsFile

CASES = 20


def entry(passed: list[bool], *, content: str, ran_at: str) -> EvalsEntry:
    header = EntryHeader(
        provider="anthropic",
        model="claude-sonnet-5",
        harness="claude",
        tool_version="0.1.0",
        executed=True,
        content_hash=content,
        ran_at=ran_at,
    )
    return EvalsEntry(
        header=header,
        results=tuple(
            EvalResult(id=f"e{i}", name=f"case {i}", passed=p) for i, p in enumerate(passed)
        ),
    )


STOPPED = SkippedUnit(plugin="kit", skill="other", tier="evals", model="m", estimate_usd=1.0)
BASE = entry([True] * CASES, content="B", ran_at="2026-01-01T00:00:00Z")


def attempt(ledger: Ledger, head: EvalsEntry, name: str) -> tuple[EvalPowerOutcome, str]:
    """One workflow run of the same PR and commit: `more_eval_runs` with the PR's ledger (the
    stored base, `max_runs` 2: look 0 is the stored base against the head's run), then the
    label the comment shows."""

    def file(e: EvalsEntry) -> ResultsFile:
        return ResultsFile(plugin="kit", skill="beta", models={"m": ModelEntry(evals=e)})

    ev = SkillEvidence(plugin="kit", skill="beta", base=file(BASE), head=file(head))
    out = more_eval_runs(
        [ev],
        PowerJob(
            top=Path("/nonexistent"),
            prefix="",
            base_sha=None,
            environ={},
            genv={},
            options=PowerOptions(base="stored", max_runs=2),
            budget=Budget(limit_usd=0.0, skipped=[STOPPED]),  # no session can start,
            reporter=RecordingReporter(),
            ledger=ledger,
            attempt=name,
        ),
    )
    shown = SkillEvidence(
        plugin="kit",
        skill="beta",
        base=file(BASE),
        head=file(head),
        eval_reruns=out.power.reruns.get("kit/beta", {}),
    )
    (row,) = compare_skill(shown, plan=None)
    assert row.evals is not None
    return out, row.evals.label.value


def test_a_rerun_of_a_decided_eval_comparison_keeps_its_verdict_whatever_its_head_run() -> None:
    fell = entry([False] * CASES, content="H", ran_at="2026-01-02T00:00:00Z")
    first, label = attempt(Ledger(), fell, "7.1")
    assert label == "regression" and first.power.sessions == 0  # decided at look 0
    ledger = Ledger().merge(first.power.recorded)
    (look,) = ledger.looks
    assert look.closed and look.skill == "kit/beta#evals"
    # "Re-run jobs": the same content, the head's eval run measured anew, every case passing.
    steady = entry([True] * CASES, content="H", ran_at="2026-01-03T00:00:00Z")
    again, label = attempt(ledger, steady, "7.2")
    assert label == "regression" and again.power.sessions == 0
    # What kept it: the head run the closed look tested, in the ledger with the look.
    assert look.sweep == "7.1"
    kept = [r for r in ledger.runs if r.block == SWEEP]
    assert len(kept) == CASES and all(r.runs == 1 and r.hits == 0 for r in kept)
    third, label = attempt(ledger.merge(again.power.recorded), steady, "7.3")
    assert label == "regression" and third.power.sessions == 0


def test_new_eval_content_reopens_the_comparison() -> None:
    fell = entry([False] * CASES, content="H", ran_at="2026-01-02T00:00:00Z")
    first, _ = attempt(Ledger(), fell, "7.1")
    fixed = entry([True] * CASES, content="H2", ran_at="2026-01-03T00:00:00Z")
    _, label = attempt(Ledger().merge(first.power.recorded), fixed, "8.1")
    assert label != "regression"
