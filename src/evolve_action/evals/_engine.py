"""Tier 2 engine: behavioural evals with the skill under test, baselines without it, grading, results.

Owns: the eval unit flow (engine spec §9.1), eval workspace staging (§4.3, §9.2: fixtures copied
before `git init`, only the skill under test installed, baselines with none), the agent invocation for
evals (§9.3: permissions bypassed; `max_turns`/`timeout_seconds` from the case, else the run's flags or
config, else 20 turns / 600 s), the runtime-error gate (§9.5: an errored run is never graded), grading
plus one judge conversation per case (§10), baseline runs (§9.7) and the assembly of fresh eval results
(§12.2), handed to `results.EvalUnitRecord` and written after every finished case. Workspace
staging and result assembly live in `_assembly` (exported by the package: `stage_workspace`,
`CaseRun`, `build_result`, `graded_assertions`, `error_detail`); this module keeps planning and
the sweep.

Guarantees: engines never print (events go to the `Reporter`); a failed agent session or a judge
outage is data (a `runtime_error` result, reported and counted as errored, never graded), never an
exception; only new verdicts are written (an errored case keeps its stored result, so it stays
stale and runs again); results are written after every finished case, so an interrupted run loses
at most the cases in flight. Unusable input
(missing fixture, git failure, bad judge model) raises an `EvolveError` and aborts the sweep, like
evolve. Never does: read `os.environ` (the caller passes `environ`), start agent processes itself (the
harness does), run `command` assertions (grading does), or decide what runs (`plan` does).

Sandbox: evolve wraps agent runs in bwrap/sandbox-exec. We do not: each run gets a throwaway temp
workspace, an isolated agent config dir and an allowlisted environment (no `GITHUB_TOKEN`, no
`INPUT_*`), and the action runs in a disposable container (docs/evals.md).
"""

from __future__ import annotations

import asyncio
import datetime
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve_action import __version__, grading, repo, specs
from evolve_action import harness as lifecycle
from evolve_action import plan as planning
from evolve_action import results as res
from evolve_action.catalog import (
    RUNNABLE_HARNESSES,
    BoundModel,
    Catalog,
    build_catalog,
    resolve_models,
)
from evolve_action.config import DEFAULT_MAX_TURNS, Config, resolve_results_format
from evolve_action.encoding import Format, round1
from evolve_action.errors import (
    ConfigError,
    EvolveError,
    SpecError,
    first_evolve_error,
)
from evolve_action.evals._assembly import (
    CaseRun,
    build_result,
    error_detail,
    stage_workspace,
)
from evolve_action.events import (
    ItemDone,
    ItemStarted,
    Reporter,
    RunWarning,
    SweepStarted,
    UnitFinished,
    UnitSkipped,
    UnitStarted,
)
from evolve_action.harness import (
    Budget,
    ErrorClass,
    Harness,
    SessionSpec,
    SessionTally,
    TokenCounter,
    Transcript,
    agent_harness,
    available_harnesses,
    default_cache_path,
    remove_workspace,
    runtime_error,
    session_cost_usd,
    session_limit,
)
from evolve_action.harness import estimate as token_estimate

__all__ = [
    "DEFAULT_TIMEOUT",
    "EvalsOptions",
    "EvalsOutcome",
    "EvalsPlan",
    "plan_evals",
    "run_evals",
]

