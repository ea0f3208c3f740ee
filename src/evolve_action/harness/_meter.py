"""What one model response used and cost, read from the bytes the gateway forwards.

Owns: `ResponseMeter` (fed the response body chunk by chunk as it streams: Anthropic Messages SSE
and JSON, OpenAI Responses SSE and JSON), `Metered` (the usage of one session or of the whole job)
and `metered_cost_usd` (list prices, cache reads and writes priced as the APIs price them).
Guarantees: pure (no I/O, no clock); never raises for any input (a body it cannot read adds
nothing); memory is bounded (an SSE event longer than `MAX_EVENT_BYTES` is dropped, a JSON body
longer than `MAX_JSON_BYTES` is not parsed, an error body is kept up to `MAX_ERROR_BYTES`).
Never does: decide whether a request may pass (the gateway does), or hold a credential.

The prices: `catalog.Pricing` gives the input and output rate per million tokens; a cache read
costs `CACHE_READ_FACTOR` (0.1) of the input rate and a cache write `CACHE_WRITE_FACTOR` (1.25,
Anthropic's five-minute cache) or, for the part the answer's `usage.cache_creation` reports as
written to the one-hour cache, `CACHE_WRITE_1H_FACTOR` (2), as both vendors list them. OpenAI reports cached input inside its
`input_tokens`; the meter moves it to `cache_read_input_tokens` so no token is priced twice.
A prompt of more than `LONG_CONTEXT_TOKENS` (fresh, cached and written together) is priced at the
long-context rates (`LONG_CONTEXT_INPUT_FACTOR` × input, `LONG_CONTEXT_OUTPUT_FACTOR` × output),
and each paid server-tool call (web search) at `WEB_SEARCH_USD`. `complete` says whether the
answer reached its end (`message_stop`, a whole JSON body, `response.completed`): the gateway
charges an answer that did not its whole reservation, since the API bills what it generated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evolve_action.catalog import Catalog, Pricing, build_catalog

__all__ = [
    "CACHE_READ_FACTOR",
    "CACHE_WRITE_1H_FACTOR",
    "CACHE_WRITE_FACTOR",
    "LONG_CONTEXT_INPUT_FACTOR",
    "LONG_CONTEXT_OUTPUT_FACTOR",
    "LONG_CONTEXT_TOKENS",
    "WEB_SEARCH_USD",
    "Metered",
    "ResponseMeter",
    "cache_line",
    "metered_cost_usd",
    "pricing_for",
]

CACHE_READ_FACTOR = 0.1
CACHE_WRITE_FACTOR = 1.25
CACHE_WRITE_1H_FACTOR = 2.0
"""A write to Anthropic's one-hour cache (`"ttl": "1h"`): twice the input rate."""
LONG_CONTEXT_TOKENS = 200_000
LONG_CONTEXT_INPUT_FACTOR = 2.0
LONG_CONTEXT_OUTPUT_FACTOR = 1.5
WEB_SEARCH_USD = 0.01
"""One web search, Anthropic's and OpenAI's list price ($10 per 1,000)."""
MAX_EVENT_BYTES = 1 << 20
MAX_JSON_BYTES = 8 << 20
MAX_ERROR_BYTES = 64 << 10


@dataclass(frozen=True, slots=True)
class Metered:
    """Tokens and dollars of some model requests (one response, one session, or the job)."""

    requests: int = 0
    input_tokens: int = 0
    """Fresh (uncached) input tokens."""
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cost_usd: float = 0.0
    """At list prices, cache discounts included; 0 for a model the catalog does not price."""
    unpriced: int = 0
    """Responses whose model has no catalog price (their tokens are counted, not their cost)."""
    server_tool_requests: int = 0
    """Paid server-tool calls (web searches), priced at `WEB_SEARCH_USD` each."""

    def __add__(self, other: Metered) -> Metered:
        return Metered(
            requests=self.requests + other.requests,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cache_creation_input_tokens=(
                self.cache_creation_input_tokens + other.cache_creation_input_tokens
            ),
            cost_usd=self.cost_usd + other.cost_usd,
            unpriced=self.unpriced + other.unpriced,
            server_tool_requests=self.server_tool_requests + other.server_tool_requests,
        )


def cache_line(used: Metered) -> str:
    """One line on the prompt cache of some requests: the hit rate (the share of cacheable prompt
    tokens read from the cache rather than written to it) and the token counts; "" when no request
    wrote or read the cache."""
    read, written = used.cache_read_input_tokens, used.cache_creation_input_tokens
    if not read + written:
        return ""
    return (
        f"Prompt cache: {read / (read + written):.0%} of cacheable prompt tokens read from the "
        f"cache ({read:,} read, {written:,} written, {used.input_tokens:,} uncached, over "
        f"{used.requests:,} model requests)."
    )


