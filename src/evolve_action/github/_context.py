"""The GitHub context of one action step: the runner's `GITHUB_*` variables and the event payload.

Owns: `load_context` (the environment mapping it is given plus the `GITHUB_EVENT_PATH` file →
a frozen `GitHubContext`), the supported events (`pull_request`, `pull_request_target`, `push`,
`workflow_dispatch`; anything else is `Event.UNSUPPORTED`, which the flow turns into one message and
exit 0 via `unsupported_message`; a pull request event for a PR that is not open, e.g. `closed`, is
turned into one message the same way by `inactive_message`), fork detection and the `pull_request_target` fork refusal
(`fork_target_refusal`), and `git_env` (the child environment that makes git accept the mounted
workspace: `safe.directory`).

Guarantees: a payload that is missing, not JSON, too large, or has a wrong-typed, missing, oversized
or malformed field raises `EnvironmentProblem` naming the event file and the field. SHAs are
hexadecimal, refs and repository names bounded and free of control characters, URLs http(s).
Never reads `os.environ` and never prints.
"""

from __future__ import annotations

import enum
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from evolve_action.encoding import decode_yaml
from evolve_action.errors import EnvironmentProblem, EvolveError
from evolve_action.harness import safe_env

__all__ = [
    "FAILING_EVENTS",
    "MAX_EVENT_BYTES",
    "SUPPORTED_EVENTS",
    "Event",
    "GitHubContext",
    "PullRequest",
    "checkout_kind",
    "comment_refusal",
    "declared_permissions",
    "fork_target_refusal",
    "git_env",
    "inactive_message",
    "load_context",
    "read_only_scopes",
    "restore_workspace_owner",
    "unsupported_fails",
    "unsupported_message",
]

MAX_EVENT_BYTES = 64 * 1024 * 1024
"""Event files larger than this are refused (GitHub's payloads are far smaller)."""

_MAX_REF = 1024
_MAX_WORD = 64
_MAX_REPO = 200
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_REPO = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")
_ZERO_SHA = re.compile(r"0+")
_RUN_ID = re.compile(r"[0-9]{1,20}")


class Event(enum.StrEnum):
    """The events the action handles, and one value for everything else."""

    PULL_REQUEST = "pull_request"
    PULL_REQUEST_TARGET = "pull_request_target"
    PUSH = "push"
    WORKFLOW_DISPATCH = "workflow_dispatch"
    UNSUPPORTED = "unsupported"


SUPPORTED_EVENTS: tuple[str, ...] = tuple(e.value for e in Event if e is not Event.UNSUPPORTED)


@dataclass(frozen=True, slots=True, kw_only=True)
class PullRequest:
    """The pull request of a `pull_request`/`pull_request_target` event."""

    number: int
    head_ref: str
    """The head branch name (in `head_repo`)."""
    head_sha: str
    """The PR head commit: what is evaluated and what a results commit's parent must be."""
    head_repo: str
    """`owner/name` of the head repository; empty when the fork was deleted."""
    base_ref: str
    base_sha: str
    """The base commit the event was created against (the base branch may have moved since)."""
    base_repo: str
    changed_files: int | None
    """The PR's file count (to detect the files API's 3000-file cap); None when absent."""
    merge_commit_sha: str | None
    """The test-merge commit GitHub computed, when the payload has it."""
    state: str = "open"
    """`open` or `closed` (merged PRs are closed); `open` when the payload omits it."""

    @property
    def is_fork(self) -> bool:
        """True when the head lives in another repository (or a deleted one)."""
        return self.head_repo.lower() != self.base_repo.lower()


