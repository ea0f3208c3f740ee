"""Suite evaluators against finished sessions: every type, every aggregator, bands and gates.

`code_judge` runs real subprocesses (python3); judges are covered in
tests/integration/test_suite_judges.py against the scripted model server.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from evolve_action.grading import (
    SuiteContext,
    SuiteGrade,
    grade_suite_case,
    judge_error,
    suite_expectations,
    verdict_for,
)
from evolve_action.harness import ToolCall, Transcript, Usage
from evolve_action.specs import parse_evaluators


def call(name: str, harness: str = "claude", **inp: Any) -> ToolCall:
    return ToolCall(name=name, input=inp, raw_input=json.dumps(inp), harness=harness)


CALLS = (
    call("Skill", skill="csv-report"),
    call("Read", file_path="/w/data.csv"),
    call("Bash", command="python3 report.py"),
    call("Write", file_path="/w/out.md", content="x"),
)


def context(tmp_path: Path, **kw: Any) -> SuiteContext:
    t = kw.pop(
        "transcript",
        Transcript(
            final_text=kw.pop("final", 'Total: 42\n{"total": 42, "date": "2026-01-05"}'),
            tool_calls=kw.pop("calls", CALLS),
            usage=Usage(input_tokens=100, output_tokens=50, cache_read_input_tokens=10),
            total_cost_usd=0.02,
            duration_seconds=4.0,
            num_turns=3,
        ),
    )
    return SuiteContext(
        case_id="c1",
        input_text="Summarise data.csv",
        criteria=kw.pop("criteria", "The total is 42"),
        expected_output=kw.pop("expected", '{"total": 42, "date": "Jan 5, 2026"}'),
        transcript=t,
        workspace=tmp_path,
        eval_dir=kw.pop("eval_dir", tmp_path),
        skill_name="csv-report",
        environ={"PATH": os.environ["PATH"]},
        judge=None,
        timeout_seconds=kw.pop("timeout", 30.0),
        **kw,
    )


def grade(raw: list[dict[str, Any]], ctx: SuiteContext) -> SuiteGrade:
    specs, problems = parse_evaluators(raw, base_dir=ctx.eval_dir, where="EVAL.yaml")
    assert problems == ()
    return asyncio.run(grade_suite_case(specs, ctx))


def one(raw: dict[str, Any], ctx: SuiteContext) -> tuple[float, str, tuple[str, ...]]:
    r = grade([{"name": "e", **raw}], ctx).results[0]
    return r.score, r.verdict, r.misses


@pytest.mark.parametrize(
    ("score", "verdict"),
    [(1.0, "pass"), (0.8, "pass"), (0.79, "borderline"), (0.6, "borderline"), (0.59, "fail")],
)
def test_bands(score: float, verdict: str) -> None:
    assert verdict_for(score) == verdict


@pytest.mark.parametrize(
    ("raw", "score"),
    [
        ({"type": "contains", "value": "Total: 42"}, 1.0),
        ({"type": "contains", "value": "total: 42"}, 0.0),
        ({"type": "contains", "value": "Total: 42", "negate": True}, 0.0),
        ({"type": "regex", "value": "total: \\d+", "flags": "i"}, 1.0),
        ({"type": "regex", "value": "^Total: 7$"}, 0.0),
        ({"type": "equals", "value": "Total: 42"}, 0.0),
        ({"type": "is_json"}, 0.0),
    ],
)
def test_text_checks(tmp_path: Path, raw: dict[str, Any], score: float) -> None:
    assert one(raw, context(tmp_path))[0] == score


def test_equals_and_is_json_on_exact_output(tmp_path: Path) -> None:
    ctx = context(tmp_path, final=' {"a": 1}\n')
    assert one({"type": "equals", "value": '{"a": 1}'}, ctx)[0] == 1.0
    assert one({"type": "is_json"}, ctx)[0] == 1.0


JUDGE = """
import json, sys
d = json.load(sys.stdin)
keys = ["candidate_answer", "candidateAnswer", "answer", "expected_outcome", "expectedOutcome",
        "criteria", "question", "reference_answer", "referenceAnswer", "output_messages",
        "outputMessages", "output", "trace_summary", "traceSummary", "trace", "input_messages",
        "input", "workspace_path", "config", "expected_output", "input_files", "guideline_files"]
