"""One error hierarchy for unusable input and environments.

Owns: `EvolveError` and its subclasses, and `did_you_mean` (the one spelling-suggestion rule for
commands, flags, models, plugins and skills). Guarantees: every error carries a user-facing message and,
where known, the file and line it is about plus a hint on what to do. Evaluation *failures* are data,
never these exceptions; the CLI maps any `EvolveError` to exit code 2, also when it arrives wrapped
in an exception group (`first_evolve_error` unwraps `asyncio.TaskGroup` failures).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any


class EvolveError(Exception):
    """An input or environment problem the user must fix; rendered as one clear line."""

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = Path(path) if path is not None else None
        self.line = line
        self.hint = hint

    def render(self, root: Path | None = None) -> str:
        """Return `path:line: message (hint)`, with the path relative to `root` when inside it."""
        where = ""
        if self.path is not None:
            shown = display_path(self.path, root)
            where = f"{shown}:{self.line}: " if self.line else f"{shown}: "
        text = f"{where}{self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def __str__(self) -> str:
        return self.render()


class UsageError(EvolveError):
    """Bad command-line usage (unknown flag value, conflicting options)."""


class ConfigError(EvolveError):
    """A bad `.evolve.<ext>` file, `EVOLVE_*` variable, or action input."""


class SpecError(EvolveError):
    """An authored file (triggers, evals, manifests, results) that cannot be used."""


class EnvironmentProblem(EvolveError):
    """The machine lacks something we need (agent CLI, git, credentials)."""


class PublishError(EvolveError):
    """Publishing to GitHub failed (comment, commit-back, outputs)."""


def first_evolve_error(group: BaseExceptionGroup[Any]) -> EvolveError | None:
    """The first `EvolveError` in an exception group (depth-first, nested groups included), or None."""
    for exc in group.exceptions:
        if isinstance(exc, EvolveError):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = first_evolve_error(exc)
            if found is not None:
                return found
    return None


def display_path(path: Path, root: Path | None = None) -> str:
    """Render `path` relative to `root` with `/` separators, or absolute when outside it."""
    if root is not None:
        try:
            rel = path.resolve().relative_to(root.resolve()) if path.is_absolute() else path
            return rel.as_posix() or "."
        except ValueError:
            pass
    return path.as_posix()


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """`did you mean "x"?` for the closest of `choices` to a mistyped `word`, or None when none is close.

    One rule for every name a user types (commands, flags, models, plugins, skills): difflib's
    best match with a ratio ≥ 0.75, else the one name that contains the word (`sonnet-5` →
    `claude-sonnet-5`; names that contain each other count as one, the shortest is shown);
    case-insensitive."""
    pool = {c.lower(): c for c in choices if c}
    low = word.lower()
    close = difflib.get_close_matches(low, list(pool), n=1, cutoff=0.75)
    if not close and len(low) >= 3:
        holders = sorted((c for c in pool if low in c), key=len)
        if holders and all(holders[0] in c for c in holders):
            close = holders[:1]
    return f'did you mean "{pool[close[0]]}"?' if close else None
