"""Stage 2 of the PR job: evaluating the touched skills (and power on demand).

Owns: `evaluate` → `Evaluation` (the touched skills' missing or stale cases run, then the extra
base and head runs of undecided comparisons, reading and extending the PR's ledger of runs:
`ledger_store`; the sessions, the runs added, the `Estimate` and the notes, as data),
`not_evaluated` → `NotRun` (the tiers left unevaluated and why), `undecided_hint`,
`why_not_run`, `confinement_note`, and the extra harnesses (`ensure_extra_harnesses`).
Guarantees: only touched skills start sessions, only their missing or stale cases, and none for
a comparison the PR's ledger holds closed for this exact content (a re-run of a decided PR: the
test is over and rests on the head sweep the ledger kept; one log line says so); results are
written as each unit finishes; a cancellation returns what finished. Power on demand's settings
travel as one `PowerJob`, built once here. Never does: compare,
commit, post, or write to the workflow-command stream."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import msgspec

from evolve_action import __version__, checks, evals, events, plan, triggers
from evolve_action.catalog import BoundModel
from evolve_action.encoding import write_text
from evolve_action.errors import EnvironmentProblem, EvolveError
from evolve_action.flows._ledger import (
    Fingerprints,
    Ledger,
    LedgerRun,
    LedgerStore,
    RefStore,
    history,
)
from evolve_action.flows._power import (
    PowerJob,
    PowerOptions,
    PowerOutcome,
    more_runs,
    reruns_document,
    settled,
)
from evolve_action.flows._power import skill_hash as trigger_hash
from evolve_action.flows._power import sweep_entry as trigger_sweep
from evolve_action.flows._power_evals import EVALS_LEDGER, more_eval_runs
from evolve_action.flows._power_evals import skill_hash as eval_hash
from evolve_action.flows._power_evals import sweep_entry as eval_sweep
from evolve_action.flows._pr_compare import evidence
from evolve_action.flows._pr_job import (
    UNCONFINED,
    Estimate,
    Evaluation,
    JobContext,
    NotRun,
    ignored_dir,
)
from evolve_action.flows._shard import (
    CostEstimate,
    estimate_cost,
)
from evolve_action.flows._tiers import trigger_options
from evolve_action.github import (
    ActionInputs,
    GitHubClient,
    GitHubContext,
    Touched,
)
from evolve_action.harness import (
    CODEX_VERSION,
    Budget,
    agent_harness,
    available_harnesses,
    check_for_models,
    confinement,
    find_codex,
    install_codex,
    sweep_failed,
)
from evolve_action.report import (
    Reruns,
    SkillEvidence,
    usd,
)
from evolve_action.results import (
    EntryHeader,
    EvalsEntry,
    ModelEntry,
    ResultsFile,
    TriggersEntry,
)

__all__ = [
    "confinement_note",
    "ensure_extra_harnesses",
    "evaluate",
    "ledger_store",
    "not_evaluated",
    "undecided_hint",
    "why_not_run",
]


@dataclass(frozen=True, slots=True)
class _Settled:
    """A comparison the PR's ledger holds closed for this exact content: the header the head's
    results would carry and the head sweep its look tested."""

    header: EntryHeader
    kept: tuple[LedgerRun, ...]
    label: str
    attempt: str


@dataclass(slots=True)
class _Tally:
    """What the stage has done so far (kept when it is cancelled); `evaluate` freezes it."""

    refused: Mapping[str, Mapping[plan.Tier, str]]
    base_unknown: frozenset[str]
    sessions: int = 0
    skipped: int = 0
    errored: bool = False
    reruns: dict[str, dict[str, Reruns]] = field(default_factory=dict)
    eval_reruns: dict[str, dict[str, Reruns]] = field(default_factory=dict)
    base_reruns: int = 0
    workflow_runs: int = 0
    earlier: tuple[str, ...] = ()
    estimate_usd: float | None = None
    estimate_sessions: int = 0
    power_sessions: int = 0
    power_usd: float = 0.0
    notes: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    settled: dict[tuple[str, str, plan.Tier], _Settled] = field(default_factory=dict)
    """(skill key, model, tier) → the closed comparison of this content the planner ran no
    session for (its head sweep comes from the PR's ledger)."""

    def notice(self, text: str) -> None:
        self.notes.append(text)
        self.lines.append(f"notice: {text}")

    def frozen(self, *, cancelled: bool) -> Evaluation:
        return Evaluation(
            sessions=self.sessions,
            skipped=self.skipped,
            errored=self.errored,
            cancelled=cancelled,
            reruns=self.reruns,
            eval_reruns=self.eval_reruns,
            base_reruns=self.base_reruns,
            workflow_runs=self.workflow_runs,
            earlier=self.earlier,
            estimate=Estimate(
                sessions=self.estimate_sessions,
                usd=self.estimate_usd,
                power_sessions=self.power_sessions,
                power_usd=self.power_usd,
            ),
            settled=frozenset(self.settled),
            notes=tuple(self.notes),
            lines=tuple(self.lines),
        )


def evaluate(
    job: JobContext,
    touched: Touched,
    tiers: Sequence[str],
    reporter: events.Reporter,
    *,
    refused: Mapping[str, Mapping[plan.Tier, str]],
    base_files: Mapping[str, ResultsFile | None],
    base_unknown: frozenset[str],
    base_sha: str | None,
    head_sha: str,
    out_dir: Path,
    store: LedgerStore | None,
    attempt: str,
) -> Evaluation:
    """Run the touched skills' missing or stale cases (`tiers`), then power on demand over the
    undecided comparisons, within the job's one budget. A cancellation (KeyboardInterrupt) ends
    the stage: what finished is returned, with `cancelled`."""
    tally = _Tally(refused=refused, base_unknown=base_unknown)
    power = PowerJob(
        top=job.top,
        prefix=job.prefix,
        base_sha=base_sha,
        environ=job.agent_env,
        genv=job.genv,
        options=job.power,
        budget=job.budget,
        reporter=reporter,
        ledger=_load_ledger(store, tally),
        attempt=attempt,
        judge_model=job.judge_model,
        max_turns=job.max_turns,
    )
    try:
        _evaluate(job, touched, tiers, reporter, tally, power=power, base_files=base_files)
        _more_runs(
            job,
            touched,
            base_files,
            tally,
            power,
            head_sha=head_sha,
            out_dir=out_dir,
            store=store,
            tiers=tiers,
        )
    except KeyboardInterrupt:  # the job was cancelled: keep what finished
        return tally.frozen(cancelled=True)
    finally:
        power.close()
    return tally.frozen(cancelled=False)


def _evaluate(
    job: JobContext,
    touched: Touched,
    tiers: Sequence[str],
    reporter: events.Reporter,
    state: _Tally,
    *,
    power: PowerJob | None = None,
    base_files: Mapping[str, ResultsFile | None] | None = None,
) -> None:
    """Run the touched skills' missing or stale cases, plugin by plugin, tier by tier, within the
    job's one budget; the dry-run estimate of what is planned goes into `state`. A unit whose
    comparison the PR's ledger holds closed for this exact content (`power.ledger`) starts no
    session: its test is over and rests on the head sweep the ledger kept (`_settle`)."""
    repo, config, agent_env, budget = job.repo, job.config, job.agent_env, job.budget
    by_plugin: dict[str, list[str]] = {}
    for s in touched.skills:
        by_plugin.setdefault(s.plugin, []).append(s.skill)
    jobs = job.jobs
    checked = False
    for plugin, skills in sorted(by_plugin.items()):
        if "triggers" in tiers:
            built = trigger_options(
                repo,
                config,
                agent_env,
                plugins=(plugin,),
                skills=tuple(skills),
                models=job.models,
                new=True,
                modified=True,
                runs=job.runs,
                jobs=jobs,
                timeout=job.timeout,
                require_cli=True,
                budget=budget,
            )
            made = triggers.make_plan(built.options)
            current = made[0].units  # before settling: only cases current on disk are "skipped"
            if power is not None:
                units = _settle(
                    state,
                    power,
                    made[0].units,
                    built.options.models,
                    base_files,
                    plan.Tier.TRIGGERS,
                )
                made = (replace(made[0], units=units), made[1], made[2])
            planned = made[0]
            n = sum(len(u.cases) for u in planned.units)
            trig = estimate_cost([planned], runs=built.options.runs, models=built.options.models)
            _estimate(state, trig)
            _power_estimate(state, trig, runs=built.options.runs, power=job.power)
            if n:
                if not checked:
                    check_for_models(agent_env, built.options.models, judge=False)
                    checked = True
                outcome = asyncio.run(
                    triggers.run(built.options, reporter, agent_harness(agent_env), planned=made)
                )
                if outcome.all_failed:
                    raise sweep_failed(outcome.all_failed, tier="triggers")
                state.sessions += outcome.sessions
                state.errored = state.errored or any(
                    q.passed is None for u in outcome.units for q in u.queries
                )
                for line in _listing_notes(outcome):
                    state.notice(line)
            runs = built.options.runs
            state.skipped += runs * sum(len(u.valid_keys) - len(u.cases) for u in current)
        if "evals" in tiers:
            eo = job.evals_options((plugin,), skills)
            eplan = evals.plan_evals(repo, config, eo, environ=agent_env)
            current = eplan.plan.units
            if power is not None:
                units = _settle(
                    state, power, eplan.plan.units, eplan.models, base_files, plan.Tier.EVALS
                )
                eplan = replace(eplan, plan=replace(eplan.plan, units=units))
            est = estimate_cost([eplan.plan], runs=1, models=eplan.models)
            _estimate(state, est)
            _power_estimate_evals(state, est, cases=len(eplan.plan.cases), power=job.power)
            state.skipped += sum(len(u.valid_keys) - len(u.cases) for u in current)
            if eplan.plan.cases:
                if not checked:
                    check_for_models(agent_env, eplan.models)
                    checked = True
                ev = asyncio.run(
                    evals.run_evals(
                        repo, config, eo, environ=agent_env, reporter=reporter, planned=eplan
                    )
                )
                if ev.all_failed:
                    raise sweep_failed(ev.all_failed, tier="evals")
                state.sessions += ev.executed + ev.baselines
                state.errored = state.errored or ev.errored > 0


def _settle(
    state: _Tally,
    power: PowerJob,
    units: Sequence[plan.PlannedUnit],
    models: Sequence[BoundModel],
    base_files: Mapping[str, ResultsFile | None] | None,
    tier: plan.Tier,
) -> tuple[plan.PlannedUnit, ...]:
    """`units` without the cases of those whose comparison the PR's ledger holds closed for this
    exact content (`_power.settled`: the same base, head and tool fingerprints the power loop
    tests, computed by the same `PowerJob.fingerprints`): re-running their head sweep could
    change nothing the comparison uses ("Re-run jobs" of a decided PR). One log line each; the
    kept sweep goes into `state.settled` for the power loop and the comparison."""
    bound = {m.model.key: m for m in models}
    hash_of = trigger_hash if tier is plan.Tier.TRIGGERS else eval_hash
    checkout = power.top / power.prefix if power.prefix else power.top
    out: list[plan.PlannedUnit] = []
    for u in units:
        key = f"{u.plugin}/{u.skill}"
        if not u.cases or u.model not in bound:
            out.append(u)
            continue
        base = (base_files or {}).get(key)
        stored = base.models.get(u.model) if base is not None else None
        entry = (
            (stored.triggers if tier is plan.Tier.TRIGGERS else stored.evals) if stored else None
        )
        head = hash_of(checkout, u.plugin, u.skill, power.environ)

        def base_hash(root: Path | None, u: plan.PlannedUnit = u) -> str:
            return hash_of(root, u.plugin, u.skill, power.environ)

        fp, _ = power.fingerprints(
            base_hash,
            entry.header if entry is not None else None,
            head,
            f"{bound[u.model].harness} {__version__}",
        )
        name = key if tier is plan.Tier.TRIGGERS else EVALS_LEDGER.format(key=key)
        prior = settled(power, key=name, model=u.model, fp=fp) if head else None
        if prior is None or prior.look is None:
            out.append(u)
            continue
        m = bound[u.model]
        header = EntryHeader(  # what the sweep's own header would say (the engines' `_header`)
            provider=m.model.provider,
            model=m.model.id,
            display=m.model.display,
            harness=m.harness,
            tool_version=__version__,
            executed=True,
            content_hash=head,
            runs_per_query=max((r.planned for r in prior.sweep), default=0),
        )
        state.settled[(key, u.model, tier)] = _Settled(
            header=header, kept=prior.sweep, label=prior.look.label, attempt=prior.look.attempt
        )
        state.lines.append(
            f"{key} on {u.model}: {tier.value} not run again: the PR's ledger holds this "
            f"content's comparison closed ({prior.look.label}, workflow run "
            f"{prior.look.attempt}); its head sweep is the one that run kept"
        )
        out.append(replace(u, cases=()))
    return tuple(out)


def _with_settled(
    evidence: Sequence[SkillEvidence], settled: Mapping[tuple[str, str, plan.Tier], _Settled]
) -> list[SkillEvidence]:
    """`evidence` whose head results of each settled comparison are the head sweep the ledger
    kept (under the header this content's results would carry), as the power loops read them:
    they then find the closed look of the same fingerprints and show it again."""
    out = []
    for ev in evidence:
        key = f"{ev.plugin}/{ev.skill}"
        mine = {(m, t): s for (k, m, t), s in settled.items() if k == key}
        if not mine:
            out.append(ev)
            continue
        models = dict(ev.head.models) if ev.head is not None else {}
        for (model, tier), st in mine.items():
            entry = models.get(model, ModelEntry())
            if tier is plan.Tier.TRIGGERS:
                kept = trigger_sweep(TriggersEntry(header=st.header), st.kept)
                entry = msgspec.structs.replace(entry, triggers=kept)
            else:
                evals_kept = eval_sweep(EvalsEntry(header=st.header), st.kept)
                entry = msgspec.structs.replace(entry, evals=evals_kept)
            models[model] = entry
        head = ev.head or ResultsFile(plugin=ev.plugin, skill=ev.skill)
        out.append(replace(ev, head=msgspec.structs.replace(head, models=models)))
    return out


def why_not_run(budget: Budget, cancelled: bool) -> str:
    """Why planned cases are still unrun after the evaluation."""
    if cancelled:
        return "the job was cancelled"
    if budget.skipped:
        cap = f" {usd(budget.limit_usd)}" if budget.limit_usd is not None else ""
        return f"the budget (max_cost_usd{cap}) ran out"
    return "they did not run in this job"


def not_evaluated(
    job: JobContext,
    touched: Touched,
    tiers: Sequence[str],
    refused: Mapping[str, Mapping[plan.Tier, str]],
    why: str,
    *,
    settled: Collection[tuple[str, str, plan.Tier]] = (),
) -> NotRun:
    """Plan the touched skills again as a dry run (no session, no CLI needed): every case still
    selected as missing or stale was not run, so its tier gets no verdict (`not evaluated`, with
    `why`) and the run line counts it. Refused tiers are authoring errors already; `settled`
    units (skill key, model, tier: comparisons the PR's ledger holds closed for this content,
    `evaluate` ran no sweep for them) rest on the ledger's kept sweep and are not counted."""
    keys = {s.key for s in touched.skills}
    if not keys:
        return NotRun()
    repo, config, agent_env = job.repo, job.config, job.agent_env
    plugins = tuple(sorted({s.plugin for s in touched.skills}))
    skills = tuple(sorted({s.skill for s in touched.skills}))
    counts: dict[str, dict[plan.Tier, int]] = {}
    units: list[plan.PlannedUnit] = []
    if "triggers" in tiers:
        built = trigger_options(
            repo,
            config,
            agent_env,
            plugins=plugins,
            skills=skills,
            models=job.models,
            new=True,
            modified=True,
            dry_run=True,
            require_cli=False,
        )
        units.extend(triggers.make_plan(built.options)[0].units)
    if "evals" in tiers:
        eo = job.evals_options(plugins, skills)  # as `evaluate` planned them
        here = available_harnesses(agent_env, dry_run=True)
        units.extend(
            evals.plan_evals(repo, config, eo, environ=agent_env, available=here).plan.units
        )
    for u in units:
        key = f"{u.plugin}/{u.skill}"
        if (key, u.model, u.tier) in settled:
            continue
        if key in keys and u.cases and u.tier not in refused.get(key, {}):
            tier_counts = counts.setdefault(key, {})
            tier_counts[u.tier] = tier_counts.get(u.tier, 0) + len(u.cases)
    unevaluated: dict[str, dict[plan.Tier, str]] = {}
    not_run = 0
    for key, by_tier in counts.items():
        for tier, n in by_tier.items():
            unit = (
                ("query" if n == 1 else "queries")
                if tier is plan.Tier.TRIGGERS
                else ("case" if n == 1 else "cases")
            )
            unevaluated.setdefault(key, {})[tier] = f"{n} stale or missing {unit} not run: {why}"
            not_run += n
    return NotRun(unevaluated=unevaluated, count=not_run, reason=why if not_run else "")


def undecided_hint(
    reruns: Mapping[str, Mapping[str, Reruns]], budget: Budget, max_runs: int
) -> str:
    """The next step of an undecided comparison: more budget, more runs, or none left (the
    comparison ran to max_runs and stayed inconclusive)."""
    if budget.skipped:
        cap = usd(budget.limit_usd) if budget.limit_usd is not None else "the cap"
        return f"the budget stopped the runs: raise max_cost_usd (now {cap}) so more runs fit"
    looks = [rr for by_model in reruns.values() for rr in by_model.values()]
    if any(rr.final and (rr.base or rr.head) for rr in looks):
        return (
            f"inconclusive at the cap of max_runs {max_runs} per query (eval case) and side: raise "
            f"max_runs (the action input or pr.max_runs) for more power, or read the change "
            "as smaller than these runs can tell"
        )
    return (
        f"more runs would tell: raise max_runs above {max_runs} (the action input or "
        "pr.max_runs in .evolve.yaml) and give max_cost_usd room for them"
    )


def _power_estimate(state: _Tally, est: CostEstimate, *, runs: int, power: PowerOptions) -> None:
    """The most power on demand may add to a trigger estimate: up to `max_runs` runs per query of
    the base's version and `max_runs − runs` more of the head's (the range's top; it adds runs only
    to undecided comparisons, so usually far fewer)."""
    if not est.total_sessions or runs <= 0:
        return
    queries = est.total_sessions // runs
    extra = queries * (
        max(power.max_runs - runs, 0)
        + (power.max_runs if power.base != "stored" else max(power.max_runs - runs, 0))
    )
    state.power_sessions += extra
    state.power_usd += est.total_usd / est.total_sessions * extra


def _power_estimate_evals(
    state: _Tally, est: CostEstimate, *, cases: int, power: PowerOptions
) -> None:
    """The most power on demand may add to an eval estimate: up to `max_runs` runs per case of
    the base's version and `max_runs − 1` more of the head's (`flows._power_evals`), at the
    estimate's cost per session."""
    if not est.total_sessions or not cases or power.max_runs <= 1:
        return
    extra = cases * (power.max_runs - 1 + (power.max_runs if power.base != "stored" else 0))
    state.power_sessions += extra
    state.power_usd += est.total_usd / est.total_sessions * extra


def _estimate(state: _Tally, est: CostEstimate) -> None:
    state.estimate_sessions += est.total_sessions
    if any(v is not None for v in est.usd.values()):
        state.estimate_usd = (state.estimate_usd or 0.0) + est.total_usd


def _more_runs(
    job: JobContext,
    touched: Touched,
    base_files: Mapping[str, ResultsFile | None],
    state: _Tally,
    power: PowerJob,
    *,
    head_sha: str,
    out_dir: Path,
    store: LedgerStore | None = None,
    tiers: Sequence[str] = ("triggers",),
) -> None:
    """Power on demand over the touched skills (`flows._power` for triggers,
    `flows._power_evals` for evals, each tier in `tiers`); the runs go into `state` for the
    comparison, into `<out_dir>/base-runs.json` and into the PR's ledger (`store`: runs of
    earlier workflow runs are reused, this job's added), never into a results file."""
    ledger, options = power.ledger, power.options
    found = _with_settled(
        evidence(
            job.repo,
            touched,
            base_files,
            base_unknown=state.base_unknown,
            refused=state.refused,
        ),
        state.settled,
    )
    got = PowerOutcome()
    if "triggers" in tiers:
        got = more_runs(found, power)
    if "evals" in tiers:
        _more_eval_runs(found, state, got, power)
    if store is not None and ledger is not None:
        _save_ledger(store, got.recorded, got.fingerprints, state)
    state.reruns = got.reruns
    state.sessions += got.sessions
    state.base_reruns += got.base_sessions
    state.notes.extend(got.notes)
    if not got.reruns:
        return
    doc = reruns_document(got, base_sha=power.base_sha or "", head_sha=head_sha, options=options)
    path = ignored_dir(out_dir) / "base-runs.json"
    write_text(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    state.lines.append(
        f"power on demand: {got.sessions} more session(s), {got.base_sessions} of them re-ran the "
        f"base's version; {got.reused} run(s) reused from the PR's ledger; the runs: {path}"
    )


def _more_eval_runs(
    found: Sequence[SkillEvidence], state: _Tally, got: PowerOutcome, power: PowerJob
) -> None:
    """Power on demand for the touched skills' evals (`flows._power_evals`): its runs go into
    `state.eval_reruns`, its sessions, notes, ledger runs and looks into `got` (the trigger
    loop's outcome, so one ledger write and one artifact carry both), and its estimate, shown
    before any run is spent, into the run lines."""
    ev = more_eval_runs(found, power)
    state.lines.extend(ev.estimates)
    state.eval_reruns = ev.power.reruns
    got.sessions += ev.power.sessions
    got.base_sessions += ev.power.base_sessions
    got.reused += ev.power.reused
    got.notes.extend(ev.power.notes)
    got.runs.extend(ev.power.runs)
    got.looks.extend(ev.power.looks)
    got.fingerprints.update(ev.power.fingerprints)
    got.why.update(ev.power.why)
    for key, models in ev.power.reruns.items():
        for model, rr in models.items():
            got.reruns.setdefault(EVALS_LEDGER.format(key=key), {})[model] = rr


def ledger_store(
    client: GitHubClient | None, ctx: GitHubContext, *, commit: bool = True
) -> LedgerStore | None:
    """The PR's ledger on its ref; read-only on a fork PR (its token cannot write) and with
    `commit: false` (the job writes nothing to the repository)."""
    pr = ctx.pull_request
    if client is None or pr is None:
        return None  # a push or a dispatch: no PR to keep runs for
    writable = commit and not ctx.is_fork
    return RefStore(client.repository(ctx.repository), pr.number, writable=writable)


def _load_ledger(store: LedgerStore | None, state: _Tally) -> Ledger | None:
    if store is None:
        return None
    try:
        return store.load()
    except EvolveError as exc:
        state.notice(f"the ledger of runs could not be read ({exc}); earlier runs are not reused")
        return None


def _save_ledger(
    store: LedgerStore,
    recorded: Ledger,
    comparisons: Mapping[tuple[str, str], Fingerprints],
    state: _Tally,
) -> None:
    try:
        merged = store.save(recorded)
    except EvolveError as exc:
        state.notice(f"this job's runs were not added to the ledger ({exc})")
        merged = recorded
    state.workflow_runs, state.earlier = history(merged, comparisons)
    if not store.writable and not recorded.empty:
        state.notice(
            f"this job's runs were not added to the ledger ({store.where} is only read here: a "
            "fork PR's token, or `commit: false`); a re-run starts them again"
        )


def _listing_notes(outcome: triggers.TriggersOutcome) -> list[str]:
    """One line per skill × model whose should-trigger misses happened while Claude Code listed the
    skill without its description (the listing check): those misses say nothing about the
    description's wording, and the line says what to change instead."""
    lines = []
    for u in outcome.units:
        missed = sum(1 for q in u.queries if q.should_trigger and q.passed is False)
        if missed and u.listing in checks.NOT_SHOWN:
            lines.append(
                f"⚠️ {u.plugin}/{u.skill} on {u.model}: {missed} trigger miss"
                f"{'' if missed == 1 else 'es'} with the {triggers.NOT_SHOWN_NOTE} "
                f"(listed {u.listing}) — {triggers.LISTING_FIX}"
            )
    return lines


def confinement_note(sessions: int, environ: Mapping[str, str]) -> str:
    """Agents ran with neither a sandbox nor an unprivileged user: the one short line that says so
    (in the log, an annotation under Actions, the step summary and the comment); "" when no
    session ran or they were confined."""
    if sessions and confinement(environ).unconfined:
        return "⚠️ " + UNCONFINED
    return ""


def ensure_extra_harnesses(inputs: ActionInputs, environ: Mapping[str, str]) -> tuple[str, str]:
    """Install the agent CLIs `extra_harnesses` names that are not there yet (`codex`: the pinned
    release into this environment): the notice and the log line it gives ("" for none). A failed
    install is a notice, not a failed job: the models it would run are skipped with the usual
    warning."""
    if "codex" not in inputs.extra_harnesses:
        return "", ""
    try:
        find_codex(environ)
        return "", ""
    except EnvironmentProblem:
        pass
    try:
        binary = install_codex(Path(sys.prefix), environ=environ)
    except EnvironmentProblem as exc:
        note = f"extra_harnesses: Codex could not be installed: {exc}; openai/* models are skipped"
        return note, ""
    return "", f"extra_harnesses: installed Codex {CODEX_VERSION} ({binary})"
