"""The action's image, run as GitHub's runner runs a Docker action (what exists on every branch).

The workspace is a real git checkout owned by the runner's uid (1001) and mounted at
`/github/workspace`; the container runs as the image's user (root). Each test asserts that the
command worked on the mount, that git accepts the mount, and that nothing under the runner's
directories is left owned by anyone but the runner.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest
from tests.conftest import REPO
from tests.helpers.agents import MODEL, csv_trigger_repo, write
from tests.helpers.container import (
    IMAGE_REPOSITORY,
    FakeRunner,
    Image,
    RunResult,
    build_image,
    image_size,
    podman,
)

from evolve_action import __version__
from evolve_action.harness import CODEX_VERSION
from evolve_action.modelserver import ModelServer

pytestmark = pytest.mark.container

QUERIES = [("Please tidy this CSV file", True), ("Write me a haiku about autumn", False)]
CODEX_MANIFEST = json.dumps(
    {
        "name": "docs-kit",
        "version": "1.0.0",
        "description": "Document helpers.",
        "interface": {"displayName": "Docs kit", "shortDescription": "Document helpers."},
    }
)
ROUTE = "rules:\n  - name: route\n    route: {threshold: 0.3}\n"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def _checkout(runner: FakeRunner) -> str:
    """A one-plugin repository committed in the workspace, as actions/checkout leaves it. HEAD's SHA."""
    workspace = runner.workspace
    csv_trigger_repo(workspace, QUERIES)
    write(workspace, ".codex-plugin/plugin.json", CODEX_MANIFEST)
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "skills")
    return _git(workspace, "rev-parse", "HEAD")


def _git_in_image(runner: FakeRunner, image: Image, *args: str) -> RunResult:
    """git inside the image on the mount (no optional locks: a read must not rewrite the index)."""
    return runner.run(
        image.name, ["--no-optional-locks", *args], repo=REPO, entrypoint="git", event_name="push"
    )


def test_entrypoint_runs_checks_and_report_on_the_runners_mount(
    image: Image, tmp_path: Path
) -> None:
    runner = FakeRunner.create(tmp_path / "runner")
    head = _checkout(runner)

    version = runner.run(image.name, ["--version"], repo=REPO, event_name="push")
    assert version.returncode == 0, version.describe()
    assert version.stdout.strip() == f"evolve-action {__version__}"

    checks = runner.run(
        image.name,
        ["run", "checks", "--root", "/github/workspace", "--json"],
        repo=REPO,
        event_name="push",
    )
    assert checks.returncode == 0, checks.describe()
    document = json.loads(checks.stdout)
    assert document["root"] == "/github/workspace"
    assert document["verdict"] == "passed", document["findings"]
    assert [s["skill"] for s in document["signals"]] == ["csv-clean"]

    # `report` writes EVALUATION.md and EVALUATION.json into the mount, as root.
    report = runner.run(
        image.name, ["report", "--root", "/github/workspace"], repo=REPO, event_name="push"
    )
    assert report.returncode == 0, report.describe()
    assert (runner.workspace / "EVALUATION.md").is_file()
    assert (runner.workspace / "EVALUATION.md").stat().st_uid == runner.uid

    # git accepts the runner-owned mount inside the image and sees what the action wrote.
    status = _git_in_image(runner, image, "status", "--porcelain")
    assert status.returncode == 0, status.describe()
    assert sorted(status.stdout.split()) == ["??", "??", "EVALUATION.json", "EVALUATION.md"]
    rev = _git_in_image(runner, image, "rev-parse", "HEAD")
    assert rev.returncode == 0 and rev.stdout.strip() == head, rev.describe()

    assert runner.foreign_owned() == []
    # And the runner's later steps (git as the runner's user) still work on it.
    later = subprocess.run(
        ["git", "status", "--porcelain"],
        cwd=runner.workspace,
        user=runner.uid,
        group=runner.gid,
        env={"PATH": "/usr/bin:/bin", "HOME": str(runner.home), "GIT_CONFIG_NOSYSTEM": "1"},
        capture_output=True,
        text=True,
    )
    assert later.returncode == 0, later.stderr
    assert later.stdout.count("??") == 2


