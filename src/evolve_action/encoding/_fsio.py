"""Link-safe atomic file writes (through the redaction gate) and sibling clean-up after a format switch.

Owns: `atomic_write_text` (the one chokepoint every file we write goes through: a directory walk
that never follows a link inside a checkout, an exclusive temp file, fsync, rename), `write_text`
(the same, under the name evolve's plain report writes use), `ensure_dir` (mkdir -p by the same walk), `redacted_text` (what either writes:
the text through `redact`, by the file's kind), `remove_siblings` (delete `results.*`/`EVALUATION.*`
files of other formats) and `UnsafeWriteError`.
Guarantees: a reader sees either the old or the new file, never a half-written one; parent
directories are created as needed; nothing is ever written through a symbolic link a pull request
or an agent could have made: the destination itself must not be a link (anywhere), and below the
outermost directory holding `.git` (the checkout) every directory is opened without following links,
so a file's directory cannot resolve outside the checkout; a refusal raises `UnsafeWriteError`
naming the file and the link, before any byte is written. The temp file is created exclusively
(`O_CREAT|O_EXCL|O_NOFOLLOW`) under a random name in the destination's own directory, so a link
planted at `<name>.tmp` is never opened. Text is written as UTF-8 with `\\n` line endings exactly as
given, except that every secret and token `redact` knows becomes `***` and the file stays valid: JSON
and XML are redacted inside their strings without cutting an escape, YAML value by value (decoded,
redacted, re-encoded: a value that becomes `***` is quoted as the encoder quotes it). Text holding no
secret is written byte for byte as given. Never does: encoding or decoding beyond that (see
`encoding`); follow a link above the checkout differently from the OS (those are the machine's,
not the PR's); protect directories outside any git checkout beyond the destination's own name.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from evolve_action import redact
from evolve_action.encoding._encode import encode_yaml
from evolve_action.encoding._yaml import decode_yaml
from evolve_action.errors import EvolveError

__all__ = [
    "DOCUMENT_EXTENSIONS",
    "UnsafeWriteError",
    "atomic_write_text",
    "ensure_dir",
    "redacted_text",
    "remove_siblings",
    "write_text",
]

DOCUMENT_EXTENSIONS: tuple[str, ...] = ("json", "jsonc", "yaml", "yml")
"""Extensions of one logical document (`results`, `EVALUATION`) in its possible formats."""

_PATH_FLAG = getattr(os, "O_PATH", os.O_RDONLY)  # search permission is enough to walk
_DIR_FLAGS = _PATH_FLAG | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class UnsafeWriteError(EvolveError):
    """A write refused because it would go through a symbolic link (the file names itself)."""


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` atomically and link-safely: mkdir -p, an exclusive temp file, fsync, rename.

    A new file gets mode 0644 (subject to the umask) like evolve's; a file that exists keeps
    its permission bits (a mode-444 file stays 444: the rename replaces it, so its mode must be
    carried over explicitly). On failure the temp file is removed and the original file is left
    untouched. Raises `UnsafeWriteError` when `path` is a symbolic link, or when a directory
    between the checkout (the outermost directory holding `.git`) and `path` is one.
    """
    data = redacted_text(path, text).encode("utf-8")
    with _parent_fd(path) as dfd:
        name = path.name
        keep_mode = _existing_mode(dfd, name, path)
        tmp, fd = _exclusive_temp(dfd, name)
        try:
            try:
                if keep_mode is not None:
                    os.fchmod(fd, keep_mode)
                view = memoryview(data)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        _fsync_dir(dfd)


def write_text(path: Path, text: str) -> None:
    """`atomic_write_text` under the name of evolve's plain report writes (one chokepoint for both)."""
    atomic_write_text(path, text)


