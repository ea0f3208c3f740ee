"""The harness seam: what one agent session is asked to do, and what it reports back.

Owns: `SessionSpec` (the request), `Transcript` (the result: final text, every tool call with its input,
usage, cost, duration, turns, stop reason, error class), `ToolCall`, `Usage`, `ErrorClass`, the
`Harness` protocol and `runtime_error()` (engine spec §9.5). Guarantees: values are frozen; a failed
session is a `Transcript` with `error` set, never an exception. Never starts processes or reads the
environment (the concrete harness does, from the mapping it is given).
"""

from __future__ import annotations

import datetime
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from evolve_action.catalog import Pricing
from evolve_action.config import DEFAULT_MAX_TURNS
from evolve_action.harness._meter import Metered


class ErrorClass(enum.StrEnum):
    """Why a session produced no usable result."""

    TIMEOUT = "timeout"
    """Our own wall-clock bound expired."""
    OVERLOADED = "overloaded"
    """HTTP 429/529 from the model API (retryable)."""
    DISCONNECT = "disconnect"
    """The model API connection dropped or returned a malformed stream (retryable)."""
    API_ERROR = "api_error"
    """Any other HTTP error from the model API (500, 400, 401…)."""
    USAGE_LIMIT = "usage_limit"
    """The account's usage limit was reached."""
    CRASH = "crash"
    """The agent CLI could not start, exited abnormally or broke its protocol."""
    EMPTY_OUTPUT = "empty_output"
    """The agent produced nothing at all."""
    RUN_ERROR = "run_error"
    """The agent reported an error result (`is_error`), whatever text it carried."""
    AUTH = "auth"
    """No usable credentials: a login banner (`Not logged in`, `Invalid API key`…) or HTTP 401/403."""
    CREDIT = "credit"
    """The account cannot pay for the call (`Credit balance is too low`)."""
    SKILL_NOT_LOADED = "skill_not_loaded"
    """The agent's init event did not list the skill under test (it was never offered)."""

    @property
    def retryable(self) -> bool:
        """True for transient failures worth another attempt (before any tool ran)."""
        return self in (ErrorClass.OVERLOADED, ErrorClass.DISCONNECT)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One `tool_use` block the agent emitted."""

    name: str
    input: Mapping[str, Any]
    """The decoded tool input."""
    raw_input: str
    """The input as compact JSON text (what `tool_call` patterns match against)."""
    id: str = ""
    harness: str = "claude"
    """The harness that reported it: Claude Code's tools (`Skill`, `Read`, `Bash`…) or Codex's
    items (`command_execution`, `file_change`…); what counts as a trigger hit differs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage of a whole session, as reported by the agent."""

    input_tokens: int = 0
    """Fresh (uncached) input tokens."""
    output_tokens: int | None = None
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Every prompt token: fresh, read from the prompt cache and written to it."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimit:
    """The last rate-limit status the agent reported."""

    status: str
    rate_limit_type: str = ""
    resets_at: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Transcript:
    """What one agent session did."""

    final_text: str = ""
    """The result text (ANSI-stripped); empty when the session ended without one."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Every tool call of every turn, in order."""
    usage: Usage | None = None
    total_cost_usd: float | None = None
    duration_seconds: float = 0.0
    """Wall clock from session start to the end of the stream (incl. early-stop teardown)."""
    num_turns: int = 0
    stop_reason: str = ""
    """The model's last stop reason (`end_turn`, `tool_use`, `max_tokens`…), when known."""
    subtype: str = ""
    """The result event's subtype (`success`, `error_max_turns`…)."""
    is_error: bool = False
    """The result event's `is_error` flag."""
    has_result: bool = False
    """True when the session ended with a result event."""
    result_errors: tuple[str, ...] = ()
    api_error_status: int | None = None
    rate_limit: RateLimit | None = None
    stopped_early: bool = False
    """True when the caller's stop predicate ended the session (e.g. a trigger hit)."""
    error: ErrorClass | None = None
    """Set when the session produced no usable result (see `runtime_error`)."""
    error_message: str = ""
    stderr_tail: str = ""
    session_id: str = ""
    metered: Metered | None = None
    """What the model gateway measured for the session (every request's usage and list-price
    cost, cache included); None when the session made no request through it."""

    @property
    def ok(self) -> bool:
        """True when the session completed (or was stopped on purpose) without an error."""
        return self.error is None


StopPredicate = Callable[[ToolCall], bool]
"""Called on every tool call as it streams in; returning True ends the session early."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSpec:
    """One agent session to run."""

    prompt: str
    workspace: Path
    """The session's working directory (skills under `<workspace>/.claude/skills`; the Codex
    harness links them under `.agents/skills`)."""
    model: str
    """The harness-specific model id (e.g. `claude-sonnet-4-6`)."""
    max_turns: int = DEFAULT_MAX_TURNS
    timeout_seconds: float = 120.0
    allowed_tools: tuple[str, ...] = ()
    """Tools auto-approved without asking (empty = the harness default)."""
    permission_mode: str = "bypassPermissions"
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra variables for the agent process (already allowlisted by the caller)."""
    config_dir: Path | None = None
    """Per-session agent config dir; the harness creates a temp one when None."""
    expect_skill: str = ""
    """The skill under test: when set and the agent reports the skills it loaded without it, the
    session is an error (`ErrorClass.SKILL_NOT_LOADED`), never a miss."""
    plugin_dirs: tuple[Path, ...] = ()
    """Plugins loaded as users install them (`--plugin-dir`: namespaced skills, hooks run)."""
    harness: str = "claude"
    """The agent CLI to run (`claude` or `codex`: the model's bound harness)."""
    pricing: Pricing | None = None
    """The model's price (config overrides included); None = the built-in catalog's. The model
    gateway refuses a model it cannot price."""


class Harness(Protocol):
    """Runs agent sessions. Implementations never raise for a failed session."""

    name: str

    async def run(self, spec: SessionSpec, *, stop: StopPredicate | None = None) -> Transcript:
        """Run one session to completion, timeout, or until `stop` returns True."""
        ...


def runtime_error(t: Transcript) -> str:
    """The eval `runtime_error` reason (engine spec §9.5, classified by the harness); `""` when usable."""
    if t.error is None:
        return ""
    return t.error_message or str(t.error)


def _rfc3339(epoch: int | None) -> str:
    if epoch is None:
        return ""
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
