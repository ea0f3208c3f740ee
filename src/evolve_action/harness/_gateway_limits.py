"""The model gateway's connection limits: the job cannot be starved through it.

Owns: the server's bounded protocol factory (`Limited`: at `MAX_CONNECTIONS` a new connection takes
the place of the oldest idle one, or is closed at once; a request head must arrive within
`HEADER_TIMEOUT`), what it needs of the server it guards (`Served`), and raising the soft file limit
(`raise_file_limit`).
Guarantees: a flood of half-sent or finished requests cannot keep a session out; never raises from
`raise_file_limit`.
Never does: read a request's body, forward, read `os.environ`, print.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
from typing import Any, Protocol, cast

__all__ = ["HEADER_TIMEOUT", "MAX_CONNECTIONS", "Limited", "Served", "raise_file_limit"]

MAX_CONNECTIONS = 256
"""Open client connections the gateway serves at once; more are closed at once."""


HEADER_TIMEOUT = 30.0
"""Seconds a connection may take to send a whole request head (and to send its next one)."""


class Served(Protocol):
    """What the connection limits read and count on the server they guard (the `Gateway`)."""

    connections: int
    """Client connections open now."""
    busy: set[Any]
    """The transports of connections serving a request now."""

    def log_once(self, kind: str, message: str) -> None:
        """Log `message` once per `kind`."""


class Limited:
    """The server's protocol factory, bounded: at `MAX_CONNECTIONS` open connections a new one
    takes the place of the oldest that is not serving a request (still sending its head, or idle
    between keep-alive requests: a flood of half-sent or finished requests cannot keep a session
    out), or is closed at once when every connection is serving a request; and a connection that
    has not sent a whole request head within `HEADER_TIMEOUT` is closed."""

    def __init__(self, gateway: Served, server: Any) -> None:
        self._gateway = gateway
        self._server = server
        self.open: dict[_Watched, None] = {}
        """Open connections, oldest first."""

    def __call__(self) -> asyncio.Protocol:
        gateway = self._gateway
        if gateway.connections >= MAX_CONNECTIONS:
            gateway.log_once(
                "connections",
                f"model gateway: {MAX_CONNECTIONS} connections open; closing the oldest idle ones",
            )
            idle = next((c for c in self.open if not c.busy), None)
            if idle is None:
                return _Closing()
            idle.evict()
        return _Watched(self, self._server())


class _Closing(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


class _Watched(asyncio.Protocol):
    """aiohttp's protocol for one connection, counted, and timed until its request head ends."""

    def __init__(self, limits: Limited, inner: Any) -> None:
        self._limits, self._inner = limits, inner
        self._gateway = limits._gateway
        self._timer: asyncio.TimerHandle | None = None
        self._transport: asyncio.BaseTransport | None = None
        self._tail = b""
        self._evicted = False
        # Counted from the moment it is accepted (the loop accepts a whole backlog at once).
        self._counted = True
        self._gateway.connections += 1
        limits.open[self] = None

    @property
    def busy(self) -> bool:
        """Serving a request now."""
        return self._transport is not None and self._transport in self._gateway.busy

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport
        self._inner.connection_made(transport)
        if self._evicted:
            cast("asyncio.Transport", transport).abort()
        else:
            self._timer = asyncio.get_running_loop().call_later(HEADER_TIMEOUT, self.evict)

    def connection_lost(self, exc: Exception | None) -> None:
        self._uncount()
        self._head_done()
        self._inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._timer is not None:  # still waiting for the end of the first request head
            self._tail = (self._tail + data)[-(len(data) + 4) :]
            if b"\r\n\r\n" in self._tail or b"\n\n" in self._tail:
                self._head_done()
            else:
                self._tail = self._tail[-4:]
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        result: bool | None = self._inner.eof_received()
        return result

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def evict(self) -> None:
        """Close this connection (its request head never came, or a newer one needs its place)."""
        self._evicted = True
        self._uncount()
        self._head_done()
        if self._transport is not None:
            cast("asyncio.Transport", self._transport).abort()

    def _uncount(self) -> None:
        if self._counted:
            self._counted = False
            self._gateway.connections -= 1
            self._limits.open.pop(self, None)

    def _head_done(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def raise_file_limit() -> None:
    """Raise this process's soft limit of open files to its hard limit (a flood of connections
    must not leave the job unable to open a file); never raises."""
    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = max(soft, 1 << 20) if hard == resource.RLIM_INFINITY else hard
        if soft != resource.RLIM_INFINITY and soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))  # the hard limit stays
