"""Eval workspaces isolate the user's repository: real git, a fake agent that writes like a real one.

The skill under test is copied (a write under `.claude/skills/<skill>/` never reaches the repository),
and the agent's config dir lives outside the workspace (`git status` shows only the agent's changes).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import write
from tests.helpers.evals import EVALS, NOW, FakeCounter, FakeJudge

from evolve_action import evals
from evolve_action import harness as procenv
from evolve_action.config import resolve_repository
from evolve_action.events import RecordingReporter
from evolve_action.harness import (
    SKILLS_DIR,
    SessionSpec,
    Transcript,
    create_trigger_workspace,
    remove_workspace,
)
from evolve_action.harness._claude_code import prepare_config_dir

pytestmark = pytest.mark.integration


class WritingHarness:
    """Does what the real harness and a writing agent do: config dir set up, files written."""

    name = "claude"

    def __init__(self) -> None:
        self.specs: list[SessionSpec] = []
        self.status: dict[bool, str] = {}

    async def run(self, spec: SessionSpec, *, stop: Any = None) -> Transcript:
        self.specs.append(spec)
        assert spec.config_dir is not None
        prepare_config_dir(spec.config_dir)
        (spec.config_dir / "agent.pid").write_text("1\n")
        (spec.workspace / "out.txt").write_text("hi\n")
        skill = spec.workspace / SKILLS_DIR / "sk"
        if skill.exists():
            (skill / "SKILL.md").write_text("overwritten by the agent\n")
            (skill / "new.txt").write_text("new\n")
        proc = await asyncio.to_thread(
            subprocess.run,
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=spec.workspace,
            env=procenv.safe_env({"PATH": "/usr/bin:/bin"}),
            capture_output=True,
            text=True,
            check=True,
        )
        self.status[skill.exists()] = proc.stdout
        return Transcript(final_text="done", has_result=True, duration_seconds=1.0)


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "demo"}')
    write(root, "skills/sk/SKILL.md", "---\nname: sk\ndescription: Use when testing.\n---\nbody\n")
    write(root, "evals/sk/evals.json", json.dumps({**EVALS, "evals": EVALS["evals"][:1]}))
    write(root, "evals/sk/files/in/data.txt", "data\n")
    return root


def _sweep(root: Path, harness: WritingHarness, **opts: Any) -> RecordingReporter:
    repository, config = resolve_repository(root, root, None, {})
    options = evals.EvalsOptions(models=("claude-sonnet-5",), **opts)
    environ = {"PATH": "/usr/bin:/bin"}
    planned = evals.plan_evals(repository, config, options, environ=environ, available={"claude"})
    reporter = RecordingReporter()
    asyncio.run(
        evals.run_evals(
            repository,
            config,
            options,
            environ=environ,
            reporter=reporter,
            harness=harness,
            judge_=FakeJudge(),  # type: ignore[arg-type]
            now=lambda: NOW,
            planned=planned,
            counter=FakeCounter(),
        )
    )
    return reporter


def test_agent_writes_never_reach_the_repository_and_git_sees_only_them(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    before = (root / "skills/sk/SKILL.md").read_bytes()
    harness = WritingHarness()
    _sweep(root, harness)
    assert harness.specs, "no session ran"
    assert (root / "skills/sk/SKILL.md").read_bytes() == before
    assert not (root / "skills/sk/new.txt").exists()
    assert sorted(harness.status[False].splitlines()) == ["?? out.txt"]  # the baseline
    assert sorted(harness.status[True].splitlines()) == [
        " M .claude/skills/sk/SKILL.md",
        "?? .claude/skills/sk/new.txt",
        "?? out.txt",
    ]
    for spec in harness.specs:
        assert spec.config_dir is not None
        assert not spec.config_dir.is_relative_to(spec.workspace)
        assert not spec.config_dir.exists(), "agent config dir not cleaned up"
        assert not spec.workspace.exists()


def test_keep_workspaces_keeps_the_agent_config_dir_too(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    harness = WritingHarness()
    reporter = _sweep(root, harness, keep_workspaces=True)
    try:
        spec = harness.specs[0]
        assert spec.config_dir is not None and (spec.config_dir / ".claude.json").is_file()
        warnings = [getattr(e, "message", "") for e in reporter.events]
        assert any(str(spec.config_dir) in w and str(spec.workspace) in w for w in warnings)
    finally:
        import shutil

        for spec in harness.specs:
            shutil.rmtree(spec.workspace, ignore_errors=True)
            if spec.config_dir is not None:
                shutil.rmtree(spec.config_dir, ignore_errors=True)


def test_trigger_workspaces_still_link_skills(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    ws = create_trigger_workspace(root / "skills", environ={"PATH": "/usr/bin:/bin"})
    try:
        link = ws / SKILLS_DIR / "sk"
        assert link.is_symlink() and link.resolve() == (root / "skills/sk").resolve()
    finally:
        remove_workspace(ws)
    assert (root / "skills/sk/SKILL.md").is_file()
