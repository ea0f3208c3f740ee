"""`command` assertions (engine spec §10.2): real `/bin/sh`, table-driven, plus the environment allowlist."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from evolve_action import grading
from evolve_action.specs import Assertion


def cmd(run: str, **kw: Any) -> Assertion:
    return Assertion(type="command", run=run, **kw)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "marker").write_text("here\n")
    return tmp_path


ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"}

CASES: list[tuple[str, Assertion, float, bool | None, str]] = [
    ("exit0-pass", cmd("echo hello"), 10, True, "exit 0: hello\n"),
    ("exit1-fail", cmd("echo oops >&2; exit 3"), 10, False, "exit 3: oops"),
    ("expect-exit-pass", cmd("exit 3", expect_exit=3), 10, True, "exit 3: "),
    ("expect-exit-0-explicit-fail", cmd("false", expect_exit=0), 10, False, "exit 1: "),
    ("cwd", cmd("cat marker", cwd="sub"), 10, True, "exit 0: here\n"),
    ("cwd-default-is-ws", cmd("test -f sub/marker"), 10, True, "exit 0: "),
    (
        "requires-missing-skips",
        cmd("whatever", requires="no-such-binary-xyz"),
        10,
        None,
        "skipped: no-such-binary-xyz not installed",
    ),
    ("requires-present-runs", cmd("true", requires="sh"), 10, True, "exit 0: "),
    ("requires-path-form", cmd("true", requires="/bin/sh"), 10, True, "exit 0: "),
    (
        "requires-path-missing",
        cmd("true", requires="/nonexistent/tool"),
        10,
        None,
        "skipped: /nonexistent/tool not installed",
    ),
    ("timeout-fails", cmd("sleep 30"), 0.5, False, "exit -1: "),
    ("timeout-expected", cmd("sleep 30", expect_exit=-1), 0.5, True, "exit -1: "),
    ("stdout-then-stderr", cmd("printf out; printf err >&2; exit 1"), 10, False, "exit 1: outerr"),
    ("ansi-stripped", cmd(r"printf '\033[31mred\033[0m'"), 10, True, "exit 0: red"),
]


@pytest.mark.parametrize(
    ("assertion", "timeout", "passed", "evidence"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_command(
    ws: Path, assertion: Assertion, timeout: float, passed: bool | None, evidence: str
) -> None:
    v = asyncio.run(
        grading.grade_deterministic(
            assertion,
            workspace=ws,
            final_text="",
            tool_calls=(),
            timeout_seconds=timeout,
            environ=ENV,
        )
    )
    assert (v.passed, v.evidence) == (passed, evidence)


def test_evidence_keeps_last_200_bytes(ws: Path) -> None:
    v = asyncio.run(
        grading.grade_deterministic(
            cmd("seq 1 1000; exit 1"),
            workspace=ws,
            final_text="",
            tool_calls=(),
            timeout_seconds=10,
            environ=ENV,
        )
    )
    assert v.passed is False
    body = v.evidence.removeprefix("exit 1: ")
    assert len(body.encode()) == 200 and body.endswith("999\n1000\n")


def test_command_cannot_see_github_token_or_inputs(ws: Path) -> None:
    env = {
        **ENV,
        "GITHUB_TOKEN": "ghs_secret",
        "GH_TOKEN": "x",
        "INPUT_ANTHROPIC_API_KEY": "sk-secret",
        "LANG": "C.UTF-8",
    }
    v = asyncio.run(
        grading.grade_deterministic(
            cmd('env > env.txt; test -z "$GITHUB_TOKEN$GH_TOKEN$INPUT_ANTHROPIC_API_KEY"'),
            workspace=ws,
            final_text="",
            tool_calls=(),
            timeout_seconds=10,
            environ=env,
        )
    )
    assert v.passed is True, v.evidence
    seen = (ws / "env.txt").read_text()
    assert "ghs_secret" not in seen and "sk-secret" not in seen and "INPUT_" not in seen
    assert "LANG=C.UTF-8" in seen
