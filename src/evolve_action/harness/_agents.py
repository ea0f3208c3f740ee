"""One `Harness` for every agent CLI: each session runs through the harness its spec names.

Owns: `AgentHarness` (dispatches on `SessionSpec.harness`: `claude` → Claude Code, `codex` → OpenAI
Codex; each concrete harness is created on first use, so a sweep without Codex never imports or
looks for it). Guarantees: an unknown harness id is a
`Transcript` with a `CRASH` error naming it, never an exception. Never does: start processes itself.
The harness ids it runs are `catalog.RUNNABLE_HARNESSES`.
"""

from __future__ import annotations

from collections.abc import Mapping

from evolve_action.harness._base import (
    ErrorClass,
    Harness,
    SessionSpec,
    StopPredicate,
    Transcript,
)


def _make(name: str, environ: Mapping[str, str]) -> Harness | None:
    if name == "claude":
        from evolve_action.harness._claude_code import ClaudeCodeHarness

        return ClaudeCodeHarness(environ)
    if name == "codex":
        from evolve_action.harness._codex import CodexHarness

        return CodexHarness(environ)
    return None


class AgentHarness:
    """`Harness` running each session through the agent CLI its spec names."""

    name = "agents"

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = dict(environ)
        self._made: dict[str, Harness] = {}

    async def run(self, spec: SessionSpec, *, stop: StopPredicate | None = None) -> Transcript:
        """Run one session through `spec.harness` (see `Harness.run`)."""
        harness = self._made.get(spec.harness)
        if harness is None:
            made = _make(spec.harness, self._environ)
            if made is None:
                return Transcript(
                    error=ErrorClass.CRASH,
                    error_message=f'no harness "{spec.harness}" (runnable: claude, codex)',
                )
            harness = self._made[spec.harness] = made
        return await harness.run(spec, stop=stop)
