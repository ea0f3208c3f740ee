"""Tier 1: trigger accuracy through the real agent (engine spec §8).

Owns: `TriggerOptions`, `run()` (plan → per eval set one shared workspace with every skill of the
plugin installed → per model one unit → each query × `--runs` sessions → verdicts → results written
after every finished query), hit detection (`is_hit`), verdict-preserving early stop (`decided`,
`should_launch`), scoring (`score`), retries of transient failures, and the outcome values the CLI
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
import datetime
import posixpath
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from evolve_action import events, plan, specs
from evolve_action import results as res
from evolve_action.catalog import BoundModel
from evolve_action.encoding import Format
from evolve_action.errors import SpecError
from evolve_action.gocompat import round1
from evolve_action.harness import ErrorClass, Harness, SessionSpec, ToolCall, Transcript
from evolve_action.repo import EvalSet, Repository
from evolve_action.tokens import TokenCounter, estimate_payload
from evolve_action.workspace import create_trigger_workspace, remove_workspace

TIER = "triggers"
DEFAULT_RUNS = 3
DEFAULT_TIMEOUT_SECONDS = 120
TRIGGER_MAX_TURNS = 2
"""evolve's fixed trigger turn cap (`--max-turns 2`)."""
TRIGGER_TOOLS = ("Skill", "Read")
"""Auto-approved in trigger sessions (evolve's `--allowedTools "Skill Read"`); other tools are denied."""


class RunResult(StrEnum):
    """The outcome of one trigger session."""

    HIT = "hit"
    MISS = "miss"
    ERROR = "error"


# ------------------------------------------------------------------------------------------------
# Pure core: hits, verdicts, early stop
# ------------------------------------------------------------------------------------------------


def is_hit(call: ToolCall, skill: str) -> bool:
    """True when `call` invokes `skill`: `Skill` naming it exactly (optionally `ns:`), or a `Read` of its SKILL.md."""
    if call.name == "Skill":
        named = call.input.get("skill")
        if not isinstance(named, str):
            return False
        named = named.strip().lstrip("/")
        return named == skill or (":" in named and named.rsplit(":", 1)[1] == skill)
    if call.name == "Read":
        path = call.input.get("file_path")
        if not isinstance(path, str) or not path:
            return False
        norm = posixpath.normpath(path.replace("\\", "/"))
        tail = f"skills/{skill}/SKILL.md"
        return norm == tail or norm.endswith("/" + tail)
    return False


def classify_run(t: Transcript, skill: str) -> RunResult:
    """HIT if any tool call hit (even in a session that later failed), ERROR for failed sessions, else MISS.

    A session that used up its turn cap (`error_max_turns`) completed normally for triggers: a miss.
    """
    if any(is_hit(c, skill) for c in t.tool_calls):
        return RunResult.HIT
    if t.error is None:
        return RunResult.MISS
    if t.error is ErrorClass.RUN_ERROR and t.subtype == "error_max_turns":
        return RunResult.MISS
    return RunResult.ERROR


def passes(hits: int, completed: int, should_trigger: bool) -> bool:
    """Spec §8.6: rate = hits/completed; should-trigger passes at rate ≥ 0.5, should-not at < 0.5."""
    if should_trigger:
        return 2 * hits >= completed
    return 2 * hits < completed


def decided(hits: int, misses: int, remaining: int, should_trigger: bool) -> bool:
    """True when no outcome of the `remaining` runs (hit, miss or error) can change the verdict.

    With no completed run yet nothing is decided (unless nothing remains either).
    """
    if hits + misses == 0:
        return remaining == 0
    low = passes(hits, hits + misses + remaining, should_trigger)
    high = passes(hits + remaining, hits + misses + remaining, should_trigger)
    mid = passes(hits, hits + misses, should_trigger)
    return low == high == mid


