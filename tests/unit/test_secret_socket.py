"""The confinement tests' secret socket: it answers, and nothing of it outlives `close`."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.helpers.secret_socket import SecretSocket


def test_it_answers_and_its_thread_is_gone_after_close(tmp_path: Path) -> None:
    server = SecretSocket(tmp_path / "docker.sock", b"secret-reply")
    assert oct((tmp_path / "docker.sock").stat().st_mode & 0o777) == oct(0o600)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(server.path))
        assert client.recv(100) == b"secret-reply"
    server.close()
    assert not server.thread.is_alive()
    # A listener made now may reuse the closed descriptor's number: nobody else answers on it.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        with socket.create_connection(listener.getsockname(), timeout=5) as client:
            conn, _ = listener.accept()
            with conn:
                conn.sendall(b"ours")
                assert client.recv(100) == b"ours"
