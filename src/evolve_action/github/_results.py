"""The typed results of the GitHub client: who the token is, pull requests, changed files, comments,
commits.

Owns: the frozen values the client returns and the ones a commit takes (`FileChange`,
`CommitAuthor`), and `CommitOutcome` (`Committed` | `NothingToCommit` | `HeadMoved`).
Guarantees: every value is immutable.
Never does: call GitHub, read `os.environ`, print.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ChangedFile",
    "ChangedFiles",
    "CommentInfo",
    "CommentResult",
    "CommitAuthor",
    "CommitOutcome",
    "Committed",
    "FileChange",
    "HeadMoved",
    "NothingToCommit",
    "PullRequestInfo",
    "TokenIdentity",
]


@dataclass(frozen=True)
class TokenIdentity:
    """Who the token writes as, and how we know. `login` None: unknown (see `GitHubClient.identity`)."""

    login: str | None
    source: Literal["comment_author", "graphql", "rest", "unknown"]

    @property
    def is_bot(self) -> bool:
        """True for an App's bot account (`…[bot]`)."""
        return self.login is not None and self.login.endswith("[bot]")


@dataclass(frozen=True)
class PullRequestInfo:
    """The facts about a pull request the action needs."""

    repo: str
    number: int
    state: str
    title: str
    base_ref: str
    base_sha: str
    head_ref: str
    head_sha: str
    head_repo: str | None
    """The head repository's `owner/name`; None when the fork was deleted."""
    changed_files: int
    html_url: str

    @property
    def is_fork(self) -> bool:
        """True when the head lives in another repository (or a deleted fork)."""
        return self.head_repo is None or self.head_repo.lower() != self.repo.lower()


@dataclass(frozen=True)
class ChangedFile:
    """One file of a pull request.

    `status` is GitHub's: added, removed, modified, renamed, copied, changed or unchanged;
    `previous_path` is the old name of a renamed (or copied) file.
    """

    path: str
    status: str
    previous_path: str | None = None


@dataclass(frozen=True)
class ChangedFiles:
    """The files the API listed, and how many the pull request says it changes."""

    files: tuple[ChangedFile, ...]
    expected: int

    @property
    def truncated(self) -> bool:
        """True when GitHub listed fewer files than `changed_files` (the 3000 cap): use git instead."""
        return len(self.files) < self.expected

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path touched: current names, plus the old names of renamed files."""
        out: list[str] = []
        for f in self.files:
            out.append(f.path)
            if f.previous_path is not None and f.previous_path != f.path:
                out.append(f.previous_path)
        return tuple(out)


@dataclass(frozen=True)
class CommentInfo:
    """An issue comment as found on the pull request."""

    id: int
    body: str
    author: str
    author_type: str
    html_url: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class CommentResult:
    """What `upsert_sticky_comment` did. `duplicate_ids` are further marker comments by the author."""

    id: int
    action: Literal["created", "updated", "unchanged"]
    html_url: str
    duplicate_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class FileChange:
    """A file to commit: `content` None deletes it; `mode` None keeps an existing file's mode (else 100644)."""

    path: str
    content: bytes | None
    mode: Literal["100644", "100755"] | None = None


@dataclass(frozen=True)
class CommitAuthor:
    """Author and committer of the bot's commit; omitted, GitHub uses the token's identity."""

    name: str
    email: str


@dataclass(frozen=True)
class Committed:
    """The branch now points at `sha`, a commit whose only parent is `parent_sha`."""

    sha: str
    parent_sha: str
    branch: str
    tree_sha: str
    paths: tuple[str, ...]
    status: Literal["committed"] = "committed"


@dataclass(frozen=True)
class NothingToCommit:
    """The changes leave the head's tree as it is; no commit was made."""

    parent_sha: str
    branch: str
    status: Literal["unchanged"] = "unchanged"


@dataclass(frozen=True)
class HeadMoved:
    """The branch is no longer at the evaluated SHA (or is gone); it was left untouched."""

    branch: str
    expected_sha: str
    actual_sha: str | None
    detail: str
    status: Literal["head_moved"] = "head_moved"

    def notice(self) -> str:
        """One line for a `::notice`: what happened and why it is fine."""
        if self.actual_sha == self.expected_sha:
            return f"Results were not committed to branch '{self.branch}': {self.detail}."
        now = f"is now at {self.actual_sha[:12]}" if self.actual_sha else "no longer exists"
        return (
            f"Results were not committed: branch '{self.branch}' {now}, not the evaluated "
            f"{self.expected_sha[:12]} ({self.detail}). The run for the newer head records its own results."
        )


CommitOutcome = Committed | NothingToCommit | HeadMoved
