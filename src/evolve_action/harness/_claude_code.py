"""The Claude Code harness: one agent session through `claude-agent-sdk` and its bundled CLI.

Owns: `build_options()` (pure: session spec → `ClaudeAgentOptions`), `parse_messages()` (pure: SDK
messages → `Transcript`, with the runtime-error classification of engine spec §9.5), `run_session()`
(the only `async for` over `query()`), `find_cli()` and `ClaudeCodeHarness`.

Guarantees: the agent process gets only an allowlisted environment (`procenv.safe_env` with
`AGENT_ALLOW`): the SDK merges `os.environ` into the child, so the CLI is started through a tiny exec
wrapper (written in a directory the agent cannot write) that clears the environment (`env -i`)
before anything else runs, so `GITHUB_TOKEN` and `INPUT_*` reach no process of the session, the
sandbox's own first process included. The session runs through `confine.launcher_argv` (its reaper,
bubblewrap where available, when we run as root an unprivileged agent uid no other live session
holds, `confine.lease`): every process it started dies with it, and a cancelled session is ended
before the SDK's close (no grace period).
Each session gets its own `CLAUDE_CONFIG_DIR` (and, when confined, its own `$HOME`), seen at the
same fixed paths as every other session of the run (`_placement`: the CLI writes them into its
system prompt, so sessions share one prompt-cache prefix), loads settings
and skills only from the workspace (`setting_sources=["project"]`) plus the plugins the spec names
(`plugin_dirs`, loaded as users install them), and is bounded by our own timeout (the CLI retries
HTTP errors for a long time). A failed session is a `Transcript` with `error` set, never an
exception. The SDK generator is created, iterated and closed in one task (`contextlib.aclosing`),
also when a stop predicate ends the session early.

Never: reads `os.environ` (callers pass the environment), prints, or decides what a hit is.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import gc
import hashlib
import json
import re
import tempfile
import time
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    CLIConnectionError,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    query,
)
from claude_agent_sdk.types import RateLimitEvent, SystemPromptPreset

from evolve_action.encoding import strip_ansi
from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import _confine as confine
from evolve_action.harness import _gateway as gateway
from evolve_action.harness import _lifecycle as lifecycle
from evolve_action.harness import _placement as placement
from evolve_action.harness import _procenv as procenv
from evolve_action.harness._base import (
    ErrorClass,
    RateLimit,
    SessionSpec,
    StopPredicate,
    ToolCall,
    Transcript,
    Usage,
    _rfc3339,
)
from evolve_action.harness._locate import find_cli
from evolve_action.harness._workspace import shared_copy

NAME = "claude"

# Variables the SDK itself sets on the child (kept by the exec wrapper).
_SDK_VARS = (
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_AGENT_SDK_VERSION",
    "CLAUDE_AGENT_SDK_CLIENT_APP",
    "CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP",
    "CLAUDE_CODE_SDK_READS_SESSION_STATE",
    "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING",
    "PWD",
)
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LIMIT_RE = re.compile(r"(?i)usage limit reached|limit reached.*resets")
# Banners Claude Code prints instead of an answer when it cannot use the model (checked at the start
# of the result text, whatever `is_error` says): missing, invalid or expired credentials, no credit.
_AUTH_BANNER_RE = re.compile(
    r"(?i)^\s*(not logged in|invalid api key|please run /login|failed to authenticate|"
    r"oauth token (has )?(expired|been revoked)|authentication_error|"
    r"api error: 40[13]\b|your account does not have access)"
)
_CREDIT_BANNER_RE = re.compile(r"(?i)^\s*(credit balance is too low|insufficient credit)")
# Without `is_error`, only a result that is nothing but a banner counts (a real answer may well start
# with "Invalid API key errors mean…").
_BANNER_ONLY_RE = re.compile(
    r"(?i)\s*(not logged in|invalid api key|oauth token (has )?(expired|been revoked)|"
    r"credit balance is too low)\.?(\s*·\s*please run /login\.?)?\s*"
)
_STDERR_LINES = 40
_BACKSTOP_SECONDS = 30.0
DEFAULT_CLI_RETRIES = 2
"""HTTP retries the CLI itself makes per API call (`CLAUDE_CODE_MAX_RETRIES`); safe, same request."""


def agent_env(
    spec: SessionSpec,
    *,
    environ: Mapping[str, str],
    config_dir: Path,
    is_root: bool,
    grant: gateway.Grant,
    cli_retries: int = DEFAULT_CLI_RETRIES,
) -> dict[str, str]:
    """The complete environment of the agent process (allowlist + session variables).

    The agent holds no credential: its key is the session's token at the model gateway
    (`grant`), which puts the real one (the judge's and token counting's) on each request.
    `is_root`: the agent runs as uid 0 (root without a user switch), where Claude Code needs
    `IS_SANDBOX=1` for `bypassPermissions`; an agent user never gets it.
    """
    extra = {
        "ANTHROPIC_API_KEY": grant.token,
        "ANTHROPIC_BASE_URL": grant.anthropic_base_url,
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(cli_retries),
        # The CLI's background model: the one the gateway grants besides the session's.
        "ANTHROPIC_SMALL_FAST_MODEL": gateway.SMALL_MODEL,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": gateway.SMALL_MODEL,
        **dict(spec.env),
    }
    if is_root and spec.permission_mode == "bypassPermissions":
        extra["IS_SANDBOX"] = "1"
    return procenv.safe_env(environ, extra=extra)


def build_options(
    spec: SessionSpec,
    *,
    env: Mapping[str, str],
    cli_path: Path,
    stderr: Any = None,
) -> ClaudeAgentOptions:
    """Pure: the SDK options for one session (cwd, isolated config, model, turns, tools, env)."""
    preset: SystemPromptPreset = {"type": "preset", "preset": "claude_code"}
    return ClaudeAgentOptions(
        cwd=str(spec.workspace),
        cli_path=str(cli_path),
        model=spec.model,
        max_turns=spec.max_turns,
        permission_mode=spec.permission_mode,  # type: ignore[arg-type]
        allowed_tools=list(spec.allowed_tools),
        setting_sources=["project"],
        plugins=[{"type": "local", "path": str(p)} for p in spec.plugin_dirs],
        system_prompt=preset,
        env=dict(env),
        stderr=stderr,
    )


def exec_wrapper_script(
    real_cli: Path,
    keep: Iterable[str],
    pidfile: Path | None = None,
    *,
    launcher: Sequence[str] = (),
    pwd: Path | None = None,
) -> str:
    """A POSIX sh script that execs `real_cli` through the launcher, keeping only `keep` variables.

    The launcher (`confine.launcher_argv`: the session's reaper, the user switch and bubblewrap;
    the bare launcher when `launcher` is empty) clears its own environment down to the `keep`
    names (`--keep`), so everything it starts holds only the session's variables and no value
    is ever on a command line; the word `$PPID` in it is our pid. `pwd` replaces the `PWD` the
    SDK sets (our side's path) with the working directory the agent sees. The launcher keeps the
    wrapper's pid, written to `pidfile` (so an early stop or a timeout can end the session at
    once), and leads its own session (`setsid`, when available).
    """
    names = sorted({n for n in keep if _NAME_RE.match(n)})
    words = list(launcher) or [*confine.launcher_argv_bare(), "--"]
    # `python -I -S _launch.py` first: `--keep` goes right after the script's path.
    words[4:4] = ["--keep", ",".join(names)]
    via = " ".join('"$PPID"' if w == "$PPID" else _sh_quote(w) for w in words)
    lines = [
        "#!/bin/sh",
        "# Written by evolve-action: the launcher keeps only the allowlisted variables, then execs the CLI.",
        f'set -- {via} {_sh_quote(str(real_cli))} "$@"',
    ]
    if pidfile is not None:
        lines.append(f"echo $$ > {_sh_quote(str(pidfile))}")
    if pwd is not None:
        lines.append(f"PWD={_sh_quote(str(pwd))}; export PWD")
    lines += [
        'if command -v setsid >/dev/null 2>&1; then exec setsid "$@"; fi',
        'exec "$@"',
        "",
    ]
    return "\n".join(lines)


def _sh_quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def prepare_config_dir(config_dir: Path) -> None:
    """Create the per-session config dir with onboarding marked done (no first-run prompts)."""
    config_dir.mkdir(parents=True, exist_ok=True)
    marker = config_dir / ".claude.json"
    if not marker.exists():
        marker.write_text('{"hasCompletedOnboarding":true}\n', encoding="utf-8")
        marker.chmod(0o600)


def tool_calls_of(message: Any) -> list[ToolCall]:
    """The tool calls carried by one SDK message (assistant `tool_use` blocks)."""
    if not isinstance(message, AssistantMessage):
        return []
    calls: list[ToolCall] = []
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            data = block.input if isinstance(block.input, dict) else {}
            raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            calls.append(ToolCall(name=block.name, input=data, raw_input=raw, id=block.id))
    return calls


def parse_messages(
    messages: Iterable[Any],
    *,
    duration_seconds: float = 0.0,
    stopped_early: bool = False,
    timed_out: bool = False,
    crash: str = "",
    stderr_tail: str = "",
    expect_skill: str = "",
) -> Transcript:
    """Pure: fold the SDK messages of one session into a `Transcript` and classify failures.

    `expect_skill` is the skill under test: when the init event lists the skills Claude Code
    loaded and it is not among them, the session is `SKILL_NOT_LOADED` (never a miss).
    """
    calls: list[ToolCall] = []
    texts: list[str] = []
    result: ResultMessage | None = None
    rate: RateLimit | None = None
    stop_reason = ""
    assistant_error = ""
    loaded: list[str] | None = None
    for msg in messages:
        if isinstance(msg, SystemMessage) and msg.subtype == "init":
            skills = msg.data.get("skills")
            if isinstance(skills, list):
                loaded = [str(x) for x in skills]
        if isinstance(msg, AssistantMessage):
            calls.extend(tool_calls_of(msg))
            texts.extend(b.text for b in msg.content if isinstance(b, TextBlock))
            if msg.stop_reason:
                stop_reason = msg.stop_reason
            if msg.error:
                assistant_error = str(msg.error)
        elif isinstance(msg, ResultMessage):
            result = msg
        elif isinstance(msg, RateLimitEvent):
            info = msg.rate_limit_info
            rate = RateLimit(
                status=str(info.status),
                rate_limit_type=str(info.rate_limit_type or ""),
                resets_at=info.resets_at,
            )
    usage: Usage | None = None
    final_text = ""
    if result is not None:
        final_text = strip_ansi(result.result or "")
        if result.usage is not None:
            usage = _usage(result.usage)
        if result.stop_reason:
            stop_reason = result.stop_reason
    elif texts:
        final_text = strip_ansi("\n".join(texts))
    base = Transcript(
        final_text=final_text,
        tool_calls=tuple(calls),
        usage=usage,
        total_cost_usd=result.total_cost_usd if result is not None else None,
        duration_seconds=duration_seconds,
        num_turns=result.num_turns if result is not None else 0,
        stop_reason=stop_reason,
        subtype=result.subtype if result is not None else "",
        is_error=bool(result.is_error) if result is not None else False,
        has_result=result is not None,
        result_errors=tuple(result.errors or ()) if result is not None else (),
        api_error_status=result.api_error_status if result is not None else None,
        rate_limit=rate,
        stopped_early=stopped_early,
        stderr_tail=stderr_tail,
        session_id=result.session_id if result is not None else "",
    )
    error, message = _classify(
        base,
        timed_out=timed_out,
        crash=crash,
        assistant_error=assistant_error,
        missing_skill=_missing_skill(expect_skill, loaded),
    )
    if error is None:
        return base
    return dataclasses.replace(base, error=error, error_message=message)


def _usage(raw: Mapping[str, Any]) -> Usage:
    def num(key: str) -> int:
        v = raw.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    out = raw.get("output_tokens")
    return Usage(
        input_tokens=num("input_tokens"),
        output_tokens=out if isinstance(out, int) and not isinstance(out, bool) else None,
        cache_read_input_tokens=num("cache_read_input_tokens"),
        cache_creation_input_tokens=num("cache_creation_input_tokens"),
    )


def _missing_skill(expect: str, loaded: list[str] | None) -> str:
    """A reason when the init event listed the loaded skills and `expect` is not one of them."""
    if not expect or loaded is None:
        return ""
    if any(n == expect or n.rsplit(":", 1)[-1] == expect for n in loaded):
        return ""
    return (
        f'the skill under test "{expect}" was not loaded by Claude Code (its init event lists '
        f"{len(loaded)} skills); check the skill directory names and SKILL.md front matter "
        "(evolve-action run checks)"
    )


def _first_text_line(text: str) -> str:
    return text.strip().splitlines()[0].strip() if text.strip() else ""


def _classify(
    t: Transcript,
    *,
    timed_out: bool,
    crash: str,
    assistant_error: str,
    missing_skill: str = "",
) -> tuple[ErrorClass | None, str]:
    """Engine spec §9.5, extended (issue 8): an error result is an error whatever text it carries.

    Order: stopped on purpose → fine; timeout; skill under test never loaded; HTTP status from the
    API after the CLI's retries (401/403 → `AUTH`); login/credit banners (whatever `is_error`
    says); disconnects; no result event; usage limit; any other `is_error` result (except a
    max-turns run that produced text, which is gradable per §9.5).
    """
    if t.stopped_early:
        return None, ""
    if timed_out:
        return ErrorClass.TIMEOUT, "timed out"
    if missing_skill:
        return ErrorClass.SKILL_NOT_LOADED, missing_skill
    status = t.api_error_status
    first = _first_text_line(t.final_text)
    if t.has_result and t.is_error and status is not None:
        text = first or f"HTTP {status}"
        if status in (401, 403):
            return ErrorClass.AUTH, f"API error {status} (credentials refused): {text}"
        if status in (429, 529):
            return ErrorClass.OVERLOADED, f"API error {status}: {text}"
        return ErrorClass.API_ERROR, f"API error {status}: {text}"
    banner = t.is_error or bool(_BANNER_ONLY_RE.fullmatch(t.final_text))
    if (banner and _AUTH_BANNER_RE.search(first)) or (
        t.is_error and assistant_error == "authentication_failed"
    ):
        return ErrorClass.AUTH, f"not authenticated: {first or assistant_error}"
    if (banner and _CREDIT_BANNER_RE.search(first)) or (
        t.is_error and assistant_error == "billing_error"
    ):
        return ErrorClass.CREDIT, f"no credit: {first or assistant_error}"
    if t.has_result and t.is_error and _looks_like_disconnect(t.final_text):
        return ErrorClass.DISCONNECT, t.final_text.strip()
    if t.has_result and t.is_error and t.final_text.startswith("API Error"):
        return ErrorClass.API_ERROR, t.final_text.strip()
    if not t.has_result:
        if crash:
            return ErrorClass.CRASH, crash
        if not t.final_text.strip() and not t.tool_calls:
            return ErrorClass.EMPTY_OUTPUT, "empty CLI output"
        return ErrorClass.CRASH, "unparseable CLI output"
    zero_output = t.usage is None or not t.usage.output_tokens
    rejected = t.rate_limit is not None and t.rate_limit.status == "rejected"
    if _LIMIT_RE.search(t.final_text) or (rejected and zero_output):
        if t.rate_limit is not None:
            when = _rfc3339(t.rate_limit.resets_at)
            return (
                ErrorClass.USAGE_LIMIT,
                f"usage limit reached ({t.rate_limit.rate_limit_type}), resets {when}",
            )
        return ErrorClass.USAGE_LIMIT, f"usage limit reached: {t.final_text.strip()}"
    if t.is_error and not (t.final_text and t.subtype == "error_max_turns"):
        reason = "claude run error"
        if t.subtype:
            reason += f" ({t.subtype})"
        errs = [e.strip() for e in t.result_errors if e.strip()]
        if errs:
            reason += ": " + "; ".join(errs)
        elif first:
            reason += ": " + first[:300]
        if assistant_error in ("rate_limit",):
            return ErrorClass.OVERLOADED, reason
        return ErrorClass.RUN_ERROR, reason
    return None, ""


def _looks_like_disconnect(text: str) -> bool:
    low = text.lower()
    return any(
        s in low
        for s in (
            "connection error",
            "socket hang up",
            "econnreset",
            "terminated",
            "premature close",
        )
    )


async def run_session(
    spec: SessionSpec,
    *,
    environ: Mapping[str, str],
    stop: StopPredicate | None = None,
    cli_path: Path | None = None,
    is_root: bool | None = None,
    cli_retries: int = DEFAULT_CLI_RETRIES,
) -> Transcript:
    """Run one session; the only place that iterates `query()`. Never raises for a failed session."""
    conf = confine.current(environ)
    real_cli = confine.agent_cli(conf.user, cli_path or find_cli(environ))
    root = conf.agent_is_root if is_root is None else is_root
    tail: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
    messages: list[Any] = []
    stopped = timed_out = backstop = False
    crash = ""
    started = time.monotonic()
    async with contextlib.AsyncExitStack() as stack:
        # The session's own agent uid, held until its last process is gone (after the SDK's close).
        user = await stack.enter_async_context(confine.lease(conf))
        scratch = lifecycle.scratch_dir()
        # Ours alone (the agent may write its config dir): the exec wrapper and the pidfile.
        control = Path(
            stack.enter_context(
                tempfile.TemporaryDirectory(
                    prefix="launch.", dir=scratch, ignore_cleanup_errors=True
                )
            )
        )
        if spec.config_dir is None:
            config_dir = Path(
                stack.enter_context(
                    tempfile.TemporaryDirectory(
                        prefix="claude-home.", dir=scratch, ignore_cleanup_errors=True
                    )
                )
            )
        else:
            config_dir = spec.config_dir
        prepare_config_dir(config_dir)
        try:
            proxy = gateway.acquire(environ)
        except EnvironmentProblem as exc:
            return parse_messages([], crash=f"agent CLI failed: {exc.message}")
        grant = stack.enter_context(proxy.session(spec.model, pricing=spec.pricing))
        # The agent's temp files live in its config dir: removed with it, and writable in the sandbox.
        (config_dir / "tmp").mkdir(exist_ok=True)
        if not conf.unconfined:  # our $HOME is hidden: the agent gets a private one
            (config_dir / "home").mkdir(exist_ok=True)
        plugins = spec.plugin_dirs
        if user is not None:  # the agent user may not reach the repository: a shared copy
            plugins = tuple(shared_copy(p, key=f"plugin.{_digest(str(p))}") for p in plugins)
        # The same paths for every session of the run (the CLI writes them into its system prompt,
        # and a prompt cache entry is per prefix): bound there, or moved into a slot.
        seen = stack.enter_context(
            placement.place(spec.workspace, config_dir, sandboxed=conf.sandbox.available)
        )
        # Both are this session's alone (`placement`): its uid's, no other live session's, until
        # its processes are gone (the callback runs after the SDK's close).
        given = (spec.workspace, config_dir) if seen.binds else (seen.workspace, seen.config_dir)
        confine.give_to_agent(user, *given)
        stack.callback(confine.take_back, user, *given)
        env = agent_env(
            spec,
            environ=environ,
            config_dir=seen.config_dir,
            is_root=root,
            grant=grant,
            cli_retries=cli_retries,
        )
        env["TMPDIR"] = str(seen.config_dir / "tmp")
        if not conf.unconfined:
            env["HOME"] = str(seen.config_dir / "home")
            for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
                env.pop(name, None)
        launcher = confine.launcher_argv(
            conf,
            user=user,
            writable=[] if seen.binds else [seen.workspace, seen.config_dir],
            chdir=seen.workspace,
            parent="$PPID",
            readable=[real_cli.parent, *plugins],
            gateway=proxy.forward,
            binds=seen.binds,
        )
        wrapper = control / "evolve-exec.sh"
        pidfile = control / "agent.pid"
        script = exec_wrapper_script(
            real_cli, [*env, *_SDK_VARS], pidfile, launcher=launcher, pwd=seen.workspace
        )
        wrapper.write_text(script, encoding="utf-8")
        wrapper.chmod(0o700)
        # The SDK starts the wrapper in `cwd` on our side: the host path under bubblewrap.
        host_cwd = spec.workspace if seen.binds else seen.workspace
        options = build_options(
            dataclasses.replace(spec, plugin_dirs=plugins, workspace=host_cwd),
            env=env,
            cli_path=wrapper,
            stderr=tail.append,
        )
        killed_for = ""

        def kill(reason: str) -> None:
            nonlocal killed_for
            killed_for = killed_for or reason
            _kill_agent(pidfile)

        # Our own bound: kill the agent (its stream then ends) rather than cancel the SDK mid-read;
        # the asyncio timeout is only a backstop for a CLI that never started.
        watchdog = asyncio.get_running_loop().call_later(spec.timeout_seconds, kill, "timeout")
        stack.enter_context(lifecycle.live_session(lambda: _agent_pid(pidfile)))
        try:
            async with asyncio.timeout(spec.timeout_seconds + _BACKSTOP_SECONDS):
                stream = cast(
                    "AsyncGenerator[Any, None]", query(prompt=spec.prompt, options=options)
                )
                async with contextlib.aclosing(stream) as gen:
                    try:
                        async for msg in gen:
                            messages.append(msg)
                            if isinstance(msg, ResultMessage):
                                # Finished: from here the SDK reaps the CLI, so never signal it.
                                watchdog.cancel()
                            if stop is not None and any(stop(c) for c in tool_calls_of(msg)):
                                stopped = True
                                kill("stop")  # at once: no grace period for a settled session
                                break
                    except BaseException:
                        # Cancelled (Ctrl-C, SIGTERM, SIGHUP) or failed: end the agent before the
                        # SDK's close, which would otherwise wait seconds for it to finish.
                        if not any(isinstance(m, ResultMessage) for m in messages):
                            _kill_agent(pidfile)
                        raise
        except TimeoutError:
            backstop = True
            # A session that already delivered its result is complete; only the close hung.
            timed_out = not any(isinstance(m, ResultMessage) for m in messages)
        except CLIConnectionError as exc:
            crash = f"agent CLI failed: {exc}"
        except Exception as exc:  # ProcessError/ResultError after the result, parse errors…
            if not any(isinstance(m, ResultMessage) for m in messages):
                crash = f"agent CLI failed: {type(exc).__name__}: {_first_line(str(exc))}"
        except BaseException:  # cancelled: the agent is gone; collect its transport, then go
            gc.collect()
            raise
        finally:
            watchdog.cancel()
        if backstop:
            _kill_agent(pidfile)  # the backstop fired: the SDK's close may not have run to the end
        if killed_for == "timeout" and not stopped:
            timed_out = True
        metered = proxy.used(grant)  # before the block ends and revokes the session's token
    if lifecycle.terminating() and not any(isinstance(m, ResultMessage) for m in messages):
        raise asyncio.CancelledError  # a termination signal ended it: never a failed run
    # The SDK drops its reaped process without closing the asyncio transport; collect it while the
    # loop is alive (otherwise its finaliser runs after `asyncio.run` and complains the loop is closed).
    gc.collect()
    transcript = parse_messages(
        messages,
        duration_seconds=time.monotonic() - started,
        stopped_early=stopped,
        timed_out=timed_out and not stopped,
        crash=crash,
        stderr_tail="\n".join(tail)[-4096:],
        expect_skill=spec.expect_skill,
    )
    return dataclasses.replace(transcript, metered=metered)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _agent_pid(pidfile: Path) -> int | None:
    """The session launcher's pid, once the exec wrapper wrote it."""
    try:
        return int(pidfile.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def _kill_agent(pidfile: Path) -> None:
    """End the session: its launcher SIGKILLs the CLI and every process it started."""
    pid = _agent_pid(pidfile)
    if pid is not None:
        lifecycle.stop_session(pid)


def _first_line(s: str) -> str:
    return s.strip().splitlines()[0] if s.strip() else ""


class ClaudeCodeHarness:
    """`Harness` over Claude Code, bound to an environment (and optionally a CLI path)."""

    name = NAME

    def __init__(
        self,
        environ: Mapping[str, str],
        *,
        cli_path: Path | None = None,
        cli_retries: int = DEFAULT_CLI_RETRIES,
    ) -> None:
        self._environ = dict(environ)
        self._cli_path = cli_path
        self._cli_retries = cli_retries

    async def run(self, spec: SessionSpec, *, stop: StopPredicate | None = None) -> Transcript:
        """Run one session (see `run_session`)."""
        return await run_session(
            spec,
            environ=self._environ,
            stop=stop,
            cli_path=self._cli_path,
            cli_retries=self._cli_retries,
        )
