"""The GitHub REST client: pull requests, changed files, file reads, the sticky comment, commit-back.

Owns: every call to the GitHub REST API (this is the only module that imports PyGithub), retries and
pacing (`RetryPolicy`), and the translation of GitHub's answers into typed results and `EvolveError`s.

Guarantees:
- The API root is what the caller passes (`GITHUB_API_URL`, so GHES works); lists are read to the end
  (100 per page), and `ChangedFiles.truncated` says when GitHub's 3000-file cap hid some of them.
- 5xx answers are retried a bounded number of times with bounded backoff; a comment-creating POST
  is never repeated blindly: after a lost answer the comments are read again first.
- Rate limits are read as GitHub documents them (`RATE_LIMITS_DOC`), 403 and 429 alike: primary
  (`x-ratelimit-remaining: 0`) waits until `x-ratelimit-reset`; secondary waits `retry-after`,
  else a minute, then twice as long each time; no wait ever exceeds `max_rate_limit_wait` (the
  request fails instead), and the final `GitHubRateLimitError` names the limit and when it resets.
  A 403 that is no rate limit is never retried.
- The sticky comment is the lowest-id comment whose FIRST LINE is the hidden marker AND that was
  written by the token's own identity; a comment that merely quotes the marker (a human, another
  workflow) is never edited; an unchanged body is never re-sent. The identity comes from the
  `comment_author` input, else GraphQL `viewer` (which answers for App installation tokens, where
  `GET /user` is a 403), else `GET /user` for tokens that are not installation tokens.
- A new comment is one POST when the token's identity is known (its author finds it again); only
  when the identity is unknown does a PATCH right after the POST add the record of its own id and
  author (`<!-- evolve-action:comment <id> by <login> -->`, from the POST's answer) as its last
  line, and every later edit carries that record. When the identity stays unknown, a comment is ours only if its
  record names its own id and its real author (as GitHub reports it), and that author is a Bot: an
  unknown identity edits nothing it cannot tie to a previous run of ours, and posts a new comment
  instead (another app's comment that starts with our marker, or quotes our whole body, is never
  edited).
- Every comment body and every committed file's bytes pass through `_outbound` on their way out
  (the one home of the redaction of secrets).
- Commit-back writes one commit whose only parent is the evaluated head SHA, on that commit's tree, and
  moves the branch with `force: false`. It commits paths as written (lexically; `committable_path`
  turns a written file into one, refusing a file that is or goes through a link), never anything under
  `.git/` or `.github/` (a results commit must never change a workflow). If the branch is no longer at that SHA the outcome is `HeadMoved`
  and the branch is untouched; nothing that changed nothing is committed (`NothingToCommit`).
- 403s become `GitHubPermissionError` naming the `permissions:` entry to grant; other failures become
  `GitHubApiError` (both `PublishError`s) with GitHub's message.

Never: reads `os.environ`, prints, runs git, force-pushes or rebases, deletes or hides comments, or
changes a comment's body beyond putting the marker on its first line and the record on its last
(sanitising and size-trimming are the renderer's job).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AnyStr, Literal, NoReturn, TypeVar

import requests
from github import Auth, Github, GithubException, InputGitAuthor, InputGitTreeElement
from github.GithubException import RateLimitExceededExceedsMaxWait, RateLimitExceededException
from github.GithubRetry import GithubRetry
from github.Requester import Requester
from urllib3.exceptions import MaxRetryError, ResponseError
from urllib3.util.retry import Retry

from evolve_action.errors import PublishError
from evolve_action.redact import redact

__all__ = [
    "BOT_LOGIN",
    "DEFAULT_API_URL",
    "FILES_API_CAP",
    "LOGIN",
    "MAX_COMMENT_CHARS",
    "ChangedFile",
    "ChangedFiles",
    "CommentInfo",
    "CommentResult",
    "CommitAuthor",
    "CommitOutcome",
    "Committed",
    "FileChange",
    "GitHubApiError",
    "GitHubAuthError",
    "GitHubClient",
    "GitHubNotFoundError",
    "GitHubPermissionError",
    "GitHubRateLimitError",
    "HeadMoved",
    "NothingToCommit",
    "PullRequestInfo",
    "RepositoryClient",
    "RetryPolicy",
    "TokenIdentity",
    "is_sticky",
]

DEFAULT_API_URL = "https://api.github.com"
BOT_LOGIN = "github-actions[bot]"
"""Who `GITHUB_TOKEN` (the GitHub Actions App's installation token) writes as."""
LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
"""A GitHub account login: a user's, or an App's bot (`<app-slug>[bot]`)."""
FILES_API_CAP = 3000
"""GitHub never lists more files than this for one pull request, whatever the pagination."""
MAX_COMMENT_CHARS = 65536

_SHA = re.compile(r"[0-9a-f]{40}")
_VIEWER = "query { viewer { login } }"
_INSTALLATION_TOKEN = "ghs_"
"""The prefix of installation tokens (`GITHUB_TOKEN`, App tokens): `GET /user` always 403s for them."""
_MARKER = re.compile(r"<!--(?:(?!-->)[^\n])+-->")
_RECORD = re.compile(r"<!-- evolve-action:comment (\d+) by (\S+) -->")
"""The last line of every comment we write: its own id and author, as the API answered them."""
_T = TypeVar("_T")

# --------------------------------------------------------------------------------------------------
# Retries

# POSTs that create something new each time: repeating one after a lost answer could duplicate it.
_NOT_REPEATABLE = re.compile(r"/issues/\d+/comments$")
_RETRY_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PATCH", "PUT", "DELETE"})


@dataclass(frozen=True)
class RetryPolicy:
    """How the client retries and paces requests. The defaults suit GitHub; tests use `immediate()`.

    `retries` bounds the retries per request; the n-th retry of a 5xx waits
    `backoff_factor * 2**(n-1)` seconds (at most `backoff_max`). A rate limit (403 or 429) waits
    what GitHub asks (`RateLimit.wait`: until `x-ratelimit-reset`, or `retry-after`, or
    `secondary_rate_wait` doubled at each further secondary limit); any rate-limit wait longer
    than `max_rate_limit_wait` fails instead of sleeping. `seconds_between_requests`/`seconds_between_writes` pace requests the
    way GitHub asks integrations to (None or 0 disables pacing).
    """

    retries: int = 5
    backoff_factor: float = 1.0
    backoff_max: float = 60.0
    secondary_rate_wait: float = 60.0
    max_rate_limit_wait: float = 600.0
    seconds_between_requests: float | None = 0.25
    seconds_between_writes: float | None = 1.0
    timeout: int = 30

    @classmethod
    def immediate(cls, retries: int = 3) -> RetryPolicy:
        """Retry without waiting or pacing (for tests against a local fake)."""
        return cls(
            retries=retries,
            backoff_factor=0.0,
            backoff_max=0.0,
            secondary_rate_wait=0.0,
            max_rate_limit_wait=5.0,
            seconds_between_requests=None,
            seconds_between_writes=None,
            timeout=30,
        )

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (1-based) in code-level retry loops."""
        if attempt < 1 or self.backoff_factor <= 0:
            return 0.0
        return float(min(self.backoff_max, self.backoff_factor * 2 ** (attempt - 1)))

    def _urllib3_retry(self, sleeper: Callable[[float], None] = time.sleep) -> GithubRetry:
        """The `Retry` PyGithub's adapter uses: bounded, non-raising (the last answer is returned)."""
        return _ApiRetry(
            sleeper=sleeper,
            total=self.retries,
            backoff_factor=self.backoff_factor,
            backoff_max=self.backoff_max,
            secondary_rate_wait=self.secondary_rate_wait,
            max_rate_limit_wait=self.max_rate_limit_wait,
            status_forcelist=[429, *range(500, 600)],
            allowed_methods=_RETRY_METHODS,
            raise_on_status=False,
        )


RATE_LIMITS_DOC = "https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api"
"""GitHub's rules for rate limits, which `_ApiRetry` and `rate_limit_of` follow."""


@dataclass(frozen=True)
class RateLimit:
    """A rate-limit answer as GitHub documents it (`RATE_LIMITS_DOC`): a 403 or a 429 that is
    primary (`x-ratelimit-remaining: 0`; wait until `x-ratelimit-reset`, UTC epoch seconds) or
    secondary (`retry-after` seconds when sent, else at least a minute, then exponentially)."""

    kind: Literal["primary", "secondary"]
    retry_after: float | None
    """Seconds GitHub asked for (`retry-after`), if it did."""
    reset: int | None
    """`x-ratelimit-reset` (UTC epoch seconds), if sent."""
    resource: str | None
    """`x-ratelimit-resource` (`core`, `graphql`, …), if sent."""

    def wait(self, *, now: float, secondary_wait: float, earlier: int) -> float:
        """Seconds to wait before the next try; `earlier`: secondary limits this request already met."""
        if self.retry_after is not None:
            return self.retry_after
        if self.kind == "primary" or self.reset is not None:
            return max(0.0, self.reset - now) + 1.0 if self.reset is not None else secondary_wait
        return float(secondary_wait * 2**earlier)

    def describe(self, *, now: float) -> str:
        """Which limit, and when it lets requests through again."""
        what = "primary" if self.kind == "primary" else "secondary"
        of = f" ({self.resource})" if self.resource else ""
        if self.reset is not None and self.kind == "primary":
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.reset))
            return f"GitHub's {what} rate limit{of}, which resets at {when} (in {max(0, int(self.reset - now))} s)"
        if self.retry_after is not None:
            return f"GitHub's {what} rate limit{of}, which asked to wait {int(self.retry_after)} s"
        return f"GitHub's {what} rate limit{of}, which asks to wait at least a minute"


