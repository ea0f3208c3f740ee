"""What a labelled fork run keeps between runs: a bounded, redacted state line in its sticky comment.

A `pull_request_target` run on a fork PR (the fork-safe workflow's labelled job) may comment but
cannot push to the fork, and its workflow grants `contents: read`: neither the results commit nor
the ledger ref (`refs/evolve-action/ledger/pr-<n>`) can be written. The one thing its token may
write is the sticky comment it owns, so that is where it keeps what a relabel of the same content
needs to start no session: the PR's ledger of runs and the touched skills' results files this run
wrote, each tied to the bytes of the file the head held.

Owns: `Carried` (the state decoded from the sticky comment), `CommentStore` (the `LedgerStore`
over it: loads the carried ledger, keeps what is saved for the comment), `load_carried`,
`restore_results`, `state_line`, `state_of`.

Guarantees:
- The state line is one hidden HTML comment (`<!-- evolve-action:state v1 … -->`): base64 of the
  zlib-compressed JSON, whose text went through `redact` before compression (compression would
  hide a secret from the comment's own redaction), and at most `MAX_STATE_CHARS` characters; when
  it does not fit, the results are dropped first, then the ledger, and a notice says so.
- State is read only from the comment the token's own identity wrote (`find_sticky_comment`): a
  fork's author cannot edit it. A results file is restored only onto a path that is a touched
  skill's results file AND whose bytes in the checkout are the ones the state was measured on
  (sha-1 of the head's file): any other content, a new push, runs again.
- Anything unreadable (no comment, an old or garbled line) is an empty state, never an error.

Never does: talk to GitHub itself beyond reading the sticky comment, write outside the touched
skills' results files, or decide what is stale (the plan's fingerprints do).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve_action.encoding import write_text
from evolve_action.errors import EvolveError
from evolve_action.flows._ledger import Ledger, ledger_json, parse_ledger
from evolve_action.flows._pr_job import COMMENT_MARKER
from evolve_action.github import GitHubApiError, GitHubClient
from evolve_action.redact import redact

__all__ = [
    "MAX_STATE_CHARS",
    "Carried",
    "CommentStore",
    "file_sha",
    "load_carried",
    "parse_state",
    "restore_results",
    "state_line",
    "state_of",
]

MAX_STATE_CHARS = 32_000
"""The state line's bound: half of what a comment may hold (65,536), the rest is the report."""
_PREFIX = "<!-- evolve-action:state v1 "
_LINE = re.compile(r"<!-- evolve-action:state v1 ([A-Za-z0-9+/=]+) -->")
_MAX_INFLATED = 4 * 1024 * 1024


def file_sha(data: bytes | None) -> str:
    """The identity of a results file's bytes in the checkout ("" for no file)."""
    if data is None:
        return ""
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True, slots=True)
class Carried:
    """The state a previous run left in the sticky comment (empty when there is none)."""

    ledger: Ledger = field(default_factory=Ledger)
    results: Mapping[str, tuple[str, bytes]] = field(default_factory=dict)
    """Repository-relative path → (sha of the head's bytes it was measured on, the bytes written)."""


def state_of(body: str) -> str | None:
    """The state line of a comment body, or None."""
    m = _LINE.search(body)
    return m.group(0) if m else None


def parse_state(body: str) -> Carried:
    """The `Carried` state of a comment body; empty when absent or unreadable."""
    line = state_of(body)
    if line is None:
        return Carried()
    m = _LINE.fullmatch(line)
    assert m is not None
    try:
        packed = base64.b64decode(m.group(1), validate=True)
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, _MAX_INFLATED)
        if inflater.unconsumed_tail:
            return Carried()
        doc = json.loads(raw.decode("utf-8"))
        if not isinstance(doc, dict):
            return Carried()
        ledger_text = doc.get("ledger")
        ledger = (
            parse_ledger(ledger_text, where="the sticky comment's state")
            if isinstance(ledger_text, str)
            else Ledger()
        )
        results: dict[str, tuple[str, bytes]] = {}
        for path, entry in (doc.get("results") or {}).items():
            if (
                isinstance(path, str)
                and isinstance(entry, dict)
                and isinstance(entry.get("before"), str)
                and isinstance(entry.get("after"), str)
            ):
                results[path] = (entry["before"], entry["after"].encode("utf-8"))
        return Carried(ledger=ledger, results=results)
    except (ValueError, binascii.Error, zlib.error, UnicodeDecodeError, EvolveError):
        return Carried()


def state_line(ledger: Ledger, results: Mapping[str, tuple[str, bytes]]) -> tuple[str, str]:
    """The state line for `ledger` and `results` (path → (head sha, bytes written)), and what had
    to be left out to stay within `MAX_STATE_CHARS` ("" when nothing was)."""

    def encode(doc: Mapping[str, Any]) -> str:
        text = redact(json.dumps(doc, ensure_ascii=False, sort_keys=True))
        packed = base64.b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")
        return f"{_PREFIX}{packed} -->"

    texts = {path: after.decode("utf-8", errors="replace") for path, (_, after) in results.items()}
    full: dict[str, Any] = {
        "ledger": ledger_json(ledger),
        "results": {p: {"before": results[p][0], "after": texts[p]} for p in sorted(results)},
    }
    line = encode(full)
    if len(line) <= MAX_STATE_CHARS:
        return line, ""
    line = encode({"ledger": full["ledger"], "results": {}})
    if len(line) <= MAX_STATE_CHARS:
        return line, "the results files"
    return "", "the results files and the ledger of runs"


def load_carried(
    client: GitHubClient, repository: str, number: int, comment_author: str | None
) -> tuple[Carried, str]:
    """The state in the sticky comment the token's identity wrote on PR `number`, and "" — or an
    empty state and why it could not be read (a notice for the caller)."""
    try:
        author = client.identity(configured=comment_author or None).login
        found = client.repository(repository).find_sticky_comment(number, COMMENT_MARKER, author)
    except GitHubApiError as exc:
        return Carried(), f"the sticky comment's state could not be read ({exc.message})"
    return (parse_state(found.body) if found is not None else Carried()), ""


def restore_results(carried: Carried, files: Mapping[Path, bytes | None], top: Path) -> list[str]:
    """Write each carried results file whose path is one of `files` (the touched skills' results
    files, with their bytes in the checkout) and whose checkout bytes are the ones it was measured
    on; return the repository-relative paths restored."""
    restored: list[str] = []
    for path, data in sorted(files.items()):
        try:
            rel = path.relative_to(top).as_posix()
        except ValueError:
            continue
        entry = carried.results.get(rel)
        if entry is None or entry[0] != file_sha(data) or entry[1] == data:
            continue
        write_text(path, entry[1].decode("utf-8", errors="replace"))
        restored.append(rel)
    return restored


@dataclass(slots=True)
class CommentStore:
    """The `LedgerStore` of a labelled fork run: the ledger rides in the sticky comment.

    `load` is the carried ledger; `save` merges into it and keeps the result for the comment
    (`ledger`), which the publish stage writes as part of the state line.
    """

    carried: Ledger
    writable: bool = True
    where: str = "the sticky comment's state"
    ledger: Ledger = field(init=False)

    def __post_init__(self) -> None:
        self.ledger = self.carried

    def load(self) -> Ledger:
        return self.ledger

    def save(self, ours: Ledger) -> Ledger:
        self.ledger = self.ledger.merge(ours)
        return self.ledger
