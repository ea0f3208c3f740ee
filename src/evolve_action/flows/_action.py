"""The GitHub Action's jobs: `pr` (and its local preview), `run`, `gate` and the sharded trio
`plan`/`shard`/`merge`, as functions over data.

Owns: `run_pr` (one pull request: Tier 0 on the whole repository — eval specs of the touched skills
only — the touched skills' missing or stale cases, the report, the commit-back, the sticky comment,
the step summary and the outputs; `plan` splits that work into shards, `shard` runs one into
fragments, `merge` folds them in and publishes as `pr`), `run_gate` (the committed evidence
against the thresholds, no agent) and the fail-on rule (`exit_for`). `run_pr` and its local
preview compose the PR job's stages, each in a file of its own:

1. `_pr_job`: the job's options and its one `JobContext` (resolved once), the values the stages
   exchange, and the helpers every stage shares;
2. `_pr_touched`: which skills the PR touches, and Tier 0 on them (→ `TouchedSkills`);
3. `_pr_evaluate`: the touched skills' missing or stale cases, and power on demand (→ `Evaluation`,
   `NotRun`);
4. `_pr_compare`: the report and the base -> head comparison (→ `BaseEvidence`, `Comparisons`);
5. `_pr_publish`: the commit-back, the sticky comment, the summary's cost line, the outputs.

The stages return values (notes included); only this module logs and annotates them.

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
import json
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from evolve_action import evals, events
from evolve_action.catalog import PR_DEFAULT_MODEL
from evolve_action.config import resolve_repository
from evolve_action.encoding import write_text
from evolve_action.errors import UsageError
from evolve_action.flows._ledger import LEDGER_REF, FileStore
from evolve_action.flows._power import copy_worktree
from evolve_action.flows._pr_carry import (
    CommentStore,
    file_sha,
    load_carried,
    restore_results,
    state_line,
)
from evolve_action.flows._pr_compare import (
    BaseEvidence,
    base_evidence,
    git_show_results,
    load_bytes,
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
    ActionOutcome,
    Evaluation,
    JobContext,
    NotRun,
    PrOptions,
    _Run,
    base_ref_of,
    default_base,
    git_toplevel,
    has_credentials,
    ignored_dir,
    inside_top,
    is_dirty,
    job_client,
    local_changes,
    report_rel,
    revision_of,
    run_git,
    short_ref,
)
from evolve_action.flows._pr_publish import (
    Said,
    checkout_matches,
    commit_back,
    cost_line,
    evaluation_url,
    outputs_of,
    post_comment,
)
from evolve_action.flows._pr_touched import (
    Tier0,
    find_touched,
    local_touched,
    refused_definitions,
    tier0,
)
from evolve_action.flows._report import ReportOptions, regenerate_report
from evolve_action.flows._run_all import RunAllOptions
from evolve_action.flows._shard import (
    MergeOutcome,
    merge_fragments,
    plan_shards,
    run_shard,
)
from evolve_action.github import (
    MAX_COMMENT_CHARS,
    ActionInputs,
    ActionOutputs,
    CommandFiles,
    Event,
    GitHubApiError,
    GitHubClient,
    GitHubContext,
    Status,
    Touched,
    annotate,
    append_summary,
    comment_refusal,
    declared_permissions,
    fork_target_refusal,
    git_env,
    inactive_message,
    is_actions,
    load_context,
    read_inputs,
    read_only_scopes,
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
from evolve_action.repo import Repository, rel_path
from evolve_action.report import (
    NEXT_STEP_NO_EVALS,
    ComparisonRow,
    GateOptions,
    Label,
    Revision,
    RunFacts,
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


# ------------------------------------------------------------------------------------------------
# pr / run
# ------------------------------------------------------------------------------------------------


def run_pr(options: PrOptions, *, reporter: events.Reporter, commands: TextIO) -> ActionOutcome:
    """The `pr` job (also `mode: run` and `pr --local`): evaluate, report, publish; return the outcome."""
    env = options.environ
    if options.local:
        return _run_local(options, reporter=reporter)
    workspace = Path(env.get("GITHUB_WORKSPACE") or options.cwd)
    inputs = read_inputs(env, workspace=workspace, log=commands)
    ctx = load_context(env, cwd=options.cwd)
    files = CommandFiles.from_env(env)
    state = _Run()
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

    repo, config = resolve_repository(inputs.working_directory, options.cwd, None, env)
    job = JobContext.of_action(
        inputs, ctx, env, repo=repo, config=config, workspace=workspace, retry=options.retry
    )
    top, client = job.top, job.client
    found = find_touched(inputs, ctx, job, run_mode=options.mode == "run")
    _say(state, found.notes, commands)
    if "checks" in inputs.tiers and options.mode not in ("plan", "shard"):  # merge annotates
        found = tier0(job, found, pull_request=ctx.pull_request is not None)
        _say_checks(state, found.checks, commands)
    touched = found.touched
    if touched.empty:
        line = "evolve-action: no skill touched by this change; nothing to evaluate"
        summary = f"{line}.\n"
        append_summary(files.summary, summary)
        outputs = ActionOutputs(status="skipped", report_path=report_rel(repo, top))
        write_outputs(files.output, outputs)
        state.flush_notices(commands)
        code = exit_for(inputs.fail_on, rows=(), state=state)
        return ActionOutcome(
            exit_code=code, outputs=outputs, lines=(*state.lines, line), touched=touched
        )

    agent_env = job.agent_env
    if options.mode in ("plan", "shard"):
        if any(t in inputs.tiers for t in ("triggers", "evals")):
            # The plan job and every shard job must see the same harnesses, or plans disagree.
            _say_harnesses(state, ensure_extra_harnesses(inputs, agent_env), commands)
        return _plan_or_shard(options.mode, inputs, job, touched, files)
    denied = _read_only(client, inputs, ctx, env, workspace, state, commands)
    commit = inputs.commit and "contents" not in denied
    state.refused = refused_definitions(repo, touched, inputs.tiers)
    base_ref = base_ref_of(ctx)
    base = base_evidence(job, touched, base_ref, ctx)
    _say(state, base.notes, commands)
    base_files = base.files
    pr = ctx.pull_request
    # A labelled fork run (pull_request_target) can write only its sticky comment: the ledger and
    # the results it measured ride there, so a relabel of the same content starts no session.
    carry: CommentStore | None = None
    checkout = snapshot(repo, touched)
    if (
        pr is not None
        and ctx.is_fork
        and ctx.event is Event.PULL_REQUEST_TARGET
        and client is not None
        and inputs.comment != "off"
    ):
        carried, why = load_carried(client, ctx.repository, pr.number, inputs.comment_author)
        if why:
            state.notice(f"{why}; earlier runs are not reused", commands)
        carry = CommentStore(carried.ledger)
        if restored := restore_results(carried, checkout, top):
            state.lines.append(
                f"restored {len(restored)} results file(s) this PR's earlier labelled run "
                "measured on the same content (from the sticky comment)"
            )
    before = snapshot(repo, touched)
    live = [t for t in ("triggers", "evals") if t in inputs.tiers and options.mode != "merge"]
    requested = list(live)
    why_not = ""
    merged: MergeOutcome | None = None
    if options.mode == "merge":
        assert inputs.fragments is not None
        merged = merge_fragments(repo, config, [inputs.fragments], report=False, cwd=options.cwd)
        state.lines.append(
            f"merge: plan {merged.plan_id}: {len(merged.merged)} fragment(s) into "
            f"{len(merged.written)} results file(s)"
        )
    if live and not has_credentials(agent_env):
        why = "a fork PR gets no secrets" if ctx.is_fork else "no credentials were given"
        why_not = why
        state.notice(
            f"live tiers skipped: {why} (set anthropic_api_key or claude_code_oauth_token); "
            "Tier 0 ran",
            commands,
        )
        live = []
    cancelled = False
    evaluation, not_run = Evaluation(), NotRun()
    budget = job.budget  # one cap for the whole job
    gateway_spend().limit_usd = inputs.max_cost_usd  # and the gateway's hard stop
    if live:
        _say_harnesses(state, ensure_extra_harnesses(inputs, agent_env), commands)
        if job.default_model_note:
            state.notes.append(job.default_model_note)
        evaluation = evaluate(
            job,
            touched,
            live,
            reporter,
            refused=state.refused,
            base_files=base_files,
            base_unknown=base.unknown,
            base_sha=base_ref,
            head_sha=revision_of(ctx, state).head_sha,
            out_dir=top / ".evolve-action",
            store=carry if carry is not None else ledger_store(client, ctx, commit=commit),
            attempt=f"{env.get('GITHUB_RUN_ID', '')}.{env.get('GITHUB_RUN_ATTEMPT', '1')}",
        )
        _take(state, evaluation)
        if evaluation.cancelled:  # the job was cancelled: keep and publish what finished
            cancelled = True
            state.errored = True
            state.notice(CANCELLED, commands)
    if line := budget.summary():  # in the log, the step summary and the PR comment
        state.notice(line)
    if requested:
        why_not = why_not or why_not_run(budget, cancelled)
        with deferred_signals() if cancelled else contextlib.nullcontext():
            not_run = not_evaluated(job, touched, requested, state.refused, why_not)
        state.undecided_hint = undecided_hint(evaluation.reruns, budget, job.power.max_runs)
    if note := confinement_note(state.sessions, agent_env):
        state.notice(note, commands)
    no_comment = comment_refusal(ctx) if client is not None and inputs.comment != "off" else None
    if no_comment is not None:
        state.notice(no_comment, commands)
    # After a cancellation the runner's follow-up signals must not cut the last writes short.
    with deferred_signals() if cancelled else contextlib.nullcontext():
        compared = report_and_compare(
            repo,
            config,
            touched,
            base,
            evaluation=evaluation,
            not_run=not_run,
            refused=state.refused,
            findings=state.findings,
            notes=state.notes,
            undecided_hint=state.undecided_hint,
            cost_usd=measured(state.sessions, budget),
            cwd=options.cwd,
            evaluation_url=evaluation_url(ctx, repo, top),
            run_url=ctx.run_url or None,
        )
        written, rows, facts = compared.written, compared.rows, compared.facts
        body = render_pr_comment(rows, facts, revision=revision_of(ctx, state))
        commit_sha = ""
        comment_id: int | None = None
        if commit and client is not None:
            matches, said = checkout_matches(job, ctx, touched)
            _hear(state, said, commands)
            if matches:
                committed = commit_back(client, ctx, inputs, repo, top, touched, written, before)
                state.errored = state.errored or committed.errored
                _hear(state, committed.said, commands)
                commit_sha = committed.sha
        may_comment = not no_comment and "pull-requests" not in denied
        if pr is not None and client is not None and inputs.comment != "off" and may_comment:
            posted = body
            if carry is not None:
                posted = _with_state(body, carry, checkout, top, state)
            posting = post_comment(client, ctx, inputs, rows, posted)
            _hear(state, posting.said, commands)
            comment_id = posting.comment_id
        restore_workspace_owner(workspace, [*written, *result_files(repo, touched)])
        summary = (
            body + cost_line(evaluation.estimate) + _cache_summary(state)
        )  # notes: in the body
        append_summary(files.summary, summary)
        outputs = _outputs(state, rows, touched, facts, comment_id, commit_sha, repo, top)
        if merged is not None:
            outputs = dataclasses.replace(outputs, plan_id=merged.plan_id or "")
        write_outputs(files.output, outputs)
        state.flush_notices(commands)
        result = ActionOutcome(
            exit_code=exit_for(inputs.fail_on, rows=rows, state=state, inputs=inputs),
            outputs=outputs,
            lines=tuple(state.lines),
            comment=body,
            summary=summary,
            touched=touched,
            rows=rows,
        )
    if cancelled:
        raise KeyboardInterrupt  # the CLI exits 130 or 143, as for any interrupted run
    return result


def _read_only(
    client: GitHubClient | None,
    inputs: ActionInputs,
    ctx: GitHubContext,
    env: Mapping[str, str],
    workspace: Path,
    state: _Run,
    commands: TextIO,
) -> frozenset[str]:
    """The scopes (`contents`, `pull-requests`) a same-repository PR's token is known not to
    write before any write is tried (`read_only_scopes`), with one notice saying what that skips."""
    pr = ctx.pull_request
    if (
        client is None
        or pr is None
        or ctx.is_fork
        or (not inputs.commit and inputs.comment == "off")
    ):
        return frozenset()
    try:
        login = client.identity(configured=inputs.comment_author or None).login
    except GitHubApiError:
        login = None
    denied, why = read_only_scopes(ctx, declared_permissions(env, workspace), login)
    skipped = []
    if "contents" in denied and inputs.commit:
        skipped.append("the results are not committed and the PR's ledger is only read")
    if "pull-requests" in denied and inputs.comment != "off":
        skipped.append("no PR comment is posted")
    if skipped:
        grant = ", ".join(f"{s}: write" for s in sorted(denied))
        state.notice(
            f"the token is read-only here ({why}): {'; '.join(skipped)}; everything is in this "
            f"summary (grant the job `permissions: {grant}` to publish)",
            commands,
        )
    return denied


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


def _with_state(
    body: str,
    carry: CommentStore,
    checkout: Mapping[Path, bytes | None],
    top: Path,
    state: _Run,
) -> str:
    """`body` with the state line of a labelled fork run: its ledger and the results files it
    wrote, each tied to the bytes the head's checkout held."""
    results = {}
    for path, original in checkout.items():
        now = path.read_bytes() if path.is_file() else None
        if now is not None and now != original and (rel := inside_top(path, top)) is not None:
            results[rel] = (file_sha(original), now)
    line, left = state_line(carry.ledger, results)
    if line and len(body) + len(line) + 200 > MAX_COMMENT_CHARS:  # the report comes first
        line, left = "", "the results files and the ledger of runs"
    if left:
        state.lines.append(
            f"the sticky comment's state left out {left} (over its size bound): a relabel of the "
            "same content runs them again"
        )
    return f"{body.rstrip()}\n\n{line}\n" if line else body


