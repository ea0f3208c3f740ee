"""The GitHub REST client: pull requests, changed files, file reads, the sticky comment, commit-back.

Owns: every call to the GitHub REST API (the only module that makes one; its siblings `_retry` and
`_errors` import PyGithub only for its retry and exception types), and the use of what the siblings
define: retries and pacing (`_retry.RetryPolicy`), the translation of GitHub's answers into
`EvolveError`s (`_errors`) and typed results (`_results`), the sticky comment's body rules
(`_comments`), and the redaction gate and committable paths (`_outbound`).

Guarantees:
- The API root is what the caller passes (`GITHUB_API_URL`, so GHES works); lists are read to the end
  (100 per page), and `ChangedFiles.truncated` says when GitHub's 3000-file cap hid some of them.
- 5xx answers are retried a bounded number of times with bounded backoff; a comment-creating POST
  is never repeated blindly: after a lost answer the comments are read again first.
- Rate limits are read as GitHub documents them (`RATE_LIMITS_DOC`), 403 and 429 alike: primary
  (`x-ratelimit-remaining: 0`) waits until `x-ratelimit-reset`; secondary waits `retry-after`,
  else a minute, then twice as long each time; no wait ever exceeds `max_rate_limit_wait` (the
  request fails instead), and the final `GitHubRateLimitError` names the limit and when it resets.
  A 403 that is no rate limit is never retried.
- The sticky comment is the lowest-id comment whose FIRST LINE is the hidden marker AND that was
  written by the token's own identity; a comment that merely quotes the marker (a human, another
  workflow) is never edited; an unchanged body is never re-sent. The identity comes from the
  `comment_author` input, else GraphQL `viewer` (which answers for App installation tokens, where
  `GET /user` is a 403), else `GET /user` for tokens that are not installation tokens.
- A new comment is one POST when the token's identity is known (its author finds it again); only
  when the identity is unknown does a PATCH right after the POST add the record of its own id and
  author (`<!-- evolve-action:comment <id> by <login> -->`, from the POST's answer) as its last
  line, and every later edit carries that record. When the identity stays unknown, a comment is ours only if its
  record names its own id and its real author (as GitHub reports it), and that author is a Bot: an
  unknown identity edits nothing it cannot tie to a previous run of ours, and posts a new comment
  instead (another app's comment that starts with our marker, or quotes our whole body, is never
  edited).
- Every comment body and every committed file's bytes pass through `outbound` on their way out
  (the one home of the redaction of secrets).
- Commit-back writes one commit whose only parent is the evaluated head SHA, on that commit's tree, and
  moves the branch with `force: false`. It commits paths as written (lexically; `committable_path`
  turns a written file into one, refusing a file that is or goes through a link), never anything under
  `.git/` or `.github/` (a results commit must never change a workflow). If the branch is no longer at that SHA the outcome is `HeadMoved`
  and the branch is untouched; nothing that changed nothing is committed (`NothingToCommit`).
- 403s become `GitHubPermissionError` naming the `permissions:` entry to grant; other failures become
  `GitHubApiError` (both `PublishError`s) with GitHub's message.

Never: reads `os.environ`, prints, runs git, force-pushes or rebases, deletes or hides comments, or
changes a comment's body beyond putting the marker on its first line and the record on its last
(sanitising and size-trimming are the renderer's job).
"""

from __future__ import annotations

import base64
import functools
import re
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import requests
from github import Auth, Github, GithubException, InputGitAuthor, InputGitTreeElement

from evolve_action.github._comments import (
    RECORD_ROOM,
    check_marker,
    comment_info,
    is_recorded,
    is_sticky,
    normalise,
    same_login,
    with_record,
    without_record,
)
from evolve_action.github._errors import (
    TRANSIENT_REF,
    GitHubApiError,
    GitHubAuthError,
    github_message,
    ref_refusal,
    tip_absent,
    translate,
)
from evolve_action.github._outbound import blob_sha, clean_path, outbound
from evolve_action.github._results import (
    ChangedFile,
    ChangedFiles,
    CommentInfo,
    CommentResult,
    CommitAuthor,
    CommitOutcome,
    Committed,
    FileChange,
    HeadMoved,
    NothingToCommit,
    PullRequestInfo,
    TokenIdentity,
)
from evolve_action.github._retry import RetryPolicy

