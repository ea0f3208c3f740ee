"""Power on demand for evals: paired base reruns and extra head runs of a touched skill's eval cases.

Owns: `more_eval_runs` (the sequential loop of one job over the touched skills' eval comparisons,
on the job's `flows._power.PowerJob`), `EvalPowerOutcome`, `EVALS_LEDGER` (how eval runs are named
in the PR's ledger), `eval_cost_lines` (the estimate shown before any run is spent), `skill_hash`
(an eval comparison's content fingerprint) and `sweep_entry` (the head run the ledger kept, as an
evals entry). The rule is the triggers' rule
(docs/pr-comment.md, "The rule" and "Evals"): the label of every look comes from
`report.compare_skill` (`stratified_test`, `decide`, the alpha spending of `_stats`), fed with
`SkillEvidence.eval_reruns`; nothing here decides a label.

One eval run's outcome is 0/1: the case passed (every deterministic assertion and every judged
expectation held) or not; an errored run (agent crash, timeout, judge error) is no outcome and is
left out, never a fail. So an eval case is a stratum of 0/1 runs exactly like a trigger query
(`QueryRuns` with `query` = the eval id, `hits` = the runs that passed), and the selection,
the blocks and the ledger are the triggers' own.

The loop, per touched skill × model whose evals the PR re-ran (`flows._power` for triggers):

1. The base side: `rerun`, or `auto` (always, for evals: a stored base has one run per case,
   which is thin), materialises the base commit (`git archive`) and runs its version of the
   cases in a scratch copy, against the same model and harness; `stored` tests the committed
   base and adds head runs only.
2. The first block: one fresh base run of every case, against the head's stored run.
3. Round 1 gives every case `step` more runs a side (a fixed design: it reads no outcome), so a
   skill whose cases all pass on both sides can reach `no change`; later rounds are selective
   (`report.selected`: cases whose pooled runs are not all alike, plus spot checks), each round
   a block of its own, base and head runs interleaved.
4. Each look spends its slice of alpha over the information fraction (`report.information`); it
   stops at a decision, at `max_runs` runs per case per side, or when the budget
   (`max_cost_usd`) refuses a round; the ledger's runs of earlier workflow runs count.

Final for its evidence, as for triggers (the same `flows._power.resume` and `record_look`): every
look rests on one head run of the cases, the first attempt's, kept in the ledger with the look
(block `SWEEP`, one run per case); a later attempt of the same content tests that run, not the
one it made itself (`Reruns.head_sweep` holds it as an evals entry), so "Re-run jobs" can
neither flip a decided eval verdict nor re-open it, and starts no session for it
(`flows._power.settled`).

Cost first: before a round starts, its cost is estimated from each selected case's measured cost
(the head's results file keeps it per case) and refused when it would not fit the budget; the
eval engine's own admission (`Budget.admit`) still applies per run.

Guarantees: every run happens in scratch copies (the committed results files never hold these
runs); the runs and last look go to the ledger under `EVALS_LEDGER`'s name, so eval and trigger
comparisons of one skill never mix. Never does: post, commit, print, decide labels, read or
write the ledger's store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import msgspec

from evolve_action import evals, events
from evolve_action.config import resolve_repository
from evolve_action.errors import EvolveError
from evolve_action.flows._ledger import Ledger, LedgerRun
from evolve_action.flows._power import (
    DECIDED,
    NOTHING_TO_DO,
    TESTED,
    PowerJob,
    PowerOptions,
    PowerOutcome,
    SideRuns,
    conclude,
    look_slice,
    record_look,
    resume,
)
from evolve_action.grading import GradingCache
from evolve_action.harness import Budget, SkippedUnit, agent_harness
from evolve_action.plan import Tier, eval_content_hash
from evolve_action.report import (
    Label,
    Plan,
    QueryRuns,
    Reruns,
    SkillEvidence,
    compare_skill,
    information,
    selected,
)
from evolve_action.results import EvalResult, EvalsEntry, load_results

__all__ = [
    "EVALS_LEDGER",
    "EvalPowerOutcome",
    "eval_cost_lines",
    "more_eval_runs",
    "skill_hash",
    "sweep_entry",
]

EVALS_LEDGER = "{key}#evals"
"""The `skill` name eval runs and looks carry in the PR's ledger (`plugin/skill#evals`): an eval
comparison is a comparison of its own, never merged with the skill's trigger comparison."""


