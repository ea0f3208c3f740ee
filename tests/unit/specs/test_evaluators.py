"""Parsing AgentV / AgentEvals evaluator lists: aliases, per-type fields, problems with the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evolve_action.specs import EVALUATOR_TYPES, parse_evaluators


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    d = tmp_path / "evals" / "s"
    d.mkdir(parents=True)
    (d / "judge.py").write_text("print('{}')\n")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "judge.md").write_text("Grade {{candidate_answer}}\n")
    return d


def parse(raw: list[Any], base: Path) -> tuple[Any, tuple[str, ...]]:
    return parse_evaluators(raw, base_dir=base, where="EVAL.yaml", pointer="/e")


@pytest.mark.parametrize(
    ("raw", "type_", "check"),
    [
        (
            {"type": "code", "script": "python3 judge.py"},
            "code_judge",
            {"command": "python3 judge.py"},
        ),
        (
            {"type": "code_judge", "script": ["python3", "judge.py"]},
            "code_judge",
            {"command": ("python3", "judge.py")},
        ),
        (
            {"type": "code-grader", "command": ["python3", "judge.py"], "threshold": 3},
            "code_judge",
            {"config": {"threshold": 3}},
        ),
        (
            {"type": "llm_judge", "prompt": "Grade {{ answer }}"},
            "llm_judge",
            {"syntax": "mustache"},
        ),
        (
            {"type": "llm_judge", "prompt": "Grade ${candidate_answer}"},
            "llm_judge",
            {"syntax": "dollar"},
        ),
        ({"type": "llm_judge", "prompt": "Be strict."}, "llm_judge", {"syntax": "instructions"}),
        ({"type": "llm_judge"}, "llm_judge", {"syntax": "default"}),
        (
            {"type": "llm_judge", "prompt": "prompts/judge.md"},
            "llm_judge",
            {"prompt": "Grade {{candidate_answer}}\n"},
        ),
        ({"type": "rubrics", "criteria": ["a", "b"]}, "rubric", {"mode": "checklist"}),
        (
            {
                "type": "rubric",
                "rubrics": [
                    {"id": "x", "outcome": "o", "score_ranges": {0: "no", 7: "ok", 10: "yes"}}
                ],
            },
            "rubric",
            {"mode": "score_range"},
        ),
        (
            {"type": "tool_trajectory", "minimums": {"Read": 1}},
            "tool_trajectory",
            {"mode": "any_order"},
        ),
        (
            {"type": "tool-trajectory", "mode": "exact", "expected": ["Read"]},
            "tool_trajectory",
            {"mode": "exact"},
        ),
        (
            {"type": "field_accuracy", "fields": ["a.b"]},
            "field_accuracy",
            {"aggregation": "weighted_average"},
        ),
        (
            {"type": "execution_metrics", "max_tokens": 10},
            "execution_metrics",
            {"limits": {"max_tokens": 10.0}},
        ),
        ({"type": "contains", "value": "x"}, "contains", {"value": "x"}),
        ({"type": "regex", "value": "a+", "flags": "i"}, "regex", {"flags": "i"}),
        ({"type": "equals", "value": 3}, "equals", {"value": "3"}),
        ({"type": "is-json"}, "is_json", {}),
        (
            {"type": "skill-trigger", "skill": "frob", "should_trigger": False},
            "skill_trigger",
            {"should_trigger": False},
        ),
    ],
)
def test_types_and_aliases(
    suite: Path, raw: dict[str, Any], type_: str, check: dict[str, Any]
) -> None:
    specs, problems = parse([{"name": "e", **raw}], suite)
    assert problems == ()
    assert specs[0].type == type_ in EVALUATOR_TYPES
    for k, v in check.items():
        assert specs[0].config[k] == v


def test_code_judge_cwd_defaults_to_the_eval_dir_and_resolves_upward(suite: Path) -> None:
    specs, _ = parse(
        [{"name": "c", "type": "code_judge", "script": ["python3", "judge.py"]}], suite
    )
    assert specs[0].config["cwd"] == str(suite)
    specs, problems = parse(
        [{"name": "c", "type": "code_judge", "cwd": "prompts", "script": ["cat"]}], suite
    )
    assert problems == () and specs[0].config["cwd"] == str(suite.parent.parent / "prompts")


def test_common_fields_and_composite(suite: Path) -> None:
    raw = [
        {
            "name": "gate",
            "type": "composite",
            "weight": 2,
            "required": 0.6,
            "evaluators": [
                {"name": "a", "type": "contains", "value": "x"},
                {
                    "name": "inner",
                    "type": "composite",
                    "evaluators": [{"name": "b", "type": "is_json"}],
                    "aggregator": {"type": "minimum"},
                },
            ],
            "aggregator": {"type": "safety_gate", "required": ["a"], "weights": {"a": 3}},
        }
    ]
    specs, problems = parse(raw, suite)
    assert problems == ()
    s = specs[0]
    assert (s.weight, s.required) == (2.0, 0.6)
    assert [c.name for c in s.children] == ["a", "inner"]
    assert s.children[1].children[0].type == "is_json"
    assert s.config["aggregator"]["required"] == ("a",)


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"type": "bogus"}, '/e/0/type: unknown evaluator type "bogus" — use one of'),
        ({}, "/e/0/type: missing evaluator type"),
        ({"type": "code_judge"}, "/e/0: code_judge needs a command"),
        (
            {"type": "code_judge", "script": ["python3", "nope.py"]},
            '/e/0/script: the command names "nope.py"',
        ),
        (
            {"type": "code_judge", "script": ["x"], "cwd": "missing"},
            '/e/0/cwd: cwd "missing" does not exist',
        ),
        ({"type": "llm_judge", "prompt": "prompts/absent.md"}, "/e/0/prompt: prompt file"),
        ({"type": "rubric", "rubrics": []}, "/e/0/rubrics: a rubric evaluator needs"),
        (
            {"type": "rubric", "rubrics": [{"id": "a"}]},
            "/e/0/rubrics/0: rubric without its criterion text",
        ),
        (
            {"type": "rubric", "rubrics": [{"outcome": "o", "score_ranges": {3: "x"}}]},
            "score ranges must start at 0",
        ),
        (
            {
                "type": "composite",
                "evaluators": [{"name": "a", "type": "is_json"}],
                "aggregator": {"type": "median"},
            },
            "/e/0/aggregator: unknown aggregator",
        ),
        (
            {
                "type": "composite",
                "evaluators": [{"name": "a", "type": "is_json"}],
                "aggregator": {"type": "safety_gate", "required": ["b"]},
            },
            "aggregator names unknown members: b",
        ),
        (
            {"type": "composite", "evaluators": [{"type": "nope"}]},
            "/e/0/evaluators/0/type: unknown evaluator type",
        ),
        (
            {"type": "tool_trajectory", "mode": "sideways", "expected": ["Read"]},
            "/e/0/mode: unknown mode",
        ),
        ({"type": "tool_trajectory", "mode": "in_order"}, "mode in_order needs `expected:`"),
        ({"type": "field_accuracy", "fields": [{"path": "a", "match": "fuzzy"}]}, "unknown match"),
        ({"type": "execution_metrics"}, "execution_metrics sets no threshold"),
        ({"type": "execution_metrics", "max_tokens": -1}, "max_tokens must be a number ≥ 0"),
        ({"type": "regex", "value": "(unclosed"}, "/e/0/value: invalid pattern"),
        ({"type": "contains"}, "/e/0/value: contains needs a text `value:`"),
        ({"type": "is_json", "weight": -1}, "/e/0/weight: weight must be a number ≥ 0"),
        (
            {"type": "is_json", "required": 2},
            "/e/0/required: required must be true, false or a number",
        ),
    ],
)
def test_problems_name_the_pointer_and_the_fix(
    suite: Path, raw: dict[str, Any], fragment: str
) -> None:
    specs, problems = parse([{"name": "e", **raw}], suite)
    assert specs == ()
    assert len(problems) == 1 and fragment in problems[0] and " — " in problems[0]


def test_duplicate_names_and_line_numbers(suite: Path) -> None:
    specs, problems = parse_evaluators(
        [{"name": "a", "type": "is_json"}, {"name": "a", "type": "is_json"}],
        base_dir=suite,
        where="EVAL.yaml",
        lines={"/e/0": 7},
        pointer="/e",
    )
    assert [s.line for s in specs] == [7]
    assert problems == (
        '/e/1/name: duplicate evaluator name "a" — give every evaluator of a list its own name',
    )


def test_rubric_required_defaults_to_false_as_the_spec(suite: Path) -> None:
    specs, _ = parse(
        [{"name": "r", "type": "rubric", "rubrics": ["plain", {"outcome": "o"}]}], suite
    )
    assert [r["required"] for r in specs[0].config["rubrics"]] == [False, False]
