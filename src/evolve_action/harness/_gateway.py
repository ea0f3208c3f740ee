"""The model gateway: the one holder of the job's model credentials, a loopback HTTP proxy.

Owns: `Gateway` (one aiohttp server on `127.0.0.1`, in a thread of the job's own process, with
its own event loop), the per-session tokens it mints (`Grant`, from `Gateway.session()`), the
upstreams it forwards to (`Upstream`, `upstreams`: the Anthropic and OpenAI endpoints with the real
credential), the job's meter and hard cap (`Spend`), and the registry every harness asks
(`acquire`, `gateways`).

How a session uses it: the harness asks `acquire(environ)` for the gateway of that environment's
endpoints and credentials, opens a session (`Gateway.session()`), and gives the agent CLI only
the session's token (as `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`) and the gateway's address (as
`ANTHROPIC_BASE_URL` / Codex's `openai_base_url`). The gateway checks the token on every request,
drops every credential header the client sent, puts the real one on, and streams the request and
the response through unchanged (SSE included; a WebSocket upgrade is refused with 426, so Codex
falls back to HTTP streaming at once). When the session ends its token is revoked.

Guarantees:
- the real credential never leaves this process except in the header of a request to the
  configured upstream; a request without a live session token gets 401 and reaches nothing;
- a Messages request whose prompt prefix another request is writing waits (bounded) until that
  answer starts, so a wave of sessions writes the shared prefix once (`_warmup`);
- every response's usage and list-price cost (cache reads and writes included) is added to the
  session's and the job's `Metered` (`harness._meter`);
- with a cap (`Spend.limit_usd`), once the measured spend reaches it every later request is
  refused (HTTP 400, `budget_exceeded`) — a hard stop whatever the per-unit estimates said;
- an upstream 401/403, or an exhausted credit or quota, makes the gateway refuse every later
  request of every session with that same error (`Gateway.fatal` says it once), so a dead key
  stops the whole job at its sessions' next request instead of one session at a time;
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
import json
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

from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import _lifecycle as lifecycle
from evolve_action.harness import _procenv as procenv
from evolve_action.harness import _warmup
from evolve_action.harness._meter import Metered, ResponseMeter

__all__ = [
    "ANTHROPIC_PUBLIC_URL",
    "OPENAI_PUBLIC_URL",
    "Gateway",
    "Grant",
    "Spend",
    "Upstream",
    "acquire",
    "gateways",
    "spend",
    "upstreams",
]

ANTHROPIC_PUBLIC_URL = "https://api.anthropic.com"
OPENAI_PUBLIC_URL = "https://api.openai.com/v1"
_OAUTH_BETA = "oauth-2025-04-20"
_START_TIMEOUT = 30.0
# Never forwarded: hop-by-hop headers, the client's credentials, what aiohttp sets itself.
_DROP_REQUEST = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "authorization",
        "x-api-key",
        "api-key",
        "openai-organization",
        "openai-project",
        "accept-encoding",
        "cookie",
    }
)
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


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where one route forwards, and the credential headers it adds (never shown by `repr`)."""

    route: str
    """`anthropic` or `openai`: the first path segment of the gateway's URL."""
    base_url: str
    headers: tuple[tuple[str, str], ...] = field(repr=False, default=())


def upstreams(environ: Mapping[str, str]) -> dict[str, Upstream]:
    """The routes of `environ`'s endpoints and credentials (the same choice the judge makes).

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
    anthropic_base = (environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_PUBLIC_URL).strip().rstrip("/")
    chosen = procenv.chosen_credential(environ)
    headers: tuple[tuple[str, str], ...] = ()
    if chosen is not None:
        name, value = chosen
        if name.endswith("_API_KEY"):
            headers = (("x-api-key", value),)
        else:
            headers = (("authorization", f"Bearer {value}"),)
            if "OAUTH" in name:
                headers += (("anthropic-beta", _OAUTH_BETA),)
    out["anthropic"] = Upstream("anthropic", anthropic_base, headers)
    openai = procenv.openai_credential(environ)
    out["openai"] = Upstream(
        "openai",
        procenv.openai_base_url(environ) or OPENAI_PUBLIC_URL,
        (("authorization", f"Bearer {openai[1]}"),) if openai is not None else (),
    )
    return out


@dataclass(slots=True)
class Spend:
    """The job's measured spend through every gateway, and its hard cap."""

    limit_usd: float | None = None
    total: Metered = field(default_factory=Metered)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, used: Metered) -> None:
        """Count one response."""
        with self._lock:
            self.total = self.total + used

    def exhausted(self) -> bool:
        """True once the measured spend reached the cap."""
        return self.limit_usd is not None and self.total.cost_usd >= self.limit_usd


@dataclass(frozen=True, slots=True)
class Grant:
    """One session's access: a token valid only at this gateway, only while the session runs."""

    token: str = field(repr=False)
    anthropic_base_url: str
    openai_base_url: str


@dataclass(slots=True)
class _Session:
    used: Metered = field(default_factory=Metered)


