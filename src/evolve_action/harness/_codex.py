"""The OpenAI Codex harness: one agent session through `codex exec --json`.

Owns: `codex_argv()` (pure: session spec → the CLI's argv), `codex_env()` (the allowlisted
environment), `link_skills()` (the workspace's skills where Codex discovers them,
`<workspace>/.agents/skills/<name>`), `parse_events()` (pure: the JSON event lines → `Transcript`,
with the failure classification), `run_codex()` (the only place that starts `codex`) and
`CodexHarness`.

Guarantees: the CLI gets only the allowlisted environment plus its session's token at the model
gateway (as `CODEX_API_KEY`, which `codex exec` authenticates with — it sends no key for
`OPENAI_API_KEY` alone — and as `OPENAI_API_KEY`; the gateway holds the real key), its own `CODEX_HOME` outside the workspace (removed with the session) and stdin closed (Codex
would read stdin into the prompt). The gateway's address (which forwards to the user's
`OPENAI_BASE_URL`, else the public API) is passed as `-c openai_base_url=…` (Codex ignores the
variable). With bubblewrap available the whole CLI runs in
our sandbox (only the workspace and its home writable) and Codex's own sandbox is off (it cannot
nest); without it, Codex's sandbox confines its commands (`workspace-write` for evals, read-only
for triggers). It starts through `confine.launcher_argv` (its reaper; when we run as root, an
unprivileged agent uid no other live session holds, `confine.lease`), so every process of the session is killed on a hit (stop predicate), on our
timeout, when we are cancelled and when it ends. A failed session is a `Transcript` with `error` set, never an exception.

Transcript, as evolve reads Codex (so results stay compatible): final text = the `agent_message`
items joined; tool calls = completed items of type `command_execution` (input `{"command"}`),
`file_change` (`{"changes"}`) and any other non-message type (the whole item), each reported
when it starts so a trigger hit stops the session at once; usage = the last `turn.completed`
(`input_tokens` include `cached_input_tokens`); Codex reports no cost. `error` items (e.g. "Model
metadata … not found") are not failures; `turn.failed` and a top-level `error` event without a
completed turn are.

Never: reads `os.environ` (callers pass the environment), prints, or decides what a hit is.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import json
import os
import re
import signal
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evolve_action.encoding import strip_ansi
from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import _confine as confine
from evolve_action.harness import _gateway as gateway
from evolve_action.harness import _lifecycle as lifecycle
from evolve_action.harness import _procenv as procenv
from evolve_action.harness._base import (
    ErrorClass,
    SessionSpec,
    StopPredicate,
    ToolCall,
    Transcript,
    Usage,
)
from evolve_action.harness._locate import find_codex
from evolve_action.harness._workspace import SKILLS_DIR

NAME = "codex"
CODEX_SKILLS_DIR = Path(".agents") / "skills"
"""Where Codex discovers project skills, relative to the workspace."""
_MESSAGE_ITEMS = frozenset({"agent_message", "reasoning", "error", "user_message"})
_STDERR_LINES = 40
_LINE_LIMIT = 16 * 1024 * 1024
_STATUS_RE = re.compile(r"\b(4\d\d|5\d\d)\b")
_AUTH_RE = re.compile(
    r"(?i)\b401\b|\b403\b|unauthori[sz]ed|invalid[_ ]api[_ ]key|incorrect api key|"
    r"missing bearer|not logged in|authentication"
)
_CREDIT_RE = re.compile(r"(?i)insufficient[_ ]quota|exceeded your current quota|billing")
# Codex words every 5xx after its own retries as "We're currently experiencing high demand…".
_RATE_RE = re.compile(r"(?i)\b429\b|rate[_ ]limit|too many requests|\b529\b|overloaded|high demand")
_DISCONNECT_RE = re.compile(
    r"(?i)stream disconnected|error sending request|connection (refused|reset|closed)|"
    r"stream closed|unexpected eof|incomplete"
)
_RETRY_NOTICE_RE = re.compile(r"(?i)^reconnecting\b")


def link_skills(spec: SessionSpec) -> None:
    """Link every installed skill where Codex looks for project skills (`.agents/skills/<name>`).

    The workspace installs skills under `.claude/skills` (and plugins come as `plugin_dirs`);
    Codex reads `.agents/skills`, so each skill there gets a relative symlink (plugin skills an
    absolute one). Idempotent and safe when sessions of one workspace start together.
    """
    target = spec.workspace / CODEX_SKILLS_DIR
    target.mkdir(parents=True, exist_ok=True)
    sources: list[tuple[str, Path]] = []
    installed = spec.workspace / SKILLS_DIR
    if installed.is_dir():
        sources += [
            (e.name, Path("..", "..", SKILLS_DIR, e.name))
            for e in sorted(installed.iterdir(), key=lambda p: p.name)
            if (e / "SKILL.md").is_file()
        ]
    for plugin in spec.plugin_dirs:
        skills = plugin / "skills"
        if skills.is_dir():
            sources += [
                (e.name, e.absolute())
                for e in sorted(skills.iterdir(), key=lambda p: p.name)
                if (e / "SKILL.md").is_file()
            ]
    for name, source in sources:
        with contextlib.suppress(FileExistsError):
            (target / name).symlink_to(source, target_is_directory=True)


def codex_argv(spec: SessionSpec, *, cli: Path, base_url: str, own_sandbox: bool) -> list[str]:
    """Pure: the argv of one session (`codex exec <prompt> --json --skip-git-repo-check -m <model>`).

    `own_sandbox`: we confine the CLI ourselves, so Codex's sandbox is off; otherwise sessions that
    may write (`bypassPermissions`, evals) get `--sandbox workspace-write` and the others Codex's
    read-only default. The prompt follows `--` so a prompt starting with `-` stays a prompt.
    """
    argv = [str(cli), "exec", "--json", "--skip-git-repo-check", "-m", spec.model]
    if own_sandbox:
        argv += ["--sandbox", "danger-full-access"]
    elif spec.permission_mode == "bypassPermissions":
        argv += ["--sandbox", "workspace-write"]
    if base_url:
        argv += ["-c", f"openai_base_url={json.dumps(base_url)}"]
    return [*argv, "--", spec.prompt]


def codex_env(
    spec: SessionSpec,
    *,
    environ: Mapping[str, str],
    home: Path,
    grant: gateway.Grant,
    cli: Path | None = None,
) -> dict[str, str]:
    """The complete environment of the CLI: the allowlist, the session's gateway token (as
    `OPENAI_API_KEY`: the agent holds no credential), its own home and temp dir.

    `TMPDIR` is inside `CODEX_HOME` (Codex refuses to install its helper commands, and so cannot
    sandbox them, when its home lies under the temp dir). A CLI unpacked from the npm package
    (`evolve-action install codex`) gets its bundled tools (`codex-path/rg`) first on PATH, as
    the package's launcher does."""
    tools = cli.parent.parent / "codex-path" if cli is not None else None
    path = environ.get("PATH", os.defpath)
    extra = {
        **({"PATH": f"{tools}{os.pathsep}{path}"} if tools is not None and tools.is_dir() else {}),
        "CODEX_HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "NO_COLOR": "1",
        "OPENAI_API_KEY": grant.token,
        "CODEX_API_KEY": grant.token,  # what `codex exec` authenticates with
        **dict(spec.env),
    }
    return procenv.safe_env(environ, extra=extra)


