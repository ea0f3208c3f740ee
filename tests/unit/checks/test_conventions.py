"""evolve's conventions by opt-in, and SKILL.md frontmatter read as YAML (issue 12, items 3–4).

A repository written for Claude Code alone (hooks/, a license, no Codex manifest, no "Use when")
is checked by Claude Code's and the Agent Skills rules; the same repository with `.evolve.yaml`
gets evolve's findings (a `.codex-plugin/` or `.agents/plugins/` alone does not opt in). Descriptions are YAML: block
scalars, quoted multi-line strings and comments mean what they say, and a frontmatter that is not
YAML is one finding naming the file and line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.repo_shapes import (
    LONG_DESCRIPTION_RUNES,
    MARKETPLACE,
    claude_code_plugin,
    long_description,
    marketplace,
    put,
    skill,
    yaml_descriptions,
)

from evolve_action.checks import CheckOptions, CheckReport, run_checks
from evolve_action.config import Config, load_config, with_flags
from evolve_action.repo import discover, parse_frontmatter


def check(root: Path, config: Config | None = None, license_: str | None = None) -> CheckReport:
    repo = discover(root, root)
    used = config if config is not None else load_config(root, {})
    return run_checks(repo, used, CheckOptions(signals=False, license=license_))


def messages(report: CheckReport) -> list[str]:
    return [f.message for f in report.findings]


NO_PHRASE = (
    "description missing a 'Use when/after/before' trigger phrase (checks.description_pattern)"
)
TEXT = "skills/pdf-text/SKILL.md"
TABLES = "skills/pdf-tables/SKILL.md"


def test_a_claude_code_plugin_has_none_of_evolves_findings(tmp_path: Path) -> None:
    report = check(claude_code_plugin(tmp_path))
    assert report.conventions == "claude-code"
    assert messages(report) == []


EVOLVE_SKILL_FINDINGS = [
    f"{TABLES}: {NO_PHRASE}",
    f"{TEXT}: {NO_PHRASE}",
    f"{TEXT}: license 'Apache-2.0' is forbidden (no checks.license configured)",
]


def test_an_opted_in_plugin_gets_evolves_findings(tmp_path: Path) -> None:
    root = claude_code_plugin(tmp_path, ".evolve.yaml")
    assert discover(root, root).evolve_marker == ".evolve.yaml"
    report = check(root)
    assert report.conventions == "evolve"
    assert messages(report) == [
        'repo root: missing .codex-plugin/plugin.json (remove "codex" from '
        "checks.plugin_manifests to opt out)",
        "repo root: hooks/ directory is forbidden (incompatible hooks schemas across the "
        "required plugin manifests: claude, codex)",
        *EVOLVE_SKILL_FINDINGS,
    ]


@pytest.mark.parametrize("marker", [".codex-plugin", ".agents/plugins"])
def test_a_codex_manifest_is_not_an_opt_in(tmp_path: Path, marker: str) -> None:
    """Issue 21: a repository published for Codex too keeps Claude Code's rules."""
    root = claude_code_plugin(tmp_path, marker)
    assert discover(root, root).evolve_marker is None
    report = check(root)
    assert (report.conventions, messages(report)) == ("claude-code", [])


def test_a_config_file_in_use_opts_in(tmp_path: Path) -> None:
    root = claude_code_plugin(tmp_path / "repo")
    put(tmp_path, "elsewhere/.evolve.yaml", "checks:\n  license: Apache-2.0\n")
    config = load_config(tmp_path / "elsewhere", {})
    report = check(root, config)
    assert report.conventions == "evolve"
    assert f"{TABLES}: license must be Apache-2.0 (got '')" in messages(report)


def test_license_any_allows_every_license_or_none(tmp_path: Path) -> None:
    root = claude_code_plugin(tmp_path, ".evolve.yaml")
    put(root, ".evolve.yaml", "checks:\n  license: any\n")
    assert not [m for m in messages(check(root)) if "license" in m]
    assert not [m for m in messages(check(root, license_="any")) if "license" in m]


def test_explicit_settings_apply_without_opting_in(tmp_path: Path) -> None:
    """A key set by the environment or a flag is the user's rule, conventions or not."""
    root = claude_code_plugin(tmp_path)
    assert messages(check(root, Config(), license_="MIT")) == [
        f"{TABLES}: license must be MIT (got '')",
        f"{TEXT}: license must be MIT (got 'Apache-2.0')",
    ]
    config = load_config(root, {"EVOLVE_CHECKS_DESCRIPTION_PATTERN": "Use when"})
    assert messages(check(root, config)) == [f"{TABLES}: {NO_PHRASE}", f"{TEXT}: {NO_PHRASE}"]
    both = with_flags(Config(), {"checks.plugin_manifests": ["claude", "codex"]})
    assert messages(check(root, both))[:2] == [
        'repo root: missing .codex-plugin/plugin.json (remove "codex" from '
        "checks.plugin_manifests to opt out)",
        "repo root: hooks/ directory is forbidden (incompatible hooks schemas across the "
        "required plugin manifests: claude, codex)",
    ]


