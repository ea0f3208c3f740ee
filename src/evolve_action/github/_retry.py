"""Retry rules for the GitHub REST client (private to `evolve_action.github.api`).

Owns: `RetryPolicy` (how often, how long to wait, how fast to send) and the urllib3 `Retry` that
PyGithub's HTTP adapter uses. Guarantees: 5xx, 429 and rate-limit 403 answers are retried a bounded
number of times with bounded backoff; GET, POST, PATCH, PUT and DELETE are retried, except a POST that
creates an issue comment, which is never repeated blindly (a 5xx may hide a comment that was created;
the sticky-comment code looks before it tries again). Never reads the environment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from github.GithubRetry import GithubRetry
from urllib3.exceptions import MaxRetryError, ResponseError

# POSTs that create something new each time: repeating one after a lost answer could duplicate it.
_NOT_REPEATABLE = re.compile(r"/issues/\d+/comments$")
_RETRY_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PATCH", "PUT", "DELETE"})


@dataclass(frozen=True)
class RetryPolicy:
    """How the client retries and paces requests. The defaults suit GitHub; tests use `immediate()`.

    `retries` bounds the retries per request; the n-th retry waits `backoff_factor * 2**(n-1)` seconds
    (at most `backoff_max`), or `Retry-After` when GitHub sends one. A secondary rate limit without
    `Retry-After` waits `secondary_rate_wait`; any rate-limit wait longer than `max_rate_limit_wait`
    fails instead of sleeping. `seconds_between_requests`/`seconds_between_writes` pace requests the
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

    def urllib3_retry(self) -> GithubRetry:
        """The `Retry` PyGithub's adapter uses: bounded, non-raising (the last answer is returned)."""
        return _ApiRetry(
            total=self.retries,
            backoff_factor=self.backoff_factor,
            backoff_max=self.backoff_max,
            secondary_rate_wait=self.secondary_rate_wait,
            max_rate_limit_wait=self.max_rate_limit_wait,
            status_forcelist=[429, *range(500, 600)],
            allowed_methods=_RETRY_METHODS,
            raise_on_status=False,
        )


class _ApiRetry(GithubRetry):
    """`GithubRetry` that refuses to repeat a comment-creating POST after a 5xx or a lost answer."""

    def increment(  # type: ignore[override]
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> Any:
        path = (url or "").split("?", 1)[0]
        if method == "POST" and _NOT_REPEATABLE.search(path):
            status = getattr(response, "status", None)
            if error is not None or (status is not None and status >= 500):
                reason = ResponseError(f"not repeating POST {path} (answer {status or error})")
                raise MaxRetryError(_pool, path, reason)
        return super().increment(method, url, response, error, _pool, _stacktrace)
