"""Shared pieces of the subcommand modules: the invocation object, common flags and their checks.

Owns the flag definitions that `run triggers`, `run evals` and `run all` have in common
(`add_selection_flags`), the comma/repeat list splitting (`split_list`), the default `--jobs`
(`default_jobs`), the positive-number checks (`require_positive`), the filter check
(`check_filters`), and printing how the repository was read (`print_notices`, one `note:` line
each on stderr). Never does: resolve models or plan (the engines do).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from evolve_action import flows
from evolve_action.config import INSTALL_MODES, Config, with_flags
from evolve_action.errors import EvolveError, UsageError, did_you_mean
from evolve_action.harness import Budget, check_credentials
from evolve_action.repo import Repository
from evolve_action.results import discard_unusable, load_results


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


def check_filters(repo: Repository, *, plugins: Sequence[str], skills: Sequence[str]) -> None:
    """Raise `UsageError` when a `--plugin` / `--skill` name matches nothing in the repository.

    A typo in a filter would otherwise plan nothing and exit 0 ("0 cases to run"), which reads
    like success. A skill counts when it has a `skills/<name>/` or an `evals/<name>/` directory
    in one of the selected plugins.
    """
    known_plugins = [p.name for p in repo.plugins]
    unknown = [n for n in dict.fromkeys(plugins) if n not in known_plugins]
    if unknown:
        raise UsageError(
            f"--plugin {', '.join(unknown)}: no such plugin in {repo.root}",
            hint=did_you_mean(unknown[0], known_plugins)
            or f"plugins: {', '.join(known_plugins) or '(none)'}",
        )
    if not skills:
        return
    chosen = [p for p in repo.plugins if not plugins or p.name in plugins]
    names = {s.name for s in repo.skills() if s.plugin in {p.name for p in chosen}}
    for plugin in chosen:
        if plugin.evals_dir.is_dir():
            names.update(d.name for d in plugin.evals_dir.iterdir() if d.is_dir())
    missing = [n for n in dict.fromkeys(skills) if n not in names]
    if missing:
        scope = "the selected plugins" if plugins else "any plugin"
        raise UsageError(
            f"--skill {', '.join(missing)}: no such skill in {scope}",
            hint=did_you_mean(missing[0], names)
            or f"skills: {', '.join(sorted(names)) or '(none)'}",
        )


def split_list(values: Sequence[str] | None) -> tuple[str, ...]:
    """Repeatable, comma-separated flag values as one tuple (blank items dropped)."""
    return tuple(t.strip() for v in values or () for t in v.split(",") if t.strip())


def require_positive(flag: str, value: int, want: str) -> None:
    """`UsageError("<flag> <value>: want <want>")` unless `value >= 1`."""
    if value < 1:
        raise UsageError(f"{flag} {value}: want {want}")


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
        f"({CONFIRM_VAR}, default ${DEFAULT_CONFIRM_ABOVE_USD:g}); without it a terminal asks, "
        "and elsewhere the run stops before any session",
    )
    parser.add_argument(
        "--overwrite-unreadable-results",
        action="store_true",
        help="delete a selected skill's results file that cannot be used (does not parse, wrong "
        "shape) so the run replaces it; its stored results are lost (default: stop with an error)",
    )


def discard_unusable_results(
    inv: Invocation, repo: Repository, *, plugins: Sequence[str], skills: Sequence[str]
) -> None:
    """`--overwrite-unreadable-results`: remove the unusable results files of the selected sets.

    Without the flag (and on `--dry-run`) nothing happens: the engines then stop on such a file
    with an error naming it and the first wrong field. A newer-schema file is never removed.
    """
    args = inv.args
    if not getattr(args, "overwrite_unreadable_results", False) or args.dry_run:
        return

    def waiting(message: str) -> None:
        inv.stderr.write(f"warn: {message}\n")

    chosen = [
        es
        for es in repo.eval_sets()
        if not (plugins and es.plugin not in plugins)
        and not (skills and es.skill not in skills)
        and es.results_dir.is_dir()
    ]
    if any(_unusable(es.results_dir) for es in chosen):
        # A run that cannot start must not have deleted anything: the credentials first.
        check_credentials(inv.environ)
    for es in chosen:
        removed = discard_unusable(es.results_dir, on_wait=waiting)
        if removed is not None:
            inv.stderr.write(
                f"warn: removed unusable results file {repo.rel(removed)} "
                "(--overwrite-unreadable-results); this run writes a fresh one\n"
            )


def _unusable(results_dir: Path) -> bool:
    """A results file is there and cannot be used (what the flag would delete)."""
    try:
        load_results(results_dir)
    except EvolveError:
        return True
    return False


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


def with_install_flag(inv: Invocation, config: Config) -> Config:
    """`--install` (when given) over config `install`."""
    return with_flags(config, {"install": getattr(inv.args, "install", None)})


def print_notices(inv: Invocation, repo: Repository, *, planning: bool = True) -> None:
    """Print the repository's notices (remote plugins, an implicit plugin, …) on stderr.

    `planning`: also say so when no skill has definitions to plan (else `plan: 0 case(s)` would
    be all the user sees).
    """
    for notice in repo.notices:
        inv.stderr.write(notice + "\n")
    if planning and repo.skills():
        try:
            sets = repo.eval_sets()
        except EvolveError:
            return  # the command reports it
        if not sets:
            inv.stderr.write(NOTHING_TO_PLAN + "\n")


NOTHING_TO_PLAN = (
    "note: no skill has trigger or eval definitions, so there is nothing to plan: add "
    "evals/<skill>/triggers.json or evals.json (evolve), or skill-creator's "
    "<skill>/evals/evals.json and evals/trigger*.json (see docs/authoring.md)"
)


def budget_from(args: argparse.Namespace) -> Budget | None:
    """`--max-cost-usd` as a `Budget` (None without the flag); a negative cap is a usage error."""
    limit = getattr(args, "max_cost_usd", None)
    if limit is None:
        return None
    if not limit >= 0:
        raise UsageError(f"--max-cost-usd {limit}: want a number of US dollars, 0 or more")
    return Budget(limit_usd=limit)


def print_budget(inv: Invocation, budget: Budget | None) -> None:
    """The closing `WARN: budget: …` line when the cap stopped the sweep."""
    if budget is not None and (line := budget.summary()):
        inv.stderr.write(f"WARN: {line}\n")


def no_model_error() -> UsageError:
    """The error of a run whose selected models have no harness this machine can start."""
    return UsageError(
        "no model to run: no selected model has an available harness "
        "(claude; codex for openai/* models when installed)",
        hint=(
            "check --model and the config's models/harnesses; install Codex with "
            "evolve-action install codex"
        ),
    )


def print_estimate(inv: Invocation, estimate: flows.CostEstimate) -> None:
    """A dry run's cost lines (`estimate: …`); under `--json` on stderr, so stdout stays the plan's
    case records (`plan --json` carries the estimate as data)."""
    stream = inv.stderr if getattr(inv.args, "json", False) else inv.stdout
    stream.write(estimate.line())


DEFAULT_CONFIRM_ABOVE_USD = 5.0
"""A run estimated above this (US dollars, list prices) asks first (`confirm_cost`)."""

CONFIRM_VAR = "EVOLVE_CONFIRM_ABOVE_USD"
"""The environment variable that sets the confirmation threshold (dollars)."""

_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def needs_confirmation(inv: Invocation) -> bool:
    """False when `confirm_cost` would never ask: `--yes`, `--max-cost-usd`, or a loopback
    `ANTHROPIC_BASE_URL` (the scripted model server)."""
    args = inv.args
    if getattr(args, "yes", False) or getattr(args, "max_cost_usd", None) is not None:
        return False
    base_url = inv.environ.get("ANTHROPIC_BASE_URL", "")
    return not (base_url and (urlsplit(base_url).hostname or "") in _LOOPBACK)


def confirm_cost(inv: Invocation, estimate: flows.CostEstimate, *, command: str) -> None:
    """Ask before a run estimated above the threshold (`EVOLVE_CONFIRM_ABOVE_USD`, default
    `DEFAULT_CONFIRM_ABOVE_USD`): on a terminal a `[y/N]` question; elsewhere (CI, a pipe) a
    `UsageError` before any session. `--yes`, `--max-cost-usd` (a cap already bounds the spend)
    and a loopback `ANTHROPIC_BASE_URL` (the scripted model server: free) skip it."""
    if not needs_confirmation(inv):
        return
    threshold = _confirm_threshold(inv.environ)
    if estimate.total_usd <= threshold:
        return
    text = (
        f"{command}: estimated {estimate.total_sessions} agent sessions, about "
        f"${estimate.total_usd:.2f} at list prices, above the confirmation threshold of "
        f"${threshold:.2f}"
    )
    hint = (
        "pass --yes to run it, or --max-cost-usd USD to cap the spend; --dry-run shows the plan; "
        f"{CONFIRM_VAR} sets the threshold"
    )
    if _interactive(inv.stdout):
        inv.stdout.write(f"{text}. Run it? [y/N] ")
        inv.stdout.flush()
        if sys.stdin.readline().strip().lower() in ("y", "yes"):
            return
        raise UsageError(f"{command}: not confirmed; nothing ran", hint=hint)
    raise UsageError(text, hint=hint)


def _confirm_threshold(environ: Mapping[str, str]) -> float:
    raw = environ.get(CONFIRM_VAR, "").strip()
    if not raw:
        return DEFAULT_CONFIRM_ABOVE_USD
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise UsageError(
            f"{CONFIRM_VAR}={raw}: want a number of US dollars, 0 or more",
            hint=f"unset it for the default of ${DEFAULT_CONFIRM_ABOVE_USD:g}",
        )
    return value


def _interactive(stdout: TextIO) -> bool:
    try:
        return sys.stdin.isatty() and bool(stdout.isatty())
    except (AttributeError, ValueError):
        return False


def default_models(
    inv: Invocation, models: Sequence[str], harnesses: Sequence[str], config: Config
) -> tuple[str, ...]:
    """The one model rule (`flows.sweep_models`): `--model` when given, else config `models`, else
    the one default model (`catalog.PR_DEFAULT_MODEL`), said on its own line before anything runs
    (stderr under `--json`) — never every catalog model. `--harness` without `--model` keeps the
    catalog's choice for that harness."""
    choice = flows.sweep_models(tuple(models), tuple(harnesses), config)
    if choice.default:
        stream = inv.stderr if getattr(inv.args, "json", False) else inv.stdout
        stream.write(f"model: {choice.models[0]} ({choice.why})\n")
    return choice.models
