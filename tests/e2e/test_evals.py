"""`run evals --dry-run` on fixture repos and on the real corpus (no agent sessions)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

from evolve_action import plan as fingerprint
from evolve_action import specs
from evolve_action.cli import main
from evolve_action.config import resolve_repository
from evolve_action.harness import available_harnesses
from evolve_action.results import load_results


def run(args: list[str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, {"PATH": "/usr/bin:/bin", "HOME": str(cwd)}, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


def test_corpus_modified_dry_run_plans_only_stale_entries(corpus: Path, tmp_path: Path) -> None:
    code, out, err = run(
        [
            "run",
            "evals",
            "--modified",
            "--no-baseline",
            "--dry-run",
            "--json",
            "--root",
            str(corpus),
        ],
        tmp_path,
    )
    assert code == 0, err
    planned = {
        (r["plugin"], r["skill"], r["model"], r["case"]) for r in map(json.loads, out.splitlines())
    }
    assert planned, "the corpus has stale entries (fixtures were removed from the copy)"
    repo, _ = resolve_repository(corpus, tmp_path, None, {})
    up_to_date = 0
    for es in repo.eval_sets():
        if es.evals_path is None:
            continue
        spec = specs.load_evals(es.evals_path)
        fps = {c.id: fingerprint.eval_fingerprint(c) for c in spec.evals}
        content = fingerprint.eval_content_hash(es.skill_dir)
        stored = load_results(es.results_dir).file
        for key, entry in (stored.models if stored else {}).items():
            if entry.evals is None or not key.startswith(("anthropic/", "openai/")):
                continue
            for r in entry.evals.results:
                if r.id not in fps:
                    continue
                modified = fingerprint.is_modified(
                    r.spec_hash, entry.evals.header.content_hash, fps[r.id], content
                )
                row = (es.plugin, es.skill, key, r.id)
                if key.startswith("anthropic/"):
                    assert (row in planned) is modified, (es.skill, key, r.id)
                    up_to_date += not modified
                else:  # planned only with Codex installed, and then only when stale
                    assert row not in planned or modified, (es.skill, key, r.id)
    assert up_to_date > 0
    codex = "codex" in available_harnesses(os.environ)
    assert codex or not any(m.startswith("openai/") for _, _, m, _ in planned)
    assert not any(m.startswith("xai/") for _, _, m, _ in planned)  # no grok CLI here
    assert "has no available harness" in err
