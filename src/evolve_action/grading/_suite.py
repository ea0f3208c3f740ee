"""Grading of AgentV / AgentEvals suite cases: dispatch over every evaluator type, the judges,
composites and required gates (the values are in `_suite_model`, the deterministic evaluators in
`_suite_checks`).

Owns: running `specs.EvaluatorSpec`s against one finished agent session (`grade_suite_case`), the
verdict bands of the spec (`PASS_THRESHOLD` 0.8, `BORDERLINE_THRESHOLD` 0.6; borderline is not a
pass unless `SuiteContext.borderline_passes`), required gates, the `code_judge` stdin superset
(`judge_payload`), the judge templates (`DEFAULT_JUDGE_TEMPLATE`, `OUTPUT_SCHEMA`) and the mapping
of a grade into evolve's expectation entries (`suite_expectations`). docs/evaluators.md says, per
type, what runs and where we chose between the spec and AgentV.

Guarantees: grading never raises for a bad evaluator, a failing judge script or a judge outage: it
is a scored result (0, with the reason in `misses`), `skipped` (a missing toolchain, a `target`
proxy) or, for judge outages, a result with `error` set (`judge_error(grade)`). Judge programs run
through `command` assertions' runner (`run_confined`: the agent user and the sandbox, only the
workspace and a private temp dir writable, every process killed at the case timeout): argv
without a shell (a string through `sh -lc`), the allowlisted environment (`harness.safe_env`, plus
`AGENTV_WORKSPACE_PATH`), cwd the eval file's directory.

Never does: print, read `os.environ` (the caller passes `environ`), or write to the workspace.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evolve_action.encoding import strip_ansi, truncate_bytes
from evolve_action.grading._assertions import run_confined
from evolve_action.grading._judge import Judge, JudgeRequest
from evolve_action.grading._suite_checks import (
    execution_metrics,
    field_accuracy,
    skill_trigger,
    text_check,
    tool_trajectory,
)
from evolve_action.grading._suite_model import (
    BORDERLINE_THRESHOLD,
    PASS_THRESHOLD,
    EvaluatorResult,
    SuiteContext,
    SuiteGrade,
    first_json_object,
    reference_answer,
    scored,
    skipped,
    verdict_for,
)
from evolve_action.harness import ToolCall, safe_env
from evolve_action.results import GradedAssertion
from evolve_action.specs import EvaluatorSpec

__all__ = [
    "DEFAULT_EVALUATOR",
    "grade_suite_case",
    "judge_error",
    "suite_expectations",
]

# ---------------------------------------------------------------------------------------------
# Processes: code judges, code aggregators, executable prompts


@dataclass(frozen=True, slots=True)
class _Proc:
    code: int
    stdout: str
    stderr: str
    failure: str = ""
    """Set when the process could not run or was killed (`Process timed out after N ms`)."""
    missing: str = ""
    """The program when it is not installed (the evaluator is skipped, not failed)."""


def _argv(command: tuple[str, ...] | str | Sequence[str]) -> list[str]:
    """argv words run directly; a string through a login shell (AgentV: `sh -lc`)."""
    if isinstance(command, str):
        return ["sh", "-lc", command]
    return list(command)


async def _run_process(
    command: tuple[str, ...] | str, *, stdin: str, cwd: Path, ctx: SuiteContext
) -> _Proc:
    """Run a judge program like `command` assertions run: allowlisted environment, the sandbox
    (writable: the workspace and a private temp dir), a new process group killed on timeout."""
    argv = _argv(command)
    env = safe_env(ctx.environ)
    env["AGENTV_WORKSPACE_PATH"] = str(ctx.workspace)
    if shutil.which(argv[0], path=env.get("PATH", os.defpath)) is None and not (
        "/" in argv[0] and (cwd / argv[0]).is_file()
    ):
        return _Proc(-1, "", "", missing=argv[0])
    run = await run_confined(
        argv,
        cwd=cwd,
        workspace=ctx.workspace,
        env=env,
        environ=ctx.environ,
        timeout_seconds=ctx.timeout_seconds,
        stdin=stdin.encode(),
        tmp_prefix="judge-tmp.",
    )
    if run.error:
        return _Proc(-1, "", "", failure=f"cannot start {argv[0]}: {run.error}")
    if run.timed_out:
        ms = int(ctx.timeout_seconds * 1000)
        return _Proc(-1, "", "", failure=f"Process timed out after {ms} ms")
    return _Proc(
        run.code,
        strip_ansi(run.stdout.decode("utf-8", "replace")),
        strip_ansi(run.stderr.decode("utf-8", "replace")),
    )


# ---------------------------------------------------------------------------------------------
# What judges see: output messages, trace summary, the code_judge stdin superset


def _tool_calls(ctx: SuiteContext) -> tuple[ToolCall, ...]:
    return ctx.transcript.tool_calls


def output_messages(ctx: SuiteContext) -> list[dict[str, Any]]:
    """The session as AgentV's `output_messages`: one assistant message with every tool call."""
    calls = [{"tool": c.name, "input": dict(c.input), "id": c.id} for c in _tool_calls(ctx)]
    return [{"role": "assistant", "content": ctx.transcript.final_text, "tool_calls": calls}]


