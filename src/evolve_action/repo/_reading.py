"""Strict readers: UTF-8 text with a size cap, JSON manifests with Go `encoding/json` wording, and
Go's `fmt.Sprint` of a decoded JSON value.

Owns: `read_text` (refuses files over `MAX_TEXT_BYTES` and non-UTF-8 bytes as a `SpecError` naming
the path and line), `read_manifest` → `Manifest` (no comments, NaN or BOM; the error as the checks
print it, §5.2; deliberately not `encoding.decode_path`, whose messages and empty-file rule are for
authored spec files), `go_str`.
Guarantees: `read_manifest` never raises: a missing or broken file is a `Manifest` saying so.
Never does: decide what a manifest means (`_manifests` does), write files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolve_action.encoding import (
    go_str_list,
)
from evolve_action.errors import SpecError

__all__ = [
    "MAX_TEXT_BYTES",
    "Manifest",
    "go_str",
    "read_manifest",
    "read_text",
]


MAX_TEXT_BYTES = 10 * 1024 * 1024
"""SKILL.md and manifests larger than this are refused (a user error, never a slow parse)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    """A JSON manifest read for the checks: either a decoded value or the problem with it."""

    path: Path
    exists: bool
    """True when `path` is a regular file."""
    value: Any = None
    """The decoded JSON value (any type) when it parsed."""
    error: str | None = None
    """`read …: …` or `invalid JSON: …` when it could not be used."""
    line: int | None = None
    """Line of the JSON syntax error, when known."""

    @property
    def ok(self) -> bool:
        """True when the file exists and parsed as JSON (of any type)."""
        return self.exists and self.error is None


def read_text(path: Path, *, limit: int = MAX_TEXT_BYTES) -> str:
    """Read a UTF-8 text file, refusing huge or non-UTF-8 files with an `OSError`-style reason.

    Raises `SpecError` (naming the path) so callers can turn it into a finding or a fatal error.
    """
    try:
        size = path.stat().st_size
        if size > limit:
            raise SpecError(
                f"file is {size} bytes; the limit is {limit // (1024 * 1024)} MiB", path=path
            )
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"read {path}: {exc.strerror or exc}", path=path) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecError(
            f"invalid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}, line {line}",
            path=path,
            line=line,
            hint="save the file as UTF-8",
        ) from exc


# --- JSON manifests -------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


def read_manifest(path: Path) -> Manifest:
    """Read a JSON manifest strictly (Go `encoding/json`: no comments, NaN or BOM); never raises."""
    if not path.is_file():
        return Manifest(path=path, exists=False)
    try:
        text = read_text(path)
    except SpecError as exc:
        return Manifest(path=path, exists=True, error=f"read {path}: {exc.message}", line=exc.line)
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return Manifest(
            path=path,
            exists=True,
            error=f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            line=exc.lineno,
        )
    except ValueError as exc:
        return Manifest(path=path, exists=True, error=f"invalid JSON: {exc}")
    return Manifest(path=path, exists=True, value=value)


def go_str(value: Any) -> str:
    """Go `fmt.Sprint` of a decoded JSON value as the checks print it (null → ``)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return go_str_list(go_str(v) for v in value)
    if isinstance(value, dict):
        inner = " ".join(f"{k}:{go_str(v)}" for k, v in sorted(value.items()))
        return f"map[{inner}]"
    return str(value)
