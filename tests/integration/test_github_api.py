"""`evolve_action.github.api` through the real PyGithub against the fake GitHub on loopback.

The fake keeps git objects in a real bare repository, so commit-back is checked with real git.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fake_github import FakeFile, FakeGitHub, FakePull, FakeRepo, Fault

from evolve_action.errors import PublishError
from evolve_action.github import (
    BOT_LOGIN,
    CommitAuthor,
    CommitOutcome,
    Committed,
    FileChange,
    GitHubApiError,
    GitHubAuthError,
    GitHubClient,
    GitHubNotFoundError,
    GitHubPermissionError,
    GitHubRateLimitError,
    HeadMoved,
    NothingToCommit,
    RetryPolicy,
    TokenIdentity,
    is_sticky,
)

REPO = "octo/skills"
MARKER = "<!-- evolve-action:pr -->"
FILES = r"/repos/octo/skills/pulls/1/files"
COMMENTS = r"/repos/octo/skills/issues/1/comments"
EDIT = r"/repos/octo/skills/issues/comments/\d+"
REF = r"/repos/octo/skills/git/refs/heads/feature"


@pytest.fixture
def fake_github(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub.start(tmp_path) as gh:
        yield gh


@dataclass
class Scenario:
    gh: FakeGitHub
    repo: FakeRepo
    pull: FakePull
    base_sha: str
    head_sha: str
    bot: GitHubClient
    """A client holding an installation token (acts as github-actions[bot])."""


def _client(gh: FakeGitHub, token: str) -> GitHubClient:
    return GitHubClient(token, base_url=gh.base_url, policy=RetryPolicy.immediate())


@pytest.fixture
def scenario(fake_github: FakeGitHub) -> Iterator[Scenario]:
    gh = fake_github
    repo = gh.add_repo(REPO)
    base = gh.commit(
        repo,
        {
            "README.md": "# skills\n",
            "skills/a/SKILL.md": "a\n",
            "skills/a/evals/results.json": '{"v": 1}\n',
            "skills/b/SKILL.md": "b\n",
            "skills/b/run.sh": "#!/bin/sh\n",
            "old/notes.md": "old\n",
        },
        branch="main",
    )
    head = gh.commit(repo, {"skills/a/SKILL.md": "a, edited\n"}, parents=[base], branch="feature")
    pull = gh.add_pull(repo, head_ref="feature", files=["skills/a/SKILL.md"])
    gh.add_token("ghs_bot", kind="installation")
    with _client(gh, "ghs_bot") as bot:
        yield Scenario(gh, repo, pull, base, head, bot)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def _fetch(gh: FakeGitHub, tmp_path: Path, ref: str) -> Path:
    """A fresh clone-like repository with `ref` fetched from the fake's bare repository."""
    work = tmp_path / "inspect"
    work.mkdir()
    _git(work, "init", "-q")
    _git(
        work, "fetch", "-q", str(gh.git_dir(REPO)), f"{ref}:refs/remotes/fake/{ref.split('/')[-1]}"
    )
    return work


# ------------------------------------------------------------------ pull requests and files


def test_pull_request_info_same_repo_and_fork(scenario: Scenario) -> None:
    gh = scenario.gh
    info = scenario.bot.repository(REPO).pull_request(1)
    assert (info.number, info.head_ref, info.base_ref) == (1, "feature", "main")
    assert (info.head_sha, info.base_sha) == (scenario.head_sha, scenario.base_sha)
    assert info.head_repo == REPO and not info.is_fork
    assert info.changed_files == 1

    fork = gh.add_fork(scenario.repo, "someone/skills")
    gh.commit(fork, {"x.md": "x\n"}, parents=[scenario.head_sha], branch="patch")
    gh.add_pull(scenario.repo, head_ref="patch", head_repo=fork, number=7)
    forked = scenario.bot.repository(REPO).pull_request(7)
    assert forked.head_repo == "someone/skills" and forked.is_fork


def test_missing_pull_request_is_a_not_found_error(scenario: Scenario) -> None:
    with pytest.raises(GitHubNotFoundError) as err:
        scenario.bot.repository(REPO).pull_request(99)
    assert err.value.status == 404
    assert isinstance(err.value, PublishError)


def test_250_changed_files_over_3_pages(scenario: Scenario) -> None:
    gh = scenario.gh
    scenario.pull.files = [FakeFile(f"skills/s{i:03d}/SKILL.md") for i in range(250)]
    api = scenario.bot.repository(REPO)
    changed = api.changed_files(api.pull_request(1))
    assert [f.path for f in changed.files] == [f"skills/s{i:03d}/SKILL.md" for i in range(250)]
    assert changed.expected == 250 and not changed.truncated
    pages = gh.calls("GET", FILES)
    assert len(pages) == 3
    assert all(r.query.get("per_page") == "100" for r in pages)
    assert [r.query.get("page", "1") for r in pages] == ["1", "2", "3"]


def test_the_3000_file_cap_is_reported_as_truncated(scenario: Scenario) -> None:
    scenario.pull.files = [FakeFile(f"f/{i:04d}.txt") for i in range(3100)]
    api = scenario.bot.repository(REPO)
    changed = api.changed_files(api.pull_request(1))
    assert len(changed.files) == 3000
    assert changed.expected == 3100
    assert changed.truncated
    assert len(scenario.gh.calls("GET", FILES)) == 30


def test_renames_and_deletions_are_listed(scenario: Scenario) -> None:
    scenario.pull.files = [
        FakeFile(
            "skills/new-name/SKILL.md", "renamed", previous_filename="skills/old-name/SKILL.md"
        ),
        FakeFile("skills/gone/SKILL.md", "removed"),
        FakeFile("skills/fresh/SKILL.md", "added"),
        FakeFile("README.md", "modified"),
    ]
    api = scenario.bot.repository(REPO)
    changed = api.changed_files(api.pull_request(1))
    by_path = {f.path: f for f in changed.files}
    assert by_path["skills/new-name/SKILL.md"].status == "renamed"
    assert by_path["skills/new-name/SKILL.md"].previous_path == "skills/old-name/SKILL.md"
    assert by_path["skills/gone/SKILL.md"].status == "removed"
    assert by_path["skills/fresh/SKILL.md"].status == "added"
    assert by_path["README.md"].previous_path is None
    assert "skills/old-name/SKILL.md" in changed.paths


