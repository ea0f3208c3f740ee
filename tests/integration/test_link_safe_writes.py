"""Issue 29 item 4: a pull request's symlinks never make the action write or commit elsewhere.

The PR's checkout holds a link where an output goes (`EVALUATION.md` onto a workflow file, the
rollup `EVALUATION.yaml` onto a file outside the checkout, `.evolve-action/` onto a directory
outside it). The job runs Tier 0 only (no agent): nothing is written through the link, nothing
under `.github/` is committed, and the error names the file.
"""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers.agents import MODEL, skill_md
from tests.helpers.fake_github import FakeGitHub
from tests.integration.test_action_pr import REPO, base_files, git, make_pr, run_action

from evolve_action.cli import main

pytestmark = pytest.mark.integration

WORKFLOW = "on: push\njobs: {}\n"


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub.start(tmp_path) as fake:
        yield fake


def _edited() -> dict[str, str | None]:
    return {"skills/beta/SKILL.md": skill_md("beta", "Beta sheets. Use when asked about beta.")}


def _committed(gh: FakeGitHub, head_sha: str) -> list[str]:
    tip = gh.ref_sha(REPO, "heads/feature")
    return git(gh.git_dir(REPO), "diff", "--name-only", head_sha, str(tip)).splitlines()


@pytest.mark.parametrize(
    ("name", "results_format"), [("EVALUATION.md", "json"), ("EVALUATION.yaml", "yaml")]
)
def test_a_symlinked_report_is_neither_written_through_nor_committed(
    tmp_path: Path, gh: FakeGitHub, name: str, results_format: str
) -> None:
    config = json.dumps({"models": [MODEL], "results_format": results_format}) + "\n"
    pr = make_pr(
        tmp_path,
        gh,
        change=_edited(),
        inputs={"tiers": "checks"},
        extra_base={".github/workflows/x.yml": WORKFLOW, ".evolve.json": config},
    )
    victim = tmp_path / "outside" / "victim.yaml"
    victim.parent.mkdir()
    victim.write_text("keep: 1\n")
    target = ".github/workflows/x.yml" if name == "EVALUATION.md" else str(victim)
    (pr.workspace / name).symlink_to(target)
    code, out, err = run_action(pr)
    assert code == 2, out + err
    assert f"refusing to write {pr.workspace / name}" in out + err
    assert (pr.workspace / ".github/workflows/x.yml").read_text() == WORKFLOW
    assert victim.read_text() == "keep: 1\n"
    assert not any(p.startswith(".github/") for p in _committed(gh, pr.head_sha))
    assert gh.calls("POST", r".*/git/commits") == []


def test_a_symlinked_local_output_directory_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for rel, text in {**base_files()}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    (root / "skills/gamma/SKILL.md").write_text(skill_md("gamma", "Gamma. Use for gamma."))
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".evolve-action").symlink_to(outside, target_is_directory=True)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    out, err = io.StringIO(), io.StringIO()
    code = main(["pr", "--local", "--base", "main"], env, stdout=out, stderr=err, cwd=root)
    said = out.getvalue() + err.getvalue()
    assert code == 2, said
    assert "goes through the symbolic link" in said and ".evolve-action" in said
    assert list(outside.iterdir()) == []
