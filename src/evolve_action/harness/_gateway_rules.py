"""The model gateway's request rules: what it forwards, how it reads a body, what a request may cost.

Owns: the allowlist (`Endpoint`, `ENDPOINTS`, `ANTHROPIC_BETAS`, the forwarded request headers:
`forwarded_headers`), the canonical body (`canonical`: the JSON the gateway checked, written anew),
which granted model a request names (`granted_model`), a request's worst case and the reservation
rules (`worst_case`, `fit_output`, `output_bound`, the refused server tools), the one reservation
price (`prompt_usd`) and the least a request reserves (`request_floor_usd`, which the budget's
planner checks a unit against), and `Refused` (a request the gateway answers itself).
Guarantees: the upstream parses exactly the bytes that were checked; only allowlisted headers and
`anthropic-beta` values pass, then the route's credential; a server tool that cannot be priced is
refused.
Never does: forward, hold a session, read `os.environ`, print.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evolve_action.catalog import Pricing
from evolve_action.harness._meter import (
    WEB_SEARCH_USD,
    metered_cost_usd,
)
from evolve_action.harness._spend import Spend
from evolve_action.harness._upstream import Upstream

__all__ = [
    "ANTHROPIC_BETAS",
    "BYTES_PER_TOKEN",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "DEFAULT_WEB_SEARCHES",
    "ENDPOINTS",
    "MIN_OUTPUT_TOKENS",
    "Endpoint",
    "Refused",
    "canonical",
    "fit_output",
    "forwarded_headers",
    "granted_model",
    "output_bound",
    "prompt_usd",
    "request_floor_usd",
    "worst_case",
]

DEFAULT_MAX_OUTPUT_TOKENS = 128_000
"""The worst case reserved for a request that names no output bound (OpenAI's is optional)."""

BYTES_PER_TOKEN = 4
"""The prompt estimate of a reservation: a token per four bytes of request JSON (the metered
usage settles it)."""

MIN_OUTPUT_TOKENS = 256
"""Near the cap a request's output bound is lowered to what the cap allows, down to this."""

DEFAULT_WEB_SEARCHES = 10
"""Web searches reserved for a web-search tool that names no `max_uses`."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One request the gateway serves: `POST /<route><path>` with one of `queries`."""

    route: str
    path: str
    """Both the path after `/<route>` and what is appended to the route's configured base URL."""
    queries: frozenset[str]
    """The exact query strings the bundled CLI sends (`""` = none)."""
    generates: bool
    """A model answer (reserved, metered); False for token counting (free)."""


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("anthropic", "/v1/messages", frozenset({"", "beta=true"}), True),
    Endpoint("anthropic", "/v1/messages/count_tokens", frozenset({"", "beta=true"}), False),
    Endpoint("openai", "/responses", frozenset({""}), True),
)
"""Everything the gateway forwards (measured through it with the bundled Claude Code and Codex
CLIs: trigger, eval and listing sessions); any other request is answered by the gateway."""

ANTHROPIC_BETAS = frozenset(
    {
        "claude-code-20250219",
        "interleaved-thinking-2025-05-14",
        "context-management-2025-06-27",
        "thinking-token-count-2026-05-13",
        "advanced-tool-use-2025-11-20",
        "effort-2025-11-24",
        "thinking-display-updates-2026-08-18",
        "per-turn-control-2026-07-01",
        "mid-conversation-tool-changes-2026-07-01",
        "token-counting-2024-11-01",
        "prompt-caching-scope-2026-01-05",
        "redact-thinking-2026-02-12",
        "structured-outputs-2025-12-15",
        "tool-search-tool-2025-10-19",
    }
)
"""`anthropic-beta` values passed on (the CLI's, measured); any other is dropped: among them the
ones that change the price (`context-1m-…`, `fast-mode-…`, `extended-cache-ttl-…`) or reach
beyond a model answer (`files-api-…`, `message-batches-…`, `mcp-servers-…`, `skills-…`)."""

