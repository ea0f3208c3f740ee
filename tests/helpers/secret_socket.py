"""A root-only Unix socket that answers every connection with a secret (a stand-in for the
runner's Docker socket in the confinement tests).

Guarantees: its serving thread is gone before its file descriptor is released. The earlier
copies only closed the socket and left the thread alive; CI then saw this secret arrive on a
connection to the fake GitHub (`BadStatusLine('confine-socket-…')`, and resets, in
`test_github_api`): the thread had accepted on a listener that got the old descriptor number.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path


class SecretSocket:
    """Listens at `path` (mode 0600) and writes `reply` to each client, then hangs up."""

    def __init__(self, path: Path, reply: bytes) -> None:
        self.path = path
        self.reply = reply
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        path.chmod(0o600)
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, name="secret-socket", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # shut down by `close`
                return
            with conn, contextlib.suppress(OSError):
                conn.sendall(self.reply)

    def close(self) -> None:
        """Wake the serving thread (a shut-down listener fails `accept`), wait for it, then close."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=10)
        if self.thread.is_alive():
            raise RuntimeError(f"the thread serving {self.path} did not stop")
        self.sock.close()
