"""How the GitHub client retries and paces its requests, and how it reads a rate limit.

Owns: `RetryPolicy` (bounds, backoff, pacing; the urllib3 `Retry` PyGithub's adapter uses), the
rate-limit reading as GitHub documents it (`RATE_LIMITS_DOC`, `RateLimit`, `rate_limit_of`) and the
`Retry` that follows it (`_ApiRetry`).
Guarantees: 5xx answers are retried a bounded number of times with bounded backoff; a
comment-creating POST is never repeated after a 5xx or a lost answer; a rate limit waits what GitHub
asks, never longer than `max_rate_limit_wait`; a 403 that is no rate limit is never retried.
Never does: make a request itself, read `os.environ`, print.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from github.GithubException import RateLimitExceededExceedsMaxWait, RateLimitExceededException
from github.GithubRetry import GithubRetry
from github.Requester import Requester
from urllib3.exceptions import MaxRetryError, ResponseError
from urllib3.util.retry import Retry

__all__ = ["RATE_LIMITS_DOC", "RateLimit", "RetryPolicy", "rate_limit_of"]

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

    def urllib3_retry(self, sleeper: Callable[[float], None] = time.sleep) -> GithubRetry:
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
