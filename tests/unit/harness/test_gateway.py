"""The model gateway: tokens, credentials, streaming, metering, the hard cap and a dead key.

A real gateway (aiohttp, its own thread) in front of a small loopback upstream that records
what reaches it and answers as told; clients are plain `urllib` requests.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from evolve_action.harness import _gateway as gateway
from evolve_action.harness._meter import Metered, ResponseMeter, metered_cost_usd, pricing_for

KEY = "sk-ant-test-UpstreamOnly-1234567890abcdef"


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


STREAM = sse(
    {
        "type": "message_start",
        "message": {
            "model": "claude-sonnet-4-6",
            "usage": {
                "input_tokens": 1000,
                "cache_creation_input_tokens": 2000,
                "cache_read_input_tokens": 10000,
                "output_tokens": 1,
            },
        },
    },
    {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "hi"}},
    {"type": "message_delta", "usage": {"output_tokens": 500}},
    {"type": "message_stop"},
)


class Upstream:
    """Records each request; answers with `status`, `content_type` and `body`."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str], bytes]] = []
        self.status, self.content_type, self.body = 200, "text/event-stream", STREAM
        self.release: threading.Event | None = None
        seen, outer = self.seen, self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                seen.append((self.path, dict(self.headers.items()), self.rfile.read(length)))
                self.send_response(outer.status)
                self.send_header("content-type", outer.content_type)
                self.send_header("connection", "close")
                self.end_headers()
                body = outer.body
                if outer.release is not None:  # first half, wait for the test, then the rest
                    half = len(body) // 2
                    self.wfile.write(body[:half])
                    self.wfile.flush()
                    outer.release.wait(30)
                    body = body[half:]
                self.wfile.write(body)
                self.wfile.flush()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join()
        self.server.server_close()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    up = Upstream()
    yield up
    up.stop()


@pytest.fixture
def proxy(upstream: Upstream) -> Iterator[gateway.Gateway]:
    routes = gateway.upstreams({"ANTHROPIC_BASE_URL": upstream.url, "ANTHROPIC_API_KEY": KEY})
    with gateway.gateways():
        gw = gateway.Gateway(routes, spend=gateway.spend()).start()
        yield gw
        gw.close()


