"""Deterministic grading of Tier 2 assertions, and the per-case verdict.

Owns: the semantics of the six deterministic assertion types (`file_exists`, `file_absent`, `regex`,
`not_regex`, `command`, `tool_call`; engine spec §10.2; their `describe()` text is the assertion's own, `specs.Assertion.describe`), the tri-state
`Verdict`, the ordering/aggregation rule of §10.1 (`grade_case`) and the grade summary.

Guarantees: verdicts are index-aligned with the normalised assertion list; a verdict is `passed=True`,
`passed=False` or skipped (`passed=None`); the case passes iff no verdict failed (an all-skipped case
passes). Regexes use RE2 (`google-re2`), compiled with `(?m)` for `regex`/`not_regex`, never with it for
`tool_call`. Grading never raises for bad assertions: a bad pattern or an unknown type is a failed
verdict with evidence. A `regex`/`not_regex` with a `path` searches at most the first
`REGEX_FILE_CAP` bytes (10 MiB) of the file, so a huge file written by the agent cannot exhaust memory.

Never does: print or read `os.environ`. The one exception to "pure" is deliberate: this module is the
**only** place `command` assertions run (`/bin/sh -c` through `asyncio.create_subprocess_exec`), with the
environment built by `procenv.safe_env` from the environment the caller passes in (so `GITHUB_TOKEN` and
`INPUT_*` never reach them), started through the harness's launcher (`harness.launcher_argv`: every
process the command started is killed when it ends; bubblewrap where the machine has it, only the
workspace and a private temp dir writable; the unprivileged agent user when we run as root). Assertion `path`s and `cwd`s are resolved inside
the workspace only (symlinks included): one that leaves it is a failed verdict, never a host read.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import posixpath
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from evolve_action.encoding import compile_re2, strip_ansi, tail_bytes, trim_space, truncate_bytes
from evolve_action.harness import (
    AgentUser,
    Confinement,
    ToolCall,
    confinement,
    give_to_agent,
    launcher_argv,
    lease,
    live_session,
    safe_env,
    scratch_dir,
    stop_session,
    take_back,
    terminating,
)
from evolve_action.results import GradeSummary, summarise_grades

REGEX_FILE_CAP = 10 * 1024 * 1024
"""Bytes of a file a `regex`/`not_regex` assertion searches (the rest is ignored)."""

__all__ = [
    "REGEX_FILE_CAP",
    "AssertionLike",
    "GradedCase",
    "Verdict",
    "case_passed",
    "grade_case",
    "grade_deterministic",
]

DETERMINISTIC_TYPES = frozenset(
    {"file_exists", "file_absent", "regex", "not_regex", "command", "tool_call"}
)


class AssertionLike(Protocol):
    """The fields grading reads from a normalised assertion (C's `specs.Assertion` satisfies it)."""

    @property
    def type(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def pattern(self) -> str: ...
    @property
    def run(self) -> str: ...
    @property
    def cwd(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def requires(self) -> str: ...
    @property
    def expect_exit(self) -> int | None: ...
    @property
    def exit_code(self) -> int: ...
    def describe(self) -> str: ...
    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """A tri-state assertion result: `passed` is True, False, or None (skipped)."""

    passed: bool | None
    evidence: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class GradedCase:
    """All verdicts of one case, index-aligned with its assertions, plus the case verdict."""

    verdicts: tuple[Verdict, ...]
    passed: bool
    summary: GradeSummary


JudgeFn = Callable[[Sequence[int]], Awaitable[Sequence[Verdict]]]
"""Grades the `llm` assertions at the given indices in one judge session; returns one verdict each."""


def _ws_path(workspace: Path, rel: str) -> Path | None:
    """`ws + "/" + rel`, lexically cleaned (absolute `rel` stays under ws), or None when it or the
    file it resolves to (symlinks followed) lies outside the workspace."""
    path = Path(posixpath.normpath(f"{workspace.as_posix()}/{rel}"))
    try:
        base = workspace.resolve()
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    if not (path.is_relative_to(workspace) and resolved.is_relative_to(base)):
        return None
    return path


def _outside(rel: str) -> Verdict:
    return Verdict(passed=False, evidence=f"{rel} is outside the workspace")


async def grade_deterministic(
    a: AssertionLike,
    *,
    workspace: Path,
    final_text: str,
    tool_calls: Sequence[ToolCall] | None,
    timeout_seconds: float,
    environ: Mapping[str, str],
) -> Verdict:
    """Grade one non-`llm` assertion; `tool_calls=None` means the harness cannot report calls."""
    t = a.type
    if t in ("file_exists", "file_absent"):
        target = _ws_path(workspace, a.path)
        if target is None:
            return _outside(a.path)
        exists = target.exists()
        evidence = f"{a.path} exists" if exists else f"{a.path} missing"
        return Verdict(passed=exists if t == "file_exists" else not exists, evidence=evidence)
    if t in ("regex", "not_regex"):
        return _grade_regex(a, workspace=workspace, final_text=final_text, negate=t == "not_regex")
    if t == "command":
        return await _grade_command(
            a, workspace=workspace, timeout_seconds=timeout_seconds, environ=environ
        )
    if t == "tool_call":
        return _grade_tool_call(a, tool_calls)
    return Verdict(passed=False, evidence=f"unknown assertion type: {t}")


def _grade_regex(a: AssertionLike, *, workspace: Path, final_text: str, negate: bool) -> Verdict:
    if a.path:
        target = _ws_path(workspace, a.path)
        if target is None:
            return _outside(a.path)
        try:
            with target.open("rb") as fh:
                subject = fh.read(REGEX_FILE_CAP).decode("utf-8", "replace")
        except (OSError, ValueError):
            return Verdict(passed=False, evidence=f"{a.path} missing")
    else:
        subject = final_text
    try:
        rx = compile_re2("(?m)" + a.pattern)
    except ValueError as exc:
        return Verdict(passed=False, evidence=f"invalid pattern: {exc}")
    m = rx.search(subject)
    if m is None:
        return Verdict(passed=negate, evidence="no match")
    return Verdict(passed=not negate, evidence=truncate_bytes(m.group(0), 120))


def _grade_tool_call(a: AssertionLike, tool_calls: Sequence[ToolCall] | None) -> Verdict:
    if tool_calls is None:
        return Verdict(passed=None, evidence="skipped: harness does not report tool calls")
    try:
        tool_rx = compile_re2(a.tool)
    except ValueError as exc:
        return Verdict(passed=False, evidence=f"invalid tool pattern: {exc}")
    arg_rx = None
    if a.pattern:
        try:
            arg_rx = compile_re2(a.pattern)
        except ValueError as exc:
            return Verdict(passed=False, evidence=f"invalid pattern: {exc}")
    for call in tool_calls:
        if tool_rx.search(call.name) is None:
            continue
        if arg_rx is None:
            return Verdict(passed=True, evidence=call.name)
        if arg_rx.search(call.raw_input) is not None:
            return Verdict(
                passed=True, evidence=f"{call.name} {truncate_bytes(call.raw_input, 120)}"
            )
    return Verdict(passed=False, evidence=f"no tool_call matched /{a.tool}/")


def _look_path(name: str, path_var: str) -> bool:
    """Go `exec.LookPath`: a name with `/` is checked as a path; else searched on PATH."""
    if "/" in name:
        p = Path(name)
        return p.is_file() and os.access(p, os.X_OK)
    return shutil.which(name, path=path_var) is not None


_STDERR_TAIL = 4096


async def _grade_command(
    a: AssertionLike, *, workspace: Path, timeout_seconds: float, environ: Mapping[str, str]
) -> Verdict:
    env = safe_env(environ)
    if a.requires and not _look_path(a.requires, env.get("PATH", os.defpath)):
        return Verdict(passed=None, evidence=f"skipped: {a.requires} not installed")
    cwd = _ws_path(workspace, a.cwd) if a.cwd else workspace
    if cwd is None:
        return _outside(a.cwd)
    want = a.exit_code
    run = await run_confined(
        ["/bin/sh", "-c", a.run],
        cwd=cwd,
        workspace=workspace,
        env=env,
        environ=environ,
        timeout_seconds=timeout_seconds,
        tmp_prefix="command-tmp.",
    )
    if run.error:
        return Verdict(passed=False, evidence=f"command error: {run.error}")
    if terminating():  # a termination signal ended it: never a verdict
        raise asyncio.CancelledError
    out_b, err_b, code = (b"", b"", -1) if run.timed_out else (run.stdout, run.stderr, run.code)
    stdout = strip_ansi(out_b.decode("utf-8", "replace"))
    stderr = strip_ansi(trim_space(tail_bytes(err_b.decode("utf-8", "replace"), _STDERR_TAIL)))
    evidence = f"exit {code}: {tail_bytes(stdout + stderr, 200)}"
    return Verdict(passed=code == want, evidence=evidence)


@dataclass(frozen=True, slots=True)
class ProcessRun:
    """What one confined process did."""

    code: int
    """Its exit status; -1 when a signal ended it (Go's convention) or it timed out."""
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    error: str = ""
    """Set when it could not be started."""


async def run_confined(
    argv: Sequence[str],
    *,
    cwd: Path,
    workspace: Path,
    env: dict[str, str],
    environ: Mapping[str, str],
    timeout_seconds: float,
    stdin: bytes | None = None,
    tmp_prefix: str = "process-tmp.",
) -> ProcessRun:
    """The one way grading runs a program (`command` assertions, suite code judges): `env` (already
    allowlisted), confined as agents are (the agent user, the sandbox; writable: the workspace and
    a private temp dir that is also its `$HOME`), every process it starts killed when it ends or
    times out, and killed at once by a termination signal."""
    conf = confinement(environ)
    async with lease(conf) as user:  # an agent uid no other live process of ours holds
        return await _run_as(
            argv,
            conf=conf,
            user=user,
            cwd=cwd,
            workspace=workspace,
            env=env,
            timeout_seconds=timeout_seconds,
            stdin=stdin,
            tmp_prefix=tmp_prefix,
        )


async def _run_as(
    argv: Sequence[str],
    *,
    conf: Confinement,
    user: AgentUser | None,
    cwd: Path,
    workspace: Path,
    env: dict[str, str],
    timeout_seconds: float,
    stdin: bytes | None,
    tmp_prefix: str,
) -> ProcessRun:
    private_tmp: Path | None = None
    writable = [workspace]
    if not conf.unconfined:
        private_tmp = Path(tempfile.mkdtemp(prefix=tmp_prefix, dir=scratch_dir()))
        env["TMPDIR"] = env["HOME"] = str(private_tmp)
        for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
            env.pop(name, None)
        writable.append(private_tmp)
        give_to_agent(user, workspace, private_tmp)
    prefix = launcher_argv(conf, user=user, writable=writable, chdir=cwd, parent=str(os.getpid()))
    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                *prefix,
                *argv,
                cwd=str(cwd),
                env=env,
                stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return ProcessRun(code=-1, error=str(exc))
        try:
            with live_session(lambda: proc.pid):
                out_b, err_b = await asyncio.wait_for(
                    proc.communicate(stdin), timeout=timeout_seconds
                )
        except TimeoutError:
            stop_session(proc.pid)  # the launcher kills every process it started
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.communicate(), timeout=5)
            return ProcessRun(code=-1, timed_out=True)
        except asyncio.CancelledError:
            stop_session(proc.pid)
            raise
        code = proc.returncode if proc.returncode is not None else -1
        return ProcessRun(code=-1 if code < 0 else code, stdout=out_b, stderr=err_b)
    finally:
        take_back(user, workspace)  # every process of the command is gone
        if private_tmp is not None:
            shutil.rmtree(private_tmp, ignore_errors=True)


def case_passed(verdicts: Sequence[Verdict]) -> bool:
    """A case passes iff no verdict failed (skips are ignored; all-skipped passes)."""
    return not any(v.passed is False for v in verdicts)


async def grade_case(
    assertions: Sequence[AssertionLike],
    *,
    workspace: Path,
    final_text: str,
    tool_calls: Sequence[ToolCall] | None,
    timeout_seconds: float,
    environ: Mapping[str, str],
    judge: JudgeFn | None,
) -> GradedCase:
    """Grade a case per §10.1: deterministic assertions in authored order, then one judge call.

    `judge` receives the indices of the `llm` assertions (authored order) and must return one
    verdict per index; when it is None or returns the wrong number, those assertions fail with
    `judge error: …` evidence.
    """
    verdicts: list[Verdict | None] = [None] * len(assertions)
    llm_idx: list[int] = []
    for i, a in enumerate(assertions):
        if a.type == "llm":
            llm_idx.append(i)
            continue
        verdicts[i] = await grade_deterministic(
            a,
            workspace=workspace,
            final_text=final_text,
            tool_calls=tool_calls,
            timeout_seconds=timeout_seconds,
            environ=environ,
        )
    if llm_idx:
        judged: Sequence[Verdict]
        if judge is None:
            judged = [Verdict(passed=False, evidence="judge error: judge unavailable")] * len(
                llm_idx
            )
        else:
            try:
                judged = await judge(llm_idx)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a judge outage is data, not a crash
                judged = [Verdict(passed=False, evidence=f"judge error: {exc}")] * len(llm_idx)
            if len(judged) != len(llm_idx):
                judged = [
                    Verdict(passed=False, evidence="judge error: wrong number of verdicts")
                ] * len(llm_idx)
        for i, v in zip(llm_idx, judged, strict=True):
            verdicts[i] = v
    final = tuple(v if v is not None else Verdict(passed=False, evidence="") for v in verdicts)
    return GradedCase(verdicts=final, passed=case_passed(final), summary=summarise_grades(final))
