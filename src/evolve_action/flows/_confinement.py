"""Which commands start agents, and the one console line about how they are confined.

Owns: `runs_agents` (the commands that start agent sessions, so the run confines them and opens
the model gateways), `says_unconfined` (whether the console itself warns that agents ran
unconfined: not on a dry run, and not for `pr` or the action's `mode: run`, whose flow says it in
the log, the comment and the summary) and `confinement_line` (what to say: a confined run's note,
or the unconfined warning, as an annotation under Actions). Never does: print or confine (the CLI
prints; `harness.confined` confines).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from evolve_action.flows._pr_job import UNCONFINED
from evolve_action.github import is_actions
from evolve_action.harness import Confinement


def runs_agents(command: str | None, tier: str | None, *, init_check: bool) -> bool:
    """Whether `evolve-action <command> [<tier>]` starts agent sessions."""
    return (
        tier in ("triggers", "evals", "all")
        or command in ("demo", "pr", "shard")
        or (command == "init" and init_check)
        or (
            command == "run" and tier is None  # the action's `mode: run`
        )
    )


def says_unconfined(command: str | None, tier: str | None, *, dry_run: bool) -> bool:
    """Whether the CLI itself says that agents ran unconfined: not on a dry run (no agent ran),
    and not for `pr` and the action's `mode: run` (their flow says it in the log, the comment and
    the summary)."""
    if dry_run:
        return False
    return command != "pr" and not (command == "run" and tier is None)


@dataclass(frozen=True, slots=True)
class ConfinementLine:
    """The one line about how agents are confined: `annotation` (a warning annotation under
    Actions, on stdout), else a line on stderr (`text` without its newline)."""

    text: str
    annotation: bool = False


def confinement_line(conf: Confinement, environ: Mapping[str, str]) -> ConfinementLine | None:
    """A confined run's note (None when there is nothing to say), or the unconfined warning: an
    annotation under Actions (it shows on the run's page), else a `warning:` line."""
    if not conf.unconfined:
        note = conf.note()
        return ConfinementLine(note) if note else None
    if is_actions(environ):
        return ConfinementLine(UNCONFINED, annotation=True)
    return ConfinementLine(f"warning: {UNCONFINED}")
