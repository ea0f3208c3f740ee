"""Locating the Claude Code CLI without importing `claude-agent-sdk` (slow to import).

Owns: `find_cli` and `available_harnesses` (which agent CLIs this machine can run). Guarantees: prefers the CLI bundled in the installed `claude-agent-sdk` wheel, then
`claude` on the given PATH; raises `EnvironmentProblem` when neither exists. Never starts processes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
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


def available_harnesses(
    environ: Mapping[str, str], *, dry_run: bool = False, required: bool = False
) -> set[str]:
    """The agent harnesses this machine can run: `{"claude"}` when the Claude Code CLI is found.

    A dry run starts no session, so it plans as if the CLI were installed. Otherwise a missing CLI
    gives an empty set, or, with `required`, raises the `EnvironmentProblem` that says how to
    install it (for a command that can do nothing without it).
    """
    if dry_run:
        return {"claude"}
    try:
        find_cli(environ)
    except EnvironmentProblem:
        if required:
            raise
        return set()
    return {"claude"}


def default_jobs() -> int:
    """The default `--jobs` (concurrent agent sessions): twice the CPUs, at most 8.

    A session mostly waits on the model: with a 3 s model latency on 2 cores, 4 concurrent trigger
    sessions finished 2.9x faster than 1 (efficiency 0.72) and 8 only 3.5x (0.44; BENCHMARKS.md,
    `bench/scale.py`). evolve's default, `(NumCPU + 1) // 2`, was 1 there.
    """
    return min(8, 2 * (os.cpu_count() or 1))
