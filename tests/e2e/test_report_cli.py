"""`evolve-action report` end to end: goldens (marketplace and single), --check, --junit, --migrate."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import io
import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.helpers.report_fixtures import make_marketplace, make_single

from evolve_action.cli import build_parser, main
from evolve_action.cli._report import print_report, resolve_options
from evolve_action.errors import EnvironmentProblem
from evolve_action.flows import regenerate_report

PINNED_VERSION = "0.0.0-golden"
GoldenCheck = Callable[[str, bytes], None]


def run(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, {}, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue(), err.getvalue()


def generate_pinned(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run the report engine with a pinned tool version (the only volatile value)."""
    args = build_parser().parse_args(["report", *argv])
    opts = dataclasses.replace(resolve_options(args, {}, cwd), tool_version=PINNED_VERSION)
    out, err = io.StringIO(), io.StringIO()
    outcome = regenerate_report(opts, cwd=cwd)
    print_report(outcome, stdout=out, stderr=err)
    return outcome.exit_code, out.getvalue(), err.getvalue()


def hashes(root: Path, pattern: str) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob(pattern))
    }


# ---------------------------------------------------------------------------------------------
# Golden reports


def test_marketplace_golden(tmp_path: Path, golden: GoldenCheck) -> None:
    root = make_marketplace(tmp_path / "repo")
    before = hashes(root, "results.*")
    code, out, err = generate_pinned(["--root", str(root), "--junit", "junit.xml"], tmp_path)
    assert code == 0, err
    assert (
        out == "report: regenerated EVALUATION.md and EVALUATION.json (3 plugins, 2 with results)\n"
    )  # gamma has none
    assert err == (
        "stale-results: kept 1 model(s) outside the configured models on disk (excluded from "
        "reports); pass --stale-results=drop to prune: google/gemini-3.5-flash\n"
    )
    for rel in (
        "EVALUATION.md",
        "EVALUATION.json",
        "plugins/alpha/EVALUATION.md",
        "plugins/beta/EVALUATION.md",
    ):
        golden(f"report-marketplace/{rel}", (root / rel).read_bytes())
    golden("report-marketplace/junit.xml", (tmp_path / "junit.xml").read_bytes())
    assert not (root / "plugins/gamma/EVALUATION.md").exists()  # no results → no page
    assert hashes(root, "results.*") == before


def test_single_golden(tmp_path: Path, golden: GoldenCheck) -> None:
    root = make_single(tmp_path / "solo")
    code, out, err = generate_pinned(["--root", str(root)], tmp_path)
    assert code == 0, err
    assert out == "report: regenerated EVALUATION.md and EVALUATION.json (1 plugin)\n"
    assert err == ""
    golden("report-single/EVALUATION.md", (root / "EVALUATION.md").read_bytes())
    golden("report-single/EVALUATION.json", (root / "EVALUATION.json").read_bytes())
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("EVALUATION.*")) == [
        "EVALUATION.json",
        "EVALUATION.md",
    ]


def test_two_runs_are_byte_identical_and_results_untouched(tmp_path: Path) -> None:
    root = make_marketplace(tmp_path / "repo")
    results_before = hashes(root, "results.*")
    assert run(["report", "--root", str(root)], tmp_path)[0] == 0
    first = hashes(root, "EVALUATION.*")
    assert run(["report", "--root", str(root)], tmp_path)[0] == 0
    assert hashes(root, "EVALUATION.*") == first
    assert len(first) == 4
    assert hashes(root, "results.*") == results_before


def test_a_command_collects_garbage_rarely_and_leaves_the_collector_as_it_found_it(
    tmp_path: Path,
) -> None:
    root = make_marketplace(tmp_path / "repo")
    started: list[int] = []
    before = gc.get_threshold()
    gc.callbacks.append(
        lambda phase, info: started.append(info["generation"]) if phase == "start" else None
    )
    try:
        gc.collect()
        started.clear()
        assert run(["report", "--root", str(root)], tmp_path)[0] == 0
    finally:
        gc.callbacks.pop()
    assert gc.get_threshold() == before
    assert len(started) <= 1, started  # with CPython's default threshold: 3 here


