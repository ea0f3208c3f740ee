"""Issue 21: one repository model of which skills exist, for every shape Claude Code loads.

Each shape of `tests.helpers.repo_shapes.SHAPE_EDITS` is built in a directory named `shape`:
discovery finds exactly the skills Claude Code would load, Tier 0 under zero config reports only
what the shape itself breaks, and the touched-skill rule maps the PR's one edit to that skill
alone. The odd shapes (rejected entries, unbound eval files, a symlink leaving the repository, a
skill deleted while its evals stay) have tests of their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.repo_shapes import (
    SHAPE_EDITS,
    outside_symlink,
    plugin_json_skills,
    plugin_level_evals,
    put,
    rejected_entry,
    root_level_evals,
    unbound_evals,
    unlisted_folders,
)

from evolve_action.checks import CheckOptions, run_checks
from evolve_action.config import Config
from evolve_action.github import ChangedPath, ChangeStatus, touched_skills
from evolve_action.repo import Repository, discover
from evolve_action.specs import Severity


def shape(repo: Repository) -> dict[str, list[str]]:
    return {p.name: [s.name for s in repo.skills() if s.plugin == p.name] for p in repo.plugins}


def errors(repo: Repository) -> list[str]:
    report = run_checks(repo, Config(), CheckOptions(signals=False))
    return [f.message for f in report.findings if f.severity == Severity.ERROR]


@pytest.mark.parametrize("name", list(SHAPE_EDITS))
def test_each_shape_finds_what_claude_code_loads_and_an_edit_touches_that_skill(
    tmp_path: Path, name: str
) -> None:
    case = SHAPE_EDITS[name]
    root = case.build(tmp_path / "shape")
    repo = discover(root, root)
    assert shape(repo) == case.skills
    report = run_checks(repo, Config(), CheckOptions(signals=False))
    found = [(f.check, f.message) for f in report.findings if f.severity == Severity.ERROR]
    assert [check for check, _ in found] == list(case.errors), found
    edit = ChangedPath(path=case.edit, status=ChangeStatus.MODIFIED)
    touched = touched_skills(repo, [edit])
    assert (touched.keys, touched.removed) == ((case.touched,), ())
    # a file beside the skills that belongs to none of them touches nothing
    assert touched_skills(repo, [ChangedPath(path=case.unrelated)]).empty


def test_plugin_json_skills_bring_their_evals_and_triggers(tmp_path: Path) -> None:
    repo = discover(plugin_json_skills(tmp_path / "shape"), tmp_path)
    (es,) = repo.eval_sets()
    assert (es.plugin, es.skill, repo.rel(es.skill_dir)) == (
        "docs",
        "writer",
        "plugins/docs/custom/writer",
    )
    assert es.evals_path is not None and es.triggers_path is not None
    put(
        repo.root, "plugins/docs/.claude-plugin/plugin.json", {"name": "docs", "skills": "./custom"}
    )
    assert shape(discover(repo.root, tmp_path)) == {"docs": ["editor", "writer"]}


def test_a_rejected_marketplace_entry_is_an_error_naming_entry_and_field(tmp_path: Path) -> None:
    repo = discover(rejected_entry(tmp_path / "shape"), tmp_path)
    assert shape(repo) == {"good": ["fine"]}
    assert errors(repo) == [
        ".claude-plugin/marketplace.json: plugin 'bad' (plugins[1]): field `skills` holds a list "
        "holding an object, not paths; Claude Code rejects the entry (marketplace entry is "
        'invalid: skills: Invalid input) — list each skill as a path such as "./skills/<name>"'
    ]


def test_a_plugin_json_skills_field_of_the_wrong_type_is_an_error(tmp_path: Path) -> None:
    root = plugin_json_skills(tmp_path / "shape")
    put(root, "plugins/docs/.claude-plugin/plugin.json", {"name": "docs", "skills": {"a": 1}})
    repo = discover(root, tmp_path)
    assert shape(repo) == {"docs": []}
    assert errors(repo)[0].startswith(
        "plugins/docs/.claude-plugin/plugin.json: field `skills` holds an object, not paths"
    )


def test_unlisted_folders_are_one_note(tmp_path: Path) -> None:
    repo = discover(unlisted_folders(tmp_path / "shape"), tmp_path)
    assert repo.notices == (
        "note: folders under plugins/ that .claude-plugin/marketplace.json does not list are "
        "not plugins (Claude Code never installs them): scratch",
    )


def test_project_skills_beside_plugins_are_one_note(tmp_path: Path) -> None:
    from tests.helpers.repo_shapes import project_beside_plugins

    repo = discover(project_beside_plugins(tmp_path / "shape"), tmp_path)
    assert repo.notices == (
        "note: 1 project skill under .claude/skills/ (loaded by Claude Code in this repository) "
        "evaluated as plugin 'shape', beside the repository's plugins",
    )
    assert [(e.plugin, e.skill) for e in repo.eval_sets()] == [("shape", "release")]


def test_skill_creator_files_at_the_plugin_level_bind_by_skill_name(tmp_path: Path) -> None:
    root = plugin_level_evals(tmp_path / "shape")
    repo = discover(root, tmp_path)
    (es,) = repo.eval_sets()
    assert (es.skill, repo.rel(es.results_dir)) == ("second", "plugins/p/evals/second")
    assert repo.rel(es.evals_path) == "plugins/p/evals/evals.json"  # type: ignore[arg-type]
    assert repo.rel(es.triggers_path) == "plugins/p/evals/trigger-evals.json"  # type: ignore[arg-type]
    assert errors(repo) == []  # the fixture resolves from the skill root
    (root / "plugins/p/skills/second/evals/files/input.txt").unlink()
    assert errors(repo) == [
        'plugins/p/evals/evals.json: eval "1" files[0]: evals/files/input.txt: fixture not found '
        "(looked for plugins/p/evals/files/input.txt, plugins/p/skills/second/evals/files/input.txt, "
        "evals/files/input.txt; add the file or fix the path)"
    ]


def test_skill_creator_files_at_the_root_bind_to_the_only_skill(tmp_path: Path) -> None:
    repo = discover(root_level_evals(tmp_path / "shape"), tmp_path)
    (es,) = repo.eval_sets()
    assert (es.plugin, es.skill, repo.rel(es.results_dir)) == ("shape", "solo", "evals/solo")
    assert errors(repo) == []


def test_an_unbound_eval_file_is_a_note_with_the_fix(tmp_path: Path) -> None:
    repo = discover(unbound_evals(tmp_path / "shape"), tmp_path)
    assert repo.eval_sets() == []
    assert repo.notices[-1] == (
        "note: evals/evals.json looks like skill-creator eval definitions but is bound to no skill "
        '(not evaluated); fix: its "skill_name" "three" names no skill here; set it to one of: '
        "one, two"
    )


def test_a_plugin_leaving_the_checkout_is_an_error_and_never_a_plugin(tmp_path: Path) -> None:
    """Issue 20: a marketplace plugin reached through a symlink leaving the repository."""
    outside = tmp_path / "outside"
    repo = discover(outside_symlink(tmp_path / "shape", outside), tmp_path)
    assert shape(repo) == {"inside": ["safe"]}
    assert all(e.plugin != "evil" for e in repo.eval_sets())
    (message,) = errors(repo)
    assert message.startswith("plugins/evil: plugin directory resolves outside the repository")


@pytest.mark.parametrize("what", ["skill", "evals"])
def test_a_skill_or_eval_directory_leaving_the_checkout_is_an_error(
    tmp_path: Path, what: str
) -> None:
    outside = tmp_path / "outside"
    root = unlisted_folders(tmp_path / "shape")
    put(outside, "x/SKILL.md", "---\nname: x\ndescription: d\n---\n")
    put(outside, "x/triggers.json", "[]")
    where = root / ("plugins/listed/skills/x" if what == "skill" else "plugins/listed/evals")
    where.parent.mkdir(parents=True, exist_ok=True)
    where.symlink_to(outside / "x" if what == "skill" else outside, target_is_directory=True)
    repo = discover(root, tmp_path)
    assert shape(repo) == {"listed": ["listed-skill"]}
    assert repo.eval_sets() == []
    (message,) = errors(repo)
    assert "resolves outside the repository" in message and repo.rel(where) in message


def test_a_commands_only_plugin_is_a_warning_under_zero_config(tmp_path: Path) -> None:
    from tests.helpers.repo_shapes import commands_only

    root = commands_only(tmp_path / "shape")
    report = run_checks(discover(root, root), Config(), CheckOptions(signals=False))
    assert [(f.severity, f.message) for f in report.findings] == [
        (Severity.WARNING, "plugins/cmds: no skills (commands/, agents/): nothing to evaluate")
    ]
    put(root, ".evolve.yaml", "checks:\n  plugin_manifests: [claude]\n")
    report = run_checks(discover(root, root), Config(), CheckOptions(signals=False))
    assert "plugins/cmds: no skills under skills/" in [f.message for f in report.findings]


def test_a_claude_code_entry_leaving_the_checkout_is_an_error(tmp_path: Path) -> None:
    from tests.helpers.repo_shapes import marketplace, skill

    root = tmp_path / "shape"
    skill(tmp_path / "outside", "skills/stolen")
    marketplace(root, [{"name": "evil", "source": "./vendor/evil", "strict": False}])
    (root / "vendor").mkdir()
    (root / "vendor/evil").symlink_to(tmp_path / "outside", target_is_directory=True)
    repo = discover(root, root)
    assert repo.plugins == ()
    (message,) = errors(repo)
    assert message.startswith(
        "vendor/evil: plugin 'evil' (source ./vendor/evil) resolves outside the repository"
    )
