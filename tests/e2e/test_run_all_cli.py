"""`evolve-action run all` builds its trigger options exactly like `run triggers` (engine spec §2.3).

No agent sessions: everything runs with `--dry-run`, and the Claude Code CLI lookup is replaced
where a test needs it to be missing.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

import evolve_action.triggers as triggers  # the facade: `run all` calls `triggers.make_plan`
from evolve_action.cli import main
from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import available_harnesses

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(args: list[str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)}
    code = main(args, env, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLES, root)
    return root


def _no_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(environ: object = None) -> Path:
        raise EnvironmentProblem("Claude Code CLI not found", hint="install it")

    monkeypatch.setattr("evolve_action.harness._locate.find_cli", missing)


def _trigger_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if '"tier":"triggers"' in line]


def test_available_harnesses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "evolve_action.harness._locate.find_cli", lambda environ=None: Path("/bin/true")
    )
    _no_codex(monkeypatch)
    assert available_harnesses({}) == {"claude"}
    _no_cli(monkeypatch)
    assert available_harnesses({}) == set()
    assert available_harnesses({}, dry_run=True) == {"claude"}
    with pytest.raises(EnvironmentProblem):
        available_harnesses({}, required=True)
    # Codex is an opt-in install: planned (also in a dry run) only when it is found.
    monkeypatch.setattr(
        "evolve_action.harness._locate.find_codex", lambda environ=None: Path("/bin/true")
    )
    assert available_harnesses({}) == {"codex"}
    assert available_harnesses({}, dry_run=True) == {"claude", "codex"}
    assert available_harnesses({}, required=True) == {"codex"}


def _no_codex(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(environ: object = None) -> Path:
        raise EnvironmentProblem("no codex")

    monkeypatch.setattr("evolve_action.harness._locate.find_codex", missing)


def test_run_all_dry_run_plans_the_same_triggers_without_a_cli(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A dry run starts no session, so both commands plan as if the CLI were installed.
    _no_cli(monkeypatch)
    code, alone, err = run(["run", "triggers", "--dry-run", "--json", "--root", str(repo)], repo)
    assert code == 0, err
    code, together, err = run(["run", "all", "--dry-run", "--json", "--root", str(repo)], repo)
    assert code == 0, err
    assert _trigger_lines(alone) and _trigger_lines(together) == _trigger_lines(alone)


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["run", "all"], triggers.DEFAULT_TIMEOUT_SECONDS),
        (["run", "all", "--timeout", "30"], 30),
        (["run", "triggers"], triggers.DEFAULT_TIMEOUT_SECONDS),
        (["run", "triggers", "--timeout", "30"], 30),
    ],
)
def test_trigger_timeout_rule(
    repo: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], want: int
) -> None:
    # `run all`: 120 s per trigger session (600 s per eval run) unless --timeout is given.
    seen: list[triggers.TriggerOptions] = []
    real = triggers.make_plan

    def spy(options: triggers.TriggerOptions) -> object:
        seen.append(options)
        return real(options)

    monkeypatch.setattr(triggers, "make_plan", spy)
    code, _, err = run([*argv, "--dry-run", "--root", str(repo)], repo)
    assert code == 0, err
    assert [o.timeout_seconds for o in seen] == [want]
    assert seen[0].results_format == "json" and seen[0].models
