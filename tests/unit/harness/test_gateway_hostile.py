"""The model gateway against a session that tries everything a session token might buy (issue 37).

A real gateway (aiohttp, its own thread) in front of an in-process stub upstream (aiohttp too,
in a thread of its own) that records every request that reaches it, whatever its method and path,
and answers as the test scripts it: JSON, SSE written chunk by chunk, a stream cut short, an
answer held until the test releases it. The clients are raw sockets and `urllib` requests holding
a session's token, as an agent's shell would. Each case is one line of docs/gateway.md's threat
model; each fails against the gateway before issue 37 (a plain proxy).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import json
import logging
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from evolve_action.catalog import Pricing
from evolve_action.harness import _gateway as gateway
from evolve_action.harness import _gateway_limits as gateway_limits
from evolve_action.harness._meter import pricing_for

KEY = "sk-ant-test-HostileSuite-0123456789abcdefXYZ"
OPENAI_KEY = "sk-openai-test-HostileSuite-9876543210zyx"
MODEL = "claude-sonnet-4-6"
SONNET = pricing_for(MODEL)
assert SONNET is not None


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def stream(model: str = MODEL, output: int = 500, **usage: Any) -> list[bytes]:
    """An Anthropic SSE answer, one event per chunk."""
    start = {"input_tokens": 1000, "output_tokens": 1, **usage}
    return [
        sse({"type": "message_start", "message": {"model": model, "usage": start}}),
        sse({"type": "content_block_delta", "delta": {"type": "text_delta", "text": "hi"}}),
        sse({"type": "message_delta", "usage": {"output_tokens": output, **usage}}),
        sse({"type": "message_stop"}),
    ]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Answer:
    status: int = 200
    content_type: str = "text/event-stream"
    chunks: list[bytes] = field(default_factory=stream)
    headers: dict[str, str] = field(default_factory=dict)
    cut: bool = False
    """Close the connection after the chunks, without the end of the body."""
    hold: threading.Event | None = None
    """Wait for it before answering."""


class Stub:
    """The upstream: records every request; `answer(seen)` decides each answer."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.answer: Callable[[Seen], Answer] = lambda _: Answer()
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.port = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _start(self) -> int:
        from aiohttp import web

        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    async def _handle(self, request: Any) -> Any:
        from aiohttp import web

        seen = Seen(request.method, str(request.raw_path), dict(request.headers), b"")
        seen.body = await request.read()
        self.seen.append(seen)
        answer = self.answer(seen)
        if answer.hold is not None:
            await asyncio.to_thread(answer.hold.wait, 30)
        response = web.StreamResponse(status=answer.status)
        response.content_type = answer.content_type
        for name, value in answer.headers.items():
            response.headers[name] = value
        await response.prepare(request)
        for chunk in answer.chunks:
            await response.write(chunk)
            await asyncio.sleep(0)
        if answer.cut:
            assert request.transport is not None
            request.transport.abort()
            return response
        await response.write_eof()
        return response

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture
def stub() -> Iterator[Stub]:
    up = Stub()
    yield up
    up.stop()


def start(stub: Stub, *, openai: bool = False, limit_usd: float | None = None, **env: str) -> Any:
    environ = {"ANTHROPIC_BASE_URL": stub.url, "ANTHROPIC_API_KEY": KEY, **env}
    if openai:
        environ |= {"OPENAI_BASE_URL": f"{stub.url}/v1", "OPENAI_API_KEY": OPENAI_KEY}
    spend = gateway.Spend(limit_usd=limit_usd)
    return gateway.Gateway(gateway.upstreams(environ), spend=spend).start()


@pytest.fixture
def gw(stub: Stub) -> Iterator[gateway.Gateway]:
    proxy = start(stub)
    yield proxy
    proxy.close()


def body(model: str = MODEL, max_tokens: int = 100, **extra: Any) -> bytes:
    return json.dumps({"model": model, "max_tokens": max_tokens, "messages": [], **extra}).encode()


