"""Configuration: discovery, keys and types, `EVOLVE_*`, precedence, flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evolve_action.config import (
    KEYS,
    Config,
    env_name,
    find_config,
    load_config,
    resolve_repository,
    with_flags,
)
from evolve_action.errors import ConfigError, UsageError


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path, {})
    assert config.source_path is None
    assert config == Config()
    assert config.checks.plugin_manifests == ("claude", "codex")
    assert config.checks.description_pattern == "Use (when|after|before)"
    assert (config.checks.max_skill_lines, config.checks.ideal_skill_lines) == (500, 200)
    assert config.checks.license is None
    assert config.checks.signals and config.checks.marketplace
    assert config.max_turns == 20 and config.baseline
    assert config.judge_model == "anthropic/claude-sonnet-5"
    assert config.report.thresholds.evals_min_pass_rate == 0.66
    assert config.sandbox.enabled and config.sandbox.protected_roots is None


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".evolve.yaml", "checks:\n  license: MIT\n  max_skill_lines: 300\nmodels: [anthropic]\n"),
        (".evolve.yml", "checks: {license: MIT, max_skill_lines: 300}\nmodels:\n  - anthropic\n"),
        (
            ".evolve.json",
            '{"checks": {"license": "MIT", "max_skill_lines": 300}, "models": ["anthropic"]}',
        ),
        (
            ".evolve.jsonc",
            '// c\n{"checks": {"license": "MIT", "max_skill_lines": 300,}, "models": ["anthropic"],}',
        ),
    ],
)
def test_each_format(tmp_path: Path, name: str, text: str) -> None:
    write(tmp_path, name, text)
    config = load_config(tmp_path, {})
    assert config.source_path == tmp_path / name
    assert config.checks.license == "MIT"
    assert config.checks.max_skill_lines == 300
    assert config.models == ("anthropic",)
    assert config.is_set("checks.license") and not config.is_set("checks.signals")


def test_two_config_files_are_ambiguous(tmp_path: Path) -> None:
    write(tmp_path, ".evolve.yaml", "layout: auto\n")
    write(tmp_path, ".evolve.json", "{}")
    with pytest.raises(ConfigError) as err:
        find_config(tmp_path)
    msg = err.value.message
    assert msg.startswith("ambiguous config: found ")
    assert f"{tmp_path}/.evolve.yaml, {tmp_path}/.evolve.json" in msg
    assert msg.endswith("; keep exactly one")


def test_directory_named_like_config_is_ignored(tmp_path: Path) -> None:
    (tmp_path / ".evolve.yaml").mkdir()
    assert find_config(tmp_path) is None


def test_yaml_is_1_2_core_schema(tmp_path: Path) -> None:
    write(tmp_path, ".evolve.yaml", "checks:\n  license: no\n")  # `no` is a string in YAML 1.2
    assert load_config(tmp_path, {}).checks.license == "no"


def test_keys_are_case_insensitive_and_schema_key_ignored(tmp_path: Path) -> None:
    write(
        tmp_path,
        ".evolve.json",
        '{"$schema": "x", "Checks": {"LICENSE": "MIT"}, "Layout": "multi"}',
    )
    config = load_config(tmp_path, {})
    assert (config.checks.license, config.layout, config.warnings) == ("MIT", "multi", ())


def test_unknown_keys_warn_with_line(tmp_path: Path) -> None:
    write(tmp_path, ".evolve.yaml", "checks:\n  licence: MIT\ntimeout: 10\n")
    config = load_config(tmp_path, {})
    assert config.warnings == (
        '.evolve.yaml:2: unknown config key "checks.licence" (ignored)',
        '.evolve.yaml:3: unknown config key "timeout" (ignored)',
    )
    assert config.checks.license is None


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        (
            "checks:\n  max_skill_lines: many\n",
            'checks.max_skill_lines: expected an integer, got the string "many"',
            2,
        ),
        (
            "checks:\n  signals: yes\n",
            'checks.signals: expected true or false, got the string "yes"',
            2,
        ),
        ("baseline: 1\n", "baseline: expected true or false, got the number 1", 1),
        ("max_turns: 2.5\n", "max_turns: expected an integer, got the number 2.5", 1),
        ("max_turns: true\n", "max_turns: expected an integer, got the boolean true", 1),
        (
            "models: anthropic\n",
            'models: expected a list of strings, got the string "anthropic"',
            1,
        ),
        ("models: [1, 2]\n", "models: expected a list of strings, got a list", 1),
        ("checks: strict\n", 'checks: expected a mapping of keys, got the string "strict"', 1),
        (
            "report:\n  thresholds:\n    evals_min_pass_rate: high\n",
            "report.thresholds.evals_min_pass_rate: expected a number",
            3,
        ),
        ("report:\n  thresholds:\n    evals_min_pass_rate: 1.5\n", "must be between 0 and 1", 3),
        ("layout: flat\n", 'layout: unknown layout "flat"', 1),
        ("results_format: toml\n", 'results_format: unknown results format "toml"', 1),
        ("stale_results: maybe\n", 'unknown stale_results "maybe"', 1),
        ("harnesses: [claude, vim]\n", 'config harnesses: unknown harness "vim"', 1),
        (
            "checks:\n  plugin_manifests: [claude, npm]\n",
            'checks.plugin_manifests: unknown manifest "npm" (want one of claude, codex)',
            2,
        ),
        (
            "checks:\n  description_pattern: '(?=Use)'\n",
            "checks.description_pattern: invalid pattern",
            2,
        ),
        ("providers: [a]\n", "providers: expected a mapping", 1),
        ("- a\n- b\n", "config must be a mapping", 1),
    ],
    ids=lambda v: v if isinstance(v, str) and "\n" not in v and len(v) < 30 else None,
)
def test_wrong_types_name_key_file_and_line(
    tmp_path: Path, text: str, message: str, line: int
) -> None:
    write(tmp_path, ".evolve.yaml", text)
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {})
    assert message in err.value.message
    assert err.value.path == tmp_path / ".evolve.yaml"
    assert err.value.line == line


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        (".evolve.yaml", "checks:\n  license: [MIT\n", 3),
        (".evolve.json", '{\n  "checks": {\n    "license": "MIT",\n  }\n}', 4),
        (".evolve.jsonc", '{\n  "checks": {\n    "license": \'MIT\'\n  }\n}', 3),
    ],
)
def test_syntax_errors_name_file_and_line(tmp_path: Path, name: str, text: str, line: int) -> None:
    write(tmp_path, name, text)
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {})
    assert err.value.message.startswith("parse config: ")
    assert err.value.path == tmp_path / name
    assert err.value.line == line


def test_empty_file_is_no_settings(tmp_path: Path) -> None:
    write(tmp_path, ".evolve.yaml", "# nothing yet\n")
    config = load_config(tmp_path, {})
    assert config.source_path == tmp_path / ".evolve.yaml"
    assert config.settings == {}


def test_null_means_unset(tmp_path: Path) -> None:
    write(tmp_path, ".evolve.yaml", "max_turns:\nchecks:\n")
    assert load_config(tmp_path, {}).max_turns == 20


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("checks.max_skill_lines", "EVOLVE_CHECKS_MAX_SKILL_LINES"),
        ("report.thresholds.evals_min_pass_rate", "EVOLVE_REPORT_THRESHOLDS_EVALS_MIN_PASS_RATE"),
        ("layout", "EVOLVE_LAYOUT"),
    ],
)
def test_env_name(key: str, name: str) -> None:
    assert env_name(key) == name


@pytest.mark.parametrize(
    ("env", "attr", "want"),
    [
        ({"EVOLVE_CHECKS_LICENSE": "Apache-2.0"}, ("checks", "license"), "Apache-2.0"),
        ({"EVOLVE_CHECKS_MAX_SKILL_LINES": " 42 "}, ("checks", "max_skill_lines"), 42),
        ({"EVOLVE_CHECKS_SIGNALS": "false"}, ("checks", "signals"), False),
        ({"EVOLVE_CHECKS_SIGNALS": "T"}, ("checks", "signals"), True),
        ({"EVOLVE_MODELS": "anthropic  openai"}, ("models",), ("anthropic", "openai")),
        ({"EVOLVE_CHECKS_PLUGIN_MANIFESTS": "claude"}, ("checks", "plugin_manifests"), ("claude",)),
        (
            {"EVOLVE_REPORT_THRESHOLDS_TRIGGERS_MIN_PASS_RATE": "0.8"},
            ("report", "thresholds", "triggers_min_pass_rate"),
            0.8,
        ),
        ({"EVOLVE_RESULTS_FORMAT": "yml"}, ("results_format",), "yaml"),
        ({"EVOLVE_CHECKS_LICENSE": ""}, ("checks", "license"), "MIT"),
    ],
)
def test_env_overrides_file(
    tmp_path: Path, env: dict[str, str], attr: tuple[str, ...], want: Any
) -> None:
    write(tmp_path, ".evolve.yaml", "checks:\n  license: MIT\n  max_skill_lines: 10\n")
    value: Any = load_config(tmp_path, env)
    for part in attr:
        value = getattr(value, part)
    assert value == want


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"EVOLVE_CHECKS_MAX_SKILL_LINES": "lots"},
            'EVOLVE_CHECKS_MAX_SKILL_LINES: expected an integer, got "lots"',
        ),
        ({"EVOLVE_BASELINE": "yes"}, 'EVOLVE_BASELINE: expected true or false, got "yes"'),
        ({"EVOLVE_LAYOUT": "flat"}, 'EVOLVE_LAYOUT: unknown layout "flat"'),
        ({"EVOLVE_REPORT_THRESHOLDS_EVALS_MIN_PASS_RATE": "nan"}, "expected a number"),
    ],
)
def test_bad_env_values(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, env)
    assert message in err.value.message


def test_flags_override_env_and_file(tmp_path: Path) -> None:
    write(tmp_path, ".evolve.yaml", "checks:\n  license: MIT\n  signals: true\n")
    config = load_config(tmp_path, {"EVOLVE_CHECKS_LICENSE": "BSD-3-Clause"})
    assert config.checks.license == "BSD-3-Clause"
    flagged = with_flags(config, {"checks.license": "ISC", "checks.signals": False, "layout": None})
    assert (flagged.checks.license, flagged.checks.signals, flagged.layout) == (
        "ISC",
        False,
        "auto",
    )
    assert flagged.source_path == config.source_path


def test_flag_values_are_validated(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown layout"):
        with_flags(load_config(tmp_path, {}), {"layout": "flat"})


def test_every_key_has_an_env_name() -> None:
    names = {env_name(k) for k in KEYS}
    assert len(names) == len(KEYS)


def test_resolve_repository_reads_root_config(tmp_path: Path) -> None:
    write(tmp_path, ".claude-plugin/plugin.json", '{"name": "p"}')
    write(tmp_path, ".evolve.yaml", "checks:\n  license: MIT\n")
    (tmp_path / "skills/x").mkdir(parents=True)
    repo, config = resolve_repository(None, tmp_path / "skills/x", None, {})
    assert repo.root == tmp_path and repo.layout == "single"
    assert config.checks.license == "MIT"
    repo, config = resolve_repository(Path(tmp_path.name), tmp_path.parent, None, {})
    assert config.source_path == tmp_path / ".evolve.yaml"


def test_resolve_repository_config_layout_is_used(tmp_path: Path) -> None:
    write(tmp_path, ".claude-plugin/marketplace.json", "{}")
    write(tmp_path, "plugins/a/.claude-plugin/plugin.json", "{}")
    write(tmp_path, ".evolve.yaml", "layout: multi\n")
    repo, _ = resolve_repository(tmp_path, tmp_path, None, {})
    assert repo.layout == "multi"
    repo, config = resolve_repository(tmp_path, tmp_path, "marketplace", {})
    assert repo.layout == "marketplace" and config.layout == "marketplace"
    with pytest.raises(UsageError, match="unknown layout"):
        resolve_repository(tmp_path, tmp_path, "flat", {})


def test_pr_base_and_max_runs(tmp_path: Path) -> None:
    config = load_config(tmp_path, {})
    assert (config.pr.base, config.pr.max_runs) == ("auto", 18)
    write(tmp_path, ".evolve.yaml", "pr:\n  base: rerun\n  max_runs: 12\n")
    config = load_config(tmp_path, {})
    assert (config.pr.base, config.pr.max_runs) == ("rerun", 12)
    assert load_config(tmp_path, {"EVOLVE_PR_BASE": "stored"}).pr.base == "stored"
    write(tmp_path, ".evolve.yaml", "pr:\n  base: sometimes\n")
    with pytest.raises(ConfigError, match="stored, rerun or auto"):
        load_config(tmp_path, {})
    write(tmp_path, ".evolve.yaml", "pr:\n  max_runs: 0\n")
    with pytest.raises(ConfigError, match="between 1 and 100"):
        load_config(tmp_path, {})
