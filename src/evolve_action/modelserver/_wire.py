"""The Anthropic Messages wire format: JSON messages, SSE event sequences, error bodies, usage.

Owns: `message_json`, `sse_events`, `error_body`, `usage_for`. Guarantees: the shapes and event order
of the real API (`message_start`, `content_block_start`, `ping`, `content_block_delta` with
`text_delta`/`input_json_delta`, `content_block_stop`, `message_delta` with `stop_reason` and usage,
`message_stop`); usage numbers are a deterministic function of the request and reply. Never does: I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from evolve_action.modelserver._cache import CacheSplit
from evolve_action.modelserver._policy import ERROR_STATUSES, Usage
from evolve_action.modelserver._request import estimate_tokens, split_tokens

TEXT_CHUNK = 24
"""Characters per `text_delta`."""
JSON_CHUNK = 48
"""Characters per `input_json_delta`."""


def dumps(value: Any) -> str:
    """Compact JSON (raw non-ASCII) as tool inputs travel on the wire and rules match them."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def message_id(body: Mapping[str, Any], seq: int) -> str:
    """A stable message id from the request's sequence number."""
    return "msg_" + hashlib.sha256(f"{seq}".encode()).hexdigest()[:24]


def usage_for(
    body: Mapping[str, Any],
    blocks: tuple[Mapping[str, Any], ...],
    *,
    turn: int,
    cache: bool,
    override: Usage | None = None,
    split: CacheSplit | None = None,
) -> dict[str, int]:
    """Deterministic usage of one reply.

    prefix = tokens of system + tools, messages = tokens of the messages (see `split_tokens`).
    With `cache` (the default): turn 1 → `cache_creation_input_tokens` = prefix, later turns →
    `cache_read_input_tokens` = prefix; `input_tokens` = messages (at least 1). Without cache:
    `input_tokens` = prefix + messages. `output_tokens` = ceil(chars of reply / 4), at least 1, where a
    text block counts its text and a tool use its name plus compact JSON input. A rule's `usage`
    replaces any field it sets. With `split` (the server's prompt cache, `_cache`) and `cache`, the
    input is what the cache found: read, written, and the rest as `input_tokens` (at least 1).
    """
    prefix, msgs = split_tokens(body)
    out_chars = "".join(
        str(b.get("text", ""))
        if b.get("type") == "text"
        else str(b.get("name", "")) + dumps(b.get("input", {}))
        for b in blocks
    )
    if cache and split is not None:
        usage = {
            "input_tokens": max(1, split.plain),
            "cache_creation_input_tokens": split.written,
            "cache_read_input_tokens": split.read,
        }
    elif cache:
        usage = {
            "input_tokens": max(1, msgs),
            "cache_creation_input_tokens": prefix if turn <= 1 else 0,
            "cache_read_input_tokens": prefix if turn > 1 else 0,
        }
    else:
        usage = {
            "input_tokens": max(1, prefix + msgs),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
    usage["output_tokens"] = max(1, estimate_tokens(out_chars))
    if override is not None:
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(override, key)
            if value is not None:
                usage[key] = value
    return usage


def message_json(
    *,
    msg_id: str,
    model: str,
    blocks: tuple[Mapping[str, Any], ...],
    stop_reason: str,
    usage: Mapping[str, int],
) -> dict[str, Any]:
    """A complete non-streaming Messages response."""
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(b) for b in blocks],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["input_tokens"],
            "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
            "cache_read_input_tokens": usage["cache_read_input_tokens"],
            "output_tokens": usage["output_tokens"],
            "service_tier": "standard",
        },
    }


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def sse_events(
    *,
    msg_id: str,
    model: str,
    blocks: tuple[Mapping[str, Any], ...],
    stop_reason: str,
    usage: Mapping[str, int],
) -> list[tuple[str, dict[str, Any]]]:
    """The (event name, data) sequence of a streaming response, as the real API sends it."""
    start_usage = {
        "input_tokens": usage["input_tokens"],
        "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
        "cache_read_input_tokens": usage["cache_read_input_tokens"],
        "output_tokens": 1,
        "service_tier": "standard",
    }
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        if block.get("type") == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": ""}] + [
                {"type": "input_json_delta", "partial_json": c}
                for c in _chunks(dumps(block.get("input", {})), JSON_CHUNK)
            ]
        else:
            start = {"type": "text", "text": ""}
            deltas = [
                {"type": "text_delta", "text": c}
                for c in _chunks(str(block.get("text", "")), TEXT_CHUNK)
            ]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        if index == 0:
            events.append(("ping", {"type": "ping"}))
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    if not blocks:
        events.append(("ping", {"type": "ping"}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {
                    "input_tokens": usage["input_tokens"],
                    "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                    "cache_read_input_tokens": usage["cache_read_input_tokens"],
                    "output_tokens": usage["output_tokens"],
                },
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def encode_event(name: str, data: Mapping[str, Any]) -> bytes:
    """One SSE frame: `event: <name>\\ndata: <json>\\n\\n`."""
    return f"event: {name}\ndata: {dumps(data)}\n\n".encode()


def error_body(status: int, message: str) -> dict[str, Any]:
    """An Anthropic-shaped error body for an HTTP status."""
    kind = ERROR_STATUSES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}