def _existing_mode(dfd: int, name: str, path: Path) -> int | None:
    """The permission bits of the file at `name` (None: none yet); a link there is refused."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise _refusal(path, path)
    return stat.S_IMODE(st.st_mode)


def _exclusive_temp(dfd: int, name: str) -> tuple[str, int]:
    """Create `.<name>.<random>.tmp` beside `name` with O_EXCL|O_NOFOLLOW; its name and descriptor."""
    while True:
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | os.O_CLOEXEC,
                0o644,
                dir_fd=dfd,
            )
        except FileExistsError:
            continue
        return tmp, fd


def ensure_dir(directory: Path) -> None:
    """`mkdir -p directory` by the same walk as a write: no directory is made through a link in a checkout."""
    with _dir_fd(directory, directory):
        pass


def _parent_fd(path: Path) -> contextlib.AbstractContextManager[int]:
    return _dir_fd(path.parent, path)


@contextlib.contextmanager
def _dir_fd(directory: Path, subject: Path) -> Iterator[int]:
    """A descriptor of `directory`, made as needed, reached without following a link in a checkout.

    The walk starts at `/` (a relative path is made absolute lexically, from the current
    directory) and opens one component at a time. Links are followed until a directory holding
    `.git` is reached; from there on every component is opened with `O_NOFOLLOW`, and a link is an
    `UnsafeWriteError` about `subject`.
    """
    parts = Path(os.path.normpath(os.path.abspath(directory))).parts  # noqa: PTH100 (lexical)
    fd = os.open(parts[0], _DIR_FLAGS)
    try:
        guarded = _holds_git(fd)
        for i, part in enumerate(parts[1:], start=2):
            nxt = _open_dir(fd, part, guarded, Path(*parts[:i]), subject)
            os.close(fd)
            fd = nxt
            guarded = guarded or _holds_git(fd)
        yield fd
    finally:
        os.close(fd)


def _open_dir(dfd: int, part: str, guarded: bool, where: Path, path: Path) -> int:
    flags = _DIR_FLAGS | (_NOFOLLOW if guarded else 0)
    for _ in range(2):
        try:
            return os.open(part, flags, dir_fd=dfd)
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=dfd)
        except OSError as exc:
            if guarded and exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                with contextlib.suppress(OSError):
                    if stat.S_ISLNK(os.stat(part, dir_fd=dfd, follow_symlinks=False).st_mode):
                        raise _refusal(path, where) from None
            raise
    return os.open(part, flags, dir_fd=dfd)


def _holds_git(dfd: int) -> bool:
    try:
        os.stat(".git", dir_fd=dfd, follow_symlinks=False)
    except OSError:
        return False
    return True


def _refusal(path: Path, link: Path) -> UnsafeWriteError:
    what = "is a symbolic link" if link == path else f"goes through the symbolic link {link}"
    return UnsafeWriteError(
        f"refusing to write {path}: it {what}; evolve-action never writes through a link "
        "(a pull request could point it at any file)",
        path=path,
        hint="replace the link with a regular file or directory, or delete it, and re-run",
    )


def _fsync_dir(dfd: int) -> None:
    # Make the rename durable; not every platform/filesystem allows opening a directory.
    try:
        fd = os.open(".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC, dir_fd=dfd)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def redacted_text(path: Path, text: str) -> str:
    """`text` as it may be written to `path`: secrets and tokens replaced, the format kept valid."""
    suffix = path.suffix.lower()
    if suffix in (".json", ".jsonc"):
        return redact.redact_structured(text, "json")
    if suffix == ".xml":
        return redact.redact_structured(text, "xml")
    if suffix in (".yaml", ".yml"):
        return _redacted_yaml(path, text)
    return redact.redact(text)


def _redacted_yaml(path: Path, text: str) -> str:
    if redact.redact(text) is text:
        return text
    # Our YAML files: `#` comment lines, then one document as `encode_yaml` writes it.
    lines = text.splitlines(keepends=True)
    n = 0
    while n < len(lines) and lines[n].startswith("#"):
        n += 1
    header, body = "".join(lines[:n]), "".join(lines[n:])
    try:
        value = decode_yaml(body, path).value
        again = encode_yaml(_redacted_value(value))
    except (EvolveError, TypeError, ValueError):  # not a document we wrote: replace in the text
        return redact.redact(text)
    return redact.redact(header) + again


def _redacted_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact.redact(value)
    if isinstance(value, list):
        return [_redacted_value(v) for v in value]
    if isinstance(value, dict):
        return {redact.redact(k): _redacted_value(v) for k, v in value.items()}
    return value


def remove_siblings(
    path: Path, stem: str | None = None, exts: Iterable[str] = DOCUMENT_EXTENSIONS
) -> list[Path]:
    """Delete `<stem>.<ext>` files beside `path` other than `path` itself; return what was removed.

    `stem` defaults to `path`'s stem, so `remove_siblings(dir / "results.yaml")` deletes
    `results.json`, `results.jsonc` and `results.yml` left over from a format switch. Missing
    files are fine; directories of those names are left alone; a link of such a name is removed
    itself (never what it points at).
    """
    base = stem if stem is not None else path.stem
    removed: list[Path] = []
    if not path.parent.is_dir():
        return removed
    with _parent_fd(
        path
    ) as dfd:  # the same link-safe walk as a write: never unlinks through a link
        for ext in exts:
            name = f"{base}.{ext}"
            if name == path.name:
                continue
            try:
                mode = os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    continue
                os.unlink(name, dir_fd=dfd)
            except FileNotFoundError:
                continue
            removed.append(path.with_name(name))
    return removed
