"""Scale-out: plan shards, run one shard into result fragments, merge fragments into results.

Owns: `ShardPlan` (`plan_shards`: the planned units of `run all` split into N shards balanced by
estimated cost, sessions × expected seconds, never splitting a unit and keeping each eval set, so
each results file, in one shard), `run_shard` (one shard of `run all`; with a fragments directory
it runs on a scratch copy of the repository and writes one fragment per unit plus a shard manifest,
touching no results file) and `merge_fragments` (fragments folded into the results files in unit-key
order, then the report). Guarantees: the shard plan and its id are a pure function of the plan; the
merge is independent of the order of its inputs; a missing, duplicate or foreign-plan shard is named
and refuses the merge unless `allow_missing`. Never does: print or parse argv.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolve_action import encoding, plan, results
from evolve_action.catalog import BoundModel
from evolve_action.config import Config, resolve_repository, resolve_results_format
from evolve_action.errors import SpecError, UsageError
from evolve_action.events import Reporter
from evolve_action.flows._report import ReportOptions, ReportOutcome, regenerate_report
from evolve_action.flows._run_all import (
    EvalsReady,
    RunAllOptions,
    RunAllOutcome,
    RunAllStep,
    TriggersReady,
    run_all,
)
from evolve_action.harness import Budget, deferred_signals
from evolve_action.repo import Repository

__all__ = [
    "EXPECTED_SECONDS",
    "CostEstimate",
    "MergeOutcome",
    "Shard",
    "ShardPlan",
    "ShardUnit",
    "estimate_cost",
    "merge_fragments",
    "parse_shard",
    "plan_shards",
    "run_shard",
]

EXPECTED_SECONDS: Mapping[plan.Tier, int] = {plan.Tier.TRIGGERS: 30, plan.Tier.EVALS: 120}
"""Expected wall time of one agent session per tier (the cost estimate's unit)."""

FRAGMENT_KIND = "evolve-action-fragment"
MANIFEST_KIND = "evolve-action-shard"
_TIER_ORDER = {plan.Tier.TRIGGERS.value: 0, plan.Tier.EVALS.value: 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardUnit:
    """One planned unit (skill × model × tier) with cases to run, and its estimated cost."""

    plugin: str
    skill: str
    tier: str
    model: str
    cases: tuple[str, ...]
    sessions: int
    cost_seconds: int
    results_dir: Path | None = None

    @property
    def key(self) -> tuple[str, str, int, str]:
        """The unit key: fragments are folded in this order."""
        return (self.plugin, self.skill, _TIER_ORDER.get(self.tier, 9), self.model)

    @property
    def name(self) -> str:
        """The unit's fragment file name (deterministic, file-system safe)."""
        return fragment_name(self.plugin, self.skill, self.tier, self.model)

    def to_json(self) -> dict[str, Any]:
        """The unit as JSON."""
        return {
            "plugin": self.plugin,
            "skill": self.skill,
            "tier": self.tier,
            "model": self.model,
            "cases": list(self.cases),
            "sessions": self.sessions,
            "cost_seconds": self.cost_seconds,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Shard:
    """The units one shard runs (1-based `index` of `total`)."""

    index: int
    total: int
    units: tuple[ShardUnit, ...]

    @property
    def label(self) -> str:
        """`i/N`, the value `--shard` takes."""
        return f"{self.index}/{self.total}"

    @property
    def cost_seconds(self) -> int:
        """Estimated cost: sessions × expected seconds, summed."""
        return sum(u.cost_seconds for u in self.units)

    @property
    def sets(self) -> tuple[tuple[str, str], ...]:
        """The (plugin, skill) eval sets of this shard, sorted."""
        return tuple(sorted({(u.plugin, u.skill) for u in self.units}))


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardPlan:
    """The planned units split into shards, with the id fragments carry."""

    plan_id: str
    shards: tuple[Shard, ...]
    estimate: CostEstimate | None = None
    """What the whole plan would spend (`plan_shards` fills it)."""

    def to_json(self) -> dict[str, Any]:
        """`plan --json`: the id, the matrix (`shard: ["1/N", …]`) and each shard's units."""
        return {
            "plan_id": self.plan_id,
            "total": len(self.shards),
            "matrix": {"shard": [s.label for s in self.shards]},
            **({"estimate": self.estimate.to_json()} if self.estimate is not None else {}),
            "shards": [
                {
                    "shard": s.label,
                    "cost_seconds": s.cost_seconds,
                    "sessions": sum(u.sessions for u in s.units),
                    "units": [u.to_json() for u in s.units],
                }
                for s in self.shards
            ],
        }


def fragment_name(plugin: str, skill: str, tier: str, model: str) -> str:
    """`<plugin>--<skill>--<tier>--<provider>--<model>.json`, unsafe characters as `_`."""
    parts = [plugin, skill, tier, *model.split("/")]
    return "--".join(re.sub(r"[^A-Za-z0-9._-]", "_", p) or "_" for p in parts) + ".json"


def parse_shard(value: str) -> tuple[int, int]:
    """`i/N` (1 ≤ i ≤ N) → (i, N); `UsageError` otherwise."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if m is None or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise UsageError(f"--shard {value}: want i/N with 1 <= i <= N")
    return int(m.group(1)), int(m.group(2))


def _units(p: plan.Plan, runs: int) -> list[ShardUnit]:
    out: list[ShardUnit] = []
    for u in p.units:
        if not u.cases:
            continue
        tier = plan.Tier(u.tier)
        if tier == plan.Tier.TRIGGERS:
            sessions = len(u.cases) * runs
        else:
            sessions = sum(2 if c.baseline else 1 for c in u.cases)
        out.append(
            ShardUnit(
                plugin=u.plugin,
                skill=u.skill,
                tier=tier.value,
                model=u.model,
                cases=tuple(c.case for c in u.cases),
                sessions=sessions,
                cost_seconds=sessions * EXPECTED_SECONDS[tier],
                results_dir=u.results_dir,
            )
        )
    return out


CHARS_PER_TOKEN = 4
"""The offline token estimate of a planned case's text (a dry run counts nothing over the network)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CostEstimate:
    """What a plan would spend before it runs: agent sessions and dollars per model (model keys in
    plan order). Dollars come from the budget's prior (`harness.Budget`: the agent's fixed context
    plus the case text, at the catalog's list prices, with the prompt cache: one write of the
    shared fixed context per tier and model, reads after, each session's prompt written once and
    read by its later requests); a model without catalog prices counts sessions but no dollars.
    Triggers count every run (`--runs`); early stop usually needs fewer."""

    sessions: Mapping[str, int]
    usd: Mapping[str, float | None]

    @property
    def total_sessions(self) -> int:
        """Agent sessions of the whole plan."""
        return sum(self.sessions.values())

    @property
    def total_usd(self) -> float:
        """Estimated dollars of the models that have prices."""
        return sum(v for v in self.usd.values() if v is not None)

    def line(self) -> str:
        """`estimate: N agent sessions, about $X at list prices`, then one line per model."""
        if not self.total_sessions:
            return "estimate: no agent sessions, $0.00\n"
        n = self.total_sessions
        out = [f"estimate: {n} agent session{'' if n == 1 else 's'}, about ${self.total_usd:.2f}"]
        out[0] += (
            " at list prices (prompt cache counted: one write per shared prefix, reads after; "
            "early stop usually needs fewer)"
        )
        width = max(len(key) for key in self.sessions)
        for key, count in self.sessions.items():
            usd = self.usd[key]
            price = "no catalog price" if usd is None else f"${usd:.2f}"
            out.append(f"  {key:<{width}}  {count:>5} session{'' if count == 1 else 's'}  {price}")
        return "\n".join(out) + "\n"

    def to_json(self) -> dict[str, Any]:
        """The estimate as JSON (`plan --json`'s `estimate`)."""
        return {
            "sessions": self.total_sessions,
            "usd": round(self.total_usd, 4),
            "models": {
                key: {
                    "sessions": n,
                    "usd": None if self.usd[key] is None else round(self.usd[key] or 0.0, 4),
                }
                for key, n in self.sessions.items()
            },
        }


def estimate_cost(
    plans: Iterable[plan.Plan], *, runs: int, models: Iterable[BoundModel]
) -> CostEstimate:
    """The sessions and dollars of `plans` (trigger plans at `runs` sessions per query; evals one
    session per case plus one per baseline), per model (pure)."""
    bound = {m.model.key: m for m in models}
    prior = Budget()
    sessions: dict[str, int] = {}
    usd: dict[str, float | None] = {}
    written: set[tuple[plan.Tier, str]] = set()  # prefixes (tier × model) already cached
    for p in plans:
        for u in p.units:
            for c in u.cases:
                tier = plan.Tier(c.tier)
                n = runs if tier == plan.Tier.TRIGGERS else 2 if c.baseline else 1
                sessions[c.model] = sessions.get(c.model, 0) + n
                model = bound.get(c.model)
                if model is None or model.model.pricing is None:
                    usd.setdefault(c.model, None)
                    continue
                tokens = len(c.case) // CHARS_PER_TOKEN + 1
                cached = (tier, c.model) in written
                written.add((tier, c.model))
                cost = prior.estimate_usd(tier.value, model, tokens, n, prefix_cached=cached)
                usd[c.model] = (usd.get(c.model) or 0.0) + cost
    return CostEstimate(sessions=sessions, usd={k: usd.get(k) for k in sessions})


def split(units: Sequence[ShardUnit], total: int) -> ShardPlan:
    """Split `units` into `total` shards: whole eval sets, costliest first, to the least-loaded
    shard (ties: sweep order, lowest index). The id digests the units and the assignment."""
    if total < 1:
        raise UsageError(f"--shards {total}: want at least 1")
    groups: dict[tuple[str, str], list[ShardUnit]] = {}
    for u in units:
        groups.setdefault((u.plugin, u.skill), []).append(u)
    order = sorted(
        enumerate(groups.items()), key=lambda g: (-sum(u.cost_seconds for u in g[1][1]), g[0])
    )
    load = [0] * total
    owned: list[list[ShardUnit]] = [[] for _ in range(total)]
    for _, (_, us) in order:
        target = min(range(total), key=lambda i: (load[i], i))
        owned[target].extend(us)
        load[target] += sum(u.cost_seconds for u in us)
    shards = tuple(
        Shard(index=i + 1, total=total, units=tuple(sorted(us, key=lambda u: u.key)))
        for i, us in enumerate(owned)
    )
    canon = json.dumps(
        [[u.to_json() for u in s.units] for s in shards], sort_keys=True, separators=(",", ":")
    )
    return ShardPlan(plan_id=hashlib.sha256(canon.encode()).hexdigest()[:16], shards=shards)


def plan_shards(options: RunAllOptions, total: int, *, reporter: Reporter) -> ShardPlan:
    """Plan `run all` (a dry run: nothing runs or is written) and split it into `total` shards."""
    plans: list[plan.Plan] = []
    models: list[BoundModel] = []

    def collect(step: RunAllStep) -> None:
        if isinstance(step, TriggersReady) and step.plan is not None:
            plans.append(step.plan)
            models.extend(step.models)
        elif isinstance(step, EvalsReady):
            plans.append(step.planned.plan)
            models.extend(step.planned.models)

    run_all(dataclasses.replace(options, dry_run=True), reporter=reporter, on_step=collect)
    units = [u for p in plans for u in _units(p, options.runs)]
    estimate = estimate_cost(plans, runs=options.runs, models=models)
    return dataclasses.replace(split(units, total), estimate=estimate)


def _restricted(options: RunAllOptions, shard: Shard, repository: Repository) -> RunAllOptions:
    sets = shard.sets
    evals = dataclasses.replace(
        options.evals,
        plugins=tuple(sorted({p for p, _ in sets})),
        skills=tuple(sorted({s for _, s in sets})),
    )
    return dataclasses.replace(options, repository=repository, evals=evals)


def run_shard(
    options: RunAllOptions,
    index: int,
    total: int,
    *,
    reporter: Reporter,
    fragments: Path | None = None,
    on_step: Callable[[RunAllStep], None] | None = None,
    cwd: Path | None = None,
) -> tuple[ShardPlan, RunAllOutcome | None]:
    """Run shard `index` of `total` of `run all`.

    Without `fragments` the shard's eval sets run in place (results files written as usual).
    With it, they run on a scratch copy of the repository; each finished unit's entry is written
    to `fragments/<unit>.json` and the shard's manifest to `fragments/shard-<i>-of-<N>.json`;
    the repository's results files and reports are not touched. Returns the shard plan and the
    run's outcome (None when the shard has nothing to run).
    """
    sp = plan_shards(options, total, reporter=reporter)
    shard = sp.shards[index - 1]
    repo = options.repository
    outcome: RunAllOutcome | None = None
    if fragments is None:
        if shard.units:
            outcome = run_all(
                _restricted(options, shard, repo), reporter=reporter, on_step=on_step, cwd=cwd
            )
        return sp, outcome
    fragments.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="evolve-shard-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(repo.root, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        interrupted = False
        if shard.units:
            copied, _ = resolve_repository(copy, copy, repo.layout, options.environ)
            run_opts = dataclasses.replace(_restricted(options, shard, copied), report=False)
            try:
                outcome = run_all(run_opts, reporter=reporter, on_step=on_step, cwd=copy)
            except KeyboardInterrupt:  # cancelled: the finished units still become fragments
                interrupted = True
        with deferred_signals() if interrupted else contextlib.nullcontext():
            written = _write_fragments(fragments, sp, shard, copy, repo.root)
            _write_json(
                fragments / f"shard-{index}-of-{total}.json",
                {
                    "kind": MANIFEST_KIND,
                    "plan_id": sp.plan_id,
                    "shard": shard.label,
                    "units": [u.name for u in shard.units],
                    "written": written,
                },
            )
        if interrupted:
            raise KeyboardInterrupt
    return sp, outcome


def _write_fragments(
    fragments: Path, sp: ShardPlan, shard: Shard, copy: Path, root: Path
) -> list[str]:
    """One fragment per unit of `shard` that has an entry in the scratch copy `copy`."""
    written: list[str] = []
    for u in shard.units:
        if u.results_dir is None:
            continue
        entry = _entry_of(copy / u.results_dir.relative_to(root), u)
        if entry is None:
            continue
        _write_json(
            fragments / u.name,
            {
                "kind": FRAGMENT_KIND,
                "plan_id": sp.plan_id,
                "shard": shard.label,
                "plugin": u.plugin,
                "skill": u.skill,
                "tier": u.tier,
                "model": u.model,
                "results": results.to_document(entry),
            },
        )
        written.append(u.name)
    return written


def _entry_of(results_dir: Path, u: ShardUnit) -> results.ResultsFile | None:
    """The results file holding only `u`'s entry, as the shard's run left it (None if absent)."""
    file = results.load_results(results_dir, plugin=u.plugin, skill=u.skill).file
    if file is None or u.model not in file.models:
        return None
    entry = file.models[u.model]
    if u.tier == plan.Tier.TRIGGERS.value:
        if entry.triggers is None:
            return None
        only = results.ModelEntry(triggers=entry.triggers)
    else:
        if entry.evals is None:
            return None
        only = results.ModelEntry(evals=entry.evals)
    return results.ResultsFile(plugin=file.plugin, skill=file.skill, models={u.model: only})


def _write_json(path: Path, value: Any) -> None:
    encoding.atomic_write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeOutcome:
    """What `merge_fragments` did."""

    plan_id: str | None
    problems: tuple[str, ...]
    """Missing, duplicate and foreign-plan shards or fragments, by name."""
    merged: tuple[str, ...]
    """Fragment names folded in, in fold order."""
    written: tuple[Path, ...]
    report: ReportOutcome | None = None


@dataclass(frozen=True, slots=True)
class _Doc:
    path: Path
    value: dict[str, Any]


def _read_docs(dirs: Iterable[Path]) -> tuple[list[_Doc], list[_Doc], list[str]]:
    manifests: list[_Doc] = []
    frags: list[_Doc] = []
    problems: list[str] = []
    for d in dirs:
        if not d.is_dir():
            raise UsageError(f"merge: {d}: not a directory")
        for path in sorted(d.rglob("*.json")):
            try:
                value = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                problems.append(f"unreadable fragment {path}: {exc}")
                continue
            kind = value.get("kind") if isinstance(value, dict) else None
            if kind == MANIFEST_KIND:
                manifests.append(_Doc(path, value))
            elif kind == FRAGMENT_KIND:
                frags.append(_Doc(path, value))
    return manifests, frags, problems


def merge_fragments(
    repository: Repository,
    config: Config,
    dirs: Sequence[Path],
    *,
    allow_missing: bool = False,
    report: bool = True,
    cwd: Path | None = None,
) -> MergeOutcome:
    """Fold the fragments under `dirs` into the results files, then regenerate the report.

    The plan is the one most shard manifests name (ties: the smaller id). Shards of other plans
    are foreign; shard indexes seen twice are duplicates; indexes 1..N without a manifest are
    missing. Any of these raises `SpecError` naming them, unless `allow_missing`: then what
    belongs to the plan is merged (first copy of a duplicate, by path) and the problems are
    returned. Fragments are folded in unit-key order, so the files do not depend on the order
    of `dirs` or of the files in them.
    """
    manifests, frags, problems = _read_docs(dirs)
    ids = Counter(str(m.value.get("plan_id")) for m in manifests)
    if not ids:
        raise SpecError(
            "merge: no shard manifest found",
            hint="pass the directories `run all --shard i/N --fragments DIR` wrote",
        )
    plan_id = min(ids, key=lambda k: (-ids[k], k))
    totals: set[int] = set()
    seen: dict[int, Path] = {}
    for m in sorted(manifests, key=lambda m: m.path.as_posix()):
        label = str(m.value.get("shard"))
        if str(m.value.get("plan_id")) != plan_id:
            problems.append(f"foreign shard {label} (plan {m.value.get('plan_id')}): {m.path}")
            continue
        index, total = parse_shard(label)
        totals.add(total)
        if index in seen:
            problems.append(f"duplicate shard {label}: {seen[index]} and {m.path}")
            continue
        seen[index] = m.path
    total = max(totals) if totals else 0
    problems.extend(f"missing shard {i}/{total}" for i in range(1, total + 1) if i not in seen)
    chosen: dict[str, _Doc] = {}
    for f in sorted(frags, key=lambda f: f.path.as_posix()):
        if str(f.value.get("plan_id")) != plan_id:
            if not any(p.startswith(f"foreign shard {f.value.get('shard')} ") for p in problems):
                problems.append(f"foreign fragment {f.path} (plan {f.value.get('plan_id')})")
            continue
        name = f.path.name
        if name in chosen:
            problems.append(f"duplicate fragment {name}: {chosen[name].path} and {f.path}")
            continue
        chosen[name] = f
    if problems and not allow_missing:
        raise SpecError(
            "merge: " + "; ".join(problems),
            hint="re-run or re-download the named shards, or pass --allow-missing",
        )
    sets = {(es.plugin, es.skill): es for es in repository.eval_sets()}
    fmt = resolve_results_format(None, config)

    def key(d: _Doc) -> tuple[str, str, int, str]:
        v = d.value
        tier = str(v.get("tier"))
        return (
            str(v.get("plugin")),
            str(v.get("skill")),
            _TIER_ORDER.get(tier, 9),
            str(v["model"]),
        )

    files: dict[Path, results.ResultsFile] = {}
    merged: list[str] = []
    for d in sorted(chosen.values(), key=key):
        v = d.value
        es = sets.get((str(v.get("plugin")), str(v.get("skill"))))
        if es is None:
            raise SpecError(f"merge: {d.path.name}: no eval set {v.get('plugin')}/{v.get('skill')}")
        try:
            frag = results.from_document(v["results"], plugin=es.plugin, skill=es.skill)
        except (KeyError, ValueError, TypeError) as exc:
            raise SpecError(f"merge: {d.path}: not a results fragment ({exc})") from None
        entry = frag.models.get(str(v["model"]))
        if entry is None:
            raise SpecError(f"merge: {d.path}: no entry for {v['model']}")
        base = files.get(es.results_dir)
        if base is None:
            loaded = results.load_results(es.results_dir, plugin=es.plugin, skill=es.skill).file
            base = loaded or results.ResultsFile(plugin=es.plugin, skill=es.skill)
        files[es.results_dir] = results.with_entry(
            base, str(v["model"]), triggers=entry.triggers, evals=entry.evals
        )
        merged.append(d.path.name)
    written: list[Path] = []
    for results_dir, file in sorted(files.items()):
        with results.lock_results(results_dir):
            written.append(results.write_results(results_dir, file, fmt))
    rep = None
    if report:
        rep = regenerate_report(
            ReportOptions(repo=repository, config=config, results_format=fmt),
            cwd=cwd or repository.root,
        )
    return MergeOutcome(
        plan_id=plan_id,
        problems=tuple(problems),
        merged=tuple(merged),
        written=tuple(written),
        report=rep,
    )
