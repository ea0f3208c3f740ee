"""`run all` as a function: checks → triggers → evals → report, in one call that returns data.

Owns: `RunAllOptions`, the step events (`ChecksDone`, `TriggersReady`, `EvalsReady`, `ReportDone`),
`run_all` and the one model rule (`sweep_models`: which models a sweep runs when none are named,
and why, for `run all`/`run triggers`/`run evals` and `init`'s closing estimate alike). The tiers run one after the other over the whole repository (all trigger units, then
all eval units) rather than interleaved per skill, so each engine keeps its own sweep; the results
are the same as evolve's. Timeouts: 120 s per trigger session and 600 s per eval run unless a
timeout is given (then it applies to both). Check failures only count under `strict`. A missing
Claude Code CLI skips the trigger tier (the evals tier reports it).

Guarantees: never prints and never parses argv: progress goes to the `Reporter` (engine events)
and to `on_step` (one call per finished step, in order, so a front end can show each step's
outcome before the next starts); the outcome is returned. Plans once: with `confirm`, both tiers
are planned before any session starts, `confirm` sees those plans (the cost confirmation) and the
run executes exactly them. Never does: decide exit codes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from evolve_action import evals, plan, triggers
from evolve_action.catalog import PR_DEFAULT_MODEL, BoundModel
from evolve_action.checks import CheckOptions, CheckReport, run_checks
from evolve_action.config import Config, resolve_results_format
from evolve_action.events import Reporter
from evolve_action.flows._report import ReportOptions, ReportOutcome, regenerate_report
from evolve_action.flows._tiers import trigger_options
from evolve_action.harness import agent_harness, check_for_models, sweep_failed
from evolve_action.repo import Repository

__all__ = [
    "ChecksDone",
    "EvalsReady",
    "ModelChoice",
    "PlanCollector",
    "ReportDone",
    "RunAllOptions",
    "RunAllOutcome",
    "RunAllStep",
    "TriggersReady",
    "run_all",
    "sweep_models",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunAllOptions:
    """What `run all` runs: the evals options (their selection applies to every tier) and more."""

    repository: Repository
    config: Config
    environ: Mapping[str, str]
    evals: evals.EvalsOptions
    """Selection, models, jobs, timeout and format; the trigger tier uses the same values."""
    runs: int = triggers.DEFAULT_RUNS
    """Trigger sessions per query."""
    early_stop: bool = True
    """Stop a query's trigger runs once its verdict cannot change."""
    dry_run: bool = False
    """Plan both tiers, run nothing, write nothing."""
    report: bool = True
    """Regenerate the reports after the evals."""
    strict: bool = False
    """Check failures count as failures (they never do otherwise)."""
    tiers: tuple[str, ...] = ("triggers", "evals")
    """The agent tiers to plan and run (`run triggers --shard` and `run evals --shard`: one)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChecksDone:
    """Tier 0 finished."""

    report: CheckReport


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggersReady:
    """The trigger tier is planned; it runs next unless `skipped` or a dry run (`plan` is set)."""

    warnings: tuple[str, ...] = ()
    """Model-selection warnings."""
    plan: plan.Plan | None = None
    """The trigger plan, for a dry run."""
    plan_warnings: tuple[str, ...] = ()
    """Planning warnings, for a dry run."""
    models: tuple[BoundModel, ...] = ()
    """The models the trigger plan runs, for a dry run's cost estimate."""
    skipped: bool = False
    """No selected model has an available harness: the tier does not run."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalsReady:
    """The evals tier is planned; it runs next unless this is a dry run."""

    planned: evals.EvalsPlan
    jobs: int
    dry_run: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportDone:
    """The reports were regenerated."""

    outcome: ReportOutcome


RunAllStep = ChecksDone | TriggersReady | EvalsReady | ReportDone


@dataclass(frozen=True, slots=True, kw_only=True)
class RunAllOutcome:
    """Everything `run all` did."""

    checks: CheckReport
    triggers: triggers.TriggersOutcome | None = None
    """None when skipped or for a dry run."""
    evals_plan: evals.EvalsPlan | None
    """None when the evals tier is not selected."""
    evals: evals.EvalsOutcome | None = None
    """None for a dry run."""
    report: ReportOutcome | None = None
    """None for a dry run or without `report`."""
    failed: bool = False
    """A check failed (under `strict`), or a trigger query or an eval case failed."""


def run_all(
    options: RunAllOptions,
    *,
    reporter: Reporter,
    on_step: Callable[[RunAllStep], None] | None = None,
    cwd: Path | None = None,
    confirm: Callable[[list[plan.Plan], list[BoundModel]], None] | None = None,
) -> RunAllOutcome:
    """Run checks → triggers → evals → report; return what happened.

    `confirm` (not for a dry run) is called once with the plans of both tiers and their models
    before any session starts (it may raise to stop the run); the run then executes those plans,
    never planning again.
    """

    def step(event: RunAllStep) -> None:
        if on_step is not None:
            on_step(event)

    repo, config, environ, eo = options.repository, options.config, options.environ, options.evals
    checks = run_checks(repo, config, CheckOptions(signals=False))
    step(ChecksDone(report=checks))
    failed = checks.failures > 0 and options.strict

    built = trigger_options(
        repo,
        config,
        environ,
        plugins=eo.plugins,
        skills=eo.skills,
        models=eo.models,
        harnesses=eo.harnesses,
        new=eo.new,
        modified=eo.modified,
        failed=eo.failed,
        runs=options.runs,
        jobs=eo.jobs,
        timeout=eo.timeout,
        early_stop=options.early_stop,
        keep_workspaces=eo.keep_workspaces,
        dry_run=options.dry_run,
        results_format=eo.results_format,
        require_cli=False,
        budget=eo.budget,
    )
    trig: triggers.TriggersOutcome | None = None
    tplanned: tuple[plan.Plan, list[plan.SetInput], list[str]] | None = None
    credentials_checked = False
    if "triggers" not in options.tiers:
        pass
    elif not built.options.models:  # a dry run says what the run would do: skip the tier
        step(TriggersReady(warnings=built.warnings, skipped=True))
    elif options.dry_run:
        tplan, _, twarnings = triggers.make_plan(built.options)
        step(
            TriggersReady(
                warnings=built.warnings,
                plan=tplan,
                plan_warnings=tuple(twarnings),
                models=built.options.models,
            )
        )
    else:
        step(TriggersReady(warnings=built.warnings))
        tplanned = triggers.make_plan(built.options)
    planned: evals.EvalsPlan | None = None
    if "evals" in options.tiers and confirm is not None and not options.dry_run:
        planned = evals.plan_evals(repo, config, eo, environ=environ)
    if confirm is not None and not options.dry_run:
        plans = ([tplanned[0]] if tplanned is not None else []) + (
            [planned.plan] if planned is not None else []
        )
        models = [
            *(built.options.models if tplanned is not None else ()),
            *(planned.models if planned is not None else ()),
        ]
        confirm(plans, models)
    if tplanned is not None:
        if any(u.cases for u in tplanned[0].units):
            check_for_models(
                environ, built.options.models, judge=False
            )  # exit 2 before any session
            credentials_checked = True
        trig = asyncio.run(
            triggers.run(
                built.options,
                reporter,
                agent_harness(built.options.environ),
                planned=tplanned,
            )
        )
        if trig.all_failed:
            raise sweep_failed(trig.all_failed, tier="triggers")
        failed = failed or trig.failed

    ev: evals.EvalsOutcome | None = None
    if "evals" in options.tiers:
        if planned is None:
            planned = evals.plan_evals(repo, config, eo, environ=environ)
        step(EvalsReady(planned=planned, jobs=eo.jobs, dry_run=options.dry_run))
    if options.dry_run:
        return RunAllOutcome(checks=checks, evals_plan=planned, failed=failed)
    if planned is not None:
        if not credentials_checked and planned.plan.cases:
            check_for_models(environ, planned.models)
        ev = asyncio.run(
            evals.run_evals(repo, config, eo, environ=environ, reporter=reporter, planned=planned)
        )
        if ev.all_failed:
            raise sweep_failed(ev.all_failed, tier="evals")
    rep: ReportOutcome | None = None
    if options.report:
        rep = regenerate_report(
            ReportOptions(
                repo=repo,
                config=config,
                results_format=resolve_results_format(eo.results_format, config),
            ),
            cwd=cwd or repo.root,
        )
        step(ReportDone(outcome=rep))
    return RunAllOutcome(
        checks=checks,
        triggers=trig,
        evals_plan=planned,
        evals=ev,
        report=rep,
        failed=failed or (ev is not None and not ev.ok),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelChoice:
    """The models a sweep runs, and why."""

    models: tuple[str, ...]
    """What goes into the options' `models`: empty means the tiers' own resolution (the configured
    `models`, or the catalog's choice for a named `--harness`)."""
    why: str
    """Where the choice comes from, said to the user (`--model`, `.evolve.yaml`, the default)."""
    default: bool = False
    """The one default model (`catalog.PR_DEFAULT_MODEL`): nothing named any."""


def sweep_models(
    models: tuple[str, ...], harnesses: tuple[str, ...], config: Config
) -> ModelChoice:
    """The one model rule: the named models when given, else config `models`, else the one default
    model (`catalog.PR_DEFAULT_MODEL`) — never every catalog model. A named harness without a model
    keeps the catalog's choice for that harness."""
    if models:
        return ModelChoice(models=models, why="--model")
    if harnesses:
        return ModelChoice(models=(), why="the catalog's models for --harness")
    if config.models is not None:
        return ModelChoice(models=(), why="`models:` in .evolve.yaml")
    return ModelChoice(
        models=(PR_DEFAULT_MODEL,),
        why="the default: no --model and no `models:` in .evolve.yaml; name others with either",
        default=True,
    )


class PlanCollector:
    """An `on_step` for a dry run of `run_all`: collects the plans and the models they run, for
    `estimate_cost` (the estimate `run all --dry-run` prints, and `init`'s closing one)."""

    def __init__(self) -> None:
        self.plans: list[plan.Plan] = []
        self.models: list[BoundModel] = []

    def __call__(self, step: RunAllStep) -> None:
        """Keep a planned tier's plan and models."""
        if isinstance(step, TriggersReady) and step.plan is not None:
            self.plans.append(step.plan)
            self.models.extend(step.models)
        elif isinstance(step, EvalsReady) and step.dry_run:
            self.plans.append(step.planned.plan)
            self.models.extend(step.planned.models)
