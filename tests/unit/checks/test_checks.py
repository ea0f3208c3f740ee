"""Tier 0 checks: every check of engine spec §5 with its exact message, order, verdict, signals."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from evolve_action.checks import (
    CheckOptions,
    conciseness_score,
    prose_lines,
    run_checks,
    size_score,
)
from evolve_action.config import Config, load_config, with_flags
from evolve_action.errors import ConfigError
from evolve_action.repo import discover
from evolve_action.specs import Severity


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_md(
    name: str, description: str = "Formats things. Use when formatting.", extra: str = ""
) -> str:
    return (
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n\nDo the work.\n"
    )


def make_repo(
    root: Path, layout: str = "marketplace", plugins: dict[str, list[str]] | None = None
) -> Path:
    """A clean repository of the given layout, opted in to evolve: every check passes on it."""
    plugins = plugins if plugins is not None else {"alpha": ["one"], "beta": ["two"]}
    write(root, ".evolve.yaml", "# evolve's conventions, with their defaults\n")
    if layout == "single":
        write(root, ".claude-plugin/plugin.json", json.dumps({"name": "solo", "version": "1.0.0"}))
        write(root, ".codex-plugin/plugin.json", json.dumps({"name": "solo", "version": "1.0.0"}))
        write(root, "skills/one/SKILL.md", skill_md("one"))
        return root
    for name, skills in plugins.items():
        for kind in ("claude", "codex"):
            write(
                root,
                f"plugins/{name}/.{kind}-plugin/plugin.json",
                json.dumps({"name": name, "version": "1.0.0"}),
            )
        for skill in skills:
            write(root, f"plugins/{name}/skills/{skill}/SKILL.md", skill_md(skill))
    if layout == "marketplace":
        claude = {
            "name": "m",
            "owner": {"name": "o"},
            "plugins": [{"name": n, "source": f"./plugins/{n}"} for n in plugins],
        }
        codex = {
            "name": "m",
            "plugins": [
                {"name": n, "source": {"source": "local", "path": f"./plugins/{n}"}}
                for n in plugins
            ],
        }
        write(root, ".claude-plugin/marketplace.json", json.dumps(claude))
        write(root, ".agents/plugins/marketplace.json", json.dumps(codex))
    return root


def messages(
    root: Path, config: Config | None = None, options: CheckOptions | None = None
) -> list[str]:
    repo = discover(root, root)
    report = run_checks(repo, config or Config(), options or CheckOptions(signals=False))
    return [f.message for f in report.findings]


@pytest.mark.parametrize("layout", ["marketplace", "multi", "single"])
def test_clean_repositories_pass(tmp_path: Path, layout: str) -> None:
    make_repo(tmp_path, layout)
    report = run_checks(discover(tmp_path, tmp_path), Config(), CheckOptions())
    assert report.findings == ()
    assert report.verdict == "passed" and report.failures == 0
    assert report.layout == layout
    assert report.plugins == (1 if layout == "single" else 2)
    assert [s.skill for s in report.signals] == (["one"] if layout == "single" else ["one", "two"])


Mutation = Callable[[Path], None]


def _json(rel: str, value: object) -> Mutation:
    return _text(rel, json.dumps(value))


def _text(rel: str, text: str) -> Mutation:
    def apply(root: Path) -> None:
        write(root, rel, text)

    return apply


def _seq(*steps: Mutation) -> Mutation:
    def apply(root: Path) -> None:
        for step in steps:
            step(root)

    return apply


def _bytes(rel: str, data: bytes) -> Mutation:
    def apply(root: Path) -> None:
        (root / rel).write_bytes(data)

    return apply


def _rm(rel: str) -> Mutation:
    def apply(root: Path) -> None:
        target = root / rel
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()

    return apply


def _mkdir(rel: str) -> Mutation:
    return lambda root: (root / rel).mkdir(parents=True, exist_ok=True)


CLAUDE_MP = ".claude-plugin/marketplace.json"
CODEX_MP = ".agents/plugins/marketplace.json"
A_CLAUDE = "plugins/alpha/.claude-plugin/plugin.json"
A_CODEX = "plugins/alpha/.codex-plugin/plugin.json"
A_SKILL = "plugins/alpha/skills/one/SKILL.md"

MARKETPLACE_CASES: list[tuple[str, Mutation, list[str]]] = [
    (
        "codex-marketplace-missing",
        _rm(CODEX_MP),
        [f"missing {CODEX_MP} (set checks.marketplace: false to opt out)"],
    ),
    (
        "marketplace-not-object",
        _text(CODEX_MP, "[1]"),
        [f"{CODEX_MP}: manifest is not a JSON object"],
    ),
    (
        "marketplace-no-name",
        _json(
            CLAUDE_MP,
            {
                "owner": {"name": "o"},
                "plugins": [
                    {"name": "alpha", "source": "./plugins/alpha"},
                    {"name": "beta", "source": "./plugins/beta"},
                ],
            },
        ),
        [f"{CLAUDE_MP}: missing name or non-empty plugins array"],
    ),
    (
        "marketplace-empty-plugins",
        _json(CLAUDE_MP, {"name": "m", "owner": {"name": "o"}, "plugins": []}),
        [
            f"{CLAUDE_MP}: missing name or non-empty plugins array",
            "marketplaces disagree on plugins: claude=[] codex=[alpha beta]",
        ],
    ),
    (
        "owner-missing",
        _json(
            CLAUDE_MP,
            {
                "name": "m",
                "plugins": [
                    {"name": "alpha", "source": "./plugins/alpha"},
                    {"name": "beta", "source": "./plugins/beta"},
                ],
            },
        ),
        [f"{CLAUDE_MP}: missing owner.name"],
    ),
    (
        "source-not-prefixed-and-unresolved",
        _json(
            CLAUDE_MP,
            {
                "name": "m",
                "owner": {"name": "o"},
                "plugins": [
                    {"name": "alpha", "source": "plugins/alpha"},
                    {"name": "beta", "source": "./plugins/gone"},
                ],
            },
        ),
        [
            "marketplace source 'plugins/alpha' is not ./-prefixed",
            "marketplace source './plugins/gone' does not resolve",
        ],
    ),
    (
        "marketplaces-disagree",
        _json(
            CODEX_MP,
            {"name": "m", "plugins": [{"name": "alpha", "source": {"path": "./plugins/alpha"}}]},
        ),
        ["marketplaces disagree on plugins: claude=[alpha beta] codex=[alpha]"],
    ),
    (
        "stray-root-manifest",
        _json(".claude-plugin/plugin.json", {"name": "x"}),
        ["repo root: stray .claude-plugin/plugin.json in a marketplace repository"],
    ),
    (
        "codex-plugin-manifest-missing",
        _rm(A_CODEX),
        [
            'plugins/alpha: missing .codex-plugin/plugin.json (remove "codex" from checks.plugin_manifests to opt out)'
        ],
    ),
    (
        "plugin-manifest-not-object",
        _text(A_CLAUDE, '"alpha"'),
        [f"{A_CLAUDE}: manifest is not a JSON object"],
    ),
    (
        "plugin-name-mismatch",
        _json(A_CLAUDE, {"name": "Alpha", "version": "1.0.0"}),
        [f"{A_CLAUDE}: name 'Alpha' != directory 'alpha'"],
    ),
    (
        "version-not-semver-and-mismatch",
        _json(A_CODEX, {"name": "alpha", "version": "1.0"}),
        [
            "plugins/alpha: version '1.0' is not strict semver",
            "plugins/alpha: version mismatch (claude=1.0.0 codex=1.0)",
        ],
    ),
    (
        "version-number-and-missing",
        _seq(_json(A_CLAUDE, {"name": "alpha", "version": 1}), _json(A_CODEX, {"name": "alpha"})),
        [
            "plugins/alpha: version '1' is not strict semver",
            "plugins/alpha: version '' is not strict semver",
            "plugins/alpha: version mismatch (claude=1 codex=)",
        ],
    ),
    (
        "hooks-forbidden",
        _mkdir("plugins/alpha/hooks"),
        [
            "plugins/alpha: hooks/ directory is forbidden (incompatible hooks schemas across the required plugin manifests: claude, codex)"
        ],
    ),
    ("no-skills", _rm("plugins/alpha/skills"), ["plugins/alpha: no skills under skills/"]),
    (
        "no-frontmatter",
        _text(A_SKILL, "# one\n\nno frontmatter\n"),
        [f"{A_SKILL}: no YAML frontmatter"],
    ),
    (
        "unterminated-frontmatter",
        _text(A_SKILL, "---\nname: one\n"),
        [f"{A_SKILL}: no YAML frontmatter"],
    ),
    (
        "name-mismatch-and-not-kebab",
        _text(A_SKILL, skill_md("One_Skill")),
        [
            f"{A_SKILL}: name 'One_Skill' != directory 'one'",
            f"{A_SKILL}: name 'One_Skill' not kebab-case",
        ],
    ),
    (
        "name-missing",
        _text(A_SKILL, "---\ndescription: Use when x.\n---\n"),
        [f"{A_SKILL}: name '' != directory 'one'", f"{A_SKILL}: name '' not kebab-case"],
    ),
    (
        "name-too-long",
        _seq(
            _rm("plugins/alpha/skills/one"),
            _text(f"plugins/alpha/skills/{'a' * 65}/SKILL.md", skill_md("a" * 65)),
        ),
        [f"plugins/alpha/skills/{'a' * 65}/SKILL.md: name longer than 64 chars"],
    ),
    (
        "empty-description",
        _text(A_SKILL, "---\nname: one\ndescription: ''\n---\n"),
        [
            f"{A_SKILL}: empty description",
            f"{A_SKILL}: description missing a 'Use when/after/before' trigger phrase (checks.description_pattern)",
        ],
    ),
    (
        "description-too-long",
        _text(A_SKILL, skill_md("one", "Use when testing. " + "x" * 1020)),
        [f"{A_SKILL}: description longer than 1024 chars"],
    ),
    (
        "no-trigger-phrase",
        _text(A_SKILL, skill_md("one", "Formats things nicely.")),
        [
            f"{A_SKILL}: description missing a 'Use when/after/before' trigger phrase (checks.description_pattern)"
        ],
    ),
    (
        "folded-description-is-yaml",
        _text(A_SKILL, "---\nname: one\ndescription: >\n  Formats.\n  Use when folding.\n---\n"),
        [],
    ),
    (
        "license-forbidden",
        _text(A_SKILL, skill_md("one", extra="license: MIT\n")),
        [f"{A_SKILL}: license 'MIT' is forbidden (no checks.license configured)"],
    ),
    (
        "empty-license-still-forbidden",
        _text(A_SKILL, skill_md("one", extra="license:\n")),
        [f"{A_SKILL}: license '' is forbidden (no checks.license configured)"],
    ),
    (
        "too-many-lines",
        _text(A_SKILL, skill_md("one") + "line\n" * 500),
        [f"{A_SKILL}: SKILL.md exceeds 500 lines (508) (checks.max_skill_lines)"],
    ),
    (
        "unreadable-non-utf8",
        _bytes(A_SKILL, b"---\nname: one\ndescription: \xff\n---\n"),
        [f"{A_SKILL}: unreadable (invalid UTF-8: byte 0xff at offset 27, line 3)"],
    ),
    (
        "eval-dir-without-skill",
        _json(
            "plugins/alpha/evals/ghost/triggers.json",
            {"triggers": [{"query": "q", "should_trigger": True}]},
        ),
        ["plugins/alpha: evals/ghost has no matching skill at plugins/alpha/skills/ghost"],
    ),
    (
        "ambiguous-eval-files-stop-eval-checks",
        _seq(
            _text("plugins/alpha/evals/one/triggers.json", "{}"),
            _text("plugins/alpha/evals/one/triggers.yaml", "{}"),
            _text("plugins/beta/evals/ghost/triggers.json", "{}"),
        ),
        [
            "enumerating evals: ambiguous triggers: found {root}/plugins/alpha/evals/one/triggers.json, {root}/plugins/alpha/evals/one/triggers.yaml; keep exactly one"
        ],
    ),
]


@pytest.mark.parametrize(
    ("mutate", "want"), [c[1:] for c in MARKETPLACE_CASES], ids=[c[0] for c in MARKETPLACE_CASES]
)
def test_marketplace_findings(tmp_path: Path, mutate: Mutation, want: list[str]) -> None:
    make_repo(tmp_path)
    mutate(tmp_path)
    assert messages(tmp_path) == [w.replace("{root}", str(tmp_path)) for w in want]


def test_invalid_json_manifests_name_file_and_line(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path, CLAUDE_MP, '{\n  "name": "m",\n  "plugins": [,]\n}')
    write(tmp_path, A_CLAUDE, '{"name": "alpha"')
    report = run_checks(discover(tmp_path, tmp_path), Config(), CheckOptions(signals=False))
    first, second = report.findings[:2]
    assert first.message.startswith(f"{CLAUDE_MP}: invalid JSON: ")
    assert (first.path, first.line) == (CLAUDE_MP, 3)
    assert second.message.startswith(f"{A_CLAUDE}: invalid JSON: ")
    assert second.path == A_CLAUDE
    # One of the required manifests failed: agreement checks are skipped for alpha.
    assert len(report.findings) == 2


def test_no_marketplace_option_and_config(tmp_path: Path) -> None:
    make_repo(tmp_path)
    _rm(CODEX_MP)(tmp_path)
    assert messages(tmp_path, options=CheckOptions(signals=False, marketplace=False)) == []
    config = with_flags(Config(), {"checks.marketplace": False})
    assert messages(tmp_path, config=config) == []


def test_zero_plugins(tmp_path: Path) -> None:
    make_repo(tmp_path, plugins={})
    assert messages(tmp_path) == [
        f"{CLAUDE_MP}: missing name or non-empty plugins array",
        f"{CODEX_MP}: missing name or non-empty plugins array",
        "no plugins under plugins/ (for a root-level plugin repo, use the single layout)",
    ]


def test_claude_only_manifests_allow_hooks_and_skip_codex(tmp_path: Path) -> None:
    make_repo(tmp_path, "multi")
    _rm(A_CODEX)(tmp_path)
    _mkdir("plugins/alpha/hooks")(tmp_path)
    config = with_flags(Config(), {"checks.plugin_manifests": ["claude"]})
    assert messages(tmp_path, config=config) == []


def test_empty_manifest_list_disables_manifest_checks(tmp_path: Path) -> None:
    make_repo(tmp_path, "multi")
    _rm(A_CODEX)(tmp_path)
    _json(A_CLAUDE, {"name": "wrong", "version": "x"})(tmp_path)
    _mkdir("plugins/alpha/hooks")(tmp_path)
    config = with_flags(Config(), {"checks.plugin_manifests": []})
    assert messages(tmp_path, config=config) == []


@pytest.mark.parametrize(
    ("claude", "codex", "want"),
    [
        ({"name": "solo", "version": "1.0.0"}, {"name": "solo", "version": "1.0.0"}, []),
        (
            {"name": "solo", "version": "1.0.0"},
            {"name": "other", "version": "1.0.0"},
            ["repo root: manifests disagree on plugin name: [other solo]"],
        ),
        (
            {"name": "My_Plugin", "version": "1.0.0"},
            {"name": "My_Plugin", "version": "1.0.0"},
            ["repo root: plugin name 'My_Plugin' not kebab-case"],
        ),
        (
            {"name": "solo", "version": "v1.0.0"},
            {"name": "solo", "version": "v1.0.0"},
            [
                "repo root: version 'v1.0.0' is not strict semver",
                "repo root: version 'v1.0.0' is not strict semver",
            ],
        ),
    ],
    ids=["agree", "disagree", "not-kebab", "v-prefix"],
)
def test_single_layout_agreement(
    tmp_path: Path, claude: dict[str, str], codex: dict[str, str], want: list[str]
) -> None:
    make_repo(tmp_path, "single")
    _json(".claude-plugin/plugin.json", claude)(tmp_path)
    _json(".codex-plugin/plugin.json", codex)(tmp_path)
    assert messages(tmp_path) == want


def test_single_layout_labels(tmp_path: Path) -> None:
    make_repo(tmp_path, "single")
    _rm(".codex-plugin/plugin.json")(tmp_path)
    _json("evals/ghost/evals.json", {"evals": [{"id": "a", "prompt": "p", "expectations": ["e"]}]})(
        tmp_path
    )
    assert messages(tmp_path) == [
        'repo root: missing .codex-plugin/plugin.json (remove "codex" from checks.plugin_manifests to opt out)',
        ".: evals/ghost has no matching skill at skills/ghost",
    ]


@pytest.mark.parametrize(
    ("configured", "front", "want"),
    [
        ("MIT", "license: MIT\n", []),
        ("MIT", "", ["license must be MIT (got '')"]),
        ("MIT", "license: Apache-2.0\n", ["license must be MIT (got 'Apache-2.0')"]),
        ("MIT", "license: 'MIT'\n", []),
    ],
)
def test_configured_license(tmp_path: Path, configured: str, front: str, want: list[str]) -> None:
    make_repo(tmp_path, "multi", {"alpha": ["one"]})
    _text(A_SKILL, skill_md("one", extra=front))(tmp_path)
    config = with_flags(Config(), {"checks.license": configured})
    assert messages(tmp_path, config=config) == [f"{A_SKILL}: {w}" for w in want]
    # The --license option overrides the config.
    assert messages(tmp_path, options=CheckOptions(signals=False, license=configured)) == [
        f"{A_SKILL}: {w}" for w in want
    ]


def test_custom_description_pattern_and_cap(tmp_path: Path) -> None:
    make_repo(tmp_path, "multi", {"alpha": ["one"]})
    _text(A_SKILL, skill_md("one", "Triggers on CSV files.") + "x\n" * 3)(tmp_path)
    config = with_flags(
        Config(), {"checks.description_pattern": r"(?i)triggers on", "checks.max_skill_lines": 5}
    )
    assert messages(tmp_path, config=config) == [
        f"{A_SKILL}: SKILL.md exceeds 5 lines (11) (checks.max_skill_lines)"
    ]


def test_invalid_description_pattern_is_fatal(tmp_path: Path) -> None:
    write(tmp_path, ".evolve.yaml", "checks:\n  description_pattern: '(?<=x)'\n")
    with pytest.raises(ConfigError, match=r"checks\.description_pattern: invalid pattern"):
        load_config(tmp_path, {})


def test_emission_order(tmp_path: Path) -> None:
    make_repo(tmp_path)
    _rm(CODEX_MP)(tmp_path)
    _json(".claude-plugin/plugin.json", {})(tmp_path)
    _text(A_SKILL, "no frontmatter")(tmp_path)
    _json("plugins/beta/.codex-plugin/plugin.json", {"name": "beta", "version": "2.0.0"})(tmp_path)
    _json(
        "plugins/beta/evals/ghost/evals.json",
        {"evals": [{"id": "a", "prompt": "p", "expectations": ["e"]}]},
    )(tmp_path)
    assert messages(tmp_path) == [
        f"missing {CODEX_MP} (set checks.marketplace: false to opt out)",
        "repo root: stray .claude-plugin/plugin.json in a marketplace repository",
        f"{A_SKILL}: no YAML frontmatter",
        "plugins/beta: version mismatch (claude=1.0.0 codex=2.0.0)",
        "plugins/beta: evals/ghost has no matching skill at plugins/beta/skills/ghost",
    ]


def test_findings_carry_paths_lines_and_check_ids(tmp_path: Path) -> None:
    make_repo(tmp_path, "multi", {"alpha": ["one"]})
    _text(A_SKILL, "---\nname: two\ndescription: nope\n---\n")(tmp_path)
    report = run_checks(discover(tmp_path, tmp_path), Config(), CheckOptions(signals=False))
    assert [(f.path, f.line, f.check, f.severity) for f in report.findings] == [
        (A_SKILL, 2, "skill.name", Severity.ERROR),
        (A_SKILL, 3, "skill.description", Severity.ERROR),
    ]
    assert report.verdict == "failed" and report.failures == 2


def test_eval_specs_are_validated(tmp_path: Path) -> None:
    make_repo(tmp_path, "multi", {"alpha": ["one"]})
    write(
        tmp_path,
        "plugins/alpha/evals/one/triggers.json",
        json.dumps({"triggers": [{"query": "q", "should_trigger": True}, {"query": "q"}]}),
    )
    write(
        tmp_path,
        "plugins/alpha/evals/one/evals.yaml",
        "evals:\n  - id: a\n    prompt: p\n    assertions: [{type: regex, pattern: '(?=x)'}]\n",
    )
    found = messages(tmp_path)
    assert len(found) == 2
    assert found[0].startswith("plugins/alpha/evals/one/triggers.json")
    assert 'duplicate query "q"' in found[0]
    assert found[1].startswith("plugins/alpha/evals/one/evals.yaml")
    assert "invalid pattern" in found[1]


def test_signals_can_be_disabled(tmp_path: Path) -> None:
    make_repo(tmp_path, "multi")
    repo = discover(tmp_path, tmp_path)
    assert run_checks(repo, Config(), CheckOptions(signals=False)).signals == ()
    assert run_checks(repo, with_flags(Config(), {"checks.signals": False})).signals == ()
    assert len(run_checks(repo, Config()).signals) == 2


@pytest.mark.parametrize(
    ("lines", "ideal", "cap", "want"),
    [
        (10, 200, 500, 100.0),
        (200, 200, 500, 100.0),
        (350, 200, 500, 75.0),
        (500, 200, 500, 0.0),
        (900, 200, 500, 0.0),
        (201, 200, 200, 0.0),
    ],
)
def test_size_score(lines: int, ideal: int, cap: int, want: float) -> None:
    assert size_score(lines, ideal, cap) == pytest.approx(want)


def test_prose_lines_skip_frontmatter_code_and_markers() -> None:
    text = "---\nname: x\n---\n# Title\n\n- item one\n```sh\ncode here\n```\n> quote\n1. step\n"
    assert prose_lines(text) == ["Title", "", "item one", "quote", "step"]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Short sentence here. Another one.", 100.0),
        (" ".join(["word"] * 35) + ".", 200 / 3),
        ("This might perhaps work. " * 2, pytest.approx(100 * (2 / 3))),
        ("\n".join(["the same long line!"] * 4), pytest.approx((100 + 100 + 0) / 3)),
    ],
    ids=["plain", "long-sentence", "hedges", "duplicates"],
)
def test_conciseness(text: str, want: float) -> None:
    assert conciseness_score(text) == want


def test_a_symlink_where_we_write_output_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, "marketplace")
    write(root, ".github/workflows/x.yml", "on: push\n")
    write(root, "plugins/alpha/evals/one/triggers.json", '[{"query": "q", "should_trigger": true}]')
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "EVALUATION.md").symlink_to(".github/workflows/x.yml")
    (root / "plugins/alpha/EVALUATION.yaml").symlink_to("../../README.md")
    (root / "plugins/alpha/evals/one/results.yaml.tmp").symlink_to("triggers.json")
    (root / ".evolve-action").symlink_to(outside, target_is_directory=True)
    repo = discover(root, root)
    found = [
        (f.path, f.severity)
        for f in run_checks(repo, Config(), CheckOptions(signals=False)).findings
        if f.check == "output.symlink"
    ]
    assert found == [
        (".evolve-action", Severity.ERROR),
        ("EVALUATION.md", Severity.ERROR),
        ("plugins/alpha/EVALUATION.yaml", Severity.ERROR),
        ("plugins/alpha/evals/one/results.yaml.tmp", Severity.ERROR),
    ]
    assert any(
        m.startswith("EVALUATION.md: symlink where evolve-action writes its output")
        for m in messages(root)
    )
