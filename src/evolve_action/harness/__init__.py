"""Agent harnesses: the only layer that starts agent sessions, and what every session needs.

Owns: the harness seam (`Harness` protocol, `SessionSpec`, `Transcript`, `ToolCall`, `Usage`,
`ErrorClass`, `runtime_error`), the Claude Code harness (through `claude-agent-sdk`), the OpenAI
Codex harness (`codex exec --json`), the one harness sweeps use (`agent_harness`: each session
through the CLI its spec names), locating the CLIs and which of them this machine can run
(`available_harnesses`), throwaway workspaces
(`create_workspace`, `create_trigger_workspace`), the allowlisted child environment and the one
Anthropic credential choice (`safe_env`, `chosen_credential`), token counting with its cache
(`TokenCounter`, `estimate`), and the one Anthropic SDK client factory (`anthropic_client`,
shared by token counting and the judge).
Guarantees: a failed session is a `Transcript` with `error` set, never an exception; no child ever
sees `GITHUB_TOKEN`, `INPUT_*` or a model credential (agents get a per-session token at the model
gateway, `Gateway`, which holds the credentials in this process); agents and `command` assertions run confined where the machine
allows it (`Confinement`: bubblewrap and/or an unprivileged agent user), and every process they
start dies when they end. Never does: print, read `os.environ` (callers pass `environ`).
The Claude Code names are loaded lazily (importing `claude_agent_sdk` is slow), so importing the
facade stays cheap.

Files (private; import from this package):
- `_agents`: one harness for every agent CLI, dispatching on `SessionSpec.harness`.
- `_codex`: the OpenAI Codex harness: one session through `codex exec --json`.
- `_install`: installing the pinned Codex release (hash-checked) into the virtual environment.
- `_confine`: how agents and `command` assertions are confined (sandbox, an agent uid leased per
  live session, hidden paths).
- `_placement`: the fixed paths every session of a run sees (bound under bubblewrap, else slots), so
  their prompts share one cache prefix; a workspace sessions share is copied per session.
- `_launch`: the launcher script every confined process starts through (its reaper, the user switch).
- `_gateway`: the model gateway: the loopback server that alone holds the model credentials and
  forwards only the model requests the CLIs make; each session gets a token valid only there, on
  its route, for its model and while it runs; the job's meter and its cap by reservation.
- `_upstream`: where the gateway forwards: one route per configured credential, with the job's proxy.
- `_gateway_rules`: the gateway's request rules: the allowlist and forwarded headers, the canonical body,
  the granted model, a request's worst case and its reservation.
- `_spend`: the job's spend through every gateway: measured, reserved, capped.
- `_gateway_limits`: the gateway's connection limits (the bounded protocol factory, the file limit).
- `_scrub`: removing secrets from what the gateway passes back.
- `_meter`: what one model response used and cost, read from the bytes the gateway forwards.
- `_budget`: the `--max-cost-usd` cap: measured spend, per-unit estimates, refused units.
- `_base`: the harness seam: what one agent session is asked to do, and what it reports back.
- `_claude_code`: the Claude Code harness: one agent session through `claude-agent-sdk`.
- `_listing`: the skill listing Claude Code would show the model (one CLI start, scripted server).
- `_locate`: locating the agent CLIs (Claude Code, Codex) without importing `claude-agent-sdk`.
- `_procenv`: the allowlisted environment every child process gets.
- `_tokens`: token estimates through the vendor counting API, with a disk cache.
- `_workspace`: throwaway agent workspaces (temp dir, skills installed, one git commit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evolve_action.harness._agents import AgentHarness
from evolve_action.harness._base import (
    ErrorClass,
    Harness,
    RateLimit,
    SessionSpec,
    StopPredicate,
    ToolCall,
    Transcript,
    Usage,
    runtime_error,
)
from evolve_action.harness._budget import Budget, SkippedUnit, session_cost_usd
from evolve_action.harness._confine import (
    AGENT_USER_VAR,
    DEFAULT_AGENT_USER,
    AgentUser,
    Confinement,
    confined,
    give_to_agent,
    launcher_argv,
    lease,
    session_limit,
    take_back,
)
from evolve_action.harness._confine import current as confinement
from evolve_action.harness._gateway import Gateway, Grant, gateways
from evolve_action.harness._gateway import acquire as acquire_gateway
from evolve_action.harness._gateway import spend as gateway_spend
from evolve_action.harness._install import CODEX_VERSION, install_codex, installed_codex_version
from evolve_action.harness._lifecycle import (
    Caught,
    deferred_signals,
    keep_scratch,
    live_session,
    scratch,
    scratch_dir,
    stop_session,
    sweep_stale,
    terminating,
    termination_signals,
)
from evolve_action.harness._listing import (
    LISTING_ANCHOR,
    ListedEntry,
    ListingCapture,
    capture_listing,
    cli_identity,
    cli_version,
)
from evolve_action.harness._locate import (
    CODEX_INSTALL,
    available_harnesses,
    default_jobs,
    find_cli,
    find_codex,
)
from evolve_action.harness._meter import Metered, cache_line, metered_cost_usd
from evolve_action.harness._placement import session_copy
from evolve_action.harness._preflight import (
    PREFLIGHT_MODEL,
    SessionTally,
    check_credentials,
    check_for_models,
    config_dir_credentials,
    sweep_failed,
)
from evolve_action.harness._procenv import (
    CREDENTIAL_VARS,
    OPENAI_CREDENTIAL_VARS,
    chosen_credential,
    openai_credential,
    safe_env,
)
from evolve_action.harness._sandbox import (
    Probe,
    probe,
    wrap,
)
from evolve_action.harness._spend import Spend
from evolve_action.harness._tokens import (
    TokenCounter,
    anthropic_client,
    cache_key,
    default_cache_path,
    estimate,
    estimate_payload,
)
from evolve_action.harness._upstream import Upstream
from evolve_action.harness._workspace import (
    SKILLS_DIR,
    create_trigger_workspace,
    create_workspace,
    escapes,
    outside_links,
    plugin_skill_dirs,
    remove_workspace,
    repository_root,
)

if TYPE_CHECKING:
    from evolve_action.harness._claude_code import ClaudeCodeHarness, run_session

_LAZY = ("ClaudeCodeHarness", "run_session")


def claude_code_harness(environ: Mapping[str, str]) -> Harness:
    """The Claude Code harness bound to `environ` (imports `claude_agent_sdk` on first call)."""
    from evolve_action.harness._claude_code import ClaudeCodeHarness

    return ClaudeCodeHarness(environ)


def agent_harness(environ: Mapping[str, str]) -> Harness:
    """The harness sweeps use: each session runs through the CLI its spec names (`AgentHarness`)."""
    return AgentHarness(environ)


def __getattr__(name: str) -> Any:
    # `claude_agent_sdk` is slow to import: load the Claude Code harness on first use only.
    if name in _LAZY:
        from evolve_action.harness import _claude_code

        return getattr(_claude_code, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AGENT_USER_VAR",
    "CODEX_INSTALL",
    "CODEX_VERSION",
    "CREDENTIAL_VARS",
    "DEFAULT_AGENT_USER",
    "LISTING_ANCHOR",
    "OPENAI_CREDENTIAL_VARS",
    "PREFLIGHT_MODEL",
    "SKILLS_DIR",
    "AgentHarness",
    "AgentUser",
    "Budget",
    "Caught",
    "ClaudeCodeHarness",
    "Confinement",
    "ErrorClass",
    "Gateway",
    "Grant",
    "Harness",
    "ListedEntry",
    "ListingCapture",
    "Metered",
    "Probe",
    "RateLimit",
    "SessionSpec",
    "SessionTally",
    "SkippedUnit",
    "Spend",
    "StopPredicate",
    "TokenCounter",
    "ToolCall",
    "Transcript",
    "Upstream",
    "Usage",
    "acquire_gateway",
    "agent_harness",
    "anthropic_client",
    "available_harnesses",
    "cache_key",
    "cache_line",
    "capture_listing",
    "check_credentials",
    "check_for_models",
    "chosen_credential",
    "claude_code_harness",
    "cli_identity",
    "cli_version",
    "config_dir_credentials",
    "confined",
    "confinement",
    "create_trigger_workspace",
    "create_workspace",
    "default_cache_path",
    "default_jobs",
    "deferred_signals",
    "escapes",
    "estimate",
    "estimate_payload",
    "find_cli",
    "find_codex",
    "gateway_spend",
    "gateways",
    "give_to_agent",
    "install_codex",
    "installed_codex_version",
    "keep_scratch",
    "launcher_argv",
    "lease",
    "live_session",
    "metered_cost_usd",
    "openai_credential",
    "outside_links",
    "plugin_skill_dirs",
    "probe",
    "remove_workspace",
    "repository_root",
    "run_session",
    "runtime_error",
    "safe_env",
    "scratch",
    "scratch_dir",
    "session_copy",
    "session_cost_usd",
    "session_limit",
    "stop_session",
    "sweep_failed",
    "sweep_stale",
    "take_back",
    "terminating",
    "termination_signals",
    "wrap",
]
