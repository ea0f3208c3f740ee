"""The GitHub Action's jobs: `pr` (and its local preview), `run`, `gate` and the sharded trio
`plan`/`shard`/`merge`, as functions over data.

Owns: `run_pr` (one pull request: Tier 0 on the whole repository — eval specs of the touched skills
only — the touched skills' missing or stale cases, the report, the commit-back, the sticky comment,
the step summary and the outputs; `plan` splits that work into shards, `shard` runs one into
fragments, `merge` folds them in and publishes as `pr`), `run_gate` (the committed evidence
against the thresholds, no agent) and the pieces they share: which skills to evaluate, the base
evidence, the fail-on rule, the job's budget.

Guarantees:
- Untouched skills never start an agent session; touched ones run only cases whose stored result is
  missing or stale (`--new` ∪ `--modified`), so a re-run on the bot's own commit plans nothing.
- Nothing is posted or committed for a fork, with `comment: off`/`commit: false`, or locally
  (`local=True` writes the comment and the summary to files instead). A pull request event on a PR
  that is not open (`closed`, merged) is one summary line: no agent session, no comment, no commit.
- The commit-back only ever commits files that resolve inside the repository top; the base
  evidence comes from git whenever the clone holds the base commit, else from the API, and a base
  that cannot be read is a notice, never a silent "no base".
- A GitHub failure after the evaluation (a 403 on the comment, a moved head) becomes a notice: the
  results on disk, the step summary and the outputs are still written.
- A cancelled job (SIGINT/SIGTERM) still reports, commits what finished and notes the
  cancellation; the runner's follow-up signals are ignored while it does.
- The step's exit code follows `fail_on` (`flows.exit_for`), and the comment body is a function of
  the base and head evidence (its digest decides whether an existing comment is rewritten).

Never does: parse argv or print; workflow commands (masks, annotations) go to the `commands` stream
the caller passes, lines for the log come back in the outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TextIO

from evolve_action import checks, evals, events, plan, triggers
from evolve_action.catalog import PR_DEFAULT_MODEL
from evolve_action.checks import CheckOptions, run_checks
from evolve_action.config import BaseMode, Config, resolve_repository
from evolve_action.encoding import write_text
from evolve_action.errors import EnvironmentProblem, EvolveError, UsageError
from evolve_action.flows._ledger import (
    FileStore,
    Fingerprints,
    Ledger,
    LedgerStore,
    RefStore,
    history,
)
from evolve_action.flows._power import PowerOptions, copy_worktree, more_runs, reruns_document
from evolve_action.flows._report import ReportOptions, regenerate_report
from evolve_action.flows._run_all import RunAllOptions
from evolve_action.flows._shard import (
    CostEstimate,
    MergeOutcome,
    estimate_cost,
    merge_fragments,
    plan_shards,
    run_shard,
)
from evolve_action.flows._tiers import trigger_options
from evolve_action.github import (
    ActionInputs,
    ActionOutputs,
    ChangedPath,
    CommandFiles,
    Committed,
    Event,
    FileChange,
    GitHubApiError,
    GitHubClient,
    GitHubContext,
    HeadMoved,
    RetryPolicy,
    Touched,
    TouchedSkill,
    annotate,
    append_summary,
    checkout_kind,
    fork_target_refusal,
    git_changed_paths,
    git_env,
    inactive_message,
    is_actions,
    load_context,
    read_inputs,
    restore_workspace_owner,
    touched_skills,
    unsupported_message,
    write_outputs,
)
from evolve_action.harness import (
    CODEX_VERSION,
    CREDENTIAL_VARS,
    Budget,
    agent_harness,
    available_harnesses,
    check_for_models,
    confinement,
    default_jobs,
    deferred_signals,
    find_codex,
    gateway_spend,
    install_codex,
    sweep_failed,
)
from evolve_action.repo import Repository, rel_path
from evolve_action.report import (
    ComparisonRow,
    GateOptions,
    Label,
    Reruns,
    Revision,
    RunFacts,
    SkillEvidence,
    compare,
    digest_of,
    evidence_digest,
    parse_maturity,
    render_pr_comment,
)
from evolve_action.results import ResultsFile, load_results
from evolve_action.specs import Severity

__all__ = [
    "COMMENT_MARKER",
    "ActionOutcome",
    "PrOptions",
    "exit_for",
    "run_gate",
    "run_pr",
]

COMMENT_MARKER = "<!-- evolve-action:pr-comment -->"
"""The hidden marker the sticky comment is found by (together with its author)."""

MAX_ANNOTATIONS = 10
"""Annotations per level and step (GitHub shows at most 10 per level of a step)."""

RESULT_NAMES = ("results.json", "results.jsonc", "results.yaml", "results.yml")


@dataclass(frozen=True, slots=True, kw_only=True)
class PrOptions:
    """What `run_pr` needs besides the environment."""

    environ: Mapping[str, str]
    cwd: Path
    mode: Literal["pr", "run", "plan", "shard", "merge"] = "pr"
    """`plan`/`shard`/`merge`: the sharded trio (the touched skills' work split over a matrix)."""
    local: bool = False
    """`pr --local`: the working tree against `base`; nothing is posted or committed."""
    base: str | None = None
    """Local only: the base ref (default: the merge base with `origin/HEAD`, else `main`)."""
    out_dir: Path | None = None
    """Local only: where the comment and the summary are written (default `<root>/.evolve-action`)."""
    retry: RetryPolicy | None = None
    """The GitHub client's retry policy (tests pass `RetryPolicy.immediate()`)."""
    models: tuple[str, ...] = ()
    """Local only: model tokens (empty: the repository config's, else `PR_DEFAULT_MODEL`)."""
    runs: int | None = None
    """Local only: trigger sessions per query (None: the engine default)."""
    jobs: int | None = None
    """Local only: concurrent sessions (None: twice the CPUs, at most 8)."""
    max_cost_usd: float | None = None
    """Local only: the spending cap in US dollars (None: no cap)."""
    base_mode: BaseMode | None = None
    """Local only: the base side (`stored | rerun | auto`; None: config `pr.base`)."""
    max_runs: int | None = None
    """Local only: runs per query per side for an undecided comparison (None: config)."""
    fail_on: str = "regression"
    """Local only: which outcome exits 1 (`regression | threshold | error | never`)."""
    write: bool = False
    """Local only: evaluate in place and update the results files and reports (default: a scratch
    copy, so no tracked file changes)."""


CANCELLED = (
    "cancelled: the job was stopped before every case ran; the finished cases are reported and "
    "committed, and a re-run evaluates the rest"
)
"""The note of a cancelled `pr`/`run`/`merge` job."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Knobs:
    """How the live tiers run: the action's inputs, or `pr --local`'s options."""

    models: tuple[str, ...] = ()
    runs: int | None = None
    jobs: int | None = None
    timeout: int | None = None
    max_turns: int | None = None
    judge_model: str | None = None
    max_cost_usd: float | None = None
    base_mode: BaseMode | None = None
    max_runs: int | None = None

    @classmethod
    def of(cls, inputs: ActionInputs) -> _Knobs:
        return cls(
            models=inputs.models,
            runs=inputs.runs,
            jobs=inputs.jobs,
            timeout=inputs.timeout,
            max_turns=inputs.max_turns,
            judge_model=inputs.judge_model,
            max_cost_usd=inputs.max_cost_usd,
            base_mode=inputs.base,
            max_runs=inputs.max_runs,
        )

    def power(self, config: Config) -> PowerOptions:
        """Power on demand: these knobs over config `pr.*`."""
        return PowerOptions(
            base=self.base_mode or config.pr.base,
            max_runs=self.max_runs or config.pr.max_runs,
            jobs=self.jobs or default_jobs(),
            timeout=self.timeout,
        )

    def with_default_model(self, config: Config, state: _Run) -> _Knobs:
        """One model when nothing names any (not every catalog model): said in the notes."""
        if self.models or config.models is not None:
            return self
        state.notes.append(
            f"evaluated one model, {PR_DEFAULT_MODEL} (the default); to evaluate more, list them "
            "in `models:` of .evolve.yaml, the `models` input, or `--model`"
        )
        return dataclasses.replace(self, models=(PR_DEFAULT_MODEL,))


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionOutcome:
    """What a job did; the CLI prints `lines` and exits with `exit_code`."""

    exit_code: int
    outputs: ActionOutputs
    lines: tuple[str, ...] = ()
    """Human lines for the log (notices, what ran, where files are)."""
    comment: str = ""
    """The comment body (posted, previewed or empty)."""
    summary: str = ""
    """The step summary written (or previewed)."""
    touched: Touched | None = None
    rows: tuple[ComparisonRow, ...] = ()
    files: tuple[Path, ...] = ()
    """Local mode: the comment and summary files written."""


@dataclass(slots=True)
class _Run:
    """Mutable state of one job while it runs."""

    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sessions: int = 0
    skipped: int = 0
    errored: bool = False
    check_failures: int = 0
    base_unknown: set[str] = field(default_factory=set)
    """Touched skills (`plugin/skill`) whose base results could not be read."""
    refused: dict[str, dict[plan.Tier, str]] = field(default_factory=dict)
    """Touched skills whose definition of a tier was refused as an authoring error."""
    reruns: dict[str, dict[str, Reruns]] = field(default_factory=dict)
    """Skill key → model key → the runs power on demand added (never committed)."""
    base_reruns: int = 0
    """Sessions that re-ran the base's version (part of `sessions`)."""
    workflow_runs: int = 0
    """Workflow runs whose runs the comparisons used (the PR's ledger, `flows._ledger`)."""
    earlier: tuple[str, ...] = ()
    """Comparisons an earlier workflow run labelled otherwise."""
    estimate_usd: float | None = None
    """The dry-run estimate of the planned sessions (`flows.estimate_cost`)."""
    estimate_sessions: int = 0

    def notice(self, text: str, commands: TextIO | None = None) -> None:
        """A note for the comment and the summary, shown as a `::notice` (or a log line locally)."""
        self.notes.append(text)
        if commands is not None:
            annotate(commands, "notice", text)
        else:
            self.lines.append(f"notice: {text}")


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
    if skip is not None:  # an event we ignore, or a closed/merged PR: no agent, no commit
        line = skip
        append_summary(files.summary, f"{line}\n")
        write_outputs(files.output, ActionOutputs(status="skipped"))
        return ActionOutcome(exit_code=0, outputs=ActionOutputs(status="skipped"), lines=(line,))
    refusal = fork_target_refusal(ctx, allow_fork_target=inputs.allow_fork_target)
    if refusal is not None:
        annotate(commands, "error", refusal)
        append_summary(files.summary, f"**evolve-action refused to run.** {refusal}\n")
        write_outputs(files.output, ActionOutputs(status="errored"))
        return ActionOutcome(exit_code=2, outputs=ActionOutputs(status="errored"), lines=(refusal,))

    repo, config = resolve_repository(inputs.working_directory, options.cwd, None, env)
    genv = git_env(env, safe_directories=(workspace, repo.root))
    top = _git_toplevel(repo.root, genv) or workspace
    prefix = _rel_prefix(repo.root, top)
    client = _client(inputs, ctx, options.retry)
    if options.mode == "run" and not inputs.explicit_skills:
        touched = _explicit(repo, inputs, everything=True)  # `mode: run`: every skill by default
    else:
        touched = _touched_for(inputs, ctx, repo, prefix, top, genv, client, state, commands)
    if "checks" in inputs.tiers and options.mode not in ("plan", "shard"):  # merge annotates
        _tier0(repo, config, commands, state, top, touched if ctx.pull_request else None)
    if touched.empty:
        line = "evolve-action: no skill touched by this change; nothing to evaluate"
        summary = f"{line}.\n"
        append_summary(files.summary, summary)
        outputs = ActionOutputs(status="skipped", report_path=_report_rel(repo, top))
        write_outputs(files.output, outputs)
        code = exit_for(inputs.fail_on, rows=(), state=state)
        return ActionOutcome(
            exit_code=code, outputs=outputs, lines=(*state.lines, line), touched=touched
        )

    agent_env = _agent_environ(env, inputs)
    if options.mode in ("plan", "shard"):
        if any(t in inputs.tiers for t in ("triggers", "evals")):
            # The plan job and every shard job must see the same harnesses, or plans disagree.
            _ensure_extra_harnesses(inputs, agent_env, state, commands)
        return _plan_or_shard(options.mode, inputs, repo, config, touched, agent_env, top, files)
    _refusals(repo, touched, inputs.tiers, state)
    base_ref = _base_ref(ctx)
    base_files = _base_evidence(repo, touched, top, base_ref, genv, client, ctx, state, commands)
    before = _snapshot(repo, touched)
    live = [t for t in ("triggers", "evals") if t in inputs.tiers and options.mode != "merge"]
    merged: MergeOutcome | None = None
    if options.mode == "merge":
        assert inputs.fragments is not None
        merged = merge_fragments(repo, config, [inputs.fragments], report=False, cwd=options.cwd)
        state.lines.append(
            f"merge: plan {merged.plan_id}: {len(merged.merged)} fragment(s) into "
            f"{len(merged.written)} results file(s)"
        )
    if live and not _has_credentials(agent_env):
        why = "a fork PR gets no secrets" if ctx.is_fork else "no credentials were given"
        state.notice(
            f"live tiers skipped: {why} (set anthropic_api_key or claude_code_oauth_token); "
            "Tier 0 ran",
            commands,
        )
        live = []
    cancelled = False
    budget = Budget(limit_usd=inputs.max_cost_usd)  # one cap for the whole job
    gateway_spend().limit_usd = inputs.max_cost_usd  # and the gateway's hard stop
    if live:
        _ensure_extra_harnesses(inputs, agent_env, state, commands)
        knobs = _Knobs.of(inputs).with_default_model(config, state)
        try:
            _evaluate(repo, config, touched, knobs, agent_env, live, reporter, state, budget)
            if "triggers" in live and options.mode != "merge":
                _more_runs(
                    repo,
                    touched,
                    base_files,
                    state,
                    top=top,
                    prefix=prefix,
                    base_sha=base_ref,
                    head_sha=_revision_of(ctx, state).head_sha,
                    agent_env=agent_env,
                    genv=genv,
                    options=knobs.power(config),
                    budget=budget,
                    reporter=reporter,
                    out_dir=top / ".evolve-action",
                    store=_ledger_store(client, ctx),
                    attempt=f"{env.get('GITHUB_RUN_ID', '')}.{env.get('GITHUB_RUN_ATTEMPT', '1')}",
                )
        except KeyboardInterrupt:  # the job was cancelled: keep and publish what finished
            cancelled = True
            state.errored = True
            state.notice(CANCELLED, commands)
    if line := budget.summary():  # in the log, the step summary and the PR comment
        state.notice(line)
    _confinement_notice(state, agent_env)
    # After a cancellation the runner's follow-up signals must not cut the last writes short.
    with deferred_signals() if cancelled else contextlib.nullcontext():
        written, rows, facts = _report_and_compare(
            repo,
            config,
            touched,
            base_files,
            before,
            state,
            options.cwd,
            evaluation_url=_evaluation_url(ctx, repo, top),
            run_url=ctx.run_url or None,
        )
        body = render_pr_comment(rows, facts, revision=_revision_of(ctx, state))
        commit_sha = ""
        comment_id: int | None = None
        pr = ctx.pull_request
        if (
            inputs.commit
            and client is not None
            and _checkout_matches(ctx, top, genv, state, commands)
        ):
            commit_sha = _commit_back(
                client, ctx, inputs, repo, top, touched, written, before, state, commands
            )
        if pr is not None and client is not None and inputs.comment != "off" and not ctx.is_fork:
            comment_id = _comment(client, ctx, inputs, rows, body, state, commands)
        restore_workspace_owner(workspace, [*written, *_result_files(repo, touched)])
        summary = body + _cost_line(state, budget)  # the notes are in the body already
        append_summary(files.summary, summary)
        outputs = _outputs(rows, state, touched, facts, comment_id, commit_sha, repo, top)
        if merged is not None:
            outputs = dataclasses.replace(outputs, plan_id=merged.plan_id or "")
        write_outputs(files.output, outputs)
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


def _sharded_options(
    repo: Repository,
    config: Config,
    touched: Touched,
    knobs: _Knobs,
    agent_env: Mapping[str, str],
) -> RunAllOptions:
    """`run all --new --modified` over the touched skills: what `plan` splits and `shard` runs."""
    eo = evals.EvalsOptions(
        plugins=tuple(sorted({s.plugin for s in touched.skills})),
        skills=tuple(sorted({s.skill for s in touched.skills})),
        models=knobs.models,
        jobs=knobs.jobs or default_jobs(),
        timeout=knobs.timeout,
        max_turns=knobs.max_turns,
        judge_model=knobs.judge_model,
        new=True,
        modified=True,
        budget=Budget(limit_usd=knobs.max_cost_usd),
    )
    return RunAllOptions(
        repository=repo,
        config=config,
        environ=agent_env,
        evals=eo,
        runs=knobs.runs or triggers.DEFAULT_RUNS,
        report=False,
    )


def _plan_or_shard(
    mode: str,
    inputs: ActionInputs,
    repo: Repository,
    config: Config,
    touched: Touched,
    agent_env: Mapping[str, str],
    top: Path,
    files: CommandFiles,
) -> ActionOutcome:
    """`mode: plan` (the matrix) or `mode: shard` (one shard into fragments); nothing published."""
    opts = _sharded_options(repo, config, touched, _Knobs.of(inputs), agent_env)
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
    where = rel_path(top, inputs.fragments)
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
    top = _git_toplevel(repo.root, genv)
    if top is None:
        raise UsageError(
            f"pr --local: {repo.root} is not in a git repository",
            hint="run it inside the repository's git checkout",
        )
    prefix = _rel_prefix(repo.root, top)
    base = options.base or _default_base(top, genv)
    state = _Run()
    checks = run_checks(repo, config, CheckOptions(signals=False))
    state.check_failures = checks.failures
    if checks.failures:
        state.lines.append(f"checks: {checks.failures} failure(s) (see `run checks`)")
    changes = _local_changes(top, base, genv)
    touched = touched_skills(repo, changes, prefix=prefix)
    if touched.empty:
        state.lines.append(f"pr --local: no skill touched since {base}; nothing to evaluate")
        return ActionOutcome(
            exit_code=exit_for(options.fail_on, rows=(), state=state),
            outputs=ActionOutputs(status="skipped"),
            lines=tuple(state.lines),
        )
    out_dir = _ignored_dir(options.out_dir or (top / ".evolve-action"))
    _refusals(repo, touched, ("triggers", "evals"), state)
    base_sha = _git(top, genv, "rev-parse", f"{base}^{{commit}}").stdout.strip() or base
    base_files = {
        s.key: _load_bytes(_git_show_results(top, base_sha, repo, s, genv)) for s in touched.skills
    }
    knobs = _Knobs(
        models=options.models,
        runs=options.runs,
        jobs=options.jobs,
        max_cost_usd=options.max_cost_usd,
        base_mode=options.base_mode,
        max_runs=options.max_runs,
    )
    budget = Budget(limit_usd=options.max_cost_usd)
    head_sha = _git(top, genv, "rev-parse", "HEAD").stdout.strip()
    with contextlib.ExitStack() as stack:
        work, work_config = repo, config
        if not options.write:  # a scratch copy: the working tree's tracked files stay as they are
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evolve-pr.")))
            copy = scratch / "tree"
            copy_worktree(top, copy, genv)
            work, work_config = resolve_repository(copy / prefix, copy / prefix, None, env)
        before = _snapshot(work, touched)
        if _has_credentials(env):
            knobs = knobs.with_default_model(config, state)
            tiers = ["triggers", "evals"]
            _evaluate(work, work_config, touched, knobs, env, tiers, reporter, state, budget)
            _more_runs(
                work,
                touched,
                base_files,
                state,
                top=top,
                prefix=prefix,
                base_sha=base_sha,
                head_sha=head_sha,
                agent_env=env,
                genv=genv,
                options=knobs.power(config),
                budget=budget,
                reporter=reporter,
                out_dir=out_dir,
                store=FileStore(out_dir / "ledger.json"),
                attempt=f"local {datetime.now(UTC):%Y-%m-%dT%H:%M:%S.%fZ}",
            )
        else:
            state.notice("live tiers skipped: no Anthropic credentials in the environment")
        if line := budget.summary():
            state.notice(line)
        _confinement_notice(state, env)
        _, rows, facts = _report_and_compare(
            work,
            work_config,
            touched,
            base_files,
            before,
            state,
            options.cwd,
            title=f"Skill evaluations: {_short_ref(base)} → working tree (preview)",
        )
    revision = Revision(
        base_sha=base_sha,
        head_sha=head_sha,
        dirty=_dirty(top, genv),
        base_reruns=state.base_reruns,
        workflow_runs=state.workflow_runs,
        earlier=state.earlier,
    )
    body = render_pr_comment(rows, facts, revision=revision)
    summary = body + _cost_line(state, budget)
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
    outputs = _outputs(rows, state, touched, facts, None, "", repo, top)
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


def run_gate(environ: Mapping[str, str], cwd: Path, *, commands: TextIO) -> ActionOutcome:
    """`mode: gate`: `report --check --strict` over the committed evidence; one annotation a breach.

    Works on any event (tags, releases): it reads only files. Thresholds come from the inputs, else
    the repository config.
    """
    workspace = Path(environ.get("GITHUB_WORKSPACE") or cwd)
    inputs = read_inputs(environ, workspace=workspace, log=commands)
    files = CommandFiles.from_env(environ)
    repo, config = resolve_repository(inputs.working_directory, cwd, None, environ)
    th = config.report.thresholds
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
        models=tuple(th.models) if th.models is not None else None,
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
            harnesses_here=frozenset(available_harnesses(environ, dry_run=True))
            | frozenset(inputs.extra_harnesses),
        ),
        cwd=cwd,
    )
    top = _git_toplevel(repo.root, git_env(environ, safe_directories=(repo.root,))) or repo.root
    fails = [i for i in outcome.issues if i.level == "FAIL"]
    if is_actions(environ):  # workflow commands only on a runner; elsewhere one line a problem
        for issue in outcome.issues:
            annotate(commands, "error" if issue.level == "FAIL" else "warning", issue.text)
    lines = [i.line() for i in outcome.issues]
    if not fails:
        lines.append("gate: thresholds met")
    summary = "### evolve-action gate\n\n" + (
        "\n".join(f"- {line}" for line in lines) + "\n" if lines else ""
    )
    append_summary(files.summary, summary)
    status: Literal["passed", "failed"] = "failed" if fails else "passed"
    outputs = ActionOutputs(status=status, report_path=_report_rel(repo, top))
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

    `regression`: a row labelled regression, a threshold breach, a Tier 0 failure or an error;
    `threshold`: a breach, a Tier 0 failure or an error; `error`: errors only; `never`: 0.
    """
    if fail_on == "never":
        return 0
    failed = state.errored
    if fail_on in ("regression", "threshold"):
        failed = failed or state.check_failures > 0 or _breaches(rows, inputs)
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
    shown = {"error": 0, "warning": 0}
    for finding in report.findings:
        level = "error" if finding.severity == Severity.ERROR else "warning"
        if shown[level] >= MAX_ANNOTATIONS:
            continue
        shown[level] += 1
        path = (repo.root / finding.path) if finding.path else None
        file = _rel(path, top) if path is not None else None
        annotate(commands, level, finding.message, file=file, line=finding.line)
    hidden = sum(1 for _ in report.findings) - sum(shown.values())
    if report.failures:
        state.lines.append(f"checks: {report.failures} failure(s)")
    if hidden > 0:
        state.lines.append(f"checks: {hidden} more finding(s) not annotated (see `run checks`)")


def _client(
    inputs: ActionInputs, ctx: GitHubContext, retry: RetryPolicy | None
) -> GitHubClient | None:
    if not inputs.github_token:
        return None
    return GitHubClient(inputs.github_token, base_url=ctx.api_url, policy=retry)


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


def _evaluate(
    repo: Repository,
    config: Config,
    touched: Touched,
    knobs: _Knobs,
    agent_env: Mapping[str, str],
    tiers: Sequence[str],
    reporter: events.Reporter,
    state: _Run,
    budget: Budget,
) -> None:
    """Run the touched skills' missing or stale cases, plugin by plugin, tier by tier, within the
    job's one `budget`; the dry-run estimate of what is planned goes into `state`."""
    by_plugin: dict[str, list[str]] = {}
    for s in touched.skills:
        by_plugin.setdefault(s.plugin, []).append(s.skill)
    jobs = knobs.jobs or default_jobs()
    checked = False
    for plugin, skills in sorted(by_plugin.items()):
        if "triggers" in tiers:
            built = trigger_options(
                repo,
                config,
                agent_env,
                plugins=(plugin,),
                skills=tuple(skills),
                models=knobs.models,
                new=True,
                modified=True,
                runs=knobs.runs or triggers.DEFAULT_RUNS,
                jobs=jobs,
                timeout=knobs.timeout,
                require_cli=True,
                budget=budget,
            )
            made = triggers.make_plan(built.options)
            planned = made[0]
            n = sum(len(u.cases) for u in planned.units)
            _estimate(
                state,
                estimate_cost([planned], runs=built.options.runs, models=built.options.models),
            )
            if n:
                if not checked:
                    check_for_models(agent_env, built.options.models, judge=False)
                    checked = True
                outcome = asyncio.run(
                    triggers.run(built.options, reporter, agent_harness(agent_env), planned=made)
                )
                if outcome.all_failed:
                    raise sweep_failed(outcome.all_failed, tier="triggers")
                state.sessions += outcome.sessions
                state.errored = state.errored or any(
                    q.passed is None for u in outcome.units for q in u.queries
                )
                for line in _listing_notes(outcome):
                    state.notice(line)
            runs = built.options.runs
            state.skipped += runs * sum(len(u.valid_keys) - len(u.cases) for u in planned.units)
        if "evals" in tiers:
            eo = evals.EvalsOptions(
                plugins=(plugin,),
                skills=tuple(skills),
                models=knobs.models,
                jobs=jobs,
                timeout=knobs.timeout,
                max_turns=knobs.max_turns,
                judge_model=knobs.judge_model,
                new=True,
                modified=True,
                budget=budget,
            )
            eplan = evals.plan_evals(repo, config, eo, environ=agent_env)
            _estimate(state, estimate_cost([eplan.plan], runs=1, models=eplan.models))
            state.skipped += sum(len(u.valid_keys) - len(u.cases) for u in eplan.plan.units)
            if eplan.plan.cases:
                if not checked:
                    check_for_models(agent_env, eplan.models)
                    checked = True
                ev = asyncio.run(
                    evals.run_evals(
                        repo, config, eo, environ=agent_env, reporter=reporter, planned=eplan
                    )
                )
                if ev.all_failed:
                    raise sweep_failed(ev.all_failed, tier="evals")
                state.sessions += ev.executed + ev.baselines
                state.errored = state.errored or ev.errored > 0


