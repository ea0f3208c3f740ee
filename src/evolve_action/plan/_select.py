"""Planning: which cases run, for which model, and why (engine spec §7, report spec §1.5).

Owns: deciding the `Reason` a case × model runs for: `plan()` (scope filters
`--plugin`/`--skill`/`--model`/`--eval`/tiers, the per-case reasons of
`--new`/`--modified`/`--failed`, the baseline need of §9.7) builds the `Plan` in sweep order
(eval set → model → triggers before evals); its renderings (`render` for `--dry-run`,
`to_json_lines` for `--dry-run --json`), CI sharding (`shard`), the staleness predicates used by
reports (§7.4), and `build_inputs`, which gathers the inputs of a repository (specs,
fingerprints, stored results). The §4.4 model restriction is `specs.model_allowed` and the §6.7
"modified" predicate is `_fingerprint.is_modified`: one rule each. The values
(`Tier`, `Reason`, `SetInput`, `PlanModel`, `Selection`, `Plan`, …) live in `_model`.

Guarantees: `plan`, `render`, `to_json_lines`, `shard` and the predicates are pure; the same
inputs give the same plan. Only `build_inputs` reads files. A case runs iff its reason is not
`Reason.NONE`; without any of `--new/--modified/--failed` every applicable case runs with
`Reason.SELECTED`. Never does: run agents, write results, print.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple, TypeVar

from evolve_action import results as res
from evolve_action import specs
from evolve_action.errors import SpecError, UsageError, display_path
from evolve_action.plan import _fingerprint as fingerprint
from evolve_action.plan._fingerprint import is_modified
from evolve_action.plan._model import (
    EvalCaseInput,
    Plan,
    PlanModel,
    PlannedCase,
    PlannedUnit,
    Reason,
    Selection,
    SetInput,
    Tier,
    TriggerCaseInput,
)
from evolve_action.repo import model_invocable, shadowing_command
from evolve_action.specs import model_allowed

if TYPE_CHECKING:
    from evolve_action.repo import EvalSet

__all__ = [
    "BuiltInputs",
    "build_inputs",
    "eval_reason",
    "needs_baseline",
    "plan",
    "render",
    "shard",
    "stale_tier",
    "to_json_lines",
    "trigger_reason",
]


# --------------------------------------------------------------------------------------------
# Predicates
# --------------------------------------------------------------------------------------------


def _matches_model(tokens: Sequence[str], m: PlanModel) -> bool:
    toks = [t.strip() for part in tokens for t in part.split(",") if t.strip()]
    return not toks or any(t in ("all", m.provider, m.key, m.model) for t in toks)


def trigger_reason(
    stored: res.TriggerResult | None,
    *,
    fresh_spec_hash: str,
    stored_content_hash: str,
    fresh_content_hash: str,
    selection: Selection,
    executes: bool,
    stored_executed: bool = True,
) -> Reason:
    """The reason a trigger case runs (engine spec §7.2, first match wins).

    `stored_executed` is the stored entry's `executed` flag. Under `--failed`, a stored query of an
    executed entry that has no verdict (every run errored) re-runs as `errored`, like an errored
    eval; the verdict-less queries of a count-only entry never ran, so `--failed` leaves them.
    """
    if not selection.flagged:
        return Reason.SELECTED
    if selection.failed and executes and stored is not None:
        if stored.passed is False:
            return Reason.FAILED
        if stored.passed is None and stored_executed:
            return Reason.ERRORED
    if (
        selection.modified
        and stored is not None
        and is_modified(stored.spec_hash, stored_content_hash, fresh_spec_hash, fresh_content_hash)
    ):
        return Reason.MODIFIED
    if selection.new:
        if stored is None:
            return Reason.NEW
        if executes and (
            stored.hits is None
            or stored.runs is None
            or stored.passed is None
            or stored.avg_run_seconds is None
        ):
            return Reason.INCOMPLETE
    return Reason.NONE


def eval_reason(
    stored: res.EvalResult | None,
    *,
    fresh_fingerprint: str,
    stored_content_hash: str,
    fresh_content_hash: str,
    selection: Selection,
    executes: bool,
    reports_usage: bool,
    priced: bool,
) -> Reason:
    """The reason an eval case runs before the baseline rule (engine spec §7.2, first match wins)."""
    if not selection.flagged:
        return Reason.SELECTED
    if selection.failed and executes and stored is not None:
        if stored.runtime_error:
            return Reason.ERRORED
        if stored.passed is False:
            return Reason.FAILED
    if (
        selection.modified
        and stored is not None
        and is_modified(
            stored.spec_hash, stored_content_hash, fresh_fingerprint, fresh_content_hash
        )
    ):
        return Reason.MODIFIED
    if selection.new:
        if stored is None:
            return Reason.NEW
        if executes:
            if stored.runtime_error:
                return Reason.ERRORED
            if (
                stored.passed is None
                or stored.timing is None
                or stored.timing.executor_duration_seconds is None
            ):
                return Reason.INCOMPLETE
            if reports_usage:
                if stored.measured is None or stored.measured.input_tokens is None:
                    return Reason.MISSING_INPUT_TOKENS
                if stored.measured.output_tokens is None:
                    return Reason.MISSING_OUTPUT_TOKENS
            if priced and (stored.measured is None or stored.measured.cost_usd is None):
                return Reason.MISSING_COSTS
    return Reason.NONE


def needs_baseline(entry: res.EvalsEntry | None, eval_id: str, fingerprint: str) -> bool:
    """§9.7: the stored entry has no baseline, no baseline row for `eval_id`, or a stale one."""
    if entry is None or entry.baseline is None:
        return True
    for r in entry.baseline.results:
        if r.id == eval_id:
            return r.fingerprint != fingerprint
    return True


def stale_tier(
    entries: Iterable[res.TriggersEntry | res.EvalsEntry | None],
    *,
    fresh_specs: Mapping[str, str],
    fresh_content_hash: str,
) -> bool:
    """§7.4: any model's entry has a result that is modified against the fresh hashes.

    `fresh_specs` maps query/id → current spec hash (trigger `spec_hash` / eval fingerprint); a
    stored case no longer in the spec compares against `""` (so it counts as modified).
    """
    for entry in entries:
        if entry is None:
            continue
        content = entry.header.content_hash
        for r in entry.results:
            key = r.query if isinstance(r, res.TriggerResult) else r.id
            if is_modified(r.spec_hash, content, fresh_specs.get(key, ""), fresh_content_hash):
                return True
    return False


# --------------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------------


_X = TypeVar("_X")


def _unique(keys: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(keys))


def _first_by(items: Iterable[_X], key: Callable[[_X], str]) -> dict[str, _X]:
    """The first item of each key, in first-seen order (duplicates are ignored, like evolve)."""
    out: dict[str, _X] = {}
    for item in items:
        out.setdefault(key(item), item)
    return out


def _case(
    s: SetInput, m: PlanModel, tier: Tier, case: str, reason: Reason, *, baseline: bool = False
) -> PlannedCase:
    return PlannedCase(
        plugin=s.plugin,
        skill=s.skill,
        model=m.key,
        tier=tier,
        case=case,
        reason=reason,
        baseline=baseline,
    )


def _unit(
    s: SetInput,
    m: PlanModel,
    tier: Tier,
    cases: list[PlannedCase],
    valid_keys: tuple[str, ...],
    never_run: int = 0,
) -> PlannedUnit:
    return PlannedUnit(
        plugin=s.plugin,
        skill=s.skill,
        model=m.key,
        tier=tier,
        results_dir=s.results_dir,
        cases=tuple(cases),
        valid_keys=valid_keys,
        never_run=never_run,
    )


def _trigger_unit(s: SetInput, m: PlanModel, sel: Selection) -> PlannedUnit | None:
    if s.triggers is None:
        return None
    entry = s.stored.models.get(m.key, res.ModelEntry()).triggers if s.stored else None
    by_query = _first_by(entry.results if entry else (), lambda r: r.query)
    stored_content = entry.header.content_hash if entry else ""
    cases: list[PlannedCase] = []
    for c in _first_by(s.triggers, lambda q: q.query).values():
        reason = trigger_reason(
            by_query.get(c.query),
            fresh_spec_hash=c.spec_hash,
            stored_content_hash=stored_content,
            fresh_content_hash=s.trigger_content_hash,
            selection=sel,
            executes=m.executes,
            stored_executed=entry.header.executed if entry else True,
        )
        if reason is not Reason.NONE:
            cases.append(_case(s, m, Tier.TRIGGERS, c.query, reason))
    queries = _unique(c.query for c in s.triggers)
    never_run = sum(1 for q in queries if q not in by_query)
    return _unit(s, m, Tier.TRIGGERS, cases, queries, never_run)


def _eval_unit(s: SetInput, m: PlanModel, sel: Selection) -> PlannedUnit | None:
    if s.evals is None:
        return None
    narrowed = [c for c in s.evals if not sel.eval_ids or c.id in sel.eval_ids]
    if not narrowed:
        return None  # `--eval` matched nothing here: the tier is skipped silently.
    entry = s.stored.models.get(m.key, res.ModelEntry()).evals if s.stored else None
    by_id = _first_by(entry.results if entry else (), lambda r: r.id)
    stored_content = entry.header.content_hash if entry else ""
    use_baseline = sel.baseline and m.executes
    cases: list[PlannedCase] = []
    for c in _first_by(narrowed, lambda e: e.id).values():
        reason = eval_reason(
            by_id.get(c.id),
            fresh_fingerprint=c.fingerprint,
            stored_content_hash=stored_content,
            fresh_content_hash=s.eval_content_hash,
            selection=sel,
            executes=m.executes,
            reports_usage=m.reports_usage,
            priced=m.priced,
        )
        stored = by_id.get(c.id)
        base = use_baseline and needs_baseline(entry, c.id, c.fingerprint)
        # Deliberate difference from evolve: "needs baseline" re-runs a case that *has* a stored
        # with-skill result (so it gets a contemporaneous one); a case never run is `--new`'s
        # business, so `--modified`/`--failed` alone never start evals that have no results.
        if reason is Reason.NONE and sel.flagged and base and stored is not None:
            reason = Reason.NEEDS_BASELINE
        if reason is not Reason.NONE:
            cases.append(_case(s, m, Tier.EVALS, c.id, reason, baseline=base))
    # Unlike evolve (engine spec §13.10b) `--eval` does not narrow the merge list, so other
    # evals' stored results survive a `--eval X` run.
    never_run = sum(1 for c in narrowed if c.id not in by_id)
    return _unit(s, m, Tier.EVALS, cases, _unique(c.id for c in s.evals), never_run)


def plan(sets: Sequence[SetInput], models: Sequence[PlanModel], selection: Selection) -> Plan:
    """Decide, per case × model, whether it runs and why.

    `sets` are in repository order, `models` in selection order. Filters: `--plugin`/`--skill`
    (exact, ANDed), `--model` tokens, the evals file's model restriction (a model outside it has
    no unit at all for that skill), `--eval` (evals tier only). Units with nothing to run are
    kept (with no cases) so front ends can print "skip: results complete".
    """
    units: list[PlannedUnit] = []
    chosen = [m for m in models if _matches_model(selection.models, m)]
    for s in sets:
        if selection.plugins and s.plugin not in selection.plugins:
            continue
        if selection.skills and s.skill not in selection.skills:
            continue
        for m in chosen:
            if not model_allowed(s.restriction, provider=m.provider, model=m.model):
                continue
            for tier in (Tier.TRIGGERS, Tier.EVALS):
                if tier not in selection.tiers:
                    continue
                unit = (
                    _trigger_unit(s, m, selection)
                    if tier is Tier.TRIGGERS
                    else _eval_unit(s, m, selection)
                )
                if unit is not None:
                    units.append(unit)
    return Plan(units=tuple(units), selection=selection)


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def to_json_lines(p: Plan) -> str:
    """`--dry-run --json`: one JSON object per planned case, one per line (UTF-8, no escaping).

    Keys: `plugin`, `skill`, `model`, `tier`, `case`, `reason` (the `Reason` value), and for
    evals `baseline` (whether the without-skill baseline re-runs too).
    """
    lines: list[str] = []
    for c in p.cases:
        obj: dict[str, object] = {
            "plugin": c.plugin,
            "skill": c.skill,
            "model": c.model,
            "tier": str(c.tier),
            "case": c.case,
            "reason": str(c.reason),
        }
        if c.tier is Tier.EVALS:
            obj["baseline"] = c.baseline
        lines.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
    return "".join(line + "\n" for line in lines)


def _short(text: str, n: int = 70) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def render(p: Plan) -> str:
    """The human `--dry-run` listing: one block per unit, then a total line."""
    out: list[str] = []
    for u in p.units:
        if not u.cases:
            out.append(
                f"=== {u.plugin}/{u.skill} / {u.model} / {u.tier} (skip: {u.skip_reason}) ==="
            )
            continue
        out.append(f"=== {u.plugin}/{u.skill} / {u.model} / {u.tier}: {len(u.cases)} to run ===")
        for c in u.cases:
            extra = " +baseline" if c.baseline else ""
            out.append(f"  {c.reason.label:<22} {_short(c.case)}{extra}")
    runnable = p.runnable
    n_cases = sum(len(u.cases) for u in runnable)
    skipped = len(p.units) - len(runnable)
    by_tier: dict[Tier, int] = {}
    for c in p.cases:
        by_tier[c.tier] = by_tier.get(c.tier, 0) + 1
    tiers = ", ".join(f"{by_tier[t]} {t}" for t in (Tier.TRIGGERS, Tier.EVALS) if t in by_tier)
    total = f"plan: {n_cases} case(s) in {len(runnable)} unit(s) to run"
    if tiers:
        total += f" ({tiers})"
    total += f"; {skipped} unit(s) up to date"
    out.append(total)
    return "\n".join(out) + "\n"


def shard(p: Plan, index: int, total: int, *, by: Literal["set", "unit"] = "set") -> Plan:
    """The part of `p` that shard `index` (0-based) of `total` runs, for CI matrix splits.

    `by="set"` (default) keeps every unit of one eval set in the same shard, so each results
    file is written by exactly one shard and shard outputs never conflict. `by="unit"` splits
    finer (shards then write different model entries of the same file, which a later merge must
    combine). Assignment is deterministic: groups are taken by descending planned-case count
    (ties in sweep order) and each goes to the least-loaded shard (ties: lowest index). Units
    with no cases stay with their group. Raises `UsageError` for a bad index/total.
    """
    if total < 1 or not 0 <= index < total:
        raise UsageError(f"--shard {index}/{total}: want 0 <= index < total")

    def group_of(u: PlannedUnit) -> tuple[str, ...]:
        return (u.plugin, u.skill) if by == "set" else (u.plugin, u.skill, u.model, str(u.tier))

    groups: dict[tuple[str, ...], list[PlannedUnit]] = {}
    for u in p.units:
        groups.setdefault(group_of(u), []).append(u)
    order = sorted(
        enumerate(groups.items()),
        key=lambda item: (-sum(len(u.cases) for u in item[1][1]), item[0]),
    )
    load = [0] * total
    owner: dict[tuple[str, ...], int] = {}
    for _, (k, us) in order:
        target = min(range(total), key=lambda i: (load[i], i))
        owner[k] = target
        load[target] += sum(len(u.cases) for u in us)
    keep = tuple(u for u in p.units if owner[group_of(u)] == index)
    return Plan(units=keep, selection=p.selection)


# --------------------------------------------------------------------------------------------
# Gathering inputs from a repository (the only I/O here)
# --------------------------------------------------------------------------------------------


class BuiltInputs(NamedTuple):
    """Planning inputs plus the warnings met while reading stored results."""

    sets: list[SetInput]
    warnings: list[str]
    invalid: list[str] = []  # noqa: RUF012 - a NamedTuple default, never mutated
    """Authoring errors: definition files that fail validation; their tier never runs."""


def _authoring_errors(es: EvalSet, tier: Tier, root: Path | None) -> list[str]:
    """Validation errors of the set's `tier` definition file, as one line each (empty: valid).

    Missing fixtures are left to Tier 0 (the corpus of results evolve wrote keeps running).
    """
    base = root if root is not None else es.plugin_dir
    suite_errors = _suite_errors(es, base) if tier is Tier.EVALS else []
    path = es.triggers_path if tier is Tier.TRIGGERS else es.evals_path
    if path is None:
        return suite_errors
    if tier is Tier.TRIGGERS:
        found = specs.validate_triggers(path, base)
    else:
        found = specs.validate_evals(
            path, base, check_fixtures=False, fixture_bases=es.fixture_bases
        )
    errors = [f for f in found if f.severity == specs.Severity.ERROR]
    if not errors:
        return suite_errors
    first = errors[0]
    where = display_path(path, root) + (f":{first.line}" if first.line else "")
    detail = first.message
    if first.path and detail.startswith(f"{first.path}:"):
        detail = detail.split(": ", 1)[1]
    more = ""
    if len(errors) > 1:
        more = f" (and {len(errors) - 1} more; `evolve-action run checks` lists them)"
    return [
        f"error: {where}: {detail}{more} — authoring error: {es.plugin}/{es.skill}'s {tier.value} "
        "did not run and nothing was written for them; fix the definition and run again"
    ]


def _suite_errors(es: EvalSet, root: Path) -> list[str]:
    """One line per invalid suite of the set (an invalid suite never runs; the others do)."""
    out: list[str] = []
    for path in es.suite_paths:
        suite = specs.read_suite(path, root=root, skill_dir=es.skill_dir)
        errors = suite.errors
        if not errors:
            continue
        first = errors[0]
        where = display_path(path, root) + (f":{first.line}" if first.line else "")
        more = ""
        if len(errors) > 1:
            more = f" (and {len(errors) - 1} more; `evolve-action run checks` lists them)"
        out.append(
            f"error: {where}: {first.message}{more} — authoring error: suite {suite.name!r} of "
            f"{es.plugin}/{es.skill} did not run; fix it and run again"
        )
    return out


def suite_notes(es: EvalSet, root: Path) -> list[str]:
    """Notes about the set's valid suites (targets ignored, skill blocks dropped, not applicable)."""
    out: list[str] = []
    for path in es.suite_paths:
        suite = specs.read_suite(path, root=root, skill_dir=es.skill_dir)
        if not suite.errors:
            out.extend(specs.suite_notes(suite, root))
    return out