def _tool_call(item: Mapping[str, Any]) -> ToolCall | None:
    kind = str(item.get("type", ""))
    if kind in _MESSAGE_ITEMS or not kind:
        return None
    if kind == "command_execution":
        data: dict[str, Any] = {"command": item.get("command", "")}
    elif kind == "file_change":
        data = {"changes": item.get("changes", [])}
    else:
        data = dict(item)
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return ToolCall(name=kind, input=data, raw_input=raw, id=str(item.get("id", "")), harness=NAME)


def tool_calls_of(event: Mapping[str, Any]) -> list[ToolCall]:
    """The tool call an event starts or completes (empty for other events)."""
    if event.get("type") not in ("item.started", "item.completed"):
        return []
    item = event.get("item")
    call = _tool_call(item) if isinstance(item, Mapping) else None
    return [call] if call is not None else []


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, Mapping):
        return None

    def num(key: str) -> int:
        v = raw.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    cached = num("cached_input_tokens")
    out = raw.get("output_tokens")
    return Usage(
        input_tokens=max(0, num("input_tokens") - cached),
        output_tokens=out if isinstance(out, int) and not isinstance(out, bool) else None,
        cache_read_input_tokens=cached,
        cache_creation_input_tokens=num("cache_write_input_tokens"),
    )