DEFAULT_TIMEOUT = 600
"""Evals tier timeout in seconds (per agent run; also bounds its commands and judge)."""
TIER = "evals"


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalsOptions:
    """What the user asked `run evals` for (flags; `None` = not given, config/defaults apply)."""

    plugins: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    harnesses: tuple[str, ...] = ()
    eval_ids: tuple[str, ...] = ()
    jobs: int = 1
    timeout: int | None = None
    """Tier timeout in seconds (None: 600)."""
    max_turns: int | None = None
    """Run-level turn cap (None: config `max_turns`, else 20)."""
    judge_model: str | None = None
    """`--judge-model` (None: config `judge_model`, else `anthropic/claude-sonnet-5`)."""
    baseline: bool | None = None
    """False for `--no-baseline`; None: config `baseline` (default on)."""
    new: bool = False
    modified: bool = False
    failed: bool = False
    keep_workspaces: bool = False
    results_format: str | None = None
    """None: config `results_format` (default json)."""
    budget: Budget | None = None
    """The `--max-cost-usd` cap, shared with the trigger sweep of the same run (None: no cap)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalsPlan:
    """The planned sweep: units in sweep order plus the resolved models and run settings."""

    plan: planning.Plan
    models: tuple[BoundModel, ...]
    sets: tuple[planning.SetInput, ...]
    eval_sets: tuple[repo.EvalSet, ...]
    warnings: tuple[str, ...] = ()
    timeout: int = DEFAULT_TIMEOUT
    max_turns: int = DEFAULT_MAX_TURNS
    baseline: bool = True
    results_format: Format = "json"


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalsOutcome:
    """What a sweep did: counts for the exit code and the CLI summary."""

    planned: int = 0
    executed: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    baselines: int = 0
    results_paths: tuple[Path, ...] = ()
    all_failed: str = ""
    """The one cause when runs happened and every one failed with it (nothing was written)."""

    @property
    def ok(self) -> bool:
        """True when no executed eval failed or errored."""
        return self.failed == 0 and self.errored == 0


# ---------------------------------------------------------------------------------------------
# Planning


def plan_evals(
    repository: repo.Repository,
    config: Config,
    options: EvalsOptions,
    *,
    environ: Mapping[str, str],
    catalog: Catalog | None = None,
    available: set[str] | None = None,
) -> EvalsPlan:
    """Select models, load specs/fingerprints/stored results and plan the evals tier (pure-ish: reads files)."""
    cat = catalog or build_catalog(config.providers)
    if options.judge_model is not None or config.is_set("judge_model"):
        # An explicit judge model that cannot be used is fatal at command start (§10.3).
        grading.resolve_judge_model(cat, options.judge_model or config.judge_model)
    avail = available_harnesses(environ) if available is None else available
    selection = resolve_models(
        cat,
        model_flags=options.models,
        config_models=config.models,
        config_harnesses=config.harnesses,
        harness_flags=options.harnesses,
        available=avail,
        tier="evals",
    )
    warnings = [f"WARN: {w}" for w in selection.warnings]
    # Only the harnesses evolve-action can start run evals; other bindings need their own CLIs.
    bound = tuple(b for b in selection.models if b.harness in RUNNABLE_HARNESSES)
    eval_sets = tuple(es for es in repository.eval_sets() if es.has_evals)
    chosen = [
        es
        for es in eval_sets
        if (not options.plugins or es.plugin in options.plugins)
        and (not options.skills or es.skill in options.skills)
    ]
    built = planning.build_inputs(chosen, tiers=(planning.Tier.EVALS,), root=repository.root)
    warnings.extend(f"warn: {w}" for w in built.warnings)
    warnings.extend(built.invalid)  # authoring errors: those units never run
    baseline = options.baseline if options.baseline is not None else config.baseline
    sel = planning.Selection(
        new=options.new,
        modified=options.modified,
        failed=options.failed,
        plugins=options.plugins,
        skills=options.skills,
        eval_ids=options.eval_ids,
        tiers=(planning.Tier.EVALS,),
        baseline=baseline,
    )
    models = [planning.PlanModel.from_bound(b) for b in bound]
    the_plan = planning.plan(built.sets, models, sel)
    if options.max_turns is not None and options.max_turns > 0:
        max_turns = options.max_turns
    else:
        max_turns = config.max_turns if config.max_turns > 0 else DEFAULT_MAX_TURNS
    results_format = resolve_results_format(options.results_format, config)
    return EvalsPlan(
        plan=the_plan,
        models=bound,
        sets=tuple(built.sets),
        eval_sets=tuple(chosen),
        warnings=tuple(warnings),
        timeout=options.timeout if options.timeout and options.timeout > 0 else DEFAULT_TIMEOUT,
        max_turns=max_turns,
        baseline=baseline,
        results_format=results_format,
    )


def make_judge(
    config: Config,
    options: EvalsOptions,
    *,
    environ: Mapping[str, str],
    catalog: Catalog | None = None,
    connect: bool = True,
) -> tuple[grading.Judge, list[str]]:
    """Resolve the judge model (§10.3) and build the judge; explicit bad models are fatal.

    Returns the judge and warnings (a defaulted model that cannot be used, missing credentials).
    With `connect=False` (nothing planned) the model is resolved, with the same warnings and
    errors, but no client is built (the Anthropic SDK is slow to import): the judge is unavailable.
    """
    cat = catalog or build_catalog(config.providers)
    explicit = options.judge_model is not None or config.is_set("judge_model")
    token = options.judge_model if options.judge_model is not None else config.judge_model
    warnings: list[str] = []
    try:
        model = grading.resolve_judge_model(cat, token)
    except ConfigError as exc:
        if explicit:
            raise
        warnings.append(f"WARN: {exc.message}; cases with llm assertions will be runtime errors")
        return grading.Judge(None, model="", unavailable=exc.message), warnings
    if not connect:
        return grading.Judge(None, model=model.id, unavailable="nothing planned"), warnings
    client = grading.client_from_env(environ)
    if client is None:
        why = "no Anthropic credentials (set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN)"
        return grading.Judge(None, model=model.id, unavailable=why), warnings
    return grading.Judge(client, model=model.id), warnings


# ---------------------------------------------------------------------------------------------
# Running


@dataclass(slots=True, kw_only=True)
class _Counts:
    executed: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    baselines: int = 0
    paths: list[Path] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Sweep:
    harness: Harness
    judge: grading.Judge
    environ: Mapping[str, str]
    reporter: Reporter
    keep_workspaces: bool
    max_turns: int
    timeout: int
    counter: Any
    make_workspace: Callable[..., Path]
    reported: set[str] = field(default_factory=set)
    """Token-counter warnings already emitted (the set is mutated; the sweep runs on one loop)."""
    tally: SessionTally = field(default_factory=SessionTally)
    """Run outcomes (agent and judge); once tripped (first runs all failed alike) no more start."""
    budget: Budget | None = None


def _now_rfc3339(now: Callable[[], datetime.datetime]) -> str:
    return now().astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def run_case(
    case: specs.EvalCase,
    *,
    model: BoundModel,
    skill_dir: Path,
    baseline: bool,
    sweep: _Sweep,
) -> CaseRun:
    """Stage a workspace, run the agent, and grade the run unless it errored (§9.3–§9.5, §10).

    A judge that cannot answer makes the run a runtime error (`judge error: <why>`), never
    failed expectations (issue 8). Once the sweep's tally tripped, the run is not started.
    """
    if cause := sweep.tally.tripped:
        return CaseRun(
            transcript=Transcript(),
            runtime_error=f"not run: {cause}",
            graded=None,
            workspace=Path(),
        )
    timeout = case.timeout_seconds if case.timeout_seconds > 0 else sweep.timeout
    turns = case.max_turns if case.max_turns > 0 else sweep.max_turns
    ws = await asyncio.to_thread(
        sweep.make_workspace, case, skill_dir=skill_dir, environ=sweep.environ, baseline=baseline
    )
    # The agent's config dir lives outside the workspace, so `git status`, file assertions and the
    # judge's tools see only what the agent did.
    try:
        home = Path(tempfile.mkdtemp(prefix="claude-home.", dir=lifecycle.scratch_dir()))
    except BaseException:
        await asyncio.to_thread(remove_workspace, ws)
        raise
    try:
        spec = SessionSpec(
            prompt=case.prompt,
            workspace=ws,
            model=model.cli_model,
            max_turns=turns if turns > 0 else DEFAULT_MAX_TURNS,
            timeout_seconds=float(timeout),
            permission_mode="bypassPermissions",
            config_dir=home,
            expect_skill="" if baseline else skill_dir.name,
            harness=model.harness,
            pricing=model.model.pricing,
        )
        transcript = await sweep.harness.run(spec)
        if sweep.budget is not None:
            sweep.budget.charge(TIER, model, session_cost_usd(transcript, model))
        reason = runtime_error(transcript)
        if transcript.error is ErrorClass.TIMEOUT:
            reason = f"timed out after {timeout}s"
        if reason:
            sweep.tally.record(reason)
            return CaseRun(transcript=transcript, runtime_error=reason, graded=None, workspace=ws)
        if case.suite is not None:
            return await _grade_suite(
                case.suite, transcript, ws, float(timeout), sweep, skill=skill_dir.name
            )
        calls = transcript.tool_calls
        llm_texts = [a.text for a in case.assertions]
        judge_failed: list[str] = []

        async def judge_fn(indices: Sequence[int]) -> Sequence[grading.Verdict]:
            verdicts, why = await sweep.judge.grade_checked(
                grading.JudgeRequest(
                    assertions=tuple(llm_texts[i] for i in indices),
                    final_text=transcript.final_text,
                    expected_output=case.expected_output,
                    workspace=ws,
                    timeout=float(timeout),
                )
            )
            if why:
                judge_failed.append(why)
            return verdicts

        graded = await grading.grade_case(
            case.assertions,
            workspace=ws,
            final_text=transcript.final_text,
            tool_calls=calls,
            timeout_seconds=float(timeout),
            environ=sweep.environ,
            judge=judge_fn,
        )
        if judge_failed:
            why = f"judge error: {judge_failed[0]}"
            sweep.tally.record(why)
            return CaseRun(transcript=transcript, runtime_error=why, graded=None, workspace=ws)
        sweep.tally.record("")
        return CaseRun(transcript=transcript, runtime_error="", graded=graded, workspace=ws)
    finally:
        if sweep.keep_workspaces:
            label = f"{case.id} baseline" if baseline else case.id
            sweep.reporter.emit(
                RunWarning(message=f"workspace kept ({label}): {ws} (agent config: {home})")
            )
        else:
            await asyncio.to_thread(remove_workspace, ws)
            await asyncio.to_thread(shutil.rmtree, home, True)


async def _grade_suite(
    suite: specs.SuiteCase,
    transcript: Transcript,
    workspace: Path,
    limit: float,
    sweep: _Sweep,
    *,
    skill: str,
) -> CaseRun:
    """Grade a suite case with its evaluators (`grading.grade_suite_case`); the verdict bands and
    `required` gates are the evaluators'. An evaluator that cannot run is data in the grade."""
    ctx = grading.SuiteContext(
        case_id=suite.id,
        input_text=suite.prompt,
        expected_output=suite.reference_answer,
        expected_messages=suite.expected_messages,
        criteria=suite.criteria,
        transcript=transcript,
        workspace=workspace,
        eval_dir=suite.eval_dir,
        skill_name=skill,
        environ=sweep.environ,
        judge=sweep.judge if sweep.judge.available else None,
        timeout_seconds=limit,
        input_messages=suite.input_messages,
        input_files=tuple(workspace / f.dest for f in suite.fixtures),
        guideline_files=tuple(workspace / g for g in suite.guideline_files),
    )
    grade = await grading.grade_suite_case(suite.evaluators, ctx)
    sweep.tally.record("")
    return CaseRun(
        transcript=transcript, runtime_error="", graded=None, workspace=workspace, suite=grade
    )


