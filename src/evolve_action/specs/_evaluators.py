"""TEMPORARY stub of helper `evaluators`' module (contract shape); never committed on `suites`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ALIASES = {"code": "code_judge", "llm-judge": "llm_judge", "rubrics": "rubric"}


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluatorSpec:
    name: str
    type: str
    weight: float = 1.0
    required: bool | float = False
    config: Mapping[str, Any] = field(default_factory=dict)
    children: tuple[EvaluatorSpec, ...] = ()
    line: int | None = None


def parse_evaluators(
    raw: Sequence[Any],
    *,
    base_dir: Path,
    where: str,
    lines: Mapping[str, int] | None = None,
    pointer: str = "",
) -> tuple[tuple[EvaluatorSpec, ...], tuple[str, ...]]:
    specs: list[EvaluatorSpec] = []
    problems: list[str] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            problems.append(f"{pointer}/{i}: evaluator needs a `type` — add one")
            continue
        kind = ALIASES.get(item["type"], item["type"])
        children, more = (
            parse_evaluators(
                item.get("evaluators", []),
                base_dir=base_dir,
                where=where,
                lines=lines,
                pointer=f"{pointer}/{i}/evaluators",
            )
            if kind == "composite"
            else ((), ())
        )
        problems.extend(more)
        specs.append(
            EvaluatorSpec(
                name=str(item.get("name", kind)),
                type=kind,
                weight=float(item.get("weight", 1.0)),
                required=item.get("required", False),
                config={k: v for k, v in item.items() if k not in ("name", "type")},
                children=children,
            )
        )
    return tuple(specs), tuple(problems)