def test_the_image_user_can_write_the_runners_command_files(image: Image, tmp_path: Path) -> None:
    """The runner creates the command files as its own user (0644): the image's user must write them."""
    runner = FakeRunner.create(tmp_path / "runner")
    script = (
        'printf "probe<<EOF_1\\nok\\nEOF_1\\n" >> "$GITHUB_OUTPUT"'
        ' && printf "## probe\\n" >> "$GITHUB_STEP_SUMMARY"'
    )
    result = runner.run(image.name, ["-c", script], repo=REPO, entrypoint="/bin/sh")
    assert result.returncode == 0, result.describe()
    assert result.outputs == {"probe": "ok"}
    assert result.summary == "## probe\n"
    assert runner.foreign_owned() == []


def test_first_agent_session_in_the_image(
    image: Image, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    """Claude Code (bundled in claude-agent-sdk) starts in the image and reaches the model server.

    Also measures the time from `podman run` to the first output and to the first agent request.
    """
    runner = FakeRunner.create(tmp_path / "runner")
    _checkout(runner)
    first_request: list[float] = []
    done = threading.Event()
    with ModelServer(ROUTE, port=0) as server:

        def watch(_started: float) -> None:
            def poll() -> None:
                while not done.is_set():
                    if server.messages():
                        first_request.append(time.monotonic())
                        return
                    time.sleep(0.01)

            threading.Thread(target=poll, daemon=True).start()

        started: list[float] = []
        result = runner.run(
            image.name,
            [
                "run",
                "triggers",
                "--root",
                "/github/workspace",
                "--model",
                MODEL,
                "--runs",
                "1",
                "--jobs",
                "2",
            ],
            repo=REPO,
            event_name="push",
            env={
                "ANTHROPIC_BASE_URL": server.base_url,
                "ANTHROPIC_API_KEY": "sk-scripted",
            },
            on_start=lambda t: (started.append(t), watch(t)),
        )
        done.set()
        messages = server.messages()
    assert result.returncode == 0, result.describe()
    assert messages, "no agent session reached the model server"
    assert any("claude-cli" in str(m.get("headers", {}).get("user-agent", "")) for m in messages)
    results = runner.workspace / "evals" / "csv-clean" / "results.json"
    assert results.is_file(), result.describe()
    assert runner.foreign_owned() == []
    to_agent = first_request[0] - started[0] if first_request else None
    record_property("image_bytes", image_size(image.name))
    record_property("first_output_seconds", result.first_output_seconds)
    record_property("first_agent_request_seconds", to_agent)
    record_property("run_seconds", result.seconds)
    print(
        f"\nimage {image.name}: {image_size(image.name) / 1e6:.0f} MB; podman run → first output "
        f"{result.first_output_seconds:.2f} s, → first agent request {to_agent:.2f} s, "
        f"whole run {result.seconds:.1f} s"
    )


def test_the_codex_variant_carries_the_pinned_codex(image: Image) -> None:
    """`--build-arg EXTRA_HARNESSES=codex` bakes OpenAI Codex in (the default image stays slim)."""
    variant = build_image(
        REPO, build_args={"EXTRA_HARNESSES": "codex"}, repository=f"{IMAGE_REPOSITORY}-codex"
    )
    probe = (
        "import os; from evolve_action.harness import available_harnesses, find_codex; "
        "print(sorted(available_harnesses(os.environ)), find_codex(os.environ))"
    )
    done = _run_program(variant, "/opt/evolve-action/bin/python", "-c", probe)
    assert done.split() == ["['claude',", "'codex']", "/opt/evolve-action/codex/bin/codex"]
    version = _run_program(variant, "/opt/evolve-action/codex/bin/codex", "--version")
    assert version.strip() == f"codex-cli {CODEX_VERSION}"
    # The default image has no Codex: `extra_harnesses: codex` installs it at run time instead.
    slim = _run_program(
        image, "/opt/evolve-action/bin/python", "-c", probe.replace(", find_codex(os.environ)", "")
    )
    assert slim.strip() == "['claude']"
    assert image_size(variant.name) > image_size(image.name)


def _run_program(image: Image, program: str, *args: str) -> str:
    """The stdout of `program ARGS` run in `image` in place of its entrypoint."""
    done = podman("run", "--rm", "--runtime", "runc", "--entrypoint", program, image.name, *args)
    return done.stdout
