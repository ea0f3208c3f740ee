"""The demo's pure pieces: backend choice, scripted environment, copying, policy, summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve_action import flows as demo
from evolve_action.errors import UsageError
from evolve_action.modelserver import Skill, route_score


@pytest.mark.parametrize(
    ("environ", "scripted", "yes", "backend", "credential"),
    [
        ({}, False, False, demo.Backend.SCRIPTED, None),
        ({"ANTHROPIC_API_KEY": ""}, False, False, demo.Backend.SCRIPTED, None),
        ({"ANTHROPIC_API_KEY": "k"}, False, False, None, "ANTHROPIC_API_KEY"),
        ({"CLAUDE_CODE_OAUTH_TOKEN": "t"}, False, False, None, "CLAUDE_CODE_OAUTH_TOKEN"),
        ({"ANTHROPIC_API_KEY": "k"}, True, False, demo.Backend.SCRIPTED, "ANTHROPIC_API_KEY"),
        ({"ANTHROPIC_API_KEY": "k"}, False, True, demo.Backend.REAL, "ANTHROPIC_API_KEY"),
        ({}, False, True, demo.Backend.SCRIPTED, None),
    ],
    ids=["none", "empty", "key", "oauth", "key-scripted", "key-yes", "yes-without-key"],
)
def test_choose_backend(
    environ: dict[str, str],
    scripted: bool,
    yes: bool,
    backend: demo.Backend | None,
    credential: str | None,
) -> None:
    choice = demo.choose_backend(environ, scripted=scripted, yes=yes)
    assert choice.backend is backend
    assert choice.credential == credential


def test_scripted_environ_replaces_credentials_and_endpoints(tmp_path: Path) -> None:
    environ = {
        "PATH": "/bin",
        "ANTHROPIC_API_KEY": "real",
        "CLAUDE_CODE_OAUTH_TOKEN": "real",
        "ANTHROPIC_AUTH_TOKEN": "real",
        "EVOLVE_ANTHROPIC_API_KEY": "real",
        "ANTHROPIC_BASE_URL": "https://proxy.example",
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "OPENAI_API_KEY": "real",
        "EVOLVE_OPENAI_API_KEY": "real",
        "CODEX_API_KEY": "real",
        "OPENAI_BASE_URL": "https://openai-proxy.example/v1",
    }
    env = demo.scripted_environ(environ, base_url="http://127.0.0.1:1", cache_dir=tmp_path)
    assert env == {
        "PATH": "/bin",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:1",
        "ANTHROPIC_API_KEY": demo.DUMMY_KEY,
        "OPENAI_BASE_URL": "http://127.0.0.1:1/v1",  # Codex, when installed
        "OPENAI_API_KEY": demo.DUMMY_KEY,
        "EVOLVE_CACHE_DIR": str(tmp_path),
    }


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "examples"
    (src / "plugins" / "p" / "skills" / "s").mkdir(parents=True)
    (src / "plugins" / "p" / "skills" / "s" / "SKILL.md").write_text("x", encoding="utf-8")
    (src / ".git").mkdir()
    (src / ".git" / "HEAD").write_text("ref", encoding="utf-8")
    return src


def test_copy_examples_into_out_and_temp(tmp_path: Path) -> None:
    src = _source(tmp_path)
    out = demo.copy_examples(src, tmp_path / "out")
    assert out == (tmp_path / "out").resolve()
    assert (out / "plugins" / "p" / "skills" / "s" / "SKILL.md").read_text(encoding="utf-8") == "x"
    assert not (out / ".git").exists()
    fresh = demo.copy_examples(src, None, tmp_parent=tmp_path)
    assert fresh.name == "examples" and fresh.parent.parent == tmp_path
    assert (fresh / "plugins" / "p" / "skills" / "s" / "SKILL.md").is_file()


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "example repository not found: ex"),
        ("non-empty", "exists and is not an empty directory"),
        ("inside", "inside the example repository"),
    ],
)
def test_copy_examples_errors(tmp_path: Path, setup: str, message: str) -> None:
    src = _source(tmp_path)
    out = tmp_path / "out"
    if setup == "missing":
        src = tmp_path / "nope"
    elif setup == "non-empty":
        out.mkdir()
        (out / "f").write_text("", encoding="utf-8")
    else:
        out = src / "sub"
    with pytest.raises(UsageError, match=message):
        demo.copy_examples(src, out, label="ex")


def test_demo_policy_is_packaged_and_parses() -> None:
    policy = demo.demo_policy()
    names = [r.name for r in policy.rules]
    assert names[-3:] == ["route", "commitlint-answered-directly-codex", "route-codex"]
    assert "judge-fails-the-rest" in names
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Summarise sales.csv into report.md with totals per region", "csv-report"),
        ("Which files in src/ have no license header?", "license-header"),
        ("Explain the difference between the MIT and Apache-2.0 licenses", None),
        ("Total the amount column of orders.csv", "csv-report"),
    ],
)
def test_example_skills_route_as_documented(query: str, expected: str | None) -> None:
    """The route threshold of the demo policy separates the example queries as docs/demo.md says."""
    from tests.conftest import EXAMPLES

    from evolve_action.repo import parse_frontmatter

    skills = []
    for name in ("csv-report", "license-header"):
        text = (EXAMPLES / "plugins/project-tools/skills" / name / "SKILL.md").read_text("utf-8")
        fm = parse_frontmatter(text)
        assert fm is not None
        skills.append(Skill(name=name, description=fm.fields["description"]))
    scores = {s.name: route_score(query, s) for s in skills}
    best = max(scores, key=lambda n: scores[n])
    assert (best if scores[best] >= 0.25 else None) == expected


def _figures(
    tp: int, tt: int, ep: int, et: int, bp: int, bt: int, pairs: tuple[int, int, int] | None = None
) -> demo.SkillFigures:
    # `pairs` = (cases graded with and without the skill, passed with, passed without); by
    # default every graded eval has a graded baseline.
    n, pw, pb = pairs if pairs is not None else (et, ep, bp)
    return demo.SkillFigures(
        plugin="p",
        skill=f"s{tp}{ep}",
        model="anthropic/m",
        triggers_passed=tp,
        triggers_total=tt,
        evals_passed=ep,
        evals_total=et,
        baseline_passed=bp,
        baseline_total=bt,
        paired_total=n,
        paired_passed=pw,
        paired_baseline_passed=pb,
    )


def test_summary_rounds_halves_away_from_zero_and_the_lift_adds_up(tmp_path: Path) -> None:
    # 7/8 = 87.5 % and 1/8 = 12.5 %: half away from zero gives 88 % and 13 %, and the lift is
    # their difference, +75 (half-to-even printed 88 %, 12 % and +75).
    summary = demo.DemoSummary(
        root=tmp_path, skills=(_figures(1, 2, 7, 8, 1, 8),), report_path=None
    )
    text = demo.render_summary(summary)
    assert "evals (with skill): 7/8 (88%) of cases pass" in text
    assert "evals (baseline):   1/8 (13%) of cases pass" in text
    assert "triggers:           1/2 (50%) of queries pass" in text
    assert "lift:               +75 points from the skills\n" in text


def test_summary_lift_uses_cases_graded_both_ways(tmp_path: Path) -> None:
    # With skill 3/4 graded; baseline 0/2 graded (two baselines errored). The lift compares the
    # same two cases both ways (with 2/2, without 0/2 → +100), not 75 % − 0 %.
    summary = demo.DemoSummary(
        root=tmp_path, skills=(_figures(0, 0, 3, 4, 0, 2, pairs=(2, 2, 0)),), report_path=None
    )
    assert summary.lift == pytest.approx(1.0)
    text = demo.render_summary(summary)
    assert (
        "lift:               +100 points from the skills (over the 2 cases graded both ways)"
        in text
    )


def test_summarise_pairs_eval_results_with_their_baselines(tmp_path: Path) -> None:
    from evolve_action.repo import discover
    from evolve_action.results import (
        EntryHeader,
        EvalResult,
        EvalsEntry,
        EvalSnapshot,
        EvalSummary,
        ModelEntry,
        ResultsFile,
        write_results,
    )

    root = tmp_path / "repo"
    skill = root / "skills" / "s"
    skill.mkdir(parents=True)
    evals_dir = root / "evals" / "s"
    evals_dir.mkdir(parents=True)
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "p"}', "utf-8")
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n", "utf-8")
    (evals_dir / "evals.json").write_text(
        '{"evals": [{"id": 1, "prompt": "p", "expectations": ["e"]}]}', "utf-8"
    )
    head = EntryHeader(provider="anthropic", model="m", display="M", executed=True)
    with_skill = (
        EvalResult(id="1", passed=True),
        EvalResult(id="2", passed=True),
        EvalResult(id="3", runtime_error="boom"),
        EvalResult(id="4", passed=False),
    )
    base = (
        EvalResult(id="1", passed=False),
        EvalResult(id="2", runtime_error="boom"),
        EvalResult(id="3", passed=True),
        EvalResult(id="4", passed=False),
    )
    entry = EvalsEntry(
        header=head,
        results=with_skill,
        summary=EvalSummary(passed=2, failed=1, errored=1, total=4),
        baseline=EvalSnapshot(
            summary=EvalSummary(passed=1, failed=2, errored=1, total=4), results=base
        ),
    )
    write_results(
        evals_dir,
        ResultsFile(plugin="p", skill="s", models={"anthropic/m": ModelEntry(evals=entry)}),
        "json",
    )
    summary = demo.summarise(discover(root, tmp_path))
    (fig,) = summary.skills
    assert (fig.evals_passed, fig.evals_total, fig.baseline_passed, fig.baseline_total) == (
        2,
        3,
        1,
        3,
    )
    # Graded both ways: ids 1 and 4 → with skill 1/2, without 0/2.
    assert (fig.paired_total, fig.paired_passed, fig.paired_baseline_passed) == (2, 1, 0)
    assert summary.lift == pytest.approx(0.5)


def test_summary_rates_lift_and_rendering(tmp_path: Path) -> None:
    summary = demo.DemoSummary(
        root=tmp_path,
        skills=(_figures(6, 7, 2, 2, 0, 2), _figures(7, 7, 1, 2, 1, 2)),
        report_path=tmp_path / "EVALUATION.md",
    )
    assert summary.tier("triggers") == (13, 14)
    assert summary.tier("evals") == (3, 4)
    assert summary.tier("baseline") == (1, 4)
    assert summary.lift == pytest.approx(0.5)
    text = demo.render_summary(summary)
    assert "triggers:           13/14 (93%) of queries pass" in text
    assert "evals (with skill): 3/4 (75%) of cases pass" in text
    assert "evals (baseline):   1/4 (25%) of cases pass" in text
    assert "lift:               +50 points from the skills" in text
    assert f"report:             {tmp_path / 'EVALUATION.md'}" in text


def test_summary_without_results(tmp_path: Path) -> None:
    summary = demo.DemoSummary(root=tmp_path, skills=(), report_path=None)
    assert summary.lift is None
    text = demo.render_summary(summary)
    assert "n/a" in text and "lift" not in text and "report:" not in text


@pytest.mark.parametrize(
    ("installed", "backend", "environ", "expected"),
    [
        (set(), "scripted", {}, (demo.DEFAULT_MODEL,)),
        ({"claude", "codex"}, "scripted", {}, (demo.DEFAULT_MODEL, demo.CODEX_MODEL)),
        ({"claude", "codex"}, "real", {}, (demo.DEFAULT_MODEL,)),  # no OpenAI key: Claude only
        (
            {"claude", "codex"},
            "real",
            {"OPENAI_API_KEY": "k"},
            (demo.DEFAULT_MODEL, demo.CODEX_MODEL),
        ),
    ],
)
def test_demo_adds_an_openai_model_only_when_codex_can_answer(
    monkeypatch: pytest.MonkeyPatch,
    installed: set[str],
    backend: str,
    environ: dict[str, str],
    expected: tuple[str, ...],
) -> None:
    monkeypatch.setattr("evolve_action.flows._demo.available_harnesses", lambda env: installed)
    chosen = demo.Backend.SCRIPTED if backend == "scripted" else demo.Backend.REAL
    assert demo.demo_models(environ, chosen) == expected


@pytest.mark.parametrize("name", ["triggers.jsonc", "triggers.json"])
def test_the_preview_query_keeps_the_authors_comments_and_layout(tmp_path: Path, name: str) -> None:
    """The demo's closing preview adds one query to an authored triggers file: as an edit of the
    text (comments, order and trailing commas kept), never a re-encode that drops comments."""
    from evolve_action.encoding import decode_path

    source = demo.bundled_examples() / "plugins/project-tools/evals/csv-report/triggers.jsonc"
    path = tmp_path / name
    text = source.read_text(encoding="utf-8")
    if name.endswith(".json"):  # strict JSON: no comments, no trailing commas
        text = json.dumps(decode_path(source), indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    before = decode_path(path)
    edited = demo.add_trigger_query(path, "Give me per-region totals")
    path.write_text(edited, encoding="utf-8")
    after = decode_path(path)
    assert after["triggers"] == [
        *before["triggers"],
        {"query": "Give me per-region totals", "should_trigger": True},
    ]
    if name.endswith(".jsonc"):  # every authored line (comments included) is still there
        original = [line for line in text.splitlines() if line.strip()]
        kept = [line for line in edited.splitlines() if line.strip()]
        assert [line for line in original if line in kept] == original
        assert len(kept) == len(original) + 1
        assert "// Should stay quiet." in edited
