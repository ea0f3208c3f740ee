"""The decoded-document types shared by the decoders and encoders of this package.

Owns: `Format` (a writable document format), `Decoded` (a value plus its JSON-pointer → line
lookup), `LineOf` and `pointer_join` (RFC 6901). Guarantees: pure, no I/O. Kept apart so the JSON,
YAML and encoding modules all depend on it and never on each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

MAX_DEPTH = 100
"""Deepest nesting any decoder accepts (JSON, JSONC and YAML alike): deeper input is an error."""

Format = Literal["json", "jsonc", "yaml"]
"""A writable document format (`yml` is read-only and written as `yaml`)."""

LineOf = Callable[[str], "int | None"]
"""Maps a JSON pointer (`/evals/2/id`, `""` for the root) to the 1-based line of that value."""


class Decoded(NamedTuple):
    """A decoded document plus a line lookup for JSON pointers."""

    value: Any
    """The decoded JSON data model value."""
    line_of: LineOf
    """1-based line of the value at a JSON pointer, or None when unknown."""


def pointer_join(base: str, token: str | int) -> str:
    """Append one reference token to a JSON pointer, escaping `~` and `/` (RFC 6901)."""
    t = str(token).replace("~", "~0").replace("/", "~1")
    return f"{base}/{t}"
