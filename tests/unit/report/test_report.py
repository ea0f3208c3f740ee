"""Rollups, rollup document, maturity, excluded models and the gate (report.py), table-driven."""

from __future__ import annotations

import pytest

from evolve_action.catalog import BUILTIN_CATALOG, build_catalog
from evolve_action.report import (
    GateOptions,
    GatePlugin,
    LoadedFile,
    LoadedPlugin,
    Maturity,
    active_model_keys,
    build_rollup_document,
    classify_maturity,
    excluded_rows,
    gate_issues,
    parse_maturity,
    plugin_summary,
    provider_caps,
    rollup_entries,
    sum_estimates,
    sum_measured,
)
from evolve_action.results import (
    EntryHeader,
    Estimate,
    EvalsEntry,
    EvalSnapshot,
    EvalSummary,
    Measured,
    ModelEntry,
    ResultsFile,
    TriggersEntry,
    TriggerSnapshot,
    TriggerSummary,
)

S5 = "anthropic/claude-sonnet-5"


def hdr(
    *, executed: bool = True, ran_at: str = "2026-08-01T00:00:00Z", priced: bool = True
) -> EntryHeader:
    from evolve_action.results import Pricing

    return EntryHeader(
        provider="anthropic",
        model="claude-sonnet-5",
        display="Claude Sonnet 5",
        ran_at=ran_at,
        executed=executed,
        pricing=Pricing(input_per_mtok=3, output_per_mtok=15) if priced else None,
    )


def tentry(
    summary: TriggerSummary, *, prev: TriggerSummary | None = None, **kw: object
) -> TriggersEntry:
    return TriggersEntry(
        header=hdr(**kw),  # type: ignore[arg-type]
        summary=summary,
        previous=TriggerSnapshot(summary=prev) if prev is not None else None,
    )


def eentry(
    summary: EvalSummary,
    *,
    prev: EvalSummary | None = None,
    base: EvalSummary | None = None,
    **kw: object,
) -> EvalsEntry:
    return EvalsEntry(
        header=hdr(**kw),  # type: ignore[arg-type]
        summary=summary,
        previous=EvalSnapshot(summary=prev) if prev is not None else None,
        baseline=EvalSnapshot(summary=base) if base is not None else None,
    )


# ---------------------------------------------------------------------------------------------
# Sums


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        (None, None, None),
        (Estimate(input_tokens=5), None, Estimate(input_tokens=5)),
        (
            None,
            Estimate(input_tokens=5, input_cost_usd=0.1),
            Estimate(input_tokens=5, input_cost_usd=0.1),
        ),
        (
            Estimate(input_tokens=1, input_cost_usd=0.1),
            Estimate(input_tokens=2, input_cost_usd=0.2),
            Estimate(input_tokens=3, input_cost_usd=0.3),  # round6 hides 0.30000000000000004
        ),
        (
            Estimate(input_tokens=1),
            Estimate(input_tokens=2, input_cost_usd=0.25),
            Estimate(input_tokens=3, input_cost_usd=0.25),
        ),
    ],
    ids=["none", "left", "right", "round6", "one-cost"],
)
def test_sum_estimates(a: Estimate | None, b: Estimate | None, want: Estimate | None) -> None:
    assert sum_estimates(a, b) == want


def test_sum_measured_keeps_absent_fields_absent() -> None:
    a = Measured(input_tokens=1, cache_read_input_tokens=10, cost_usd=0.1)
    b = Measured(input_tokens=2, output_tokens=5, cost_usd=0.2)
    assert sum_measured(a, b) == Measured(
        input_tokens=3, cache_read_input_tokens=10, output_tokens=5, cost_usd=0.3
    )


# ---------------------------------------------------------------------------------------------
# Rollup aggregation (report spec §3.4)