def plugins_marketplace(root: Path) -> Path:
    """A marketplace of `./plugins/<dir>` entries written for Claude Code alone."""
    marketplace(root, [{"name": "alpha", "source": "./plugins/alpha"}])
    put(root, "plugins/alpha/.claude-plugin/plugin.json", {"name": "alpha"})
    put(root, "plugins/alpha/hooks/hooks.json", {"hooks": {}})
    skill(root, "plugins/alpha/skills/one")
    put(root, ".claude-plugin/plugin.json", {"name": "root-tools"})
    return root


def test_a_claude_code_marketplace_needs_no_codex_twin(tmp_path: Path) -> None:
    root = plugins_marketplace(tmp_path)
    assert messages(check(root)) == []
    put(root, "plugins/alpha/.claude-plugin/plugin.json", {"description": "no name"})
    assert messages(check(root)) == [
        "plugins/alpha/.claude-plugin/plugin.json: plugin `name`: Claude Code refuses to load "
        "this plugin (Validation errors: name: Invalid input: expected string, received "
        'undefined), so none of its skills load — set it to a kebab-case name, such as "alpha"'
    ]


def test_a_plugin_manifest_is_optional_for_claude_code_only(tmp_path: Path) -> None:
    # Claude Code loads a plugin without plugin.json and names it after its directory.
    root = plugins_marketplace(tmp_path)
    (root / "plugins/alpha/.claude-plugin/plugin.json").unlink()
    assert messages(check(root)) == []
    put(root, ".evolve.yaml", "{}\n")
    assert (
        'plugins/alpha: missing .claude-plugin/plugin.json (remove "claude" from '
        "checks.plugin_manifests to opt out)"
    ) in messages(check(root))


def test_an_opted_in_marketplace_keeps_evolves_rules(tmp_path: Path) -> None:
    root = plugins_marketplace(tmp_path)
    put(root, ".agents/plugins/marketplace.json", {"name": "m", "plugins": []})
    assert messages(check(root)) == []  # a Codex twin alone is not an opt-in
    put(root, ".evolve.yaml", "# evolve's conventions\n")
    assert messages(check(root)) == [
        ".agents/plugins/marketplace.json: missing name or non-empty plugins array",
        "marketplaces disagree on plugins: claude=[alpha] codex=[]",
        "repo root: stray .claude-plugin/plugin.json in a marketplace repository",
        'plugins/alpha: missing .codex-plugin/plugin.json (remove "codex" from '
        "checks.plugin_manifests to opt out)",
        "plugins/alpha: hooks/ directory is forbidden (incompatible hooks schemas across the "
        "required plugin manifests: claude, codex)",
    ]


def test_the_agent_skills_rules_hold_everywhere(tmp_path: Path) -> None:
    root = claude_code_plugin(tmp_path)
    put(root, TEXT, "---\nname: PDF_Text\ndescription: ''\n---\n")
    put(root, "skills/big/SKILL.md", "---\nname: big\ndescription: d\n---\n" + "x\n" * 500)
    assert messages(check(root)) == [
        "skills/big/SKILL.md: SKILL.md exceeds 500 lines (504) (checks.max_skill_lines)",
        f"{TEXT}: name 'PDF_Text' != directory 'pdf-text' (and not kebab-case)",  # one problem
        f"{TEXT}: empty description",
    ]
    put(root, "skills/no-front/SKILL.md", "# no frontmatter\n")
    assert "skills/no-front/SKILL.md: no YAML frontmatter" in messages(check(root))


# --- frontmatter as YAML (item 4) ----------------------------------------------------------


def test_yaml_descriptions_read_as_claude_code_reads_them(tmp_path: Path) -> None:
    root = yaml_descriptions(tmp_path / "yaml-skills")
    texts = {
        s.name: parse_frontmatter(s.skill_md.read_text(encoding="utf-8"))
        for s in discover(root, root).skills()
    }
    described = {name: front.fields.get("description") for name, front in texts.items() if front}
    assert described["literal-strip"] == "Formats reports.\nUse when asked for a report."
    assert described["folded"] == "Folds long lines into one. Use when folding.\n"
    assert described["quoted-multiline"] == "Quoted over two lines. Use when quoting."
    assert described["commented"] == "Use when commenting."
    assert described["unquoted-colon"] == "House style: ruff lints. Use when styling."
    assert described["long-block"] == "\n".join(long_description())
    assert len(described["long-block"] or "") == LONG_DESCRIPTION_RUNES
    assert described["broken"] is None


