"""A synthetic marketplace of N skills whose results files have the size and shape of real ones.

`bench/synth.py` writes small results files (5 models, no snapshots: about 26 KB each). Results
files evolve writes after months of use are ten times larger: every model of three providers, a
`previous` snapshot on both tiers, a without-skill `baseline` snapshot, graded expectations with
the judge's evidence, token estimates and measured usage on every case. The shapes below follow
what such files hold (field for field, as `results._model` describes them); every string and
number is generated here, nothing is copied from any real repository.

`generate(root, skills)` writes a Claude Code marketplace (ten plugins; per skill an 80-line
`SKILL.md`, 14 trigger queries, 3 evals with 6 graded expectations each), a `.evolve.yaml`
naming the 15 models, and per skill a schema-5 `results.json` (about 330 KB; half the entries have a `previous` snapshot,
half the eval entries a `baseline`) whose fingerprints
come from evolve-action's own planning code, so `run all --modified` plans nothing: every case of
every model is up to date.

    .venv/bin/python bench/synth_full.py DIR --skills 300

Used by `bench/sweep.py`; run on its own it prints how long generation took and the total size.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from evolve_action import plan, results
from evolve_action.catalog import build_catalog
from evolve_action.repo import discover

MODELS = (
    "anthropic/claude-fable-5",
    "anthropic/claude-haiku-4-5",
    "anthropic/claude-opus-4-8",
    "anthropic/claude-opus-5",
    "anthropic/claude-sonnet-4-6",
    "anthropic/claude-sonnet-5",
    "openai/gpt-5.3-codex-spark",
    "openai/gpt-5.4",
    "openai/gpt-5.4-mini",
    "openai/gpt-5.5",
    "openai/gpt-5.6-luna",
    "openai/gpt-5.6-sol",
    "openai/gpt-5.6-terra",
    "xai/grok-4.5",
    "xai/grok-4.6",
)
PLUGINS = 10
TOPICS = ("csv", "yaml", "sql", "docker", "terraform", "python", "go", "markdown", "git", "http")
QUERIES = 14
EVALS = 3
EXPECTATIONS = 6
RAN_AT = "2026-11-01T00:00:00Z"
PREVIOUS_RAN_AT = "2026-10-01T00:00:00Z"
PREVIOUS_SHARE = 0.5
"""The share of entries with a `previous` snapshot (the rest ran once)."""
BASELINE_SHARE = 0.5
"""The share of eval entries with a without-skill `baseline` snapshot."""


def _skill_md(name: str, topic: str, n: int) -> str:
    body = "\n".join(
        f"{i}. When the {topic} input has issue {i}, check step {i} and fix it before going on; "
        f"prefer the smallest change that keeps the {topic} file valid."
        for i in range(1, 70)
    )
    return (
        f"---\nname: {name}\ndescription: Review and repair {topic} files (variant {n}). Use when "
        f"the user asks to check, fix or tidy a {topic} file.\nlicense: MIT\n---\n\n# {name}\n\n"
        f"## Steps\n\n{body}\n"
    )


def _triggers(topic: str, n: int) -> dict[str, object]:
    half = QUERIES // 2
    yes = [f"Please tidy this {topic} file #{n}.{i}; it fails to load" for i in range(half)]
    no = [f"What is the capital of country {n}.{i}, and why?" for i in range(QUERIES - half)]
    return {
        "triggers": [{"query": q, "should_trigger": True} for q in yes]
        + [{"query": q, "should_trigger": False} for q in no]
    }


def _evals(topic: str, n: int) -> dict[str, object]:
    return {
        "evals": [
            {
                "id": f"case-{i}",
                "prompt": f"Fix the broken {topic} file number {n}.{i} and write fixed.{topic}.",
                "expected_output": f"a valid fixed.{topic}",
                "expectations": [
                    f"The answer explains fix {j} of the {topic} file"
                    for j in range(EXPECTATIONS - 2)
                ],
                "assertions": [
                    {"type": "file_exists", "path": f"fixed.{topic}"},
                    {"type": "regex", "pattern": "fixed"},
                ],
            }
            for i in range(EVALS)
        ]
    }


def generate(root: Path, skills: int) -> Path:
    """Write the repository under `root` (created) and return it."""
    root.mkdir(parents=True, exist_ok=True)
    names = [f"tools-{p:02d}" for p in range(PLUGINS)]
    (root / ".claude-plugin").mkdir(exist_ok=True)
    (root / ".claude-plugin/marketplace.json").write_text(
        json.dumps(
            {
                "name": "synthetic",
                "owner": {"name": "bench"},
                "plugins": [{"name": n, "source": f"./plugins/{n}"} for n in names],
            },
            indent=2,
        )
        + "\n"
    )
    (root / ".evolve.yaml").write_text(
        "models:\n"
        + "".join(f"  - {m}\n" for m in MODELS)
        + "baseline: false\n"
        + "checks:\n  license: MIT\n  plugin_manifests: [claude]\n  marketplace: false\n"
        + "report:\n  thresholds:\n    triggers_min_pass_rate: 0.5\n    evals_min_pass_rate: 0.5\n"
    )
    (root / "LICENSE").write_text("MIT License\n")
    for plugin in names:
        pdir = root / "plugins" / plugin
        (pdir / ".claude-plugin").mkdir(parents=True, exist_ok=True)
        (pdir / ".claude-plugin/plugin.json").write_text(
            json.dumps({"name": plugin, "version": "1.0.0", "license": "MIT"}) + "\n"
        )
    for n in range(skills):
        plugin = names[n % PLUGINS]
        topic = TOPICS[n % len(TOPICS)]
        name = f"{topic}-fixer-{n:04d}"
        pdir = root / "plugins" / plugin
        (pdir / "skills" / name).mkdir(parents=True)
        (pdir / "skills" / name / "SKILL.md").write_text(_skill_md(name, topic, n))
        edir = pdir / "evals" / name
        edir.mkdir(parents=True)
        (edir / "triggers.json").write_text(json.dumps(_triggers(topic, n), indent=2) + "\n")
        (edir / "evals.json").write_text(json.dumps(_evals(topic, n), indent=2) + "\n")
    _write_results(root)
    return root


def _estimate(rng: random.Random, rate: float | None) -> results.Estimate:
    tokens = rng.randint(2_000, 9_000)
    cost = None if rate is None else round(tokens / 1e6 * rate, 6)
    return results.Estimate(input_tokens=tokens, input_cost_usd=cost)


def _measured(rng: random.Random) -> results.Measured:
    return results.Measured(
        input_tokens=rng.randint(10, 400),
        cache_read_input_tokens=rng.randint(20_000, 120_000),
        cache_creation_input_tokens=rng.randint(5_000, 30_000),
        output_tokens=rng.randint(500, 4_000),
        cost_usd=round(rng.uniform(0.02, 0.9), 6),
    )


def _evidence(rng: random.Random, topic: str, j: int) -> str:
    return rng.choice(("yes", "matched", f"fix {j} named", f"the {topic} fix is explained", ""))


def _trigger_results(
    rng: random.Random, si: plan.SetInput, rate: float | None
) -> tuple[results.TriggerResult, ...]:
    assert si.triggers is not None
    return tuple(
        results.TriggerResult(
            query=q.query,
            should_trigger=q.should_trigger,
            hits=3 if q.should_trigger else 0,
            runs=3,
            passed=True,
            avg_run_seconds=round(rng.uniform(3, 9), 3),
            estimate=_estimate(rng, rate),
            spec_hash=q.spec_hash,
        )
        for q in si.triggers
    )


def _eval_result(
    rng: random.Random, case_id: str, spec_hash: str, topic: str
) -> results.EvalResult:
    grades = (
        *(
            results.GradedAssertion(
                type="llm",
                text=f"The answer explains fix {j} of the {topic} file",
                passed=True,
                evidence=_evidence(rng, topic, j),
                source="expectation",
            )
            for j in range(EXPECTATIONS - 2)
        ),
        results.GradedAssertion(
            type="file_exists",
            path=f"fixed.{topic}",
            text=f"fixed.{topic} exists",
            passed=True,
            evidence="exists",
            source="assertion",
        ),
        results.GradedAssertion(
            type="regex",
            pattern="fixed",
            text="output matches /fixed/",
            passed=True,
            evidence="matched",
            source="assertion",
        ),
    )
    calls = {"Bash": rng.randint(1, 9), "Read": rng.randint(1, 6), "Skill": 1, "Write": 1}
    return results.EvalResult(
        id=case_id,
        passed=True,
        estimate=_estimate(rng, 3.0),
        measured=_measured(rng),
        expectations=grades,
        summary=results.GradeSummary(passed=len(grades), failed=0, total=len(grades), pass_rate=1),
        execution_metrics=results.ExecutionMetrics(
            tool_calls=calls, total_tool_calls=sum(calls.values())
        ),
        timing=results.Timing(
            total_tokens=rng.randint(30_000, 150_000),
            executor_duration_seconds=round(rng.uniform(20, 120), 2),
        ),
        spec_hash=spec_hash,
    )


def _write_results(root: Path) -> None:
    """One complete, up-to-date results file per skill, fingerprinted by our planning code."""
    repo = discover(root, root)
    catalog = {m.key: m for m in build_catalog({}).models}
    built = plan.build_inputs(repo.eval_sets(), root=root)
    for n, si in enumerate(built.sets):
        assert si.results_dir is not None and si.triggers is not None and si.evals is not None
        rng = random.Random(n)
        topic = si.skill.split("-", 1)[0]
        models: dict[str, results.ModelEntry] = {}
        for key in MODELS:
            model = catalog[key]
            rate = model.pricing.input_per_mtok if model.pricing is not None else None
            t_results = _trigger_results(rng, si, rate)
            t_summary = results.summarise_triggers(t_results)
            e_results = tuple(_eval_result(rng, c.id, c.fingerprint, topic) for c in si.evals)
            e_summary = results.summarise_evals(e_results)
            trimmed = tuple(
                results.EvalResult(
                    id=r.id,
                    passed=r.passed,
                    measured=r.measured,
                    summary=r.summary,
                    timing=r.timing,
                )
                for r in e_results
            )
            header = dict(harness=model.preferred, tool_version="2.1.0", executed=True)
            models[key] = results.ModelEntry(
                triggers=results.TriggersEntry(
                    header=results.make_header(
                        model,
                        **header,  # type: ignore[arg-type]
                        ran_at=RAN_AT,
                        content_hash=si.trigger_content_hash,
                        timeout_seconds=120,
                        runs_per_query=3,
                    ),
                    results=t_results,
                    summary=t_summary,
                    previous=results.TriggerSnapshot(
                        ran_at=PREVIOUS_RAN_AT,
                        summary=t_summary,
                        results=_trigger_results(rng, si, rate),
                    )
                    if rng.random() < PREVIOUS_SHARE
                    else None,
                ),
                evals=results.EvalsEntry(
                    header=results.make_header(
                        model,
                        **header,  # type: ignore[arg-type]
                        ran_at=RAN_AT,
                        content_hash=si.eval_content_hash,
                        timeout_seconds=600,
                    ),
                    results=e_results,
                    summary=e_summary,
                    baseline=results.EvalSnapshot(
                        ran_at=RAN_AT,
                        summary=e_summary,
                        results=tuple(
                            results.EvalResult(
                                id=r.id,
                                passed=r.passed,
                                measured=r.measured,
                                summary=r.summary,
                                timing=r.timing,
                                fingerprint=c.fingerprint,
                            )
                            for r, c in zip(trimmed, si.evals, strict=True)
                        ),
                    )
                    if rng.random() < BASELINE_SHARE
                    else None,
                    previous=results.EvalSnapshot(
                        ran_at=PREVIOUS_RAN_AT, summary=e_summary, results=trimmed
                    )
                    if rng.random() < PREVIOUS_SHARE
                    else None,
                ),
            )
        file = results.ResultsFile(plugin=si.plugin, skill=si.skill, models=models)
        results.write_results(si.results_dir, file, "json")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--skills", type=int, default=300)
    args = ap.parse_args()
    t0 = time.perf_counter()
    generate(args.dir, args.skills)
    size = sum(p.stat().st_size for p in args.dir.rglob("results.json"))
    print(
        f"{args.skills} skills in {time.perf_counter() - t0:.1f} s -> {args.dir} "
        f"(results files: {size / 1e6:.1f} MB)"
    )


if __name__ == "__main__":
    main()