def parse_events(
    lines: Iterable[str],
    *,
    duration_seconds: float = 0.0,
    stopped_early: bool = False,
    timed_out: bool = False,
    exit_code: int | None = 0,
    crash: str = "",
    stderr_tail: str = "",
    missing_skill: str = "",
) -> Transcript:
    """Pure: fold the JSON event lines of one `codex exec --json` run into a `Transcript`."""
    calls: dict[str, ToolCall] = {}
    anonymous: list[ToolCall] = []
    texts: list[str] = []
    usage: Usage | None = None
    turns = 0
    completed = False
    failures: list[str] = []
    turn_failures: list[str] = []
    session = ""
    unparsed = 0
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            unparsed += 1
            continue
        if not isinstance(event, Mapping):
            continue
        kind = event.get("type")
        if kind == "thread.started":
            session = str(event.get("thread_id", ""))
        elif kind == "turn.completed":
            turns += 1
            completed = True
            usage = _usage(event.get("usage")) or usage
            failures = [f for f in failures if f in turn_failures]  # the turn recovered
        elif kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, Mapping) else error
            failures.append(str(message or "turn failed"))
            turn_failures.append(failures[-1])
        elif kind == "error":
            message = str(event.get("message", ""))
            if message and not _RETRY_NOTICE_RE.match(message):
                failures.append(message)
        elif kind in ("item.started", "item.completed"):
            item = event.get("item")
            if not isinstance(item, Mapping):
                continue
            if kind == "item.completed" and item.get("type") == "agent_message":
                text = item.get("text")
                if isinstance(text, str):
                    texts.append(text)
            for call in tool_calls_of(event):
                if call.id:
                    calls[call.id] = call  # a completed item replaces its started form
                else:
                    anonymous.append(call)
    final_text = strip_ansi("\n\n".join(t for t in texts if t))
    base = Transcript(
        final_text=final_text,
        tool_calls=(*calls.values(), *anonymous),
        usage=usage,
        total_cost_usd=None,
        duration_seconds=duration_seconds,
        num_turns=turns,
        stop_reason="end_turn" if completed and not failures else "",
        subtype="success" if completed and not failures else ("error" if failures else ""),
        is_error=bool(failures),
        has_result=completed or bool(failures),
        result_errors=tuple(failures),
        stopped_early=stopped_early,
        stderr_tail=stderr_tail,
        session_id=session,
    )
    error, message = _classify(
        base,
        timed_out=timed_out,
        exit_code=exit_code,
        crash=crash,
        missing_skill=missing_skill,
        unparsed=unparsed,
    )
    if error is None:
        return base
    status = _STATUS_RE.search(message)
    return dataclasses.replace(
        base,
        error=error,
        error_message=message,
        api_error_status=int(status.group(1)) if status and error is not ErrorClass.CRASH else None,
    )