def trace_summary(ctx: SuiteContext) -> dict[str, Any]:
    """AgentV's `trace_summary` (snake_case keys) from the measured session."""
    t = ctx.transcript
    by_name: dict[str, int] = {}
    for c in t.tool_calls:
        by_name[c.name] = by_name.get(c.name, 0) + 1
    usage = t.usage
    tokens: dict[str, Any] | None = None
    if usage is not None:
        tokens = {
            "input": usage.prompt_tokens,
            "output": usage.output_tokens or 0,
            "cached": usage.cache_read_input_tokens,
        }
    return {
        "event_count": len(t.tool_calls),
        "tool_names": sorted(by_name),
        "tool_calls_by_name": by_name,
        "error_count": 1 if t.error is not None or t.is_error else 0,
        "token_usage": tokens,
        "cost_usd": t.total_cost_usd,
        "duration_ms": round(t.duration_seconds * 1000),
        "tool_durations": {},
        "llm_call_count": t.num_turns,
    }


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def _snake(key: str) -> str:
    if key[:1].isupper():  # AgentV keeps keys that start upper-case (tool names such as `Read`)
        return key
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), key)


def _deep(value: Any, fn: Any) -> Any:
    if isinstance(value, Mapping):
        return {fn(str(k)): _deep(v, fn) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_deep(v, fn) for v in value]
    return value


def judge_payload(ctx: SuiteContext, config: Mapping[str, Any]) -> dict[str, Any]:
    """The `code_judge` stdin: a superset of AV-FEB's snake_case keys, AgentEvals 1.0's camelCase
    keys and AgentV's later names (`answer`, `criteria`, `output`, `expected_output`, `input`,
    `trace`), so a script written for any of them finds its fields (research §b.2)."""
    summary = trace_summary(ctx)
    snake: dict[str, Any] = {
        "question": ctx.input_text,
        "expected_outcome": ctx.criteria,
        "expected_messages": [dict(m) for m in ctx.expected_messages],
        "reference_answer": reference_answer(ctx),
        "candidate_answer": ctx.transcript.final_text,
        "output_messages": output_messages(ctx),
        "guideline_files": [str(p) for p in ctx.guideline_files],
        "input_files": [str(p) for p in ctx.input_files],
        "input_messages": [dict(m) for m in ctx.input_messages],
        "trace_summary": summary,
        "file_changes": None,
        "workspace_path": str(ctx.workspace),
        "config": {**dict(config), **_deep(dict(config), _snake)},
    }
    payload = dict(snake)
    for key, value in snake.items():
        camel = _camel(key)
        if camel != key:
            payload[camel] = _deep(value, _camel) if key == "trace_summary" else value
    payload["config"] = {**snake["config"], **_deep(dict(config), _camel)}
    payload.update(
        {
            "answer": ctx.transcript.final_text,
            "criteria": ctx.criteria,
            "output": output_messages(ctx),
            "expected_output": payload["expected_messages"] or ctx.expected_output,
            "input": payload["input_messages"],
            "trace": summary,
        }
    )
    return payload


