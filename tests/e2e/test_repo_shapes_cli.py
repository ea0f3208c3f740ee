"""`run checks` and `run triggers --dry-run` on the repository shapes of issue 12 (items 1–2).

Each case builds a small repository of one shape, runs `cli.main` with no config and asserts what a
Claude Code user expects: the notices (one `note:` line each on stderr), that the shape itself
causes no failure, and the planned trigger cases per plugin/skill.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.helpers.repo_shapes import (
    bare_skills,
    remote_marketplace,
    self_listing,
    skills_list_marketplace,
)
from tests.helpers.report_fixtures import beta_skill_models, write_results

from evolve_action.cli import main

LAYOUT_CHECKS = ("marketplace.", "repo.", "plugin.skills")


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def run(root: Path, *argv: str, cwd: Path | None = None) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    flags = [*argv] if cwd is not None else [*argv, "--root", str(root)]
    code = main(flags, environ={}, stdout=out, stderr=err, cwd=cwd or root.parent)
    return Outcome(code, out.getvalue(), err.getvalue())


def notes(outcome: Outcome) -> list[str]:
    return [line for line in outcome.err.splitlines() if line.startswith("note: ")]


def planned(root: Path, cwd: Path | None = None) -> Counter[tuple[str, str]]:
    outcome = run(root, "run", "triggers", "--dry-run", "--json", cwd=cwd)
    assert outcome.code == 0, outcome.err
    cases = [json.loads(line) for line in outcome.out.splitlines()]
    queries = {(c["plugin"], c["skill"], c["case"]) for c in cases}  # once per query, any model
    return Counter((plugin, skill) for plugin, skill, _ in queries)


def layout_findings(root: Path) -> list[str]:
    outcome = run(root, "run", "checks", "--json")
    assert outcome.code == 0, outcome.err
    doc = json.loads(outcome.out)
    return [f["message"] for f in doc["findings"] if f["check"].startswith(LAYOUT_CHECKS)]


@dataclass(frozen=True)
class Shape:
    build: Callable[[Path], Path]
    notes: list[str]
    plan: dict[tuple[str, str], int]
    plugins: int


SHAPES = {
    "skills-lists": Shape(
        skills_list_marketplace,
        [],
        {("document-skills", "xlsx"): 2, ("example-skills", "art"): 3},
        2,
    ),
    "remote-and-external": Shape(
        remote_marketplace,
        [
            "note: 3 marketplace plugins not evaluated here (remote): by-url (url "
            "https://example.com/u.git), by-subdir (git-subdir https://example.com/m.git), "
            "by-github (github someone/thing)",
            "note: plugins with no skills (shown, skipped): empty",
        ],
        {("alpha", "one"): 2, ("ext", "two"): 2},
        3,
    ),
    "self-listing-dot": Shape(
        lambda root: self_listing(root, by="dot"), [], {("selfy", "brainstorm"): 2}, 1
    ),
    "self-listing-github": Shape(
        lambda root: self_listing(root, by="github"), [], {("selfy", "brainstorm"): 2}, 1
    ),
    "bare-skills": Shape(
        bare_skills,
        [
            "note: no plugin manifest: the skills under skills/ form one implicit plugin "
            "'shape' (named after the repository directory)"
        ],
        {("shape", "alpha-skill"): 2},
        1,
    ),
    "claude-skills": Shape(
        lambda root: bare_skills(root, ".claude/skills"),
        [
            "note: no plugin manifest: the skills under .claude/skills/ form one implicit "
            "plugin 'shape' (named after the repository directory)"
        ],
        {("shape", "alpha-skill"): 2},
        1,
    ),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_shape_checks_and_plan(tmp_path: Path, name: str) -> None:
    shape = SHAPES[name]
    root = shape.build(tmp_path / "shape")
    checks = run(root, "run", "checks", "--json")
    assert checks.code == 0, checks.err
    assert notes(checks) == shape.notes
    assert json.loads(checks.out)["plugins"] == shape.plugins
    assert layout_findings(root) == []
    assert "Traceback" not in checks.err
    assert planned(root) == shape.plan
    dry = run(root, "run", "triggers", "--dry-run")
    assert notes(dry) == shape.notes


@pytest.mark.parametrize("name", ["skills-lists", "bare-skills", "claude-skills"])
def test_manifest_free_shapes_pass_every_check(tmp_path: Path, name: str) -> None:
    root = SHAPES[name].build(tmp_path / "shape")
    outcome = run(root, "run", "checks", "--strict", "--no-signals")
    assert outcome.code == 0, outcome.err
    assert "checks: all checks passed" in outcome.out


def test_bare_skills_found_from_inside_a_skill(tmp_path: Path) -> None:
    root = bare_skills(tmp_path / "shape")
    assert planned(root, cwd=root / "skills/beta-skill") == {("shape", "alpha-skill"): 2}


def test_report_pages_of_plugins_on_the_root(tmp_path: Path) -> None:
    """Two `./` plugins: each page is `EVALUATION.<plugin>.md`, never over the root page."""
    root = skills_list_marketplace(tmp_path / "shape")
    write_results(root / "evals/xlsx/results.json", "document-skills", "xlsx", beta_skill_models())
    write_results(root / "evals/art/results.json", "example-skills", "art", beta_skill_models())
    outcome = run(root, "report")
    assert outcome.code == 0, outcome.err
    pages = sorted(p.name for p in root.glob("EVALUATION*.md"))
    assert pages == [
        "EVALUATION.document-skills.md",
        "EVALUATION.example-skills.md",
        "EVALUATION.md",
    ]
    top = (root / "EVALUATION.md").read_text(encoding="utf-8")
    assert "document-skills" in top and "example-skills" in top


def test_report_of_a_self_listing_marketplace_is_one_page(tmp_path: Path) -> None:
    root = self_listing(tmp_path / "shape", by="github")
    write_results(
        root / "evals/brainstorm/results.json", "selfy", "brainstorm", beta_skill_models()
    )
    outcome = run(root, "report")
    assert outcome.code == 0, outcome.err
    assert sorted(p.name for p in root.glob("EVALUATION*.md")) == ["EVALUATION.md"]
