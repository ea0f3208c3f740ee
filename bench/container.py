"""Benchmark: the action's image — size, build time (cached, after a change under src/, cold), and
the time from `podman run` to the first output and to the first agent request.

Uses the container tests' machinery (tests/helpers/container.py): the image is built from this
checkout's Dockerfile with podman (`--from localhost/base` when that base exists, as in .ci/run) and
run as GitHub's runner runs a Docker action, with the scripted model server on 127.0.0.1.

    .venv/bin/python bench/container.py                # size, cached and src-change builds, start-up
    .venv/bin/python bench/container.py --cold         # also a build with no layer cache (network)
    .venv/bin/python bench/container.py --json

Needs root and podman (see docs/container.md). Offline except `--cold` (apt and PyPI).
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
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.agents import MODEL, csv_trigger_repo  # noqa: E402
from tests.helpers.container import (  # noqa: E402
    BUILD_INPUTS,
    FakeRunner,
    build_flags,
    build_image,
    default_base,
    image_size,
    podman,
    podman_problem,
)

from evolve_action.modelserver import ModelServer  # noqa: E402

ROUTE = "rules:\n  - name: route\n    route: {threshold: 0.3}\n"
CODEX = '{"name": "docs-kit", "version": "1.0.0", "description": "Docs.", "interface": {"displayName": "Docs kit", "shortDescription": "Docs."}}\n'


def _timed_build(context: Path, tag: str, *extra: str) -> float:
    started = time.monotonic()
    podman("build", *build_flags(default_base()), *extra, "-t", tag, str(context), timeout=3600)
    return time.monotonic() - started


def _copy_inputs(target: Path) -> None:
    for name in BUILD_INPUTS:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def builds(cold: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    image = build_image(REPO)
    out["image"] = image.name
    out["first_call_built"] = image.built
    out["first_call_seconds"] = round(image.seconds, 2)
    again = build_image(REPO)
    out["cached_seconds"] = round(again.seconds, 3)
    out["image_bytes"] = image_size(image.name)
    base = default_base()
    out["base"] = base or "(the Dockerfile's FROM)"
    out["base_bytes"] = image_size(base) if base else None
    with tempfile.TemporaryDirectory() as tmp:
        context = Path(tmp)
        _copy_inputs(context)
        init = context / "src" / "evolve_action" / "__init__.py"
        init.write_text(init.read_text() + f"\n# bench {time.time()}\n")
        tag = "localhost/evolve-action-bench:src-change"
        out["src_change_seconds"] = round(_timed_build(context, tag), 1)
        if cold:
            out["cold_seconds"] = round(_timed_build(context, tag + "-cold", "--no-cache"), 1)
            podman("rmi", tag + "-cold", check=False)
        podman("rmi", tag, check=False)
    return out


def first_output(image: str, runs: int) -> dict[str, Any]:
    """`podman run --rm IMAGE --version`: seconds to the first byte, and to exit."""
    firsts, totals = [], []
    for _ in range(runs):
        started = time.monotonic()
        process = subprocess.Popen(
            ["podman", "run", "--rm", "--runtime", "runc", "--network", "host", image, "--version"],
            stdout=subprocess.PIPE,
        )
        assert process.stdout is not None
        process.stdout.read(1)
        firsts.append(time.monotonic() - started)
        process.stdout.read()
        process.wait()
        totals.append(time.monotonic() - started)
    return {
        "version_first_output_median_seconds": round(statistics.median(firsts), 2),
        "version_exit_median_seconds": round(statistics.median(totals), 2),
        "runs": runs,
    }


def _first_request(server: ModelServer, started: float, done: threading.Event) -> list[float]:
    seen: list[float] = []

    def poll() -> None:
        while not done.is_set():
            if server.messages():
                seen.append(time.monotonic() - started)
                return
            time.sleep(0.01)

    threading.Thread(target=poll, daemon=True).start()
    return seen


def first_agent_request(image: str) -> dict[str, Any]:
    """`run triggers` on a one-skill repo: podman run → first /v1/messages; and the same on the host."""
    queries = [("Please tidy this CSV file", True), ("Write me a haiku about autumn", False)]
    args = ["run", "triggers", "--model", MODEL, "--runs", "1", "--jobs", "2"]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        runner = FakeRunner.create(Path(tmp) / "runner")
        csv_trigger_repo(runner.workspace, queries)
        (runner.workspace / ".codex-plugin").mkdir()
        (runner.workspace / ".codex-plugin" / "plugin.json").write_text(CODEX)
        with ModelServer(ROUTE, port=0) as server:
            done = threading.Event()
            watches: list[list[float]] = []
            result = runner.run(
                image,
                [*args, "--root", "/github/workspace"],
                repo=REPO,
                event_name="push",
                env={"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-scripted"},
                on_start=lambda t: watches.append(_first_request(server, t, done)),
            )
            done.set()
            seen = watches[0]
            out["image_first_output_seconds"] = round(result.first_output_seconds or -1, 2)
            out["image_first_agent_request_seconds"] = round(seen[0], 2) if seen else None
            out["image_run_seconds"] = round(result.seconds, 1)
            out["image_exit"] = result.returncode
        host_repo = Path(tmp) / "host"
        csv_trigger_repo(host_repo, queries)
        (host_repo / ".codex-plugin").mkdir()
        (host_repo / ".codex-plugin" / "plugin.json").write_text(CODEX)
        with ModelServer(ROUTE, port=0) as server:
            done = threading.Event()
            started = time.monotonic()
            seen = _first_request(server, started, done)
            env = {
                "PATH": os.environ["PATH"],
                "HOME": str(Path(tmp) / "home"),
                "ANTHROPIC_BASE_URL": server.base_url,
                "ANTHROPIC_API_KEY": "sk-scripted",
                "IS_SANDBOX": "1",
            }
            subprocess.run(
                [str(REPO / ".venv" / "bin" / "evolve-action"), *args, "--root", str(host_repo)],
                env=env,
                capture_output=True,
                check=False,
            )
            done.set()
            out["host_first_agent_request_seconds"] = round(seen[0], 2) if seen else None
            out["host_run_seconds"] = round(time.monotonic() - started, 1)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold", action="store_true", help="also build with --no-cache")
    parser.add_argument(
        "--runs", type=int, default=5, help="`--version` runs to take the median of"
    )
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    problem = podman_problem()
    if problem:
        print(f"bench/container.py: {problem}", file=sys.stderr)
        return 2
    report: dict[str, Any] = {"builds": builds(options.cold)}
    image = report["builds"]["image"]
    report["start"] = first_output(image, options.runs)
    report["agent"] = first_agent_request(image)
    if options.json:
        print(json.dumps(report, indent=2))
        return 0
    b, s, a = report["builds"], report["start"], report["agent"]
    print(f"image {image}: {b['image_bytes'] / 1e6:.0f} MB", end="")
    if b["base_bytes"]:
        print(
            f" ({b['base']} {b['base_bytes'] / 1e6:.0f} MB + {(b['image_bytes'] - b['base_bytes']) / 1e6:.0f} MB)"
        )
    else:
        print()
    print(f"build, inputs unchanged (tag reused): {b['cached_seconds']:.2f} s")
    print(f"build after a change under src/:     {b['src_change_seconds']:.1f} s")
    if "cold_seconds" in b:
        print(f"build with no layer cache:           {b['cold_seconds']:.1f} s")
    print(
        f"podman run → first output (--version, median of {s['runs']}): "
        f"{s['version_first_output_median_seconds']:.2f} s (exit {s['version_exit_median_seconds']:.2f} s)"
    )
    print(
        f"podman run → first agent request (run triggers): {a['image_first_agent_request_seconds']} s "
        f"(whole run {a['image_run_seconds']} s); on the host: {a['host_first_agent_request_seconds']} s "
        f"(whole run {a['host_run_seconds']} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