class Gateway:
    """The loopback proxy holding one set of upstream credentials (see the module docstring)."""

    def __init__(self, routes: Mapping[str, Upstream], *, spend: Spend | None = None) -> None:
        self._routes = dict(routes)
        self._spend = spend if spend is not None else Spend()
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self._fatal: tuple[int, str, str] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._client: Any = None
        self._warmup = _warmup.Warmup()
        self.port = 0
        self._lock_fd: int | None = None
        self.socket_path: Path | None = None
        """The same server on a Unix socket (mode 0666, in a root-owned 0711 directory): what a
        sandbox with a network namespace of its own reaches through its forwarder."""

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
        """Stop serving (every token is revoked); idempotent."""
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
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:  # reported by start(); a closed gateway refuses everything
            self._error = exc
            self._ready.set()
        finally:
            loop.close()

    async def _main(self) -> None:
        from aiohttp import ClientSession, ClientTimeout, TCPConnector, web

        self._stopped = asyncio.Event()
        app = web.Application(client_max_size=64 << 20)
        app.router.add_route("*", "/{route}/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, reuse_address=True)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        self.port = int(sockets[0].getsockname()[1])
        if self.socket_path is not None:
            await web.UnixSite(runner, str(self.socket_path)).start()
            # the agent uids connect; the directory is 0711
            await asyncio.to_thread(self.socket_path.chmod, 0o666)
        timeout = ClientTimeout(total=None, sock_connect=30, sock_read=None)
        async with ClientSession(
            timeout=timeout,
            connector=TCPConnector(limit=0),
            auto_decompress=False,
            trust_env=False,
        ) as client:
            self._client = client
            self._ready.set()
            await self._stopped.wait()
            await runner.cleanup()

    # -- sessions ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def session(self) -> Iterator[Grant]:
        """A fresh token for one agent session, revoked when the block ends."""
        token = "evolve-session-" + secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[token] = _Session()
        try:
            yield Grant(
                token=token,
                anthropic_base_url=f"{self.url}/anthropic",
                openai_base_url=f"{self.url}/openai",
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
        """The upstream's refusal that stopped every session ("" while none has)."""
        return self._fatal[2] if self._fatal is not None else ""

    # -- the proxy ---------------------------------------------------------------------------------

    async def _handle(self, request: Any) -> Any:
        from aiohttp import ClientError, web

        upstream = self._routes.get(request.match_info["route"])
        if upstream is None:
            return _error(web, 404, "not_found_error", "unknown gateway route")
        if request.headers.get("upgrade", "").lower() == "websocket":
            # First, token or not: Codex's WebSocket attempt carries none, and a 401 here would
            # read as a refused key; 426 makes it use HTTP streaming (which carries the token).
            return _error(web, 426, "invalid_request_error", "WebSocket is not supported")
        token = _presented_token(request.headers)
        with self._lock:
            session = self._sessions.get(token) if token else None
        if session is None:
            return _error(
                web, 401, "authentication_error", "evolve-action gateway: no live session token"
            )
        if self._fatal is not None:
            status, refusal, _ = self._fatal
            return web.Response(status=status, body=refusal, content_type="application/json")
        if self._spend.exhausted():
            return _error(
                web,
                400,
                "budget_exceeded",
                f"evolve-action: max_cost_usd ({self._spend.limit_usd:g}) reached; "
                "the model gateway refuses further requests",
            )
        target = upstream.base_url + "/" + request.match_info["tail"]
        if request.query_string:
            target += "?" + request.query_string
        headers: dict[str, str] = {
            k: v for k, v in request.headers.items() if k.lower() not in _DROP_REQUEST
        }
        headers.update(upstream.headers)
        headers["accept-encoding"] = "identity"
        body: Any = request.content if request.body_exists else None
        answered: Callable[[bool], None] = _warmup.nothing
        if request.match_info["tail"].endswith("v1/messages") and request.body_exists:
            body = await request.read()  # warm-up: a prefix another request writes waits for it
            answered = await self._warmup.hold(body)
        try:
            async with self._client.request(
                request.method, target, headers=headers, data=body, allow_redirects=False
            ) as answer:
                answered(answer.status < 400)
                response = web.StreamResponse(status=answer.status, reason=answer.reason)
                for name, value in answer.headers.items():
                    if name.lower() not in _DROP_RESPONSE:
                        response.headers.add(name, value)
                meter = ResponseMeter(
                    content_type=answer.headers.get("content-type", ""), status=answer.status
                )
                await response.prepare(request)
                counted = False
                try:
                    async for chunk in answer.content.iter_any():
                        meter.feed(chunk)
                        await response.write(chunk)
                    # Counted before the client sees the end of the body: once a session's
                    # last answer is complete, its usage (and the job's spend) includes it.
                    self._count(session, meter, answer.status)
                    counted = True
                    await response.write_eof()
                finally:
                    if not counted:
                        self._count(session, meter, answer.status)
                return response
        except (ClientError, TimeoutError, OSError) as exc:
            answered(False)
            return _error(
                web, 502, "api_error", f"evolve-action gateway: upstream unreachable: {exc}"
            )

    def _count(self, session: _Session, meter: ResponseMeter, status: int) -> None:
        used = meter.result()
        with self._lock:
            session.used = session.used + used
        self._spend.add(used)
        self._note_refusal(status, meter.error_text())

    def _note_refusal(self, status: int, text: str) -> None:
        """An upstream refusal that no retry can fix becomes the answer to every later request."""
        if self._fatal is not None or status < 400:
            return
        if status in (401, 403) or (status in (400, 402, 429) and _CREDIT_RE.search(text)):
            message = _message_of(text) or f"HTTP {status}"
            body = (
                text.encode("utf-8")
                if text.strip().startswith("{")
                else _error_body("authentication_error", message)
            )
            self._fatal = (status, body.decode("utf-8", "replace"), f"HTTP {status}: {message}")


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
