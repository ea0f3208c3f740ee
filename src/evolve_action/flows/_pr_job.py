"""The PR job's context, the values its stages exchange, and the small helpers every stage shares
(git, paths, the base ref, credentials present).

Owns: `PrOptions`, `ActionOutcome`, the job's `JobContext` (inputs or local flags over the config,
resolved once: models, runs, budget, power options, paths, environments, the client), the
evaluation's values (`Evaluation`, `Estimate`, `NotRun`), the comparison's `Revision`, the sticky
comment's marker, the annotation cap and the unconfined line.
Guarantees: pure data and read-only helpers: nothing here starts a session, writes or posts.
Never does: decide what runs, what is compared or what is published (the stage modules do)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evolve_action import evals, plan, triggers
from evolve_action.catalog import PR_DEFAULT_MODEL
from evolve_action.config import BaseMode, Config
from evolve_action.encoding import write_text
from evolve_action.errors import EnvironmentProblem, UsageError
from evolve_action.flows._power import PowerOptions
from evolve_action.github import (
    ActionInputs,
    ActionOutputs,
    ChangedPath,
    GitHubClient,
    GitHubContext,
    RetryPolicy,
    Touched,
    committable_path,
    git_env,
)
from evolve_action.harness import (
    CREDENTIAL_VARS,
    Budget,
    default_jobs,
)
from evolve_action.repo import Repository
from evolve_action.report import (
    ComparisonRow,
    Reruns,
    Revision,
)

__all__ = [
    "COMMENT_MARKER",
    "UNCONFINED",
    "ActionOutcome",
    "Estimate",
    "Evaluation",
    "JobContext",
    "NotRun",
    "PrOptions",
    "agent_environ",
    "base_ref_of",
    "default_base",
    "git_toplevel",
    "has_credentials",
    "ignored_dir",
    "inside_top",
    "is_dirty",
    "job_client",
    "local_changes",
    "rel_to_top",
    "report_rel",
    "revision_at",
    "revision_of",
    "run_git",
    "short_ref",
]

COMMENT_MARKER = "<!-- evolve-action:pr-comment -->"
"""The hidden marker the sticky comment is found by (together with its author)."""

MAX_ANNOTATIONS = 10
"""Annotations per level and step (GitHub shows at most 10 per level of a step)."""

RESULT_NAMES = ("results.json", "results.jsonc", "results.yaml", "results.yml")

UNCONFINED = (
    "agents ran unconfined (no sandbox, no agent user): they could read what this job can; "
    "docs/action.md#root-or-not says how to confine them"
)
"""The one short line about an unconfined run: the log once, and the comment and summary (a table
cell's 160 bytes hold it whole)."""


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


@dataclass(frozen=True, slots=True, kw_only=True)
class JobContext:
    """Everything a PR job's stages read, resolved once: the action's inputs (or `pr --local`'s
    options) over the repository config, the paths, the environments, the client and the job's
    one budget. No stage derives a setting of its own."""

    repo: Repository
    config: Config
    top: Path
    """The git top of the checkout (or the workspace)."""
    prefix: str
    """The repository root relative to `top` ("" at the top)."""
    genv: Mapping[str, str]
    """The environment git runs with."""
    agent_env: Mapping[str, str]
    """The environment the engines get (`agent_environ`)."""
    client: GitHubClient | None
    named_models: tuple[str, ...]
    """The model tokens the inputs or flags name (empty: none named)."""
    models: tuple[str, ...]
    """The models to evaluate: the named ones, else the config's (empty: the engines read
    config `models`), else `PR_DEFAULT_MODEL` alone."""
    default_model_note: str
    """The note saying one default model was evaluated ("" when models were named)."""
    runs: int
    jobs: int
    timeout: int | None
    max_turns: int | None
    judge_model: str | None
    max_cost_usd: float | None
    power: PowerOptions
    """Power on demand: the inputs over config `pr.*`."""
    budget: Budget
    """The job's one spending cap (shared by every session it starts)."""

    def evals_options(
        self,
        plugins: Sequence[str],
        skills: Sequence[str],
        *,
        models: tuple[str, ...] | None = None,
    ) -> evals.EvalsOptions:
        """`run evals --new --modified` over `plugins`' `skills` with the job's settings (jobs,
        timeout, turns, judge, the one budget); `models` defaults to the job's models."""
        return evals.EvalsOptions(
            plugins=tuple(plugins),
            skills=tuple(skills),
            models=self.models if models is None else models,
            jobs=self.jobs,
            timeout=self.timeout,
            max_turns=self.max_turns,
            judge_model=self.judge_model,
            new=True,
            modified=True,
            budget=self.budget,
        )

    @classmethod
    def build(
        cls,
        *,
        repo: Repository,
        config: Config,
        top: Path,
        genv: Mapping[str, str],
        agent_env: Mapping[str, str],
        client: GitHubClient | None,
        models: tuple[str, ...],
        runs: int | None,
        jobs: int | None,
        timeout: int | None = None,
        max_turns: int | None = None,
        judge_model: str | None = None,
        max_cost_usd: float | None,
        base_mode: BaseMode | None,
        max_runs: int | None,
    ) -> JobContext:
        defaulted = not models and config.models is None
        return cls(
            repo=repo,
            config=config,
            top=top,
            prefix=_rel_prefix(repo.root, top),
            genv=genv,
            agent_env=agent_env,
            client=client,
            named_models=models,
            models=(PR_DEFAULT_MODEL,) if defaulted else models,
            default_model_note=(
                f"evaluated one model, {PR_DEFAULT_MODEL} (the default); to evaluate more, list "
                "them in `models:` of .evolve.yaml, the `models` input, or `--model`"
                if defaulted
                else ""
            ),
            runs=runs or triggers.DEFAULT_RUNS,
            jobs=jobs or default_jobs(),
            timeout=timeout,
            max_turns=max_turns,
            judge_model=judge_model,
            max_cost_usd=max_cost_usd,
            power=PowerOptions(
                base=base_mode or config.pr.base,
                max_runs=max_runs or config.pr.max_runs,
                jobs=jobs or default_jobs(),
                timeout=timeout,
            ),
            budget=Budget(limit_usd=max_cost_usd),
        )

    @classmethod
    def of_action(
        cls,
        inputs: ActionInputs,
        ctx: GitHubContext,
        environ: Mapping[str, str],
        *,
        repo: Repository,
        config: Config,
        workspace: Path,
        retry: RetryPolicy | None,
    ) -> JobContext:
        """The action's job: its inputs over `config`."""
        genv = git_env(environ, safe_directories=(workspace, repo.root))
        return cls.build(
            repo=repo,
            config=config,
            top=git_toplevel(repo.root, genv) or workspace,
            genv=genv,
            agent_env=agent_environ(environ, inputs),
            client=job_client(inputs, ctx, retry),
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

    @classmethod
    def of_local(
        cls,
        options: PrOptions,
        *,
        repo: Repository,
        config: Config,
        top: Path,
        genv: Mapping[str, str],
    ) -> JobContext:
        """`pr --local`: its options over `config`; the engines get the caller's environment."""
        return cls.build(
            repo=repo,
            config=config,
            top=top,
            genv=genv,
            agent_env=options.environ,
            client=None,
            models=options.models,
            runs=options.runs,
            jobs=options.jobs,
            max_cost_usd=options.max_cost_usd,
            base_mode=options.base_mode,
            max_runs=options.max_runs,
        )


def agent_environ(environ: Mapping[str, str], inputs: ActionInputs) -> dict[str, str]:
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    """The dry-run estimate of the planned sessions (`flows.estimate_cost`), and the most power
    on demand may add to it."""

    sessions: int = 0
    usd: float | None = None
    """None: nothing planned was priced."""
    power_sessions: int = 0
    """The most sessions power on demand may add (0: none)."""
    power_usd: float = 0.0
    """Their estimated dollars at list prices."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Evaluation:
    """What stage 2 did: the sessions it ran (those that finished, when it was cancelled), the
    runs power on demand added, the estimate, and the notes and log lines, in the order found."""

    sessions: int = 0
    skipped: int = 0
    """Cases (times runs) whose stored result is current: not run again."""
    errored: bool = False
    cancelled: bool = False
    """The job was cancelled (SIGINT/SIGTERM) during the stage: the rest is what finished."""
    reruns: Mapping[str, Mapping[str, Reruns]] = field(default_factory=dict)
    """Skill key → model key → the runs power on demand added (never committed)."""
    eval_reruns: Mapping[str, Mapping[str, Reruns]] = field(default_factory=dict)
    """Skill key → model key → the eval runs power on demand added (never committed)."""
    base_reruns: int = 0
    """Sessions that re-ran the base's version (part of `sessions`)."""
    workflow_runs: int = 0
    """Workflow runs whose runs the comparisons used (the PR's ledger, `flows._ledger`)."""
    earlier: tuple[str, ...] = ()
    """Comparisons an earlier workflow run labelled otherwise."""
    estimate: Estimate = Estimate()
    settled: frozenset[tuple[str, str, plan.Tier]] = frozenset()
    """(skill key, model, tier) of the comparisons the PR's ledger holds closed for this content:
    no sweep ran for them, they rest on the kept head sweep (never `not evaluated`)."""
    notes: tuple[str, ...] = ()
    """Notes for the comment and the summary."""
    lines: tuple[str, ...] = ()
    """Lines for the job log (each note among them as `notice: …`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NotRun:
    """The touched skills' stale or missing cases this job left unrun, and why."""

    unevaluated: Mapping[str, Mapping[plan.Tier, str]] = field(default_factory=dict)
    """Skill key → tier → why its stale or missing cases were not run."""
    count: int = 0
    reason: str = ""
    """Why (for the comment's run line; "" when nothing was left)."""


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


def job_client(
    inputs: ActionInputs, ctx: GitHubContext, retry: RetryPolicy | None
) -> GitHubClient | None:
    if not inputs.github_token:
        return None
    return GitHubClient(
        inputs.github_token, base_url=ctx.api_url, policy=retry, graphql_url=ctx.graphql_url
    )


def ignored_dir(path: Path) -> Path:
    """`path`, made, with a `.gitignore` of `*` so git never lists what we write there."""
    ignore = path / ".gitignore"
    if not ignore.is_file():  # the write makes `path` (never through a link inside the checkout)
        write_text(ignore, "# evolve-action's local output: never committed\n*\n")
    return path


def short_ref(ref: str) -> str:
    """A full commit SHA as its 7-character form; a ref name as it is."""
    return ref[:7] if re.fullmatch(r"[0-9a-f]{40}", ref) else ref


def revision_of(ctx: GitHubContext, evaluation: Evaluation | None = None) -> Revision:
    """What the action compared: the PR's base and head (a push: before and after), with the
    ledger's facts of `evaluation` (None: nothing evaluated yet)."""
    pr = ctx.pull_request
    if pr is not None:
        base, head = pr.base_sha, pr.head_sha
    else:
        base, head = ctx.push_before or "", ctx.push_after or ctx.sha
    return revision_at(base or "", head or "", evaluation or Evaluation())


def revision_at(
    base_sha: str, head_sha: str, evaluation: Evaluation, *, dirty: bool = False
) -> Revision:
    """The comparison's `Revision`: the two commits (`dirty`: the head is a working tree with
    changes) and what the evaluation's ledger says (base re-runs, workflow runs, earlier labels)."""
    return Revision(
        base_sha=base_sha,
        head_sha=head_sha,
        dirty=dirty,
        base_reruns=evaluation.base_reruns,
        workflow_runs=evaluation.workflow_runs,
        earlier=evaluation.earlier,
    )


def is_dirty(top: Path, genv: Mapping[str, str]) -> bool:
    """Whether the working tree has changes not committed (untracked files included)."""
    proc = run_git(top, genv, "status", "--porcelain", "--untracked-files=normal")
    return proc.returncode == 0 and bool(proc.stdout.strip())


def has_credentials(environ: Mapping[str, str]) -> bool:
    return any(environ.get(name) for name in CREDENTIAL_VARS)


def base_ref_of(ctx: GitHubContext) -> str | None:
    if ctx.pull_request is not None:
        return ctx.pull_request.base_sha
    return ctx.push_before


def report_rel(repo: Repository, top: Path) -> str:
    return rel_to_top(repo.root / "EVALUATION.md", top)


def inside_top(path: Path, top: Path) -> str | None:
    """`path` relative to the repository top as written (`github.committable_path`); None when it
    is outside, is or goes through a link, or lies under `.git/` or `.github/`."""
    return committable_path(path, top)


def rel_to_top(path: Path, top: Path) -> str:
    try:
        return path.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _rel_prefix(root: Path, top: Path) -> str:
    rel = rel_to_top(root, top)
    return "" if rel == "." else rel


def run_git(top: Path, genv: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("git") is None:
        raise EnvironmentProblem("git is not installed", hint="install git and re-run")
    return subprocess.run(
        ["git", "-C", str(top), *args], capture_output=True, text=True, env=dict(genv), check=False
    )


def git_toplevel(path: Path, genv: Mapping[str, str]) -> Path | None:
    proc = run_git(path, genv, "rev-parse", "--show-toplevel")
    return Path(proc.stdout.strip()) if proc.returncode == 0 else None


def default_base(top: Path, genv: Mapping[str, str]) -> str:
    for candidate in ("origin/HEAD", "origin/main", "main", "origin/master", "master"):
        if run_git(top, genv, "rev-parse", "--verify", "--quiet", candidate).returncode == 0:
            proc = run_git(top, genv, "merge-base", candidate, "HEAD")
            if proc.returncode == 0 and proc.stdout.strip():
                return proc.stdout.strip()
    raise UsageError(
        "pr --local: cannot find a base (no origin/HEAD, main or master)",
        hint="pass --base REF",
    )


def local_changes(top: Path, base: str, genv: Mapping[str, str]) -> list[ChangedPath]:
    """Changes from `base` to the working tree (uncommitted included), plus untracked files."""
    if run_git(top, genv, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}").returncode:
        raise UsageError(
            f"pr --local: --base {base}: no such commit", hint="pass a branch or a SHA"
        )
    proc = run_git(top, genv, "diff", "-M", "--name-status", "-z", base)
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
    untracked = run_git(top, genv, "ls-files", "--others", "--exclude-standard", "-z")
    for path in untracked.stdout.split("\0"):
        if path:
            out.append(ChangedPath.from_git("A", path, None))
    return out
