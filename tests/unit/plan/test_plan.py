"""Unit tests for planning: reasons per case × model, filters, order, output, sharding, inputs."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from evolve_action import plan as P
from evolve_action import plan as fingerprint
from evolve_action import repo
from evolve_action import results as R
from evolve_action.errors import UsageError

HAIKU = P.PlanModel(
    key="anthropic/claude-haiku-4-5",
    provider="anthropic",
    model="claude-haiku-4-5",
    harness="claude",
)
GPT = P.PlanModel(key="openai/gpt-5.4", provider="openai", model="gpt-5.4", harness="codex")
NEW = P.Selection(new=True)
MOD = P.Selection(modified=True)
FAIL = P.Selection(failed=True)


def trig(passed: bool | None = True, spec: str = "h", **kw: object) -> R.TriggerResult:
    base: dict[str, object] = {
        "query": "q",
        "hits": 3,
        "runs": 3,
        "passed": passed,
        "avg_run_seconds": 1.0,
    }
    base.update(kw)
    return R.TriggerResult(spec_hash=spec, **base)  # type: ignore[arg-type]


# A query whose runs all errored: stored with no hits, runs, verdict or timing.
ERRORED_Q = trig(None, hits=None, runs=None, avg_run_seconds=None)


def test_failed_skips_verdictless_queries_of_a_count_only_entry() -> None:
    # A count-only entry's queries have no verdict either, but they never ran: `--failed` leaves
    # them alone (evolve's behaviour); `--new` is what fills them in.
    got = P.trigger_reason(
        ERRORED_Q,
        fresh_spec_hash="h",
        stored_content_hash="c",
        fresh_content_hash="c",
        selection=FAIL,
        executes=True,
        stored_executed=False,
    )
    assert got is P.Reason.NONE


FULL_MEASURE = R.Measured(input_tokens=1, output_tokens=2, cost_usd=0.1)
TIMING = R.Timing(executor_duration_seconds=1.0)


def ev(passed: bool | None = True, spec: str = "f", **kw: object) -> R.EvalResult:
    base: dict[str, object] = {
        "id": "1",
        "passed": passed,
        "timing": TIMING,
        "measured": FULL_MEASURE,
    }
    base.update(kw)
    return R.EvalResult(spec_hash=spec, **base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("stored", "sel", "executes", "stored_content", "expected"),
    [
        (None, P.Selection(), True, "c", P.Reason.SELECTED),
        (trig(), P.Selection(), True, "c", P.Reason.SELECTED),
        (None, NEW, True, "c", P.Reason.NEW),
        (trig(), NEW, True, "c", P.Reason.NONE),
        (trig(hits=None), NEW, True, "c", P.Reason.INCOMPLETE),
        (trig(avg_run_seconds=None), NEW, True, "c", P.Reason.INCOMPLETE),
        (trig(passed=None), NEW, False, "c", P.Reason.NONE),
        (trig(False), FAIL, True, "c", P.Reason.FAILED),
        (trig(False), FAIL, False, "c", P.Reason.NONE),
        (trig(True), FAIL, True, "c", P.Reason.NONE),
        (None, FAIL, True, "c", P.Reason.NONE),
        (ERRORED_Q, FAIL, True, "c", P.Reason.ERRORED),
        (ERRORED_Q, FAIL, False, "c", P.Reason.NONE),
        (ERRORED_Q, P.Selection(failed=True, new=True), True, "c", P.Reason.ERRORED),
        (trig(spec="old"), MOD, True, "c", P.Reason.MODIFIED),
        (trig(), MOD, True, "other", P.Reason.MODIFIED),
        (trig(), MOD, True, "", P.Reason.NONE),
        (trig(spec=""), MOD, True, "other", P.Reason.NONE),
        (None, MOD, True, "c", P.Reason.NONE),
        (
            trig(False, spec="old"),
            P.Selection(failed=True, modified=True),
            True,
            "c",
            P.Reason.FAILED,
        ),
        (
            trig(spec="old", hits=None),
            P.Selection(new=True, modified=True),
            True,
            "c",
            P.Reason.MODIFIED,
        ),
    ],
    ids=[
        "no-flags-missing",
        "no-flags-stored",
        "new-missing",
        "new-complete",
        "new-no-hits",
        "new-no-seconds",
        "new-count-only-ignores-incomplete",
        "failed",
        "failed-count-only",
        "failed-passing",
        "failed-missing",
        "failed-all-runs-errored",
        "failed-all-runs-errored-count-only",
        "failed-errored-before-incomplete",
        "modified-spec",
        "modified-content",
        "legacy-empty-content",
        "legacy-empty-spec",
        "modified-missing",
        "failed-before-modified",
        "modified-before-incomplete",
    ],
)
def test_trigger_reason(
    stored: R.TriggerResult | None,
    sel: P.Selection,
    executes: bool,
    stored_content: str,
    expected: P.Reason,
) -> None:
    got = P.trigger_reason(
        stored,
        fresh_spec_hash="h",
        stored_content_hash=stored_content,
        fresh_content_hash="c",
        selection=sel,
        executes=executes,
    )
    assert got is expected


@pytest.mark.parametrize(
    ("stored", "sel", "usage", "priced", "expected"),
    [
        (None, NEW, True, True, P.Reason.NEW),
        (ev(), NEW, True, True, P.Reason.NONE),
        (ev(runtime_error="boom", passed=None), NEW, True, True, P.Reason.ERRORED),
        (ev(runtime_error="boom", passed=None), FAIL, True, True, P.Reason.ERRORED),
        (ev(False), FAIL, True, True, P.Reason.FAILED),
        (ev(passed=None), NEW, True, True, P.Reason.INCOMPLETE),
        (ev(timing=None), NEW, True, True, P.Reason.INCOMPLETE),
        (ev(timing=R.Timing(total_tokens=1)), NEW, True, True, P.Reason.INCOMPLETE),
        (ev(measured=None), NEW, True, True, P.Reason.MISSING_INPUT_TOKENS),
        (ev(measured=None), NEW, False, False, P.Reason.NONE),
        (
            ev(measured=R.Measured(input_tokens=1, cost_usd=0.1)),
            NEW,
            True,
            True,
            P.Reason.MISSING_OUTPUT_TOKENS,
        ),
        (
            ev(measured=R.Measured(input_tokens=1, output_tokens=1)),
            NEW,
            True,
            True,
            P.Reason.MISSING_COSTS,
        ),
        (ev(measured=R.Measured(input_tokens=1, output_tokens=1)), NEW, True, False, P.Reason.NONE),
        (ev(measured=None), NEW, False, True, P.Reason.MISSING_COSTS),
        (ev(spec="old"), MOD, True, True, P.Reason.MODIFIED),
        (ev(), MOD, True, True, P.Reason.NONE),
    ],
    ids=[
        "new",
        "complete",
        "new-errored",
        "failed-errored",
        "failed",
        "no-verdict",
        "no-timing",
        "no-executor-seconds",
        "no-measured",
        "no-measured-no-usage-unpriced",
        "no-output-tokens",
        "no-cost-priced",
        "no-cost-unpriced",
        "no-usage-harness-priced",
        "modified",
        "up-to-date",
    ],
)
def test_eval_reason(
    stored: R.EvalResult | None, sel: P.Selection, usage: bool, priced: bool, expected: P.Reason
) -> None:
    got = P.eval_reason(
        stored,
        fresh_fingerprint="f",
        stored_content_hash="c",
        fresh_content_hash="c",
        selection=sel,
        executes=True,
        reports_usage=usage,
        priced=priced,
    )
    assert got is expected


def entry_t(*results: R.TriggerResult, content: str = "c") -> R.TriggersEntry:
    return R.TriggersEntry(
        header=R.EntryHeader(executed=True, content_hash=content), results=results
    )


def entry_e(
    *results: R.EvalResult, baseline: tuple[R.EvalResult, ...] | None = None, content: str = "c"
) -> R.EvalsEntry:
    snap = R.EvalSnapshot(results=baseline) if baseline is not None else None
    return R.EvalsEntry(
        header=R.EntryHeader(executed=True, content_hash=content), results=results, baseline=snap
    )


def make_set(
    skill: str = "s",
    plugin: str = "p",
    *,
    queries: tuple[str, ...] = ("a", "b"),
    ids: tuple[str, ...] = ("1", "2"),
    models: dict[str, R.ModelEntry] | None = None,
    restriction: tuple[str, ...] = (),
) -> P.SetInput:
    return P.SetInput(
        plugin=plugin,
        skill=skill,
        restriction=restriction,
        triggers=tuple(P.TriggerCaseInput(query=q, spec_hash="h") for q in queries),
        evals=tuple(P.EvalCaseInput(id=i, fingerprint="f") for i in ids),
        trigger_content_hash="c",
        eval_content_hash="c",
        stored=R.ResultsFile(plugin=plugin, skill=skill, models=models or {}),
    )


def test_sweep_order_and_no_flags() -> None:
    sets = [make_set("s1"), make_set("s2")]
    p = P.plan(sets, [HAIKU, GPT], P.Selection())
    assert [(u.skill, u.model, str(u.tier)) for u in p.units] == [
        ("s1", HAIKU.key, "triggers"),
        ("s1", HAIKU.key, "evals"),
        ("s1", GPT.key, "triggers"),
        ("s1", GPT.key, "evals"),
        ("s2", HAIKU.key, "triggers"),
        ("s2", HAIKU.key, "evals"),
        ("s2", GPT.key, "triggers"),
        ("s2", GPT.key, "evals"),
    ]
    assert all(c.reason is P.Reason.SELECTED for c in p.cases)
    assert len(p.cases) == 16
    assert p.units[0].valid_keys == ("a", "b")


def test_skip_reason_tells_never_run_from_complete() -> None:
    """`--modified` on a set that never ran plans nothing and says why (not "results complete")."""
    p = P.plan([make_set("s1")], [HAIKU], P.Selection(modified=True))
    assert all(not u.cases for u in p.units)
    assert [u.never_run for u in p.units] == [2, 2]
    assert p.units[0].skip_reason == "2 never run; select them with --new"
    assert "skip: 2 never run; select them with --new" in P.render(p)
    assert P.PlannedUnit(plugin="p", skill="s", model="m", tier=P.Tier.TRIGGERS).skip_reason == (
        "results complete"
    )


def test_filters_plugin_skill_model_tier_eval() -> None:
    sets = [make_set("s1", "p1"), make_set("s2", "p1"), make_set("s1", "p2")]
    p = P.plan(sets, [HAIKU, GPT], P.Selection(plugins=("p1",), skills=("s1",), models=("openai",)))
    assert {(u.plugin, u.skill, u.model) for u in p.units} == {("p1", "s1", GPT.key)}
    p = P.plan(sets, [HAIKU], P.Selection(tiers=(P.Tier.EVALS,), eval_ids=("2",)))
    assert [c.case for c in p.cases] == ["2", "2", "2"]
    assert p.units[0].valid_keys == ("1", "2")  # `--eval` does not narrow what the entry keeps
    p = P.plan(sets, [HAIKU], P.Selection(tiers=(P.Tier.EVALS,), eval_ids=("nope",)))
    assert p.units == ()


def test_model_restriction_applies_to_both_tiers() -> None:
    p = P.plan([make_set(restriction=(" anthropic ",))], [HAIKU, GPT], P.Selection())
    assert {u.model for u in p.units} == {HAIKU.key}
    p = P.plan([make_set(restriction=("gpt-5.4",))], [HAIKU, GPT], P.Selection())
    assert {u.model for u in p.units} == {GPT.key}
    p = P.plan([make_set(restriction=("all",))], [HAIKU, GPT], P.Selection())
    assert len({u.model for u in p.units}) == 2


def test_modified_plans_only_changed_cases_per_model() -> None:
    models = {
        HAIKU.key: R.ModelEntry(
            triggers=entry_t(trig(query="a"), trig(query="b", spec="old")),
            evals=entry_e(
                ev(id="1"),
                ev(id="2"),
                baseline=(ev(id="1", fingerprint="f"), ev(id="2", fingerprint="f")),
            ),
        ),
        GPT.key: R.ModelEntry(triggers=entry_t(trig(query="a"), trig(query="b"), content="stale")),
    }
    p = P.plan([make_set(models=models)], [HAIKU, GPT], MOD)
    got = [(c.model, str(c.tier), c.case, str(c.reason)) for c in p.cases]
    assert got == [
        (HAIKU.key, "triggers", "b", "modified"),
        (GPT.key, "triggers", "a", "modified"),
        (GPT.key, "triggers", "b", "modified"),
    ]
    skipped = [(u.model, str(u.tier)) for u in p.units if not u.runs]
    # GPT's evals have no stored results: nothing is modified there either.
    assert skipped == [(HAIKU.key, "evals"), (GPT.key, "evals")]


def test_baseline_need() -> None:
    stored = entry_e(ev(id="1"), ev(id="2"), baseline=(ev(id="1", fingerprint="old"),))
    assert P.needs_baseline(None, "1", "f")
    assert P.needs_baseline(entry_e(ev()), "1", "f")
    assert P.needs_baseline(stored, "1", "f")
    assert P.needs_baseline(stored, "2", "f")
    assert not P.needs_baseline(entry_e(baseline=(ev(id="1", fingerprint="f"),)), "1", "f")
    models = {HAIKU.key: R.ModelEntry(evals=stored)}
    p = P.plan(
        [make_set(ids=("1", "2", "3"), models=models)],
        [HAIKU],
        P.Selection(failed=True, tiers=(P.Tier.EVALS,)),
    )
    assert [(c.case, c.reason, c.baseline) for c in p.cases] == [
        ("1", P.Reason.NEEDS_BASELINE, True),
        ("2", P.Reason.NEEDS_BASELINE, True),
    ]  # "3" has no stored result: that is --new's job
    p = P.plan(
        [make_set(ids=("1",), models=models)],
        [HAIKU],
        P.Selection(failed=True, baseline=False, tiers=(P.Tier.EVALS,)),
    )
    assert p.cases == ()
    p = P.plan([make_set(ids=("3",), models=models)], [HAIKU], P.Selection(tiers=(P.Tier.EVALS,)))
    assert [(c.reason, c.baseline) for c in p.cases] == [(P.Reason.SELECTED, True)]


def test_stale_tier() -> None:
    fresh = {"a": "h"}
    assert not P.stale_tier([entry_t(trig(query="a"))], fresh_specs=fresh, fresh_content_hash="c")
    assert P.stale_tier(
        [None, entry_t(trig(query="a"), content="x")], fresh_specs=fresh, fresh_content_hash="c"
    )
    assert P.stale_tier([entry_t(trig(query="gone"))], fresh_specs=fresh, fresh_content_hash="c")
    assert P.stale_tier(
        [entry_e(ev(id="1", spec="x"))], fresh_specs={"1": "f"}, fresh_content_hash="c"
    )


def test_json_lines_and_render() -> None:
    models = {
        HAIKU.key: R.ModelEntry(
            triggers=entry_t(trig(query="a"), trig(query="b <é>", passed=False))
        )
    }
    # An evals file without evals has no unit at all.
    p = P.plan([make_set(queries=("a", "b <é>"), ids=(), models=models)], [HAIKU], FAIL)
    lines = P.to_json_lines(p).splitlines()
    assert [json.loads(x) for x in lines] == [
        {
            "plugin": "p",
            "skill": "s",
            "model": HAIKU.key,
            "tier": "triggers",
            "case": "b <é>",
            "reason": "failed",
        }
    ]
    assert "é" in lines[0]
    text = P.render(p)
    assert text.splitlines() == [
        f"=== p/s / {HAIKU.key} / triggers: 1 to run ===",
        "  not passing            b <é>",
        "plan: 1 case(s) in 1 unit(s) to run (1 triggers); 0 unit(s) up to date",
    ]


def test_shard_by_set_is_a_stable_partition() -> None:
    sets = [make_set(f"s{i}", queries=tuple(f"q{j}" for j in range(i + 1))) for i in range(5)]
    p = P.plan(sets, [HAIKU, GPT], P.Selection())
    parts = [P.shard(p, i, 3) for i in range(3)]
    seen = collections.Counter((u.skill, u.model, u.tier) for part in parts for u in part.units)
    assert len(seen) == len(p.units) and set(seen.values()) == {1}
    for part in parts:  # every unit of a results file stays in one shard
        for u in part.units:
            assert all(
                v.skill != u.skill for other in parts if other is not part for v in other.units
            )
    loads = [len(part.cases) for part in parts]
    assert sum(loads) == len(p.cases) and max(loads) - min(loads) <= 6
    assert [P.shard(p, i, 3) for i in range(3)] == parts
    by_unit = [P.shard(p, i, 4, by="unit") for i in range(4)]
    assert sum(len(x.units) for x in by_unit) == len(p.units)
    with pytest.raises(UsageError):
        P.shard(p, 3, 3)


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def test_build_inputs_and_plan_on_a_fixture_repo(tmp_path: Path) -> None:
    write(tmp_path, ".claude-plugin/plugin.json", '{"name": "demo"}')
    skill_md = write(
        tmp_path, "skills/greet/SKILL.md", "---\nname: greet\ndescription: Greets.\n---\nBody\n"
    )
    write(
        tmp_path,
        "evals/greet/triggers.json",
        json.dumps({"triggers": [{"query": "hi", "should_trigger": True}, {"query": "bye"}]}),
    )
    write(
        tmp_path,
        "evals/greet/evals.json",
        json.dumps(
            {"models": ["anthropic"], "evals": [{"id": 1, "prompt": "p", "expectations": ["x"]}]}
        ),
    )
    r = repo.discover(tmp_path, tmp_path)
    built = P.build_inputs(r.eval_sets(), root=tmp_path)
    assert built.warnings == []
    (s,) = built.sets
    assert s.restriction == ("anthropic",)
    assert s.triggers is not None and [c.query for c in s.triggers] == ["hi", "bye"]
    assert s.triggers[0].spec_hash == fingerprint.trigger_spec_hash("hi", True)
    assert s.evals is not None and s.evals[0].id == "1"
    assert s.trigger_content_hash == fingerprint.skill_content_hash(skill_md)
    assert s.stored is None
    p = P.plan(built.sets, [HAIKU, GPT], NEW)
    assert [(c.model, c.case) for c in p.cases] == [
        (HAIKU.key, "hi"),
        (HAIKU.key, "bye"),
        (HAIKU.key, "1"),
    ]

    # Store complete results for everything, then edit one query: only it is modified.
    header = R.EntryHeader(executed=True, content_hash=s.trigger_content_hash)
    trig_results = tuple(trig(query=c.query, spec=c.spec_hash) for c in s.triggers)
    file = R.ResultsFile(
        plugin="demo",
        skill="greet",
        models={
            HAIKU.key: R.ModelEntry(triggers=R.TriggersEntry(header=header, results=trig_results))
        },
    )
    R.write_results(tmp_path / "evals" / "greet", file, "json")
    built = P.build_inputs(r.eval_sets(), root=tmp_path, tiers=(P.Tier.TRIGGERS,))
    assert P.plan(built.sets, [HAIKU], MOD).cases == ()
    write(
        tmp_path,
        "evals/greet/triggers.json",
        json.dumps({"triggers": [{"query": "hi", "should_trigger": False}, {"query": "bye"}]}),
    )
    built = P.build_inputs(r.eval_sets(), root=tmp_path, tiers=(P.Tier.TRIGGERS,))
    assert [c.case for c in P.plan(built.sets, [HAIKU], MOD).cases] == ["hi"]
    # A description edit (frontmatter) makes every stored query of that skill modified.
    skill_md.write_text(
        "---\nname: greet\ndescription: Greets people.\n---\nBody\n", encoding="utf-8"
    )
    built = P.build_inputs(r.eval_sets(), root=tmp_path, tiers=(P.Tier.TRIGGERS,))
    assert [c.case for c in P.plan(built.sets, [HAIKU], MOD).cases] == ["hi", "bye"]


def test_corpus_modified_plans_exactly_the_stale_entries(corpus: Path) -> None:
    from evolve_action import catalog

    cfg = json.loads((corpus / ".evolve.json").read_text(encoding="utf-8"))
    sel = catalog.resolve_models(
        catalog.BUILTIN_CATALOG, config_models=cfg["models"], config_harnesses=cfg["harnesses"]
    )
    models = [P.PlanModel.from_bound(b) for b in sel.models]
    r = repo.discover(corpus, corpus)
    built = P.build_inputs(r.eval_sets(), root=corpus)
    assert len(built.sets) == 21 and built.warnings == []
    trig_plan = P.plan(built.sets, models, P.Selection(modified=True, tiers=(P.Tier.TRIGGERS,)))
    # Independent count: stored trigger results whose spec or entry content hash differ now.
    expected = 0
    keys = {m.key for m in models}
    for s in built.sets:
        assert s.stored is not None and s.triggers is not None
        fresh = {c.query: c.spec_hash for c in s.triggers}
        for k, m in s.stored.models.items():
            if k in keys and m.triggers is not None:
                expected += sum(
                    1
                    for x in m.triggers.results
                    if x.query in fresh
                    and P.is_modified(
                        x.spec_hash,
                        m.triggers.header.content_hash,
                        fresh[x.query],
                        s.trigger_content_hash,
                    )
                )
    assert len(trig_plan.cases) == expected > 0
    assert {c.reason for c in trig_plan.cases} == {P.Reason.MODIFIED}