def should_launch(
    *, hits: int, misses: int, in_flight: int, remaining: int, should_trigger: bool
) -> bool:
    """Early-stop scheduling: start another run only if the runs in flight cannot settle the verdict.

    `remaining` counts runs not started yet. A run starts when the verdict is open and no way the
    in-flight runs can come back (any mix of hits and misses) would settle it. So a 3-run query
    starts two runs, and the third only when they disagree (or one errored): the fewest sessions
    for the same verdict, at the cost of some latency per query (other queries fill the slots).
    """
    if remaining <= 0 or decided(hits, misses, in_flight + remaining, should_trigger):
        return False
    return not any(
        decided(hits + k, misses + in_flight - k, remaining, should_trigger)
        for k in range(in_flight + 1)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """One trigger session as the engine saw it."""

    result: RunResult
    seconds: float
    attempts: int = 1
    error: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryOutcome:
    """One query's runs and verdict."""

    query: str
    should_trigger: bool
    runs: tuple[RunRecord, ...] = ()
    reason: str = ""
    """Why it ran (plan reason)."""

    @property
    def hits(self) -> int:
        """Runs that hit."""
        return sum(1 for r in self.runs if r.result is RunResult.HIT)

    @property
    def completed(self) -> int:
        """Runs that completed (hit or miss)."""
        return sum(1 for r in self.runs if r.result is not RunResult.ERROR)

    @property
    def errored(self) -> int:
        """Runs that failed."""
        return sum(1 for r in self.runs if r.result is RunResult.ERROR)

    @property
    def passed(self) -> bool | None:
        """The verdict over completed runs; None when every run errored."""
        if self.completed == 0:
            return None
        return passes(self.hits, self.completed, self.should_trigger)

    @property
    def avg_run_seconds(self) -> float | None:
        """round1(mean wall seconds of the completed runs)."""
        done = [r.seconds for r in self.runs if r.result is not RunResult.ERROR]
        return round1(sum(done) / len(done)) if done else None

    @property
    def status(self) -> str:
        """`passed`, `failed` or `errored` (no completed run)."""
        p = self.passed
        return "errored" if p is None else ("passed" if p else "failed")


def score(q: QueryOutcome, *, spec_hash: str, estimate: res.Estimate | None) -> res.TriggerResult:
    """The stored result of one query (schema 5): counts over completed runs only."""
    if q.completed == 0:
        return res.TriggerResult(
            query=q.query, should_trigger=q.should_trigger, estimate=estimate, spec_hash=spec_hash
        )
    return res.TriggerResult(
        query=q.query,
        should_trigger=q.should_trigger,
        hits=q.hits,
        runs=q.completed,
        passed=q.passed,
        avg_run_seconds=q.avg_run_seconds,
        estimate=estimate,
        spec_hash=spec_hash,
    )


def query_line(q: QueryOutcome) -> str:
    """The per-query detail: `rate=0.67 avg=1.2s expect=yes` plus run and error counts."""
    rate = q.hits / q.completed if q.completed else 0.0
    avg = q.avg_run_seconds if q.avg_run_seconds is not None else 0.0
    text = f"rate={rate:.2f} avg={avg:.1f}s expect={'yes' if q.should_trigger else 'no'}"
    text += f" hits={q.hits}/{q.completed}"
    if q.errored:
        first = next((r.error for r in q.runs if r.error), "")
        text += f" errored={q.errored}" + (f" ({first})" if first else "")
    return text


# ------------------------------------------------------------------------------------------------
# Options and outcome
# ------------------------------------------------------------------------------------------------


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(tz=datetime.UTC)


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
    retries: int = 2
    """Extra attempts for a run that failed transiently (429/529, disconnect) before any tool call."""
    retry_backoff_seconds: float = 1.0
    """First retry delay; doubled per attempt."""
    tool_version: str = ""
    now: Callable[[], datetime.datetime] = _utc_now
    token_cache: Path | None = None
    count_tokens: bool = True
    tmp_root: Path | None = None


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
    return p, built.sets, built.warnings


async def run(
    options: TriggerOptions,
    reporter: events.Reporter,
    harness: Harness,
    *,
    counter: TokenCounter | None = None,
    make_workspace: Callable[..., Path] = create_trigger_workspace,
) -> TriggersOutcome:
    """Run the trigger tier: plan, then every runnable unit in sweep order; results written as queries finish.

    `make_workspace(skills_dir, environ=…, tmp_root=…)` builds the shared per-set workspace (tests
    inject a stub); `counter` counts estimate tokens (default: a `TokenCounter` over `options`).
    """
    p, set_inputs, warnings = make_plan(options)
    for w in warnings:
        reporter.emit(events.Warning(message=w))
    if options.dry_run:
        return TriggersOutcome(plan=p, warnings=tuple(warnings))
    by_key = {(s.plugin, s.skill): s for s in set_inputs}
    eval_sets = {(es.plugin, es.skill): es for es in options.repo.eval_sets()}
    models = {m.model.key: m for m in options.models}
    own_counter = counter is None
    if counter is None:
        counter = TokenCounter(
            options.environ,
            cache_path=options.token_cache,
            concurrency=options.jobs,
            enabled=options.count_tokens,
        )
    sem = asyncio.Semaphore(max(options.jobs, 1))
    units: list[UnitOutcome] = []
    kept: list[Path] = []
    all_warnings = list(warnings)
    try:
        # Units arrive grouped by eval set; one workspace per set, shared by its models.
        groups: dict[tuple[str, str], list[plan.PlannedUnit]] = {}
        for u in p.units:
            groups.setdefault((u.plugin, u.skill), []).append(u)
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
                            reason="results complete",
                        )
                    )
                    units.append(
                        UnitOutcome(
                            plugin=u.plugin,
                            skill=u.skill,
                            model=u.model,
                            skipped="results complete",
                        )
                    )
            if not runnable:
                continue
            _warn_skill_name(es, options.repo, reporter, all_warnings)
            skill_md = _read_skill_md(es)
            writer = res.ResultsWriter(
                es.results_dir,
                set_input.stored,
                options.results_format,
                plugin=es.plugin,
                skill=es.skill,
            )
            ws = await asyncio.to_thread(
                make_workspace,
                es.skill_dir.parent,
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
                            writer=writer,
                            skill_md=skill_md,
                            options=options,
                            reporter=reporter,
                            harness=harness,
                            counter=counter,
                            sem=sem,
                        )
                    )
            finally:
                if options.keep_workspaces:
                    kept.append(ws)
                    reporter.emit(events.Warning(message=f"workspace kept: {ws}"))
                else:
                    await asyncio.to_thread(remove_workspace, ws)
    finally:
        counter.save()
        for w in counter.warnings:
            if w not in all_warnings:
                all_warnings.append(w)
                reporter.emit(events.Warning(message=w))
        if own_counter:
            await counter.aclose()
    return TriggersOutcome(
        plan=p, units=tuple(units), warnings=tuple(all_warnings), kept_workspaces=tuple(kept)
    )


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
        reporter.emit(events.Warning(message=msg, path=repo.rel(es.triggers_path)))


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
    pricing = (
        res.Pricing(
            input_per_mtok=m.pricing.input_per_mtok, output_per_mtok=m.pricing.output_per_mtok
        )
        if m.pricing is not None
        else None
    )
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
    )