def prompt_usd(data: bytes, rate: float = 3e-6) -> float:
    """A reservation's prompt: a token per four bytes, priced as a cache write."""
    return -(-len(data) // 4) * rate * 1.25


def call(
    url: str,
    token: str,
    data: bytes | None = None,
    *,
    method: str = "POST",
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(
        url,
        data=data if data is not None else (body() if method == "POST" else None),
        method=method,
        headers={"x-api-key": token, "content-type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read(), dict(answer.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def raw_request(port: int, head: str, payload: bytes = b"") -> tuple[int, bytes]:
    """Send exactly `head` (a request line and headers) and `payload`; the status and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + payload)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data.partition(b"\r\n\r\n")[2]


# -- 1. an allowlist, not a proxy ------------------------------------------------------------------

FORBIDDEN = [
    ("GET", "/anthropic/v1/models"),
    ("GET", "/anthropic/v1/files"),
    ("DELETE", "/anthropic/v1/files/file_123"),
    ("POST", "/anthropic/v1/files"),
    ("POST", "/anthropic/v1/messages/batches"),
    ("GET", "/anthropic/v1/messages/batches/b1/results"),
    ("POST", "/anthropic/v1/skills"),
    ("GET", "/anthropic/v1/organizations/me"),
    ("GET", "/anthropic/v1/organizations/api_keys"),
    ("POST", "/anthropic/v1/complete"),
    ("GET", "/anthropic/v1/messages"),
    ("PUT", "/anthropic/v1/messages"),
    ("POST", "/anthropic/v1/messages?beta=true&x=1"),
    ("POST", "/anthropic/v1/messages?beta=false"),
    ("POST", "/anthropic/v1/messages/"),
    ("POST", "/anthropic//v1/messages"),
    ("POST", "/anthropic/v1/./messages"),
    ("POST", "/anthropic/v1/x/../messages"),
    ("POST", "/anthropic/v1/messages/count_tokens/../batches"),
    ("POST", "/anthropic/v1%2Fmessages"),
    ("POST", "/anthropic/v1/%6Dessages"),
    ("POST", "/anthropic/v1/messages%3Fbeta=true"),
    ("POST", "/openai/../../steal"),
    ("POST", "/openai/chat/completions"),
    ("POST", "/v1/messages"),
    ("POST", "http://127.0.0.1:1/anthropic/v1/messages"),
]


@pytest.mark.parametrize(("method", "target"), FORBIDDEN)
def test_only_allowlisted_requests_are_forwarded(
    gw: gateway.Gateway, stub: Stub, method: str, target: str
) -> None:
    with gw.session(MODEL) as grant:
        head = (
            f"{method} {target} HTTP/1.1\nHost: 127.0.0.1\nx-api-key: {grant.token}\n"
            f"content-type: application/json\ncontent-length: {len(body())}\nconnection: close\n"
        )
        status, answer = raw_request(gw.port, head, body())
    assert status in (400, 404), answer  # answered here …
    assert stub.seen == []  # … and nothing reached the upstream
    if status == 404:
        assert b"evolve-action gateway: not a request an agent session may make" in answer


def test_the_allowlisted_requests_reach_their_configured_path(stub: Stub) -> None:
    proxy = start(stub, openai=True, ANTHROPIC_BASE_URL=f"{stub.url}/base")
    try:
        with proxy.session(MODEL) as grant:
            for path in ("/v1/messages?beta=true", "/v1/messages", "/v1/messages/count_tokens"):
                assert call(f"{grant.anthropic_base_url}{path}", grant.token)[0] == 200
        with proxy.session("gpt-5.4", route="openai") as grant:
            data = json.dumps({"model": "gpt-5.4", "input": "hi"}).encode()
            assert call(f"{grant.openai_base_url}/responses", grant.token, data)[0] == 200
    finally:
        proxy.close()
    assert [s.path for s in stub.seen] == [
        "/base/v1/messages?beta=true",
        "/base/v1/messages",
        "/base/v1/messages/count_tokens",
        "/v1/responses",
    ]
    assert all(s.method == "POST" for s in stub.seen)


def test_a_route_exists_only_with_its_credential(gw: gateway.Gateway, stub: Stub) -> None:
    """No OpenAI key configured: `/openai/…` is answered here, and no refusal it could provoke
    stops anything."""
    with gw.session(MODEL) as grant:
        for method, path in (("GET", "/openai/models"), ("POST", "/openai/responses")):
            status, answer, _ = call(f"{gw.url}{path}", grant.token, method=method)
            assert status == 404 and b"served: POST /anthropic/v1/messages" in answer
        assert call(f"{grant.anthropic_base_url}/v1/messages", grant.token)[0] == 200
    assert [s.path for s in stub.seen] == ["/v1/messages"] and gw.fatal == ""


def test_a_token_is_valid_only_on_its_own_route(stub: Stub) -> None:
    proxy = start(stub, openai=True)
    try:
        with proxy.session(MODEL) as claude, proxy.session("gpt-5.4", route="openai") as codex:
            data = json.dumps({"model": "gpt-5.4", "input": "hi"}).encode()
            status, answer, _ = call(f"{proxy.url}/openai/responses", claude.token, data)
            assert status == 403 and b"valid only on /anthropic" in answer
            status, _, _ = call(f"{proxy.url}/anthropic/v1/messages", codex.token)
            assert status == 403
    finally:
        proxy.close()
    assert stub.seen == []


def test_only_allowlisted_headers_and_betas_pass(gw: gateway.Gateway, stub: Stub) -> None:
    hostile = {
        "X-Forwarded-For": "10.0.0.1",
        "X-Forwarded-Host": "evil.example",
        "Forwarded": "for=10.0.0.1;host=evil.example",
        "X-Original-URL": "/v1/files",
        "X-Rewrite-URL": "/v1/files",
        "Authorization": "Bearer stolen",
        "Cookie": "a=b",
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "claude-code-20250219,files-api-2025-04-14,context-1m-2025-08-07,"
        "message-batches-2024-09-24,mcp-servers-2025-12-04",
        "x-stainless-lang": "js",
    }
    with gw.session(MODEL) as grant:
        assert (
            call(f"{grant.anthropic_base_url}/v1/messages", grant.token, headers=hostile)[0] == 200
        )
    sent = {k.lower(): v for k, v in stub.seen[0].headers.items()}
    for name in (
        "x-forwarded-for",
        "x-forwarded-host",
        "forwarded",
        "x-original-url",
        "x-rewrite-url",
        "authorization",
        "cookie",
    ):
        assert name not in sent, name
    assert sent["anthropic-beta"] == "claude-code-20250219"
    assert sent["x-api-key"] == KEY and sent["anthropic-version"] == "2023-06-01"
    assert sent["x-stainless-lang"] == "js"
    assert sent["host"] == f"127.0.0.1:{stub.port}"


# -- 2. pinned models ------------------------------------------------------------------------------


def test_a_session_may_use_its_model_and_the_cli_small_model_only(
    gw: gateway.Gateway, stub: Stub
) -> None:
    with gw.session(MODEL) as grant:
        url = f"{grant.anthropic_base_url}/v1/messages"
        assert call(url, grant.token, body(MODEL))[0] == 200
        assert call(url, grant.token, body(MODEL + "-20260101"))[0] == 200  # a dated release
        assert call(url, grant.token, body(gateway.SMALL_MODEL))[0] == 200
        for other in ("claude-opus-5", "claude-sonnet-4-6-evil", "", "claude-sonnet-4"):
            status, answer, _ = call(url, grant.token, body(other))
            assert status == 403 and b"is not this session's" in answer, other
        assert call(url, grant.token, b"not json")[0] == 400
    assert len(stub.seen) == 3


def test_an_unpriced_model_is_refused_unless_its_price_is_given(
    gw: gateway.Gateway, stub: Stub
) -> None:
    model = "claude-opus-4-1-20250805"
    assert pricing_for(model) is None
    with gw.session(model) as grant:
        status, answer, _ = call(
            f"{grant.anthropic_base_url}/v1/messages", grant.token, body(model)
        )
    assert status == 400 and model.encode() in answer and b"input_per_mtok" in answer
    assert stub.seen == []
    stub.answer = lambda _: Answer(chunks=stream(model, output=1000, input_tokens=0))
    price = Pricing(input_per_mtok=10, output_per_mtok=100)
    with gw.session(model, pricing=price) as grant:
        assert call(f"{grant.anthropic_base_url}/v1/messages", grant.token, body(model))[0] == 200
        used = gw.used(grant)
    assert used.cost_usd == pytest.approx(1000 * 100e-6) and used.unpriced == 0


# -- 3. a budget by reservation --------------------------------------------------------------------


def test_concurrent_requests_cannot_overshoot_the_cap(stub: Stub) -> None:
    release = threading.Event()
    stub.answer = lambda _: Answer(hold=release)
    data = body(max_tokens=300)
    worst = prompt_usd(data) + 300 * 15e-6
    cap = 3.5 * worst  # three requests' worst case fit; what is left is too little for a fourth
    proxy = start(stub, limit_usd=cap)
    try:
        with proxy.session(MODEL) as grant:
            url = f"{grant.anthropic_base_url}/v1/messages"
            with concurrent.futures.ThreadPoolExecutor(25) as pool:
                futures = [pool.submit(call, url, grant.token, data) for _ in range(25)]
                refused = [f.result()[0] for f in futures[:0]]
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:  # until every request was decided
                    refused = [f.result()[0] for f in futures if f.done()]
                    if len(refused) + len(stub.seen) >= 25:
                        break
                    time.sleep(0.01)
                assert len(stub.seen) == 3 and refused == [400] * 22
                release.set()
                statuses = sorted(f.result()[0] for f in futures)
        assert statuses == [200] * 3 + [400] * 22
        assert proxy._spend.total.cost_usd == pytest.approx(3 * (1000 * 3e-6 + 500 * 15e-6))
        assert proxy._spend.reserved_usd == pytest.approx(0)
    finally:
        release.set()
        proxy.close()


def test_a_long_max_tokens_is_reserved_in_full(stub: Stub) -> None:
    """128,000 output tokens of Opus ($3.20) under a $1 cap: the request goes out with the
    output bound the cap allows, so even a whole answer stays within it."""
    release = threading.Event()
    stub.answer = lambda _: Answer(hold=release)
    proxy = start(stub, limit_usd=1.0)
    try:
        with proxy.session("claude-opus-5") as grant:
            url = f"{grant.anthropic_base_url}/v1/messages"
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pending = pool.submit(call, url, grant.token, body("claude-opus-5", 128_000))
                deadline = time.monotonic() + 30
                while not stub.seen and time.monotonic() < deadline:
                    time.sleep(0.01)
                assert proxy._spend.reserved_usd <= 1.0
                # what is left cannot buy another request, however short
                status, answer, _ = call(url, grant.token, body("claude-opus-5", 10))
                assert status == 400 and b"budget_exceeded" in answer
                release.set()
                assert pending.result()[0] == 200
    finally:
        release.set()
        proxy.close()
    sent = json.loads(stub.seen[0].body)
    data = body("claude-opus-5", 128_000)
    assert sent["max_tokens"] == int((1.0 - prompt_usd(data, 5e-6)) / 25e-6)
    assert len(stub.seen) == 1


def test_near_the_cap_a_thinking_budget_that_no_longer_fits_is_refused(stub: Stub) -> None:
    proxy = start(stub, limit_usd=0.05)
    try:
        with proxy.session(MODEL) as grant:
            data = body(max_tokens=32_000, thinking={"type": "enabled", "budget_tokens": 8000})
            status, answer, _ = call(f"{grant.anthropic_base_url}/v1/messages", grant.token, data)
    finally:
        proxy.close()
    assert status == 400 and b"budget_exceeded" in answer and stub.seen == []


def test_a_stream_cut_short_is_charged_its_reservation(gw: gateway.Gateway, stub: Stub) -> None:
    stub.answer = lambda _: Answer(chunks=stream()[:1], cut=True)  # message_start, then gone
    with gw.session(MODEL) as grant:
        data = body(max_tokens=11_000)
        with pytest.raises(http.client.IncompleteRead):  # cut short for the client too
            call(f"{grant.anthropic_base_url}/v1/messages", grant.token, data)
        used = gw.used(grant)
    assert used.cost_usd == pytest.approx(prompt_usd(data) + 11_000 * 15e-6)


def test_a_client_that_hangs_up_is_charged_its_reservation(gw: gateway.Gateway, stub: Stub) -> None:
    hold = threading.Event()
    stub.answer = lambda _: Answer(hold=hold)
    data = body(max_tokens=11_000)
    with gw.session(MODEL) as grant:
        head = (
            f"POST /anthropic/v1/messages HTTP/1.1\nHost: x\nx-api-key: {grant.token}\n"
            f"content-length: {len(data)}\n"
        )
        with socket.create_connection(("127.0.0.1", gw.port), timeout=30) as conn:
            conn.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + data)
            deadline = time.monotonic() + 30
            while not stub.seen and time.monotonic() < deadline:
                time.sleep(0.01)
        hold.set()  # the client is gone before the answer streams
        deadline = time.monotonic() + 30
        while not gw.used(grant).requests and time.monotonic() < deadline:
            time.sleep(0.01)
        used = gw.used(grant)
    assert used.cost_usd == pytest.approx(prompt_usd(data) + 11_000 * 15e-6)


def test_server_tools_are_priced_or_refused(gw: gateway.Gateway, stub: Stub) -> None:
    stub.answer = lambda _: Answer(
        chunks=stream(output=100, server_tool_use={"web_search_requests": 3})
    )
    search = [{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]
    with gw.session(MODEL) as grant:
        url = f"{grant.anthropic_base_url}/v1/messages"
        assert call(url, grant.token, body(tools=search))[0] == 200
        used = gw.used(grant)
        for kind in ("code_execution_20250825", "mcp_toolset"):
            status, answer, _ = call(url, grant.token, body(tools=[{"type": kind, "name": "x"}]))
            assert status == 403 and kind.encode() in answer
        servers = [{"type": "url", "url": "https://evil.example/mcp", "name": "e"}]
        assert call(url, grant.token, body(mcp_servers=servers))[0] == 403
    assert used.server_tool_requests == 3
    assert used.cost_usd == pytest.approx(1000 * 3e-6 + 100 * 15e-6 + 3 * 0.01)
    assert len(stub.seen) == 1


def test_long_context_is_priced_at_its_rates(gw: gateway.Gateway, stub: Stub) -> None:
    stub.answer = lambda _: Answer(chunks=stream(output=1000, cache_read_input_tokens=250_000))
    with gw.session(MODEL) as grant:
        call(f"{grant.anthropic_base_url}/v1/messages", grant.token)
        used = gw.used(grant)
    assert used.cost_usd == pytest.approx(1000 * 6e-6 + 250_000 * 6e-6 * 0.1 + 1000 * 22.5e-6)


def test_a_request_body_is_bounded(stub: Stub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gateway, "MAX_BODY_BYTES", 1 << 20)
    proxy = start(stub)
    try:
        with proxy.session(MODEL) as grant:
            big = body(system="x" * (2 << 20))
            status, _, _ = call(f"{grant.anthropic_base_url}/v1/messages", grant.token, big)
            assert status == 413
            head = (
                f"POST /anthropic/v1/messages HTTP/1.1\nHost: x\nx-api-key: {grant.token}\n"
                "transfer-encoding: chunked\nconnection: close\n"
            )
            chunk = b"x" * 65536
            payload = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(40))
            status, _ = raw_request(proxy.port, head, payload + b"0\r\n\r\n")
            assert status == 413
    finally:
        proxy.close()
    assert stub.seen == []


# -- 4. a dead key is decided by the gateway -------------------------------------------------------


def test_a_provoked_refusal_stays_with_its_request(gw: gateway.Gateway, stub: Stub) -> None:
    """The upstream refuses one session's request (401, 403, a credit message), but the gateway's
    own request is answered: every other request still works."""
    refusals = iter(
        [
            (401, b'{"type":"error","error":{"type":"authentication_error","message":"no"}}'),
            (403, b'{"type":"error","error":{"type":"permission_error","message":"no"}}'),
            (400, b'{"type":"error","error":{"message":"Your credit balance is too low"}}'),
        ]
    )

    def answer(seen: Seen) -> Answer:
        if b'"max_tokens": 1,' in seen.body:  # the gateway's own check: the key works
            return Answer(content_type="application/json", chunks=[b"{}"])
        if b"provoke" in seen.body:
            status, text = next(refusals)
            return Answer(status=status, content_type="application/json", chunks=[text])
        return Answer()

    stub.answer = answer
    with gw.session(MODEL) as one, gw.session(MODEL) as two:
        for expected in (401, 403, 400):
            status, _, _ = call(
                f"{one.anthropic_base_url}/v1/messages", one.token, body(system="provoke")
            )
            assert status == expected
            assert call(f"{two.anthropic_base_url}/v1/messages", two.token)[0] == 200
    assert gw.fatal == ""


def test_a_confirmed_dead_key_stops_every_session_with_the_gateways_own_text(
    gw: gateway.Gateway, stub: Stub
) -> None:
    echo = json.dumps(
        {"type": "error", "error": {"type": "authentication_error", "message": f"bad key {KEY}"}}
    ).encode()
    stub.answer = lambda _: Answer(status=401, content_type="application/json", chunks=[echo])
    with gw.session(MODEL) as one, gw.session(MODEL) as two:
        first = call(f"{one.anthropic_base_url}/v1/messages", one.token)
        second = call(f"{two.anthropic_base_url}/v1/messages", two.token)
    for status, answer, _ in (first, second):
        assert status == 401 and b"refused this job's credential" in answer
        assert KEY.encode() not in answer and b"bad key" not in answer
    assert len(stub.seen) == 2  # the session's request and the gateway's own; not the second
    assert KEY not in gw.fatal and "bad key" in gw.fatal


# -- 6. answers scrubbed ---------------------------------------------------------------------------


def test_answers_that_echo_the_key_are_scrubbed(stub: Stub) -> None:
    proxy = start(stub, openai=True)
    echoed = f'{{"error": {{"message": "key {KEY} / Bearer {OPENAI_KEY}"}}}}'.encode()
    stream_echo = sse(
        {"type": "content_block_delta", "delta": {"type": "text_delta", "text": f"k={KEY}"}}
    )
    answers = iter(
        [
            Answer(status=500, content_type="application/json", chunks=[echoed]),
            Answer(status=400, content_type="application/json", chunks=[echoed]),
            # the key split across chunks, one byte at a time near it
            Answer(
                chunks=[
                    *stream()[:1],
                    *[stream_echo[i : i + 1] for i in range(len(stream_echo))],
                    *stream()[1:],
                ],
                headers={"x-echo": f"Bearer {KEY}", "x-openai": OPENAI_KEY},
            ),
        ]
    )
    stub.answer = lambda _: next(answers)
    try:
        with proxy.session(MODEL) as grant:
            got = [call(f"{grant.anthropic_base_url}/v1/messages", grant.token) for _ in range(3)]
    finally:
        proxy.close()
    assert [g[0] for g in got] == [500, 400, 200]
    for _, answer, headers in got:
        text = answer + json.dumps(headers).encode()
        for secret in (KEY, OPENAI_KEY):
            assert secret.encode() not in text
    assert b"[redacted by evolve-action]" in got[2][1] and b"message_stop" in got[2][1]
    assert got[2][2]["x-echo"] == "Bearer [redacted by evolve-action]"


@pytest.mark.parametrize("size", [1, 2, 3, 7, 40])
def test_the_scrubber_finds_a_secret_split_anywhere(size: int) -> None:
    secrets = ("abcdefghij0123", "Bearer zzzzzzzzzz")
    text = b"start abcdefghij0123 mid abcdefghij012 end abcdefghij0123Bearer zzzzzzzzzz!"
    scrub = gateway.Scrubber(secrets)
    out = b"".join(scrub.feed(text[i : i + size]) for i in range(0, len(text), size))
    out += scrub.flush()
    redacted = b"[redacted by evolve-action]"
    assert out == (b"start " + redacted + b" mid abcdefghij012 end " + redacted + redacted + b"!")


# -- 5. not starvable ------------------------------------------------------------------------------


def test_a_connection_flood_leaves_the_gateway_serving(
    stub: Stub, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(gateway_limits, "MAX_CONNECTIONS", 16)
    proxy = start(stub)
    flood: list[socket.socket] = []
    try:
        with caplog.at_level(logging.DEBUG):
            for _ in range(200):  # half-sent requests, no token needed
                conn = socket.create_connection(("127.0.0.1", proxy.port), timeout=30)
                conn.sendall(b"POST /anthropic/v1/mess")
                flood.append(conn)
            with proxy.session(MODEL) as grant:
                assert call(f"{grant.anthropic_base_url}/v1/messages", grant.token)[0] == 200
            assert proxy.connections <= 16
            closed = 0
            for conn in flood:  # the gateway closed the flood's connections (oldest first)
                conn.settimeout(30)
                try:
                    closed += conn.recv(1) == b""
                except OSError:
                    closed += 1
                if closed >= len(flood) - 16:
                    break
            assert closed >= len(flood) - 16
        assert len(caplog.records) <= 3, [r.getMessage() for r in caplog.records]
    finally:
        for conn in flood:
            conn.close()
        proxy.close()


def test_an_unfinished_request_head_times_out(
    gw: gateway.Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gateway_limits, "HEADER_TIMEOUT", 0.2)
    with socket.create_connection(("127.0.0.1", gw.port), timeout=30) as conn:
        conn.sendall(b"POST /anthropic/v1/messages HTTP/1.1\r\nHost: x\r\n")
        assert conn.recv(1) == b""  # closed by the gateway, well within the socket's 30 s


def test_one_session_cannot_hold_every_connection(
    stub: Stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gateway, "MAX_CONNECTIONS_PER_TOKEN", 2)
    release = threading.Event()
    stub.answer = lambda _: Answer(hold=release)
    proxy = start(stub)
    try:
        with proxy.session(MODEL) as grant, concurrent.futures.ThreadPoolExecutor(2) as pool:
            url = f"{grant.anthropic_base_url}/v1/messages"
            held = [pool.submit(call, url, grant.token) for _ in range(2)]
            deadline = time.monotonic() + 30
            while len(stub.seen) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert call(url, grant.token)[0] == 429
            release.set()
            assert [f.result()[0] for f in held] == [200, 200]
    finally:
        release.set()
        proxy.close()


def test_the_soft_file_limit_is_raised_to_the_hard_one() -> None:
    code = (
        "import resource\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))\n"
        "from evolve_action.harness._gateway import raise_file_limit\n"
        "raise_file_limit()\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE) == (hard, hard) or hard == -1)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
    assert resource.getrlimit(resource.RLIMIT_NOFILE)  # this process is untouched by the check


# -- 7. cancellation, 8. proxies -------------------------------------------------------------------


def test_closing_cuts_a_request_in_flight(stub: Stub) -> None:
    hold = threading.Event()
    stub.answer = lambda _: Answer(hold=hold)
    proxy = start(stub)
    try:
        with proxy.session(MODEL) as grant, concurrent.futures.ThreadPoolExecutor(1) as pool:
            pending = pool.submit(call, f"{grant.anthropic_base_url}/v1/messages", grant.token)
            deadline = time.monotonic() + 30
            while not stub.seen and time.monotonic() < deadline:
                time.sleep(0.01)
            began = time.monotonic()
            proxy.close()
            took = time.monotonic() - began
            with pytest.raises((urllib.error.URLError, OSError, ConnectionError)):
                pending.result(timeout=30)
        assert took < 2.0
    finally:
        hold.set()
        proxy.close()


def test_the_upstream_is_reached_through_the_jobs_proxy(stub: Stub) -> None:
    """`HTTPS_PROXY`/`HTTP_PROXY` of the job carry the gateway's upstream requests; `NO_PROXY`
    exempts a host."""
    env = {"ANTHROPIC_BASE_URL": "http://api.anthropic.invalid", "HTTP_PROXY": stub.url}
    proxy = start(stub, **env)
    try:
        with proxy.session(MODEL) as grant:
            assert call(f"{grant.anthropic_base_url}/v1/messages", grant.token)[0] == 200
    finally:
        proxy.close()
    assert stub.seen[0].path == "http://api.anthropic.invalid/v1/messages"
    routes = gateway.upstreams({**env, "ANTHROPIC_API_KEY": KEY, "NO_PROXY": "localhost,.invalid"})
    assert routes["anthropic"].proxy == ""
    routes = gateway.upstreams({"ANTHROPIC_API_KEY": KEY, "HTTPS_PROXY": "http://proxy:3128"})
    assert routes["anthropic"].proxy == "http://proxy:3128"


@pytest.mark.parametrize(
    "data",
    [
        b'{"model": "claude-sonnet-4-6", "model": "claude-opus-5", "max_tokens": 10}',
        b'{"model": "claude-sonnet-4-6", "max_tokens": 10, "max_tokens": 128000}',
        b'{"model": "claude-sonnet-4-6", "max_tokens": 1e9}',
        b'{"model": "claude-sonnet-4-6", "max_tokens": NaN}',
        b'{"model": "claude-sonnet-4-6", "max_tokens": true}',
        b'["claude-sonnet-4-6"]',
    ],
)
def test_a_body_the_upstream_could_read_otherwise_is_refused(
    gw: gateway.Gateway, stub: Stub, data: bytes
) -> None:
    with gw.session(MODEL) as grant:
        status, answer, _ = call(f"{grant.anthropic_base_url}/v1/messages", grant.token, data)
    assert status == 400 and b"request body refused" in answer
    assert stub.seen == []


def test_the_upstream_reads_the_body_the_gateway_checked(gw: gateway.Gateway, stub: Stub) -> None:
    data = (
        b'\n{"model":"claude-sonnet-4-6" , "max_tokens": 10, "system": "caf\\u00e9 \xe2\x98\x95"}'
    )
    with gw.session(MODEL) as grant:
        assert call(f"{grant.anthropic_base_url}/v1/messages", grant.token, data)[0] == 200
    assert json.loads(stub.seen[0].body) == json.loads(data)
    assert stub.seen[0].body == json.dumps(json.loads(data), ensure_ascii=False).encode()


def test_a_session_without_a_model_is_pinned_to_its_first(gw: gateway.Gateway, stub: Stub) -> None:
    """The listing capture starts the CLI with its default model (`""`), against the scripted
    server, priced by the caller: the first model asked for is the session's, and only it."""
    free = Pricing(input_per_mtok=0, output_per_mtok=0)
    with gw.session("", pricing=free) as grant:
        url = f"{grant.anthropic_base_url}/v1/messages"
        assert call(url, grant.token, body("claude-opus-5-5"))[0] == 200
        assert call(url, grant.token, body("claude-opus-5"))[0] == 403
        assert gw.used(grant).cost_usd == 0
    with gw.session("") as grant:  # no price given: the catalog's, or refused
        status, answer, _ = call(
            f"{grant.anthropic_base_url}/v1/messages", grant.token, body("x-1")
        )
        assert status == 400 and b"'x-1' has no price" in answer


def test_idle_keep_alive_connections_cannot_keep_a_session_out(
    stub: Stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gateway_limits, "MAX_CONNECTIONS", 16)
    proxy = start(stub)
    held: list[socket.socket] = []
    try:
        for _ in range(40):  # a whole (refused) request each, then idle, kept alive
            conn = socket.create_connection(("127.0.0.1", proxy.port), timeout=30)
            conn.sendall(
                b"POST /anthropic/v1/messages HTTP/1.1\r\nHost: x\r\ncontent-length: 0\r\n\r\n"
            )
            held.append(conn)
        for conn in held[-16:]:
            assert conn.recv(12) in (b"HTTP/1.1 401", b"")
        with proxy.session(MODEL) as grant:
            assert call(f"{grant.anthropic_base_url}/v1/messages", grant.token)[0] == 200
        assert proxy.connections <= 16
    finally:
        for conn in held:
            conn.close()
        proxy.close()


def cached_body(message: str, *, system: str = "S" * 40_000, max_tokens: int = 300) -> bytes:
    """A Claude Code-shaped request: the per-request billing line, a long system prompt with a
    breakpoint (the prefix every request shares), one user message with a breakpoint."""
    return json.dumps(
        {
            "model": MODEL,
            "max_tokens": max_tokens,
            "system": [
                {"type": "text", "text": f"x-anthropic-billing-header: cc_version=1; {message}"},
                {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}},
            ],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": message, "cache_control": {"type": "ephemeral"}}
                    ],
                }
            ],
        }
    ).encode()


