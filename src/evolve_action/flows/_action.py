"""The GitHub Action's jobs: `pr` (and its local preview), `run`, `gate` and the sharded trio
`plan`/`shard`/`merge`, as functions over data.

Owns: `run_pr` (one pull request: Tier 0 on the whole repository — eval specs of the touched skills
only — the touched skills' missing or stale cases, the report, the commit-back, the sticky comment,
the step summary and the outputs; `plan` splits that work into shards, `shard` runs one into
fragments, `merge` folds them in and publishes as `pr`), `run_gate` (the committed evidence
against the thresholds, no agent) and the fail-on rule (`exit_for`). `run_pr` and its local
preview compose the PR job's stages, each in a file of its own:

- `_pr_job`: the job's options and its one `JobContext` (resolved once), the values the stages
  exchange, and the helpers every stage shares;
- stage 1, `_pr_touched`: which skills the PR touches, and Tier 0 on them (→ `TouchedSkills`);
- stage 2, `_pr_evaluate`: the touched skills' missing or stale cases, and power on demand
  (→ `Evaluation`, `NotRun`);
- stage 3, `_pr_compare`: the report and the base -> head comparison (→ `BaseEvidence`,
  `Comparisons`);
- stage 4, `_pr_publish`: what the token may write, a labelled fork run's state, the commit-back,
  the sticky comment, the summary's cost line, the outputs (→ `CommitBack`, `Posted`, `Said`);
- `_pr_shard`: `mode: plan` and `mode: shard` (nothing published).

`run_pr` reads as the pipeline: each step a call returning a value. The stages return values
(notes included) and exchange no private names; only this module logs and annotates them, through
its `_Log` (the lines and notes in the order found, the annotation cap). `run_pr` and `pr --local`
share every step they both take (`_evaluate_touched`, `_compare`, `_summary`, `_outputs`,
`_outcome`).

Guarantees:
- Untouched skills never start an agent session; touched ones run only cases whose stored result is
  missing or stale (`--new` ∪ `--modified`), so a re-run on the bot's own commit plans nothing.
- Nothing is committed for a fork, with `commit: false`, or locally; nothing is posted with
  `comment: off`, locally (`local=True` writes the comment and the summary to files instead) or
  where the token cannot comment (`comment_refusal`: a fork's `pull_request` run, said in the
  summary). A fork's labelled `pull_request_target` run comments, and carries its ledger and
  results in that comment (`_pr_carry`), so a relabel of the same content starts no session. A pull request event on a PR
  that is not open (`closed`, merged) is one summary line: no agent session, no comment, no commit.
- The commit-back commits only what was measured on the PR head: a test-merge checkout commits only
  when the touched skills' paths are identical in merge and head (`checkout_matches`), and a
  token known to be read-only (`read_only_scopes`) tries no write at all.
- The commit-back only ever commits files that resolve inside the repository top; the base
  evidence comes from git whenever the clone holds the base commit, else from the API, and a base
  that cannot be read is a notice, never a silent "no base".
- A GitHub failure after the evaluation (a 403 on the comment, a moved head) becomes a notice: the
  results on disk, the step summary and the outputs are still written.
- A cancelled job (SIGINT/SIGTERM) still reports, commits what finished and notes the
  cancellation; the runner's follow-up signals are ignored while it does.
- The step's exit code follows `fail_on` (`flows.exit_for`), and the comment body is a function of
  the base and head evidence (its digest decides whether an existing comment is rewritten).
- No verdict without runs: after the evaluation (or its skip: no credentials, a fork) the touched
  skills are planned again as a dry run, and every tier with cases still stale or missing is
  `not evaluated` with why (`status: not-evaluated`, exit 1 under `fail_on: regression|threshold`).
- One cost: the comment, the summary and `cost_usd` show the job's one measured figure (the
  budget's meter over every session); the summary adds only the estimate, at list prices.
- `gate` writes nothing (no report, no rollup), from any directory, and gates the models the
  repository evaluates (thresholds' models, else config `models`, else `PR_DEFAULT_MODEL`).

Never does: parse argv or print; workflow commands (masks, annotations) go to the `commands` stream
the caller passes, lines for the log come back in the outcome.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from evolve_action import events
from evolve_action.catalog import PR_DEFAULT_MODEL
from evolve_action.config import resolve_repository
from evolve_action.encoding import write_text
from evolve_action.errors import UsageError
from evolve_action.flows._ledger import LEDGER_REF, FileStore, LedgerStore
from evolve_action.flows._power import copy_worktree
from evolve_action.flows._pr_compare import (
    BaseEvidence,
    Comparisons,
    base_evidence,
    local_base_evidence,
    measured,
    report_and_compare,
    result_files,
    snapshot,
)
from evolve_action.flows._pr_evaluate import (
    confinement_note,
    ensure_extra_harnesses,
    evaluate,
    ledger_store,
    not_evaluated,
    undecided_hint,
    why_not_run,
)
from evolve_action.flows._pr_job import (
    MAX_ANNOTATIONS,
    ActionOutcome,
    Evaluation,
    JobContext,
    NotRun,
    PrOptions,
    base_ref_of,
    default_base,
    git_toplevel,
    has_credentials,
    ignored_dir,
    is_dirty,
    job_client,
    local_changes,
    report_rel,
    revision_at,
    revision_of,
    run_git,
    short_ref,
)
from evolve_action.flows._pr_publish import (
    CommitBack,
    ForkCarry,
    Said,
    checkout_matches,
    commit_back,
    cost_line,
    evaluation_url,
    fork_carry,
    outputs_of,
    post_comment,
    read_only,
    with_state,
)
from evolve_action.flows._pr_shard import plan_or_shard
from evolve_action.flows._pr_touched import (
    Tier0,
    TouchedSkills,
    find_touched,
    local_touched,
    refused_definitions,
    tier0,
)
from evolve_action.flows._report import ReportOptions, regenerate_report
from evolve_action.flows._shard import (
    MergeOutcome,
    merge_fragments,
)
from evolve_action.github import (
    ActionInputs,
    ActionOutputs,
    CommandFiles,
    Event,
    GitHubApiError,
    GitHubContext,
    Status,
    Touched,
    annotate,
    append_summary,
    comment_refusal,
    fork_target_refusal,
    git_env,
    inactive_message,
    is_actions,
    load_context,
    read_inputs,
    restore_workspace_owner,
    unsupported_fails,
    unsupported_message,
    write_outputs,
)
from evolve_action.harness import (
    available_harnesses,
    cache_line,
    deferred_signals,
    gateway_spend,
)
from evolve_action.plan import Tier
from evolve_action.report import (
    NEXT_STEP_NO_EVALS,
    ComparisonRow,
    GateOptions,
    Label,
    parse_maturity,
    render_pr_comment,
)

__all__ = [
    "exit_for",
    "run_gate",
    "run_pr",
]


CANCELLED = (
    "cancelled: the job was stopped before every case ran; the finished cases are reported and "
    "committed, and a re-run evaluates the rest"
)
"""The note of a cancelled `pr`/`run`/`merge` job."""

LIVE_TIERS = ("triggers", "evals")
"""The tiers that start agent sessions (stage 2)."""


# ------------------------------------------------------------------------------------------------
# pr / run
# ------------------------------------------------------------------------------------------------


def run_pr(options: PrOptions, *, reporter: events.Reporter, commands: TextIO) -> ActionOutcome:
    """The `pr` job (also `mode: run` and `pr --local`): evaluate, report, publish; return the outcome."""
    if options.local:
        return _run_local(options, reporter=reporter)
    env = options.environ
    workspace = Path(env.get("GITHUB_WORKSPACE") or options.cwd)
    inputs = read_inputs(env, workspace=workspace, log=commands)
    ctx = load_context(env, cwd=options.cwd)
    files = CommandFiles.from_env(env)
    if (stopped := _not_this_event(inputs, ctx, options, files, commands)) is not None:
        return stopped  # an event we ignore, a PR that is not open, a refused fork run
    repo, config = resolve_repository(inputs.working_directory, options.cwd, None, env)
    job = JobContext.of_action(
        inputs, ctx, env, repo=repo, config=config, workspace=workspace, retry=options.retry
    )
    log = _Log(commands)
    found = _touched(job, inputs, ctx, options.mode, log)  # the touched skills, Tier 0
    touched = found.touched
    if touched.empty:
        return _nothing_touched(job, inputs, found, files, log)
    if options.mode in ("plan", "shard"):
        if any(t in inputs.tiers for t in LIVE_TIERS):
            # The plan job and every shard job must see the same harnesses, or plans disagree.
            log.harnesses(ensure_extra_harnesses(inputs, job.agent_env))
        return plan_or_shard(options.mode, inputs, job, touched, files)
    denied, said = read_only(job, inputs, ctx, env, workspace)
    log.hear(said)
    commit = inputs.commit and "contents" not in denied
    refused = refused_definitions(repo, touched, inputs.tiers)
    base = base_evidence(job, touched, base_ref_of(ctx), ctx)
    log.say(base.notes)
    carry, said = fork_carry(job, ctx, inputs, touched)
    log.hear(said)
    before = snapshot(repo, touched)
    merged = _merge(options, inputs, job, log)
    gateway_spend().limit_usd = inputs.max_cost_usd  # the gateway's hard stop (and job.budget)
    where = _Where(
        base=base,
        base_sha=base_ref_of(ctx),
        head_sha=revision_of(ctx).head_sha,
        out_dir=job.top / ".evolve-action",
        store=carry.store if carry is not None else ledger_store(job.client, ctx, commit=commit),
        attempt=f"{env.get('GITHUB_RUN_ID', '')}.{env.get('GITHUB_RUN_ATTEMPT', '1')}",
    )
    requested = [t for t in LIVE_TIERS if t in inputs.tiers and options.mode != "merge"]
    stage = _evaluate_touched(job, touched, requested, where, refused, reporter, log, ctx, inputs)
    no_comment = _comment_refusal(job, ctx, inputs, log)
    # After a cancellation the runner's follow-up signals must not cut the last writes short.
    with deferred_signals() if stage.evaluation.cancelled else contextlib.nullcontext():
        compared = _compare(job, found, base, stage, refused, log, cwd=options.cwd, ctx=ctx)
        result = _publish(  # the commit-back, the comment, the summary, the outputs
            job,
            ctx,
            inputs,
            found,
            stage,
            compared,
            commit=commit,
            may_comment=not no_comment and "pull-requests" not in denied,
            before=before,
            carry=carry,
            merged=merged,
            workspace=workspace,
            files=files,
            log=log,
        )
    if stage.evaluation.cancelled:
        raise KeyboardInterrupt  # the CLI exits 130 or 143, as for any interrupted run
    return result


def _run_local(options: PrOptions, *, reporter: events.Reporter) -> ActionOutcome:
    """`pr --local`: the PR job on the working tree against a base; a pre-push gate.

    The comment and summary go to files under `.evolve-action/` (ignored by git through its own
    `.gitignore`); the evaluation runs in a scratch copy of the working tree unless
    `options.write`, so no tracked file changes; the exit code follows `options.fail_on`.
    """
    env = options.environ
    repo, config = resolve_repository(None, options.cwd, None, env)
    genv = git_env(env, safe_directories=(repo.root,))
    top = git_toplevel(repo.root, genv)
    if top is None:
        raise UsageError(
            f"pr --local: {repo.root} is not in a git repository",
            hint="run it inside the repository's git checkout",
        )
    base_ref = options.base or default_base(top, genv)
    job = JobContext.of_local(options, repo=repo, config=config, top=top, genv=genv)
    log = _Log(None)
    found = local_touched(job, local_changes(top, base_ref, genv))  # the touched skills, Tier 0
    log.checks(found.checks)
    touched = found.touched
    if touched.empty:
        log.lines.append(f"pr --local: no skill touched since {base_ref}; nothing to evaluate")
        code = exit_for(
            options.fail_on, rows=(), errored=False, check_failures=found.check_failures
        )
        return ActionOutcome(
            exit_code=code, outputs=ActionOutputs(status="skipped"), lines=tuple(log.lines)
        )
    out_dir = ignored_dir(options.out_dir or (top / ".evolve-action"))
    refused = refused_definitions(repo, touched, LIVE_TIERS)
    base_sha = run_git(top, genv, "rev-parse", f"{base_ref}^{{commit}}").stdout.strip() or base_ref
    base = local_base_evidence(job, touched, base_sha)
    where = _Where(
        base=base,
        base_sha=base_sha,
        head_sha=run_git(top, genv, "rev-parse", "HEAD").stdout.strip(),
        out_dir=out_dir,
        store=FileStore(out_dir / "ledger.json"),
        attempt=f"local {datetime.now(UTC):%Y-%m-%dT%H:%M:%S.%fZ}",
    )
    with contextlib.ExitStack() as stack:
        work = job if options.write else _scratch(job, stack)  # tracked files stay as they are
        stage = _evaluate_touched(work, touched, LIVE_TIERS, where, refused, reporter, log)
        title = f"Skill evaluations: {short_ref(base_ref)} → working tree (preview)"
        compared = _compare(work, found, base, stage, refused, log, cwd=options.cwd, title=title)
    revision = revision_at(base_sha, where.head_sha, stage.evaluation, dirty=is_dirty(top, genv))
    body = render_pr_comment(compared.rows, compared.facts, revision=revision)  # to files
    summary = _summary(body, stage, log)
    written = _write_preview(out_dir, body, summary, log, scratch=not options.write)
    outputs = _outputs(job, found, stage, compared, errored=stage.errored)
    return _outcome(
        options.fail_on,
        None,
        found,
        compared,
        outputs,
        log,
        body=body,
        summary=summary,
        errored=stage.errored,
        files=written,
    )


# ------------------------------------------------------------------------------------------------
# The PR job's steps, in the order `run_pr` takes them
# ------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Log:
    """The composition's log of one job: the lines for the job log and the notes for the comment
    and the summary, in the order the stages found them. Notices are annotated on `commands`
    (None: `pr --local`, log lines instead) up to GitHub's cap of `MAX_ANNOTATIONS` a step."""

    commands: TextIO | None
    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    """Notices past the annotation cap, for `flush_notices`."""
    annotated: int = 0

    def notice(self, text: str, *, annotated: bool = True) -> None:
        """A note for the comment and the summary, shown as a `::notice` (`annotated`, under
        Actions) or a log line.

        GitHub shows at most `MAX_ANNOTATIONS` notices of a step: the first ones are annotated,
        the rest held for `flush_notices` (one last annotation: the held one, or "and N more")."""
        self.notes.append(text)
        if self.commands is None or not annotated:
            self.lines.append(f"notice: {text}")
        elif self.annotated < MAX_ANNOTATIONS - 1:
            self.annotated += 1
            annotate(self.commands, "notice", text)
        else:
            self.held.append(text)
            self.lines.append(f"notice: {text}")

    def flush_notices(self) -> None:
        """The last notice annotation of the step: the one held, or how many more there are."""
        if self.commands is not None and len(self.held) == 1:
            annotate(self.commands, "notice", self.held[0])
        elif self.commands is not None and self.held:
            n = len(self.held)
            annotate(self.commands, "notice", f"and {n} more notices: see the step summary")
        self.held.clear()

    def say(self, notes: Sequence[str]) -> None:
        """A stage's notes, in the order it found them: the comment, the summary and the log."""
        for note in notes:
            self.notice(note)

    def hear(self, said: Said) -> None:
        """A publishing step's notices and log lines, in the order it said them."""
        for kind, text in said.entries:
            if kind == "note":
                self.notice(text)
            else:
                self.lines.append(text)

    def checks(self, checks: Tier0 | None) -> None:
        """Tier 0's notes, its annotations (under Actions) and its log lines."""
        if checks is None:
            return
        self.say(checks.notes)
        if self.commands is not None:
            for a in checks.annotations:
                annotate(self.commands, a.level, a.message, file=a.file, line=a.line)
        self.lines.extend(checks.lines)

    def harnesses(self, said: tuple[str, str]) -> None:
        """`ensure_extra_harnesses`' notice or log line."""
        note, line = said
        if note:
            self.notice(note)
        if line:
            self.lines.append(line)


