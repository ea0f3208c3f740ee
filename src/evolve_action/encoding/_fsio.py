"""Atomic file writes (through the redaction gate) and sibling clean-up after a format switch.

Owns: `atomic_write_text` (temp file + fsync + `os.replace`), `write_text` (plain write),
`redacted_text` (what either writes: the text through `redact`, by the file's kind) and
`remove_siblings` (delete `results.*`/`EVALUATION.*` files of other formats).
Guarantees: with `atomic_write_text` a reader sees either the old or the new file, never a
half-written one; parent directories are created as needed; text is written as UTF-8 with `\\n`
line endings exactly as given, except that every secret and token `redact` knows becomes `***`
and the file stays valid: JSON and XML are redacted inside their strings without cutting an
escape, YAML value by value (decoded, redacted, re-encoded: a value that becomes `***` is quoted
as the encoder quotes it). Text holding no secret is written byte for byte as given. Never does:
encoding or decoding beyond that (see `encoding`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evolve_action import redact
from evolve_action.encoding._encode import encode_yaml
from evolve_action.encoding._yaml import decode_yaml
from evolve_action.errors import EvolveError

__all__ = [
    "DOCUMENT_EXTENSIONS",
    "atomic_write_text",
    "redacted_text",
    "remove_siblings",
    "write_text",
]

DOCUMENT_EXTENSIONS: tuple[str, ...] = ("json", "jsonc", "yaml", "yml")
"""Extensions of one logical document (`results`, `EVALUATION`) in its possible formats."""


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` atomically: mkdir -p, write `<name>.tmp`, fsync, `os.replace`.

    A new file gets mode 0644 (subject to the umask) like evolve's; a file that exists keeps
    its permission bits (a mode-444 file stays 444: the rename replaces it, so its mode must be
    carried over explicitly). On failure the temp file is removed and the original file is left
    untouched.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    data = redacted_text(path, text).encode("utf-8")
    try:
        keep_mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        keep_mode = None
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
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
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # Make the rename durable; not every platform/filesystem allows opening a directory.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text(path: Path, text: str) -> None:
    """Plain (non-atomic) UTF-8 write creating parent directories (how evolve writes reports)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = redacted_text(path, text)
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write(text)


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
    files are fine; directories of those names are left alone.
    """
    base = stem if stem is not None else path.stem
    removed: list[Path] = []
    for ext in exts:
        other = path.with_name(f"{base}.{ext}")
        if other.name == path.name or not other.is_file():
            continue
        with contextlib.suppress(FileNotFoundError):
            other.unlink()
            removed.append(other)
    return removed