def test_502_then_200_is_retried(scenario: Scenario) -> None:
    gh = scenario.gh
    scenario.pull.files = [FakeFile(f"f{i:03d}") for i in range(150)]
    gh.fail("GET", FILES, [200, 502, 503])  # page 1 fine; page 2 fails twice, then succeeds
    api = scenario.bot.repository(REPO)
    changed = api.changed_files(api.pull_request(1))
    assert len(changed.files) == 150
    statuses = [r.status for r in gh.calls("GET", FILES)]
    assert statuses == [200, 502, 503, 200]


def test_secondary_rate_limit_is_retried(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.fail("GET", r"/repos/octo/skills/pulls/1", [Fault.secondary_rate_limit(retry_after=0)])
    gh.fail("GET", r"/repos/octo/skills/pulls/1", [Fault.secondary_rate_limit()])
    info = scenario.bot.repository(REPO).pull_request(1)
    assert info.number == 1
    assert [r.status for r in gh.calls("GET", r"/repos/octo/skills/pulls/1")] == [403, 403, 200]


def test_persistent_5xx_gives_up_with_an_error(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.fail("GET", r"/repos/octo/skills/pulls/1", [502] * 10)
    with pytest.raises(GitHubApiError) as err:
        scenario.bot.repository(REPO).pull_request(1)
    assert err.value.status == 502
    # RetryPolicy.immediate() allows 3 retries: 4 attempts in all, every one reaching the fake.
    assert len(gh.calls("GET", r"/repos/octo/skills/pulls/1")) == 4


def test_ghes_style_api_prefix(tmp_path: Path) -> None:
    with FakeGitHub.start(tmp_path, prefix="/api/v3") as gh:
        repo = gh.add_repo(REPO)
        base = gh.commit(repo, {"a": "a\n"}, branch="main")
        head = gh.commit(repo, {"b": "b\n"}, parents=[base], branch="feature")
        gh.add_pull(repo, head_ref="feature", files=[f"x{i}" for i in range(120)])
        gh.add_token("ghp_t")
        assert gh.base_url.endswith("/api/v3")
        with _client(gh, "ghp_t") as client:
            api = client.repository(REPO)
            assert len(api.changed_files(api.pull_request(1)).files) == 120
            login = client.identity().login
            made = api.upsert_sticky_comment(1, "hello", marker=MARKER, author=login)
            again = api.upsert_sticky_comment(1, "hello 2", marker=MARKER, author=login)
            assert (made.action, again.action, again.id) == ("created", "updated", made.id)
            outcome = api.commit_files(
                branch="feature",
                parent_sha=head,
                changes=[FileChange("c", b"c\n")],
                message="m",
            )
            assert isinstance(outcome, Committed)
            assert gh.ref_sha(repo, "heads/feature") == outcome.sha
        assert len(gh.calls("GET", FILES)) == 2
        assert len(gh.calls("PATCH", REF)) == 1


# ------------------------------------------------------------------ contents


def test_read_file_at_a_ref(scenario: Scenario) -> None:
    api = scenario.bot.repository(REPO)
    assert api.read_file("skills/a/evals/results.json", "main") == b'{"v": 1}\n'
    assert api.read_file("skills/a/SKILL.md", scenario.head_sha) == b"a, edited\n"
    assert api.read_file("skills/a/SKILL.md", scenario.base_sha) == b"a\n"
    assert api.read_file("skills/zzz/results.json", "main") is None
    assert api.read_file("skills/a", "main") is None  # a directory
    with pytest.raises(GitHubNotFoundError):
        api.read_file("README.md", "no-such-branch")


def test_read_first_lists_the_directory_once(scenario: Scenario) -> None:
    gh = scenario.gh
    api = scenario.bot.repository(REPO)
    names = ("results.json", "results.yaml")
    assert api.read_first("skills/a/evals", names, "main") == ("results.json", b'{"v": 1}\n')
    gh.clear_log()
    assert api.read_first("skills/b/evals", names, "main") is None  # no such directory
    assert api.read_first("skills/b", names, "main") is None  # no such file
    assert len(gh.requests) == 2 and all(r.method == "GET" for r in gh.requests)
    with pytest.raises(GitHubNotFoundError):
        api.read_first("skills/a/evals", names, "no-such-branch")


def test_read_large_file_through_the_blob_api(scenario: Scenario) -> None:
    gh = scenario.gh
    big = bytes(range(256)) * 40
    gh.commit(scenario.repo, {"big.bin": big}, parents=[scenario.base_sha], branch="main")
    gh.contents_size_limit = 1000
    assert scenario.bot.repository(REPO).read_file("big.bin", "main") == big
    assert gh.calls("GET", r"/repos/octo/skills/git/blobs/[0-9a-f]{40}")


# ------------------------------------------------------------------ identity


def test_identity_comes_from_graphql_for_every_kind_of_token(
    scenario: Scenario, caplog: pytest.LogCaptureFixture
) -> None:
    gh = scenario.gh
    caplog.set_level(logging.DEBUG)
    gh.add_token("ghp_user", kind="pat", login="maintainer")
    gh.add_token("ghs_app", kind="installation", login="evolve-app[bot]")
    with _client(gh, "ghp_user") as user:
        assert (user.identity().login, user.identity().source) == ("maintainer", "graphql")
    assert (scenario.bot.identity().login, scenario.bot.identity().is_bot) == (BOT_LOGIN, True)
    with _client(gh, "ghs_app") as app:
        assert app.identity().login == "evolve-app[bot]"
        # The `comment_author` input wins, and costs no request.
        assert app.identity(configured="other[bot]").source == "comment_author"
    # GET /user (a 403 for installation tokens, logged twice by PyGithub) is never asked.
    assert gh.calls("GET", "/user") == []
    assert len(gh.calls("POST", "/graphql")) == 3 and len(gh.requests) == 3
    assert not [r for r in caplog.records if "failed with 403" in r.getMessage()]


def test_identity_when_graphql_fails(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.add_token("ghp_user", kind="pat", login="maintainer")
    gh.add_token("ghs_app", kind="installation", login="evolve-app[bot]")
    gh.fail("POST", "/graphql", [Fault(403, "Resource not accessible")] * 2)
    with _client(gh, "ghp_user") as user:  # a personal token: GET /user answers
        assert (user.identity().login, user.identity().source) == ("maintainer", "rest")
    with _client(gh, "ghs_app") as app:  # an installation token: unknown, and /user is not tried
        assert (app.identity().login, app.identity().source) == (None, "unknown")
    assert [r.status for r in gh.calls("GET", "/user")] == [200]


def test_a_bad_token_is_an_auth_error(scenario: Scenario) -> None:
    with _client(scenario.gh, "nope") as client, pytest.raises(GitHubAuthError):
        client.identity()


# ------------------------------------------------------------------ sticky comment


def _upsert(s: Scenario, body: str) -> tuple[int, str]:
    login = s.bot.identity().login
    result = s.bot.repository(REPO).upsert_sticky_comment(1, body, marker=MARKER, author=login)
    return result.id, result.action


def test_sticky_comment_created_then_unchanged_then_updated(scenario: Scenario) -> None:
    gh = scenario.gh
    first_id, action = _upsert(scenario, "## Results\nall good\n")
    assert action == "created"
    [comment] = gh.comments_on(REPO, 1)
    assert comment.id == first_id and comment.user_login == BOT_LOGIN
    assert MARKER in comment.body

    gh.clear_log()
    assert _upsert(scenario, "## Results\nall good\n") == (first_id, "unchanged")
    assert not gh.calls("POST", COMMENTS)
    assert not gh.calls("PATCH", EDIT)

    assert _upsert(scenario, "## Results\none regression\n") == (first_id, "updated")
    [patch] = gh.calls("PATCH", EDIT)
    assert patch.path.endswith(f"/{first_id}")
    assert len(gh.comments_on(REPO, 1)) == 1
    assert "one regression" in gh.comments_on(REPO, 1)[0].body


def test_bot_comment_on_page_2_of_more_than_100(scenario: Scenario) -> None:
    gh = scenario.gh
    for i in range(130):
        gh.add_comment(REPO, 1, f"human comment {i}")
    mine = gh.add_comment(REPO, 1, f"{MARKER}\nold results", login=BOT_LOGIN, user_type="Bot")
    for i in range(20):
        gh.add_comment(REPO, 1, f"later comment {i}")
    assert _upsert(scenario, "new results") == (mine.id, "updated")
    pages = gh.calls("GET", COMMENTS)
    assert [r.query.get("page", "1") for r in pages] == ["1", "2"]
    assert all(r.query.get("per_page") == "100" for r in pages)
    assert not gh.calls("POST", COMMENTS)
    assert len(gh.comments_on(REPO, 1)) == 151


def test_marker_quoted_by_a_human_or_another_bot_is_never_touched(scenario: Scenario) -> None:
    gh = scenario.gh
    quoted = f"> the bot said\n> {MARKER}\nwhy?"
    human = gh.add_comment(REPO, 1, quoted, login="reviewer")
    other_bot = gh.add_comment(REPO, 1, f"x {MARKER}", login="other-app[bot]", user_type="Bot")
    # Another workflow with the same token quotes our marker mid-body: written by "us", not ours.
    same_bot = f"Lint report\n\n```\n{MARKER}\n```\n"
    foreign = gh.add_comment(REPO, 1, same_bot, login=BOT_LOGIN, user_type="Bot")
    new_id, action = _upsert(scenario, "results")
    assert action == "created" and new_id not in (human.id, other_bot.id, foreign.id)
    assert gh.comments[human.id].body == quoted
    assert gh.comments[other_bot.id].body == f"x {MARKER}"
    assert gh.comments[foreign.id].body == same_bot
    # Nothing is edited: a new comment is one POST when the token's identity is known.
    assert gh.calls("PATCH", EDIT) == []
    assert gh.comments[new_id].body.splitlines()[0] == MARKER  # the marker leads our body
    # The next run finds its own comment, not the human's.
    assert _upsert(scenario, "results 2") == (new_id, "updated")
    assert [r.path.rsplit("/", 1)[-1] for r in gh.calls("PATCH", EDIT)] == [str(new_id)]


@pytest.mark.parametrize(
    ("body", "sticky"),
    [
        (f"{MARKER}\n## Results", True),
        (f"\ufeff{MARKER}  \r\n## Results", True),
        (MARKER, True),
        (f"## Results\n{MARKER}", False),
        (f"> {MARKER}\n", False),
        (f"x{MARKER}\n", False),
        ("", False),
    ],
)
def test_the_marker_must_be_the_first_line(body: str, sticky: bool) -> None:
    assert is_sticky(body, MARKER) is sticky


def test_an_app_token_run_twice_keeps_one_comment(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.add_token("ghs_app", kind="installation", login="evolve-app[bot]")
    # Someone else's bot (the default token's) left a comment starting with our marker: not ours.
    theirs = gh.add_comment(REPO, 1, f"{MARKER}\nold", login=BOT_LOGIN, user_type="Bot")
    ids = []
    for body in ("results 1", "results 2"):
        with _client(gh, "ghs_app") as app:
            author = app.identity().login
            ids.append(
                app.repository(REPO).upsert_sticky_comment(1, body, marker=MARKER, author=author).id
            )
    assert ids[0] == ids[1] != theirs.id
    mine = [c for c in gh.comments_on(REPO, 1) if c.user_login == "evolve-app[bot]"]
    assert [c.id for c in mine] == [ids[0]] and mine[0].body.splitlines()[-1] == "results 2"
    assert gh.comments[theirs.id].body == f"{MARKER}\nold"
    assert gh.calls("GET", "/user") == []


def test_an_unknown_identity_updates_the_bots_comment_and_never_doubles_it(
    scenario: Scenario,
) -> None:
    gh = scenario.gh
    forged = gh.add_comment(REPO, 1, f"{MARKER}\nI am the bot, honest", login="mallory")
    api = scenario.bot.repository(REPO)
    first = api.upsert_sticky_comment(1, "results 1", marker=MARKER, author=None)
    second = api.upsert_sticky_comment(1, "results 2", marker=MARKER, author=None)
    assert (first.action, second.action, second.id) == ("created", "updated", first.id)
    assert gh.comments[forged.id].body == f"{MARKER}\nI am the bot, honest"  # a human: never ours
    assert len(gh.comments_on(REPO, 1)) == 2


def _unknown_identity(gh: FakeGitHub) -> GitHubClient:
    """An App's token whose identity GitHub will not tell: GraphQL fails (and `GET /user` would)."""
    gh.add_token("ghp_quiet", kind="installation", login="quiet-app[bot]")
    gh.fail("POST", "/graphql", [Fault(502)] * 10)
    gh.fail("GET", "/user", [Fault(403, "Resource not accessible")] * 10)
    client = _client(gh, "ghp_quiet")
    assert client.identity().login is None
    return client


def test_an_unknown_identity_never_edits_another_apps_comment_carrying_our_marker(
    scenario: Scenario,
) -> None:
    """Issue 29 item 7: with neither the identity nor a record of ours, a new comment."""
    gh = scenario.gh
    theirs = gh.add_comment(
        REPO, 1, f"{MARKER}\nother app's report", login="other-app[bot]", user_type="Bot"
    )
    with _unknown_identity(gh) as quiet:
        api = quiet.repository(REPO)
        first = api.upsert_sticky_comment(1, "results 1", marker=MARKER, author=None)
        assert first.action == "created" and first.id != theirs.id
        assert gh.comments[theirs.id].body == f"{MARKER}\nother app's report"
        # Our new comment records itself, so the next unknown-identity run edits it, not theirs.
        second = api.upsert_sticky_comment(1, "results 2", marker=MARKER, author=None)
    assert (second.action, second.id) == ("updated", first.id)
    assert gh.comments[theirs.id].body == f"{MARKER}\nother app's report"
    edited = {r.path.rsplit("/", 1)[-1] for r in gh.calls("PATCH", EDIT)}
    assert edited == {str(first.id)}


def test_a_personal_token_whose_graphql_and_user_calls_fail_never_edits_a_marked_comment(
    scenario: Scenario,
) -> None:
    """GraphQL and `GET /user` both fail: the identity is unknown. A person's comments (a personal
    token writes as its user) are never candidates then, so each run posts rather than guesses."""
    gh = scenario.gh
    theirs = gh.add_comment(
        REPO, 1, f"{MARKER}\nother app's report", login="other-app[bot]", user_type="Bot"
    )
    gh.add_token("ghp_person", kind="pat", login="maintainer")
    gh.fail("POST", "/graphql", [Fault(502)] * 10)
    gh.fail("GET", "/user", [Fault(502)] * 20)
    with _client(gh, "ghp_person") as person:
        assert person.identity().login is None
        api = person.repository(REPO)
        ids = [api.upsert_sticky_comment(1, b, marker=MARKER, author=None).id for b in "ab"]
    assert theirs.id not in ids and len(set(ids)) == 2
    assert gh.comments[theirs.id].body == f"{MARKER}\nother app's report"
    assert {c.user_login for c in gh.comments_on(REPO, 1)} == {"other-app[bot]", "maintainer"}


def test_a_copied_or_forged_record_does_not_make_a_comment_ours(scenario: Scenario) -> None:
    gh = scenario.gh
    ours = scenario.bot.repository(REPO).upsert_sticky_comment(
        1, "results", marker=MARKER, author=BOT_LOGIN
    )
    copied_body = gh.comments[ours.id].body  # another app mirrors our whole comment
    copy = gh.add_comment(REPO, 1, copied_body, login="mirror-app[bot]", user_type="Bot")
    claim = f"{MARKER}\nforged\n<!-- evolve-action:comment {{}} by {BOT_LOGIN} -->"
    forged = gh.add_comment(REPO, 1, "placeholder", login="other-app[bot]", user_type="Bot")
    gh.comments[forged.id].body = claim.format(forged.id)  # its own id, our login: not its author
    gh.comments.pop(ours.id)  # our comment was deleted: nothing of ours is left
    with _unknown_identity(gh) as quiet:
        result = quiet.repository(REPO).upsert_sticky_comment(
            1, "results 2", marker=MARKER, author=None
        )
    assert result.action == "created" and result.id not in (copy.id, forged.id)
    assert gh.comments[copy.id].body == copied_body
    assert gh.comments[forged.id].body == claim.format(forged.id)


def test_duplicates_by_the_bot_converge_on_the_lowest_id(scenario: Scenario) -> None:
    gh = scenario.gh
    a = gh.add_comment(REPO, 1, f"{MARKER}\none", login=BOT_LOGIN, user_type="Bot")
    b = gh.add_comment(REPO, 1, f"{MARKER}\ntwo", login=BOT_LOGIN, user_type="Bot")
    result = scenario.bot.repository(REPO).upsert_sticky_comment(
        1, "three", marker=MARKER, author=BOT_LOGIN
    )
    assert (result.id, result.action, result.duplicate_ids) == (a.id, "updated", (b.id,))


def test_403_on_comment_is_a_permission_error(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.fail("POST", COMMENTS, [Fault.not_accessible()])
    with pytest.raises(GitHubPermissionError) as err:
        _upsert(scenario, "results")
    assert err.value.permission == "pull-requests: write"
    assert "pull-requests: write" in (err.value.hint or "")
    assert "Resource not accessible by integration" in str(err.value)
    assert len(gh.calls("POST", COMMENTS)) == 1  # a 403 is not retried
    assert gh.comments_on(REPO, 1) == []


def test_read_only_fork_token_cannot_comment(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.add_token("ghs_fork", kind="installation", read_only=True)
    with _client(gh, "ghs_fork") as fork, pytest.raises(GitHubPermissionError):
        fork.repository(REPO).upsert_sticky_comment(1, "x", marker=MARKER, author=BOT_LOGIN)


def test_502_on_comment_create_is_retried_once_nothing_was_created(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.fail("POST", COMMENTS, [502])
    _, action = _upsert(scenario, "results")
    assert action == "created"
    assert [r.status for r in gh.calls("POST", COMMENTS)] == [502, 201]
    assert len(gh.comments_on(REPO, 1)) == 1


def test_rate_limited_comment_create_is_retried(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.fail("POST", COMMENTS, [Fault.secondary_rate_limit(retry_after=0), Fault(429)])
    _, action = _upsert(scenario, "results")
    assert action == "created"
    assert [r.status for r in gh.calls("POST", COMMENTS)] == [403, 429, 201]
    assert len(gh.comments_on(REPO, 1)) == 1


def test_lost_answer_on_comment_create_never_duplicates(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.fail("POST", COMMENTS, [Fault(502, after=True)])  # created, but the answer was a 502
    comment_id, action = _upsert(scenario, "results")
    assert len(gh.comments_on(REPO, 1)) == 1
    assert gh.comments_on(REPO, 1)[0].id == comment_id
    assert action == "unchanged"  # found by its exact body; the identity is known: no record
    assert len(gh.calls("POST", COMMENTS)) == 1 and gh.calls("PATCH", EDIT) == []


def test_marker_must_be_a_hidden_comment(scenario: Scenario) -> None:
    with pytest.raises(ValueError, match="hidden HTML comment"):
        scenario.bot.repository(REPO).upsert_sticky_comment(
            1, "x", marker="evolve", author=BOT_LOGIN
        )


# ------------------------------------------------------------------ commit-back


def _commit(
    s: Scenario, changes: list[FileChange], author: CommitAuthor | None = None
) -> CommitOutcome:
    return s.bot.repository(REPO).commit_files(
        branch="feature",
        parent_sha=s.head_sha,
        changes=changes,
        message="evolve: record results",
        author=author,
    )


def test_commit_back_is_one_commit_on_the_head(scenario: Scenario, tmp_path: Path) -> None:
    gh = scenario.gh
    outcome = _commit(
        scenario,
        [
            FileChange("skills/a/evals/results.json", b'{"v": 2}\n'),
            FileChange("EVALUATION.md", b"# Evaluation\n"),
            FileChange("tools/check.sh", b"#!/bin/sh\nexit 0\n", mode="100755"),
            FileChange("old/notes.md", None),
            FileChange("never/existed.md", None),
        ],
        author=CommitAuthor("evolve-action", "evolve@example.invalid"),
    )
    assert isinstance(outcome, Committed)
    assert outcome.parent_sha == scenario.head_sha
    assert gh.ref_sha(REPO, "heads/feature") == outcome.sha

    work = _fetch(gh, tmp_path, "refs/heads/feature")
    new = "refs/remotes/fake/feature"
    assert _git(work, "rev-parse", new) == outcome.sha
    assert _git(work, "rev-list", "--parents", "-n", "1", new).split() == [
        outcome.sha,
        scenario.head_sha,
    ]
    assert _git(work, "rev-list", "--count", f"{scenario.head_sha}..{new}") == "1"
    changed = _git(work, "diff", "--name-status", scenario.head_sha, new).splitlines()
    assert sorted(changed) == [
        "A\tEVALUATION.md",
        "A\ttools/check.sh",
        "D\told/notes.md",
        "M\tskills/a/evals/results.json",
    ]
    assert _git(work, "show", f"{new}:skills/a/evals/results.json") == '{"v": 2}'
    assert _git(work, "show", f"{new}:skills/a/SKILL.md") == "a, edited"
    assert _git(work, "ls-tree", new, "tools/check.sh").split()[0] == "100755"
    assert _git(work, "ls-tree", new, "skills/b/run.sh").split()[0] == "100644"
    assert _git(work, "log", "-1", "--format=%an <%ae>|%s", new) == (
        "evolve-action <evolve@example.invalid>|evolve: record results"
    )
    # The Git Data API route, in order, with a fast-forward-only ref update.
    writes = [(r.method, r.path.rsplit("/git/", 1)[-1]) for r in gh.requests if r.method != "GET"]
    assert writes == [
        ("POST", "blobs"),
        ("POST", "blobs"),
        ("POST", "blobs"),
        ("POST", "trees"),
        ("POST", "commits"),
        ("PATCH", "refs/heads/feature"),
    ]
    [tree_post] = gh.calls("POST", r"/repos/octo/skills/git/trees")
    assert tree_post.body["base_tree"] == _git(work, "rev-parse", f"{scenario.head_sha}^{{tree}}")
    [commit_post] = gh.calls("POST", r"/repos/octo/skills/git/commits")
    assert commit_post.body["parents"] == [scenario.head_sha]
    [patch] = gh.calls("PATCH", REF)
    assert patch.body == {"sha": outcome.sha, "force": False}


def test_default_author_is_the_token_identity(scenario: Scenario, tmp_path: Path) -> None:
    outcome = _commit(scenario, [FileChange("EVALUATION.md", b"x\n")])
    assert isinstance(outcome, Committed)
    work = _fetch(scenario.gh, tmp_path, "refs/heads/feature")
    assert _git(work, "log", "-1", "--format=%an", "refs/remotes/fake/feature") == BOT_LOGIN


def test_unchanged_files_make_no_commit_and_no_writes(scenario: Scenario) -> None:
    gh = scenario.gh
    outcome = _commit(
        scenario,
        [
            FileChange("skills/a/evals/results.json", b'{"v": 1}\n'),
            FileChange("not/there.md", None),
        ],
    )
    assert isinstance(outcome, NothingToCommit)
    assert [r for r in gh.requests if r.method != "GET"] == []
    assert gh.ref_sha(REPO, "heads/feature") == scenario.head_sha


def test_a_422_on_the_ref_update_of_an_unmoved_branch_reports_githubs_reason(
    scenario: Scenario,
) -> None:
    gh = scenario.gh
    reason = "Protected branch update failed for refs/heads/feature."
    gh.fail("PATCH", REF, [Fault(422, reason)])
    with pytest.raises(GitHubApiError) as err:
        _commit(scenario, [FileChange("EVALUATION.md", b"# E\n")])
    assert err.value.status == 422 and reason in err.value.message
    assert "is now at" not in err.value.message and "branch protection" in (err.value.hint or "")
    assert gh.ref_sha(REPO, "heads/feature") == scenario.head_sha
    assert len(gh.calls("PATCH", REF)) == 1  # never retried, never forced


@pytest.mark.parametrize(
    "path",
    [
        "/github/workspace/plugins/x/EVALUATION.md",
        "C:/x",
        ".git/config",
        "a/.GIT/hooks/x",
        "a\nb",
        ".github/workflows/x.yml",
        ".GitHub/workflows/x.yml",
    ],
)
def test_paths_outside_the_repository_are_refused_before_any_request(
    scenario: Scenario, path: str
) -> None:
    with pytest.raises(ValueError, match="repository-relative"):
        _commit(scenario, [FileChange(path, b"x\n")])
    assert scenario.gh.requests == []


def test_branch_moved_before_commit_back_writes_nothing(scenario: Scenario) -> None:
    gh = scenario.gh
    newer = gh.commit(REPO, {"x.md": "x\n"}, parents=[scenario.head_sha], branch="feature")
    outcome = _commit(scenario, [FileChange("EVALUATION.md", b"# E\n")])
    assert isinstance(outcome, HeadMoved)
    assert outcome.actual_sha == newer
    assert [r for r in gh.requests if r.method != "GET"] == []
    assert gh.ref_sha(REPO, "heads/feature") == newer


def test_branch_moved_during_commit_back_is_a_real_non_fast_forward(scenario: Scenario) -> None:
    gh = scenario.gh
    moved: list[str] = []

    def push_meanwhile() -> None:
        moved.append(
            gh.commit(REPO, {"y.md": "y\n"}, parents=[scenario.head_sha], branch="feature")
        )

    gh.hook("PATCH", REF, push_meanwhile)
    outcome = _commit(scenario, [FileChange("EVALUATION.md", b"# E\n")])
    assert isinstance(outcome, HeadMoved)
    assert outcome.actual_sha == moved[0]
    assert [r.status for r in gh.calls("PATCH", REF)] == [422]
    assert gh.ref_sha(REPO, "heads/feature") == moved[0]


def test_deleted_branch_is_head_moved(scenario: Scenario) -> None:
    gh = scenario.gh
    subprocess.run(
        ["git", "--git-dir", str(gh.git_dir(REPO)), "update-ref", "-d", "refs/heads/feature"],
        check=True,
    )
    outcome = _commit(scenario, [FileChange("EVALUATION.md", b"# E\n")])
    assert isinstance(outcome, HeadMoved)
    assert outcome.actual_sha is None
    assert "no longer exists" in outcome.notice()
    assert [r for r in gh.requests if r.method != "GET"] == []


def test_lost_answer_on_the_ref_update_is_retried_harmlessly(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.fail("PATCH", REF, [Fault(502, after=True)])  # the ref moved, but the answer was lost
    outcome = _commit(scenario, [FileChange("EVALUATION.md", b"# E\n")])
    assert isinstance(outcome, Committed)
    assert [r.status for r in gh.calls("PATCH", REF)] == [502, 200]
    assert gh.ref_sha(REPO, "heads/feature") == outcome.sha


def test_403_on_commit_back_names_contents_write(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.add_token("ghs_ro", kind="installation", read_only=True)
    with _client(gh, "ghs_ro") as ro, pytest.raises(GitHubPermissionError) as err:
        ro.repository(REPO).commit_files(
            branch="feature",
            parent_sha=scenario.head_sha,
            changes=[FileChange("EVALUATION.md", b"x\n")],
            message="m",
        )
    assert err.value.permission == "contents: write"
    assert "contents: write" in (err.value.hint or "")
    assert gh.ref_sha(REPO, "heads/feature") == scenario.head_sha


def test_502_on_git_data_writes_is_retried(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.fail("POST", r"/repos/octo/skills/git/blobs", [502])
    gh.fail("POST", r"/repos/octo/skills/git/commits", [503])
    gh.fail("PATCH", REF, [502])
    outcome = _commit(scenario, [FileChange("EVALUATION.md", b"# E\n")])
    assert isinstance(outcome, Committed)
    assert gh.ref_sha(REPO, "heads/feature") == outcome.sha
    assert [r.status for r in gh.calls("PATCH", REF)] == [502, 200]


def test_bad_arguments_are_rejected_before_any_request(scenario: Scenario) -> None:
    api = scenario.bot.repository(REPO)
    with pytest.raises(ValueError, match="40-hex"):
        api.commit_files(branch="feature", parent_sha="abc", changes=[], message="m")
    with pytest.raises(ValueError, match="repository-relative"):
        api.commit_files(
            branch="feature",
            parent_sha=scenario.head_sha,
            changes=[FileChange("../x", b"")],
            message="m",
        )
    assert scenario.gh.requests == []


# ------------------------------------------------------------------ secrets in what we post and commit

PLANTED = "sk-ant-api03-Pl4nted-9Qx7Lm2Rt5Vw8Zk3Np6Hs1Jd4Fg0YbAaBbCcDd"
PLANTED_FORMS = {
    "zero-width": "\u200b".join(PLANTED),
    "percent": "".join(f"%{ord(c):02X}" for c in PLANTED),
    "u-escape": "".join(f"\\u{ord(c):04x}" for c in PLANTED),
    "entities": "".join(f"&#x{ord(c):x};" for c in PLANTED),
    "upper": PLANTED.upper(),
}


def _shows_planted(text: str) -> bool:
    """The test's own decoders (not the gate's): is either end of the planted key visible?"""
    import html
    import re
    from urllib.parse import unquote

    visible = text.replace("\u200b", "")
    u = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), visible)
    views = (visible, unquote(visible), html.unescape(visible), u)
    return any(p.lower() in v.lower() for v in views for p in (PLANTED[:12], PLANTED[-12:]))


@pytest.mark.parametrize("form", list(PLANTED_FORMS))
def test_an_encoded_secret_is_absent_from_posted_and_committed_bytes(
    scenario: Scenario, tmp_path: Path, form: str
) -> None:
    """Issue 29 item 5: the gate on the way out (`_outbound`) normalises too."""
    from evolve_action import redact

    redact.register(PLANTED)  # the suite's autouse fixture forgets it after the test
    gh = scenario.gh
    text = f"evidence: {PLANTED_FORMS[form]}\n"
    assert _shows_planted(text)
    _upsert(scenario, f"## Results\n{text}")
    [comment] = gh.comments_on(REPO, 1)
    assert not _shows_planted(comment.body) and "***" in comment.body
    outcome = _commit(scenario, [FileChange("EVALUATION.md", text.encode())])
    assert isinstance(outcome, Committed)
    work = _fetch(gh, tmp_path, "refs/heads/feature")
    blob = _git(work, "show", "refs/remotes/fake/feature:EVALUATION.md")
    assert not _shows_planted(blob) and blob.startswith("evidence: ***")


# ------------------------------------------------------------------ issue 32: the PR's ledger ref


def test_the_ledger_ref_is_created_merged_on_write_and_read_only_for_a_fork(
    scenario: Scenario,
) -> None:
    from evolve_action.flows._ledger import Ledger, LedgerRun, RefStore

    def runs(attempt: str) -> Ledger:
        one = LedgerRun(
            attempt=attempt, skill="kit/a", model="m", side="base", query="q",
            should_trigger=True, content="c", tool="t", hits=1, runs=1,
        )  # fmt: skip
        return Ledger(runs=(one,))

    gh, rc = scenario.gh, scenario.bot.repository(REPO)
    first, second = RefStore(rc, 1), RefStore(rc, 1)
    assert first.load().empty and gh.ref_sha(REPO, "evolve-action/ledger/pr-1") is None
    first.save(runs("1.1"))
    tip = gh.ref_sha(REPO, "evolve-action/ledger/pr-1")
    assert tip is not None
    # A concurrent writer whose first update loses the race re-reads, merges and retries.
    gh.hook("PATCH", r".*/git/refs/evolve-action/ledger/pr-1", lambda: first.save(runs("3.1")))
    second.save(runs("2.1"))
    assert {r.attempt for r in RefStore(rc, 1).load().runs} == {"1.1", "2.1", "3.1"}
    # Never a branch: the default branch and the PR branch did not move.
    assert gh.ref_sha(REPO, "heads/main") == scenario.base_sha
    assert gh.ref_sha(REPO, "heads/feature") == scenario.head_sha
    # Read-only (a fork PR's token): reads what exists, writes nothing.
    before = len(gh.requests)
    merged = RefStore(rc, 1, writable=False).save(runs("4.1"))
    assert {r.attempt for r in merged.runs} == {"1.1", "2.1", "3.1", "4.1"}
    assert [r for r in gh.requests[before:] if r.method != "GET"] == []


# ------------------------------------------------------------------ issue 39: rate limits as GitHub defines them


PULL = r"/repos/octo/skills/pulls/1"


def _paced(gh: FakeGitHub, waits: list[float], *, max_wait: float = 600.0) -> GitHubClient:
    """A client with GitHub's own waits (a minute for a secondary limit), whose sleeps are
    recorded instead of slept."""
    policy = RetryPolicy(
        retries=3,
        backoff_factor=0.0,
        backoff_max=0.0,
        secondary_rate_wait=60.0,
        max_rate_limit_wait=max_wait,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
    return GitHubClient("ghs_bot", base_url=gh.base_url, policy=policy, sleep=waits.append)


@pytest.mark.parametrize("status", [403, 429])
def test_a_primary_rate_limit_waits_until_its_reset(scenario: Scenario, status: int) -> None:
    gh, waits = scenario.gh, []
    gh.fail("GET", PULL, [Fault.primary_rate_limit(30, status=status)])
    assert _paced(gh, waits).repository(REPO).pull_request(1).number == 1
    assert len(waits) == 1 and 29 <= waits[0] <= 32, waits  # until x-ratelimit-reset (+1 s)


@pytest.mark.parametrize("status", [403, 429])
def test_a_secondary_rate_limit_waits_a_minute_then_longer(scenario: Scenario, status: int) -> None:
    gh, waits = scenario.gh, []
    gh.fail("GET", PULL, [Fault.secondary_rate_limit(status=status)] * 2)
    assert _paced(gh, waits).repository(REPO).pull_request(1).number == 1
    assert waits == [60.0, 120.0]


def test_retry_after_is_honoured_and_capped_by_max_rate_limit_wait(scenario: Scenario) -> None:
    gh, waits = scenario.gh, []
    gh.fail("GET", PULL, [Fault.secondary_rate_limit(7, status=429)])
    assert _paced(gh, waits).repository(REPO).pull_request(1).number == 1
    assert waits == [7.0]
    waits.clear()
    gh.fail("GET", PULL, [Fault.secondary_rate_limit(9, status=429)])
    with pytest.raises(GitHubRateLimitError) as err:
        _paced(gh, waits, max_wait=5.0).repository(REPO).pull_request(1)
    assert waits == []  # never slept past the cap
    assert "secondary rate limit" in err.value.message and "9 s" in err.value.message
    assert "max_rate_limit_wait" in err.value.message


def test_a_spent_primary_limit_names_the_limit_and_its_reset(scenario: Scenario) -> None:
    gh, waits = scenario.gh, []
    gh.fail("GET", PULL, [Fault.primary_rate_limit(3600, status=429)])
    with pytest.raises(GitHubRateLimitError) as err:
        _paced(gh, waits).repository(REPO).pull_request(1)
    assert waits == []
    message = err.value.message
    assert "primary rate limit (core)" in message and "resets at 20" in message, message
    assert err.value.status == 429


def test_a_403_that_is_no_rate_limit_is_not_retried(scenario: Scenario) -> None:
    gh, waits = scenario.gh, []
    gh.fail("GET", PULL, [Fault.not_accessible()])
    with pytest.raises(GitHubPermissionError):
        _paced(gh, waits).repository(REPO).pull_request(1)
    assert waits == [] and len(gh.calls("GET", PULL)) == 1


# ------------------------------------------------------------------ issue 39: ref writes that know their errors


LEDGER = r"/repos/octo/skills/git/refs/evolve-action/ledger/pr-1"


def _one_run(attempt: str) -> Any:
    from evolve_action.flows._ledger import Ledger, LedgerRun

    one = LedgerRun(
        attempt=attempt, skill="kit/a", model="m", side="base", query="q",
        should_trigger=True, content="c", tool="t", hits=1, runs=1,
    )  # fmt: skip
    return Ledger(runs=(one,))


def test_a_transient_422_on_the_branch_is_retried(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.fail("PATCH", REF, [Fault.reference_cannot_be_updated()])
    outcome = _commit(scenario, [FileChange("EVALUATION.md", b"# E\n")])
    assert isinstance(outcome, Committed)
    assert [r.status for r in gh.calls("PATCH", REF)] == [422, 200]
    assert gh.ref_sha(REPO, "heads/feature") == outcome.sha


def test_a_ruleset_on_the_branch_raises_githubs_message_once(scenario: Scenario) -> None:
    gh = scenario.gh
    gh.refuse_refs(r"refs/heads/feature")
    with pytest.raises(GitHubApiError) as err:
        _commit(scenario, [FileChange("EVALUATION.md", b"# E\n")])
    assert "Repository rule violations found" in err.value.message
    assert "ruleset" in (err.value.hint or "")
    assert len(gh.calls("PATCH", REF)) == 1


def test_a_refused_ledger_ref_raises_githubs_message_after_one_attempt(
    scenario: Scenario,
) -> None:
    """A ruleset on refs outside refs/heads: a permanent refusal, not a race. One blob, tree and
    commit, GitHub's message, no "another workflow run is writing it"."""
    from evolve_action.flows._ledger import RefStore

    gh = scenario.gh
    gh.refuse_refs(r"refs/evolve-action/.*")
    with pytest.raises(PublishError) as err:
        RefStore(scenario.bot.repository(REPO), 1).save(_one_run("1.1"))
    assert "Repository rule violations found" in err.value.message
    assert "another workflow run" not in err.value.message + (err.value.hint or "")
    assert len(gh.calls("POST", r".*/git/blobs")) == 1
    assert len(gh.calls("POST", r".*/git/commits")) == 1
    assert gh.ref_sha(REPO, "evolve-action/ledger/pr-1") is None


def test_a_transient_422_on_the_ledger_ref_is_retried(scenario: Scenario) -> None:
    from evolve_action.flows._ledger import RefStore

    gh, rc = scenario.gh, scenario.bot.repository(REPO)
    RefStore(rc, 1).save(_one_run("1.1"))
    gh.fail("PATCH", LEDGER, [Fault.reference_cannot_be_updated()])
    RefStore(rc, 1).save(_one_run("2.1"))
    assert [r.status for r in gh.calls("PATCH", LEDGER)] == [422, 200]
    assert len(gh.calls("POST", r".*/git/commits")) == 2  # one per save: no rewrite
    assert {r.attempt for r in RefStore(rc, 1).load().runs} == {"1.1", "2.1"}


def test_delete_ref_removes_our_ref_and_never_a_branch(scenario: Scenario) -> None:
    from evolve_action.flows._ledger import RefStore

    gh, rc = scenario.gh, scenario.bot.repository(REPO)
    RefStore(rc, 1).save(_one_run("1.1"))
    assert rc.delete_ref("evolve-action/ledger/pr-1") is True
    assert gh.ref_sha(REPO, "evolve-action/ledger/pr-1") is None
    assert rc.delete_ref("evolve-action/ledger/pr-1") is False
    with pytest.raises(ValueError):
        rc.delete_ref("heads/feature")


def test_a_new_comment_is_one_post(scenario: Scenario) -> None:
    """No POST-then-PATCH: an `issue_comment` workflow sees one `created` event, no `edited`."""
    gh = scenario.gh
    _, action = _upsert(scenario, "## Results\nall good\n")
    assert action == "created"
    assert len(gh.calls("POST", COMMENTS)) == 1 and gh.calls("PATCH", EDIT) == []


def test_github_graphql_url_is_where_the_identity_is_asked(tmp_path: Path) -> None:
    """`GITHUB_GRAPHQL_URL` (the context's `graphql_url`) is honoured, not derived from the REST
    root: a GHES proxy may serve GraphQL elsewhere."""
    with FakeGitHub.start(tmp_path, graphql_path="/proxy/graphql") as gh:
        gh.add_token("ghs_bot", kind="installation")
        client = GitHubClient(
            "ghs_bot",
            base_url=gh.base_url,
            policy=RetryPolicy.immediate(),
            graphql_url=gh.base_url + "/proxy/graphql",
        )
        with client:
            assert client.identity() == TokenIdentity(BOT_LOGIN, "graphql")
        assert [r.path for r in gh.calls("POST")] == ["/proxy/graphql"]