def _not_this_event(
    inputs: ActionInputs,
    ctx: GitHubContext,
    options: PrOptions,
    files: CommandFiles,
    commands: TextIO,
) -> ActionOutcome | None:
    """The outcome of an event the PR job does not evaluate (None: it does): an unsupported event
    (a skip, or an error where a skip would read as a pass), a PR that is not open (its ledger
    dropped), a fork's `pull_request_target` run without `allow_fork_target` (refused)."""
    skip = unsupported_message(ctx) if ctx.event is Event.UNSUPPORTED else inactive_message(ctx)
    if skip is not None and unsupported_fails(ctx):  # merge_group: a skip would read as a pass
        annotate(commands, "error", skip)
        append_summary(files.summary, f"{skip}\n")
        write_outputs(files.output, ActionOutputs(status="errored"))
        return ActionOutcome(exit_code=1, outputs=ActionOutputs(status="errored"), lines=(skip,))
    if skip is not None:  # an event we ignore, or a closed/merged PR: no agent, no commit
        if ctx.event is Event.UNSUPPORTED:
            annotate(commands, "warning", skip)
        lines = [skip]
        if ctx.event is not Event.UNSUPPORTED and (gone := _drop_ledger(inputs, ctx, options)):
            lines.append(gone)
        append_summary(files.summary, "".join(f"{line}\n" for line in lines))
        write_outputs(files.output, ActionOutputs(status="skipped"))
        return ActionOutcome(
            exit_code=0, outputs=ActionOutputs(status="skipped"), lines=tuple(lines)
        )
    refusal = fork_target_refusal(ctx, allow_fork_target=inputs.allow_fork_target)
    if refusal is not None:
        annotate(commands, "error", refusal)
        append_summary(files.summary, f"**evolve-action refused to run.** {refusal}\n")
        write_outputs(files.output, ActionOutputs(status="errored"))
        return ActionOutcome(exit_code=2, outputs=ActionOutputs(status="errored"), lines=(refusal,))
    return None


