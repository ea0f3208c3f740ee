"""`export`: AgentEvals rows and skill-creator artefacts against the documented shapes.

Shapes: skill-creator's `references/schemas.md` and seed 003 (`grading.json` expectations are
exactly `{text, passed, evidence}`; `timing.json`; `benchmark.json`'s `run_summary` with
`with_skill`/`without_skill` and `delta` strings, which the viewer reads, and seed 003's
`summaries`/`deltas`), the viewer's discovery rules (a run is a directory holding `outputs/`; its
prompt and integer `eval_id` come from `eval_metadata.json` in it or its parent; its grades from
`grading.json`), and AgentEvals' result rows (`evalId`, `score`, `verdict`, `hits`, `misses`,
`evaluatorResults[{name, type, score, weight, …}]`, `traceSummary`).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from tests.helpers.report_fixtures import (
    assertion,
    ev,
    eval_entry,
    make_single,
    write_results,
)

from evolve_action.cli import main
from evolve_action.flows import run_export
from evolve_action.flows._export import agentevals_rows, case_score, case_verdict
from evolve_action.flows._export_skill_creator import (
    benchmark_json,
    benchmark_markdown,
    eval_metadata_json,
    grading_json,
    timing_json,
)
from evolve_action.results import (
    EvalResult,
    ExecutionMetrics,
    GradedAssertion,
    GradeSummary,
    Measured,
    ModelEntry,
    ResultsFile,
    Timing,
)

S5 = "anthropic/claude-sonnet-5"


def suite_item(text: str, passed: bool | None, evidence: str) -> GradedAssertion:
    return GradedAssertion(
        type="llm", text=text, passed=passed, evidence=evidence, source="assertion"
    )


def suite_case(eid: str, items: list[GradedAssertion], *, passed: bool) -> Any:
    r = ev(eid, checks=items, secs=12.5, measured=Measured(input_tokens=100, output_tokens=50))
    return msgspec.structs.replace(
        r,
        passed=passed,
        execution_metrics=ExecutionMetrics(
            tool_calls={"Skill": 1, "Write": 2}, total_tool_calls=3, total_steps=4
        ),
        timing=Timing(total_tokens=150, executor_duration_seconds=12.5),
    )


SUITE_PASS = suite_case(
    "greeter-suite::lift",
    [
        suite_item("file-check (code_judge)", True, "score 1.00 w=1; hits: greeting.txt written"),
        suite_item("quality (rubric)", False, "score 0.67 w=2 — misses: [poem] Writes a poem"),
        suite_item("quality/[greets] Greets the user", True, "a friendly hello"),
        suite_item("quality/[poem] Writes a poem", False, "no poem"),
        suite_item("gate (composite)", True, "score 1.00 w=1"),
        suite_item("gate/safe (contains)", True, "score 1.00 w=1"),
        suite_item("gate/done (contains)", False, "score 0.00 w=1"),
    ],
    passed=True,
)
SUITE_BORDERLINE = suite_case(
    "greeter-suite::near",
    [
        suite_item("a (contains)", True, "score 1.00 w=1"),
        suite_item("b (llm_judge)", False, "score 0.40 w=1; reasoning"),
    ],
    passed=False,
)
EVOLVE_CASE = ev(
    "table",
    name="Table-driven tests",
    checks=[
        assertion("file tests.go exists", True, "tests.go exists"),
        assertion("go test passes", False, "exit 1"),
        assertion("tool Bash was called", None, "skipped: harness does not report tool calls"),
    ],
    secs=30.0,
    measured=Measured(input_tokens=10, output_tokens=20, cache_read_input_tokens=70, cost_usd=0.5),
)
ERRORED = ev("broken", error="agent timed out", secs=600.0)


def results_file() -> ResultsFile:
    entry = eval_entry(
        S5,
        [SUITE_PASS, SUITE_BORDERLINE, EVOLVE_CASE, ERRORED],
        baseline=[
            ev("greeter-suite::lift", checks=[assertion("x", False, "score 0.20 w=1")], secs=8.0),
            ev("table", checks=[assertion("a", True, "ok"), assertion("b", False, "no")]),
            ev("broken", checks=[assertion("a", True, "ok")], secs=5.0),
        ],
    )
    return ResultsFile(plugin="demo", skill="greeter", models={S5: ModelEntry(evals=entry)})


def entry() -> Any:
    e = results_file().models[S5].evals
    assert e is not None
    return e


# ---------------------------------------------------------------------------------------------
# Scores and verdicts


@pytest.mark.parametrize(
    ("result", "score", "verdict"),
    [
        # top-level evaluators only (members `gate/…` are not counted again): (1 + 0.67×2 + 1) / 4
        (SUITE_PASS, (1 + 0.67 * 2 + 1) / 4, "pass"),
        (SUITE_BORDERLINE, 0.7, "borderline"),
        (EVOLVE_CASE, 0.5, "fail"),  # evolve-format: the pass rate, verdict from `passed`
        (ERRORED, None, "skip"),
        # a suite case's baseline snapshot keeps no expectations: its pass rate, never borderline
        (
            EvalResult(
                id="s::c",
                passed=False,
                summary=GradeSummary(passed=7, failed=3, total=10, pass_rate=0.7),
            ),
            0.7,
            "fail",
        ),
    ],
    ids=["suite-pass", "suite-borderline", "evolve", "errored", "suite-baseline"],
)
def test_case_score_and_verdict(result: Any, score: float | None, verdict: str) -> None:
    got = case_score(result)
    assert got == pytest.approx(score) if score is not None else got is None
    assert case_verdict(result, got) == verdict


# ---------------------------------------------------------------------------------------------
# AgentEvals rows

# AgentV's EvaluationResult (AV-FEB `evaluation/types.ts`: the required keys), the spec's case
# verdict and AgentV's later executionStatus
ROW_KEYS = {
    "timestamp",
    "evalId",
    "score",
    "hits",
    "misses",
    "candidateAnswer",
    "target",
    "verdict",
    "executionStatus",
}
TRACE_KEYS = {"eventCount", "toolNames", "toolCallsByName", "errorCount"}
EVALUATOR_KEYS = {"name", "type", "score", "weight", "verdict", "hits", "misses", "reasoning"}


def test_agentevals_rows_shape() -> None:
    rf = results_file()
    with_rows, without_rows = agentevals_rows(rf, S5, entry())
    assert [r["evalId"] for r in with_rows] == [
        "greeter-suite::lift",
        "greeter-suite::near",
        "table",
        "broken",
    ]
    assert [r["evalId"] for r in without_rows] == ["greeter-suite::lift", "table", "broken"]
    for row in with_rows + without_rows:
        assert set(row) >= ROW_KEYS, row
        assert isinstance(row["score"], float) and 0.0 <= row["score"] <= 1.0
        assert row["verdict"] in {"pass", "borderline", "fail", "skip"}
        assert row["target"] == S5
        stack = list(row["evaluatorResults"])
        while stack:  # members nest in their parent's own evaluatorResults
            er = stack.pop()
            assert set(er) - {"evaluatorResults"} == EVALUATOR_KEYS
            stack.extend(er.get("evaluatorResults", []))
        if "eventCount" in row.get("traceSummary", {}):
            assert set(row["traceSummary"]) >= TRACE_KEYS
        json.dumps(row)  # serialisable
    lift = with_rows[0]
    assert lift["dataset"] == "greeter-suite" and lift["timestamp"] == "2026-08-10T11:00:00Z"
    assert lift["score"] == pytest.approx(0.835) and lift["verdict"] == "pass"
    assert lift["hits"] == ["file-check", "gate"] and lift["misses"] == ["quality"]

    def tree(results: list[dict[str, Any]]) -> list[Any]:
        return [
            (e["name"], e["type"], e["score"], e["weight"], tree(e.get("evaluatorResults", [])))
            for e in results
        ]

    assert tree(lift["evaluatorResults"]) == [
        ("file-check", "code_judge", 1.0, 1.0, []),
        (
            "quality",
            "rubric",
            0.67,
            2.0,
            [
                ("[greets] Greets the user", "llm", 1.0, 1.0, []),  # criteria: below the rubric
                ("[poem] Writes a poem", "llm", 0.0, 1.0, []),
            ],
        ),
        (
            "gate",
            "composite",
            1.0,
            1.0,
            [("safe", "contains", 1.0, 1.0, []), ("done", "contains", 0.0, 1.0, [])],
        ),
    ]
    assert lift["candidateAnswer"] == "" and lift["executionStatus"] == "ok"
    assert lift["traceSummary"] == {
        "eventCount": 3,
        "toolNames": ["Skill", "Write"],
        "toolCallsByName": {"Skill": 1, "Write": 2},
        "errorCount": 0,
        "llmCallCount": 4,
        "tokenUsage": {"input": 100, "output": 50},
        "durationMs": 12500,
    }
    assert lift["evolve"] == {
        "plugin": "demo",
        "skill": "greeter",
        "configuration": "with_skill",
        "passed": True,
    }
    table = with_rows[2]
    assert table["dataset"] == "greeter" and table["verdict"] == "fail"
    assert table["hits"] == ["file tests.go exists"] and table["misses"] == ["go test passes"]
    assert [e["verdict"] for e in table["evaluatorResults"]] == ["pass", "fail", "skip"]
    # no tool counts stored: no made-up eventCount 0
    assert "eventCount" not in table["traceSummary"]
    assert table["traceSummary"]["tokenUsage"] == {"input": 10, "output": 20, "cached": 70}
    assert table["traceSummary"]["costUsd"] == 0.5
    broken = with_rows[3]
    assert broken["verdict"] == "skip" and broken["error"] == "agent timed out"
    assert broken["executionStatus"] == "execution_error"
    assert table["executionStatus"] == "quality_failure"
    assert without_rows[0]["evolve"]["configuration"] == "without_skill"
    assert without_rows[0]["timestamp"] == "2026-08-01T11:00:00Z"


# ---------------------------------------------------------------------------------------------
# skill-creator artefacts


def test_grading_json_shape() -> None:
    g = grading_json(EVOLVE_CASE)
    assert g["expectations"] == [
        {"text": "file tests.go exists", "passed": True, "evidence": "tests.go exists"},
        {"text": "go test passes", "passed": False, "evidence": "exit 1"},
    ]
    for e in g["expectations"]:  # the viewer reads exactly these names; `passed` is a boolean
        assert set(e) == {"text", "passed", "evidence"} and isinstance(e["passed"], bool)
    assert g["summary"] == {"passed": 1, "failed": 1, "total": 2, "pass_rate": 0.5}
    assert g["pass_rate"] == 0.5  # seed 003
    assert g["metrics"] == {"execution_time_ms": 30000, "tokens_used": 100}
    assert g["timing"]["total_duration_seconds"] == 30.0
    assert g["user_notes_summary"]["uncertainties"] == [
        "skipped: tool Bash was called — skipped: harness does not report tool calls"
    ]
    assert g["claims"] == []
    errored = grading_json(ERRORED)
    assert errored["expectations"] == [] and errored["summary"]["total"] == 0
    assert errored["user_notes_summary"]["uncertainties"] == ["runtime error: agent timed out"]


def test_timing_json_shape() -> None:
    assert timing_json(SUITE_PASS) == {
        "total_tokens": 150,
        "duration_ms": 12500,
        "total_duration_seconds": 12.5,
        "executor_duration_seconds": 12.5,
    }
    assert timing_json(ev("x", secs=None)) == {
        "total_tokens": 0,
        "duration_ms": 0,
        "total_duration_seconds": 0.0,
    }


def test_eval_metadata_json_shape() -> None:
    meta = eval_metadata_json(3, EVOLVE_CASE, "Write table-driven tests")
    assert meta == {
        "eval_id": 3,
        "eval_name": "Table-driven tests",
        "prompt": "Write table-driven tests",
        "assertions": [
            {"id": "assertion-1", "text": "file tests.go exists"},
            {"id": "assertion-2", "text": "go test passes"},
            {"id": "assertion-3", "text": "tool Bash was called"},
        ],
    }


STATS = {"mean", "stddev", "min", "max"}
RESULT_KEYS = {"pass_rate", "passed", "failed", "total", "time_seconds", "tokens", "tool_calls"}


def test_benchmark_json_shape() -> None:
    rf = results_file()
    b = benchmark_json(rf, S5, entry(), skill_path="demo/greeter")
    assert set(b) >= {"metadata", "runs", "run_summary", "notes", "summaries", "deltas"}
    meta = b["metadata"]
    assert meta["skill_name"] == "greeter" and meta["executor_model"] == S5
    assert meta["evals_run"] == ["greeter-suite::lift", "greeter-suite::near", "table", "broken"]
    rs = b["run_summary"]
    assert set(rs) == {"with_skill", "without_skill", "delta"}
    for config in ("with_skill", "without_skill"):
        assert set(rs[config]) == {"pass_rate", "time_seconds", "tokens"}
        for metric in rs[config].values():
            assert set(metric) == STATS
    for key, pattern in (
        ("pass_rate", r"[+-]\d+\.\d\d"),
        ("time_seconds", r"[+-]\d+\.\d"),
        ("tokens", r"[+-]\d+"),
    ):
        assert re.fullmatch(pattern, rs["delta"][key]), rs["delta"]
    for run in b["runs"]:
        assert run["configuration"] in {"with_skill", "without_skill"}
        assert run["config"] == run["configuration"]  # seed 003's key
        assert isinstance(run["eval_id"], int) and run["run_number"] == 1
        assert set(run["result"]) >= RESULT_KEYS
        for e in run["expectations"]:
            assert set(e) == {"text", "passed", "evidence"}
    # with skill: the expectation pass rates of the three graded runs (4/7, 1/2, 1/2; the
    # errored run is listed but not counted)
    mean = (4 / 7 + 0.5 + 0.5) / 3
    assert rs["with_skill"]["pass_rate"]["mean"] == round(mean, 4)
    assert [r["result"]["pass_rate"] for r in b["runs"] if r["configuration"] == "with_skill"] == [
        pytest.approx(4 / 7),
        0.5,
        0.5,
        0.0,
    ]
    # tokens and times only where measured (the errored run and unmeasured baselines not as 0)
    assert rs["with_skill"]["tokens"] == {
        "mean": round(400 / 3, 4),
        "stddev": pytest.approx(28.8675, abs=1e-4),
        "min": 100,
        "max": 150,
    }
    assert rs["without_skill"]["tokens"] == {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    assert rs["without_skill"]["time_seconds"]["mean"] == round((8 + 30 + 5) / 3, 4)
    base_rates = [0.0, 0.5, 1.0]  # lift, table, broken (baseline)
    assert rs["without_skill"]["pass_rate"]["mean"] == round(sum(base_rates) / 3, 4)
    assert rs["without_skill"]["pass_rate"]["stddev"] == 0.5
    assert rs["delta"]["pass_rate"] == f"{round(mean, 4) - 0.5:+.2f}"
    assert b["summaries"]["with_skill"] == {
        "mean_pass_rate": rs["with_skill"]["pass_rate"]["mean"],
        "stddev": rs["with_skill"]["pass_rate"]["stddev"],
    }
    assert b["deltas"]["pass_rate_delta"] == pytest.approx(round(mean, 4) - 0.5)
    assert any("runtime error" in n for n in b["notes"])
    md = benchmark_markdown(b)
    assert md.startswith("# Skill Benchmark: greeter\n")
    assert "| Metric | With Skill | Without Skill | Delta |" in md


def test_benchmark_without_baseline_says_so() -> None:
    e = eval_entry(S5, [EVOLVE_CASE])
    b = benchmark_json(ResultsFile(skill="s", models={}), S5, e)
    assert b["run_summary"]["without_skill"]["pass_rate"] == {
        "mean": 0.0,
        "stddev": 0.0,
        "min": 0.0,
        "max": 0.0,
    }
    assert b["notes"] == ["no baseline (without-skill) results are stored for this model"]


# ---------------------------------------------------------------------------------------------
# The command


def viewer_runs(iteration: Path) -> list[dict[str, Any]]:
    """The runs skill-creator's viewer (`eval-viewer/generate_review.py`) would find: every
    directory holding `outputs/`, its metadata from `eval_metadata.json` beside it or in its
    parent, its grades from `grading.json`; sorted by (eval_id, run id), which needs every
    `eval_id` to be of one comparable type."""
    runs = []
    for outputs in sorted(iteration.rglob("outputs")):
        run_dir = outputs.parent
        meta_path = next(
            p
            for p in (run_dir / "eval_metadata.json", run_dir.parent / "eval_metadata.json")
            if p.exists()
        )
        meta = json.loads(meta_path.read_text())
        runs.append(
            {
                "id": run_dir.relative_to(iteration).as_posix().replace("/", "-"),
                "eval_id": meta["eval_id"],
                "prompt": meta["prompt"],
                "grading": json.loads((run_dir / "grading.json").read_text()),
                "timing": json.loads((run_dir / "timing.json").read_text()),
            }
        )
    runs.sort(key=lambda r: (r["eval_id"], r["id"]))
    return runs


def test_export_command_from_a_results_file(tmp_path: Path) -> None:
    path = tmp_path / "repo" / "evals" / "greeter" / "results.json"
    rf = results_file()
    write_results(path, rf.plugin, rf.skill, dict(rf.models))
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["export", "--results", str(path), "--out", "x"], {}, stdout=out, stderr=err, cwd=tmp_path
    )
    assert code == 0, err.getvalue()
    assert "export: demo/greeter anthropic/claude-sonnet-5: 4 case(s), 3 baseline case(s)" in (
        out.getvalue()
    )
    rows_dir = tmp_path / "x" / "agentevals" / "demo" / "greeter" / "anthropic" / "claude-sonnet-5"
    lines = (rows_dir / "with_skill.jsonl").read_text().splitlines()
    assert [json.loads(line)["evalId"] for line in lines][:1] == ["greeter-suite::lift"]
    assert len((rows_dir / "without_skill.jsonl").read_text().splitlines()) == 3
    iteration = (
        tmp_path
        / "x/skill-creator/demo/greeter/anthropic/claude-sonnet-5/greeter-workspace/iteration-1"
    )
    runs = viewer_runs(iteration)
    assert [r["id"] for r in runs] == [
        "eval-1-greeter-suite-lift-with_skill",
        "eval-1-greeter-suite-lift-without_skill",
        "eval-2-greeter-suite-near-with_skill",
        "eval-3-table-with_skill",
        "eval-3-table-without_skill",
        "eval-4-broken-with_skill",
        "eval-4-broken-without_skill",
    ]
    assert all(r["prompt"] for r in runs)
    assert runs[0]["grading"]["summary"]["total"] == 7
    bench = json.loads((iteration / "benchmark.json").read_text())
    assert {r["configuration"] for r in bench["runs"]} == {"with_skill", "without_skill"}
    assert (iteration / "benchmark.md").is_file()
    assert f"--benchmark {iteration / 'benchmark.json'}" in out.getvalue()


def test_export_command_reads_the_repository(tmp_path: Path) -> None:
    root = make_single(tmp_path / "repo")
    out, err = io.StringIO(), io.StringIO()
    code = main(
        [
            "export",
            "--root",
            str(root),
            "--out",
            str(tmp_path / "o"),
            "--format",
            "skill-creator",
            "--model",
            "claude-sonnet-5",
        ],
        {},
        stdout=out,
        stderr=err,
        cwd=tmp_path,
    )
    assert code == 0, err.getvalue()
    assert out.getvalue().startswith(
        "export: solo/alpha-skill anthropic/claude-sonnet-5: 3 case(s), 3 baseline case(s)"
    )
    assert not (tmp_path / "o" / "agentevals").exists()
    iteration = (
        tmp_path
        / "o/skill-creator/solo/alpha-skill/anthropic/claude-sonnet-5/alpha-skill-workspace/iteration-1"
    )
    runs = viewer_runs(iteration)
    assert len(runs) == 6
    meta = json.loads((iteration / "eval-1-table-driven" / "eval_metadata.json").read_text())
    assert meta["eval_name"] == "Table-driven tests"
    assert meta["prompt"] and not meta["prompt"].startswith("(prompt of")  # from evals.json


def test_export_command_errors(tmp_path: Path) -> None:
    err = io.StringIO()
    code = main(
        ["export", "--results", str(tmp_path / "missing.json")],
        {},
        stdout=io.StringIO(),
        stderr=err,
        cwd=tmp_path,
    )
    assert code == 2 and "missing.json: no such file" in err.getvalue()
    err = io.StringIO()
    code = main(["export", "--format", "csv"], {}, stdout=io.StringIO(), stderr=err, cwd=tmp_path)
    assert code == 2 and "--format" in err.getvalue()


def test_run_export_notes_when_nothing_matched(tmp_path: Path) -> None:
    root = make_single(tmp_path / "repo")
    from evolve_action.flows import ExportOptions
    from evolve_action.repo import discover

    outcome = run_export(
        ExportOptions(out_dir=tmp_path / "o", repo=discover(root, tmp_path), skills=("nope",))
    )
    assert outcome.exported == () and outcome.written == ()
    assert outcome.notes and "no stored eval results matched" in outcome.notes[0]


# ---------------------------------------------------------------------------------------------
# Round trip: a real suite grade → evolve expectations → AgentEvals row


@pytest.mark.parametrize(
    ("final", "verdict"),
    [
        ("Hello there, greeting written", "pass"),
        ("Hello there", "borderline"),
        ("nothing useful", "fail"),
    ],
)
def test_row_score_and_verdict_match_the_grade(tmp_path: Path, final: str, verdict: str) -> None:
    import asyncio

    from evolve_action.grading import SuiteContext, grade_suite_case, suite_expectations
    from evolve_action.harness import Transcript
    from evolve_action.results import summarise_grades
    from evolve_action.specs import parse_evaluators

    raw = [
        {"name": "hello", "type": "contains", "value": "Hello", "weight": 3},
        {"name": "written", "type": "regex", "value": "writ+en", "weight": 0.5},
        {
            "name": "both",
            "type": "composite",
            "aggregator": {"type": "minimum"},
            "evaluators": [
                {"name": "there", "type": "contains", "value": "there"},
                {"name": "greeting", "type": "contains", "value": "greeting"},
            ],
        },
    ]
    specs, problems = parse_evaluators(raw, base_dir=tmp_path, where="EVAL.yaml")
    assert problems == ()
    ctx = SuiteContext(
        case_id="c",
        input_text="say hello",
        transcript=Transcript(final_text=final),
        workspace=tmp_path,
        eval_dir=tmp_path,
        environ={},
    )
    grade = asyncio.run(grade_suite_case(specs, ctx))
    checks = suite_expectations(grade)
    result = EvalResult(
        id="suite::c", passed=grade.passed, expectations=checks, summary=summarise_grades(checks)
    )
    (row,), _ = agentevals_rows(ResultsFile(skill="s", models={}), S5, eval_entry(S5, [result]))
    assert row["score"] == pytest.approx(grade.score, abs=0.01)  # evidence keeps 2 decimals
    assert row["verdict"] == verdict == grade.verdict
    assert [e["name"] for e in row["evaluatorResults"]] == ["hello", "written", "both"]
    assert [e["name"] for e in row["evaluatorResults"][2]["evaluatorResults"]] == [
        "there",
        "greeting",
    ]
