"""Tier 0: static checks of a plugin repository, and the advisory skill signals.

Owns: `run_checks` (marketplace, manifest, SKILL.md and eval-spec checks in evolve's order and
wording; evolve's conventions only where the repository opts in) and its verdict `CheckReport`; the advisory skill signals (size and conciseness scores,
`signals` here means skill signals, not OS signals). Guarantees: pure over the repository; every
problem is a `Finding`. Never does: write, print, read `os.environ`.

Files (private; import from this package):
- `_engine`: Tier 0: static checks of a plugin repository (engine spec §5).
- `_signals`: Advisory skill signals of `run checks` (engine spec §5.6): size and conciseness scores.
"""

from evolve_action.checks._engine import CheckOptions, CheckReport, run_checks
from evolve_action.checks._signals import conciseness_score, prose_lines, size_score

__all__ = [
    "CheckOptions",
    "CheckReport",
    "conciseness_score",
    "prose_lines",
    "run_checks",
    "size_score",
]