def _touched(
    job: JobContext, inputs: ActionInputs, ctx: GitHubContext, mode: str, log: _Log
) -> TouchedSkills:
    """The touched stage: the touched skills and, except in `plan`/`shard` (`merge` annotates), Tier 0."""
    found = find_touched(inputs, ctx, job, run_mode=mode == "run")
    log.say(found.notes)
    if "checks" in inputs.tiers and mode not in ("plan", "shard"):
        found = tier0(job, found, pull_request=ctx.pull_request is not None)
        log.checks(found.checks)
    return found


def _nothing_touched(
    job: JobContext, inputs: ActionInputs, found: TouchedSkills, files: CommandFiles, log: _Log
) -> ActionOutcome:
    """No skill touched: one summary line, `skipped`; Tier 0's failures still fail the step."""
    line = "evolve-action: no skill touched by this change; nothing to evaluate"
    append_summary(files.summary, f"{line}.\n")
    outputs = ActionOutputs(status="skipped", report_path=report_rel(job.repo, job.top))
    write_outputs(files.output, outputs)
    log.flush_notices()
    code = exit_for(inputs.fail_on, rows=(), errored=False, check_failures=found.check_failures)
    return ActionOutcome(
        exit_code=code, outputs=outputs, lines=(*log.lines, line), touched=found.touched
    )


