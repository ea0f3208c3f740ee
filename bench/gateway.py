"""Benchmark: the model gateway's cost per request and per session, and its meter against the
usage the model reported.

1. Overhead per request: `--requests` streaming `POST /v1/messages` (the scripted model server
   answering at once, a Claude-sized SSE answer), sent one after another straight to the server
   and through the gateway; median and p95 wall time of each, and the difference.
2. Sessions and the meter: `--sessions` real Claude Code sessions (the bundled CLI, one after
   another, each a short multi-turn task: read, write, answer) through the gateway; the requests
   per session, and the gateway's metered tokens and dollars summed over the sessions against the
   usage the scripted server reported in its request log (they must agree exactly).

    .venv/bin/python bench/gateway.py [--requests 300] [--sessions 6] [--json]

Offline (127.0.0.1 only). Prints the 1-minute load average before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evolve_action import harness
from evolve_action.harness import ClaudeCodeHarness, SessionSpec
from evolve_action.harness._meter import Metered, ResponseMeter
from evolve_action.modelserver import ModelServer

MODEL = "claude-sonnet-4-6"
POLICY = """
rules:
  - name: task
    when: {prompt: 'task'}
    steps:
      - {tool: Write, input: {file_path: "{cwd}/notes.txt", content: "hello\\n"}}
      - {tool: Read, input: {file_path: "{cwd}/notes.txt"}}
      - "Done: notes.txt says hello."
  - {name: plain, text: "Hello there, this is a short answer from the scripted model."}
"""
BODY = json.dumps(
    {
        "model": MODEL,
        "max_tokens": 256,
        "stream": True,
        "messages": [{"role": "user", "content": "say hello " + "x" * 2000}],
    }
).encode()


def _post(url: str, key: str) -> float:
    request = urllib.request.Request(
        url,
        data=BODY,
        headers={
            "x-api-key": key,
            "content-type": "application/json",
            "anthropic-version": "2023-06-01",
        },
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as answer:
        answer.read()
    return time.perf_counter() - started


def _stats(walls: list[float]) -> dict[str, float]:
    ordered = sorted(walls)
    return {
        "median_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[int(len(ordered) * 0.95) - 1] * 1000,
    }


def overhead(server: ModelServer, requests: int) -> dict[str, Any]:
    env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-scripted"}
    with harness.gateways():
        proxy = harness.acquire_gateway(env)
        with proxy.session(MODEL) as grant:
            for _ in range(20):  # warm both paths (connections, the server's policy cache)
                _post(f"{server.base_url}/v1/messages", "sk-scripted")
                _post(f"{grant.anthropic_base_url}/v1/messages", grant.token)
            direct, gated = [], []
            for _ in range(requests):  # interleaved: load changes hit both alike
                direct.append(_post(f"{server.base_url}/v1/messages", "sk-scripted"))
                gated.append(_post(f"{grant.anthropic_base_url}/v1/messages", grant.token))
    d, g = _stats(direct), _stats(gated)
    return {
        "requests": requests,
        "direct": d,
        "gateway": g,
        "added_median_ms": g["median_ms"] - d["median_ms"],
    }


def _reported(entries: list[dict[str, Any]]) -> Metered:
    """What the scripted server said each answer used (its request log), metered the same way."""
    total = Metered()
    for entry in entries:
        usage = entry.get("usage")
        if not isinstance(usage, dict) or entry.get("path") != "/v1/messages":
            continue
        meter = ResponseMeter(content_type="application/json", status=200)
        meter.feed(json.dumps({"model": entry.get("model") or MODEL, "usage": usage}).encode())
        total = total + meter.result()
    return total


async def _sessions(env: dict[str, str], count: int) -> tuple[Metered, list[float]]:
    runner = ClaudeCodeHarness(env)
    metered, walls = Metered(), []
    for i in range(count):
        with tempfile.TemporaryDirectory(prefix="bench-gw.") as ws:
            spec = SessionSpec(
                prompt=f"task {i}: write notes", workspace=Path(ws), model=MODEL, max_turns=6
            )
            started = time.perf_counter()
            transcript = await runner.run(spec)
            walls.append(time.perf_counter() - started)
            if transcript.error is not None:
                raise SystemExit(f"session {i} failed: {transcript.error_message}")
            metered = metered + (transcript.metered or Metered())
    return metered, walls


def sessions(server: ModelServer, count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-gw-home.") as home:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": "sk-scripted",
        }
        before = len(server.requests)
        with harness.scratch(), harness.gateways(), harness.confined(env):
            metered, walls = asyncio.run(_sessions(env, count))
        reported = _reported(server.requests[before:])
    return {
        "sessions": count,
        "session_median_s": statistics.median(walls),
        "requests_per_session": metered.requests / count,
        "metered": _fields(metered),
        "reported": _fields(reported),
        "agree": _fields(metered) == _fields(reported),
    }


def _fields(m: Metered) -> dict[str, Any]:
    return {
        "requests": m.requests,
        "input_tokens": m.input_tokens,
        "output_tokens": m.output_tokens,
        "cache_read_input_tokens": m.cache_read_input_tokens,
        "cache_creation_input_tokens": m.cache_creation_input_tokens,
        "cost_usd": round(m.cost_usd, 6),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with ModelServer(POLICY, port=0) as server:
        over = overhead(server, args.requests)
        sess = sessions(server, args.sessions)
    load_after = os.getloadavg()[0]
    result = {"load": [load_before, load_after], "overhead": over, "sessions": sess}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"load {load_before:.2f} -> {load_after:.2f}")
    print(
        f"per request ({over['requests']}, interleaved): direct median {over['direct']['median_ms']:.2f} ms"
        f" p95 {over['direct']['p95_ms']:.2f} ms; through the gateway median"
        f" {over['gateway']['median_ms']:.2f} ms p95 {over['gateway']['p95_ms']:.2f} ms;"
        f" added {over['added_median_ms']:.2f} ms"
    )
    print(
        f"sessions: {sess['sessions']}, median {sess['session_median_s']:.2f} s, "
        f"{sess['requests_per_session']:.1f} requests each -> about "
        f"{sess['requests_per_session'] * over['added_median_ms']:.1f} ms of gateway per session"
    )
    print(f"metered by the gateway: {sess['metered']}")
    print(f"reported by the model:  {sess['reported']}")
    print(f"agree: {sess['agree']}")


if __name__ == "__main__":
    main()
