"""Findings: what static checks and validation report about authored files.

Owns: the `Finding` value. Guarantees: a finding names the file (relative to the repository root,
`/`-separated), the line and JSON pointer where known, and says what is wrong. Findings are data:
producing one never raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How a finding counts: errors fail the check run, warnings and signals are advisory."""

    ERROR = "error"
    WARNING = "warning"
    SIGNAL = "signal"


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One problem (or advisory signal) in one file."""

    message: str
    """The full human message, e.g. `plugins/a/evals/x/evals.json: evals[2].id "x" is duplicated`."""
    path: str | None = None
    """File path relative to the repository root with `/` separators (absolute when outside)."""
    line: int | None = None
    """1-based line in `path` when the format allows knowing it."""
    pointer: str | None = None
    """JSON pointer of the offending value inside `path` (e.g. `/evals/2/id`)."""
    check: str = ""
    """Short id of the check that produced it (e.g. `skill.name`, `evals.schema`)."""
    severity: Severity = Severity.ERROR