def _merge(
    options: PrOptions, inputs: ActionInputs, job: JobContext, log: _Log
) -> MergeOutcome | None:
    """`mode: merge`: the shards' fragments folded into the results files (None: another mode)."""
    if options.mode != "merge":
        return None
    assert inputs.fragments is not None
    merged = merge_fragments(
        job.repo, job.config, [inputs.fragments], report=False, cwd=options.cwd
    )
    log.lines.append(
        f"merge: plan {merged.plan_id}: {len(merged.merged)} fragment(s) into "
        f"{len(merged.written)} results file(s)"
    )
    return merged


@dataclass(frozen=True, slots=True, kw_only=True)
class _Where:
    """What stage 2 compares and where it records: the base evidence, the two commits, the
    folder for its files, the PR's ledger store and this attempt's name."""

    base: BaseEvidence
    base_sha: str | None
    head_sha: str
    out_dir: Path
    store: LedgerStore | None
    attempt: str


@dataclass(frozen=True, slots=True)
class _Evaluated:
    """The evaluate stage's values: the evaluation, what was left unrun and why, and what would decide an
    undecided comparison (`undecided_hint`)."""

    evaluation: Evaluation
    not_run: NotRun
    undecided_hint: str

    @property
    def errored(self) -> bool:
        """A session errored, or the job was cancelled."""
        return self.evaluation.errored or self.evaluation.cancelled