@pytest.mark.parametrize("models", ["anthropic/claude-sonnet-5", "openai", "anthropic,xai"])
def test_an_environment_variable_never_changes_the_committed_report(
    tmp_path: Path, models: str
) -> None:
    """`EVOLVE_MODELS` narrows what runs; the report renders the commit's files the same way."""
    root = make_marketplace(tmp_path / "repo")
    assert run(["report", "--root", str(root)], tmp_path)[0] == 0
    plain = hashes(root, "EVALUATION.*")
    out, err = io.StringIO(), io.StringIO()
    code = main(["report", "--root", str(root)], {"EVOLVE_MODELS": models}, stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert hashes(root, "EVALUATION.*") == plain


def test_results_format_switch_removes_other_rollup(tmp_path: Path) -> None:
    root = make_marketplace(tmp_path / "repo")
    assert run(["report", "--root", str(root)], tmp_path)[0] == 0
    code, out, _ = run(["report", "--root", str(root), "--results-format", "jsonc"], tmp_path)
    assert code == 0
    assert "EVALUATION.jsonc" in out
    assert not (root / "EVALUATION.json").exists()
    text = (root / "EVALUATION.jsonc").read_text()
    assert text.startswith("// ")
    assert json.loads(text.split("\n", 1)[1])["schema"] == 3


def test_refuses_newer_rollup_schema(tmp_path: Path) -> None:
    root = make_marketplace(tmp_path / "repo")
    (root / "EVALUATION.json").write_text('{"schema": 4}\n')
    code, _, err = run(["report", "--root", str(root)], tmp_path)
    assert code == 2
    assert "schema 4" in err
    assert (root / "EVALUATION.json").read_text() == '{"schema": 4}\n'


@pytest.mark.parametrize(
    ("name", "text", "refused"),
    [
        ("EVALUATION.json", '{\n  "schema": 3,\n  "plugins": {}\n}\n', False),
        ("EVALUATION.json", '{\n  "schema": 3,\n  "plugins": {},\n  "schema": 4\n}\n', True),
        ("EVALUATION.json", '{\n  "schema": 3,\n  "sch\\u0065ma": 5\n}\n', True),
        ("EVALUATION.json", '{\n  "schema": 4,\n  "plugins": {}\n}\n', True),
        ("EVALUATION.jsonc", '// c\n{\n  "schema": 3,\n  "plugins": {}\n}\n', False),
        ("EVALUATION.jsonc", '// c\n{\n  "schema": 3,\n  /* "schema": 4 */ "x": 1,\n}\n', False),
        ("EVALUATION.jsonc", '// c\n{\n  "schema": 3,\n  "x": 1, "schema": 9\n}\n', True),
    ],
    ids=["ours", "duplicate-key", "escaped-key", "newer", "jsonc", "jsonc-comment", "jsonc-dup"],
)
def test_the_committed_rollup_schema_is_read_whatever_its_spelling(
    tmp_path: Path, name: str, text: str, refused: bool
) -> None:
    # A rollup that opens as ours is not decoded; one that could hold another `schema` key is.
    root = make_marketplace(tmp_path / "repo")
    (root / name).write_text(text)
    code, _, err = run(["report", "--root", str(root)], tmp_path)
    assert (code == 2 and "written by a newer tool" in err) is refused, err
    assert code == (2 if refused else 0)


# ---------------------------------------------------------------------------------------------
# The gate


def test_check_fixture_warns_and_fails_by_maturity(tmp_path: Path) -> None:
    root = make_marketplace(tmp_path / "repo")
    code, out, err = run(["report", "--root", str(root), "--check"], tmp_path)
    # alpha (1.0.0, gated): sonnet-5 triggers 4/5 ≥ 0.6; haiku triggers 0/2 < 0.6 → FAIL;
    # evals sonnet-5 0/3 executed (errored counts) < 0.7 → FAIL; spark 2/2 ok; cursor errored only.
    # beta (2.0.0-rc.1 prerelease, gated by default): 1/3 < 0.7 → FAIL.
    assert code == 1
    assert "report: thresholds met" not in out
    assert err.splitlines()[1:] == [
        "FAIL: alpha: triggers: anthropic/claude-haiku-4-5 pass rate 0.0% below threshold 60.0%",
        "FAIL: alpha: evals: anthropic/claude-sonnet-5 pass rate 0.0% below threshold 70.0%",
        "FAIL: alpha: evals: cursor/composer-2.5 pass rate 0.0% below threshold 70.0%",
        "FAIL: beta: evals: anthropic/claude-sonnet-5 pass rate 33.3% below threshold 70.0%",
    ]


def test_check_maturity_and_flags(tmp_path: Path) -> None:
    root = make_marketplace(tmp_path / "repo")
    code, out, err = run(
        [
            "report",
            "--root",
            str(root),
            "--check",
            "--maturity",
            "unstable",
            "--min-triggers-pass-rate",
            "0.4",
            "--min-evals-pass-rate",
            "0",
        ],
        tmp_path,
    )
    # Only gamma (0.1.0, no results) is unstable, so everything else only warns: exit 0.
    assert code == 0
    assert out.endswith("report: thresholds met\n")
    assert [line for line in err.splitlines() if line.startswith(("WARN", "FAIL"))] == [
        "WARN: alpha: triggers: anthropic/claude-haiku-4-5 pass rate 0.0% below threshold 40.0%",
    ]
    code, out, err = run(
        ["report", "--root", str(root), "--check", "--maturity", "stable"], tmp_path
    )
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith(("WARN", "FAIL"))]
    assert lines[0] == (
        "WARN: beta: evals: anthropic/claude-sonnet-5 pass rate 33.3% below threshold 70.0%"
    )
    assert all(line.startswith("FAIL: alpha") for line in lines[1:])


