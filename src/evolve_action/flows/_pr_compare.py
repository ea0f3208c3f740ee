"""Stage 3 of the PR job: the base -> head comparison.

Owns: `report_and_compare` → `Comparisons` (the report's regeneration, the rows, the run's
facts), `base_evidence` → `BaseEvidence` (from git when the clone holds the base commit, else the
API; what could not be read, as notes; `local_base_evidence` for `pr --local`), the head evidence (`evidence`), the snapshot of result
files before the run, the job's measured cost, pooled pass rates.
Guarantees: a base that cannot be read is a notice, never a silent "no base". Never does: run
sessions, commit, post, or write to the workflow-command stream."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evolve_action.config import Config
from evolve_action.encoding import write_text
from evolve_action.errors import EvolveError
from evolve_action.flows._pr_job import (
    COMMENT_MARKER,
    RESULT_NAMES,
    Evaluation,
    JobContext,
    NotRun,
    rel_to_top,
    run_git,
)
from evolve_action.flows._pr_touched import (
    touched_notes,
    without_evals,
)
from evolve_action.flows._report import ReportOptions, regenerate_report
from evolve_action.github import (
    GitHubApiError,
    GitHubContext,
    Touched,
    TouchedSkill,
)
from evolve_action.harness import (
    Budget,
)
from evolve_action.plan import Tier
from evolve_action.repo import Repository
from evolve_action.report import (
    CheckLine,
    ComparisonRow,
    Reruns,
    RunFacts,
    SkillEvidence,
    compare,
)
from evolve_action.results import ResultsFile, load_results

__all__ = [
    "BaseEvidence",
    "Comparisons",
    "base_evidence",
    "evidence",
    "git_show_results",
    "load_bytes",
    "local_base_evidence",
    "measured",
    "pooled",
    "report_and_compare",
    "result_files",
    "snapshot",
]

# ------------------------------------------------------------------------------------------------
# Evidence
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class BaseEvidence:
    """The touched skills' results files at the base, and what could not be read."""

    files: Mapping[str, ResultsFile | None] = field(default_factory=dict)
    """Skill key → its base results file (None: the base has none)."""
    unknown: frozenset[str] = frozenset()
    """Skill keys whose base results could not be read (compared without a base)."""
    notes: tuple[str, ...] = ()
    """Notices naming each skill whose base could not be read, and why."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparisons:
    """What stage 3 found: the report files it wrote, the base → head rows, the run's facts."""

    written: tuple[Path, ...]
    rows: tuple[ComparisonRow, ...]
    facts: RunFacts


def report_and_compare(
    repo: Repository,
    config: Config,
    touched: Touched,
    base: BaseEvidence,
    *,
    evaluation: Evaluation,
    not_run: NotRun,
    refused: Mapping[str, Mapping[Tier, str]],
    findings: tuple[CheckLine, ...],
    notes: Sequence[str],
    undecided_hint: str,
    cost_usd: float | None,
    cwd: Path,
    evaluation_url: str | None = None,
    run_url: str | None = None,
    title: str | None = None,
) -> Comparisons:
    """Regenerate the report, compare base → head, and gather the facts of this run (`notes`:
    the job's notes so far, after the touched skills' own)."""
    report = regenerate_report(
        ReportOptions(repo=repo, config=config, results_format=config.results_format), cwd=cwd
    )
    rows = compare(
        evidence(
            repo,
            touched,
            base.files,
            base_unknown=base.unknown,
            refused=refused,
            unevaluated=not_run.unevaluated,
            reruns=evaluation.reruns,
            eval_reruns=evaluation.eval_reruns,
        )
    )
    facts = RunFacts(
        marker=COMMENT_MARKER,
        sessions_run=evaluation.sessions,
        sessions_skipped=evaluation.skipped,
        cost_usd=cost_usd,
        evaluation_url=evaluation_url,
        run_url=run_url,
        notes=(*touched_notes(repo, touched, refused, not_run.unevaluated), *notes),
        not_run=not_run.count,
        not_run_reason=not_run.reason,
        checks=findings,
        no_evals=without_evals(repo, touched),
        undecided_hint=undecided_hint,
        **({"title": title} if title is not None else {}),
    )
    return Comparisons(written=report.written, rows=rows, facts=facts)


def result_files(repo: Repository, touched: Touched) -> list[Path]:
    out: list[Path] = []
    for es in repo.eval_sets():
        if any(s.plugin == es.plugin and s.skill == es.skill for s in touched.skills):
            out.extend(p for n in RESULT_NAMES if (p := es.results_dir / n).is_file())
    return out


def snapshot(repo: Repository, touched: Touched) -> dict[Path, bytes | None]:
    """The bytes of the touched skills' results files before the run (None: none yet)."""
    snap: dict[Path, bytes | None] = {}
    for es in repo.eval_sets():
        if any(s.plugin == es.plugin and s.skill == es.skill for s in touched.skills):
            for name in RESULT_NAMES:
                p = es.results_dir / name
                snap[p] = p.read_bytes() if p.is_file() else None
    return snap


