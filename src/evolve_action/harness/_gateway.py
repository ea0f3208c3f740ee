"""The model gateway: the one holder of the job's model credentials, serving agent sessions the
model requests they need and nothing else.

Owns: `Gateway` (one aiohttp server on `127.0.0.1` and a Unix socket, in a thread of the job's own
process, with its own event loop), the per-session tokens it mints (`Grant`, from
`Gateway.session()`), the upstreams it forwards to (`Upstream`, `upstreams`: the Anthropic and
OpenAI endpoints with the real credential, each with the job's proxy), the allowlist
(`ENDPOINTS`, `ANTHROPIC_BETAS`), the job's meter, reservations and hard cap (`Spend`), and the
registry every harness asks (`acquire`, `gateways`).

How a session uses it: the harness asks `acquire(environ)` for the gateway of that environment's
endpoints and credentials, opens a session for its model (`Gateway.session(model, route=…)`), and
gives the agent CLI only the session's token (as `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`) and the
gateway's address (as `ANTHROPIC_BASE_URL` / Codex's `openai_base_url`).

Guarantees (docs/gateway.md is the threat model, each line a test):
- only `ENDPOINTS` are forwarded (`POST /anthropic/v1/messages`, `…/count_tokens`,
  `POST /openai/responses`, with the query strings the CLIs send), to the configured base URL plus
  the allowlisted path — never a path, query, method or host the client wrote; anything else,
  dot segments and encoded separators included, is answered here (404) and reaches nothing;
- a route exists only when its credential is set; a token is valid only while its session runs,
  only on its own route and only for its granted models (the session's model, and `SMALL_MODEL`
  for Claude Code); a model the catalog cannot price is refused with an error that says how to
  give its price;
- only allowlisted request headers pass (`anthropic-beta` values filtered by `ANTHROPIC_BETAS`);
  the client's credentials never, the real credential is put on;
- the credential never leaves this process except in the header of a request to the configured
  upstream: every answer's headers and body (SSE included, across chunk boundaries) are scrubbed
  of it (`Scrubber`);
- a budget by reservation: before forwarding, the request's worst case (`_worst_case`: its
  prompt estimate, its whole output bound, its paid server-tool calls) is reserved; near the cap
  its output bound is lowered to what the cap allows, and it is refused (400 `budget_exceeded`)
  when spent + reserved would pass the cap (`Spend.limit_usd`) all the same; the answer settles it
  to the metered usage (`harness._meter`), and an answer cut short is charged its whole
  reservation; bodies are bounded (`MAX_BODY_BYTES`); server tools that cannot be priced are
  refused;
- an upstream refusal of the credential (401/403, spent credit) stops every session only when the
  gateway's own request confirms it (`Gateway.fatal`); the sessions then get the gateway's text;
  an unconfirmed refusal stays with the request that provoked it;
- the job cannot be starved through it: the soft file limit is raised at start, connections are
  capped (`MAX_CONNECTIONS`, `MAX_CONNECTIONS_PER_TOKEN` requests per session), a request head
  must arrive within `HEADER_TIMEOUT`, and loop and aiohttp errors are logged once per kind;
- `close()` (the job ending, a signal included) cuts every request in flight within about a
  second;
- a Messages request whose prompt prefix another request is writing waits (bounded) until that
  answer starts, so a wave of sessions writes the shared prefix once (`_warmup`);
- Bedrock and Vertex (`CLAUDE_CODE_USE_BEDROCK`/`_VERTEX`) are refused with an error that says
  why: their credentials are cloud identities the CLI signs requests with, which a gateway cannot
  hold for it.
Never does: print, read `os.environ` (callers pass the environment), log a credential or a token.

Why aiohttp: one well-kept asyncio library that is both a server and a client, streams bodies
both ways chunk by chunk (`StreamResponse.write`, `ClientResponse.content.iter_any`), speaks
HTTP/1.1 keep-alive on both sides, and listens on TCP and Unix sockets alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import json
import logging
import os
import re
import resource
import secrets
import shutil
import tempfile
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from evolve_action.catalog import Pricing
from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import _lifecycle as lifecycle
from evolve_action.harness import _procenv as procenv
from evolve_action.harness import _warmup
from evolve_action.harness._meter import (
    MAX_ERROR_BYTES,
    WEB_SEARCH_USD,
    Metered,
    ResponseMeter,
    metered_cost_usd,
    pricing_for,
)

__all__ = [
    "ANTHROPIC_BETAS",
    "ANTHROPIC_PUBLIC_URL",
    "ENDPOINTS",
    "OPENAI_PUBLIC_URL",
    "SMALL_MODEL",
    "Endpoint",
    "Gateway",
    "Grant",
    "Scrubber",
    "Spend",
    "Upstream",
    "acquire",
    "gateways",
    "raise_file_limit",
    "spend",
    "unpriced_message",
    "upstreams",
]

ANTHROPIC_PUBLIC_URL = "https://api.anthropic.com"
OPENAI_PUBLIC_URL = "https://api.openai.com/v1"
_OAUTH_BETA = "oauth-2025-04-20"
_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 1.0
"""How long closing waits for in-flight answers before cutting them (cancellation is fast)."""

SMALL_MODEL = "claude-haiku-4-5"
"""The model a Claude Code session may use for the CLI's own background requests besides its own:
the harness pins the CLI's small model to it (`ANTHROPIC_SMALL_FAST_MODEL`), and the catalog
prices it. Measured: with `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` the CLI of this release
sends none in trigger, eval and listing sessions; the grant keeps a CLI that does working."""

MAX_BODY_BYTES = 32 << 20
"""The largest request body the gateway reads (the Messages API's own limit is 32 MB)."""

DEFAULT_MAX_OUTPUT_TOKENS = 128_000
"""The worst case reserved for a request that names no output bound (OpenAI's is optional)."""

BYTES_PER_TOKEN = 4
"""The prompt estimate of a reservation: a token per four bytes of request JSON (the metered
usage settles it)."""

MIN_OUTPUT_TOKENS = 256
"""Near the cap a request's output bound is lowered to what the cap allows, down to this."""

DEFAULT_WEB_SEARCHES = 10
"""Web searches reserved for a web-search tool that names no `max_uses`."""

MAX_CONNECTIONS = 256
"""Open client connections the gateway serves at once; more are closed at once."""

MAX_CONNECTIONS_PER_TOKEN = 32
"""Requests of one session in flight at once; more are refused (429)."""

HEADER_TIMEOUT = 30.0
"""Seconds a connection may take to send a whole request head (and to send its next one)."""


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

_DROP_RESPONSE = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-length",
        "content-encoding",
        "trailer",
        "upgrade",
        "set-cookie",
    }
)
_CREDIT_RE = re.compile(r"credit balance is too low|insufficient_quota|billing", re.IGNORECASE)
_REFUSED_TOOLS = ("code_execution", "mcp", "file_search", "code_interpreter", "image_generation")
"""Server-side tools a session may not use (billed per container or call, or reaching beyond
the model): a request declaring one is refused."""
_REDACTED = b"[redacted by evolve-action]"

