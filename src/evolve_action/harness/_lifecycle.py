"""Process lifecycle of one CLI run: termination signals and the run's scratch directory.

Owns: `stop_session()` (SIGTERM a session's launcher, which kills every descendant at once),
`live_session()` (the sessions a termination signal stops at once, before any cancellation),
`kill_group()` (SIGKILL an agent's process group), `termination_signals()` (SIGTERM and SIGHUP take the SIGINT path: the running engine is
cancelled, agents are killed, workspaces removed, finished units kept; the CLI then prints
"interrupted" and exits 128 + the signal number) and `scratch()` / `scratch_dir()` (every workspace
and agent config dir of a run lives under `$TMPDIR/evolve-action.<pid>.<random>/`, held by an
advisory lock for the run's lifetime and removed at its end; on start, scratch dirs whose owner is
gone, i.e. whose lock can be taken, are swept, so a `kill -9` leaks nothing for long).

Guarantees: handlers are installed only in the main thread and restored on exit; a scratch dir marked
`keep` (`--keep-workspaces`) is never swept. Never prints.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

__all__ = [
    "Caught",
    "keep_scratch",
    "kill_group",
    "live_session",
    "scratch",
    "scratch_dir",
    "stop_all_sessions",
    "stop_session",
    "sweep_stale",
    "terminating",
    "termination_signals",
]

TERMINATING: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGHUP)
SCRATCH_PREFIX = "evolve-action."
_SCRATCH_RE = re.compile(r"^evolve-action\.\d+\.[A-Za-z0-9_]+$")
_LOCK = ".lock"
_KEEP = ".keep"

_current: Path | None = None


@dataclass(slots=True)
class Caught:
    """The terminating signal received (SIGINT unless SIGTERM/SIGHUP arrived first)."""

    signum: int = int(signal.SIGINT)

    @property
    def exit_code(self) -> int:
        """128 + the signal number (130 SIGINT, 143 SIGTERM, 129 SIGHUP)."""
        return 128 + self.signum


@contextlib.contextmanager
def termination_signals() -> Iterator[Caught]:
    """While active, SIGTERM/SIGHUP behave as SIGINT (KeyboardInterrupt / asyncio cancellation)."""
    caught = Caught()
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if caught.signum == signal.SIGINT:
            caught.signum = signum
        stop_all_sessions()  # at once: a runner kills 2.5 s after its SIGTERM
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):  # asyncio.Runner's handler (cancels the main task) or the default
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, on_signal) for s in TERMINATING}
    try:
        yield caught
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        global _terminating
        _terminating = False


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """While active, SIGINT, SIGTERM and SIGHUP are ignored: a cancelled job's last writes (the
    report, the commit of what finished, the comment) are not cut short by the runner's follow-up
    signals. Its hard kill still ends the process; keep the guarded work short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, *TERMINATING)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def scratch_dir() -> Path | None:
    """The current run's scratch directory (None outside `scratch()`: the system temp dir is used)."""
    return _current


def keep_scratch() -> None:
    """Mark the current scratch dir as kept (`--keep-workspaces`): neither removed nor swept."""
    if _current is not None:
        with contextlib.suppress(OSError):
            (_current / _KEEP).touch()


@contextlib.contextmanager
def scratch(tmp_root: Path | None = None) -> Iterator[Path | None]:
    """Create and lock this run's scratch dir (sweeping dead runs' first); remove it at the end.

    Yields None (temp files then go to the system temp dir, as before) when it cannot be created:
    commands that need no temp files must not fail on an unwritable `$TMPDIR`.
    """
    global _current
    root = Path(tmp_root or tempfile.gettempdir())
    sweep_stale(root)
    try:
        path, fd = locked_dir(root)
    except OSError:
        yield None
        return
    previous, _current = _current, path
    try:
        yield path
    finally:
        _current = previous
        if not (path / _KEEP).exists():
            shutil.rmtree(path, ignore_errors=True)
        os.close(fd)


def locked_dir(root: Path) -> tuple[Path, int]:
    """A new scratch-named directory under `root`, locked by this process (the descriptor holds
    the lock; close it to release): a later run's `sweep_stale` removes it once we are gone."""
    path = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}.", dir=root))
    # Locked before it gets the name a sweeper looks for: a sweeper never sees it unlocked.
    fd = os.open(path / ".lock.new", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    (path / ".lock.new").replace(path / _LOCK)
    return path, fd


def sweep_stale(root: Path) -> list[Path]:
    """Remove scratch dirs under `root` whose owner is gone (lock free) and not kept; return them."""
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(root) if _SCRATCH_RE.match(e.name)]
    except OSError:
        return removed
    for entry in entries:
        path = Path(entry.path)
        if not entry.is_dir(follow_symlinks=False) or (path / _KEEP).exists():
            continue
        try:
            fd = os.open(path / _LOCK, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue  # not ours (or still being created): leave it
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a live run holds it
        try:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            os.close(fd)
    return removed


def kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads (an agent CLI started as a group leader), even when
    the leader is already gone (its tool subprocesses may still run), then `pid` itself."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


_live: dict[int, Callable[[], int | None]] = {}
_terminating = False


@contextlib.contextmanager
def live_session(pid: Callable[[], int | None]) -> Iterator[None]:
    """While active, a termination signal stops this session at once (`stop_session` on the pid
    `pid()` returns then), before the engines' cancellation reaches it."""
    key = id(pid)
    _live[key] = pid
    try:
        yield
    finally:
        _live.pop(key, None)


def terminating() -> bool:
    """True once a termination signal stopped the live sessions (a session that ends now was
    killed by it: its caller treats it as cancelled, never as a failed run)."""
    return _terminating


def stop_all_sessions() -> None:
    """Stop every live session now (the termination signals do this first)."""
    global _terminating
    _terminating = True
    for pid_of in list(_live.values()):
        with contextlib.suppress(Exception):
            pid = pid_of()
            if pid is not None:
                stop_session(pid)


def stop_session(pid: int) -> None:
    """End a session started through the launcher (`_launch.py --reap`, pid `pid`): SIGTERM makes
    it SIGKILL every descendant (also those that left its process group) and exit at once."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)