PREFIX_TOKENS = 10_000  # the system prompt (40,000 bytes) as the answers' usage counts it
WROTE = stream(input_tokens=10, cache_creation_input_tokens=PREFIX_TOKENS, output=100)
READ = stream(input_tokens=10, cache_read_input_tokens=PREFIX_TOKENS, output=100)
WROTE_USD = 10 * 3e-6 + PREFIX_TOKENS * 3.75e-6 + 100 * 15e-6


def test_a_prefix_seen_cached_is_reserved_at_the_read_price(stub: Stub) -> None:
    """Near the cap a request whose prompt at the written price no longer fits goes out when the
    gateway saw its prefix cached (the read price fits); one whose prefix it never saw does not."""
    stub.answer = lambda seen: Answer(chunks=WROTE if len(stub.seen) == 1 else READ)
    first = cached_body("first question")
    full = prompt_usd(first) + 256 * 15e-6  # the least a written prompt reserves
    cap = WROTE_USD + 0.03  # after the first answer: less room than `full`, more than a read
    assert cap - WROTE_USD < full
    proxy = start(stub, limit_usd=cap)
    try:
        with proxy.session(MODEL) as grant:
            url = f"{grant.anthropic_base_url}/v1/messages"
            assert call(url, grant.token, first)[0] == 200
            status, answer, _ = call(url, grant.token, cached_body("second question"))
            assert status == 200, answer
            other = cached_body("third question", system="T" * 40_000)  # never seen cached
            status, answer, _ = call(url, grant.token, other)
            assert status == 400 and b"budget_exceeded" in answer
        assert len(stub.seen) == 2
        assert proxy._spend.total.cost_usd <= cap
        assert proxy._spend.reserved_usd == pytest.approx(0) and proxy._spend.relying_usd == 0
    finally:
        proxy.close()