log = logging.getLogger("evolve_action.gateway")


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where one route forwards, and the credential headers it adds (never shown by `repr`)."""

    route: str
    """`anthropic` or `openai`: the first path segment of the gateway's URL."""
    base_url: str
    headers: tuple[tuple[str, str], ...] = field(repr=False, default=())
    proxy: str = field(repr=False, default="")
    """The HTTP(S) proxy for `base_url` (`HTTPS_PROXY`/`NO_PROXY` of the job), `""` for none."""

    @property
    def secrets(self) -> tuple[str, ...]:
        """The credential values this route sends (scrubbed from every answer)."""
        out = []
        for name, value in self.headers:
            if name == "authorization" and value.lower().startswith("bearer "):
                value = value[7:]
            if name in ("authorization", "x-api-key") and len(value.strip()) >= 8:
                out.append(value.strip())
        return tuple(out)


def upstreams(environ: Mapping[str, str]) -> dict[str, Upstream]:
    """The routes of `environ`'s endpoints and credentials (the same choice the judge makes): a
    route exists only when its credential is set.

    Raises `EnvironmentProblem` for Bedrock or Vertex: the gateway cannot sign for them.
    """
    for name in ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"):
        if environ.get(name, "").strip() not in ("", "0", "false"):
            raise EnvironmentProblem(
                f"{name} is set: Bedrock and Vertex are not supported. Agents reach the model only "
                "through evolve-action's loopback gateway, which holds the credential for them, "
                "and a cloud identity cannot be held that way. Use an Anthropic API key "
                "(ANTHROPIC_API_KEY) or a Claude Code OAuth token (CLAUDE_CODE_OAUTH_TOKEN)."
            )
    out: dict[str, Upstream] = {}
    chosen = procenv.chosen_credential(environ)
    if chosen is not None:
        base = (environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_PUBLIC_URL).strip().rstrip("/")
        name, value = chosen
        headers: tuple[tuple[str, str], ...]
        if name.endswith("_API_KEY"):
            headers = (("x-api-key", value),)
        else:
            headers = (("authorization", f"Bearer {value}"),)
            if "OAUTH" in name:
                headers += (("anthropic-beta", _OAUTH_BETA),)
        out["anthropic"] = Upstream("anthropic", base, headers, _proxy_for(base, environ))
    openai = procenv.openai_credential(environ)
    if openai is not None:
        base = procenv.openai_base_url(environ) or OPENAI_PUBLIC_URL
        out["openai"] = Upstream(
            "openai",
            base,
            (("authorization", f"Bearer {openai[1]}"),),
            _proxy_for(base, environ),
        )
    return out


def _proxy_for(base_url: str, environ: Mapping[str, str]) -> str:
    """The proxy the job's environment names for `base_url`, unless `NO_PROXY` exempts its host."""
    parts = urllib.parse.urlsplit(base_url)
    proxy = procenv.proxies(environ).get(parts.scheme, "")
    no_proxy = environ.get("no_proxy") or environ.get("NO_PROXY") or ""
    host = parts.hostname or ""
    if (
        proxy
        and no_proxy
        and urllib.request.proxy_bypass_environment(  # type: ignore[attr-defined]
            host, {"no": no_proxy}
        )
    ):
        return ""
    return proxy


