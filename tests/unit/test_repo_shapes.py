"""Repository shapes Claude Code users publish (issue 12, items 1–2): what discovery finds.

Marketplaces read the way Claude Code reads them (any `./` source, `./` itself, `skills` lists,
`strict: false`, remote sources as a notice, a marketplace listing the repository itself) and bare
skill repositories (`skills/*/SKILL.md`, `.claude/skills/*/SKILL.md`) as one implicit plugin.
Findings are asserted with `checks.plugin_manifests: [claude]`, so they name only what the shape
itself causes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.repo_shapes import (
    MARKETPLACE,
    bare_skills,
    marketplace,
    put,
    remote_marketplace,
    self_listing,
    skill,
    skills_list_marketplace,
)

from evolve_action.checks import CheckOptions, run_checks
from evolve_action.config import ChecksConfig, Config
from evolve_action.errors import SpecError
from evolve_action.repo import Repository, discover

CLAUDE_ONLY = Config(checks=ChecksConfig(plugin_manifests=("claude",)))


def shape(repo: Repository) -> dict[str, list[str]]:
    """Plugin name → its skills (the way a Claude Code user lists them)."""
    return {p.name: [s.name for s in repo.skills() if s.plugin == p.name] for p in repo.plugins}


def findings(repo: Repository, config: Config = CLAUDE_ONLY) -> list[str]:
    report = run_checks(repo, config, CheckOptions())
    return [f.message for f in report.findings]


def eval_sets(repo: Repository) -> list[tuple[str, str, str]]:
    return [(e.plugin, e.skill, repo.rel(e.skill_dir)) for e in repo.eval_sets()]


def test_skills_lists_on_the_root_with_strict_false(tmp_path: Path) -> None:
    repo = discover(skills_list_marketplace(tmp_path), tmp_path)
    assert (repo.layout, repo.claude_marketplace) == ("marketplace", True)
    assert shape(repo) == {"document-skills": ["xlsx", "docx"], "example-skills": ["art"]}
    assert [p.rel for p in repo.plugins] == [".", "."]
    assert eval_sets(repo) == [
        ("document-skills", "xlsx", "skills/xlsx"),
        ("example-skills", "art", "skills/art"),
    ]
    assert repo.notices == ()
    # no plugin.json is needed (`strict: false`), no Codex marketplace, no "no plugins": clean
    assert findings(repo, Config()) == []


def test_a_skills_entry_may_name_a_directory_of_skills(tmp_path: Path) -> None:
    marketplace(tmp_path, [{"name": "p", "source": "./", "strict": False, "skills": "./lib"}])
    skill(tmp_path, "lib/b-skill")
    skill(tmp_path, "lib/a-skill")
    assert shape(discover(tmp_path, tmp_path)) == {"p": ["a-skill", "b-skill"]}


def test_remote_sources_are_one_notice_and_never_a_failure(tmp_path: Path) -> None:
    repo = discover(remote_marketplace(tmp_path), tmp_path)
    assert shape(repo) == {"alpha": ["one"], "empty": [], "ext": ["two"]}
    assert [p.rel for p in repo.plugins] == [
        "plugins/alpha",
        "plugins/empty",
        "external_plugins/ext",
    ]
    assert repo.notices == (
        "note: 3 marketplace plugins not evaluated here (remote): by-url (url "
        "https://example.com/u.git), by-subdir (git-subdir https://example.com/m.git), "
        "by-github (github someone/thing)",
        "note: plugins with no skills (shown, skipped): empty",
    )
    assert eval_sets(repo) == [
        ("alpha", "one", "plugins/alpha/skills/one"),
        ("ext", "two", "external_plugins/ext/skills/two"),
    ]
    assert findings(repo) == []


def test_an_unresolved_local_source_is_still_a_failure(tmp_path: Path) -> None:
    marketplace(
        tmp_path,
        [
            {"name": "gone", "source": "./tools/gone"},
            {"name": "far", "source": {"source": "github", "repo": "o/far"}},
        ],
    )
    repo = discover(tmp_path, tmp_path)
    assert (repo.claude_marketplace, repo.plugins) == (True, ())
    assert findings(repo) == ["marketplace source './tools/gone' does not resolve"]


@pytest.mark.parametrize("by", ["dot", "github"])
def test_a_marketplace_listing_the_repository_itself_is_that_plugin(
    tmp_path: Path, by: str
) -> None:
    repo = discover(self_listing(tmp_path, by=by), tmp_path)
    assert shape(repo) == {"selfy": ["brainstorm", "plan-work"]}
    assert [p.rel for p in repo.plugins] == ["."]
    assert repo.notices == ()
    assert eval_sets(repo) == [("selfy", "brainstorm", "skills/brainstorm")]
    assert findings(repo) == []  # no "stray .claude-plugin/plugin.json", no "0 plugins"


def test_a_self_listing_marketplace_with_a_codex_twin_is_still_that_plugin(tmp_path: Path) -> None:
    # A repository published for Claude Code and Codex alike: both marketplaces list the root.
    root = self_listing(tmp_path, by="dot")
    put(
        root,
        ".agents/plugins/marketplace.json",
        {"name": "selfy", "plugins": [{"name": "selfy", "source": {"source": "url", "url": "./"}}]},
    )
    repo = discover(root, tmp_path)
    assert (repo.layout, repo.claude_marketplace) == ("marketplace", True)
    assert shape(repo) == {"selfy": ["brainstorm", "plan-work"]}
    assert findings(repo) == []


def test_an_evolve_marketplace_with_a_codex_twin_still_reports_a_bad_source(
    tmp_path: Path,
) -> None:
    marketplace(tmp_path, [{"name": "a", "source": "plugins/a"}])
    put(
        tmp_path,
        ".agents/plugins/marketplace.json",
        {
            "name": "m",
            "plugins": [{"name": "a", "source": {"source": "local", "path": "plugins/a"}}],
        },
    )
    skill(tmp_path, "plugins/a/skills/one")
    repo = discover(tmp_path, tmp_path)
    assert repo.claude_marketplace is False
    assert "marketplace source 'plugins/a' is not ./-prefixed" in findings(repo, Config())


@pytest.mark.parametrize("skills_rel", ["skills", ".claude/skills"])
def test_a_bare_skill_repository_is_one_implicit_plugin(tmp_path: Path, skills_rel: str) -> None:
    root = bare_skills(tmp_path / "my-skills", skills_rel)
    repo = discover(root, tmp_path)
    assert (repo.layout, repo.claude_marketplace) == ("single", False)
    assert shape(repo) == {"my-skills": ["alpha-skill", "beta-skill"]}
    assert repo.notices == (
        f"note: no plugin manifest: the skills under {skills_rel}/ form one implicit plugin "
        "'my-skills' (named after the repository directory)",
    )
    assert eval_sets(repo) == [("my-skills", "alpha-skill", f"{skills_rel}/alpha-skill")]
    # alpha-skill's in-skill evals/evals.json is not read: evolve's evals/alpha-skill/ wins
    assert findings(repo, Config()) == []


def test_a_bare_repository_is_found_walking_up_from_a_skill(tmp_path: Path) -> None:
    root = bare_skills(tmp_path / "my-skills")
    repo = discover(None, root / "skills/alpha-skill")
    assert (repo.root, repo.plugins[0].name) == (root, "my-skills")


def test_any_marker_wins_over_bare_skills_walking_up(tmp_path: Path) -> None:
    """A plugin directory with its own skills/ inside a marketplace is not a bare repository."""
    remote_marketplace(tmp_path)
    put(tmp_path, "plugins/alpha/.claude-plugin/plugin.json", "{}")
    repo = discover(None, tmp_path / "plugins/alpha/skills/one")
    assert (repo.root, repo.layout) == (tmp_path / "plugins/alpha", "single")
    nested = tmp_path / "external_plugins/ext"
    (nested / ".claude-plugin/plugin.json").unlink()
    repo = discover(None, nested / "skills/two")
    assert (repo.root, repo.layout) == (tmp_path, "marketplace")


def test_a_forced_layout_never_reads_bare_skills(tmp_path: Path) -> None:
    root = bare_skills(tmp_path / "my-skills")
    with pytest.raises(SpecError) as err:
        discover(root, tmp_path, "single")
    assert err.value.message == (
        f"--layout single: {root} has no .claude-plugin/plugin.json; it has bare skills under "
        "skills/ and no manifest"
    )
    assert err.value.hint == "drop --layout: the skills then form one implicit plugin"


def test_evolve_marketplaces_list_their_plugins(tmp_path: Path) -> None:
    """Every entry `./plugins/<dir>`, or a Codex marketplace beside it: the listed folders under
    plugins/ are the plugins; an unlisted folder is not one (issue 21), and one note names it."""
    put(tmp_path, "plugins/a/.claude-plugin/plugin.json", {"name": "a", "version": "1.0.0"})
    put(tmp_path, "plugins/unlisted/.claude-plugin/plugin.json", {"name": "x"})
    marketplace(tmp_path, [{"name": "a", "source": "./plugins/a"}])
    repo = discover(tmp_path, tmp_path)
    assert (repo.claude_marketplace, [p.name for p in repo.plugins]) == (False, ["a"])
    assert repo.notices == (
        "note: folders under plugins/ that .claude-plugin/marketplace.json does not list are "
        "not plugins (Claude Code never installs them): unlisted",
    )
    marketplace(tmp_path, [{"name": "a", "source": "plugins/a"}])
    put(tmp_path, ".agents/plugins/marketplace.json", {"name": "m", "plugins": []})
    repo = discover(tmp_path, tmp_path)
    assert repo.claude_marketplace is False
    assert "marketplace source 'plugins/a' is not ./-prefixed" in findings(repo)


def test_a_plugin_json_is_optional_as_claude_code_reads_it(tmp_path: Path) -> None:
    # Claude Code's manifest reference: "The manifest is optional"; the entry names the plugin.
    marketplace(tmp_path, [{"name": "tool", "source": "./tools/tool"}])
    skill(tmp_path, "tools/tool/skills/do-it")
    repo = discover(tmp_path, tmp_path)
    assert shape(repo) == {"tool": ["do-it"]}
    assert findings(repo, Config()) == []
    put(tmp_path, "tools/tool/.claude-plugin/plugin.json", "{not json")
    assert findings(repo, Config()) == [
        "tools/tool/.claude-plugin/plugin.json: invalid JSON: Expecting property name enclosed "
        "in double quotes (line 1, column 2)"
    ]
    put(tmp_path, MARKETPLACE, {"name": "m", "owner": {"name": "o"}, "plugins": "x"})
    repo = discover(tmp_path, tmp_path)
    assert (repo.layout, repo.claude_marketplace, repo.plugins) == ("marketplace", False, ())


def test_skill_creator_definitions_inside_a_skill_are_an_eval_set(tmp_path: Path) -> None:
    root = bare_skills(tmp_path / "my-skills")
    put(
        root,
        "skills/beta-skill/evals/evals.json",
        {"evals": [{"id": 1, "prompt": "p", "expectations": ["e"]}]},
    )
    put(
        root,
        "skills/beta-skill/evals/trigger-queries.json",
        [{"query": "q", "should_trigger": True}],
    )
    repo = discover(root, tmp_path)
    by_skill = {es.skill: es for es in repo.eval_sets()}
    beta = by_skill["beta-skill"]
    assert beta.evals_path == root / "skills/beta-skill/evals/evals.json"
    assert beta.triggers_path == root / "skills/beta-skill/evals/trigger-queries.json"
    assert beta.results_dir == root / "evals/beta-skill"  # outside the skill
    # alpha-skill has evolve's own evals/alpha-skill/triggers.json: that set wins
    alpha = by_skill["alpha-skill"]
    assert alpha.triggers_path == root / "evals/alpha-skill/triggers.json"
    assert alpha.evals_path is None
    assert findings(repo, Config()) == []


def test_several_trigger_eval_sets_in_one_skill_read_one_and_a_note_names_the_rest(
    tmp_path: Path,
) -> None:
    """Issue 42: skill-creator authors keep variants side by side; the shortest name is read and
    the note says which, why, and how to have the others' queries evaluated (never an error)."""
    root = bare_skills(tmp_path / "my-skills")
    put(root, "skills/beta-skill/evals/eval_set.json", [{"query": "q", "should_trigger": True}])
    put(root, "skills/beta-skill/evals/triggers-v2.json", [{"query": "q", "should_trigger": True}])
    repo = discover(root, tmp_path)
    (beta,) = [es for es in repo.eval_sets() if es.skill == "beta-skill"]
    assert beta.triggers_path == root / "skills/beta-skill/evals/eval_set.json"
    assert repo.notices[-1] == (
        "note: skills/beta-skill/evals/ holds 2 trigger eval sets for my-skills/beta-skill: "
        "eval_set.json is read (the shortest name, the one the others vary) and triggers-v2.json "
        "is not; to evaluate its queries too, add them to eval_set.json"
    )
    assert findings(repo, Config()) == []