# ---------------------------------------------------------------------------------------------
# Reply parsing (code judges and LLM judges)


def _strings(value: Any, cap: int | None = None) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    out = tuple(v for v in value if isinstance(v, str) and v.strip())
    return out[:cap] if cap is not None else out


def _score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    f = float(value)
    return 0.0 if math.isnan(f) else min(1.0, max(0.0, f))


# ---------------------------------------------------------------------------------------------
# code_judge


async def _code_judge(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    if spec.config.get("target") is not None:
        return skipped(spec, "code_judge `target` proxy is not available in evolve-action")
    stdin = json.dumps(judge_payload(ctx, spec.config.get("config", {})), indent=2)
    proc = await _run_process(
        spec.config["command"], stdin=stdin, cwd=Path(spec.config["cwd"]), ctx=ctx
    )
    return _from_judge_process(spec, proc)


def _from_judge_process(spec: EvaluatorSpec, proc: _Proc) -> EvaluatorResult:
    if proc.missing:
        return skipped(spec, f"{proc.missing} is not installed")
    if proc.failure:
        return scored(spec, 0.0, misses=(f"Code evaluator failed: {proc.failure}",))
    if proc.code != 0:
        tail = proc.stderr.strip()[-2000:]
        return scored(
            spec,
            0.0,
            misses=(f"Code evaluator failed: Code evaluator exited with code {proc.code}: {tail}",),
        )
    reply = first_json_object(proc.stdout) if proc.stdout.strip().startswith("{") else None
    if reply is None:  # AgentV: JSON.parse(stdout.trim()) failed → score 0
        return scored(spec, 0.0, reasoning="the judge printed no JSON object on stdout")
    return scored(
        spec,
        _score(reply.get("score")),
        hits=_strings(reply.get("hits")),
        misses=_strings(reply.get("misses")),
        reasoning=str(reply.get("reasoning") or ""),
    )


# ---------------------------------------------------------------------------------------------
# llm_judge

OUTPUT_SCHEMA = (
    "You must respond with a single JSON object matching this schema:\n\n"
    "{\n"
    '  "score": <number between 0.0 and 1.0>,\n'
    '  "hits": [<array of strings, max 4 items, brief specific achievements>],\n'
    '  "misses": [<array of strings, max 4 items, brief specific failures or omissions, empty if none>],\n'
    '  "reasoning": "<string, concise explanation for the score, 1-2 sentences max>"\n'
    "}"
)
"""AgentV's judge system prompt (`buildOutputSchema`), sent with every `llm_judge`."""

DEFAULT_JUDGE_TEMPLATE = """You are an expert evaluator. Your goal is to grade the candidate_answer based on how well it achieves the expected_outcome for the original task.

Use the reference_answer as a gold standard for a high-quality response (if provided). The reference_answer may be a simple text response, or it may contain a sequence of expected agent messages, including tool calls. The candidate_answer does not need to match it verbatim, but should capture the key points and follow the same spirit.

Be concise and focused in your evaluation. Provide succinct, specific feedback rather than verbose explanations.

[[ ## expected_outcome ## ]]
{{expected_outcome}}

[[ ## question ## ]]
{{question}}

[[ ## reference_answer ## ]]
{{reference_answer}}

[[ ## candidate_answer ## ]]
{{candidate_answer}}"""
"""AgentV's default judge template (`DEFAULT_EVALUATOR_TEMPLATE`, AV-FEB)."""

JUDGE_ATTEMPTS = 3
"""Judge replies tried before an `llm_judge` scores 0 (AgentV: 3)."""


def template_variables(ctx: SuiteContext) -> dict[str, str]:
    """Every template variable of AgentV and both spec versions (`{{answer}}`, `{{criteria}}`…)."""
    answer = ctx.transcript.final_text
    return {
        "question": ctx.input_text,
        "expected_outcome": ctx.criteria,
        "criteria": ctx.criteria,
        "reference_answer": reference_answer(ctx),
        "candidate_answer": answer,
        "answer": answer,
        "input_messages": json.dumps([dict(m) for m in ctx.input_messages], ensure_ascii=False),
        "expected_messages": json.dumps(
            [dict(m) for m in ctx.expected_messages], ensure_ascii=False
        ),
        "expected_output": reference_answer(ctx),
        "output_messages": json.dumps(output_messages(ctx), ensure_ascii=False),
        "file_changes": "",
        "note": "",
    }


def render(template: str, variables: Mapping[str, str], *, syntax: str = "mustache") -> str:
    """Substitute `{{ name }}` (or AgentV v2's `${name}`); unknown names are left as written."""
    rx = _DOLLAR_VAR if syntax == "dollar" else _MUSTACHE_VAR

    def sub(m: re.Match[str]) -> str:
        return variables.get(m.group(1), m.group(0))

    return rx.sub(sub, template)


_MUSTACHE_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_DOLLAR_VAR = re.compile(r"\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}")


async def _ask_json(
    judge: Judge, *, system: str, prompt: str, ctx: SuiteContext
) -> tuple[Mapping[str, Any] | None, str]:
    """Up to `JUDGE_ATTEMPTS` judge turns until one reply holds a JSON object; `(None, why)` on
    an outage (`why` set) or after the attempts (`why` empty)."""
    for _ in range(JUDGE_ATTEMPTS):
        text, why = await judge.complete(
            system=system, prompt=prompt, limit_seconds=ctx.timeout_seconds
        )
        if why:
            return None, why
        reply = first_json_object(text)
        if reply is not None:
            return reply, ""
    return None, ""


async def _llm_judge(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    if ctx.judge is None:
        return _judge_error(spec, "judge unavailable")
    cfg = spec.config
    variables = template_variables(ctx)
    system = OUTPUT_SCHEMA
    syntax = str(cfg.get("syntax", "default"))
    template = str(cfg.get("prompt", ""))
    if cfg.get("prompt_command") is not None:
        proc = await _run_process(
            cfg["prompt_command"],
            stdin=json.dumps(judge_payload(ctx, cfg.get("prompt_config", {})), indent=2),
            cwd=Path(cfg["prompt_cwd"]),
            ctx=ctx,
        )
        if proc.missing:
            return skipped(spec, f"{proc.missing} is not installed")
        if proc.failure or proc.code != 0:
            why = proc.failure or f"exited with code {proc.code}: {proc.stderr.strip()[-500:]}"
            return scored(spec, 0.0, misses=(f"prompt script failed: {why}",))
        template, syntax = proc.stdout, "mustache"
    if syntax == "default" or not template.strip():
        prompt = render(DEFAULT_JUDGE_TEMPLATE, variables)
    elif syntax == "instructions":  # no variables at all: AgentV v2 made it the system prompt
        system = f"{template.strip()}\n\n{OUTPUT_SCHEMA}"
        prompt = render(DEFAULT_JUDGE_TEMPLATE, variables)
    else:
        prompt = render(template, variables, syntax=syntax)
    reply, why = await _ask_json(ctx.judge, system=system, prompt=prompt, ctx=ctx)
    if why:
        return _judge_error(spec, why)
    if reply is None:
        return scored(
            spec, 0.0, misses=(f"the judge gave no JSON verdict in {JUDGE_ATTEMPTS} attempts",)
        )
    return scored(
        spec,
        _score(reply.get("score")),
        hits=_strings(reply.get("hits"), 4),
        misses=_strings(reply.get("misses"), 4),
        reasoning=str(reply.get("reasoning") or ""),
    )


def _judge_error(spec: EvaluatorSpec, why: str) -> EvaluatorResult:
    reason = f"judge error: {why}"
    return replace(scored(spec, 0.0, misses=(reason,)), error=reason)


# ---------------------------------------------------------------------------------------------
# rubric


async def _rubric(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    if ctx.judge is None:
        return _judge_error(spec, "judge unavailable")
    rubrics = tuple(spec.config["rubrics"])
    if spec.config.get("mode") == "score_range":
        return await _score_rubric(spec, rubrics, ctx)
    request = JudgeRequest(
        assertions=tuple(str(r["outcome"]) for r in rubrics),
        final_text=ctx.transcript.final_text,
        expected_output=reference_answer(ctx),
        workspace=ctx.workspace,
        timeout=ctx.timeout_seconds,
    )
    verdicts, why = await ctx.judge.grade_checked(request)
    if why:
        return _judge_error(spec, why)
    hits: list[str] = []
    misses: list[str] = []
    got = total = 0.0
    required_missed: list[str] = []
    for r, v in zip(rubrics, verdicts, strict=True):
        line = f"[{r['id']}] {r['outcome']}: {v.evidence}"
        total += r["weight"]
        if v.passed:
            got += r["weight"]
            hits.append(line)
        else:
            misses.append(line)
            if r["required"]:
                required_missed.append(str(r["id"]))
    result = scored(spec, got / total if total else 0.0, hits=hits, misses=misses)
    if required_missed:
        result = replace(result, verdict="fail", required_missed=tuple(required_missed))
    return result


def _score_prompt(rubrics: Sequence[Mapping[str, Any]], ctx: SuiteContext) -> str:
    lines = []
    for r in rubrics:
        lines.append(f"- id: {r['id']}\n  criterion: {r['outcome']}")
        bounds = [lo for lo, _ in r["score_ranges"]] + [11]
        for (lo, text), hi in zip(r["score_ranges"], bounds[1:], strict=True):
            lines.append(f"  {lo}-{hi - 1}: {text}" if hi - 1 > lo else f"  {lo}: {text}")
    return (
        "Score the candidate answer against each criterion with an integer from 0 to 10, using "
        "the score ranges given for it.\n\n[[ ## criteria ## ]]\n"
        + "\n".join(lines)
        + f"\n\n[[ ## question ## ]]\n{ctx.input_text}\n\n[[ ## reference_answer ## ]]\n"
        f"{reference_answer(ctx)}\n\n[[ ## candidate_answer ## ]]\n{ctx.transcript.final_text}\n"
    )


_SCORE_SCHEMA = (
    "You must respond with a single JSON object matching this schema:\n\n"
    '{\n  "checks": [{"id": "<criterion id>", "score": <integer 0-10>, "reasoning": "<one '
    'sentence>"}],\n  "overall_reasoning": "<one sentence>"\n}'
)


async def _score_rubric(
    spec: EvaluatorSpec, rubrics: Sequence[Mapping[str, Any]], ctx: SuiteContext
) -> EvaluatorResult:
    assert ctx.judge is not None
    reply, why = await _ask_json(
        ctx.judge, system=_SCORE_SCHEMA, prompt=_score_prompt(rubrics, ctx), ctx=ctx
    )
    if why:
        return _judge_error(spec, why)
    checks = reply.get("checks") if reply is not None else None
    if not isinstance(checks, list):
        return _judge_error(spec, f"no JSON scores in {JUDGE_ATTEMPTS} attempts")
    by_id = {str(c.get("id")): c for c in checks if isinstance(c, Mapping)}
    hits: list[str] = []
    misses: list[str] = []
    got = total = 0.0
    required_missed: list[str] = []
    for r in rubrics:
        check = by_id.get(str(r["id"]))
        raw = check.get("score") if check is not None else None
        points = (
            min(10.0, max(0.0, float(raw)))
            if isinstance(raw, int | float) and not isinstance(raw, bool)
            else 0.0
        )
        reason = str(check.get("reasoning") or "") if check is not None else "not scored"
        line = f"[{r['id']}] {points:g}/10 {r['outcome']}: {reason}"
        total += r["weight"]
        got += r["weight"] * points / 10
        (hits if points >= 7 else misses).append(line)
        floor = r["required_min_score"]
        if (floor is not None and points < floor) or (
            floor is None and r["required"] and points == 0
        ):
            required_missed.append(str(r["id"]))
    reasoning = str(reply.get("overall_reasoning") or "") if reply is not None else ""
    result = scored(
        spec, got / total if total else 0.0, hits=hits, misses=misses, reasoning=reasoning
    )
    if required_missed:
        result = replace(result, verdict="fail", required_missed=tuple(required_missed))
    return result


# ---------------------------------------------------------------------------------------------
# composite


async def _composite(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    children = tuple([await _run_one(c, ctx) for c in spec.children])
    agg = spec.config["aggregator"]
    kind = agg["type"]
    counted = [c for c in children if c.verdict != "skipped"]
    weights = {c.name: agg["weights"].get(c.name, c.weight) for c in counted}
    hits = tuple(f"{c.name}: {c.score:.2f}" for c in counted if c.verdict == "pass")
    misses = tuple(f"{c.name}: {c.score:.2f}" for c in counted if c.verdict != "pass")

    def done(score: float, reasoning: str, **kw: Any) -> EvaluatorResult:
        r = scored(spec, score, hits=kw.get("hits", hits), misses=kw.get("misses", misses))
        return replace(r, children=children, reasoning=reasoning, **kw.get("extra", {}))

    if not counted:
        return replace(skipped(spec, "every member was skipped"), children=children)
    wsum = sum(weights.values())
    average = sum(c.score * weights[c.name] for c in counted) / wsum if wsum else 0.0
    if kind == "weighted_average":
        return done(average, f"weighted average {average:.2f}")
    if kind == "minimum":
        low = min(counted, key=lambda c: c.score)
        return done(low.score, f"minimum: {low.name}")
    if kind == "maximum":
        high = max(counted, key=lambda c: c.score)
        return done(high.score, f"maximum: {high.name}")
    if kind == "safety_gate":
        gates = set(agg["required"]) or {c.name for c in counted if c.required is not False}
        broken = [c.name for c in counted if c.name in gates and c.score < BORDERLINE_THRESHOLD]
        if broken:
            return done(0.0, f"safety gate failed: {', '.join(broken)}")
        return done(average, f"safety gates held; weighted average {average:.2f}")
    if kind == "all_or_nothing":
        floor = PASS_THRESHOLD if agg["threshold"] is None else agg["threshold"]
        below = [c.name for c in counted if c.score < floor]
        if below:
            return done(0.0, f"below {floor:g}: {', '.join(below)}")
        return done(average, f"all members ≥ {floor:g}")
    if kind == "threshold":
        floor = 0.5 if agg["threshold"] is None else agg["threshold"]
        passing = sum(weights[c.name] for c in counted if c.verdict == "pass")
        share = passing / wsum if wsum else 0.0
        return done(
            1.0 if share >= floor else share, f"{share:.2f} of members passed (needs {floor:g})"
        )
    results = {
        c.name: {
            "score": c.score,
            "verdict": c.verdict,
            "hits": list(c.hits),
            "misses": list(c.misses),
            "reasoning": c.reasoning,
        }
        for c in children
    }
    if kind == "code_judge":
        proc = await _run_process(
            agg["command"],
            stdin=json.dumps({"results": results}, indent=2),
            cwd=Path(agg["cwd"]),
            ctx=ctx,
        )
        r = _from_judge_process(spec, proc)
        return replace(r, children=children)
    # llm_judge aggregator
    if ctx.judge is None:
        return replace(_judge_error(spec, "judge unavailable"), children=children)
    template = agg.get("prompt") or _AGGREGATE_TEMPLATE
    prompt = render(
        template,
        {**template_variables(ctx), "EVALUATOR_RESULTS_JSON": json.dumps(results, indent=2)},
    )
    reply, why = await _ask_json(ctx.judge, system=OUTPUT_SCHEMA, prompt=prompt, ctx=ctx)
    if why:
        return replace(_judge_error(spec, why), children=children)
    if reply is None:
        return done(0.0, f"the judge gave no JSON verdict in {JUDGE_ATTEMPTS} attempts")
    return done(
        _score(reply.get("score")),
        str(reply.get("reasoning") or ""),
        hits=_strings(reply.get("hits"), 4),
        misses=_strings(reply.get("misses"), 4),
    )


_AGGREGATE_TEMPLATE = """Combine the results of these evaluators of one answer into one final score.

[[ ## evaluator_results ## ]]
{{EVALUATOR_RESULTS_JSON}}"""


# ---------------------------------------------------------------------------------------------
# Dispatch


async def _run_one(spec: EvaluatorSpec, ctx: SuiteContext) -> EvaluatorResult:
    try:
        if spec.type == "code_judge":
            return await _code_judge(spec, ctx)
        if spec.type == "llm_judge":
            return await _llm_judge(spec, ctx)
        if spec.type == "rubric":
            return await _rubric(spec, ctx)
        if spec.type == "composite":
            return await _composite(spec, ctx)
        if spec.type == "tool_trajectory":
            return tool_trajectory(spec, ctx)
        if spec.type == "field_accuracy":
            return field_accuracy(spec, ctx)
        if spec.type == "execution_metrics":
            return execution_metrics(spec, ctx)
        if spec.type in ("contains", "equals", "regex", "is_json"):
            return text_check(spec, ctx)
        if spec.type == "skill_trigger":
            return skill_trigger(spec, ctx)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # an evaluator bug is a failed evaluator, never a crashed run
        return scored(spec, 0.0, misses=(f"Evaluator '{spec.name}' failed: {exc}",))
    return skipped(spec, f"unknown evaluator type {spec.type}")


def _gate_ok(r: EvaluatorResult) -> bool:
    """False when a `required` evaluator scored below its gate (true: 0.8; a number: that number)
    or missed a required criterion/field (spec 1.0: a required criterion unmet fails the case)."""
    if r.verdict == "skipped":
        return True
    if r.required_missed:
        return False
    if r.required is False:
        return True
    threshold = PASS_THRESHOLD if r.required is True else float(r.required)
    return r.score >= threshold


DEFAULT_EVALUATOR = EvaluatorSpec(
    name="llm_judge", type="llm_judge", config={"prompt": "", "syntax": "default"}
)
"""What a case with no evaluators and no rubrics gets (AgentV: the default `llm_judge`)."""


async def grade_suite_case(evaluators: Sequence[EvaluatorSpec], ctx: SuiteContext) -> SuiteGrade:
    """Grade one finished case.

    Evaluators run in order (an empty list runs `DEFAULT_EVALUATOR`). The case score is the
    weighted mean of the evaluators that were not skipped (`weight: 0` excludes one); the verdict
    is the spec's band of that score, and `fail` whenever a required gate is missed (the score is
    kept: AgentV ≥ 2026-02-21 zeroes it, the spec only fails the case). A case whose evaluators were
    all skipped is `skipped` and not passed. `passed` is `pass` (or `borderline` when
    `ctx.borderline_passes`).
    """
    specs = tuple(evaluators) or (DEFAULT_EVALUATOR,)
    results = tuple([await _run_one(s, ctx) for s in specs])
    scored = [r for r in results if r.verdict != "skipped" and r.weight > 0]
    total = sum(r.weight for r in scored)
    score = sum(r.score * r.weight for r in scored) / total if total else 0.0
    verdict = verdict_for(score) if scored else "skipped"
    if not all(_gate_ok(r) for r in results):
        verdict = "fail"
    passed = verdict == "pass" or (verdict == "borderline" and ctx.borderline_passes)
    return SuiteGrade(score=score, verdict=verdict, passed=passed, results=results)


def judge_error(grade: SuiteGrade) -> str:
    """The first `judge error: …` of any evaluator (members included); `""` when the judge answered."""
    stack = list(grade.results)
    while stack:
        r = stack.pop(0)
        if r.error:
            return r.error
        stack.extend(r.children)
    return ""


def _evidence(r: EvaluatorResult, *, detail: str = "") -> str:
    head = f"score {r.score:.2f} w={r.weight:g}"
    if r.required is True:
        head += " required"
    elif r.required is not False:
        head += f" required≥{r.required:g}"
    if r.verdict in ("borderline", "skipped"):
        head += f" {r.verdict}"
    parts = [head]
    if detail:
        parts.append(detail)
    else:
        if r.hits:
            parts.append("hits: " + "; ".join(r.hits))
        if r.misses:
            parts.append("misses: " + "; ".join(r.misses))
    if r.reasoning:
        parts.append(r.reasoning)
    return truncate_bytes(" — ".join(parts), 200)


_CRITERION = re.compile(r"^\[([^\]]+)\] (.*)$", re.S)


def suite_expectations(grade: SuiteGrade) -> tuple[GradedAssertion, ...]:
    """evolve expectation entries for a graded case (research §i.3), in evaluator order.

    One entry per evaluator; a composite is followed by one entry per member (`composite/member`),
    a rubric by one entry per criterion (`rubric/[id] criterion`, passed = satisfied / ≥ 7 of 10).
    `type` is `llm` for judges and rubric criteria, `command` for code judges, `tool_call` for
    trajectories, `regex` for the text checks, `llm` otherwise; `passed` is the evaluator's `pass`
    verdict with its required gate held (`None` when skipped); evidence is
    `score 0.85 w=2 required — hits: … — misses: … — reasoning`, at most 200 bytes as evolve writes.
    """
    out: list[GradedAssertion] = []

    def add(r: EvaluatorResult, prefix: str) -> None:
        passed = None if r.verdict == "skipped" else r.verdict == "pass" and _gate_ok(r)
        out.append(
            GradedAssertion(
                type=_EXPECTATION_TYPES.get(r.type, "llm"),
                text=f"{prefix}{r.name} ({r.type})",
                passed=passed,
                evidence=_evidence(r),
                source="assertion",
            )
        )
        if r.type == "rubric" and not r.error:
            for ok, lines in ((True, r.hits), (False, r.misses)):
                for line in lines:
                    m = _CRITERION.match(line)
                    crit = m.group(2) if m else line
                    text, _, why = crit.partition(": ")
                    out.append(
                        GradedAssertion(
                            type="llm",
                            text=f"{prefix}{r.name}/[{m.group(1) if m else '?'}] {text}",
                            passed=ok,
                            evidence=truncate_bytes(why, 200),
                            source="assertion",
                        )
                    )
        for c in r.children:
            add(c, f"{prefix}{r.name}/")

    for r in grade.results:
        add(r, "")
    return tuple(out)


_EXPECTATION_TYPES: Mapping[str, str] = {
    "code_judge": "command",
    "tool_trajectory": "tool_call",
    "skill_trigger": "tool_call",
    "contains": "regex",
    "regex": "regex",
    "equals": "regex",
    "is_json": "regex",
}
