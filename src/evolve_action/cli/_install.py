"""`evolve-action install codex`: install an agent CLI that does not come with the package.

Owns the subcommand's flags. Claude Code is bundled in `claude-agent-sdk`; OpenAI Codex (for
`openai/*` models) is an opt-in install: the pinned release, hash-checked, unpacked into the
virtual environment (`harness.install_codex`). Prints the binary's path and version.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evolve_action.cli._common import Invocation
from evolve_action.harness import CODEX_VERSION, install_codex


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `install` subcommand."""
    p = subparsers.add_parser(
        "install",
        help="install an extra agent CLI (codex, for openai/* models)",
        description=(
            f"Install OpenAI Codex {CODEX_VERSION} (the npm package's Linux build, checked against "
            "its pinned sha512) into PREFIX/codex, where evolve-action finds it without PATH. "
            "Claude Code needs no install: it comes with the package."
        ),
    )
    p.add_argument("harness", choices=["codex"], help="the agent CLI to install")
    p.add_argument(
        "--prefix",
        type=Path,
        default=Path(sys.prefix),
        help="where to install (default: this Python's environment, %(default)s)",
    )
    p.add_argument("--force", action="store_true", help="download and unpack again")
    p.set_defaults(handler=run)


def run(inv: Invocation) -> int:
    """Install the CLI (a no-op when the pinned version is already there) and say where it is."""
    prefix = inv.args.prefix if inv.args.prefix.is_absolute() else inv.cwd / inv.args.prefix
    binary = install_codex(prefix, environ=inv.environ, force=inv.args.force)
    inv.stdout.write(f"codex {CODEX_VERSION}: {binary}\n")
    return 0
