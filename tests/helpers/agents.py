"""Helpers for integration tests that start real agent processes: fixture repos and cleanup."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

MODEL = "anthropic/claude-sonnet-4-6"
"""The model the integration fixtures evaluate (results are keyed by it)."""


def write(root: Path, rel: str, text: str) -> Path:
    """Write `text` to `root/rel`, creating parent directories."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_md(name: str, description: str) -> str:
    """A minimal valid SKILL.md."""
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nInstructions.\n"


def triggers_doc(queries: list[tuple[str, bool]]) -> str:
    """A triggers.json document for `(query, should_trigger)` pairs."""
    return json.dumps(
        {"triggers": [{"query": q, "should_trigger": s} for q, s in queries]}, indent=2
    )


def csv_trigger_repo(root: Path, queries: list[tuple[str, bool]]) -> Path:
    """A single-plugin repo with one `csv-clean` skill and the given trigger queries."""
    write(root, ".claude-plugin/plugin.json", '{"name": "docs-kit", "version": "1.0.0"}\n')
    write(
        root,
        "skills/csv-clean/SKILL.md",
        skill_md("csv-clean", "Tidy CSV spreadsheets. Use when asked to tidy CSV."),
    )
    write(root, "evals/csv-clean/triggers.json", triggers_doc(queries))
    return root


def scripted_env(tmp_path: Path, base_url: str) -> dict[str, str]:
    """A minimal child environment pointing the CLI at the scripted model server."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-scripted",
    }


SESSION_TOKEN_VAR = b"ANTHROPIC_API_KEY=evolve-session-"
"""How an agent process is told apart: its key is a model-gateway session token (the gateway's
address changes with every run, so the token's shape is the mark; one pytest runs at a time)."""


def live_agents() -> list[int]:
    """PIDs of live agent processes (and their launchers) of this machine's evolve-action runs."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().split()[2]
        except OSError:
            continue
        if any(v.startswith(SESSION_TOKEN_VAR) for v in env.split(b"\0")) and state != "Z":
            found.append(int(entry.name))
    return found


def kill_live_agents() -> None:
    """SIGKILL every live agent and wait until none is left."""
    deadline = time.monotonic() + 30
    while (pids := live_agents()) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    assert live_agents() == [], "an agent of the killed run survived SIGKILL"
