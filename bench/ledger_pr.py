"""Benchmark: sessions and dollars of a three-push PR, with the PR's ledger and without it.

A same-repository PR (the integration tests' three-skill kit, `tests/integration/test_action_pr.py`)
is evaluated as GitHub would: each push is a workflow run, and so is the bot's results commit
after it (an App token or PAT triggers one). Push 1 opens the PR editing beta and gamma; push 2
edits beta again; push 3 edits gamma again: six workflow runs. Each runs the real CLI
(`python -m evolve_action pr`, a fresh process) against the fake GitHub (`tests/helpers`) and the
scripted model server, with the action's defaults (`base: auto`, `max_runs` 6, 3 runs per query).
`--src DIR` runs another checkout's `src` (e.g. the commit before the ledger) for the "before"
figure. Sessions are the `sessions` output; dollars price every model request of the workflow
run in the scripted server's log (its reported usage) at the catalog's list price of the model.

    .venv/bin/python bench/ledger_pr.py [--src /tmp/base/src] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.helpers.agents import MODEL, skill_md
from tests.helpers.fake_github import FakeGitHub
from tests.integration.test_action_pr import REPO, Pr, beta_and_gamma_edited, git, make_pr

from evolve_action.catalog import BUILTIN_CATALOG, measured_cost_usd
from evolve_action.modelserver import ModelServer

POLICY = "default: {route: {threshold: 0.1}}\n"


def _usd(requests: list[dict[str, Any]]) -> float:
    """List price of these logged model requests (their reported usage)."""
    model = BUILTIN_CATALOG.lookup(MODEL)
    pricing = model.pricing if model is not None else None
    total = 0.0
    for r in requests:
        u = r.get("usage") or {}
        total += (
            measured_cost_usd(
                pricing,
                input_tokens=int(u.get("input_tokens") or 0),
                output_tokens=int(u.get("output_tokens") or 0),
                cache_read_input_tokens=int(u.get("cache_read_input_tokens") or 0),
                cache_creation_input_tokens=int(u.get("cache_creation_input_tokens") or 0),
            )
            or 0.0
        )
    return total


def _run(pr: Pr, run_id: str, src: str | None, srv: ModelServer) -> dict[str, Any]:
    env = {**pr.env, "GITHUB_RUN_ID": run_id}
    if src:
        env["PYTHONPATH"] = src
    pr.output.write_text("")
    pr.summary.write_text("")
    before = len(srv.requests)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "evolve_action", "pr"],
        env=env,
        cwd=pr.workspace,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"workflow run {run_id} failed ({proc.returncode}):\n{proc.stderr}")
    outputs = pr.outputs()
    return {
        "run": run_id,
        "sessions": int(outputs.get("sessions") or 0),
        "usd": round(_usd(list(srv.requests[before:])), 4),
        "requests": len(srv.requests) - before,
        "delta": outputs.get("delta", ""),
        "seconds": round(seconds, 1),
    }


def _checkout_tip(pr: Pr) -> None:
    gh = pr.gh
    tip = gh.ref_sha(REPO, "heads/feature")
    assert tip is not None
    event = json.loads(Path(pr.env["GITHUB_EVENT_PATH"]).read_text())
    event["pull_request"]["head"]["sha"] = tip
    Path(pr.env["GITHUB_EVENT_PATH"]).write_text(json.dumps(event))
    git(pr.workspace, "fetch", "-q", str(gh.git_dir(REPO)), "feature")
    git(pr.workspace, "checkout", "-q", "-f", "--detach", "FETCH_HEAD")
    git(pr.workspace, "clean", "-q", "-fdx")
    pr.env["GITHUB_SHA"] = tip


def three_pushes(src: str | None) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-ledger.") as tmp:
        srv = ModelServer(POLICY, port=0).start()
        try:
            with FakeGitHub.start(Path(tmp)) as gh:
                pr = make_pr(
                    Path(tmp),
                    gh,
                    change=beta_and_gamma_edited(),
                    base_url=srv.base_url,
                    inputs={"base": "auto", "max_runs": "6", "runs": "3", "fail_on": "never"},
                )
                pr.env["PATH"] = os.environ["PATH"]
                edits = [
                    None,
                    ("beta", "Handle beta sheets. Use when asked about beta."),
                    ("gamma", "Handle gamma sheets. Use when asked about gamma."),
                ]
                for n, edit in enumerate(edits, start=1):
                    if edit is not None:
                        name, description = edit
                        gh.commit(
                            REPO,
                            {f"skills/{name}/SKILL.md": skill_md(name, description)},
                            parents=[gh.ref_sha(REPO, "heads/feature")],
                            branch="feature",
                        )
                        _checkout_tip(pr)
                    runs.append({"push": n, **_run(pr, f"{n}0", src, srv)})
                    _checkout_tip(pr)  # the bot's results commit: another workflow run
                    runs.append({"push": n, "bot": True, **_run(pr, f"{n}1", src, srv)})
        finally:
            srv.stop()
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--src", help="run this src directory instead of the installed package")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    runs = three_pushes(args.src)
    total = {"sessions": sum(r["sessions"] for r in runs), "usd": sum(r["usd"] for r in runs)}
    if args.json:
        json.dump({"runs": runs, "total": total}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print("| workflow run | sessions | model requests | list-price $ | delta |")
    print("| --- | ---: | ---: | ---: | --- |")
    for r in runs:
        what = f"push {r['push']}" + (": the bot's commit" if r.get("bot") else "")
        print(f"| {what} | {r['sessions']} | {r['requests']} | {r['usd']:.2f} | {r['delta']} |")
    print(f"| **total** | **{total['sessions']}** | | **{total['usd']:.2f}** | |")
    print(f"\n1-minute load {load:.2f} → {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
