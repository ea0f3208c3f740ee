"""Deterministic grading (engine spec §10): every assertion type passes and fails where it should.

`command` assertions start `/bin/sh`, so they live in tests/integration/test_grading.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evolve_action.grading import Verdict
from evolve_action.grading import _assertions as grading
from evolve_action.harness import ToolCall
from evolve_action.results import summarise_grades
from evolve_action.specs import Assertion, Source

FINAL = "All done.\nCreated hello.txt with a greeting.\nexit=0"
CALLS = (
    ToolCall(name="Skill", input={}, raw_input='{"skill":"greeter"}'),
    ToolCall(name="Write", input={}, raw_input='{"file_path":"/ws/hello.txt","content":"hi <b>"}'),
    ToolCall(name="Bash", input={}, raw_input='{"command":"go test ./..."}'),
)


def a(type_: str, **kw: Any) -> Assertion:
    return Assertion(type=type_, **kw)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "hello.txt").write_text("Hello, world\nsecond line\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.go").write_text(
        'package a\n\nfunc A() error { return fmt.Errorf("x: %w", err) }\n'
    )
    (tmp_path / "link").symlink_to(tmp_path / "hello.txt")
    return tmp_path


# (id, assertion, tool calls or None, expected passed, expected evidence)
CASES: list[tuple[str, Assertion, Sequence[ToolCall] | None, bool | None, str]] = [
    ("exists-pass", a("file_exists", path="hello.txt"), CALLS, True, "hello.txt exists"),
    ("exists-fail", a("file_exists", path="nope.txt"), CALLS, False, "nope.txt missing"),
    ("exists-symlink", a("file_exists", path="link"), CALLS, True, "link exists"),
    (
        "exists-abs-stays-in-ws",
        a("file_exists", path="/hello.txt"),
        CALLS,
        True,
        "/hello.txt exists",
    ),
    ("exists-dir", a("file_exists", path="sub"), CALLS, True, "sub exists"),
    ("absent-pass", a("file_absent", path="nope.txt"), CALLS, True, "nope.txt missing"),
    ("absent-fail", a("file_absent", path="hello.txt"), CALLS, False, "hello.txt exists"),
    ("regex-file-pass", a("regex", path="hello.txt", pattern=r"^second"), CALLS, True, "second"),
    ("regex-file-fail", a("regex", path="hello.txt", pattern="goodbye"), CALLS, False, "no match"),
    (
        "regex-missing-file",
        a("regex", path="nope.txt", pattern="x"),
        CALLS,
        False,
        "nope.txt missing",
    ),
    ("regex-output-pass", a("regex", pattern=r"Created \S+"), CALLS, True, "Created hello.txt"),
    ("regex-output-fail", a("regex", pattern=r"^Failed"), CALLS, False, "no match"),
    ("regex-multiline-dollar", a("regex", pattern=r"done\.$"), CALLS, True, "done."),
    ("regex-empty-match", a("regex", pattern=r"x*"), CALLS, True, ""),
    ("regex-invalid", a("regex", pattern=r"(?=x)"), CALLS, False, "invalid pattern: "),
    ("regex-backref-rejected", a("regex", pattern=r"(a)\1"), CALLS, False, "invalid pattern: "),
    ("regex-nested-path", a("regex", path="sub/a.go", pattern="%w"), CALLS, True, "%w"),
    (
        "not-regex-pass",
        a("not_regex", path="hello.txt", pattern="log\\.Printf"),
        CALLS,
        True,
        "no match",
    ),
    ("not-regex-fail", a("not_regex", path="hello.txt", pattern="world"), CALLS, False, "world"),
    (
        "not-regex-missing-file-fails",
        a("not_regex", path="nope.txt", pattern="x"),
        CALLS,
        False,
        "nope.txt missing",
    ),
    ("not-regex-output-pass", a("not_regex", pattern="error"), CALLS, True, "no match"),
    ("not-regex-output-fail", a("not_regex", pattern="exit=\\d"), CALLS, False, "exit=0"),
    ("tool-pass", a("tool_call", tool="^Skill$"), CALLS, True, "Skill"),
    ("tool-unanchored", a("tool_call", tool="rit"), CALLS, True, "Write"),
    ("tool-fail", a("tool_call", tool="^Edit$"), CALLS, False, "no tool_call matched /^Edit$/"),
    (
        "tool-args-pass",
        a("tool_call", tool="Bash", pattern=r"go test"),
        CALLS,
        True,
        'Bash {"command":"go test ./..."}',
    ),
    (
        "tool-args-fail",
        a("tool_call", tool="Bash", pattern=r"gofmt"),
        CALLS,
        False,
        "no tool_call matched /Bash/",
    ),
    (
        "tool-args-raw-json",
        a("tool_call", tool="Write", pattern=r'"content":"hi <b>"'),
        CALLS,
        True,
        'Write {"file_path":"/ws/hello.txt","content":"hi <b>"}',
    ),
    (
        "tool-no-calls-fails",
        a("tool_call", tool="Skill"),
        (),
        False,
        "no tool_call matched /Skill/",
    ),
    (
        "tool-unknown-skips",
        a("tool_call", tool="Skill"),
        None,
        None,
        "skipped: harness does not report tool calls",
    ),
    ("tool-invalid-tool", a("tool_call", tool="("), CALLS, False, "invalid tool pattern: "),
    (
        "tool-invalid-pattern",
        a("tool_call", tool="Bash", pattern="(?<=x)"),
        CALLS,
        False,
        "invalid pattern: ",
    ),
    ("unknown-type", a("shell", run="true"), CALLS, False, "unknown assertion type: shell"),
]


@pytest.mark.parametrize(
    ("assertion", "calls", "passed", "evidence"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_deterministic(
    ws: Path,
    assertion: Assertion,
    calls: Sequence[ToolCall] | None,
    passed: bool | None,
    evidence: str,
) -> None:
    v = asyncio.run(
        grading.grade_deterministic(
            assertion,
            workspace=ws,
            final_text=FINAL,
            tool_calls=calls,
            timeout_seconds=5,
            environ={},
        )
    )
    assert v.passed is passed
    if evidence.endswith(": "):
        assert v.evidence.startswith(evidence)
    else:
        assert v.evidence == evidence


def test_regex_evidence_truncated_to_120_bytes(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x" * 500)
    v = asyncio.run(
        grading.grade_deterministic(
            a("regex", path="f", pattern="x+"),
            workspace=tmp_path,
            final_text="",
            tool_calls=(),
            timeout_seconds=5,
            environ={},
        )
    )
    assert v.passed is True and v.evidence == "x" * 120


def test_tool_call_evidence_truncates_args() -> None:
    long = ToolCall(name="Write", input={}, raw_input='{"content":"' + "y" * 300 + '"}')
    v = asyncio.run(
        grading.grade_deterministic(
            a("tool_call", tool="Write", pattern="y"),
            workspace=Path("/nonexistent"),
            final_text="",
            tool_calls=[long],
            timeout_seconds=5,
            environ={},
        )
    )
    assert v.passed is True
    assert v.evidence == "Write " + long.raw_input[:120]


DESCRIBE = [
    (a("file_exists", path="p"), "file p exists"),
    (a("file_absent", path="p"), "file p is absent"),
    (a("regex", path="p", pattern="x"), "p matches /x/"),
    (a("regex", pattern="x"), "output matches /x/"),
    (a("not_regex", path="p", pattern="x"), "p does not match /x/"),
    (a("not_regex", pattern="x"), "output does not match /x/"),
    (a("command", run="go vet ./..."), "command `go vet ./...` exits 0"),
    (a("command", run="false", expect_exit=1), "command `false` exits 1"),
    (a("tool_call", tool="Skill"), "agent called tool /Skill/"),
    (a("tool_call", tool="Bash", pattern="go"), "agent called tool /Bash/ with args /go/"),
    (a("llm", text="The README explains usage"), "The README explains usage"),
    (a("weird"), "weird"),
]


@pytest.mark.parametrize(("assertion", "text"), DESCRIBE, ids=[t for _, t in DESCRIBE])
def test_describe(assertion: Assertion, text: str) -> None:
    assert assertion.describe() == text


SUMMARY = [
    ("all-pass", [True, True], True, (2, 0, 0, 1.0)),
    ("one-fail", [True, False, True], False, (2, 1, 0, 0.666667)),
    ("skips-ignored", [True, None], True, (1, 0, 1, 1.0)),
    ("all-skipped-passes", [None, None], True, (0, 0, 2, None)),
    ("empty-passes", [], True, (0, 0, 0, None)),
]


@pytest.mark.parametrize(
    ("verdicts", "passed", "counts"), [s[1:] for s in SUMMARY], ids=[s[0] for s in SUMMARY]
)
def test_case_verdict_and_summary(
    verdicts: list[bool | None], passed: bool, counts: tuple[int, int, int, float | None]
) -> None:
    vs = [Verdict(passed=p) for p in verdicts]
    assert grading.case_passed(vs) is passed
    s = summarise_grades(vs)
    assert (s.passed, s.failed, s.skipped, s.pass_rate) == counts
    assert s.total == len(vs)


def test_grade_case_order_and_one_judge_call(ws: Path) -> None:
    assertions = [
        a("llm", text="expectation one", source=Source.EXPECTATION),
        a("file_exists", path="hello.txt"),
        a("llm", text="authored llm"),
        a("regex", pattern="nothing-like-this"),
    ]
    calls: list[list[int]] = []
    order: list[str] = []

    async def judge(indices: Sequence[int]) -> Sequence[Verdict]:
        calls.append(list(indices))
        order.append("judge")
        return [Verdict(passed=True, evidence="ok 1"), Verdict(passed=False, evidence="bad 2")]

    out = asyncio.run(
        grading.grade_case(
            assertions,
            workspace=ws,
            final_text=FINAL,
            tool_calls=CALLS,
            timeout_seconds=5,
            environ={},
            judge=judge,
        )
    )
    assert calls == [[0, 2]]
    assert [v.passed for v in out.verdicts] == [True, True, False, False]
    assert [v.evidence for v in out.verdicts] == ["ok 1", "hello.txt exists", "bad 2", "no match"]
    assert out.passed is False
    assert (out.summary.passed, out.summary.failed, out.summary.total) == (2, 2, 4)


def test_grade_case_without_llm_does_not_call_judge(ws: Path) -> None:
    async def judge(indices: Sequence[int]) -> Sequence[Verdict]:
        raise AssertionError("judge must not be called")

    out = asyncio.run(
        grading.grade_case(
            [a("file_exists", path="hello.txt")],
            workspace=ws,
            final_text="",
            tool_calls=(),
            timeout_seconds=5,
            environ={},
            judge=judge,
        )
    )
    assert out.passed is True


@pytest.mark.parametrize(
    ("behaviour", "evidence"),
    [
        ("raise", "judge error: boom"),
        ("short", "judge error: wrong number of verdicts"),
        ("none", "judge error: judge unavailable"),
    ],
)
def test_judge_failure_fails_llm_only(ws: Path, behaviour: str, evidence: str) -> None:
    async def judge(indices: Sequence[int]) -> Sequence[Verdict]:
        if behaviour == "raise":
            raise RuntimeError("boom")
        return []

    out = asyncio.run(
        grading.grade_case(
            [a("llm", text="x"), a("file_exists", path="hello.txt")],
            workspace=ws,
            final_text="",
            tool_calls=(),
            timeout_seconds=5,
            environ={},
            judge=None if behaviour == "none" else judge,
        )
    )
    assert out.verdicts[0] == Verdict(passed=False, evidence=evidence)
    assert out.verdicts[1].passed is True


def test_regex_on_a_file_searches_only_the_first_cap_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "big.txt").write_text("a" * 64 + "\nNEEDLE\n")
    monkeypatch.setattr(grading, "REGEX_FILE_CAP", 32)

    def whole(self: Path) -> bytes:
        raise AssertionError(f"{self} read whole")

    monkeypatch.setattr(Path, "read_bytes", whole)

    def run(type_: str) -> Verdict:
        return asyncio.run(
            grading.grade_deterministic(
                a(type_, path="big.txt", pattern="NEEDLE"),
                workspace=tmp_path,
                final_text="",
                tool_calls=[],
                timeout_seconds=5,
                environ={},
            )
        )

    assert run("regex") == Verdict(passed=False, evidence="no match")
    assert run("not_regex").passed is True


def test_regex_file_cap_is_ten_mib() -> None:
    assert grading.REGEX_FILE_CAP == 10 * 1024 * 1024
