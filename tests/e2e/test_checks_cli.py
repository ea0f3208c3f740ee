"""`evolve-action run checks` end to end: the example marketplace, and the malformed-input suite.

Every malformed case starts from a copy of `examples/`, breaks one thing, runs `cli.main` and
asserts: the exit code (1 for findings under `--strict`, 2 for unusable input), that the message
names the file (and the line where the format allows), and that there is never a traceback (3).
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.conftest import EXAMPLES

from evolve_action.cli import main

RT = "plugins/release-tools"
PT = "plugins/project-tools"
CHANGELOG_EVALS = f"{RT}/evals/changelog/evals.json"
CHANGELOG_TRIGGERS = f"{RT}/evals/changelog/triggers.json"
COMMIT_TRIGGERS = f"{RT}/evals/commit-message/triggers.yaml"
COMMIT_EVALS = f"{RT}/evals/commit-message/evals.yaml"
CSV_EVALS = f"{PT}/evals/csv-report/evals.jsonc"
CSV_TRIGGERS = f"{PT}/evals/csv-report/triggers.jsonc"
LICENSE_EVALS = f"{PT}/evals/license-header/evals.json"
CHANGELOG_SKILL = f"{RT}/skills/changelog/SKILL.md"


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run(
    root: Path, *flags: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    argv = ["run", "checks", *flags]
    if "--root" not in flags and cwd is None:
        argv += ["--root", str(root)]
    code = main(argv, environ=env or {}, stdout=out, stderr=err, cwd=cwd or root.parent)
    return Outcome(code, out.getvalue(), err.getvalue())


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root)
    return root


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def put(root: Path, rel: str, content: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


# --- the examples -------------------------------------------------------------------------


def test_examples_pass_strict_with_zero_findings(repo: Path) -> None:
    result = run(repo, "--strict")
    assert result.code == 0, result.text
    assert result.err == ""
    assert result.out.startswith("checks: all checks passed (marketplace layout, 2 plugins)\n")
    assert "skill signals (advisory" in result.out
    for skill in ("changelog", "commit-message", "csv-report", "license-header"):
        assert f"\n{skill} " in result.out


def test_examples_json(repo: Path) -> None:
    result = run(repo, "--json", "--strict")
    assert result.code == 0
    doc = json.loads(result.out)
    assert doc["verdict"] == "passed"
    assert doc["counts"] == {"findings": 0, "errors": 0, "warnings": 0}
    assert doc["layout"] == "marketplace" and doc["plugins"] == 2
    assert len(doc["signals"]) == 4


def test_examples_from_a_subdirectory_use_the_root_config(repo: Path) -> None:
    put(
        repo,
        "plugins/release-tools/skills/changelog/SKILL.md",
        (repo / CHANGELOG_SKILL).read_text(),
    )
    result = run(repo, "--strict", "--no-signals", cwd=repo / "plugins")
    assert result.code == 0, result.text  # license: MIT comes from examples/.evolve.yaml


# --- malformed input ----------------------------------------------------------------------

Setup = Callable[[Path], None]


@dataclass(frozen=True)
class Case:
    id: str
    setup: Setup
    code: int
    expect: tuple[str, ...]
    """Substrings the output must contain (file, line, what is wrong)."""


def _big_file(root: Path) -> None:
    path = root / LICENSE_EVALS
    with path.open("wb") as handle:
        handle.write(b'{"evals": [], "padding": "')
        chunk = b"x" * (1024 * 1024)
        for _ in range(50):
            handle.write(chunk)
        handle.write(b'"}\n')


CASES: list[Case] = [
    Case(
        "invalid-yaml",
        lambda r: put(r, COMMIT_TRIGGERS, "triggers:\n  - query: a\n   should_trigger: true\n"),
        1,
        (COMMIT_TRIGGERS, "line 3"),
    ),
    Case(
        "invalid-json",
        lambda r: edit(r, CHANGELOG_EVALS, '"prompt": "Add a 1.3.0', '"prompt" "Add a 1.3.0'),
        1,
        (CHANGELOG_EVALS, "line 7"),
    ),
    Case(
        "invalid-jsonc-single-quotes",
        lambda r: edit(r, CSV_EVALS, '"name": "Totals per region"', "'name': 'Totals per region'"),
        1,
        (CSV_EVALS, "line 7"),
    ),
    Case(
        "json-comment-in-json-file",
        lambda r: put(r, CHANGELOG_TRIGGERS, '// no comments in .json\n{"triggers": []}\n'),
        1,
        (CHANGELOG_TRIGGERS, "line 1"),
    ),
    Case(
        "two-files-one-basename",
        lambda r: put(r, f"{RT}/evals/commit-message/triggers.json", '{"triggers": []}'),
        1,
        (
            "enumerating evals: ambiguous triggers: found",
            "commit-message/triggers.json",
            "commit-message/triggers.yaml",
        ),
    ),
    Case(
        "unknown-assertion-type",
        lambda r: edit(
            r,
            LICENSE_EVALS,
            '"type": "tool_call"',
            '"type": "contains"',
        ),
        1,
        (LICENSE_EVALS, "contains"),
    ),
    Case(
        "missing-prompt",
        lambda r: put(
            r,
            CHANGELOG_EVALS,
            json.dumps({"evals": [{"id": "a", "expectations": ["x"]}]}, indent=2),
        ),
        1,
        (CHANGELOG_EVALS, "prompt"),
    ),
    Case(
        "missing-evals-key",
        lambda r: put(r, CHANGELOG_EVALS, json.dumps({"skill_name": "changelog"})),
        1,
        (CHANGELOG_EVALS, "evals"),
    ),
    Case(
        "missing-query",
        lambda r: put(r, CHANGELOG_TRIGGERS, json.dumps({"triggers": [{"should_trigger": True}]})),
        1,
        (CHANGELOG_TRIGGERS, "query"),
    ),
    Case(
        "re2-rejects-lookahead",
        lambda r: edit(r, CSV_EVALS, '"pattern": "1,845\\\\.50"', '"pattern": "(?=1,845)"'),
        1,
        (CSV_EVALS, "invalid pattern"),
    ),
    Case(
        "re2-rejects-backreference",
        lambda r: edit(r, COMMIT_EVALS, "pattern: '^BREAKING CHANGE: '", "pattern: '(a)\\1'"),
        1,
        (COMMIT_EVALS, "invalid pattern"),
    ),
    Case(
        "files-escape-eval-dir",
        lambda r: edit(r, CHANGELOG_EVALS, '"files/commits.txt"', '"../../../../LICENSE"'),
        1,
        (CHANGELOG_EVALS, "escapes the evals directory"),
    ),
    Case(
        "fixture-not-found",
        lambda r: edit(r, CHANGELOG_EVALS, '"files/commits.txt"', '"files/missing.txt"'),
        1,
        (CHANGELOG_EVALS, "files/missing.txt: fixture not found"),
    ),
    Case(
        "duplicate-query",
        lambda r: put(
            r,
            COMMIT_TRIGGERS,
            "triggers:\n  - query: same\n    should_trigger: true\n  - query: same\n    should_trigger: false\n",
        ),
        1,
        (COMMIT_TRIGGERS, 'duplicate query "same"'),
    ),
    Case(
        "duplicate-eval-id",
        lambda r: edit(r, COMMIT_EVALS, "  - id: 2\n", "  - id: '1'\n"),
        1,
        (COMMIT_EVALS, "duplicate id"),
    ),
    Case(
        "skill-without-frontmatter",
        lambda r: put(r, CHANGELOG_SKILL, "# Changelog\n\nNo frontmatter here.\n"),
        1,
        (f"{CHANGELOG_SKILL}:1: no YAML frontmatter",),
    ),
    Case(
        "skill-name-not-directory",
        lambda r: edit(r, CHANGELOG_SKILL, "name: changelog", "name: change-log"),
        1,
        (f"{CHANGELOG_SKILL}:2: name 'change-log' != directory 'changelog'",),
    ),
    Case(
        "bad-plugin-json",
        lambda r: put(
            r,
            f"{RT}/.claude-plugin/plugin.json",
            '{\n  "name": "release-tools",\n  "version": 1.2.0\n}\n',
        ),
        1,
        (f"{RT}/.claude-plugin/plugin.json: invalid JSON", "line 3"),
    ),
    Case(
        "plugin-json-not-object",
        lambda r: put(r, f"{PT}/.codex-plugin/plugin.json", "[]"),
        1,
        (f"{PT}/.codex-plugin/plugin.json: manifest is not a JSON object",),
    ),
    Case(
        "missing-codex-marketplace",
        lambda r: (r / ".agents/plugins/marketplace.json").unlink(),
        1,
        ("missing .agents/plugins/marketplace.json (set checks.marketplace: false to opt out)",),
    ),
    Case(
        "non-utf8-eval-file",
        lambda r: put(
            r, CHANGELOG_TRIGGERS, b'{"triggers": [{"query": "caf\xe9", "should_trigger": true}]}'
        ),
        1,
        (CHANGELOG_TRIGGERS, "UTF-8"),
    ),
    Case(
        "non-utf8-skill",
        lambda r: put(
            r, CHANGELOG_SKILL, b"---\nname: changelog\ndescription: Use when \xff\n---\n"
        ),
        1,
        (f"{CHANGELOG_SKILL}: unreadable (invalid UTF-8", "line 3"),
    ),
    Case("empty-json-file", lambda r: put(r, CHANGELOG_EVALS, ""), 1, (CHANGELOG_EVALS,)),
    Case("empty-yaml-file", lambda r: put(r, COMMIT_TRIGGERS, ""), 1, (COMMIT_TRIGGERS,)),
    Case(
        "empty-skill-file",
        lambda r: put(r, CHANGELOG_SKILL, ""),
        1,
        (f"{CHANGELOG_SKILL}:1: no YAML frontmatter",),
    ),
    Case(
        "should-trigger-string",
        lambda r: put(r, COMMIT_TRIGGERS, 'triggers:\n  - query: a\n    should_trigger: "yes"\n'),
        1,
        (f"{COMMIT_TRIGGERS}:3: triggers[0].should_trigger",),
    ),
    Case(
        "should-trigger-yaml-yes-is-a-string",
        lambda r: put(r, COMMIT_TRIGGERS, "triggers:\n  - query: a\n    should_trigger: yes\n"),
        1,
        (COMMIT_TRIGGERS, "should_trigger"),
    ),
    Case(
        "float-eval-id",
        lambda r: put(
            r,
            CHANGELOG_EVALS,
            json.dumps({"evals": [{"id": 1.5, "prompt": "p", "expectations": ["e"]}]}),
        ),
        1,
        (CHANGELOG_EVALS, "id"),
    ),
    Case(
        "inline-file-content",
        lambda r: put(
            r,
            CHANGELOG_EVALS,
            json.dumps(
                {
                    "evals": [
                        {"id": "a", "prompt": "p", "files": {"a.txt": "x"}, "expectations": ["e"]}
                    ]
                }
            ),
        ),
        1,
        (CHANGELOG_EVALS, "files"),
    ),
    Case(
        "yaml-duplicate-key",
        lambda r: put(r, COMMIT_TRIGGERS, "triggers: []\ntriggers: []\n"),
        1,
        (COMMIT_TRIGGERS, "line 2"),
    ),
    Case("file-of-50-mb", _big_file, 1, (LICENSE_EVALS,)),
    Case(
        "config-wrong-type",
        lambda r: put(r, ".evolve.yaml", "checks:\n  license: MIT\n  max_skill_lines: lots\n"),
        2,
        (".evolve.yaml:3: checks.max_skill_lines: expected an integer",),
    ),
    Case(
        "config-wrong-bool",
        lambda r: put(r, ".evolve.yaml", "checks:\n  signals: yes\n"),
        2,
        (".evolve.yaml:2: checks.signals: expected true or false",),
    ),
    Case(
        "config-syntax",
        lambda r: put(r, ".evolve.yaml", "checks:\n  license: [MIT\n"),
        2,
        (".evolve.yaml:3: parse config",),
    ),
    Case(
        "two-config-files",
        lambda r: put(r, ".evolve.json", "{}"),
        2,
        ("ambiguous config: found", ".evolve.yaml", ".evolve.json", "keep exactly one"),
    ),
    Case(
        "config-bad-pattern",
        lambda r: put(r, ".evolve.yaml", "checks:\n  description_pattern: '(?!x)'\n"),
        2,
        (".evolve.yaml:2: checks.description_pattern: invalid pattern",),
    ),
    Case(
        "config-unknown-manifest",
        lambda r: put(r, ".evolve.yaml", "checks:\n  plugin_manifests: [claude, npm]\n"),
        2,
        ('checks.plugin_manifests: unknown manifest "npm" (want one of claude, codex)',),
    ),
    Case(
        "not-a-plugin-repository",
        lambda r: (r / ".claude-plugin/marketplace.json").unlink() or shutil.rmtree(r / "plugins"),
        2,
        ("is not a recognized plugin repository",),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_input(repo: Path, case: Case) -> None:
    case.setup(repo)
    result = run(repo, "--strict", "--no-signals")
    assert result.code == case.code, result.text
    assert "Traceback" not in result.text and "internal error" not in result.text
    for part in case.expect:
        assert part in result.text, f"{part!r} not in:\n{result.text}"
    if case.code == 1:
        assert "FAIL: " in result.err
    else:
        assert result.err.startswith("error: ")


def test_a_case_without_assertions_is_not_graded_yet_and_passes_strict(repo: Path) -> None:
    """skill-creator's first draft (a prompt, no assertions) is a warning, even with --strict."""
    put(repo, CHANGELOG_EVALS, json.dumps({"evals": [{"id": "a", "prompt": "p"}]}))
    result = run(repo, "--strict", "--no-signals")
    assert result.code == 0, result.text
    assert f'WARN: {CHANGELOG_EVALS}:1: eval "a": not graded yet: add assertions' in result.err


