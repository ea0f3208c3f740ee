"""Issue 24 item 6: a release tag's action.yml runs the pushed image by digest; branches build.

The release workflow's `pin` job rewrites `runs.image: Dockerfile` to
`docker://ghcr.io/<owner>/<repo>@sha256:…` and moves the release tags to that one-file commit.
These tests run the job's own rewrite script (taken from .github/workflows/release.yml) with bash
on a copy of action.yml, and check the metadata it produces: the same action, pulling the image.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evolve_action.encoding import decode_yaml

REPO = Path(__file__).resolve().parents[2]
RELEASE = REPO / ".github" / "workflows" / "release.yml"
PINNED = "ghcr.io/octo-org/evolve-action@sha256:" + "0123456789abcdef" * 4


def _yaml(path: Path) -> Any:
    return decode_yaml(path.read_text(encoding="utf-8"), path).value


def _job(name: str) -> dict[str, Any]:
    job: dict[str, Any] = _yaml(RELEASE)["jobs"][name]
    return job


def _step(job: dict[str, Any], name: str) -> dict[str, Any]:
    (step,) = (s for s in job["steps"] if s.get("name") == name)
    return step


def _pin(tmp_path: Path, action_text: str, pinned: str) -> subprocess.CompletedProcess[str]:
    """Run the workflow's "Pin the image in action.yml" script in `tmp_path` (GitHub runs `run:`
    blocks with `bash -e`)."""
    (tmp_path / "action.yml").write_text(action_text, encoding="utf-8")
    script = _step(_job("pin"), "Pin the image in action.yml")["run"]
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "PINNED": pinned},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_pinned_action_is_the_branch_action_pulling_the_image(tmp_path: Path) -> None:
    branch_text = (REPO / "action.yml").read_text(encoding="utf-8")
    proc = _pin(tmp_path, branch_text, PINNED)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    branch = _yaml(REPO / "action.yml")
    pinned = _yaml(tmp_path / "action.yml")
    assert branch["runs"]["image"] == "Dockerfile"  # the branch keeps building, for development
    assert pinned["runs"] == {**branch["runs"], "image": f"docker://{PINNED}"}
    assert {k: v for k, v in pinned.items() if k != "runs"} == {
        k: v for k, v in branch.items() if k != "runs"
    }
    # One line changed, nothing else (comments and layout included).
    changed = [
        (a, b)
        for a, b in zip(
            branch_text.splitlines(),
            (tmp_path / "action.yml").read_text(encoding="utf-8").splitlines(),
            strict=True,
        )
        if a != b
    ]
    assert changed == [("  image: Dockerfile", f"  image: docker://{PINNED}")]


def test_the_pinned_action_validates_against_github_schema(tmp_path: Path) -> None:
    tool = REPO / ".venv" / "bin" / "check-jsonschema"
    exe = str(tool) if tool.exists() else shutil.which("check-jsonschema")
    if exe is None:
        pytest.skip("check-jsonschema is not installed (pip install -e '.[dev]')")
    proc = _pin(tmp_path, (REPO / "action.yml").read_text(encoding="utf-8"), PINNED)
    assert proc.returncode == 0, proc.stderr
    check = subprocess.run(
        [exe, "--builtin-schema", "vendor.github-actions", str(tmp_path / "action.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize(
    ("pinned", "action", "error"),
    [
        ("ghcr.io/octo-org/evolve-action:1.2.3", None, "not an image pinned by digest"),
        ("", None, "not an image pinned by digest"),
        (PINNED, "runs:\n  using: docker\n  image: docker://x@sha256:ab\n", "no single"),
    ],
    ids=["a-tag", "empty", "already-pinned"],
)
def test_the_pin_refuses_what_it_cannot_pin(
    tmp_path: Path, pinned: str, action: str | None, error: str
) -> None:
    text = action if action is not None else (REPO / "action.yml").read_text(encoding="utf-8")
    proc = _pin(tmp_path, text, pinned)
    assert proc.returncode != 0
    assert error in proc.stdout
    assert (tmp_path / "action.yml").read_text(encoding="utf-8") == text  # left as it was


def test_the_pin_job_moves_the_release_tags_with_its_own_token_only() -> None:
    workflow = _yaml(RELEASE)
    assert workflow["permissions"] == {}
    job = _job("pin")
    assert job["needs"] == "image"
    assert job["permissions"] == {"contents": "write"}
    assert _job("image")["outputs"]["pinned"] == "${{ steps.push.outputs.pinned }}"
    steps = job["steps"]
    assert re.fullmatch(r"actions/checkout@[0-9a-f]{40}", steps[0]["uses"])
    assert steps[0]["with"] == {"persist-credentials": False}
    assert [s["uses"] for s in steps if "uses" in s] == [steps[0]["uses"]]
    assert _step(job, "Pin the image in action.yml")["env"] == {
        "PINNED": "${{ needs.image.outputs.pinned }}"
    }
    move = _step(job, "Move the release tags to the pinned commit")["run"]
    assert "-- action.yml" in move  # the commit holds action.yml only
    assert '"v$VERSION" "v$minor" "v$major"' in move
    assert "push --force" in move and "::add-mask::" in move


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_the_release_tags_move_to_a_one_file_commit_on_the_tagged_one(tmp_path: Path) -> None:
    """The job's two scripts against a real local bare remote, as on the runner after checkout."""
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    _git(tmp_path, "init", "-q", "--bare", str(origin))
    _git(tmp_path, "init", "-q", str(work))
    shutil.copy(REPO / "action.yml", work / "action.yml")
    (work / "README.md").write_text("x\n")
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "source")
    source = _git(work, "rev-parse", "HEAD")
    _git(work, "tag", "v1.2.3")
    _git(work, "remote", "add", "origin", str(origin))
    _git(work, "push", "-q", "origin", "HEAD:refs/heads/main", "refs/tags/v1.2.3")
    proc = _pin(work, (REPO / "action.yml").read_text(encoding="utf-8"), PINNED)
    assert proc.returncode == 0, proc.stderr
    summary = tmp_path / "summary.md"
    move = _step(_job("pin"), "Move the release tags to the pinned commit")["run"]
    proc = subprocess.run(
        ["bash", "-e", "-c", move],
        cwd=work,
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "VERSION": "1.2.3",
            "PINNED": PINNED,
            "PUSH_TOKEN": "ghs_test",
            "GITHUB_STEP_SUMMARY": str(summary),
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tags = {
        line.split()[1]: line.split()[0] for line in _git(origin, "show-ref", "--tags").splitlines()
    }
    assert set(tags) == {"refs/tags/v1.2.3", "refs/tags/v1.2", "refs/tags/v1"}
    (pinned_commit,) = set(tags.values())
    assert _git(origin, "rev-parse", f"{pinned_commit}^") == source
    assert _git(origin, "diff", "--name-only", source, pinned_commit) == "action.yml"
    meta = decode_yaml(_git(origin, "show", f"{pinned_commit}:action.yml"), Path("a.yml")).value
    assert meta["runs"]["image"] == f"docker://{PINNED}"
    assert _git(origin, "rev-parse", "refs/heads/main") == source  # the branch still builds
    assert PINNED in summary.read_text(encoding="utf-8")
