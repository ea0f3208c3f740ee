"""Unit tests of the Claude Code harness: the pure parser (recorded SDK streams), options, environment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ResultMessage
from claude_agent_sdk._internal.message_parser import parse_message

from evolve_action import harness as procenv
from evolve_action import harness as tokens
from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import ErrorClass, SessionSpec, runtime_error
from evolve_action.harness import _gateway as gateway
from evolve_action.harness._claude_code import (
    agent_env,
    build_options,
    exec_wrapper_script,
    parse_messages,
    tool_calls_of,
)

DATA = Path(__file__).parent / "data"


def recorded(name: str) -> list[Any]:
    """A session recorded from the real CLI against the scripted model server (raw stream-json)."""
    raw = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return [m for m in (parse_message(d) for d in raw) if m is not None]


def test_completed_session_with_skill_call() -> None:
    t = parse_messages(recorded("route_hit"), duration_seconds=1.5)
    assert t.error is None and t.ok
    assert t.final_text == "Done."
    assert [(c.name, dict(c.input)) for c in t.tool_calls] == [("Skill", {"skill": "pdf-tools"})]
    assert t.tool_calls[0].raw_input == '{"skill":"pdf-tools"}'
    assert t.usage is not None
    assert t.usage.input_tokens > 0 and t.usage.output_tokens
    assert t.usage.cache_read_input_tokens > 0 and t.usage.cache_creation_input_tokens > 0
    assert t.total_cost_usd is not None and t.total_cost_usd > 0
    assert t.num_turns >= 1 and t.has_result and t.subtype == "success"
    assert t.duration_seconds == 1.5
    assert runtime_error(t) == ""


def test_session_stopped_at_first_hit_is_not_an_error() -> None:
    t = parse_messages(recorded("route_stop"), stopped_early=True)
    assert t.stopped_early and t.error is None
    assert not t.has_result
    assert [c.name for c in t.tool_calls] == ["Skill"]


@pytest.mark.parametrize(
    ("name", "error", "fragment"),
    [
        ("f529", ErrorClass.OVERLOADED, "529"),
        ("disc", ErrorClass.DISCONNECT, "Connection dropped"),
        ("malf", ErrorClass.API_ERROR, "JSON Parse error"),
    ],
    ids=["http-529", "disconnect", "malformed-stream"],
)
def test_api_failures_are_classified(name: str, error: ErrorClass, fragment: str) -> None:
    t = parse_messages(recorded(name))
    assert t.error is error
    assert fragment in t.error_message
    assert runtime_error(t) == t.error_message
    assert error.retryable is (error in (ErrorClass.OVERLOADED, ErrorClass.DISCONNECT))


def test_denied_tool_call_still_shows_in_transcript() -> None:
    t = parse_messages(recorded("denied"))
    assert [c.name for c in t.tool_calls] == ["Bash"]
    assert t.error is None


def test_turn_cap_reached_without_text_is_a_run_error_with_subtype() -> None:
    t = parse_messages(recorded("maxturns"))
    assert [c.name for c in t.tool_calls] == ["Read", "Read"]
    assert t.error is ErrorClass.RUN_ERROR
    assert t.subtype == "error_max_turns"
    assert runtime_error(t).startswith("claude run error (error_max_turns)")


def _result(**kw: Any) -> ResultMessage:
    base: dict[str, Any] = {
        "subtype": "success",
        "duration_ms": 10,
        "duration_api_ms": 5,
        "is_error": False,
        "num_turns": 1,
        "session_id": "s",
    }
    base.update(kw)
    return ResultMessage(**base)


@pytest.mark.parametrize(
    ("messages", "kwargs", "error", "reason"),
    [
        ([], {}, ErrorClass.EMPTY_OUTPUT, "empty CLI output"),
        ([], {"timed_out": True}, ErrorClass.TIMEOUT, "timed out"),
        ([], {"crash": "agent CLI failed: boom"}, ErrorClass.CRASH, "agent CLI failed: boom"),
        ([_result(result="\x1b[31mhello\x1b[0m")], {}, None, ""),
        (
            [_result(result="Claude usage limit reached|1700000000")],
            {},
            ErrorClass.USAGE_LIMIT,
            "usage limit reached: Claude usage limit reached|1700000000",
        ),
        (
            [_result(is_error=True, subtype="error_during_execution", errors=["a", " ", "b"])],
            {},
            ErrorClass.RUN_ERROR,
            "claude run error (error_during_execution): a; b",
        ),
        ([_result(result="")], {}, None, ""),
        (
            [_result(is_error=True, result="API Error: 500 boom", api_error_status=500)],
            {},
            ErrorClass.API_ERROR,
            "API error 500: API Error: 500 boom",
        ),
        (
            [_result(is_error=True, result="API Error: 429 slow down", api_error_status=429)],
            {},
            ErrorClass.OVERLOADED,
            "API error 429: API Error: 429 slow down",
        ),
    ],
    ids=[
        "empty",
        "timeout",
        "crash",
        "ansi-stripped-text",
        "usage-limit",
        "is-error-no-text",
        "empty-success",
        "http-500",
        "http-429",
    ],
)
def test_classification_table(
    messages: list[Any], kwargs: dict[str, Any], error: ErrorClass | None, reason: str
) -> None:
    t = parse_messages(messages, **kwargs)
    assert t.error is error
    assert runtime_error(t) == reason
    if messages and error is None and messages[0].result:
        assert t.final_text == "hello"


def test_stopped_early_wins_over_timeout_classification() -> None:
    assert parse_messages(recorded("route_stop"), stopped_early=True, timed_out=False).ok


def test_tool_calls_of_ignores_non_assistant_messages() -> None:
    assert tool_calls_of(_result(result="x")) == []


SPEC = SessionSpec(prompt="hi", workspace=Path("/ws"), model="claude-sonnet-4-6", max_turns=2)

ENVIRON = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "ANTHROPIC_API_KEY": "sk-1",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:1",
    "GITHUB_TOKEN": "ghp_x",
    "GH_TOKEN": "gh",
    "INPUT_ANTHROPIC_API_KEY": "sk-input",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "CLAUDE_CONFIG_DIR": "/home/u/.claude",
}


GRANT = gateway.Grant(
    token="evolve-session-abc",
    anthropic_base_url="http://127.0.0.1:9/anthropic",
    openai_base_url="http://127.0.0.1:9/openai",
)


@pytest.mark.parametrize(
    ("is_root", "mode", "sandbox"),
    [(True, "bypassPermissions", "1"), (False, "bypassPermissions", None), (True, "default", None)],
)
def test_agent_env_is_allowlisted(is_root: bool, mode: str, sandbox: str | None) -> None:
    spec = SessionSpec(prompt="p", workspace=Path("/ws"), model="m", permission_mode=mode)
    env = agent_env(spec, environ=ENVIRON, config_dir=Path("/cfg"), is_root=is_root, grant=GRANT)
    assert "GITHUB_TOKEN" not in env and "GH_TOKEN" not in env
    assert not any(k.startswith("INPUT_") for k in env)
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["CLAUDE_CONFIG_DIR"] == "/cfg"  # never the operator's config dir
    # The agent holds the session's gateway token and address, never the job's key or endpoint.
    assert env["ANTHROPIC_API_KEY"] == GRANT.token
    assert env["ANTHROPIC_BASE_URL"] == GRANT.anthropic_base_url
    assert "sk-1" not in env.values() and "http://127.0.0.1:1" not in env.values()
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert env.get("IS_SANDBOX") == sandbox


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        (
            {"EVOLVE_ANTHROPIC_API_KEY": "e", "ANTHROPIC_API_KEY": "k"},
            (("x-api-key", "e"),),
        ),
        (
            {"EVOLVE_CLAUDE_CODE_OAUTH_TOKEN": "o", "ANTHROPIC_API_KEY": "k"},
            (("authorization", "Bearer o"), ("anthropic-beta", "oauth-2025-04-20")),
        ),
        (
            {"CLAUDE_CODE_OAUTH_TOKEN": "t", "ANTHROPIC_AUTH_TOKEN": "a"},
            (("authorization", "Bearer t"), ("anthropic-beta", "oauth-2025-04-20")),
        ),
        ({"ANTHROPIC_AUTH_TOKEN": "a"}, (("authorization", "Bearer a"),)),
        ({}, ()),
    ],
)
def test_gateway_puts_on_the_credential_the_judge_and_counting_use(
    environ: dict[str, str], expected: tuple[tuple[str, str], ...]
) -> None:
    spec = SessionSpec(prompt="p", workspace=Path("/ws"), model="m")
    env = agent_env(spec, environ=environ, config_dir=Path("/cfg"), is_root=False, grant=GRANT)
    assert not {k for k in env if k in procenv.CREDENTIAL_VARS} - {"ANTHROPIC_API_KEY"}
    assert env["ANTHROPIC_API_KEY"] == GRANT.token
    routes = gateway.upstreams(environ)
    if not expected:  # no credential, no route: the gateway serves nothing on it
        assert "anthropic" not in routes
        return
    route = routes["anthropic"]
    assert route.headers == expected
    assert route.base_url == "https://api.anthropic.com"
    chosen = procenv.chosen_credential(environ)
    assert (chosen[1] if chosen else None) == (
        expected[0][1].removeprefix("Bearer ") if expected else None
    )
    assert tokens.CREDENTIAL_VARS == procenv.CREDENTIAL_VARS
    assert "headers" not in repr(route)  # a route's repr never shows its credential


@pytest.mark.parametrize("name", ["CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"])
def test_gateway_refuses_cloud_credentials_with_the_reason(name: str) -> None:
    with pytest.raises(EnvironmentProblem, match=f"{name} is set: Bedrock and Vertex"):
        gateway.upstreams({name: "1", "ANTHROPIC_API_KEY": "k"})


def test_session_extras_cannot_smuggle_forbidden_names() -> None:
    spec = SessionSpec(
        prompt="p", workspace=Path("/ws"), model="m", env={"GITHUB_TOKEN": "x", "FOO": "1"}
    )
    env = agent_env(spec, environ={}, config_dir=Path("/cfg"), is_root=False, grant=GRANT)
    assert "GITHUB_TOKEN" not in env and env["FOO"] == "1"


def test_build_options() -> None:
    opts = build_options(SPEC, env={"A": "1"}, cli_path=Path("/x/claude"))
    assert opts.cwd == "/ws" and opts.model == "claude-sonnet-4-6" and opts.max_turns == 2
    assert opts.setting_sources == ["project"]
    assert opts.permission_mode == "bypassPermissions"
    assert opts.env == {"A": "1"} and opts.cli_path == "/x/claude"
    assert opts.system_prompt == {"type": "preset", "preset": "claude_code"}


def test_exec_wrapper_passes_names_never_values() -> None:
    script = exec_wrapper_script(Path("/opt/it's/claude"), ["PATH", "HOME", "BAD-NAME", "X;rm"])
    assert script.startswith("#!/bin/sh\n")
    assert "'--keep' 'HOME,PATH'" in script  # the launcher clears its own environment
    assert "'/opt/it'\\''s/claude'" in script
    assert "env -i" not in script and "$n" not in script  # no value is put on a command line


def test_launcher_keeps_only_the_named_variables(tmp_path: Path) -> None:
    import subprocess
    import sys

    from evolve_action.harness._confine import LAUNCHER

    secret = "sk-ant-api03-" + "s" * 40
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            str(LAUNCHER),
            "--keep",
            "KEEP,PATH",
            "--",
            "/bin/sh",
            "-c",
            'printf "%s|%s|%s" "$KEEP" "${ANTHROPIC_API_KEY-unset}" "$(cat /proc/$$/cmdline | tr "\\0" " ")"',
        ],
        env={"KEEP": "yes", "PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": secret},
        capture_output=True,
        text=True,
        check=True,
    )
    keep, key, cmdline = done.stdout.split("|", 2)
    assert keep == "yes" and key == "unset"
    assert secret not in cmdline


def test_backstop_after_the_result_keeps_the_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from evolve_action.harness import _claude_code as claude_code

    async def hanging_query(**_kw: Any) -> Any:
        yield _result(result="all done", total_cost_usd=0.5)
        await asyncio.Event().wait()  # the CLI never closes its stream

    monkeypatch.setattr(claude_code, "query", hanging_query)
    monkeypatch.setattr(claude_code, "_BACKSTOP_SECONDS", 0.0)
    spec = SessionSpec(
        prompt="p",
        workspace=tmp_path,
        model="m",
        timeout_seconds=0.01,
        config_dir=tmp_path / "home",
    )
    t = asyncio.run(
        claude_code.run_session(spec, environ={}, cli_path=Path("/bin/true"), is_root=False)
    )
    assert t.error is None and t.has_result
    assert t.final_text == "all done"