def metered_cost_usd(
    pricing: Pricing,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
    cache_creation_1h_input_tokens: int = 0,
    server_tool_requests: int = 0,
) -> float:
    """Dollars at list prices: fresh input, cache writes (×1.25; the `cache_creation_1h_input_tokens`
    of them written to the one-hour cache ×2), cache reads (×0.1), output, at the long-context
    rates past `LONG_CONTEXT_TOKENS` of prompt; plus paid server-tool calls."""
    prompt = input_tokens + cache_read_input_tokens + cache_creation_input_tokens
    one_hour = min(max(cache_creation_1h_input_tokens, 0), cache_creation_input_tokens)
    long = prompt > LONG_CONTEXT_TOKENS
    rate = pricing.input_per_mtok / 1e6 * (LONG_CONTEXT_INPUT_FACTOR if long else 1.0)
    out_rate = pricing.output_per_mtok / 1e6 * (LONG_CONTEXT_OUTPUT_FACTOR if long else 1.0)
    return (
        input_tokens * rate
        + (cache_creation_input_tokens - one_hour) * rate * CACHE_WRITE_FACTOR
        + one_hour * rate * CACHE_WRITE_1H_FACTOR
        + cache_read_input_tokens * rate * CACHE_READ_FACTOR
        + output_tokens * out_rate
        + server_tool_requests * WEB_SEARCH_USD
    )


_CATALOG: Catalog | None = None


def pricing_for(model: str, catalog: Catalog | None = None) -> Pricing | None:
    """The catalog price of an API model id (`claude-sonnet-4-6`, a dated `…-20250929` or a
    provider-prefixed id), or None when the catalog does not know it."""
    global _CATALOG
    if catalog is None:
        if _CATALOG is None:
            _CATALOG = build_catalog()
        catalog = _CATALOG
    ident = model.strip()
    if not ident:
        return None
    found = catalog.lookup(ident)
    if found is None:  # a dated or suffixed id: the longest catalog id it starts with
        candidates = [
            m
            for m in catalog.models
            for cli in (m.id, *(c for _, c in m.supported))
            if ident.startswith(cli + "-") or ident.startswith(cli + "@")
        ]
        found = max(candidates, key=lambda m: len(m.id), default=None)
    return found.pricing if found is not None else None


