"""Token estimates: the vendor counting API for `SKILL.md + "\\n\\n" + query/prompt`, with a disk cache.

Owns: `TokenCounter` (Anthropic `messages.count_tokens` through the `anthropic` SDK, `ANTHROPIC_BASE_URL`
honoured, concurrency bounded), the evolve-compatible cache file `token-counts.json` (engine spec §8.7:
`{sha256(provider NUL model NUL payload): tokens}`, pretty JSON, saved atomically and never through a
link: a linked cache file is not saved, with a warning), `default_cache_path`
and `estimate` (the results `estimate` of one query/prompt, shared by both tiers).

Guarantees: counting never fails a run: a missing credential or an API error yields `None` and one
warning per scope (returned in `warnings`, the engine forwards them). Cache hits skip the network.
Never prints and never reads `os.environ` (callers pass `environ`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evolve_action import encoding
from evolve_action.catalog import BoundModel, estimate_cost_usd
from evolve_action.harness import _procenv as procenv
from evolve_action.results import Estimate

if TYPE_CHECKING:  # the SDK is imported when a count is first needed (it is slow to import)
    import anthropic


HTTP_TIMEOUT_SECONDS = 60.0


def default_cache_path(environ: Mapping[str, str], cache_dir: str | None = None) -> Path:
    """`<cache_dir>/token-counts.json`, else the user cache dir + `/evolve/token-counts.json`."""
    if cache_dir:
        return Path(cache_dir + "/token-counts.json")
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")) / ".cache")
    return Path(base) / "evolve" / "token-counts.json"


def cache_key(provider: str, model: str, payload: str) -> str:
    """The cache key of one count: sha256 hex of `provider NUL model NUL payload`."""
    data = f"{provider}\0{model}\0{payload}".encode()
    return hashlib.sha256(data).hexdigest()


def estimate_payload(skill_md: bytes, text: str) -> str:
    """What is counted: the SKILL.md bytes, a blank line, then the query or prompt."""
    return skill_md.decode("utf-8", "replace") + "\n\n" + text


class Counter(Protocol):
    """What `estimate` needs from a counter (`TokenCounter`, or a test fake)."""

    async def count(self, provider: str, model: str, payload: str) -> int | None:
        """Input tokens of `payload` for the model, or None when unknown."""
        ...


async def estimate(
    counter: Counter, model: BoundModel, skill_md: bytes, text: str
) -> Estimate | None:
    """The results `estimate` of one query/prompt: counted tokens and their input cost, or None."""
    tokens = await counter.count(
        model.model.provider, model.model.id, estimate_payload(skill_md, text)
    )
    if tokens is None:
        return None
    return Estimate(
        input_tokens=tokens, input_cost_usd=estimate_cost_usd(model.model.pricing, tokens)
    )


class TokenCounter:
    """Counts input tokens per (provider, bare model, payload), through a cache, never raising."""

    def __init__(
        self,
        environ: Mapping[str, str],
        *,
        cache_path: Path | None = None,
        concurrency: int = 1,
        enabled: bool = True,
    ) -> None:
        self._environ = dict(environ)
        self._cache_path = cache_path
        self._cache: dict[str, int] = _load_cache(cache_path) if cache_path else {}
        self._dirty = False
        self._sem = asyncio.Semaphore(max(concurrency, 1))
        self._enabled = enabled
        self._client: anthropic.AsyncAnthropic | None = None
        self._warned: set[str] = set()
        self.warnings: list[str] = []
        """User-facing warnings (one per scope), in the order they arose."""
        self.requests = 0
        """Counting requests sent (cache misses)."""

    def _warn(self, scope: str, message: str) -> None:
        if scope not in self._warned:
            self._warned.add(scope)
            self.warnings.append(message)

    def _anthropic(self) -> anthropic.AsyncAnthropic | None:
        if self._client is None:
            self._client = anthropic_client(
                self._environ, max_retries=1, timeout=HTTP_TIMEOUT_SECONDS
            )
        return self._client

    async def count(self, provider: str, model: str, payload: str) -> int | None:
        """Input tokens of `payload` for `provider/model`, or None when counting is unavailable."""
        key = cache_key(provider, model, payload)
        if key in self._cache:
            return self._cache[key]
        if not self._enabled:
            return None
        if provider != "anthropic":
            return None
        client = self._anthropic()
        if client is None:
            self._warn(
                provider, f"[{provider}] no API key or OAuth token set; token counts omitted"
            )
            return None
        import anthropic

        async with self._sem:
            self.requests += 1
            try:
                resp = await client.messages.count_tokens(
                    model=model, messages=[{"role": "user", "content": payload}]
                )
            except anthropic.APIStatusError as exc:
                body = exc.response.text[:300] if exc.response is not None else ""
                self._warn(
                    f"{provider}/{model}",
                    f"[{provider}/{model}] count_tokens failed: HTTP {exc.status_code}: {body}",
                )
                return None
            except anthropic.APIError as exc:
                self._warn(
                    f"{provider}/{model}", f"[{provider}/{model}] count_tokens failed: {exc}"
                )
                return None
        tokens = int(resp.input_tokens)
        self._cache[key] = tokens
        self._dirty = True
        return tokens

    def save(self) -> None:
        """Write the cache (pretty JSON, atomic) when anything new was counted."""
        if not self._dirty or self._cache_path is None:
            return
        text = json.dumps(dict(sorted(self._cache.items())), indent=2) + "\n"
        try:
            encoding.atomic_write_text(self._cache_path, text)  # link-safe; makes the directory
        except encoding.UnsafeWriteError as exc:
            # A cache is an optimisation: never fail a run (or mask its real error) over it.
            self._warn("save", f"token cache not saved: {exc.message}")
            return
        except OSError as exc:
            self._warn("save", f"token cache {self._cache_path} not saved: {exc.strerror or exc}")
            return
        self._dirty = False

    async def aclose(self) -> None:
        """Close the HTTP client, if one was opened."""
        if self._client is not None:
            await self._client.close()
            self._client = None


async def probe(environ: Mapping[str, str], model: str) -> tuple[int | None, str]:
    """One uncached `count_tokens` call with the chosen credential (the credentials preflight).

    Returns `(HTTP status, detail)`: 200 when accepted, the error status otherwise, `None` when
    the endpoint could not be reached; `(0, "")` when no credential is set. Never raises.
    """
    import anthropic

    counter = TokenCounter(environ)
    client = counter._anthropic()
    if client is None:
        return 0, ""
    try:
        await client.messages.count_tokens(
            model=model, messages=[{"role": "user", "content": "preflight"}]
        )
    except anthropic.APIStatusError as exc:
        return exc.status_code, " ".join(str(exc.message).split())[:200]
    except anthropic.APIError as exc:  # connection refused, DNS, timeout
        cause = exc.__cause__
        return None, " ".join(f"{exc}{f' ({cause})' if cause else ''}".split())[:200]
    finally:
        await counter.aclose()
    return 200, ""


def _load_cache(path: Path) -> dict[str, int]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        k: v
        for k, v in data.items()
        if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
    }


def anthropic_client(
    environ: Mapping[str, str], *, max_retries: int, timeout: float | None = None
) -> anthropic.AsyncAnthropic | None:
    """The one Anthropic SDK client factory (judge and token counting); None without a credential.

    Credentials: `chosen_credential` (the same one the agent uses): a name ending in `_API_KEY` is
    sent as `x-api-key`, any other as a bearer token with the OAuth beta header.
    `ANTHROPIC_BASE_URL` is honoured (the scripted model server). The SDK retries 429/529/5xx and
    connection errors itself, with exponential backoff, `max_retries` times; `timeout` None keeps
    the SDK's default.
    """
    chosen = procenv.chosen_credential(environ)
    if chosen is None:
        return None
    import anthropic  # slow to import: only when a client is first needed

    name, value = chosen
    options: dict[str, Any] = {
        "base_url": environ.get("ANTHROPIC_BASE_URL") or None,
        "max_retries": max_retries,
    }
    if timeout is not None:
        options["timeout"] = timeout
    if name.endswith("_API_KEY"):
        return anthropic.AsyncAnthropic(api_key=value, auth_token=None, **options)
    return anthropic.AsyncAnthropic(
        api_key=None,
        auth_token=value,
        default_headers={"anthropic-beta": "oauth-2025-04-20"},
        **options,
    )