def _item_done(
    result: res.EvalResult, *, skill: str, model: str, baseline: bool, transcript: Transcript
) -> ItemDone:
    label = f"{result.id} (baseline)" if baseline else result.id
    if result.runtime_error:
        return ItemDone(
            skill=skill,
            model=model,
            tier=TIER,
            label=label,
            status="errored",
            detail=error_detail(transcript, result.runtime_error),
        )
    s = result.summary or res.GradeSummary()
    detail = f"{s.passed}/{s.total} expectations"
    failing = [a.text for a in result.expectations if a.passed is False]
    if failing:
        first = failing[0] if len(failing[0]) <= 120 else failing[0][:119] + "…"
        evidence = next(a.evidence for a in result.expectations if a.passed is False)
        detail += f"; failed: {first}" + (f" ({evidence[:120]})" if evidence else "")
    return ItemDone(
        skill=skill,
        model=model,
        tier=TIER,
        label=label,
        status="passed" if result.passed else "failed",
        detail=detail,
    )


def _check_writable(ep: EvalsPlan, root: Path) -> None:
    """Refuse to start when a results file the sweep will write cannot be written."""
    dirs = {(es.plugin, es.skill): es.results_dir for es in ep.eval_sets}
    for key in dict.fromkeys((u.plugin, u.skill) for u in ep.plan.units if u.cases):
        res.check_writable(dirs[key], ep.results_format, root=root)