def _no_credentials(job: JobContext, ctx: GitHubContext | None) -> tuple[str, str]:
    """Why the live tiers cannot run (no credentials reach the engines) and the notice saying
    so; ("", "") when they can. `ctx` None: `pr --local`."""
    if has_credentials(job.agent_env):
        return "", ""
    if ctx is None:
        why = "no Anthropic credentials in the environment"
        return why, f"live tiers skipped: {why}"
    why = "a fork PR gets no secrets" if ctx.is_fork else "no credentials were given"
    advice = "(set anthropic_api_key or claude_code_oauth_token); Tier 0 ran"
    return why, f"live tiers skipped: {why} {advice}"


def _evaluate_touched(
    job: JobContext,
    touched: Touched,
    requested: Sequence[str],
    where: _Where,
    refused: Mapping[str, Mapping[Tier, str]],
    reporter: events.Reporter,
    log: _Log,
    ctx: GitHubContext | None = None,
    inputs: ActionInputs | None = None,
) -> _Evaluated:
    """The evaluate stage as both jobs run it (`ctx`/`inputs` None: `pr --local`), its notes in order: the
    skip without credentials, the extra harnesses, the default model, the evaluation's own, the
    cancellation (locally: an interrupt), the budget, the confinement. Every `requested` tier
    with cases still stale or missing is then `not evaluated`, with why."""
    evaluation, not_run, hint = Evaluation(), NotRun(), ""
    why_not, skip_note = _no_credentials(job, ctx) if requested else ("", "")
    if skip_note:
        log.notice(skip_note)
    if requested and not why_not:
        if inputs is not None:
            log.harnesses(ensure_extra_harnesses(inputs, job.agent_env))
        if job.default_model_note:
            log.notes.append(job.default_model_note)
        evaluation = evaluate(
            job,
            touched,
            list(requested),
            reporter,
            refused=refused,
            base_files=where.base.files,
            base_unknown=where.base.unknown,
            base_sha=where.base_sha,
            head_sha=where.head_sha,
            out_dir=where.out_dir,
            store=where.store,
            attempt=where.attempt,
        )
        log.notes.extend(evaluation.notes)
        log.lines.extend(evaluation.lines)
        if evaluation.cancelled and ctx is None:
            raise KeyboardInterrupt
        if evaluation.cancelled:  # the job was cancelled: keep and publish what finished
            log.notice(CANCELLED)
    if line := job.budget.summary():  # in the log, the step summary and the PR comment
        log.notice(line, annotated=False)
    if requested:
        why_not = why_not or why_not_run(job.budget, evaluation.cancelled)
        with deferred_signals() if evaluation.cancelled else contextlib.nullcontext():
            not_run = not_evaluated(
                job, touched, requested, refused, why_not, settled=evaluation.settled
            )
        hint = undecided_hint(evaluation.reruns, job.budget, job.power.max_runs)
    if note := confinement_note(evaluation.sessions, job.agent_env):
        log.notice(note)
    return _Evaluated(evaluation, not_run, hint)


