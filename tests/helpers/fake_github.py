"""A fake GitHub REST server on loopback, for tests that drive the real PyGithub client.

In the style of EnricoMi's publish-unit-test-result-action fake (a Flask app served by werkzeug in a
background thread), but on 127.0.0.1 port 0, threaded, with state each test builds:

    with FakeGitHub.start(tmp_path) as gh:            # or prefix="/api/v3" for a GHES-style root
        repo = gh.add_repo("octo/skills")
        base = gh.commit(repo, {"README.md": "hi\\n"}, branch="main")
        head = gh.commit(repo, {"a.txt": "x\\n"}, parents=[base], branch="feature")
        pr = gh.add_pull(repo, head_ref="feature", files=["a.txt"])
        gh.add_token("ghs_x", kind="installation")    # acts as github-actions[bot]
        client = GitHubClient("ghs_x", base_url=gh.base_url, policy=RetryPolicy.immediate())
        ...
        assert not gh.calls("PATCH", r"/repos/octo/skills/issues/comments/\\d+")

State, in memory: repositories (`add_repo`, `add_fork` for fork PRs), pull requests (head/base refs and
SHAs taken from the branches, the head repository, `changed_files`, which defaults to the number of
files), PR files (paginated with `per_page`/`page` and GitHub's `Link` header, never more than 3000),
issue comments (paginated; author login and type; created/updated; `performed_via_github_app` for
comments an installation token wrote), tokens (a PAT answers `GET /user` with its login; an installation
token gets 403 "Resource not accessible by integration" there, as GitHub answers every installation
token, and writes as `github-actions[bot]` or, for an App's token, `login="<slug>[bot]"`; `read_only=True`
gets that 403 on every write, like a fork PR's token), GraphQL `query { viewer { login } }` (the one
query GitHub answers the same for every kind of token; other queries get a GraphQL error; at
`/graphql`, or `/api/graphql` under the GHES-style `/api/v3` prefix), and the contents API (files,
directories; files above `contents_size_limit` come back without content).

Git data lives in a REAL bare repository per fake repository (`gh.git_dir(repo)`): blobs through
`git hash-object -w`, trees through `read-tree`/`update-index`/`write-tree` in a throwaway index (with
`base_tree`, `sha: null` deletions, 422 for deleting an absent path), commits through `commit-tree`, refs
through `update-ref`. `PATCH .../git/refs/...` with `force: false` answers 422 "Update is not a fast
forward" when the new commit does not descend from the ref (`git merge-base --is-ancestor`). Tests can
`git fetch` from `gh.git_dir(repo)` and inspect what the client committed.

As strict as GitHub where the product depends on it (each cites what it follows):
- Token scopes: `add_token(..., contents="read", pull_requests="write")` is a job's `permissions:`;
  a write outside them, or any write with `read_only=True` (a fork's `pull_request` run, a
  Dependabot PR), answers 403 "Resource not accessible by integration"; `pull_request_target`
  tests give the base's token, which may comment (docs.github.com/en/actions/reference/
  github_token-reference, "Permissions for the GITHUB_TOKEN").
- Rate limits: `Fault.primary_rate_limit` (403 or 429, `x-ratelimit-remaining: 0`,
  `x-ratelimit-reset`) and `Fault.secondary_rate_limit` (403 or 429, the secondary message,
  `retry-after` when given), per `RATE_LIMITS_DOC`.
- Refs: `refuse_refs(pattern)` is a ruleset (422 "Repository rule violations found" on create,
  update and delete); a created ref must start with `refs/` and have two slashes ("Create a
  reference"); `Fault.reference_cannot_be_updated` is GitHub's transient 422; `DELETE
  .../git/refs/...` answers 422 "Reference does not exist" for a missing ref.
- GraphQL is served at `graphql_path` when given (a GHES proxy): only `GITHUB_GRAPHQL_URL` finds it.

Faults: `gh.fail(method, path_regex, [502, 200, ...])` answers the next matching requests with those
statuses in order (a 2xx entry means "serve normally"); `Fault(status, message, headers)` sets GitHub's
`message` and headers such as `Retry-After`; `Fault(..., after=True)` serves the request and then
answers with the fault (a lost answer). `gh.hook(method, path_regex, fn)` runs `fn` once just before
serving a matching request (e.g. push to the branch between the client's checks and its ref update).
Every request is logged in `gh.requests` (method, path without the base prefix, query, JSON body, final
status); `gh.calls(method, path_regex)` filters it.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlencode

from flask import Flask, Response, g, request
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

FILES_CAP = 3000
"""GitHub's hard cap on `GET /pulls/{n}/files`, whatever the pagination."""

BOT_LOGIN = "github-actions[bot]"
BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"
NOT_ACCESSIBLE = "Resource not accessible by integration"
RULE_VIOLATION = (
    "Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n"
)
"""GitHub's 422 when a ruleset forbids creating or updating a ref (docs.github.com/en/repositories/
configuring-branches-and-merges-in-your-repository/managing-rulesets/about-rulesets)."""
SECONDARY_RATE_LIMIT = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
_DOCS = "https://docs.github.com/rest"
RATE_LIMITS_DOC = "https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api"


# --------------------------------------------------------------------------------------------------
# State