@dataclass(frozen=True, slots=True, kw_only=True)
class GitHubContext:
    """Everything the flows need to know about where and why this step runs."""

    event_name: str
    """The raw `GITHUB_EVENT_NAME` (also for unsupported events)."""
    event: Event
    repository: str
    """`owner/name` of the repository the workflow runs in."""
    api_url: str
    """REST API base (`GITHUB_API_URL`; GHES: `https://host/api/v3`), without a trailing `/`."""
    server_url: str
    """Web base (`GITHUB_SERVER_URL`), without a trailing `/`."""
    graphql_url: str
    workspace: Path
    """The checkout (`GITHUB_WORKSPACE`)."""
    sha: str
    """`GITHUB_SHA`: for `pull_request` the test-merge commit, for `pull_request_target` the base."""
    ref: str
    """`GITHUB_REF`, e.g. `refs/pull/7/merge` or `refs/heads/main`."""
    actor: str
    run_id: str
    run_attempt: str
    event_path: Path | None
    action: str = ""
    """The event's activity type (`opened`, `synchronize`, `closed`, …); empty when absent."""
    pull_request: PullRequest | None = None
    """Set for the two pull request events."""
    push_before: str | None = None
    """`push`: the previous tip; None for a new branch (all-zero SHA) or a missing value."""
    push_after: str | None = None

    @property
    def owner(self) -> str:
        """The repository owner."""
        return self.repository.partition("/")[0]

    @property
    def name(self) -> str:
        """The repository name."""
        return self.repository.partition("/")[2]

    @property
    def run_url(self) -> str:
        """Link to this workflow run (empty when the run id is unknown)."""
        if not self.run_id:
            return ""
        url = f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
        if self.run_attempt and self.run_attempt != "1":
            url += f"/attempts/{self.run_attempt}"
        return url

    @property
    def is_pull_request(self) -> bool:
        """True for `pull_request` and `pull_request_target`."""
        return self.pull_request is not None

    @property
    def is_fork(self) -> bool:
        """True for a pull request whose head is in another repository."""
        return self.pull_request is not None and self.pull_request.is_fork


def checkout_kind(ctx: GitHubContext, checked_out: str) -> Literal["head", "merge", "other"]:
    """What the workspace holds, given its `HEAD` SHA: the PR head, GitHub's test merge, or else.

    `pull_request` checks out `refs/pull/N/merge` by default (`GITHUB_SHA`); workflows may check
    out the head SHA instead. Outside pull requests the answer is `other`.
    """
    pr = ctx.pull_request
    if pr is None:
        return "other"
    if checked_out == pr.head_sha:
        return "head"
    merge = {pr.merge_commit_sha, ctx.sha if ctx.event is Event.PULL_REQUEST else None} - {None}
    return "merge" if checked_out in merge else "other"


def unsupported_message(ctx: GitHubContext) -> str:
    """The one line printed (and put in the step summary) for an event the action ignores."""
    shown = _printable(ctx.event_name)[:100] or "(none)"
    line = (
        f"evolve-action does nothing on the {shown} event (it handles "
        + ", ".join(SUPPORTED_EVENTS)
        + "); nothing was evaluated."
    )
    if unsupported_fails(ctx):
        line += (
            " A merge queue would read a skipped run as a pass, so this step fails: run "
            "`mode: gate` on merge_group (the committed evidence against the thresholds), or "
            "leave merge_group out of this workflow."
        )
    return line


FAILING_EVENTS: tuple[str, ...] = ("merge_group",)
"""Unsupported events whose run must fail, not skip: a merge queue's required check reads a
skipped (exit 0) run as a pass."""


def unsupported_fails(ctx: GitHubContext) -> bool:
    """True when an unsupported event must fail the step (`FAILING_EVENTS`)."""
    return ctx.event is Event.UNSUPPORTED and ctx.event_name in FAILING_EVENTS


def inactive_message(ctx: GitHubContext) -> str | None:
    """The one line for a pull request event on a PR that is not open (`closed`, merged), or None.

    Such a run must start no agent and commit nothing: the branch may be merged or deleted.
    """
    pr = ctx.pull_request
    if pr is None or (pr.state == "open" and ctx.action != "closed"):
        return None
    what = f"{_printable(ctx.action)[:40]} " if ctx.action else ""
    return (
        f"evolve-action does nothing on a {what}{ctx.event.value} event: pull request "
        f"#{pr.number} is {_printable(pr.state)[:20] or 'not open'}; nothing was evaluated."
    )


def fork_target_refusal(ctx: GitHubContext, *, allow_fork_target: bool) -> str | None:
    """Why this run must stop (a fork's head under `pull_request_target`), or None when it may go on.

    `pull_request_target` runs with secrets and a write token; evaluating a fork's head there hands
    both to the fork's author unless a maintainer reviewed that exact head.
    """
    if ctx.event is not Event.PULL_REQUEST_TARGET or not ctx.is_fork or allow_fork_target:
        return None
    pr = ctx.pull_request
    assert pr is not None  # is_fork implies a pull request
    origin = pr.head_repo or "a deleted fork"
    return (
        f"refusing to evaluate pull request #{pr.number} from {origin} under pull_request_target: "
        "the run has secrets and a write token, and the fork's content would reach the agent. "
        "Use pull_request for forks (Tier 0 needs no secrets), or gate the run on a maintainer's "
        "label pinned to the reviewed head SHA and set allow_fork_target: true (docs/action.md)."
    )