def _comment_refusal(
    job: JobContext, ctx: GitHubContext, inputs: ActionInputs, log: _Log
) -> str | None:
    """Why the token cannot comment here (`comment_refusal`: a fork's `pull_request` run), as a
    notice; None when it may."""
    no_comment = (
        comment_refusal(ctx) if job.client is not None and inputs.comment != "off" else None
    )
    if no_comment is not None:
        log.notice(no_comment)
    return no_comment


def _compare(
    job: JobContext,
    found: TouchedSkills,
    base: BaseEvidence,
    stage: _Evaluated,
    refused: Mapping[str, Mapping[Tier, str]],
    log: _Log,
    *,
    cwd: Path,
    ctx: GitHubContext | None = None,
    title: str | None = None,
) -> Comparisons:
    """The compare stage: the report and the base -> head comparison, with the job's notes so
    far (`ctx`: the run's links; None: `pr --local`, titled `title`)."""
    return report_and_compare(
        job.repo,
        job.config,
        found.touched,
        base,
        evaluation=stage.evaluation,
        not_run=stage.not_run,
        refused=refused,
        findings=found.findings,
        notes=log.notes,
        undecided_hint=stage.undecided_hint,
        cost_usd=measured(stage.evaluation.sessions, job.budget),
        cwd=cwd,
        evaluation_url=evaluation_url(ctx, job.repo, job.top) if ctx is not None else None,
        run_url=(ctx.run_url or None) if ctx is not None else None,
        title=title,
    )


def _publish(
    job: JobContext,
    ctx: GitHubContext,
    inputs: ActionInputs,
    found: TouchedSkills,
    stage: _Evaluated,
    compared: Comparisons,
    *,
    commit: bool,
    may_comment: bool,
    before: Mapping[Path, bytes | None],
    carry: ForkCarry | None,
    merged: MergeOutcome | None,
    workspace: Path,
    files: CommandFiles,
    log: _Log,
) -> ActionOutcome:
    """The publish stage on GitHub: the comment's body, the commit-back (only what was measured on the PR head), the
    sticky comment (with a labelled fork run's state), the step summary and the outputs."""
    client, touched, rows = job.client, found.touched, compared.rows
    body = render_pr_comment(rows, compared.facts, revision=revision_of(ctx, stage.evaluation))
    committed = CommitBack()
    if commit and client is not None:
        matches, said = checkout_matches(job, ctx, touched)
        log.hear(said)
        if matches:
            committed = commit_back(
                client, ctx, inputs, job.repo, job.top, touched, compared.written, before
            )
            log.hear(committed.said)
    comment_id: int | None = None
    pr = ctx.pull_request
    if pr is not None and client is not None and inputs.comment != "off" and may_comment:
        posted = body
        if carry is not None:
            posted, said = with_state(body, carry, job.top)
            log.hear(said)
        posting = post_comment(client, ctx, inputs, rows, posted)
        log.hear(posting.said)
        comment_id = posting.comment_id
    restore_workspace_owner(workspace, [*compared.written, *result_files(job.repo, touched)])
    summary = _summary(body, stage, log)  # notes: in the body
    append_summary(files.summary, summary)
    errored = stage.errored or committed.errored
    outputs = _outputs(
        job,
        found,
        stage,
        compared,
        errored=errored,
        comment_id=comment_id,
        commit_sha=committed.sha,
    )
    if merged is not None:
        outputs = dataclasses.replace(outputs, plan_id=merged.plan_id or "")
    write_outputs(files.output, outputs)
    log.flush_notices()
    return _outcome(
        inputs.fail_on,
        inputs,
        found,
        compared,
        outputs,
        log,
        body=body,
        summary=summary,
        errored=errored,
    )


