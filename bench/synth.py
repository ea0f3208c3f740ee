"""A synthetic marketplace of N skills whose stored evidence is complete and up to date.

`generate(root, skills)` writes a Claude Code marketplace (`.claude-plugin/marketplace.json`, ten
plugins under `plugins/`), each skill with a real-looking `SKILL.md` (about 80 lines), a triggers
file (8 queries) and an evals file (3 evals: expectations, a regex and a file assertion), a config
naming 5 models, and a schema-5 `results.json` per skill with an executed triggers and evals entry
for every model. The fingerprints are computed by evolve-action's own planning code, so `run
triggers|evals --new --modified` plans nothing: every case is up to date. Nothing is copied from any
real repository.

    .venv/bin/python bench/synth.py DIR --skills 300

Used by `bench/noop_pr.py`; run on its own it prints how long generation took.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from evolve_action import plan, results
from evolve_action.catalog import build_catalog
from evolve_action.repo import discover

MODELS = (
    "anthropic/claude-haiku-4-5",
    "anthropic/claude-sonnet-4-6",
    "anthropic/claude-sonnet-5",
    "anthropic/claude-opus-4-8",
    "anthropic/claude-opus-5",
)
PLUGINS = 10
TOPICS = ("csv", "yaml", "sql", "docker", "terraform", "python", "go", "markdown", "git", "http")


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
    yes = [f"Please tidy this {topic} file #{n}.{i}" for i in range(4)]
    no = [f"What is the capital of country {n}.{i}?" for i in range(4)]
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
                "expectations": [f"The answer explains the {topic} fix"],
                "assertions": [
                    {"type": "file_exists", "path": f"fixed.{topic}"},
                    {"type": "regex", "pattern": "fixed"},
                ],
            }
            for i in range(3)
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
        "models: [" + ", ".join(MODELS) + "]\nbaseline: false\n"
        "checks:\n  license: MIT\n  plugin_manifests: [claude]\n  marketplace: false\n"
    )
    for plugin in names:
        pdir = root / "plugins" / plugin
        (pdir / ".claude-plugin").mkdir(parents=True, exist_ok=True)
        (pdir / ".claude-plugin/plugin.json").write_text(
            json.dumps({"name": plugin, "version": "1.0.0"}) + "\n"
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


def _write_results(root: Path) -> None:
    """One complete, up-to-date results file per skill, fingerprinted by our planning code."""
    repo = discover(root, root)
    catalog = {m.key: m for m in build_catalog({}).models}
    built = plan.build_inputs(repo.eval_sets(), root=root)
    for si in built.sets:
        assert si.results_dir is not None and si.triggers is not None and si.evals is not None
        models: dict[str, results.ModelEntry] = {}
        for key in MODELS:
            model = catalog[key]
            t_results = tuple(
                results.TriggerResult(
                    query=q.query,
                    should_trigger=q.should_trigger,
                    hits=3 if q.should_trigger else 0,
                    runs=3,
                    passed=True,
                    avg_run_seconds=4.2,
                    spec_hash=q.spec_hash,
                )
                for q in si.triggers
            )
            e_results = tuple(
                results.EvalResult(
                    id=c.id,
                    passed=True,
                    measured=results.Measured(
                        input_tokens=18_000, output_tokens=900, cost_usd=0.0675
                    ),
                    timing=results.Timing(executor_duration_seconds=31.5),
                    spec_hash=c.fingerprint,
                )
                for c in si.evals
            )
            header = dict(harness="claude", tool_version="0.0.0", executed=True)
            models[key] = results.ModelEntry(
                triggers=results.TriggersEntry(
                    header=results.make_header(
                        model,
                        **header,  # type: ignore[arg-type]
                        ran_at="2026-11-01T00:00:00Z",
                        content_hash=si.trigger_content_hash,
                        timeout_seconds=120,
                        runs_per_query=3,
                    ),
                    results=t_results,
                    summary=results.TriggerSummary(
                        passed=len(t_results), failed=0, total=len(t_results), pass_rate=1
                    ),
                ),
                evals=results.EvalsEntry(
                    header=results.make_header(
                        model,
                        **header,  # type: ignore[arg-type]
                        ran_at="2026-11-01T00:00:00Z",
                        content_hash=si.eval_content_hash,
                        timeout_seconds=600,
                    ),
                    results=e_results,
                    summary=results.EvalSummary(
                        passed=len(e_results), failed=0, total=len(e_results), pass_rate=1
                    ),
                ),
            )
        file = results.ResultsFile(plugin=si.plugin, skill=si.skill, models=models)
        results.write_results(si.results_dir, file, "json")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--skills", type=int, default=30)
    args = ap.parse_args()
    t0 = time.perf_counter()
    generate(args.dir, args.skills)
    print(f"{args.skills} skills in {time.perf_counter() - t0:.1f} s -> {args.dir}")


if __name__ == "__main__":
    main()
