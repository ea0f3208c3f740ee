"""Confinement: links out of the repository are findings and never reach a workspace; assertion paths
stay inside the workspace; the agent and `command` assertions cannot write outside their workspace.

The last test runs the real Claude Code CLI (scripted by the model server) told to write into the
repository and `$HOME`; it needs bubblewrap and skips, saying so, where bwrap cannot run.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import skill_md, write

from evolve_action import grading, specs
from evolve_action import harness as sandbox
from evolve_action import harness as wsmod
from evolve_action.cli import main
from evolve_action.errors import SpecError
from evolve_action.evals import stage_workspace


class _A:
    """A minimal assertion for `grade_deterministic`."""

    def __init__(self, type_: str, **kw: Any) -> None:
        self.type = type_
        self.path = kw.get("path", "")
        self.pattern = kw.get("pattern", "")
        self.run = kw.get("run", "")
        self.cwd = kw.get("cwd", "")
        self.tool = ""
        self.requires = ""
        self.expect_exit = None
        self.exit_code = 0
        self.text = ""


def _repo(root: Path, outside: Path) -> Path:
    write(root, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
    write(root, "skills/good/SKILL.md", skill_md("good", "Good skill. Use when asked."))
    (root / "skills/good/host.txt").symlink_to(outside)
    write(root, "skills/good/shared.md", "inside\n")
    (root / "skills/good/inside-link.md").symlink_to(root / "skills/good/shared.md")
    (root / "skills/leak").mkdir(parents=True)
    (root / "skills/leak/SKILL.md").symlink_to(outside)
    evals = {"evals": [{"id": "a", "prompt": "p", "files": ["files/data.txt"], "assertions": []}]}
    write(root, "evals/good/evals.json", json.dumps(evals))
    (root / "evals/good/files").mkdir(parents=True)
    (root / "evals/good/files/data.txt").symlink_to(outside)
    return root


def _outside(tmp_path: Path) -> Path:
    return write(tmp_path, "host/secret.txt", "---\nname: leak\ndescription: HOST SECRET\n---\n")


def test_links_out_of_the_repository_are_check_findings(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", _outside(tmp_path))
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["run", "checks", "--strict", "--root", str(root)],
        {"PATH": "/usr/bin:/bin"},
        stdout=out,
        stderr=err,
    )
    text = out.getvalue() + err.getvalue()
    assert code == 1, text
    for rel in ("skills/leak/SKILL.md", "skills/good/host.txt", "evals/good/files/data.txt"):
        assert f"{rel}: symlink leaves the repository" in text
    assert "inside-link.md" not in text
    assert "HOST SECRET" not in text


def test_workspace_copies_never_follow_links_out_of_the_repository(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", _outside(tmp_path))
    ws = wsmod.create_workspace(prefix="evals.", skills=[root / "skills/good"], environ=os.environ)
    try:
        installed = ws / ".claude/skills/good"
        assert (installed / "SKILL.md").is_file() and (
            installed / "inside-link.md"
        ).read_text() == "inside\n"
        assert not (installed / "host.txt").exists()
    finally:
        wsmod.remove_workspace(ws)
    # A trigger workspace links skills only when nothing in them leaves the repository.
    tws = wsmod.create_trigger_workspace(root / "skills", environ=os.environ)
    try:
        for name in ("good", "leak"):
            assert not (tws / ".claude/skills" / name).is_symlink()
        assert not (tws / ".claude/skills/leak/SKILL.md").exists()
        assert not (tws / ".claude/skills/good/host.txt").exists()
    finally:
        wsmod.remove_workspace(tws)
    # A fixture that leaves the repository stops staging with a clear error.
    spec = specs.load_evals(root / "evals/good/evals.json")
    with pytest.raises(SpecError, match="symlink leaving the repository"):
        stage_workspace(spec.evals[0], skill_dir=root / "skills/good", environ=os.environ)


def test_assertion_paths_resolve_inside_the_workspace_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "ok.txt").write_text("fine\n")
    (ws / "link.txt").symlink_to("/etc/hostname")
    kw: dict[str, Any] = {
        "workspace": ws,
        "final_text": "",
        "tool_calls": [],
        "timeout_seconds": 30,
    }
    kw["environ"] = {"PATH": "/usr/bin:/bin"}
    escape = "../../../../../../etc/hostname"
    for a in (
        _A("regex", path=escape, pattern="."),
        _A("not_regex", path=escape, pattern="zzz"),
        _A("regex", path="link.txt", pattern="."),
        _A("file_exists", path=escape),
        _A("file_absent", path="../ws/../../x"),
        _A("command", run="true", cwd="../.."),
    ):
        verdict = asyncio.run(grading.grade_deterministic(a, **kw))
        assert verdict.passed is False and "outside the workspace" in verdict.evidence, a.__dict__
    good = asyncio.run(
        grading.grade_deterministic(_A("regex", path="ok.txt", pattern="fine"), **kw)
    )
    assert good.passed is True


needs_bwrap = pytest.mark.skipif(
    not sandbox.probe(os.environ).available,
    reason=f"no OS sandbox here: {sandbox.probe(os.environ).reason}",
)


@needs_bwrap
def test_command_assertion_cannot_write_outside_its_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = tmp_path / "outside.txt"
    kw: dict[str, Any] = {
        "workspace": ws,
        "final_text": "",
        "tool_calls": [],
        "timeout_seconds": 30,
    }
    kw["environ"] = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = f"echo in > inside.txt && t=$(mktemp) && echo tmp > $t && echo x > {target}"
    verdict = asyncio.run(grading.grade_deterministic(_A("command", run=run), **kw))
    assert verdict.passed is False and "Read-only file system" in verdict.evidence
    assert (ws / "inside.txt").read_text() == "in\n"
    assert not target.exists()


POLICY = """
rules:
  - name: escape
    when: {prompt: '\\[escape\\]'}
    steps:
      - {tool: Write, input: {file_path: "{cwd}/inside.txt", content: "inside\\n"}}
      - {tool: Write, input: {file_path: "REPO/pwned-write.txt", content: "pwned\\n"}}
      - {tool: Bash, input: {command: "echo pwned > REPO/pwned-bash.txt; echo pwned > HOME/pwned-home.txt; echo done"}}
      - "Tried."
