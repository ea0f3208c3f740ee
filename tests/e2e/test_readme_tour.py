"""The README's tour, run verbatim: every command of its `sh` block, in order, with `bash -e`.

The block is read from README.md (the text a newcomer copies), run from a fresh directory that
holds only the project's virtual environment (as a clone does after the set-up commands), with no
Anthropic credentials: the demo and `pr --local --scripted` talk to the scripted model server. A
command that fails, or prints a traceback, fails the test, so the README cannot rot.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO
from tests.helpers import doc_images as di

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def tour_block() -> str:
    """The first `sh` block under the README's "A short tour" heading."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## A short tour", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S)
    assert block is not None, "the README's tour has no sh block"
    return block.group(1)


def test_the_tour_block_starts_from_the_set_up() -> None:
    lines = tour_block().splitlines()
    assert lines[0] == "source .venv/bin/activate"
    assert any(line.startswith("evolve-action demo") for line in lines)
    assert lines[-1].startswith("evolve-action pr --local")


def test_the_readme_tour_runs_verbatim(tmp_path: Path) -> None:
    venv = Path(sys.prefix)
    (tmp_path / ".venv").symlink_to(venv, target_is_directory=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE_CODE_", "OPENAI_", "EVOLVE_", "GITHUB_"))
    }
    env["HOME"] = str(tmp_path / "home")
    script = "set -euo pipefail\n" + tour_block()
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    assert "Traceback" not in output and "internal error" not in output
    tour = tmp_path / "tour"
    assert (tour / "EVALUATION.md").is_file()
    # The gate passed on the demo's evidence; the untouched repository planned nothing.
    assert "gate: thresholds met" in done.stdout
    assert "plan: 0 case(s) in 0 unit(s) to run" in done.stdout
    # The edit made csv-report's trigger queries stale, priced before anything ran.
    assert re.search(r"estimate: \d+ agent sessions, about \$\d+\.\d\d", done.stdout)
    # The preview wrote the comment a reviewer would see, naming the touched skill.
    comment = (tour / ".evolve-action" / "pr-comment.md").read_text(encoding="utf-8")
    assert comment.startswith("<!-- evolve-action:pr-comment -->")
    assert "csv-report" in comment
    # The README's picture is this comment (issue 43): its committed source has the same lines,
    # figures aside (session counts and costs vary from run to run).
    shown = (di.IMG / f"{di.TOUR_IMAGE}.md").read_text(encoding="utf-8")
    assert di.comment_shape(comment) == di.comment_shape(shown), (
        f"docs/img/{di.TOUR_IMAGE}.md is not what the tour writes now; refresh every source and "
        f"PNG with: {di.REFRESH}"
    )
    # Issue 40: still a regression, and the sessions share the prompt cache (one write of each
    # shared prefix, reads after): the measured cost stays at most $1.60 (before: about $3.05).
    assert "pr --local exited 1" in done.stdout, comment
    cost = re.search(r"cost \$(\d+\.\d+)", comment)
    assert cost is not None and float(cost.group(1)) <= 1.60, comment
    assert "Prompt cache:" in done.stdout  # the job log gives the hit rate
