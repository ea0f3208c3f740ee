"""Tier 1: trigger accuracy through the real agent (engine spec §8).

Owns: `TriggerOptions`, `run()` (plan → per eval set one workspace with every skill of the plugin
installed, never handed to an agent: each session gets its own copy (`harness.session_copy`) → per
model one unit → each query × `--runs` sessions → verdicts → results written after every finished
query), hit detection (`is_hit`), verdict-preserving early stop (`decided`,
`should_launch`), scoring (`score`) — the pure core lives in `_verdicts` — retries of transient failures, and the outcome values the CLI
renders (`TriggersOutcome`, `UnitOutcome`, `QueryOutcome`).

Guarantees:
- A hit is a `Skill` call naming the skill exactly (`name` or `<namespace>:name`; a sibling such as
  `name-extra` is not a hit) or a `Read` of its `skills/<name>/SKILL.md`, anywhere in the session;
  the session stops at the first hit.
- A run that fails (HTTP error, crash, timeout) is an **error**, never a silent miss: the verdict
  uses completed runs only; errored runs are counted and shown (a query whose runs all errored gets
  no verdict, so `--new` re-runs it). Transient failures (429/529, disconnects) before any tool call
  are retried a bounded number of times with backoff.
- Early stop (on by default) never changes a verdict: a query stops launching runs once the runs
  still possible cannot change it; the stored `runs` is the number of runs actually completed.
- Results are merged and written atomically after every finished query, so a killed run loses only
  the queries in flight and `--new` completes the rest without duplicates.

Never: prints (events go to the reporter), reads `os.environ` (options carry the environment),
starts processes other than through the harness and `workspace`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evolve_action import checks, events, plan, specs
from evolve_action import results as res
from evolve_action.catalog import BoundModel
from evolve_action.encoding import Format
from evolve_action.errors import SpecError, first_evolve_error
from evolve_action.harness import (
    Budget,
    Harness,
    SessionSpec,
    SessionTally,
    TokenCounter,
    create_trigger_workspace,
    remove_workspace,
    session_copy,
    session_cost_usd,
    session_limit,
)
from evolve_action.harness import estimate as token_estimate
from evolve_action.repo import EvalSet, Repository, plugin_skills
from evolve_action.triggers._verdicts import (
    QueryOutcome,
    RunRecord,
    RunResult,
    classify_run,
    is_hit,
    query_line,
    score,
    should_launch,
)

__all__ = [
    "DEFAULT_RUNS",
    "DEFAULT_TIMEOUT_SECONDS",
    "LISTING_FIX",
    "NOT_SHOWN_NOTE",
    "TRIGGER_MAX_TURNS",
    "TRIGGER_TOOLS",
    "TriggerOptions",
    "TriggersOutcome",
    "UnitOutcome",
    "make_plan",
    "run",
]

TIER = "triggers"
DEFAULT_RUNS = 3
DEFAULT_TIMEOUT_SECONDS = 120
TRIGGER_MAX_TURNS = 2
"""evolve's fixed trigger turn cap (`--max-turns 2`)."""
TRIGGER_TOOLS = ("Skill", "Read")
"""Auto-approved in trigger sessions (evolve's `--allowedTools "Skill Read"`); other tools are denied."""


# ------------------------------------------------------------------------------------------------
# Options and outcome
# ------------------------------------------------------------------------------------------------


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(tz=datetime.UTC)