_FORWARDED_HEADERS = frozenset(
    {
        "accept",
        "content-type",
        "user-agent",
        "anthropic-version",
        "anthropic-beta",
        "anthropic-dangerous-direct-browser-access",
        "x-app",
        "x-claude-code-session-id",
        "originator",
        "session-id",
        "thread-id",
        "version",
        "openai-beta",
        "x-client-request-id",
    }
)
_FORWARDED_PREFIXES = ("x-stainless-", "x-codex-")
"""Request headers passed on: the ones the CLIs send (measured) and nothing else — never a
credential, cookie, hop-by-hop, `Host`, `Forwarded`/`X-Forwarded-*` or `X-Original-URL` header."""


_REFUSED_TOOLS = ("code_execution", "mcp", "file_search", "code_interpreter", "image_generation")
"""Server-side tools a session may not use (billed per container or call, or reaching beyond
the model): a request declaring one is refused."""


class Refused(Exception):
    """A request the gateway answers itself."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def canonical(raw: bytes) -> tuple[dict[str, Any], bytes]:
    """The request body as the gateway read it, and the bytes it forwards: the same JSON written
    anew, so the upstream parses exactly what was checked (a duplicate key, a NaN, a byte-order
    mark or an odd encoding cannot make it read another model or bound)."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise ValueError(f"duplicate key {key!r}")
            out[key] = value
        return out

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    try:
        body = json.loads(raw, object_pairs_hook=unique, parse_constant=no_constant)
        if not isinstance(body, dict):
            raise ValueError("not a JSON object")
        for name in ("max_tokens", "max_output_tokens"):
            bound = body.get(name)
            if name in body and (
                not isinstance(bound, int) or isinstance(bound, bool) or bound <= 0
            ):
                raise ValueError(f"{name} is not a positive integer")
        forwarded = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, UnicodeError, RecursionError) as exc:
        raise Refused(
            400, "invalid_request_error", f"evolve-action gateway: request body refused: {exc}"
        ) from None
    return body, forwarded


def granted_model(models: Mapping[str, Pricing | None], model: str) -> str | None:
    """Which granted model `model` names: the same id, or a dated release of it."""
    if not model:
        return None
    if model in models:
        return model
    for granted in models:
        rest = model.removeprefix(granted + "-")
        if rest != model and rest.isdigit() and len(rest) == 8:
            return granted
    return None


@dataclass(frozen=True, slots=True)
class _Worst:
    """What one request may cost: `fixed_usd` (its prompt, its paid server-tool calls) plus
    `output_tokens` × `usd_per_output_token`."""

    fixed_usd: float
    output_tokens: int
    usd_per_output_token: float

    @property
    def usd(self) -> float:
        return self.fixed_usd + self.output_tokens * self.usd_per_output_token


def prompt_usd(
    pricing: Pricing, *, written: int, read: int = 0, output: int = 0, one_hour: bool = False
) -> float:
    """What a prompt of `written` tokens written to the prompt cache (to the one-hour cache when
    `one_hour`, at its higher rate) and `read` tokens read from it, and `output` output tokens,
    cost at most (the long-context rates where the prompt is long): the one reservation price, of
    the gateway's requests and of the budget's floor."""
    return metered_cost_usd(
        pricing,
        input_tokens=0,
        cache_creation_input_tokens=written,
        cache_creation_1h_input_tokens=written if one_hour else 0,
        cache_read_input_tokens=read,
        output_tokens=output,
    )


def _asks_one_hour_cache(body: Any) -> bool:
    """Whether a request body marks any block for the one-hour cache (`"ttl": "1h"`), whose
    writes cost more than the five-minute cache's. Iterative: any nesting depth json accepted."""
    stack = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            control = value.get("cache_control")
            if isinstance(control, dict) and control.get("ttl") == "1h":
                return True
            stack.extend(v for v in value.values() if isinstance(v, dict | list))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, dict | list))
    return False


def request_floor_usd(pricing: Pricing, prompt_tokens: int) -> float:
    """The least the gateway reserves for a request of `prompt_tokens` (as it estimates them)
    none of which it knows cached: the prompt written, `MIN_OUTPUT_TOKENS` output. A cap with
    less room than this cannot start a session (`Budget.admit` refuses the unit)."""
    return prompt_usd(pricing, written=prompt_tokens, output=MIN_OUTPUT_TOKENS)


