"""Scale-out end to end: `plan --shards 4`, four `run all --shard i/4 --fragments DIR`, `merge`.

One trigger + eval sweep of three skills runs unsharded and as four shards against the scripted model
server; the fragments merged in two different orders give byte-identical results files, equal to the
unsharded ones in every field but timings and timestamps; a missing shard is named.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from evolve_action.cli import main

pytestmark = pytest.mark.integration

SKILLS = ("greeter", "farewell", "tidier")

POLICY = """
rules:
  - name: eval-write
    when: {prompt: 'case-'}
    steps:
      - {tool: Write, input: {file_path: "{cwd}/out.txt", content: "done\\n"}}
      - "Wrote out.txt."
  - name: route
    route: {threshold: 0.2, answer: "Done."}
"""

TIMING_KEYS = {"ran_at", "timing", "avg_run_seconds", "tool_version"}


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_repo(root: Path) -> None:
    write(root, ".claude-plugin/plugin.json", json.dumps({"name": "demo", "version": "1.0.0"}))
    for skill in SKILLS:
        write(
            root,
            f"skills/{skill}/SKILL.md",
            f"---\nname: {skill}\ndescription: Use when the user asks for a {skill} note file.\n"
            f"---\n# {skill}\n\nWrite the note.\n",
        )
        write(
            root,
            f"evals/{skill}/triggers.json",
            json.dumps(
                {"triggers": [{"query": f"write a {skill} note file", "should_trigger": True}]}
            ),
        )
        write(
            root,
            f"evals/{skill}/evals.json",
            json.dumps(
                {
                    "evals": [
                        {
                            "id": "e",
                            "prompt": f"[case-{skill}] write it",
                            "assertions": [{"type": "file_exists", "path": "out.txt"}],
                        }
                    ]
                }
            ),
        )


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


def results_bytes(root: Path) -> dict[str, bytes]:
    return {s: (root / f"evals/{s}/results.json").read_bytes() for s in SKILLS}


def without_timings(value: Any) -> Any:
    """`value` without what depends on when and in which order sessions ran: timings, and the
    prompt cache's read/write split (one cache per model server, as the API keeps one per
    organisation: which session writes a shared prefix first depends on the order), whose sum
    does not depend on it; the cost priced from that split goes too."""
    if isinstance(value, dict):
        kept = {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
        if "cache_read_input_tokens" in kept and "cache_creation_input_tokens" in kept:
            read, written = (
                kept.pop("cache_read_input_tokens"),
                kept.pop("cache_creation_input_tokens"),
            )
            kept["cached_prompt_tokens"] = (read or 0) + (written or 0)
            kept.pop("cost_usd", None)
        return kept
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def test_four_shards_merge_to_the_unsharded_results(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    base = tmp_path / "base"
    make_repo(base)
    unsharded, sharded = tmp_path / "unsharded", tmp_path / "sharded"
    shutil.copytree(base, unsharded)
    shutil.copytree(base, sharded)
    srv = model_server(POLICY)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    flags = ["--model", "claude-sonnet-5", "--runs", "1", "--no-baseline"]

    code, _, err = run_cli(["run", "all", "--root", str(unsharded), *flags], env, tmp_path)
    assert code == 0, err

    code, out, err = run_cli(
        ["plan", "--root", str(sharded), *flags, "--shards", "4", "--json"], env, tmp_path
    )
    assert code == 0, err
    shard_plan = json.loads(out)
    assert shard_plan["matrix"] == {"shard": ["1/4", "2/4", "3/4", "4/4"]}
    units = [u for s in shard_plan["shards"] for u in s["units"]]
    assert len(units) == 6  # 3 skills x (triggers, evals), none split
    sets_per_shard = [{u["skill"] for u in s["units"]} for s in shard_plan["shards"]]
    assert sorted(len(s) for s in sets_per_shard) == [0, 1, 1, 1]

    frags = tmp_path / "fragments"
    for i in range(1, 5):
        code, out, err = run_cli(
            [
                "run",
                "all",
                "--root",
                str(sharded),
                *flags,
                "--shard",
                f"{i}/4",
                "--fragments",
                str(frags / str(i)),
            ],
            env,
            tmp_path,
        )
        assert code == 0, err
        assert f"shard {i}/4 of plan {shard_plan['plan_id']}" in out
    assert not list(sharded.rglob("results.json"))  # fragments only
    assert not (sharded / "EVALUATION.md").exists()
    assert len(list(frags.rglob("*.json"))) == 6 + 4  # one per unit, one manifest per shard

    merged = []
    for order in ((1, 2, 3, 4), (4, 2, 3, 1)):
        target = tmp_path / f"merge-{''.join(map(str, order))}"
        shutil.copytree(sharded, target)
        code, out, err = run_cli(
            ["merge", "--root", str(target), *[str(frags / str(i)) for i in order]], env, tmp_path
        )
        assert code == 0, err
        assert "6 fragment(s) into 3 results file(s)" in out
        assert (target / "EVALUATION.md").is_file()
        merged.append(results_bytes(target))
    assert merged[0] == merged[1]

    plain = results_bytes(unsharded)
    for skill in SKILLS:
        a = json.loads(merged[0][skill])
        b = json.loads(plain[skill])
        assert without_timings(a) == without_timings(b), skill

    gap = tmp_path / "merge-gap"
    shutil.copytree(sharded, gap)
    missing = next(i for i, s in enumerate(shard_plan["shards"], 1) if s["units"])
    present = [str(frags / str(i)) for i in range(1, 5) if i != missing]
    code, out, err = run_cli(["merge", "--root", str(gap), *present], env, tmp_path)
    assert code == 2
    assert f"missing shard {missing}/4" in err
    assert not list(gap.rglob("results.json"))
    code, out, err = run_cli(
        ["merge", "--root", str(gap), "--allow-missing", *present], env, tmp_path
    )
    assert code == 0, err
    assert f"WARN: merge: missing shard {missing}/4" in err
    assert len(list(gap.rglob("results.json"))) == 2


@pytest.mark.parametrize("tier", ["triggers", "evals"])
def test_one_tier_sharded_matches_that_tier_unsharded(
    tmp_path: Path, model_server: Any, claude_cli: Path, tier: str
) -> None:
    base = tmp_path / "base"
    make_repo(base)
    unsharded, sharded = tmp_path / "unsharded", tmp_path / "sharded"
    shutil.copytree(base, unsharded)
    shutil.copytree(base, sharded)
    srv = model_server(POLICY)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    flags = ["--model", "claude-sonnet-5"] + (["--runs", "1"] if tier == "triggers" else [])
    flags += ["--no-baseline"] if tier == "evals" else []
    code, _, err = run_cli(["run", tier, "--root", str(unsharded), *flags], env, tmp_path)
    assert code == 0, err

    plan_flags = [*flags, "--runs", "1"] if tier == "evals" else flags
    code, out, err = run_cli(
        ["plan", "--root", str(sharded), *plan_flags, "--shards", "2", "--tier", tier, "--json"],
        env,
        tmp_path,
    )
    assert code == 0, err
    shard_plan = json.loads(out)
    assert {u["tier"] for s in shard_plan["shards"] for u in s["units"]} == {tier}
    frags = tmp_path / "fragments"

    def frag_flag(i: int) -> list[str]:
        return ["--fragments", str(frags / str(i))]

    for i in (1, 2):
        code, out, err = run_cli(
            ["run", tier, "--root", str(sharded), *flags, "--shard", f"{i}/2", *frag_flag(i)],
            env,
            tmp_path,
        )
        assert code == 0, err
        assert f"shard {i}/2 of plan {shard_plan['plan_id']}" in out
    assert not list(sharded.rglob("results.json"))
    code, out, err = run_cli(["merge", "--root", str(sharded), str(frags)], env, tmp_path)
    assert code == 0, err
    for skill in SKILLS:
        a = json.loads((sharded / f"evals/{skill}/results.json").read_bytes())
        b = json.loads(results_bytes(unsharded)[skill])
        assert without_timings(a) == without_timings(b), skill