def test_trigger_rollup_weights_avg_by_total_and_delta_vs_previous_subset() -> None:
    a = tentry(
        TriggerSummary(passed=3, failed=1, total=4, pass_rate=0.75, avg_run_seconds=10.0),
        prev=TriggerSummary(passed=1, failed=3, total=4, pass_rate=0.25, avg_run_seconds=5.0),
    )
    b = tentry(
        TriggerSummary(passed=2, failed=0, total=2, pass_rate=1, avg_run_seconds=1.0),
        ran_at="2026-08-05T00:00:00Z",
    )
    r = rollup_entries([(S5, a), (S5, b)], "triggers")[S5]
    assert (r.stats.passed, r.stats.failed, r.stats.total, r.stats.executed) == (5, 1, 6, 6)
    assert r.stats.pass_rate == 0.833333
    assert r.stats.avg_run_seconds == 7.0  # (10×4 + 1×2) / 6
    assert r.latest == "2026-08-05T00:00:00Z"
    # The previous aggregate covers only the entry that has one (quirk 3): 5/6 − 1/4.
    assert r.previous_delta is not None
    assert r.previous_delta.rate == 0.583333
    assert r.previous_delta.avg_run_seconds == 2.0
    assert r.baseline is None and r.baseline_delta is None


def test_trigger_rollup_agrees_with_file_summary_when_a_query_errored() -> None:
    # One query with 3/3 hits and one whose runs all errored (no hits/runs/passed): the file
    # summary leaves the errored one out of the rate (1 passed, 0 failed, rate 1.0), and so must
    # the rollup: not 1 passed + 1 failed at 50%.
    from evolve_action.results import TriggerResult, summarise_triggers

    results = (
        TriggerResult(
            query="a", should_trigger=True, hits=3, runs=3, passed=True, avg_run_seconds=4.0
        ),
        TriggerResult(query="b", should_trigger=True),
    )
    summary = summarise_triggers(results)
    assert (summary.passed, summary.failed, summary.total, summary.pass_rate) == (1, 0, 2, 1.0)
    r = rollup_entries([(S5, tentry(summary, prev=summary))], "triggers")[S5]
    assert (r.stats.passed, r.stats.failed, r.stats.total, r.stats.pass_rate) == (1, 0, 2, 1.0)
    assert r.stats.errored is None and r.stats.executed - r.stats.ungraded == 1
    assert r.stats.avg_run_seconds == 4.0
    assert r.previous_delta is not None and r.previous_delta.rate == 0.0


def test_count_only_entry_adds_total_and_estimate_only() -> None:
    a = tentry(
        TriggerSummary(total=3, estimate=Estimate(input_tokens=30, input_cost_usd=0.3)),
        executed=False,
    )
    r = rollup_entries([(S5, a)], "triggers")[S5]
    assert r.stats.passed is None and r.stats.pass_rate is None and r.stats.executed == 0
    assert r.stats.total == 3
    assert r.to_json() == {
        "provider": "anthropic",
        "display": "Claude Sonnet 5",
        "total": 3,
        "estimate": {"input_tokens": 30, "input_cost_usd": 0.3},
    }


def test_eval_rollup_errored_and_verdictless_cases() -> None:
    # total 5: 2 passed, 1 failed, 1 errored, 1 without verdict → rollup counts the last as failed.
    e = eentry(
        EvalSummary(
            passed=2, failed=1, errored=1, total=5, pass_rate=0.666667, avg_run_seconds=20.0
        ),
        base=EvalSummary(passed=1, failed=4, total=5, pass_rate=0.2, avg_run_seconds=10.0),
    )
    r = rollup_entries([(S5, e)], "evals")[S5]
    assert (r.stats.passed, r.stats.failed, r.stats.errored, r.stats.executed) == (2, 2, 1, 5)
    assert r.stats.pass_rate == 0.5
    assert r.baseline is not None and r.baseline.pass_rate == 0.2
    assert r.baseline_delta is not None and r.baseline_delta.rate == 0.3
    assert list(r.to_json()) == [
        "provider",
        "display",
        "passed",
        "failed",
        "errored",
        "total",
        "pass_rate",
        "avg_run_seconds",
        "baseline",
        "baseline_delta",
    ]


def test_all_errored_has_no_rate() -> None:
    e = eentry(EvalSummary(passed=0, failed=0, errored=2, total=2))
    r = rollup_entries([(S5, e)], "evals")[S5]
    assert (r.stats.passed, r.stats.failed, r.stats.pass_rate) == (0, None, None)


