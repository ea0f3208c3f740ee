"""Locating the agent CLIs without importing `claude-agent-sdk` (slow to import).

Owns: `find_cli` (Claude Code), `find_codex` (OpenAI Codex) and `available_harnesses` (which agent
CLIs this machine can run). Guarantees: Claude Code is the CLI bundled in the installed
`claude-agent-sdk` wheel, else `claude` on the given PATH; Codex is `codex` on the given PATH, else
the project's own install (`evolve-action install codex` puts it in the virtual environment,
`<venv>/codex/bin/codex`); a missing CLI raises `EnvironmentProblem` saying how to
install it. Never starts processes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from evolve_action.errors import EnvironmentProblem


def find_cli(environ: Mapping[str, str] | None = None) -> Path:
    """The Claude Code CLI: the one bundled in `claude-agent-sdk`, else `claude` on PATH."""
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is not None and spec.origin:
        bundled = Path(spec.origin).parent / "_bundled" / "claude"
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return bundled
    found = shutil.which("claude", path=(environ or {}).get("PATH"))
    if found:
        return Path(found)
    raise EnvironmentProblem(
        "Claude Code CLI not found (neither bundled in claude-agent-sdk nor `claude` on PATH)",
        hint="pip install claude-agent-sdk (it bundles the CLI) or install Claude Code",
    )


CODEX_INSTALL = Path("codex") / "bin" / "codex"
"""The project's own Codex install (`evolve-action install codex`), relative to the virtual
environment (`sys.prefix`)."""


def find_codex(environ: Mapping[str, str] | None = None) -> Path:
    """The Codex CLI: `codex` on the given PATH, else the project's own install."""
    found = shutil.which("codex", path=(environ or {}).get("PATH"))
    if found:
        return Path(found)
    own = Path(sys.prefix) / CODEX_INSTALL
    if own.is_file() and os.access(own, os.X_OK):
        return own
    raise EnvironmentProblem(
        "OpenAI Codex CLI not found (neither `codex` on PATH nor the project's own install)",
        hint=(
            "evolve-action install codex (the pinned release, into this virtual environment), "
            "or put `codex` on PATH (npm install -g @openai/codex)"
        ),
    )


def available_harnesses(
    environ: Mapping[str, str], *, dry_run: bool = False, required: bool = False
) -> set[str]:
    """The agent harnesses this machine can run: `claude` when the Claude Code CLI is found,
    `codex` when the Codex CLI is.

    A dry run starts no session, so it plans Claude Code as if it were installed (it comes with
    the package); Codex is an opt-in install, so it is planned only when found. Otherwise a missing
    Claude Code CLI is left out, or, with `required` and no CLI at all, raises the
    `EnvironmentProblem` that says how to install it (for a command that can do nothing without it).
    """
    found: set[str] = set()
    try:
        find_codex(environ)
        found.add("codex")
    except EnvironmentProblem:
        pass
    if dry_run:
        return found | {"claude"}
    try:
        find_cli(environ)
        found.add("claude")
    except EnvironmentProblem:
        if required and not found:
            raise
    return found


def default_jobs() -> int:
    """The default `--jobs` (concurrent agent sessions): twice the CPUs, at most 8.

    A session mostly waits on the model: with a 3 s model latency on 2 cores, 4 concurrent trigger
    sessions finished 2.9x faster than 1 (efficiency 0.72) and 8 only 3.5x (0.44; BENCHMARKS.md,
    `bench/scale.py`). evolve's default, `(NumCPU + 1) // 2`, was 1 there.
    """
    return min(8, 2 * (os.cpu_count() or 1))
