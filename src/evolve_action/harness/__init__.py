"""Agent harnesses: the only layer that starts agent sessions.

Owns the facade over `base` (protocol and transcript types) and `claude_code` (Claude Code through
`claude-agent-sdk`). Engines import from here, never from the submodules. The Claude Code names are loaded lazily
(importing `claude_agent_sdk` is slow), so importing the facade stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evolve_action.harness._locate import find_cli
from evolve_action.harness.base import (
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

if TYPE_CHECKING:
    from evolve_action.harness.claude_code import ClaudeCodeHarness, run_session

_LAZY = ("ClaudeCodeHarness", "run_session")


def __getattr__(name: str) -> Any:
    # `claude_agent_sdk` is slow to import: load the Claude Code harness on first use only.
    if name in _LAZY:
        from evolve_action.harness import claude_code

        return getattr(claude_code, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ClaudeCodeHarness",
    "ErrorClass",
    "Harness",
    "RateLimit",
    "SessionSpec",
    "StopPredicate",
    "ToolCall",
    "Transcript",
    "Usage",
    "find_cli",
    "run_session",
    "runtime_error",
]