@dataclass(slots=True)
class Spend:
    """The job's measured spend through every gateway, what requests in flight reserve, the cap."""

    limit_usd: float | None = None
    total: Metered = field(default_factory=Metered)
    reserved_usd: float = 0.0
    """The worst case of every request in flight (released when its answer is settled)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, used: Metered) -> None:
        """Count one response."""
        with self._lock:
            self.total = self.total + used

    def exhausted(self) -> bool:
        """True once the measured spend reached the cap."""
        return self.limit_usd is not None and self.total.cost_usd >= self.limit_usd

    def reserve(self, usd: float) -> bool:
        """Hold `usd` for one request; False (nothing held) when spent + reserved would pass the
        cap."""
        with self._lock:
            if self.limit_usd is not None and (
                self.total.cost_usd >= self.limit_usd
                or self.total.cost_usd + self.reserved_usd + usd > self.limit_usd
            ):
                return False
            self.reserved_usd += usd
            return True

    def room(self) -> float | None:
        """Dollars the cap still allows past what is spent and reserved (None: no cap)."""
        with self._lock:
            if self.limit_usd is None:
                return None
            return self.limit_usd - self.total.cost_usd - self.reserved_usd

    def settle(self, reserved: float, used: Metered) -> None:
        """Release one request's reservation and count what it used."""
        with self._lock:
            self.reserved_usd = max(0.0, self.reserved_usd - reserved)
            self.total = self.total + used


@dataclass(frozen=True, slots=True)
class Grant:
    """One session's access: a token valid only at this gateway, only on its route, only for its
    models, only while the session runs."""

    token: str = field(repr=False)
    anthropic_base_url: str
    openai_base_url: str
    route: str = "anthropic"
    models: tuple[str, ...] = ()


@dataclass(slots=True)
class _Session:
    route: str
    models: dict[str, Pricing | None]
    pinned: bool = True
    pricing: Pricing | None = None
    used: Metered = field(default_factory=Metered)
    in_flight: int = 0


