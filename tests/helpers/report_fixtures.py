"""Builders of results files and plugin repositories for the report tests (helper G).

Everything is deterministic: fixed timestamps, fixed figures. Results are built through the
results model (`evolve_action.results`) so summaries follow the schema-5 rules, then encoded with
the Go-compatible JSON encoder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evolve_action.encoding import encode_json, round6
from evolve_action.results import (
    EntryHeader,
    Estimate,
    EvalResult,
    EvalsEntry,
    EvalSnapshot,
    GradedAssertion,
    Measured,
    ModelEntry,
    Pricing,
    ResultsFile,
    Timing,
    TriggerResult,
    TriggersEntry,
    TriggerSnapshot,
    summarise_evals,
    summarise_grades,
    summarise_triggers,
    to_document,
    trim_eval_result,
)

DISPLAY = {
    "anthropic/claude-sonnet-5": ("Claude Sonnet 5", Pricing(input_per_mtok=3, output_per_mtok=15)),
    "anthropic/claude-haiku-4-5": (
        "Claude Haiku 4.5",
        Pricing(input_per_mtok=1, output_per_mtok=5),
    ),
    "openai/gpt-5.4": ("GPT-5.4", Pricing(input_per_mtok=2.5, output_per_mtok=15)),
    "openai/gpt-5.3-codex-spark": ("GPT-5.3 Codex Spark", None),
    "xai/grok-4.6": ("Grok 4.6", Pricing(input_per_mtok=2, output_per_mtok=6)),
    "cursor/composer-2.5": ("Cursor Composer 2.5", None),
    "google/gemini-3.5-flash": ("Gemini 3.5 Flash", Pricing(input_per_mtok=1.5, output_per_mtok=9)),
}
HARNESS = {
    "anthropic": "claude",
    "openai": "codex",
    "xai": "grok",
    "cursor": "cursor",
    "google": "gemini",
}


def header(key: str, *, ran_at: str, executed: bool = True, tier: str = "triggers") -> EntryHeader:
    provider, _, bare = key.partition("/")
    display, pricing = DISPLAY[key]
    return EntryHeader(
        provider=provider,
        model=bare,
        display=display,
        harness=HARNESS[provider],
        tool_version="0.7.0",
        ran_at=ran_at,
        executed=executed,
        content_hash="",
        runs_per_query=3 if executed and tier == "triggers" else 0,
        timeout_seconds=120 if tier == "triggers" else 600,
        pricing=pricing,
    )


def est(tokens: int, key: str) -> Estimate:
    _, pricing = DISPLAY[key]
    cost = None
    if pricing is not None and pricing.input_per_mtok is not None:
        cost = round6(tokens / 1e6 * pricing.input_per_mtok)
    return Estimate(input_tokens=tokens, input_cost_usd=cost)


def tq(
    query: str,
    should: bool,
    hits: int | None,
    *,
    runs: int = 3,
    avg: float | None = 5.0,
    estimate: Estimate | None = None,
) -> TriggerResult:
    """A trigger result; `hits=None` makes a count-only result."""
    if hits is None:
        return TriggerResult(query=query, should_trigger=should, estimate=estimate)
    rate = hits / runs
    passed = rate >= 0.5 if should else rate < 0.5
    return TriggerResult(
        query=query,
        should_trigger=should,
        hits=hits,
        runs=runs,
        passed=passed,
        avg_run_seconds=avg,
        estimate=estimate,
    )


def trig_entry(
    key: str,
    results: list[TriggerResult],
    *,
    ran_at: str = "2026-08-10T10:00:00Z",
    executed: bool = True,
    previous: list[TriggerResult] | None = None,
) -> TriggersEntry:
    prev = None
    if previous is not None:
        prev = TriggerSnapshot(
            ran_at="2026-08-01T10:00:00Z",
            summary=summarise_triggers(previous),
            results=tuple(previous),
        )
    return TriggersEntry(
        header=header(key, ran_at=ran_at, executed=executed),
        results=tuple(results),
        summary=summarise_triggers(results, executed=executed),
        previous=prev,
    )


def assertion(text: str, passed: bool | None, evidence: str) -> GradedAssertion:
    return GradedAssertion(
        type="llm", text=text, passed=passed, evidence=evidence, source="assertion"
    )


def ev(
    eid: str,
    *,
    name: str = "",
    checks: list[GradedAssertion] | None = None,
    error: str = "",
    secs: float | None = 30.0,
    estimate: Estimate | None = None,
    measured: Measured | None = None,
) -> EvalResult:
    timing = Timing(executor_duration_seconds=secs) if secs is not None else None
    if error:
        return EvalResult(id=eid, name=name, runtime_error=error, estimate=estimate, timing=timing)
    checks = checks or []
    return EvalResult(
        id=eid,
        name=name,
        passed=all(c.passed is not False for c in checks),
        estimate=estimate,
        measured=measured,
        expectations=tuple(checks),
        summary=summarise_grades(checks),
        timing=timing,
    )


def eval_entry(
    key: str,
    results: list[EvalResult],
    *,
    ran_at: str = "2026-08-10T11:00:00Z",
    previous: list[EvalResult] | None = None,
    baseline: list[EvalResult] | None = None,
) -> EvalsEntry:
    def snap(rs: list[EvalResult] | None) -> EvalSnapshot | None:
        if rs is None:
            return None
        trimmed = tuple(trim_eval_result(r) for r in rs)
        return EvalSnapshot(
            ran_at="2026-08-01T11:00:00Z", summary=summarise_evals(trimmed), results=trimmed
        )

    return EvalsEntry(
        header=header(key, ran_at=ran_at, tier="evals"),
        results=tuple(results),
        summary=summarise_evals(results),
        baseline=snap(baseline),
        previous=snap(previous),
    )


def write_results(path: Path, plugin: str, skill: str, models: dict[str, ModelEntry]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = to_document(ResultsFile(plugin=plugin, skill=skill, models=models))
    path.write_text(encode_json(doc), encoding="utf-8")


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Scenario content


def _m(i: int, o: int, cr: int | None, cw: int | None, cost: float | None) -> Measured:
    return Measured(
        input_tokens=i,
        cache_read_input_tokens=cr,
        cache_creation_input_tokens=cw,
        output_tokens=o,
        cost_usd=cost,
    )


def alpha_skill_models() -> dict[str, ModelEntry]:
    """A skill with both tiers, deltas, baselines, errors and every cell variant."""
    s5, spark, grok, cursor = (
        "anthropic/claude-sonnet-5",
        "openai/gpt-5.3-codex-spark",
        "xai/grok-4.6",
        "cursor/composer-2.5",
    )
    queries = [
        ("Write tests for this package", True),
        ("Add a fuzz test\nfor the parser", True),
        ("Deploy the site | prod", False),
    ]
    s5_trig = trig_entry(
        s5,
        [
            tq(queries[0][0], True, 3, avg=5.9, estimate=est(1834, s5)),
            tq(queries[1][0], True, 1, avg=6.25, estimate=est(1839, s5)),
            tq(queries[2][0], False, 0, avg=4.0, estimate=est(1822, s5)),
        ],
        previous=[
            tq(queries[0][0], True, 2, avg=6.0, estimate=est(1800, s5)),
            tq(queries[1][0], True, 0, avg=7.0, estimate=est(1800, s5)),
        ],
    )
    spark_trig = trig_entry(
        spark,
        [tq(q, s, 2 if s else 1, avg=20.0) for q, s in queries],
        ran_at="2026-08-11T09:30:00Z",
    )
    grok_trig = trig_entry(
        grok,
        [tq(q, s, None, estimate=est(1700, grok)) for q, s in queries],
        executed=False,
    )
    long_evidence = "stdout:" + "é" * 79 + "|tail"  # multi-byte text around the 160-byte cut
    good = assertion("file tests.go exists", True, "tests.go exists")
    bad = assertion("command `go test ./...` exits 0", False, "exit 1: FAIL | pkg\nmore output")
    bad2 = assertion("output mentions fuzzing", False, long_evidence)
    skipped = assertion("tool Bash was called", None, "skipped: harness does not report tool calls")
    s5_evals = eval_entry(
        s5,
        [
            ev(
                "table-driven",
                name="Table-driven tests",
                checks=[good, bad],
                secs=33.0,
                estimate=est(1852, s5),
                measured=_m(9, 2050, 114745, 10486, 0.427665),
            ),
            ev(
                "fuzz",
                checks=[good, bad2, skipped],
                secs=45.6,
                estimate=est(1867, s5),
                measured=_m(14, 1925, 163729, 10394, 0.468617),
            ),
            ev("broken", error="agent timed out after 600s\nno output", secs=600.0),
        ],
        previous=[
            ev(
                "table-driven",
                checks=[good, good],
                secs=30.0,
                measured=_m(10, 2000, 100000, 10000, 0.4),
            ),
            ev("fuzz", checks=[bad2], secs=40.0),
        ],
        baseline=[
            ev(
                "table-driven",
                checks=[bad, good],
                secs=20.0,
                measured=_m(12, 1000, 90000, 9000, 0.3),
            ),
            ev("fuzz", checks=[bad2, bad], secs=25.0),
            ev("broken", checks=[good], secs=10.0),
        ],
    )
    spark_evals = eval_entry(
        spark,
        [
            ev(
                "table-driven",
                checks=[good, good],
                secs=40.0,
                measured=_m(90700, 10699, 550272, None, None),
            ),
            ev(
                "fuzz",
                name="Fuzz target",
                checks=[good],
                secs=41.2,
                measured=_m(84588, 15786, None, None, None),
            ),
        ],
        baseline=[ev("fuzz", error="errored", secs=12.0)],
    )
    cursor_evals = eval_entry(cursor, [ev("fuzz", error="cursor: no usable output", secs=None)])
    return {
        s5: ModelEntry(triggers=s5_trig, evals=s5_evals),
        spark: ModelEntry(triggers=spark_trig, evals=spark_evals),
        grok: ModelEntry(triggers=grok_trig),
        cursor: ModelEntry(evals=cursor_evals),
    }


def beta_skill_models() -> dict[str, ModelEntry]:
    """A triggers-only skill; one model (google) is outside the configured models."""
    s5, haiku, gem = (
        "anthropic/claude-sonnet-5",
        "anthropic/claude-haiku-4-5",
        "google/gemini-3.5-flash",
    )
    qs = [("Explain the release flow", True), ("Tell me a joke", False)]
    return {
        s5: ModelEntry(
            triggers=trig_entry(s5, [tq(q, s, 3 if s else 0, estimate=est(900, s5)) for q, s in qs])
        ),
        haiku: ModelEntry(
            triggers=trig_entry(
                haiku,
                [tq(q, s, 0 if s else 3, avg=2.5) for q, s in qs],
                ran_at="2026-08-12T08:00:00Z",
            )
        ),
        gem: ModelEntry(triggers=trig_entry(gem, [tq(q, s, 3) for q, s in qs])),
    }


def gamma_skill_models() -> dict[str, ModelEntry]:
    """An evals-only skill whose pass rate is low."""
    s5 = "anthropic/claude-sonnet-5"
    ok = assertion("ok", True, "fine")
    no = assertion("the answer cites the docs", False, "no citation found")
    return {
        s5: ModelEntry(
            evals=eval_entry(
                s5,
                [ev("1", checks=[ok]), ev("2", checks=[no]), ev("3", checks=[no, ok])],
                ran_at="2026-08-09T07:00:00Z",
            )
        )
    }


def _skill(root: Path, rel: str, name: str) -> None:
    write_text(
        root / rel / "SKILL.md",
        f"---\nname: {name}\ndescription: Does {name} things. Use when asked about {name}.\n---\n\n# {name}\n",
    )


def _triggers(path: Path, qs: list[tuple[str, bool]]) -> None:
    write_json(path, {"triggers": [{"query": q, "should_trigger": s} for q, s in qs]})


def _evals(path: Path, ids: list[str]) -> None:
    write_json(
        path, {"evals": [{"id": i, "prompt": f"do {i}", "assertions": ["it works"]} for i in ids]}
    )


ALPHA_QUERIES = [
    ("Write tests for this package", True),
    ("Add a fuzz test\nfor the parser", True),
    ("Deploy the site | prod", False),
]


def make_marketplace(root: Path) -> Path:
    """A marketplace with plugins alpha (stable), beta (prerelease, gated out) and gamma (no results)."""
    write_json(root / ".claude-plugin" / "marketplace.json", {"name": "fixture", "plugins": []})
    write_json(
        root / ".evolve.json",
        {
            "models": ["anthropic", "gpt-5.4", "gpt-5.3-codex-spark", "xai", "cursor"],
            "report": {"thresholds": {"triggers_min_pass_rate": 0.6, "evals_min_pass_rate": 0.7}},
        },
    )
    alpha = root / "plugins" / "alpha"
    write_json(alpha / ".claude-plugin" / "plugin.json", {"name": "alpha", "version": "1.0.0"})
    _skill(alpha, "skills/alpha-skill", "alpha-skill")
    _skill(alpha, "skills/beta-skill", "beta-skill")
    _triggers(alpha / "evals/alpha-skill/triggers.json", ALPHA_QUERIES)
    _evals(alpha / "evals/alpha-skill/evals.json", ["table-driven", "fuzz", "broken"])
    write_results(
        alpha / "evals/alpha-skill/results.json", "alpha", "alpha-skill", alpha_skill_models()
    )
    _triggers(
        alpha / "evals/beta-skill/triggers.json",
        [("Explain the release flow", True), ("Tell me a joke", False)],
    )
    write_results(
        alpha / "evals/beta-skill/results.json", "alpha", "beta-skill", beta_skill_models()
    )

    beta = root / "plugins" / "beta"
    write_json(beta / ".claude-plugin" / "plugin.json", {"name": "beta", "version": "2.0.0-rc.1"})
    _skill(beta, "skills/gamma", "gamma")
    _evals(beta / "evals/gamma/evals.json", ["1", "2", "3"])
    write_results(beta / "evals/gamma/results.json", "beta", "gamma", gamma_skill_models())

    gamma = root / "plugins" / "gamma"
    write_json(gamma / ".claude-plugin" / "plugin.json", {"name": "gamma", "version": "0.1.0"})
    _skill(gamma, "skills/lonely", "lonely")
    _triggers(gamma / "evals/lonely/triggers.json", [("Anything", True)])
    return root


def make_single(root: Path) -> Path:
    """A single-plugin repository with the alpha skills (no config: every model is shown)."""
    write_json(root / ".claude-plugin" / "plugin.json", {"name": "solo", "version": "0.3.0"})
    _skill(root, "skills/alpha-skill", "alpha-skill")
    _triggers(root / "evals/alpha-skill/triggers.json", ALPHA_QUERIES)
    _evals(root / "evals/alpha-skill/evals.json", ["table-driven", "fuzz", "broken"])
    write_results(
        root / "evals/alpha-skill/results.json", "solo", "alpha-skill", alpha_skill_models()
    )
    _skill(root, "skills/beta-skill", "beta-skill")
    _triggers(
        root / "evals/beta-skill/triggers.json",
        [("Explain the release flow", True), ("Tell me a joke", False)],
    )
    write_results(root / "evals/beta-skill/results.json", "solo", "beta-skill", beta_skill_models())
    return root