NO_SKILLS = Path("/nonexistent/evolve-action/no-skills")
"""The skills directory of a plugin-mode workspace: none linked (`--plugin-dir` brings them)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerOptions:
    """Everything `run` needs; built by the CLI (nothing here reads the environment)."""

    repo: Repository
    models: tuple[BoundModel, ...]
    environ: Mapping[str, str]
    """The environment agent sessions and the token counter may draw from (allowlisted later)."""
    selection: plan.Selection = field(
        default_factory=lambda: plan.Selection(tiers=(plan.Tier.TRIGGERS,))
    )
    runs: int = DEFAULT_RUNS
    jobs: int = 1
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS
    max_turns: int = TRIGGER_MAX_TURNS
    early_stop: bool = True
    keep_workspaces: bool = False
    dry_run: bool = False
    results_format: Format = "json"
    budget: Budget | None = None
    """The `--max-cost-usd` cap shared with the evals sweep (None: no cap, spend not tracked)."""
    install: str = "skills"
    """`skills`: the plugin's skills linked into the workspace (evolve's way, engine spec §8.2);
    `plugin`: the plugin loaded as users install it (`--plugin-dir`: namespaced skills, hooks)."""
    retries: int = 2
    """Extra attempts for a run that failed transiently (429/529, disconnect) before any tool call."""
    retry_backoff_seconds: float = 1.0
    """First retry delay; doubled per attempt."""
    tool_version: str = ""
    now: Callable[[], datetime.datetime] = _utc_now
    token_cache: Path | None = None
    count_tokens: bool = True
    tmp_root: Path | None = None
    listing: bool = False
    """Run the listing check (cached) for each plugin × model before its sessions, so a miss of a
    skill whose description the model is not shown says so (`UnitOutcome.listing`)."""


NOT_SHOWN_NOTE = "description not shown to the model: listing budget"
"""What a trigger miss of a skill listed without its description says (console, reports)."""
LISTING_FIX = (
    "shorten the plugin's skill descriptions or put fewer skills in the plugin "
    "(docs/checks.md#the-listing-check)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnitOutcome:
    """One (skill, model) trigger unit."""

    plugin: str
    skill: str
    model: str
    queries: tuple[QueryOutcome, ...] = ()
    results_path: Path | None = None
    skipped: str = ""
    """Why the unit did not run (`results complete`), else empty."""
    listing: str = ""
    """How Claude Code listed the skill under test for this model (`whole`, `shortened`,
    `name-only`, `missing`; `""`: not checked). Kept out of the results file (schema 5)."""

    @property
    def sessions(self) -> int:
        """Agent sessions started (attempts included)."""
        return sum(r.attempts for q in self.queries for r in q.runs)


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggersOutcome:
    """What `run` did."""

    plan: plan.Plan
    units: tuple[UnitOutcome, ...] = ()
    warnings: tuple[str, ...] = ()
    kept_workspaces: tuple[Path, ...] = ()
    all_failed: str = ""
    """The one cause when sessions ran and every one of them failed with it (nothing was written)."""

    @property
    def sessions(self) -> int:
        """Agent sessions started in total."""
        return sum(u.sessions for u in self.units)

    @property
    def failed(self) -> bool:
        """Any executed query failed or had no completed run."""
        return any(q.passed is not True for u in self.units for q in u.queries)


# ------------------------------------------------------------------------------------------------
# The engine
# ------------------------------------------------------------------------------------------------


def _plan_models(models: Sequence[BoundModel]) -> list[plan.PlanModel]:
    return [plan.PlanModel.from_bound(m) for m in models]


def make_plan(options: TriggerOptions) -> tuple[plan.Plan, list[plan.SetInput], list[str]]:
    """Plan the trigger tier (pure apart from reading specs and stored results)."""
    sel = options.selection
    sets = [
        es
        for es in options.repo.eval_sets()
        if es.triggers_path is not None
        and (not sel.plugins or es.plugin in sel.plugins)
        and (not sel.skills or es.skill in sel.skills)
    ]
    built = plan.build_inputs(sets, tiers=(plan.Tier.TRIGGERS,), root=options.repo.root)
    p = plan.plan(built.sets, _plan_models(options.models), sel)
    return p, built.sets, [*built.warnings, *built.invalid]


async def run(
    options: TriggerOptions,
    reporter: events.Reporter,
    harness: Harness,
    *,
    counter: TokenCounter | None = None,
    make_workspace: Callable[..., Path] = create_trigger_workspace,
    planned: tuple[plan.Plan, list[plan.SetInput], list[str]] | None = None,
) -> TriggersOutcome:
    """Run the trigger tier: plan, then every runnable unit in sweep order; results written as queries finish.

    `make_workspace(skills_dir, environ=…, tmp_root=…)` builds the per-set workspace each session
    gets a copy of (tests inject a stub); `counter` counts estimate tokens (default: a
    `TokenCounter` over `options`);
    `planned` is `make_plan(options)` when the caller already made it (not made twice).
    """
    p, set_inputs, warnings = planned if planned is not None else make_plan(options)
    for w in warnings:
        reporter.emit(events.RunWarning(message=w))
    if options.dry_run:
        return TriggersOutcome(plan=p, warnings=tuple(warnings))
    by_key = {(s.plugin, s.skill): s for s in set_inputs}
    eval_sets = {(es.plugin, es.skill): es for es in options.repo.eval_sets()}
    for key in dict.fromkeys((u.plugin, u.skill) for u in p.units if u.cases):
        res.check_writable(
            eval_sets[key].results_dir, options.results_format, root=options.repo.root
        )
    models = {m.model.key: m for m in options.models}
    runnable_units = [u for u in p.units if u.cases]
    own_counter = counter is None
    if counter is None:
        counter = TokenCounter(
            options.environ,
            # nothing to run: no token cache to load or save
            cache_path=options.token_cache if runnable_units else None,
            concurrency=options.jobs,
            enabled=options.count_tokens,
        )
    sweep = _Sweep(
        options=options,
        reporter=reporter,
        harness=harness,
        sem=asyncio.Semaphore(max(session_limit(options.jobs), 1)),  # one agent uid each (`lease`)
        tally=SessionTally(),
    )
    units: list[UnitOutcome] = []
    kept: list[Path] = []
    all_warnings = list(warnings)
    reporter.emit(
        events.SweepStarted(
            tier=TIER, units=len(runnable_units), items=sum(len(u.cases) for u in runnable_units)
        )
    )
    try:
        # Units arrive grouped by eval set; one workspace per set, copied for each of its sessions.
        groups: dict[tuple[str, str], list[plan.PlannedUnit]] = {}
        for u in p.units:
            groups.setdefault((u.plugin, u.skill), []).append(u)
        statuses = (
            await _listing_statuses(options, runnable_units, models, reporter, all_warnings)
            if options.listing
            else {}
        )
        for key, group in groups.items():
            set_input = by_key[key]
            es = eval_sets[key]
            runnable = [u for u in group if u.cases]
            for u in group:
                if not u.cases:
                    reporter.emit(
                        events.UnitSkipped(
                            plugin=u.plugin,
                            skill=u.skill,
                            model=u.model,
                            tier=TIER,
                            reason=u.skip_reason,
                        )
                    )
                    units.append(
                        UnitOutcome(
                            plugin=u.plugin,
                            skill=u.skill,
                            model=u.model,
                            skipped=u.skip_reason,
                        )
                    )
            if not runnable:
                continue
            _warn_skill_name(es, options.repo, reporter, all_warnings)
            skill_md = _read_skill_md(es)
            runnable = _within_budget(runnable, options, models, skill_md, reporter, units)
            if not runnable:
                continue
            writer = res.ResultsWriter(
                es.results_dir,
                set_input.stored,
                options.results_format,
                plugin=es.plugin,
                skill=es.skill,
                on_wait=lambda m: reporter.emit(events.RunWarning(message=m)),
            )
            # a root skill (standalone repository, single-skill plugin) or skills reached through
            # symlinks are installed from copies named after them (plan.staged_skills_dir)
            owner = options.repo.plugin(es.plugin)
            beside = plugin_skills(owner) if owner is not None else []
            with plan.staged_skills_dir(es, beside, options.tmp_root) as skills_dir:
                ws = await asyncio.to_thread(
                    make_workspace,
                    # plugin mode: an empty workspace; the plugin itself comes in with --plugin-dir
                    skills_dir if options.install != "plugin" else NO_SKILLS,
                    environ=options.environ,
                    tmp_root=options.tmp_root,
                )
                try:
                    for u in runnable:
                        units.append(
                            await _run_unit(
                                u,
                                set_input=set_input,
                                model=models[u.model],
                                workspace=ws,
                                plugin_dir=es.plugin_dir if options.install == "plugin" else None,
                                writer=writer,
                                skill_md=skill_md,
                                sweep=sweep,
                                counter=counter,
                                listing=statuses.get((u.plugin, u.skill, u.model), ""),
                            )
                        )
                finally:
                    if options.keep_workspaces:
                        kept.append(ws)
                        reporter.emit(events.RunWarning(message=f"workspace kept: {ws}"))
                    else:
                        await asyncio.to_thread(remove_workspace, ws)
    finally:
        counter.save()
        for w in counter.warnings:
            if w not in all_warnings:
                all_warnings.append(w)
                reporter.emit(events.RunWarning(message=w))
        if own_counter:
            await counter.aclose()
    return TriggersOutcome(
        plan=p,
        units=tuple(units),
        warnings=tuple(all_warnings),
        kept_workspaces=tuple(kept),
        all_failed=sweep.tally.all_failed,
    )


async def _listing_statuses(
    options: TriggerOptions,
    units: Sequence[plan.PlannedUnit],
    models: Mapping[str, BoundModel],
    reporter: events.Reporter,
    sink: list[str],
) -> dict[tuple[str, str, str], str]:
    """`(plugin, skill, model key) → listing status` for the units about to run (Claude Code
    models only), from the listing check of each plugin's set; a failure is a warning."""
    plugins = {u.plugin for u in units}
    by_cli: dict[str, list[str]] = {}
    for u in units:
        m = models[u.model]
        if m.harness == "claude":
            by_cli.setdefault(m.cli_model, []).append(u.model)
    if not plugins or not by_cli:
        return {}
    install: checks.Install = "plugin" if options.install == "plugin" else "skills"
    sets = [
        s
        for s in checks.install_sets(options.repo, install=install)
        if s.kind == "plugin" and s.plugin in plugins
    ]
    cache = options.token_cache.parent / checks.LISTING_CACHE_NAME if options.token_cache else None
    try:
        report = await checks.check_listing(
            options.repo,
            models=list(by_cli),
            environ=options.environ,
            cache_path=cache,
            sets=sets,
            tmp_root=options.tmp_root,
        )
    except Exception as exc:  # the check explains misses; it must never stop the sweep
        message = f"listing check not run: {type(exc).__name__}: {exc}"
        sink.append(message)
        reporter.emit(events.RunWarning(message=message))
        return {}
    out: dict[tuple[str, str, str], str] = {}
    for sl in report.sets:
        if sl.error:
            message = f"listing check: {sl.set.label} ({sl.model_label}): {sl.error}"
            sink.append(message)
            reporter.emit(events.RunWarning(message=message))
        for sk in sl.skills:
            for key in by_cli.get(sl.model, ()):
                out[(sk.plugin, sk.skill, key)] = sk.status
    wanted = {(u.plugin, u.skill, u.model) for u in units}
    for plugin, skill, key in sorted(k for k in wanted if out.get(k) in checks.NOT_SHOWN):
        es = next(e for e in options.repo.eval_sets() if (e.plugin, e.skill) == (plugin, skill))
        message = (
            f"{skill} ({key}): {NOT_SHOWN_NOTE}: Claude Code lists it by name only when plugin "
            f"{plugin} is installed, so its misses are not its description's fault: {LISTING_FIX}"
        )
        sink.append(message)
        reporter.emit(
            events.RunWarning(message=message, path=options.repo.rel(es.skill_dir / "SKILL.md"))
        )
    return out