async def run_evals(
    repository: repo.Repository,
    config: Config,
    options: EvalsOptions,
    *,
    environ: Mapping[str, str],
    reporter: Reporter,
    harness: Harness | None = None,
    judge_: grading.Judge | None = None,
    now: Callable[[], datetime.datetime] | None = None,
    planned: EvalsPlan | None = None,
    counter: Any = None,
    make_workspace: Callable[..., Path] = stage_workspace,
) -> EvalsOutcome:
    """Plan and run the evals tier; write results after every finished case.

    `harness` defaults to Claude Code bound to `environ`; `judge_` to the resolved judge model with
    credentials from `environ`; `counter` (token estimates) to a `tokens.TokenCounter` with the
    configured cache; `make_workspace(case, skill_dir=…, environ=…, baseline=…)` to
    `stage_workspace` (tests inject stubs). Raises `EvolveError` for unusable input (the sweep
    stops; finished cases are already on disk).
    """
    clock = now or (lambda: datetime.datetime.now(datetime.UTC))
    ep = planned or plan_evals(repository, config, options, environ=environ)
    for w in ep.warnings:
        reporter.emit(RunWarning(message=w))
    _check_writable(ep, repository.root)
    the_judge = judge_
    if the_judge is None:
        the_judge, jwarn = make_judge(config, options, environ=environ, connect=bool(ep.plan.cases))
        for w in jwarn:
            reporter.emit(RunWarning(message=w))
        if not jwarn and not the_judge.available and _has_llm(ep, repository.root):
            reporter.emit(
                RunWarning(
                    message=f"WARN: judge unavailable: {the_judge.unavailable}; cases with llm assertions will be runtime errors"
                )
            )
    own_counter = counter is None
    if counter is None:
        counter = TokenCounter(
            environ,
            # nothing planned: no token cache to load or save
            cache_path=default_cache_path(environ, config.cache_dir) if ep.plan.cases else None,
            concurrency=max(options.jobs, 1),
        )
    sweep = _Sweep(
        harness=harness or agent_harness(environ),
        judge=the_judge,
        environ=environ,
        reporter=reporter,
        keep_workspaces=options.keep_workspaces,
        max_turns=ep.max_turns,
        timeout=ep.timeout,
        counter=counter,
        make_workspace=make_workspace,
        budget=options.budget,
    )
    counts = _Counts()
    sem = asyncio.Semaphore(max(session_limit(options.jobs), 1))  # no two share an agent uid
    runnable = [u for u in ep.plan.units if u.cases]
    reporter.emit(
        SweepStarted(
            tier=TIER,
            units=len(runnable),
            items=sum(len(u.cases) + sum(1 for c in u.cases if c.baseline) for u in runnable),
        )
    )
    set_by_key = {(s.plugin, s.skill): s for s in ep.sets}
    es_by_key = {(es.plugin, es.skill): es for es in ep.eval_sets}
    models = {b.model.key: b for b in ep.models}
    writers: dict[tuple[str, str], res.ResultsWriter] = {}
    specs_cache: dict[tuple[str, str], specs.EvalsSpec] = {}
    try:
        for unit in ep.plan.units:
            key = (unit.plugin, unit.skill)
            es = es_by_key[key] if unit.cases else None
            skip = "" if es is not None else unit.skip_reason
            if (
                es is not None
                and options.budget is not None
                and not options.budget.admit(
                    plugin=unit.plugin,
                    skill=unit.skill,
                    tier=TIER,
                    model=models[unit.model],
                    sessions=len(unit.cases) + sum(1 for c in unit.cases if c.baseline),
                    prompt_tokens=_skill_tokens(es),
                )
            ):
                skip, es = options.budget.skip_reason(), None
            if es is None:
                reporter.emit(
                    UnitSkipped(
                        plugin=unit.plugin,
                        skill=unit.skill,
                        model=unit.model,
                        tier=TIER,
                        reason=skip,
                    )
                )
                continue
            if key not in specs_cache:
                specs_cache[key] = _load_spec(es, repository.root)
            if key not in writers:
                si = set_by_key[key]
                writers[key] = res.ResultsWriter(
                    es.results_dir,
                    si.stored,
                    ep.results_format,
                    plugin=es.plugin,
                    skill=es.skill,
                    on_wait=lambda m: reporter.emit(RunWarning(message=m)),
                )
            await _run_unit(
                unit,
                spec=specs_cache[key],
                eval_set=es,
                model=models[unit.model],
                writer=writers[key],
                sweep=sweep,
                sem=sem,
                counts=counts,
                ran_at=_now_rfc3339(clock),
                tier_timeout=ep.timeout,
                root=repository.root,
            )
    finally:
        if own_counter:
            before = len(counter.warnings)
            counter.save()
            for w in counter.warnings[before:]:
                reporter.emit(RunWarning(message=f"warn: {w}"))
            await counter.aclose()
        if judge_ is None:
            await the_judge.aclose()
    return EvalsOutcome(
        planned=len(ep.plan.cases),
        executed=counts.executed,
        passed=counts.passed,
        failed=counts.failed,
        errored=counts.errored,
        baselines=counts.baselines,
        results_paths=tuple(dict.fromkeys(counts.paths)),
        all_failed=sweep.tally.all_failed,
    )


