"""Suite `llm_judge`, rubrics and the `llm_judge` aggregator through the real `anthropic` SDK
against the scripted model server (no agent CLI): templates, default prompt, parse retries, outages."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evolve_action import grading
from evolve_action.grading import SuiteContext, SuiteGrade, grade_suite_case, judge_error
from evolve_action.harness import ToolCall, Transcript
from evolve_action.specs import parse_evaluators

pytestmark = pytest.mark.integration

POLICY = r"""
rules:
  - name: score-ranges
    when: {system: '"checks"'}
    text: '{"checks": [{"id": "accuracy", "score": 8, "reasoning": "close"}, {"id": "style", "score": 0, "reasoning": "none"}], "overall_reasoning": "ok"}'
  - name: flaky-json
    when: {system: 'single JSON object', prompt: 'FLAKY'}
    stop_after: 2
    text: 'I think it is fine.'
  - name: down
    when: {prompt: 'DOWN'}
    status: 500
  - name: llm-custom
    when: {system: 'single JSON object', prompt: 'custom judge for the answer: 42'}
    text: '```json
      {"score": 0.7, "hits": ["a", "b", "c", "d", "e"], "misses": [], "reasoning": "custom"}
      ```'
  - name: llm-dollar
    when: {system: 'single JSON object', prompt: 'dollar judge The answer: 42 vs The total is 42'}
    text: '{"score": 0.95, "hits": ["dollar"], "reasoning": "dollar"}'
  - name: llm-instructions
    when: {system: 'Be strict about totals', prompt: 'You are an expert evaluator'}
    text: '{"score": 0.5, "misses": ["strict"], "reasoning": "instructions"}'
  - name: aggregate
    when: {system: 'single JSON object', prompt: '"hi": \{'}
    text: '{"score": 0.85, "reasoning": "aggregated"}'
  - name: llm-default
    when: {system: 'single JSON object', prompt: '\[\[ ## candidate_answer ## \]\]\s+The answer: 42'}
    text: '{"score": 0.9, "hits": ["right total"], "reasoning": "default"}'
  - name: checklist
    when: {tools: [submit_verdicts]}
    judge: {pass: 'total', fail: 'chart'}
"""


def context(srv: Any, tmp_path: Path, final: str = "The answer: 42") -> SuiteContext:
    client = grading.client_from_env(
        {"ANTHROPIC_BASE_URL": srv.base_url, "ANTHROPIC_API_KEY": "sk-x"}, max_retries=0
    )
    return SuiteContext(
        case_id="c",
        input_text=final if final in ("FLAKY", "DOWN") else "What is the total?",
        criteria="The total is 42",
        expected_output="42",
        transcript=Transcript(
            final_text=final, tool_calls=(ToolCall(name="Read", input={}, raw_input="{}"),)
        ),
        workspace=tmp_path,
        eval_dir=tmp_path,
        environ={},
        judge=grading.Judge(client, model="claude-sonnet-5"),
        timeout_seconds=60,
    )


def run(raw: list[dict[str, Any]], ctx: SuiteContext) -> SuiteGrade:
    specs, problems = parse_evaluators(raw, base_dir=ctx.eval_dir, where="EVAL.yaml")
    assert problems == ()

    async def go() -> SuiteGrade:
        try:
            return await grade_suite_case(specs, ctx)
        finally:
            assert ctx.judge is not None
            await ctx.judge.aclose()

    return asyncio.run(go())


def test_llm_judge_templates_and_default(tmp_path: Path, model_server: Any) -> None:
    srv = model_server(POLICY)
    g = run(
        [
            {"name": "default", "type": "llm_judge"},
            {
                "name": "custom",
                "type": "llm_judge",
                "prompt": "custom judge for {{ candidate_answer }}",
            },
            {
                "name": "dollar",
                "type": "llm_judge",
                "prompt": "dollar judge ${answer} vs ${expected_outcome}",
            },
            {"name": "instr", "type": "llm_judge", "prompt": "Be strict about totals."},
        ],
        context(srv, tmp_path),
    )
    got = [(r.name, r.score, r.verdict, r.reasoning) for r in g.results]
    assert got == [
        ("default", 0.9, "pass", "default"),
        ("custom", 0.7, "borderline", "custom"),
        ("dollar", 0.95, "pass", "dollar"),
        ("instr", 0.5, "fail", "instructions"),
    ]
    assert g.results[1].hits == ("a", "b", "c", "d")  # capped at 4 as AgentV
    first = srv.requests[0]["body"]
    assert first["system"].startswith("You must respond with a single JSON object")
    prompt = first["messages"][0]["content"]
    assert "[[ ## expected_outcome ## ]]\nThe total is 42" in prompt
    assert "[[ ## reference_answer ## ]]\n42" in prompt
    assert g.score == pytest.approx((0.9 + 0.7 + 0.95 + 0.5) / 4) and g.verdict == "borderline"


def test_parse_retries_and_outage(tmp_path: Path, model_server: Any) -> None:
    srv = model_server(POLICY)
    g = run(
        [{"name": "l", "type": "llm_judge", "prompt": "judge {{question}} FLAKY"}],
        context(srv, tmp_path, final="FLAKY"),
    )
    assert len(srv.requests) == 3  # two replies without JSON, then the default rule's text
    assert g.results[0].score == 0.0 and "no JSON verdict in 3 attempts" in g.results[0].misses[0]

    srv.clear()
    g = run(
        [{"name": "l", "type": "llm_judge", "prompt": "{{question}}"}],
        context(srv, tmp_path, final="DOWN"),
    )
    assert judge_error(g).startswith("judge error: HTTP 500")


def test_checklist_rubric_weights_and_required(tmp_path: Path, model_server: Any) -> None:
    srv = model_server(POLICY)
    rubrics = [
        {"id": "total", "outcome": "states the total", "weight": 3},
        {"id": "chart", "outcome": "draws a chart", "required": True},
    ]
    g = run([{"name": "rubric", "type": "rubric", "rubrics": rubrics}], context(srv, tmp_path))
    r = g.results[0]
    assert (r.score, r.verdict, r.required_missed) == (0.75, "fail", ("chart",))
    assert g.verdict == "fail" and not g.passed
    assert r.hits[0].startswith("[total] states the total: scripted judge: passed")
    exp = grading.suite_expectations(g)
    assert [(e.text, e.passed) for e in exp] == [
        ("rubric (rubric)", False),
        ("rubric/[total] states the total", True),
        ("rubric/[chart] draws a chart", False),
    ]
    # without the required flag the same answers give a borderline case (the 1.0 default)
    srv.clear()
    g = run(
        [{"name": "rubric", "type": "rubric", "rubrics": [rubrics[0], "draws a chart"]}],
        context(srv, tmp_path),
    )
    assert (g.score, g.verdict) == (0.75, "borderline")


def test_score_range_rubric(tmp_path: Path, model_server: Any) -> None:
    srv = model_server(POLICY)
    rubrics = [
        {
            "id": "accuracy",
            "outcome": "accurate",
            "weight": 3,
            "score_ranges": {0: "wrong", 5: "close", 10: "exact"},
        },
        {"id": "style", "outcome": "styled", "required_min_score": 1},
    ]
    g = run([{"name": "r", "type": "rubric", "rubrics": rubrics}], context(srv, tmp_path))
    r = g.results[0]
    assert r.score == pytest.approx(0.6) and r.verdict == "fail" and r.required_missed == ("style",)
    prompt = srv.requests[0]["body"]["messages"][0]["content"]
    assert "  0-4: wrong\n  5-9: close\n  10: exact" in prompt


def test_llm_judge_aggregator(tmp_path: Path, model_server: Any) -> None:
    srv = model_server(POLICY)
    g = run(
        [
            {
                "name": "c",
                "type": "composite",
                "evaluators": [{"name": "hi", "type": "contains", "value": "42"}],
                "aggregator": {
                    "type": "llm_judge",
                    "prompt": "Combine: {{EVALUATOR_RESULTS_JSON}}",
                },
            }
        ],
        context(srv, tmp_path),
    )
    assert (g.results[0].score, g.results[0].reasoning) == (0.85, "aggregated")
    sent = srv.requests[0]["body"]["messages"][0]["content"]
    assert json.loads(sent.removeprefix("Combine: "))["hi"]["score"] == 1.0