def build_inputs(
    eval_sets: Sequence[EvalSet],
    *,
    tiers: Sequence[Tier] = (Tier.TRIGGERS, Tier.EVALS),
    root: Path | None = None,
) -> BuiltInputs:
    """Load specs, fingerprints and stored results for each eval set (repository order).

    The evals file is read for the model restriction even when only triggers run; when it
    cannot be parsed, a triggers-only sweep runs unrestricted (engine spec §4.4), while a sweep
    including evals fails with its `SpecError`. A results file with a newer schema raises
    `SpecError`; an unreadable one is planned as absent with a warning.
    """

    out: list[SetInput] = []
    warnings: list[str] = []
    invalid: list[str] = []
    for es in eval_sets:
        restriction: tuple[str, ...] = ()
        evals: tuple[EvalCaseInput, ...] | None = None
        eval_content = ""
        refused: set[Tier] = set()
        for tier in tiers:
            errors = _authoring_errors(es, tier, root)
            if errors:
                invalid.extend(errors)
                if tier is not Tier.EVALS or _evals_refused(es, root):
                    refused.add(tier)
        if refused and refused == {t for t in tiers if _path_of(es, t) is not None}:
            continue  # every tier asked for is refused: nothing runs, nothing is written
        if Tier.EVALS in tiers and es.suite_paths and Tier.EVALS not in refused:
            warnings.extend(
                n.removeprefix("note: ") for n in suite_notes(es, root or es.plugin_dir)
            )
        if es.has_evals and Tier.EVALS not in refused:
            try:
                spec = specs.load_authored_evals(
                    evals_path=es.evals_path,
                    suite_paths=es.suite_paths,
                    skill_dir=es.skill_dir,
                    root=root or es.plugin_dir,
                    fixture_bases=es.fixture_bases,
                )
            except SpecError:
                if Tier.EVALS in tiers:
                    raise
                spec = None
            if spec is not None:
                restriction = spec.models
                if Tier.EVALS in tiers:
                    # A suite case is graded by its suite's evaluators, never by `assertions`.
                    ungraded = [c.id for c in spec.evals if not c.assertions and c.suite is None]
                    if ungraded:
                        warnings.append(_ungraded_note(es, ungraded))
                    evals = tuple(
                        EvalCaseInput(id=c.id, fingerprint=fingerprint.eval_fingerprint(c))
                        for c in spec.evals
                        if c.assertions or c.suite is not None
                    )
                    eval_content = fingerprint.eval_content_hash(
                        es.skill_dir, skip=es.content_skips
                    )
        triggers: tuple[TriggerCaseInput, ...] | None = None
        trigger_content = ""
        wants_triggers = es.triggers_path is not None and Tier.TRIGGERS in tiers
        if wants_triggers and not model_invocable(es.skill_dir / "SKILL.md"):
            warnings.append(_not_invocable_note(es))
            refused.add(Tier.TRIGGERS)
        elif wants_triggers and (
            command := shadowing_command(es.plugin_dir, es.skill_dir, es.skill)
        ):
            warnings.append(_shadowed_note(es, command))
            refused.add(Tier.TRIGGERS)
        if es.triggers_path is not None and Tier.TRIGGERS in tiers and Tier.TRIGGERS not in refused:
            tspec = specs.load_triggers(es.triggers_path)
            triggers = tuple(
                TriggerCaseInput(
                    query=q.query,
                    should_trigger=q.should_trigger,
                    spec_hash=fingerprint.trigger_spec_hash(q.query, q.should_trigger),
                )
                for q in tspec.queries
            )
            trigger_content = fingerprint.skill_content_hash(es.skill_dir / "SKILL.md")
        loaded = res.load_results(es.results_dir, plugin=es.plugin, skill=es.skill, root=root)
        if loaded.warning:
            warnings.append(loaded.warning)
        out.append(
            SetInput(
                plugin=es.plugin,
                skill=es.skill,
                results_dir=es.results_dir,
                restriction=restriction,
                triggers=triggers,
                evals=evals,
                trigger_content_hash=trigger_content,
                eval_content_hash=eval_content,
                stored=loaded.file,
            )
        )
    return BuiltInputs(out, warnings, invalid)


