"""The deterministic suite evaluators: `tool_trajectory`, `field_accuracy`, `execution_metrics`,
the text checks (`contains`, `equals`, `regex`, `is_json`) and `skill_trigger`.

Owns: how each of those types scores one finished session (docs/evaluators.md says what we chose
where the AgentEvals spec and AgentV differ).
Guarantees: pure functions of the evaluator's spec and the `SuiteContext`: no process, no judge,
no file written; a bad config is a scored miss, never an exception the caller must handle.
Never does: dispatch, weigh or gate results (`_suite` does).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from evolve_action.encoding import compile_re2, truncate_bytes
from evolve_action.grading._suite_model import (
    EvaluatorResult,
    SuiteContext,
    first_json_object,
    reference_answer,
    scored,
)
from evolve_action.harness import ToolCall
from evolve_action.specs import EvaluatorSpec

_EXPLORATION_TOOLS = frozenset(
    {"read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch", "WebFetch"}
)


__all__ = [
    "execution_metrics",
    "field_accuracy",
    "skill_trigger",
    "text_check",
    "tool_trajectory",
]

# ---------------------------------------------------------------------------------------------
# tool_trajectory

_CODEX_TOOLS: Mapping[str, frozenset[str]] = {
    "command_execution": frozenset({"Bash", "shell", "exec", "command_execution"}),
    "file_change": frozenset({"Edit", "Write", "MultiEdit", "apply_patch", "file_change"}),
    "web_search": frozenset({"WebSearch", "web_search"}),
    "mcp_tool_call": frozenset({"mcp_tool_call"}),
}
"""Claude Code tool names a Codex item also answers to (Codex reports items, not tools)."""


def _name_matches(expected: str, call: ToolCall) -> bool:
    if call.name == expected:
        return True
    if call.harness == "codex":
        if expected in _CODEX_TOOLS.get(call.name, frozenset()):
            return True
        if call.name == "mcp_tool_call":  # `mcp__<server>__<tool>` in Claude Code's spelling
            server, tool = call.input.get("server"), call.input.get("tool")
            return expected == f"mcp__{server}__{tool}"
    return False


def _args_match(expected: Any, actual: Any) -> bool:
    """Partial (superset) match: every expected key present and equal; `any` matches anything."""
    if expected == "any":
        return True
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return False
        return all(k in actual and _args_match(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected)
            and all(_args_match(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return bool(expected == actual)


def _call_matches(item: Mapping[str, Any], call: ToolCall) -> bool:
    return _name_matches(str(item["tool"]), call) and _args_match(
        item.get("args", "any"), call.input
    )


def tool_trajectory(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    calls = ctx.transcript.tool_calls
    mode = spec.config["mode"]
    expected = tuple(spec.config["expected"])
    minimums: Mapping[str, int] = spec.config["minimums"]
    hits: list[str] = []
    misses: list[str] = []
    for tool, need in minimums.items():
        n = sum(1 for c in calls if _name_matches(tool, c))
        (hits if n >= need else misses).append(f"{tool}: called {n}× (minimum {need})")
    checks = len(minimums)
    if mode == "any_order":
        free = list(calls)
        for item in expected:
            found = next((c for c in free if _call_matches(item, c)), None)
            if found is not None:
                free.remove(found)
                hits.append(f"{item['tool']} called")
            else:
                misses.append(f"{item['tool']} not called with the expected args")
        checks += len(expected)
    elif mode == "in_order":
        pos = 0
        for item in expected:
            idx = next((i for i in range(pos, len(calls)) if _call_matches(item, calls[i])), None)
            if idx is None:
                misses.append(f"{item['tool']}: not found in order (after call {pos})")
            else:
                hits.append(f"{item['tool']} at call {idx + 1}")
                pos = idx + 1
        checks += len(expected)
    else:  # exact: same calls, same order, nothing extra
        for i, item in enumerate(expected):
            if i < len(calls) and _call_matches(item, calls[i]):
                hits.append(f"{item['tool']} at call {i + 1}")
            else:
                got = calls[i].name if i < len(calls) else "nothing"
                misses.append(f"call {i + 1}: expected {item['tool']}, got {got}")
        extra = len(calls) - len(expected)
        if extra > 0:
            misses.append(
                f"{extra} extra call(s): {', '.join(c.name for c in calls[len(expected) :])}"
            )
        checks += max(len(expected), len(calls))
    score = len(hits) / checks if checks else 1.0
    return scored(spec, score, hits=hits, misses=misses)


# ---------------------------------------------------------------------------------------------
# field_accuracy

_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _lookup(value: Any, path: str) -> tuple[bool, Any]:
    for m in _PATH_PART.finditer(path):
        key, index = m.group(1), m.group(2)
        if index is not None or (key is not None and key.isdigit() and isinstance(value, list)):
            i = int(index if index is not None else key)
            if not isinstance(value, list) or i >= len(value):
                return False, None
            value = value[i]
        elif isinstance(value, Mapping) and key in value:
            value = value[key]
        else:
            return False, None
    return True, value


def _as_json(value: Any) -> Any:
    if isinstance(value, str):
        return first_json_object(value)
    return value


def _date(value: Any) -> str | None:
    text = str(value).strip()
    for fmt in (
        "%Y-%m-%d",
        "%Y/%m/%d",
        "%m/%d/%Y",
        "%d.%m.%Y",
        "%B %d, %Y",
        "%b %d, %Y",
        "%d %B %Y",
    ):
        try:
            return (
                datetime.datetime.strptime(text[:30], fmt)
                .replace(tzinfo=datetime.UTC)
                .date()
                .isoformat()
            )
        except ValueError:
            continue
    with contextlib.suppress(ValueError):
        return datetime.datetime.fromisoformat(text).date().isoformat()
    return None


def _field_ok(f: Mapping[str, Any], want: Any, got: Any) -> bool:
    match = f["match"]
    if match == "exact":
        return bool(want == got) or (not isinstance(want, Mapping | list) and str(want) == str(got))
    if match == "contains":
        return str(want) in str(got)
    if match == "regex":
        try:
            return compile_re2(str(want)).search(str(got)) is not None
        except ValueError:
            return False
    if match == "numeric_tolerance":
        try:
            a, b = float(want), float(got)
        except (TypeError, ValueError):
            return False
        limit = float(f["tolerance"]) * abs(a) if f["relative"] else float(f["tolerance"])
        return abs(a - b) <= limit
    wd, gd = _date(want), _date(got)
    return wd is not None and wd == gd


def field_accuracy(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    candidate = _as_json(ctx.transcript.final_text)
    reference = _as_json(reference_answer(ctx))
    if candidate is None:
        return scored(spec, 0.0, misses=("the answer holds no JSON object",))
    hits: list[str] = []
    misses: list[str] = []
    scores: list[tuple[float, float]] = []
    required_missed: list[str] = []
    for f in spec.config["fields"]:
        path = f["path"]
        if "expected" in f:
            has_want, want = True, f["expected"]
        else:
            has_want, want = _lookup(reference, path) if reference is not None else (False, None)
        has_got, got = _lookup(candidate, path)
        if not has_want:
            misses.append(f"{path}: no expected value")
            ok = False
        elif not has_got:
            misses.append(f"{path}: missing")
            ok = False
        else:
            ok = _field_ok(f, want, got)
            text = f"{path}: {truncate_bytes(json.dumps(got, ensure_ascii=False), 60)}"
            (hits if ok else misses).append(
                text
                if ok
                else f"{text} ≠ {truncate_bytes(json.dumps(want, ensure_ascii=False), 60)}"
            )
        scores.append((1.0 if ok else 0.0, f["weight"]))
        if not ok and f["required"]:
            required_missed.append(path)
    agg = spec.config["aggregation"]
    if agg == "minimum":
        score = min(s for s, _ in scores)
    elif agg == "all_or_nothing":
        score = 1.0 if all(s == 1.0 for s, _ in scores) else 0.0
    else:
        total = sum(w for _, w in scores)
        score = sum(s * w for s, w in scores) / total if total else 0.0
    result = scored(spec, score, hits=hits, misses=misses)
    if required_missed:
        result = replace(result, verdict="fail", required_missed=tuple(required_missed))
    return result


# ---------------------------------------------------------------------------------------------
# execution_metrics


def execution_metrics(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    t = ctx.transcript
    limits: Mapping[str, float] = spec.config["limits"]
    usage = t.usage
    fresh = usage.prompt_tokens if usage is not None else None
    out_tokens = usage.output_tokens if usage is not None else None
    measured: dict[str, float | None] = {
        "max_tool_calls": len(t.tool_calls),
        "max_llm_calls": t.num_turns or None,
        "max_tokens": fresh + out_tokens if fresh is not None and out_tokens is not None else None,
        "max_input_tokens": fresh,
        "max_output_tokens": out_tokens,
        "max_cost_usd": t.total_cost_usd,
        "max_duration_ms": round(t.duration_seconds * 1000) if t.duration_seconds else None,
    }
    hits: list[str] = []
    misses: list[str] = []
    for key, limit in limits.items():
        if key in ("target_exploration_ratio", "exploration_tolerance"):
            continue
        actual = measured[key]
        if actual is None:
            misses.append(f"{key}: not measured")
        elif actual <= limit:
            hits.append(f"{key}: {actual:g} ≤ {limit:g}")
        else:
            misses.append(f"{key}: {actual:g} > {limit:g}")
    if "target_exploration_ratio" in limits:
        target = limits["target_exploration_ratio"]
        tol = limits.get("exploration_tolerance", 0.2)
        if not t.tool_calls:
            misses.append("target_exploration_ratio: no tool calls")
        else:
            ratio = sum(1 for c in t.tool_calls if c.name in _EXPLORATION_TOOLS) / len(t.tool_calls)
            line = f"exploration ratio {ratio:.2f} (target {target:g} ± {tol:g})"
            (hits if abs(ratio - target) <= tol else misses).append(line)
    n = len(hits) + len(misses)
    return scored(spec, len(hits) / n if n else 0.0, hits=hits, misses=misses)


# ---------------------------------------------------------------------------------------------
# deterministic text checks and skill_trigger


def text_check(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    text = ctx.transcript.final_text
    value = str(spec.config.get("value", ""))
    if spec.type == "contains":
        ok, what = value in text, f'contains "{truncate_bytes(value, 60)}"'
    elif spec.type == "equals":
        ok, what = text.strip() == value.strip(), f'equals "{truncate_bytes(value, 60)}"'
    elif spec.type == "regex":
        flags = str(spec.config.get("flags", ""))
        try:
            rx = compile_re2(f"(?{flags}){value}" if flags else value)
        except ValueError as exc:
            return scored(spec, 0.0, misses=(f"invalid pattern: {exc}",))
        ok, what = rx.search(text) is not None, f"matches /{truncate_bytes(value, 60)}/"
    else:
        try:
            json.loads(text)
            ok = True
        except ValueError:
            ok = False
        what = "is JSON"
    if spec.config.get("negate"):
        ok, what = not ok, f"not {what}"
    return scored(
        spec, 1.0 if ok else 0.0, hits=(what,) if ok else (), misses=() if ok else (what,)
    )


def skill_trigger(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    """AgentEvals' `skill-trigger`: only the session's **first** tool call counts.

    Chosen over a Tier 1 trigger query on purpose: the evaluator belongs to a case that already ran
    through the agent, so it grades that same session (one run, same prompt, same workspace) as
    the spec defines it (AE-HEAD `c8031b4`, skill-creator's first-call rule). A Tier 1 query is a
    different measurement (fresh sessions, `--runs` repeats, a hit anywhere in the stream); evolve
    already runs Tier 1 from `triggers.<ext>`, so mapping this onto it would change its meaning.
    Claude Code: `Skill` whose `skill` input contains the name, or `Read` whose `file_path` does;
    Codex: the first item mentioning `<skill>/SKILL.md`.
    """
    skill = str(spec.config.get("skill") or ctx.skill_name)
    should = bool(spec.config.get("should_trigger", True))
    calls = ctx.transcript.tool_calls
    first = calls[0] if calls else None
    hit = False
    if first is not None:
        if first.harness == "codex":
            hit = f"{skill}/SKILL.md" in first.raw_input
        elif first.name == "Skill":
            hit = skill in str(first.input.get("skill", ""))
        elif first.name == "Read":
            hit = skill in str(first.input.get("file_path", ""))
    described = f"first call {first.name if first else 'none'}; {skill} {'invoked' if hit else 'not invoked'}"
    ok = hit == should
    return scored(
        spec, 1.0 if ok else 0.0, hits=(described,) if ok else (), misses=() if ok else (described,)
    )