def _classify(
    t: Transcript,
    *,
    timed_out: bool,
    exit_code: int | None,
    crash: str,
    missing_skill: str,
    unparsed: int,
) -> tuple[ErrorClass | None, str]:
    """Why the session gave no usable result, or `(None, "")`.

    Order: stopped on purpose → fine; timeout; the skill under test not installed; a failed turn
    or stream error (credentials, quota, rate limit, disconnect, other API errors); a crash (no
    completed turn and a non-zero exit, or a CLI that could not start); nothing at all.
    """
    if t.stopped_early:
        return None, ""
    if timed_out:
        return ErrorClass.TIMEOUT, "timed out"
    if missing_skill:
        return ErrorClass.SKILL_NOT_LOADED, missing_skill
    if t.result_errors:
        last = t.result_errors[-1].strip()
        text = " ".join(last.split())[:400]
        if _AUTH_RE.search(last):
            return ErrorClass.AUTH, f"not authenticated (credentials refused): {text}"
        if _CREDIT_RE.search(last):
            return ErrorClass.CREDIT, f"no credit: {text}"
        if _RATE_RE.search(last):
            return ErrorClass.OVERLOADED, f"codex run error: {text}"
        if _DISCONNECT_RE.search(last):
            return ErrorClass.DISCONNECT, f"codex run error: {text}"
        if _STATUS_RE.search(last):
            return ErrorClass.API_ERROR, f"codex run error: {text}"
        return ErrorClass.RUN_ERROR, f"codex run error: {text}"
    if crash:
        return ErrorClass.CRASH, crash
    if t.has_result:
        return None, ""
    if exit_code not in (0, None):
        tail = t.stderr_tail.strip().splitlines()
        why = tail[-1].strip() if tail else "no output"
        return ErrorClass.CRASH, f"codex exited with code {exit_code}: {why}"
    if unparsed:
        return ErrorClass.CRASH, "unparseable codex output"
    if not t.final_text and not t.tool_calls:
        return ErrorClass.EMPTY_OUTPUT, "empty codex output"
    return ErrorClass.CRASH, "codex ended without completing its turn"


def _missing_skill(spec: SessionSpec) -> str:
    if not spec.expect_skill:
        return ""
    if (spec.workspace / CODEX_SKILLS_DIR / spec.expect_skill / "SKILL.md").is_file():
        return ""
    return (
        f'the skill under test "{spec.expect_skill}" is not installed for Codex '
        f"({CODEX_SKILLS_DIR}/{spec.expect_skill}/SKILL.md is missing in the workspace); check "
        "the skill directory names (evolve-action run checks)"
    )


