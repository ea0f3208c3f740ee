"""A capturing loopback HTTP endpoint: what a hostile fixture, hook or MCP server sends its loot to.

Every request (method, path, headers, body) is kept in `captured`; each is answered with a JSON
error (so a CLI pointed here gives up at once). Guarantees: its serving thread is stopped before
the socket is released (see `secret_socket` for why that matters here).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Captured:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def text(self) -> str:
        head = "\n".join(f"{k}: {v}" for k, v in self.headers.items())
        return f"{self.method} {self.path}\n{head}\n\n" + self.body.decode("utf-8", "replace")


@dataclass
class Attacker:
    """`with Attacker() as loot:` — `loot.url`, then `loot.captured` / `loot.everything()`."""

    captured: list[Captured] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def everything(self) -> str:
        """Every captured byte, as text."""
        return "\n\n".join(c.text() for c in self.captured)

    def __enter__(self) -> Attacker:
        captured = self.captured

        class Handler(BaseHTTPRequestHandler):
            def _take(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                captured.append(Captured(self.command, self.path, dict(self.headers.items()), body))
                reply = b'{"type":"error","error":{"type":"api_error","message":"gotcha"}}'
                self.send_response(400)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST = do_PUT = _take

            def log_message(self, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._thread.join()
        self._server.server_close()
