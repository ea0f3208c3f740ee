"""A dry run exits as the run would, `--json` is JSON lines, and the messages say what to do.

Issue 12 item 6, on a copy of the example marketplace: a model no harness here can run stops the
dry run with the run's own error; every `--json` command's stdout parses line by line; the root
config is read from a plugin directory; an option of another command names the commands that
take it; `--layout` on the wrong kind says what is there.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

from evolve_action.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NO_HARNESS = "error: no model to run: no selected model has an available harness"


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


@pytest.mark.parametrize("tier", ["triggers", "evals"])
def test_a_dry_run_with_no_runnable_model_exits_as_the_run_does(repo: Path, tier: str) -> None:
    dry = run(["run", tier, "--dry-run", "--model", "xai/grok-4.6"], repo)
    assert dry[0] == 2
    assert NO_HARNESS in dry[2]
    assert dry[1] == ""  # no plan of zero cases on stdout


def test_run_all_dry_run_says_the_trigger_tier_is_skipped(repo: Path) -> None:
    code, _, err = run(["run", "all", "--dry-run", "--model", "xai/grok-4.6"], repo)
    assert code == 0
    assert "warn: triggers: no model has an available harness; skipped" in err


@pytest.mark.parametrize(
    "command",
    [
        ["run", "checks"],
        ["run", "triggers", "--dry-run"],
        ["run", "evals", "--dry-run"],
        ["run", "all", "--dry-run"],
        ["plan", "--shards", "2"],
    ],
)
def test_json_output_is_json_lines(repo: Path, command: list[str]) -> None:
    code, out, _ = run([*command, "--json"], repo)
    assert code == 0
    lines = out.splitlines()
    assert lines
    for line in lines:
        assert isinstance(json.loads(line), dict), line


def test_run_all_json_reports_each_step_as_an_event(repo: Path) -> None:
    _, out, _ = run(["run", "all", "--dry-run", "--json"], repo)
    first = json.loads(out.splitlines()[0])
    assert first == {"event": "ChecksDone", "failures": 0, "layout": "marketplace"}


def test_the_root_config_is_read_from_a_plugin_directory(repo: Path) -> None:
    # examples/.evolve.yaml opts in to evolve's conventions (checks.license: MIT).
    plugin = repo / "plugins" / "release-tools"
    code, _, err = run(["run", "checks", "--no-signals"], plugin)
    assert code == 0, err
    assert "license" not in err and "Claude Code's and the Agent Skills rules" not in err
    (repo / ".evolve.yaml").unlink()
    code, _, err = run(["run", "checks", "--no-signals"], plugin)
    assert "Claude Code's and the Agent Skills rules" in err  # its .codex-plugin/ opts in no more


def test_the_config_search_stops_at_the_git_top(repo: Path) -> None:
    (repo / "plugins" / "release-tools" / ".git").mkdir()  # a plugin that is its own git repo
    _, _, err = run(["run", "checks", "--no-signals"], repo / "plugins" / "release-tools")
    assert "Claude Code's and the Agent Skills rules" in err


def test_an_option_of_another_command_names_the_commands_that_take_it(repo: Path) -> None:
    code, out, err = run(["run", "evals", "--runs", "3"], repo)
    assert code == 2
    assert out == ""
    assert err.splitlines() == [
        "error: run evals: unknown option --runs 3 (it belongs to run triggers, run all, demo, pr, plan)",
        "  hint: see `evolve-action run evals --help`",
    ]


def test_a_forced_layout_of_the_wrong_kind_says_what_is_there(repo: Path) -> None:
    code, _, err = run(["run", "checks", "--layout", "single"], repo)
    assert code == 2
    assert err.splitlines() == [
        f"error: --layout single: {repo} has no .claude-plugin/plugin.json; it is a marketplace "
        "repository (.claude-plugin/marketplace.json)",
        "  hint: drop --layout (auto-detects marketplace), or pass --layout marketplace",
    ]


@pytest.mark.parametrize(
    ("argv", "sessions"),
    [
        # 4 skills × 7 queries × 3 runs; 4 skills × 2 evals, each with its baseline; both.
        (["run", "triggers", "--dry-run"], 84),
        (["run", "evals", "--dry-run"], 16),
        (["run", "all", "--dry-run"], 100),
    ],
)
def test_a_dry_run_prices_what_it_would_run(repo: Path, argv: list[str], sessions: int) -> None:
    """Cost before spending: sessions and dollars per model and in total, from the same plan."""
    model = "anthropic/claude-sonnet-5"
    code, out, err = run([*argv, "--model", model, "--root", str(repo)], repo)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("estimate: "))
    assert line.startswith(f"estimate: {sessions} agent sessions, about $")
    assert f"{model}  {sessions:>5} sessions  $" in out
    code, out, err = run([*argv, "--json", "--model", model, "--root", str(repo)], repo)
    assert all("case" in json.loads(x) or "event" in json.loads(x) for x in out.splitlines())
    assert f"estimate: {sessions} agent sessions" in err  # stdout stays JSON lines


def test_plan_json_carries_the_estimate(repo: Path) -> None:
    code, out, err = run(["plan", "--json", "--shards", "2", "--root", str(repo)], repo)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["estimate"]["sessions"] == sum(s["sessions"] for s in doc["shards"])
    planned = {u["model"] for s in doc["shards"] for u in s["units"]}
    assert set(doc["estimate"]["models"]) == planned  # every model the plan runs, priced
    # No --model and no config `models`: the one default model, never the whole catalog.
    assert planned == {"anthropic/claude-sonnet-5"}
    code, out, err = run(
        ["plan", "--json", "--shards", "2", "--model", "all", "--root", str(repo)], repo
    )
    assert code == 0, err
    doc = json.loads(out)
    planned = {u["model"] for s in doc["shards"] for u in s["units"]}
    assert len(planned) >= 6  # `--model all`: the catalog's Claude models, Codex's when installed


@pytest.mark.parametrize("argv", [["run", "all"], ["run", "triggers"], ["run", "evals"]])
def test_without_model_or_config_one_default_model_named_first(repo: Path, argv: list[str]) -> None:
    code, out, err = run([*argv, "--dry-run", "--root", str(repo)], repo)
    assert code == 0, err
    assert out.splitlines()[0].startswith("model: anthropic/claude-sonnet-5 (the default"), out
    units = [line for line in out.splitlines() if "anthropic/" in line and "sessions" in line]
    assert units and all("anthropic/claude-sonnet-5" in line for line in units), out


@pytest.mark.parametrize("argv", [["run", "all"], ["run", "triggers"], ["run", "evals"]])
def test_a_run_estimated_above_the_threshold_stops_before_any_session(
    repo: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No terminal (CI, a pipe): exit 2 naming the estimate and the way on; nothing written."""
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    env = {"PATH": os.environ["PATH"], "HOME": str(repo.parent / "home")}
    env["EVOLVE_CONFIRM_ABOVE_USD"] = "0.01"
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--root", str(repo)], env, stdout=out, stderr=err, cwd=repo)
    assert code == 2, out.getvalue() + err.getvalue()
    assert "above the confirmation threshold of $0.01" in err.getvalue()
    assert "pass --yes to run it, or --max-cost-usd USD" in err.getvalue()
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before


def test_the_question_is_skipped_with_yes_a_cap_or_the_free_scripted_server(tmp_path: Path) -> None:
    import argparse

    from evolve_action.cli._common import Invocation, confirm_cost
    from evolve_action.errors import UsageError
    from evolve_action.flows import CostEstimate

    estimate = CostEstimate(
        sessions={"anthropic/claude-sonnet-5": 100}, usd={"anthropic/claude-sonnet-5": 20.9}
    )

    def inv(env: dict[str, str], **flags: object) -> Invocation:
        values: dict[str, object] = {"yes": False, "max_cost_usd": None, **flags}
        return Invocation(
            args=argparse.Namespace(**values),
            environ=env,
            stdout=io.StringIO(),
            stderr=io.StringIO(),
            cwd=tmp_path,
        )

    with pytest.raises(UsageError, match=r"about \$20.90 at list prices, above .* of \$5.00"):
        confirm_cost(inv({}), estimate, command="run all")
    confirm_cost(inv({}, yes=True), estimate, command="run all")
    confirm_cost(inv({}, max_cost_usd=3.0), estimate, command="run all")
    confirm_cost(inv({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8123"}), estimate, command="run all")
    confirm_cost(inv({"EVOLVE_CONFIRM_ABOVE_USD": "25"}), estimate, command="run all")
    with pytest.raises(UsageError, match="EVOLVE_CONFIRM_ABOVE_USD=lots"):
        confirm_cost(inv({"EVOLVE_CONFIRM_ABOVE_USD": "lots"}), estimate, command="run all")


def test_run_all_plans_each_tier_once_and_confirms_on_that_plan(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40 item 6: the cost confirmation sees the plans the run would execute, and neither
    tier is planned a second time for it (before: a whole silent dry run, then the run's own)."""
    from evolve_action import evals, triggers

    calls = {"triggers": 0, "evals": 0}
    make_plan, plan_evals = triggers.make_plan, evals.plan_evals

    def counted_make_plan(*a: object, **k: object) -> object:
        calls["triggers"] += 1
        return make_plan(*a, **k)  # type: ignore[arg-type]

    def counted_plan_evals(*a: object, **k: object) -> object:
        calls["evals"] += 1
        return plan_evals(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(triggers, "make_plan", counted_make_plan)
    monkeypatch.setattr(evals, "plan_evals", counted_plan_evals)
    env = {"PATH": os.environ["PATH"], "HOME": str(repo.parent / "home")}
    env["EVOLVE_CONFIRM_ABOVE_USD"] = "1000"  # confirmed: the run goes on to its credentials
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "all", "--root", str(repo)], env, stdout=out, stderr=err, cwd=repo)
    assert code == 2, out.getvalue() + err.getvalue()  # no credentials: stops before any session
    assert calls == {"triggers": 1, "evals": 1}, err.getvalue()