class _Refused(Exception):
    """A request the gateway answers itself."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


class Scrubber:
    """Removes secrets from a byte stream fed in chunks, a secret split across chunks included:
    it holds back only the longest tail that could still begin one."""

    def __init__(self, secrets: Iterator[str] | tuple[str, ...]) -> None:
        self._secrets = tuple(sorted({s.encode() for s in secrets if s}, key=len, reverse=True))
        self._held = b""

    def feed(self, chunk: bytes) -> bytes:
        """The bytes of `chunk` (after what was held) that are safe to pass on now."""
        if not self._secrets:
            return chunk
        data = self._held + chunk
        for secret in self._secrets:
            data = data.replace(secret, _REDACTED)
        keep = 0
        longest = len(self._secrets[0]) - 1
        for k in range(min(longest, len(data)), 0, -1):
            tail = data[-k:]
            if any(s.startswith(tail) for s in self._secrets):
                keep = k
                break
        self._held = data[len(data) - keep :] if keep else b""
        return data[: len(data) - keep]

    def flush(self) -> bytes:
        """What is still held (the stream ended: it can begin no secret any more)."""
        rest, self._held = self._held, b""
        return rest

    def text(self, value: str) -> str:
        """`value` with every secret removed."""
        out = value.encode("utf-8", "surrogateescape")
        for secret in self._secrets:
            out = out.replace(secret, _REDACTED)
        return out.decode("utf-8", "surrogateescape")


class Gateway:
    """The loopback gateway holding one set of upstream credentials (see the module docstring)."""

    def __init__(self, routes: Mapping[str, Upstream], *, spend: Spend | None = None) -> None:
        self._routes = dict(routes)
        self._spend = spend if spend is not None else Spend()
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self._fatal: tuple[int, str] | None = None
        self._confirming: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._client: Any = None
        self._in_flight: set[asyncio.Task[Any]] = set()
        self._warmup = _warmup.Warmup()
        self._busy: set[Any] = set()
        """The transports of connections serving a request now."""
        self._logged: set[str] = set()
        self.connections = 0
        """Client connections open now."""
        self.port = 0
        self._lock_fd: int | None = None
        self.socket_path: Path | None = None
        """The same server on a Unix socket (mode 0666, in a root-owned 0711 directory): what a
        sandbox with a network namespace of its own reaches through its forwarder."""
        self._secrets = tuple(s for u in self._routes.values() for s in u.secrets)

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def forward(self) -> tuple[int, Path] | None:
        """What a sandbox's forwarder relays: this gateway's port, to its Unix socket."""
        return (self.port, self.socket_path) if self.socket_path is not None else None

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>` (after `start`)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Gateway:
        """Listen on a free loopback port, serving from a daemon thread; returns self."""
        raise_file_limit()
        scratch = lifecycle.scratch_dir()
        if scratch is not None and _fits(scratch):
            where = Path(tempfile.mkdtemp(prefix="gateway.", dir=scratch))  # removed with it
        else:  # its own swept directory, somewhere the socket's path fits
            where, self._lock_fd = lifecycle.locked_dir(_socket_parent())
        where.chmod(0o711)
        self.socket_path = where / "gateway.sock"
        self._thread = threading.Thread(target=self._serve, name="evolve-gateway", daemon=True)
        self._thread.start()
        if not self._ready.wait(_START_TIMEOUT) or self._error is not None:
            raise EnvironmentProblem(f"cannot start the model gateway: {self._error}")
        return self

    def close(self) -> None:
        """Stop serving: every token is revoked and every request in flight ends at once (its
        upstream request is cut); idempotent."""
        with self._lock:
            self._sessions.clear()
        loop, stopped = self._loop, self._stopped
        if loop is not None and stopped is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stopped.set)
        if self._thread is not None:
            self._thread.join(_START_TIMEOUT)
            self._thread = None
        if self.socket_path is not None:
            shutil.rmtree(self.socket_path.parent, ignore_errors=True)
            self.socket_path = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(self._loop_exception)
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:  # reported by start(); a closed gateway refuses everything
            self._error = exc
            self._ready.set()
        finally:
            loop.close()

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """An error the event loop could not hand to anyone (an `accept()` that failed for want
        of file descriptors, a connection torn down): logged once per kind, never a traceback
        per connection."""
        exc = context.get("exception")
        kind = type(exc).__name__ if exc is not None else str(context.get("message", ""))[:80]
        if isinstance(exc, OSError) and exc.errno is not None:
            kind = f"{kind}[{errno.errorcode.get(exc.errno, exc.errno)}]"
        self._log_once(kind, f"model gateway: {context.get('message', '')}: {exc}")

    def _log_once(self, kind: str, message: str) -> None:
        if kind not in self._logged:
            self._logged.add(kind)
            log.warning("%s (logged once)", message)

    async def _main(self) -> None:
        from aiohttp import ClientSession, ClientTimeout, TCPConnector, web

        self._stopped = asyncio.Event()
        self._confirming = asyncio.Lock()
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=_STOP_TIMEOUT
        )
        await runner.setup()
        _quiet_aiohttp()
        server = runner.server
        assert server is not None
        factory = _Limited(self, server)
        loop = asyncio.get_running_loop()
        tcp = await loop.create_server(factory, "127.0.0.1", 0, reuse_address=True, backlog=128)
        self.port = int(tcp.sockets[0].getsockname()[1])
        listeners = [tcp]
        if self.socket_path is not None:
            listeners.append(
                await loop.create_unix_server(factory, str(self.socket_path), backlog=128)
            )
            # the agent uids connect; the directory is 0711
            await asyncio.to_thread(self.socket_path.chmod, 0o666)
        timeout = ClientTimeout(total=None, sock_connect=30, sock_read=None)
        try:
            async with ClientSession(
                timeout=timeout,
                connector=TCPConnector(limit=0),
                auto_decompress=False,
                trust_env=False,  # the proxy is each route's own (`Upstream.proxy`), from the job
            ) as client:
                self._client = client
                self._ready.set()
                await self._stopped.wait()
                for listener in listeners:
                    listener.close()
                for task in list(self._in_flight):  # cut the upstream requests in flight
                    task.cancel()
                await server.shutdown(_STOP_TIMEOUT)
        finally:
            await runner.cleanup()

    # -- sessions ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def session(
        self, model: str, *, route: str = "anthropic", pricing: Pricing | None = None
    ) -> Iterator[Grant]:
        """A fresh token for one agent session on `route`, valid for `model` (priced at `pricing`,
        else at the catalog's price) and, on the Anthropic route, the CLI's `SMALL_MODEL`;
        revoked when the block ends. `model` `""` (the CLI's default) grants the first model the
        session asks for, priced at `pricing` (else the catalog's)."""
        token = "evolve-session-" + secrets.token_urlsafe(32)
        models: dict[str, Pricing | None] = {model: pricing or pricing_for(model)} if model else {}
        if route == "anthropic":
            models.setdefault(SMALL_MODEL, pricing_for(SMALL_MODEL))
        with self._lock:
            self._sessions[token] = _Session(
                route=route, models=models, pinned=bool(model), pricing=pricing
            )
        try:
            yield Grant(
                token=token,
                anthropic_base_url=f"{self.url}/anthropic",
                openai_base_url=f"{self.url}/openai",
                route=route,
                models=tuple(models),
            )
        finally:
            with self._lock:
                self._sessions.pop(token, None)

    def used(self, grant: Grant) -> Metered:
        """What the session of `grant` used so far (nothing once it ended)."""
        with self._lock:
            found = self._sessions.get(grant.token)
            return found.used if found is not None else Metered()

    @property
    def fatal(self) -> str:
        """The refusal of the job's credential the gateway confirmed ("" while none is)."""
        return self._fatal[1] if self._fatal is not None else ""

    # -- the gateway -------------------------------------------------------------------------------

    async def _handle(self, request: Any) -> Any:
        from aiohttp import web

        task = asyncio.current_task()
        transport = request.transport
        if task is not None:
            self._in_flight.add(task)
        self._busy.add(transport)  # serving a request: not a connection to evict
        try:
            return await self._serve_one(request)
        except _Refused as refused:
            return _error(web, refused.status, refused.kind, refused.message)
        finally:
            self._busy.discard(transport)
            if task is not None:
                self._in_flight.discard(task)

    async def _serve_one(self, request: Any) -> Any:
        from aiohttp import web

        if request.headers.get("upgrade", "").lower() == "websocket":
            # First, token or not: Codex's WebSocket attempt carries none, and a 401 here would
            # read as a refused key; 426 makes it use HTTP streaming (which carries the token).
            raise _Refused(426, "invalid_request_error", "WebSocket is not supported")
        token = _presented_token(request.headers)
        with self._lock:
            session = self._sessions.get(token) if token else None
        if session is None:
            raise _Refused(
                401, "authentication_error", "evolve-action gateway: no live session token"
            )
        endpoint = self._endpoint(request)
        if endpoint.route != session.route:
            raise _Refused(
                403,
                "permission_error",
                f"evolve-action gateway: this session's token is valid only on /{session.route}",
            )
        if self._fatal is not None:
            raise _Refused(self._fatal[0], "authentication_error", _dead_key_text(self._fatal[0]))
        if session.in_flight >= MAX_CONNECTIONS_PER_TOKEN:
            raise _Refused(
                429, "rate_limit_error", "evolve-action gateway: too many requests in flight"
            )
        session.in_flight += 1
        try:
            return await self._forward(request, session, endpoint, web)
        finally:
            session.in_flight -= 1

    def _endpoint(self, request: Any) -> Endpoint:
        """The allowlisted endpoint `request` asks for, exactly (else `_Refused`)."""
        raw = str(request.raw_path)
        path, _, query = raw.partition("?")
        if request.method == "POST":
            for endpoint in ENDPOINTS:
                if (
                    path == f"/{endpoint.route}{endpoint.path}"
                    and query in endpoint.queries
                    and endpoint.route in self._routes
                ):
                    return endpoint
        served = ", ".join(f"POST /{e.route}{e.path}" for e in ENDPOINTS if e.route in self._routes)
        raise _Refused(
            404,
            "not_found_error",
            "evolve-action gateway: not a request an agent session may make "
            f"(served: {served or 'nothing: no credential is configured'})",
        )

    async def _forward(self, request: Any, session: _Session, endpoint: Endpoint, web: Any) -> Any:
        from aiohttp import ClientError, web_exceptions

        upstream = self._routes[endpoint.route]
        if (request.content_length or 0) > MAX_BODY_BYTES:
            raise _Refused(413, "request_too_large", _too_large())
        try:
            raw = await request.read()
        except web_exceptions.HTTPRequestEntityTooLarge:
            raise _Refused(413, "request_too_large", _too_large()) from None
        body, forwarded = _canonical(raw)
        model = body.get("model")
        model = model.strip() if isinstance(model, str) else ""
        granted = _granted(session.models, model)
        if granted is None and not session.pinned and model:
            # A session started without a model (the CLI's default: the listing capture, whose
            # gateway fronts the scripted server) is pinned to the first model it asks for.
            session.models[model] = session.pricing or pricing_for(model)
            session.pinned, granted = True, model
        if granted is None:
            raise _Refused(
                403,
                "permission_error",
                f"evolve-action gateway: model {model!r} is not this session's "
                f"(granted: {', '.join(session.models)})",
            )
        pricing = session.models[granted]
        if pricing is None:
            raise _Refused(400, "invalid_request_error", unpriced_message(granted, endpoint.route))
        reserve = 0.0
        if endpoint.generates:
            worst = _worst_case(body, len(forwarded), pricing)
            if _fit_output(body, endpoint.route, worst, self._spend):
                worst = dataclasses.replace(worst, output_tokens=_output_bound(body))
                forwarded = json.dumps(body, ensure_ascii=False).encode("utf-8")
            reserve = worst.usd
        if not self._spend.reserve(reserve):
            spend = self._spend
            raise _Refused(
                400,
                "budget_exceeded",
                f"evolve-action: max_cost_usd ({spend.limit_usd:g}) reached; the model gateway "
                f"refuses further requests (spent ${spend.total.cost_usd:.4f}, "
                f"${spend.reserved_usd:.4f} reserved by requests in flight, this one's worst "
                f"case ${reserve:.4f})",
            )
        target = upstream.base_url + endpoint.path
        query = str(request.raw_path).partition("?")[2]
        if query:
            target += "?" + query
        headers = _forwarded_headers(request.headers, upstream)
        meter = ResponseMeter(content_type="", status=0)
        status = 0  # the upstream's, once its answer began
        settled = False

        def settle() -> None:
            nonlocal settled
            if settled:
                return
            settled = True
            meter.finish()
            used = meter.result(pricing=pricing) if status else Metered()
            if endpoint.generates and 0 < status < 400 and not meter.complete:
                # An answer cut short is billed for what the API generated: charge the worst case.
                used = dataclasses.replace(used, cost_usd=max(used.cost_usd, reserve))
            with self._lock:
                session.used = session.used + used
            self._spend.settle(reserve, used)

        scrub = Scrubber(self._secrets)
        prepared: Any = None
        answered: Callable[[bool], None] = _warmup.nothing
        if endpoint.route == "anthropic" and endpoint.generates:
            # Warm-up: a prefix another request is writing waits (bounded) for its answer to start.
            answered = await self._warmup.hold(forwarded)
        try:
            async with self._client.request(
                "POST",
                target,
                headers=headers,
                data=forwarded,
                allow_redirects=False,
                proxy=upstream.proxy or None,
            ) as answer:
                status = answer.status
                answered(status < 400)
                meter = ResponseMeter(
                    content_type=answer.headers.get("content-type", ""), status=status
                )
                kept = [
                    (name, scrub.text(value))
                    for name, value in answer.headers.items()
                    if name.lower() not in _DROP_RESPONSE
                ]
                if status >= 400:
                    return await self._refused(
                        answer, meter, scrub, kept, settle, endpoint.route, model
                    )
                response = web.StreamResponse(status=status, reason=answer.reason)
                for name, value in kept:
                    response.headers.add(name, value)
                await response.prepare(request)
                prepared = response
                async for chunk in answer.content.iter_any():
                    meter.feed(chunk)
                    await response.write(scrub.feed(chunk))
                # Counted before the client sees the end of the body: once a session's last
                # answer is complete, its usage (and the job's spend) includes it.
                settle()
                await response.write(scrub.flush())
                await response.write_eof()
                return response
        except (ClientError, TimeoutError, OSError) as exc:
            answered(False)
            settle()
            if prepared is not None:  # the answer began: end it as cut short as the upstream's
                if request.transport is not None:
                    request.transport.abort()
                return prepared
            return _error(
                web,
                502,
                "api_error",
                f"evolve-action gateway: upstream unreachable: {scrub.text(str(exc))}",
            )
        finally:
            settle()

    async def _refused(
        self,
        answer: Any,
        meter: ResponseMeter,
        scrub: Scrubber,
        headers: list[tuple[str, str]],
        settle: Callable[[], None],
        route: str,
        model: str,
    ) -> Any:
        """An upstream error answer: read whole (bounded), scrubbed, passed on to its request
        only; a refused credential is confirmed by the gateway's own request before it stops
        every session (which then get the gateway's own text, never the upstream's body)."""
        from aiohttp import web

        body = bytearray()
        async for chunk in answer.content.iter_any():
            meter.feed(chunk)
            if len(body) < MAX_ERROR_BYTES:
                body += chunk
        settle()
        text = bytes(body[:MAX_ERROR_BYTES]).decode("utf-8", "replace")
        if _refuses_key(answer.status, text):
            await self._confirm_refusal(route, model)
        if self._fatal is not None:
            return _error(
                web, self._fatal[0], "authentication_error", _dead_key_text(self._fatal[0])
            )
        response = web.Response(status=answer.status, body=scrub.text(text).encode("utf-8"))
        for name, value in headers:
            if name.lower() != "content-type":
                response.headers.add(name, value)
        response.content_type = answer.content_type or "application/json"
        return response

    async def _confirm_refusal(self, route: str, model: str) -> None:
        """Ask the upstream ourselves, with a request of our own that cannot be the session's
        doing, whether the credential is refused; only then does every session stop."""
        assert self._confirming is not None
        async with self._confirming:
            if self._fatal is not None:
                return
            for upstream in [u for u in self._routes.values() if u.route == route]:
                status, detail = await self._probe(upstream, model)
                if _refuses_key(status, detail):
                    message = _message_of(detail) or f"HTTP {status}"
                    scrubbed = Scrubber(self._secrets).text(message)
                    self._fatal = (
                        status,
                        f"HTTP {status}: the {upstream.route} API refused the job's credential "
                        f"(confirmed by the gateway's own request): {scrubbed}",
                    )
                    return

    async def _probe(self, upstream: Upstream, model: str) -> tuple[int, str]:
        """The gateway's own smallest model request on `upstream`: (status, error body)."""
        from aiohttp import ClientError

        if upstream.route == "anthropic":
            url = upstream.base_url + "/v1/messages"
            payload: dict[str, Any] = {
                "model": model,
                "max_tokens": 1,
                "messages": [{"role": "user", "content": "ping"}],
            }
            headers = {"anthropic-version": "2023-06-01", "content-type": "application/json"}
        else:
            url = upstream.base_url + "/responses"
            payload = {"model": model, "max_output_tokens": 16, "input": "ping"}
            headers = {"content-type": "application/json"}
        for name, value in upstream.headers:
            headers[name] = value
        try:
            async with self._client.post(
                url, json=payload, headers=headers, proxy=upstream.proxy or None
            ) as answer:
                body = await answer.content.read(MAX_ERROR_BYTES)
                meter = ResponseMeter(
                    content_type=answer.headers.get("content-type", ""), status=answer.status
                )
                meter.feed(body)
                self._spend.add(meter.result())  # a one-token answer, counted all the same
                return answer.status, body.decode("utf-8", "replace")
        except (ClientError, TimeoutError, OSError):
            return 0, ""


class _Limited:
    """The server's protocol factory, bounded: at `MAX_CONNECTIONS` open connections a new one
    takes the place of the oldest that is not serving a request (still sending its head, or idle
    between keep-alive requests: a flood of half-sent or finished requests cannot keep a session
    out), or is closed at once when every connection is serving a request; and a connection that
    has not sent a whole request head within `HEADER_TIMEOUT` is closed."""

    def __init__(self, gateway: Gateway, server: Any) -> None:
        self._gateway = gateway
        self._server = server
        self.open: dict[_Watched, None] = {}
        """Open connections, oldest first."""

    def __call__(self) -> asyncio.Protocol:
        gateway = self._gateway
        if gateway.connections >= MAX_CONNECTIONS:
            gateway._log_once(
                "connections",
                f"model gateway: {MAX_CONNECTIONS} connections open; closing the oldest idle ones",
            )
            idle = next((c for c in self.open if not c.busy), None)
            if idle is None:
                return _Closing()
            idle.evict()
        return _Watched(self, self._server())


class _Closing(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


class _Watched(asyncio.Protocol):
    """aiohttp's protocol for one connection, counted, and timed until its request head ends."""

    def __init__(self, limits: _Limited, inner: Any) -> None:
        self._limits, self._inner = limits, inner
        self._gateway = limits._gateway
        self._timer: asyncio.TimerHandle | None = None
        self._transport: asyncio.BaseTransport | None = None
        self._tail = b""
        self._evicted = False
        # Counted from the moment it is accepted (the loop accepts a whole backlog at once).
        self._counted = True
        self._gateway.connections += 1
        limits.open[self] = None

    @property
    def busy(self) -> bool:
        """Serving a request now."""
        return self._transport is not None and self._transport in self._gateway._busy

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport
        self._inner.connection_made(transport)
        if self._evicted:
            cast("asyncio.Transport", transport).abort()
        else:
            self._timer = asyncio.get_running_loop().call_later(HEADER_TIMEOUT, self.evict)

    def connection_lost(self, exc: Exception | None) -> None:
        self._uncount()
        self._head_done()
        self._inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._timer is not None:  # still waiting for the end of the first request head
            self._tail = (self._tail + data)[-(len(data) + 4) :]
            if b"\r\n\r\n" in self._tail or b"\n\n" in self._tail:
                self._head_done()
            else:
                self._tail = self._tail[-4:]
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        result: bool | None = self._inner.eof_received()
        return result

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def evict(self) -> None:
        """Close this connection (its request head never came, or a newer one needs its place)."""
        self._evicted = True
        self._uncount()
        self._head_done()
        if self._transport is not None:
            cast("asyncio.Transport", self._transport).abort()

    def _uncount(self) -> None:
        if self._counted:
            self._counted = False
            self._gateway.connections -= 1
            self._limits.open.pop(self, None)

    def _head_done(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def raise_file_limit() -> None:
    """Raise this process's soft limit of open files to its hard limit (a flood of connections
    must not leave the job unable to open a file); never raises."""
    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = max(soft, 1 << 20) if hard == resource.RLIM_INFINITY else hard
        if soft != resource.RLIM_INFINITY and soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))  # the hard limit stays


def _quiet_aiohttp() -> None:
    """aiohttp logs a traceback per failed request or connection: not into the job's log."""
    for name in ("aiohttp.server", "aiohttp.access", "aiohttp.internal", "aiohttp.web"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def unpriced_message(model: str, route: str) -> str:
    """The refusal of a model the gateway cannot price (and how to give its price)."""
    provider = "openai" if route == "openai" else "anthropic"
    return (
        f"evolve-action gateway: model {model!r} has no price in the catalog, so its spend cannot "
        "be metered against max_cost_usd; refused. Give its price in .evolve.yaml: "
        f"providers: {{{provider}: {{models: [{{id: {model}, input_per_mtok: <USD>, "
        "output_per_mtok: <USD>}]}}} (docs/reference.md#a-model-the-catalog-does-not-price)"
    )


def _canonical(raw: bytes) -> tuple[dict[str, Any], bytes]:
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
        raise _Refused(
            400, "invalid_request_error", f"evolve-action gateway: request body refused: {exc}"
        ) from None
    return body, forwarded


def _granted(models: Mapping[str, Pricing | None], model: str) -> str | None:
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


def _worst_case(body: Mapping[str, Any], size: int, pricing: Pricing) -> _Worst:
    """The most one request can cost: its prompt (estimated at `BYTES_PER_TOKEN` bytes of
    request per token, every token written to the cache), the whole output bound generated (at
    the long-context rates where the prompt may be long), and every paid server-tool call it
    allows. Refuses (`_Refused`) a server tool that cannot be priced."""
    limit = body.get("max_tokens", body.get("max_output_tokens"))
    output = limit if isinstance(limit, int) and limit > 0 else DEFAULT_MAX_OUTPUT_TOKENS
    searches = 0
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else ():
        kind = str(tool.get("type") or "") if isinstance(tool, dict) else ""
        if any(kind.startswith(refused) for refused in _REFUSED_TOOLS):
            raise _Refused(
                403,
                "permission_error",
                f"evolve-action gateway: the server tool {kind!r} is not available to agent sessions",
            )
        if kind.startswith("web_search"):
            uses = tool.get("max_uses") if isinstance(tool, dict) else None
            searches += uses if isinstance(uses, int) and uses > 0 else DEFAULT_WEB_SEARCHES
    if body.get("mcp_servers") or body.get("container"):
        raise _Refused(
            403, "permission_error", "evolve-action gateway: MCP servers and containers are refused"
        )
    prompt = -(-size // BYTES_PER_TOKEN)
    fixed = metered_cost_usd(
        pricing, input_tokens=0, cache_creation_input_tokens=prompt, output_tokens=0
    )
    per_token = (
        metered_cost_usd(
            pricing, input_tokens=0, cache_creation_input_tokens=prompt, output_tokens=1
        )
        - fixed
    )
    return _Worst(fixed + searches * WEB_SEARCH_USD, output, per_token)


def _fit_output(body: dict[str, Any], route: str, worst: _Worst, spend: Spend) -> bool:
    """Near the cap, lower the request's output bound to what the cap still allows: True when
    the body changed; `_Refused` when fewer than `MIN_OUTPUT_TOKENS` (or its thinking budget)
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
        raise _Refused(
            400,
            "budget_exceeded",
            f"evolve-action: max_cost_usd ({spend.limit_usd:g}) reached; the model gateway "
            "refuses further requests "
            f"(this request's prompt alone may cost ${worst.fixed_usd:.4f}, "
            f"${max(room, 0.0):.4f} of the cap is left)",
        )
    body["max_output_tokens" if route == "openai" else "max_tokens"] = fits
    return True


def _output_bound(body: Mapping[str, Any]) -> int:
    bound = body.get("max_tokens", body.get("max_output_tokens"))
    return bound if isinstance(bound, int) else DEFAULT_MAX_OUTPUT_TOKENS


def _forwarded_headers(client: Mapping[str, str], upstream: Upstream) -> dict[str, str]:
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


def _refuses_key(status: int, text: str) -> bool:
    """An answer that says the credential itself is refused (or its credit is spent)."""
    return status in (401, 403) or (status in (400, 402, 429) and bool(_CREDIT_RE.search(text)))


def _dead_key_text(status: int) -> str:
    return (
        f"evolve-action gateway: the model API refused this job's credential (HTTP {status}, "
        "confirmed by the gateway's own request); the job stops its sessions"
    )


def _too_large() -> str:
    return f"evolve-action gateway: request body larger than {MAX_BODY_BYTES} bytes"


_SOCKET_PATH_MAX = 100
"""A Unix socket's path must fit `sun_path` (108 bytes on Linux), with room for the names."""


def _fits(parent: Path) -> bool:
    """True when a socket two levels below `parent` fits a socket address."""
    return len(str(parent)) + 45 <= _SOCKET_PATH_MAX


def _socket_parent() -> Path:
    """Where the gateway's own socket directory goes when the run's scratch dir is too deep: the
    temp dir, else `/tmp`."""
    temp = Path(tempfile.gettempdir())
    return temp if _fits(temp) else Path("/tmp")


def _presented_token(headers: Mapping[str, str]) -> str:
    value = str(headers.get("x-api-key") or headers.get("api-key") or "")
    if not value:
        auth = str(headers.get("authorization") or "")
        if auth.lower().startswith("bearer "):
            value = auth[7:]
    return value.strip()


def _error_body(kind: str, message: str) -> bytes:
    return json.dumps(
        {"type": "error", "error": {"type": kind, "message": message, "code": kind}}
    ).encode("utf-8")


def _error(web: Any, status: int, kind: str, message: str) -> Any:
    return web.Response(
        status=status, body=_error_body(kind, message), content_type="application/json"
    )


def _message_of(text: str) -> str:
    with contextlib.suppress(ValueError, AttributeError):
        payload = json.loads(text)
        error = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
    return text.strip()[:300]


# --------------------------------------------------------------------------------------------------
# the registry: one gateway per set of upstreams, one spend for the job

_registry: dict[tuple[Upstream, ...], Gateway] = {}
_registry_lock = threading.Lock()
_spend = Spend()


def spend() -> Spend:
    """The job's spend through every gateway (set `limit_usd` for a hard cap)."""
    return _spend


def acquire(environ: Mapping[str, str]) -> Gateway:
    """The running gateway for `environ`'s endpoints and credentials (started on first use)."""
    routes = upstreams(environ)
    key = tuple(sorted(routes.values(), key=lambda u: u.route))
    with _registry_lock:
        found = _registry.get(key)
        if found is None:
            found = _registry[key] = Gateway(routes, spend=_spend).start()
        return found


@contextlib.contextmanager
def gateways(*, limit_usd: float | None = None) -> Iterator[Spend]:
    """A job's scope: a fresh spend (capped at `limit_usd`); every gateway closed at the end."""
    global _spend
    previous = _spend
    _spend = Spend(limit_usd=limit_usd)
    try:
        yield _spend
    finally:
        with _registry_lock:
            running = list(_registry.values())
            _registry.clear()
        for gateway in running:
            gateway.close()
        _spend = previous