def test_eval_deltas_use_measured_not_estimates() -> None:
    cur = EvalSummary(
        passed=1,
        failed=0,
        total=1,
        pass_rate=1,
        measured=Measured(input_tokens=10, output_tokens=20, cost_usd=0.5),
    )
    prev = EvalSummary(
        passed=1,
        failed=0,
        total=1,
        pass_rate=1,
        measured=Measured(input_tokens=4, output_tokens=25, cost_usd=0.2),
    )
    r = rollup_entries([(S5, eentry(cur, prev=prev))], "evals")[S5]
    assert r.previous_delta is not None
    assert r.previous_delta.to_json() == {
        "rate": 0,
        "input_tokens": 6,
        "output_tokens": -5,
        "cost_usd": 0.3,
    }


def _file(skill: str, **models: ModelEntry) -> LoadedFile:
    return LoadedFile(
        skill=skill, results=ResultsFile(plugin="p", skill=skill, models=dict(models))
    )


def test_plugin_summary_filter_and_document() -> None:
    t = tentry(
        TriggerSummary(passed=1, failed=0, total=1, pass_rate=1), ran_at="2026-08-09T00:00:00Z"
    )
    other = tentry(
        TriggerSummary(passed=0, failed=1, total=1, pass_rate=0), ran_at="2026-09-01T00:00:00Z"
    )
    plugin = LoadedPlugin(
        name="p",
        rel_dir="plugins/p",
        files=(
            _file(
                "a",
                **{
                    S5: ModelEntry(triggers=t),
                    "google/gemini-3.5-flash": ModelEntry(triggers=other),
                },
            ),
            _file("b"),
        ),
    )
    s = plugin_summary(plugin, frozenset({S5}))
    assert list(s.triggers) == [S5]
    assert list(s.skills) == ["a"]
    doc = build_rollup_document(
        [s, plugin_summary(LoadedPlugin(name="q", rel_dir="q", files=()), None)], "9.9.9"
    )
    js = doc.to_json()
    assert list(js) == ["schema", "tool_version", "latest_run", "plugins"]
    assert js["latest_run"] == "2026-08-09T00:00:00Z"  # the filtered-out entry does not count
    assert list(js["plugins"]) == ["p"]
    assert list(js["plugins"]["p"]) == ["triggers", "skills"]


def test_empty_document_omits_latest_run() -> None:
    assert build_rollup_document([], "1").to_json() == {
        "schema": 3,
        "tool_version": "1",
        "plugins": {},
    }


# ---------------------------------------------------------------------------------------------
# Catalog-driven pieces


def test_provider_caps() -> None:
    caps = provider_caps(BUILTIN_CATALOG)
    assert {p: (c.display, c.counts, c.usage) for p, c in caps.items()} == {
        "anthropic": ("Anthropic", True, True),
        "openai": ("OpenAI", True, True),
        "google": ("Google", True, False),
        "cursor": ("Cursor", False, False),
        "xai": ("xAI", True, True),
    }


def test_active_keys_corpus_config() -> None:
    active = active_model_keys(
        BUILTIN_CATALOG, ("anthropic", "openai", "xai"), ("claude", "codex", "grok")
    )
    assert active is not None
    assert "openai/gpt-5.3-codex" not in active
    assert "openai/gpt-5.3-codex-spark" in active
    assert len(active) == 15
    assert active_model_keys(BUILTIN_CATALOG, None, None) is None
    assert excluded_rows(BUILTIN_CATALOG, active) == [
        ("OpenAI", "`gpt-5.3-codex`"),
        ("Google", "all models"),
        ("Cursor", "all models"),
    ]


def test_excluded_rows_override_moves_provider_last() -> None:
    cat = build_catalog(
        {"anthropic": {"models": [{"id": "my-model"}, {"id": "other", "name": "Other"}]}}
    )
    active = active_model_keys(cat, ("anthropic/my-model", "openai", "google", "cursor"), None)
    assert excluded_rows(cat, active) == [("xAI", "all models"), ("Anthropic", "`other`")]


# ---------------------------------------------------------------------------------------------
# Maturity