def _not_invocable_note(es: EvalSet) -> str:
    """Tier 1 of a skill the model cannot invoke: not run, and why (its evals still run)."""
    return (
        f"{es.plugin}/{es.skill}: triggers not run: its SKILL.md sets "
        "`disable-model-invocation: true`, so Claude Code never lists it to the model and the "
        "model cannot invoke it (a trigger evaluation would measure nothing); its evals still run"
    )


def _shadowed_note(es: EvalSet, command: Path) -> str:
    """Tier 1 of a skill a command of its plugin hides from the listing: not run, and why."""
    return (
        f"{es.plugin}/{es.skill}: triggers not run: the command commands/{command.name} of its "
        "plugin has the same name, and Claude Code lists the command in the skill's place (the "
        "model never sees the skill); rename the skill or the command; its evals still run"
    )


def _ungraded_note(es: EvalSet, ids: Sequence[str]) -> str:
    """skill-creator's first draft of a case (a prompt, no assertions): named, never run."""
    shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
    count = f"{len(ids)} eval case{'' if len(ids) == 1 else 's'}"
    return (
        f"{es.plugin}/{es.skill}: {count} not graded yet ({shown}): add assertions (or "
        "expectations) to run them"
    )


def _path_of(es: EvalSet, tier: Tier) -> Path | None:
    if tier is Tier.TRIGGERS:
        return es.triggers_path
    return es.evals_path or (es.suite_paths[0] if es.suite_paths else None)


def _evals_refused(es: EvalSet, root: Path | None) -> bool:
    """The evals tier is refused when the evals file is invalid, or when every suite is (and
    there is no evals file); otherwise the valid definitions run and the invalid suites do not."""
    base = root if root is not None else es.plugin_dir
    if es.evals_path is not None:
        found = specs.validate_evals(
            es.evals_path, base, check_fixtures=False, fixture_bases=es.fixture_bases
        )
        return any(f.severity == specs.Severity.ERROR for f in found)
    return len(_suite_errors(es, base)) == len(es.suite_paths)