@pytest.mark.parametrize("opt_in", [False, True], ids=["claude-code", "evolve"])
def test_yaml_description_findings(tmp_path: Path, opt_in: bool) -> None:
    root = yaml_descriptions(tmp_path / "yaml-skills")
    if opt_in:
        put(root, ".evolve.yaml", "checks:\n  plugin_manifests: []\n")
    report = check(root)
    assert [(f.check, f.path, f.line) for f in report.findings] == [
        ("skill.frontmatter", "skills/broken/SKILL.md", 5),
        ("skill.description", "skills/long-block/SKILL.md", 3),
    ]
    broken, long_block = report.findings
    assert broken.message.startswith("skills/broken/SKILL.md: frontmatter is not valid YAML (")
    assert broken.message.endswith("); Claude Code loads this skill with no name or description")
    assert long_block.message == "skills/long-block/SKILL.md: description longer than 1024 chars"


def test_frontmatter_findings_carry_the_line_of_the_key(tmp_path: Path) -> None:
    root = claude_code_plugin(tmp_path)
    put(
        root,
        TEXT,
        "---\n# the skill\nname: pdf-txt\nlicense: Apache-2.0\ndescription: >-\n  Extracts.\n---\n",
    )
    report = check(root, license_="MIT")
    assert [(f.path, f.line, f.message.split(": ", 1)[1]) for f in report.findings] == [
        (TABLES, 4, "license must be MIT (got '')"),  # no license key: the closing ---
        (TEXT, 3, "name 'pdf-txt' != directory 'pdf-text'"),
        (TEXT, 4, "license must be MIT (got 'Apache-2.0')"),
    ]


def test_invalid_yaml_is_bounded_and_one_finding(tmp_path: Path) -> None:
    """Alias bombs and deep nesting are the decoder's to refuse; each is one finding."""
    root = claude_code_plugin(tmp_path)
    bomb = "  a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"  {k}: &{k} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, k in zip("abcdef", "bcdefg", strict=True)
    )
    put(root, TEXT, f"---\nname: pdf-text\ndescription: d\nmetadata:\n{bomb}---\n")
    deep = "  deep: " + "[" * 200 + "]" * 200 + "\n"
    put(root, TABLES, f"---\nname: pdf-tables\ndescription: d\nmetadata:\n{deep}---\n")
    found = check(root).findings
    assert [(f.check, f.path, f.line) for f in found] == [
        ("skill.frontmatter", TABLES, 5),
        ("skill.frontmatter", TEXT, 9),  # where the aliases pass the budget
    ]
    assert "nested too deeply" in found[0].message
    assert "excessive aliasing" in found[1].message


def test_unquoted_indicators_are_quoted_as_claude_code_does(tmp_path: Path) -> None:
    """Claude Code's second attempt quotes a top-level value holding `: ` or an indicator."""
    root = claude_code_plugin(tmp_path)
    put(root, TEXT, "---\nname: pdf-text\ndescription: *not an alias* [see: docs]\n---\n")
    front = parse_frontmatter((root / TEXT).read_text(encoding="utf-8"))
    assert front is not None and front.fields["description"] == "*not an alias* [see: docs]"
    assert messages(check(root)) == []


def test_marketplace_json_is_unchanged_by_the_conventions(tmp_path: Path) -> None:
    """The marketplace manifest still has to parse in Claude Code's rules."""
    root = plugins_marketplace(tmp_path)
    put(root, MARKETPLACE, '{"name": "m",')
    assert [f.check for f in check(root).findings] == ["marketplace.json"]
    assert json.loads((root / "plugins/alpha/.claude-plugin/plugin.json").read_text()) == {
        "name": "alpha"
    }


def test_eval_sets_option_validates_only_those_eval_specs(tmp_path: Path) -> None:
    # The action's PR job validates the touched skills' eval files only (it grows with the change).
    root = claude_code_plugin(tmp_path, opt_in=None)
    put(root, "evals/pdf-text/triggers.json", {"triggers": [{"query": "", "should_trigger": True}]})
    put(root, "evals/pdf-tables/triggers.json", {"triggers": "not a list"})
    repo = discover(root, root)
    everything = run_checks(repo, load_config(root, {}), CheckOptions(signals=False))
    assert {f.path for f in everything.findings} == {
        "evals/pdf-text/triggers.json",
        "evals/pdf-tables/triggers.json",
    }
    only = CheckOptions(signals=False, eval_sets=frozenset({(repo.plugins[0].name, "pdf-text")}))
    assert [f.path for f in run_checks(repo, load_config(root, {}), only).findings] == [
        "evals/pdf-text/triggers.json"
    ]


def test_a_long_skill_md_is_a_warning_unless_opted_in(tmp_path: Path) -> None:
    """The Agent Skills spec recommends under 500 lines; Claude Code loads longer files."""
    root = claude_code_plugin(tmp_path)
    put(root, "skills/big/SKILL.md", "---\nname: big\ndescription: d\n---\n" + "x\n" * 500)
    (finding,) = [f for f in check(root).findings if f.check == "skill.size"]
    assert (finding.severity, check(root).failures) == ("warning", 0)
    put(root, ".evolve.yaml", "{}\n")
    (finding,) = [f for f in check(root).findings if f.check == "skill.size"]
    assert finding.severity == "error"