class ResponseMeter:
    """Reads the usage out of one response body as it streams through (`feed`, then `result`)."""

    def __init__(self, *, content_type: str, status: int) -> None:
        self._sse = "text/event-stream" in content_type.lower()
        self._status = status
        self._buffer = bytearray()
        self._overflow = False
        self._model = ""
        self._usage: dict[str, int] = {}
        self._openai = False
        self._json_read = False
        self.complete = False
        """The answer reached its end (an SSE stream's last event, or a whole JSON body)."""

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the body."""
        if self._overflow:
            return
        self._buffer += chunk
        if self._sse:
            self._drain_events()
        elif len(self._buffer) > (MAX_ERROR_BYTES if self._status >= 400 else MAX_JSON_BYTES):
            self._overflow = True
            self._buffer.clear()

    def error_text(self) -> str:
        """The body of an error response (at most `MAX_ERROR_BYTES`), decoded leniently."""
        if self._status < 400:
            return ""
        return bytes(self._buffer[:MAX_ERROR_BYTES]).decode("utf-8", "replace")

    def finish(self) -> None:
        """The body ended (whatever reached us is all there is): a JSON body is read now."""
        if self._sse or self._json_read:
            return
        self._json_read = True
        if self._status >= 400:
            self.complete = True
        elif not self._overflow:
            self._read_json(bytes(self._buffer))

    def result(self, catalog: Catalog | None = None, *, pricing: Pricing | None = None) -> Metered:
        """The usage and cost of the response (nothing for an error or a body without usage);
        `pricing` when the caller knows the model's price (else the catalog's, by the model the
        answer names)."""
        if self._status < 400 and not self._sse and not self._overflow and not self._json_read:
            self._read_json(bytes(self._buffer))
        if not self._usage:
            return Metered(requests=1)
        fresh = self._usage.get("input_tokens", 0)
        read = self._usage.get("cache_read_input_tokens", 0)
        if self._openai:  # OpenAI counts cached tokens inside input_tokens
            fresh = max(0, fresh - read)
        usage = Metered(
            requests=1,
            input_tokens=fresh,
            output_tokens=self._usage.get("output_tokens", 0),
            cache_read_input_tokens=read,
            cache_creation_input_tokens=self._usage.get("cache_creation_input_tokens", 0),
            server_tool_requests=self._usage.get("web_search_requests", 0),
        )
        if pricing is None:
            pricing = pricing_for(self._model, catalog)
        if pricing is None:
            return Metered(**{**_fields(usage), "unpriced": 1})
        cost = metered_cost_usd(
            pricing,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_input_tokens=usage.cache_read_input_tokens,
            cache_creation_input_tokens=usage.cache_creation_input_tokens,
            cache_creation_1h_input_tokens=self._usage.get("ephemeral_1h_input_tokens", 0),
            server_tool_requests=usage.server_tool_requests,
        )
        return Metered(**{**_fields(usage), "cost_usd": cost})

    # ---------------------------------------------------------------------------------------------

    def _drain_events(self) -> None:
        while True:
            cut = _event_end(self._buffer)
            if cut is None:
                if len(self._buffer) > MAX_EVENT_BYTES:
                    self._buffer.clear()  # an event we will not read: skip to the next one
                return
            event, self._buffer = bytes(self._buffer[: cut[0]]), self._buffer[cut[1] :]
            data = b"\n".join(
                line[5:].lstrip(b" ")
                for line in event.replace(b"\r\n", b"\n").split(b"\n")
                if line.startswith(b"data:")
            )
            if data:
                self._read_event(data)

    def _read_event(self, data: bytes) -> None:
        try:
            payload = json.loads(data)
        except ValueError:
            return
        if not isinstance(payload, dict):
            return
        kind = payload.get("type")
        if kind == "message_start":  # Anthropic: the prompt's usage, the model
            message = payload.get("message")
            if isinstance(message, dict):
                self._model = str(message.get("model") or self._model)
                self._take(message.get("usage"))
        elif kind == "message_delta":  # Anthropic: cumulative output (and, lately, input) usage
            self._take(payload.get("usage"))
        elif kind == "message_stop":
            self.complete = True
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = payload.get("response")
            if isinstance(response, dict):
                self._read_openai(response)
            self.complete = True
        elif kind == "error":  # an error event ends the stream: nothing more is generated
            self.complete = True

    def _read_json(self, body: bytes) -> None:
        try:
            payload = json.loads(body)
        except ValueError:
            return
        if not isinstance(payload, dict):
            return
        self.complete = True
        if payload.get("object") == "response":
            self._read_openai(payload)
            return
        self._model = str(payload.get("model") or "")
        self._take(payload.get("usage"))

    def _read_openai(self, response: dict[str, Any]) -> None:
        self._openai = True
        self._model = str(response.get("model") or self._model)
        usage = response.get("usage")
        if not isinstance(usage, dict):
            return
        details = usage.get("input_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else 0
        searches = sum(
            1
            for item in response.get("output") or ()
            if isinstance(item, dict) and item.get("type") == "web_search_call"
        )
        self._take(
            {
                "input_tokens": usage.get("input_tokens"),
                "output_tokens": usage.get("output_tokens"),
                "cache_read_input_tokens": cached,
                "web_search_requests": searches,
            }
        )

    def _take(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                self._usage[name] = value  # Anthropic's delta counts are cumulative
        split = usage.get("cache_creation")  # Anthropic: the writes by cache lifetime
        one_hour = split.get("ephemeral_1h_input_tokens") if isinstance(split, dict) else None
        if isinstance(one_hour, int) and not isinstance(one_hour, bool) and one_hour >= 0:
            self._usage["ephemeral_1h_input_tokens"] = one_hour
        tools = usage.get("server_tool_use")
        searches = tools.get("web_search_requests") if isinstance(tools, dict) else None
        if searches is None:
            searches = usage.get("web_search_requests")
        if isinstance(searches, int) and not isinstance(searches, bool) and searches >= 0:
            self._usage["web_search_requests"] = searches


def _event_end(buffer: bytearray) -> tuple[int, int] | None:
    """Where the first SSE event ends: (end of its text, start of the next), or None."""
    found: tuple[int, int] | None = None
    for sep in (b"\n\n", b"\r\n\r\n"):
        at = buffer.find(sep)
        if at >= 0 and (found is None or at < found[0]):
            found = (at, at + len(sep))
    return found


def _fields(usage: Metered) -> dict[str, Any]:
    return {
        "requests": usage.requests,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "server_tool_requests": usage.server_tool_requests,
    }