@dataclass(frozen=True)
class Fault:
    """One injected answer: a status, a `message` for the JSON body, and extra headers."""

    status: int
    message: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    after: bool = False
    """Serve the request normally first, then answer with this fault (a "lost answer")."""

    @staticmethod
    def secondary_rate_limit(retry_after: int | None = None, *, status: int = 403) -> Fault:
        """A secondary rate limit as GitHub answers it: a 403 or a 429 whose message says so,
        with `retry-after` seconds when given; `x-ratelimit-remaining` is NOT 0 (the primary
        budget is not spent). GitHub: "If you exceed a secondary rate limit, you will receive a
        403 or 429 response and an error message that indicates that you exceeded a secondary
        rate limit. If the retry-after response header is present, you should not retry your
        request until after that many seconds has elapsed. [...] Otherwise, wait for at least one
        minute before retrying", then exponentially (RATE_LIMITS_DOC)."""
        headers = {"x-ratelimit-limit": "1000", "x-ratelimit-remaining": "412"}
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        return Fault(status, SECONDARY_RATE_LIMIT, headers)

    @staticmethod
    def primary_rate_limit(reset_in: int, *, status: int = 403, resource: str = "core") -> Fault:
        """The primary rate limit spent: a 403 or a 429 with `x-ratelimit-remaining: 0` and
        `x-ratelimit-reset` (UTC epoch seconds) `reset_in` seconds from now. GitHub: "If you
        exceed your primary rate limit, you will receive a 403 or 429 response, and the
        x-ratelimit-remaining header will be 0. You should not retry your request until after the
        time specified by the x-ratelimit-reset header" (RATE_LIMITS_DOC). `GITHUB_TOKEN` gets
        1,000 requests an hour per repository."""
        reset = int(time.time()) + reset_in
        headers = {
            "x-ratelimit-limit": "1000",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-used": "1000",
            "x-ratelimit-reset": str(reset),
            "x-ratelimit-resource": resource,
        }
        return Fault(status, "API rate limit exceeded for installation ID 4242.", headers)

    @staticmethod
    def not_accessible() -> Fault:
        """The 403 an installation token gets for what its permissions do not cover."""
        return Fault(403, NOT_ACCESSIBLE)

    @staticmethod
    def reference_cannot_be_updated() -> Fault:
        """The transient 422 GitHub answers on a ref update under load, the ref unmoved (reported
        by release-please, renovate and others: googleapis/repo-automation-bots#4537); a retry
        clears it."""
        return Fault(422, "Reference cannot be updated")

    @staticmethod
    def not_fast_forward() -> Fault:
        """The 422 GitHub answers on a ref update that is not a fast-forward."""
        return Fault(422, "Update is not a fast forward")


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the fake saw it; `path` is relative to the base URL (no GHES prefix)."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int


@dataclass
class Token:
    """A credential the fake accepts (`Authorization: token X` or `Bearer X`)."""

    value: str
    kind: Literal["pat", "installation"]
    login: str
    read_only: bool = False
    contents: Literal["read", "write"] = "write"
    """The job's `permissions: contents:` (git data writes: blobs, trees, commits, refs)."""
    pull_requests: Literal["read", "write"] = "write"
    """The job's `permissions: pull-requests:` (issue comments on a pull request)."""

    def may_write(self, scope: Literal["contents", "pull_requests"]) -> bool:
        """What GitHub checks before a write: a read-only token (a fork's `pull_request` run,
        Dependabot) writes nothing; otherwise the scope must be granted `write`
        (docs.github.com/en/actions/reference/github_token-reference)."""
        return not self.read_only and getattr(self, scope) == "write"

    @property
    def user_type(self) -> str:
        return "Bot" if self.kind == "installation" else "User"


@dataclass
class FakeRepo:
    """A repository: its name, default branch and the bare git repository holding its objects."""

    id: int
    full_name: str
    default_branch: str
    git_dir: Path
    private: bool = False


@dataclass
class FakeFile:
    """One entry of a PR's files list."""

    filename: str
    status: str = "modified"
    previous_filename: str | None = None
    additions: int = 1
    deletions: int = 0


@dataclass
class FakePull:
    """A pull request. `changed_files` None means "the number of `files`"."""

    number: int
    repo: FakeRepo
    head_repo: FakeRepo | None
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    title: str = "A pull request"
    state: str = "open"
    user_login: str = "contributor"
    files: list[FakeFile] = field(default_factory=list)
    changed_files: int | None = None

    @property
    def changed_count(self) -> int:
        return len(self.files) if self.changed_files is None else self.changed_files


@dataclass
class FakeComment:
    """An issue comment on a PR."""

    id: int
    repo: FakeRepo
    issue: int
    body: str
    user_login: str
    user_type: str
    created_at: datetime
    updated_at: datetime
    app_slug: str | None = None
    """The App whose installation token wrote it (GitHub's `performed_via_github_app.slug`)."""


class GitError(RuntimeError):
    """A git plumbing command failed inside the fake."""


class _ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _git(
    git_dir: Path, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None
) -> str:
    """Run git against a bare repository; returns stdout (stripped)."""
    full_env = {**os.environ, "GIT_DIR": str(git_dir), **(env or {})}
    proc = subprocess.run(
        ["git", *args], input=input, capture_output=True, env=full_env, check=False
    )
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode("utf-8", errors="surrogateescape").strip()


def _git_ok(git_dir: Path, *args: str) -> bool:
    env = {**os.environ, "GIT_DIR": str(git_dir)}
    return subprocess.run(["git", *args], capture_output=True, env=env, check=False).returncode == 0


_SHA = re.compile(r"[0-9a-f]{40}")


