"""The skill listing Claude Code would show the model: one real CLI start against the scripted server.

Owns: `capture_listing` (install a set of skills — linked under `.claude/skills/` as the trigger
tier does, or whole plugins with `--plugin-dir` — start the real Claude Code CLI through the Claude
Code harness with the model asked for, against a scripted model server on loopback that answers
"ok", and read the skill listing of its first `/v1/messages` request), `ListingCapture` and
`ListedEntry` (every entry of that listing, built-in skills included, in order, with its description
or `None` when it is listed by name only), and `cli_identity` / `cli_version` (the CLI the capture
ran, for cache keys: a stat fingerprint that needs no process, and `claude --version`).

Guarantees: the session is the trigger tier's session (same harness, options, allowed tools and
isolation), so the listing is the one the CLI builds for a real model: Claude Code builds it
locally from the installed skills and the model id before any request leaves, and the scripted
server only records it. The user's credentials and API routing (`ANTHROPIC_BASE_URL`, Bedrock,
Vertex) never reach the capture: it talks to loopback only, with a dummy key, and costs nothing.
A capture that cannot be made is a `ListingCapture` with `error` set, never an exception.
Never does: print, read `os.environ` (callers pass `environ`), call a real model.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evolve_action.catalog import Pricing
from evolve_action.harness import _procenv as procenv
from evolve_action.harness import _workspace as workspace
from evolve_action.harness._base import SessionSpec
from evolve_action.harness._locate import find_cli
from evolve_action.modelserver import ModelServer, find_skills

__all__ = [
    "LISTING_ANCHOR",
    "ListedEntry",
    "ListingCapture",
    "capture_listing",
    "cli_identity",
    "cli_version",
]

LISTING_ANCHOR = "The following skills are available for use with the Skill tool:"
"""The sentence Claude Code puts before its skill listing (CLI 2.1)."""

_DUMMY_KEY = "sk-evolve-listing-capture"
_ROUTING_VARS = (
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
)
_POLICY = {"rules": [{"name": "listing", "text": "ok"}]}


@dataclass(frozen=True, slots=True, kw_only=True)
class ListedEntry:
    """One line of the skill listing: `- name: description`, or `- name` (description `None`)."""

    name: str
    description: str | None

    @property
    def chars(self) -> int:
        """Characters of its listing line, newline included."""
        line = f"- {self.name}" + (f": {self.description}" if self.description is not None else "")
        return len(line) + 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ListingCapture:
    """What the CLI listed in its first request (or why nothing was captured)."""

    model: str
    """The model id asked for (`""`: the CLI's default)."""
    request_model: str = ""
    """The model id the CLI put in its request (the default resolved)."""
    entries: tuple[ListedEntry, ...] = ()
    error: str = ""

    @property
    def chars(self) -> int:
        """Characters of the whole listing (every line, newlines included)."""
        return sum(e.chars for e in self.entries)


def cli_identity(cli: Path) -> str:
    """A cheap fingerprint of the CLI binary (resolved path, size, mtime): no process started."""
    try:
        real = cli.resolve()
        st = real.stat()
    except OSError:
        return str(cli)
    return hashlib.sha256(f"{real}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:32]


def cli_version(cli: Path, environ: Mapping[str, str]) -> str:
    """`claude --version` (e.g. `2.1.332 (Claude Code)`), or `""` when it cannot be run."""
    try:
        proc = subprocess.run(
            [str(cli), "--version"],
            env=procenv.safe_env(environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else ""


def capture_environ(environ: Mapping[str, str], base_url: str) -> dict[str, str]:
    """`environ` with every credential and API route replaced by the scripted server's."""
    drop = {*procenv.CREDENTIAL_VARS, *_ROUTING_VARS}
    clean = {k: v for k, v in environ.items() if k not in drop}
    return {**clean, "ANTHROPIC_API_KEY": _DUMMY_KEY, "ANTHROPIC_BASE_URL": base_url}


async def capture_listing(
    *,
    model: str,
    environ: Mapping[str, str],
    skills: Sequence[Path] = (),
    plugin_dirs: Sequence[Path] = (),
    allowed_tools: tuple[str, ...] = ("Skill", "Read"),
    tmp_root: Path | None = None,
    timeout_seconds: float = 120.0,
    cli_path: Path | None = None,
) -> ListingCapture:
    """Start the CLI once with `skills` linked (or `plugin_dirs` loaded) and read its listing."""
    from evolve_action.harness._claude_code import ClaudeCodeHarness

    cli = cli_path or find_cli(environ)
    with ModelServer(_POLICY, port=0) as server:
        env = capture_environ(environ, server.base_url)
        ws = workspace.create_workspace(
            prefix="listing.",
            skills=skills,
            environ=env,
            tmp_root=tmp_root,
            link_skills=True,
        )
        try:
            transcript = await ClaudeCodeHarness(env, cli_path=cli, cli_retries=0).run(
                SessionSpec(
                    prompt="hello",
                    workspace=ws,
                    model=model,
                    max_turns=1,
                    timeout_seconds=timeout_seconds,
                    allowed_tools=allowed_tools,
                    permission_mode="default",
                    plugin_dirs=tuple(plugin_dirs),
                    # The scripted server answers (free): whatever model the CLI defaults to.
                    pricing=Pricing(input_per_mtok=0, output_per_mtok=0),
                )
            )
        finally:
            workspace.remove_workspace(ws)
        first = next((r for r in server.requests if r.get("path") == "/v1/messages"), None)
    if first is None:
        why = transcript.error_message or str(transcript.error or "no request")
        return ListingCapture(model=model, error=f"the CLI sent no model request ({why})")
    body = first.get("body") or {}
    listed = find_skills(body)
    request_model = body.get("model") if isinstance(body.get("model"), str) else ""
    return ListingCapture(
        model=model,
        request_model=request_model or "",
        entries=tuple(
            ListedEntry(name=s.name, description=None if s.name_only else s.description)
            for s in listed
        ),
    )