async def run_codex(
    spec: SessionSpec,
    *,
    environ: Mapping[str, str],
    stop: StopPredicate | None = None,
    cli_path: Path | None = None,
) -> Transcript:
    """Run one Codex session; the only place that starts `codex`. Never raises for a failed session."""
    started = time.monotonic()
    try:
        cli = cli_path or find_codex(environ)
    except Exception as exc:  # EnvironmentProblem: not installed
        return parse_events([], crash=f"agent CLI failed: {exc}")
    lines: list[str] = []
    tail: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
    stopped = timed_out = False
    crash = ""
    exit_code: int | None = None
    missing = ""
    async with contextlib.AsyncExitStack() as stack:
        home = Path(
            stack.enter_context(
                tempfile.TemporaryDirectory(
                    prefix="codex-home.", dir=lifecycle.scratch_dir(), ignore_cleanup_errors=True
                )
            )
        )
        (home / "tmp").mkdir()
        try:
            link_skills(spec)
        except OSError as exc:
            return parse_events([], crash=f"cannot link skills for Codex: {exc}")
        missing = _missing_skill(spec)
        if missing:
            return parse_events([], missing_skill=missing)
        conf = confine.current(environ)
        cli = confine.agent_cli(conf.user, cli, tree=cli.parent.parent)
        try:
            proxy = gateway.acquire(environ)
        except EnvironmentProblem as exc:
            return parse_events([], crash=f"agent CLI failed: {exc.message}")
        grant = stack.enter_context(proxy.session(spec.model, route="openai", pricing=spec.pricing))
        env = codex_env(spec, environ=environ, home=home, grant=grant, cli=cli)
        if not conf.unconfined:  # our $HOME is hidden: the agent gets a private one
            (home / "home").mkdir()
            env["HOME"] = str(home / "home")
            for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
                env.pop(name, None)
        argv = codex_argv(
            spec,
            cli=cli,
            base_url=grant.openai_base_url,
            own_sandbox=conf.sandbox.available,
        )
        user = await stack.enter_async_context(confine.lease(conf))  # this session's uid alone
        confine.give_to_agent(user, spec.workspace, home)
        stack.callback(confine.take_back, user, spec.workspace, home)  # after the last process
        launcher = confine.launcher_argv(
            conf,
            user=user,
            writable=[spec.workspace, home],
            chdir=spec.workspace,
            parent=str(os.getpid()),
            readable=[cli.parent.parent],
            gateway=proxy.forward,
        )
        try:
            proc = await asyncio.create_subprocess_exec(
                *launcher,
                *argv,
                cwd=spec.workspace,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                limit=_LINE_LIMIT,
            )
        except OSError as exc:
            return parse_events([], crash=f"agent CLI failed: {exc}")

        async def read_stderr() -> None:
            assert proc.stderr is not None
            async for raw in proc.stderr:
                tail.append(raw.decode("utf-8", "replace").rstrip())

        async def read_stdout() -> None:
            nonlocal stopped
            assert proc.stdout is not None
            async for raw in proc.stdout:
                line = raw.decode("utf-8", "replace")
                lines.append(line)
                if stop is None:
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, Mapping) and any(stop(c) for c in tool_calls_of(event)):
                    stopped = True
                    lifecycle.stop_session(proc.pid)
                    return

        readers = asyncio.gather(read_stdout(), read_stderr())
        stack.enter_context(lifecycle.live_session(lambda: proc.pid))
        try:
            async with asyncio.timeout(spec.timeout_seconds):
                await readers
                exit_code = await proc.wait()
        except TimeoutError:
            timed_out = not stopped
            lifecycle.stop_session(proc.pid)
        except ValueError as exc:  # a line over the limit
            crash = f"agent CLI failed: {exc}"
            lifecycle.stop_session(proc.pid)
        except BaseException:  # cancelled (Ctrl-C, SIGTERM, SIGHUP): every agent process goes too
            lifecycle.stop_session(proc.pid)
            readers.cancel()
            with contextlib.suppress(BaseException):
                await proc.wait()
            raise
        finally:
            if proc.returncode is None and (stopped or timed_out or crash):
                readers.cancel()
                with contextlib.suppress(BaseException):
                    await readers
                await proc.wait()
            # Leftovers of a finished session: its group only (the leader is reaped already).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        metered = proxy.used(grant)  # before the block ends and revokes the session's token
    if lifecycle.terminating() and exit_code != 0:
        raise asyncio.CancelledError  # a termination signal ended it: never a failed run
    transcript = parse_events(
        lines,
        duration_seconds=time.monotonic() - started,
        stopped_early=stopped,
        timed_out=timed_out,
        exit_code=exit_code,
        crash=crash,
        stderr_tail="\n".join(tail)[-4096:],
    )
    return dataclasses.replace(transcript, metered=metered)


class CodexHarness:
    """`Harness` over OpenAI Codex, bound to an environment (and optionally a CLI path)."""

    name = NAME

    def __init__(self, environ: Mapping[str, str], *, cli_path: Path | None = None) -> None:
        self._environ = dict(environ)
        self._cli_path = cli_path

    async def run(self, spec: SessionSpec, *, stop: StopPredicate | None = None) -> Transcript:
        """Run one session (see `run_codex`)."""
        return await run_codex(spec, environ=self._environ, stop=stop, cli_path=self._cli_path)