def worst_case(
    body: Mapping[str, Any], size: int, pricing: Pricing, *, cached_bytes: int = 0
) -> _Worst:
    """The most one request can cost: its prompt (estimated at `BYTES_PER_TOKEN` bytes of
    request per token, every token written to the cache but the first `cached_bytes`, a prefix
    the gateway saw cached, read from it), the whole output bound generated (at the long-context
    rates where the prompt may be long; writes at the one-hour cache's rate when the body asks
    for it anywhere), and every paid server-tool call it allows. Refuses
    (`Refused`) a server tool that cannot be priced."""
    limit = body.get("max_tokens", body.get("max_output_tokens"))
    output = limit if isinstance(limit, int) and limit > 0 else DEFAULT_MAX_OUTPUT_TOKENS
    searches = 0
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else ():
        kind = str(tool.get("type") or "") if isinstance(tool, dict) else ""
        if any(kind.startswith(refused) for refused in _REFUSED_TOOLS):
            raise Refused(
                403,
                "permission_error",
                f"evolve-action gateway: the server tool {kind!r} is not available to agent sessions",
            )
        if kind.startswith("web_search"):
            uses = tool.get("max_uses") if isinstance(tool, dict) else None
            searches += uses if isinstance(uses, int) and uses > 0 else DEFAULT_WEB_SEARCHES
    if body.get("mcp_servers") or body.get("container"):
        raise Refused(
            403, "permission_error", "evolve-action gateway: MCP servers and containers are refused"
        )
    cached = min(max(cached_bytes, 0), size)
    read = -(-cached // BYTES_PER_TOKEN)
    written = -(-(size - cached) // BYTES_PER_TOKEN)
    one_hour = _asks_one_hour_cache(body)
    fixed = prompt_usd(pricing, written=written, read=read, one_hour=one_hour)
    per_token = prompt_usd(pricing, written=written, read=read, output=1, one_hour=one_hour) - fixed
    return _Worst(fixed + searches * WEB_SEARCH_USD, output, per_token)


def fit_output(body: dict[str, Any], route: str, worst: _Worst, spend: Spend) -> bool:
    """Near the cap, lower the request's output bound to what the cap still allows: True when
    the body changed; `Refused` when fewer than `MIN_OUTPUT_TOKENS` (or its thinking budget)
    fit."""
    room = spend.room()
    if room is None or worst.usd <= room:
        return False
    per_token = worst.usd_per_output_token
    fits = int((room - worst.fixed_usd) / per_token) if per_token > 0 else worst.output_tokens
    thinking = body.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    floor = max(MIN_OUTPUT_TOKENS, budget + 1 if isinstance(budget, int) else 0)
    if fits < floor:
        raise Refused(
            400,
            "budget_exceeded",
            f"evolve-action: max_cost_usd ({spend.limit_usd:g}) reached; the model gateway "
            "refuses further requests "
            f"(this request's prompt alone may cost ${worst.fixed_usd:.4f}, "
            f"${max(room, 0.0):.4f} of the cap is left)",
        )
    body["max_output_tokens" if route == "openai" else "max_tokens"] = fits
    return True


def output_bound(body: Mapping[str, Any]) -> int:
    bound = body.get("max_tokens", body.get("max_output_tokens"))
    return bound if isinstance(bound, int) else DEFAULT_MAX_OUTPUT_TOKENS


def forwarded_headers(client: Mapping[str, str], upstream: Upstream) -> dict[str, str]:
    """The client's allowlisted headers (`anthropic-beta` values filtered), then the credential."""
    headers: dict[str, str] = {}
    for name, value in client.items():
        lowered = name.lower()
        if lowered in _FORWARDED_HEADERS or lowered.startswith(_FORWARDED_PREFIXES):
            headers[lowered] = value
    betas = [b.strip() for b in headers.pop("anthropic-beta", "").split(",")]
    kept = [b for b in betas if b in ANTHROPIC_BETAS]
    for name, value in upstream.headers:
        if name == "anthropic-beta":
            kept.append(value)
        else:
            headers[name] = value
    if kept and upstream.route == "anthropic":
        headers["anthropic-beta"] = ",".join(dict.fromkeys(kept))
    headers["accept-encoding"] = "identity"
    return headers
