"""Unit tests for the schema-5 results model: decode/encode, summaries, merge, snapshots, files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest

from evolve_action import encoding
from evolve_action import results as R
from evolve_action.errors import SpecError

HAIKU = "anthropic/claude-haiku-4-5"
GPT = "openai/gpt-5.4"

# A hand-checked, Go-canonical schema-5 file covering both tiers, previous/baseline snapshots,
# explicit nulls (`pricing`, a skipped assertion), pointer fields at 0/false, omitted omitempty
# fields, an errored eval, a count-only entry, HTML escaping and an exponent float.
FIXTURE = (
    "{\n"
    '  "schema": 5,\n'
    '  "plugin": "demo",\n'
    '  "skill": "greet",\n'
    '  "models": {\n'
    '    "anthropic/claude-haiku-4-5": {\n'
    '      "triggers": {\n'
    '        "provider": "anthropic",\n'
    '        "model": "claude-haiku-4-5",\n'
    '        "display": "Claude Haiku 4.5",\n'
    '        "harness": "claude",\n'
    '        "tool_version": "0.7.0",\n'
    '        "ran_at": "2026-07-02T19:14:43Z",\n'
    '        "executed": true,\n'
    '        "content_hash": "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1",\n'
    '        "runs_per_query": 3,\n'
    '        "timeout_seconds": 120,\n'
    '        "pricing": {\n'
    '          "input_per_mtok": 1,\n'
    '          "output_per_mtok": 5\n'
    "        },\n"
    '        "results": [\n'
    "          {\n"
    '            "query": "say hi to \\u003cBob\\u003e \\u0026 café",\n'
    '            "should_trigger": true,\n'
    '            "hits": 3,\n'
    '            "runs": 3,\n'
    '            "passed": true,\n'
    '            "avg_run_seconds": 12.3,\n'
    '            "estimate": {\n'
    '              "input_tokens": 1396,\n'
    '              "input_cost_usd": 0.001396\n'
    "            },\n"
    '            "spec_hash": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"\n'
    "          },\n"
    "          {\n"
    '            "query": "write a poem",\n'
    '            "should_trigger": false,\n'
    '            "hits": 2,\n'
    '            "runs": 3,\n'
    '            "passed": false,\n'
    '            "avg_run_seconds": 10,\n'
    '            "spec_hash": "a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2"\n'
    "          }\n"
    "        ],\n"
    '        "summary": {\n'
    '          "passed": 1,\n'
    '          "failed": 1,\n'
    '          "total": 2,\n'
    '          "pass_rate": 0.5,\n'
    '          "avg_run_seconds": 11.2,\n'
    '          "estimate": {\n'
    '            "input_tokens": 1396,\n'
    '            "input_cost_usd": 0.001396\n'
    "          }\n"
    "        },\n"
    '        "previous": {\n'
    '          "ran_at": "2026-06-01T10:00:00Z",\n'
    '          "summary": {\n'
    '            "passed": 0,\n'
    '            "failed": 1,\n'
    '            "total": 1,\n'
    '            "pass_rate": 0,\n'
    '            "avg_run_seconds": 9.5\n'
    "          },\n"
    '          "results": [\n'
    "            {\n"
    '              "query": "write a poem",\n'
    '              "should_trigger": false,\n'
    '              "hits": 3,\n'
    '              "runs": 3,\n'
    '              "passed": false,\n'
    '              "avg_run_seconds": 9.5,\n'
    '              "spec_hash": "a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2"\n'
    "            }\n"
    "          ]\n"
    "        }\n"
    "      },\n"
    '      "evals": {\n'
    '        "provider": "anthropic",\n'
    '        "model": "claude-haiku-4-5",\n'
    '        "display": "Claude Haiku 4.5",\n'
    '        "tool_version": "0.7.0",\n'
    '        "ran_at": "2026-07-02T19:20:00Z",\n'
    '        "executed": true,\n'
    '        "content_hash": "d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1",\n'
    '        "timeout_seconds": 600,\n'
    '        "pricing": null,\n'
    '        "results": [\n'
    "          {\n"
    '            "id": "1",\n'
    '            "name": "greets",\n'
    '            "passed": true,\n'
    '            "estimate": {\n'
    '              "input_tokens": 1405\n'
    "            },\n"
    '            "measured": {\n'
    '              "input_tokens": 10,\n'
    '              "cache_read_input_tokens": 0,\n'
    '              "output_tokens": 20,\n'
    '              "cost_usd": 0.272048\n'
    "            },\n"
    '            "expectations": [\n'
    "              {\n"
    '                "type": "llm",\n'
    '                "text": "says hello",\n'
    '                "passed": true,\n'
    '                "evidence": "it did",\n'
    '                "source": "expectation"\n'
    "              },\n"
    "              {\n"
    '                "type": "command",\n'
    '                "run": "test -f a \\u0026\\u0026 echo \\u003cok\\u003e",\n'
    '                "requires": "sh",\n'
    '                "expect_exit": 0,\n'
    '                "text": "command exits 0",\n'
    '                "passed": null,\n'
    '                "evidence": "",\n'
    '                "source": "assertion"\n'
    "              }\n"
    "            ],\n"
    '            "summary": {\n'
    '              "passed": 1,\n'
    '              "failed": 0,\n'
    '              "total": 2,\n'
    '              "pass_rate": 1,\n'
    '              "skipped": 1\n'
    "            },\n"
    '            "execution_metrics": {\n'
    '              "tool_calls": {\n'
    '                "Bash": 2,\n'
    '                "Read": 1\n'
    "              },\n"
    '              "total_tool_calls": 3\n'
    "            },\n"
    '            "timing": {\n'
    '              "total_tokens": 30,\n'
    '              "executor_duration_seconds": 56.3\n'
    "            },\n"
    '            "spec_hash": "e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1"\n'
    "          },\n"
    "          {\n"
    '            "id": "2",\n'
    '            "runtime_error": "claude run error (error_max_turns): Reached maximum number of turns (20)",\n'
    '            "timing": {\n'
    '              "executor_duration_seconds": 0.05\n'
    "            },\n"
    '            "spec_hash": "e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2"\n'
    "          }\n"
    "        ],\n"
    '        "summary": {\n'
    '          "passed": 1,\n'
    '          "failed": 0,\n'
    '          "errored": 1,\n'
    '          "total": 2,\n'
    '          "pass_rate": 1,\n'
    '          "avg_run_seconds": 28.2,\n'
    '          "estimate": {\n'
    '            "input_tokens": 1405\n'
    "          },\n"
    '          "measured": {\n'
    '            "input_tokens": 10,\n'
    '            "cache_read_input_tokens": 0,\n'
    '            "output_tokens": 20,\n'
    '            "cost_usd": 0.272048\n'
    "          }\n"
    "        },\n"
    '        "baseline": {\n'
    '          "ran_at": "2026-07-02T19:20:00Z",\n'
    '          "summary": {\n'
    '            "passed": 0,\n'
    '            "failed": 1,\n'
    '            "total": 1,\n'
    '            "pass_rate": 0,\n'
    '            "avg_run_seconds": 0\n'
    "          },\n"
    '          "results": [\n'
    "            {\n"
    '              "id": "1",\n'
    '              "passed": false,\n'
    '              "summary": {\n'
    '                "passed": 0,\n'
    '                "failed": 2,\n'
    '                "total": 2,\n'
    '                "pass_rate": 0\n'
    "              },\n"
    '              "timing": {\n'
    '                "executor_duration_seconds": 1e-7\n'
    "              },\n"
    '              "fingerprint": "f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1"\n'
    "            }\n"
    "          ]\n"
    "        },\n"
    '        "previous": {\n'
    '          "summary": {\n'
    '            "total": 0\n'
    "          }\n"
    "        }\n"
    "      }\n"
    "    },\n"
    '    "openai/gpt-5.4": {\n'
    '      "evals": {\n'
    '        "provider": "openai",\n'
    '        "model": "gpt-5.4",\n'
    '        "display": "GPT-5.4",\n'
    '        "harness": "codex",\n'
    '        "tool_version": "v0.5.0-6-g47ca9ac",\n'
    '        "ran_at": "2026-07-03T08:00:00Z",\n'
    '        "executed": false,\n'
    '        "timeout_seconds": 600,\n'
    '        "pricing": {\n'
    '          "input_per_mtok": 2.5,\n'
    '          "output_per_mtok": null\n'
    "        },\n"
    '        "results": [\n'
    "          {\n"
    '            "id": "1",\n'
    '            "estimate": {\n'
    '              "input_tokens": 1500,\n'
    '              "input_cost_usd": 0.00375\n'
    "            }\n"
    "          }\n"
    "        ],\n"
    '        "summary": {\n'
    '          "total": 1,\n'
    '          "estimate": {\n'
    '            "input_tokens": 1500,\n'
    '            "input_cost_usd": 0.00375\n'
    "          }\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
)


def load_fixture() -> R.ResultsFile:
    return R.from_document(json.loads(FIXTURE))


def header(**kw: object) -> R.EntryHeader:
    base: dict[str, object] = {
        "provider": "anthropic",
        "model": "claude-haiku-4-5",
        "display": "Claude Haiku 4.5",
        "harness": "claude",
        "tool_version": "0.1.0",
        "ran_at": "2026-08-01T00:00:00Z",
        "executed": True,
        "content_hash": "new",
        "timeout_seconds": 120,
        "pricing": R.Pricing(input_per_mtok=1.0, output_per_mtok=5.0),
    }
    base.update(kw)
    return R.EntryHeader(**base)  # type: ignore[arg-type]


def tr(
    query: str, passed: bool | None = True, secs: float | None = 1.0, **kw: object
) -> R.TriggerResult:
    return R.TriggerResult(
        query=query,
        should_trigger=True,
        hits=3 if passed else 0,
        runs=3,
        passed=passed,
        avg_run_seconds=secs,
        **kw,  # type: ignore[arg-type]
    )


def er(
    eid: str, passed: bool | None = True, secs: float | None = 2.0, **kw: object
) -> R.EvalResult:
    timing = R.Timing(executor_duration_seconds=secs) if secs is not None else None
    return R.EvalResult(id=eid, passed=passed, timing=timing, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------ encode / decode


def test_fixture_round_trips_byte_identically() -> None:
    f = load_fixture()
    assert encoding.encode_json(R.to_document(f)) == FIXTURE


def test_fixture_validates_against_the_shipped_schema() -> None:
    from evolve_action.specs import schema_validator

    doc = R.to_document(load_fixture())
    assert [e.message for e in schema_validator("results").iter_errors(doc)] == []


def test_fixture_values_and_kinds() -> None:
    f = load_fixture()
    t = f.models[HAIKU].triggers
    e = f.models[HAIKU].evals
    assert t is not None and e is not None
    assert t.header.pricing == R.Pricing(input_per_mtok=1.0, output_per_mtok=5.0)
    assert t.results[0].query == "say hi to <Bob> & café"
    assert t.results[1].estimate is None and t.results[1].avg_run_seconds == 10.0
    assert e.header.pricing is None and e.header.harness == ""
    assert e.results[0].expectations[1].passed is None
    assert e.results[0].expectations[1].expect_exit == 0
    assert e.results[0].execution_metrics == R.ExecutionMetrics(
        tool_calls={"Bash": 2, "Read": 1}, total_tool_calls=3
    )
    assert e.results[1].runtime_error.startswith("claude run error")
    assert e.baseline is not None and e.baseline.results[0].fingerprint == "f1" * 32
    assert e.previous == R.EvalSnapshot()
    g = f.models[GPT].evals
    assert g is not None and not g.header.executed
    assert g.header.pricing == R.Pricing(input_per_mtok=2.5, output_per_mtok=None)


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"query": "q"}, R.TriggerResult(query="q")),
        ({"Query": "q", "SHOULD_TRIGGER": True}, R.TriggerResult(query="q", should_trigger=True)),
        ({"query": None, "hits": None, "passed": False}, R.TriggerResult(passed=False)),
        ({"query": "q", "extra": [1, 2], "$schema": "x"}, R.TriggerResult(query="q")),
        (
            {"query": "q", "hits": 0, "avg_run_seconds": 3},
            R.TriggerResult(query="q", hits=0, avg_run_seconds=3.0),
        ),
    ],
    ids=[
        "minimal",
        "case-insensitive-keys",
        "null-is-zero",
        "unknown-keys-dropped",
        "int-as-float",
    ],
)
def test_go_decoding_rules(doc: dict[str, object], expected: R.TriggerResult) -> None:
    f = R.from_document({"schema": 5, "models": {HAIKU: {"triggers": {"results": [doc]}}}})
    t = f.models[HAIKU].triggers
    assert t is not None
    assert t.results == (expected,)


@pytest.mark.parametrize(
    "bad",
    [
        {"hits": 1.5},
        {"hits": True},
        {"passed": "true"},
        {"query": 3},
        {"estimate": [1]},
    ],
    ids=["float-for-int", "bool-for-int", "string-for-bool", "int-for-string", "array-for-object"],
)
def test_wrong_kinds_fail_the_whole_decode(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        R.from_document(
            {"schema": 5, "models": {HAIKU: {"triggers": {"results": [{"query": "q", **bad}]}}}}
        )


def test_emission_rules_pointer_vs_omitempty() -> None:
    f = R.ResultsFile(
        plugin="p",
        skill="s",
        models={
            HAIKU: R.ModelEntry(
                triggers=R.TriggersEntry(
                    header=R.EntryHeader(executed=False),
                    results=(R.TriggerResult(query="q", hits=0, passed=False, spec_hash=""),),
                )
            )
        },
    )
    doc = R.to_document(f)
    t = doc["models"][HAIKU]["triggers"]
    assert list(t) == [
        "provider", "model", "display", "tool_version", "ran_at", "executed",
        "timeout_seconds", "pricing", "results", "summary",
    ]  # fmt: skip
    assert t["pricing"] is None and t["executed"] is False
    assert t["results"] == [{"query": "q", "should_trigger": False, "hits": 0, "passed": False}]
    assert t["summary"] == {"total": 0}


def test_empty_models_is_omitted() -> None:
    assert R.to_document(R.ResultsFile(plugin="p", skill="s")) == {
        "schema": 5,
        "plugin": "p",
        "skill": "s",
    }


def test_plugin_and_skill_are_overwritten() -> None:
    f = R.from_document({"schema": 5, "plugin": "old", "skill": "old"}, plugin="p", skill="s")
    assert (f.plugin, f.skill) == ("p", "s")


# ------------------------------------------------------------------ summaries


def test_fixture_summaries_recompute() -> None:
    f = load_fixture()
    t = f.models[HAIKU].triggers
    e = f.models[HAIKU].evals
    g = f.models[GPT].evals
    assert t is not None and e is not None and g is not None and e.baseline is not None
    assert R.summarise_triggers(t.results) == t.summary
    assert R.summarise_evals(e.results) == e.summary
    assert R.summarise_evals(e.baseline.results) == e.baseline.summary
    assert R.summarise_evals(g.results, executed=False) == g.summary


@pytest.mark.parametrize(
    ("results", "executed", "expected"),
    [
        ((), True, R.TriggerSummary(passed=0, failed=0, total=0)),
        ((), False, R.TriggerSummary(total=0)),
        (
            (tr("a", True, 1.0), tr("b", False, 2.0), tr("c", None, None)),
            True,
            R.TriggerSummary(passed=1, failed=1, total=3, pass_rate=0.5, avg_run_seconds=1.5),
        ),
        (
            (tr("a", True, 0.1), tr("b", True, 0.2), tr("c", False, 0.25)),
            True,
            # mean 0.18333 → 0.2; rate 2/3 → 0.666667 (half away from zero, not banker's)
            R.TriggerSummary(passed=2, failed=1, total=3, pass_rate=0.666667, avg_run_seconds=0.2),
        ),
        (
            (
                tr("a", estimate=R.Estimate(input_tokens=10, input_cost_usd=0.0000015)),
                tr("b", estimate=R.Estimate(input_tokens=5)),
                tr("c"),
            ),
            False,
            R.TriggerSummary(
                total=3, estimate=R.Estimate(input_tokens=15, input_cost_usd=0.000002)
            ),
        ),
        (
            (tr("a", estimate=R.Estimate(input_tokens=7)),),
            True,
            R.TriggerSummary(
                passed=1,
                failed=0,
                total=1,
                pass_rate=1.0,
                avg_run_seconds=1.0,
                estimate=R.Estimate(input_tokens=7),
            ),
        ),
    ],
    ids=[
        "empty",
        "empty-count-only",
        "verdictless-excluded",
        "go-rounding",
        "estimate-cost-sum",
        "estimate-no-cost",
    ],
)
def test_summarise_triggers(
    results: tuple[R.TriggerResult, ...], executed: bool, expected: R.TriggerSummary
) -> None:
    assert R.summarise_triggers(results, executed=executed) == expected


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        ((), R.EvalSummary(passed=0, failed=0, total=0)),
        (
            (
                er("1", True, 10.0),
                er("2", False, 20.0),
                er("3", None, 30.0, runtime_error="boom"),
                er("4", None, None),
            ),
            R.EvalSummary(
                passed=1, failed=1, errored=1, total=4, pass_rate=0.5, avg_run_seconds=20.0
            ),
        ),
        (
            (
                er("1", measured=R.Measured(input_tokens=1, output_tokens=2, cost_usd=0.1)),
                er(
                    "2",
                    measured=R.Measured(input_tokens=3, cache_read_input_tokens=4, cost_usd=0.2),
                ),
                er("3"),
            ),
            R.EvalSummary(
                passed=3,
                failed=0,
                total=3,
                pass_rate=1.0,
                avg_run_seconds=2.0,
                measured=R.Measured(
                    input_tokens=4, cache_read_input_tokens=4, output_tokens=2, cost_usd=0.3
                ),
            ),
        ),
    ],
    ids=["empty", "errored-and-verdictless", "measured-fieldwise"],
)
def test_summarise_evals(results: tuple[R.EvalResult, ...], expected: R.EvalSummary) -> None:
    assert R.summarise_evals(results) == expected


def test_summarise_grades_counts_skips_apart() -> None:
    a = [
        R.GradedAssertion(passed=True),
        R.GradedAssertion(passed=None),
        R.GradedAssertion(passed=False),
    ]
    assert R.summarise_grades(a) == R.GradeSummary(
        passed=1, failed=1, total=3, pass_rate=0.5, skipped=1
    )
    assert R.summarise_grades([R.GradedAssertion(passed=None)]).pass_rate is None


# ------------------------------------------------------------------ replace / merge / rotate


def stored_triggers(executed: bool = True) -> R.TriggersEntry:
    results = (
        tr("a", True, 1.0, spec_hash="ha"),
        tr("b", False, 2.0, spec_hash="hb"),
        tr("gone", True),
    )
    return R.TriggersEntry(
        header=header(ran_at="2026-01-01T00:00:00Z", content_hash="old", executed=executed),
        results=results,
        summary=R.summarise_triggers(results, executed=executed),
        previous=R.TriggerSnapshot(
            ran_at="2025-01-01T00:00:00Z", summary=R.TriggerSummary(total=9)
        ),
    )


def test_replace_trigger_entry_merges_in_spec_order_and_rotates_previous() -> None:
    old = stored_triggers()
    fresh = {"b": tr("b", True, 4.0, spec_hash="hb")}
    new = R.replace_trigger_entry(
        old, header=header(runs_per_query=3), fresh=fresh, valid_queries=["c", "b", "a"]
    )
    assert [r.query for r in new.results] == ["b", "a"]  # c never ran, "gone" pruned
    assert new.results[0] is fresh["b"] and new.results[1] is old.results[0]
    assert new.summary == R.TriggerSummary(
        passed=2, failed=0, total=2, pass_rate=1.0, avg_run_seconds=2.5
    )
    assert new.previous == R.TriggerSnapshot(
        ran_at=old.header.ran_at, summary=old.summary, results=old.results
    )
    assert new.header.content_hash == "new" and new.header.runs_per_query == 3


def test_previous_absent_when_old_was_count_only() -> None:
    new = R.replace_trigger_entry(
        stored_triggers(executed=False), header=header(), fresh={}, valid_queries=["a"]
    )
    assert new.previous is None


def test_count_only_run_carries_previous_over() -> None:
    old = stored_triggers()
    new = R.replace_trigger_entry(
        old,
        header=header(executed=False),
        fresh={"a": R.TriggerResult(query="a")},
        valid_queries=["a", "b"],
    )
    assert new.previous is old.previous
    assert new.summary == R.TriggerSummary(total=2)


def test_no_old_entry() -> None:
    new = R.replace_trigger_entry(
        None, header=header(), fresh={"a": tr("a")}, valid_queries=["a", "a", "b"]
    )
    assert [r.query for r in new.results] == ["a"] and new.previous is None


def test_interim_write_keeps_old_content_hash() -> None:
    old = stored_triggers()
    interim = R.replace_trigger_entry(
        old, header=header(), fresh={}, valid_queries=["a"], complete=False
    )
    assert interim.header.content_hash == "old"
    assert (
        R.replace_trigger_entry(
            None, header=header(), fresh={}, valid_queries=[], complete=False
        ).header.content_hash
        == "new"
    )


def stored_evals() -> R.EvalsEntry:
    results = (
        er(
            "1",
            True,
            5.0,
            name="one",
            spec_hash="s1",
            expectations=(R.GradedAssertion(type="llm", passed=True),),
        ),
        er("2", False, 6.0, spec_hash="s2"),
    )
    base = (
        er("1", False, 1.0, fingerprint="f1"),
        er("2", True, 1.0, fingerprint="f2-old"),
        er("9", True, 1.0, fingerprint="f9"),
    )
    return R.EvalsEntry(
        header=header(ran_at="2026-01-01T00:00:00Z", content_hash="old"),
        results=results,
        summary=R.summarise_evals(results),
        baseline=R.EvalSnapshot(
            ran_at="2026-01-01T00:00:00Z", summary=R.summarise_evals(base), results=base
        ),
    )


def test_replace_eval_entry_trims_previous_and_overlays_baseline() -> None:
    old = stored_evals()
    fresh = {"2": er("2", True, 7.0, spec_hash="s2b", measured=R.Measured(input_tokens=1))}
    fresh_base = {"2": er("2", False, 3.0, fingerprint="f2", name="dropped", spec_hash="x")}
    new = R.replace_eval_entry(
        old,
        header=header(ran_at="2026-08-01T00:00:00Z"),
        fresh=fresh,
        valid_ids=["1", "2", "3"],
        fresh_baselines=fresh_base,
    )
    assert [r.id for r in new.results] == ["1", "2"]
    assert new.summary.passed == 2 and new.summary.pass_rate == 1.0
    assert new.previous is not None
    assert new.previous.ran_at == "2026-01-01T00:00:00Z"
    assert new.previous.results[0] == R.EvalResult(
        id="1", passed=True, timing=R.Timing(executor_duration_seconds=5.0)
    )
    assert new.baseline is not None
    assert new.baseline.ran_at == "2026-08-01T00:00:00Z"
    assert [(r.id, r.fingerprint, r.name) for r in new.baseline.results] == [
        ("1", "f1", ""),
        ("2", "f2", ""),
    ]
    assert new.baseline.summary == R.summarise_evals(new.baseline.results)


def test_baseline_kept_with_old_ran_at_when_none_reran() -> None:
    old = stored_evals()
    new = R.replace_eval_entry(old, header=header(), fresh={"1": er("1")}, valid_ids=["1"])
    assert new.baseline is not None and new.baseline.ran_at == "2026-01-01T00:00:00Z"
    assert [r.id for r in new.baseline.results] == ["1"]


def test_baseline_absent_when_nothing_remains_and_count_only_keeps_it() -> None:
    old = stored_evals()
    assert (
        R.replace_eval_entry(old, header=header(), fresh={"3": er("3")}, valid_ids=["3"]).baseline
        is None
    )
    kept = R.replace_eval_entry(old, header=header(executed=False), fresh={}, valid_ids=["1"])
    assert kept.baseline is old.baseline and kept.previous is old.previous


def test_trim_eval_result_keeps_only_snapshot_fields() -> None:
    full = R.EvalResult(
        id="1",
        name="n",
        runtime_error="",
        passed=True,
        estimate=R.Estimate(input_tokens=1),
        measured=R.Measured(output_tokens=2),
        expectations=(R.GradedAssertion(type="llm"),),
        summary=R.GradeSummary(passed=1, total=1),
        execution_metrics=R.ExecutionMetrics(total_tool_calls=0),
        timing=R.Timing(total_tokens=3, executor_duration_seconds=4.0),
        spec_hash="s",
        fingerprint="f",
    )
    assert R.trim_eval_result(full) == R.EvalResult(
        id="1",
        passed=True,
        estimate=R.Estimate(input_tokens=1),
        measured=R.Measured(output_tokens=2),
        summary=R.GradeSummary(passed=1, total=1),
        timing=R.Timing(executor_duration_seconds=4.0),
        fingerprint="f",
    )


# ------------------------------------------------------------------ migrations


V4 = {
    "schema": 4,
    "plugin": "x",
    "skill": "y",
    "triggers": {
        HAIKU: {
            "provider": "anthropic",
            "model": "claude-haiku-4-5",
            "display": "Claude Haiku 4.5",
            "tool_version": "0.4.0",
            "ran_at": "2026-01-01T00:00:00Z",
            "executed": True,
            "timeout_seconds": 120,
            "pricing": None,
            "results": [{"query": "q", "should_trigger": True, "passed": True}],
            "summary": {"passed": 1, "failed": 0, "total": 1, "pass_rate": 1},
            "previous": {
                "ran_at": "2025-12-01T00:00:00Z",
                "summary": {"total": 2},
                "cases": {
                    "z": {"hits": 1, "runs": 3, "passed": False},
                    "a": {"avg_run_seconds": 2},
                },
            },
        }
    },
    "evals": {
        HAIKU: {
            "provider": "anthropic",
            "model": "claude-haiku-4-5",
            "executed": True,
            "results": [{"id": "1", "passed": True}],
            "summary": {"passed": 1, "failed": 0, "total": 1},
            "baseline": {
                "summary": {"total": 1},
                "cases": {
                    "1": {
                        "passed": False,
                        "pass_rate": 0.5,
                        "assert_passed": 1,
                        "assert_total": 2,
                        "fingerprint": "f",
                    },
                },
            },
            "previous": {"cases": {"2": {"errored": True, "avg_run_seconds": 3.5}}},
        },
        GPT: {"provider": "openai", "results": [], "summary": {"total": 0}},
    },
}


def test_migrate_v4() -> None:
    f = R.migrate_document(V4, plugin="p", skill="s")
    assert (f.schema, f.plugin, f.skill) == (5, "p", "s")
    assert list(f.models) == [HAIKU, GPT]
    t = f.models[HAIKU].triggers
    assert t is not None and t.previous is not None
    assert t.results == (R.TriggerResult(query="q", should_trigger=True, passed=True),)
    assert t.previous.results == (
        R.TriggerResult(query="a", avg_run_seconds=2.0),
        R.TriggerResult(query="z", hits=1, runs=3, passed=False),
    )
    e = f.models[HAIKU].evals
    assert e is not None and e.baseline is not None and e.previous is not None
    assert e.baseline.results == (
        R.EvalResult(
            id="1",
            passed=False,
            summary=R.GradeSummary(passed=1, failed=0, total=2, pass_rate=0.5),
            fingerprint="f",
        ),
    )
    assert e.previous.results == (
        R.EvalResult(
            id="2",
            runtime_error="errored",
            summary=R.GradeSummary(),
            timing=R.Timing(executor_duration_seconds=3.5),
        ),
    )
    assert f.models[GPT].triggers is None


# ------------------------------------------------------------------ files


def write_doc(d: Path, name: str, text: str) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(text, encoding="utf-8")
    return p


def test_load_results_schema5_overwrites_names(tmp_path: Path) -> None:
    d = tmp_path / "plugins" / "demo" / "evals" / "greet"
    write_doc(d, "results.json", FIXTURE.replace('"plugin": "demo"', '"plugin": "other"'))
    loaded = R.load_results(d)
    assert loaded.file is not None and loaded.warning is None and loaded.migrated_from is None
    assert (loaded.file.plugin, loaded.file.skill) == ("demo", "greet")
    assert loaded.path == d / "results.json"


@pytest.mark.parametrize(
    "text",
    [
        '{"schema": 2, "models": {}}',
        "[]",
    ],
    ids=["too-old", "not-object"],
)
def test_load_results_unreadable_is_an_error(tmp_path: Path, text: str) -> None:
    d = tmp_path / "evals" / "s"
    write_doc(d, "results.json", text)
    with pytest.raises(SpecError, match="not a schema-5 results file"):
        R.load_results(d, root=tmp_path)
    assert (d / "results.json").read_text() == text


def test_load_results_newer_schema_is_fatal(tmp_path: Path) -> None:
    d = tmp_path / "evals" / "s"
    p = write_doc(d, "results.json", '{"schema": 6}')
    with pytest.raises(SpecError, match="is schema 6, written by a newer evolve"):
        R.load_results(d)
    assert p.read_text() == '{"schema": 6}'


def test_load_results_migrates_v4_in_memory(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    write_doc(d, "results.yaml", encoding.encode_yaml(V4))
    loaded = R.load_results(d)
    assert loaded.migrated_from == 4 and loaded.file is not None
    assert loaded.file == R.migrate_document(V4, plugin="p", skill="s")


def test_load_results_absent(tmp_path: Path) -> None:
    assert R.load_results(tmp_path) == R.LoadedResults(None, None, None, None)


@pytest.mark.parametrize("fmt", ["json", "jsonc", "yaml"])
def test_write_results_formats_and_sibling_cleanup(tmp_path: Path, fmt: encoding.Format) -> None:
    d = tmp_path / "p" / "evals" / "greet"
    for ext in ("json", "jsonc", "yaml", "yml"):
        if ext != fmt:
            write_doc(d, f"results.{ext}", "{}")
    f = load_fixture()
    path = R.write_results(d, f, fmt)
    assert path == d / f"results.{fmt}"
    assert sorted(p.name for p in d.iterdir()) == [f"results.{fmt}"]
    text = path.read_text(encoding="utf-8")
    if fmt == "json":
        assert text == FIXTURE
    else:
        prefix = "// " if fmt == "jsonc" else "# "
        assert text.startswith(prefix + "Maintained by evolve run; do not edit by hand.\n")
    assert R.load_results(d).file == msgspec.structs.replace(f, plugin="p")


def test_migrate_in_place(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    write_doc(d, "results.json", json.dumps(V4))
    assert R.migrate_in_place(d, "jsonc") == 4
    assert [p.name for p in d.iterdir()] == ["results.jsonc"]
    assert R.migrate_in_place(d, "jsonc") is None
    write_doc(d, "results.jsonc", '{"schema": 2}')
    with pytest.raises(SpecError, match="not a schema-5 results file"):
        R.migrate_in_place(d, "json")


def test_unit_record_writes_after_each_case_and_resumes(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    old = stored_triggers()
    writer = R.ResultsWriter(
        d, R.ResultsFile(plugin="p", skill="s", models={HAIKU: R.ModelEntry(triggers=old)}), "json"
    )
    rec = R.TriggerUnitRecord(
        old, header=header(), valid_queries=["a", "b", "c"], planned=["b", "c"]
    )
    writer.put_triggers(HAIKU, rec.add(tr("b", True, 3.0)))
    # A kill here leaves: b fresh, a stored, c absent; content hash still the old one.
    mid = R.load_results(d).file
    assert mid is not None
    t = mid.models[HAIKU].triggers
    assert t is not None
    assert [r.query for r in t.results] == ["a", "b"] and t.header.content_hash == "old"
    assert t.previous is not None and t.previous.results == old.results
    writer.put_triggers(HAIKU, rec.add(tr("c", False, 1.0)))
    done = R.load_results(d).file
    assert done is not None
    t2 = done.models[HAIKU].triggers
    assert t2 is not None
    assert [r.query for r in t2.results] == ["a", "b", "c"] and t2.header.content_hash == "new"
    assert t2.previous is not None and t2.previous.results == old.results  # snapshot of unit start
    assert writer.writes == 2


def test_eval_unit_record_with_baseline(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    writer = R.ResultsWriter(d, None, "yaml")
    rec = R.EvalUnitRecord(
        None, header=header(runs_per_query=0), valid_ids=["1", "2"], planned=["1", "2"]
    )
    writer.put_evals(HAIKU, rec.add(er("1"), baseline=er("1", False, fingerprint="fp")))
    e = writer.file.models[HAIKU].evals
    assert e is not None and e.baseline is not None and e.baseline.results[0].fingerprint == "fp"
    assert not rec.complete
    writer.put_evals(HAIKU, rec.add(er("2")))
    assert rec.complete
    loaded = R.load_results(d)
    assert loaded.path == d / "results.yaml" and loaded.file == writer.file


def test_make_header_and_ran_at() -> None:
    from datetime import UTC, datetime, timedelta, timezone

    from evolve_action import catalog

    m = catalog.BUILTIN_CATALOG.get(HAIKU)
    assert m is not None
    h = R.make_header(
        m,
        harness="claude",
        tool_version="0.1.0",
        ran_at=R.format_ran_at(
            datetime(2026, 7, 2, 21, 14, 43, 999, tzinfo=timezone(timedelta(hours=2)))
        ),
        executed=False,
        content_hash="c",
        timeout_seconds=120,
        runs_per_query=3,
    )
    assert (
        h.ran_at == "2026-07-02T19:14:43Z"
        and h.runs_per_query == 0
        and h.model == "claude-haiku-4-5"
    )
    assert h.pricing == R.Pricing(input_per_mtok=1.0, output_per_mtok=5.0)
    with pytest.raises(ValueError):
        R.format_ran_at(datetime(2026, 1, 1))  # noqa: DTZ001
    assert R.format_ran_at(datetime(2026, 1, 1, tzinfo=UTC)) == "2026-01-01T00:00:00Z"


def test_drop_and_foreign_models() -> None:
    f = load_fixture()
    assert R.foreign_model_keys(f, [HAIKU]) == [GPT]
    assert list(R.drop_models(f, [GPT]).models) == [HAIKU]


# ------------------------------------------------------------------ corpus


def test_corpus_results_round_trip_and_summaries(corpus: Path) -> None:
    files = sorted(corpus.glob("plugins/*/evals/*/results.*"))
    assert len(files) == 21
    for path in files:
        loaded = R.load_results(path.parent)
        assert loaded.file is not None and loaded.warning is None
        assert encoding.encode_json(R.to_document(loaded.file)) == path.read_text(
            encoding="utf-8"
        ), path
        for entry in loaded.file.models.values():
            if entry.triggers is not None:
                t = entry.triggers
                assert R.summarise_triggers(t.results, executed=t.header.executed) == t.summary
            if entry.evals is not None:
                e = entry.evals
                assert R.summarise_evals(e.results, executed=e.header.executed) == e.summary
                if e.baseline is not None:
                    assert R.summarise_evals(e.baseline.results) == e.baseline.summary


# Regressions found in review (QA regressions for results-file I/O: broken files are errors (never silently replaced), and).


CONFLICT = '{\n<<<<<<< HEAD\n  "schema": 5\n=======\n  "schema": 5\n>>>>>>> theirs\n}\n'


@pytest.mark.parametrize(
    ("name", "data", "line", "message"),
    [
        ("results.json", CONFLICT.encode(), 2, "unresolved git merge conflict"),
        ("results.yaml", b"schema: 5\nmodels:\n<<<<<<< HEAD\n", 3, "unresolved git merge conflict"),
        ("results.json", b'{"schema": 5,\n "models": {', 2, "stored results do not parse"),
        ("results.yaml", b"schema: 5\nmodels: [\n", 3, "stored results do not parse"),
        ("results.json", b'{"schema": 5, "x": "\xff"}', 1, "stored results do not parse"),
        (
            "results.json",
            b'{"schema": 5, "models": {"k": {"triggers": {"results": 3}}}}',
            None,
            "schema 5 results hold a value of the wrong kind",
        ),
        ("results.json", b'{"schema": 6}', None, "results file is schema 6"),
    ],
    ids=["conflict-json", "conflict-yaml", "syntax-json", "syntax-yaml", "not-utf8", "kind-5",
         "newer"],
)  # fmt: skip
def test_broken_results_are_an_error_and_left_untouched(
    tmp_path: Path, name: str, data: bytes, line: int | None, message: str
) -> None:
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    (d / name).write_bytes(data)
    with pytest.raises(SpecError) as info:
        R.load_results(d, root=tmp_path)
    assert message in info.value.message
    assert info.value.path == d / name
    assert info.value.line == line
    if "newer evolve" not in info.value.message:
        assert info.value.hint is not None and R.OVERWRITE_FLAG in info.value.hint
    assert (d / name).read_bytes() == data


@pytest.mark.parametrize("text", ['{"schema": 2, "models": {}}', "[]", '{"models": {}}', "7"])
def test_old_or_schemaless_results_are_an_error_now(tmp_path: Path, text: str) -> None:
    # Issue 9: nothing "starts fresh" any more; the file is an error and left untouched.
    d = tmp_path / "evals" / "s"
    d.mkdir(parents=True)
    (d / "results.json").write_text(text)
    with pytest.raises(SpecError, match="not a schema-5 results file"):
        R.load_results(d, root=tmp_path)
    assert (d / "results.json").read_text() == text


def test_check_writable_accepts_a_normal_directory(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    (d / "results.yaml").write_text("schema: 5\n")
    R.check_writable(d, "json")  # accepted, and nothing written by the check
    assert sorted(p.name for p in d.iterdir()) == ["results.yaml"]
    assert (d / "results.yaml").read_text() == "schema: 5\n"
    writer = R.ResultsWriter(d, None, "json", plugin="p", skill="s")
    path = writer.replace_file(writer.file)  # the write the check vouched for succeeds
    assert path == d / "results.json"
    assert R.load_results(d).file == writer.file
    assert sorted(p.name for p in d.iterdir()) == ["results.json"]


def test_check_writable_creates_a_missing_results_directory(tmp_path: Path) -> None:
    # skill-creator's layout: the definitions live in the skill, evals/<skill>/ may not exist yet
    d = tmp_path / "evals" / "s"
    R.check_writable(d, "json", root=tmp_path)
    assert d.is_dir() and list(d.iterdir()) == []


@pytest.mark.parametrize(
    "case", ["missing-dir", "dir-not-writable", "file-read-only", "file-is-dir"]
)
def test_check_writable_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    d = tmp_path / "evals" / "s"
    if case == "missing-dir":
        (tmp_path / "evals").write_text("a file where the directory would go")
    else:
        d.mkdir(parents=True)
    if case == "file-is-dir":
        (d / "results.json").mkdir()
    if case in ("dir-not-writable", "file-read-only"):
        (d / "results.jsonc").write_text("{}")
        blocked = d if case == "dir-not-writable" else d / "results.jsonc"
        real = os.access
        monkeypatch.setattr(
            os, "access", lambda p, mode: False if Path(p) == blocked else real(p, mode)
        )
    with pytest.raises(SpecError) as info:
        R.check_writable(d, "json", root=tmp_path)
    text = info.value.render(tmp_path)
    assert "cannot write results" in text and "nothing was written" in text


def test_writer_turns_os_errors_into_a_spec_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: Path, text: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(
        encoding, "atomic_write_text", refuse
    )  # the store writes through the facade
    writer = R.ResultsWriter(tmp_path, None, "json", plugin="p", skill="s")
    with pytest.raises(SpecError, match="cannot write results: Permission denied") as info:
        writer.replace_file(writer.file)
    assert info.value.path == tmp_path / "results.json"
    assert info.value.hint is not None and "--new" in info.value.hint
