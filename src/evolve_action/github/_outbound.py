"""What the GitHub client writes: the one redaction gate, and the paths and blobs a commit may carry.

Owns: `outbound` (every comment body and every committed file's bytes pass through it: the
redaction of secrets), the repository-relative path rules (`clean_path`, `committable_path`) and a
blob's git object id (`blob_sha`).
Guarantees: a committed path never leaves the tree, never lies under `.git/` or `.github/`, and is
never reached through a symbolic link.
Never does: call GitHub, read `os.environ`, print.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import AnyStr

from evolve_action.redact import redact

__all__ = ["blob_sha", "clean_path", "committable_path", "outbound"]


def outbound(data: AnyStr) -> AnyStr:
    """The one gate every comment body and every committed file's bytes pass through on their way
    to GitHub: the redaction of secrets (`redact.redact`), so no new sink can forget it. Files are
    already redacted when written; this catches anything that reached the disk another way. Bytes
    that are not UTF-8 text pass as they are."""
    if isinstance(data, str):
        return redact(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    cleaned = redact(text)
    return data if cleaned == text else cleaned.encode("utf-8")


def clean_path(path: str) -> str:
    """`path` as a repository-relative POSIX path; anything that could leave the tree, or that lies
    under `.git/` or `.github/` (workflows: a results commit never changes one), is refused."""
    clean = path.replace("\\", "/").removesuffix("/")
    parts = clean.split("/")
    if (
        not clean
        or clean.startswith("/")
        or re.match(r"[A-Za-z]:", clean)
        or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts)
        or parts[0].lower() == ".github"
        or any(not c.isprintable() for c in clean)
    ):
        raise ValueError(f"not a repository-relative path: {path!r}")
    return clean


def committable_path(path: Path, top: Path) -> str | None:
    """The repository-relative path to commit a file we wrote at `path` under, or None.

    Lexical, never resolved: a file that is a symbolic link, or whose directory below `top` is
    one, is None (what it points at is not what we wrote), and so is a path outside `top` or
    under `.git/` or `.github/`.
    """
    here = Path(os.path.normpath(os.path.abspath(path)))  # noqa: PTH100 (lexical, not resolved)
    rel: Path | None = None
    for base in (top, top.resolve()):
        try:
            rel = here.relative_to(os.path.normpath(os.path.abspath(base)))  # noqa: PTH100
            top = base
            break
        except ValueError:
            continue
    if rel is None:
        return None
    try:
        clean = clean_path(rel.as_posix())
    except ValueError:
        return None
    walked = Path(os.path.normpath(os.path.abspath(top)))  # noqa: PTH100
    for part in rel.parts:
        walked = walked / part
        if walked.is_symlink():
            return None
    return clean


def blob_sha(data: bytes) -> str:
    """The git object id of a blob with `data` (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