@pytest.mark.parametrize(
    ("version", "want"),
    [
        ("1.0.0", Maturity.STABLE),
        ("v2", Maturity.STABLE),
        ("0.3.0", Maturity.UNSTABLE),
        ("0.9", Maturity.UNSTABLE),
        ("1.0.0-rc.1", Maturity.PRERELEASE),
        ("0.1.0-beta", Maturity.PRERELEASE),
        ("1.2.3beta", Maturity.PRERELEASE),
        ("1.0.0+build.5", Maturity.STABLE),
        ("", Maturity.UNKNOWN),
        (None, Maturity.UNKNOWN),
        ("banana", Maturity.UNKNOWN),
    ],
)
def test_classify_maturity(version: str | None, want: Maturity) -> None:
    assert classify_maturity(version) == want


def test_parse_maturity() -> None:
    assert parse_maturity(["stable, prerelease"]) == {Maturity.STABLE, Maturity.PRERELEASE}
    with pytest.raises(ValueError, match="unknown maturity"):
        parse_maturity(["unknown"])
    with pytest.raises(ValueError, match="no maturity"):
        parse_maturity([" , "])


# ---------------------------------------------------------------------------------------------
# The gate (report spec §5.4)


def _summary(trig: dict[str, TriggersEntry], evs: dict[str, EvalsEntry]) -> LoadedPlugin:
    models = {
        k: ModelEntry(triggers=trig.get(k), evals=evs.get(k)) for k in sorted(set(trig) | set(evs))
    }
    return LoadedPlugin(name="p", rel_dir="plugins/p", files=(_file("s", **models),))


def test_gate_rate_counts_errored_and_orders_issues() -> None:
    e = eentry(EvalSummary(passed=3, failed=0, errored=1, total=4, pass_rate=1))  # gate: 3/4
    t = tentry(TriggerSummary(passed=1, failed=1, total=2, pass_rate=0.5))
    summary = plugin_summary(_summary({S5: t}, {S5: e}), None)
    plugins = [
        GatePlugin(
            name="z", version="1.0.0", authored_triggers=True, authored_evals=True, summary=summary
        ),
        GatePlugin(
            name="a",
            version="0.1.0-rc.1",
            authored_triggers=False,
            authored_evals=True,
            summary=None,
        ),
        GatePlugin(
            name="m",
            version=None,
            authored_triggers=True,
            authored_evals=True,
            summary=summary,
            stale=(("triggers", "s"), ("evals", "s")),
        ),
    ]
    opts = GateOptions(triggers_min_pass_rate=0.6, evals_min_pass_rate=0.8)
    assert [i.line() for i in gate_issues(plugins, opts, [])] == [
        "WARN: m: triggers: anthropic/claude-sonnet-5 pass rate 50.0% below threshold 60.0%",
        "WARN: m: evals: anthropic/claude-sonnet-5 pass rate 75.0% below threshold 80.0%",
        "FAIL: z: triggers: anthropic/claude-sonnet-5 pass rate 50.0% below threshold 60.0%",
        "FAIL: z: evals: anthropic/claude-sonnet-5 pass rate 75.0% below threshold 80.0%",
    ]
    strict = GateOptions(triggers_min_pass_rate=0.5, evals_min_pass_rate=0.75, strict=True)
    assert [i.line() for i in gate_issues(plugins, strict, [S5, "xai/grok-4.6"])] == [
        "FAIL: a: evals: no stored results for anthropic/claude-sonnet-5",
        "FAIL: a: evals: no stored results for xai/grok-4.6",
        "WARN: m: triggers: no stored results for xai/grok-4.6",
        "WARN: m: evals: no stored results for xai/grok-4.6",
        "WARN: triggers: s stored results are stale (authored content changed)",
        "WARN: evals: s stored results are stale (authored content changed)",
        "FAIL: z: triggers: no stored results for xai/grok-4.6",
        "FAIL: z: evals: no stored results for xai/grok-4.6",
    ]
    pinned = GateOptions(models=("xai/grok-4.6",), maturity=frozenset({Maturity.STABLE}))
    assert [i.line() for i in gate_issues(plugins[:1], pinned, [])] == [
        "FAIL: z: triggers: no stored results for xai/grok-4.6",
        "FAIL: z: evals: no stored results for xai/grok-4.6",
    ]


def test_gate_plain_check_without_results_passes() -> None:
    plugins = [
        GatePlugin(
            name="p", version="1.0.0", authored_triggers=True, authored_evals=True, summary=None
        )
    ]
    assert gate_issues(plugins, GateOptions(), [S5]) == []