def rate_limit_of(status: int | None, headers: Any, message: str | None) -> RateLimit | None:
    """The rate limit a 403 or 429 answer reports, or None when it is not one (a 403 that only
    says the token may not do this)."""
    if status not in (403, 429):
        return None

    def header(name: str) -> str | None:
        if headers is None:
            return None
        value = headers.get(name)
        if value is None and hasattr(headers, "items"):
            value = next((v for k, v in headers.items() if str(k).lower() == name), None)
        return str(value).strip() if value is not None else None

    retry_after_text = header("retry-after")
    retry_after = (
        float(retry_after_text) if retry_after_text and retry_after_text.isdigit() else None
    )
    reset_text = header("x-ratelimit-reset")
    reset = int(reset_text) if reset_text and reset_text.isdigit() else None
    resource = header("x-ratelimit-resource")
    lower = (message or "").lower()
    if header("x-ratelimit-remaining") == "0" and "secondary" not in lower:
        return RateLimit("primary", retry_after, reset, resource)
    if retry_after is not None or status == 429 or "rate limit" in lower:
        return RateLimit(
            "secondary", retry_after, reset if "secondary" not in lower else None, resource
        )
    return None


class _ApiRetry(GithubRetry):
    """Retries as GitHub asks (`RATE_LIMITS_DOC`), for 403 and 429 alike: a rate limit waits what
    `RateLimit.wait` says, never longer than `max_rate_limit_wait` (beyond it the request fails with
    `RateLimitExceededExceedsMaxWait`); a 403 that is no rate limit is not retried. 5xx and lost
    answers back off exponentially, except a comment-creating POST, which is never repeated after a
    5xx or a lost answer (the caller looks for the comment first)."""

    def __init__(
        self,
        *,
        sleeper: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        secondary_hits: int = 0,
        **kwargs: Any,
    ) -> None:
        kwargs["respect_retry_after_header"] = False  # our wait, capped, is the only one
        super().__init__(**kwargs)
        self.sleeper = sleeper
        self.clock = clock
        self.secondary_hits = secondary_hits
        self.next_wait: float | None = None

    def new(self, **kw: Any) -> Any:
        kw.update(sleeper=self.sleeper, clock=self.clock, secondary_hits=self.secondary_hits)
        kw.pop("respect_retry_after_header", None)
        return super().new(**kw)

    def get_backoff_time(self) -> float:
        if self.next_wait is not None:
            return self.next_wait
        return float(super().get_backoff_time())

    def sleep(self, response: Any = None) -> None:
        wait = self.get_backoff_time()
        if wait > 0:
            self.sleeper(wait)

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> Any:
        path = (url or "").split("?", 1)[0]
        status = getattr(response, "status", None)
        lost = error is not None or (status is not None and status >= 500)
        if method == "POST" and _NOT_REPEATABLE.search(path) and lost:
            reason = ResponseError(f"not repeating POST {path} (answer {status or error})")
            raise MaxRetryError(_pool, path, reason)
        if status not in (403, 429):
            return Retry.increment(self, method, url, response, error, _pool, _stacktrace)
        headers = response.headers
        content: Any = b""
        message: str | None = None
        try:
            content = self.get_content(response, url or "")
            data = json.loads(content or b"{}")
            content = data
            message = str(data.get("message") or "") if isinstance(data, dict) else None
        except (ValueError, TypeError):
            pass
        limit = rate_limit_of(status, headers, message)
        if limit is None:  # a refusal, not a rate limit: never retried
            raise Requester.createException(status, headers, content)
        wait = limit.wait(
            now=self.clock(), secondary_wait=self.secondary_rate_wait, earlier=self.secondary_hits
        )
        if self.max_rate_limit_wait is not None and wait > self.max_rate_limit_wait:
            raise RateLimitExceededExceedsMaxWait(status, content, headers, wait=wait)
        try:
            retry = Retry.increment(self, method, url, response, error, _pool, _stacktrace)
        except MaxRetryError:
            raise RateLimitExceededException(status, content, headers) from None
        if limit.kind == "secondary":
            retry.secondary_hits = self.secondary_hits + 1
        retry.next_wait = wait
        return retry


