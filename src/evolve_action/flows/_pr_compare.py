"""Stage 3 of the PR job: the base -> head comparison.

Owns: the report's regeneration, the base evidence (from git when the clone holds the base
commit, else the API), the head evidence, the snapshot of result files before the run, the job's
measured cost, pooled pass rates.
Guarantees: a base that cannot be read is a notice, never a silent "no base". Never does: run
sessions, commit or post.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from evolve_action.config import Config
from evolve_action.encoding import write_text
from evolve_action.errors import EvolveError
from evolve_action.flows._pr_job import (
    COMMENT_MARKER,
    RESULT_NAMES,
    _git,
    _rel,
    _Run,
)
from evolve_action.flows._pr_touched import (
    touched_notes,
    without_evals,
)
from evolve_action.flows._report import ReportOptions, regenerate_report
from evolve_action.github import (
    GitHubApiError,
    GitHubClient,
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
    ComparisonRow,
    Reruns,
    RunFacts,
    SkillEvidence,
    compare,
)
from evolve_action.results import ResultsFile, load_results

# ------------------------------------------------------------------------------------------------
# Evidence
# ------------------------------------------------------------------------------------------------


def _report_and_compare(
    repo: Repository,
    config: Config,
    touched: Touched,
    base_files: Mapping[str, ResultsFile | None],
    cost_usd: float | None,
    state: _Run,
    cwd: Path,
    *,
    evaluation_url: str | None = None,
    run_url: str | None = None,
    title: str | None = None,
) -> tuple[tuple[Path, ...], tuple[ComparisonRow, ...], RunFacts]:
    """Regenerate the report, compare base → head, and gather the facts of this run."""
    report = regenerate_report(
        ReportOptions(repo=repo, config=config, results_format=config.results_format), cwd=cwd
    )
    rows = _compare(repo, touched, base_files, state)
    facts = RunFacts(
        marker=COMMENT_MARKER,
        sessions_run=state.sessions,
        sessions_skipped=state.skipped,
        cost_usd=cost_usd,
        evaluation_url=evaluation_url,
        run_url=run_url,
        notes=(*touched_notes(repo, touched, state.refused, state.unevaluated), *state.notes),
        not_run=state.not_run,
        not_run_reason=state.not_run_reason,
        checks=state.findings,
        no_evals=without_evals(repo, touched),
        undecided_hint=state.undecided_hint,
        **({"title": title} if title is not None else {}),
    )
    return report.written, rows, facts


def _result_files(repo: Repository, touched: Touched) -> list[Path]:
    out: list[Path] = []
    for es in repo.eval_sets():
        if any(s.plugin == es.plugin and s.skill == es.skill for s in touched.skills):
            out.extend(p for n in RESULT_NAMES if (p := es.results_dir / n).is_file())
    return out


def _snapshot(repo: Repository, touched: Touched) -> dict[Path, bytes | None]:
    """The bytes of the touched skills' results files before the run (None: none yet)."""
    snap: dict[Path, bytes | None] = {}
    for es in repo.eval_sets():
        if any(s.plugin == es.plugin and s.skill == es.skill for s in touched.skills):
            for name in RESULT_NAMES:
                p = es.results_dir / name
                snap[p] = p.read_bytes() if p.is_file() else None
    return snap


def _compare(
    repo: Repository,
    touched: Touched,
    base: Mapping[str, ResultsFile | None],
    state: _Run,
) -> tuple[ComparisonRow, ...]:
    return compare(
        evidence(
            repo,
            touched,
            base,
            base_unknown=state.base_unknown,
            refused=state.refused,
            unevaluated=state.unevaluated,
            reruns=state.reruns,
            eval_reruns=state.eval_reruns,
        )
    )


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


def _base_evidence(
    repo: Repository,
    touched: Touched,
    top: Path,
    base_ref: str | None,
    genv: Mapping[str, str],
    client: GitHubClient | None,
    ctx: GitHubContext,
    state: _Run,
    commands: TextIO | None,
) -> dict[str, ResultsFile | None]:
    """The touched skills' results files at the PR base (None: the base has none).

    Git answers whenever the clone holds the base commit (a file absent there is absent: no API
    call); otherwise one contents listing per skill through the API. A base that cannot be read
    or decoded is a notice naming the skill, never a silent "no base".
    """
    out: dict[str, ResultsFile | None] = {}
    if base_ref is None:
        return out
    in_git = _git(top, genv, "cat-file", "-e", f"{base_ref}^{{commit}}").returncode == 0
    for s in (*touched.skills, *touched.removed):
        rel = _results_dir_rel(repo, s, top)
        found: tuple[str, bytes] | None = None
        if in_git:
            found = _git_show_results(top, base_ref, repo, s, genv)
        elif client is not None:
            try:
                found = client.repository(ctx.repository).read_first(rel, RESULT_NAMES, base_ref)
            except (GitHubApiError, ValueError) as exc:
                why = exc.message if isinstance(exc, GitHubApiError) else str(exc)
                state.notice(
                    f"the base results of {s.key} could not be read ({why}); it is compared "
                    "without a base",
                    commands,
                )
                state.base_unknown.add(s.key)
                continue
        else:
            state.notice(
                f"the base results of {s.key} could not be read: the clone lacks the base "
                f"commit {base_ref[:12]} and there is no token; it is compared without a base",
                commands,
            )
            state.base_unknown.add(s.key)
            continue
        loaded = _load_bytes(found)
        if found is not None and loaded is None:
            state.notice(
                f"the base results of {s.key} ({rel}/{found[0]} at {base_ref[:12]}) are not a "
                "results file this version reads; it is compared without a base",
                commands,
            )
            state.base_unknown.add(s.key)
        out[s.key] = loaded
    return out


def _results_dir_rel(repo: Repository, s: TouchedSkill, top: Path) -> str:
    for p in repo.plugins:
        if p.name == s.plugin:
            return _rel(p.evals_dir / s.skill, top)
    return _rel(repo.root / "evals" / s.skill, top)


def _git_show_results(
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


def _load_bytes(found: tuple[str, bytes] | None) -> ResultsFile | None:
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


def _measured(state: _Run, budget: Budget) -> float | None:
    """The one measured cost of the job: every agent session it started (triggers, evals and
    baselines, power on demand's base and head runs), as the sessions reported it (cache
    discounts included) through the job's one meter; None when no session ran."""
    return round(budget.spent_usd, 6) if state.sessions else None


def _pooled(rows: Sequence[ComparisonRow], tier: str) -> float | None:
    passed = n = 0
    for r in rows:
        t = r.triggers if tier == "triggers" else r.evals
        if t is not None and t.head is not None:
            passed += t.head.passed
            n += t.head.n
    return round(passed / n, 6) if n else None
