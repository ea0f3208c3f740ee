"""The pictures in docs/img and the Markdown each one shows: one definition for the tool that renders
them (`tools/pr_comment_screens.py`) and the test that fails when a picture no longer shows what the
code renders (`tests/unit/report/test_doc_images.py`).

Each `docs/img/<name>.png` has its source `docs/img/<name>.md` committed beside it: the comment body
the code renders for a named fixture. The PNG carries the SHA-256 of that source in a PNG `tEXt`
chunk (`evolve-action-source`), so a PNG not rendered from its committed source is caught too.

- `pr-comment-<state>` (every state of `comment_examples.STATES`): `render_pr_comment` of the state's
  rows and facts. The fast unit test re-renders these from the current code.
- `pr-comment-demo` (the README's picture): the comment the README's tour writes
  (`.evolve-action/pr-comment.md` after `evolve-action pr --local --scripted`). The tour runs real
  Claude Code sessions, so only the tool re-runs it; the slow tour test compares its comment's
  lines (figures masked: session counts and costs vary run to run) with this source.

Pure functions and constants; no I/O except reading files the caller names.
"""

from __future__ import annotations

import hashlib
import re
import struct
import zlib
from pathlib import Path

from evolve_action.report import render_pr_comment
from tests.helpers import comment_examples as ex

REPO = Path(__file__).resolve().parent.parent.parent
IMG = REPO / "docs" / "img"

REFRESH = ".venv/bin/python tools/pr_comment_screens.py"
"""The command that re-renders every source and PNG in docs/img (re-running the README's tour)."""

TOUR_IMAGE = "pr-comment-demo"
"""The README's picture: the tour's comment."""

DIGEST_KEY = b"evolve-action-source"
"""The PNG `tEXt` keyword holding the SHA-256 of the Markdown the PNG was rendered from."""


def state_sources() -> dict[str, str]:
    """`{image name: Markdown}` of every comment state, rendered by the current code."""
    return {
        f"pr-comment-{name}": render_pr_comment(*make(), revision=ex.REVISION)
        for name, make in ex.STATES.items()
    }


def digest(markdown: str) -> str:
    """The SHA-256 (hex) of a source, as stored in its PNG."""
    return hashlib.sha256(markdown.encode("utf-8")).hexdigest()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def with_digest(png: bytes, markdown: str) -> bytes:
    """`png` with a `tEXt` chunk naming its source's digest, inserted before `IEND` (an older one
    is replaced)."""
    chunks = [c for c in _chunks(png) if not (c[0] == b"tEXt" and c[1].startswith(DIGEST_KEY))]
    text = _chunk(b"tEXt", DIGEST_KEY + b"\0" + digest(markdown).encode("ascii"))
    out = png[:8]
    for kind, data in chunks:
        if kind == b"IEND":
            out += text
        out += _chunk(kind, data)
    return out


def _chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    found, at = [], 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind = png[at + 4 : at + 8]
        found.append((kind, png[at + 8 : at + 8 + length]))
        at += 12 + length
    return found


def png_digest(path: Path) -> str | None:
    """The source digest a PNG carries, or None (rendered some other way)."""
    for kind, data in _chunks(path.read_bytes()):
        if kind == b"tEXt" and data.startswith(DIGEST_KEY + b"\0"):
            return data[len(DIGEST_KEY) + 1 :].decode("ascii")
    return None


_FIGURES = re.compile(r"\d[\d,.]*")
_SHA = re.compile(r"\b[0-9a-f]{7,40}\b")


def comment_shape(markdown: str) -> list[str]:
    """The comment's lines with every figure (`#`) and commit SHA masked, without the evidence
    digest line: what stays the same from one run of the tour to the next."""
    return [
        _FIGURES.sub("#", _SHA.sub("SHA", line))
        for line in markdown.splitlines()
        if not line.startswith("<!-- evidence ")
    ]