def _within_budget(
    runnable: list[plan.PlannedUnit],
    options: TriggerOptions,
    models: Mapping[str, BoundModel],
    skill_md: bytes,
    reporter: events.Reporter,
    units: list[UnitOutcome],
) -> list[plan.PlannedUnit]:
    """The units the budget admits, in order; the refused ones are reported as skipped. The units
    of one set run at once, so each is admitted beside the estimates of those admitted before it
    (their sum stays within the cap, not each one alone)."""
    budget = options.budget
    if budget is None:
        return runnable
    admitted = []
    pending = 0.0
    for u in runnable:
        sessions = len(u.cases) * options.runs
        prompt_tokens = len(skill_md) // 4
        if budget.admit(
            plugin=u.plugin,
            skill=u.skill,
            tier=TIER,
            model=models[u.model],
            sessions=sessions,
            prompt_tokens=prompt_tokens,
            pending_usd=pending,
        ):
            admitted.append(u)
            pending += budget.estimate_usd(TIER, models[u.model], prompt_tokens, sessions)
            continue
        reason = budget.skip_reason()
        reporter.emit(
            events.UnitSkipped(
                plugin=u.plugin, skill=u.skill, model=u.model, tier=TIER, reason=reason
            )
        )
        units.append(UnitOutcome(plugin=u.plugin, skill=u.skill, model=u.model, skipped=reason))
    return admitted