"""


@needs_bwrap
def test_agent_told_to_write_outside_its_workspace_cannot(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    root = tmp_path / "repo"
    home = tmp_path / "home"
    home.mkdir()
    write(root, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
    write(root, "skills/good/SKILL.md", skill_md("good", "Good skill. Use when asked."))
    evals = {
        "evals": [
            {
                "id": "escape",
                "prompt": "[escape] Write files everywhere.",
                "assertions": [{"type": "file_exists", "path": "inside.txt"}],
            }
        ]
    }
    write(root, "evals/good/evals.json", json.dumps(evals))
    srv = model_server(POLICY.replace("REPO", str(root)).replace("HOME", str(home)))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "ANTHROPIC_BASE_URL": srv.base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }
    args = ["run", "evals", "--root", str(root), "--model", "claude-sonnet-5", "--timeout", "120"]
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=tmp_path)
    assert code in (0, 1), err.getvalue()
    doc = json.loads((root / "evals/good/results.json").read_text())
    row = doc["models"]["anthropic/claude-sonnet-5"]["evals"]["results"][0]
    assert row.get("passed") is True, (
        row.get("expectations"),
        row.get("runtime_error"),
    )  # the agent ran and wrote inside its workspace
    assert not (root / "pwned-write.txt").exists()
    assert not (root / "pwned-bash.txt").exists()
    assert not (home / "pwned-home.txt").exists()
    assert "no OS sandbox" not in err.getvalue()


def test_one_clear_line_when_there_is_no_sandbox(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", _outside(tmp_path))
    out, err = io.StringIO(), io.StringIO()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "EVOLVE_SANDBOX_ENABLED": "false"}
    main(["run", "triggers", "--dry-run", "--root", str(root)], env, stdout=out, stderr=err)
    lines = [line for line in err.getvalue().splitlines() if "no OS sandbox" in line]
    assert lines == [
        "note: no OS sandbox (disabled by EVOLVE_SANDBOX_ENABLED); agents and command assertions run "
        "unconfined (install bubblewrap to confine them to their workspace)"
    ]
    assert sandbox.probe({"PATH": str(tmp_path)}).reason == "bubblewrap (bwrap) is not installed"
