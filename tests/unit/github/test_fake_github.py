"""The fake GitHub server itself, over plain HTTP: pagination, the file cap, faults, the log, git data."""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from tests.helpers.fake_github import FakeFile, FakeGitHub, Fault

REPO = "octo/skills"
AUTH = {"Authorization": "token ghp_t"}


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub.start(tmp_path) as fake:
        fake.add_token("ghp_t", login="octocat")
        fake.add_token("ghs_i", kind="installation")
        repo = fake.add_repo(REPO)
        base = fake.commit(repo, {"a.txt": "a\n", "dir/b.txt": "b\n"}, branch="main")
        fake.commit(repo, {"c.txt": "c\n"}, parents=[base], branch="feature")
        yield fake


def _get(gh: FakeGitHub, path: str, **params: Any) -> requests.Response:
    return requests.get(f"{gh.base_url}{path}", params=params, headers=AUTH, timeout=10)


def _send(
    gh: FakeGitHub, method: str, path: str, body: Any, token: str = "ghp_t"
) -> requests.Response:
    headers = {"Authorization": f"token {token}"}
    return requests.request(method, f"{gh.base_url}{path}", json=body, headers=headers, timeout=10)


def test_binds_loopback_on_a_free_port(gh: FakeGitHub) -> None:
    assert gh.base_url.startswith("http://127.0.0.1:")
    assert not gh.base_url.endswith(":0")


def test_files_pagination_links_and_the_3000_cap(gh: FakeGitHub) -> None:
    gh.add_pull(REPO, head_ref="feature", files=[FakeFile(f"f{i}") for i in range(3005)])
    first = _get(gh, "/repos/octo/skills/pulls/1/files", per_page=100)
    assert len(first.json()) == 100
    assert 'rel="next"' in first.headers["Link"] and "page=2" in first.headers["Link"]
    assert 'page=30>; rel="last"' in first.headers["Link"]
    last = _get(gh, "/repos/octo/skills/pulls/1/files", per_page=100, page=30)
    assert len(last.json()) == 100 and 'rel="next"' not in last.headers["Link"]
    assert _get(gh, "/repos/octo/skills/pulls/1/files", per_page=100, page=31).json() == []
    assert _get(gh, "/repos/octo/skills/pulls/1").json()["changed_files"] == 3005
    # per_page above 100 is treated as 100; the default is 30
    assert len(_get(gh, "/repos/octo/skills/pulls/1/files", per_page=500).json()) == 100
    assert len(_get(gh, "/repos/octo/skills/pulls/1/files").json()) == 30


def test_user_endpoint_by_token_kind(gh: FakeGitHub) -> None:
    assert _get(gh, "/user").json()["login"] == "octocat"
    denied = requests.get(
        f"{gh.base_url}/user", headers={"Authorization": "token ghs_i"}, timeout=10
    )
    assert denied.status_code == 403
    assert denied.json()["message"] == "Resource not accessible by integration"
    assert requests.get(f"{gh.base_url}/user", timeout=10).status_code == 401