# --------------------------------------------------------------------------------------------------
# Errors


class GitHubApiError(PublishError):
    """A GitHub API call failed; `status` is the HTTP status (None when GitHub was unreachable)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        github_message: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.github_message = github_message


class GitHubPermissionError(GitHubApiError):
    """403: the token may not do this; `permission` is the `permissions:` entry that would allow it."""

    def __init__(
        self, message: str, *, permission: str, github_message: str | None, hint: str
    ) -> None:
        super().__init__(message, status=403, github_message=github_message, hint=hint)
        self.permission = permission


class GitHubNotFoundError(GitHubApiError):
    """404: the repository, pull request, commit or ref does not exist or the token cannot see it."""


class GitHubAuthError(GitHubApiError):
    """401: GitHub rejected the token."""


class GitHubRateLimitError(GitHubApiError):
    """A rate limit outlasted the retries or the longest wait the policy allows."""


# --------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class TokenIdentity:
    """Who the token writes as, and how we know. `login` None: unknown (see `GitHubClient.identity`)."""

    login: str | None
    source: Literal["comment_author", "graphql", "rest", "unknown"]

    @property
    def is_bot(self) -> bool:
        """True for an App's bot account (`…[bot]`)."""
        return self.login is not None and self.login.endswith("[bot]")


@dataclass(frozen=True)
class PullRequestInfo:
    """The facts about a pull request the action needs."""

    repo: str
    number: int
    state: str
    title: str
    base_ref: str
    base_sha: str
    head_ref: str
    head_sha: str
    head_repo: str | None
    """The head repository's `owner/name`; None when the fork was deleted."""
    changed_files: int
    html_url: str

    @property
    def is_fork(self) -> bool:
        """True when the head lives in another repository (or a deleted fork)."""
        return self.head_repo is None or self.head_repo.lower() != self.repo.lower()


@dataclass(frozen=True)
class ChangedFile:
    """One file of a pull request.

    `status` is GitHub's: added, removed, modified, renamed, copied, changed or unchanged;
    `previous_path` is the old name of a renamed (or copied) file.
    """

    path: str
    status: str
    previous_path: str | None = None


@dataclass(frozen=True)
class ChangedFiles:
    """The files the API listed, and how many the pull request says it changes."""

    files: tuple[ChangedFile, ...]
    expected: int

    @property
    def truncated(self) -> bool:
        """True when GitHub listed fewer files than `changed_files` (the 3000 cap): use git instead."""
        return len(self.files) < self.expected

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path touched: current names, plus the old names of renamed files."""
        out: list[str] = []
        for f in self.files:
            out.append(f.path)
            if f.previous_path is not None and f.previous_path != f.path:
                out.append(f.previous_path)
        return tuple(out)


@dataclass(frozen=True)
class CommentInfo:
    """An issue comment as found on the pull request."""

    id: int
    body: str
    author: str
    author_type: str
    html_url: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class CommentResult:
    """What `upsert_sticky_comment` did. `duplicate_ids` are further marker comments by the author."""

    id: int
    action: Literal["created", "updated", "unchanged"]
    html_url: str
    duplicate_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class FileChange:
    """A file to commit: `content` None deletes it; `mode` None keeps an existing file's mode (else 100644)."""

    path: str
    content: bytes | None
    mode: Literal["100644", "100755"] | None = None


@dataclass(frozen=True)
class CommitAuthor:
    """Author and committer of the bot's commit; omitted, GitHub uses the token's identity."""

    name: str
    email: str


@dataclass(frozen=True)
class Committed:
    """The branch now points at `sha`, a commit whose only parent is `parent_sha`."""

    sha: str
    parent_sha: str
    branch: str
    tree_sha: str
    paths: tuple[str, ...]
    status: Literal["committed"] = "committed"


@dataclass(frozen=True)
class NothingToCommit:
    """The changes leave the head's tree as it is; no commit was made."""

    parent_sha: str
    branch: str
    status: Literal["unchanged"] = "unchanged"


@dataclass(frozen=True)
class HeadMoved:
    """The branch is no longer at the evaluated SHA (or is gone); it was left untouched."""

    branch: str
    expected_sha: str
    actual_sha: str | None
    detail: str
    status: Literal["head_moved"] = "head_moved"

    def notice(self) -> str:
        """One line for a `::notice`: what happened and why it is fine."""
        if self.actual_sha == self.expected_sha:
            return f"Results were not committed to branch '{self.branch}': {self.detail}."
        now = f"is now at {self.actual_sha[:12]}" if self.actual_sha else "no longer exists"
        return (
            f"Results were not committed: branch '{self.branch}' {now}, not the evaluated "
            f"{self.expected_sha[:12]} ({self.detail}). The run for the newer head records its own results."
        )


CommitOutcome = Committed | NothingToCommit | HeadMoved


# --------------------------------------------------------------------------------------------------
# Client