def evidence(
    repo: Repository,
    touched: Touched,
    base: Mapping[str, ResultsFile | None],
    *,
    base_unknown: Collection[str],
    refused: Mapping[str, Mapping[Tier, str]],
    unevaluated: Mapping[str, Mapping[Tier, str]] | None = None,
    reruns: Mapping[str, Mapping[str, Reruns]] | None = None,
    eval_reruns: Mapping[str, Mapping[str, Reruns]] | None = None,
) -> list[SkillEvidence]:
    """Base and head evidence of every touched (and removed) skill, with what the job knows
    (`base_unknown`: skills whose base could not be read)."""
    evidence = []
    for s in (*touched.skills, *touched.removed):
        head = None
        if s in touched.skills:
            for es in repo.eval_sets():
                if es.plugin == s.plugin and es.skill == s.skill:
                    head = load_results(es.results_dir, plugin=es.plugin, skill=es.skill).file
        evidence.append(
            SkillEvidence(
                plugin=s.plugin,
                skill=s.skill,
                base=base.get(s.key),
                head=head,
                base_known=s.key not in base_unknown,
                refused=refused.get(s.key, {}),
                unevaluated=(unevaluated or {}).get(s.key, {}),
                reruns=(reruns or {}).get(s.key, {}),
                eval_reruns=(eval_reruns or {}).get(s.key, {}),
            )
        )
    return evidence


def base_evidence(
    job: JobContext, touched: Touched, base_ref: str | None, ctx: GitHubContext
) -> BaseEvidence:
    """The touched skills' results files at the PR base (None: the base has none).

    Git answers whenever the clone holds the base commit (a file absent there is absent: no API
    call); otherwise one contents listing per skill through the API. A base that cannot be read
    or decoded is a notice naming the skill, never a silent "no base".
    """
    repo, top, genv, client = job.repo, job.top, job.genv, job.client
    out: dict[str, ResultsFile | None] = {}
    unknown: set[str] = set()
    notes: list[str] = []
    if base_ref is None:
        return BaseEvidence(files=out)
    in_git = run_git(top, genv, "cat-file", "-e", f"{base_ref}^{{commit}}").returncode == 0
    for s in (*touched.skills, *touched.removed):
        rel = _results_dir_rel(repo, s, top)
        found: tuple[str, bytes] | None = None
        if in_git:
            found = git_show_results(top, base_ref, repo, s, genv)
        elif client is not None:
            try:
                found = client.repository(ctx.repository).read_first(rel, RESULT_NAMES, base_ref)
            except (GitHubApiError, ValueError) as exc:
                why = exc.message if isinstance(exc, GitHubApiError) else str(exc)
                notes.append(
                    f"the base results of {s.key} could not be read ({why}); it is compared "
                    "without a base"
                )
                unknown.add(s.key)
                continue
        else:
            notes.append(
                f"the base results of {s.key} could not be read: the clone lacks the base "
                f"commit {base_ref[:12]} and there is no token; it is compared without a base"
            )
            unknown.add(s.key)
            continue
        loaded = load_bytes(found)
        if found is not None and loaded is None:
            notes.append(
                f"the base results of {s.key} ({rel}/{found[0]} at {base_ref[:12]}) are not a "
                "results file this version reads; it is compared without a base"
            )
            unknown.add(s.key)
        out[s.key] = loaded
    return BaseEvidence(files=out, unknown=frozenset(unknown), notes=tuple(notes))


def local_base_evidence(job: JobContext, touched: Touched, base_sha: str) -> BaseEvidence:
    """`pr --local`: the touched skills' results files at `base_sha`, from git (a file absent or
    unreadable there is no base)."""
    return BaseEvidence(
        files={
            s.key: load_bytes(git_show_results(job.top, base_sha, job.repo, s, job.genv))
            for s in touched.skills
        }
    )


def _results_dir_rel(repo: Repository, s: TouchedSkill, top: Path) -> str:
    for p in repo.plugins:
        if p.name == s.plugin:
            return rel_to_top(p.evals_dir / s.skill, top)
    return rel_to_top(repo.root / "evals" / s.skill, top)


def git_show_results(
    top: Path, ref: str, repo: Repository, s: TouchedSkill, genv: Mapping[str, str]
) -> tuple[str, bytes] | None:
    rel = _results_dir_rel(repo, s, top)
    for name in RESULT_NAMES:
        proc = subprocess.run(
            ["git", "-C", str(top), "show", f"{ref}:{rel}/{name}"],
            capture_output=True,
            env=dict(genv),
            check=False,
        )
        if proc.returncode == 0:
            return name, proc.stdout
    return None


def load_bytes(found: tuple[str, bytes] | None) -> ResultsFile | None:
    """Decode base evidence through the normal loader; an unusable base file counts as absent."""
    if found is None:
        return None
    name, data = found
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    with tempfile.TemporaryDirectory(prefix="evolve-base.") as tmp:
        write_text(Path(tmp) / name, text)
        try:
            return load_results(Path(tmp)).file
        except EvolveError:
            return None


def measured(sessions: int, budget: Budget) -> float | None:
    """The one measured cost of the job: every agent session it started (triggers, evals and
    baselines, power on demand's base and head runs), as the sessions reported it (cache
    discounts included) through the job's one meter; None when no session ran."""
    return round(budget.spent_usd, 6) if sessions else None


def pooled(rows: Sequence[ComparisonRow], tier: str) -> float | None:
    passed = n = 0
    for r in rows:
        t = r.triggers if tier == "triggers" else r.evals
        if t is not None and t.head is not None:
            passed += t.head.passed
            n += t.head.n
    return round(passed / n, 6) if n else None