def _skill_tokens(es: repo.EvalSet) -> int:
    """A rough token count of the skill's SKILL.md (4 bytes a token) for the budget's prior."""
    try:
        return (es.skill_dir / "SKILL.md").stat().st_size // 4
    except OSError:
        return 0


def _has_llm(ep: EvalsPlan, root: Path) -> bool:
    """Whether any planned case has an `llm` assertion (so a missing judge matters)."""
    wanted = {(c.plugin, c.skill, c.case) for c in ep.plan.cases}
    for es in ep.eval_sets:
        if not es.has_evals or not any(w[:2] == (es.plugin, es.skill) for w in wanted):
            continue
        for case in _load_spec(es, root).evals:
            if (es.plugin, es.skill, case.id) not in wanted:
                continue
            if any(a.type == "llm" for a in case.assertions):
                return True
            if case.suite is not None and _judged(case.suite.evaluators):
                return True
    return False


def _judged(evaluators: Sequence[Any]) -> bool:
    """Whether a suite case's evaluators need the LLM judge (llm_judge, rubric, nested)."""
    return any(e.type in ("llm_judge", "rubric") or _judged(e.children) for e in evaluators)


def _load_spec(es: repo.EvalSet, root: Path) -> specs.EvalsSpec:
    """The set's evals file and valid suites as one spec (`specs.load_authored_evals`)."""
    return specs.load_authored_evals(
        evals_path=es.evals_path,
        suite_paths=es.suite_paths,
        skill_dir=es.skill_dir,
        root=root,
        fixture_bases=es.fixture_bases,
    )