class GitHubClient:
    """A GitHub REST session for one token. Use `repository(full_name)` for per-repository calls."""

    def __init__(
        self,
        token: str,
        *,
        base_url: str = DEFAULT_API_URL,
        policy: RetryPolicy | None = None,
        user_agent: str = "evolve-action",
        sleep: Callable[[float], None] = time.sleep,
        graphql_url: str | None = None,
    ) -> None:
        if not token:
            raise GitHubAuthError(
                "no GitHub token", hint="pass `github_token` (default `${{ github.token }}`)"
            )
        self.base_url = base_url.rstrip("/") or DEFAULT_API_URL
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._installation_token = token.startswith(_INSTALLATION_TOKEN)
        self._identity: TokenIdentity | None = None
        self._gh = Github(
            auth=Auth.Token(token),
            base_url=self.base_url,
            timeout=self.policy.timeout,
            user_agent=user_agent,
            per_page=100,
            retry=self.policy._urllib3_retry(sleep),
            seconds_between_requests=self.policy.seconds_between_requests,
            seconds_between_writes=self.policy.seconds_between_writes,
            lazy=True,
        )
        self.graphql_url = (graphql_url or "").rstrip("/") or self._gh.requester.graphql_url
        """`GITHUB_GRAPHQL_URL` when given, else PyGithub's derivation from the REST root."""

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the HTTP connections."""
        self._gh.close()

    def identity(self, *, configured: str | None = None) -> TokenIdentity:
        """Who the token writes as (comments, commits), without ever guessing.

        1. `configured` (the `comment_author` input), taken as given;
        2. GraphQL `viewer { login }`: answers for personal tokens AND installation tokens
           (`GITHUB_TOKEN` → `github-actions[bot]`, an App's token → `<app-slug>[bot]`);
        3. `GET /user`, only for tokens that are not installation tokens (it 403s for those);
        4. else unknown (`login` None): callers must not create a second comment because of it.

        A 401 raises `GitHubAuthError`; any other failure only moves on to the next source.
        """
        if configured:
            return TokenIdentity(configured, "comment_author")
        if self._identity is None:
            self._identity = self._find_identity()
        return self._identity

    def _find_identity(self) -> TokenIdentity:
        action = "reading the token's identity"
        try:
            _, data = self._gh.requester.requestJsonAndCheck(
                "POST", self.graphql_url, input={"query": _VIEWER, "variables": {}}
            )
            login = ((data.get("data") or {}).get("viewer") or {}).get("login")
            if isinstance(login, str) and LOGIN.fullmatch(login):
                return TokenIdentity(login, "graphql")
        except GithubException as exc:
            if exc.status == 401:
                raise _translate(exc, f"{action} (GraphQL viewer)", None) from exc
        except (requests.RequestException, AttributeError, TypeError):
            pass  # an unreachable or odd GraphQL endpoint: try REST
        if self._installation_token:
            return TokenIdentity(None, "unknown")
        try:
            login = self._gh.get_user().login
        except GithubException as exc:
            if exc.status == 401:
                raise _translate(exc, f"{action} (GET /user)", None) from exc
            return TokenIdentity(None, "unknown")
        except requests.RequestException:
            return TokenIdentity(None, "unknown")
        if isinstance(login, str) and LOGIN.fullmatch(login):
            return TokenIdentity(login, "rest")
        return TokenIdentity(None, "unknown")

    def repository(self, full_name: str) -> RepositoryClient:
        """Calls on `owner/name` (no request is made until one is needed)."""
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", full_name):
            raise ValueError(f"not an owner/name repository: {full_name!r}")
        return RepositoryClient(self, full_name)

    def _call(self, action: str, permission: str | None, fn: Callable[[], _T]) -> _T:
        """Run `fn`, turning PyGithub and transport failures into `GitHubApiError`s."""
        try:
            return fn()
        except (GithubException, requests.RequestException) as exc:
            self._fail(exc, action, permission)

    def _fail(self, exc: Exception, action: str, permission: str | None) -> NoReturn:
        """Raise the `GitHubApiError` for a PyGithub or transport failure."""
        if isinstance(exc, GithubException):
            raise _translate(exc, action, permission) from exc
        raise GitHubApiError(
            f"cannot reach the GitHub API at {self.base_url} while {action}: {exc}",
            hint="check GITHUB_API_URL and the network",
        ) from exc


class RepositoryClient:
    """The calls the action makes on one repository. Create through `GitHubClient.repository`."""

    def __init__(self, client: GitHubClient, full_name: str) -> None:
        self._client = client
        self.full_name = full_name
        self._repo = client._gh.get_repo(full_name)

    # ------------------------------------------------------------------ pull requests

    def pull_request(self, number: int) -> PullRequestInfo:
        """`GET /pulls/{number}`: refs, SHAs, head repository and the `changed_files` count."""

        def fetch() -> PullRequestInfo:
            pr = self._repo.get_pull(number)
            head_repo = pr.head.repo
            return PullRequestInfo(
                repo=self.full_name,
                number=pr.number,
                state=pr.state,
                title=pr.title or "",
                base_ref=pr.base.ref,
                base_sha=pr.base.sha,
                head_ref=pr.head.ref,
                head_sha=pr.head.sha,
                head_repo=head_repo.full_name if head_repo is not None else None,
                changed_files=int(pr.changed_files or 0),
                html_url=pr.html_url or "",
            )

        return self._client._call(f"reading pull request #{number}", "pull-requests: read", fetch)

    def changed_files(self, pr: PullRequestInfo) -> ChangedFiles:
        """Every file the API lists for `pr` (all pages), with status and the old name of renames.

        GitHub lists at most 3000 files; `truncated` is True when fewer came back than `pr.changed_files`,
        and the caller must then diff with git instead.
        """

        def fetch() -> ChangedFiles:
            files = tuple(
                ChangedFile(
                    path=f.filename,
                    status=f.status,
                    previous_path=f.previous_filename or None,
                )
                for f in self._repo.get_pull(pr.number).get_files()
            )
            return ChangedFiles(files=files, expected=pr.changed_files)

        return self._client._call(
            f"listing the files of pull request #{pr.number}", "pull-requests: read", fetch
        )

    # ------------------------------------------------------------------ contents

    def read_file(self, path: str, ref: str) -> bytes | None:
        """The bytes of `path` at `ref` (branch, tag or SHA); None when absent there or not a regular file.

        Files over 1 MB, which the contents API sends without content, are read through the blobs API.
        An unknown `ref` is an error (`GitHubNotFoundError`), not an absent file.
        """
        clean = _clean_path(path)
        action = f"reading {clean} at {ref}"

        def fetch() -> bytes | None:
            try:
                content = self._repo.get_contents(clean, ref=ref)
            except GithubException as exc:
                message = _github_message(exc) or ""
                if exc.status == 404 and "no commit found" not in message.lower():
                    return None
                raise
            if isinstance(content, list) or content.type != "file":
                return None
            if content.encoding == "base64" and content.content is not None:
                return base64.b64decode(content.content)
            blob = self._repo.get_git_blob(content.sha)
            return base64.b64decode(blob.content)

        return self._client._call(action, "contents: read", fetch)

    def read_first(
        self, directory: str, names: Sequence[str], ref: str
    ) -> tuple[str, bytes] | None:
        """The first of `names` that is a file in `directory` at `ref`, with its bytes; None when
        none is (or the directory is absent there). One listing, then one read: absent files cost
        no request each. An unknown `ref` is an error (`GitHubNotFoundError`)."""
        clean = _clean_path(directory)

        def listing() -> set[str]:
            try:
                entries = self._repo.get_contents(clean, ref=ref)
            except GithubException as exc:
                message = _github_message(exc) or ""
                if exc.status == 404 and "no commit found" not in message.lower():
                    return set()
                raise
            if not isinstance(entries, list):
                return set()
            return {e.name for e in entries if e.type == "file"}

        present = self._client._call(f"listing {clean} at {ref}", "contents: read", listing)
        for name in names:
            if name in present:
                data = self.read_file(f"{clean}/{name}", ref)
                if data is not None:
                    return name, data
        return None

    # ------------------------------------------------------------------ the sticky comment

    def marked_comments(self, number: int, marker: str, author: str | None) -> list[CommentInfo]:
        """Our comments on `number` (all pages), by id: `marker` is the first line of the body and
        the author is `author`; with `author` None (the token's identity is unknown), a Bot account's
        comment whose record (last line) names its own id and that same author (`is_recorded`).
        """
        _check_marker(marker)

        def fetch() -> list[CommentInfo]:
            found = []
            for c in self._repo.get_issue(number).get_comments():
                if not is_sticky(c.body or "", marker) or c.user is None:
                    continue
                info = _comment_info(c)
                if _same_login(info.author, author) or (
                    author is None and info.author_type == "Bot" and is_recorded(info)
                ):
                    found.append(info)
            return sorted(found, key=lambda c: c.id)

        return self._client._call(
            f"reading the comments of #{number}", "pull-requests: read", fetch
        )

    def find_sticky_comment(
        self, number: int, marker: str, author: str | None
    ) -> CommentInfo | None:
        """The sticky comment: the lowest-id of `marked_comments`, or None."""
        found = self.marked_comments(number, marker, author)
        return found[0] if found else None

    def upsert_sticky_comment(
        self, number: int, body: str, *, marker: str, author: str | None
    ) -> CommentResult:
        """Create the sticky comment, or edit it in place; an unchanged body sends nothing.

        `marker` (a hidden HTML comment) becomes the body's first line when it is not, and the
        record of the comment's id and author its last. Candidates are
        `marked_comments(number, marker, author)`: pass `GitHubClient.identity().login`; None
        (unknown) edits only a comment whose record ties it to a previous run of ours, else a new
        comment is created (never another author's edited).
        """
        _check_marker(marker)
        body = _outbound(body)
        if not is_sticky(body, marker):
            body = f"{marker}\n{body}"
        body = _without_record(body)
        if len(body) + _RECORD_ROOM > MAX_COMMENT_CHARS:
            raise GitHubApiError(
                f"the comment is {len(body)} characters; GitHub accepts at most "
                f"{MAX_COMMENT_CHARS - _RECORD_ROOM} (the rest holds the comment's record)",
                hint="render a shorter body (drop detail sections first)",
            )
        found = self.marked_comments(number, marker, author)
        if found:
            return self._update(number, found[0], body, tuple(c.id for c in found[1:]), author)
        return self._create(number, body, marker, author)

    def _update(
        self,
        number: int,
        current: CommentInfo,
        body: str,
        duplicates: tuple[int, ...],
        author: str | None,
    ) -> CommentResult:
        """Edit `current` to `body`; the record (last line) is written when the identity is
        unknown (`author` None) or the comment already has one; nothing is sent when unchanged."""
        record = author is None or is_recorded(current)
        same = _normalise(_without_record(current.body)) == _normalise(_without_record(body))
        if same and (not record or is_recorded(current)):
            return CommentResult(current.id, "unchanged", current.html_url, duplicates)
        if record:
            body = _with_record(body, current.id, current.author)
        # A lazy comment object: `edit` PATCHes /issues/comments/{id} without reading it first.
        comment = self._repo.get_issue(number).get_comment(current.id)
        self._client._call(
            f"updating comment {current.id}", "pull-requests: write", lambda: comment.edit(body)
        )
        return CommentResult(current.id, "updated", current.html_url, duplicates)

    def _create(self, number: int, body: str, marker: str, author: str | None) -> CommentResult:
        """POST the comment, then PATCH in its record. A 5xx or lost answer may hide a created
        comment: look again (ours, or a Bot's comment with exactly this body), then retry."""
        policy = self._client.policy
        attempt = 0
        info: CommentInfo | None = None
        while info is None:
            try:
                info = _comment_info(self._repo.get_issue(number).create_comment(body))
                continue
            except (GithubException, requests.RequestException) as exc:
                status = exc.status if isinstance(exc, GithubException) else None
                unknown = status is None or status >= 500
                if not unknown or attempt >= policy.retries:
                    self._client._fail(
                        exc, f"creating the comment on #{number}", "pull-requests: write"
                    )
            attempt += 1
            self._client._sleep(policy.backoff(attempt))
            found = self.marked_comments(number, marker, author) or self._sent(number, body)
            if found:
                dups = tuple(c.id for c in found[1:])
                return self._update(number, found[0], body, dups, author)
        if author is None and info.author:  # identity unknown: record the answer's id and
            self._update(number, info, body, (), None)  # author, so a later run tells it is ours
        return CommentResult(info.id, "created", info.html_url)

    def _sent(self, number: int, body: str) -> list[CommentInfo]:
        """Bot comments holding exactly `body` (what a lost POST answer may have created)."""

        def fetch() -> list[CommentInfo]:
            return sorted(
                (
                    _comment_info(c)
                    for c in self._repo.get_issue(number).get_comments()
                    if c.user is not None
                    and c.user.type == "Bot"
                    and _normalise(c.body or "") == _normalise(body)
                ),
                key=lambda c: c.id,
            )

        return self._client._call(
            f"reading the comments of #{number}", "pull-requests: read", fetch
        )

    # ------------------------------------------------------------------ commit-back

    def commit_files(
        self,
        *,
        branch: str,
        parent_sha: str,
        changes: Sequence[FileChange],
        message: str,
        author: CommitAuthor | None = None,
    ) -> CommitOutcome:
        """Commit `changes` on top of `parent_sha` and move `branch` to it, only as a fast-forward.

        Blobs → a tree on `parent_sha`'s tree (`base_tree`) → a commit whose only parent is `parent_sha`
        → `PATCH refs/heads/{branch}` with `force: false`. The branch is read first: when it is not at
        `parent_sha`, nothing is written and the outcome is `HeadMoved`; so is a 422 on the update.
        Files whose content already matches, and deletions of absent files, are dropped; when nothing
        is left the outcome is `NothingToCommit`. A 403 raises `GitHubPermissionError` (`contents: write`).
        """
        if not _SHA.fullmatch(parent_sha):
            raise ValueError(f"parent_sha must be a full 40-hex commit SHA, got {parent_sha!r}")
        branch = branch.removeprefix("refs/heads/")
        by_path: dict[str, FileChange] = {}
        for change in changes:
            path = _clean_path(change.path)
            if path in by_path:
                raise ValueError(f"{path} is listed twice in the changes")
            content = None if change.content is None else _outbound(change.content)
            by_path[path] = FileChange(path, content, change.mode)

        write = "contents: write"
        ref_name = f"heads/{branch}"
        # Reading the ref completes it, so its URL is the one GitHub gives (`/git/refs/…`) for the PATCH.
        tip, ref = self._client._call(
            f"reading branch {branch}", "contents: read", lambda: self._tip(ref_name)
        )
        if tip != parent_sha:
            detail = "the branch moved before the commit" if tip else "the branch is gone"
            return HeadMoved(branch, parent_sha, tip, detail)

        head = self._client._call(
            f"reading commit {parent_sha[:12]}",
            "contents: read",
            lambda: self._repo.get_git_commit(parent_sha),
        )
        base_tree = head.tree
        existing = self._client._call(
            "reading the head tree", "contents: read", lambda: self._tree_index(base_tree.sha)
        )

        elements: list[InputGitTreeElement] = []
        paths: list[str] = []
        for path, change in sorted(by_path.items()):
            old = existing.get(path) if existing is not None else None
            if change.content is None:
                if existing is not None and old is None:
                    continue
                elements.append(
                    InputGitTreeElement(path, (old or ("100644", ""))[0], "blob", sha=None)
                )
                paths.append(path)
                continue
            mode = change.mode or (
                old[0] if old is not None and old[0] in ("100644", "100755") else "100644"
            )
            if old == (mode, _blob_sha(change.content)):
                continue
            encoded = base64.b64encode(change.content).decode("ascii")
            blob = self._client._call(
                f"uploading {path}",
                write,
                functools.partial(self._repo.create_git_blob, encoded, "base64"),
            )
            elements.append(InputGitTreeElement(path, mode, "blob", sha=blob.sha))
            paths.append(path)
        if not elements:
            return NothingToCommit(parent_sha, branch)

        tree = self._client._call(
            "writing the tree",
            write,
            lambda: self._repo.create_git_tree(elements, base_tree=base_tree),
        )
        if tree.sha == base_tree.sha:
            return NothingToCommit(parent_sha, branch)
        person = InputGitAuthor(author.name, author.email) if author is not None else None

        def make_commit() -> Any:
            if person is None:
                return self._repo.create_git_commit(message, tree, [head])
            return self._repo.create_git_commit(
                message, tree, [head], author=person, committer=person
            )

        commit = self._client._call("writing the commit", write, make_commit)
        raced = self._update_ref(ref_name, ref, commit.sha, parent_sha, f"branch {branch}")
        if raced is not None:
            return HeadMoved(branch, parent_sha, raced[0], raced[1])
        return Committed(commit.sha, parent_sha, branch, tree.sha, tuple(paths))

    def _update_ref(
        self, ref_name: str, current: Any, new_sha: str, expected: str, what: str
    ) -> tuple[str | None, str] | None:
        """Move `refs/{ref_name}` (read as `current`, at `expected`) to `new_sha` as a
        fast-forward. None when it moved; (its SHA now, GitHub's message) when a 422 came because
        another writer moved it (or deleted it) first. A 422 on a ref still at `expected` is GitHub
        refusing the update itself: retried (bounded) when GitHub says it is transient
        ("Reference cannot be updated"), else raised with GitHub's message."""
        write = "contents: write"
        policy = self._client.policy
        attempt = 0
        while True:
            try:
                current.edit(new_sha, force=False)
                return None
            except GithubException as exc:
                if exc.status != 422:
                    raise _translate(exc, f"updating {what}", write) from exc
                reason = _github_message(exc) or "Unprocessable Entity"
                tip, again = self._client._call(
                    f"reading {what}", "contents: read", lambda: self._tip(ref_name)
                )
                if tip != expected:
                    return tip, reason
                if _TRANSIENT_REF in reason.lower() and attempt < policy.retries:
                    attempt += 1
                    self._client._sleep(policy.backoff(attempt))
                    current = again
                    continue
                raise _ref_refusal(exc, f"move {what} to {new_sha[:12]}", reason, ref_name) from exc
            except requests.RequestException as exc:
                self._client._fail(exc, f"updating {what}", write)

    def _tip(self, ref_name: str) -> tuple[str | None, Any]:
        """The branch's current SHA and the ref object (None, None when the branch does not exist)."""
        ref = self._repo.get_git_ref(ref_name)
        try:
            return str(ref.object.sha), ref
        except GithubException as exc:
            if exc.status == 404:
                return None, None
            raise

    def tree_blobs(self, commit_sha: str) -> dict[str, tuple[str, str]] | None:
        """path → (mode, blob sha) of every file in `commit_sha`'s tree (one recursive tree read);
        None when GitHub truncated the listing."""
        action = f"reading the tree of {commit_sha[:12]}"

        def fetch() -> dict[str, tuple[str, str]] | None:
            return self._tree_index(self._repo.get_git_commit(commit_sha).tree.sha)

        return self._client._call(action, "contents: read", fetch)

    def _tree_index(self, tree_sha: str) -> dict[str, tuple[str, str]] | None:
        """path → (mode, blob sha) for the whole tree; None when GitHub truncated the listing."""
        tree = self._repo.get_git_tree(tree_sha, recursive=True)
        if tree.truncated:
            return None
        return {e.path: (e.mode, e.sha) for e in tree.tree if e.type == "blob"}

    def read_ref_file(self, ref: str, path: str) -> tuple[bytes | None, str | None]:
        """The file `path` in the tree of `refs/{ref}`'s commit, and that commit's SHA.

        (None, None) when the ref does not exist; (None, sha) when its tree lacks the file. For
        refs outside `refs/heads` (`evolve-action/ledger/pr-7`): read with `contents: read`.
        """
        tip, _ = self._client._call(f"reading ref {ref}", "contents: read", lambda: self._tip(ref))
        if tip is None:
            return None, None

        def fetch() -> bytes | None:
            commit = self._repo.get_git_commit(tip)
            tree = self._repo.get_git_tree(commit.tree.sha)
            sha = next((e.sha for e in tree.tree if e.path == path and e.type == "blob"), None)
            if sha is None:
                return None
            return base64.b64decode(self._repo.get_git_blob(sha).content)

        return self._client._call(f"reading {path} on ref {ref}", "contents: read", fetch), tip

    def write_ref_file(
        self, ref: str, path: str, data: bytes, *, parent: str | None, message: str
    ) -> bool:
        """Point `refs/{ref}` at a new commit (parent `parent`) whose tree is `path` = `data`.

        Blob → tree (that one file) → commit → create the ref (`parent` None) or move it as a
        fast-forward (`force: false`). False when the ref moved or appeared meanwhile (a 422
        after which the re-read ref is elsewhere: re-read, merge, retry). A 422 on a ref that did
        not move is GitHub refusing the write: `GitHubApiError` with GitHub's message (after
        bounded retries when it says it is transient); a 403 raises `GitHubPermissionError`
        (`contents: write`).
        """
        write = "contents: write"
        encoded = base64.b64encode(data).decode("ascii")
        blob = self._client._call(
            f"uploading {path}",
            write,
            functools.partial(self._repo.create_git_blob, encoded, "base64"),
        )
        element = InputGitTreeElement(path, "100644", "blob", sha=blob.sha)
        tree = self._client._call(
            "writing the tree", write, lambda: self._repo.create_git_tree([element])
        )
        parents = (
            [
                self._client._call(
                    "reading the ref's commit",
                    "contents: read",
                    lambda: self._repo.get_git_commit(parent),
                )
            ]
            if parent is not None
            else []
        )
        commit = self._client._call(
            "writing the commit",
            write,
            lambda: self._repo.create_git_commit(message, tree, parents),
        )
        if parent is not None:  # reading the ref completes it: its URL is then `/git/refs/…`
            tip, current = self._client._call(
                f"reading ref {ref}", "contents: read", lambda: self._tip(ref)
            )
            if tip != parent:
                return False
            return self._update_ref(ref, current, commit.sha, parent, f"ref refs/{ref}") is None
        attempt = 0
        while True:
            try:
                self._repo.create_git_ref(f"refs/{ref}", commit.sha)
                return True
            except GithubException as exc:
                if exc.status != 422:
                    raise _translate(exc, f"creating ref refs/{ref}", write) from exc
                reason = _github_message(exc) or "Unprocessable Entity"
                tip, _ = self._client._call(
                    f"reading ref {ref}", "contents: read", lambda: self._tip(ref)
                )
                if tip is not None:
                    return False  # another run created it first: re-read, merge, retry
                if _TRANSIENT_REF in reason.lower() and attempt < self._client.policy.retries:
                    attempt += 1
                    self._client._sleep(self._client.policy.backoff(attempt))
                    continue
                raise _ref_refusal(exc, f"create ref refs/{ref}", reason, ref) from exc
            except requests.RequestException as exc:
                self._client._fail(exc, f"creating ref refs/{ref}", write)

    def delete_ref(self, ref: str) -> bool:
        """Delete `refs/{ref}` (never a branch or a tag: refused); False when it did not exist."""
        if ref.startswith(("heads/", "tags/")):
            raise ValueError(f"delete_ref deletes our own refs only, not {ref!r}")

        def delete() -> bool:
            tip, current = self._tip(ref)  # completes it: its URL is then `/git/refs/…`
            if tip is None:
                return False
            try:
                current.delete()
            except GithubException as exc:
                if exc.status in (404, 422) and _tip_absent(exc):
                    return False
                raise
            return True

        return self._client._call(f"deleting ref refs/{ref}", "contents: write", delete)


# --------------------------------------------------------------------------------------------------
# Helpers


_TRANSIENT_REF = "reference cannot be updated"
"""GitHub's 422 on a ref update that a retry may clear (seen under load, the ref unmoved)."""


def _tip_absent(exc: GithubException) -> bool:
    message = (_github_message(exc) or "").lower()
    return exc.status == 404 or "does not exist" in message


def _ref_refusal(exc: GithubException, action: str, reason: str, ref_name: str) -> GitHubApiError:
    """The error for a 422 GitHub answered on a ref that had not moved: its message, and a hint
    that fits what it refused."""
    lower = reason.lower()
    if ref_name.startswith("heads/"):
        hint = (
            "a branch protection rule or ruleset blocks the token: let it push to pull request "
            "branches, or set `commit: false`"
            if "rule" in lower or "protected" in lower
            else "GitHub's message says why; re-run the job if it was passing, or set `commit: false`"
        )
    else:
        hint = (
            "GitHub would not let the token write this ref (a ruleset or policy on refs outside "
            "refs/heads?): run the one-off probe in docs/action.md ('The ledger ref'), or set "
            "`commit: false` (the ledger is then only read)"
        )
    return GitHubApiError(
        f"GitHub refused to {action} (422): {reason}",
        status=422,
        github_message=reason,
        hint=hint,
    )


_PERMISSION_HINTS = {
    "pull-requests: write": (
        "give the job `permissions: pull-requests: write`; on a pull request from a fork the token is "
        "read-only whatever the workflow asks, so the comment cannot be posted there"
    ),
    "contents: write": (
        "give the job `permissions: contents: write`; on a pull request from a fork the token cannot "
        "push, so results are not committed there (set `commit: false` or use the fork-safe workflow)"
    ),
    "pull-requests: read": "give the job `permissions: pull-requests: read`",
    "contents: read": "give the job `permissions: contents: read`",
}


def _translate(exc: GithubException, action: str, permission: str | None) -> GitHubApiError:
    status = exc.status
    message = _github_message(exc)
    said = f": {message}" if message else ""
    limit = rate_limit_of(status, exc.headers, message)
    if isinstance(exc, RateLimitExceededException) or limit is not None:
        limit = limit or RateLimit("primary", None, None, None)
        longer = ""
        if isinstance(exc, RateLimitExceededExceedsMaxWait) and exc.wait is not None:
            longer = f"; waiting {exc.wait:.0f} s is longer than the policy's max_rate_limit_wait"
        return GitHubRateLimitError(
            f"{limit.describe(now=time.time())} stopped {action} ({status}{said}){longer}",
            status=status,
            github_message=message,
            hint="re-run after that time; GITHUB_TOKEN has 1,000 requests an hour per repository, "
            f"shared by every workflow run in it, or use an App token with its own ({RATE_LIMITS_DOC})",
        )
    if status == 401:
        return GitHubAuthError(
            f"GitHub rejected the token (401) while {action}{said}",
            status=status,
            github_message=message,
            hint="check the `github_token` input",
        )
    if status == 403 and permission is not None:
        return GitHubPermissionError(
            f"GitHub refused {action} (403){said}",
            permission=permission,
            github_message=message,
            hint=_PERMISSION_HINTS.get(permission, f"give the job `permissions: {permission}`"),
        )
    if status == 403:
        return GitHubPermissionError(
            f"GitHub refused {action} (403){said}",
            permission="",
            github_message=message,
            hint="check the token's permissions",
        )
    if status == 404:
        return GitHubNotFoundError(
            f"not found while {action} (404){said}",
            status=status,
            github_message=message,
            hint="check the repository, number or ref, and that the token can see the repository",
        )
    return GitHubApiError(
        f"GitHub answered {status} while {action}{said}", status=status, github_message=message
    )


def _github_message(exc: GithubException) -> str | None:
    data = exc.data
    if isinstance(data, dict):
        msg = data.get("message")
        return str(msg) if msg else None
    return exc.message or None


def _comment_info(c: Any) -> CommentInfo:
    return CommentInfo(
        id=int(c.id),
        body=c.body or "",
        author=c.user.login if c.user is not None else "",
        author_type=(c.user.type or "") if c.user is not None else "",
        html_url=c.html_url or "",
        created_at=c.created_at.isoformat() if c.created_at else "",
        updated_at=c.updated_at.isoformat() if c.updated_at else "",
    )


def _same_login(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.lower() == b.lower()


def is_sticky(body: str, marker: str) -> bool:
    """True when `marker` is the first line of `body` (surrounding blanks and a BOM aside).

    A comment that carries the marker anywhere else, e.g. one quoting ours, is never ours.
    """
    first = body.lstrip("\ufeff").split("\n", 1)[0]
    return first.strip() == marker


def _outbound(data: AnyStr) -> AnyStr:
    """The one gate every comment body and every committed file's bytes pass through on their way
    to GitHub: the redaction of secrets (`redact.redact`), so no new sink can forget it. Files are
    already redacted when written; this catches anything that reached the disk another way. Bytes
    that are not UTF-8 text pass as they are."""
    if isinstance(data, str):
        return redact(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    cleaned = redact(text)
    return data if cleaned == text else cleaned.encode("utf-8")


_RECORD_ROOM = 80
"""Characters kept free for the record line (a 20-digit id and a 39-character login fit)."""


def is_recorded(comment: CommentInfo) -> bool:
    """True when `comment`'s last line records its own id and its real author."""
    last = comment.body.replace("\r\n", "\n").rstrip().rpartition("\n")[2]
    m = _RECORD.fullmatch(last.strip())
    return (
        m is not None and int(m.group(1)) == comment.id and _same_login(m.group(2), comment.author)
    )


def _without_record(body: str) -> str:
    """`body` without a record as its last line (a body we render never has one)."""
    head, nl, last = body.rstrip().rpartition("\n")
    return f"{head}\n" if nl and _RECORD.fullmatch(last.strip()) else body


def _with_record(body: str, comment_id: int, author: str) -> str:
    """`body` with the record of `comment_id` by `author` as its last line."""
    return f"{body.rstrip()}\n<!-- evolve-action:comment {comment_id} by {author} -->\n"


def _normalise(body: str) -> str:
    return body.replace("\r\n", "\n").rstrip()


def _check_marker(marker: str) -> None:
    if not _MARKER.fullmatch(marker):
        raise ValueError(f"the marker must be one hidden HTML comment (<!-- … -->), got {marker!r}")


def _clean_path(path: str) -> str:
    """`path` as a repository-relative POSIX path; anything that could leave the tree, or that lies
    under `.git/` or `.github/` (workflows: a results commit never changes one), is refused."""
    clean = path.replace("\\", "/").removesuffix("/")
    parts = clean.split("/")
    if (
        not clean
        or clean.startswith("/")
        or re.match(r"[A-Za-z]:", clean)
        or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts)
        or parts[0].lower() == ".github"
        or any(not c.isprintable() for c in clean)
    ):
        raise ValueError(f"not a repository-relative path: {path!r}")
    return clean


def committable_path(path: Path, top: Path) -> str | None:
    """The repository-relative path to commit a file we wrote at `path` under, or None.

    Lexical, never resolved: a file that is a symbolic link, or whose directory below `top` is
    one, is None (what it points at is not what we wrote), and so is a path outside `top` or
    under `.git/` or `.github/`.
    """
    here = Path(os.path.normpath(os.path.abspath(path)))  # noqa: PTH100 (lexical, not resolved)
    rel: Path | None = None
    for base in (top, top.resolve()):
        try:
            rel = here.relative_to(os.path.normpath(os.path.abspath(base)))  # noqa: PTH100
            top = base
            break
        except ValueError:
            continue
    if rel is None:
        return None
    try:
        clean = _clean_path(rel.as_posix())
    except ValueError:
        return None
    walked = Path(os.path.normpath(os.path.abspath(top)))  # noqa: PTH100
    for part in rel.parts:
        walked = walked / part
        if walked.is_symlink():
            return None
    return clean


def _blob_sha(data: bytes) -> str:
    """The git object id of a blob with `data` (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
