"""Helpers for integration tests that start real agent processes: fixture repos and cleanup."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
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
"""How an agent process is told apart: its key is a model-gateway session token."""


@contextlib.contextmanager
def agent_tmp() -> Iterator[Path]:
    """A temp root for one run's scratch dir (set it as the run's `TMPDIR`), reachable by an agent
    user (pytest's own temp dirs sit under a 0700 directory); `live_agents(root)` then finds that
    run's agents only, whatever else runs on the machine."""
    root = Path(tempfile.mkdtemp(prefix="evolve-agents-", dir="/tmp"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def live_agents(root: Path | None = None) -> list[int]:
    """PIDs of live agent processes (and their launchers) of evolve-action runs: with `root`, only
    those whose temp dir lies below it (a run whose `TMPDIR` is `root`, see `agent_tmp`)."""
    under = f"TMPDIR={root}/".encode() if root is not None else None
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().split()[2]
        except OSError:
            continue
        values = env.split(b"\0")
        if state == "Z" or not any(v.startswith(SESSION_TOKEN_VAR) for v in values):
            continue
        if under is None or any(v.startswith(under) for v in values):
            found.append(int(entry.name))
    return found


def kill_live_agents(root: Path) -> None:
    """SIGKILL every live agent of the run whose temp root is `root`; wait until none is left."""
    deadline = time.monotonic() + 30
    while (pids := live_agents(root)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    assert live_agents(root) == [], "an agent of the killed run survived SIGKILL"