def test_findings_without_strict_exit_zero_with_a_warning(repo: Path) -> None:
    edit(repo, CHANGELOG_SKILL, "name: changelog", "name: change-log")
    put(repo, COMMIT_TRIGGERS, "")
    result = run(repo, "--no-signals")
    assert result.code == 0
    assert result.err.endswith("WARN: checks: 2 failures (pass --strict to exit 1)\n")


def test_one_failure_is_singular(repo: Path) -> None:
    edit(repo, CHANGELOG_SKILL, "name: changelog", "name: change-log")
    assert run(repo, "--no-signals").err.endswith(
        "WARN: checks: 1 failure (pass --strict to exit 1)\n"
    )


@pytest.mark.parametrize(
    ("flags", "code", "expect"),
    [
        (("--layout", "flat"), 2, 'unknown layout "flat"'),
        (
            ("--layout", "single"),
            2,
            "has no .claude-plugin/plugin.json; it is a marketplace repository "
            "(.claude-plugin/marketplace.json)\n  hint: drop --layout (auto-detects marketplace)",
        ),
        (
            ("--root", "/nonexistent/evolve-action"),
            2,
            "--root /nonexistent/evolve-action is not a directory",
        ),
    ],
)
def test_usage_errors(repo: Path, flags: tuple[str, ...], code: int, expect: str) -> None:
    result = run(repo, *flags)
    assert result.code == code
    assert expect in result.err