def _sharded_options(job: JobContext, touched: Touched) -> RunAllOptions:
    """`run all --new --modified` over the touched skills: what `plan` splits and `shard` runs
    (the models the inputs name: none named, the engines' default set)."""
    eo = evals.EvalsOptions(
        plugins=tuple(sorted({s.plugin for s in touched.skills})),
        skills=tuple(sorted({s.skill for s in touched.skills})),
        models=job.named_models,
        jobs=job.jobs,
        timeout=job.timeout,
        max_turns=job.max_turns,
        judge_model=job.judge_model,
        new=True,
        modified=True,
        budget=job.budget,
    )
    return RunAllOptions(
        repository=job.repo,
        config=job.config,
        environ=job.agent_env,
        evals=eo,
        runs=job.runs,
        report=False,
    )


def _plan_or_shard(
    mode: str,
    inputs: ActionInputs,
    job: JobContext,
    touched: Touched,
    files: CommandFiles,
) -> ActionOutcome:
    """`mode: plan` (the matrix) or `mode: shard` (one shard into fragments); nothing published."""
    opts = _sharded_options(job, touched)
    if mode == "plan":
        assert inputs.shards is not None
        sp = plan_shards(opts, inputs.shards, reporter=events.NullReporter())
        units = sum(len(s.units) for s in sp.shards)
        line = (
            f"evolve-action plan {sp.plan_id}: {units} unit(s) of {len(touched.keys)} touched "
            f"skill(s) in {len(sp.shards)} shard(s)"
        )
        outputs = ActionOutputs(
            status="skipped",
            evaluated_skills=touched.keys,
            matrix=json.dumps(sp.to_json()["matrix"], separators=(",", ":")),
            plan_id=sp.plan_id,
        )
        append_summary(files.summary, line + "\n")
        write_outputs(files.output, outputs)
        return ActionOutcome(exit_code=0, outputs=outputs, lines=(line,), touched=touched)
    assert inputs.shard is not None and inputs.fragments is not None
    index, total = inputs.shard
    sp, outcome = run_shard(
        opts, index, total, reporter=events.NullReporter(), fragments=inputs.fragments
    )
    sessions = 0
    failed = False
    if outcome is not None:
        sessions = (outcome.triggers.sessions if outcome.triggers else 0) + (
            outcome.evals.executed + outcome.evals.baselines if outcome.evals else 0
        )
        failed = outcome.failed
    where = rel_path(job.top, inputs.fragments)
    lines = [
        f"evolve-action shard {index}/{total} of plan {sp.plan_id}: "
        f"{len(sp.shards[index - 1].units)} unit(s), {sessions} session(s); fragments in {where}"
    ]
    if budget_line := opts.evals.budget.summary() if opts.evals.budget else "":
        lines.append(budget_line)
    outputs = ActionOutputs(
        status="failed" if failed else "passed",
        evaluated_skills=touched.keys,
        sessions=sessions,
        plan_id=sp.plan_id,
    )
    append_summary(files.summary, "\n\n".join(lines) + "\n")
    write_outputs(files.output, outputs)
    return ActionOutcome(exit_code=0, outputs=outputs, lines=tuple(lines), touched=touched)


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
    state = _Run()
    job = JobContext.of_local(options, repo=repo, config=config, top=top, genv=genv)
    prefix = job.prefix
    found = local_touched(job, local_changes(top, base_ref, genv))
    _say_checks(state, found.checks, None)
    touched = found.touched
    if touched.empty:
        state.lines.append(f"pr --local: no skill touched since {base_ref}; nothing to evaluate")
        return ActionOutcome(
            exit_code=exit_for(options.fail_on, rows=(), state=state),
            outputs=ActionOutputs(status="skipped"),
            lines=tuple(state.lines),
        )
    out_dir = ignored_dir(options.out_dir or (top / ".evolve-action"))
    state.refused = refused_definitions(repo, touched, ("triggers", "evals"))
    base_sha = run_git(top, genv, "rev-parse", f"{base_ref}^{{commit}}").stdout.strip() or base_ref
    base = BaseEvidence(
        files={
            s.key: load_bytes(git_show_results(top, base_sha, repo, s, genv))
            for s in touched.skills
        }
    )
    base_files = base.files
    evaluation, not_run = Evaluation(), NotRun()
    budget = job.budget
    head_sha = run_git(top, genv, "rev-parse", "HEAD").stdout.strip()
    why_not = ""
    with contextlib.ExitStack() as stack:
        work = job
        if not options.write:  # a scratch copy: the working tree's tracked files stay as they are
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evolve-pr.")))
            copy = scratch / "tree"
            copy_worktree(top, copy, genv)
            copied, copied_config = resolve_repository(copy / prefix, copy / prefix, None, env)
            work = dataclasses.replace(job, repo=copied, config=copied_config)
        if has_credentials(env):
            if job.default_model_note:
                state.notes.append(job.default_model_note)
            tiers = ["triggers", "evals"]
            evaluation = evaluate(
                work,
                touched,
                tiers,
                reporter,
                refused=state.refused,
                base_files=base_files,
                base_unknown=base.unknown,
                base_sha=base_sha,
                head_sha=head_sha,
                out_dir=out_dir,
                store=FileStore(out_dir / "ledger.json"),
                attempt=f"local {datetime.now(UTC):%Y-%m-%dT%H:%M:%S.%fZ}",
            )
            _take(state, evaluation)
            if evaluation.cancelled:
                raise KeyboardInterrupt
        else:
            why_not = "no Anthropic credentials in the environment"
            state.notice(f"live tiers skipped: {why_not}")
        if line := budget.summary():
            state.notice(line)
        why_not = why_not or why_not_run(budget, False)
        tiers = ["triggers", "evals"]
        not_run = not_evaluated(work, touched, tiers, state.refused, why_not)
        state.undecided_hint = undecided_hint(evaluation.reruns, budget, job.power.max_runs)
        if note := confinement_note(state.sessions, env):
            state.notice(note)
        compared = report_and_compare(
            work.repo,
            work.config,
            touched,
            base,
            evaluation=evaluation,
            not_run=not_run,
            refused=state.refused,
            findings=state.findings,
            notes=state.notes,
            undecided_hint=state.undecided_hint,
            cost_usd=measured(state.sessions, budget),
            cwd=options.cwd,
            title=f"Skill evaluations: {short_ref(base_ref)} → working tree (preview)",
        )
        rows, facts = compared.rows, compared.facts
    revision = Revision(
        base_sha=base_sha,
        head_sha=head_sha,
        dirty=is_dirty(top, genv),
        base_reruns=state.base_reruns,
        workflow_runs=state.workflow_runs,
        earlier=state.earlier,
    )
    body = render_pr_comment(rows, facts, revision=revision)
    summary = body + cost_line(evaluation.estimate) + _cache_summary(state)
    comment_file, summary_file = out_dir / "pr-comment.md", out_dir / "step-summary.md"
    write_text(comment_file, body)
    write_text(summary_file, summary)
    state.lines.append(f"pr --local: the comment reviewers would see: {comment_file}")
    state.lines.append(f"pr --local: the step summary: {summary_file}")
    if not options.write:
        state.lines.append(
            "pr --local: evaluated in a scratch copy; no tracked file changed (--write updates "
            "the results files and reports in place)"
        )
    outputs = _outputs(state, rows, touched, facts, None, "", repo, top)
    verdict = next((line for line in body.splitlines() if line.startswith("### ")), "")
    if verdict:
        state.lines.append("pr --local: " + verdict.removeprefix("### "))
    return ActionOutcome(
        exit_code=exit_for(options.fail_on, rows=rows, state=state),
        outputs=outputs,
        lines=tuple(state.lines),
        comment=body,
        summary=summary,
        touched=touched,
        rows=rows,
        files=(comment_file, summary_file),
    )


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
    state: _Run,
    inputs: ActionInputs | None = None,
) -> int:
    """The step's exit code: 1 when `fail_on` says this outcome fails the step, else 0.

    `regression`: a row labelled regression, a threshold breach, a Tier 0 failure, a tier not
    evaluated (stale or missing evidence this job did not run: no verdict is not a pass) or an
    error; `threshold`: the same without regressions; `error`: errors only; `never`: 0.
    """
    if fail_on == "never":
        return 0
    failed = state.errored
    if fail_on in ("regression", "threshold"):
        failed = failed or state.check_failures > 0 or _breaches(rows, inputs)
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


