"""Shared pieces of the subcommand modules: the invocation object, common flags and their checks.

Owns the flag definitions that `run triggers`, `run evals` and `run all` have in common
(`add_selection_flags`), the comma/repeat list splitting (`split_list`), the positive-number checks
(`require_positive`), printing how the repository was read (`print_notices`, one `note:` line
each on stderr), the cost question on a terminal (`confirm_cost`) and the parallelism line
(`parallelism_line`: what the sessions will really run at). Never does: resolve models
or plan (the engines do), decide what a check finds (`flows` owns the filter check, the removal
of unusable results files and the cost threshold).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from evolve_action import flows
from evolve_action.config import Config, with_flags
from evolve_action.errors import EvolveError, UsageError
from evolve_action.harness import Budget, session_limit
from evolve_action.repo import Repository


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """Everything a handler may touch from the outside world, injected by `cli.main`."""

    args: argparse.Namespace
    environ: Mapping[str, str]
    stdout: TextIO
    stderr: TextIO
    cwd: Path


Handler = Callable[[Invocation], int]


def split_list(values: Sequence[str] | None) -> tuple[str, ...]:
    """Repeatable, comma-separated flag values as one tuple (blank items dropped)."""
    return tuple(t.strip() for v in values or () for t in v.split(",") if t.strip())


def require_positive(flag: str, value: int, want: str) -> None:
    """`UsageError("<flag> <value>: want <want>")` unless `value >= 1`."""
    if value < 1:
        raise UsageError(f"{flag} {value}: want {want}")


def discard_unusable_results(
    inv: Invocation, repo: Repository, *, plugins: Sequence[str], skills: Sequence[str]
) -> None:
    """`--overwrite-unreadable-results`: remove the unusable results files of the selected sets
    (`flows.discard_unusable_results`), each `warn:` line on stderr.

    Without the flag (and on `--dry-run`) nothing happens: the engines then stop on such a file
    with an error naming it and the first wrong field. A newer-schema file is never removed.
    """
    args = inv.args
    if not getattr(args, "overwrite_unreadable_results", False) or args.dry_run:
        return
    flows.discard_unusable_results(
        repo,
        inv.environ,
        plugins=plugins,
        skills=skills,
        warn=lambda message: print_warn(inv, message),
    )


def print_warn(inv: Invocation, message: str) -> None:
    """One `warn: <message>` line on stderr."""
    inv.stderr.write(f"warn: {message}\n")


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
            inv.stderr.write(flows.NOTHING_TO_PLAN + "\n")


def budget_from(args: argparse.Namespace) -> Budget | None:
    """`--max-cost-usd` as a `Budget` (None without the flag); a negative cap is a usage error."""
    limit = getattr(args, "max_cost_usd", None)
    if limit is None:
        return None
    if not limit >= 0:
        raise UsageError(f"--max-cost-usd {limit}: want a number of US dollars, 0 or more")
    return Budget(limit_usd=limit)


def parallelism_line(jobs: int, what: str) -> str:
    """`parallelism: N concurrent <what>`, N being what runs at once: `--jobs`, capped at the
    agent-user pool while agents run as agent users (each live session holds a uid of its own)."""
    effective = session_limit(jobs)
    if effective == jobs:
        return f"parallelism: {jobs} concurrent {what}\n"
    return (
        f"parallelism: {effective} concurrent {what} ({jobs} asked; the agent-user pool has "
        f"{effective} uid{'' if effective == 1 else 's'}: EVOLVE_AGENT_USER lists more)\n"
    )


def print_budget(inv: Invocation, budget: Budget | None) -> None:
    """The closing `WARN: budget: …` line when the cap stopped the sweep."""
    if budget is not None and (line := budget.summary()):
        inv.stderr.write(f"WARN: {line}\n")


def print_estimate(inv: Invocation, estimate: flows.CostEstimate) -> None:
    """A dry run's cost lines (`estimate: …`); under `--json` on stderr, so stdout stays the plan's
    case records (`plan --json` carries the estimate as data)."""
    stream = inv.stderr if getattr(inv.args, "json", False) else inv.stdout
    stream.write(estimate.line())


def needs_confirmation(inv: Invocation) -> bool:
    """False when `confirm_cost` would never ask: `--yes`, `--max-cost-usd`, or a loopback
    `ANTHROPIC_BASE_URL` (the scripted model server)."""
    return not flows.skips_confirmation(
        inv.environ,
        yes=bool(getattr(inv.args, "yes", False)),
        capped=getattr(inv.args, "max_cost_usd", None) is not None,
    )


def confirm_cost(inv: Invocation, estimate: flows.CostEstimate, *, command: str) -> None:
    """Ask before a run estimated above the threshold (`flows.confirm_threshold`): on a terminal a
    `[y/N]` question; elsewhere (CI, a pipe) a `UsageError` before any session. `--yes`,
    `--max-cost-usd` (a cap already bounds the spend) and a loopback `ANTHROPIC_BASE_URL` (the
    scripted model server: free) skip it."""
    if not needs_confirmation(inv):
        return
    threshold = flows.confirm_threshold(inv.environ)
    if estimate.total_usd <= threshold:
        return
    question = flows.cost_question(
        command, sessions=estimate.total_sessions, usd=estimate.total_usd, threshold=threshold
    )
    if _interactive(inv.stdout):
        inv.stdout.write(f"{question.text}. Run it? [y/N] ")
        inv.stdout.flush()
        if sys.stdin.readline().strip().lower() in ("y", "yes"):
            return
        raise UsageError(f"{command}: not confirmed; nothing ran", hint=question.hint)
    raise UsageError(question.text, hint=question.hint)


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