def _scratch(job: JobContext, stack: contextlib.ExitStack[bool | None]) -> JobContext:
    """`pr --local` without `--write`: the job on a scratch copy of the working tree (removed
    when `stack` closes), so the working tree's tracked files stay as they are."""
    scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evolve-pr.")))
    copy = scratch / "tree"
    copy_worktree(job.top, copy, job.genv)
    where = copy / job.prefix
    copied, copied_config = resolve_repository(where, where, None, job.agent_env)
    return dataclasses.replace(job, repo=copied, config=copied_config)


def _write_preview(
    out_dir: Path, body: str, summary: str, log: _Log, *, scratch: bool
) -> tuple[Path, ...]:
    """`pr --local`'s publishing: the comment and the summary as files, and log lines saying
    where they are, that a scratch copy was evaluated, and the verdict."""
    comment_file, summary_file = out_dir / "pr-comment.md", out_dir / "step-summary.md"
    write_text(comment_file, body)
    write_text(summary_file, summary)
    log.lines.append(f"pr --local: the comment reviewers would see: {comment_file}")
    log.lines.append(f"pr --local: the step summary: {summary_file}")
    if scratch:
        log.lines.append(
            "pr --local: evaluated in a scratch copy; no tracked file changed (--write updates "
            "the results files and reports in place)"
        )
    if verdict := next((ln for ln in body.splitlines() if ln.startswith("### ")), ""):
        log.lines.append("pr --local: " + verdict.removeprefix("### "))
    return comment_file, summary_file


def _summary(body: str, stage: _Evaluated, log: _Log) -> str:
    """The step summary: the comment's body, the estimate line, the prompt-cache line."""
    return body + cost_line(stage.evaluation.estimate) + _cache_summary(log)


def _cache_summary(log: _Log) -> str:
    """The job's prompt-cache line, in the job log and as the step summary's last line ("" when
    no request used the cache)."""
    line = cache_line(gateway_spend().total)
    if not line:
        return ""
    log.lines.append(line)
    return f"\n<sub>{line}</sub>\n"


def _outputs(
    job: JobContext,
    found: TouchedSkills,
    stage: _Evaluated,
    compared: Comparisons,
    *,
    errored: bool,
    comment_id: int | None = None,
    commit_sha: str = "",
) -> ActionOutputs:
    return outputs_of(
        compared.rows,
        found.touched,
        compared.facts,
        comment_id,
        commit_sha,
        job.repo,
        job.top,
        errored=errored,
        check_failures=found.check_failures,
        sessions=stage.evaluation.sessions,
    )


def _outcome(
    fail_on: str,
    inputs: ActionInputs | None,
    found: TouchedSkills,
    compared: Comparisons,
    outputs: ActionOutputs,
    log: _Log,
    *,
    body: str,
    summary: str,
    errored: bool,
    files: tuple[Path, ...] = (),
) -> ActionOutcome:
    """The job's outcome: its exit code (`exit_for`), outputs, log lines, comment and summary."""
    code = exit_for(
        fail_on,
        rows=compared.rows,
        errored=errored,
        check_failures=found.check_failures,
        inputs=inputs,
    )
    return ActionOutcome(
        exit_code=code,
        outputs=outputs,
        lines=tuple(log.lines),
        comment=body,
        summary=summary,
        touched=found.touched,
        rows=compared.rows,
        files=files,
    )


def _drop_ledger(inputs: ActionInputs, ctx: GitHubContext, options: PrOptions) -> str:
    """On a closed (or merged) PR's event: delete its ledger ref, which nothing reads any more.
    Only where the job may write (a same-repository PR, `commit` on); a refusal is one line."""
    pr = ctx.pull_request
    if pr is None or ctx.is_fork or not inputs.commit:
        return ""
    client = job_client(inputs, ctx, options.retry)
    if client is None:
        return ""
    ref = LEDGER_REF.format(number=pr.number)
    try:
        with client:
            deleted = client.repository(ctx.repository).delete_ref(ref)
    except GitHubApiError as exc:
        return f"the ledger ref refs/{ref} was not deleted: {exc.message}"
    return f"deleted the PR's ledger ref refs/{ref}" if deleted else ""


# ------------------------------------------------------------------------------------------------
# gate
# ------------------------------------------------------------------------------------------------


