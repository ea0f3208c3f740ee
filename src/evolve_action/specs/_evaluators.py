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

from evolve_action.encoding import compile_re2

__all__ = [
    "AGGREGATORS",
    "EVALUATOR_TYPES",
    "EvaluatorSpec",
    "parse_evaluators",
    "resolve_reference",
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
        normalise = getattr(self, f"_{etype}")
        config: dict[str, Any] | None = normalise(raw, ptr)
        if config is None:
            return None
        if raw.get("negate") is True:
            config["negate"] = True
        children: tuple[EvaluatorSpec, ...] = config.pop("_children", ())
        return EvaluatorSpec(
            name=name.strip(),
            type=etype,
            weight=float(weight),
            required=required if isinstance(required, bool) else float(required),
            config=config,
            children=children,
            line=self.lines.get(ptr),
        )

    # -- helpers -------------------------------------------------------------------------------

    def passthrough(self, raw: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
        """AgentV: every key it does not know goes into `config` (merged over an explicit `config`)."""
        out: dict[str, Any] = {}
        extra = raw.get("config")
        if isinstance(extra, Mapping):
            out.update(extra)
        out.update({k: v for k, v in raw.items() if k not in _COMMON and k not in known})
        return out

    def command(self, value: Any, ptr: str) -> tuple[str, ...] | str | None:
        if isinstance(value, str) and value.strip():
            return value
        if (
            isinstance(value, Sequence)
            and not isinstance(value, (str, bytes))
            and value
            and all(isinstance(x, str) for x in value)
        ):
            return tuple(value)
        self.problem(
            ptr,
            "the command must be a non-empty list of strings (run without a shell) or a string "
            "(run with `sh -lc`)",
            'write e.g. `command: ["python3", "judge.py"]`',
        )
        return None

    def directory(self, value: Any, ptr: str) -> str | None:
        if value is None:
            return str(self.base_dir.absolute())
        if not isinstance(value, str) or not value.strip():
            self.problem(
                ptr, "cwd must be a directory path", "write a path relative to the eval file"
            )
            return None
        found = resolve_reference(value, self.base_dir, directory=True)
        if found is None:
            self.problem(
                ptr,
                f'cwd "{value}" does not exist',
                "write a directory relative to the eval file's directory (or one of its parents)",
            )
            return None
        return str(found)

    def check_script_words(self, command: tuple[str, ...] | str, cwd: str, ptr: str) -> bool:
        """A command word that names a script file (`judge.py`, `./check.sh`) must exist from cwd."""
        try:
            words = list(command) if isinstance(command, tuple) else shlex.split(command)
        except ValueError as exc:
            self.problem(ptr, f"the command is not valid shell syntax: {exc}", "fix the quoting")
            return False
        ok = True
        for word in words:
            if word.startswith("-") or not _SCRIPT.search(word) or "$" in word:
                continue
            if not (Path(cwd) / word).is_file():
                self.problem(
                    ptr,
                    f'the command names "{word}", which does not exist in {cwd}',
                    "write the script path relative to the eval file's directory (the judge's cwd)",
                )
                ok = False
        return ok

    # -- per type ------------------------------------------------------------------------------

    def _code_judge(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        key = "command" if "command" in raw else "script"
        if key not in raw:
            self.problem(
                ptr,
                "code_judge needs a command",
                'add `command: ["python3", "judge.py"]` (AgentV v2/1.0 spell it `script`)',
            )
            return None
        command = self.command(raw[key], f"{ptr}/{key}")
        cwd = self.directory(raw.get("cwd"), f"{ptr}/cwd")
        if command is None or cwd is None:
            return None
        if not self.check_script_words(command, cwd, f"{ptr}/{key}"):
            return None
        known = frozenset({"script", "command", "cwd", "target"})
        out: dict[str, Any] = {
            "command": command,
            "cwd": cwd,
            "config": self.passthrough(raw, known),
        }
        if raw.get("target") is not None:
            out["target"] = raw["target"]
        return out

    def _llm_judge(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        prompt = raw.get("prompt")
        out: dict[str, Any] = {"prompt": "", "prompt_file": "", "prompt_command": None}
        if isinstance(prompt, Mapping):
            cmd_key = "command" if "command" in prompt else "script"
            command = self.command(prompt.get(cmd_key), f"{ptr}/prompt/{cmd_key}")
            if command is None:
                return None
            cwd = self.directory(prompt.get("cwd"), f"{ptr}/prompt/cwd")
            if cwd is None:
                return None
            if not self.check_script_words(command, cwd, f"{ptr}/prompt/{cmd_key}"):
                return None
            out["prompt_command"] = command
            out["prompt_cwd"] = cwd
            out["prompt_config"] = dict(prompt.get("config") or {})
        elif isinstance(prompt, str) and prompt.strip():
            found = None if "\n" in prompt.strip() else resolve_reference(prompt, self.base_dir)
            if found is not None:
                try:
                    out["prompt"] = found.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    self.problem(f"{ptr}/prompt", f"cannot read {found}: {exc}", "save it as UTF-8")
                    return None
                out["prompt_file"] = str(found)
            elif _LOOKS_LIKE_FILE.fullmatch(prompt.strip()):
                self.problem(
                    f"{ptr}/prompt",
                    f'prompt file "{prompt.strip()}" does not exist',
                    "write the path relative to the eval file's directory, or write the prompt inline",
                )
                return None
            else:
                out["prompt"] = prompt
        elif prompt is not None:
            self.problem(f"{ptr}/prompt", "prompt must be text or a file path", "quote the prompt")
            return None
        text = out["prompt"]
        out["syntax"] = (
            "default"
            if not text and out["prompt_command"] is None
            else "mustache"
            if _MUSTACHE.search(text) or out["prompt_command"] is not None
            else "dollar"
            if _DOLLAR.search(text)
            else "instructions"
        )
        for ignored in ("model", "target"):
            if raw.get(ignored) is not None:
                out[ignored] = raw[ignored]
        out["config"] = self.passthrough(raw, frozenset({"prompt", "model", "target"}))
        return out

    def _rubric(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        key = "rubrics" if "rubrics" in raw else "criteria"
        items = raw.get(key)
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, Sequence) or not items:
            self.problem(
                f"{ptr}/{key}",
                "a rubric evaluator needs a non-empty list of rubrics",
                "add `rubrics:` with one criterion per item (text, or {id, outcome, weight, required})",
            )
            return None
        rubrics: list[dict[str, Any]] = []
        ids: set[str] = set()
        for i, item in enumerate(items):
            one = self.rubric_item(item, f"{ptr}/{key}/{i}", i)
            if one is None:
                continue
            if one["id"] in ids:
                self.problem(
                    f"{ptr}/{key}/{i}/id",
                    f'duplicate rubric id "{one["id"]}"',
                    "give each its own id",
                )
                continue
            ids.add(one["id"])
            rubrics.append(one)
        if len(rubrics) != len(items):
            return None
        mode = "score_range" if any(r["score_ranges"] for r in rubrics) else "checklist"
        return {"rubrics": tuple(rubrics), "mode": mode}

    def rubric_item(self, item: Any, ptr: str, index: int) -> dict[str, Any] | None:
        if isinstance(item, str):
            if not item.strip():
                self.problem(ptr, "empty rubric", "write the criterion text")
                return None
            return {
                "id": f"r{index + 1}",
                "outcome": item.strip(),
                "weight": 1.0,
                "required": False,
                "score_ranges": (),
                "required_min_score": None,
            }
        if not isinstance(item, Mapping):
            self.problem(ptr, "a rubric must be text or an object", "write `- outcome: …`")
            return None
        outcome = next(
            (
                item[k]
                for k in ("expected_outcome", "outcome", "criteria", "description", "text")
                if isinstance(item.get(k), str) and item[k].strip()
            ),
            None,
        )
        if outcome is None:
            self.problem(
                ptr,
                "rubric without its criterion text",
                "add `outcome:` (AgentEvals 1.0 spells it `expected_outcome`)",
            )
            return None
        weight = item.get("weight", 1.0)
        if not _is_number(weight) or weight < 0:
            self.problem(f"{ptr}/weight", f"weight must be a number ≥ 0, got {weight!r}", "e.g. 2")
            return None
        required = item.get("required", False)
        if not isinstance(required, bool):
            self.problem(f"{ptr}/required", "required must be true or false", "write `true`")
            return None
        min_score = item.get("required_min_score")
        if min_score is not None and not (
            isinstance(min_score, int) and not isinstance(min_score, bool) and 0 <= min_score <= 10
        ):
            self.problem(
                f"{ptr}/required_min_score",
                "required_min_score must be an integer 0–10",
                "e.g. `required_min_score: 7`",
            )
            return None
        ranges = self.score_ranges(item.get("score_ranges"), f"{ptr}/score_ranges")
        if ranges is None:
            return None
        rid = item.get("id")
        return {
            "id": str(rid) if rid is not None and str(rid).strip() else f"r{index + 1}",
            "outcome": outcome.strip(),
            "weight": float(weight),
            "required": required,
            "score_ranges": ranges,
            "required_min_score": min_score,
        }

    def score_ranges(self, value: Any, ptr: str) -> tuple[tuple[int, str], ...] | None:
        """`{0: text, 5: text, 10: text}` (lower bounds) or AgentV's list of
        `{score_range: [lo, hi], outcome}`, as sorted `(lower bound, text)` pairs starting at 0."""
        if value is None:
            return ()
        pairs: list[tuple[int, str]] = []
        if isinstance(value, Mapping):
            for k, v in value.items():
                try:
                    lo = int(str(k))
                except ValueError:
                    lo = -1
                if not 0 <= lo <= 10 or not isinstance(v, str):
                    self.problem(
                        ptr,
                        f"score_ranges keys must be integers 0–10 with text values, got {k!r}",
                        'write e.g. `score_ranges: {0: "missing", 5: "partial", 10: "complete"}`',
                    )
                    return None
                pairs.append((lo, v))
        elif isinstance(value, Sequence) and not isinstance(value, str):
            for i, entry in enumerate(value):
                rng = entry.get("score_range") if isinstance(entry, Mapping) else None
                text = next(
                    (
                        entry[k]
                        for k in ("outcome", "expected_outcome", "description")
                        if isinstance(entry, Mapping) and isinstance(entry.get(k), str)
                    ),
                    None,
                )
                if (
                    not isinstance(rng, Sequence)
                    or len(rng) != 2
                    or not all(isinstance(x, int) for x in rng)
                    or text is None
                ):
                    self.problem(
                        f"{ptr}/{i}",
                        "a score range needs `score_range: [lo, hi]` and `outcome:`",
                        "write e.g. `- {score_range: [0, 4], outcome: missing}`",
                    )
                    return None
                pairs.append((int(rng[0]), text))
        else:
            self.problem(ptr, "score_ranges must be a map or a list", "see docs/evaluators.md")
            return None
        pairs.sort()
        if not pairs or pairs[0][0] != 0 or len({lo for lo, _ in pairs}) != len(pairs):
            self.problem(
                ptr,
                "score ranges must start at 0 and not repeat a bound",
                "add a `0:` entry (the bounds are lower bounds of 0–10 bands)",
            )
            return None
        return tuple(pairs)

    def _composite(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        members = raw.get("evaluators", raw.get("assert", raw.get("assertions")))
        if members is None:
            self.problem(ptr, "composite needs `evaluators:`", "list the member evaluators")
            return None
        before = len(self.problems)
        children = self.parse_list(members, f"{ptr}/evaluators")
        if len(self.problems) != before:
            return None
        if not children:
            self.problem(f"{ptr}/evaluators", "composite without members", "list at least one")
            return None
        agg = raw.get("aggregator", {"type": "weighted_average"})
        if isinstance(agg, str):
            agg = {"type": agg}
        if not isinstance(agg, Mapping) or agg.get("type") not in AGGREGATORS:
            self.problem(
                f"{ptr}/aggregator",
                f"unknown aggregator {agg!r}",
                f"set `aggregator: {{type: …}}` to one of {', '.join(AGGREGATORS)}",
            )
            return None
        names = {c.name for c in children}
        weights = agg.get("weights") or {}
        if not isinstance(weights, Mapping) or not all(
            _is_number(v) and v >= 0 for v in weights.values()
        ):
            self.problem(
                f"{ptr}/aggregator/weights", "weights must map names to numbers ≥ 0", "fix"
            )
            return None
        required = agg.get("required") or ()
        if isinstance(required, str):
            required = (required,)
        unknown = sorted({str(n) for n in (*weights, *required)} - names)
        if unknown:
            self.problem(
                f"{ptr}/aggregator",
                f"aggregator names unknown members: {', '.join(unknown)}",
                f"use member names ({', '.join(sorted(names))})",
            )
            return None
        threshold = agg.get("threshold")
        if threshold is not None and not (_is_number(threshold) and 0 <= threshold <= 1):
            self.problem(f"{ptr}/aggregator/threshold", "threshold must be 0–1", "e.g. 0.8")
            return None
        out_agg: dict[str, Any] = {
            "type": agg["type"],
            "weights": {str(k): float(v) for k, v in weights.items()},
            "required": tuple(str(n) for n in required),
            "threshold": None if threshold is None else float(threshold),
        }
        if agg["type"] == "code_judge":
            key = next((k for k in ("command", "script", "path") if k in agg), None)
            command = self.command(agg.get(key) if key else None, f"{ptr}/aggregator/command")
            cwd = self.directory(agg.get("cwd"), f"{ptr}/aggregator/cwd")
            if command is None or cwd is None:
                return None
            if not self.check_script_words(command, cwd, f"{ptr}/aggregator/{key}"):
                return None
            out_agg["command"], out_agg["cwd"] = command, cwd
        if agg["type"] == "llm_judge":
            judge = self._llm_judge(agg, f"{ptr}/aggregator")
            if judge is None:
                return None
            out_agg["prompt"] = judge["prompt"]
        return {"aggregator": out_agg, "_children": children}

    def _tool_trajectory(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        mode = raw.get("mode", "any_order")
        if mode not in _MODES:
            self.problem(f"{ptr}/mode", f"unknown mode {mode!r}", f"use one of {', '.join(_MODES)}")
            return None
        expected: list[dict[str, Any]] = []
        for i, item in enumerate(raw.get("expected") or ()):
            if isinstance(item, str):
                item = {"tool": item}
            if not isinstance(item, Mapping) or not isinstance(item.get("tool"), str):
                self.problem(
                    f"{ptr}/expected/{i}", "an expected call needs `tool:`", "e.g. `- tool: Read`"
                )
                return None
            args = item.get("args", "any")
            if not (args == "any" or isinstance(args, Mapping)):
                self.problem(
                    f"{ptr}/expected/{i}/args", "args must be an object or `any`", "e.g. {path: x}"
                )
                return None
            dur = item.get("max_duration_ms")
            expected.append({"tool": item["tool"], "args": args, "max_duration_ms": dur})
        minimums = raw.get("minimums") or {}
        if not isinstance(minimums, Mapping) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in minimums.values()
        ):
            self.problem(
                f"{ptr}/minimums", "minimums must map tool names to counts", "e.g. {Read: 2}"
            )
            return None
        if mode != "any_order" and not expected:
            self.problem(
                f"{ptr}/expected", f"mode {mode} needs `expected:` calls", "list the expected calls"
            )
            return None
        if not expected and not minimums:
            self.problem(ptr, "tool_trajectory needs `expected:` or `minimums:`", "add one")
            return None
        return {
            "mode": mode,
            "expected": tuple(expected),
            "minimums": {str(k): int(v) for k, v in minimums.items()},
        }

    def _field_accuracy(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        fields = raw.get("fields")
        if not isinstance(fields, Sequence) or isinstance(fields, str) or not fields:
            self.problem(f"{ptr}/fields", "field_accuracy needs `fields:`", "e.g. `- path: total`")
            return None
        out: list[dict[str, Any]] = []
        for i, f in enumerate(fields):
            if isinstance(f, str):
                f = {"path": f}
            if not isinstance(f, Mapping) or not isinstance(f.get("path"), str):
                self.problem(f"{ptr}/fields/{i}", "a field needs `path:`", "e.g. `path: a.b[0]`")
                return None
            match = f.get("match", "exact")
            if match not in _MATCHES:
                self.problem(
                    f"{ptr}/fields/{i}/match",
                    f"unknown match {match!r}",
                    f"use one of {', '.join(_MATCHES)}",
                )
                return None
            tol = f.get("tolerance", 0.0)
            weight = f.get("weight", 1.0)
            if not _is_number(tol) or not _is_number(weight) or tol < 0 or weight < 0:
                self.problem(f"{ptr}/fields/{i}", "tolerance and weight must be numbers ≥ 0", "fix")
                return None
            entry = {
                "path": f["path"],
                "match": match,
                "required": bool(f.get("required", False)),
                "weight": float(weight),
                "tolerance": float(tol),
                "relative": bool(f.get("relative", False)),
            }
            if "expected" in f or "value" in f:
                entry["expected"] = f.get("expected", f.get("value"))
            out.append(entry)
        aggregation = raw.get("aggregation", "weighted_average")
        if aggregation not in ("weighted_average", "minimum", "all_or_nothing"):
            self.problem(
                f"{ptr}/aggregation",
                f"unknown aggregation {aggregation!r}",
                "use weighted_average, minimum or all_or_nothing",
            )
            return None
        return {"fields": tuple(out), "aggregation": aggregation}

    def _execution_metrics(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        limits: dict[str, float] = {}
        for key in _METRICS:
            if key in raw:
                v = raw[key]
                if not _is_number(v) or v < 0:
                    self.problem(f"{ptr}/{key}", f"{key} must be a number ≥ 0", "e.g. 10")
                    return None
                limits[key] = float(v)
        if not set(limits) - {"exploration_tolerance"}:
            self.problem(
                ptr,
                "execution_metrics sets no threshold",
                f"set at least one of {', '.join(k for k in _METRICS if k != 'exploration_tolerance')}",
            )
            return None
        return {"limits": limits}

    def _value(self, raw: Mapping[str, Any], ptr: str, kind: str) -> dict[str, Any] | None:
        value = raw.get("value", raw.get("pattern" if kind == "regex" else "expected"))
        if value is None or isinstance(value, (Mapping, list)):
            self.problem(f"{ptr}/value", f"{kind} needs a text `value:`", 'e.g. `value: "done"`')
            return None
        out: dict[str, Any] = {"value": str(value)}
        if kind == "regex":
            flags = raw.get("flags", "")
            if not isinstance(flags, str) or set(flags) - set("ims"):
                self.problem(f"{ptr}/flags", "flags may only hold i, m, s", "e.g. `flags: i`")
                return None
            out["flags"] = flags
            try:
                compile_re2(_re2_pattern(out["value"], flags))
            except ValueError as exc:
                self.problem(f"{ptr}/value", f"invalid pattern: {exc}", "use RE2 (Go) syntax")
                return None
        return out

    def _contains(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        return self._value(raw, ptr, "contains")

    def _equals(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        return self._value(raw, ptr, "equals")

    def _regex(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        return self._value(raw, ptr, "regex")

    def _is_json(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        return {}

    def _skill_trigger(self, raw: Mapping[str, Any], ptr: str) -> dict[str, Any] | None:
        skill = raw.get("skill", "")
        should = raw.get("should_trigger", True)
        if not isinstance(skill, str) or not isinstance(should, bool):
            self.problem(
                ptr,
                "skill must be text and should_trigger true or false",
                "e.g. `skill: csv-report`",
            )
            return None
        return {"skill": skill.strip(), "should_trigger": should}


_SCRIPT = re.compile(r"\.(py|js|mjs|cjs|ts|mts|sh|bash|rb|pl)$")
_LOOKS_LIKE_FILE = re.compile(r"[\w./-]+\.(md|txt|prompt|tmpl|j2|yaml)")
_MUSTACHE = re.compile(r"\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}")
_DOLLAR = re.compile(r"\$\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}")
_MODES = ("any_order", "in_order", "exact")
_MATCHES = ("exact", "contains", "regex", "numeric_tolerance", "date")
_METRICS = (
    "max_tool_calls",
    "max_llm_calls",
    "max_tokens",
    "max_input_tokens",
    "max_output_tokens",
    "max_cost_usd",
    "max_duration_ms",
    "target_exploration_ratio",
    "exploration_tolerance",
)


def _re2_pattern(value: str, flags: str) -> str:
    return f"(?{flags}){value}" if flags else value


def resolve_reference(value: str, base_dir: Path, *, directory: bool = False) -> Path | None:
    """AgentV's file resolution (research §f): try `value` under the eval file's directory, then
    under each parent up to the repository root (the first with `.git`) or the filesystem root; an
    absolute value is tried as it is first, then below each of those roots. None when nothing exists."""
    v = value.strip()
    candidates: list[Path] = []
    if v.startswith("/"):
        candidates.append(Path(v))
        v = v.lstrip("/")
    here = base_dir.absolute()
    for root in (here, *here.parents):
        candidates.append(root / v)
        if (root / ".git").exists():
            break
    for c in candidates:
        if c.is_dir() if directory else c.is_file():
            return c
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
    lines (`EvaluatorSpec.line`); `pointer` is the list's own pointer. A problem is
    `"<pointer>: what is wrong — the fix"`; an evaluator with a problem is left out of the specs.

    A case's `rubrics:` list becomes one evaluator by parsing
    `[{"name": "rubric", "type": "rubric", "rubrics": <the list>}]` (AgentV prepends it).
    """
    p = _Parser(base_dir=base_dir, where=where, lines=lines, pointer=pointer)
    specs = p.parse_list(raw, pointer)
    return specs, tuple(p.problems)
