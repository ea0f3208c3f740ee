"""Benchmark: container start → first agent session, for a pulled image and for a cold build.

What the runner does before the first agent session, on a machine that has no layers yet:

- **pulled** (a release tag's `action.yml`, `image: docker://…@sha256:…`): fetch the image, then
  `docker run`. No registry is reachable here, so the pull is approximated by `podman load` of
  the image saved as an archive (`podman save`, an uncompressed docker-archive) into an empty
  container storage: the layers are unpacked and written as a pull would, without the download.
- **built** (a branch's `action.yml`, `image: Dockerfile`): fetch the base, then `podman build
  --no-cache` (apt update + install, PyPI download + install of ~490 MB of dependencies), then
  run. The base (`localhost/base`, as in .ci/run) is loaded from an archive into the same empty
  storage first, standing in for pulling `python:3.12-slim`.

Then both run `run triggers` on a one-skill repository as GitHub's runner runs a Docker action
(tests/helpers/container.py), against the scripted model server on 127.0.0.1, and the time to
the first `/v1/messages` request is taken. The load and the build each use a fresh, empty
storage (`CONTAINERS_STORAGE_CONF`), so no layer is shared with the machine's other images; the
run, which does not depend on how the layers arrived, is measured once on the machine's copy of
the same image and counted in both totals.

    .venv/bin/python bench/pull_vs_build.py [--json]

Needs root, podman and an image already built by the container tests (or bench/container.py);
the build scenario needs the network (apt and PyPI), as `bench/container.py --cold` does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.container import ROUTE, _copy_inputs, _first_request  # noqa: E402
from tests.helpers.agents import MODEL, csv_trigger_repo  # noqa: E402
from tests.helpers.container import (  # noqa: E402
    DEFAULT_BASE,
    FakeRunner,
    build_flags,
    build_image,
    podman,
    podman_problem,
)

from evolve_action.modelserver import ModelServer  # noqa: E402

STORAGE_CONF = """[storage]
driver = "overlay"
graphroot = "{root}/graph"
runroot = "{root}/run"
"""


def _fresh_storage(tmp: Path, name: str) -> dict[str, str]:
    root = tmp / name
    root.mkdir()
    conf = root / "storage.conf"
    conf.write_text(STORAGE_CONF.format(root=root))
    return {"CONTAINERS_STORAGE_CONF": str(conf)}


def _first_session(image: str, tmp: Path) -> tuple[float | None, float]:
    """Run `run triggers` in `image`: (seconds to the first agent request, whole run)."""
    runner = FakeRunner.create(tmp / "runner")
    csv_trigger_repo(runner.workspace, [("Please tidy this CSV file", True)])
    with ModelServer(ROUTE, port=0) as server:
        done = threading.Event()
        watches: list[list[float]] = []
        result = runner.run(
            image,
            ["run", "triggers", "--model", MODEL, "--runs", "1", "--root", "/github/workspace"],
            repo=REPO,
            event_name="push",
            env={"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-scripted"},
            on_start=lambda t: watches.append(_first_request(server, t, done)),
        )
        done.set()
    seen = watches[0] if watches else []
    if not seen:
        print(
            f"no agent request (exit {result.returncode}):\n{result.stdout[-1500:]}\n{result.stderr[-1500:]}",
            file=sys.stderr,
        )
    return (seen[0] if seen else None), result.seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    problem = podman_problem()
    if problem:
        print(f"bench/pull_vs_build.py: {problem}", file=sys.stderr)
        return 2
    image = build_image(REPO).name  # the machine's cached image (built by the container tests)
    report: dict[str, Any] = {"image": image}
    with tempfile.TemporaryDirectory(dir="/var/tmp", ignore_cleanup_errors=True) as tmp_name:
        tmp = Path(tmp_name)
        image_tar, base_tar = tmp / "image.tar", tmp / "base.tar"
        podman("save", "--format", "docker-archive", "-o", str(image_tar), image, timeout=900)
        podman("save", "--format", "docker-archive", "-o", str(base_tar), DEFAULT_BASE, timeout=900)
        report["image_archive_bytes"] = image_tar.stat().st_size
        report["base_archive_bytes"] = base_tar.stat().st_size
        saved = dict(os.environ)
        try:
            # pulled: load the release image into an empty storage, run it
            os.environ.update(_fresh_storage(tmp, "pulled"))
            t0 = time.monotonic()
            podman("load", "-q", "-i", str(image_tar), timeout=900)
            loaded = time.monotonic() - t0
            # The run itself does not depend on how the layers arrived: measured once, on the
            # machine's copy of the same image (the runner helper uses the default storage).
            os.environ.clear()
            os.environ.update(saved)
            first, whole = _first_session(image, tmp / "pulled-run")
            report["pulled"] = {
                "load_seconds": round(loaded, 1),
                "run_to_first_agent_request_seconds": round(first, 2) if first else None,
                "start_to_first_agent_request_seconds": round(loaded + first, 1) if first else None,
                "run_seconds": round(whole, 1),
            }
            # built: load the base into an empty storage, build with no cache, run it
            os.environ.update(_fresh_storage(tmp, "built"))
            t0 = time.monotonic()
            podman("load", "-q", "-i", str(base_tar), timeout=900)
            base_loaded = time.monotonic() - t0
            context = tmp / "context"
            context.mkdir()
            _copy_inputs(context)
            tag = "localhost/evolve-action-bench:cold"
            t1 = time.monotonic()
            podman(
                "build",
                *build_flags(DEFAULT_BASE),
                "--no-cache",
                "-t",
                tag,
                str(context),
                timeout=3600,
            )
            built = time.monotonic() - t1
            report["built_image_bytes"] = int(
                podman("image", "inspect", "--format", "{{.Size}}", tag).stdout.strip()
            )
            report["built"] = {
                "base_load_seconds": round(base_loaded, 1),
                "build_seconds": round(built, 1),
                "run_to_first_agent_request_seconds": round(first, 2) if first else None,
                "start_to_first_agent_request_seconds": round(base_loaded + built + first, 1)
                if first
                else None,
                "run_seconds": round(whole, 1),
            }
        finally:
            os.environ.clear()
            os.environ.update(saved)
            for name in ("pulled", "built"):
                conf = tmp / name / "storage.conf"
                if conf.exists():  # delete what that storage holds, then unmount it
                    # (never `podman system reset`: it also clears the machine's shared
                    # /run/libpod, whatever the storage configuration says)
                    subprocess.run(
                        ["podman", "rmi", "--all", "--force"],
                        env={**saved, "CONTAINERS_STORAGE_CONF": str(conf)},
                        capture_output=True,
                        check=False,
                    )
                    overlay = tmp / name / "graph" / "overlay"
                    subprocess.run(["umount", str(overlay)], capture_output=True, check=False)
    print(json.dumps(report, indent=2) if options.json else _table(report))
    return 0


def _table(r: dict[str, Any]) -> str:
    p, b = r["pulled"], r["built"]
    return "\n".join(
        [
            f"image {r['image']} (archive {r['image_archive_bytes'] / 1e6:.0f} MB; "
            f"base archive {r['base_archive_bytes'] / 1e6:.0f} MB)",
            f"pulled: load {p['load_seconds']} s + run → first agent request "
            f"{p['run_to_first_agent_request_seconds']} s = {p['start_to_first_agent_request_seconds']} s",
            f"built:  base load {b['base_load_seconds']} s + build --no-cache {b['build_seconds']} s"
            f" + run → first agent request {b['run_to_first_agent_request_seconds']} s"
            f" = {b['start_to_first_agent_request_seconds']} s",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
