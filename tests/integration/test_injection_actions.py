"""Workflow-command injection: under `GITHUB_ACTIONS=true`, repository and model text never prints a
line that starts with `::` (or `##[`), and no raw escape reaches the console.

Real processes: `python -m evolve_action run triggers` and `run evals` with the real Claude Code CLI
against the scripted model server, whose answers, command output and judge evidence carry injections.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.agents import scripted_env, skill_md, triggers_doc, write

QUERIES = [
    ("tidy my csv\n::error file=x,line=1::pwned by query", True),
    ("::add-mask::hunter2", False),
    ("\x1b[41mred query\x1b[0m\n##[warning]legacy", False),
]


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith(("::", "##["))]


def _run(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "evolve_action", *args], env=env, capture_output=True, check=False
    )
    return proc.returncode, proc.stdout.decode() + proc.stderr.decode()


def test_injections_print_no_workflow_command_under_actions(
    tmp_path: Path, model_server: Any, claude_cli: Path
) -> None:
    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "kit", "version": "1.0.0"}\n')
    write(root, "skills/csv-clean/SKILL.md", skill_md("csv-clean", "Tidy CSV. Use when asked."))
    write(root, "evals/csv-clean/triggers.json", triggers_doc(QUERIES))
    evil = "done\n::error::pwned by model\n\x1b[41m::add-mask::x"
    evals = {
        "evals": [
            {
                "id": "e1\n::error::pwned by id",
                "prompt": "[inject] go",
                "assertions": [
                    {"type": "regex", "pattern": "\n::error::(nope)"},
                    {"type": "command", "run": "printf 'x\\n::error::pwned by command\\n'; exit 3"},
                    {"type": "llm", "text": "judge \x1b[41mthis\x1b[0m"},
                ],
            }
        ]
    }
    write(root, "evals/csv-clean/evals.json", json.dumps(evals))
    srv = model_server(
        {
            "rules": [
                {
                    "name": "judge",
                    "when": {"tools": ["submit_verdicts"]},
                    "judge": {"fail": "."},
                },
                {"name": "inject", "when": {"prompt": "\\[inject\\]"}, "text": evil},
                {"name": "route", "route": {"threshold": 0.2}},
            ]
        }
    )
    env = {**scripted_env(tmp_path, srv.base_url), "GITHUB_ACTIONS": "true"}
    model = ["--model", "claude-sonnet-5"]
    outputs = []
    for args in (
        ["run", "checks", "--root", str(root)],
        ["run", "triggers", "--root", str(root), *model, "--runs", "1"],
        ["--verbose", "run", "evals", "--root", str(root), *model, "--no-baseline"],
    ):
        _code, text = _run(args, env)
        assert "Traceback" not in text, text
        outputs.append(text)
    for text in outputs:
        assert "\x1b" not in text
        for line in _commands(text):  # only our own annotations, each one whole line
            head, _, message = line.lstrip()[2:].partition("::")
            assert head.split(" ")[0] in ("error", "warning", "notice"), line
            assert not message.startswith(("pwned", "hunter2")), line
            assert "add-mask" not in head, line
