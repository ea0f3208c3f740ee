"""The launcher every agent process and `command` assertion is started through (a script, not imported).

Run as `python -I -S _launch.py [--keep NAMES] [--parent PID] [--reap] [--user UID:GID]
[--chdir DIR] -- ARGV…`. It imports nothing from evolve_action, so it starts in a few
milliseconds and runs wherever the interpreter does.

- `--keep NAMES` (comma-separated): ARGV gets only these variables of the launcher's
  environment; every other is dropped before anything starts. Values are never on a command
  line: the caller passes names, the launcher clears its own environment. Without it, ARGV gets
  the launcher's environment as it is (the caller cleared it).

- `--parent PID`: the launcher dies with PID (`PR_SET_PDEATHSIG`; SIGTERM with `--reap`, so it
  cleans up first, else SIGKILL); when PID is already gone it exits 137 at once.
- `--reap`: the launcher stays as the session's reaper: it becomes a child subreaper
  (`PR_SET_CHILD_SUBREAPER`), runs ARGV as its child and, when that child ends or the launcher gets
  SIGTERM/SIGINT/SIGHUP, SIGKILLs every descendant left (a `setsid` or double-forked grandchild
  included: orphans are re-parented to a subreaper, never to init) and exits as the child did (its
  status, or killed by the same signal; 128 + the signal when it was told to stop). Our side stops a session by sending SIGTERM to the launcher.
- `--user UID:GID`: ARGV runs as that user: no supplementary groups, `PR_SET_NO_NEW_PRIVS` (a
  setuid binary cannot give root back), parent-death SIGKILL re-armed after the switch.
- `--forward PORT=PATH`: before ARGV starts, a forwarder process listens on `127.0.0.1:PORT`
  (in the sandbox's own network namespace) and relays each connection to the Unix socket PATH
  (the model gateway's); it runs as the `--user` too and dies with ARGV.
- `--chdir DIR`: ARGV starts in DIR (entered after the user switch: a directory only that user may
  enter is fine).

Never prints except one line on stderr when it cannot start ARGV (exit 127) or cannot switch user
(exit 126).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import sys
import threading

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
_libc = ctypes.CDLL(None, use_errno=True)


class _Stop(Exception):
    pass


def _prctl(option: int, value: int) -> None:
    _libc.prctl(option, value, 0, 0, 0)


_forward: tuple[int, str] | None = None


def _parse(
    argv: list[str],
) -> tuple[int | None, bool, tuple[int, int] | None, str, list[str]]:
    global _forward
    keep: set[str] | None = None
    parent: int | None = None
    reap = False
    user: tuple[int, int] | None = None
    chdir = ""
    i = 0
    while i < len(argv) and argv[i] != "--":
        flag = argv[i]
        if flag == "--keep":
            keep = {name for name in argv[i + 1].split(",") if name}
            i += 1
        elif flag == "--parent":
            parent = int(argv[i + 1])
            i += 1
        elif flag == "--reap":
            reap = True
        elif flag == "--user":
            uid, _, gid = argv[i + 1].partition(":")
            user = (int(uid), int(gid or uid))
            i += 1
        elif flag == "--forward":
            port, _, path = argv[i + 1].partition("=")
            _forward = (int(port), path)
            i += 1
        elif flag == "--chdir":
            chdir = argv[i + 1]
            i += 1
        else:
            sys.stderr.write(f"evolve-action launcher: unknown option {flag}\n")
            os._exit(2)
        i += 1
    if keep is not None:  # clear our own environment: the children inherit only these names
        for name in list(os.environ):
            if name not in keep:
                del os.environ[name]
    return parent, reap, user, chdir, argv[i + 1 :]


def _become(user: tuple[int, int]) -> None:
    uid, gid = user
    try:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    except OSError as exc:
        sys.stderr.write(f"evolve-action launcher: cannot run as uid {uid}: {exc}\n")
        os._exit(126)
    if os.getuid() != uid or os.geteuid() != uid or os.getgid() != gid:
        os._exit(126)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    os.umask(0o022)


def _relay(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _serve_forward(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_relay, args=(a, b), daemon=True).start()


def _start_forwarder(user: tuple[int, int] | None) -> None:
    """Listen now (so ARGV's first request finds it), relay from a child process."""
    if _forward is None:
        return
    port, path = _forward
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
    except OSError as exc:
        sys.stderr.write(f"evolve-action launcher: cannot forward port {port}: {exc}\n")
        os._exit(126)
    if os.fork() == 0:
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        if user is not None:
            _become(user)
            _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        try:
            _serve_forward(listener, path)
        finally:
            os._exit(0)
    listener.close()


def _exec(argv: list[str], chdir: str) -> None:
    try:
        if chdir:
            os.chdir(chdir)
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"evolve-action launcher: cannot run {argv[0]}: {exc}\n")
        os._exit(127)


def _children() -> list[int]:
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children", encoding="ascii") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        pass
    found = []
    for name in os.listdir("/proc"):  # noqa: PTH208 - the launcher imports little
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.append(int(name))
    return found


def _kill_all() -> None:
    """SIGKILL every descendant, level by level (orphans come back to us), until none is left."""
    while True:
        for pid in _children():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _stop(signum: int, frame: object) -> None:
    raise _Stop(signum)


def main(argv: list[str]) -> None:
    parent, reap, user, chdir, command = _parse(argv)
    if not command:
        sys.stderr.write("evolve-action launcher: no command\n")
        os._exit(2)
    if parent is not None:
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM if reap else signal.SIGKILL))
        if os.getppid() != parent:
            os._exit(137)
    if not reap:
        _start_forwarder(user)
        if user is not None:
            _become(user)
            _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))  # cleared by the switch: re-arm it
        _exec(command, chdir)
        return
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _stop)
    status = 143
    killed_by = 0
    try:
        child = os.fork()
        if child == 0:
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            if user is not None:
                _become(user)
            _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))  # the reaper gone: so is the session
            _exec(command, chdir)
            os._exit(127)
        while True:
            pid, raw = os.waitpid(-1, 0)
            if pid == child:
                status = os.waitstatus_to_exitcode(raw)
                if status < 0:
                    killed_by, status = -status, 128 - status
                break
    except _Stop as stop:
        status = 128 + int(stop.args[0])
    except ChildProcessError:
        pass
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    _kill_all()
    if killed_by:  # die as the child did, so our parent sees the same signal
        with contextlib.suppress(OSError, ValueError):  # SIGKILL, SIGSTOP: never caught anyway
            signal.signal(killed_by, signal.SIG_DFL)
        os.kill(os.getpid(), killed_by)
    os._exit(status)


if __name__ == "__main__":
    main(sys.argv[1:])