async def _run_unit(
    unit: planning.PlannedUnit,
    *,
    spec: specs.EvalsSpec,
    eval_set: repo.EvalSet,
    model: BoundModel,
    writer: res.ResultsWriter,
    sweep: _Sweep,
    sem: asyncio.Semaphore,
    counts: _Counts,
    ran_at: str,
    tier_timeout: int,
    root: Path,
) -> None:
    reporter = sweep.reporter
    skill_md_path = eval_set.skill_dir / "SKILL.md"
    try:
        skill_md = await asyncio.to_thread(skill_md_path.read_bytes)
    except OSError as exc:
        raise SpecError(
            f"reading skill under test: {exc.strerror or exc}", path=skill_md_path
        ) from None
    content_hash = await asyncio.to_thread(
        planning.eval_content_hash, eval_set.skill_dir, skip=eval_set.content_skips
    )
    pricing = model.model.pricing
    header = res.EntryHeader(
        provider=model.model.provider,
        model=model.model.id,
        display=model.model.display,
        harness=model.harness,
        tool_version=__version__,
        ran_at=ran_at,
        executed=True,
        content_hash=content_hash,
        timeout_seconds=tier_timeout,
        pricing=res.Pricing.of(pricing),
    )
    stored = writer.file.models.get(model.model.key)
    record = res.EvalUnitRecord(
        stored.evals if stored is not None else None,
        header=header,
        valid_ids=unit.valid_keys,
        planned=[c.case for c in unit.cases],
    )
    by_id = {c.id: c for c in spec.evals}
    planned = [(pc, by_id[pc.case]) for pc in unit.cases if pc.case in by_id]
    n_base = sum(1 for pc, _ in planned if pc.baseline)
    reporter.emit(
        UnitStarted(
            plugin=unit.plugin,
            skill=unit.skill,
            model=unit.model,
            tier=TIER,
            items=len(planned) + n_base,
            detail="run",
        )
    )
    estimates = await asyncio.gather(
        *(token_estimate(sweep.counter, model, skill_md, case.prompt) for _, case in planned)
    )
    for w in getattr(sweep.counter, "warnings", []):
        if w not in sweep.reported:
            sweep.reported.add(w)
            reporter.emit(RunWarning(message=w))
    fresh: list[res.EvalResult] = []
    path_holder: list[Path] = []
    errored_ids: set[str] = set()

    async def one(pc: planning.PlannedCase, case: specs.EvalCase, est: res.Estimate | None) -> None:
        async with sem:
            fp = planning.eval_fingerprint(case)
            base_result: res.EvalResult | None = None
            if pc.baseline:
                reporter.emit(
                    ItemStarted(
                        skill=unit.skill, model=unit.model, tier=TIER, label=f"{case.id} (baseline)"
                    )
                )
                brun = await _guarded_run(
                    case, model=model, skill_dir=installed, baseline=True, sweep=sweep
                )
                base_result = build_result(
                    case, brun, model=model, fingerprint_hex=fp, estimate=None, baseline=True
                )
                counts.baselines += 1
                reporter.emit(
                    _item_done(
                        base_result,
                        skill=unit.skill,
                        model=unit.model,
                        baseline=True,
                        transcript=brun.transcript,
                    )
                )
            reporter.emit(ItemStarted(skill=unit.skill, model=unit.model, tier=TIER, label=case.id))
            run = await _guarded_run(
                case, model=model, skill_dir=installed, baseline=False, sweep=sweep
            )
            result = build_result(case, run, model=model, fingerprint_hex=fp, estimate=est)
            if result.runtime_error:
                # No new verdict: the stored result (if any) stays as it was, and the entry keeps
                # its old content hash, so the case is stale and runs again next time (issue 8).
                errored_ids.add(case.id)
            else:
                usable_base = (
                    base_result
                    if base_result is not None and not base_result.runtime_error
                    else None
                )
                entry = record.add(result, usable_base)
                path_holder.append(writer.put_evals(model.model.key, entry))
            fresh.append(result)
            counts.executed += 1
            if result.runtime_error:
                counts.errored += 1
            elif result.passed:
                counts.passed += 1
            else:
                counts.failed += 1
            reporter.emit(
                _item_done(
                    result,
                    skill=unit.skill,
                    model=unit.model,
                    baseline=False,
                    transcript=run.transcript,
                )
            )

    try:
        # a root skill (standalone repository, single-skill plugin) is installed from a copy
        # named after it: its directory is named after the checkout
        with planning.staged_skill(eval_set, lifecycle.scratch_dir()) as installed:
            async with asyncio.TaskGroup() as tg:
                for (pc, case), est in zip(planned, estimates, strict=True):
                    tg.create_task(one(pc, case, est))
    except BaseExceptionGroup as group:
        first = first_evolve_error(group)
        if first is not None:
            raise first from None
        raise
    if not record.complete and record.fresh and not errored_ids:
        path_holder.append(writer.put_evals(model.model.key, record.entry(final=True)))
    counts.paths.extend(path_holder[-1:])
    done = [r for r in fresh]
    durations = [
        r.timing.executor_duration_seconds
        for r in done
        if r.timing is not None and r.timing.executor_duration_seconds is not None
    ]
    extra: dict[str, Any] = {}
    if durations:
        extra["avg_run_seconds"] = round1(sum(durations) / len(durations))
    reporter.emit(
        UnitFinished(
            plugin=unit.plugin,
            skill=unit.skill,
            model=unit.model,
            tier=TIER,
            passed=sum(1 for r in done if r.passed is True and not r.runtime_error),
            total=len(done),
            errored=sum(1 for r in done if r.runtime_error),
            results_path=repo.rel_path(root, path_holder[-1]) if path_holder else "",
            extra=extra,
        )
    )


async def _guarded_run(
    case: specs.EvalCase, *, model: BoundModel, skill_dir: Path, baseline: bool, sweep: _Sweep
) -> CaseRun:
    """`run_case`, turning an unexpected failure of one run into a runtime error (never a crash).

    `EvolveError`s (missing fixture, git failure) propagate: they abort the sweep like evolve.
    """
    try:
        return await run_case(
            case, model=model, skill_dir=skill_dir, baseline=baseline, sweep=sweep
        )
    except (EvolveError, asyncio.CancelledError):
        raise
    except Exception as exc:
        return CaseRun(
            transcript=Transcript(),
            runtime_error=f"internal error: {type(exc).__name__}: {exc}",
            graded=None,
            workspace=Path(),
        )
