"""Stage 1 of the PR job: which skills a PR touches, and Tier 0 on them.

Owns: the touched set from the event, the API or local git (`_touched_for`, `_explicit`), the
touched skills' notes and reasons (authored changes before derived files), Tier 0 over the
repository with findings split into the touched skills' and the pre-existing ones, and the
refusals (skills without evals).
Guarantees: untouched skills are never planned; Tier 0 errors of untouched skills never fail
the job (they are a notice). Never does: start a session, write, post.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from evolve_action import plan
from evolve_action.checks import CheckOptions, CheckReport, run_checks, split_pre_existing
from evolve_action.config import Config
from evolve_action.errors import UsageError
from evolve_action.flows._pr_job import (
    MAX_ANNOTATIONS,
    _rel,
    _Run,
)
from evolve_action.github import (
    ActionInputs,
    ChangedPath,
    Event,
    GitHubApiError,
    GitHubClient,
    GitHubContext,
    Touched,
    TouchedSkill,
    annotate,
    git_changed_paths,
    touched_skills,
)
from evolve_action.repo import Repository
from evolve_action.report import (
    CheckLine,
)
from evolve_action.specs import Finding, Severity

# ------------------------------------------------------------------------------------------------
# Steps
# ------------------------------------------------------------------------------------------------


def _tier0(
    repo: Repository,
    config: Config,
    commands: TextIO,
    state: _Run,
    top: Path,
    touched: Touched | None = None,
) -> None:
    """Tier 0 as annotations: the whole repository, except that with `touched` (a PR) the eval
    specs of the touched skills only are validated, so the job grows with the change."""
    only = frozenset((s.plugin, s.skill) for s in touched.skills) if touched else None
    report = run_checks(repo, config, CheckOptions(signals=False, eval_sets=only))
    state.check_failures = report.failures
    if touched is not None:
        state.findings = _touched_findings(repo, touched, report.findings, top)
        _count_touched_failures(repo, report, touched, state, commands)
    # GitHub shows at most MAX_ANNOTATIONS of each level a step: the last slot says how many more.
    by_level: dict[str, list[Finding]] = {"error": [], "warning": []}
    for finding in report.findings:
        by_level["error" if finding.severity == Severity.ERROR else "warning"].append(finding)
    shown = {"error": 0, "warning": 0}
    for level, found in by_level.items():
        room = len(found) if len(found) <= MAX_ANNOTATIONS else MAX_ANNOTATIONS - 1
        for finding in found[:room]:
            shown[level] += 1
            path = (repo.root / finding.path) if finding.path else None
            file = _rel(path, top) if path is not None else None
            annotate(commands, level, finding.message, file=file, line=finding.line)
        if len(found) > room:
            annotate(commands, level, f"and {len(found) - room} more: see `run checks`")
    hidden = sum(1 for _ in report.findings) - sum(shown.values())
    if state.check_failures:
        state.lines.append(f"checks: {state.check_failures} failure(s)")
    if hidden > 0:
        state.lines.append(f"checks: {hidden} more finding(s) not annotated (see `run checks`)")


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
        where = _rel(path, top) + (f":{f.line}" if f.line else "")
        message = f.message.removeprefix(f"{f.path}: ")
        out.append(CheckLine(error=f.severity == Severity.ERROR, where=where, message=message))
    return tuple(sorted(out, key=lambda c: not c.error))


def _count_touched_failures(
    repo: Repository,
    report: CheckReport,
    touched: Touched,
    state: _Run,
    commands: TextIO | None = None,
) -> None:
    """Issue 30: only errors in the skills a change touched fail its job; the others are named
    once as pre-existing (`gate` and `run checks --strict` still fail on them)."""
    split = split_pre_existing(report, repo, ((s.plugin, s.skill) for s in touched.skills))
    state.check_failures = split.failures
    if split.untouched:
        state.notice(split.line(), commands)


def _touched_for(
    inputs: ActionInputs,
    ctx: GitHubContext,
    repo: Repository,
    prefix: str,
    top: Path,
    genv: Mapping[str, str],
    client: GitHubClient | None,
    state: _Run,
    commands: TextIO,
) -> Touched:
    """The skills to evaluate: explicit `skills`, else the rule over the event's changes."""
    if inputs.all_skills or inputs.skills:
        return _explicit(repo, inputs)
    pr = ctx.pull_request
    changes: list[ChangedPath] | None = None
    if pr is not None and client is not None:
        try:
            rc = client.repository(ctx.repository)
            listed = rc.changed_files(rc.pull_request(pr.number))
        except GitHubApiError as exc:
            state.notice(
                f"the files API failed ({exc.message}); the changes come from git", commands
            )
        else:
            if listed.truncated:
                state.notice(
                    f"the files API lists {len(listed.files)} of {listed.expected} changed files "
                    "(GitHub's cap); the changes come from git instead",
                    commands,
                )
            else:
                changes = [
                    ChangedPath.from_api(f.path, f.status, f.previous_path) for f in listed.files
                ]
    if changes is None and pr is not None:
        changes = git_changed_paths(top, base=pr.base_sha, head=pr.head_sha, environ=genv)
    if changes is None and ctx.event is Event.PUSH:
        if ctx.push_before is None or ctx.push_after is None:
            return _explicit(repo, inputs, everything=True)
        changes = git_changed_paths(top, base=ctx.push_before, head=ctx.push_after, environ=genv)
    if changes is None:  # workflow_dispatch without `skills`: every skill
        return _explicit(repo, inputs, everything=True)
    return touched_skills(repo, changes, prefix=prefix)


