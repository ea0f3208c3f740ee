"""The Codex harness's pure parts: argv, environment, skill links, event parsing and its failures,
the Codex trigger-hit rule, and the pinned installer (against a local tarball, never the network)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import urllib.request
from pathlib import Path
from typing import IO

import pytest

from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import ErrorClass, SessionSpec, ToolCall, install_codex
from evolve_action.harness._codex import (
    codex_argv,
    codex_env,
    link_skills,
    parse_events,
    tool_calls_of,
)
from evolve_action.harness._gateway import Grant
from evolve_action.harness._install import CodexBuild, installed_codex_version
from evolve_action.triggers import is_hit


def spec(tmp_path: Path, **kw: object) -> SessionSpec:
    return SessionSpec(prompt="-dash first", workspace=tmp_path, model="gpt-5.4", **kw)  # type: ignore[arg-type]


def ev(kind: str, **data: object) -> str:
    return json.dumps({"type": kind, **data})


def item(kind: str, when: str = "item.completed", **data: object) -> str:
    return ev(when, item={"id": f"item_{kind}", "type": kind, **data})


OK_RUN = [
    ev("thread.started", thread_id="t-1"),
    item("error", message="Model metadata for `gpt-5.4` not found. Defaulting to fallback"),
    ev("turn.started"),
    item("agent_message", text="Reading the skill."),
    item(
        "command_execution", "item.started", command="/bin/bash -lc 'cat x'", status="in_progress"
    ),
    item("command_execution", command="/bin/bash -lc 'cat x'", aggregated_output="hi", exit_code=0),
    item("file_change", changes=[{"path": "/ws/a.txt", "kind": "add"}]),
    item("agent_message", text="Done."),
    ev(
        "turn.completed",
        usage={"input_tokens": 1000, "cached_input_tokens": 600, "output_tokens": 40},
    ),
]


def test_argv_passes_base_url_through_config_and_keeps_the_prompt_a_prompt(
    tmp_path: Path,
) -> None:
    argv = codex_argv(
        spec(tmp_path, permission_mode="bypassPermissions"),
        cli=Path("/opt/codex"),
        base_url="http://127.0.0.1:9/v1",
        own_sandbox=False,
    )
    assert argv[:6] == ["/opt/codex", "exec", "--json", "--skip-git-repo-check", "-m", "gpt-5.4"]
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    assert argv[argv.index("-c") + 1] == 'openai_base_url="http://127.0.0.1:9/v1"'
    assert argv[-2:] == ["--", "-dash first"]
    triggers = codex_argv(
        spec(tmp_path, permission_mode="default"), cli=Path("c"), base_url="", own_sandbox=False
    )
    assert "--sandbox" not in triggers and "-c" not in triggers  # Codex's read-only default
    confined = codex_argv(spec(tmp_path), cli=Path("c"), base_url="", own_sandbox=True)
    assert confined[confined.index("--sandbox") + 1] == "danger-full-access"


def test_env_is_allowlisted_with_the_gateway_token_only(tmp_path: Path) -> None:
    tools = tmp_path / "codex" / "codex-path"
    tools.mkdir(parents=True)
    (tmp_path / "codex" / "bin").mkdir()
    environ = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "EVOLVE_OPENAI_API_KEY": "sk-evolve",
        "OPENAI_API_KEY": "sk-plain",
        "ANTHROPIC_API_KEY": "sk-ant",
        "GITHUB_TOKEN": "ghp_x",
        "INPUT_OPENAI_API_KEY": "sk-input",
        "AWS_SECRET_ACCESS_KEY": "aws",
    }
    grant = Grant(token="evolve-session-t", anthropic_base_url="a", openai_base_url="o")
    env = codex_env(
        spec(tmp_path),
        environ=environ,
        home=tmp_path / "h",
        grant=grant,
        cli=tmp_path / "codex/bin/codex",
    )
    assert env["OPENAI_API_KEY"] == "evolve-session-t"  # the gateway holds the real key
    assert env["CODEX_API_KEY"] == "evolve-session-t"  # what `codex exec` sends (measured)
    assert env["CODEX_HOME"] == str(tmp_path / "h")
    assert env["TMPDIR"] == str(tmp_path / "h" / "tmp")
    assert env["PATH"] == f"{tools}:/usr/bin"
    for name in (
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "INPUT_OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
    ):
        assert name not in env
    assert "EVOLVE_OPENAI_API_KEY" not in env
    assert not {"sk-evolve", "sk-plain", "sk-ant", "sk-input"} & set(env.values())


def test_link_skills_mirrors_installed_skills_for_codex(tmp_path: Path) -> None:
    for name in ("frob", "frob-extra"):
        (tmp_path / ".claude/skills" / name).mkdir(parents=True)
        (tmp_path / ".claude/skills" / name / "SKILL.md").write_text("x", encoding="utf-8")
    (tmp_path / ".claude/skills/no-skill-md").mkdir()
    link_skills(spec(tmp_path))
    link_skills(spec(tmp_path))  # idempotent (sessions of one workspace start together)
    linked = sorted(p.name for p in (tmp_path / ".agents/skills").iterdir())
    assert linked == ["frob", "frob-extra"]
    link = tmp_path / ".agents/skills/frob"
    assert link.is_symlink() and not Path(link.readlink()).is_absolute()
    assert (link / "SKILL.md").read_text(encoding="utf-8") == "x"


def test_parse_events_builds_the_transcript_as_evolve_reads_codex() -> None:
    t = parse_events(OK_RUN, duration_seconds=1.5)
    assert t.ok and t.error is None
    assert t.final_text == "Reading the skill.\n\nDone."
    assert [c.name for c in t.tool_calls] == ["command_execution", "file_change"]
    assert t.tool_calls[0].input == {"command": "/bin/bash -lc 'cat x'"}
    assert t.tool_calls[1].input == {"changes": [{"path": "/ws/a.txt", "kind": "add"}]}
    assert all(c.harness == "codex" for c in t.tool_calls)
    assert t.usage is not None
    assert (t.usage.input_tokens, t.usage.cache_read_input_tokens, t.usage.output_tokens) == (
        400,
        600,
        40,
    )
    assert t.total_cost_usd is None and t.session_id == "t-1" and t.num_turns == 1


def test_a_started_command_is_a_tool_call_at_once() -> None:
    (call,) = tool_calls_of(json.loads(OK_RUN[4]))
    assert call.name == "command_execution" and "cat x" in call.raw_input
    assert tool_calls_of(json.loads(OK_RUN[3])) == []  # messages are not tool calls


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("unexpected status 401 Unauthorized: invalid_api_key", ErrorClass.AUTH),
        ("You exceeded your current quota, please check your plan", ErrorClass.CREDIT),
        ("exceeded retry limit, last status: 429 Too Many Requests", ErrorClass.OVERLOADED),
        (
            "We're currently experiencing high demand, which may cause temporary errors.",
            ErrorClass.OVERLOADED,
        ),
        (
            "stream disconnected before completion: error decoding response body",
            ErrorClass.DISCONNECT,
        ),
        ("unexpected status 400 Bad Request: scripted", ErrorClass.API_ERROR),
        ("the model refused", ErrorClass.RUN_ERROR),
    ],
)
def test_a_failed_turn_is_an_error_with_its_cause(message: str, expected: ErrorClass) -> None:
    lines = [ev("thread.started", thread_id="t"), ev("turn.started"), ev("error", message=message)]
    lines.append(ev("turn.failed", error={"message": message}))
    t = parse_events(lines, exit_code=1)
    assert t.error is expected, t.error_message
    assert " ".join(message.split())[:40] in t.error_message


def test_retry_notices_and_error_items_are_not_failures() -> None:
    lines = [ev("error", message="Reconnecting... 1/5 (stream disconnected)"), *OK_RUN]
    assert parse_events(lines).ok
    # A stream error the turn recovered from (it then completed) is not a failure either.
    assert parse_events([OK_RUN[0], ev("error", message="transient hiccup"), *OK_RUN[1:]]).ok


def test_crash_empty_timeout_and_early_stop() -> None:
    crashed = parse_events(
        [ev("thread.started", thread_id="t")], exit_code=101, stderr_tail="panic: boom"
    )
    assert crashed.error is ErrorClass.CRASH and "code 101: panic: boom" in crashed.error_message
    assert parse_events([], exit_code=0).error is ErrorClass.EMPTY_OUTPUT
    assert parse_events(["not json"], exit_code=0).error is ErrorClass.CRASH
    assert parse_events(OK_RUN[:4], timed_out=True).error is ErrorClass.TIMEOUT
    stopped = parse_events(OK_RUN[:5], exit_code=-9, stopped_early=True)
    assert stopped.ok and stopped.tool_calls[0].name == "command_execution"
    missing = parse_events([], missing_skill="not installed")
    assert missing.error is ErrorClass.SKILL_NOT_LOADED


def call(command: str) -> ToolCall:
    data = {"command": command}
    return ToolCall(
        name="command_execution", input=data, raw_input=json.dumps(data), harness="codex"
    )


@pytest.mark.parametrize(
    ("command", "hit"),
    [
        ("/bin/bash -lc 'cat /ws/.agents/skills/frob/SKILL.md'", True),
        ('/bin/bash -lc "sed -n 1,80p .agents/skills/frob/SKILL.md"', True),
        ("/bin/bash -lc 'cd .agents/skills && cat frob/SKILL.md'", True),
        ("/bin/bash -lc 'cat .agents/skills/frob-extra/SKILL.md'", False),
        ("/bin/bash -lc 'cat .agents/skills/xfrob/SKILL.md'", False),
        ("/bin/bash -lc 'cat .agents/skills/frob/README.md'", False),
        ("/bin/bash -lc 'ls'", False),
    ],
)
def test_codex_hit_rule_names_the_skill_exactly(command: str, hit: bool) -> None:
    assert is_hit(call(command), "frob") is hit


def test_file_change_mentioning_the_skill_file_is_a_hit_but_claude_tools_keep_their_rule() -> None:
    change = {"changes": [{"path": "/ws/.agents/skills/frob/SKILL.md", "kind": "update"}]}
    assert is_hit(ToolCall(name="file_change", input=change, raw_input="", harness="codex"), "frob")
    bash = {"command": "cat .claude/skills/frob/SKILL.md"}
    assert not is_hit(ToolCall(name="Bash", input=bash, raw_input=""), "frob")


# ------------------------------------------------------------------------------------------------
# The installer, against a tarball made here (never the registry)


def tarball(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755 if name.endswith("codex") else 0o644
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buf.getvalue()


def integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def serve(data: bytes, seen: list[str]) -> object:
    def open_url(request: urllib.request.Request) -> IO[bytes]:
        seen.append(request.full_url)
        return io.BytesIO(data)

    return open_url


VENDOR = "package/vendor/x86_64-unknown-linux-musl"


def test_install_unpacks_the_verified_vendor_tree_only(tmp_path: Path) -> None:
    data = tarball(
        {
            f"{VENDOR}/bin/codex": b"#!/bin/sh\necho codex\n",
            f"{VENDOR}/codex-path/rg": b"rg",
            "package/bin/codex.js": b"launcher",
            "../escape": b"no",
        },
        links={f"{VENDOR}/bin/evil": "/etc/passwd"},
    )
    seen: list[str] = []
    build = CodexBuild("linux-x64", "x86_64-unknown-linux-musl", integrity(data))
    binary = install_codex(
        tmp_path,
        environ={},
        machine="x86_64",
        opener=serve(data, seen),  # type: ignore[arg-type]
        builds={"x86_64": build},
    )
    assert binary == tmp_path / "codex" / "bin" / "codex"
    assert binary.read_bytes() == b"#!/bin/sh\necho codex\n" and binary.stat().st_mode & 0o111
    assert (tmp_path / "codex/codex-path/rg").read_bytes() == b"rg"
    assert not (tmp_path / "codex/bin/evil").exists() and not (tmp_path / "escape").exists()
    assert not (tmp_path / "codex/bin/codex.js").exists()
    assert seen == ["https://registry.npmjs.org/@openai/codex/-/codex-0.169.0-linux-x64.tgz"]
    assert installed_codex_version(tmp_path) == "0.169.0"
    install_codex(
        tmp_path, environ={}, machine="x86_64", opener=serve(data, seen), builds={"x86_64": build}
    )  # type: ignore[arg-type]
    assert len(seen) == 1  # already installed: nothing downloaded


def test_install_refuses_a_download_that_does_not_match_the_pinned_hash(tmp_path: Path) -> None:
    good = tarball({f"{VENDOR}/bin/codex": b"good"})
    tampered = tarball({f"{VENDOR}/bin/codex": b"evil"})
    build = CodexBuild("linux-x64", "x86_64-unknown-linux-musl", integrity(good))
    with pytest.raises(EnvironmentProblem, match="does not match the pinned sha512"):
        install_codex(
            tmp_path,
            environ={},
            machine="x86_64",
            opener=serve(tampered, []),  # type: ignore[arg-type]
            builds={"x86_64": build},
        )
    assert not (tmp_path / "codex").exists()
    assert [p.name for p in tmp_path.iterdir()] == []


def test_install_names_an_unsupported_machine(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem, match=r"no pinned Codex build for .*/riscv64"):
        install_codex(tmp_path, environ={}, machine="riscv64")
