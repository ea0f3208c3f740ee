"""The GitHub client's errors, and the translation of GitHub's answers into them.

Owns: `GitHubApiError` and its kinds (permission, not found, auth, rate limit), `translate` (a
PyGithub exception → one of them, with the hint that fits: the `permissions:` entry to grant, the
rate limit's reset), `ref_refusal` (a 422 on a ref), and the small readers of an answer
(`github_message`, `tip_absent`, `TRANSIENT_REF`).
Guarantees: a 403 names the `permissions:` entry that would allow the call; a rate limit says when
it lets requests through again.
Never does: make a request, retry, read `os.environ`, print.
"""

from __future__ import annotations

import time

from github import GithubException
from github.GithubException import RateLimitExceededExceedsMaxWait, RateLimitExceededException

from evolve_action.errors import PublishError
from evolve_action.github._retry import RATE_LIMITS_DOC, RateLimit, rate_limit_of

__all__ = [
    "TRANSIENT_REF",
    "GitHubApiError",
    "GitHubAuthError",
    "GitHubNotFoundError",
    "GitHubPermissionError",
    "GitHubRateLimitError",
    "github_message",
    "ref_refusal",
    "tip_absent",
    "translate",
]


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


TRANSIENT_REF = "reference cannot be updated"
"""GitHub's 422 on a ref update that a retry may clear (seen under load, the ref unmoved)."""


def tip_absent(exc: GithubException) -> bool:
    message = (github_message(exc) or "").lower()
    return exc.status == 404 or "does not exist" in message


def ref_refusal(exc: GithubException, action: str, reason: str, ref_name: str) -> GitHubApiError:
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


def translate(exc: GithubException, action: str, permission: str | None) -> GitHubApiError:
    status = exc.status
    message = github_message(exc)
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


def github_message(exc: GithubException) -> str | None:
    data = exc.data
    if isinstance(data, dict):
        msg = data.get("message")
        return str(msg) if msg else None
    return exc.message or None
