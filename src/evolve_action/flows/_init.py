"""`evolve-action init`: draft trigger queries and eval cases for the skills that have none.

Owns: `InitOptions`, `run_init` and its outcome: choosing the skills to draft (every skill
without definitions, or `--skill`); one drafting request per skill through the judge's client
(`grading.Judge.call_tool` over `harness.anthropic_client`, the configured judge model; the
request is `_draft.build_request`); the gates (`_draft`); writing evolve's
`evals/<skill>/triggers.yaml`, `evals.yaml` and fixtures under `files/` (or, in a repository
whose definitions are all skill-creator's, `<skill>/evals/evals.json`, `trigger-queries.json`
and `evals/files/`: `uses_skill_creator`); checking what was written (Tier 0 and the plan, like
any authored file); the estimate of the first sweep (`run all --new --dry-run`'s own, on the
same models and cases); `--check` (the drafted triggers run
once, in a throwaway copy of the repository) and `--workflow` (the tested example workflows
copied to `.github/workflows/`).

Guarantees: never overwrites an authored file (with `force` the old file is first renamed to
`<name>.bak`, or `<name>.bak.<n>`, and put back if the draft replacing it fails Tier 0), never
writes or removes a `results.*` file, never leaves a drafted file that fails Tier 0 (it is
removed again and reported); without credentials it raises before any request. Never prints
(each step goes to `on_step`), never parses argv, never reads `os.environ` (the environment is
an option).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from evolve_action import evals, grading, plan, triggers
from evolve_action.catalog import (
    PR_DEFAULT_MODEL,
    build_catalog,
    estimate_cost_usd,
    measured_cost_usd,
)
from evolve_action.checks import CheckOptions, run_checks
from evolve_action.config import Config, resolve_repository
from evolve_action.encoding import atomic_write_text, encode_json_compact, find_one
from evolve_action.errors import EnvironmentProblem, UsageError
from evolve_action.events import NullReporter, Reporter
from evolve_action.flows._draft import (
    DRAFT_TOOL,
    MAX_TOKENS,
    DraftedCase,
    DraftRequest,
    Dropped,
    GatedQueries,
    SkillText,
    build_request,
    gate_evals,
    gate_queries,
    parse_answer,
    render_creator_evals,
    render_creator_triggers,
    render_evals,
    render_triggers,
)
from evolve_action.flows._run_all import PlanCollector, RunAllOptions, run_all, sweep_models
from evolve_action.flows._shard import CHARS_PER_TOKEN, CostEstimate, estimate_cost
from evolve_action.flows._tiers import trigger_options
from evolve_action.harness import agent_harness
from evolve_action.repo import Repository, Skill, in_skill_trigger_files, parse_frontmatter
from evolve_action.specs import Severity

__all__ = [
    "WORKFLOWS",
    "WORKFLOW_SECRET",
    "CheckedQuery",
    "InitOptions",
    "InitOutcome",
    "InitPlanned",
    "SkillDraft",
    "run_init",
    "uses_skill_creator",
]

WORKFLOWS: Mapping[str, str] = {"pr.yml": "evolve-pr.yml", "release-gate.yml": "evolve-gate.yml"}
"""The example workflows `--workflow` writes (bundled name → name under `.github/workflows/`)."""

WORKFLOW_SECRET = "ANTHROPIC_API_KEY"
"""The repository secret the example workflows read."""

ESTIMATED_OUTPUT_TOKENS = 1_500
"""Output tokens assumed per skill for the estimate shown before drafting."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InitOptions:
    """What `init` drafts and writes."""

    cwd: Path
    environ: Mapping[str, str]
    root: Path | None = None
    layout: str | None = None
    skills: tuple[str, ...] = ()
    """Only these skills (they may already have definitions: then `force` decides)."""
    should: int = 10
    should_not: int = 10
    evals: int = 2
    """Eval cases per skill; 0 drafts triggers only."""
    force: bool = False
    """Replace authored files, keeping each as `<name>.bak`."""
    check: bool = False
    """Run the drafted triggers once (in a copy of the repository) and list the misses."""
    check_model: str = PR_DEFAULT_MODEL
    """The one model `check` runs the triggers with (the PR job's default)."""
    workflow: bool = False
    """Write the example workflows to `.github/workflows/`."""
    judge_model: str | None = None
    jobs: int = 4
    timeout: float = 300.0
    """Seconds allowed for one drafting request."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InitPlanned:
    """Step: the skills to draft and the estimate, before any request is sent."""

    model: str
    skills: tuple[tuple[str, str], ...]
    """`(plugin, skill)` in sweep order."""
    estimate_usd: float | None
    input_tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillDraft:
    """What was drafted and written for one skill."""

    plugin: str
    skill: str
    language: str = ""
    should: int = 0
    should_not: int = 0
    evals: int = 0
    written: tuple[Path, ...] = ()
    backups: tuple[Path, ...] = ()
    kept: tuple[Path, ...] = ()
    """Authored files left as they were (no `force`)."""
    dropped: tuple[Dropped, ...] = ()
    error: str = ""
    """Why nothing was drafted (HTTP error, no tool call…), else empty."""
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckedQuery:
    """One drafted query the check run got wrong (missed, or wrongly took)."""

    plugin: str
    skill: str
    query: str
    should_trigger: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class InitOutcome:
    """Everything `init` did."""

    root: Path
    model: str
    drafts: tuple[SkillDraft, ...] = ()
    cost_usd: float | None = None
    """The measured drafting cost (usage × the judge model's price)."""
    findings: tuple[str, ...] = ()
    """Tier 0 errors of drafted files (those files were removed again)."""
    planned_triggers: int = 0
    """Trigger cases (query × model) in the first sweep's plan."""
    planned_evals: int = 0
    """Eval cases (case × model) in the first sweep's plan."""
    sweep: CostEstimate | None = None
    """The estimate of the first sweep: what `run all --new --dry-run` prints for the repository
    (every skill with new cases, not only the drafted ones), by the same computation."""
    sweep_why: str = ""
    """Why the sweep runs the models it does (`flows.sweep_models`: `.evolve.yaml`'s `models`, or
    the one default model)."""
    checked: tuple[CheckedQuery, ...] | None = None
    """With `check`: the queries the skill missed or wrongly took (empty: all right), one run
    each with `InitOptions.check_model`."""
    check_model: str = ""
    """The one model `check` runs with (also the one-model suggestion for the first sweep)."""
    workflows: tuple[Path, ...] = ()
    workflows_kept: tuple[Path, ...] = ()
    workflow_backups: tuple[Path, ...] = ()
    config_warnings: tuple[str, ...] = field(default_factory=tuple)
    """What reading the configuration warned about."""


InitStep = InitPlanned


def skill_text(skill: Skill, siblings: list[Skill]) -> SkillText:
    """A skill's name, description and body, and its siblings' descriptions, read from disk."""
    own = _read_skill(skill)
    return SkillText(
        name=skill.name,
        description=own[0],
        body=own[1],
        siblings=tuple((s.name, _read_skill(s)[0]) for s in siblings if s.name != skill.name),
    )


def _read_skill(skill: Skill) -> tuple[str, str]:
    try:
        text = skill.skill_md.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "", ""
    fm = parse_frontmatter(text, skill.skill_md)
    if fm is None:
        return "", text
    body = "\n".join(text.splitlines()[fm.end_line :])
    return fm.fields.get("description", ""), body


def _targets(repo: Repository, options: InitOptions) -> list[Skill]:
    defined = {(e.plugin, e.skill) for e in repo.eval_sets()}
    skills = repo.skills()
    known = {s.name for s in skills}
    missing = [n for n in options.skills if n not in known]
    if missing:
        raise UsageError(
            f"--skill {', '.join(missing)}: no such skill in {repo.root}",
            hint=f"skills: {', '.join(sorted(known)) or '(none)'}",
        )
    if options.skills:
        return [s for s in skills if s.name in options.skills]
    return [s for s in skills if (s.plugin, s.name) not in defined]


def run_init(
    options: InitOptions,
    *,
    reporter: Reporter,
    on_step: Callable[[InitStep], None] | None = None,
) -> InitOutcome:
    """Draft, gate, write, check and estimate (see the module docstring)."""
    repo, config = resolve_repository(options.root, options.cwd, options.layout, options.environ)
    catalog = build_catalog(config.providers)
    model = grading.resolve_judge_model(catalog, options.judge_model or config.judge_model)
    workflows, kept_wf, wf_backups = (
        _write_workflows(repo.root, force=options.force) if options.workflow else ((), (), ())
    )
    targets = _targets(repo, options)
    base = InitOutcome(
        root=repo.root,
        model=model.key,
        workflows=workflows,
        workflows_kept=kept_wf,
        workflow_backups=wf_backups,
        config_warnings=tuple(config.warnings),
        check_model=options.check_model,
    )
    if not targets:
        return base
    client = grading.client_from_env(options.environ)
    if client is None:
        raise EnvironmentProblem(
            "init: no Anthropic credentials: drafting calls the judge model "
            f"({model.key}) through the Anthropic API",
            hint="set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN), or try it offline with "
            "`evolve-action init --scripted`",
        )
    by_plugin: dict[str, list[Skill]] = {}
    for s in repo.skills():
        by_plugin.setdefault(s.plugin, []).append(s)
    requests = [
        (
            s,
            build_request(
                skill_text(s, by_plugin[s.plugin]),
                should=options.should,
                should_not=options.should_not,
                evals=options.evals,
            ),
        )
        for s in targets
    ]
    tokens = sum(_request_tokens(r) for _, r in requests)
    estimate = estimate_cost_usd(model.pricing, tokens)
    if estimate is not None and model.pricing is not None:
        estimate += len(requests) * ESTIMATED_OUTPUT_TOKENS / 1e6 * model.pricing.output_per_mtok
    if on_step is not None:
        on_step(
            InitPlanned(
                model=model.key,
                skills=tuple((s.plugin, s.name) for s in targets),
                estimate_usd=estimate,
                input_tokens=tokens,
            )
        )
    creator = uses_skill_creator(repo)
    judge = grading.Judge(client, model=model.id)
    answers = asyncio.run(
        _ask_all(judge, requests, jobs=options.jobs, limit_seconds=options.timeout)
    )
    drafts: list[SkillDraft] = []
    for (skill, _), answer in zip(requests, answers, strict=True):
        drafts.append(
            _write_draft(
                repo,
                skill,
                answer,
                by_plugin[skill.plugin],
                options,
                model.key,
                model.pricing,
                creator=creator,
            )
        )
    findings = _verify(repo.root, options, drafts)
    drafts = [_without(d, findings) for d in drafts]
    costs = [d.cost_usd for d in drafts if d.cost_usd is not None]
    drafted = tuple(sorted({d.skill for d in drafts if d.written}))
    outcome = replace(
        base,
        drafts=tuple(drafts),
        cost_usd=round(sum(costs), 6) if costs else None,
        findings=tuple(f for fs in findings.values() for f in fs),
    )
    if not drafted:
        return outcome
    repo, config = resolve_repository(options.root, options.cwd, options.layout, options.environ)
    outcome = _estimate(outcome, repo, config, options)
    if options.check:
        outcome = replace(
            outcome,
            checked=_check(repo, config, options, drafted, reporter=reporter),
        )
    return outcome


def _request_tokens(request: DraftRequest) -> int:
    chars = len(request.system) + len(request.prompt) + len(encode_json_compact(request.tool))
    return chars // CHARS_PER_TOKEN + 1


async def _ask_all(
    judge: grading.Judge,
    requests: list[tuple[Skill, DraftRequest]],
    *,
    jobs: int,
    limit_seconds: float,
) -> list[grading.ToolAnswer]:
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(request: DraftRequest) -> grading.ToolAnswer:
        async with gate:
            return await judge.call_tool(
                system=request.system,
                prompt=request.prompt,
                tool=request.tool,
                max_tokens=MAX_TOKENS,
                limit_seconds=limit_seconds,
            )

    try:
        return list(await asyncio.gather(*(one(r) for _, r in requests)))
    finally:
        await judge.aclose()


def _backup(path: Path) -> Path:
    target = path.with_name(path.name + ".bak")
    n = 1
    while target.exists():
        target, n = path.with_name(f"{path.name}.bak.{n}"), n + 1
    path.rename(target)
    return target


class _Target(NamedTuple):
    """One file to write: where, what, the authored file it would replace, its fixtures."""

    path: Path
    content: str
    existing: Path | None
    files_dir: Path
    fixtures: tuple[tuple[str, str], ...] = ()


def uses_skill_creator(repo: Repository) -> bool:
    """True when the repository's definitions are skill-creator's (inside the skills, under
    `<skill>/evals/`) and none are evolve's (`<plugin>/evals/<skill>/`)."""
    inside = outside = 0
    for es in repo.eval_sets():
        for path in (es.triggers_path, es.evals_path):
            if path is None:
                continue
            if path.is_relative_to(es.skill_dir):
                inside += 1
            else:
                outside += 1
    return inside > 0 and outside == 0


def _targets_of(
    repo: Repository,
    skill: Skill,
    queries: GatedQueries,
    cases: tuple[DraftedCase, ...],
    model: str,
    *,
    creator: bool,
) -> list[_Target]:
    """The files of one skill's draft, in the repository's convention."""
    fixtures = tuple(f for case in cases for f in case.files)
    targets: list[_Target] = []
    if creator:
        where = skill.dir / "evals"
        found = in_skill_trigger_files(skill.dir)
        if queries.should:
            targets.append(
                _Target(
                    path=where / "trigger-queries.json",
                    content=render_creator_triggers(queries),
                    existing=found[0] if found else None,
                    files_dir=where / "files",
                )
            )
        if cases:
            evals_json = where / "evals.json"
            targets.append(
                _Target(
                    path=evals_json,
                    content=render_creator_evals(skill.name, cases, model=model),
                    existing=evals_json if evals_json.exists() else None,
                    files_dir=where / "files",
                    fixtures=fixtures,
                )
            )
        return targets
    plugin = repo.plugin(skill.plugin)
    assert plugin is not None
    where = plugin.evals_dir / skill.name
    if queries.should:
        targets.append(
            _Target(
                path=where / "triggers.yaml",
                content=render_triggers(skill.name, queries, model=model),
                existing=find_one(where, "triggers") if where.is_dir() else None,
                files_dir=where / "files",
            )
        )
    if cases:
        targets.append(
            _Target(
                path=where / "evals.yaml",
                content=render_evals(skill.name, cases, model=model),
                existing=find_one(where, "evals") if where.is_dir() else None,
                files_dir=where / "files",
                fixtures=fixtures,
            )
        )
    return targets


def _write_draft(
    repo: Repository,
    skill: Skill,
    answer: grading.ToolAnswer,
    siblings: list[Skill],
    options: InitOptions,
    model: str,
    pricing: Any,
    *,
    creator: bool,
) -> SkillDraft:
    tool_input, usage, error = answer.input, answer.usage, answer.why
    cost = measured_cost_usd(pricing, **usage) if usage else None
    draft = SkillDraft(plugin=skill.plugin, skill=skill.name, cost_usd=cost)
    parsed = parse_answer(tool_input) if not error else None
    if parsed is None:
        return replace(draft, error=error or f"{DRAFT_TOOL} input is not an object")
    text = skill_text(skill, siblings)
    queries = gate_queries(
        parsed,
        name=skill.name,
        description=text.description,
        siblings=[d for _, d in text.siblings],
    )
    cases, dropped_cases = gate_evals(
        parsed.evals, name=skill.name, description=text.description, limit=options.evals
    )
    written: list[Path] = []
    backups: list[Path] = []
    kept: list[Path] = []
    for target in _targets_of(repo, skill, queries, cases, model, creator=creator):
        if target.existing is not None and not options.force:
            kept.append(target.existing)
            continue
        if target.existing is not None:
            backups.append(_backup(target.existing))
        atomic_write_text(target.path, target.content)
        written.append(target.path)
        for rel, body in target.fixtures:
            fixture = target.files_dir / rel
            if fixture.exists():
                kept.append(fixture)
                continue
            atomic_write_text(fixture, body)
            written.append(fixture)
    return replace(
        draft,
        language=parsed.language,
        should=len(queries.should),
        should_not=len(queries.should_not),
        evals=len(cases),
        written=tuple(written),
        backups=tuple(backups),
        kept=tuple(kept),
        dropped=queries.dropped + dropped_cases,
    )


def _verify(
    root: Path, options: InitOptions, drafts: list[SkillDraft]
) -> dict[Path, tuple[str, ...]]:
    """Tier 0 over the drafted sets; a drafted file with an error finding is removed again."""
    written = {p for d in drafts for p in d.written}
    if not written:
        return {}
    repo, config = resolve_repository(options.root, options.cwd, options.layout, options.environ)
    keys = frozenset((d.plugin, d.skill) for d in drafts if d.written)
    report = run_checks(repo, config, CheckOptions(signals=False, eval_sets=keys))
    bad: dict[Path, list[str]] = {}
    for f in report.findings:
        if f.severity != Severity.ERROR or f.path is None:
            continue
        path = repo.root / f.path
        if path in written:
            bad.setdefault(path, []).append(f.message)
    for path in bad:
        path.unlink(missing_ok=True)
    return {p: tuple(m) for p, m in bad.items()}


def _without(draft: SkillDraft, bad: Mapping[Path, tuple[str, ...]]) -> SkillDraft:
    """The draft without its files that failed Tier 0 (already removed); an authored file that
    `force` had moved aside for one of them is put back."""
    removed = [p for p in draft.written if p in bad]
    if not removed:
        return draft
    restored = []
    for backup in draft.backups:
        kind = backup.name.split(".", 1)[0][:7]  # "trigger" or "evals"
        if any(p.name.startswith(kind) for p in removed):
            original = backup.with_name(backup.name.split(".bak", 1)[0])
            if not original.exists():
                backup.rename(original)
                restored.append(backup)
    triggers = any(p.name.startswith("trigger") for p in removed)
    return replace(
        draft,
        written=tuple(p for p in draft.written if p not in bad),
        backups=tuple(b for b in draft.backups if b not in restored),
        should=0 if triggers else draft.should,
        should_not=0 if triggers else draft.should_not,
        evals=0 if any(p.name.startswith("evals.") for p in removed) else draft.evals,
    )


def _estimate(
    outcome: InitOutcome, repo: Repository, config: Config, options: InitOptions
) -> InitOutcome:
    """The closing estimate: what `run all --new --dry-run` prints for this repository, by the same
    computation (the same `run_all` dry run over every skill, the one model rule
    `sweep_models`, `estimate_cost` at `triggers.DEFAULT_RUNS`)."""
    choice = sweep_models((), (), config)
    collect = PlanCollector()
    run_all(
        RunAllOptions(
            repository=repo,
            config=config,
            environ=options.environ,
            evals=evals.EvalsOptions(models=choice.models, new=True),
            dry_run=True,
            report=False,
        ),
        reporter=NullReporter(),
        on_step=collect,
    )
    counts = {plan.Tier.TRIGGERS: 0, plan.Tier.EVALS: 0}
    for p in collect.plans:
        for u in p.units:
            for c in u.cases:
                tier = plan.Tier(c.tier)
                counts[tier] = counts.get(tier, 0) + 1
    return replace(
        outcome,
        planned_triggers=counts[plan.Tier.TRIGGERS],
        planned_evals=counts[plan.Tier.EVALS],
        sweep=estimate_cost(collect.plans, runs=triggers.DEFAULT_RUNS, models=collect.models),
        sweep_why=choice.why,
    )


def _check(
    repo: Repository,
    config: Config,
    options: InitOptions,
    drafted: tuple[str, ...],
    *,
    reporter: Reporter,
) -> tuple[CheckedQuery, ...]:
    """Run the drafted triggers once each in a throwaway copy (no results file of the repository
    is written) and return the queries whose one run went the wrong way."""
    with tempfile.TemporaryDirectory(prefix="evolve-init-check-") as tmp:
        copy = Path(tmp) / repo.root.name
        shutil.copytree(repo.root, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        crepo, cconfig = resolve_repository(copy, copy, options.layout, options.environ)
        built = trigger_options(
            crepo,
            cconfig,
            options.environ,
            skills=drafted,
            models=(options.check_model,),
            runs=1,
            jobs=options.jobs,
            early_stop=False,
        )
        outcome = asyncio.run(
            triggers.run(built.options, reporter, agent_harness(built.options.environ))
        )
    wrong = []
    for unit in outcome.units:
        for q in unit.queries:
            if q.completed and (q.hits > 0) != q.should_trigger:
                wrong.append(
                    CheckedQuery(
                        plugin=unit.plugin,
                        skill=unit.skill,
                        query=q.query,
                        should_trigger=q.should_trigger,
                    )
                )
    return tuple(wrong)


def _write_workflows(
    root: Path, *, force: bool
) -> tuple[tuple[Path, ...], tuple[Path, ...], tuple[Path, ...]]:
    """Copy the bundled example workflows to `.github/workflows/` (never over an existing file
    unless `force`, which keeps a backup). Returns (written, kept, backups)."""
    source = resources.files("evolve_action") / "examples" / "workflows"
    written: list[Path] = []
    kept: list[Path] = []
    backups: list[Path] = []
    for name, target_name in WORKFLOWS.items():
        target = root / ".github" / "workflows" / target_name
        if target.exists():
            if not force:
                kept.append(target)
                continue
            backups.append(_backup(target))
        atomic_write_text(target, (source / name).read_text(encoding="utf-8"))
        written.append(target)
    return tuple(written), tuple(kept), tuple(backups)