class FakeGitHub:
    """The fake's state and its HTTP server. Build state with the `add_*`/`commit` helpers."""

    def __init__(self, root: Path, *, prefix: str = "", graphql_path: str | None = None) -> None:
        self.root = Path(root)
        self.prefix = prefix.rstrip("/")
        self.graphql_path = graphql_path
        """Where GraphQL is served (default: `/graphql`, or `/api/graphql` under `/api/v3`); a
        GHES proxy may put it elsewhere, which only `GITHUB_GRAPHQL_URL` says."""
        self.repos: dict[str, FakeRepo] = {}
        self.pulls: dict[tuple[str, int], FakePull] = {}
        self.comments: dict[int, FakeComment] = {}
        self.tokens: dict[str, Token] = {}
        self.requests: list[LoggedRequest] = []
        self.contents_size_limit = 1_000_000
        """Files above this size come back from the contents API without content (`encoding: none`)."""
        self.ref_rules: list[tuple[re.Pattern[str], str]] = []
        """Rulesets on refs: a create or update of a matching `refs/…` name answers 422 with the
        message (`refuse_refs`)."""
        self._faults: list[tuple[str, re.Pattern[str], list[Fault]]] = []
        self._hooks: list[tuple[str, re.Pattern[str], list[Callable[[], None]]]] = []
        self._ids = itertools.count(1001)
        self._clock = datetime(2026, 1, 1, tzinfo=UTC)
        self._lock = threading.RLock()
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""
        self.app = self._build_app()

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    @contextlib.contextmanager
    def start(
        cls, root: Path, *, prefix: str = "", graphql_path: str | None = None
    ) -> Iterator[FakeGitHub]:
        """Serve a new fake on 127.0.0.1, a free port, in a daemon thread; stop it on exit."""
        fake = cls(root, prefix=prefix, graphql_path=graphql_path)
        fake.serve()
        try:
            yield fake
        finally:
            fake.stop()

    def serve(self) -> None:
        """Bind (the socket listens before this returns) and serve in a background thread."""
        server = make_server("127.0.0.1", 0, self.app, threaded=True, request_handler=_QuietHandler)
        self._server = server
        self.base_url = f"http://127.0.0.1:{server.server_port}{self.prefix}"
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name="fake-github", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    # ------------------------------------------------------------------ builders

    def now(self) -> datetime:
        """A deterministic clock: one second later on every call."""
        with self._lock:
            self._clock += timedelta(seconds=1)
            return self._clock

    def add_token(
        self,
        value: str,
        *,
        kind: Literal["pat", "installation"] = "pat",
        login: str | None = None,
        read_only: bool = False,
        contents: Literal["read", "write"] = "write",
        pull_requests: Literal["read", "write"] = "write",
    ) -> str:
        """Register a token; installation tokens act as `github-actions[bot]`. Returns `value`."""
        if login is None:
            login = BOT_LOGIN if kind == "installation" else "octocat"
        self.tokens[value] = Token(value, kind, login, read_only, contents, pull_requests)
        return value

    def add_repo(self, full_name: str, *, default_branch: str = "main") -> FakeRepo:
        """Create a repository with an empty bare git repository behind it."""
        git_dir = self.root / "fake-github" / f"{full_name.replace('/', '+')}.git"
        git_dir.mkdir(parents=True)
        subprocess.run(
            ["git", "init", "--bare", "-q", "-b", default_branch, str(git_dir)], check=True
        )
        repo = FakeRepo(next(self._ids), full_name, default_branch, git_dir)
        self.repos[full_name] = repo
        return repo

    def add_fork(self, source: FakeRepo | str, full_name: str) -> FakeRepo:
        """A fork of `source`: a new repository holding the same objects and branches."""
        source = self._repo(source)
        fork = self.add_repo(full_name, default_branch=source.default_branch)
        _git(fork.git_dir, "fetch", "-q", str(source.git_dir), "+refs/heads/*:refs/heads/*")
        return fork

    def git_dir(self, repo: FakeRepo | str) -> Path:
        return self._repo(repo).git_dir

    def commit(
        self,
        repo: FakeRepo | str,
        files: Mapping[str, bytes | str | None],
        *,
        parents: Sequence[str] = (),
        branch: str | None = None,
        message: str = "test commit",
        symlinks: Mapping[str, str] | None = None,
    ) -> str:
        """Write a commit: the first parent's tree with `files` applied (None deletes) and
        `symlinks` (path → link text) added. Moves `branch`."""
        repo = self._repo(repo)
        entries = (
            [
                {"path": path, "mode": "100644", "type": "blob", "content": content}
                for path, content in files.items()
                if content is not None
            ]
            + [
                {"path": path, "mode": "120000", "type": "blob", "content": target}
                for path, target in (symlinks or {}).items()
            ]
            + [
                {"path": path, "mode": "100644", "type": "blob", "sha": None}
                for path, content in files.items()
                if content is None
            ]
        )
        base_tree = self._commit_tree_sha(repo, parents[0]) if parents else None
        tree = self._write_tree(repo, base_tree, entries)
        args = ["commit-tree", tree, "-m", message]
        for parent in parents:
            args += ["-p", parent]
        sha = _git(repo.git_dir, *args, env=_identity_env("Test Author", "test@example.invalid"))
        if branch is not None:
            _git(repo.git_dir, "update-ref", f"refs/heads/{branch}", sha)
        return sha

    def ref_sha(self, repo: FakeRepo | str, ref: str) -> str | None:
        """The sha `refs/<ref>` points at (e.g. `heads/main`), or None."""
        repo = self._repo(repo)
        try:
            return _git(repo.git_dir, "rev-parse", "--verify", "-q", f"refs/{ref}")
        except GitError:
            return None

    def add_pull(
        self,
        repo: FakeRepo | str,
        *,
        head_ref: str,
        base_ref: str | None = None,
        head_repo: FakeRepo | str | None = None,
        number: int | None = None,
        files: Sequence[FakeFile | str] = (),
        changed_files: int | None = None,
        title: str = "A pull request",
    ) -> FakePull:
        """A PR from `head_repo` (default: `repo`; another repo makes it a fork PR) at the refs' tips."""
        repo = self._repo(repo)
        head = self._repo(head_repo) if head_repo is not None else repo
        base_ref = base_ref or repo.default_branch
        head_sha = self.ref_sha(head, f"heads/{head_ref}")
        base_sha = self.ref_sha(repo, f"heads/{base_ref}")
        if head_sha is None or base_sha is None:
            raise ValueError(f"add_pull: refs {head_ref!r}/{base_ref!r} must exist first")
        if number is None:
            number = 1 + max((n for (name, n) in self.pulls if name == repo.full_name), default=0)
        pull = FakePull(
            number=number,
            repo=repo,
            head_repo=head,
            head_ref=head_ref,
            head_sha=head_sha,
            base_ref=base_ref,
            base_sha=base_sha,
            title=title,
            files=[f if isinstance(f, FakeFile) else FakeFile(f) for f in files],
            changed_files=changed_files,
        )
        self.pulls[(repo.full_name, number)] = pull
        return pull

    def add_comment(
        self,
        repo: FakeRepo | str,
        issue: int,
        body: str,
        *,
        login: str = "reviewer",
        user_type: str = "User",
        app_slug: str | None = None,
    ) -> FakeComment:
        """An existing comment, written by `login` (through App `app_slug`'s token, when given)."""
        repo = self._repo(repo)
        now = self.now()
        comment = FakeComment(
            next(self._ids), repo, issue, body, login, user_type, now, now, app_slug
        )
        with self._lock:
            self.comments[comment.id] = comment
        return comment

    def comments_on(self, repo: FakeRepo | str, issue: int) -> list[FakeComment]:
        name = self._repo(repo).full_name
        return sorted(
            (c for c in self.comments.values() if c.repo.full_name == name and c.issue == issue),
            key=lambda c: c.id,
        )

    # ------------------------------------------------------------------ faults and the log

    def fail(self, method: str, path: str, statuses: Sequence[int | Fault]) -> None:
        """Answer the next requests matching `method` and the regex `path` (full match) with `statuses`.

        Entries are used in order, one per matching request; a 2xx entry means "serve normally".
        """
        faults = [s if isinstance(s, Fault) else Fault(s) for s in statuses]
        with self._lock:
            self._faults.append((method.upper(), re.compile(path), faults))

    def refuse_refs(self, pattern: str, message: str = RULE_VIOLATION) -> None:
        """A ruleset: creating or moving a ref whose full name (`refs/…`) matches the regex
        `pattern` answers 422 with `message`, every time, whoever asks (as GitHub's rulesets do,
        for branches, tags and, with push rulesets, any ref)."""
        with self._lock:
            self.ref_rules.append((re.compile(pattern), message))

    def hook(self, method: str, path: str, fn: Callable[[], None]) -> None:
        """Run `fn` once, just before serving the next request matching `method` and `path`.

        E.g. move a branch between the client's checks and its ref update, to provoke a real race.
        """
        with self._lock:
            self._hooks.append((method.upper(), re.compile(path), [fn]))

    def calls(self, method: str | None = None, path: str | None = None) -> list[LoggedRequest]:
        """Logged requests, filtered by method and a full-match path regex."""
        with self._lock:
            logged = list(self.requests)
        return [
            r
            for r in logged
            if (method is None or r.method == method.upper())
            and (path is None or re.fullmatch(path, r.path))
        ]

    def clear_log(self) -> None:
        with self._lock:
            self.requests.clear()

    def _check_rules(self, full_ref: str) -> None:
        for pattern, message in self.ref_rules:
            if pattern.fullmatch(full_ref):
                raise _ApiError(422, message)

    def _next_hook(self, method: str, path: str) -> Callable[[], None] | None:
        with self._lock:
            for hmethod, pattern, fns in self._hooks:
                if hmethod == method and pattern.fullmatch(path) and fns:
                    return fns.pop(0)
        return None

    def _next_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fmethod, pattern, faults in self._faults:
                if fmethod == method and pattern.fullmatch(path) and faults:
                    return faults.pop(0)
        return None

    # ------------------------------------------------------------------ helpers

    def _repo(self, repo: FakeRepo | str) -> FakeRepo:
        if isinstance(repo, FakeRepo):
            return repo
        try:
            return self.repos[repo]
        except KeyError:
            raise _ApiError(404, "Not Found") from None

    def _url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def _commit_tree_sha(self, repo: FakeRepo, commit: str) -> str:
        return _git(repo.git_dir, "rev-parse", f"{commit}^{{tree}}")

    def _object_type(self, repo: FakeRepo, sha: str) -> str | None:
        if not _SHA.fullmatch(sha):
            return None
        try:
            return _git(repo.git_dir, "cat-file", "-t", sha)
        except GitError:
            return None

    def _write_tree(
        self, repo: FakeRepo, base_tree: str | None, entries: Sequence[Mapping[str, Any]]
    ) -> str:
        """Apply tree entries to `base_tree` (or an empty tree) in a throwaway index; write the tree."""
        with tempfile.TemporaryDirectory(dir=self.root) as tmp:
            work = Path(tmp) / "work"
            work.mkdir()
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_WORK_TREE": str(work)}
            if base_tree is not None:
                _git(repo.git_dir, "read-tree", base_tree, env=env)
            else:
                _git(repo.git_dir, "read-tree", "--empty", env=env)
            for entry in entries:
                path = str(entry.get("path", "")).strip("/")
                mode = str(entry.get("mode", "100644"))
                kind = entry.get("type", "blob")
                if not path or ".." in path.split("/"):
                    raise _ApiError(422, f"tree.path {path!r} is invalid")
                if "sha" in entry and entry["sha"] is None:
                    listed = _git(repo.git_dir, "ls-files", "--", path, env=env)
                    if not listed:
                        raise _ApiError(422, "GitRPC::BadObjectState")
                    _git(repo.git_dir, "rm", "--cached", "-r", "-f", "-q", "--", path, env=env)
                    continue
                if "content" in entry:
                    content = entry["content"]
                    data = content.encode() if isinstance(content, str) else bytes(content)
                    sha = _git(repo.git_dir, "hash-object", "-w", "--stdin", input=data)
                else:
                    sha = str(entry.get("sha", ""))
                    expected = (
                        "tree" if kind == "tree" else ("commit" if mode == "160000" else "blob")
                    )
                    if mode != "160000" and self._object_type(repo, sha) != expected:
                        raise _ApiError(422, f"tree.sha {sha} is not a valid {expected}")
                if kind == "tree":
                    _git(
                        repo.git_dir,
                        "rm",
                        "--cached",
                        "-r",
                        "-f",
                        "-q",
                        "--ignore-unmatch",
                        "--",
                        path,
                        env=env,
                    )
                    _git(repo.git_dir, "read-tree", f"--prefix={path}/", sha, env=env)
                    continue
                if mode not in ("100644", "100755", "120000", "160000"):
                    raise _ApiError(422, f"tree.mode {mode} is invalid")
                # `--replace` lets a file take the place of a directory (or the reverse).
                _git(
                    repo.git_dir,
                    "update-index",
                    "--add",
                    "--replace",
                    "--cacheinfo",
                    f"{mode},{sha},{path}",
                    env=env,
                )
            return _git(repo.git_dir, "write-tree", env=env)

    def _resolve(self, repo: FakeRepo, ref: str | None) -> str | None:
        ref = ref or repo.default_branch
        for candidate in (f"refs/heads/{ref}", f"refs/tags/{ref}", ref):
            try:
                return _git(repo.git_dir, "rev-parse", "--verify", "-q", f"{candidate}^{{commit}}")
            except GitError:
                continue
        return None

    # ------------------------------------------------------------------ JSON shapes

    def _user_json(self, login: str, user_type: str = "User") -> dict[str, Any]:
        return {
            "login": login,
            "id": zlib.crc32(login.encode()) % 10_000_000,
            "type": user_type,
            "url": self._url(f"/users/{login}"),
            "html_url": f"https://github.com/{login}",
        }

    def _repo_json(self, repo: FakeRepo) -> dict[str, Any]:
        owner = repo.full_name.split("/")[0]
        return {
            "id": repo.id,
            "name": repo.full_name.split("/")[1],
            "full_name": repo.full_name,
            "private": repo.private,
            "owner": self._user_json(owner, "Organization"),
            "default_branch": repo.default_branch,
            "url": self._url(f"/repos/{repo.full_name}"),
            "html_url": f"https://github.com/{repo.full_name}",
        }

    def _pull_json(self, pull: FakePull) -> dict[str, Any]:
        base = f"/repos/{pull.repo.full_name}"
        head_owner = (pull.head_repo or pull.repo).full_name.split("/")[0]
        return {
            "id": 500_000 + pull.number,
            "number": pull.number,
            "state": pull.state,
            "title": pull.title,
            "user": self._user_json(pull.user_login),
            "url": self._url(f"{base}/pulls/{pull.number}"),
            "html_url": f"https://github.com/{pull.repo.full_name}/pull/{pull.number}",
            "issue_url": self._url(f"{base}/issues/{pull.number}"),
            "comments_url": self._url(f"{base}/issues/{pull.number}/comments"),
            "head": {
                "label": f"{head_owner}:{pull.head_ref}",
                "ref": pull.head_ref,
                "sha": pull.head_sha,
                "repo": self._repo_json(pull.head_repo) if pull.head_repo is not None else None,
            },
            "base": {
                "label": f"{pull.repo.full_name.split('/')[0]}:{pull.base_ref}",
                "ref": pull.base_ref,
                "sha": pull.base_sha,
                "repo": self._repo_json(pull.repo),
            },
            "draft": False,
            "merged": False,
            "changed_files": pull.changed_count,
            "additions": sum(f.additions for f in pull.files),
            "deletions": sum(f.deletions for f in pull.files),
            "commits": 1,
        }

    def _file_json(self, pull: FakePull, f: FakeFile) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sha": "0" * 40,
            "filename": f.filename,
            "status": f.status,
            "additions": f.additions,
            "deletions": f.deletions,
            "changes": f.additions + f.deletions,
            "blob_url": f"https://github.com/{pull.repo.full_name}/blob/{pull.head_sha}/{f.filename}",
            "raw_url": f"https://github.com/{pull.repo.full_name}/raw/{pull.head_sha}/{f.filename}",
            "contents_url": self._url(
                f"/repos/{pull.repo.full_name}/contents/{f.filename}?ref={pull.head_sha}"
            ),
        }
        if f.previous_filename is not None:
            out["previous_filename"] = f.previous_filename
        return out

    def _comment_json(self, c: FakeComment) -> dict[str, Any]:
        base = f"/repos/{c.repo.full_name}"
        return {
            "id": c.id,
            "node_id": f"IC_{c.id}",
            "url": self._url(f"{base}/issues/comments/{c.id}"),
            "html_url": f"https://github.com/{c.repo.full_name}/pull/{c.issue}#issuecomment-{c.id}",
            "issue_url": self._url(f"{base}/issues/{c.issue}"),
            "body": c.body,
            "user": self._user_json(c.user_login, c.user_type),
            "created_at": _iso(c.created_at),
            "updated_at": _iso(c.updated_at),
            "author_association": "NONE" if c.user_type == "Bot" else "MEMBER",
            "performed_via_github_app": (
                {"id": zlib.crc32(c.app_slug.encode()) % 1_000_000, "slug": c.app_slug}
                if c.app_slug
                else None
            ),
        }

    def _commit_json(self, repo: FakeRepo, sha: str) -> dict[str, Any]:
        raw = _git(repo.git_dir, "cat-file", "commit", sha)
        header, _, message = raw.partition("\n\n")
        tree = ""
        parents: list[str] = []
        people: dict[str, dict[str, str]] = {}
        for line in header.splitlines():
            key, _, value = line.partition(" ")
            if key == "tree":
                tree = value
            elif key == "parent":
                parents.append(value)
            elif key in ("author", "committer"):
                m = re.fullmatch(r"(.*) <(.*)> (\d+) ([+-]\d{4})", value)
                if m:
                    when = datetime.fromtimestamp(int(m.group(3)), UTC)
                    people[key] = {"name": m.group(1), "email": m.group(2), "date": _iso(when)}
        base = f"/repos/{repo.full_name}/git"
        return {
            "sha": sha,
            "node_id": f"C_{sha[:12]}",
            "url": self._url(f"{base}/commits/{sha}"),
            "html_url": f"https://github.com/{repo.full_name}/commit/{sha}",
            "tree": {"sha": tree, "url": self._url(f"{base}/trees/{tree}")},
            "parents": [{"sha": p, "url": self._url(f"{base}/commits/{p}")} for p in parents],
            "message": message,
            "author": people.get("author", {}),
            "committer": people.get("committer", {}),
            "verification": {"verified": False, "reason": "unsigned"},
        }

    def _tree_json(self, repo: FakeRepo, sha: str, recursive: bool) -> dict[str, Any]:
        args = ["ls-tree", "-l", "-z"] + (["-r", "-t"] if recursive else []) + [sha]
        out = _git(repo.git_dir, *args)
        entries: list[dict[str, Any]] = []
        base = f"/repos/{repo.full_name}/git"
        for record in filter(None, out.split("\0")):
            meta, _, path = record.partition("\t")
            mode, kind, obj, size = meta.split(maxsplit=3)
            entry: dict[str, Any] = {"path": path, "mode": mode, "type": kind, "sha": obj}
            if kind == "blob":
                entry["size"] = int(size)
            entry["url"] = self._url(f"{base}/{kind}s/{obj}")
            entries.append(entry)
        return {
            "sha": sha,
            "url": self._url(f"{base}/trees/{sha}"),
            "tree": entries,
            "truncated": False,
        }

    def _ref_json(self, repo: FakeRepo, ref: str, sha: str) -> dict[str, Any]:
        base = f"/repos/{repo.full_name}/git"
        return {
            "ref": f"refs/{ref}",
            "node_id": f"REF_{ref}",
            "url": self._url(f"{base}/refs/{ref}"),
            "object": {"sha": sha, "type": "commit", "url": self._url(f"{base}/commits/{sha}")},
        }

    def _paginate(self, items: Sequence[Any], path: str) -> tuple[list[Any], dict[str, str]]:
        """Slice `items` by `per_page` (default 30, max 100) and `page`, with GitHub's Link header."""
        try:
            per_page = max(1, min(100, int(request.args.get("per_page", "30"))))
            page = max(1, int(request.args.get("page", "1")))
        except ValueError:
            raise _ApiError(422, "Invalid pagination parameters") from None
        last = max(1, -(-len(items) // per_page))
        chunk = list(items[(page - 1) * per_page : page * per_page])
        others = {k: v for k, v in request.args.items() if k not in ("page", "per_page")}

        def link(n: int) -> str:
            query = urlencode({**others, "per_page": per_page, "page": n})
            return f"<{self._url(path)}?{query}>"

        rels = []
        if page < last:
            rels += [f'{link(page + 1)}; rel="next"', f'{link(last)}; rel="last"']
        if page > 1:
            rels += [f'{link(1)}; rel="first"', f'{link(page - 1)}; rel="prev"']
        return chunk, ({"Link": ", ".join(rels)} if rels else {})

    # ------------------------------------------------------------------ the app

    def _build_app(self) -> Flask:
        app = Flask("fake_github")
        fake = self
        pre = self.prefix

        def current_token() -> Token:
            header = request.headers.get("Authorization", "")
            value = header.split(" ", 1)[1] if " " in header else ""
            token = fake.tokens.get(value)
            if token is None:
                raise _ApiError(401, "Bad credentials")
            return token

        def body() -> Any:
            return request.get_json(silent=True, force=True)

        @app.before_request
        def _before() -> Response | None:
            path = request.path[len(pre) :] if request.path.startswith(pre) else request.path
            hook = fake._next_hook(request.method, path)
            if hook is not None:
                hook()
            fault = fake._next_fault(request.method, path)
            if fault is not None and fault.status >= 300:
                if fault.after:
                    g.after_fault = fault
                    return None
                return _fault_response(fault)
            return None

        @app.after_request
        def _after(response: Response) -> Response:
            path = request.path[len(pre) :] if request.path.startswith(pre) else request.path
            after_fault = g.pop("after_fault", None)
            if after_fault is not None:
                response = _fault_response(after_fault)
            logged = LoggedRequest(
                method=request.method,
                path=path,
                query=dict(request.args.items()),
                body=request.get_json(silent=True, force=True),
                status=response.status_code,
            )
            with fake._lock:
                fake.requests.append(logged)
            return response

        @app.errorhandler(_ApiError)
        def _api_error(exc: _ApiError) -> Response:
            return _json({"message": exc.message, "documentation_url": _DOCS}, exc.status)

        @app.errorhandler(404)
        def _not_found(exc: Exception) -> Response:
            return _json({"message": "Not Found", "documentation_url": _DOCS}, 404)

        def require_write(token: Token, scope: Literal["contents", "pull_requests"]) -> None:
            if not token.may_write(scope):
                raise _ApiError(403, NOT_ACCESSIBLE)

        def pull_of(owner: str, name: str, number: int) -> FakePull:
            pull = fake.pulls.get((f"{owner}/{name}", number))
            if pull is None:
                raise _ApiError(404, "Not Found")
            return pull

        @app.get(f"{pre}/user")
        def get_user() -> Response:
            token = current_token()
            if token.kind == "installation":
                raise _ApiError(403, NOT_ACCESSIBLE)
            return _json(fake._user_json(token.login))

        graphql = self.graphql_path or (
            (pre.removesuffix("/v3") if pre.endswith("/v3") else pre) + "/graphql"
        )

        @app.post(graphql)
        def post_graphql() -> Response:
            token = current_token()
            query = str((body() or {}).get("query", ""))
            if re.fullmatch(r"\s*(?:query\s*)?\{\s*viewer\s*\{\s*login\s*\}\s*\}\s*", query):
                return _json({"data": {"viewer": {"login": token.login}}})
            return _json({"errors": [{"message": "the fake answers only viewer { login }"}]})

        @app.get(f"{pre}/repos/<owner>/<name>")
        def get_repo(owner: str, name: str) -> Response:
            current_token()
            return _json(fake._repo_json(fake._repo(f"{owner}/{name}")))

        @app.get(f"{pre}/repos/<owner>/<name>/pulls/<int:number>")
        def get_pull(owner: str, name: str, number: int) -> Response:
            current_token()
            return _json(fake._pull_json(pull_of(owner, name, number)))

        @app.get(f"{pre}/repos/<owner>/<name>/pulls/<int:number>/files")
        def get_pull_files(owner: str, name: str, number: int) -> Response:
            current_token()
            pull = pull_of(owner, name, number)
            files = pull.files[:FILES_CAP]
            chunk, headers = fake._paginate(files, request.path[len(pre) :])
            return _json([fake._file_json(pull, f) for f in chunk], 200, headers)

        @app.get(f"{pre}/repos/<owner>/<name>/issues/<int:number>/comments")
        def list_comments(owner: str, name: str, number: int) -> Response:
            current_token()
            comments = fake.comments_on(fake._repo(f"{owner}/{name}"), number)
            chunk, headers = fake._paginate(comments, request.path[len(pre) :])
            return _json([fake._comment_json(c) for c in chunk], 200, headers)

        @app.post(f"{pre}/repos/<owner>/<name>/issues/<int:number>/comments")
        def create_comment(owner: str, name: str, number: int) -> Response:
            token = current_token()
            require_write(token, "pull_requests")
            repo = fake._repo(f"{owner}/{name}")
            text = (body() or {}).get("body")
            if not isinstance(text, str) or not text:
                raise _ApiError(422, "Validation Failed")
            if len(text) > 65536:
                raise _ApiError(422, "Body is too long (maximum is 65536 characters)")
            comment = fake.add_comment(
                repo,
                number,
                text,
                login=token.login,
                user_type=token.user_type,
                app_slug=token.login.removesuffix("[bot]")
                if token.kind == "installation"
                else None,
            )
            return _json(fake._comment_json(comment), 201)

        def comment_of(owner: str, name: str, comment_id: int) -> FakeComment:
            comment = fake.comments.get(comment_id)
            if comment is None or comment.repo.full_name != f"{owner}/{name}":
                raise _ApiError(404, "Not Found")
            return comment

        @app.get(f"{pre}/repos/<owner>/<name>/issues/comments/<int:comment_id>")
        def get_comment(owner: str, name: str, comment_id: int) -> Response:
            current_token()
            return _json(fake._comment_json(comment_of(owner, name, comment_id)))

        @app.patch(f"{pre}/repos/<owner>/<name>/issues/comments/<int:comment_id>")
        def edit_comment(owner: str, name: str, comment_id: int) -> Response:
            token = current_token()
            require_write(token, "pull_requests")
            comment = comment_of(owner, name, comment_id)
            if comment.user_login != token.login:
                raise _ApiError(
                    403, NOT_ACCESSIBLE if token.kind == "installation" else "Forbidden"
                )
            text = (body() or {}).get("body")
            if not isinstance(text, str) or not text:
                raise _ApiError(422, "Validation Failed")
            if len(text) > 65536:
                raise _ApiError(422, "Body is too long (maximum is 65536 characters)")
            comment.body = text
            comment.updated_at = fake.now()
            return _json(fake._comment_json(comment))

        @app.delete(f"{pre}/repos/<owner>/<name>/issues/comments/<int:comment_id>")
        def delete_comment(owner: str, name: str, comment_id: int) -> Response:
            token = current_token()
            require_write(token, "pull_requests")
            comment = comment_of(owner, name, comment_id)
            with fake._lock:
                del fake.comments[comment.id]
            return Response(status=204)

        @app.get(f"{pre}/repos/<owner>/<name>/contents/<path:path>")
        @app.get(f"{pre}/repos/<owner>/<name>/contents/", defaults={"path": ""})
        def get_contents(owner: str, name: str, path: str) -> Response:
            current_token()
            repo = fake._repo(f"{owner}/{name}")
            ref = request.args.get("ref")
            commit = fake._resolve(repo, ref)
            if commit is None:
                raise _ApiError(404, f"No commit found for the ref {ref}")
            path = path.strip("/")
            target = f"{commit}:{path}" if path else f"{commit}^{{tree}}"
            try:
                kind = _git(repo.git_dir, "cat-file", "-t", target)
            except GitError:
                raise _ApiError(404, "Not Found") from None
            base = f"/repos/{repo.full_name}"
            if kind == "tree":
                listing = fake._tree_json(repo, _git(repo.git_dir, "rev-parse", target), False)
                items = [
                    {
                        "type": "dir" if e["type"] == "tree" else "file",
                        "name": e["path"],
                        "path": f"{path}/{e['path']}" if path else e["path"],
                        "sha": e["sha"],
                        "size": e.get("size", 0),
                        "url": fake._url(f"{base}/contents/{path}/{e['path']}?ref={ref or ''}"),
                    }
                    for e in listing["tree"]
                ]
                return _json(items)
            sha = _git(repo.git_dir, "rev-parse", target)
            data = _git_bytes(repo.git_dir, "cat-file", "blob", sha)
            big = len(data) > fake.contents_size_limit
            return _json(
                {
                    "type": "file",
                    "encoding": "none" if big else "base64",
                    "size": len(data),
                    "name": path.rsplit("/", 1)[-1],
                    "path": path,
                    "content": "" if big else _b64_lines(data),
                    "sha": sha,
                    "url": fake._url(f"{base}/contents/{path}"),
                    "git_url": fake._url(f"{base}/git/blobs/{sha}"),
                    "html_url": f"https://github.com/{repo.full_name}/blob/{commit}/{path}",
                    "download_url": None,
                }
            )

        @app.post(f"{pre}/repos/<owner>/<name>/git/blobs")
        def create_blob(owner: str, name: str) -> Response:
            token = current_token()
            require_write(token, "contents")
            repo = fake._repo(f"{owner}/{name}")
            payload = body() or {}
            content = payload.get("content")
            encoding = payload.get("encoding", "utf-8")
            if not isinstance(content, str) or encoding not in ("utf-8", "base64"):
                raise _ApiError(422, "Invalid request")
            try:
                data = (
                    base64.b64decode(content, validate=False)
                    if encoding == "base64"
                    else content.encode()
                )
            except ValueError:
                raise _ApiError(422, "Invalid base64") from None
            with fake._lock:
                sha = _git(repo.git_dir, "hash-object", "-w", "--stdin", input=data)
            return _json(
                {"sha": sha, "url": fake._url(f"/repos/{repo.full_name}/git/blobs/{sha}")}, 201
            )

        @app.get(f"{pre}/repos/<owner>/<name>/git/blobs/<sha>")
        def get_blob(owner: str, name: str, sha: str) -> Response:
            current_token()
            repo = fake._repo(f"{owner}/{name}")
            if fake._object_type(repo, sha) != "blob":
                raise _ApiError(404, "Not Found")
            data = _git_bytes(repo.git_dir, "cat-file", "blob", sha)
            return _json(
                {
                    "sha": sha,
                    "size": len(data),
                    "encoding": "base64",
                    "content": _b64_lines(data),
                    "url": fake._url(f"/repos/{repo.full_name}/git/blobs/{sha}"),
                }
            )

        @app.get(f"{pre}/repos/<owner>/<name>/git/trees/<sha>")
        def get_tree(owner: str, name: str, sha: str) -> Response:
            current_token()
            repo = fake._repo(f"{owner}/{name}")
            try:
                tree = _git(repo.git_dir, "rev-parse", "--verify", "-q", f"{sha}^{{tree}}")
            except GitError:
                raise _ApiError(404, "Not Found") from None
            recursive = request.args.get("recursive") not in (None, "", "0", "false")
            return _json(fake._tree_json(repo, tree, recursive))

        @app.post(f"{pre}/repos/<owner>/<name>/git/trees")
        def create_tree(owner: str, name: str) -> Response:
            token = current_token()
            require_write(token, "contents")
            repo = fake._repo(f"{owner}/{name}")
            payload = body() or {}
            entries = payload.get("tree")
            base_tree = payload.get("base_tree")
            if not isinstance(entries, list):
                raise _ApiError(422, "Invalid tree info")
            if base_tree is not None and fake._object_type(repo, str(base_tree)) != "tree":
                raise _ApiError(422, "base_tree is not a valid tree")
            with fake._lock:
                sha = fake._write_tree(repo, base_tree, entries)
            return _json(fake._tree_json(repo, sha, False), 201)

        @app.get(f"{pre}/repos/<owner>/<name>/git/commits/<sha>")
        def get_commit(owner: str, name: str, sha: str) -> Response:
            current_token()
            repo = fake._repo(f"{owner}/{name}")
            if fake._object_type(repo, sha) != "commit":
                raise _ApiError(404, "Not Found")
            return _json(fake._commit_json(repo, sha))

        @app.post(f"{pre}/repos/<owner>/<name>/git/commits")
        def create_commit(owner: str, name: str) -> Response:
            token = current_token()
            require_write(token, "contents")
            repo = fake._repo(f"{owner}/{name}")
            payload = body() or {}
            message, tree, parents = (
                payload.get("message"),
                payload.get("tree"),
                payload.get("parents", []),
            )
            if (
                not isinstance(message, str)
                or not isinstance(tree, str)
                or not isinstance(parents, list)
            ):
                raise _ApiError(422, "Invalid request")
            if fake._object_type(repo, tree) != "tree":
                raise _ApiError(422, "Tree SHA does not exist")
            for parent in parents:
                if fake._object_type(repo, str(parent)) != "commit":
                    raise _ApiError(422, "Parent SHA does not exist or is not a commit object")
            default_email = (
                BOT_EMAIL
                if token.kind == "installation"
                else f"{token.login}@users.noreply.github.com"
            )
            author = payload.get("author") or {"name": token.login, "email": default_email}
            committer = payload.get("committer") or (
                {"name": "GitHub", "email": "noreply@github.com"}
                if not payload.get("author")
                else author
            )
            env = {
                "GIT_AUTHOR_NAME": author["name"],
                "GIT_AUTHOR_EMAIL": author["email"],
                "GIT_COMMITTER_NAME": committer["name"],
                "GIT_COMMITTER_EMAIL": committer["email"],
            }
            args = ["commit-tree", tree, "-F", "-"]
            for parent in parents:
                args += ["-p", str(parent)]
            with fake._lock:
                sha = _git(repo.git_dir, *args, input=message.encode(), env=env)
            return _json(fake._commit_json(repo, sha), 201)

        def read_ref(owner: str, name: str, ref: str) -> Response:
            current_token()
            repo = fake._repo(f"{owner}/{name}")
            sha = fake.ref_sha(repo, ref)
            if sha is None:
                raise _ApiError(404, "Not Found")
            return _json(fake._ref_json(repo, ref, sha))

        @app.get(f"{pre}/repos/<owner>/<name>/git/ref/<path:ref>")
        def get_ref(owner: str, name: str, ref: str) -> Response:
            return read_ref(owner, name, ref)

        @app.get(f"{pre}/repos/<owner>/<name>/git/refs/<path:ref>")
        def get_refs(owner: str, name: str, ref: str) -> Response:
            return read_ref(owner, name, ref)

        @app.post(f"{pre}/repos/<owner>/<name>/git/refs")
        def create_ref(owner: str, name: str) -> Response:
            token = current_token()
            require_write(token, "contents")
            repo = fake._repo(f"{owner}/{name}")
            payload = body() or {}
            full, sha = str(payload.get("ref", "")), str(payload.get("sha", ""))
            if full.count("/") < 2 or not full.startswith("refs/"):
                # GitHub: "If it doesn't start with 'refs' and have at least two slashes, it will
                # be rejected." (REST, "Create a reference")
                raise _ApiError(422, "Reference name is invalid")
            if fake._object_type(repo, sha) != "commit":
                raise _ApiError(422, "Reference update failed")
            fake._check_rules(full)
            with fake._lock:
                if fake.ref_sha(repo, full[len("refs/") :]) is not None:
                    raise _ApiError(422, "Reference already exists")
                _git(repo.git_dir, "update-ref", full, sha, "0" * 40)
            return _json(fake._ref_json(repo, full[len("refs/") :], sha), 201)

        @app.patch(f"{pre}/repos/<owner>/<name>/git/refs/<path:ref>")
        def update_ref(owner: str, name: str, ref: str) -> Response:
            token = current_token()
            require_write(token, "contents")
            repo = fake._repo(f"{owner}/{name}")
            payload = body() or {}
            sha, force = str(payload.get("sha", "")), bool(payload.get("force", False))
            with fake._lock:
                old = fake.ref_sha(repo, ref)
                if old is None:
                    raise _ApiError(422, "Reference does not exist")
                if fake._object_type(repo, sha) != "commit":
                    raise _ApiError(422, "Object does not exist")
                fake._check_rules(f"refs/{ref}")
                if not force and not _git_ok(repo.git_dir, "merge-base", "--is-ancestor", old, sha):
                    raise _ApiError(422, "Update is not a fast forward")
                _git(repo.git_dir, "update-ref", f"refs/{ref}", sha, old)
            return _json(fake._ref_json(repo, ref, sha))

        @app.delete(f"{pre}/repos/<owner>/<name>/git/refs/<path:ref>")
        def delete_ref(owner: str, name: str, ref: str) -> Response:
            token = current_token()
            require_write(token, "contents")
            repo = fake._repo(f"{owner}/{name}")
            with fake._lock:
                old = fake.ref_sha(repo, ref)
                if old is None:  # GitHub: 422 "Reference does not exist"
                    raise _ApiError(422, "Reference does not exist")
                fake._check_rules(f"refs/{ref}")
                _git(repo.git_dir, "update-ref", "-d", f"refs/{ref}", old)
            return Response(status=204)

        return app


# --------------------------------------------------------------------------------------------------
# Small helpers


class _QuietHandler(WSGIRequestHandler):
    """No access log on stderr: the fake's own request log is what tests read."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


def _json(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    response = Response(json.dumps(data), status=status, mimetype="application/json")
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def _fault_response(fault: Fault) -> Response:
    message = fault.message or _default_message(fault.status)
    return _json({"message": message, "documentation_url": _DOCS}, fault.status, fault.headers)


def _default_message(status: int) -> str:
    return {
        401: "Bad credentials",
        403: NOT_ACCESSIBLE,
        404: "Not Found",
        409: "Conflict",
        422: "Validation Failed",
        429: "Too Many Requests",
        500: "Internal Server Error",
        502: "Server Error",
        503: "Service Unavailable",
    }.get(status, f"HTTP {status}")


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _b64_lines(data: bytes) -> str:
    """Base64 broken into 60-character lines, as the contents and blobs APIs return it."""
    text = base64.b64encode(data).decode()
    return "\n".join(text[i : i + 60] for i in range(0, len(text), 60)) + ("\n" if text else "")


def _git_bytes(git_dir: Path, *args: str) -> bytes:
    env = {**os.environ, "GIT_DIR": str(git_dir)}
    return subprocess.run(["git", *args], capture_output=True, env=env, check=True).stdout


def _identity_env(name: str, email: str) -> dict[str, str]:
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }
