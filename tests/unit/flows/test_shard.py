"""Shard planning (cost balance, whole eval sets, the plan id) and the merge's refusals by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve_action import plan
from evolve_action.catalog import BUILTIN_CATALOG, BoundModel
from evolve_action.config import resolve_repository
from evolve_action.errors import SpecError, UsageError
from evolve_action.flows import estimate_cost, merge_fragments, parse_shard
from evolve_action.flows._shard import ShardUnit, fragment_name, split
from evolve_action.harness import Budget


def unit(skill: str, tier: str, sessions: int, model: str = "anthropic/m") -> ShardUnit:
    per = 30 if tier == "triggers" else 120
    return ShardUnit(
        plugin="p",
        skill=skill,
        tier=tier,
        model=model,
        cases=tuple(f"c{i}" for i in range(sessions)),
        sessions=sessions,
        cost_seconds=sessions * per,
    )


def test_split_balances_cost_and_keeps_sets_whole() -> None:
    units = [
        unit("a", "triggers", 10),  # 300
        unit("a", "evals", 5),  # 600 -> set a: 900
        unit("b", "evals", 6),  # 720
        unit("c", "triggers", 20),  # 600
        unit("d", "evals", 1),  # 120
    ]
    sp = split(units, 2)
    assert [s.label for s in sp.shards] == ["1/2", "2/2"]
    assert [s.sets for s in sp.shards] == [(("p", "a"), ("p", "d")), (("p", "b"), ("p", "c"))]
    assert [s.cost_seconds for s in sp.shards] == [1020, 1320]
    # Deterministic, independent of input order within ties; the id tracks the assignment.
    assert split(list(units), 2).plan_id == sp.plan_id
    assert split(units, 3).plan_id != sp.plan_id
    assert split(units[:-1], 2).plan_id != sp.plan_id
    assert sp.to_json()["matrix"] == {"shard": ["1/2", "2/2"]}
    empty = split([], 3)
    assert [len(s.units) for s in empty.shards] == [0, 0, 0]


@pytest.mark.parametrize("bad", ["0/4", "5/4", "1", "a/b", "1/0"])
def test_parse_shard_rejects(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_shard(bad)


def test_parse_shard_accepts() -> None:
    assert parse_shard("3/4") == (3, 4)


def test_fragment_names_are_safe() -> None:
    assert fragment_name("p", "s", "evals", "anthropic/claude x") == (
        "p--s--evals--anthropic--claude_x.json"
    )


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin/plugin.json").write_text('{"name": "p", "version": "1.0.0"}')
    (root / "skills/s").mkdir(parents=True)
    (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\n")
    (root / "evals/s").mkdir(parents=True)
    (root / "evals/s/triggers.json").write_text('{"triggers": []}')
    return root


def _manifest(d: Path, plan_id: str, shard: str) -> None:
    d.mkdir(parents=True, exist_ok=True)
    i, n = shard.split("/")
    (d / f"shard-{i}-of-{n}.json").write_text(
        json.dumps({"kind": "evolve-action-shard", "plan_id": plan_id, "shard": shard, "units": []})
    )


def test_merge_names_missing_duplicate_and_foreign_shards(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    repository, config = resolve_repository(root, root, None, {})
    _manifest(tmp_path / "f1", "aaa", "1/3")
    _manifest(tmp_path / "f2", "aaa", "1/3")
    _manifest(tmp_path / "f3", "aaa", "2/3")
    _manifest(tmp_path / "f4", "bbb", "3/3")
    dirs = [tmp_path / f"f{i}" for i in range(1, 5)]
    with pytest.raises(SpecError) as info:
        merge_fragments(repository, config, dirs, report=False)
    msg = info.value.message
    assert "duplicate shard 1/3" in msg
    assert "foreign shard 3/3 (plan bbb)" in msg
    assert "missing shard 3/3" in msg
    assert not (root / "evals/s/results.json").exists()
    outcome = merge_fragments(repository, config, dirs, allow_missing=True, report=False)
    assert outcome.plan_id == "aaa"
    assert len(outcome.problems) == 3
    assert outcome.merged == ()


def test_merge_without_manifests_refuses(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    repository, config = resolve_repository(root, root, None, {})
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecError, match="no shard manifest"):
        merge_fragments(repository, config, [tmp_path / "empty"], report=False)


def _bound(key: str) -> BoundModel:
    [model] = BUILTIN_CATALOG.match([key])
    return BoundModel(model=model, harness="claude", cli_model=model.id)


def _planned(tier: plan.Tier, model: str, cases: list[tuple[str, bool]]) -> plan.Plan:
    planned = tuple(
        plan.PlannedCase(
            plugin="p",
            skill="s",
            model=model,
            tier=tier,
            case=text,
            reason=plan.Reason.SELECTED,
            baseline=baseline,
        )
        for text, baseline in cases
    )
    unit = plan.PlannedUnit(plugin="p", skill="s", model=model, tier=tier, cases=planned)
    return plan.Plan(units=(unit,))


def test_estimate_counts_sessions_and_prices_them_per_model() -> None:
    sonnet, opus = _bound("anthropic/claude-sonnet-5"), _bound("anthropic/claude-opus-5")
    plans = [
        _planned(plan.Tier.TRIGGERS, sonnet.model.key, [("q1", False), ("q2", False)]),
        _planned(plan.Tier.EVALS, sonnet.model.key, [("e1", True), ("e2", False)]),
        _planned(plan.Tier.TRIGGERS, opus.model.key, [("q1", False)]),
    ]
    est = estimate_cost(plans, runs=3, models=[sonnet, opus])
    # Triggers: runs per query; evals: one per case plus one per baseline.
    assert dict(est.sessions) == {sonnet.model.key: 2 * 3 + 3, opus.model.key: 3}
    prior = Budget()
    # The prompt cache (issue 40): per tier and model, the first session writes the shared
    # prefix, every other one finds it cached.
    want_sonnet = (
        prior.estimate_usd("triggers", sonnet, 1, 3)
        + prior.estimate_usd("triggers", sonnet, 1, 3, prefix_cached=True)
        + prior.estimate_usd("evals", sonnet, 1, 2)
        + prior.estimate_usd("evals", sonnet, 1, 1, prefix_cached=True)
    )
    assert est.usd[sonnet.model.key] == pytest.approx(want_sonnet)
    uncached = prior.estimate_usd("triggers", sonnet, 1, 1)
    assert uncached > prior.session_estimate_usd("triggers", sonnet, 1)  # the write costs more
    # A pricier model costs more for the same sessions.
    assert (est.usd[opus.model.key] or 0) > 3 * prior.session_estimate_usd("triggers", sonnet, 1)
    assert est.total_sessions == 12
    assert est.total_usd == pytest.approx(sum(v or 0 for v in est.usd.values()))
    text = est.line()
    assert text.startswith(
        f"estimate: 12 agent sessions, about ${est.total_usd:.2f} at list prices"
    )
    assert f"{sonnet.model.key}      9 sessions  ${want_sonnet:.2f}" in text


def test_estimate_of_nothing_and_of_an_unpriced_model() -> None:
    assert estimate_cost([], runs=3, models=[]).line() == "estimate: no agent sessions, $0.00\n"
    est = estimate_cost(
        [_planned(plan.Tier.EVALS, "acme/custom", [("e1", False)])], runs=3, models=[]
    )
    assert dict(est.sessions) == {"acme/custom": 1} and est.usd["acme/custom"] is None
    assert "no catalog price" in est.line()
    assert est.to_json()["models"] == {"acme/custom": {"sessions": 1, "usd": None}}
