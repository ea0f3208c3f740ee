"""`run checks` on a repository written for Claude Code alone, opted in or not (issue 12, 3–4).

Runs `cli.main` on the `repo_shapes` fixtures and asserts what the user sees: the line saying which
rules applied, the exit code under `--strict`, the `conventions` of `--json`, and an invalid
frontmatter shown as `FAIL: <file>:<line>: …`.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.repo_shapes import claude_code_plugin, yaml_descriptions

from evolve_action.cli import main

RULES_LINE = "checks: Claude Code's and the Agent Skills rules;"


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def run(root: Path, *flags: str, env: dict[str, str] | None = None) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    argv = ["run", "checks", "--no-signals", *flags, "--root", str(root)]
    code = main(argv, environ=env or {}, stdout=out, stderr=err, cwd=root.parent)
    return Outcome(code, out.getvalue(), err.getvalue())


def test_a_claude_code_plugin_passes_and_says_which_rules(tmp_path: Path) -> None:
    root = claude_code_plugin(tmp_path / "pdf-kit")
    outcome = run(root, "--strict")
    assert outcome.code == 0, outcome.err
    assert outcome.out == "checks: all checks passed (single layout, 1 plugin)\n"
    assert [line for line in outcome.err.splitlines() if line.startswith(RULES_LINE)]
    doc = json.loads(run(root, "--json").out)
    assert (doc["conventions"], doc["findings"]) == ("claude-code", [])


def test_with_evolve_yaml_it_is_held_to_evolves_conventions(tmp_path: Path) -> None:
    root = claude_code_plugin(tmp_path / "pdf-kit", ".evolve.yaml")
    outcome = run(root, "--strict")
    assert outcome.code == 1
    assert RULES_LINE not in outcome.err
    fails = [line for line in outcome.err.splitlines() if line.startswith("FAIL: ")]
    assert len(fails) == 5
    assert "FAIL: skills/pdf-text/SKILL.md:4: license 'Apache-2.0' is forbidden" in outcome.err
    doc = json.loads(run(root, "--json").out)
    assert "conventions" not in doc and doc["counts"]["errors"] == 5
    allowed = run(root, "--json", "--license", "any")
    assert not [f for f in json.loads(allowed.out)["findings"] if f["check"] == "skill.license"]


def test_an_invalid_frontmatter_names_file_and_line(tmp_path: Path) -> None:
    root = yaml_descriptions(tmp_path / "yaml-skills")
    outcome = run(root)
    assert outcome.code == 0  # without --strict, failures warn
    fails = [line for line in outcome.err.splitlines() if line.startswith("FAIL: ")]
    assert fails[0].startswith("FAIL: skills/broken/SKILL.md:5: frontmatter is not valid YAML (")
    assert fails[1:] == ["FAIL: skills/long-block/SKILL.md:3: description longer than 1024 chars"]
    assert "Traceback" not in outcome.err
