"""The HTTP side of the scripted model server: a threaded loopback server and its request log.

Owns: `ModelServer` (start/stop in a background thread, `base_url`, `requests`, `set_policy`) and the
request handler, which routes `/v1/messages` (Anthropic) and `/v1/responses` (OpenAI Responses, for
Codex) to the same engine. Guarantees: concurrent requests are served in parallel (one thread each, HTTP/1.1
keep-alive, streaming responses with chunked transfer encoding); every request to the API paths is
logged once, in arrival order, with the rule that answered; the JSONL log is flushed per line.
Never does: listen on anything but the given host (loopback by default); read the environment.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import IO, Any
from urllib.parse import urlsplit

from evolve_action.errors import EnvironmentProblem
from evolve_action.modelserver._cache import PromptCache, cache_blocks
from evolve_action.modelserver._engine import Decision, Engine, working_directory
from evolve_action.modelserver._policy import Fault, Policy
from evolve_action.modelserver._request import RequestView, count_tokens, view
from evolve_action.modelserver._responses import (
    RESPONSES_PATH,
    codex_calls,
    openai_error_body,
    response_events,
    responses_usage,
    responses_view,
)
from evolve_action.modelserver._wire import (
    encode_event,
    error_body,
    message_id,
    message_json,
    sse_events,
    usage_for,
)

log = logging.getLogger(__name__)

LOGGED_HEADERS = (
    "user-agent",
    "anthropic-version",
    "anthropic-beta",
    "x-app",
    "x-stainless-lang",
    "x-stainless-retry-count",
    "x-claude-code-session-id",
    "originator",
    "session-id",
    "openai-beta",
)
"""Request headers copied into each log entry."""

DEFAULT_MODEL = "claude-sonnet-4-5"
"""Model id reported when a request names none."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    owner: ModelServer

    def get_request(self) -> tuple[socket.socket, Any]:
        """Accept a connection with Nagle's algorithm off: small keep-alive answers go out at once."""
        conn, addr = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-response is normal here (timeouts, killed sessions): log quietly."""
        log.debug("model server: error while serving %s", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    server_version = "evolve-action-model-server"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        return None

    # -- plumbing ---------------------------------------------------------------------------------
    def _send_json(self, status: int, value: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(value, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_{self.server.owner._seq_peek()}")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Close the connection abruptly (no terminating chunk)."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- routes -----------------------------------------------------------------------------------
    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == RESPONSES_PATH and self.headers.get("upgrade", "").lower() == "websocket":
            # Codex tries a WebSocket first; 426 makes it use streaming HTTP at once.
            self._send_json(
                426, openai_error_body(426, "WebSocket is not supported: use HTTP streaming")
            )
        elif path in ("/", "/health", "/healthz"):
            self._send_json(200, {"status": "ok"})
        elif path == "/v1/models":
            refused = self.server.owner._engine.policy.auth_error
            if refused is not None:  # a revoked key: the OpenAI key check is refused too
                self._send_json(refused, openai_error_body(refused, "invalid api key (scripted)"))
                return
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [],
                    "has_more": False,
                    "first_id": None,
                    "last_id": None,
                },
            )
        else:
            self._send_json(404, error_body(404, f"no route for GET {path}"))

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        owner = self.server.owner
        parts = urlsplit(self.path)
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._send_json(400, error_body(400, "bad or missing content-length"))
            return
        raw = self.rfile.read(length) if length else b""
        headers = {h: self.headers[h] for h in LOGGED_HEADERS if self.headers.get(h) is not None}
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
        except ValueError as exc:
            owner._log(
                {
                    "path": parts.path,
                    "query": parts.query,
                    "headers": headers,
                    "status": 400,
                    "error": str(exc),
                }
            )
            self._send_json(400, error_body(400, f"invalid JSON body: {exc}"))
            return
        refused = owner._engine.policy.auth_error
        if refused is not None:  # a revoked key: every request is refused, counting included
            owner._log(
                {
                    "path": parts.path,
                    "query": parts.query,
                    "headers": headers,
                    "model": body.get("model"),
                    "status": refused,
                    "rule": "auth_error",
                    "body": body,
                }
            )
            message = "invalid x-api-key (scripted auth_error)"
            if parts.path == RESPONSES_PATH:
                self._send_json(refused, openai_error_body(refused, message))
            else:
                self._send_json(refused, error_body(refused, message))
            return
        if parts.path == "/v1/messages/count_tokens":
            tokens = count_tokens(body)
            owner._log(
                {
                    "path": parts.path,
                    "query": parts.query,
                    "headers": headers,
                    "model": body.get("model"),
                    "status": 200,
                    "rule": None,
                    "input_tokens": tokens,
                    "body": body,
                }
            )
            self._send_json(200, {"input_tokens": tokens})
            return
        if parts.path == RESPONSES_PATH:
            self._responses(body, parts.path, parts.query, headers)
            return
        if parts.path != "/v1/messages":
            owner._log(
                {
                    "path": parts.path,
                    "query": parts.query,
                    "headers": headers,
                    "status": 404,
                    "body": body,
                }
            )
            self._send_json(404, error_body(404, f"no route for POST {parts.path}"))
            return
        self._messages(body, parts.path, parts.query, headers)

    def _messages(
        self, body: dict[str, Any], path: str, query: str, headers: dict[str, str]
    ) -> None:
        owner = self.server.owner
        req = view(body, path=path, session=headers.get("x-claude-code-session-id"))
        engine = owner._engine
        decision = engine.decide(req)
        seq = owner._next_seq()
        model = decision.model or req.model or DEFAULT_MODEL
        split, ticket = owner.prompt_cache.lookup(model, cache_blocks(body))
        usage = usage_for(
            body,
            decision.blocks,
            turn=req.turn,
            cache=engine.policy.cache,
            override=decision.usage,
            split=split,
        )
        fault = decision.fault
        owner._log(_entry(seq, path, query, headers, req, decision, decision.blocks, usage, body))
        if decision.delay_ms:
            time.sleep(decision.delay_ms / 1000)
        if fault is not None and fault.status:
            ticket.abandoned()
        else:
            ticket.started()  # the answer starts now: what it wrote is readable from here on
        if fault is not None and fault.status:
            extra = _retry_headers(fault)
            if fault.status == 529:
                extra["x-should-retry"] = "true"
            self._send_json(fault.status, error_body(fault.status, fault.message), extra)
            return
        msg_id = message_id(body, seq)
        if not req.stream:
            if fault is not None and fault.disconnect:
                self._drop()
                return
            if fault is not None and fault.malformed:
                broken = b'{"id": "' + msg_id.encode() + b'", "type": "message", "content": ['
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(broken)))
                self.end_headers()
                self.wfile.write(broken)
                return
            result = message_json(
                msg_id=msg_id,
                model=model,
                blocks=decision.blocks,
                stop_reason=decision.stop_reason,
                usage=usage,
            )
            self._send_json(200, result)
            return
        events = sse_events(
            msg_id=msg_id,
            model=model,
            blocks=decision.blocks,
            stop_reason=decision.stop_reason,
            usage=usage,
        )
        self._stream(
            events,
            fault,
            ("request-id", f"req_{seq}"),
            cut=lambda name: name in ("content_block_delta", "message_delta"),
            broken=lambda name: '{"type": "content_block_delta", "index": ',
        )

    def _responses(
        self, body: dict[str, Any], path: str, query: str, headers: dict[str, str]
    ) -> None:
        """`POST /v1/responses` (what Codex sends): decide as for Claude Code, answer in SSE."""
        owner = self.server.owner
        req = responses_view(body, path=path, session=headers.get("session-id"))
        engine = owner._engine
        decision = engine.decide(req)
        seq = owner._next_seq()
        model = decision.model or req.model or DEFAULT_MODEL
        blocks = codex_calls(decision.blocks, req, working_directory(req))
        usage = responses_usage(
            body, blocks, turn=req.turn, cache=engine.policy.cache, override=decision.usage
        )
        fault = decision.fault
        owner._log(_entry(seq, path, query, headers, req, decision, blocks, usage, body))
        if decision.delay_ms:
            time.sleep(decision.delay_ms / 1000)
        if fault is not None and fault.status:
            self._send_json(
                fault.status, openai_error_body(fault.status, fault.message), _retry_headers(fault)
            )
            return
        events = response_events(seq=seq, model=model, blocks=blocks, usage=usage)
        if not req.stream:
            if fault is not None and fault.disconnect:
                self._drop()
                return
            self._send_json(200, events[-1][1]["response"])
            return
        self._stream(
            events,
            fault,
            ("x-request-id", f"req_{seq}"),
            cut=lambda name: name.endswith((".delta", "response.completed")),
            broken=lambda name: f'{{"type": "{name}", ',
        )

    def _stream(
        self,
        events: Sequence[tuple[str, Mapping[str, Any]]],
        fault: Fault | None,
        request_id: tuple[str, str],
        *,
        cut: Callable[[str], bool],
        broken: Callable[[str], str],
    ) -> None:
        """Send `events` as chunked SSE. A `disconnect` fault closes the connection after the first
        event `cut` selects; a `malformed` one sends that event's data as `broken(name)` (truncated
        JSON) instead, then closes."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header(*request_id)
        self.end_headers()
        try:
            for name, data in events:
                if fault is not None and cut(name):
                    if fault.disconnect:
                        self._chunk(encode_event(name, data))
                        self._drop()
                        return
                    if fault.malformed:
                        self._chunk(f"event: {name}\ndata: {broken(name)}\n\n".encode())
                        self._drop()
                        return
                self._chunk(encode_event(name, data))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def _entry(
    seq: int,
    path: str,
    query: str,
    headers: dict[str, str],
    req: RequestView,
    decision: Decision,
    blocks: tuple[Mapping[str, Any], ...],
    usage: Mapping[str, Any],
    body: dict[str, Any],
) -> dict[str, Any]:
    """One request-log entry of an answered request (see `ModelServer`), either dialect."""
    failed = decision.fault is not None and bool(decision.fault.status)
    return {
        "seq": seq,
        "session": req.session,
        "path": path,
        "query": query,
        "headers": headers,
        "model": req.model,
        "stream": req.stream,
        "turn": req.turn,
        "prompt": req.prompt,
        "last_user": req.last_user,
        "tools": list(req.tools),
        "skills": [s.name for s in req.skills],
        "forced_tool": req.forced_tool,
        "rule": decision.rule,
        "note": decision.note,
        "status": decision.fault.status if failed and decision.fault is not None else 200,
        "fault": _fault_name(decision),
        "stop_reason": None if failed else decision.stop_reason,
        "reply": [dict(b) for b in blocks],
        "usage": None if failed else usage,
        "body": body,
    }