def _codex(monkeypatch: pytest.MonkeyPatch, *, installed: bool) -> None:
    def find(environ: object = None) -> Path:
        if installed:
            return Path("/usr/bin/true")
        raise EnvironmentProblem("no codex")

    monkeypatch.setattr("evolve_action.harness._locate.find_codex", find)


def _strict_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, codex: bool
) -> tuple[int, list[str]]:
    """`report --check --strict` on the fixture marketplace, with or without Codex installed."""
    _codex(monkeypatch, installed=codex)
    root = make_marketplace(tmp_path / "repo")
    code, _, err = run(
        ["report", "--root", str(root), "--check", "--strict", "--maturity", "stable"],
        tmp_path,
    )
    return code, err.splitlines()


def test_check_strict_reports_missing_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, lines = _strict_report(tmp_path, monkeypatch, codex=False)
    assert code == 1
    assert "WARN: gamma: triggers: no stored results for anthropic/claude-fable-5" in lines
    assert "FAIL: alpha: triggers: no stored results for anthropic/claude-opus-5" in lines
    # Evidence no allowed harness here can produce is not asked for; one line says so.
    assert not any("no stored results for openai/" in line for line in lines)
    assert any(
        line.startswith("note: --strict: ") and "are not required: openai/" in line
        for line in lines
    )
    # Stored results carry no spec hashes here, so nothing is stale.
    assert not any("stale" in line for line in lines if not line.startswith("stale-results"))


def test_check_strict_asks_for_openai_evidence_once_codex_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, lines = _strict_report(tmp_path, monkeypatch, codex=True)
    assert code == 1
    assert any("no stored results for openai/gpt-5.4" in line for line in lines)
    assert not any("are not required: openai/gpt-5.4," in line for line in lines)


