"""The model gateway: the one holder of the job's model credentials, serving agent sessions the
model requests they need and nothing else.

Owns: `Gateway` (one aiohttp server on `127.0.0.1` and a Unix socket, in a thread of the job's own
process, with its own event loop), the per-session tokens it mints (`Grant`, from
`Gateway.session()`), serving and forwarding a request, and the registry every harness asks
(`acquire`, `gateways`). What it applies lives in its siblings: the upstreams it forwards to
(`_upstream`: `Upstream`, `upstreams`: the Anthropic and OpenAI endpoints with the real
credential, each with the job's proxy), the request rules (`_gateway_rules`: the allowlist `ENDPOINTS`,
`ANTHROPIC_BETAS`, the forwarded headers, the canonical body, the worst case and reservation), the
job's meter, reservations and hard cap (`_spend`: `Spend`), the connection limits
(`_gateway_limits`) and the scrubber (`_scrub`).

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
- a budget by reservation: before forwarding, the request's worst case (`worst_case`: its
  prompt estimate, its whole output bound, its paid server-tool calls) is reserved; near the cap
  its output bound is lowered to what the cap allows; where even then the prompt at the written
  price does not fit, a prefix the gateway saw cached (`_gateway_cache`) is reserved at the read
  price, one such request at a time; it is refused (400 `budget_exceeded`)
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
import secrets
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve_action.catalog import Pricing
from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import _lifecycle as lifecycle
from evolve_action.harness import _warmup
from evolve_action.harness._gateway_cache import CachedPrefixes
from evolve_action.harness._gateway_limits import Limited, raise_file_limit
from evolve_action.harness._gateway_rules import (
    ENDPOINTS,
    Endpoint,
    Refused,
    canonical,
    fit_output,
    forwarded_headers,
    granted_model,
    output_bound,
    worst_case,
)
from evolve_action.harness._meter import (
    MAX_ERROR_BYTES,
    Metered,
    ResponseMeter,
    pricing_for,
)
from evolve_action.harness._scrub import Scrubber
from evolve_action.harness._spend import Spend
from evolve_action.harness._upstream import Upstream, upstreams

__all__ = [
    "SMALL_MODEL",
    "Gateway",
    "Grant",
    "acquire",
    "gateways",
    "spend",
    "unpriced_message",
]

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


MAX_CONNECTIONS_PER_TOKEN = 32
"""Requests of one session in flight at once; more are refused (429)."""


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

log = logging.getLogger("evolve_action.gateway")


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
        self._cached = CachedPrefixes()
        self.busy: set[Any] = set()
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
        self.log_once(kind, f"model gateway: {context.get('message', '')}: {exc}")

    def log_once(self, kind: str, message: str) -> None:
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
        factory = Limited(self, server)
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
        self.busy.add(transport)  # serving a request: not a connection to evict
        try:
            return await self._serve_one(request)
        except Refused as refused:
            return _error(web, refused.status, refused.kind, refused.message)
        finally:
            self.busy.discard(transport)
            if task is not None:
                self._in_flight.discard(task)

    async def _serve_one(self, request: Any) -> Any:
        from aiohttp import web

        if request.headers.get("upgrade", "").lower() == "websocket":
            # First, token or not: Codex's WebSocket attempt carries none, and a 401 here would
            # read as a refused key; 426 makes it use HTTP streaming (which carries the token).
            raise Refused(426, "invalid_request_error", "WebSocket is not supported")
        token = _presented_token(request.headers)
        with self._lock:
            session = self._sessions.get(token) if token else None
        if session is None:
            raise Refused(
                401, "authentication_error", "evolve-action gateway: no live session token"
            )
        endpoint = self._endpoint(request)
        if endpoint.route != session.route:
            raise Refused(
                403,
                "permission_error",
                f"evolve-action gateway: this session's token is valid only on /{session.route}",
            )
        if self._fatal is not None:
            raise Refused(self._fatal[0], "authentication_error", _dead_key_text(self._fatal[0]))
        if session.in_flight >= MAX_CONNECTIONS_PER_TOKEN:
            raise Refused(
                429, "rate_limit_error", "evolve-action gateway: too many requests in flight"
            )
        session.in_flight += 1
        try:
            return await self._forward(request, session, endpoint, web)
        finally:
            session.in_flight -= 1

    def _endpoint(self, request: Any) -> Endpoint:
        """The allowlisted endpoint `request` asks for, exactly (else `Refused`)."""
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
        raise Refused(
            404,
            "not_found_error",
            "evolve-action gateway: not a request an agent session may make "
            f"(served: {served or 'nothing: no credential is configured'})",
        )

    async def _forward(self, request: Any, session: _Session, endpoint: Endpoint, web: Any) -> Any:
        from aiohttp import ClientError, web_exceptions

        upstream = self._routes[endpoint.route]
        if (request.content_length or 0) > MAX_BODY_BYTES:
            raise Refused(413, "request_too_large", _too_large())
        try:
            raw = await request.read()
        except web_exceptions.HTTPRequestEntityTooLarge:
            raise Refused(413, "request_too_large", _too_large()) from None
        body, forwarded = canonical(raw)
        model = body.get("model")
        model = model.strip() if isinstance(model, str) else ""
        granted = granted_model(session.models, model)
        if granted is None and not session.pinned and model:
            # A session started without a model (the CLI's default: the listing capture, whose
            # gateway fronts the scripted server) is pinned to the first model it asks for.
            session.models[model] = session.pricing or pricing_for(model)
            session.pinned, granted = True, model
        if granted is None:
            raise Refused(
                403,
                "permission_error",
                f"evolve-action gateway: model {model!r} is not this session's "
                f"(granted: {', '.join(session.models)})",
            )
        pricing = session.models[granted]
        if pricing is None:
            raise Refused(400, "invalid_request_error", unpriced_message(granted, endpoint.route))
        reserve = relying = 0.0
        if endpoint.generates:
            worst = worst_case(body, len(forwarded), pricing)
            try:
                lowered = fit_output(body, endpoint.route, worst, self._spend)
            except Refused:
                # The prompt at the written price does not fit: a prefix this gateway saw cached
                # is reserved at the read price, one such request at a time (`_gateway_cache`).
                cached = self._cached.cached_bytes(body) if endpoint.route == "anthropic" else 0
                if not cached:
                    raise
                cheaper = worst_case(body, len(forwarded), pricing, cached_bytes=cached)
                relying, worst = worst.fixed_usd - cheaper.fixed_usd, cheaper
                lowered = fit_output(body, endpoint.route, worst, self._spend)
            if lowered:
                worst = dataclasses.replace(worst, output_tokens=output_bound(body))
                forwarded = json.dumps(body, ensure_ascii=False).encode("utf-8")
            reserve = worst.usd
        if not self._spend.reserve(reserve, relying=relying):
            spend = self._spend
            raise Refused(
                400,
                "budget_exceeded",
                f"evolve-action: max_cost_usd ({spend.limit_usd:g}) reached; the model gateway "
                f"refuses further requests (spent ${spend.total.cost_usd:.4f}, "
                f"${spend.reserved_usd:.4f} reserved by requests in flight, this one's worst "
                f"case ${reserve:.4f}"
                + (
                    "; another request relying on the prompt cache is in flight"
                    if relying and spend.relying_usd
                    else ""
                )
                + ")",
            )
        target = upstream.base_url + endpoint.path
        query = str(request.raw_path).partition("?")[2]
        if query:
            target += "?" + query
        headers = forwarded_headers(request.headers, upstream)
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
            self._spend.settle(reserve, used, relying=relying)
            if (
                endpoint.route == "anthropic"
                and 0 < status < 400
                and (used.cache_read_input_tokens or used.cache_creation_input_tokens)
            ):
                self._cached.record(body)  # its breakpoint prefixes are cached now

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
