"""The Tier 2 engine with a fake harness, judge, token counter and workspace builder (no processes).

The real Claude Code CLI, git and the scripted server are exercised in
tests/integration/test_evals_cli.py; here the engine's own rules are pinned: results written after
every case, runtime errors never graded, baselines run/reused/skipped per spec §9.7, measured usage
and cost, events, and a fatal fixture error that keeps finished cases on disk.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.evals import EVALS, NOW, FakeCounter, FakeJudge

from evolve_action import evals, grading, specs
from evolve_action.catalog import BUILTIN_CATALOG, BoundModel
from evolve_action.config import resolve_repository
from evolve_action.errors import SpecError
from evolve_action.evals import _assembly as eval_assembly
from evolve_action.events import ItemDone, RecordingReporter, UnitStarted
from evolve_action.grading import Verdict
from evolve_action.harness import ErrorClass, SessionSpec, ToolCall, Transcript, Usage
from evolve_action.results import summarise_grades


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "demo"}')
    write(root, "skills/sk/SKILL.md", "---\nname: sk\ndescription: Use when testing.\n---\nbody\n")
    write(root, "evals/sk/evals.json", json.dumps(EVALS))
    write(root, "evals/sk/files/in/data.txt", "data\n")
    return root


class FakeHarness:
    """Scripted agent: `[good]` writes out.txt (only when the skill is installed), `[error]` fails."""

    name = "claude"

    def __init__(self) -> None:
        self.specs: list[SessionSpec] = []

    async def run(self, spec: SessionSpec, *, stop: Any = None) -> Transcript:
        self.specs.append(spec)
        with_skill = (spec.workspace / ".claude" / "skills" / "sk").exists()
        if "[error]" in spec.prompt:
            return Transcript(
                error=ErrorClass.CRASH,
                error_message="agent CLI failed: boom",
                duration_seconds=1.04,
                stderr_tail="trace\nline",
            )
        calls: tuple[ToolCall, ...] = ()
        if "[good]" in spec.prompt and with_skill:
            (spec.workspace / "out.txt").write_text("hi\n")
            calls = (
                ToolCall(
                    name="Write",
                    input={"file_path": "out.txt"},
                    raw_input='{"file_path":"out.txt"}',
                ),
            )
        return Transcript(
            final_text="done",
            tool_calls=calls,
            usage=Usage(
                input_tokens=10,
                output_tokens=20,
                cache_read_input_tokens=100,
                cache_creation_input_tokens=50,
            ),
            total_cost_usd=0.0123456789 if with_skill else None,
            duration_seconds=2.25,
            has_result=True,
        )


def fake_workspace(
    case: specs.EvalCase, *, skill_dir: Path | None, environ: Any, baseline: bool = False
) -> Path:
    import tempfile

    ws = Path(tempfile.mkdtemp(prefix="baseline." if baseline else "evals."))
    for ref in case.fixtures:
        dest = ws / ref.dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(ref.source.read_bytes())
    (ws / ".claude" / "skills").mkdir(parents=True)
    if not baseline and skill_dir is not None:
        (ws / ".claude" / "skills" / skill_dir.name).symlink_to(skill_dir)
    return ws


def sweep(
    repo: Path,
    harness: FakeHarness,
    judge: FakeJudge,
    reporter: RecordingReporter | None = None,
    **opts: Any,
) -> evals.EvalsOutcome:
    repository, config = resolve_repository(repo, repo, None, {})
    options = evals.EvalsOptions(models=("claude-sonnet-5",), **opts)
    planned = evals.plan_evals(repository, config, options, environ={}, available={"claude"})
    return asyncio.run(
        evals.run_evals(
            repository,
            config,
            options,
            environ={},
            reporter=reporter or RecordingReporter(),
            harness=harness,
            judge_=judge,  # type: ignore[arg-type]
            now=lambda: NOW,
            planned=planned,
            counter=FakeCounter(),
            make_workspace=fake_workspace,
        )
    )


def load(repo: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((repo / "evals/sk/results.json").read_text())
    return doc["models"]["anthropic/claude-sonnet-5"]["evals"]


def test_sweep_results_baselines_and_events(repo: Path) -> None:
    harness, judge, rep = FakeHarness(), FakeJudge(), RecordingReporter()
    out = sweep(repo, harness, judge, rep)
    assert (out.executed, out.passed, out.failed, out.errored, out.baselines) == (3, 1, 1, 1, 3)
    # 3 with-skill + 3 baseline sessions; permissions bypassed; default turns/timeout.
    assert len(harness.specs) == 6
    assert {s.permission_mode for s in harness.specs} == {"bypassPermissions"}
    assert {(s.max_turns, s.timeout_seconds, s.model) for s in harness.specs} == {
        (20, 600.0, "claude-sonnet-5")
    }
    entry = load(repo)
    assert entry["ran_at"] == "2026-11-21T12:00:00Z" and entry["timeout_seconds"] == 600
    assert entry["pricing"] == {"input_per_mtok": 3, "output_per_mtok": 15}
    # Issue 8: the errored case reached no verdict, so nothing is stored for it (it stays new).
    good, bad = entry["results"]
    assert good["passed"] is True
    assert [e["source"] for e in good["expectations"]] == [
        "expectation",
        "assertion",
        "assertion",
        "assertion",
    ]
    assert good["expectations"][0]["evidence"] == "judged out.txt is friendly"
    assert good["measured"] == {
        "input_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 50,
        "output_tokens": 20,
        "cost_usd": 0.012346,
    }
    assert good["timing"] == {"total_tokens": 180, "executor_duration_seconds": 2.3}
    assert good["execution_metrics"] == {"tool_calls": {"Write": 1}, "total_tool_calls": 1}
    assert good["estimate"] == {"input_tokens": 1000, "input_cost_usd": 0.003}
    assert bad["passed"] is False and bad["summary"] == {
        "passed": 0,
        "failed": 2,
        "total": 2,
        "pass_rate": 0,
    }
    assert bad["execution_metrics"] == {"total_tool_calls": 0}
    # Judge: one conversation per case with llm assertions, with the case's expected output as context.
    assert [r.assertions for r in judge.requests].count(("out.txt is friendly",)) == 2
    assert len(judge.requests) == 4
    # Baselines: without the skill, fingerprinted, trimmed; priced cost when none is reported.
    base = {r["id"]: r for r in entry["baseline"]["results"]}
    assert base["good"]["passed"] is False and base["good"]["fingerprint"] == good["spec_hash"]
    assert base["good"]["measured"]["cost_usd"] == round((160 * 3 + 20 * 15) / 1e6, 6)
    assert "expectations" not in base["good"] and "spec_hash" not in base["good"]
    assert entry["summary"]["pass_rate"] == 0.5 and entry["summary"].get("errored", 0) == 0
    assert {r["id"] for r in entry["baseline"]["results"]} == {"good", "bad"}
    assert entry["baseline"]["summary"]["pass_rate"] == 0
    # Events: items = cases + baselines, one ItemDone each.
    started = rep.of(UnitStarted)
    assert started[0].items == 6 and started[0].tier == "evals"
    done = rep.of(ItemDone)
    assert sorted(d.label for d in done) == sorted(
        ["good", "bad", "3", "good (baseline)", "bad (baseline)", "3 (baseline)"]
    )
    err_done = next(d for d in done if d.label == "3")
    assert (
        err_done.status == "errored"
        and err_done.detail == "agent CLI failed: boom; stderr: trace line"
    )


def test_baselines_reused_until_the_eval_changes(repo: Path) -> None:
    sweep(repo, FakeHarness(), FakeJudge())
    first = load(repo)
    harness = FakeHarness()
    sweep(repo, harness, FakeJudge())
    # With-skill runs, plus the baseline of the errored case (its errored baseline was never
    # stored); every other baseline fingerprint still matches.
    assert len(harness.specs) == 4
    assert load(repo)["baseline"] == first["baseline"]
    assert load(repo)["previous"]["results"][0]["id"] == "good"
    # Editing one eval's prompt invalidates that eval's baseline only.
    doc = json.loads((repo / "evals/sk/evals.json").read_text())
    doc["evals"][1]["prompt"] = "[bad] do nothing at all"
    (repo / "evals/sk/evals.json").write_text(json.dumps(doc))
    harness = FakeHarness()
    sweep(repo, harness, FakeJudge())
    with_skill = [s for s in harness.specs if (s.workspace.name.startswith("evals."))]
    baselines = [s for s in harness.specs if s.workspace.name.startswith("baseline.")]
    assert len(with_skill) == 3 and sorted(s.prompt for s in baselines) == [
        "[bad] do nothing at all",
        "[error] crash",
    ]
    # The skill changing never invalidates baselines; --no-baseline carries them forward.
    before = load(repo)["baseline"]
    (repo / "skills/sk/SKILL.md").write_text(
        "---\nname: sk\ndescription: Use when testing v2.\n---\n"
    )
    harness = FakeHarness()
    sweep(repo, harness, FakeJudge())
    assert len(harness.specs) == 4
    assert load(repo)["baseline"] == before
    doc["evals"][0]["prompt"] = "[good] write out.txt now"
    (repo / "evals/sk/evals.json").write_text(json.dumps(doc))
    harness = FakeHarness()
    sweep(repo, harness, FakeJudge(), baseline=False)
    assert len(harness.specs) == 3
    assert load(repo)["baseline"]["results"] == before["results"]  # stale, but carried forward
    assert {r["id"] for r in load(repo)["baseline"]["results"]} == {"good", "bad"}


def test_case_overrides_turns_and_timeout(repo: Path) -> None:
    doc = json.loads((repo / "evals/sk/evals.json").read_text())
    doc["evals"][0].update(max_turns=7, timeout_seconds=42)
    (repo / "evals/sk/evals.json").write_text(json.dumps(doc))
    harness = FakeHarness()
    sweep(
        repo,
        harness,
        FakeJudge(),
        baseline=False,
        max_turns=9,
        timeout=100,
        eval_ids=("good", "bad"),
    )
    got = {s.prompt[:6]: (s.max_turns, s.timeout_seconds) for s in harness.specs}
    assert got == {"[good]": (7, 42.0), "[bad] ": (9, 100.0)}
    # `--eval` narrows what runs, never what the entry keeps.
    assert [r["id"] for r in load(repo)["results"]] == ["good", "bad"]


def test_missing_fixture_aborts_and_keeps_finished_cases(repo: Path) -> None:
    doc = json.loads((repo / "evals/sk/evals.json").read_text())
    doc["evals"][1]["files"] = ["files/gone.txt"]
    (repo / "evals/sk/evals.json").write_text(json.dumps(doc))

    def staged(case: specs.EvalCase, **kw: Any) -> Path:
        for ref in case.fixtures:
            if not ref.source.exists():
                raise SpecError(f"fixture {ref.dest}: No such file or directory", path=ref.source)
        return fake_workspace(case, **kw)

    repository, config = resolve_repository(repo, repo, None, {})
    options = evals.EvalsOptions(models=("claude-sonnet-5",), baseline=False, jobs=1)
    planned = evals.plan_evals(repository, config, options, environ={}, available={"claude"})
    with pytest.raises(SpecError, match=r"fixture gone\.txt"):
        asyncio.run(
            evals.run_evals(
                repository,
                config,
                options,
                environ={},
                reporter=RecordingReporter(),
                harness=FakeHarness(),
                judge_=FakeJudge(),
                now=lambda: NOW,
                planned=planned,
                counter=FakeCounter(),
                make_workspace=staged,  # type: ignore[arg-type]
            )
        )
    assert [r["id"] for r in load(repo)["results"]] == ["good"]


# --- pure helpers -----------------------------------------------------------------------------

SONNET = BoundModel(
    model=BUILTIN_CATALOG.get("anthropic/claude-sonnet-5"),
    harness="claude",
    cli_model="claude-sonnet-5",
)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("dest", "ok"),
    [
        ("a.txt", True),
        ("dir/a.txt", True),
        ("../a", False),
        ("/etc/x", False),
        ("a/../../b", False),
        (".", False),
    ],
)
def test_check_dest(dest: str, ok: bool) -> None:
    if ok:
        assert eval_assembly._check_dest(dest) == dest
    else:
        with pytest.raises(SpecError, match="escapes the workspace"):
            eval_assembly._check_dest(dest)


@pytest.mark.parametrize(
    ("reason", "stderr", "detail"),
    [
        ("timed out after 5s", "", "timed out after 5s"),
        ("", "boom\n", "boom"),
        ("", "", "(no error output)"),
        ("r", "x" * 300, "r; stderr: …" + "x" * 200),
    ],
)
def test_error_detail(reason: str, stderr: str, detail: str) -> None:
    assert evals.error_detail(Transcript(stderr_tail=stderr), reason) == detail


def test_build_result_unpriced_usage_and_skips() -> None:
    case = specs.EvalCase(
        id="c", name="Case", prompt="p", assertions=(specs.Assertion(type="tool_call", tool="X"),)
    )
    graded = grading.GradedCase(
        verdicts=(Verdict(passed=None, evidence="skipped: harness does not report tool calls"),),
        passed=True,
        summary=summarise_grades([Verdict(passed=None)]),
    )
    t = Transcript(
        final_text="ok",
        usage=Usage(input_tokens=1, output_tokens=None),
        duration_seconds=0.05,
        has_result=True,
    )
    run = evals.CaseRun(transcript=t, runtime_error="", graded=graded, workspace=Path())
    r = evals.build_result(case, run, model=SONNET, fingerprint_hex="f" * 64, estimate=None)
    assert r.passed is True and r.name == "Case"
    assert r.summary is not None and (r.summary.skipped, r.summary.pass_rate) == (1, None)
    assert r.measured is not None and r.measured.output_tokens is None
    assert r.measured.cost_usd == round(1 * 3 / 1e6, 6)
    assert (
        r.timing is not None
        and r.timing.total_tokens == 1
        and r.timing.executor_duration_seconds == 0.1
    )


# Regressions found in review (QA regressions for eval staging: a missing or escaping fixture names the eval and the file).


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (["files/gone.txt"], 'eval "first": fixture gone.txt: No such file or directory'),
        (["files/sub"], 'eval "first": fixture sub: Is a directory'),
    ],
)
def test_missing_fixture_names_eval_and_file(
    tmp_path: Path, files: list[str], message: str
) -> None:
    d = tmp_path / "p" / "evals" / "sk"
    (d / "files" / "sub").mkdir(parents=True)
    doc = {"evals": [{"id": "first", "prompt": "do it", "files": files, "assertions": ["x"]}]}
    (d / "evals.json").write_text(json.dumps(doc))
    case = specs.load_evals(d / "evals.json").evals[0]
    with pytest.raises(SpecError) as info:
        evals.stage_workspace(case, skill_dir=None, environ={})
    assert message in info.value.message
    assert info.value.hint is not None and "--new" in info.value.hint


@pytest.mark.parametrize("dest", ["../x", "/abs", ".", ".."])
def test_escaping_fixture_dest_names_the_eval(dest: str) -> None:
    with pytest.raises(SpecError, match=r'^eval "e1": fixture path .* escapes the workspace'):
        eval_assembly._check_dest(dest, 'eval "e1"')


def test_unwritable_results_stop_the_sweep_before_any_session(tmp_path: Path) -> None:

    root = tmp_path / "repo"
    write(root, ".claude-plugin/plugin.json", '{"name": "demo"}')
    write(root, "skills/sk/SKILL.md", "---\nname: sk\ndescription: Use when testing.\n---\nb\n")
    write(root, "evals/sk/evals.json", json.dumps(EVALS))
    write(root, "evals/sk/files/in/data.txt", "data\n")
    (root / "evals/sk/results.json").mkdir()
    harness = FakeHarness()
    with pytest.raises(
        SpecError, match=r"cannot write results: the path exists|the results path is a directory"
    ):
        sweep(root, harness, FakeJudge(), baseline=False)
    assert harness.specs == []


def test_nothing_planned_resolves_the_judge_without_a_client(repo: Path) -> None:
    """`connect=False` (no case planned): the model is resolved and checked, no client is built."""
    from evolve_action.errors import ConfigError
    from evolve_action.evals._engine import make_judge

    _, config = resolve_repository(repo, repo, None, {})
    creds = {"ANTHROPIC_API_KEY": "sk-test"}
    judge, warnings = make_judge(config, evals.EvalsOptions(), environ=creds, connect=False)
    assert (judge.available, judge.model, warnings) == (False, "claude-sonnet-5", [])
    connected, _ = make_judge(config, evals.EvalsOptions(), environ=creds)
    assert connected.available
    asyncio.run(connected.aclose())
    bad = evals.EvalsOptions(judge_model="openai/gpt-5.4")
    with pytest.raises(ConfigError, match="only Anthropic models can judge"):
        make_judge(config, bad, environ=creds, connect=False)