def _retry_headers(fault: Fault) -> dict[str, str]:
    return {"retry-after": _fmt(fault.retry_after)} if fault.retry_after is not None else {}


def _fmt(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


def _fault_name(decision: Decision) -> str | None:
    f = decision.fault
    if f is None:
        return None
    if f.status:
        return f"status {f.status}"
    return "disconnect" if f.disconnect else "malformed"


class ModelServer:
    """The scripted Anthropic-compatible server, run in a background thread.

    Use as a context manager (or `start()`/`stop()`)::

        with ModelServer(Policy.from_yaml(text), port=0) as srv:
            client = anthropic.Anthropic(base_url=srv.base_url, api_key="x")

    `requests` lists one dict per request received on an API path, in arrival order. Keys for
    `/v1/messages`: `seq`, `path`, `query` (e.g. `beta=true`), `headers` (a few, see
    `LOGGED_HEADERS`), `model`, `stream`, `turn`, `prompt` (real user prompt), `last_user`, `tools`
    (offered tool names), `skills` (listed skill names), `forced_tool`, `rule` (name of the rule that
    answered, `default` if none, `faults[i]` for a global fault), `note`, `status` (HTTP status sent),
    `fault` (`"status 529"`, `"disconnect"`, `"malformed"` or None), `stop_reason`, `reply` (content
    blocks sent), `usage`, `body` (the request JSON). `count_tokens` entries have `path`, `model`,
    `status`, `input_tokens`, `body`.
    """

    def __init__(
        self,
        policy: Policy | Mapping[str, Any] | str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | str | None = None,
        log_bodies: bool = True,
        keep_requests: bool = True,
    ) -> None:
        """`policy` may be a `Policy`, a dict, YAML text or a `Path`; `port=0` picks a free port.

        `log_path` appends each request as one JSON line; `log_bodies=False` leaves request bodies out
        of that file (they stay in `requests`). `keep_requests=False` keeps nothing in memory
        (`requests` stays empty), for long-running servers such as the CLI's.
        """
        self._engine = Engine(Policy.coerce(policy))
        self.prompt_cache = PromptCache()
        """The server's prompt cache (one per server, as the API's is per organisation)."""
        self._host = host
        self._port = port
        self._log_path = Path(log_path) if log_path is not None else None
        self._log_bodies = log_bodies
        self._keep_requests = keep_requests
        self._log_file: IO[str] | None = None
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._seq = 0
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> ModelServer:
        """Bind and serve in a daemon thread; returns self. Idempotent.

        Raises `EnvironmentProblem` when the address is taken or the log file cannot be opened.
        """
        if self._httpd is not None:
            return self
        if self._log_path is not None:
            try:
                self._log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log_file = self._log_path.open("a", encoding="utf-8")
            except OSError as exc:
                raise EnvironmentProblem(
                    f"cannot open the request log: {exc.strerror or exc}",
                    path=self._log_path,
                    hint="pass a writable --log path",
                ) from exc
        try:
            httpd = _HTTPServer((self._host, self._port), _Handler)
        except OSError as exc:
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None
            raise EnvironmentProblem(
                f"cannot listen on {self._host}:{self._port}: {exc.strerror or exc}",
                hint="pick another --port, or 0 for a free one",
            ) from exc
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="model-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket and the log. Idempotent."""
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        with self._lock:
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted (used by the CLI)."""
        self.start()
        assert self._thread is not None
        try:
            while self._thread.is_alive():
                self._thread.join(0.5)
        finally:
            self.stop()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- public state -----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        """The bound port (after `start`)."""
        if self._httpd is None:
            raise RuntimeError("model server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL` or `anthropic.Anthropic(base_url=...)`."""
        return f"http://{self._host}:{self.port}"

    @property
    def policy(self) -> Policy:
        """The policy in force."""
        return self._engine.policy

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A snapshot of the request log (see the class docstring for the keys)."""
        with self._lock:
            return list(self._requests)

    def messages(self) -> list[dict[str, Any]]:
        """Only the `/v1/messages` entries of `requests`."""
        return [r for r in self.requests if r.get("path") == "/v1/messages"]

    def set_policy(self, policy: Policy | Mapping[str, Any] | str | Path) -> None:
        """Swap the policy (and reset its counters: `times`, `stop_after`, fault attempts)."""
        self._engine = Engine(Policy.coerce(policy))

    def clear(self) -> None:
        """Forget the logged requests (the JSONL file keeps them) and the prompt cache."""
        with self._lock:
            self._requests.clear()
        self.prompt_cache.clear()

    # -- internals --------------------------------------------------------------------------------
    def _next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def _seq_peek(self) -> int:
        return self._seq

    def _log(self, entry: dict[str, Any]) -> None:
        with self._lock:
            if self._keep_requests:
                self._requests.append(entry)
            if self._log_file is not None:
                shown = (
                    entry if self._log_bodies else {k: v for k, v in entry.items() if k != "body"}
                )
                self._log_file.write(json.dumps(shown, ensure_ascii=False) + "\n")
                self._log_file.flush()
