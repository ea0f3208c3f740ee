"""Where an agent session sees its workspace and config dir: the same paths for every session of a run.

Claude Code writes paths into its system prompt (the working directory, the memory directory under
`CLAUDE_CONFIG_DIR`). The API's prompt cache is per prefix, so sessions that see different paths
cannot share a cache entry. `place()` gives every session of a run fixed paths:

- with bubblewrap, one fixed pair `<scratch>/sandbox/{workspace,config}` (empty mount points on the
  host): the session's own directories are bound there inside its sandbox (`binds`), so every
  session of the run sees the same two paths, concurrent ones included;
- without bubblewrap (the action's image: an agent user, no mount namespace), a **slot**: the
  lowest free `<scratch>/slot.N/` while the session runs. Its workspace and config dir are moved
  there (a rename, in the run's scratch dir; a copy, copied back, when the workspace is on another
  filesystem) and moved back when the session ends. The slot is emptied before and after each
  session, so a run has at most one set of paths per concurrent session.

A workspace is placed for one live session at a time: each session runs as an agent uid of its own
(`_confine.lease`) and is handed its workspace, so a workspace several sessions share (a trigger
set's) is given to each as a private copy (`session_copy`: the same bytes, its `.git` the same
commit, so the prompt stays byte-identical); the shared original is never handed to an agent, and
no session reads or changes another's.

Owns: `Placement`, `place()`, `session_copy()`. Guarantees: the session's files end where they were
(a moved workspace is moved back, also when the session failed); a slot is never used by two live
sessions; nothing of one session is left in a slot for the next; placing a workspace another live
session holds is an error, never a silent share. Ownership and permissions are kept as they were
(a move keeps them, a copy keeps the modes; the caller hands the paths to the session's uid).
Never does: decide who may write what (`_confine` does), or print.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from evolve_action.harness import _lifecycle as lifecycle

__all__ = ["Placement", "place", "session_copy"]


@dataclass(frozen=True, slots=True)
class Placement:
    """The paths one session's agent sees, and how they come to be there."""

    workspace: Path
    """The workspace as the agent sees it (its working directory)."""
    config_dir: Path
    """`CLAUDE_CONFIG_DIR` as the agent sees it."""
    binds: tuple[tuple[Path, Path], ...] = ()
    """(host directory, path inside the sandbox) pairs for bubblewrap; empty without it."""


_lock = threading.Lock()
_busy: set[tuple[Path, int]] = set()
_live: set[Path] = set()
"""The workspaces placed for a live session (absolute, as the caller named them)."""


@functools.cache
def _fallback_base() -> Path:
    return Path(tempfile.mkdtemp(prefix="evolve-action-slots."))


def _base() -> Path:
    return (lifecycle.scratch_dir() or _fallback_base()).resolve()


def _mount_point(path: Path) -> Path:
    path.mkdir(mode=0o755, exist_ok=True)
    return path


@contextlib.contextmanager
def place(workspace: Path, config_dir: Path, *, sandboxed: bool) -> Iterator[Placement]:
    """The fixed paths for one session (see the module docstring); undone when the block ends.

    Raises `ValueError` when another live session holds `workspace` (give each its own:
    `session_copy`)."""
    key = workspace.absolute()
    with _lock:
        if key in _live:
            raise ValueError(
                f"workspace {workspace} is placed for another live session; give each session "
                "its own copy (session_copy)"
            )
        _live.add(key)
    try:
        base = _base()
        if sandboxed:
            root = _mount_point(base / "sandbox")
            yield Placement(
                workspace=_mount_point(root / "workspace"),
                config_dir=_mount_point(root / "config"),
                binds=((workspace, root / "workspace"), (config_dir, root / "config")),
            )
            return
        with _slot(base) as slot, _moved(workspace, config_dir, slot) as seen:
            yield seen
    finally:
        with _lock:
            _live.discard(key)


@contextlib.contextmanager
def _slot(base: Path) -> Iterator[Path]:
    slot = _acquire(base)
    try:
        yield slot
    finally:
        _release(base, slot)


@contextlib.contextmanager
def _moved(workspace: Path, config_dir: Path, slot: Path) -> Iterator[Placement]:
    seen_ws, seen_cfg = slot / "workspace", slot / "config"
    moved_ws = moved_cfg = False
    try:
        moved_ws = _take_workspace(workspace, seen_ws)
        config_dir.rename(seen_cfg)
        moved_cfg = True
        yield Placement(workspace=seen_ws, config_dir=seen_cfg)
    finally:
        if moved_cfg:
            with contextlib.suppress(OSError):
                seen_cfg.rename(config_dir)
        _give_back(workspace, seen_ws, moved=moved_ws)


def _acquire(base: Path) -> Path:
    with _lock:
        index = 0
        while (base, index) in _busy:
            index += 1
        _busy.add((base, index))
    slot = base / f"slot.{index}"
    shutil.rmtree(slot, ignore_errors=True)
    slot.mkdir(mode=0o711)
    slot.chmod(0o711)  # traversable by the agent user, not listable
    return slot


def _release(base: Path, slot: Path) -> None:
    shutil.rmtree(slot, ignore_errors=True)
    with _lock:
        _busy.discard((base, int(slot.name.rpartition(".")[2])))


def _take_workspace(workspace: Path, seen: Path) -> bool:
    """Move `workspace` to `seen` (True), or copy it there when it is on another filesystem
    (False)."""
    try:
        workspace.rename(seen)
    except OSError:
        shutil.copytree(workspace, seen, symlinks=True)
        shutil.copystat(workspace, seen)
        return False
    return True


def _give_back(workspace: Path, seen: Path, *, moved: bool) -> None:
    """Undo `_take_workspace`: move the workspace back, or copy the session's copy back over the
    original (it was on another filesystem)."""
    if moved:
        with contextlib.suppress(OSError):
            seen.rename(workspace)
    elif seen.exists():
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.copytree(seen, workspace, symlinks=True)
        shutil.copystat(seen, workspace)


def session_copy(workspace: Path) -> Path:
    """A private copy of `workspace`, one several sessions share (a trigger set's), for one session.

    Made beside it (the run's scratch dir, so placing it is a rename), links copied as links,
    modes and times kept: every session sees the same bytes and its `.git` the same commit, so
    their prompts stay byte-identical. Remove it (`_workspace.remove_workspace`) when the session
    ends. The caller keeps the original to itself: it is never handed to an agent.
    """
    target = Path(tempfile.mkdtemp(prefix="session.", dir=workspace.parent))
    try:
        shutil.copytree(workspace, target, symlinks=True, dirs_exist_ok=True)
        shutil.copystat(workspace, target)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return target