def _explicit(repo: Repository, inputs: ActionInputs, *, everything: bool = False) -> Touched:
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


def _without_evals(repo: Repository, touched: Touched) -> tuple[str, ...]:
    """Touched skills with no triggers and no evals file: nothing can be measured for them."""
    defined = {f"{es.plugin}/{es.skill}" for es in repo.eval_sets()}
    return tuple(s.key for s in touched.skills if s.key not in defined)


def _touched_notes(repo: Repository, touched: Touched, state: _Run) -> list[str]:
    """One note per touched or removed skill, with every reason, authored files first (for the
    comment and summary); a skill without evals says nothing was measured; a refused definition
    says `authoring error` with the refusal (never a failure of the skill)."""
    notes = []
    bare = set(_without_evals(repo, touched))
    for s in touched.skills:
        why = "; ".join(ordered_reasons(s.reasons)) or "selected"
        extra = f" (renamed from {s.renamed_from})" if s.renamed_from else ""
        verb = "touched" if s.key in bare or s.key in state.unevaluated else "evaluated"
        if s.key in bare:
            why += "; it has no evals, so nothing was measured"
        notes.append(f"{verb} {s.key}{extra}: {why}")
        for tier, message in sorted(state.refused.get(s.key, {}).items()):
            notes.append(f"authoring error in {s.key}'s {tier.value}: {message}")
    notes.extend(f"removed {s.key}: its results are no longer evaluated" for s in touched.removed)
    return notes


def _refusals(repo: Repository, touched: Touched, tiers: Sequence[str], state: _Run) -> None:
    """Record, per touched skill, the tiers whose definition planning refuses (authoring errors:
    `plan.build_inputs` names the file, the line and the fix; nothing runs for them)."""
    wanted = [t for t in (plan.Tier.TRIGGERS, plan.Tier.EVALS) if t.value in tiers]
    for es in repo.eval_sets():
        key = f"{es.plugin}/{es.skill}"
        if not any(s.key == key for s in touched.skills):
            continue
        for tier in wanted:
            invalid = plan.build_inputs([es], tiers=(tier,), root=repo.root).invalid
            if invalid:
                state.refused.setdefault(key, {})[tier] = invalid[0].removeprefix("error: ")