def comment_refusal(ctx: GitHubContext) -> str | None:
    """Why this run's token cannot comment on its pull request, or None when it can.

    GitHub gives a `pull_request` run from a fork a read-only `GITHUB_TOKEN` whatever the
    workflow's `permissions:` ask; a `pull_request_target` run (the labelled fork-safe job) gets the
    base repository's token, which may comment. A same-repository PR's token comments when its job
    grants `pull-requests: write`. (docs.github.com/en/actions/reference/github_token-reference,
    "Permissions for the GITHUB_TOKEN")
    """
    pr = ctx.pull_request
    if pr is None or not pr.is_fork or ctx.event is Event.PULL_REQUEST_TARGET:
        return None
    return (
        "no PR comment: a pull_request run from a fork gets a read-only token from GitHub, so "
        "the results are in this summary only; the labelled pull_request_target job of "
        "examples/workflows/fork-safe.yml comments once a maintainer applies the label"
    )


_SCOPES = ("contents", "pull-requests")
_DEPENDABOT = "dependabot[bot]"


def declared_permissions(environ: Mapping[str, str], workspace: Path) -> dict[str, str] | None:
    """The `GITHUB_TOKEN` permissions this job runs with, scope → `read`/`write`/`none`, when they
    can be known without a request; None when they cannot (the repository's default applies).

    From `GITHUB_TOKEN_PERMISSIONS` (JSON) when the runner sets it, else from the workflow file
    (`GITHUB_WORKFLOW_REF`, in this repository's checkout): the job's (`GITHUB_JOB`) `permissions:`,
    else the workflow's. GitHub: "If you specify the access for any of these permissions, all of
    those that are not specified are set to none" (docs.github.com/en/actions/writing-workflows/
    choosing-what-your-workflow-does/controlling-permissions-for-github_token). GitHub enforces
    the real ones: this only spares requests that would be refused.
    """
    raw = environ.get("GITHUB_TOKEN_PERMISSIONS", "").strip()
    if raw:
        try:
            given = json.loads(raw)
        except ValueError:
            given = None
        if isinstance(given, dict):
            return {str(k).replace("_", "-"): str(v) for k, v in given.items()}
    ref = environ.get("GITHUB_WORKFLOW_REF", "").split("@", 1)[0]
    repository = environ.get("GITHUB_REPOSITORY", "")
    job = environ.get("GITHUB_JOB", "")
    rel = (
        ref.removeprefix(repository + "/")
        if repository and ref.startswith(repository + "/")
        else ""
    )
    if not rel.startswith(".github/workflows/") or ".." in rel.split("/") or not job:
        return None
    path = workspace / rel
    try:  # a workflow we cannot read tells us nothing
        doc = decode_yaml(path.read_text(encoding="utf-8"), path).value
    except (OSError, UnicodeDecodeError, ValueError, EvolveError):
        return None
    if not isinstance(doc, dict):
        return None
    jobs = doc.get("jobs")
    spec = jobs.get(job) if isinstance(jobs, dict) else None
    perms = spec.get("permissions") if isinstance(spec, dict) else None
    if perms is None:
        perms = doc.get("permissions")
    if perms is None:
        return None
    if perms in ("read-all", "write-all"):
        level = perms.removesuffix("-all")
        return {scope: level for scope in _SCOPES}
    if not isinstance(perms, dict):
        return None
    return {scope: str(perms.get(scope, "none")) for scope in _SCOPES}


def read_only_scopes(
    ctx: GitHubContext, declared: Mapping[str, str] | None, identity: str | None
) -> tuple[frozenset[str], str]:
    """Which of `contents`/`pull-requests` this job's token may not write on a same-repository
    PR, known before any write, and why ("" when none is known to be read-only).

    Only for `GITHUB_TOKEN` (its identity is `github-actions[bot]`; another App's or a person's
    token has its own permissions): the `declared` ones, else a Dependabot PR's default (GitHub:
    "Workflow runs triggered by Dependabot pull requests run as if they are from a forked
    repository, and therefore use a read-only GITHUB_TOKEN", raised only by `permissions:`).
    """
    pr = ctx.pull_request
    if pr is None or pr.is_fork or identity != "github-actions[bot]":
        return frozenset(), ""
    if declared is not None:
        denied = frozenset(s for s in _SCOPES if declared.get(s, "none") != "write")
        return denied, "the job's `permissions:`" if denied else ""
    if ctx.actor.lower() == _DEPENDABOT:
        return frozenset(_SCOPES), "a Dependabot PR's read-only GITHUB_TOKEN"
    return frozenset(), ""


