"""Shared pieces of the subcommand modules: the invocation object and common flags."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """Everything a handler may touch from the outside world, injected by `cli.main`."""

    args: argparse.Namespace
    environ: Mapping[str, str]
    stdout: TextIO
    stderr: TextIO
    cwd: Path


Handler = Callable[[Invocation], int]


def add_repo_flags(parser: argparse.ArgumentParser) -> None:
    """`--root` and `--layout`, accepted by every command that reads a plugin repository."""
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help="plugin repository root (default: walk up from the working directory)",
    )
    parser.add_argument(
        "--layout",
        default=None,
        help="force the layout: auto, marketplace, multi or single (default: auto)",
    )