@dataclass(slots=True, kw_only=True)
class EvalPowerOutcome:
    """What `more_eval_runs` did: the runs and looks (`power`, as for triggers) and the
    estimates shown before spending."""

    power: PowerOutcome = field(default_factory=PowerOutcome)
    estimates: list[str] = field(default_factory=list)
    """One line per comparison given more runs: sessions and dollars at most, from measured
    costs."""


def _outcomes(entry: EvalsEntry | None) -> dict[str, tuple[int, int]]:
    """Eval id → (runs passed, runs) of a stored entry's valid cases (one run each)."""
    if entry is None or not entry.header.executed:
        return {}
    return {
        r.id: (1 if r.passed else 0, 1)
        for r in entry.results
        if not r.runtime_error and r.passed is not None
    }


def _sweep_queries(entry: EvalsEntry) -> tuple[QueryRuns, ...]:
    """The head's run of every case as the ledger keeps it (a case with no outcome: 0 runs)."""
    got = _outcomes(entry)
    return tuple(
        QueryRuns(
            query=r.id,
            should_trigger=True,
            hits=got.get(r.id, (0, 0))[0],
            runs=got.get(r.id, (0, 0))[1],
        )
        for r in entry.results
    )


def sweep_entry(head: EvalsEntry, kept: Sequence[LedgerRun]) -> EvalsEntry:
    """`head` with the outcomes of the ledger's head run `kept` (what an earlier attempt's looks
    rested on); a case it had no outcome for is an errored run here too."""
    names = {r.id: r.name for r in head.results}
    results = tuple(
        EvalResult(id=r.query, name=names.get(r.query, ""), passed=bool(r.hits))
        if r.runs
        else EvalResult(
            id=r.query, name=names.get(r.query, ""), runtime_error="no outcome in the kept run"
        )
        for r in kept
    )
    return msgspec.structs.replace(head, results=results)


def _case_costs(entry: EvalsEntry) -> dict[str, float]:
    """Eval id → the measured cost of its stored run (USD; 0.0 when unrecorded)."""
    return {
        r.id: (r.measured.cost_usd or 0.0) if r.measured is not None else 0.0 for r in entry.results
    }


def eval_cost_lines(key: str, model: str, cases: int, per_run: float, sessions: int) -> str:
    """The estimate shown before power on demand spends on an eval comparison."""
    usd = f"about ${per_run * sessions:.2f} at the measured ${per_run:.4f} per case run"
    return (
        f"evals power on demand for {key} on {model}: up to {sessions} more session(s) over "
        f"{cases} case(s), {usd if per_run else 'cost not measured'}"
    )


def skill_hash(root: Path | None, plugin: str, skill: str, environ: Mapping[str, str]) -> str:
    """The eval content hash of `plugin/skill` under `root` ("" when it has no evals there)."""
    if root is None or not root.is_dir():
        return ""
    try:
        repo, _ = resolve_repository(root, root, None, environ)
        for es in repo.eval_sets():
            if es.plugin == plugin and es.skill == skill and es.has_evals:
                return eval_content_hash(es.skill_dir, skip=es.content_skips)
    except EvolveError:
        return ""
    return ""


