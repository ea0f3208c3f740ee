"""QA: bad input on the run/report/demo/model-server commands, as a new user would type it.

Every case must exit 2 with one clear message (never a traceback, exit 3) and leave what is
already on disk byte-identical. No agent sessions: planning runs with `--dry-run`, and the
checks that matter fire before anything starts.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from evolve_action.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CHANGELOG = Path("plugins/release-tools/evals/changelog")


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


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "triggers", "--dry-run", "--skill", "nomatch"], "--skill nomatch: no such skill"),
        (["run", "evals", "--dry-run", "--skill", "changelog,nomatch"], "--skill nomatch: no such"),
        (["run", "all", "--dry-run", "--skills", "nomatch"], "--skill nomatch: no such skill"),
        (["run", "triggers", "--dry-run", "--plugin", "nope"], "--plugin nope: no such plugin"),
        (
            ["run", "evals", "--dry-run", "--plugin", "project-tools", "--skill", "changelog"],
            "--skill changelog: no such skill in the selected plugins",
        ),
        (
            ["run", "evals", "--dry-run", "--skill", "changelog", "--eval", "totals-by-region"],
            "--eval totals-by-region: no eval with this id in the selected skills",
        ),
        (["run", "triggers", "--dry-run", "--jobs", "0"], "--jobs 0: want a positive"),
        (["run", "triggers", "--dry-run", "--jobs", "-3"], "--jobs -3: want a positive"),
        (["run", "triggers", "--dry-run", "--runs", "0"], "--runs 0: want at least 1"),
        (["run", "triggers", "--dry-run", "--timeout", "0"], "--timeout 0: want a positive"),
        (["run", "evals", "--dry-run", "--jobs", "0"], "--jobs 0: want a positive"),
        (["run", "evals", "--dry-run", "--timeout", "-5"], "--timeout -5: want a positive"),
        (["run", "all", "--dry-run", "--runs", "0"], "--runs 0: want at least 1"),
        (["run", "all", "--dry-run", "--timeout", "0"], "--timeout 0: want a positive"),
        (["run", "triggers", "--dry-run", "--model", "nonsense"], 'in --model: "nonsense"'),
        (["run", "evals", "--dry-run", "--model", "nonsense"], 'in --model: "nonsense"'),
        (["run", "all", "--dry-run", "--model", "nonsense"], 'in --model: "nonsense"'),
        (["model-server", "--policy", "p.yaml", "--port", "70000"], "--port 70000: want 0-65535"),
        (["model-server", "--policy", "p.yaml", "--port", "-1"], "--port -1: want 0-65535"),
    ],
)
def test_bad_flags_exit_2_with_a_message(repo: Path, argv: list[str], message: str) -> None:
    before = snapshot(repo)
    code, _, err = run([*argv, "--root", str(repo)] if argv[0] == "run" else argv, repo)
    assert code == 2, err
    assert message in err
    assert "internal error" not in err and "Traceback" not in err
    assert snapshot(repo) == before


@pytest.mark.parametrize(
    ("argv", "first", "suggestion"),
    [
        (["run", "triggers", "--skil", "x"], "unknown option --skil x", 'did you mean "--skill"?'),
        (["run", "evals", "--dryrun"], "unknown option --dryrun", 'did you mean "--dry-run"?'),
        (["run", "triggers", "--skill", "csv-reprt"], "no such skill", '"csv-report"?'),
        (["run", "all", "--plugin", "release-tool"], "no such plugin", '"release-tools"?'),
        (["run", "all", "--model", "claude-sonet-5"], '"claude-sonet-5"', '"claude-sonnet-5"?'),
        (["rn", "checks"], "unknown command 'rn'", 'did you mean "run"?'),
        (["run", "trigers"], "unknown command 'trigers'", 'did you mean "triggers"?'),
        (["report", "--stale-results", "drp"], "invalid choice: 'drp'", 'did you mean "drop"?'),
    ],
)
def test_typos_get_one_line_and_a_suggestion(
    repo: Path, argv: list[str], first: str, suggestion: str
) -> None:
    """No abbreviated options (`--skil` is not `--skill`), and every misspelt command, flag, model,
    plugin or skill names the closest real one instead of a usage dump."""
    if argv[0] == "run":
        argv = [*argv, "--dry-run", "--root", str(repo)]
    code, out, err = run(argv, repo)
    assert code == 2, err
    lines = err.splitlines()
    assert first in lines[0] and lines[0].startswith("error: ")
    assert suggestion in err
    assert "usage:" not in err and "ambiguous" not in err and "Traceback" not in out + err


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "triggers", "--dry-run", "--results-format", "xml"],
        ["run", "evals", "--dry-run", "--results-format", "xml"],
    ],
)
def test_bad_choice_is_a_usage_error(repo: Path, argv: list[str]) -> None:
    code, _, _ = run([*argv, "--root", str(repo)], repo)
    assert code == 2


@pytest.mark.parametrize("command", ["triggers", "evals", "all"])
def test_root_pointing_to_a_file(tmp_path: Path, command: str) -> None:
    f = tmp_path / "file.txt"
    f.write_text("x")
    code, _, err = run(["run", command, "--dry-run", "--root", str(f)], tmp_path)
    assert code == 2 and "is not a directory" in err


BROKEN = {
    "conflict": (
        "results.json",
        '{\n<<<<<<< HEAD\n  "schema": 5\n=======\n  "schema": 5\n>>>>>>> b\n}\n',
        "results.json:2: stored results hold an unresolved git merge conflict",
    ),
    "syntax": ("results.yaml", "schema: 5\nmodels: [\n", "results.yaml:3: stored results do not"),
    "newer": ("results.json", '{"schema": 6}', "results.json: results file is schema 6"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
@pytest.mark.parametrize(
    "argv",
    [
        ["run", "triggers", "--dry-run"],
        ["run", "evals", "--dry-run"],
        ["run", "all", "--dry-run"],
        ["report"],
        ["report", "--migrate"],
    ],
    ids=lambda a: "-".join(a),
)
def test_unparseable_results_stop_the_command_and_stay_untouched(
    repo: Path, kind: str, argv: list[str]
) -> None:
    name, text, message = BROKEN[kind]
    (repo / CHANGELOG / name).write_text(text)
    before = snapshot(repo)
    code, _, err = run([*argv, "--root", str(repo)], repo)
    assert code == 2, err
    assert f"{CHANGELOG.as_posix()}/{message}" in err
    assert snapshot(repo) == before


@pytest.mark.parametrize("tier", ["triggers", "evals", "all"])
def test_overwriting_waits_for_the_credentials_check(repo: Path, tier: str) -> None:
    # --overwrite-unreadable-results deletes only once the run can start: without credentials
    # the command stops (exit 2) and the unusable file is still there, byte for byte.
    (repo / CHANGELOG / "results.json").write_text('{"schema": 2}')
    before = snapshot(repo)
    argv = ["run", tier, "--root", str(repo), "--overwrite-unreadable-results"]
    code, _, err = run(argv, repo)
    assert code == 2, err
    assert "credentials" in err.lower() or "api key" in err.lower(), err
    assert snapshot(repo) == before


def test_old_schema_is_an_error_and_left_untouched(repo: Path) -> None:
    # Issue 9: a schema older than 3 no longer "starts fresh" (that overwrote stored results).
    (repo / CHANGELOG / "results.json").write_text('{"schema": 2}')
    code, _, err = run(["run", "triggers", "--dry-run", "--root", str(repo)], repo)
    assert code == 2, err
    assert "not a schema-5 results file: schema: 2 is too old" in err
    assert "--overwrite-unreadable-results" in err
    assert (repo / CHANGELOG / "results.json").read_text() == '{"schema": 2}'


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--model", "nonsense"], 'unknown provider or model in --model: "nonsense"'),
        (["--model", "anthropic/claude-sonnet-5,nope"], 'in --model: "nope"'),
        (["--log", "{tmp}/file.txt/log.jsonl"], "cannot open the request log"),
    ],
)
def test_demo_rejects_bad_flags_before_copying(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    (tmp_path / "file.txt").write_text("x")
    out_dir = tmp_path / "demo"
    argv = ["demo", "--scripted", "--out", str(out_dir)]
    argv += [e.replace("{tmp}", str(tmp_path)) for e in extra]
    code, _, err = run(argv, REPO)
    assert code == 2, err
    assert message in err
    assert not out_dir.exists()


def test_demo_out_non_empty_is_refused_and_kept(tmp_path: Path) -> None:
    out_dir = tmp_path / "demo"
    out_dir.mkdir()
    (out_dir / "keep.txt").write_text("mine")
    code, _, err = run(["demo", "--scripted", "--out", str(out_dir)], REPO)
    assert code == 2 and "exists and is not an empty directory" in err
    assert [p.name for p in out_dir.iterdir()] == ["keep.txt"]
    assert (out_dir / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("case", ["md-is-dir", "junit-under-file"])
def test_report_write_failures_are_errors(repo: Path, tmp_path: Path, case: str) -> None:
    argv = ["report", "--root", str(repo)]
    if case == "md-is-dir":
        (repo / "EVALUATION.md").mkdir()
    else:
        (tmp_path / "file.txt").write_text("x")
        argv += ["--junit", str(tmp_path / "file.txt" / "junit.xml")]
    code, _, err = run(argv, repo)
    assert code == 2, err
    assert "cannot write the report" in err and "internal error" not in err
