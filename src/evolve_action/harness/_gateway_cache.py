"""What the model gateway knows the API's prompt cache holds: prefixes its own answers cached.

A reservation prices a request's prompt as written to the cache (×1.25 the input price), the most
it can cost. Most of a Claude Code request is a prefix an earlier request of the job already
cached (Claude Code's ~22k-token tools and system prompt, then the conversation so far), which the
API bills as a read (×0.1). When the cap leaves too little room for the written price, the gateway
may reserve such a prefix at the read price (`_gateway_rules.worst_case`, `cached_bytes`) — but
only for a prefix it saw cached, and only one such request at a time (`Spend.reserve`), so a cache
miss passes the cap by at most one request's prefix at the difference (docs/gateway.md).

The API's rules, as its prompt-caching documentation gives them (the scripted model server models
the same ones, `modelserver._cache`): the prompt is read as blocks, tools then system then each
content block of each message; a block with `cache_control` is a breakpoint, and an entry is keyed
by the exact prefix up to and including it (and the model); a breakpoint finds an entry at its own
block or at one of the `LOOKBACK` blocks before it; the per-request `x-anthropic-billing-header`
system line is not part of any key; an entry lives 5 minutes from its last use.

Owns: `CachedPrefixes` (one per gateway): `record` a request whose answer reported prompt-cache
tokens (every breakpoint prefix of it is cached now), `cached_bytes` of a new request (the request
bytes of the longest such prefix a breakpoint of it will find).
Guarantees: a prefix counts as cached for `FRESH_SECONDS` (4 minutes, inside the API's 5) after
the answer that read or wrote it; the model, and for message blocks the request's `tool_choice`
and `thinking` (which the API says invalidate cached messages), are part of the key; memory is
bounded (`MAX_KEPT` prefixes); thread-safe; never raises for odd request shapes.
Never does: I/O, change a request, decide whether a request may pass (the gateway does).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from evolve_action.harness._warmup import FRESH_SECONDS

__all__ = ["LOOKBACK", "MAX_KEPT", "CachedPrefixes", "prefixes"]

LOOKBACK = 20
"""Blocks before a breakpoint at which the API still finds an earlier entry."""
MAX_KEPT = 4096
"""Cached prefixes remembered at most (the oldest are forgotten first)."""
_BILLING = "x-anthropic-billing-header:"


def _bare(block: Any) -> Any:
    return (
        {k: v for k, v in block.items() if k != "cache_control"}
        if isinstance(block, dict)
        else block
    )


def _breakpoint(block: Any) -> bool:
    return isinstance(block, dict) and isinstance(block.get("cache_control"), dict)


def prefixes(body: Mapping[str, Any]) -> list[tuple[str, int, bool]]:
    """Each keyed block of a Messages request in cache order: (the key of the prefix up to and
    including it, the request bytes of that prefix, whether the block is a breakpoint)."""
    blocks: list[tuple[str, Any]] = []
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else ():
        blocks.append(("tool", tool))
    system = body.get("system")
    for part in [system] if isinstance(system, str) else system if isinstance(system, list) else ():
        text = part if isinstance(part, str) else part.get("text") if isinstance(part, dict) else ""
        if not (isinstance(text, str) and text.startswith(_BILLING)):
            blocks.append(("system", part))
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        parts = (
            [content] if isinstance(content, str) else content if isinstance(content, list) else []
        )
        for i, part in enumerate(parts):
            blocks.append((f"{message.get('role')}:{i == 0}", part))
    digest = hashlib.sha256(json.dumps(body.get("model"), ensure_ascii=False).encode())
    out: list[tuple[str, int, bool]] = []
    size = 0
    in_messages = False
    for place, block in blocks:
        if not in_messages and place not in ("tool", "system"):
            in_messages = True  # these invalidate cached messages, not the tools and system
            seed = [body.get("tool_choice"), body.get("thinking")]
            digest.update(json.dumps(seed, sort_keys=True, ensure_ascii=False).encode())
        text = json.dumps([place, _bare(block)], sort_keys=True, ensure_ascii=False)
        encoded = text.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
        size += len(json.dumps(block, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        out.append((digest.copy().hexdigest(), size, _breakpoint(block)))
    return out


class CachedPrefixes:
    """The prefixes this gateway's answers cached (see the module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def record(self, body: Mapping[str, Any]) -> None:
        """An answer to `body` reported prompt-cache tokens: each of its breakpoint prefixes is
        cached (written or read, which refreshes it) as of now."""
        try:
            keys = [key for key, _, point in prefixes(body) if point]
        except (TypeError, ValueError, RecursionError):
            return
        now = self._clock()
        with self._lock:
            for key in keys:
                self._seen.pop(key, None)
                self._seen[key] = now  # newest last
            while len(self._seen) > MAX_KEPT:
                del self._seen[next(iter(self._seen))]

    def cached_bytes(self, body: Mapping[str, Any]) -> int:
        """The request bytes of the longest prefix of `body` seen cached within `FRESH_SECONDS`
        that a breakpoint of `body` finds (at most `LOOKBACK` blocks after it); 0 when none."""
        try:
            blocks = prefixes(body)
        except (TypeError, ValueError, RecursionError):
            return 0
        points = [i for i, (_, _, point) in enumerate(blocks) if point]
        now = self._clock()
        with self._lock:
            for i in range(len(blocks) - 1, -1, -1):
                seen = self._seen.get(blocks[i][0])
                if (
                    seen is not None
                    and now - seen < FRESH_SECONDS
                    and any(i <= p <= i + LOOKBACK for p in points)
                ):
                    return blocks[i][1]
        return 0
