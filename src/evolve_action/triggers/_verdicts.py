"""Tier 1 pure core: hit detection, verdicts, verdict-preserving early stop, scoring (split from `triggers`).

Owns: `RunResult`, `is_hit`, `classify_run`, `passes`, `decided`, `should_launch`, `RunRecord`,
`QueryOutcome`, `score` and `query_line` (engine spec §8). Every name is re-exported by
`triggers`, so callers keep importing from there.

Guarantees: pure (no I/O, no clock, no processes). A hit is a `Skill` call naming the skill
exactly (`name` or `<namespace>:name`) or a `Read` of its `skills/<name>/SKILL.md` (Claude Code),
or a Codex tool call that mentions `<name>/SKILL.md`; verdicts use
completed runs only; early stop never changes a verdict. Never does: run sessions or write results.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from evolve_action import results as res
from evolve_action.encoding import round1
from evolve_action.harness import ErrorClass, ToolCall, Transcript

__all__ = [
    "QueryOutcome",
    "RunRecord",
    "RunResult",
    "classify_run",
    "decided",
    "is_hit",
    "mentions_skill_file",
    "passes",
    "query_line",
    "score",
    "should_launch",
]


class RunResult(StrEnum):
    """The outcome of one trigger session."""

    HIT = "hit"
    MISS = "miss"
    ERROR = "error"


# ------------------------------------------------------------------------------------------------
# Pure core: hits, verdicts, early stop
# ------------------------------------------------------------------------------------------------


def is_hit(call: ToolCall, skill: str) -> bool:
    """True when `call` invokes `skill`.

    Claude Code: `Skill` naming it exactly (optionally `ns:`), or a `Read` of its SKILL.md. Codex
    (evolve's rule: the agent reading the skill file): any tool call that mentions
    `<skill>/SKILL.md` (see `mentions_skill_file`).
    """
    if call.harness == "codex":
        return mentions_skill_file(call.input, skill)
    if call.name == "Skill":
        named = call.input.get("skill")
        if not isinstance(named, str):
            return False
        named = named.strip().lstrip("/")
        return named == skill or (":" in named and named.rsplit(":", 1)[1] == skill)
    if call.name == "Read":
        path = call.input.get("file_path")
        if not isinstance(path, str) or not path:
            return False
        norm = posixpath.normpath(path.replace("\\", "/"))
        tail = f"skills/{skill}/SKILL.md"
        return norm == tail or norm.endswith("/" + tail)
    return False


def mentions_skill_file(value: object, skill: str) -> bool:
    """True when a string in `value` (nested mappings and lists included) names `<skill>/SKILL.md`
    right after a path separator, whitespace, a quote, `=` or the start, so a sibling
    `frob-extra/SKILL.md` (or `xfrob/SKILL.md`) never counts for `frob`."""
    pattern = re.compile(r"(?:^|[/\s'\"`=])" + re.escape(skill) + r"/SKILL\.md")
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if pattern.search(item):
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def classify_run(t: Transcript, skill: str) -> RunResult:
    """HIT if any tool call hit (even in a session that later failed), ERROR for failed sessions, else MISS.

    A session that used up its turn cap (`error_max_turns`) completed normally for triggers: a miss.
    """
    if any(is_hit(c, skill) for c in t.tool_calls):
        return RunResult.HIT
    if t.error is None:
        return RunResult.MISS
    if t.error is ErrorClass.RUN_ERROR and t.subtype == "error_max_turns":
        return RunResult.MISS
    return RunResult.ERROR


def passes(hits: int, completed: int, should_trigger: bool) -> bool:
    """Spec §8.6: rate = hits/completed; should-trigger passes at rate ≥ 0.5, should-not at < 0.5."""
    if should_trigger:
        return 2 * hits >= completed
    return 2 * hits < completed


def decided(hits: int, misses: int, remaining: int, should_trigger: bool) -> bool:
    """True when no outcome of the `remaining` runs (hit, miss or error) can change the verdict.

    With no completed run yet nothing is decided (unless nothing remains either).
    """
    if hits + misses == 0:
        return remaining == 0
    low = passes(hits, hits + misses + remaining, should_trigger)
    high = passes(hits + remaining, hits + misses + remaining, should_trigger)
    mid = passes(hits, hits + misses, should_trigger)
    return low == high == mid


def should_launch(
    *, hits: int, misses: int, in_flight: int, remaining: int, should_trigger: bool
) -> bool:
    """Early-stop scheduling: start another run only if the runs in flight cannot settle the verdict.

    `remaining` counts runs not started yet. A run starts when the verdict is open and no way the
    in-flight runs can come back (any mix of hits and misses) would settle it. So a 3-run query
    starts two runs, and the third only when they disagree (or one errored): the fewest sessions
    for the same verdict, at the cost of some latency per query (other queries fill the slots).
    """
    if remaining <= 0 or decided(hits, misses, in_flight + remaining, should_trigger):
        return False
    return not any(
        decided(hits + k, misses + in_flight - k, remaining, should_trigger)
        for k in range(in_flight + 1)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """One trigger session as the engine saw it."""

    result: RunResult
    seconds: float
    attempts: int = 1
    error: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryOutcome:
    """One query's runs and verdict."""

    query: str
    should_trigger: bool
    runs: tuple[RunRecord, ...] = ()
    reason: str = ""
    """Why it ran (plan reason)."""

    @property
    def hits(self) -> int:
        """Runs that hit."""
        return sum(1 for r in self.runs if r.result is RunResult.HIT)

    @property
    def completed(self) -> int:
        """Runs that completed (hit or miss)."""
        return sum(1 for r in self.runs if r.result is not RunResult.ERROR)

    @property
    def errored(self) -> int:
        """Runs that failed."""
        return sum(1 for r in self.runs if r.result is RunResult.ERROR)

    @property
    def passed(self) -> bool | None:
        """The verdict over completed runs; None when every run errored."""
        if self.completed == 0:
            return None
        return passes(self.hits, self.completed, self.should_trigger)

    @property
    def avg_run_seconds(self) -> float | None:
        """round1(mean wall seconds of the completed runs)."""
        done = [r.seconds for r in self.runs if r.result is not RunResult.ERROR]
        return round1(sum(done) / len(done)) if done else None

    @property
    def status(self) -> str:
        """`passed`, `failed` or `errored` (no completed run)."""
        p = self.passed
        return "errored" if p is None else ("passed" if p else "failed")


def score(q: QueryOutcome, *, spec_hash: str, estimate: res.Estimate | None) -> res.TriggerResult:
    """The stored result of one query (schema 5): counts over completed runs only."""
    if q.completed == 0:
        return res.TriggerResult(
            query=q.query, should_trigger=q.should_trigger, estimate=estimate, spec_hash=spec_hash
        )
    return res.TriggerResult(
        query=q.query,
        should_trigger=q.should_trigger,
        hits=q.hits,
        runs=q.completed,
        passed=q.passed,
        avg_run_seconds=q.avg_run_seconds,
        estimate=estimate,
        spec_hash=spec_hash,
    )


def query_line(q: QueryOutcome) -> str:
    """The per-query detail: `rate=0.67 avg=1.2s expect=yes` plus run and error counts."""
    rate = q.hits / q.completed if q.completed else 0.0
    avg = q.avg_run_seconds if q.avg_run_seconds is not None else 0.0
    text = f"rate={rate:.2f} avg={avg:.1f}s expect={'yes' if q.should_trigger else 'no'}"
    text += f" hits={q.hits}/{q.completed}"
    if q.errored:
        first = next((r.error for r in q.runs if r.error), "")
        text += f" errored={q.errored}" + (f" ({first})" if first else "")
    return text
