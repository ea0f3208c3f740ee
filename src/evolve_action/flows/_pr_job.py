"""The PR job's context: its options, knobs, outcome and running state, and the small helpers
every stage shares (git, paths, the base ref, credentials present).

Owns: `PrOptions`, `ActionOutcome`, the job's `_Knobs` (inputs or local flags, resolved once) and
`_Run` (what the stages record as they go), the sticky comment's marker and the unconfined line.
Guarantees: pure data and read-only helpers: nothing here starts a session, writes or posts.
Never does: decide what runs, what is compared or what is published (the stage modules do).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from evolve_action import plan
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
    annotate,
    committable_path,
)
from evolve_action.harness import (
    CREDENTIAL_VARS,
    default_jobs,
)
from evolve_action.repo import Repository
from evolve_action.report import (
    CheckLine,
    ComparisonRow,
    Reruns,
    Revision,
)

__all__ = [
    "COMMENT_MARKER",
    "UNCONFINED",
    "ActionOutcome",
    "PrOptions",
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

    def default_model(self, config: Config) -> _Knobs:
        """One model when nothing names any (not every catalog model)."""
        if self.models or config.models is not None:
            return self
        return dataclasses.replace(self, models=(PR_DEFAULT_MODEL,))

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
    unevaluated: dict[str, dict[plan.Tier, str]] = field(default_factory=dict)
    """Touched skills whose stale or missing cases of a tier this job did not run, with why."""
    not_run: int = 0
    """Stale or missing cases of the touched skills left unrun (`unevaluated`'s total)."""
    not_run_reason: str = ""
    """Why they were left unrun (for the comment's run line)."""
    findings: tuple[CheckLine, ...] = ()
    """Tier 0 findings on the touched skills (errors first), for the comment and the summary."""
    undecided_hint: str = ""
    """What would decide an undecided comparison (`_undecided_hint`)."""
    reruns: dict[str, dict[str, Reruns]] = field(default_factory=dict)
    """Skill key → model key → the runs power on demand added (never committed)."""
    eval_reruns: dict[str, dict[str, Reruns]] = field(default_factory=dict)
    """Skill key → model key → the eval runs power on demand added (never committed)."""
    base_reruns: int = 0
    """Sessions that re-ran the base's version (part of `sessions`)."""
    workflow_runs: int = 0
    """Workflow runs whose runs the comparisons used (the PR's ledger, `flows._ledger`)."""
    earlier: tuple[str, ...] = ()
    """Comparisons an earlier workflow run labelled otherwise."""
    estimate_usd: float | None = None
    """The dry-run estimate of the planned sessions (`flows.estimate_cost`)."""
    estimate_sessions: int = 0
    power_sessions: int = 0
    """The most sessions power on demand may add to the estimate (0: none)."""
    power_usd: float = 0.0
    """Their estimated dollars at list prices."""

    held: list[str] = field(default_factory=list)
    """Notices past the annotation cap, for `flush_notices`."""
    annotated: int = 0

    def notice(self, text: str, commands: TextIO | None = None) -> None:
        """A note for the comment and the summary, shown as a `::notice` (or a log line locally).

        GitHub shows at most `MAX_ANNOTATIONS` notices of a step: the first ones are annotated,
        the rest held for `flush_notices` (one last annotation: the held one, or "and N more")."""
        self.notes.append(text)
        if commands is None:
            self.lines.append(f"notice: {text}")
        elif self.annotated < MAX_ANNOTATIONS - 1:
            self.annotated += 1
            annotate(commands, "notice", text)
        else:
            self.held.append(text)
            self.lines.append(f"notice: {text}")

    def flush_notices(self, commands: TextIO) -> None:
        """The last notice annotation of the step: the one held, or how many more there are."""
        if len(self.held) == 1:
            annotate(commands, "notice", self.held[0])
        elif self.held:
            annotate(commands, "notice", f"and {len(self.held)} more notices: see the step summary")
        self.held.clear()


def _client(
    inputs: ActionInputs, ctx: GitHubContext, retry: RetryPolicy | None
) -> GitHubClient | None:
    if not inputs.github_token:
        return None
    return GitHubClient(
        inputs.github_token, base_url=ctx.api_url, policy=retry, graphql_url=ctx.graphql_url
    )


def _ignored_dir(path: Path) -> Path:
    """`path`, made, with a `.gitignore` of `*` so git never lists what we write there."""
    ignore = path / ".gitignore"
    if not ignore.is_file():  # the write makes `path` (never through a link inside the checkout)
        write_text(ignore, "# evolve-action's local output: never committed\n*\n")
    return path


def _short_ref(ref: str) -> str:
    """A full commit SHA as its 7-character form; a ref name as it is."""
    return ref[:7] if re.fullmatch(r"[0-9a-f]{40}", ref) else ref


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


def _has_credentials(environ: Mapping[str, str]) -> bool:
    return any(environ.get(name) for name in CREDENTIAL_VARS)


def _base_ref(ctx: GitHubContext) -> str | None:
    if ctx.pull_request is not None:
        return ctx.pull_request.base_sha
    return ctx.push_before


def _report_rel(repo: Repository, top: Path) -> str:
    return _rel(repo.root / "EVALUATION.md", top)


def _inside(path: Path, top: Path) -> str | None:
    """`path` relative to the repository top as written (`github.committable_path`); None when it
    is outside, is or goes through a link, or lies under `.git/` or `.github/`."""
    return committable_path(path, top)


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