def test_one_request_at_a_time_relies_on_the_cache_and_a_miss_passes_the_cap_by_its_difference(
    stub: Stub,
) -> None:
    """Two requests near the cap that fit only at the read price: one goes out, the other is
    refused while it is in flight. The API misses the cache after all (the prefix written again):
    the cap is passed by no more than that one request's prefix at the written-minus-read price."""
    release = threading.Event()
    answers = [Answer(chunks=WROTE), Answer(chunks=WROTE, hold=release)]
    stub.answer = lambda _: answers.pop(0) if answers else Answer(chunks=READ)
    cap = WROTE_USD + 0.03  # two read-priced reservations fit, one written one does not
    proxy = start(stub, limit_usd=cap)
    try:
        with proxy.session(MODEL) as grant:
            url = f"{grant.anthropic_base_url}/v1/messages"
            assert call(url, grant.token, cached_body("first question"))[0] == 200
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pending = pool.submit(call, url, grant.token, cached_body("second question"))
                deadline = time.monotonic() + 30
                while len(stub.seen) < 2 and time.monotonic() < deadline:
                    time.sleep(0.01)
                relying = proxy._spend.relying_usd
                system = {
                    "type": "text",
                    "text": "S" * 40_000,
                    "cache_control": {"type": "ephemeral"},
                }
                prefix_tokens = -(-len(json.dumps(system)) // 4)  # the request bytes seen cached
                assert relying == pytest.approx(prefix_tokens * (1.25 - 0.1) * 3e-6)
                assert proxy._spend.room() >= proxy._spend.reserved_usd  # a second one would fit
                status, answer, _ = call(url, grant.token, cached_body("third question"))
                assert status == 400 and b"budget_exceeded" in answer
                release.set()
                assert pending.result()[0] == 200
        spent = proxy._spend.total.cost_usd
        assert cap < spent <= cap + relying  # the miss, within its documented bound
        assert proxy._spend.relying_usd == 0 and proxy._spend.reserved_usd == pytest.approx(0)
        assert len(stub.seen) == 2
    finally:
        release.set()
        proxy.close()
