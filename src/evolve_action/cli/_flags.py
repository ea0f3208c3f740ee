"""The flags that several subcommands share, defined once.

Owns: `--root`/`--layout` (`add_repo_flags`), the repository, scope, selection and output flags of
`run triggers`, `run evals` and `run all` (`add_selection_flags`) and the trigger-tier flags
(`add_trigger_flags`): names, types, defaults and help texts. Never does: check or use a value
(the command modules and `_common` do).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evolve_action import flows
from evolve_action.config import INSTALL_MODES


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


RESULTS_FORMATS = ("json", "jsonc", "yaml", "yml")


def add_selection_flags(
    parser: argparse.ArgumentParser,
    *,
    jobs_help: str,
    timeout_default: int | None,
    timeout_help: str,
    new_help: str,
    modified_help: str,
    failed_help: str,
    strict_help: str,
    list_hint: str = " (repeatable, comma-separated)",
    keep_help: str = "keep the temp workspaces (paths are printed)",
) -> None:
    """The repository, scope, selection and output flags shared by `run triggers/evals/all`.

    The texts that differ between the tiers (what a "case" is, the default timeout) are
    parameters; the flag names, types and defaults are the same everywhere.
    """
    add_repo_flags(parser)
    for flag, alias, meta, what in (
        ("--plugin", "--plugins", "NAME", "only these plugins"),
        ("--skill", "--skills", "NAME", "only these skills"),
    ):
        parser.add_argument(flag, alias, action="append", metavar=meta, help=what + list_hint)
    parser.add_argument(
        "--model",
        "--models",
        action="append",
        metavar="ID",
        help="models: all, a provider, or canonical/bare ids (repeatable, comma-separated)",
    )
    parser.add_argument(
        "--harness",
        "--harnesses",
        action="append",
        metavar="ID",
        help="only these harnesses" + list_hint,
    )
    parser.add_argument("--jobs", type=int, default=None, help=jobs_help)
    parser.add_argument(
        "--timeout", type=int, default=timeout_default, metavar="SECONDS", help=timeout_help
    )
    parser.add_argument("--new", action="store_true", help=new_help)
    parser.add_argument("--modified", action="store_true", help=modified_help)
    parser.add_argument("--failed", action="store_true", help=failed_help)
    parser.add_argument("--dry-run", action="store_true", help="print the plan and run nothing")
    parser.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output: the plan (with --dry-run) or JSON-lines events",
    )
    parser.add_argument("--keep-workspaces", action="store_true", help=keep_help)
    parser.add_argument(
        "--results-format",
        choices=RESULTS_FORMATS,
        default=None,
        help="results file format (default: config results_format, else json)",
    )
    parser.add_argument("--strict", action="store_true", help=strict_help)
    parser.add_argument(
        "--max-cost-usd",
        type=float,
        default=None,
        metavar="USD",
        help="stop scheduling agent sessions once the measured spend plus the next unit's "
        "estimate would pass USD; finished work is kept and a re-run continues (default: no cap)",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="run even when the estimate is above the confirmation threshold "
        f"({flows.CONFIRM_VAR}, default ${flows.DEFAULT_CONFIRM_ABOVE_USD:g}); without it a "
        "terminal asks, "
        "and elsewhere the run stops before any session",
    )
    parser.add_argument(
        "--overwrite-unreadable-results",
        action="store_true",
        help="delete a selected skill's results file that cannot be used (does not parse, wrong "
        "shape) so the run replaces it; its stored results are lost (default: stop with an error)",
    )


def add_trigger_flags(
    parser: argparse.ArgumentParser, *, runs_default: int, runs_help: str, early_stop_help: str
) -> None:
    """`--runs` and `--no-early-stop`: the trigger-tier flags of `run triggers` and `run all`."""
    parser.add_argument("--runs", type=int, default=runs_default, help=runs_help)
    parser.add_argument("--no-early-stop", action="store_true", help=early_stop_help)
    parser.add_argument(
        "--install",
        choices=INSTALL_MODES,
        default=None,
        help="how trigger sessions get the plugin: skills (link its skills, evolve's way; "
        "default: config install, else skills) or plugin (--plugin-dir, as users install it: "
        "namespaced skills, hooks run)",
    )