def _one_round(
    root: Path,
    plugin: str,
    skill: str,
    model: str,
    environ: Mapping[str, str],
    options: PowerOptions,
    budget: Budget,
    reporter: events.Reporter,
    only: frozenset[str],
    judge_model: str | None,
    max_turns: int | None,
    gradings: GradingCache,
) -> tuple[dict[str, tuple[int, int]], int]:
    """One run of each eval case in `only` of `plugin/skill` on `model` in the scratch repository
    `root`: eval id → (passed, 1) for the runs with an outcome, and the sessions started. The
    scratch results file is removed first, so what is read back is this round's runs alone (an
    errored run writes nothing: no outcome)."""
    repo, config = resolve_repository(root, root, None, environ)
    sets = [es for es in repo.eval_sets() if es.plugin == plugin and es.skill == skill]
    if not sets or not only:
        return {}, 0
    for stale in sets[0].results_dir.glob("results.*"):
        stale.unlink()
    eo = evals.EvalsOptions(
        plugins=(plugin,),
        skills=(skill,),
        models=(model,),
        eval_ids=tuple(sorted(only)),
        jobs=options.jobs,
        timeout=options.timeout,
        max_turns=max_turns,
        judge_model=judge_model,
        baseline=False,
        new=True,
        budget=budget,
    )

    async def sweep() -> evals.EvalsOutcome:
        judge, _ = evals.make_judge(config, eo, environ=environ)
        judge.gradings = gradings  # one grading cache over every round of the job
        try:
            return await evals.run_evals(
                repo,
                config,
                eo,
                environ=environ,
                reporter=reporter,
                harness=agent_harness(environ),
                judge_=judge,
            )
        finally:
            await judge.aclose()

    got = asyncio.run(sweep())
    loaded = load_results(sets[0].results_dir, plugin=plugin, skill=skill)
    entry = loaded.file.models.get(model) if loaded.file is not None else None
    outcomes = _outcomes(entry.evals if entry is not None else None)
    return {k: v for k, v in outcomes.items() if k in only}, got.executed + got.baselines


@dataclass(slots=True, kw_only=True)
class _Track:
    """One skill × model's eval comparison through the looks."""

    ev: SkillEvidence
    model: str
    key: str
    head_entry: EvalsEntry
    base_entry: EvalsEntry | None
    ledger: Ledger | None = None
    attempt: str = ""
    base: SideRuns = field(default_factory=SideRuns)
    head: SideRuns = field(default_factory=SideRuns)
    new_base: SideRuns = field(default_factory=SideRuns)
    new_head: SideRuns = field(default_factory=SideRuns)
    fresh: bool = False
    round_no: int = 0
    sweep_from: str = ""
    """The attempt whose head run the looks rest on (this one's, or the ledger's)."""
    adopted: EvalsEntry | None = None
    """The ledger's head run, when the looks rest on an earlier attempt's (`head_entry` then)."""

    @property
    def ledger_key(self) -> str:
        return EVALS_LEDGER.format(key=self.key)

    def look(self, plan: Plan, t_prev: float, t: float, final: bool) -> tuple[Label, Reruns]:
        rr = Reruns(
            base=self.base.frozen(self.round_no),
            base_fresh=self.fresh,
            head=self.head.frozen(self.round_no),
            t_prev=t_prev,
            t=t,
            final=final,
            head_sweep=self.adopted,
        )
        rows = compare_skill(
            replace(self.ev, eval_reruns={self.model: rr}), models={self.model}, plan=plan
        )
        tier = rows[0].evals if rows else None
        return (tier.label if tier is not None else Label.NOT_RERUN), rr

    def pooled(self) -> dict[str, tuple[int, ...]]:
        """Eval id → its pooled runs so far (1: passed), base and head together, in no side's
        order: all the selection may read."""
        heads = _outcomes(self.head_entry)
        counts = {k: list(v) for k, v in heads.items()}
        sources = [] if self.fresh else [_outcomes(self.base_entry)]
        sources += [{q: (h, n) for q, (h, n) in s.runs.items()} for s in (self.base, self.head)]
        for source in sources:
            for k, (h, n) in source.items():
                if k in counts:
                    counts[k][0] += h
                    counts[k][1] += n
        return {k: (1,) * h + (0,) * (n - h) for k, (h, n) in counts.items()}

    def select(self) -> frozenset[str]:
        """The cases the next round runs: every case in round 1 (a fixed design), then the cases
        whose pooled runs are not all alike plus spot checks (`report.selected`)."""
        pooled = self.pooled()
        if self.round_no == 1:
            return frozenset(pooled)
        return frozenset(k for k, p in pooled.items() if selected(k, p, self.round_no))

    def record(self, out: PowerOutcome, fp: tuple[str, str, str], label: Label, rr: Reruns) -> None:
        record_look(
            out,
            fp,
            label,
            rr,
            attempt=self.attempt,
            key=self.ledger_key,
            model=self.model,
            made=(self.new_base, self.new_head),
            round_no=self.round_no,
            sweep=self.sweep_from,
            kept=_sweep_queries(self.head_entry),
            planned=1,
        )