def _warn_skill_name(
    es: EvalSet, repo: Repository, reporter: events.Reporter, sink: list[str]
) -> None:
    if es.triggers_path is None:
        return
    try:
        spec = specs.load_triggers(es.triggers_path)
    except SpecError:
        return
    if spec.skill_name and spec.skill_name != es.skill:
        msg = f'skill_name "{spec.skill_name}" does not match skill directory "{es.skill}"'
        sink.append(f"{repo.rel(es.triggers_path)}: {msg}")
        reporter.emit(events.RunWarning(message=msg, path=repo.rel(es.triggers_path)))


def _read_skill_md(es: EvalSet) -> bytes:
    path = es.skill_dir / "SKILL.md"
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SpecError(
            f"reading skill under test: {exc.strerror or exc}",
            path=path,
            hint="every evals/<skill>/ needs a matching skills/<skill>/SKILL.md",
        ) from exc


def _header(options: TriggerOptions, model: BoundModel, content_hash: str) -> res.EntryHeader:
    m = model.model
    pricing = res.Pricing.of(m.pricing)
    return res.EntryHeader(
        provider=m.provider,
        model=m.id,
        display=m.display,
        harness=model.harness,
        tool_version=options.tool_version,
        ran_at=options.now().astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        executed=True,
        content_hash=content_hash,
        runs_per_query=options.runs,
        timeout_seconds=options.timeout_seconds,
        pricing=pricing,
        install="plugin" if options.install == "plugin" else "",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Sweep:
    """What every unit, query and session of one `run` shares."""

    options: TriggerOptions
    reporter: events.Reporter
    harness: Harness
    sem: asyncio.Semaphore
    """Bounds concurrent agent sessions to `options.jobs`."""
    tally: SessionTally = field(default_factory=SessionTally)
    """Session outcomes of the sweep; once tripped (first sessions all failed alike) no more start."""


async def _run_unit(
    unit: plan.PlannedUnit,
    *,
    set_input: plan.SetInput,
    model: BoundModel,
    workspace: Path,
    plugin_dir: Path | None,
    writer: res.ResultsWriter,
    skill_md: bytes,
    sweep: _Sweep,
    counter: TokenCounter,
    listing: str = "",
) -> UnitOutcome:
    cases = {c.query: c for c in set_input.triggers or ()}
    stored = set_input.stored.models.get(unit.model) if set_input.stored else None
    old = stored.triggers if stored is not None else None
    record = res.TriggerUnitRecord(
        old,
        header=_header(sweep.options, model, set_input.trigger_content_hash),
        valid_queries=unit.valid_keys,
        planned=[c.case for c in unit.cases],
    )
    sweep.reporter.emit(
        events.UnitStarted(
            plugin=unit.plugin,
            skill=unit.skill,
            model=unit.model,
            tier=TIER,
            items=len(unit.cases),
            detail=f"{len(unit.cases)} queries x {sweep.options.runs} runs, run",
        )
    )
    estimates = await asyncio.gather(
        *(token_estimate(counter, model, skill_md, c.case) for c in unit.cases)
    )
    outcomes: list[QueryOutcome | None] = [None] * len(unit.cases)
    path_box: list[Path] = []

    async def one_query(i: int, case: plan.PlannedCase) -> None:
        q = cases[case.case]
        outcome = await _run_query(
            q,
            skill=unit.skill,
            model=model,
            workspace=workspace,
            plugin_dir=plugin_dir,
            sweep=sweep,
            reason=str(case.reason),
        )
        outcomes[i] = outcome
        if outcome.completed:
            # Only a new verdict is written: a query whose runs all errored keeps its stored
            # result (and the entry keeps its old content hash, so the query stays stale).
            entry = record.add(score(outcome, spec_hash=q.spec_hash, estimate=estimates[i]))
            path_box[:] = [writer.put_triggers(unit.model, entry)]
        sweep.reporter.emit(
            events.ItemDone(
                skill=unit.skill,
                model=unit.model,
                tier=TIER,
                label=_short(q.query),
                status=outcome.status,
                detail=query_line(outcome) + _listing_note(outcome, listing),
            )
        )

    try:
        async with asyncio.TaskGroup() as tg:
            for i, case in enumerate(unit.cases):
                tg.create_task(one_query(i, case))
    except BaseExceptionGroup as group:  # e.g. a results file that cannot be written
        first = first_evolve_error(group)
        if first is not None:
            raise first from None
        raise
    done = tuple(o for o in outcomes if o is not None)
    path = path_box[0] if path_box else None
    summary = record.entry(final=True).summary
    sweep.reporter.emit(
        events.UnitFinished(
            plugin=unit.plugin,
            skill=unit.skill,
            model=unit.model,
            tier=TIER,
            passed=sum(1 for o in done if o.passed is True),
            total=len(done),
            errored=sum(1 for o in done if o.passed is None),
            results_path=sweep.options.repo.rel(path) if path else "",
            extra={
                "sessions": sum(r.attempts for o in done for r in o.runs),
                "runs": sum(len(o.runs) for o in done),
                "errored_runs": sum(o.errored for o in done),
                "pass_rate": summary.pass_rate,
                "avg_run_seconds": summary.avg_run_seconds,
            },
        )
    )
    return UnitOutcome(
        plugin=unit.plugin,
        skill=unit.skill,
        model=unit.model,
        queries=done,
        results_path=path,
        listing=listing,
    )


def _listing_note(q: QueryOutcome, listing: str) -> str:
    """` (description not shown to the model: listing budget)` on a should-trigger query that
    missed while the skill was listed without its description; `""` otherwise."""
    if listing in checks.NOT_SHOWN and q.should_trigger and q.passed is False:
        return f" ({NOT_SHOWN_NOTE})"
    return ""


def _short(text: str, n: int = 70) -> str:
    """The first `n` bytes of a query (evolve's console width), never splitting a character."""
    return text.encode("utf-8")[:n].decode("utf-8", "ignore")


async def _run_query(
    q: plan.TriggerCaseInput,
    *,
    skill: str,
    model: BoundModel,
    workspace: Path,
    plugin_dir: Path | None,
    sweep: _Sweep,
    reason: str,
) -> QueryOutcome:
    total = max(sweep.options.runs, 1)
    finished: list[RunRecord] = []
    queue: asyncio.Queue[RunRecord] = asyncio.Queue()
    started = 0

    async def one_run(index: int) -> None:
        try:
            rec = await _run_once(
                q.query,
                skill=skill,
                model=model,
                workspace=workspace,
                plugin_dir=plugin_dir,
                sweep=sweep,
                label=f"{_short(q.query)} #{index + 1}",
            )
        except Exception as exc:  # a bug below must not take the other queries down
            rec = RunRecord(
                result=RunResult.ERROR, seconds=0.0, error=f"{type(exc).__name__}: {exc}"
            )
        await queue.put(rec)

    def counts() -> tuple[int, int]:
        hits = sum(1 for r in finished if r.result is RunResult.HIT)
        misses = sum(1 for r in finished if r.result is RunResult.MISS)
        return hits, misses

    async with asyncio.TaskGroup() as tg:

        def launch_more() -> None:
            nonlocal started
            while started < total:
                hits, misses = counts()
                in_flight = started - len(finished)
                if sweep.options.early_stop and not should_launch(
                    hits=hits,
                    misses=misses,
                    in_flight=in_flight,
                    remaining=total - started,
                    should_trigger=q.should_trigger,
                ):
                    break
                tg.create_task(one_run(started))
                started += 1

        launch_more()
        while len(finished) < started:
            finished.append(await queue.get())
            launch_more()
    return QueryOutcome(
        query=q.query, should_trigger=q.should_trigger, runs=tuple(finished), reason=reason
    )


async def _run_once(
    query: str,
    *,
    skill: str,
    model: BoundModel,
    workspace: Path,
    plugin_dir: Path | None,
    sweep: _Sweep,
    label: str,
) -> RunRecord:
    spec = SessionSpec(
        prompt=query,
        workspace=workspace,
        model=model.cli_model,
        max_turns=sweep.options.max_turns,
        timeout_seconds=float(sweep.options.timeout_seconds),
        allowed_tools=TRIGGER_TOOLS,
        permission_mode="default",
        expect_skill=skill,
        plugin_dirs=(plugin_dir,) if plugin_dir is not None else (),
        harness=model.harness,
        pricing=model.model.pricing,
    )
    seconds = 0.0
    attempts = 0
    while True:
        attempts += 1
        async with sweep.sem:
            if cause := sweep.tally.tripped:  # every session so far failed alike: start no more
                return RunRecord(
                    result=RunResult.ERROR, seconds=0.0, attempts=0, error=f"not run: {cause}"
                )
            sweep.reporter.emit(
                events.ItemStarted(skill=skill, model=model.model.key, tier=TIER, label=label)
            )
            # The set's workspace stays ours: each session gets a copy its own agent uid is given
            # (sessions of one set run at once, each as a uid no other live session holds).
            own = await asyncio.to_thread(session_copy, workspace)
            began = time.monotonic()
            try:
                t = await sweep.harness.run(
                    dataclasses.replace(spec, workspace=own), stop=lambda c: is_hit(c, skill)
                )
            finally:
                await asyncio.to_thread(remove_workspace, own)
            if sweep.options.budget is not None:
                sweep.options.budget.charge(TIER, model, session_cost_usd(t, model))
            seconds = time.monotonic() - began  # the final attempt's duration only
        result = classify_run(t, skill)
        retry = (
            result is RunResult.ERROR
            and t.error is not None
            and t.error.retryable
            and not t.tool_calls
            and attempts <= sweep.options.retries
        )
        if not retry:
            sweep.tally.record(
                (t.error_message or str(t.error)) if result is RunResult.ERROR else ""
            )
            break
        await asyncio.sleep(sweep.options.retry_backoff_seconds * (2 ** (attempts - 1)))
    return RunRecord(
        result=result,
        seconds=seconds,
        attempts=attempts,
        error=(t.error_message or str(t.error)) if result is RunResult.ERROR else "",
    )
