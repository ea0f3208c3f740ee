"""What the run commands settle before any agent session starts.

Owns: the filter check (`check_filters`: a `--plugin`/`--skill` name that matches nothing is a
usage error, not an empty plan), removing the unusable results files of the selected sets on
request (`discard_unusable_results`), the cost confirmation's threshold and question
(`confirm_threshold`, `cost_question`, `skips_confirmation`), the error of a run with no runnable
model (`no_model_error`) and the note of a repository with nothing to plan (`NOTHING_TO_PLAN`).
Never does: print, read argv, ask the user (the CLI does, with these texts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from evolve_action.errors import EvolveError, UsageError, did_you_mean
from evolve_action.harness import check_credentials
from evolve_action.repo import Repository
from evolve_action.results import discard_unusable, load_results

NOTHING_TO_PLAN = (
    "note: no skill has trigger or eval definitions, so there is nothing to plan: add "
    "evals/<skill>/triggers.json or evals.json (evolve), or skill-creator's "
    "<skill>/evals/evals.json and evals/trigger*.json (see docs/authoring.md)"
)

DEFAULT_CONFIRM_ABOVE_USD = 5.0
"""A run estimated above this (US dollars, list prices) asks first (the CLI's `confirm_cost`)."""

CONFIRM_VAR = "EVOLVE_CONFIRM_ABOVE_USD"
"""The environment variable that sets the confirmation threshold (dollars)."""

_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


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


def discard_unusable_results(
    repo: Repository,
    environ: Mapping[str, str],
    *,
    plugins: Sequence[str],
    skills: Sequence[str],
    warn: Callable[[str], None],
) -> None:
    """Remove the unusable results files of the selected eval sets (`--overwrite-unreadable-results`).

    A run that cannot start must not have deleted anything, so the credentials are checked first
    when there is something to remove. `warn` gets each line to show (a wait on a lock, a removed
    file). A newer-schema file is never removed.
    """
    chosen = [
        es
        for es in repo.eval_sets()
        if not (plugins and es.plugin not in plugins)
        and not (skills and es.skill not in skills)
        and es.results_dir.is_dir()
    ]
    if any(_unusable(es.results_dir) for es in chosen):
        check_credentials(environ)
    for es in chosen:
        removed = discard_unusable(es.results_dir, on_wait=warn)
        if removed is not None:
            warn(
                f"removed unusable results file {repo.rel(removed)} "
                "(--overwrite-unreadable-results); this run writes a fresh one"
            )


def _unusable(results_dir: Path) -> bool:
    """A results file is there and cannot be used (what the flag would delete)."""
    try:
        load_results(results_dir)
    except EvolveError:
        return True
    return False


def skips_confirmation(environ: Mapping[str, str], *, yes: bool, capped: bool) -> bool:
    """True when a run never asks about its cost: `--yes`, a `--max-cost-usd` cap, or a loopback
    `ANTHROPIC_BASE_URL` (the scripted model server: free)."""
    if yes or capped:
        return True
    base_url = environ.get("ANTHROPIC_BASE_URL", "")
    return bool(base_url and (urlsplit(base_url).hostname or "") in _LOOPBACK)


def confirm_threshold(environ: Mapping[str, str]) -> float:
    """The confirmation threshold in dollars: `EVOLVE_CONFIRM_ABOVE_USD`, else the default."""
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


@dataclass(frozen=True, slots=True)
class CostQuestion:
    """What to ask (or refuse with) before a run estimated above the threshold."""

    text: str
    hint: str


def cost_question(command: str, *, sessions: int, usd: float, threshold: float) -> CostQuestion:
    """The question for `command` estimated at `sessions` agent sessions and `usd` dollars."""
    return CostQuestion(
        text=(
            f"{command}: estimated {sessions} agent sessions, about "
            f"${usd:.2f} at list prices, above the confirmation threshold of "
            f"${threshold:.2f}"
        ),
        hint=(
            "pass --yes to run it, or --max-cost-usd USD to cap the spend; --dry-run shows the "
            f"plan; {CONFIRM_VAR} sets the threshold"
        ),
    )


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
