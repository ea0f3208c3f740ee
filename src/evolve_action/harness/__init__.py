"""Agent harnesses: the only layer that starts agent sessions.

Owns the facade over `base` (protocol and transcript types) and `claude_code` (Claude Code through
`claude-agent-sdk`). Engines import from here, never from the submodules.
"""

from __future__ import annotations

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
from evolve_action.harness.claude_code import ClaudeCodeHarness, find_cli, run_session

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