def test_check_strict_reports_stale_tiers(tmp_path: Path) -> None:
    # A stored trigger result whose spec_hash no longer matches its query, and a stored eval whose
    # id left the spec (compared against "": modified), make those tiers stale (engine spec §7.4).
    root = make_marketplace(tmp_path / "repo")
    path = root / "plugins/alpha/evals/alpha-skill/results.json"
    doc = json.loads(path.read_text("utf-8"))
    entry = doc["models"]["anthropic/claude-sonnet-5"]
    entry["triggers"]["results"][0]["spec_hash"] = "0" * 64
    path.write_text(json.dumps(doc, indent=2) + "\n", "utf-8")
    gamma = root / "plugins/beta/evals/gamma/results.json"
    gdoc = json.loads(gamma.read_text("utf-8"))
    gdoc["models"]["anthropic/claude-sonnet-5"]["evals"]["results"][0]["spec_hash"] = "0" * 64
    gamma.write_text(json.dumps(gdoc, indent=2) + "\n", "utf-8")
    code, _, err = run(
        ["report", "--root", str(root), "--check", "--strict", "--maturity", "stable"],
        tmp_path,
    )
    assert code == 1
    stale = sorted(line for line in err.splitlines() if "stale (authored" in line)
    assert stale == [
        "FAIL: triggers: alpha-skill stored results are stale (authored content changed)",
        "WARN: evals: gamma stored results are stale (authored content changed)",
    ]


@pytest.mark.parametrize("value", ["bogus", ","])
def test_bad_maturity_is_a_usage_error(tmp_path: Path, value: str) -> None:
    root = make_marketplace(tmp_path / "repo")
    code, _, err = run(["report", "--root", str(root), "--check", "--maturity", value], tmp_path)
    assert code == 2
    assert "maturity" in err


# ---------------------------------------------------------------------------------------------
# JUnit


def test_junit_counts_and_evidence(tmp_path: Path) -> None:
    root = make_marketplace(tmp_path / "repo")
    code, _, _ = run(["report", "--root", str(root), "--junit", "out/junit.xml"], tmp_path)
    assert code == 0
    tree = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    assert tree.tag == "testsuites"
    # alpha-skill: 3 queries × 3 trigger models + 3 + 2 + 1 evals; beta-skill: 2 × 2 active
    # models; gamma: 3 evals.
    suites = {s.get("name"): s for s in tree.findall("testsuite")}
    assert list(suites) == ["alpha/alpha-skill", "alpha/beta-skill", "beta/gamma"]
    assert [len(s.findall("testcase")) for s in suites.values()] == [15, 4, 3]
    assert tree.get("tests") == "22"
    cases = tree.findall(".//testcase")
    failures = [c for c in cases if c.find("failure") is not None]
    errors = [c for c in cases if c.find("error") is not None]
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert (len(failures), len(errors), len(skipped)) == (
        int(tree.get("failures", "")),
        int(tree.get("errors", "")),
        int(tree.get("skipped", "")),
    )
    assert len(skipped) == 3  # grok's count-only queries
    assert len(errors) == 2  # sonnet-5 "broken", cursor "fuzz"
    tt = next(c for c in failures if c.get("name") == "Table-driven tests")
    fail = tt.find("failure")
    assert fail is not None
    assert fail.get("message") == "assertions failed"
    assert fail.text == "failed `command `go test ./...` exits 0`: exit 1: FAIL | pkg\nmore output"
    assert tt.get("classname") == "alpha.alpha-skill.anthropic/claude-sonnet-5.evals"
    assert tt.get("time") == "33.000"
    trig = next(c for c in failures if c.get("classname", "").endswith(".triggers"))
    assert trig.find("failure") is not None


# ---------------------------------------------------------------------------------------------
# --migrate


SCHEMA4 = {
    "schema": 4,
    "plugin": "x",
    "skill": "y",
    "triggers": {
        "anthropic/claude-sonnet-5": {
            "provider": "anthropic",
            "model": "claude-sonnet-5",
            "display": "Claude Sonnet 5",
            "tool_version": "0.4.0",
            "ran_at": "2026-05-01T00:00:00Z",
            "executed": True,
            "timeout_seconds": 120,
            "pricing": {"input_per_mtok": 3, "output_per_mtok": 15},
            "results": [
                {
                    "query": "Explain the release flow",
                    "should_trigger": True,
                    "hits": 3,
                    "runs": 3,
                    "passed": True,
                    "avg_run_seconds": 4,
                }
            ],
            "summary": {"passed": 1, "failed": 0, "total": 1, "pass_rate": 1, "avg_run_seconds": 4},
        }
    },
}


