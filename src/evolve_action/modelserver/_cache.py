"""The prompt cache of the scripted model server, modelled on Anthropic's.

Owns: `PromptCache` (one per server: the API's cache is per organisation, not per session),
`cache_blocks` (a request as the cache sees it), `min_cacheable_tokens` and `CacheSplit`.

The rules (Anthropic's prompt-caching documentation):

- The prompt is read as blocks in the order tools, system, messages (each tool, each system text
  block, each content block of each message). A block with `cache_control` is a **breakpoint**; an
  entry is keyed by the exact prefix up to and including it (and the model).
- For each breakpoint the cache looks for an entry at that position and, failing that, at each of
  the up to `LOOKBACK` (20) blocks before it; the longest prefix found is **read**
  (`cache_read_input_tokens`). Everything from there up to the last breakpoint is **written**
  (`cache_creation_input_tokens`): an entry per breakpoint past the read. What follows the last
  breakpoint is plain `input_tokens`.
- A prefix shorter than the model's minimum (`min_cacheable_tokens`: 1,024 to 4,096 tokens) is
  neither written nor read.
- An entry is usable once the answer of the request that wrote it has started (`Ticket.started`):
  requests that arrive before then miss and write it too.
- An entry lives 5 minutes, or 1 hour when its breakpoint asks (`"ttl": "1h"`), from its last use:
  each read refreshes it.
- The per-request `x-anthropic-billing-header` system line is not part of any key (the API serves
  Claude Code's own prompts from its cache although that line changes on every request); its
  tokens count as plain input.

Tokens: each block counts ceil(characters / 4) of what `split_tokens` counts for it.
Guarantees: thread-safe; deterministic for a given clock; never raises for odd request shapes.
Never does: I/O.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BILLING_PREFIX",
    "LOOKBACK",
    "TTL_1H",
    "TTL_5M",
    "Block",
    "CacheSplit",
    "PromptCache",
    "Ticket",
    "cache_blocks",
    "min_cacheable_tokens",
]

LOOKBACK = 20
"""Blocks before a breakpoint at which an earlier entry is still found."""
TTL_5M = 300.0
TTL_1H = 3600.0
BILLING_PREFIX = "x-anthropic-billing-header:"
"""The system text line Claude Code sends with each request (version and entry point)."""

# Anthropic's minimum cacheable prompt lengths (tokens), most specific name first; others 1,024.
_MINIMUMS: tuple[tuple[str, int], ...] = (
    ("claude-opus-4-6", 4096),
    ("claude-opus-4-5", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-sonnet-4-6", 2048),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
    ("claude-haiku-3", 2048),
)
DEFAULT_MIN_TOKENS = 1024


def min_cacheable_tokens(model: str) -> int:
    """The shortest prefix (tokens) the model caches."""
    name = model.rsplit("/", 1)[-1]
    for prefix, tokens in _MINIMUMS:
        if name.startswith(prefix):
            return tokens
    return DEFAULT_MIN_TOKENS


@dataclass(frozen=True, slots=True)
class Block:
    """One block of the prompt as the cache sees it."""

    key: str
    """Canonical JSON of the block (without `cache_control`), with its place (tool, system,
    message role and whether it opens a message)."""
    tokens: int
    ttl: float | None = None
    """Seconds an entry written here lives (None: not a breakpoint)."""
    keyed: bool = True
    """False for the billing line: counted, never part of a key."""


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _tokens(chars: str) -> int:
    return math.ceil(len(chars) / 4)


def _ttl(block: Mapping[str, Any]) -> float | None:
    cc = block.get("cache_control")
    if not isinstance(cc, Mapping):
        return None
    return TTL_1H if cc.get("ttl") == "1h" else TTL_5M


def _chars(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return str(block.get("name", "")) + _json(block.get("input", {}))
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(_chars(b) for b in content if isinstance(b, Mapping))
        return ""
    if kind in ("thinking", "redacted_thinking"):
        return str(block.get("thinking", ""))
    return _json(block)


def _bare(block: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def cache_blocks(body: Mapping[str, Any]) -> list[Block]:
    """The request's blocks in cache order: tools, system, messages."""
    out: list[Block] = []
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, Mapping):
            continue
        chars = (
            str(tool.get("name", ""))
            + str(tool.get("description", ""))
            + _json(tool.get("input_schema", {}))
        )
        out.append(Block(_json(["tool", _bare(tool)]), _tokens(chars), _ttl(tool)))
    system = body.get("system")
    parts: list[Mapping[str, Any]] = []
    if isinstance(system, str) and system:
        parts = [{"type": "text", "text": system}]
    elif isinstance(system, list):
        parts = [b for b in system if isinstance(b, Mapping)]
    for part in parts:
        text = str(part.get("text", ""))
        billing = text.startswith(BILLING_PREFIX)
        out.append(
            Block(_json(["system", _bare(part)]), _tokens(_chars(part)), _ttl(part), not billing)
        )
    messages = body.get("messages")
    for msg in messages if isinstance(messages, list) else []:
        if not isinstance(msg, Mapping):
            continue
        role = str(msg.get("role", ""))
        content = msg.get("content")
        blocks: list[Mapping[str, Any]]
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = [b for b in content if isinstance(b, Mapping)]
        else:
            blocks = []
        for i, block in enumerate(blocks):
            out.append(
                Block(_json([role, i == 0, _bare(block)]), _tokens(_chars(block)), _ttl(block))
            )
    return out