def _estimate(state: _Run, est: CostEstimate) -> None:
    state.estimate_sessions += est.total_sessions
    if any(v is not None for v in est.usd.values()):
        state.estimate_usd = (state.estimate_usd or 0.0) + est.total_usd


def _more_runs(
    repo: Repository,
    touched: Touched,
    base_files: Mapping[str, ResultsFile | None],
    state: _Run,
    *,
    top: Path,
    base_sha: str | None,
    head_sha: str,
    prefix: str,
    agent_env: Mapping[str, str],
    genv: Mapping[str, str],
    options: PowerOptions,
    budget: Budget,
    reporter: events.Reporter,
    out_dir: Path,
    store: LedgerStore | None = None,
    attempt: str = "",
) -> None:
    """Power on demand over the touched skills (`flows._power`); the runs go into `state` for the
    comparison, into `<out_dir>/base-runs.json` and into the PR's ledger (`store`: runs of
    earlier workflow runs are reused, this job's added), never into a results file."""
    ledger = _load_ledger(store, state)
    got = more_runs(
        _evidence(repo, touched, base_files, state),
        top=top,
        prefix=prefix,
        base_sha=base_sha,
        environ=agent_env,
        genv=genv,
        options=options,
        budget=budget,
        reporter=reporter,
        ledger=ledger,
        attempt=attempt,
    )
    if store is not None and ledger is not None:
        _save_ledger(store, got.recorded, got.fingerprints, state)
    state.reruns = got.reruns
    state.sessions += got.sessions
    state.base_reruns += got.base_sessions
    state.notes.extend(got.notes)
    if not got.reruns:
        return
    doc = reruns_document(got, base_sha=base_sha or "", head_sha=head_sha, options=options)
    path = _ignored_dir(out_dir) / "base-runs.json"
    write_text(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    state.lines.append(
        f"power on demand: {got.sessions} more session(s), {got.base_sessions} of them re-ran the "
        f"base's version; {got.reused} run(s) reused from the PR's ledger; the runs: {path}"
    )


def _ledger_store(client: GitHubClient | None, ctx: GitHubContext) -> LedgerStore | None:
    """The PR's ledger on its ref; read-only on a fork PR (its token cannot write)."""
    pr = ctx.pull_request
    if client is None or pr is None:
        return None  # a push or a dispatch: no PR to keep runs for
    return RefStore(client.repository(ctx.repository), pr.number, writable=not ctx.is_fork)


def _load_ledger(store: LedgerStore | None, state: _Run) -> Ledger | None:
    if store is None:
        return None
    try:
        return store.load()
    except EvolveError as exc:
        state.notice(f"the ledger of runs could not be read ({exc}); earlier runs are not reused")
        return None


def _save_ledger(
    store: LedgerStore,
    recorded: Ledger,
    comparisons: Mapping[tuple[str, str], Fingerprints],
    state: _Run,
) -> None:
    try:
        merged = store.save(recorded)
    except EvolveError as exc:
        state.notice(f"this job's runs were not added to the ledger ({exc})")
        merged = recorded
    state.workflow_runs, state.earlier = history(merged, comparisons)
    if not store.writable and not recorded.empty:
        state.notice(
            f"fork PR: this job's runs were not added to the ledger ({store.where}: the token is "
            "read-only); a re-run starts them again"
        )


def _ignored_dir(path: Path) -> Path:
    """`path`, made, with a `.gitignore` of `*` so git never lists what we write there."""
    path.mkdir(parents=True, exist_ok=True)
    ignore = path / ".gitignore"
    if not ignore.is_file():
        write_text(ignore, "# evolve-action's local output: never committed\n*\n")
    return path


def _checkout_matches(
    ctx: GitHubContext, top: Path, genv: Mapping[str, str], state: _Run, commands: TextIO
) -> bool:
    """A PR's results may be committed only when the workspace holds its head or its test merge.

    `pull_request_target` checks out the base by default: results computed there are not the PR's,
    so they are never committed onto its branch.
    """
    if ctx.pull_request is None:
        return True
    head = _git(top, genv, "rev-parse", "HEAD").stdout.strip()
    if checkout_kind(ctx, head) != "other":
        return True
    state.notice(
        f"the workspace holds {head[:12] or 'no commit'}, neither the PR head nor its test merge "
        "(pull_request_target checks out the base by default): the results were not committed; "
        "check out github.event.pull_request.head.sha",
        commands,
    )
    return False


def _commit_back(
    client: GitHubClient,
    ctx: GitHubContext,
    inputs: ActionInputs,
    repo: Repository,
    top: Path,
    touched: Touched,
    written: Sequence[Path],
    before: Mapping[Path, bytes | None],
    state: _Run,
    commands: TextIO,
) -> str:
    """Commit the changed results files and reports on the evaluated head; return the new SHA."""
    pr = ctx.pull_request
    if pr is not None:
        if ctx.is_fork:
            state.notice(
                "fork PR: the results were not committed (the token cannot push to a fork); "
                "they are in the step summary",
                commands,
            )
            return ""
        branch, parent = pr.head_ref, pr.head_sha
    elif ctx.ref.startswith("refs/heads/"):
        branch, parent = ctx.ref.removeprefix("refs/heads/"), ctx.sha
    else:
        return ""
    paths = [p for p in _result_files(repo, touched) if p.read_bytes() != before.get(p)]
    paths += [p for p in written if p.is_file()]
    changes = []
    outside = []
    for p in dict.fromkeys(paths):
        rel = _inside(p, top)
        if rel is None:
            outside.append(p)
        else:
            changes.append(FileChange(rel, p.read_bytes()))
    if outside:
        shown = ", ".join(str(p) for p in outside[:3]) + (" …" if len(outside) > 3 else "")
        state.errored = True
        state.notice(
            f"not committed: {len(outside)} file(s) resolve outside the repository {top} ({shown}); "
            "nothing outside the checkout is ever committed",
            commands,
        )
    if not changes:
        return ""
    try:
        result = client.repository(ctx.repository).commit_files(
            branch=branch, parent_sha=parent, changes=changes, message=inputs.commit_message
        )
    except GitHubApiError as exc:
        state.notice(f"the results were not committed: {exc.message}", commands)
        return ""
    if isinstance(result, HeadMoved):
        state.notice(result.notice(), commands)
        return ""
    if isinstance(result, Committed):
        state.lines.append(f"committed {len(result.paths)} file(s) as {result.sha[:12]}")
        return result.sha
    return ""


def _comment(
    client: GitHubClient,
    ctx: GitHubContext,
    inputs: ActionInputs,
    rows: Sequence[ComparisonRow],
    body: str,
    state: _Run,
    commands: TextIO,
) -> int | None:
    """Create or update the sticky comment per `comment`; an unchanged evidence digest writes nothing."""
    pr = ctx.pull_request
    assert pr is not None
    try:
        identity = client.identity(configured=inputs.comment_author or None)
        author = identity.login
        if author is None:
            state.lines.append(
                "comment: the token's identity is unknown (GitHub's API did not say; set "
                "`comment_author`); our comment is the oldest one by a bot that starts with the marker"
            )
        rc = client.repository(ctx.repository)
        existing = rc.find_sticky_comment(pr.number, COMMENT_MARKER, author)
        digest = evidence_digest(rows)
        if existing is not None and digest_of(existing.body) == digest:
            return existing.id  # same evidence: leave it alone (no rewrite, no notification)
        wanted = inputs.comment == "always" or existing is not None
        if inputs.comment == "changes":  # only when the verdict is not "no change" (or to update)
            wanted = existing is not None or any(
                r.label not in (Label.NO_CHANGE, Label.NOT_RERUN) for r in rows
            )
        if inputs.comment == "failures":
            wanted = existing is not None or any(
                r.label in (Label.REGRESSION, Label.AUTHORING_ERROR)
                or any(t.failing for t in r.tiers)
                for r in rows
            )
        if not wanted:
            return existing.id if existing is not None else None
        result = rc.upsert_sticky_comment(pr.number, body, marker=COMMENT_MARKER, author=author)
    except GitHubApiError as exc:
        state.notice(f"the PR comment was not posted: {exc.message}", commands)
        return None
    return result.id


# ------------------------------------------------------------------------------------------------
# Evidence
# ------------------------------------------------------------------------------------------------


def _report_and_compare(
    repo: Repository,
    config: Config,
    touched: Touched,
    base_files: Mapping[str, ResultsFile | None],
    before: Mapping[Path, bytes | None],
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
        cost_usd=_cost(before, repo, touched),
        evaluation_url=evaluation_url,
        run_url=run_url,
        notes=(*_touched_notes(touched, state), *state.notes),
        **({"title": title} if title is not None else {}),
    )
    return report.written, rows, facts


def _touched_notes(touched: Touched, state: _Run) -> list[str]:
    """One note per touched or removed skill, with its first reason (for the comment and summary);
    a refused definition says `authoring error` with the refusal (never a failure of the skill)."""
    notes = []
    for s in touched.skills:
        why = s.reasons[0] if s.reasons else "selected"
        extra = f" (renamed from {s.renamed_from})" if s.renamed_from else ""
        notes.append(f"evaluated {s.key}{extra}: {why}")
        for tier, message in sorted(state.refused.get(s.key, {}).items()):
            notes.append(f"authoring error in {s.key}'s {tier.value}: {message}")
    notes.extend(f"removed {s.key}: its results are no longer evaluated" for s in touched.removed)
    return notes


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
    return compare(_evidence(repo, touched, base, state))


def _evidence(
    repo: Repository,
    touched: Touched,
    base: Mapping[str, ResultsFile | None],
    state: _Run,
) -> list[SkillEvidence]:
    """Base and head evidence of every touched (and removed) skill, with what the job knows."""
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
                base_known=s.key not in state.base_unknown,
                refused=state.refused.get(s.key, {}),
                reruns=state.reruns.get(s.key, {}),
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


def _cost(before: Mapping[Path, bytes | None], repo: Repository, touched: Touched) -> float | None:
    """Measured cost of the eval runs this job recorded (new or changed eval results)."""
    total: float | None = None
    for path in _result_files(repo, touched):
        old_ids: set[str] = set()
        prev = before.get(path)
        if prev is not None:
            old = _load_bytes((path.name, prev))
            if old is not None:
                old_ids = {
                    _run_id(r) for e in old.models.values() if e.evals for r in e.evals.results
                }
        now = load_results(path.parent).file
        if now is None:
            continue
        for entry in now.models.values():
            if entry.evals is None:
                continue
            for r in entry.evals.results:
                if _run_id(r) in old_ids or r.measured is None or r.measured.cost_usd is None:
                    continue
                total = (total or 0.0) + r.measured.cost_usd
    return round(total, 6) if total is not None else None


def _run_id(result: object) -> str:
    return json.dumps(repr(result))


# ------------------------------------------------------------------------------------------------
# Outputs and small helpers
# ------------------------------------------------------------------------------------------------


def _outputs(
    rows: Sequence[ComparisonRow],
    state: _Run,
    touched: Touched,
    facts: RunFacts,
    comment_id: int | None,
    commit_sha: str,
    repo: Repository,
    top: Path,
) -> ActionOutputs:
    labels = [r.label for r in rows]
    # The most severe row label (`Label` order: regression, authoring error, improvement, …).
    delta = next((str(lbl) for lbl in Label if lbl in labels), "")
    status: Literal["passed", "failed", "regressed", "errored", "skipped"] = "passed"
    if state.errored:
        status = "errored"
    elif Label.REGRESSION in labels:
        status = "regressed"
    elif state.check_failures:
        status = "failed"
    return ActionOutputs(
        status=status,
        evaluated_skills=touched.keys,
        triggers_pass_rate=_pooled(rows, "triggers"),
        evals_pass_rate=_pooled(rows, "evals"),
        delta=delta,
        cost_usd=facts.cost_usd or 0.0,
        sessions=state.sessions,
        comment_id=comment_id,
        commit_sha=commit_sha,
        report_path=_report_rel(repo, top),
    )


def _pooled(rows: Sequence[ComparisonRow], tier: str) -> float | None:
    passed = n = 0
    for r in rows:
        t = r.triggers if tier == "triggers" else r.evals
        if t is not None and t.head is not None:
            passed += t.head.passed
            n += t.head.n
    return round(passed / n, 6) if n else None


def _listing_notes(outcome: triggers.TriggersOutcome) -> list[str]:
    """One line per skill × model whose should-trigger misses happened while Claude Code listed the
    skill without its description (the listing check): those misses say nothing about the
    description's wording, and the line says what to change instead."""
    lines = []
    for u in outcome.units:
        missed = sum(1 for q in u.queries if q.should_trigger and q.passed is False)
        if missed and u.listing in checks.NOT_SHOWN:
            lines.append(
                f"⚠️ {u.plugin}/{u.skill} on {u.model}: {missed} trigger miss"
                f"{'' if missed == 1 else 'es'} with the {triggers.NOT_SHOWN_NOTE} "
                f"(listed {u.listing}) — {triggers.LISTING_FIX}"
            )
    return lines


def _short_ref(ref: str) -> str:
    """A full commit SHA as its 7-character form; a ref name as it is."""
    return ref[:7] if re.fullmatch(r"[0-9a-f]{40}", ref) else ref


def _confinement_notice(state: _Run, environ: Mapping[str, str]) -> None:
    """Agents ran with neither a sandbox nor an unprivileged user: say so once, loudly, in the
    log, the step summary and the comment."""
    if state.sessions and (conf := confinement(environ)).unconfined:
        state.notice("⚠️ " + conf.warning().removeprefix("warning: "))


def _agent_environ(environ: Mapping[str, str], inputs: ActionInputs) -> dict[str, str]:
    """The environment the engines get: the runner's, with the credential inputs as the variables
    Claude Code and the judge read (the harness still builds each child's env from an allowlist)."""
    env = {
        k: v
        for k, v in environ.items()
        if not k.startswith(("INPUT_", "ACTIONS_")) and k not in ("GITHUB_TOKEN", "GH_TOKEN")
    }  # defence in depth: the harness and `command` assertions allowlist their children's env
    if inputs.anthropic_api_key:
        env["ANTHROPIC_API_KEY"] = inputs.anthropic_api_key
    if inputs.claude_code_oauth_token:
        env["CLAUDE_CODE_OAUTH_TOKEN"] = inputs.claude_code_oauth_token
    if inputs.openai_api_key:
        env["OPENAI_API_KEY"] = inputs.openai_api_key
    return env


def _ensure_extra_harnesses(
    inputs: ActionInputs, environ: Mapping[str, str], state: _Run, commands: TextIO | None
) -> None:
    """Install the agent CLIs `extra_harnesses` names that are not there yet (`codex`: the pinned
    release into this environment). A failed install is a notice, not a failed job: the models
    it would run are skipped with the usual warning."""
    if "codex" not in inputs.extra_harnesses:
        return
    try:
        find_codex(environ)
        return
    except EnvironmentProblem:
        pass
    try:
        binary = install_codex(Path(sys.prefix), environ=environ)
    except EnvironmentProblem as exc:
        state.notice(
            f"extra_harnesses: Codex could not be installed: {exc}; openai/* models are skipped",
            commands,
        )
        return
    state.lines.append(f"extra_harnesses: installed Codex {CODEX_VERSION} ({binary})")


def _cost_line(state: _Run, budget: Budget) -> str:
    """The job summary's estimate-beside-measured line ("" when nothing was planned)."""
    if not state.estimate_sessions:
        return ""
    est = f"${state.estimate_usd:.2f}" if state.estimate_usd is not None else "not priced"
    return (
        f"\n<sub>Cost: estimated {est} for {state.estimate_sessions} planned session(s) "
        f"before the run (list prices, no cache discount); measured ${budget.spent_usd:.2f} for "
        f"{state.sessions} session(s) run.</sub>\n"
    )


def _revision_of(ctx: GitHubContext, state: _Run) -> Revision:
    """What the action compared: the PR's base and head (a push: before and after)."""
    pr = ctx.pull_request
    if pr is not None:
        base, head = pr.base_sha, pr.head_sha
    else:
        base, head = ctx.push_before or "", ctx.push_after or ctx.sha
    return Revision(
        base_sha=base or "",
        head_sha=head or "",
        base_reruns=state.base_reruns,
        workflow_runs=state.workflow_runs,
        earlier=state.earlier,
    )


def _dirty(top: Path, genv: Mapping[str, str]) -> bool:
    """Whether the working tree has changes not committed (untracked files included)."""
    proc = _git(top, genv, "status", "--porcelain", "--untracked-files=normal")
    return proc.returncode == 0 and bool(proc.stdout.strip())


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


def _has_credentials(environ: Mapping[str, str]) -> bool:
    return any(environ.get(name) for name in CREDENTIAL_VARS)


def _base_ref(ctx: GitHubContext) -> str | None:
    if ctx.pull_request is not None:
        return ctx.pull_request.base_sha
    return ctx.push_before


def _evaluation_url(ctx: GitHubContext, repo: Repository, top: Path) -> str | None:
    pr = ctx.pull_request
    if pr is None or ctx.is_fork:
        return None
    return f"{ctx.server_url}/{ctx.repository}/blob/{pr.head_ref}/{_report_rel(repo, top)}"


def _report_rel(repo: Repository, top: Path) -> str:
    return _rel(repo.root / "EVALUATION.md", top)


def _inside(path: Path, top: Path) -> str | None:
    """`path` relative to the repository top, symlinks resolved; None when it resolves outside."""
    try:
        rel = path.resolve().relative_to(top.resolve())
    except (ValueError, OSError):
        return None
    return rel.as_posix() if rel.parts and ".git" not in rel.parts else None


def _rel(path: Path, top: Path) -> str:
    try:
        return path.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _rel_prefix(root: Path, top: Path) -> str:
    rel = _rel(root, top)
    return "" if rel == "." else rel


def _git(top: Path, genv: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("git") is None:
        raise EnvironmentProblem("git is not installed", hint="install git and re-run")
    return subprocess.run(
        ["git", "-C", str(top), *args], capture_output=True, text=True, env=dict(genv), check=False
    )


def _git_toplevel(path: Path, genv: Mapping[str, str]) -> Path | None:
    proc = _git(path, genv, "rev-parse", "--show-toplevel")
    return Path(proc.stdout.strip()) if proc.returncode == 0 else None


def _default_base(top: Path, genv: Mapping[str, str]) -> str:
    for candidate in ("origin/HEAD", "origin/main", "main", "origin/master", "master"):
        if _git(top, genv, "rev-parse", "--verify", "--quiet", candidate).returncode == 0:
            proc = _git(top, genv, "merge-base", candidate, "HEAD")
            if proc.returncode == 0 and proc.stdout.strip():
                return proc.stdout.strip()
    raise UsageError(
        "pr --local: cannot find a base (no origin/HEAD, main or master)",
        hint="pass --base REF",
    )


def _local_changes(top: Path, base: str, genv: Mapping[str, str]) -> list[ChangedPath]:
    """Changes from `base` to the working tree (uncommitted included), plus untracked files."""
    if _git(top, genv, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}").returncode:
        raise UsageError(
            f"pr --local: --base {base}: no such commit", hint="pass a branch or a SHA"
        )
    proc = _git(top, genv, "diff", "-M", "--name-status", "-z", base)
    if proc.returncode != 0:
        raise EnvironmentProblem(f"git diff {base} failed: {proc.stderr.strip()}")
    parts = proc.stdout.split("\0")
    out: list[ChangedPath] = []
    i = 0
    while i < len(parts) and parts[i]:
        code = parts[i]
        if code[0] in "RC":
            out.append(ChangedPath.from_git(code, parts[i + 2], parts[i + 1]))
            i += 3
        else:
            out.append(ChangedPath.from_git(code, parts[i + 1], None))
            i += 2
    untracked = _git(top, genv, "ls-files", "--others", "--exclude-standard", "-z")
    for path in untracked.stdout.split("\0"):
        if path:
            out.append(ChangedPath.from_git("A", path, None))
    return out
