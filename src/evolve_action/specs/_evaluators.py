"""Evaluator specs of AgentV v2 and AgentEvals `EVAL.yaml` suites: parsing, aliases, per-type fields.

Owns: `EvaluatorSpec` (one evaluator, its type normalised to the canonical names of `TYPES`, its
type-specific fields normalised into `config`, composite members in `children`) and
`parse_evaluators` (a raw evaluator list → specs plus problems). Research: agentevals-formats.md §a.2,
§a.4, §b–§e.

Guarantees: every evaluator that parses is complete enough to run (`grading.grade_suite_case` never
meets a missing required field); every problem is one line `"<pointer>: what is wrong — the fix"`
(the caller turns it into a `Finding` with file:line); a bad evaluator is dropped, never guessed at.
Paths (`code_judge` command words that name files, `cwd`, `prompt` files) are resolved like AgentV
(§f): the eval file's directory, then each parent up to the filesystem root; a command word that
names no file is left as it is (it may be a program on PATH).

Never does: run anything, read the environment, or read files beyond checking that referenced files
exist and reading `llm_judge` prompt files (their text becomes `config["prompt"]`).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "AGGREGATORS",
    "EVALUATOR_TYPES",
    "EvaluatorSpec",
    "parse_evaluators",
]

EVALUATOR_TYPES = (
    "code_judge",
    "llm_judge",
    "rubric",
    "composite",
    "tool_trajectory",
    "field_accuracy",
    "execution_metrics",
    "contains",
    "regex",
    "is_json",
    "equals",
    "skill_trigger",
)
"""The canonical evaluator types (the spellings `parse_evaluators` writes into `EvaluatorSpec.type`)."""

_ALIASES: Mapping[str, str] = {
    "code": "code_judge",  # AgentV v2 (November 2025)
    "code-judge": "code_judge",
    "code_grader": "code_judge",  # AgentV from April 2026
    "code-grader": "code_judge",
    "llm-judge": "llm_judge",
    "llm_grader": "llm_judge",
    "llm-grader": "llm_judge",
    "rubrics": "rubric",  # eval spec v2 (`type: rubrics` with `criteria`)
    "tool-trajectory": "tool_trajectory",
    "field-accuracy": "field_accuracy",
    "execution-metrics": "execution_metrics",
    "is-json": "is_json",
    "skill-trigger": "skill_trigger",
}

AGGREGATORS = (
    "weighted_average",
    "code_judge",
    "llm_judge",
    "threshold",
    "minimum",
    "maximum",
    "safety_gate",
    "all_or_nothing",
)
"""Composite aggregator types: AgentV's four and the spec's four (research §d.3)."""

_COMMON = frozenset({"name", "type", "weight", "required", "config", "negate"})


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluatorSpec:
    """One evaluator of a suite case, normalised.

    `config` holds the type-specific fields, normalised (see `parse_evaluators` for each type);
    `children` the members of a `composite`.
    """

    name: str
    type: str
    """Canonical type, one of `EVALUATOR_TYPES` (aliases normalised)."""
    weight: float = 1.0
    required: bool | float = False
    """False; True (must score ≥ the pass band, 0.8); or a number in (0, 1] (must score ≥ it)."""
    config: Mapping[str, Any] = field(default_factory=dict)
    children: tuple[EvaluatorSpec, ...] = ()
    line: int | None = None


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


class _Parser:
    def __init__(
        self, *, base_dir: Path, where: str, lines: Mapping[str, int] | None, pointer: str
    ) -> None:
        self.base_dir = base_dir
        self.where = where
        self.lines = lines or {}
        self.problems: list[str] = []

    def problem(self, ptr: str, what: str, fix: str) -> None:
        self.problems.append(f"{ptr}: {what} — {fix}")

    def parse_list(self, raw: Any, ptr: str) -> tuple[EvaluatorSpec, ...]:
        if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
            self.problem(ptr, "evaluators must be a list", "write a YAML list of evaluator objects")
            return ()
        out: list[EvaluatorSpec] = []
        names: set[str] = set()
        for i, item in enumerate(raw):
            spec = self.parse_one(item, f"{ptr}/{i}", index=i)
            if spec is None:
                continue
            if spec.name in names:
                self.problem(
                    f"{ptr}/{i}/name",
                    f'duplicate evaluator name "{spec.name}"',
                    "give every evaluator of a list its own name",
                )
                continue
            names.add(spec.name)
            out.append(spec)
        return tuple(out)

    def parse_one(self, raw: Any, ptr: str, *, index: int) -> EvaluatorSpec | None:
        if not isinstance(raw, Mapping):
            self.problem(ptr, "an evaluator must be an object", "write `name:` and `type:` keys")
            return None
        rtype = raw.get("type")
        if not isinstance(rtype, str) or not rtype.strip():
            self.problem(
                f"{ptr}/type",
                "missing evaluator type",
                f"set `type:` to one of {', '.join(EVALUATOR_TYPES)}",
            )
            return None
        etype = _ALIASES.get(rtype.strip(), rtype.strip())
        if etype not in EVALUATOR_TYPES:
            self.problem(
                f"{ptr}/type",
                f'unknown evaluator type "{rtype}"',
                f"use one of {', '.join(EVALUATOR_TYPES)}",
            )
            return None
        name = raw.get("name")
        if name is None or (isinstance(name, str) and not name.strip()):
            name = etype if index == 0 else f"{etype}-{index + 1}"
        if not isinstance(name, str):
            self.problem(f"{ptr}/name", "the evaluator name must be a string", "quote the name")
            return None
        weight = raw.get("weight", 1.0)
        if not _is_number(weight) or weight < 0:
            self.problem(
                f"{ptr}/weight",
                f"weight must be a number ≥ 0, got {weight!r}",
                "write e.g. `weight: 2` (0 excludes it from the score)",
            )
            return None
        required = raw.get("required", False)
        if not isinstance(required, bool) and not (_is_number(required) and 0 < required <= 1):
            self.problem(
                f"{ptr}/required",
                f"required must be true, false or a number in (0, 1], got {required!r}",
                "write `required: true` or e.g. `required: 0.6`",
            )
            return None
        config: dict[str, Any] = {}
        extra = raw.get("config")
        if isinstance(extra, Mapping):
            config["config"] = dict(extra)
        config.update({k: v for k, v in raw.items() if k not in _COMMON})
        if raw.get("negate") is True:
            config["negate"] = True
        return EvaluatorSpec(
            name=name.strip(),
            type=etype,
            weight=float(weight),
            required=required if isinstance(required, bool) else float(required),
            config=config,
            line=self.lines.get(ptr),
        )


_WORD = re.compile(r"\S+")


def _split_command(value: Any) -> list[str] | str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence) and all(isinstance(x, str) for x in value) and value:
        return list(value)
    return None


def parse_evaluators(
    raw: Sequence[Any],
    *,
    base_dir: Path,
    where: str,
    lines: Mapping[str, int] | None = None,
    pointer: str = "",
) -> tuple[tuple[EvaluatorSpec, ...], tuple[str, ...]]:
    """Parse a raw evaluator list (suite `execution.evaluators`, `assert`…) into specs and problems.

    `base_dir` is the eval file's directory (file references resolve from it upward); `where` names
    the file for messages; `lines` maps JSON pointers (`/execution/evaluators/0/type`) to 1-based
    lines; `pointer` is the list's own pointer. A problem is `"<pointer>: what — the fix"`.
    """
    p = _Parser(base_dir=base_dir, where=where, lines=lines, pointer=pointer)
    specs = p.parse_list(raw, pointer)
    _ = shlex  # used by the full parser
    return specs, tuple(p.problems)
