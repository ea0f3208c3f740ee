"""Our JSON Schemas: well-formed, shipped as package data, and precise on real and hand-made data."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import referencing

from evolve_action.specs import SCHEMA_BASE, SCHEMA_NAMES, load_schema, schema_validator

REPO = Path(__file__).resolve().parents[3]


def errors(name: str, instance: Any) -> list[str]:
    return [e.message for e in schema_validator(name).iter_errors(instance)]


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_is_valid_2020_12_with_our_id(name: str) -> None:
    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"{SCHEMA_BASE}{name}.schema.json"


def test_schemas_are_package_data_and_the_top_level_dir_is_the_same() -> None:
    shipped = resources.files("evolve_action") / "schemas"
    names = sorted(p.name for p in shipped.iterdir() if p.name.endswith(".schema.json"))
    assert names == sorted(f"{n}.schema.json" for n in SCHEMA_NAMES)
    top = REPO / "schemas"
    if top.exists():
        for n in names:
            assert (top / n).read_bytes() == (shipped / n).read_bytes()


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_every_ref_resolves_within_our_schemas() -> None:
    schemas = {name: load_schema(name) for name in SCHEMA_NAMES}
    registry: referencing.Registry[Any] = referencing.Registry().with_resources(
        (s["$id"], referencing.Resource.from_contents(s)) for s in schemas.values()
    )
    count = 0
    for schema in schemas.values():
        resolver = registry.resolver(base_uri=schema["$id"])
        for ref in _refs(schema):
            assert resolver.lookup(ref).contents is not None, ref
            count += 1
    assert count > 50


# -- results (schema 5) ---------------------------------------------------------------------------


def _results_doc() -> dict[str, Any]:
    graded = {
        "type": "regex",
        "path": "a.go",
        "pattern": "^// A",
        "text": "a.go matches /^// A/",
        "passed": True,
        "evidence": "// A",
        "source": "assertion",
    }
    header = {
        "provider": "anthropic",
        "model": "claude-sonnet-5",
        "display": "Claude Sonnet 5",
        "harness": "claude",
        "tool_version": "0.1.0",
        "ran_at": "2026-08-15T06:25:23Z",
        "executed": True,
        "content_hash": "a" * 64,
    }
    return {
        "schema": 5,
        "plugin": "p",
        "skill": "s",
        "models": {
            "anthropic/claude-sonnet-5": {
                "triggers": {
                    **header,
                    "runs_per_query": 3,
                    "timeout_seconds": 120,
                    "pricing": {"input_per_mtok": 3, "output_per_mtok": 15},
                    "results": [
                        {
                            "query": "q",
                            "should_trigger": True,
                            "hits": 2,
                            "runs": 3,
                            "passed": True,
                            "avg_run_seconds": 5.6,
                            "estimate": {"input_tokens": 1396, "input_cost_usd": 0.004188},
                            "spec_hash": "b" * 64,
                        }
                    ],
                    "summary": {"passed": 1, "failed": 0, "total": 1, "pass_rate": 1},
                },
                "evals": {
                    **header,
                    "timeout_seconds": 600,
                    "pricing": None,
                    "results": [
                        {
                            "id": "e",
                            "passed": True,
                            "measured": {"input_tokens": 9, "output_tokens": 859, "cost_usd": 0.12},
                            "expectations": [graded, {**graded, "passed": None, "type": "llm"}],
                            "summary": {
                                "passed": 1,
                                "failed": 0,
                                "total": 2,
                                "pass_rate": 1,
                                "skipped": 1,
                            },
                            "execution_metrics": {"tool_calls": {"Bash": 1}, "total_tool_calls": 1},
                            "timing": {"total_tokens": 868, "executor_duration_seconds": 16.1},
                            "spec_hash": "c" * 64,
                        },
                        {
                            "id": "f",
                            "runtime_error": "timed out",
                            "timing": {"executor_duration_seconds": 600},
                        },
                    ],
                    "summary": {"passed": 1, "failed": 0, "errored": 1, "total": 2, "pass_rate": 1},
                    "baseline": {
                        "ran_at": "2026-08-15T06:25:23Z",
                        "summary": {"passed": 0, "failed": 1, "total": 1, "pass_rate": 0},
                        "results": [{"id": "e", "passed": False, "fingerprint": "d" * 64}],
                    },
                },
            }
        },
    }


def test_results_sample_is_valid() -> None:
    assert errors("results", _results_doc()) == []


def _mutate(path: list[str | int], value: Any = None, *, delete: bool = False) -> dict[str, Any]:
    doc = copy.deepcopy(_results_doc())
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


M = ["models", "anthropic/claude-sonnet-5"]


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        (_mutate(["schema"], 4), "older schema"),
        (_mutate(["models", "claude-sonnet-5"], {}), "key without provider"),
        (_mutate([*M, "triggers", "summary", "total"], delete=True), "summary without total"),
        (_mutate([*M, "triggers", "pricing"], delete=True), "pricing must be written (null)"),
        (_mutate([*M, "triggers", "ran_at"], "2026-08-15 06:25:23"), "ran_at not RFC 3339 Z"),
        (_mutate([*M, "triggers", "content_hash"], "ABC"), "bad hash"),
        (_mutate([*M, "triggers", "results", 0, "hits"], 1.5), "float count"),
        (_mutate([*M, "triggers", "results", 0, "surprise"], 1), "unknown result key"),
        (_mutate([*M, "evals", "runs_per_query"], 3), "runs_per_query on evals"),
        (
            _mutate([*M, "evals", "results", 0, "expectations", 0, "passed"], "yes"),
            "tri-state passed",
        ),
        (
            _mutate([*M, "evals", "results", 0, "expectations", 0, "evidence"], delete=True),
            "evidence required",
        ),
        (_mutate([*M, "evals", "results", 0, "expectations", 0, "source"], "judge"), "source enum"),
        (_mutate([*M, "evals", "summary", "errored"], 0), "errored written only when > 0"),
        (_mutate([*M, "evals", "results", 0, "summary", "pass_rate"], 1.5), "rate above 1"),
        (_mutate([*M, "evals", "results", 0, "name"], ""), "empty omitempty string"),
        (_mutate([*M, "evals", "unexpected"], True), "unknown entry key"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_results_schema_rejects(doc: dict[str, Any], why: str) -> None:
    assert errors("results", doc), why


def test_every_corpus_results_file_validates(corpus: Path) -> None:
    files = sorted(corpus.glob("plugins/*/evals/*/results.json"))
    assert len(files) == 21
    for path in files:
        assert errors("results", json.loads(path.read_text())) == [], path


# -- authored files ---------------------------------------------------------------------------------


def test_every_corpus_triggers_and_evals_file_validates(corpus: Path) -> None:
    for path in sorted(corpus.glob("plugins/*/evals/*/triggers.json")):
        assert errors("triggers", json.loads(path.read_text())) == [], path
    for path in sorted(corpus.glob("plugins/*/evals/*/evals.json")):
        assert errors("evals", json.loads(path.read_text())) == [], path


SKILL_CREATOR_EVALS = """{
  "skill_name": "example-skill",
  "evals": [
    {
      "id": 0,
      "prompt": "User task prompt",
      "expected_output": "Description of correct output",
      "files": [],
      "assertions": [
        {"id": "assertion-1", "text": "Output contains valid JSON"},
        {"id": "assertion-2", "text": "All rows processed correctly"}
      ]
    }
  ]
}"""


def test_verbatim_skill_creator_evals_json_validates() -> None:
    assert errors("evals", json.loads(SKILL_CREATOR_EVALS)) == []


def test_skill_creator_expectations_style_validates() -> None:
    doc = {
        "skill_name": "x",
        "evals": [
            {
                "id": 1,
                "prompt": "p",
                "expected_output": "o",
                "files": ["evals/files/a.csv"],
                "expectations": ["e"],
            }
        ],
    }
    assert errors("evals", doc) == []


@pytest.mark.parametrize(
    "eval_",
    [
        {"id": "a", "prompt": "p"},
        {"id": "a", "prompt": "p", "assertions": []},
        {"id": 1.5, "prompt": "p", "expectations": ["x"]},
        {"id": "a", "prompt": "p", "assertions": [{"type": "bogus"}]},
        {"id": "a", "prompt": "p", "assertions": [{"type": "regex"}]},
        {
            "id": "a",
            "prompt": "p",
            "assertions": [{"type": "command", "run": "x", "expect_exit": "0"}],
        },
        {"id": "a", "prompt": "p", "assertions": [{"path": "x"}]},
        {"id": "a", "prompt": "p", "assertions": [""]},
        {"id": "a", "prompt": "p", "assertions": [3]},
        {"id": "a", "prompt": "p", "expectations": ["x"], "files": {"a.txt": "inline"}},
        {"id": "a", "prompt": "p", "expectations": ["x"], "max_turns": 2.0},
    ],
    ids=[
        "no-assertions",
        "empty-assertions",
        "float-id",
        "unknown-type",
        "regex-without-pattern",
        "string-exit",
        "typeless-without-text",
        "empty-shorthand",
        "number-assertion",
        "inline-files",
        "float-turns",
    ],
)
def test_evals_schema_rejects(eval_: dict[str, Any]) -> None:
    assert errors("evals", {"evals": [eval_]})


@pytest.mark.parametrize(
    "doc",
    [
        {},
        {"triggers": [{"should_trigger": True}]},
        {"triggers": [{"query": "q", "should_trigger": "yes"}]},
    ],
    ids=["no-triggers", "no-query", "string-bool"],
)
def test_triggers_schema_rejects(doc: dict[str, Any]) -> None:
    assert errors("triggers", doc)


# -- config and rollup --------------------------------------------------------------------------------


def test_corpus_config_validates(corpus: Path) -> None:
    assert errors("config", json.loads((corpus / ".evolve.json").read_text())) == []


def test_config_schema_accepts_every_documented_key() -> None:
    doc = {
        "version": ">= 0.4, < 1",
        "layout": "auto",
        "models": ["anthropic"],
        "harnesses": ["claude"],
        "cache_dir": "/tmp/x",
        "results_format": "yaml",
        "telemetry": {"dir": "t"},
        "max_turns": 20,
        "judge_model": "anthropic/claude-sonnet-5",
        "baseline": False,
        "stale_results": "keep",
        "remote": {"url": "u", "default": False},
        "sandbox": {"enabled": True, "protected_roots": ["~/x"]},
        "checks": {
            "license": "MIT",
            "description_pattern": "Use when",
            "max_skill_lines": 500,
            "ideal_skill_lines": 200,
            "signals": True,
            "plugin_manifests": ["claude", "codex"],
            "marketplace": True,
        },
        "report": {
            "thresholds": {
                "triggers_min_pass_rate": 0.5,
                "evals_min_pass_rate": 0.66,
                "models": ["anthropic"],
                "maturity": ["stable"],
            },
            "junit": "j.xml",
            "cobertura": "c.xml",
            "strict": False,
        },
        "providers": {
            "anthropic": {
                "models": [
                    {"id": "claude-x", "input_per_mtok": 1, "supported": {"claude": "claude-x"}}
                ]
            }
        },
    }
    assert errors("config", doc) == []


@pytest.mark.parametrize(
    "doc",
    [
        {"layuot": "single"},
        {"layout": "flat"},
        {"max_turns": "20"},
        {"checks": {"max_skill_line": 3}},
        {"checks": {"plugin_manifests": ["cursor"]}},
        {"results_format": "toml"},
        {"providers": {"anthropic": {"models": [{"name": "no id"}]}}},
    ],
    ids=[
        "typo-key",
        "bad-layout",
        "string-int",
        "nested-typo",
        "bad-manifest",
        "bad-format",
        "provider-model-without-id",
    ],
)
def test_config_schema_rejects(doc: dict[str, Any]) -> None:
    assert errors("config", doc)


def test_rollup_sample_validates_and_rejects_junk() -> None:
    rollup = {
        "provider": "anthropic",
        "display": "Claude Sonnet 5",
        "passed": 10,
        "failed": 1,
        "total": 11,
        "pass_rate": 0.909091,
        "avg_run_seconds": 7.6,
        "estimate": {"input_tokens": 19520, "input_cost_usd": 0.05856},
        "baseline": {"passed": 5, "failed": 6, "total": 11, "pass_rate": 0.454545},
        "previous_delta": {"rate": -0.1, "avg_run_seconds": 0.5},
        "baseline_delta": {"rate": 0.454546},
    }
    doc: dict[str, Any] = {
        "schema": 3,
        "tool_version": "0.1.0",
        "latest_run": "2026-08-16T09:27:39Z",
        "plugins": {
            "golang": {
                "triggers": {"anthropic/claude-sonnet-5": rollup},
                "evals": {"anthropic/claude-sonnet-5": rollup},
                "skills": {"go-docs": {"triggers": {"anthropic/claude-sonnet-5": rollup}}},
            }
        },
    }
    assert errors("rollup", doc) == []
    bad = copy.deepcopy(doc)
    bad["plugins"]["golang"]["triggers"]["anthropic/claude-sonnet-5"]["baseline"]["provider"] = "x"
    assert errors("rollup", bad)
    assert errors("rollup", {**doc, "schema": 4})
