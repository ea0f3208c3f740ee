"""Unit tests of workspace building: which skills are installed, and how failures surface."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import SKILLS_DIR, create_workspace, plugin_skill_dirs


def make_skills(root: Path) -> Path:
    skills = root / "skills"
    for name in ("b-skill", "a-skill", ".hidden"):
        (skills / name).mkdir(parents=True)
        (skills / name / "SKILL.md").write_text("---\nname: x\n---\n")
    (skills / "no-skill-md").mkdir()
    (skills / "dir-skill-md" / "SKILL.md").mkdir(parents=True)
    (skills / "file.txt").write_text("x")
    (skills / "linked").symlink_to(skills / "a-skill", target_is_directory=True)
    return skills


def test_plugin_skill_dirs_lists_real_skill_directories_sorted(tmp_path: Path) -> None:
    skills = make_skills(tmp_path)
    found = plugin_skill_dirs(skills)
    assert [p.name for p in found] == [".hidden", "a-skill", "b-skill"]
    assert all(p.is_absolute() for p in found)


def test_plugin_skill_dirs_missing_dir_is_empty(tmp_path: Path) -> None:
    assert plugin_skill_dirs(tmp_path / "nope") == []


def test_git_missing_is_an_environment_problem_and_leaves_nothing(tmp_path: Path) -> None:
    skills = make_skills(tmp_path / "repo")
    tmp_root = tmp_path / "tmp"
    tmp_root.mkdir()
    with pytest.raises(EnvironmentProblem, match="git"):
        create_workspace(
            prefix="triggers.",
            skills=plugin_skill_dirs(skills),
            environ={"PATH": str(tmp_path / "empty-bin")},
            tmp_root=tmp_root,
        )
    assert list(tmp_root.iterdir()) == []


def test_skills_dir_is_where_claude_code_looks() -> None:
    assert SKILLS_DIR.as_posix() == ".claude/skills"
