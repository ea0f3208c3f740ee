"""Benchmark: the no-op PR — `evolve-action pr` on a PR whose touched skill is already up to date.

For each size (default 30, 300 and 1,000 skills) `bench/synth.py` writes a marketplace whose
evidence is complete and current, and `evolve-action report` renders its EVALUATION.md. The base
commit goes to the fake GitHub REST server (`tests/helpers/fake_github.py`, on 127.0.0.1); the PR
reformats one skill's `triggers.json` (whitespace only: every fingerprint is unchanged), so the
action finds one touched skill, plans nothing, starts no agent session and has nothing to commit.
The runner's checkout (a test-merge commit) is made with real git. Each repetition runs the action
as the runner does — a fresh `python -m evolve_action pr` process with the `GITHUB_*`/`INPUT_*`
environment — on a fresh copy of the workspace, and records its wall time and peak RSS (`wait4`).

    .venv/bin/python bench/noop_pr.py [--sizes 30,300,1000] [--repeat 3] [--json]

Prints the median, min and max per size and the 1-minute load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.synth import generate
from tests.helpers.fake_github import FakeGitHub

REPO = "bench/skills"
TOKEN = "ghs_bench"


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def scenario(tmp: Path, gh: FakeGitHub, skills: int) -> tuple[Path, dict[str, str]]:
    """The synthetic repository on the fake, a whitespace-only PR, and the runner's checkout."""
    src = generate(tmp / "src", skills)
    env0 = {"PATH": os.environ["PATH"], "HOME": str(tmp / "home")}
    subprocess.run(
        [sys.executable, "-m", "evolve_action", "report", "--root", str(src)],
        env=env0,
        check=True,
        capture_output=True,
    )
    gh.add_token(TOKEN, kind="installation")
    repo = gh.add_repo(REPO)
    base = gh.commit(repo, _files(src), branch="main")
    touched = next(iter(sorted(src.glob("plugins/*/evals/*/triggers.json"))))
    rel = touched.relative_to(src).as_posix()
    reformatted = json.dumps(json.loads(touched.read_text()), indent=4) + "\n"
    head = gh.commit(repo, {rel: reformatted}, parents=[base], branch="feature")
    pull = gh.add_pull(repo, head_ref="feature", files=[rel])
    ws = tmp / "workspace"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    git(ws, "fetch", "-q", str(gh.git_dir(repo)), "main")
    git(ws, "checkout", "-q", "--detach", "FETCH_HEAD")
    git(ws, "fetch", "-q", str(gh.git_dir(repo)), "feature")
    git(ws, "merge", "-q", "--no-ff", "-m", "Merge feature into main", "FETCH_HEAD")
    merge_sha = git(ws, "rev-parse", "HEAD")
    event = {
        "number": pull.number,
        "pull_request": {
            "number": pull.number,
            "head": {"ref": "feature", "sha": head, "repo": {"full_name": REPO}},
            "base": {"ref": "main", "sha": base, "repo": {"full_name": REPO}},
            "changed_files": 1,
            "merge_commit_sha": merge_sha,
        },
        "repository": {"full_name": REPO},
    }
    (tmp / "event.json").write_text(json.dumps(event))
    env = {
        **env0,
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(tmp / "event.json"),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": gh.base_url,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_SHA": merge_sha,
        "GITHUB_REF": f"refs/pull/{pull.number}/merge",
        "GITHUB_RUN_ID": "1",
        "INPUT_GITHUB_TOKEN": TOKEN,
        "INPUT_ANTHROPIC_API_KEY": "sk-unused",  # nothing is stale: no session may start
        "INPUT_COMMENT": "changes",
    }
    return ws, env


def run_once(tmp: Path, ws: Path, env: dict[str, str], i: int) -> tuple[float, float, str]:
    """One action run on a fresh copy of the workspace: (seconds, peak RSS MiB, its output)."""
    copy = tmp / f"run-{i}"
    shutil.copytree(ws, copy, symlinks=True)
    out, summary = tmp / f"output-{i}.txt", tmp / f"summary-{i}.md"
    out.touch()
    summary.touch()
    run_env = {
        **env,
        "GITHUB_WORKSPACE": str(copy),
        "GITHUB_OUTPUT": str(out),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolve_action", "pr"],
        cwd=copy,
        env=run_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert proc.stdout is not None
    text = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"evolve-action pr exited {proc.returncode}:\n{text}")
    if "sessions\n" in out.read_text() and "\n0\n" not in out.read_text():
        raise SystemExit(f"a session started in a no-op PR:\n{text}")
    shutil.rmtree(copy, ignore_errors=True)
    return seconds, usage.ru_maxrss / 1024, text


def measure(size: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="noop-pr-") as d:
        tmp = Path(d)
        with FakeGitHub.start(tmp) as gh:
            ws, env = scenario(tmp, gh, size)
            runs = [run_once(tmp, ws, env, i) for i in range(repeat)]
            commits = len(gh.calls("POST"))
    secs = [r[0] for r in runs]
    rss = [r[1] for r in runs]
    return {
        "skills": size,
        "seconds_median": statistics.median(secs),
        "seconds_min": min(secs),
        "seconds_max": max(secs),
        "rss_mib_median": statistics.median(rss),
        "rss_mib_max": max(rss),
        "github_writes": commits,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="30,300,1000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    print(f"load before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    for size in (int(s) for s in args.sizes.split(",")):
        rows.append(measure(size, args.repeat))
        if not args.json:
            r = rows[-1]
            print(
                f"{r['skills']:>5} skills: {r['seconds_median']:6.2f} s "
                f"(min {r['seconds_min']:.2f}, max {r['seconds_max']:.2f}), "
                f"peak RSS {r['rss_mib_median']:.0f} MiB (max {r['rss_mib_max']:.0f}), "
                f"GitHub writes {r['github_writes']}",
                flush=True,
            )
    print(f"load after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