def git_env(
    environ: Mapping[str, str], *, safe_directories: tuple[Path, ...] = ()
) -> dict[str, str]:
    """A child environment for `git` that trusts the given directories (`safe.directory`).

    A Docker action runs as root while the runner uid owns `/github/workspace`, so git refuses it as
    "dubious ownership". `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` add the entries for this process only,
    after any the caller already set, without touching a config file. Never passes tokens or inputs.
    """
    extra: dict[str, str] = {"GIT_TERMINAL_PROMPT": "0"}
    try:
        count = int(environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    for index in range(count):
        for part in ("KEY", "VALUE"):
            name = f"GIT_CONFIG_{part}_{index}"
            if name in environ:
                extra[name] = environ[name]
    for directory in safe_directories:
        extra[f"GIT_CONFIG_KEY_{count}"] = "safe.directory"
        extra[f"GIT_CONFIG_VALUE_{count}"] = directory.as_posix()
        count += 1
    if count:
        extra["GIT_CONFIG_COUNT"] = str(count)
    allow = ("GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "RUNNER_TEMP")
    return safe_env(environ, allow=allow, extra=extra)


def restore_workspace_owner(workspace: Path, paths: Iterable[Path]) -> list[Path]:
    """Give files the action wrote inside the workspace back to the workspace's owner.

    A Docker action runs as root, so what it writes into the runner-owned `/github/workspace`
    would stay root-owned and break later steps and self-hosted runs. Each path (and its
    directories up to the workspace) gets the workspace's uid and gid. Only acts as root; paths
    outside the workspace and missing paths are skipped. Returns the paths changed.
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    try:
        owner = workspace.stat()
    except OSError:
        return []
    base = Path(os.path.abspath(workspace))  # noqa: PTH100 - lexical, keeps symlinks
    changed: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        target = Path(os.path.abspath(path))  # noqa: PTH100
        if base not in target.parents:
            continue
        chain = [target, *(p for p in target.parents if base in p.parents)]
        for item in chain:
            if item in seen:
                continue
            seen.add(item)
            try:
                info = item.lstat()
                if (info.st_uid, info.st_gid) != (owner.st_uid, owner.st_gid):
                    os.lchown(item, owner.st_uid, owner.st_gid)
                    changed.append(item)
            except OSError:
                continue
    return changed


# --- loading -----------------------------------------------------------------------------------


def load_context(environ: Mapping[str, str], *, cwd: Path) -> GitHubContext:
    """Build the context from the runner's environment and the event file it names.

    Args:
        environ: the step's environment.
        cwd: the working directory, used when `GITHUB_WORKSPACE` is unset (local runs).

    Raises:
        EnvironmentProblem: a variable or the event payload is unusable; the message names the
            variable or the event file and the field.
    """
    event_name = environ.get("GITHUB_EVENT_NAME", "").strip()
    try:
        event = Event(event_name) if event_name != Event.UNSUPPORTED.value else Event.UNSUPPORTED
    except ValueError:
        event = Event.UNSUPPORTED
    server_url = _url(environ, "GITHUB_SERVER_URL", "https://github.com")
    api_url = _url(environ, "GITHUB_API_URL", _default_api(server_url))
    # GitHub.com: api.github.com/graphql; GHES: https://HOST/api/graphql (not /api/v3/graphql).
    graphql_url = _url(environ, "GITHUB_GRAPHQL_URL", api_url.removesuffix("/v3") + "/graphql")
    if _origin(graphql_url) != _origin(api_url):  # the client sends its token to one host only
        raise EnvironmentProblem(
            f"GITHUB_GRAPHQL_URL {_quote(graphql_url)} is not on the host of GITHUB_API_URL "
            f"{_quote(api_url)}",
            hint="the runner sets both to the same server; unset GITHUB_GRAPHQL_URL or fix it",
        )
    workspace_text = environ.get("GITHUB_WORKSPACE", "").strip()
    workspace = Path(workspace_text) if workspace_text else cwd
    run_id = environ.get("GITHUB_RUN_ID", "").strip()
    if run_id and not _RUN_ID.fullmatch(run_id):
        raise EnvironmentProblem(f"GITHUB_RUN_ID {_quote(run_id)} is not a run number")
    run_attempt = environ.get("GITHUB_RUN_ATTEMPT", "").strip()
    if run_attempt and not _RUN_ID.fullmatch(run_attempt):
        run_attempt = ""
    repository = environ.get("GITHUB_REPOSITORY", "").strip()
    event_path_text = environ.get("GITHUB_EVENT_PATH", "").strip()
    event_path = Path(event_path_text) if event_path_text else None
    base = GitHubContext(
        event_name=event_name,
        event=event,
        repository=repository,
        api_url=api_url,
        server_url=server_url,
        graphql_url=graphql_url,
        workspace=workspace,
        sha=environ.get("GITHUB_SHA", "").strip().lower(),
        ref=_printable(environ.get("GITHUB_REF", ""))[:_MAX_REF],
        actor=_printable(environ.get("GITHUB_ACTOR", ""))[:_MAX_REPO],
        run_id=run_id,
        run_attempt=run_attempt,
        event_path=event_path,
    )
    if event is Event.UNSUPPORTED:
        return base
    if not _REPO.fullmatch(repository):
        raise EnvironmentProblem(
            f"GITHUB_REPOSITORY {_quote(repository)} is not owner/name",
            hint="run as a GitHub Actions step, or set GITHUB_REPOSITORY=owner/name",
        )
    if base.sha and not _SHA.fullmatch(base.sha):
        raise EnvironmentProblem(f"GITHUB_SHA {_quote(base.sha)} is not a commit SHA")
    if event_path is None:
        raise EnvironmentProblem(
            f"GITHUB_EVENT_PATH is not set; the {event.value} event needs its payload",
            hint="run as a GitHub Actions step, or point GITHUB_EVENT_PATH at an event JSON file",
        )
    payload = _Payload(_read_event(event_path), event_path)
    if event in (Event.PULL_REQUEST, Event.PULL_REQUEST_TARGET):
        action = payload.string("action", limit=_MAX_WORD, optional=True)
        return replace(base, action=action, pull_request=_pull_request(payload, repository))
    if event is Event.PUSH:
        before = payload.sha("before", optional=True)
        if before is not None and _ZERO_SHA.fullmatch(before):
            before = None
        return replace(base, push_before=before, push_after=payload.sha("after", optional=True))
    return base


def _default_api(server_url: str) -> str:
    if server_url.rstrip("/") == "https://github.com":
        return "https://api.github.com"
    return server_url.rstrip("/") + "/api/v3"


def _origin(url: str) -> str:
    """`scheme://host[:port]` of an http(s) URL `_url` accepted."""
    scheme, _, rest = url.partition("://")
    return f"{scheme.lower()}://{rest.split('/', 1)[0].lower()}"


def _url(environ: Mapping[str, str], name: str, default: str) -> str:
    value = environ.get(name, "").strip() or default
    if len(value) > 2048 or not re.fullmatch(r"https?://[^\s/?#]+(?:/[^\s?#]*)?", value):
        raise EnvironmentProblem(
            f"{name} {_quote(value)} is not an http(s) URL",
            hint=f"unset it for GitHub.com ({default}) or give your GitHub Enterprise Server's URL",
        )
    return value.rstrip("/")


def _read_event(path: Path) -> Any:
    hint = "the runner writes this file; check GITHUB_EVENT_PATH"
    try:
        size = path.stat().st_size
        if size > MAX_EVENT_BYTES:
            raise EnvironmentProblem(
                f"event payload is {size} bytes (the limit is {MAX_EVENT_BYTES} bytes)", path=path
            )
        data = path.read_bytes()
    except OSError as exc:
        raise EnvironmentProblem(
            f"cannot read the event payload: {exc.strerror or exc}", path=path, hint=hint
        ) from exc
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise EnvironmentProblem(
            f"event payload is not UTF-8 (byte offset {exc.start})", path=path, hint=hint
        ) from exc
    except json.JSONDecodeError as exc:
        raise EnvironmentProblem(
            f"event payload is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            path=path,
            line=exc.lineno,
            hint=hint,
        ) from exc
    except RecursionError as exc:
        raise EnvironmentProblem("event payload is nested too deeply", path=path) from exc
    if not isinstance(value, dict):
        raise EnvironmentProblem(
            f"event payload is a JSON {_json_kind(value)}, not an object", path=path, hint=hint
        )
    return value


class _Payload:
    """Typed access to the event JSON; every failure names the file and the dotted field."""

    def __init__(self, value: Mapping[str, Any], path: Path) -> None:
        self.value = value
        self.path = path

    def get(self, dotted: str) -> Any:
        node: Any = self.value
        walked: list[str] = []
        for key in dotted.split("."):
            if not isinstance(node, dict):
                where = ".".join(walked) or "the payload"
                raise EnvironmentProblem(
                    f"event field {where} is {_a(node)}, not an object (reading {dotted})",
                    path=self.path,
                )
            node = node.get(key)
            walked.append(key)
        return node

    def fail(self, dotted: str, what: str) -> EnvironmentProblem:
        return EnvironmentProblem(f"event field {dotted} {what}", path=self.path)

    def string(self, dotted: str, *, limit: int = _MAX_REF, optional: bool = False) -> str:
        value = self.get(dotted)
        if value is None and optional:
            return ""
        if not isinstance(value, str):
            raise self.fail(dotted, f"is {_describe(value)}, want a string")
        if len(value) > limit:
            raise self.fail(dotted, f"is {len(value)} characters long (at most {limit})")
        if _printable(value) != value:
            raise self.fail(dotted, "contains control characters")
        return value

    def sha(self, dotted: str, *, optional: bool = False) -> str | None:
        value = self.get(dotted)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not _SHA.fullmatch(value.lower()):
            raise self.fail(dotted, f"is {_describe(value)}, want a 40-character commit SHA")
        return value.lower()

    def integer(self, dotted: str, *, optional: bool = False) -> int | None:
        value = self.get(dotted)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**53:
            raise self.fail(dotted, f"is {_describe(value)}, want a non-negative whole number")
        return value


def _pull_request(payload: _Payload, repository: str) -> PullRequest:
    if not isinstance(payload.get("pull_request"), dict):
        raise payload.fail(
            "pull_request", f"is {_describe(payload.get('pull_request'))}, want an object"
        )
    number = payload.integer("pull_request.number")
    assert number is not None
    if number < 1:
        raise payload.fail("pull_request.number", "must be positive")
    head_repo = ""
    if payload.get("pull_request.head.repo") is not None:
        head_repo = payload.string("pull_request.head.repo.full_name", limit=_MAX_REPO)
        if not _REPO.fullmatch(head_repo):
            raise payload.fail(
                "pull_request.head.repo.full_name", f"{_quote(head_repo)} is not owner/name"
            )
    base_repo = payload.string("pull_request.base.repo.full_name", limit=_MAX_REPO, optional=True)
    if base_repo and not _REPO.fullmatch(base_repo):
        raise payload.fail(
            "pull_request.base.repo.full_name", f"{_quote(base_repo)} is not owner/name"
        )
    head_sha = payload.sha("pull_request.head.sha")
    base_sha = payload.sha("pull_request.base.sha")
    assert head_sha is not None and base_sha is not None
    return PullRequest(
        number=number,
        head_ref=payload.string("pull_request.head.ref"),
        head_sha=head_sha,
        head_repo=head_repo,
        base_ref=payload.string("pull_request.base.ref"),
        base_sha=base_sha,
        base_repo=base_repo or repository,
        changed_files=payload.integer("pull_request.changed_files", optional=True),
        merge_commit_sha=payload.sha("pull_request.merge_commit_sha", optional=True),
        state=payload.string("pull_request.state", limit=_MAX_WORD, optional=True) or "open",
    )


def _printable(text: str) -> str:
    return "".join(c for c in text if c.isprintable())


def _quote(value: str) -> str:
    shown = _printable(value)
    if len(shown) > 80:
        shown = shown[:80] + f"… ({len(value)} characters)"
    return json.dumps(shown, ensure_ascii=False)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _describe(value: Any) -> str:
    if value is None:
        return "missing"
    if isinstance(value, str):
        return f"the string {_quote(value)}"
    return _a(value)


def _a(value: Any) -> str:
    kind = _json_kind(value)
    if kind == "null":
        return "null"
    return f"an {kind}" if kind in ("array", "object") else f"a {kind}"
