"""Issue 30: the repository shapes people actually have, and skill-creator's files as written.

Standalone skill repositories (the root is the skill), single-skill plugins (a root SKILL.md),
symlinks inside the repository followed by the touched rule (and links leaving it refused), a
case saved without assertions ("not graded yet"), files in shapes the tool does not read (a note),
one finding per naming problem, and errors of untouched skills split off as pre-existing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.repo_shapes import (
    linked_project_skills,
    marketplace,
    put,
    skill,
    standalone_skill,
    symlinked_project_skills,
)

from evolve_action.checks import CheckOptions, run_checks, split_pre_existing
from evolve_action.config import Config
from evolve_action.errors import SpecError
from evolve_action.github import ChangedPath, touched_skills
from evolve_action.plan import build_inputs, eval_content_hash, staged_skill
from evolve_action.repo import ACCEPTED_LAYOUTS, Repository, discover
from evolve_action.specs import Severity, load_evals


def findings(repo: Repository, severity: Severity = Severity.ERROR) -> list[str]:
    report = run_checks(repo, Config(), CheckOptions(signals=False))
    return [f.message for f in report.findings if f.severity == severity]


def test_a_standalone_skill_is_found_walking_up_and_named_by_its_frontmatter(
    tmp_path: Path,
) -> None:
    root = standalone_skill(tmp_path / "checkout")
    repo = discover(None, root / "evals" / "files")
    assert repo.root == root and repo.layout == "single"
    assert [(s.plugin, s.name, s.dir) for s in repo.skills()] == [
        ("tidy-notes", "tidy-notes", root)
    ]
    [es] = repo.eval_sets()
    assert (es.evals_path, es.triggers_path) == (
        root / "evals/evals.json",
        root / "evals/trigger-evals.json",
    )
    assert es.results_dir == root / "evals/tidy-notes"
    assert findings(repo) == []
    assert findings(repo, Severity.WARNING) == [
        'evals/evals.json: eval "2": not graded yet: add assertions (or expectations); the case '
        "is not run until it has one"
    ]
    notes = [n for n in repo.notices if "trigger-queries.json" in n]
    assert len(notes) == 1 and "is not in a format evolve-action reads" in notes[0]
    assert "trigger array" in notes[0] and "AgentEvals EVAL.yaml" in notes[0]
    assert not any("bound to no skill" in n for n in repo.notices)


def test_a_standalone_skill_without_a_usable_name_is_named_after_its_directory(
    tmp_path: Path,
) -> None:
    put(tmp_path / "my-skill", "SKILL.md", "---\ndescription: Does it. Use when asked.\n---\nx\n")
    repo = discover(tmp_path / "my-skill", tmp_path)
    assert [(s.plugin, s.name) for s in repo.skills()] == [("my-skill", "my-skill")]
    assert any("empty" in m or "kebab" in m for m in findings(repo))  # a name is still required


def test_recording_results_never_makes_a_root_skill_look_modified(tmp_path: Path) -> None:
    root = standalone_skill(tmp_path / "shape")
    [es] = discover(root, root).eval_sets()
    before = eval_content_hash(es.skill_dir, skip=es.content_skips)
    put(root, "evals/tidy-notes/results.json", "{}\n")
    put(root, "EVALUATION.md", "# Evaluation\n")
    assert eval_content_hash(es.skill_dir, skip=es.content_skips) == before
    assert eval_content_hash(es.skill_dir) != before  # evolve's walk alone would see them
    put(root, "README.md", "# changed\n")
    assert eval_content_hash(es.skill_dir, skip=es.content_skips) != before


def test_a_case_without_assertions_is_not_planned_and_id_text_assertions_are_llm(
    tmp_path: Path,
) -> None:
    root = standalone_skill(tmp_path / "shape")
    repo = discover(root, root)
    built = build_inputs(repo.eval_sets(), root=root)
    assert built.invalid == []
    [inputs] = built.sets
    assert inputs.evals is not None and [c.id for c in inputs.evals] == ["1"]
    assert built.warnings == [
        "tidy-notes/tidy-notes: 1 eval case not graded yet (2): add assertions (or expectations) "
        "to run them"
    ]
    spec = load_evals(root / "evals/evals.json")
    [assertion] = spec.evals[0].assertions
    assert (assertion.type, assertion.text) == ("llm", "the notes are sorted by topic")


def test_a_case_without_a_prompt_or_assertions_is_still_an_error(tmp_path: Path) -> None:
    root = standalone_skill(tmp_path / "shape")
    put(root, "evals/evals.json", {"evals": [{"id": 1, "prompt": ""}]})
    errors = findings(discover(root, root))
    assert 'evals/evals.json: eval "1": no expectations or assertions' in errors


def test_a_single_skill_plugin_is_one_skill_named_by_its_frontmatter(tmp_path: Path) -> None:
    put(tmp_path / "shape", ".claude-plugin/plugin.json", {"name": "writing"})
    put(
        tmp_path / "shape",
        "SKILL.md",
        "---\nname: humanizer\ndescription: Humanizes text. Use when asked.\n---\nx\n",
    )
    repo = discover(tmp_path / "shape", tmp_path)
    assert [(s.plugin, s.name) for s in repo.skills()] == [("writing", "humanizer")]
    assert findings(repo) == []  # the name is not compared with the checkout's directory


def test_a_skills_directory_wins_over_a_root_skill_md(tmp_path: Path) -> None:
    root = tmp_path / "shape"
    put(root, ".claude-plugin/plugin.json", {"name": "p"})
    skill(root, "skills/inner")
    put(root, "SKILL.md", "---\nname: p\ndescription: Root. Use when.\n---\nx\n")
    assert [s.name for s in discover(root, root).skills()] == ["inner"]


def test_an_edit_under_a_symlink_target_touches_the_skill_reached_through_it(
    tmp_path: Path,
) -> None:
    root = symlinked_project_skills(tmp_path / "shape")
    assert [s.name for s in discover(root, tmp_path).skills()] == ["docs", "lint"]
    skill(root, ".agents/skills/new")  # added by the change
    repo = discover(root, tmp_path)
    for path in (".agents/skills/lint/SKILL.md", ".claude/skills/lint/SKILL.md"):
        assert touched_skills(repo, [ChangedPath(path=path)]).keys == ("shape/lint",)
    assert touched_skills(repo, [ChangedPath(path=".agents/skills/new/SKILL.md")]).keys == (
        "shape/new",
    )


def test_a_symlinked_skills_directory_leaving_the_checkout_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    skill(outside, "skills/stolen")
    root = tmp_path / "shape"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude/skills").symlink_to(outside / "skills", target_is_directory=True)
    repo = discover(root, tmp_path)
    assert repo.skills() == []
    assert any("resolves outside the repository" in m for m in findings(repo))


def test_a_root_evals_json_in_another_shape_is_a_note_not_an_error(tmp_path: Path) -> None:
    root = tmp_path / "shape"
    skill(root, "skills/solo")
    put(root, "evals/evals.json", [{"question": "q", "answer": "a"}])
    repo = discover(root, root)
    assert repo.eval_sets() == [] and findings(repo) == []
    [note] = [n for n in repo.notices if "evals/evals.json" in n]
    assert "is not in a format evolve-action reads" in note


def test_a_trigger_file_that_is_not_json_is_still_claimed_and_reported(tmp_path: Path) -> None:
    root = standalone_skill(tmp_path / "shape")
    put(root, "evals/trigger-evals.json", "[{not json")
    assert any(m.startswith("evals/trigger-evals.json") for m in findings(discover(root, root)))


@pytest.mark.parametrize(
    ("directory", "name", "expected"),
    [
        (
            "_helper",
            "_helper",
            ["name '_helper' not kebab-case (nor is its directory: rename both)"],
        ),
        ("Bad_Name", "bad-name", ["name 'bad-name' != directory 'Bad_Name'", "skill directory"]),
        ("pdf-text", "PDF_Text", ["name 'PDF_Text' != directory 'pdf-text' (and not kebab-case)"]),
        ("graphql", "", ["name missing (the Agent Skills specification requires it; Claude Code"]),
    ],
)
def test_one_finding_per_naming_problem(
    tmp_path: Path, directory: str, name: str, expected: list[str]
) -> None:
    root = tmp_path / "shape"
    put(root, ".claude-plugin/plugin.json", {"name": "shape"})
    put(
        root, f"skills/{directory}/SKILL.md", f"---\nname: {name}\ndescription: D. Use when.\n---\n"
    )
    errors = findings(discover(root, root))
    assert len(errors) == len(expected)
    for message, part in zip(errors, expected, strict=True):
        assert part in message


def test_the_no_repository_message_lists_every_accepted_layout(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecError) as caught:
        discover(None, tmp_path / "empty")
    for layout in ("marketplace", "multi", "single", "bare skills", "standalone skill"):
        assert layout in ACCEPTED_LAYOUTS
    assert ACCEPTED_LAYOUTS in caught.value.message
    assert ".claude/skills/*/SKILL.md" in caught.value.message


def test_errors_of_untouched_skills_are_pre_existing(tmp_path: Path) -> None:
    root = tmp_path / "shape"
    put(root, ".claude-plugin/plugin.json", {"name": "shape"})
    skill(root, "skills/good")
    put(root, "skills/broken/SKILL.md", "no frontmatter\n")
    repo = discover(root, root)
    report = run_checks(repo, Config(), CheckOptions(signals=False))
    assert report.failures == 1
    split = split_pre_existing(report, repo, [("shape", "good")])
    assert (split.failures, split.skills) == (0, ("shape/broken",))
    assert "1 pre-existing failure in skills this change did not touch (shape/broken)" in (
        split.line()
    )
    assert split_pre_existing(report, repo, [("shape", "broken")]).failures == 1
    put(root, ".claude-plugin/plugin.json", "{")  # a repository-level error always counts
    report = run_checks(discover(root, root), Config(), CheckOptions(signals=False))
    assert split_pre_existing(report, discover(root, root), [("shape", "good")]).failures >= 1


def test_one_link_per_skill_is_followed_inside_and_refused_outside(tmp_path: Path) -> None:
    root = linked_project_skills(tmp_path / "shape")
    skill(tmp_path / "outside", "stolen")
    (root / ".claude/skills/stolen").symlink_to(tmp_path / "outside/stolen")
    repo = discover(root, tmp_path)
    assert [s.name for s in repo.skills()] == ["plan", "ship"]
    assert any(".claude/skills/stolen" in m and "outside" in m for m in findings(repo))
    edit = ChangedPath(path=".agents/skills/plan/SKILL.md")
    assert touched_skills(repo, [edit]).keys == ("shape/plan",)


def test_a_root_skill_is_installed_from_a_copy_named_after_it(tmp_path: Path) -> None:
    root = standalone_skill(tmp_path / "checkout")
    put(root, ".git/HEAD", "ref: refs/heads/main\n")
    put(root, "evals/tidy-notes/results.json", "{}\n")
    put(root, "EVALUATION.md", "# Evaluation\n")
    [es] = discover(root, root).eval_sets()
    with staged_skill(es, tmp_path) as installed:
        assert installed.name == "tidy-notes" and installed.parent.name == "skills"
        assert [p.name for p in installed.parent.iterdir()] == ["tidy-notes"]  # alone
        files = sorted(p.relative_to(installed).as_posix() for p in installed.rglob("*"))
        assert "SKILL.md" in files and "evals/files/notes.txt" in files
        assert not [f for f in files if f.startswith((".", "EVALUATION")) or "results" in f]
    assert not installed.exists()
    plain = discover(symlinked_project_skills(tmp_path / "plain"), tmp_path).eval_sets()[0]
    with staged_skill(plain, tmp_path) as as_is:
        assert as_is == plain.skill_dir


def test_a_forced_layout_on_a_standalone_skill_says_what_it_is(tmp_path: Path) -> None:
    root = standalone_skill(tmp_path / "shape")
    with pytest.raises(SpecError) as caught:
        discover(root, root, "single")
    assert "it is a standalone skill (SKILL.md at the top, no manifest)" in caught.value.message


def test_marketplace_entry_skills_add_and_a_strict_false_conflict_is_an_error(
    tmp_path: Path,
) -> None:
    root = tmp_path / "shape"
    marketplace(
        root,
        [
            {
                "name": "conflict",
                "source": "./plugins/conflict",
                "strict": False,
                "skills": ["./extra/c2"],
            },
            {"name": "adds", "source": "./plugins/adds", "skills": ["./extra/a2"]},
        ],
    )
    for name, first, second in (("conflict", "c1", "c2"), ("adds", "a1", "a2")):
        skill(root, f"plugins/{name}/skills/{first}")
        skill(root, f"plugins/{name}/extra/{second}")
        put(root, f"plugins/{name}/.claude-plugin/plugin.json", {"name": name})
    repo = discover(root, root)
    assert [(s.plugin, s.name) for s in repo.skills()] == [("adds", "a1"), ("adds", "a2")]
    [error] = findings(repo)
    assert error.startswith(".claude-plugin/marketplace.json: plugin 'conflict' (plugins[0]): ")
    assert "Claude Code loads none of this plugin's skills (conflicting manifests)" in error


def test_the_listing_check_installs_linked_and_root_skills_themselves(tmp_path: Path) -> None:
    from evolve_action.checks import install_sets

    repo = discover(linked_project_skills(tmp_path / "linked"), tmp_path)
    [one] = install_sets(repo)
    assert [m.skill for m in one.members] == ["plan", "ship"]
    root = standalone_skill(tmp_path / "checkout")
    skill(tmp_path, "sibling")
    [solo] = install_sets(discover(root, root))
    assert [(m.skill, m.dir) for m in solo.members] == [("tidy-notes", root)]
