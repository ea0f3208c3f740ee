"""Warm-up: when a wave of sessions would all write the same prompt prefix, the first goes alone.

The API's prompt cache holds an entry from the moment the answer of the request that wrote it
starts; requests with the same prefix that arrive before then miss and write it again (×1.25 the
input price each, instead of ×0.1 for a read). A job starts its sessions in waves (`--jobs` at
once), all with Claude Code's same ~20k-token prefix (tools, then the system prompt). `Warmup`
holds every Messages request whose prefix (model, tools and system, the per-request billing line
aside) another request is writing right now, until that request's answer starts (or
`WAIT_SECONDS`, whichever is first); then they go and read it. A prefix whose answer started
within the cache's lifetime (`FRESH_SECONDS`) is never held; one whose writer failed releases its
waiters at once (the next request writes it). With one session at a time nothing ever waits.

Owns: `Warmup` (one per gateway), `prefix_key`. Guarantees: a request is held at most
`WAIT_SECONDS`; never changes a request; a body it cannot read is never held. Never does: I/O,
or decide whether a request may pass (the gateway does).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

__all__ = ["FRESH_SECONDS", "WAIT_SECONDS", "Warmup", "nothing", "prefix_key"]

WAIT_SECONDS = 20.0
"""The longest a request waits for another's answer to start."""
FRESH_SECONDS = 240.0
"""A prefix whose answer started this recently is taken as cached (the API keeps it 5 minutes)."""
_BILLING = "x-anthropic-billing-header:"
_MAX_KEPT = 1024


def prefix_key(body: bytes) -> str | None:
    """The shared prefix of a Messages request (model, tools, system without the billing line),
    as a digest; None when the body is not a JSON object with tools or a system prompt."""
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    system: Any = doc.get("system")
    if isinstance(system, list):
        system = [
            b
            for b in system
            if not (isinstance(b, dict) and str(b.get("text", "")).startswith(_BILLING))
        ]
    tools = doc.get("tools")
    if not tools and not system:
        return None
    canon = json.dumps([doc.get("model"), tools, system], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8", "surrogatepass")).hexdigest()


class Warmup:
    """Holds requests whose prefix another request is writing (see the module docstring)."""

    def __init__(
        self,
        *,
        wait_seconds: float = WAIT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._wait = wait_seconds
        self._clock = clock
        self._writing: dict[str, asyncio.Event] = {}
        self._written: dict[str, float] = {}
        self.held = 0
        """Requests that waited for another's answer (for tests and the benchmarks)."""

    async def hold(self, body: bytes) -> Callable[[bool], None]:
        """Wait while another request writes this prefix; return the callback to call once this
        request's answer started (True) or failed (False). Call it exactly once or more: only the
        first call counts."""
        key = prefix_key(body)
        if key is None:
            return nothing
        deadline = self._clock() + self._wait
        waited = False
        while True:  # one event loop: nothing runs between a check and what follows it
            if self._clock() - self._written.get(key, float("-inf")) < FRESH_SECONDS:
                return nothing
            event = self._writing.get(key)
            if event is None:
                break  # nobody writes it: this request does
            remaining = deadline - self._clock()
            if remaining <= 0:
                return nothing  # waited long enough: go, and write it too
            if not waited:
                waited = True
                self.held += 1
            try:
                await asyncio.wait_for(event.wait(), timeout=remaining)
            except TimeoutError:
                return nothing
        mine = asyncio.Event()
        self._writing[key] = mine
        done = False

        def answered(ok: bool) -> None:
            nonlocal done
            if done:
                return
            done = True
            if ok:
                self._written[key] = self._clock()
                if len(self._written) > _MAX_KEPT:
                    oldest = min(self._written, key=self._written.__getitem__)
                    del self._written[oldest]
            if self._writing.get(key) is mine:
                del self._writing[key]
            mine.set()

        return answered


def nothing(ok: bool) -> None:
    """The callback of a request that is not held (and writes nothing others wait for)."""
    return None
