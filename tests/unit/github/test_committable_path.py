"""`committable_path`: the commit-back commits the lexical path it wrote, never a link or a workflow."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve_action.github import committable_path


@pytest.fixture
def top(tmp_path: Path) -> Path:
    top = tmp_path / "repo"
    (top / ".git").mkdir(parents=True)
    (top / ".github" / "workflows").mkdir(parents=True)
    (top / ".github" / "workflows" / "x.yml").write_text("on: push\n")
    (top / "plugins" / "kit").mkdir(parents=True)
    (top / "plugins" / "kit" / "EVALUATION.md").write_text("# r\n")
    (top / "EVALUATION.md").write_text("# r\n")
    return top


def test_a_written_file_is_committed_under_its_lexical_path(top: Path) -> None:
    assert committable_path(top / "EVALUATION.md", top) == "EVALUATION.md"
    assert committable_path(top / "plugins/kit/EVALUATION.md", top) == "plugins/kit/EVALUATION.md"
    assert committable_path(top / "plugins/../EVALUATION.md", top) == "EVALUATION.md"


def test_a_link_onto_a_workflow_is_never_committed(top: Path) -> None:
    (top / "EVALUATION.md").unlink()
    (top / "EVALUATION.md").symlink_to(".github/workflows/x.yml")
    assert committable_path(top / "EVALUATION.md", top) is None


def test_a_file_below_a_linked_directory_is_never_committed(top: Path) -> None:
    (top / "docs").symlink_to(top / ".github" / "workflows", target_is_directory=True)
    assert committable_path(top / "docs" / "x.yml", top) is None


@pytest.mark.parametrize(
    "rel", [".github/workflows/x.yml", ".GITHUB/x", ".git/config", "../outside.md", "."]
)
def test_workflows_git_and_outside_paths_are_refused(top: Path, rel: str) -> None:
    assert committable_path(top / rel, top) is None