@dataclass(frozen=True, slots=True)
class CacheSplit:
    """How one request's input divides: read from the cache, written to it, plain."""

    read: int = 0
    written: int = 0
    plain: int = 0

    @property
    def total(self) -> int:
        """All input tokens of the request."""
        return self.read + self.written + self.plain


@dataclass(slots=True)
class _Entry:
    ttl: float
    expires: float = 0.0
    ready: bool = False
    writers: int = 0


@dataclass(slots=True)
class Ticket:
    """The entries one request writes: usable once its answer starts (`started`), dropped when it
    never does (`abandoned`)."""

    cache: PromptCache | None
    keys: tuple[str, ...] = ()
    done: bool = field(default=False)

    def started(self) -> None:
        """The request's answer has started: its entries are usable from now on."""
        if self.cache is not None and not self.done:
            self.done = True
            self.cache._publish(self.keys)

    def abandoned(self) -> None:
        """The request failed before answering: entries only it was writing are dropped."""
        if self.cache is not None and not self.done:
            self.done = True
            self.cache._drop(self.keys)


class PromptCache:
    """One server's prompt cache (see the module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}

    def lookup(self, model: str, blocks: Sequence[Block]) -> tuple[CacheSplit, Ticket]:
        """Read what the cache holds for this prompt and reserve what it writes."""
        now = self._clock()
        minimum = min_cacheable_tokens(model)
        digests: list[str] = []
        cumulative: list[int] = []
        h = hashlib.sha256(model.encode())
        total = 0
        for block in blocks:
            if block.keyed:
                h.update(block.key.encode("utf-8", "surrogatepass"))
                h.update(b"\x00")
            total += block.tokens
            digests.append(h.hexdigest())
            cumulative.append(total)
        breakpoints = [
            i for i, b in enumerate(blocks) if b.ttl is not None and cumulative[i] >= minimum
        ]
        with self._lock:
            read_at = -1
            for bp in breakpoints:
                for j in range(bp, max(-1, bp - LOOKBACK - 1), -1):
                    if j <= read_at:
                        break
                    entry = self._entries.get(digests[j])
                    if entry is not None and entry.ready and entry.expires > now:
                        read_at = j
                        break
            if read_at >= 0:
                hit = self._entries[digests[read_at]]
                hit.expires = max(hit.expires, now + hit.ttl)
            writes = [bp for bp in breakpoints if bp > read_at]
            keys: list[str] = []
            for bp in writes:
                ttl = blocks[bp].ttl or TTL_5M
                entry = self._entries.get(digests[bp])
                if entry is None or not (entry.ready and entry.expires > now):
                    if entry is None or entry.ready:
                        entry = _Entry(ttl=ttl)
                        self._entries[digests[bp]] = entry
                    entry.writers += 1
                    entry.ttl = max(entry.ttl, ttl)
                    keys.append(digests[bp])
            self._expire(now)
        read = cumulative[read_at] if read_at >= 0 else 0
        written = cumulative[writes[-1]] - read if writes else 0
        return CacheSplit(read=read, written=written, plain=total - read - written), Ticket(
            self, tuple(keys)
        )

    def _publish(self, keys: Sequence[str]) -> None:
        now = self._clock()
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is not None:
                    entry.writers = max(0, entry.writers - 1)
                    if not entry.ready:
                        entry.ready = True
                        entry.expires = now + entry.ttl

    def _drop(self, keys: Sequence[str]) -> None:
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is None:
                    continue
                entry.writers = max(0, entry.writers - 1)
                if not entry.ready and entry.writers == 0:
                    del self._entries[key]

    def _expire(self, now: float) -> None:
        if len(self._entries) < 4096:
            return
        for key in [k for k, e in self._entries.items() if e.ready and e.expires <= now]:
            del self._entries[key]

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