def test_graphql_viewer_by_token_kind(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_token("ghs_app", kind="installation", login="evolve-app[bot]")
    query = {"query": "query { viewer { login } }", "variables": {}}
    logins = [
        _send(gh, "POST", "/graphql", query, token).json()["data"]["viewer"]["login"]
        for token in ("ghp_t", "ghs_i", "ghs_app")
    ]
    assert logins == ["octocat", "github-actions[bot]", "evolve-app[bot]"]
    other = _send(gh, "POST", "/graphql", {"query": "{ repository { id } }"}).json()
    assert "errors" in other and "data" not in other
    assert _send(gh, "POST", "/graphql", query, "nope").status_code == 401
    with FakeGitHub.start(tmp_path / "ghes", prefix="/api/v3") as ghes:
        ghes.add_token("ghp_t", login="octocat")
        root = ghes.base_url.removesuffix("/v3")
        answer = requests.post(f"{root}/graphql", json=query, headers=AUTH, timeout=10)
        assert answer.json()["data"]["viewer"]["login"] == "octocat"


def test_faults_are_served_in_order_then_normal_and_logged(gh: FakeGitHub) -> None:
    gh.fail("GET", r"/repos/octo/skills", [502, Fault(403, "nope", {"Retry-After": "3"}), 200, 404])
    answers = [_get(gh, "/repos/octo/skills") for _ in range(5)]
    assert [a.status_code for a in answers] == [502, 403, 200, 404, 200]
    assert answers[1].json()["message"] == "nope" and answers[1].headers["Retry-After"] == "3"
    assert [r.status for r in gh.calls("GET", "/repos/octo/skills")] == [502, 403, 200, 404, 200]


def test_comments_carry_author_and_writes_need_a_writable_token(gh: FakeGitHub) -> None:
    made = _send(gh, "POST", "/repos/octo/skills/issues/1/comments", {"body": "hi"}, "ghs_i")
    assert made.status_code == 201
    assert made.json()["user"] == made.json()["user"] | {
        "login": "github-actions[bot]",
        "type": "Bot",
    }
    assert made.json()["performed_via_github_app"]["slug"] == "github-actions"
    by_user = _send(gh, "POST", "/repos/octo/skills/issues/1/comments", {"body": "me"})
    assert by_user.json()["performed_via_github_app"] is None
    gh.add_token("ghs_ro", kind="installation", read_only=True)
    refused = _send(gh, "POST", "/repos/octo/skills/issues/1/comments", {"body": "x"}, "ghs_ro")
    assert refused.status_code == 403
    # Someone else's comment cannot be edited.
    other = _send(
        gh, "PATCH", f"/repos/octo/skills/issues/comments/{made.json()['id']}", {"body": "y"}
    )
    assert other.status_code == 403
    [logged] = gh.calls("POST", r"/repos/octo/skills/issues/1/comments")[:1]
    assert logged.body == {"body": "hi"}


def test_git_data_round_trip_and_fast_forward_rule(gh: FakeGitHub, tmp_path: Path) -> None:
    head = gh.ref_sha(REPO, "heads/feature")
    assert head is not None
    commit = _get(gh, f"/repos/octo/skills/git/commits/{head}").json()
    blob = _send(
        gh,
        "POST",
        "/repos/octo/skills/git/blobs",
        {"content": base64.b64encode(b"new\n").decode(), "encoding": "base64"},
    ).json()
    tree = _send(
        gh,
        "POST",
        "/repos/octo/skills/git/trees",
        {
            "base_tree": commit["tree"]["sha"],
            "tree": [
                {"path": "dir/new.txt", "mode": "100644", "type": "blob", "sha": blob["sha"]},
                {"path": "a.txt", "mode": "100644", "type": "blob", "sha": None},
            ],
        },
    ).json()
    paths = {
        e["path"]
        for e in _get(gh, f"/repos/octo/skills/git/trees/{tree['sha']}", recursive=1).json()["tree"]
    }
    assert paths == {"c.txt", "dir", "dir/b.txt", "dir/new.txt"}
    new = _send(
        gh,
        "POST",
        "/repos/octo/skills/git/commits",
        {"message": "m", "tree": tree["sha"], "parents": [head]},
    ).json()
    assert [p["sha"] for p in new["parents"]] == [head]

    # Deleting a path the base tree lacks is refused, like GitHub.
    bad = _send(
        gh,
        "POST",
        "/repos/octo/skills/git/trees",
        {
            "base_tree": commit["tree"]["sha"],
            "tree": [{"path": "zz", "mode": "100644", "type": "blob", "sha": None}],
        },
    )
    assert bad.status_code == 422

    # A sibling of `new` is not a fast-forward from it.
    main = gh.ref_sha(REPO, "heads/main")
    ok = _send(
        gh,
        "PATCH",
        "/repos/octo/skills/git/refs/heads/feature",
        {"sha": new["sha"], "force": False},
    )
    assert ok.status_code == 200 and gh.ref_sha(REPO, "heads/feature") == new["sha"]
    back = _send(
        gh, "PATCH", "/repos/octo/skills/git/refs/heads/feature", {"sha": main, "force": False}
    )
    assert back.status_code == 422 and back.json()["message"] == "Update is not a fast forward"
    assert gh.ref_sha(REPO, "heads/feature") == new["sha"]
    assert (
        _get(gh, "/repos/octo/skills/git/ref/heads/feature").json()["object"]["sha"] == new["sha"]
    )

    # Real git sees the commit.
    work = tmp_path / "w"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(
        ["git", "-C", str(work), "fetch", "-q", str(gh.git_dir(REPO)), "feature"], check=True
    )
    shown = subprocess.run(
        ["git", "-C", str(work), "show", "FETCH_HEAD:dir/new.txt"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout == "new\n"


def test_contents_file_directory_and_absent(gh: FakeGitHub) -> None:
    got = _get(gh, "/repos/octo/skills/contents/dir/b.txt", ref="main").json()
    assert got["type"] == "file" and base64.b64decode(got["content"]) == b"b\n"
    listing = _get(gh, "/repos/octo/skills/contents/dir", ref="main").json()
    assert [e["name"] for e in listing] == ["b.txt"]
    assert _get(gh, "/repos/octo/skills/contents/c.txt", ref="main").status_code == 404
    assert _get(gh, "/repos/octo/skills/contents/c.txt", ref="feature").status_code == 200
    assert _get(gh, "/repos/octo/skills/contents/c.txt", ref="nope").status_code == 404