@dataclass(slots=True, kw_only=True)
class _Job:
    """The job's power on demand (`PowerJob`, shared with the trigger loop), what the eval loop
    made so far, and the judge's gradings over every round (`grading.GradingCache`)."""

    power: PowerJob
    result: EvalPowerOutcome
    gradings: GradingCache = field(default_factory=GradingCache)


def _batch(job: _Job, tr: _Track, n_b: int, n_h: int, only: frozenset[str], round_no: int) -> int:
    """`n_b` base and `n_h` head runs of each case in `only`, interleaved base, head, …; the runs
    with an outcome."""
    out, pj = job.result.power, job.power
    added = 0
    for i in range(max(n_b, n_h)):
        for side, made, root, n in (
            (tr.base, tr.new_base, pj.scratch.base, n_b),
            (tr.head, tr.new_head, pj.scratch.head, n_h),
        ):
            if i >= n or pj.budget.stopped:
                continue
            where = root()
            assert where is not None
            got, sessions = _one_round(
                where,
                tr.ev.plugin,
                tr.ev.skill,
                tr.model,
                pj.environ,
                pj.options,
                pj.budget,
                pj.reporter,
                only,
                pj.judge_model,
                pj.max_turns,
                job.gradings,
            )
            out.sessions += sessions
            if side is tr.base:
                out.base_sessions += sessions
            for k, (h, r) in got.items():
                side._put(k, True, h, r, round_no)
                made._put(k, True, h, r, round_no)
                added += r
    return added


def _fits(job: _Job, cost: Mapping[str, float], only: frozenset[str], runs: int) -> bool:
    """Whether a round of `runs` runs of each case in `only` fits the budget, at each case's
    measured cost (cost first: a round the budget cannot pay is not started)."""
    limit = job.power.budget.limit_usd
    if limit is None:
        return True
    need = runs * sum(cost.get(k, 0.0) for k in only)
    return job.power.budget.spent_usd + need <= limit


