"""`install: plugin` (issue 12 item 7): the plugin loaded as users install it, hooks included.

A plugin whose `SessionStart` hook tells the model when to use its skill: the scripted model
server calls the namespaced `Skill` (`hooky:frob`) only when the hook's context reached the
request. With `--install plugin` the real Claude Code CLI loads the plugin directory, runs the
hook, the query hits and the trigger entry records `"install": "plugin"`; with the default
(evolve's skill linking) the hook never runs, the same query misses and no `install` key is
written.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.agents import scripted_env, skill_md, triggers_doc, write

from evolve_action.cli import main

pytestmark = pytest.mark.integration

MODEL = "claude-sonnet-4-6"
POLICY = """
rules:
  - name: hooked
    when: {system: 'HOOK-CONTEXT-7f3a', tools: [Skill], turn: 1}
    tool: Skill
    input: {skill: "hooky:frob"}
  - name: done
    when: {turn: '>=2'}
    text: "Done."
default: "I can do that without any skill."
"""
HOOKS = {
    "hooks": {
        "SessionStart": [
            {"hooks": [{"type": "command", "command": "echo 'HOOK-CONTEXT-7f3a: use frob'"}]}
        ]
    }
}


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, env, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


def hooky(root: Path) -> Path:
    write(root, ".claude-plugin/plugin.json", json.dumps({"name": "hooky", "version": "1.0.0"}))
    write(root, "hooks/hooks.json", json.dumps(HOOKS))
    write(root, "skills/frob/SKILL.md", skill_md("frob", "Polish widgets. Use when asked."))
    write(root, "evals/frob/triggers.json", triggers_doc([("Polish my widget please", True)]))
    return root


def entry(repo: Path) -> dict[str, Any]:
    doc = json.loads((repo / "evals/frob/results.json").read_text())
    return doc["models"][f"anthropic/{MODEL}"]["triggers"]  # type: ignore[no-any-return]


def test_plugin_install_runs_hooks_and_records_the_mode(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    plugin_repo = hooky(tmp_path / "plugin-mode")
    skills_repo = tmp_path / "skills-mode"
    shutil.copytree(plugin_repo, skills_repo)
    srv = model_server(POLICY)
    env = scripted_env(tmp_path, srv.base_url)
    args = ["run", "triggers", "--model", MODEL, "--runs", "1", "--jobs", "1"]

    code, out, err = run_cli(
        [*args, "--root", str(plugin_repo), "--install", "plugin"], env, tmp_path
    )
    assert code == 0, out + err
    got = entry(plugin_repo)
    assert got["install"] == "plugin"
    assert [(r["hits"], r["passed"]) for r in got["results"]] == [(1, True)]

    code, out, err = run_cli([*args, "--root", str(skills_repo)], env, tmp_path)
    assert code == 0, out + err
    got = entry(skills_repo)
    assert "install" not in got
    assert [(r["hits"], r["passed"]) for r in got["results"]] == [(0, False)]
