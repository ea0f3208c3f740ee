"""Where an agent session sees its workspace and config dir: the same paths for every session of a run.

Claude Code writes paths into its system prompt (the working directory, the memory directory under
`CLAUDE_CONFIG_DIR`). The API's prompt cache is per prefix, so sessions that see different paths
cannot share a cache entry. `place()` gives every session of a run fixed paths:

- with bubblewrap, one fixed pair `<scratch>/sandbox/{workspace,config}` (empty mount points on the
  host): the session's own directories are bound there inside its sandbox (`binds`), so every
  session of the run sees the same two paths, concurrent ones included;
- without bubblewrap (the action's image: an agent user, no mount namespace), a **slot**: the
  lowest free `<scratch>/slot.N/` while the session runs. Its workspace is moved there (a rename, in
  the run's scratch dir) and moved back when the session ends; a workspace another live session
  holds (a trigger unit's workspace, shared by its queries) is copied in instead and the copy
  dropped after. The config dir is moved in and back likewise. The slot is emptied before and after
  each session, so a run has at most one set of paths per concurrent session.

Owns: `Placement`, `place()`. Guarantees: the session's files end where they were (a moved
workspace is moved back, also when the session failed); a slot is never used by two live sessions;
nothing of one session is left in a slot for the next. Ownership and permissions are kept as they
were (a move keeps them, a copy keeps the modes; the caller hands the paths to the agent user).
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

__all__ = ["Placement", "place"]


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
_holders: dict[Path, list[Path]] = {}
"""A workspace moved into a slot → [where it is now, then one entry per extra live session]."""


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
    """The fixed paths for one session (see the module docstring); undone when the block ends."""
    base = _base()
    if sandboxed:
        root = _mount_point(base / "sandbox")
        yield Placement(
            workspace=_mount_point(root / "workspace"),
            config_dir=_mount_point(root / "config"),
            binds=((workspace, root / "workspace"), (config_dir, root / "config")),
        )
        return
    slot = _acquire(base)
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
        _release(base, slot)


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
    """Move `workspace` to `seen` (True), or copy it there when another session holds it or it is
    on another filesystem (False)."""
    key = workspace.absolute()
    with _lock:
        holders = _holders.get(key)
        if holders is None:
            try:
                workspace.rename(seen)
            except OSError:
                pass
            else:
                _holders[key] = [seen]
                return True
            current = workspace
        else:
            current = holders[0]
            holders.append(seen)
        shutil.copytree(current, seen, symlinks=True)
        shutil.copystat(current, seen)
    return False


def _give_back(workspace: Path, seen: Path, *, moved: bool) -> None:
    """Undo `_take_workspace`: move the workspace back, or drop this session's copy (a copy made
    only because the workspace is on another filesystem goes back over the original)."""
    key = workspace.absolute()
    with _lock:
        holders = _holders.get(key)
        if moved and holders is not None:
            with contextlib.suppress(OSError):
                seen.rename(workspace)
            holders[0] = key
        elif holders is not None and seen in holders[1:]:
            holders.remove(seen)
        elif holders is None and seen.exists():
            shutil.rmtree(workspace, ignore_errors=True)
            shutil.copytree(seen, workspace, symlinks=True)
            shutil.copystat(seen, workspace)
        if holders is not None and holders == [key]:
            del _holders[key]
