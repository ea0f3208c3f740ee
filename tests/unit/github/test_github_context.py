"""GitHub context: the supported events, GHES URLs, fork detection, hostile payloads."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from evolve_action.errors import EnvironmentProblem
from evolve_action.github import (
    Event,
    checkout_kind,
    fork_target_refusal,
    git_env,
    inactive_message,
    load_context,
    restore_workspace_owner,
    unsupported_message,
)

HEAD = "a" * 40
BASE = "b" * 40
MERGE = "c" * 40


def pr_payload(*, head_repo: str | None = "o/r", changed_files: Any = 3) -> dict[str, Any]:
    return {
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "changed_files": changed_files,
            "merge_commit_sha": MERGE,
            "head": {
                "ref": "feature/x",
                "sha": HEAD,
                "repo": None if head_repo is None else {"full_name": head_repo},
            },
            "base": {"ref": "main", "sha": BASE, "repo": {"full_name": "o/r"}},
        },
    }


def runner_env(tmp_path: Path, event: str, payload: Any, **extra: str) -> dict[str, str]:
    path = tmp_path / "event.json"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    env = {
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_SHA": MERGE,
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_RUN_ID": "123",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_ACTOR": "alice",
    }
    env.update(extra)
    return env


def test_pull_request(tmp_path: Path) -> None:
    ctx = load_context(runner_env(tmp_path, "pull_request", pr_payload()), cwd=tmp_path)
    assert ctx.event is Event.PULL_REQUEST
    pr = ctx.pull_request
    assert pr is not None
    assert (pr.number, pr.head_sha, pr.base_sha, pr.head_ref, pr.base_ref) == (
        7,
        HEAD,
        BASE,
        "feature/x",
        "main",
    )
    assert pr.changed_files == 3 and not pr.is_fork and not ctx.is_fork
    assert ctx.api_url == "https://api.github.com" and ctx.server_url == "https://github.com"
    assert ctx.run_url == "https://github.com/o/r/actions/runs/123"
    assert ctx.workspace == Path("/github/workspace")
    assert (ctx.owner, ctx.name) == ("o", "r")
    assert checkout_kind(ctx, MERGE) == "merge"
    assert checkout_kind(ctx, HEAD) == "head"
    assert checkout_kind(ctx, "d" * 40) == "other"


def test_fork_and_deleted_fork(tmp_path: Path) -> None:
    ctx = load_context(
        runner_env(tmp_path, "pull_request", pr_payload(head_repo="someone/r")), cwd=tmp_path
    )
    assert ctx.is_fork
    gone = load_context(
        runner_env(tmp_path, "pull_request", pr_payload(head_repo=None)), cwd=tmp_path
    )
    assert gone.is_fork and gone.pull_request is not None and gone.pull_request.head_repo == ""


def test_pull_request_target_fork_refused_unless_allowed(tmp_path: Path) -> None:
    env = runner_env(tmp_path, "pull_request_target", pr_payload(head_repo="evil/r"))
    ctx = load_context(env, cwd=tmp_path)
    message = fork_target_refusal(ctx, allow_fork_target=False)
    assert message is not None and "evil/r" in message and "allow_fork_target" in message
    assert fork_target_refusal(ctx, allow_fork_target=True) is None
    same = load_context(runner_env(tmp_path, "pull_request_target", pr_payload()), cwd=tmp_path)
    assert fork_target_refusal(same, allow_fork_target=False) is None
    plain = load_context(
        runner_env(tmp_path, "pull_request", pr_payload(head_repo="evil/r")), cwd=tmp_path
    )
    assert fork_target_refusal(plain, allow_fork_target=False) is None
    # Under pull_request_target GITHUB_SHA is the base: never a "merge" checkout.
    assert checkout_kind(ctx, MERGE) == "merge"  # the payload's merge commit
    assert checkout_kind(ctx, BASE) == "other"


def test_push_new_branch_and_dispatch(tmp_path: Path) -> None:
    ctx = load_context(
        runner_env(tmp_path, "push", {"before": "0" * 40, "after": HEAD}), cwd=tmp_path
    )
    assert ctx.event is Event.PUSH and ctx.push_before is None and ctx.push_after == HEAD
    ctx = load_context(runner_env(tmp_path, "push", {"before": BASE, "after": HEAD}), cwd=tmp_path)
    assert ctx.push_before == BASE
    ctx = load_context(runner_env(tmp_path, "workflow_dispatch", {"inputs": {}}), cwd=tmp_path)
    assert ctx.event is Event.WORKFLOW_DISPATCH and ctx.pull_request is None
    assert checkout_kind(ctx, HEAD) == "other"


def test_ghes_urls(tmp_path: Path) -> None:
    env = runner_env(
        tmp_path,
        "pull_request",
        pr_payload(),
        GITHUB_SERVER_URL="https://ghe.example.com/",
        GITHUB_RUN_ATTEMPT="2",
    )
    ctx = load_context(env, cwd=tmp_path)
    assert ctx.api_url == "https://ghe.example.com/api/v3"
    assert ctx.run_url == "https://ghe.example.com/o/r/actions/runs/123/attempts/2"
    env["GITHUB_API_URL"] = "http://127.0.0.1:8080/api"
    assert load_context(env, cwd=tmp_path).api_url == "http://127.0.0.1:8080/api"
    # GraphQL goes to the API's host: another host would be sent the token (PyGithub refuses it).
    env["GITHUB_GRAPHQL_URL"] = "https://api.github.com/graphql"
    with pytest.raises(EnvironmentProblem, match=r"GITHUB_GRAPHQL_URL .* not on the host"):
        load_context(env, cwd=tmp_path)
    env["GITHUB_GRAPHQL_URL"] = "http://127.0.0.1:8080/graphql"
    assert load_context(env, cwd=tmp_path).graphql_url == "http://127.0.0.1:8080/graphql"


@pytest.mark.parametrize("name", ["issue_comment", "", "schedule", "unsupported"])
def test_unsupported_event_needs_no_payload(tmp_path: Path, name: str) -> None:
    ctx = load_context(
        {"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": "/nonexistent"}, cwd=tmp_path
    )
    assert ctx.event is Event.UNSUPPORTED
    message = unsupported_message(ctx)
    assert "pull_request, pull_request_target, push, workflow_dispatch" in message
    assert ctx.workspace == tmp_path


def test_unsupported_message_is_cleaned(tmp_path: Path) -> None:
    ctx = load_context({"GITHUB_EVENT_NAME": "x\n::error::y" + "z" * 500}, cwd=tmp_path)
    message = unsupported_message(ctx)
    assert "\n" not in message and len(message) < 400


def pr_with(**changes: Any) -> dict[str, Any]:
    payload = pr_payload()
    for dotted, value in changes.items():
        node = payload
        keys = dotted.split("__")
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value
    return payload


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "JSON array, not an object"),
        ('"text"', "JSON string"),
        ("", "not JSON"),
        ({}, "pull_request is missing"),
        ({"pull_request": "7"}, "pull_request is the string"),
        (pr_with(pull_request__number="7"), "pull_request.number"),
        (pr_with(pull_request__number=True), "pull_request.number"),
        (pr_with(pull_request__number=0), "must be positive"),
        (pr_with(pull_request__number=2**80), "pull_request.number"),
        (pr_with(pull_request__head__sha="nothex"), "pull_request.head.sha"),
        (pr_with(pull_request__head__sha=None), "pull_request.head.sha is missing"),
        (pr_with(pull_request__head="main"), "pull_request.head is a string, not an object"),
        (pr_with(pull_request__base__ref="x" * 5000), "5000 characters"),
        (pr_with(pull_request__base__ref="a\x00b"), "control characters"),
        (pr_with(pull_request__head__repo={"full_name": "no-slash"}), "is not owner/name"),
        (pr_with(pull_request__changed_files=-1), "changed_files"),
        (pr_with(pull_request__state=["closed"]), "pull_request.state is an array"),
        (pr_with(pull_request__state="x" * 100), "pull_request.state is 100 characters"),
        (pr_with(action={"type": "closed"}), "event field action is an object"),
        (pr_with(action="closed\n::error::x"), "action contains control characters"),
        (pr_with(pull_request__head__ref="a\n::error::pwned"), "control characters"),
        (pr_with(pull_request__head__ref=12), "pull_request.head.ref is a number"),
        (pr_with(pull_request__base=None), "pull_request.base is null, not an object"),
        (pr_with(pull_request__merge_commit_sha=7), "merge_commit_sha"),
    ],
)
def test_hostile_payloads(tmp_path: Path, payload: Any, fragment: str) -> None:
    env = runner_env(tmp_path, "pull_request", payload)
    with pytest.raises(EnvironmentProblem) as caught:
        load_context(env, cwd=tmp_path)
    rendered = caught.value.render()
    assert fragment in rendered
    assert "event.json" in rendered  # names the event file


@pytest.mark.parametrize(
    ("action", "state", "skipped"),
    [
        ("synchronize", "open", False),
        ("reopened", None, False),  # no state in the payload: open
        (None, None, False),
        ("closed", "closed", True),
        ("labeled", "closed", True),  # any activity on a closed (or merged) PR
        ("closed", None, True),
    ],
)
def test_a_pull_request_that_is_not_open_is_one_line(
    tmp_path: Path, action: str | None, state: str | None, skipped: bool
) -> None:
    payload = pr_payload()
    payload.pop("action")
    if action is not None:
        payload["action"] = action
    if state is not None:
        payload["pull_request"]["state"] = state
    ctx = load_context(runner_env(tmp_path, "pull_request_target", payload), cwd=tmp_path)
    line = inactive_message(ctx)
    assert (line is not None) is skipped
    if line is not None:
        assert line.startswith("evolve-action does nothing on a ") and "#7" in line
        assert "pull_request_target" in line and "\n" not in line


def test_text_the_action_never_reads_is_ignored_whatever_it_holds(tmp_path: Path) -> None:
    payload = pr_with(
        pull_request__title="::error file=x::pwned\n" + "t" * 1_000_000,
        pull_request__body=None,
        pull_request__user={"login": "::warning::x"},
        sender=[1, 2, 3],
    )
    ctx = load_context(runner_env(tmp_path, "pull_request", payload), cwd=tmp_path)
    assert ctx.pull_request is not None and ctx.pull_request.number == 7
    assert inactive_message(ctx) is None


def test_non_utf8_and_deep_payloads(tmp_path: Path) -> None:
    env = runner_env(tmp_path, "push", "{}")
    Path(env["GITHUB_EVENT_PATH"]).write_bytes(b'{"before": "\xff"}')
    with pytest.raises(EnvironmentProblem, match="not UTF-8"):
        load_context(env, cwd=tmp_path)
    Path(env["GITHUB_EVENT_PATH"]).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(EnvironmentProblem, match="event payload"):
        load_context(env, cwd=tmp_path)


def test_missing_event_file_and_variables(tmp_path: Path) -> None:
    env = runner_env(tmp_path, "push", {})
    env["GITHUB_EVENT_PATH"] = str(tmp_path / "missing.json")
    with pytest.raises(EnvironmentProblem, match="cannot read the event payload") as caught:
        load_context(env, cwd=tmp_path)
    assert "missing.json" in caught.value.render()
    del env["GITHUB_EVENT_PATH"]
    with pytest.raises(EnvironmentProblem, match="GITHUB_EVENT_PATH is not set"):
        load_context(env, cwd=tmp_path)
    with pytest.raises(EnvironmentProblem, match="GITHUB_REPOSITORY"):
        load_context({**runner_env(tmp_path, "push", {}), "GITHUB_REPOSITORY": "x"}, cwd=tmp_path)
    with pytest.raises(EnvironmentProblem, match="GITHUB_API_URL"):
        load_context(
            {**runner_env(tmp_path, "push", {}), "GITHUB_API_URL": "file:///etc/passwd"},
            cwd=tmp_path,
        )
    with pytest.raises(EnvironmentProblem, match="GITHUB_SHA"):
        load_context({**runner_env(tmp_path, "push", {}), "GITHUB_SHA": "zz"}, cwd=tmp_path)


def test_git_env_adds_safe_directory_after_existing_entries() -> None:
    environ = {
        "PATH": "/usr/bin",
        "HOME": "/github/home",
        "GITHUB_TOKEN": "ghs_secret",
        "INPUT_GITHUB_TOKEN": "ghs_secret",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.autocrlf",
        "GIT_CONFIG_VALUE_0": "false",
    }
    env = git_env(environ, safe_directories=(Path("/github/workspace"),))
    assert env["GIT_CONFIG_COUNT"] == "2"
    assert env["GIT_CONFIG_KEY_0"] == "core.autocrlf"
    assert (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == (
        "safe.directory",
        "/github/workspace",
    )
    assert "GITHUB_TOKEN" not in env and "INPUT_GITHUB_TOKEN" not in env
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["HOME"] == "/github/home"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_restore_workspace_owner(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.chown(workspace, 1001, 1001)
    written = workspace / "plugins" / "p" / "evals" / "s" / "results.json"
    written.parent.mkdir(parents=True)
    written.write_text("{}", encoding="utf-8")
    outside = tmp_path / "outside.txt"
    outside.write_text("x", encoding="utf-8")
    changed = restore_workspace_owner(workspace, [written, outside, workspace / "missing"])
    assert written in changed and outside not in changed
    for path in (written, *list(written.parents)[:4]):
        assert (path.stat().st_uid, path.stat().st_gid) == (1001, 1001), path
    assert outside.stat().st_uid == 0
    assert restore_workspace_owner(workspace, [written]) == []


def test_runner_layout_end_to_end(tmp_path: Path) -> None:
    """The files and variables a Docker action sees, read and written through the public API."""
    import io

    from evolve_action.github import (
        ActionOutputs,
        CommandFiles,
        append_summary,
        read_inputs,
        write_outputs,
    )

    github = tmp_path / "github"
    (github / "workspace" / "plugins").mkdir(parents=True)
    (github / "file_commands").mkdir()
    (github / "workflow").mkdir()
    (github / "workflow" / "event.json").write_text(json.dumps(pr_payload()), encoding="utf-8")
    output = github / "file_commands" / "set_output_1"
    summary = github / "file_commands" / "step_summary_1"
    output.touch()
    summary.touch()
    environ = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(github / "workflow" / "event.json"),
        "GITHUB_WORKSPACE": str(github / "workspace"),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_SHA": MERGE,
        "GITHUB_RUN_ID": "9",
        "INPUT_MODE": "pr",
        "INPUT_GITHUB_TOKEN": "ghs_token",
        "INPUT_WORKING-DIRECTORY": "plugins",
        "INPUT_TIERS": "checks,triggers,evals",
        "INPUT_COMMIT": "true",
    }
    log = io.StringIO()
    ctx = load_context(environ, cwd=tmp_path)
    inputs = read_inputs(environ, workspace=ctx.workspace, log=log)
    assert "::add-mask::ghs_token" in log.getvalue()
    assert inputs.working_directory == github / "workspace" / "plugins"
    assert ctx.pull_request is not None and ctx.pull_request.head_sha == HEAD
    files = CommandFiles.from_env(environ)
    assert write_outputs(files.output, ActionOutputs(status="skipped"))
    assert append_summary(files.summary, "evolve-action: no skill touched; nothing evaluated.")
    assert "status<<ghadelimiter_" in output.read_text(encoding="utf-8")
    assert summary.read_text(encoding="utf-8").startswith("evolve-action: no skill touched")
