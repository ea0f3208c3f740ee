"""Stage 1 of the PR job: which skills a PR touches, and Tier 0 on them.

Owns: `TouchedSkills` (what this stage found: the touched set, the notes about how it was found,
Tier 0's verdict on it), the touched set from the event, the API or local git (`find_touched`,
`explicit_skills`, `local_touched`), the touched skills' notes and reasons (authored changes
before derived files), Tier 0 over the repository with findings split into the touched skills'
and the pre-existing ones (`tier0`), and the refused definitions (`refused_definitions`).
Guarantees: untouched skills are never planned; Tier 0 errors of untouched skills never fail
the job (they are a notice). Every function returns what it found (notes and annotations as
data, in the order found); the composition (`flows._action`) logs and annotates them.
Never does: start a session, write, post, or write to the workflow-command stream.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evolve_action import plan
from evolve_action.checks import CheckOptions, CheckReport, run_checks, split_pre_existing
from evolve_action.errors import UsageError
from evolve_action.flows._pr_job import (
    MAX_ANNOTATIONS,
    JobContext,
    rel_to_top,
)
from evolve_action.github import (
    ActionInputs,
    ChangedPath,
    Event,
    GitHubApiError,
    GitHubContext,
    Touched,
    TouchedSkill,
    git_changed_paths,
    touched_skills,
)
from evolve_action.repo import Repository
from evolve_action.report import (
    CheckLine,
)
from evolve_action.specs import Finding, Severity

__all__ = [
    "Annotation",
    "Tier0",
    "TouchedSkills",
    "explicit_skills",
    "find_touched",
    "local_touched",
    "ordered_reasons",
    "refused_definitions",
    "tier0",
    "touched_notes",
    "without_evals",
]


@dataclass(frozen=True, slots=True)
class Annotation:
    """One workflow annotation to write (`github.annotate`'s arguments)."""

    level: str
    message: str
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Tier0:
    """Tier 0's verdict on a change."""

    failures: int = 0
    """Errors that fail the job (the touched skills' on a PR; every one otherwise)."""
    findings: tuple[CheckLine, ...] = ()
    """The findings on the touched skills (errors first), for the comment and the summary."""
    notes: tuple[str, ...] = ()
    """Notices for the comment and the summary (errors in skills the change left alone)."""
    annotations: tuple[Annotation, ...] = ()
    """The findings as annotations (at most `MAX_ANNOTATIONS` a level, the last: how many more)."""
    lines: tuple[str, ...] = ()
    """Lines for the job log (the failures, findings not annotated)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TouchedSkills:
    """What stage 1 found: the skills the change touches and Tier 0's verdict on them."""

    touched: Touched
    notes: tuple[str, ...] = ()
    """Notices for the comment and the summary about how the set was found (the files API fell
    back to git)."""
    checks: Tier0 | None = None
    """Tier 0 (None: it did not run)."""

    @property
    def check_failures(self) -> int:
        return self.checks.failures if self.checks is not None else 0

    @property
    def findings(self) -> tuple[CheckLine, ...]:
        return self.checks.findings if self.checks is not None else ()


# ------------------------------------------------------------------------------------------------
# Steps
# ------------------------------------------------------------------------------------------------


def tier0(job: JobContext, found: TouchedSkills, *, pull_request: bool) -> TouchedSkills:
    """`found` with Tier 0 as annotations: the whole repository, except that on a pull request
    the eval specs of the touched skills only are validated, so the job grows with the change,
    and only the touched skills' errors fail it."""
    repo, top = job.repo, job.top
    touched = found.touched if pull_request else None
    only = frozenset((s.plugin, s.skill) for s in touched.skills) if touched else None
    report = run_checks(repo, job.config, CheckOptions(signals=False, eval_sets=only))
    failures = report.failures
    findings: tuple[CheckLine, ...] = ()
    notes: tuple[str, ...] = ()
    if touched is not None:
        findings = _touched_findings(repo, touched, report.findings, top)
        failures, notes = _touched_failures(repo, report, touched)
    annotations: list[Annotation] = []
    # GitHub shows at most MAX_ANNOTATIONS of each level a step: the last slot says how many more.
    by_level: dict[str, list[Finding]] = {"error": [], "warning": []}
    for finding in report.findings:
        by_level["error" if finding.severity == Severity.ERROR else "warning"].append(finding)
    shown = {"error": 0, "warning": 0}
    for level, listed in by_level.items():
        room = len(listed) if len(listed) <= MAX_ANNOTATIONS else MAX_ANNOTATIONS - 1
        for finding in listed[:room]:
            shown[level] += 1
            path = (repo.root / finding.path) if finding.path else None
            file = rel_to_top(path, top) if path is not None else None
            annotations.append(Annotation(level, finding.message, file, finding.line))
        if len(listed) > room:
            annotations.append(
                Annotation(level, f"and {len(listed) - room} more: see `run checks`")
            )
    hidden = sum(1 for _ in report.findings) - sum(shown.values())
    lines: list[str] = []
    if failures:
        lines.append(f"checks: {failures} failure(s)")
    if hidden > 0:
        lines.append(f"checks: {hidden} more finding(s) not annotated (see `run checks`)")
    checks = Tier0(
        failures=failures,
        findings=findings,
        notes=notes,
        annotations=tuple(annotations),
        lines=tuple(lines),
    )
    return dataclasses.replace(found, checks=checks)


def local_touched(job: JobContext, changes: Sequence[ChangedPath]) -> TouchedSkills:
    """`pr --local`: the skills `changes` touch, and Tier 0 over the repository (only the touched
    skills' errors fail the preview; no annotations)."""
    repo = job.repo
    report = run_checks(repo, job.config, CheckOptions(signals=False))
    touched = touched_skills(repo, changes, prefix=job.prefix)
    failures, notes = _touched_failures(repo, report, touched)
    lines = [f"checks: {failures} failure(s) (see `run checks`)"] if failures else []
    checks = Tier0(
        failures=failures,
        findings=_touched_findings(repo, touched, report.findings, job.top),
        notes=notes,
        lines=tuple(lines),
    )
    return TouchedSkills(touched=touched, checks=checks)


def _touched_findings(
    repo: Repository, touched: Touched, findings: Sequence[Finding], top: Path
) -> tuple[CheckLine, ...]:
    """The Tier 0 findings in a touched skill's directory or eval directory (errors first, in
    emission order), with the file relative to the checkout and the line."""
    keys = {(s.plugin, s.skill) for s in touched.skills}
    dirs = [sk.dir for sk in repo.skills() if (sk.plugin, sk.name) in keys]
    for es in repo.eval_sets():
        if (es.plugin, es.skill) in keys:
            dirs += [es.skill_dir, es.results_dir]
    roots = {d.resolve() for d in dirs}
    out: list[CheckLine] = []
    for f in findings:
        if f.severity not in (Severity.ERROR, Severity.WARNING) or not f.path:
            continue
        path = (repo.root / f.path).resolve()
        if not any(path == r or r in path.parents for r in roots):
            continue
        where = rel_to_top(path, top) + (f":{f.line}" if f.line else "")
        message = f.message.removeprefix(f"{f.path}: ")
        out.append(CheckLine(error=f.severity == Severity.ERROR, where=where, message=message))
    return tuple(sorted(out, key=lambda c: not c.error))


def _touched_failures(
    repo: Repository, report: CheckReport, touched: Touched
) -> tuple[int, tuple[str, ...]]:
    """Issue 30: only errors in the skills a change touched fail its job; the others are named
    once as pre-existing (`gate` and `run checks --strict` still fail on them): the failures and
    the note naming the others."""
    split = split_pre_existing(report, repo, ((s.plugin, s.skill) for s in touched.skills))
    return split.failures, ((split.line(),) if split.untouched else ())


def find_touched(
    inputs: ActionInputs, ctx: GitHubContext, job: JobContext, *, run_mode: bool = False
) -> TouchedSkills:
    """The skills to evaluate: `mode: run` without `skills`: every one; explicit `skills`; else
    the rule over the event's changes (the notes say when the files API fell back to git)."""
    if run_mode and not inputs.explicit_skills:
        return TouchedSkills(touched=explicit_skills(job.repo, inputs, everything=True))
    notes: list[str] = []
    touched = _touched_for(inputs, ctx, job, notes)
    return TouchedSkills(touched=touched, notes=tuple(notes))


def _touched_for(
    inputs: ActionInputs, ctx: GitHubContext, job: JobContext, notes: list[str]
) -> Touched:
    repo, prefix, top, genv, client = job.repo, job.prefix, job.top, job.genv, job.client
    if inputs.all_skills or inputs.skills:
        return explicit_skills(repo, inputs)
    pr = ctx.pull_request
    changes: list[ChangedPath] | None = None
    if pr is not None and client is not None:
        try:
            rc = client.repository(ctx.repository)
            listed = rc.changed_files(rc.pull_request(pr.number))
        except GitHubApiError as exc:
            notes.append(f"the files API failed ({exc.message}); the changes come from git")
        else:
            if listed.truncated:
                notes.append(
                    f"the files API lists {len(listed.files)} of {listed.expected} changed files "
                    "(GitHub's cap); the changes come from git instead"
                )
            else:
                changes = [
                    ChangedPath.from_api(f.path, f.status, f.previous_path) for f in listed.files
                ]
    if changes is None and pr is not None:
        changes = git_changed_paths(top, base=pr.base_sha, head=pr.head_sha, environ=genv)
    if changes is None and ctx.event is Event.PUSH:
        if ctx.push_before is None or ctx.push_after is None:
            return explicit_skills(repo, inputs, everything=True)
        changes = git_changed_paths(top, base=ctx.push_before, head=ctx.push_after, environ=genv)
    if changes is None:  # workflow_dispatch without `skills`: every skill
        return explicit_skills(repo, inputs, everything=True)
    return touched_skills(repo, changes, prefix=prefix)


def explicit_skills(repo: Repository, inputs: ActionInputs, *, everything: bool = False) -> Touched:
    """The skills `skills` names (or every skill with evals)."""
    wanted = set(inputs.skills)
    picked = []
    seen: set[tuple[str, str]] = set()
    for es in repo.eval_sets():
        key = (es.plugin, es.skill)
        if key in seen:
            continue
        if (
            everything
            or inputs.all_skills
            or es.skill in wanted
            or f"{es.plugin}/{es.skill}" in wanted
        ):
            seen.add(key)
            picked.append(TouchedSkill(plugin=es.plugin, skill=es.skill, reasons=("selected",)))
    if wanted and not picked:
        raise UsageError(
            f"skills: {', '.join(sorted(wanted))}: no such skill with evals in {repo.root}",
            hint="name skills as `name` or `plugin/name`, or use `all`",
        )
    return Touched(skills=tuple(sorted(picked, key=lambda s: (s.plugin, s.skill))))


_DERIVED = re.compile(r"(^|/)(results\.(json|jsonc|yaml|yml)|EVALUATION\.(md|json))\b")
"""A reason naming a file the tools write (results, reports), not one an author edits."""


def ordered_reasons(reasons: Sequence[str]) -> tuple[str, ...]:
    """Every reason, authored changes (`SKILL.md`, triggers, evals, fixtures, manifests) before
    derived files (`results.*`, `EVALUATION.*`), each group in its given order."""
    authored = [r for r in reasons if not _DERIVED.search(r)]
    return (*authored, *(r for r in reasons if _DERIVED.search(r)))


def without_evals(repo: Repository, touched: Touched) -> tuple[str, ...]:
    """Touched skills with no triggers and no evals file: nothing can be measured for them."""
    defined = {f"{es.plugin}/{es.skill}" for es in repo.eval_sets()}
    return tuple(s.key for s in touched.skills if s.key not in defined)


def touched_notes(
    repo: Repository,
    touched: Touched,
    refused: Mapping[str, Mapping[plan.Tier, str]],
    unevaluated: Mapping[str, Mapping[plan.Tier, str]],
) -> list[str]:
    """One note per touched or removed skill, with every reason, authored files first (for the
    comment and summary); a skill without evals says nothing was measured; a refused definition
    says `authoring error` with the refusal (never a failure of the skill)."""
    notes = []
    bare = set(without_evals(repo, touched))
    for s in touched.skills:
        why = "; ".join(ordered_reasons(s.reasons)) or "selected"
        extra = f" (renamed from {s.renamed_from})" if s.renamed_from else ""
        verb = "touched" if s.key in bare or s.key in unevaluated else "evaluated"
        if s.key in bare:
            why += "; it has no evals, so nothing was measured"
        notes.append(f"{verb} {s.key}{extra}: {why}")
        for tier, message in sorted(refused.get(s.key, {}).items()):
            notes.append(f"authoring error in {s.key}'s {tier.value}: {message}")
    notes.extend(f"removed {s.key}: its results are no longer evaluated" for s in touched.removed)
    return notes


def refused_definitions(
    repo: Repository, touched: Touched, tiers: Sequence[str]
) -> dict[str, dict[plan.Tier, str]]:
    """Per touched skill, the tiers whose definition planning refuses (authoring errors:
    `plan.build_inputs` names the file, the line and the fix; nothing runs for them)."""
    refused: dict[str, dict[plan.Tier, str]] = {}
    wanted = [t for t in (plan.Tier.TRIGGERS, plan.Tier.EVALS) if t.value in tiers]
    for es in repo.eval_sets():
        key = f"{es.plugin}/{es.skill}"
        if not any(s.key == key for s in touched.skills):
            continue
        for tier in wanted:
            invalid = plan.build_inputs([es], tiers=(tier,), root=repo.root).invalid
            if invalid:
                refused.setdefault(key, {})[tier] = invalid[0].removeprefix("error: ")
    return refused