def test_license_flag_overrides_config(repo: Path) -> None:
    result = run(repo, "--strict", "--no-signals", "--license", "Apache-2.0")
    assert result.code == 1
    assert f"FAIL: {CHANGELOG_SKILL}:4: license must be Apache-2.0 (got 'MIT')" in result.err


def test_env_overrides_config(repo: Path) -> None:
    result = run(repo, "--strict", "--no-signals", env={"EVOLVE_CHECKS_LICENSE": "ISC"})
    assert result.code == 1
    assert "license must be ISC (got 'MIT')" in result.err


def test_no_marketplace_flag(repo: Path) -> None:
    (repo / ".agents/plugins/marketplace.json").unlink()
    assert run(repo, "--strict", "--no-signals", "--no-marketplace").code == 0


def test_unknown_config_key_warns(repo: Path) -> None:
    put(repo, ".evolve.yaml", "checks:\n  license: MIT\n  licence: MIT\n")
    result = run(repo, "--strict", "--no-signals")
    assert result.code == 0
    assert 'warn: .evolve.yaml:3: unknown config key "checks.licence" (ignored)' in result.err


def test_json_findings(repo: Path) -> None:
    edit(repo, CHANGELOG_SKILL, "name: changelog", "name: change-log")
    result = run(repo, "--json", "--strict")
    assert result.code == 1
    doc = json.loads(result.out)
    assert doc["verdict"] == "failed"
    assert doc["counts"]["errors"] == 1
    [finding] = doc["findings"]
    assert finding == {
        "check": "skill.name",
        "severity": "error",
        "path": CHANGELOG_SKILL,
        "line": 2,
        "pointer": None,
        "message": f"{CHANGELOG_SKILL}: name 'change-log' != directory 'changelog'",
    }


def test_github_annotations(repo: Path) -> None:
    edit(repo, CHANGELOG_SKILL, "name: changelog", "name: change-log")
    result = run(repo, "--no-signals", env={"GITHUB_ACTIONS": "true"})
    assert result.code == 0
    assert (
        f"::error file={CHANGELOG_SKILL},line=2,title=evolve-action checks (skill.name)::"
        f"{CHANGELOG_SKILL}: name 'change-log' != directory 'changelog'\n"
    ) in result.out


def test_github_annotation_paths_are_relative_to_the_workspace(repo: Path) -> None:
    edit(repo, CHANGELOG_SKILL, "name: changelog", "name: change-log")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(repo.parent)}
    result = run(repo, "--no-signals", env=env)
    assert f"::error file=examples/{CHANGELOG_SKILL},line=2," in result.out


def test_config_error_annotation(repo: Path) -> None:
    put(repo, ".evolve.yaml", "checks:\n  signals: yes\n")
    result = run(repo, env={"GITHUB_ACTIONS": "true"})
    assert result.code == 2
    assert "::error file=" in result.out and ",line=2::" in result.out