def _cache_summary(state: _Run) -> str:
    """The job's prompt-cache line, in the job log (`state.lines`) and as the step summary's last
    line ("" when no request used the cache)."""
    line = cache_line(gateway_spend().total)
    if not line:
        return ""
    state.lines.append(line)
    return f"\n<sub>{line}</sub>\n"


def _say(state: _Run, notes: Sequence[str], commands: TextIO | None) -> None:
    """A stage's notes, in the order it found them: the comment, the summary and the log."""
    for note in notes:
        state.notice(note, commands)


def _say_checks(state: _Run, checks: Tier0 | None, commands: TextIO | None) -> None:
    """Tier 0's verdict: its notes, its annotations (under Actions) and its log lines, and the
    failures and findings for the comment and the exit code."""
    if checks is None:
        return
    _say(state, checks.notes, commands)
    if commands is not None:
        for a in checks.annotations:
            annotate(commands, a.level, a.message, file=a.file, line=a.line)
    state.lines.extend(checks.lines)
    state.check_failures = checks.failures
    state.findings = checks.findings


def _say_harnesses(state: _Run, said: tuple[str, str], commands: TextIO | None) -> None:
    """`ensure_extra_harnesses`' notice or log line."""
    note, line = said
    if note:
        state.notice(note, commands)
    if line:
        state.lines.append(line)


def _take(state: _Run, evaluation: Evaluation) -> None:
    """The evaluation's sessions, errors, ledger facts, notes and log lines, into the job's log."""
    state.sessions += evaluation.sessions
    state.errored = state.errored or evaluation.errored
    state.base_reruns += evaluation.base_reruns
    state.workflow_runs, state.earlier = evaluation.workflow_runs, evaluation.earlier
    state.notes.extend(evaluation.notes)
    state.lines.extend(evaluation.lines)


def _hear(state: _Run, said: Said, commands: TextIO | None) -> None:
    """A publishing step's notices and log lines, in the order it said them."""
    for kind, text in said.entries:
        if kind == "note":
            state.notice(text, commands)
        else:
            state.lines.append(text)


def _outputs(
    state: _Run,
    rows: Sequence[ComparisonRow],
    touched: Touched,
    facts: RunFacts,
    comment_id: int | None,
    commit_sha: str,
    repo: Repository,
    top: Path,
) -> ActionOutputs:
    return outputs_of(
        rows,
        touched,
        facts,
        comment_id,
        commit_sha,
        repo,
        top,
        errored=state.errored,
        check_failures=state.check_failures,
        sessions=state.sessions,
    )