def _run(tr: _Track, job: _Job, plan: Plan) -> Reruns | None:
    pj, out = job.power, job.result.power
    options = pj.options
    cap = options.max_runs
    label, _ = tr.look(plan, 0.0, 1.0, True)
    if label in NOTHING_TO_DO or cap <= 1:
        return None
    mode = options.base
    rerun_base = mode in ("rerun", "auto")  # a stored eval base has one run per case: thin
    plugin, skill = tr.ev.plugin, tr.ev.skill
    header = tr.head_entry.header
    fp, paired = pj.fingerprints(
        lambda root: skill_hash(root, plugin, skill, pj.environ),
        tr.base_entry.header if tr.base_entry else None,
        header.content_hash,
        f"{header.harness} {header.tool_version}".strip(),
    )
    if mode != "stored" and not paired:
        if pj.scratch.base() is None:
            out.notes.append(
                f"{tr.key}: the base's evals were not re-run: the clone lacks the base commit "
                "(check out with fetch-depth: 0)"
            )
        rerun_base = False
    if not rerun_base and (tr.base_entry is None or label not in TESTED):
        return None
    stored = 0.0 if rerun_base else 1.0
    out.why[f"{tr.ledger_key} {tr.model}"] = (
        "rerun" if mode == "rerun" else "thin stored base (1 run per case)" if paired else "stored"
    )
    tr.fresh = rerun_base
    out.fingerprints[(tr.ledger_key, tr.model)] = fp
    prior, tr.sweep_from = resume(
        tr.ledger, key=tr.ledger_key, model=tr.model, fp=fp, with_base=paired, attempt=tr.attempt
    )
    out.reused += tr.base.extend(prior.base) + tr.head.extend(prior.head)
    if tr.sweep_from != tr.attempt:  # the head run the earlier looks rested on
        tr.adopted = tr.head_entry = sweep_entry(tr.head_entry, prior.sweep)
    tr.round_no = prior.rounds
    if prior.look is not None and prior.look.closed:
        lk = prior.look
        return tr.look(plan, lk.t_prev, lk.t, lk.final)[1]
    cases = _outcomes(tr.head_entry)
    cost = _case_costs(tr.head_entry)
    per_run = sum(cost.get(k, 0.0) for k in cases) / len(cases) if cases else 0.0
    most = len(cases) * ((cap if paired else 0) + cap - 1)
    line = eval_cost_lines(tr.key, tr.model, len(cases), per_run, most)
    job.result.estimates.append(line)
    pj.reporter.emit(events.RunWarning(message=line))  # shown before any run is spent
    t_prev = prior.look.t if prior.look is not None else 0.0
    full_b, full_h = stored + tr.base.most(), 1.0 + tr.head.most()
    last: Reruns | None = None
    if not rerun_base and prior.look is None:  # look 0: the stored base against the head's run
        t = information(full_b, full_h, cap)
        label, last = tr.look(plan, 0.0, t, False)
        if label in DECIDED:
            tr.record(out, fp, label, last)
            return last
        t_prev = t
    for _ in range(2 * cap + 2):  # bounded even when every run errors
        only: frozenset[str] = frozenset(cases)
        round_no = 0
        if rerun_base and not tr.base.runs and not tr.round_no:
            n_b, n_h = 1, 0  # the first block: one base run of every case
        elif paired and full_b + 1 <= cap:
            n_b = n_h = min(options.step, int(cap - full_b), int(cap - full_h))
            if n_b > 0:
                tr.round_no += 1
                round_no = tr.round_no
                only = tr.select()
        else:
            n_b, n_h = 0, min(options.step, int(cap - full_h))
        if n_b <= 0 and n_h <= 0:
            break
        if not _fits(job, cost, only, n_b + n_h):
            need = (n_b + n_h) * sum(cost.get(k, 0.0) for k in only)
            pj.budget.skipped.append(
                SkippedUnit(
                    plugin=plugin, skill=skill, tier="evals", model=tr.model, estimate_usd=need
                )
            )
            added = 0
        else:
            added = _batch(job, tr, n_b, n_h, only, round_no)
        if round_no:
            full_b, full_h = full_b + n_b, full_h + n_h
        else:
            full_b, full_h = stored + tr.base.most(), 1.0 + tr.head.most()
        at_cap = (not paired or full_b + 1 > cap) and full_h + 1 > cap
        final = at_cap or pj.budget.stopped or (added == 0 and not round_no)
        if not final and added == 0:
            continue  # the round passed every case by: no new runs, no look
        t = look_slice(
            t_prev, full_b, full_h, cap, at_cap=at_cap, spend_all=final and tr.ledger is None
        )
        label, last = tr.look(plan, t_prev, t, final)
        if final or label in DECIDED:
            break
        t_prev = t
    return conclude(
        lambda a, b, final: tr.look(plan, a, b, final),
        lambda lbl, rr: tr.record(out, fp, lbl, rr),
        label,
        last,
        t_prev,
        prior,
    )


def more_eval_runs(evidence: Sequence[SkillEvidence], job: PowerJob) -> EvalPowerOutcome:
    """The sequential loop over the touched skills' eval comparisons (module doc); the runs come
    back per skill × model in `power.reruns` (for `SkillEvidence.eval_reruns`), this job's runs
    and looks in `power.recorded`. The scratch copies stay for the caller's `job.close()`."""
    result = EvalPowerOutcome()
    state = _Job(power=job, result=result)
    plan = Plan(cap=job.options.max_runs)
    for ev in evidence:
        if ev.head is None or Tier.EVALS in ev.refused:
            continue
        key = f"{ev.plugin}/{ev.skill}"
        for model, entry in sorted(ev.head.models.items()):
            if entry.evals is None or not entry.evals.header.executed:
                continue
            stored = ev.base.models.get(model) if ev.base is not None else None
            tr = _Track(
                ev=ev,
                model=model,
                key=key,
                head_entry=entry.evals,
                base_entry=stored.evals if stored is not None else None,
                ledger=job.ledger,
                attempt=job.attempt,
            )
            got = _run(tr, state, plan)
            if got is not None:
                result.power.reruns.setdefault(key, {})[model] = got
    return result