async def _run_unit(
    unit: plan.PlannedUnit,
    *,
    set_input: plan.SetInput,
    model: BoundModel,
    workspace: Path,
    writer: res.ResultsWriter,
    skill_md: bytes,
    options: TriggerOptions,
    reporter: events.Reporter,
    harness: Harness,
    counter: TokenCounter,
    sem: asyncio.Semaphore,
) -> UnitOutcome:
    cases = {c.query: c for c in set_input.triggers or ()}
    stored = set_input.stored.models.get(unit.model) if set_input.stored else None
    old = stored.triggers if stored is not None else None
    record = res.TriggerUnitRecord(
        old,
        header=_header(options, model, set_input.trigger_content_hash),
        valid_queries=unit.valid_keys,
        planned=[c.case for c in unit.cases],
    )
    reporter.emit(
        events.UnitStarted(
            plugin=unit.plugin,
            skill=unit.skill,
            model=unit.model,
            tier=TIER,
            items=len(unit.cases),
            detail=f"{len(unit.cases)} queries x {options.runs} runs, run",
        )
    )
    estimates = await asyncio.gather(
        *(_estimate(counter, model, skill_md, c.case) for c in unit.cases)
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
            options=options,
            reporter=reporter,
            harness=harness,
            sem=sem,
            reason=str(case.reason),
        )
        outcomes[i] = outcome
        entry = record.add(score(outcome, spec_hash=q.spec_hash, estimate=estimates[i]))
        path_box[:] = [writer.put_triggers(unit.model, entry)]
        reporter.emit(
            events.ItemDone(
                skill=unit.skill,
                model=unit.model,
                tier=TIER,
                label=_short(q.query),
                status=outcome.status,
                detail=query_line(outcome),
            )
        )

    async with asyncio.TaskGroup() as tg:
        for i, case in enumerate(unit.cases):
            tg.create_task(one_query(i, case))
    done = tuple(o for o in outcomes if o is not None)
    path = path_box[0] if path_box else None
    summary = record.entry(final=True).summary
    reporter.emit(
        events.UnitFinished(
            plugin=unit.plugin,
            skill=unit.skill,
            model=unit.model,
            tier=TIER,
            passed=sum(1 for o in done if o.passed is True),
            total=len(done),
            errored=sum(1 for o in done if o.passed is None),
            results_path=options.repo.rel(path) if path else "",
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
        plugin=unit.plugin, skill=unit.skill, model=unit.model, queries=done, results_path=path
    )


async def _estimate(
    counter: TokenCounter, model: BoundModel, skill_md: bytes, query: str
) -> res.Estimate | None:
    tokens = await counter.count(
        model.model.provider, model.model.id, estimate_payload(skill_md, query)
    )
    if tokens is None:
        return None
    from evolve_action.catalog import estimate_cost_usd

    return res.Estimate(
        input_tokens=tokens, input_cost_usd=estimate_cost_usd(model.model.pricing, tokens)
    )


def _short(text: str, n: int = 70) -> str:
    """The first `n` bytes of a query (evolve's console width), never splitting a character."""
    return text.encode("utf-8")[:n].decode("utf-8", "ignore")


async def _run_query(
    q: plan.TriggerCaseInput,
    *,
    skill: str,
    model: BoundModel,
    workspace: Path,
    options: TriggerOptions,
    reporter: events.Reporter,
    harness: Harness,
    sem: asyncio.Semaphore,
    reason: str,
) -> QueryOutcome:
    total = max(options.runs, 1)
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
                options=options,
                reporter=reporter,
                harness=harness,
                sem=sem,
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
                if options.early_stop and not should_launch(
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
    options: TriggerOptions,
    reporter: events.Reporter,
    harness: Harness,
    sem: asyncio.Semaphore,
    label: str,
) -> RunRecord:
    spec = SessionSpec(
        prompt=query,
        workspace=workspace,
        model=model.cli_model,
        max_turns=options.max_turns,
        timeout_seconds=float(options.timeout_seconds),
        allowed_tools=TRIGGER_TOOLS,
        permission_mode="default",
    )
    seconds = 0.0
    attempts = 0
    while True:
        attempts += 1
        async with sem:
            reporter.emit(
                events.ItemStarted(skill=skill, model=model.model.key, tier=TIER, label=label)
            )
            began = time.monotonic()
            t = await harness.run(spec, stop=lambda c: is_hit(c, skill))
            seconds += time.monotonic() - began
        result = classify_run(t, skill)
        retry = (
            result is RunResult.ERROR
            and t.error is not None
            and t.error.retryable
            and not t.tool_calls
            and attempts <= options.retries
        )
        if not retry:
            break
        await asyncio.sleep(options.retry_backoff_seconds * (2 ** (attempts - 1)))
    return RunRecord(
        result=result,
        seconds=seconds,
        attempts=attempts,
        error=(t.error_message or str(t.error)) if result is RunResult.ERROR else "",
    )
