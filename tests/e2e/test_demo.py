"""`evolve-action demo` end to end: the real Claude Code CLI against the in-process scripted server."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import pytest
from tests.conftest import EXAMPLES, REPO

from evolve_action.cli import main
from evolve_action.harness import available_harnesses

pytestmark = pytest.mark.integration


def _tree_digest(root: Path) -> dict[str, str]:
    """Relative path → sha256 of every file (and symlink target) under `root`."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = "link:" + str(path.readlink())
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _claude_available() -> bool:
    from evolve_action.errors import EnvironmentProblem
    from evolve_action.harness import find_cli

    try:
        find_cli(os.environ)
    except EnvironmentProblem:
        return False
    return True


@pytest.mark.slow
def test_demo_runs_the_whole_pipeline_offline_on_a_copy(tmp_path: Path) -> None:
    if not _claude_available():
        pytest.skip("the Claude Code CLI (bundled in claude-agent-sdk) is not available")
    before = _tree_digest(EXAMPLES)
    out_dir = tmp_path / "demo"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    stdout, stderr = io.StringIO(), io.StringIO()

    code = main(
        ["demo", "--out", str(out_dir), "--runs", "1", "--jobs", "2"],
        environ,
        stdout=stdout,
        stderr=stderr,
        cwd=tmp_path,  # the default --root is the bundled examples, wherever the user stands
    )

    text = stdout.getvalue()
    assert code == 0, text + stderr.getvalue()
    assert "scripted model server" in text
    assert f"report:             {out_dir / 'EVALUATION.md'}" in text
    # The user's tree is untouched; everything was written into the copy.
    assert _tree_digest(EXAMPLES) == before
    report = (out_dir / "EVALUATION.md").read_text(encoding="utf-8")
    assert "## project-tools" in report and "## release-tools" in report
    assert (out_dir / "EVALUATION.json").is_file()

    triggers = [0, 0]
    evals = [0, 0]
    baseline = [0, 0]
    skills = ("csv-report", "license-header", "changelog", "commit-message")
    codex_passed = 0
    for results in sorted(out_dir.glob("plugins/*/evals/*/results.json")):
        doc = json.loads(results.read_text(encoding="utf-8"))
        assert doc["schema"] == 5
        # Claude; and one OpenAI model through Codex when Codex is installed.
        codex = "codex" in available_harnesses(environ)
        want = {"anthropic/claude-sonnet-5", *(("openai/gpt-5.4",) if codex else ())}
        assert set(doc["models"]) == want
        if codex:
            openai = doc["models"]["openai/gpt-5.4"]
            assert openai["triggers"]["harness"] == openai["evals"]["harness"] == "codex"
            assert openai["triggers"]["summary"]["total"] >= 7
            codex_passed += openai["evals"]["summary"]["passed"]
        entry = doc["models"]["anthropic/claude-sonnet-5"]
        t, e = entry["triggers"]["summary"], entry["evals"]["summary"]
        b = entry["evals"]["baseline"]["summary"]
        for acc, s in ((triggers, t), (evals, e), (baseline, b)):
            acc[0] += s["passed"]
            acc[1] += s["passed"] + s["failed"]
    assert sorted(p.parent.name for p in out_dir.glob("plugins/*/evals/*/results.json")) == sorted(
        skills
    )
    # 4 skills × 7 queries, 4 skills × 2 evals; non-trivial rates and a positive lift. The closing
    # PR preview added one trigger query to csv-report and ran only that one.
    assert triggers[1] == 28 + 1 and evals[1] == 8 and baseline[1] == 8
    preview = (out_dir / ".evolve-action" / "pr-comment.md").read_text(encoding="utf-8")
    assert not codex or codex_passed > 0  # Codex did real work (tool names differ: not all pass)
    sessions = len(want)  # the new query, once per model
    assert "project-tools/csv-report" in preview
    assert f"{sessions} agent session{'s' if sessions > 1 else ''}, " in preview
    assert f"{out_dir / '.evolve-action' / 'pr-comment.md'}" in text
    assert triggers[0] / triggers[1] >= 0.75
    assert evals[0] / evals[1] >= 0.75
    assert baseline[0] < evals[0]
    assert "lift:" in text and "+" in text.split("lift:")[1].splitlines()[0]
    # The copy's config names the evaluated models, so the release gate on it checks just those.
    config = (out_dir / ".evolve.yaml").read_text(encoding="utf-8")
    pinned = ["anthropic/claude-sonnet-5", *(["openai/gpt-5.4"] if codex else [])]
    assert config.endswith("models:\n" + "".join(f'  - "{m}"\n' for m in pinned))
    gate_out, gate_err = io.StringIO(), io.StringIO()
    gate = main(["gate"], environ, stdout=gate_out, stderr=gate_err, cwd=out_dir)
    shown = gate_out.getvalue() + gate_err.getvalue()
    assert "no stored results" not in shown
    if codex:  # Codex lacks Claude's tool names, so its evals fail the thresholds: only its own
        fails = [line for line in shown.splitlines() if line.startswith("FAIL:")]
        assert gate == 1 and fails and all("openai/gpt-5.4" in line for line in fails), shown
    else:
        assert gate == 0, shown


def test_demo_refuses_to_spend_money_without_yes(tmp_path: Path) -> None:
    out_dir = tmp_path / "demo"
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(
        ["demo", "--out", str(out_dir)],
        {"ANTHROPIC_API_KEY": "sk-real", "PATH": os.environ.get("PATH", "")},
        stdout=stdout,
        stderr=stderr,
        cwd=REPO,
    )
    assert code == 2
    assert "ANTHROPIC_API_KEY is set" in stderr.getvalue()
    assert "--scripted" in stderr.getvalue()
    assert not out_dir.exists()


def test_demo_without_examples_says_what_to_do(tmp_path: Path) -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(
        ["demo", "--root", "examples"],
        {"PATH": os.environ.get("PATH", "")},
        stdout=stdout,
        stderr=stderr,
        cwd=tmp_path,
    )
    assert code == 2
    assert "example repository not found: examples" in stderr.getvalue()
    assert "--root" in stderr.getvalue()


def test_ctrl_c_during_demo_out_says_what_was_left_where(tmp_path: Path) -> None:
    """SIGINT once the copy exists: exit 130, and one line names the half-made `--out` folder
    and how to finish or drop it (the wait is for the process's own line, not a clock)."""
    import signal
    import subprocess
    import sys

    if not _claude_available():
        pytest.skip("the Claude Code CLI bundled in claude-agent-sdk is not available")
    out_dir = tmp_path / "demo"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolve_action", "demo", "--out", str(out_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("demo: copied"):
            break
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, "".join(seen) + rest + err
    assert f"demo: interrupted: the half-evaluated copy is left in {out_dir}" in err, err
    assert f"evolve-action run all --root {out_dir}" in err
    assert out_dir.is_dir()