__all__ = [
    "BOT_LOGIN",
    "DEFAULT_API_URL",
    "FILES_API_CAP",
    "LOGIN",
    "MAX_COMMENT_CHARS",
    "GitHubClient",
    "RepositoryClient",
]

DEFAULT_API_URL = "https://api.github.com"
BOT_LOGIN = "github-actions[bot]"
"""Who `GITHUB_TOKEN` (the GitHub Actions App's installation token) writes as."""
LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
"""A GitHub account login: a user's, or an App's bot (`<app-slug>[bot]`)."""
FILES_API_CAP = 3000
"""GitHub never lists more files than this for one pull request, whatever the pagination."""
MAX_COMMENT_CHARS = 65536

_SHA = re.compile(r"[0-9a-f]{40}")
_VIEWER = "query { viewer { login } }"
_INSTALLATION_TOKEN = "ghs_"
"""The prefix of installation tokens (`GITHUB_TOKEN`, App tokens): `GET /user` always 403s for them."""
_T = TypeVar("_T")


# --------------------------------------------------------------------------------------------------
# Client


class GitHubClient:
    """A GitHub REST session for one token. Use `repository(full_name)` for per-repository calls."""

    def __init__(
        self,
        token: str,
        *,
        base_url: str = DEFAULT_API_URL,
        policy: RetryPolicy | None = None,
        user_agent: str = "evolve-action",
        sleep: Callable[[float], None] = time.sleep,
        graphql_url: str | None = None,
    ) -> None:
        if not token:
            raise GitHubAuthError(
                "no GitHub token", hint="pass `github_token` (default `${{ github.token }}`)"
            )
        self.base_url = base_url.rstrip("/") or DEFAULT_API_URL
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._installation_token = token.startswith(_INSTALLATION_TOKEN)
        self._identity: TokenIdentity | None = None
        self._gh = Github(
            auth=Auth.Token(token),
            base_url=self.base_url,
            timeout=self.policy.timeout,
            user_agent=user_agent,
            per_page=100,
            retry=self.policy.urllib3_retry(sleep),
            seconds_between_requests=self.policy.seconds_between_requests,
            seconds_between_writes=self.policy.seconds_between_writes,
            lazy=True,
        )
        self.graphql_url = (graphql_url or "").rstrip("/") or self._gh.requester.graphql_url
        """`GITHUB_GRAPHQL_URL` when given, else PyGithub's derivation from the REST root."""

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the HTTP connections."""
        self._gh.close()

    def identity(self, *, configured: str | None = None) -> TokenIdentity:
        """Who the token writes as (comments, commits), without ever guessing.

        1. `configured` (the `comment_author` input), taken as given;
        2. GraphQL `viewer { login }`: answers for personal tokens AND installation tokens
           (`GITHUB_TOKEN` → `github-actions[bot]`, an App's token → `<app-slug>[bot]`);
        3. `GET /user`, only for tokens that are not installation tokens (it 403s for those);
        4. else unknown (`login` None): callers must not create a second comment because of it.

        A 401 raises `GitHubAuthError`; any other failure only moves on to the next source.
        """
        if configured:
            return TokenIdentity(configured, "comment_author")
        if self._identity is None:
            self._identity = self._find_identity()
        return self._identity

    def _find_identity(self) -> TokenIdentity:
        action = "reading the token's identity"
        try:
            _, data = self._gh.requester.requestJsonAndCheck(
                "POST", self.graphql_url, input={"query": _VIEWER, "variables": {}}
            )
            login = ((data.get("data") or {}).get("viewer") or {}).get("login")
            if isinstance(login, str) and LOGIN.fullmatch(login):
                return TokenIdentity(login, "graphql")
        except GithubException as exc:
            if exc.status == 401:
                raise translate(exc, f"{action} (GraphQL viewer)", None) from exc
        except (requests.RequestException, AttributeError, TypeError):
            pass  # an unreachable or odd GraphQL endpoint: try REST
        if self._installation_token:
            return TokenIdentity(None, "unknown")
        try:
            login = self._gh.get_user().login
        except GithubException as exc:
            if exc.status == 401:
                raise translate(exc, f"{action} (GET /user)", None) from exc
            return TokenIdentity(None, "unknown")
        except requests.RequestException:
            return TokenIdentity(None, "unknown")
        if isinstance(login, str) and LOGIN.fullmatch(login):
            return TokenIdentity(login, "rest")
        return TokenIdentity(None, "unknown")

    def repository(self, full_name: str) -> RepositoryClient:
        """Calls on `owner/name` (no request is made until one is needed)."""
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", full_name):
            raise ValueError(f"not an owner/name repository: {full_name!r}")
        return RepositoryClient(self, full_name)

    def _call(self, action: str, permission: str | None, fn: Callable[[], _T]) -> _T:
        """Run `fn`, turning PyGithub and transport failures into `GitHubApiError`s."""
        try:
            return fn()
        except (GithubException, requests.RequestException) as exc:
            self._fail(exc, action, permission)

    def _fail(self, exc: Exception, action: str, permission: str | None) -> NoReturn:
        """Raise the `GitHubApiError` for a PyGithub or transport failure."""
        if isinstance(exc, GithubException):
            raise translate(exc, action, permission) from exc
        raise GitHubApiError(
            f"cannot reach the GitHub API at {self.base_url} while {action}: {exc}",
            hint="check GITHUB_API_URL and the network",
        ) from exc


class RepositoryClient:
    """The calls the action makes on one repository. Create through `GitHubClient.repository`."""

    def __init__(self, client: GitHubClient, full_name: str) -> None:
        self._client = client
        self.full_name = full_name
        self._repo = client._gh.get_repo(full_name)

    # ------------------------------------------------------------------ pull requests

    def pull_request(self, number: int) -> PullRequestInfo:
        """`GET /pulls/{number}`: refs, SHAs, head repository and the `changed_files` count."""

        def fetch() -> PullRequestInfo:
            pr = self._repo.get_pull(number)
            head_repo = pr.head.repo
            return PullRequestInfo(
                repo=self.full_name,
                number=pr.number,
                state=pr.state,
                title=pr.title or "",
                base_ref=pr.base.ref,
                base_sha=pr.base.sha,
                head_ref=pr.head.ref,
                head_sha=pr.head.sha,
                head_repo=head_repo.full_name if head_repo is not None else None,
                changed_files=int(pr.changed_files or 0),
                html_url=pr.html_url or "",
            )

        return self._client._call(f"reading pull request #{number}", "pull-requests: read", fetch)

    def changed_files(self, pr: PullRequestInfo) -> ChangedFiles:
        """Every file the API lists for `pr` (all pages), with status and the old name of renames.

        GitHub lists at most 3000 files; `truncated` is True when fewer came back than `pr.changed_files`,
        and the caller must then diff with git instead.
        """

        def fetch() -> ChangedFiles:
            files = tuple(
                ChangedFile(
                    path=f.filename,
                    status=f.status,
                    previous_path=f.previous_filename or None,
                )
                for f in self._repo.get_pull(pr.number).get_files()
            )
            return ChangedFiles(files=files, expected=pr.changed_files)

        return self._client._call(
            f"listing the files of pull request #{pr.number}", "pull-requests: read", fetch
        )

    # ------------------------------------------------------------------ contents

    def read_file(self, path: str, ref: str) -> bytes | None:
        """The bytes of `path` at `ref` (branch, tag or SHA); None when absent there or not a regular file.

        Files over 1 MB, which the contents API sends without content, are read through the blobs API.
        An unknown `ref` is an error (`GitHubNotFoundError`), not an absent file.
        """
        clean = clean_path(path)
        action = f"reading {clean} at {ref}"

        def fetch() -> bytes | None:
            try:
                content = self._repo.get_contents(clean, ref=ref)
            except GithubException as exc:
                message = github_message(exc) or ""
                if exc.status == 404 and "no commit found" not in message.lower():
                    return None
                raise
            if isinstance(content, list) or content.type != "file":
                return None
            if content.encoding == "base64" and content.content is not None:
                return base64.b64decode(content.content)
            blob = self._repo.get_git_blob(content.sha)
            return base64.b64decode(blob.content)

        return self._client._call(action, "contents: read", fetch)

    def read_first(
        self, directory: str, names: Sequence[str], ref: str
    ) -> tuple[str, bytes] | None:
        """The first of `names` that is a file in `directory` at `ref`, with its bytes; None when
        none is (or the directory is absent there). One listing, then one read: absent files cost
        no request each. An unknown `ref` is an error (`GitHubNotFoundError`)."""
        clean = clean_path(directory)

        def listing() -> set[str]:
            try:
                entries = self._repo.get_contents(clean, ref=ref)
            except GithubException as exc:
                message = github_message(exc) or ""
                if exc.status == 404 and "no commit found" not in message.lower():
                    return set()
                raise
            if not isinstance(entries, list):
                return set()
            return {e.name for e in entries if e.type == "file"}

        present = self._client._call(f"listing {clean} at {ref}", "contents: read", listing)
        for name in names:
            if name in present:
                data = self.read_file(f"{clean}/{name}", ref)
                if data is not None:
                    return name, data
        return None

    # ------------------------------------------------------------------ the sticky comment

    def marked_comments(self, number: int, marker: str, author: str | None) -> list[CommentInfo]:
        """Our comments on `number` (all pages), by id: `marker` is the first line of the body and
        the author is `author`; with `author` None (the token's identity is unknown), a Bot account's
        comment whose record (last line) names its own id and that same author (`is_recorded`).
        """
        check_marker(marker)

        def fetch() -> list[CommentInfo]:
            found = []
            for c in self._repo.get_issue(number).get_comments():
                if not is_sticky(c.body or "", marker) or c.user is None:
                    continue
                info = comment_info(c)
                if same_login(info.author, author) or (
                    author is None and info.author_type == "Bot" and is_recorded(info)
                ):
                    found.append(info)
            return sorted(found, key=lambda c: c.id)

        return self._client._call(
            f"reading the comments of #{number}", "pull-requests: read", fetch
        )

    def find_sticky_comment(
        self, number: int, marker: str, author: str | None
    ) -> CommentInfo | None:
        """The sticky comment: the lowest-id of `marked_comments`, or None."""
        found = self.marked_comments(number, marker, author)
        return found[0] if found else None

    def upsert_sticky_comment(
        self, number: int, body: str, *, marker: str, author: str | None
    ) -> CommentResult:
        """Create the sticky comment, or edit it in place; an unchanged body sends nothing.

        `marker` (a hidden HTML comment) becomes the body's first line when it is not, and the
        record of the comment's id and author its last. Candidates are
        `marked_comments(number, marker, author)`: pass `GitHubClient.identity().login`; None
        (unknown) edits only a comment whose record ties it to a previous run of ours, else a new
        comment is created (never another author's edited).
        """
        check_marker(marker)
        body = outbound(body)
        if not is_sticky(body, marker):
            body = f"{marker}\n{body}"
        body = without_record(body)
        if len(body) + RECORD_ROOM > MAX_COMMENT_CHARS:
            raise GitHubApiError(
                f"the comment is {len(body)} characters; GitHub accepts at most "
                f"{MAX_COMMENT_CHARS - RECORD_ROOM} (the rest holds the comment's record)",
                hint="render a shorter body (drop detail sections first)",
            )
        found = self.marked_comments(number, marker, author)
        if found:
            return self._update(number, found[0], body, tuple(c.id for c in found[1:]), author)
        return self._create(number, body, marker, author)

    def _update(
        self,
        number: int,
        current: CommentInfo,
        body: str,
        duplicates: tuple[int, ...],
        author: str | None,
    ) -> CommentResult:
        """Edit `current` to `body`; the record (last line) is written when the identity is
        unknown (`author` None) or the comment already has one; nothing is sent when unchanged."""
        record = author is None or is_recorded(current)
        same = normalise(without_record(current.body)) == normalise(without_record(body))
        if same and (not record or is_recorded(current)):
            return CommentResult(current.id, "unchanged", current.html_url, duplicates)
        if record:
            body = with_record(body, current.id, current.author)
        # A lazy comment object: `edit` PATCHes /issues/comments/{id} without reading it first.
        comment = self._repo.get_issue(number).get_comment(current.id)
        self._client._call(
            f"updating comment {current.id}", "pull-requests: write", lambda: comment.edit(body)
        )
        return CommentResult(current.id, "updated", current.html_url, duplicates)

    def _create(self, number: int, body: str, marker: str, author: str | None) -> CommentResult:
        """POST the comment, then PATCH in its record. A 5xx or lost answer may hide a created
        comment: look again (ours, or a Bot's comment with exactly this body), then retry."""
        policy = self._client.policy
        attempt = 0
        info: CommentInfo | None = None
        while info is None:
            try:
                info = comment_info(self._repo.get_issue(number).create_comment(body))
                continue
            except (GithubException, requests.RequestException) as exc:
                status = exc.status if isinstance(exc, GithubException) else None
                unknown = status is None or status >= 500
                if not unknown or attempt >= policy.retries:
                    self._client._fail(
                        exc, f"creating the comment on #{number}", "pull-requests: write"
                    )
            attempt += 1
            self._client._sleep(policy.backoff(attempt))
            found = self.marked_comments(number, marker, author) or self._sent(number, body)
            if found:
                dups = tuple(c.id for c in found[1:])
                return self._update(number, found[0], body, dups, author)
        if author is None and info.author:  # identity unknown: record the answer's id and
            self._update(number, info, body, (), None)  # author, so a later run tells it is ours
        return CommentResult(info.id, "created", info.html_url)

    def _sent(self, number: int, body: str) -> list[CommentInfo]:
        """Bot comments holding exactly `body` (what a lost POST answer may have created)."""

        def fetch() -> list[CommentInfo]:
            return sorted(
                (
                    comment_info(c)
                    for c in self._repo.get_issue(number).get_comments()
                    if c.user is not None
                    and c.user.type == "Bot"
                    and normalise(c.body or "") == normalise(body)
                ),
                key=lambda c: c.id,
            )

        return self._client._call(
            f"reading the comments of #{number}", "pull-requests: read", fetch
        )

    # ------------------------------------------------------------------ commit-back

    def commit_files(
        self,
        *,
        branch: str,
        parent_sha: str,
        changes: Sequence[FileChange],
        message: str,
        author: CommitAuthor | None = None,
    ) -> CommitOutcome:
        """Commit `changes` on top of `parent_sha` and move `branch` to it, only as a fast-forward.

        Blobs → a tree on `parent_sha`'s tree (`base_tree`) → a commit whose only parent is `parent_sha`
        → `PATCH refs/heads/{branch}` with `force: false`. The branch is read first: when it is not at
        `parent_sha`, nothing is written and the outcome is `HeadMoved`; so is a 422 on the update.
        Files whose content already matches, and deletions of absent files, are dropped; when nothing
        is left the outcome is `NothingToCommit`. A 403 raises `GitHubPermissionError` (`contents: write`).
        """
        if not _SHA.fullmatch(parent_sha):
            raise ValueError(f"parent_sha must be a full 40-hex commit SHA, got {parent_sha!r}")
        branch = branch.removeprefix("refs/heads/")
        by_path: dict[str, FileChange] = {}
        for change in changes:
            path = clean_path(change.path)
            if path in by_path:
                raise ValueError(f"{path} is listed twice in the changes")
            content = None if change.content is None else outbound(change.content)
            by_path[path] = FileChange(path, content, change.mode)

        write = "contents: write"
        ref_name = f"heads/{branch}"
        # Reading the ref completes it, so its URL is the one GitHub gives (`/git/refs/…`) for the PATCH.
        tip, ref = self._client._call(
            f"reading branch {branch}", "contents: read", lambda: self._tip(ref_name)
        )
        if tip != parent_sha:
            detail = "the branch moved before the commit" if tip else "the branch is gone"
            return HeadMoved(branch, parent_sha, tip, detail)

        head = self._client._call(
            f"reading commit {parent_sha[:12]}",
            "contents: read",
            lambda: self._repo.get_git_commit(parent_sha),
        )
        base_tree = head.tree
        existing = self._client._call(
            "reading the head tree", "contents: read", lambda: self._tree_index(base_tree.sha)
        )

        elements: list[InputGitTreeElement] = []
        paths: list[str] = []
        for path, change in sorted(by_path.items()):
            old = existing.get(path) if existing is not None else None
            if change.content is None:
                if existing is not None and old is None:
                    continue
                elements.append(
                    InputGitTreeElement(path, (old or ("100644", ""))[0], "blob", sha=None)
                )
                paths.append(path)
                continue
            mode = change.mode or (
                old[0] if old is not None and old[0] in ("100644", "100755") else "100644"
            )
            if old == (mode, blob_sha(change.content)):
                continue
            encoded = base64.b64encode(change.content).decode("ascii")
            blob = self._client._call(
                f"uploading {path}",
                write,
                functools.partial(self._repo.create_git_blob, encoded, "base64"),
            )
            elements.append(InputGitTreeElement(path, mode, "blob", sha=blob.sha))
            paths.append(path)
        if not elements:
            return NothingToCommit(parent_sha, branch)

        tree = self._client._call(
            "writing the tree",
            write,
            lambda: self._repo.create_git_tree(elements, base_tree=base_tree),
        )
        if tree.sha == base_tree.sha:
            return NothingToCommit(parent_sha, branch)
        person = InputGitAuthor(author.name, author.email) if author is not None else None

        def make_commit() -> Any:
            if person is None:
                return self._repo.create_git_commit(message, tree, [head])
            return self._repo.create_git_commit(
                message, tree, [head], author=person, committer=person
            )

        commit = self._client._call("writing the commit", write, make_commit)
        raced = self._update_ref(ref_name, ref, commit.sha, parent_sha, f"branch {branch}")
        if raced is not None:
            return HeadMoved(branch, parent_sha, raced[0], raced[1])
        return Committed(commit.sha, parent_sha, branch, tree.sha, tuple(paths))

    def _update_ref(
        self, ref_name: str, current: Any, new_sha: str, expected: str, what: str
    ) -> tuple[str | None, str] | None:
        """Move `refs/{ref_name}` (read as `current`, at `expected`) to `new_sha` as a
        fast-forward. None when it moved; (its SHA now, GitHub's message) when a 422 came because
        another writer moved it (or deleted it) first. A 422 on a ref still at `expected` is GitHub
        refusing the update itself: retried (bounded) when GitHub says it is transient
        ("Reference cannot be updated"), else raised with GitHub's message."""
        write = "contents: write"
        policy = self._client.policy
        attempt = 0
        while True:
            try:
                current.edit(new_sha, force=False)
                return None
            except GithubException as exc:
                if exc.status != 422:
                    raise translate(exc, f"updating {what}", write) from exc
                reason = github_message(exc) or "Unprocessable Entity"
                tip, again = self._client._call(
                    f"reading {what}", "contents: read", lambda: self._tip(ref_name)
                )
                if tip != expected:
                    return tip, reason
                if TRANSIENT_REF in reason.lower() and attempt < policy.retries:
                    attempt += 1
                    self._client._sleep(policy.backoff(attempt))
                    current = again
                    continue
                raise ref_refusal(exc, f"move {what} to {new_sha[:12]}", reason, ref_name) from exc
            except requests.RequestException as exc:
                self._client._fail(exc, f"updating {what}", write)

    def _tip(self, ref_name: str) -> tuple[str | None, Any]:
        """The branch's current SHA and the ref object (None, None when the branch does not exist)."""
        ref = self._repo.get_git_ref(ref_name)
        try:
            return str(ref.object.sha), ref
        except GithubException as exc:
            if exc.status == 404:
                return None, None
            raise

    def tree_blobs(self, commit_sha: str) -> dict[str, tuple[str, str]] | None:
        """path → (mode, blob sha) of every file in `commit_sha`'s tree (one recursive tree read);
        None when GitHub truncated the listing."""
        action = f"reading the tree of {commit_sha[:12]}"

        def fetch() -> dict[str, tuple[str, str]] | None:
            return self._tree_index(self._repo.get_git_commit(commit_sha).tree.sha)

        return self._client._call(action, "contents: read", fetch)

    def _tree_index(self, tree_sha: str) -> dict[str, tuple[str, str]] | None:
        """path → (mode, blob sha) for the whole tree; None when GitHub truncated the listing."""
        tree = self._repo.get_git_tree(tree_sha, recursive=True)
        if tree.truncated:
            return None
        return {e.path: (e.mode, e.sha) for e in tree.tree if e.type == "blob"}

    def read_ref_file(self, ref: str, path: str) -> tuple[bytes | None, str | None]:
        """The file `path` in the tree of `refs/{ref}`'s commit, and that commit's SHA.

        (None, None) when the ref does not exist; (None, sha) when its tree lacks the file. For
        refs outside `refs/heads` (`evolve-action/ledger/pr-7`): read with `contents: read`.
        """
        tip, _ = self._client._call(f"reading ref {ref}", "contents: read", lambda: self._tip(ref))
        if tip is None:
            return None, None

        def fetch() -> bytes | None:
            commit = self._repo.get_git_commit(tip)
            tree = self._repo.get_git_tree(commit.tree.sha)
            sha = next((e.sha for e in tree.tree if e.path == path and e.type == "blob"), None)
            if sha is None:
                return None
            return base64.b64decode(self._repo.get_git_blob(sha).content)

        return self._client._call(f"reading {path} on ref {ref}", "contents: read", fetch), tip

    def write_ref_file(
        self, ref: str, path: str, data: bytes, *, parent: str | None, message: str
    ) -> bool:
        """Point `refs/{ref}` at a new commit (parent `parent`) whose tree is `path` = `data`.

        Blob → tree (that one file) → commit → create the ref (`parent` None) or move it as a
        fast-forward (`force: false`). False when the ref moved or appeared meanwhile (a 422
        after which the re-read ref is elsewhere: re-read, merge, retry). A 422 on a ref that did
        not move is GitHub refusing the write: `GitHubApiError` with GitHub's message (after
        bounded retries when it says it is transient); a 403 raises `GitHubPermissionError`
        (`contents: write`).
        """
        write = "contents: write"
        encoded = base64.b64encode(data).decode("ascii")
        blob = self._client._call(
            f"uploading {path}",
            write,
            functools.partial(self._repo.create_git_blob, encoded, "base64"),
        )
        element = InputGitTreeElement(path, "100644", "blob", sha=blob.sha)
        tree = self._client._call(
            "writing the tree", write, lambda: self._repo.create_git_tree([element])
        )
        parents = (
            [
                self._client._call(
                    "reading the ref's commit",
                    "contents: read",
                    lambda: self._repo.get_git_commit(parent),
                )
            ]
            if parent is not None
            else []
        )
        commit = self._client._call(
            "writing the commit",
            write,
            lambda: self._repo.create_git_commit(message, tree, parents),
        )
        if parent is not None:  # reading the ref completes it: its URL is then `/git/refs/…`
            tip, current = self._client._call(
                f"reading ref {ref}", "contents: read", lambda: self._tip(ref)
            )
            if tip != parent:
                return False
            return self._update_ref(ref, current, commit.sha, parent, f"ref refs/{ref}") is None
        attempt = 0
        while True:
            try:
                self._repo.create_git_ref(f"refs/{ref}", commit.sha)
                return True
            except GithubException as exc:
                if exc.status != 422:
                    raise translate(exc, f"creating ref refs/{ref}", write) from exc
                reason = github_message(exc) or "Unprocessable Entity"
                tip, _ = self._client._call(
                    f"reading ref {ref}", "contents: read", lambda: self._tip(ref)
                )
                if tip is not None:
                    return False  # another run created it first: re-read, merge, retry
                if TRANSIENT_REF in reason.lower() and attempt < self._client.policy.retries:
                    attempt += 1
                    self._client._sleep(self._client.policy.backoff(attempt))
                    continue
                raise ref_refusal(exc, f"create ref refs/{ref}", reason, ref) from exc
            except requests.RequestException as exc:
                self._client._fail(exc, f"creating ref refs/{ref}", write)

    def delete_ref(self, ref: str) -> bool:
        """Delete `refs/{ref}` (never a branch or a tag: refused); False when it did not exist."""
        if ref.startswith(("heads/", "tags/")):
            raise ValueError(f"delete_ref deletes our own refs only, not {ref!r}")

        def delete() -> bool:
            tip, current = self._tip(ref)  # completes it: its URL is then `/git/refs/…`
            if tip is None:
                return False
            try:
                current.delete()
            except GithubException as exc:
                if exc.status in (404, 422) and tip_absent(exc):
                    return False
                raise
            return True

        return self._client._call(f"deleting ref refs/{ref}", "contents: write", delete)