def test_migrate_upgrades_schema4_in_place(tmp_path: Path) -> None:
    root = make_single(tmp_path / "solo")
    target = root / "evals/beta-skill/results.json"
    target.write_text(json.dumps(SCHEMA4, indent=2) + "\n")
    code, out, _ = run(["report", "--root", str(root), "--migrate"], tmp_path)
    assert code == 0, out
    assert out.splitlines()[:2] == [
        "migrate: upgraded solo/beta-skill from schema 4 to 5",
        "migrate: upgraded 1 results file to schema 5",
    ]
    doc = json.loads(target.read_text())
    assert doc["schema"] == 5
    assert list(doc["models"]) == ["anthropic/claude-sonnet-5"]
    code, out, _ = run(["report", "--root", str(root), "--migrate"], tmp_path)
    assert out.splitlines()[0] == "migrate: results files already at schema 5"


# ---------------------------------------------------------------------------------------------
# The real corpus (read-only; reports are rendered into a copy)


def test_corpus_report_and_check(tmp_path: Path, corpus: Path) -> None:
    repo = tmp_path / "bitwise-skills"
    shutil.copytree(corpus, repo)
    before = hashes(repo, "results.*")
    code, out, err = run(["report", "--root", str(repo), "--check", "--junit", "j.xml"], tmp_path)
    assert code == 0, err
    assert out == (
        "report: regenerated EVALUATION.md and EVALUATION.json (5 plugins)\n"
        "report: thresholds met\n"
    )
    assert err == ""
    pages = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("EVALUATION.md"))
    assert pages == [
        "EVALUATION.md",
        "plugins/actions/EVALUATION.md",
        "plugins/golang/EVALUATION.md",
        "plugins/python/EVALUATION.md",
        "plugins/terraform/EVALUATION.md",
        "plugins/workflow/EVALUATION.md",
    ]
    md = (repo / "EVALUATION.md").read_text()
    # Figures the spec quotes from evolve's own report of this corpus.
    assert "| Anthropic | Claude Fable 5 (`claude-fable-5`) | 70/70 | 100% | +54% |" in md
    assert "| $1.4975 |" in md
    assert "10/11 (2 errored)" in md
    assert md.count("| -0% |") == 4
    assert "| OpenAI | `gpt-5.3-codex` |\n| Google | all models |\n| Cursor | all models |\n" in md
    assert hashes(repo, "results.*") == before
    tree = ET.parse(tmp_path / "j.xml").getroot()
    assert tree.get("tests") == str(len(tree.findall(".//testcase")))
    # Below the corpus's own thresholds: the spec's smallest margin is 76.9% vs 75%.
    code, _, err = run(
        ["report", "--root", str(repo), "--check", "--min-evals-pass-rate", "0.77"], tmp_path
    )
    assert code == 1
    assert err.splitlines() == [
        "FAIL: golang: evals: anthropic/claude-sonnet-5 pass rate 76.9% below threshold 77.0%",
        "FAIL: python: evals: anthropic/claude-haiku-4-5 pass rate 76.9% below threshold 77.0%",
        "FAIL: python: evals: openai/gpt-5.3-codex-spark pass rate 76.9% below threshold 77.0%",
        "FAIL: python: evals: openai/gpt-5.4-mini pass rate 76.9% below threshold 77.0%",
    ]


def test_stale_results_drop_prunes_foreign_models(tmp_path: Path) -> None:
    root = make_marketplace(tmp_path / "repo")
    target = root / "plugins/alpha/evals/beta-skill/results.json"
    untouched = hashes(root / "plugins/alpha/evals/alpha-skill", "results.*")
    code, _, err = run(["report", "--root", str(root), "--stale-results", "drop"], tmp_path)
    assert code == 0
    assert err == (
        "stale-results: dropped 1 model(s) outside the configured models: google/gemini-3.5-flash\n"
    )
    assert "google/gemini-3.5-flash" not in json.loads(target.read_text())["models"]
    assert hashes(root / "plugins/alpha/evals/alpha-skill", "results.*") == untouched
    assert run(["report", "--root", str(root)], tmp_path)[2] == ""
