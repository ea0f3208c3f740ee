"""The sticky comment's body rules: the hidden marker on its first line, the record on its last.

Owns: what makes a comment ours (`is_sticky`: the marker is its first line; `is_recorded`: its last
line records its own id and real author), writing and removing that record (`with_record`,
`without_record`, `RECORD_ROOM`), checking a marker (`check_marker`), comparing bodies
(`normalise`) and logins (`same_login`), and reading a PyGithub comment (`comment_info`).
Guarantees: a comment that carries the marker anywhere but its first line is never ours.
Never does: call GitHub, read `os.environ`, print, change a body beyond the marker and the record.
"""

from __future__ import annotations

import re
from typing import Any

from evolve_action.github._results import CommentInfo

__all__ = [
    "RECORD_ROOM",
    "check_marker",
    "comment_info",
    "is_recorded",
    "is_sticky",
    "normalise",
    "same_login",
    "with_record",
    "without_record",
]

_MARKER = re.compile(r"<!--(?:(?!-->)[^\n])+-->")
_RECORD = re.compile(r"<!-- evolve-action:comment (\d+) by (\S+) -->")
"""The last line of every comment we write: its own id and author, as the API answered them."""


def comment_info(c: Any) -> CommentInfo:
    return CommentInfo(
        id=int(c.id),
        body=c.body or "",
        author=c.user.login if c.user is not None else "",
        author_type=(c.user.type or "") if c.user is not None else "",
        html_url=c.html_url or "",
        created_at=c.created_at.isoformat() if c.created_at else "",
        updated_at=c.updated_at.isoformat() if c.updated_at else "",
    )


def same_login(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.lower() == b.lower()


def is_sticky(body: str, marker: str) -> bool:
    """True when `marker` is the first line of `body` (surrounding blanks and a BOM aside).

    A comment that carries the marker anywhere else, e.g. one quoting ours, is never ours.
    """
    first = body.lstrip("\ufeff").split("\n", 1)[0]
    return first.strip() == marker


RECORD_ROOM = 80
"""Characters kept free for the record line (a 20-digit id and a 39-character login fit)."""


def is_recorded(comment: CommentInfo) -> bool:
    """True when `comment`'s last line records its own id and its real author."""
    last = comment.body.replace("\r\n", "\n").rstrip().rpartition("\n")[2]
    m = _RECORD.fullmatch(last.strip())
    return (
        m is not None and int(m.group(1)) == comment.id and same_login(m.group(2), comment.author)
    )


def without_record(body: str) -> str:
    """`body` without a record as its last line (a body we render never has one)."""
    head, nl, last = body.rstrip().rpartition("\n")
    return f"{head}\n" if nl and _RECORD.fullmatch(last.strip()) else body


def with_record(body: str, comment_id: int, author: str) -> str:
    """`body` with the record of `comment_id` by `author` as its last line."""
    return f"{body.rstrip()}\n<!-- evolve-action:comment {comment_id} by {author} -->\n"


def normalise(body: str) -> str:
    return body.replace("\r\n", "\n").rstrip()


def check_marker(marker: str) -> None:
    if not _MARKER.fullmatch(marker):
        raise ValueError(f"the marker must be one hidden HTML comment (<!-- … -->), got {marker!r}")