def run_gate(
    environ: Mapping[str, str],
    cwd: Path,
    *,
    commands: TextIO,
    root: Path | None = None,
    layout: str | None = None,
) -> ActionOutcome:
    """`mode: gate`: `report --check --strict` over the committed evidence; one annotation a breach.

    Works on any event (tags, releases) and from any directory: it reads files and writes none
    (no report, no rollup; only the step summary and outputs the runner gives). Thresholds come
    from the inputs, else the repository config. The models gated are the ones the repository
    evaluates: `report.thresholds.models`, else config `models`, else `PR_DEFAULT_MODEL` (the one
    model a PR evaluates by default), never every catalog model. `root`/`layout` (the CLI's
    `--root`/`--layout`) override `working_directory`.
    """
    workspace = Path(environ.get("GITHUB_WORKSPACE") or cwd)
    inputs = read_inputs(environ, workspace=workspace, log=commands)
    files = CommandFiles.from_env(environ)
    where = root if root is not None else inputs.working_directory
    repo, config = resolve_repository(where, cwd, layout, environ)
    th = config.report.thresholds
    if th.models is not None:
        gated: tuple[str, ...] | None = tuple(th.models)
    elif config.models is None:
        gated = (PR_DEFAULT_MODEL,)
    else:
        gated = None  # config `models`: the strict gate's Defined set
    gate = GateOptions(
        triggers_min_pass_rate=(
            inputs.min_triggers_pass_rate
            if inputs.min_triggers_pass_rate is not None
            else th.triggers_min_pass_rate
        ),
        evals_min_pass_rate=(
            inputs.min_evals_pass_rate
            if inputs.min_evals_pass_rate is not None
            else th.evals_min_pass_rate
        ),
        models=gated,
        maturity=parse_maturity(th.maturity),
        strict=True,
    )
    outcome = regenerate_report(
        ReportOptions(
            repo=repo,
            config=config,
            results_format=config.results_format,
            check=True,
            gate=gate,
            write=False,
            harnesses_here=frozenset(available_harnesses(environ, dry_run=True))
            | frozenset(inputs.extra_harnesses),
        ),
        cwd=cwd,
    )
    top = git_toplevel(repo.root, git_env(environ, safe_directories=(repo.root,))) or repo.root
    fails = [i for i in outcome.issues if i.level == "FAIL"]
    if is_actions(environ):  # workflow commands only on a runner; elsewhere one line a problem
        for issue in outcome.issues:
            annotate(commands, "error" if issue.level == "FAIL" else "warning", issue.text)
    lines = [i.line() for i in outcome.issues]
    no_evals = not any(es.has_evals or es.triggers_path is not None for es in repo.eval_sets())
    if no_evals:
        lines.append(
            "gate: no skill has evals, so nothing was gated; next: "
            + NEXT_STEP_NO_EVALS.format(skill="<name>")
        )
    elif not fails:
        lines.append("gate: thresholds met")
    summary = "### evolve-action gate\n\n" + (
        "\n".join(f"- {line}" for line in lines) + "\n" if lines else ""
    )
    append_summary(files.summary, summary)
    status: Status = "failed" if fails else "passed"
    if no_evals:
        status = "not-evaluated"  # exit 0: nothing is required, and the summary says so
    outputs = ActionOutputs(status=status, report_path=report_rel(repo, top))
    write_outputs(files.output, outputs)
    code = 1 if fails and inputs.fail_on != "never" else 0
    return ActionOutcome(exit_code=code, outputs=outputs, lines=tuple(lines), summary=summary)


# ------------------------------------------------------------------------------------------------
# The fail-on rule
# ------------------------------------------------------------------------------------------------


def exit_for(
    fail_on: str,
    *,
    rows: Sequence[ComparisonRow],
    errored: bool,
    check_failures: int,
    inputs: ActionInputs | None = None,
) -> int:
    """The step's exit code: 1 when `fail_on` says this outcome fails the step, else 0.

    `regression`: a row labelled regression, a threshold breach, a Tier 0 failure, a tier not
    evaluated (stale or missing evidence this job did not run: no verdict is not a pass) or an
    error; `threshold`: the same without regressions; `error`: errors only; `never`: 0.
    """
    if fail_on == "never":
        return 0
    failed = errored
    if fail_on in ("regression", "threshold"):
        failed = failed or check_failures > 0 or _breaches(rows, inputs)
        failed = failed or any(r.label is Label.NOT_EVALUATED for r in rows)
    if fail_on == "regression":
        failed = failed or any(r.label is Label.REGRESSION for r in rows)
    return 1 if failed else 0


def _breaches(rows: Sequence[ComparisonRow], inputs: ActionInputs | None) -> bool:
    if inputs is None:
        return False
    for row in rows:
        for tier, minimum in (
            (row.triggers, inputs.min_triggers_pass_rate),
            (row.evals, inputs.min_evals_pass_rate),
        ):
            if tier is None or minimum is None or tier.head is None or tier.head.rate is None:
                continue
            if tier.head.rate < minimum:
                return True
    return False
