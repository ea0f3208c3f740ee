"""Path rules every part of discovery shares: absolute without resolving symlinks, root-relative
rendering, and whether a path resolves outside the repository.

Owns: `absolute` (evolve's rule: lexically clean, symlinks kept), `rel_path` (`/` separators, `.`
for the root, absolute when outside), `escapes`/`within` (the symlink-resolving containment test),
`subdirs` (non-symlink subdirectories in byte order of names, like Go's `os.ReadDir`).
Guarantees: deterministic order; a missing directory is empty, never an error.
Never does: read a file's content, raise for a path that does not exist.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "absolute",
    "escapes",
    "rel_path",
    "subdirs",
    "within",
]


def escapes(root: Path, path: Path) -> bool:
    """True when `path` resolves (following symlinks) outside `root`."""
    return not within(os.path.realpath(root), os.path.realpath(path))


def within(real_root: str, real: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def subdirs(directory: Path) -> list[tuple[str, Path]]:
    """Non-symlink directory entries of `directory`, sorted by name bytes (missing → empty)."""
    try:
        with os.scandir(directory) as entries:
            found = [
                (e.name, directory / e.name) for e in entries if e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []
    return sorted(found, key=lambda item: item[0].encode("utf-8", "surrogateescape"))


def absolute(path: Path) -> Path:
    """Make `path` absolute and lexically clean, without resolving symlinks (evolve's rule)."""
    return Path(os.path.abspath(path))  # noqa: PTH100 - Path.resolve() would follow symlinks


def rel_path(root: Path, path: Path) -> str:
    """`path` relative to `root` with `/` separators (`.` for the root), absolute when outside."""
    try:
        rel = absolute(path).relative_to(root)
    except ValueError:
        return absolute(path).as_posix()
    text = rel.as_posix()
    return text if text else "."
