"""Step outputs (`GITHUB_OUTPUT`), the step summary (`GITHUB_STEP_SUMMARY`) and secret masking.

Owns: `ActionOutputs` (the outputs `action.yml` declares, as typed values, and their string form),
`format_output` (one `name<<DELIM … DELIM` record with a random delimiter that never occurs in the
value), `write_outputs`, `append_summary` (kept under GitHub's 1 MiB per step, dropping the tail
and saying so), `CommandFiles.from_env` and `mask_secrets`.

Guarantees: a value can never end its record early or inject another output (the delimiter is
fresh per record and checked against the value); output names are validated; files are appended
to, never truncated; summaries are UTF-8; secrets and tokens in a value or the summary become
`***` (`redact`) before anything is written. Never reads `os.environ` (callers pass it) and never
prints except the masks it is asked to write.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from evolve_action.errors import PublishError
from evolve_action.github._workflow import mask
from evolve_action.redact import redact

__all__ = [
    "MAX_SUMMARY_BYTES",
    "OUTPUT_NAMES",
    "ActionOutputs",
    "CommandFiles",
    "Status",
    "append_summary",
    "format_output",
    "mask_secrets",
    "write_outputs",
]

MAX_SUMMARY_BYTES = 1024 * 1024
"""GitHub refuses a step summary larger than this."""

Status = Literal["passed", "failed", "regressed", "errored", "not-evaluated", "skipped"]
"""The `status` output (`not-evaluated`: touched skills whose stale or missing evidence was not
run, or that have no evals: no verdict)."""

OUTPUT_NAMES: tuple[str, ...] = (
    "status",
    "evaluated_skills",
    "triggers_pass_rate",
    "evals_pass_rate",
    "delta",
    "cost_usd",
    "sessions",
    "comment_id",
    "commit_sha",
    "report_path",
    "matrix",
    "plan_id",
)
"""Every output of `action.yml`, in its order."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,99}")
_TRUNCATED = "\n\n> Step summary truncated: GitHub accepts at most 1 MiB per step.\n"


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionOutputs:
    """The values of the action's outputs; `None` and empty values are written as empty strings."""

    status: Status
    evaluated_skills: tuple[str, ...] = ()
    """`plugin/skill` names, written as a JSON array."""
    triggers_pass_rate: float | None = None
    evals_pass_rate: float | None = None
    delta: str = ""
    """The most severe row label (`regression`, `improvement`, `undecided`, `no change`, …)."""
    cost_usd: float = 0.0
    sessions: int = 0
    comment_id: int | None = None
    commit_sha: str = ""
    report_path: str = ""
    matrix: str = ""
    """`mode: plan`: the `strategy.matrix` JSON (`{"shard": ["1/N", …]}`)."""
    plan_id: str = ""
    """`mode: plan|shard|merge`: the shard plan's id."""

    def as_strings(self) -> dict[str, str]:
        """Output name → the string written to `GITHUB_OUTPUT`, in `OUTPUT_NAMES` order."""
        return {
            "status": self.status,
            "evaluated_skills": json.dumps(list(self.evaluated_skills), ensure_ascii=False),
            "triggers_pass_rate": _rate(self.triggers_pass_rate),
            "evals_pass_rate": _rate(self.evals_pass_rate),
            "delta": self.delta,
            "cost_usd": f"{self.cost_usd:.4f}",
            "sessions": str(self.sessions),
            "comment_id": "" if self.comment_id is None else str(self.comment_id),
            "commit_sha": self.commit_sha,
            "report_path": self.report_path,
            "matrix": self.matrix,
            "plan_id": self.plan_id,
        }


def _rate(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}".rstrip("0").rstrip(".") or "0"


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandFiles:
    """The runner's environment files for this step (None where the runner gave none)."""

    output: Path | None
    summary: Path | None

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> CommandFiles:
        """`GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` from the given environment."""
        return cls(
            output=_path(environ, "GITHUB_OUTPUT"), summary=_path(environ, "GITHUB_STEP_SUMMARY")
        )


def _path(environ: Mapping[str, str], name: str) -> Path | None:
    value = environ.get(name, "").strip()
    return Path(value) if value else None


def _delimiter() -> str:
    return f"ghadelimiter_{secrets.token_hex(16)}"


def format_output(name: str, value: str, *, delimiter: Callable[[], str] = _delimiter) -> str:
    """One `GITHUB_OUTPUT` record: `name<<D`, the value, `D`, each on its own line.

    `delimiter` makes fresh candidates (tests inject colliding ones); a candidate that occurs in the
    value or the name is never used.
    """
    if not _NAME.fullmatch(name):
        raise PublishError(
            f"output name {name!r} is not valid (letters, digits, _ and -, starting with a letter)"
        )
    value = redact(value)
    for _ in range(100):
        token = delimiter()
        if token and token not in value and token not in name and "\n" not in token:
            return f"{name}<<{token}\n{value}\n{token}\n"
    raise PublishError(f"could not find an output delimiter absent from the value of {name}")


def write_outputs(
    path: Path | None,
    values: Mapping[str, str] | ActionOutputs,
    *,
    delimiter: Callable[[], str] = _delimiter,
) -> bool:
    """Append the outputs to the `GITHUB_OUTPUT` file; False (nothing written) when there is none."""
    if path is None:
        return False
    items = values.as_strings() if isinstance(values, ActionOutputs) else dict(values)
    text = "".join(format_output(k, v, delimiter=delimiter) for k, v in items.items())
    _append(path, text, "GITHUB_OUTPUT")
    return True


def append_summary(path: Path | None, markdown: str, *, limit: int = MAX_SUMMARY_BYTES) -> bool:
    """Append Markdown to the step summary; False when there is no summary file.

    The file is kept within `limit` bytes: text past it is cut at a line boundary and a notice
    says the summary was truncated.
    """
    if path is None:
        return False
    try:
        used = path.stat().st_size
    except FileNotFoundError:
        used = 0
    except OSError as exc:
        raise PublishError(
            f"cannot read the step summary file: {exc.strerror or exc}", path=path
        ) from exc
    markdown = redact(markdown)
    text = markdown if markdown.endswith("\n") else markdown + "\n"
    data = text.encode("utf-8")
    if used + len(data) > limit:
        room = limit - used - len(_TRUNCATED.encode("utf-8"))
        if room <= 0:
            return True
        cut = data[:room]
        newline = cut.rfind(b"\n")
        cut = cut[: newline + 1] if newline >= 0 else b""
        text = cut.decode("utf-8", errors="ignore") + _TRUNCATED
    _append(path, text, "GITHUB_STEP_SUMMARY")
    return True


def _append(path: Path, text: str, what: str) -> None:
    try:
        with path.open("a", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except OSError as exc:
        raise PublishError(
            f"cannot write {what}: {exc.strerror or exc}",
            path=path,
            hint="the runner creates this file; check the container's permissions on /github/file_commands",
        ) from exc


def mask_secrets(stream: TextIO, values: Iterable[str]) -> None:
    """Register every non-empty secret (each line of a multi-line one) with the runner's masker."""
    for value in values:
        if value.strip():
            mask(stream, value)