missing = [k for k in keys if k not in d]
ok = not missing and "42" in d["answer"] and d["trace_summary"]["tool_calls_by_name"]["Read"] == 1
ok = ok and d["traceSummary"]["eventCount"] == 4 and d["config"]["max_rows"] == 3
ok = ok and d["config"]["maxRows"] == 3 and __import__("os").path.basename(__import__("os").getcwd()) == "evals"
print("debug line", file=sys.stderr)
print(json.dumps({"score": 0.9 if ok else 0.1, "hits": ["keys ok", 3, ""] if ok else [],
                  "misses": missing, "reasoning": "checked"}))
"""


@pytest.mark.parametrize(
    ("script", "score", "verdict", "miss"),
    [
        ("print(json.dumps({'score': 1.7}))", 1.0, "pass", None),
        ("print(json.dumps({'score': 'high'}))", 0.0, "fail", None),
        ("print('not json')", 0.0, "fail", None),
        ("print('debug'); print(json.dumps({'score': 1}))", 0.0, "fail", None),
        (
            "sys.stderr.write('boom'); sys.exit(2)",
            0.0,
            "fail",
            "Code evaluator failed: Code evaluator exited with code 2: boom",
        ),
        (
            "import time; time.sleep(30)",
            0.0,
            "fail",
            "Code evaluator failed: Process timed out after 1000 ms",
        ),
        ("print(json.dumps({'score': 0.7, 'misses': ['a']}))", 0.7, "borderline", "a"),
    ],
)
def test_code_judge_failure_rules(
    tmp_path: Path, script: str, score: float, verdict: str, miss: str | None
) -> None:
    (tmp_path / "j.py").write_text("import json, sys\n" + script + "\n")
    got = one(
        {"type": "code_judge", "script": [sys.executable, "j.py"]},
        context(tmp_path, timeout=1.0 if "sleep" in script else 30.0),
    )
    assert got[:2] == (score, verdict)
    if miss is not None:
        assert got[2] == (miss,)


def test_code_judge_stdin_superset_cwd_and_shell_string(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "judge.py").write_text(JUDGE)
    ctx = context(tmp_path, eval_dir=evals)
    argv = grade(
        [
            {
                "name": "j",
                "type": "code_judge",
                "script": [sys.executable, "judge.py"],
                "max_rows": 3,
            }
        ],
        ctx,
    ).results[0]
    assert (argv.score, argv.hits, argv.misses, argv.reasoning) == (
        0.9,
        ("keys ok",),
        (),
        "checked",
    )
    shell = grade(
        [
            {
                "name": "j",
                "type": "code_judge",
                "script": f"{sys.executable} judge.py | cat",
                "config": {"maxRows": 3},
            }
        ],
        ctx,
    ).results[0]
    assert shell.score == 0.9


def test_code_judge_missing_toolchain_is_skipped(tmp_path: Path) -> None:
    r = grade(
        [{"name": "j", "type": "code_judge", "script": ["no-such-bun-here", "x"]}],
        context(tmp_path),
    )
    assert (
        r.results[0].verdict == "skipped"
        and "no-such-bun-here is not installed" in r.results[0].reasoning
    )
    assert r.verdict == "skipped" and r.passed is False


MEMBERS = [
    {"name": "hi", "type": "contains", "value": "42"},  # 1.0
    {"name": "lo", "type": "contains", "value": "absent"},  # 0.0
    {
        "name": "traj",
        "type": "tool_trajectory",
        "mode": "any_order",
        "minimums": {"Read": 1, "Grep": 1},
    },  # 0.5
]


@pytest.mark.parametrize(
    ("aggregator", "score"),
    [
        ({"type": "weighted_average"}, 0.5),
        ({"type": "weighted_average", "weights": {"hi": 3, "lo": 1, "traj": 0}}, 0.75),
        ({"type": "minimum"}, 0.0),
        ({"type": "maximum"}, 1.0),
        ({"type": "safety_gate", "required": ["hi"]}, 0.5),
        ({"type": "safety_gate", "required": ["traj"]}, 0.0),
        ({"type": "all_or_nothing"}, 0.0),
        ({"type": "all_or_nothing", "threshold": 0.0}, 0.5),
        ({"type": "threshold", "threshold": 0.3}, 1.0),
        ({"type": "threshold", "threshold": 0.5}, 1 / 3),
    ],
)
def test_aggregators(tmp_path: Path, aggregator: dict[str, Any], score: float) -> None:
    r = grade(
        [{"name": "c", "type": "composite", "evaluators": MEMBERS, "aggregator": aggregator}],
        context(tmp_path),
    )
    assert r.results[0].score == pytest.approx(score)
    assert [c.name for c in r.results[0].children] == ["hi", "lo", "traj"]


def test_code_judge_aggregator_and_nesting(tmp_path: Path) -> None:
    (tmp_path / "agg.py").write_text(
        "import json, sys\nr = json.load(sys.stdin)['results']\n"
        "print(json.dumps({'score': 1 if r['hi']['score'] == 1 and r['inner']['verdict'] == 'fail' else 0}))\n"
    )
    inner = {
        "name": "inner",
        "type": "composite",
        "evaluators": MEMBERS[1:],
        "aggregator": {"type": "maximum"},
    }
    r = grade(
        [
            {
                "name": "outer",
                "type": "composite",
                "evaluators": [MEMBERS[0], inner],
                "aggregator": {"type": "code_judge", "path": f"{sys.executable} agg.py"},
            }
        ],
        context(tmp_path),
    ).results[0]
    assert r.score == 1.0 and r.children[1].score == 0.5 and len(r.children[1].children) == 2


@pytest.mark.parametrize(
    ("raw", "score"),
    [
        ({"mode": "any_order", "minimums": {"Read": 1, "Bash": 2}}, 0.5),
        (
            {
                "mode": "any_order",
                "expected": [
                    {"tool": "Write"},
                    {"tool": "Read", "args": {"file_path": "/w/data.csv"}},
                ],
            },
            1.0,
        ),
        ({"mode": "any_order", "expected": [{"tool": "Read"}, {"tool": "Read"}]}, 0.5),
        ({"mode": "in_order", "expected": ["Skill", "Bash", "Write"]}, 1.0),
        ({"mode": "in_order", "expected": ["Bash", "Read"]}, 0.5),
        ({"mode": "in_order", "expected": [{"tool": "Bash", "args": {"command": "ls"}}]}, 0.0),
        ({"mode": "in_order", "expected": [{"tool": "Read", "args": {"file_path": "any"}}]}, 1.0),
        ({"mode": "exact", "expected": ["Skill", "Read", "Bash", "Write"]}, 1.0),
        ({"mode": "exact", "expected": ["Skill", "Read"]}, 0.5),
        ({"mode": "exact", "expected": ["Read", "Skill", "Bash", "Write"]}, 0.5),
    ],
)
def test_tool_trajectory_claude(tmp_path: Path, raw: dict[str, Any], score: float) -> None:
    assert one({"type": "tool_trajectory", **raw}, context(tmp_path))[0] == score


def test_tool_trajectory_codex_items(tmp_path: Path) -> None:
    calls = (
        call("command_execution", "codex", command="cat skills/csv-report/SKILL.md"),
        call("file_change", "codex", changes=[{"path": "out.md"}]),
        call("mcp_tool_call", "codex", server="kb", tool="search"),
    )
    ctx = context(tmp_path, calls=calls)
    raw = {
        "type": "tool_trajectory",
        "mode": "exact",
        "expected": ["Bash", "Write", "mcp__kb__search"],
    }
    assert one(raw, ctx)[0] == 1.0
    assert one({"type": "skill_trigger"}, ctx)[0] == 1.0


@pytest.mark.parametrize(
    ("calls", "raw", "score"),
    [
        (CALLS, {}, 1.0),
        (CALLS, {"should_trigger": False}, 0.0),
        (CALLS[1:], {}, 0.0),  # the skill was not the first call
        ((call("Read", file_path="/w/.claude/skills/csv-report/SKILL.md"),), {}, 1.0),
        ((), {"should_trigger": False}, 1.0),
        (CALLS, {"skill": "other"}, 0.0),
    ],
)
def test_skill_trigger_first_call(
    tmp_path: Path, calls: Any, raw: dict[str, Any], score: float
) -> None:
    assert one({"type": "skill_trigger", **raw}, context(tmp_path, calls=calls))[0] == score


@pytest.mark.parametrize(
    ("fields", "extra", "score"),
    [
        ([{"path": "total"}], {}, 1.0),
        ([{"path": "date", "match": "date"}], {}, 1.0),
        ([{"path": "date"}], {}, 0.0),
        (
            [{"path": "total", "match": "numeric_tolerance", "tolerance": 0.5, "expected": 42.4}],
            {},
            1.0,
        ),
        (
            [
                {
                    "path": "total",
                    "match": "numeric_tolerance",
                    "tolerance": 0.001,
                    "relative": True,
                    "expected": 43,
                }
            ],
            {},
            0.0,
        ),
        ([{"path": "total", "match": "regex", "expected": "^4"}], {}, 1.0),
        ([{"path": "total", "match": "contains", "expected": "2"}], {}, 1.0),
        ([{"path": "total", "weight": 3}, {"path": "date"}], {}, 0.75),
        ([{"path": "total"}, {"path": "date"}], {"aggregation": "minimum"}, 0.0),
        ([{"path": "total"}, {"path": "date"}], {"aggregation": "all_or_nothing"}, 0.0),
        ([{"path": "missing.x[0]"}], {}, 0.0),
    ],
)
def test_field_accuracy(
    tmp_path: Path, fields: list[Any], extra: dict[str, Any], score: float
) -> None:
    assert one({"type": "field_accuracy", "fields": fields, **extra}, context(tmp_path))[0] == score


def test_field_accuracy_required_field_fails_the_case(tmp_path: Path) -> None:
    g = grade(
        [
            {
                "name": "f",
                "type": "field_accuracy",
                "fields": [{"path": "total", "weight": 9}, {"path": "date", "required": True}],
            },
        ],
        context(tmp_path),
    )
    assert (
        g.results[0].score == 0.9
        and g.verdict == "fail"
        and g.results[0].required_missed == ("date",)
    )


@pytest.mark.parametrize(
    ("limits", "score"),
    [
        ({"max_tool_calls": 4, "max_llm_calls": 3}, 1.0),
        ({"max_tool_calls": 3}, 0.0),
        ({"max_tokens": 160, "max_input_tokens": 110, "max_output_tokens": 49}, 2 / 3),
        ({"max_cost_usd": 0.01, "max_duration_ms": 4000}, 0.5),
        ({"target_exploration_ratio": 0.25}, 1.0),
        ({"target_exploration_ratio": 0.9, "exploration_tolerance": 0.1}, 0.0),
    ],
)
def test_execution_metrics(tmp_path: Path, limits: dict[str, Any], score: float) -> None:
    assert one({"type": "execution_metrics", **limits}, context(tmp_path))[0] == pytest.approx(
        score
    )


def test_execution_metrics_missing_data_is_a_miss(tmp_path: Path) -> None:
    ctx = context(tmp_path, transcript=Transcript(final_text="x"))
    score, _, misses = one(
        {"type": "execution_metrics", "max_cost_usd": 1, "max_tool_calls": 1}, ctx
    )
    assert score == 0.5 and misses == ("max_cost_usd: not measured",)


def test_case_score_weights_gates_and_borderline(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    raw = [
        {"name": "a", "type": "contains", "value": "42", "weight": 3},
        {"name": "b", "type": "contains", "value": "absent"},
        {"name": "z", "type": "contains", "value": "absent", "weight": 0},
    ]
    g = grade(raw, ctx)
    assert (g.score, g.verdict, g.passed) == (0.75, "borderline", False)
    from dataclasses import replace

    assert grade(raw, replace(ctx, borderline_passes=True)).passed is True
    gated = grade(
        [
            *raw[:2],
            {"name": "r", "type": "contains", "value": "absent", "required": True, "weight": 0},
        ],
        ctx,
    )
    assert (gated.score, gated.verdict) == (0.75, "fail")
    soft = grade(
        [
            {
                "name": "r",
                "type": "execution_metrics",
                "max_tool_calls": 1,
                "max_llm_calls": 9,
                "required": 0.5,
            }
        ],
        ctx,
    )
    assert (soft.score, soft.verdict) == (0.5, "fail")  # the gate held, the band did not


def test_suite_expectations(tmp_path: Path) -> None:
    g = grade(
        [
            {
                "name": "c",
                "type": "composite",
                "evaluators": MEMBERS[:2],
                "aggregator": {"type": "maximum"},
                "required": True,
            },
            {"name": "j", "type": "code_judge", "script": ["no-such-tool"]},
        ],
        context(tmp_path),
    )
    exp = suite_expectations(g)
    assert [(e.type, e.text, e.passed) for e in exp] == [
        ("llm", "c (composite)", True),
        ("regex", "c/hi (contains)", True),
        ("regex", "c/lo (contains)", False),
        ("command", "j (code_judge)", None),
    ]
    assert exp[0].evidence.startswith("score 1.00 w=1 required — hits: hi: 1.00")
    assert all(e.source == "assertion" and len(e.evidence.encode()) <= 200 for e in exp)
    assert judge_error(g) == ""


def test_judges_without_a_judge_are_judge_errors(tmp_path: Path) -> None:
    g = grade(
        [{"name": "r", "type": "rubric", "rubrics": ["x"]}, {"name": "l", "type": "llm_judge"}],
        context(tmp_path),
    )
    assert [r.score for r in g.results] == [0.0, 0.0]
    assert judge_error(g) == "judge error: judge unavailable"
    assert asyncio.run(grade_suite_case((), context(tmp_path))).results[0].name == "llm_judge"