def post(url: str, token: str, *, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url,
        data=b'{"model":"claude-sonnet-4-6","max_tokens":10,"messages":[]}',
        headers={"x-api-key": token, "content-type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_a_session_token_reaches_the_upstream_with_the_real_key_only(
    proxy: gateway.Gateway, upstream: Upstream
) -> None:
    with proxy.session("claude-sonnet-4-6") as grant:
        assert grant.token.startswith("evolve-session-") and KEY not in repr(grant)
        status, body = post(
            f"{grant.anthropic_base_url}/v1/messages?beta=true",
            grant.token,
            headers={"authorization": "Bearer stolen", "anthropic-version": "2023-06-01"},
        )
        assert (status, body) == (200, STREAM)  # byte for byte
        path, headers, sent = upstream.seen[-1]
        lowered = {k.lower(): v for k, v in headers.items()}
        assert path == "/v1/messages?beta=true"
        assert lowered["x-api-key"] == KEY and "authorization" not in lowered
        assert lowered["anthropic-version"] == "2023-06-01"
        assert grant.token not in json.dumps(headers) and b"claude-sonnet-4-6" in sent
        used = proxy.used(grant)
    assert (used.requests, used.input_tokens, used.output_tokens) == (1, 1000, 500)
    assert (used.cache_creation_input_tokens, used.cache_read_input_tokens) == (2000, 10000)
    # sonnet: $3 in, $15 out per million; cache writes x1.25, reads x0.1
    assert used.cost_usd == pytest.approx((1000 + 2500 + 1000) * 3e-6 + 500 * 15e-6)
    assert gateway.spend().total.cost_usd == pytest.approx(used.cost_usd)


def test_no_token_a_wrong_token_and_an_ended_session_reach_nothing(
    proxy: gateway.Gateway, upstream: Upstream
) -> None:
    base = f"{proxy.url}/anthropic/v1/messages"
    assert post(base, "")[0] == 401
    assert post(base, KEY)[0] == 401  # not even the real key opens it
    with proxy.session("claude-sonnet-4-6") as grant:
        assert post(base, grant.token)[0] == 200
    assert post(base, grant.token)[0] == 401  # revoked with its session
    assert len(upstream.seen) == 1


def test_streams_without_buffering(proxy: gateway.Gateway, upstream: Upstream) -> None:
    upstream.release = threading.Event()
    with proxy.session("claude-sonnet-4-6") as grant:
        request = urllib.request.Request(
            f"{grant.anthropic_base_url}/v1/messages",
            data=b'{"model": "claude-sonnet-4-6", "max_tokens": 10}',
            headers={"x-api-key": grant.token},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            first = answer.read1(
                len(STREAM) // 2
            )  # arrives while the upstream still holds the rest
            assert first and STREAM.startswith(first)
            upstream.release.set()
            assert first + answer.read() == STREAM


def test_a_refused_key_stops_every_session_at_the_gateway(
    proxy: gateway.Gateway, upstream: Upstream
) -> None:
    upstream.status, upstream.content_type = 401, "application/json"
    upstream.body = (
        b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'
    )
    with proxy.session("claude-sonnet-4-6") as one, proxy.session("claude-sonnet-4-6") as two:
        assert post(f"{one.anthropic_base_url}/v1/messages", one.token)[0] == 401
        status, body = post(f"{two.anthropic_base_url}/v1/messages", two.token)
    # the gateway's own text, never the upstream's body
    assert status == 401 and b"refused this job's credential" in body
    assert b"invalid x-api-key" not in body
    # the session's request, then the gateway's own confirming request; the second session's
    # request never reached the upstream
    assert len(upstream.seen) == 2 and b'"max_tokens": 1' in upstream.seen[1][2]
    assert proxy.fatal.startswith("HTTP 401: the anthropic API refused the job's credential")
    assert proxy.fatal.endswith("invalid x-api-key")


def test_an_exhausted_credit_is_fatal_too(proxy: gateway.Gateway, upstream: Upstream) -> None:
    upstream.status, upstream.content_type = 400, "application/json"
    upstream.body = (
        b'{"type":"error","error":{"type":"invalid_request_error",'
        b'"message":"Your credit balance is too low to access the Anthropic API."}}'
    )
    with proxy.session("claude-sonnet-4-6") as grant:
        post(f"{grant.anthropic_base_url}/v1/messages", grant.token)
        post(f"{grant.anthropic_base_url}/v1/messages", grant.token)
    assert len(upstream.seen) == 2 and "credit balance" in proxy.fatal


def test_the_cost_cap_is_a_hard_stop(upstream: Upstream) -> None:
    routes = gateway.upstreams({"ANTHROPIC_BASE_URL": upstream.url, "ANTHROPIC_API_KEY": KEY})
    with gateway.gateways(limit_usd=0.001) as spend:
        gw = gateway.acquire({"ANTHROPIC_BASE_URL": upstream.url, "ANTHROPIC_API_KEY": KEY})
        assert gateway.acquire({"ANTHROPIC_BASE_URL": upstream.url, "ANTHROPIC_API_KEY": KEY}) is gw
        assert routes["anthropic"].base_url == upstream.url
        with gw.session("claude-sonnet-4-6") as grant:
            assert post(f"{grant.anthropic_base_url}/v1/messages", grant.token)[0] == 200
            status, body = post(f"{grant.anthropic_base_url}/v1/messages", grant.token)
        assert status == 400 and b"max_cost_usd (0.001) reached" in body
        assert spend.exhausted() and len(upstream.seen) == 1


def test_websocket_upgrades_are_refused(proxy: gateway.Gateway, upstream: Upstream) -> None:
    with proxy.session("claude-sonnet-4-6") as grant:
        status, _ = post(
            f"{grant.openai_base_url}/responses",
            grant.token,
            headers={"upgrade": "websocket", "connection": "Upgrade"},
        )
    assert status == 426 and not upstream.seen


# -- the meter (pure) ------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 7, 64, 10_000])
def test_the_meter_reads_sse_split_anywhere(size: int) -> None:
    meter = ResponseMeter(content_type="text/event-stream; charset=utf-8", status=200)
    for at in range(0, len(STREAM), size):
        meter.feed(STREAM[at : at + size])
    used = meter.result()
    assert (used.input_tokens, used.output_tokens, used.cache_read_input_tokens) == (
        1000,
        500,
        10000,
    )


def test_the_meter_reads_json_and_openai_responses() -> None:
    meter = ResponseMeter(content_type="application/json", status=200)
    meter.feed(
        json.dumps(
            {"model": "claude-sonnet-4-6", "usage": {"input_tokens": 10, "output_tokens": 3}}
        ).encode()
    )
    assert meter.result() == Metered(
        requests=1,
        input_tokens=10,
        output_tokens=3,
        cost_usd=metered_cost_usd(
            pricing_for("claude-sonnet-4-6"),
            input_tokens=10,
            output_tokens=3,  # type: ignore[arg-type]
        ),
    )
    done = {
        "type": "response.completed",
        "response": {
            "object": "response",
            "model": "gpt-5.4",
            "usage": {
                "input_tokens": 100,
                "input_tokens_details": {"cached_tokens": 60},
                "output_tokens": 7,
            },
        },
    }
    meter = ResponseMeter(content_type="text/event-stream", status=200)
    meter.feed(f"data: {json.dumps(done)}\n\n".encode())
    used = meter.result()
    assert (used.input_tokens, used.cache_read_input_tokens, used.output_tokens) == (40, 60, 7)


def test_the_meter_survives_garbage_and_errors() -> None:
    meter = ResponseMeter(content_type="text/event-stream", status=200)
    meter.feed(b"data: {not json\n\ndata: [1,2]\n\n" + b"x" * 100)
    assert meter.result() == Metered(requests=1)
    meter = ResponseMeter(content_type="application/json", status=500)
    meter.feed(b'{"error": "boom"}')
    assert meter.result() == Metered(requests=1) and meter.error_text() == '{"error": "boom"}'


def test_dated_model_ids_are_priced_and_unknown_ones_are_not() -> None:
    assert pricing_for("claude-sonnet-4-6-20260101") == pricing_for("claude-sonnet-4-6")
    assert pricing_for("no-such-model") is None
    meter = ResponseMeter(content_type="application/json", status=200)
    meter.feed(b'{"model": "no-such-model", "usage": {"input_tokens": 5, "output_tokens": 1}}')
    used = meter.result()
    assert used.unpriced == 1 and used.cost_usd == 0 and used.input_tokens == 5
