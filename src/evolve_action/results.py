"""The schema-5 results file (`<plugin>/evals/<skill>/results.<ext>`): model, read, merge, write.

Owns: the typed model of a results file (`ResultsFile` → `ModelEntry` → `TriggersEntry` /
`EvalsEntry` with their `EntryHeader`, case results, summaries and `previous`/`baseline`
snapshots); decoding it with Go's rules (`from_document`, `load_results`, in-memory migration of
schemas 3 and 4); encoding it in evolve's exact field order and omission rules (`to_document`,
`write_results`); summary aggregation (`summarise_triggers`, `summarise_evals`,
`summarise_grades`); entry replacement with partial-rerun merging and snapshot rotation
(`replace_trigger_entry`, `replace_eval_entry`); the write-after-each-unit path (`ResultsWriter`,
`TriggerUnitRecord`, `EvalUnitRecord`); `report --migrate` (`migrate_in_place`); and pruning of
model keys outside the configured models (`drop_models`).

Guarantees:
- `to_document(from_document(doc))` re-encodes every file evolve 0.7.0 wrote byte-identically
  through `encoding.encode_json` (field order, A/P/Z emission rules of report spec §1.1, int vs
  float kinds, Go rounding). Unknown keys are dropped on read, exactly as evolve drops them.
- Writes are atomic (`fsio.atomic_write_text`) and remove `results.*` siblings of other formats.
- Everything except `load_results`, `write_results`, `migrate_in_place` and `ResultsWriter` is pure.

Never does: decide which cases run (see `plan`), run agents, or print (warnings are returned).

Model choice. Every value is a frozen, slotted, keyword-only dataclass; optional fields use `None`
for Go pointer fields (rule P: omitted only when nil) and the zero value (`""`, `0`, `()`) for Go
`omitempty` value fields (rule Z). Raw dicts exist only at the boundary (`from_document` /
`to_document`), so TypedDicts would add a second description of the same shape without buying
safety; the dataclasses are the one description. Maps (`models`, `tool_calls`) are plain dicts
inside frozen dataclasses: never mutate them, build new ones.

Write-after-each-unit contract (DESIGN §3 "record"). Engines keep, per (skill, model, tier) unit,
the entry as stored when the unit started (`old`) and the fresh results finished so far. After
**every** finished query / case they call `TriggerUnitRecord.add` / `EvalUnitRecord.add` (which
re-runs the pure merge against `old`, so `previous` is always the snapshot of the unit-start
entry) and hand the entry to `ResultsWriter.put_triggers` / `put_evals`, which swaps it into the
in-memory file and rewrites the file atomically. `put_*` are synchronous and never await, so on
one event loop the read-modify-write cannot interleave: no lock is needed as long as every unit
of a results file shares one `ResultsWriter` and it is never called from another thread. A killed
run therefore loses at most the cases still in flight.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from evolve_action import catalog, encoding, fsio
from evolve_action.errors import SpecError, display_path
from evolve_action.gocompat import round1, round6

__all__ = [
    "SCHEMA_VERSION",
    "BaselineSnapshot",
    "EntryHeader",
    "Estimate",
    "EvalResult",
    "EvalSnapshot",
    "EvalSummary",
    "EvalUnitRecord",
    "EvalsEntry",
    "ExecutionMetrics",
    "GradeSummary",
    "GradedAssertion",
    "LoadedResults",
    "Measured",
    "ModelEntry",
    "PreviousSnapshot",
    "Pricing",
    "ResultsFile",
    "ResultsWriter",
    "Timing",
    "TriggerResult",
    "TriggerSnapshot",
    "TriggerSummary",
    "TriggerUnitRecord",
    "TriggersEntry",
    "drop_models",
    "foreign_model_keys",
    "format_ran_at",
    "from_document",
    "load_results",
    "make_header",
    "merge_cases",
    "migrate_document",
    "migrate_in_place",
    "probe_schema",
    "replace_eval_entry",
    "replace_trigger_entry",
    "results_path",
    "summarise_evals",
    "summarise_grades",
    "summarise_triggers",
    "to_document",
    "trim_eval_result",
    "with_entry",
    "write_results",
]

SCHEMA_VERSION = 5
"""The results schema this tool reads natively and writes."""

MIGRATABLE = (3, 4)
"""Older schemas migrated in memory (report spec §2)."""


# --------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Pricing:
    """USD per million tokens at run time; a rate is `None` when unpublished."""

    input_per_mtok: float | None = None
    output_per_mtok: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    """Counting-API token estimate of `SKILL.md + "\\n\\n" + query/prompt`."""

    input_tokens: int = 0
    input_cost_usd: float | None = None
    """round6(tokens / 1e6 × input rate); `None` when the model has no input rate."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Measured:
    """Usage the harness reported for an eval run (each field optional)."""

    input_tokens: int | None = None
    """Fresh, uncached input tokens only."""
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    """Reported total cost, else computed from both rates; round6."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryHeader:
    """The header written inline at the start of both entry kinds (report spec §1.1)."""

    provider: str = ""
    model: str = ""
    """Bare vendor model id (`claude-sonnet-5`), never the harness CLI id."""
    display: str = ""
    harness: str = ""
    tool_version: str = ""
    ran_at: str = ""
    """UTC RFC 3339 to the second (`2026-07-02T19:14:43Z`)."""
    executed: bool = False
    """True when agents really ran; False for a count-only pass."""
    content_hash: str = ""
    runs_per_query: int = 0
    """Triggers only: `--runs`, set only when executed."""
    timeout_seconds: int = 0
    pricing: Pricing | None = None
    """Written as explicit `null` when the model is unpriced."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerResult:
    """One trigger query's outcome."""

    query: str = ""
    should_trigger: bool = False
    hits: int | None = None
    runs: int | None = None
    passed: bool | None = None
    avg_run_seconds: float | None = None
    estimate: Estimate | None = None
    spec_hash: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerSummary:
    """Aggregate over an entry's merged trigger results (§1.3)."""

    passed: int | None = None
    failed: int | None = None
    total: int = 0
    pass_rate: float | None = None
    avg_run_seconds: float | None = None
    estimate: Estimate | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerSnapshot:
    """A trigger entry's `previous`: the replaced entry's summary and whole results."""

    ran_at: str = ""
    summary: TriggerSummary = field(default_factory=TriggerSummary)
    results: tuple[TriggerResult, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GradedAssertion:
    """One graded assertion: the authored assertion echo, then the grading fields."""

    type: str = ""
    path: str = ""
    pattern: str = ""
    run: str = ""
    cwd: str = ""
    tool: str = ""
    requires: str = ""
    expect_exit: int | None = None
    text: str = ""
    """The assertion's description (the authored `text` is shadowed by it)."""
    passed: bool | None = None
    """`None` = skipped (written as `null`)."""
    evidence: str = ""
    source: str = ""
    """`expectation` or `assertion`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GradeSummary:
    """Per-case assertion counts."""

    passed: int = 0
    failed: int = 0
    total: int = 0
    pass_rate: float | None = None
    skipped: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionMetrics:
    """Tool-call counts the harness reported (claude, codex)."""

    tool_calls: dict[str, int] = field(default_factory=dict)
    total_tool_calls: int | None = None
    total_steps: int | None = None
    files_created: tuple[str, ...] = ()
    errors_encountered: int | None = None
    output_chars: int | None = None
    transcript_chars: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """Timing and token totals of one eval run (usually only two fields are set)."""

    total_tokens: int | None = None
    duration_ms: int | None = None
    total_duration_seconds: float | None = None
    executor_start: str = ""
    executor_end: str = ""
    executor_duration_seconds: float | None = None
    grader_start: str = ""
    grader_end: str = ""
    grader_duration_seconds: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalResult:
    """One eval case's outcome (also the shape of trimmed snapshot results)."""

    id: str = ""
    name: str = ""
    runtime_error: str = ""
    """Non-empty: the agent produced no usable output; `passed` is then absent."""
    passed: bool | None = None
    estimate: Estimate | None = None
    measured: Measured | None = None
    expectations: tuple[GradedAssertion, ...] = ()
    summary: GradeSummary | None = None
    execution_metrics: ExecutionMetrics | None = None
    timing: Timing | None = None
    spec_hash: str = ""
    fingerprint: str = ""
    """Only on baseline-snapshot results: the eval fingerprint the baseline ran against."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalSummary:
    """Aggregate over an entry's merged eval results (§1.3)."""

    passed: int | None = None
    failed: int | None = None
    errored: int | None = None
    """Present only when > 0."""
    total: int = 0
    pass_rate: float | None = None
    avg_run_seconds: float | None = None
    estimate: Estimate | None = None
    measured: Measured | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalSnapshot:
    """An eval entry's `previous` or `baseline` snapshot (results trimmed, §1.4)."""

    ran_at: str = ""
    summary: EvalSummary = field(default_factory=EvalSummary)
    results: tuple[EvalResult, ...] = ()


PreviousSnapshot = TriggerSnapshot | EvalSnapshot
"""A `previous` snapshot: the shape follows the tier (triggers keep whole results)."""

BaselineSnapshot = EvalSnapshot
"""The without-skill `baseline` snapshot of an eval entry (results carry `fingerprint`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggersEntry:
    """A model's Tier 1 entry."""

    header: EntryHeader = field(default_factory=EntryHeader)
    results: tuple[TriggerResult, ...] = ()
    summary: TriggerSummary = field(default_factory=TriggerSummary)
    previous: TriggerSnapshot | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalsEntry:
    """A model's Tier 2 entry (`baseline` is written before `previous`)."""

    header: EntryHeader = field(default_factory=EntryHeader)
    results: tuple[EvalResult, ...] = ()
    summary: EvalSummary = field(default_factory=EvalSummary)
    baseline: EvalSnapshot | None = None
    previous: EvalSnapshot | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelEntry:
    """Both tiers for one model key (`provider/bare-id`)."""

    triggers: TriggersEntry | None = None
    evals: EvalsEntry | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultsFile:
    """A whole schema-5 results file."""

    schema: int = SCHEMA_VERSION
    plugin: str = ""
    skill: str = ""
    models: dict[str, ModelEntry] = field(default_factory=dict)
    """Keyed by `provider/bare-id`; written sorted by key."""


def make_header(
    model: catalog.Model,
    *,
    harness: str,
    tool_version: str,
    ran_at: str,
    executed: bool,
    content_hash: str,
    timeout_seconds: int,
    runs_per_query: int = 0,
) -> EntryHeader:
    """The header a run writes for `model` (engine spec §12.2).

    `ran_at` is UTC RFC 3339 to the second (`format_ran_at`); `runs_per_query` is kept only for
    executed trigger entries (pass 0 for evals); `pricing` is the catalog price at run time, or
    None (written as `null`).
    """
    pricing = (
        Pricing(
            input_per_mtok=model.pricing.input_per_mtok,
            output_per_mtok=model.pricing.output_per_mtok,
        )
        if model.pricing is not None
        else None
    )
    return EntryHeader(
        provider=model.provider,
        model=model.id,
        display=model.display,
        harness=harness,
        tool_version=tool_version,
        ran_at=ran_at,
        executed=executed,
        content_hash=content_hash,
        runs_per_query=runs_per_query if executed else 0,
        timeout_seconds=timeout_seconds,
        pricing=pricing,
    )


def format_ran_at(now: datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ` in UTC (naive datetimes are rejected)."""
    if now.tzinfo is None:
        raise ValueError("format_ran_at needs an aware datetime")
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------
# Decoding (Go encoding/json rules: exact-then-case-insensitive keys, strict kinds, null → zero)
# --------------------------------------------------------------------------------------------


class _Malformed(Exception):
    """A value of the wrong JSON kind somewhere in the document (Go fails the whole decode)."""


_T = TypeVar("_T")


class _Obj:
    """A JSON object viewed like Go's struct decoder sees it."""

    __slots__ = ("_folded", "_where")

    def __init__(self, value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise _Malformed(f"{where}: expected an object")
        # Later keys win, and a key matches a field exactly or case-insensitively (Go's rule;
        # our field names are lower-case and distinct, so folding alone decides the field).
        self._folded: dict[str, Any] = {}
        for k, v in value.items():
            self._folded[str(k).lower()] = v
        self._where = where

    def raw(self, key: str) -> Any:
        return self._folded.get(key)

    def str_(self, key: str) -> str:
        v = self._folded.get(key)
        if v is None:
            return ""
        if not isinstance(v, str):
            raise _Malformed(f"{self._where}.{key}: expected a string")
        return v

    def bool_(self, key: str) -> bool:
        v = self.opt_bool(key)
        return bool(v)

    def opt_bool(self, key: str) -> bool | None:
        v = self._folded.get(key)
        if v is None:
            return None
        if not isinstance(v, bool):
            raise _Malformed(f"{self._where}.{key}: expected a boolean")
        return v

    def int_(self, key: str) -> int:
        v = self.opt_int(key)
        return 0 if v is None else v

    def opt_int(self, key: str) -> int | None:
        v = self._folded.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Malformed(f"{self._where}.{key}: expected an integer")
        return v

    def opt_float(self, key: str) -> float | None:
        v = self._folded.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise _Malformed(f"{self._where}.{key}: expected a number")
        return float(v)

    def opt_obj(self, key: str, build: Callable[[_Obj], _T]) -> _T | None:
        v = self._folded.get(key)
        if v is None:
            return None
        return build(_Obj(v, f"{self._where}.{key}"))

    def obj(self, key: str, build: Callable[[_Obj], _T]) -> _T:
        v = self._folded.get(key)
        return build(_Obj({} if v is None else v, f"{self._where}.{key}"))

    def list_(self, key: str, build: Callable[[_Obj], _T]) -> tuple[_T, ...]:
        v = self._folded.get(key)
        if v is None:
            return ()
        if not isinstance(v, list):
            raise _Malformed(f"{self._where}.{key}: expected an array")
        out: list[_T] = []
        for i, item in enumerate(v):
            # A null element of a []struct decodes to the zero struct.
            out.append(build(_Obj({} if item is None else item, f"{self._where}.{key}[{i}]")))
        return tuple(out)

    def str_list(self, key: str) -> tuple[str, ...]:
        v = self._folded.get(key)
        if v is None:
            return ()
        if not isinstance(v, list) or not all(isinstance(x, str) or x is None for x in v):
            raise _Malformed(f"{self._where}.{key}: expected an array of strings")
        return tuple("" if x is None else x for x in v)

    def int_map(self, key: str) -> dict[str, int]:
        v = self._folded.get(key)
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise _Malformed(f"{self._where}.{key}: expected an object")
        out: dict[str, int] = {}
        for k, n in v.items():
            if n is None:
                n = 0
            if isinstance(n, bool) or not isinstance(n, int):
                raise _Malformed(f"{self._where}.{key}.{k}: expected an integer")
            out[str(k)] = n
        return out

    def obj_map(self, key: str, build: Callable[[_Obj], _T]) -> dict[str, _T]:
        v = self._folded.get(key)
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise _Malformed(f"{self._where}.{key}: expected an object")
        return {
            str(k): build(_Obj({} if x is None else x, f"{self._where}.{key}.{k}"))
            for k, x in v.items()
        }


def _d_pricing(o: _Obj) -> Pricing:
    return Pricing(
        input_per_mtok=o.opt_float("input_per_mtok"), output_per_mtok=o.opt_float("output_per_mtok")
    )


def _d_estimate(o: _Obj) -> Estimate:
    return Estimate(
        input_tokens=o.int_("input_tokens"), input_cost_usd=o.opt_float("input_cost_usd")
    )


def _d_measured(o: _Obj) -> Measured:
    return Measured(
        input_tokens=o.opt_int("input_tokens"),
        cache_read_input_tokens=o.opt_int("cache_read_input_tokens"),
        cache_creation_input_tokens=o.opt_int("cache_creation_input_tokens"),
        output_tokens=o.opt_int("output_tokens"),
        cost_usd=o.opt_float("cost_usd"),
    )


def _d_header(o: _Obj) -> EntryHeader:
    return EntryHeader(
        provider=o.str_("provider"),
        model=o.str_("model"),
        display=o.str_("display"),
        harness=o.str_("harness"),
        tool_version=o.str_("tool_version"),
        ran_at=o.str_("ran_at"),
        executed=o.bool_("executed"),
        content_hash=o.str_("content_hash"),
        runs_per_query=o.int_("runs_per_query"),
        timeout_seconds=o.int_("timeout_seconds"),
        pricing=o.opt_obj("pricing", _d_pricing),
    )


def _d_trigger_result(o: _Obj) -> TriggerResult:
    return TriggerResult(
        query=o.str_("query"),
        should_trigger=o.bool_("should_trigger"),
        hits=o.opt_int("hits"),
        runs=o.opt_int("runs"),
        passed=o.opt_bool("passed"),
        avg_run_seconds=o.opt_float("avg_run_seconds"),
        estimate=o.opt_obj("estimate", _d_estimate),
        spec_hash=o.str_("spec_hash"),
    )


def _d_trigger_summary(o: _Obj) -> TriggerSummary:
    return TriggerSummary(
        passed=o.opt_int("passed"),
        failed=o.opt_int("failed"),
        total=o.int_("total"),
        pass_rate=o.opt_float("pass_rate"),
        avg_run_seconds=o.opt_float("avg_run_seconds"),
        estimate=o.opt_obj("estimate", _d_estimate),
    )


def _d_trigger_snapshot(o: _Obj) -> TriggerSnapshot:
    return TriggerSnapshot(
        ran_at=o.str_("ran_at"),
        summary=o.obj("summary", _d_trigger_summary),
        results=o.list_("results", _d_trigger_result),
    )


def _d_graded(o: _Obj) -> GradedAssertion:
    return GradedAssertion(
        type=o.str_("type"),
        path=o.str_("path"),
        pattern=o.str_("pattern"),
        run=o.str_("run"),
        cwd=o.str_("cwd"),
        tool=o.str_("tool"),
        requires=o.str_("requires"),
        expect_exit=o.opt_int("expect_exit"),
        text=o.str_("text"),
        passed=o.opt_bool("passed"),
        evidence=o.str_("evidence"),
        source=o.str_("source"),
    )


def _d_grade_summary(o: _Obj) -> GradeSummary:
    return GradeSummary(
        passed=o.int_("passed"),
        failed=o.int_("failed"),
        total=o.int_("total"),
        pass_rate=o.opt_float("pass_rate"),
        skipped=o.int_("skipped"),
    )


def _d_metrics(o: _Obj) -> ExecutionMetrics:
    return ExecutionMetrics(
        tool_calls=o.int_map("tool_calls"),
        total_tool_calls=o.opt_int("total_tool_calls"),
        total_steps=o.opt_int("total_steps"),
        files_created=o.str_list("files_created"),
        errors_encountered=o.opt_int("errors_encountered"),
        output_chars=o.opt_int("output_chars"),
        transcript_chars=o.opt_int("transcript_chars"),
    )


def _d_timing(o: _Obj) -> Timing:
    return Timing(
        total_tokens=o.opt_int("total_tokens"),
        duration_ms=o.opt_int("duration_ms"),
        total_duration_seconds=o.opt_float("total_duration_seconds"),
        executor_start=o.str_("executor_start"),
        executor_end=o.str_("executor_end"),
        executor_duration_seconds=o.opt_float("executor_duration_seconds"),
        grader_start=o.str_("grader_start"),
        grader_end=o.str_("grader_end"),
        grader_duration_seconds=o.opt_float("grader_duration_seconds"),
    )


def _d_eval_id(o: _Obj) -> str:
    # Results always hold string ids; accept an integer as evolve's spec loader would.
    v = o.raw("id")
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return o.str_("id")


def _d_eval_result(o: _Obj) -> EvalResult:
    return EvalResult(
        id=_d_eval_id(o),
        name=o.str_("name"),
        runtime_error=o.str_("runtime_error"),
        passed=o.opt_bool("passed"),
        estimate=o.opt_obj("estimate", _d_estimate),
        measured=o.opt_obj("measured", _d_measured),
        expectations=o.list_("expectations", _d_graded),
        summary=o.opt_obj("summary", _d_grade_summary),
        execution_metrics=o.opt_obj("execution_metrics", _d_metrics),
        timing=o.opt_obj("timing", _d_timing),
        spec_hash=o.str_("spec_hash"),
        fingerprint=o.str_("fingerprint"),
    )


def _d_eval_summary(o: _Obj) -> EvalSummary:
    return EvalSummary(
        passed=o.opt_int("passed"),
        failed=o.opt_int("failed"),
        errored=o.opt_int("errored"),
        total=o.int_("total"),
        pass_rate=o.opt_float("pass_rate"),
        avg_run_seconds=o.opt_float("avg_run_seconds"),
        estimate=o.opt_obj("estimate", _d_estimate),
        measured=o.opt_obj("measured", _d_measured),
    )


def _d_eval_snapshot(o: _Obj) -> EvalSnapshot:
    return EvalSnapshot(
        ran_at=o.str_("ran_at"),
        summary=o.obj("summary", _d_eval_summary),
        results=o.list_("results", _d_eval_result),
    )


def _d_triggers_entry(o: _Obj) -> TriggersEntry:
    return TriggersEntry(
        header=_d_header(o),
        results=o.list_("results", _d_trigger_result),
        summary=o.obj("summary", _d_trigger_summary),
        previous=o.opt_obj("previous", _d_trigger_snapshot),
    )


def _d_evals_entry(o: _Obj) -> EvalsEntry:
    return EvalsEntry(
        header=_d_header(o),
        results=o.list_("results", _d_eval_result),
        summary=o.obj("summary", _d_eval_summary),
        baseline=o.opt_obj("baseline", _d_eval_snapshot),
        previous=o.opt_obj("previous", _d_eval_snapshot),
    )


def _d_model_entry(o: _Obj) -> ModelEntry:
    return ModelEntry(
        triggers=o.opt_obj("triggers", _d_triggers_entry),
        evals=o.opt_obj("evals", _d_evals_entry),
    )


def probe_schema(doc: Any) -> int | None:
    """The integer `schema` of a decoded document, or None when absent or not an integer."""
    if not isinstance(doc, dict):
        return None
    folded = {str(k).lower(): v for k, v in doc.items()}
    v = folded.get("schema")
    if isinstance(v, bool) or not isinstance(v, int):
        return None
    return v


def from_document(doc: Any, *, plugin: str = "", skill: str = "") -> ResultsFile:
    """Decode a schema-5 document (a plain JSON data model) into a `ResultsFile`.

    `plugin`/`skill`, when given, overwrite the stored values (evolve takes them from the
    directory names). Raises `ValueError` when a value has the wrong JSON kind (Go fails the
    whole decode; `load_results` turns that into "start fresh").
    """
    try:
        o = _Obj(doc, "results")
        file = ResultsFile(
            schema=o.int_("schema"),
            plugin=o.str_("plugin"),
            skill=o.str_("skill"),
            models=o.obj_map("models", _d_model_entry),
        )
    except _Malformed as exc:
        raise ValueError(str(exc)) from exc
    if plugin:
        file = dataclasses.replace(file, plugin=plugin)
    if skill:
        file = dataclasses.replace(file, skill=skill)
    return file


# --------------------------------------------------------------------------------------------
# Encoding: field order + A (always) / P (pointer: omit when None) / Z (omit when zero) rules
# --------------------------------------------------------------------------------------------


def _put_p(d: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        d[key] = value


def _put_z(d: dict[str, Any], key: str, value: Any) -> None:
    if value:
        d[key] = value


def _e_pricing(p: Pricing) -> dict[str, Any]:
    return {"input_per_mtok": p.input_per_mtok, "output_per_mtok": p.output_per_mtok}


def _e_estimate(e: Estimate | None) -> dict[str, Any] | None:
    if e is None:
        return None
    d: dict[str, Any] = {"input_tokens": e.input_tokens}
    _put_p(d, "input_cost_usd", e.input_cost_usd)
    return d


def _e_measured(m: Measured | None) -> dict[str, Any] | None:
    if m is None:
        return None
    d: dict[str, Any] = {}
    _put_p(d, "input_tokens", m.input_tokens)
    _put_p(d, "cache_read_input_tokens", m.cache_read_input_tokens)
    _put_p(d, "cache_creation_input_tokens", m.cache_creation_input_tokens)
    _put_p(d, "output_tokens", m.output_tokens)
    _put_p(d, "cost_usd", m.cost_usd)
    return d


def _e_header(d: dict[str, Any], h: EntryHeader) -> None:
    d["provider"] = h.provider
    d["model"] = h.model
    d["display"] = h.display
    _put_z(d, "harness", h.harness)
    d["tool_version"] = h.tool_version
    d["ran_at"] = h.ran_at
    d["executed"] = h.executed
    _put_z(d, "content_hash", h.content_hash)
    _put_z(d, "runs_per_query", h.runs_per_query)
    d["timeout_seconds"] = h.timeout_seconds
    d["pricing"] = None if h.pricing is None else _e_pricing(h.pricing)


def _e_trigger_result(r: TriggerResult) -> dict[str, Any]:
    d: dict[str, Any] = {"query": r.query, "should_trigger": r.should_trigger}
    _put_p(d, "hits", r.hits)
    _put_p(d, "runs", r.runs)
    _put_p(d, "passed", r.passed)
    _put_p(d, "avg_run_seconds", r.avg_run_seconds)
    _put_p(d, "estimate", _e_estimate(r.estimate))
    _put_z(d, "spec_hash", r.spec_hash)
    return d


def _e_trigger_summary(s: TriggerSummary) -> dict[str, Any]:
    d: dict[str, Any] = {}
    _put_p(d, "passed", s.passed)
    _put_p(d, "failed", s.failed)
    d["total"] = s.total
    _put_p(d, "pass_rate", s.pass_rate)
    _put_p(d, "avg_run_seconds", s.avg_run_seconds)
    _put_p(d, "estimate", _e_estimate(s.estimate))
    return d


def _e_trigger_snapshot(s: TriggerSnapshot | None) -> dict[str, Any] | None:
    if s is None:
        return None
    d: dict[str, Any] = {}
    _put_z(d, "ran_at", s.ran_at)
    d["summary"] = _e_trigger_summary(s.summary)
    _put_z(d, "results", [_e_trigger_result(r) for r in s.results])
    return d


def _e_graded(a: GradedAssertion) -> dict[str, Any]:
    d: dict[str, Any] = {"type": a.type}
    _put_z(d, "path", a.path)
    _put_z(d, "pattern", a.pattern)
    _put_z(d, "run", a.run)
    _put_z(d, "cwd", a.cwd)
    _put_z(d, "tool", a.tool)
    _put_z(d, "requires", a.requires)
    _put_p(d, "expect_exit", a.expect_exit)
    d["text"] = a.text
    d["passed"] = a.passed
    d["evidence"] = a.evidence
    _put_z(d, "source", a.source)
    return d


def _e_grade_summary(s: GradeSummary | None) -> dict[str, Any] | None:
    if s is None:
        return None
    d: dict[str, Any] = {"passed": s.passed, "failed": s.failed, "total": s.total}
    _put_p(d, "pass_rate", s.pass_rate)
    _put_z(d, "skipped", s.skipped)
    return d


def _e_metrics(m: ExecutionMetrics | None) -> dict[str, Any] | None:
    if m is None:
        return None
    d: dict[str, Any] = {}
    _put_z(d, "tool_calls", {k: m.tool_calls[k] for k in sorted(m.tool_calls)})
    _put_p(d, "total_tool_calls", m.total_tool_calls)
    _put_p(d, "total_steps", m.total_steps)
    _put_z(d, "files_created", list(m.files_created))
    _put_p(d, "errors_encountered", m.errors_encountered)
    _put_p(d, "output_chars", m.output_chars)
    _put_p(d, "transcript_chars", m.transcript_chars)
    return d


def _e_timing(t: Timing | None) -> dict[str, Any] | None:
    if t is None:
        return None
    d: dict[str, Any] = {}
    _put_p(d, "total_tokens", t.total_tokens)
    _put_p(d, "duration_ms", t.duration_ms)
    _put_p(d, "total_duration_seconds", t.total_duration_seconds)
    _put_z(d, "executor_start", t.executor_start)
    _put_z(d, "executor_end", t.executor_end)
    _put_p(d, "executor_duration_seconds", t.executor_duration_seconds)
    _put_z(d, "grader_start", t.grader_start)
    _put_z(d, "grader_end", t.grader_end)
    _put_p(d, "grader_duration_seconds", t.grader_duration_seconds)
    return d


def _e_eval_result(r: EvalResult) -> dict[str, Any]:
    d: dict[str, Any] = {"id": r.id}
    _put_z(d, "name", r.name)
    _put_z(d, "runtime_error", r.runtime_error)
    _put_p(d, "passed", r.passed)
    _put_p(d, "estimate", _e_estimate(r.estimate))
    _put_p(d, "measured", _e_measured(r.measured))
    _put_z(d, "expectations", [_e_graded(a) for a in r.expectations])
    _put_p(d, "summary", _e_grade_summary(r.summary))
    _put_p(d, "execution_metrics", _e_metrics(r.execution_metrics))
    _put_p(d, "timing", _e_timing(r.timing))
    _put_z(d, "spec_hash", r.spec_hash)
    _put_z(d, "fingerprint", r.fingerprint)
    return d


def _e_eval_summary(s: EvalSummary) -> dict[str, Any]:
    d: dict[str, Any] = {}
    _put_p(d, "passed", s.passed)
    _put_p(d, "failed", s.failed)
    _put_p(d, "errored", s.errored)
    d["total"] = s.total
    _put_p(d, "pass_rate", s.pass_rate)
    _put_p(d, "avg_run_seconds", s.avg_run_seconds)
    _put_p(d, "estimate", _e_estimate(s.estimate))
    _put_p(d, "measured", _e_measured(s.measured))
    return d


def _e_eval_snapshot(s: EvalSnapshot | None) -> dict[str, Any] | None:
    if s is None:
        return None
    d: dict[str, Any] = {}
    _put_z(d, "ran_at", s.ran_at)
    d["summary"] = _e_eval_summary(s.summary)
    _put_z(d, "results", [_e_eval_result(r) for r in s.results])
    return d


def _e_triggers_entry(e: TriggersEntry) -> dict[str, Any]:
    d: dict[str, Any] = {}
    _e_header(d, e.header)
    d["results"] = [_e_trigger_result(r) for r in e.results]
    d["summary"] = _e_trigger_summary(e.summary)
    _put_p(d, "previous", _e_trigger_snapshot(e.previous))
    return d


def _e_evals_entry(e: EvalsEntry) -> dict[str, Any]:
    d: dict[str, Any] = {}
    _e_header(d, e.header)
    d["results"] = [_e_eval_result(r) for r in e.results]
    d["summary"] = _e_eval_summary(e.summary)
    _put_p(d, "baseline", _e_eval_snapshot(e.baseline))
    _put_p(d, "previous", _e_eval_snapshot(e.previous))
    return d


def to_document(file: ResultsFile) -> dict[str, Any]:
    """The JSON data model of `file` in evolve's field order, ready for `encoding.encode_json`.

    Floats stay `float` (encoded with Go's shortest form, `10.0` → `10`), counts stay `int`;
    `models` is sorted by key; pointer fields are omitted only when `None`, omitempty value
    fields when zero/empty, and always-fields are written (`pricing: null` for unpriced models).
    """
    d: dict[str, Any] = {"schema": file.schema, "plugin": file.plugin, "skill": file.skill}
    models: dict[str, Any] = {}
    for key in sorted(file.models):
        entry = file.models[key]
        m: dict[str, Any] = {}
        if entry.triggers is not None:
            m["triggers"] = _e_triggers_entry(entry.triggers)
        if entry.evals is not None:
            m["evals"] = _e_evals_entry(entry.evals)
        models[key] = m
    _put_z(d, "models", models)
    return d


# --------------------------------------------------------------------------------------------
# Summaries (report spec §1.3)
# --------------------------------------------------------------------------------------------


def _sum_estimates(estimates: Iterable[Estimate | None]) -> Estimate | None:
    present = [e for e in estimates if e is not None]
    if not present:
        return None
    tokens = 0
    cost = 0.0
    any_cost = False
    for e in present:
        tokens += e.input_tokens
        if e.input_cost_usd is not None:
            cost += e.input_cost_usd
            any_cost = True
    return Estimate(input_tokens=tokens, input_cost_usd=round6(cost) if any_cost else None)


def _sum_measured(items: Iterable[Measured | None]) -> Measured | None:
    sums: dict[str, int] = {}
    cost = 0.0
    any_cost = False
    for m in items:
        if m is None:
            continue
        for name in (
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
            "output_tokens",
        ):
            v = getattr(m, name)
            if v is not None:
                sums[name] = sums.get(name, 0) + v
        if m.cost_usd is not None:
            cost += m.cost_usd
            any_cost = True
    if not sums and not any_cost:
        return None
    return Measured(
        input_tokens=sums.get("input_tokens"),
        cache_read_input_tokens=sums.get("cache_read_input_tokens"),
        cache_creation_input_tokens=sums.get("cache_creation_input_tokens"),
        output_tokens=sums.get("output_tokens"),
        cost_usd=round6(cost) if any_cost else None,
    )


def _mean1(values: Sequence[float]) -> float | None:
    if not values:
        return None
    total = 0.0
    for v in values:
        total += v
    return round1(total / len(values))


def summarise_triggers(
    results: Sequence[TriggerResult], *, executed: bool = True
) -> TriggerSummary:
    """Summary over an entry's merged trigger results (§1.3); count-only gets total + estimate."""
    estimate = _sum_estimates(r.estimate for r in results)
    if not executed:
        return TriggerSummary(total=len(results), estimate=estimate)
    passed = sum(1 for r in results if r.passed is True)
    failed = sum(1 for r in results if r.passed is False)
    rate = round6(passed / (passed + failed)) if passed + failed > 0 else None
    secs = [r.avg_run_seconds for r in results if r.avg_run_seconds is not None]
    return TriggerSummary(
        passed=passed,
        failed=failed,
        total=len(results),
        pass_rate=rate,
        avg_run_seconds=_mean1(secs),
        estimate=estimate,
    )


def summarise_evals(results: Sequence[EvalResult], *, executed: bool = True) -> EvalSummary:
    """Summary over an entry's merged eval results (§1.3).

    Errored (`runtime_error`) and verdict-less results are excluded from `pass_rate`; errored
    ones still count in `avg_run_seconds` because they carry timing. Count-only gets only
    `total` and `estimate`.
    """
    estimate = _sum_estimates(r.estimate for r in results)
    if not executed:
        return EvalSummary(total=len(results), estimate=estimate)
    passed = failed = errored = 0
    for r in results:
        if r.runtime_error:
            errored += 1
        elif r.passed is True:
            passed += 1
        elif r.passed is False:
            failed += 1
    rate = round6(passed / (passed + failed)) if passed + failed > 0 else None
    secs = [
        r.timing.executor_duration_seconds
        for r in results
        if r.timing is not None and r.timing.executor_duration_seconds is not None
    ]
    return EvalSummary(
        passed=passed,
        failed=failed,
        errored=errored or None,
        total=len(results),
        pass_rate=rate,
        avg_run_seconds=_mean1(secs),
        estimate=estimate,
        measured=_sum_measured(r.measured for r in results),
    )


def summarise_grades(assertions: Sequence[GradedAssertion]) -> GradeSummary:
    """A case's grade summary: skips (`passed is None`) are counted apart and excluded from the rate."""
    passed = sum(1 for a in assertions if a.passed is True)
    failed = sum(1 for a in assertions if a.passed is False)
    skipped = sum(1 for a in assertions if a.passed is None)
    rate = round6(passed / (passed + failed)) if passed + failed > 0 else None
    return GradeSummary(
        passed=passed, failed=failed, total=len(assertions), pass_rate=rate, skipped=skipped
    )


# --------------------------------------------------------------------------------------------
# Replacing an entry: merge (§1.5 / engine §7.3), previous rotation and baseline (§1.4)
# --------------------------------------------------------------------------------------------

_R = TypeVar("_R", TriggerResult, EvalResult)


def merge_cases(
    valid_keys: Sequence[str],
    fresh: Mapping[str, _R],
    stored: Sequence[_R],
    key: Callable[[_R], str],
) -> tuple[_R, ...]:
    """Walk the cases valid for this model in authored order: fresh result, else stored, else none.

    Cases removed from the spec are pruned; cases never run stay absent. A key listed twice
    (a duplicate query, which checks reject) is kept once, at its first position.
    """
    by_key: dict[str, _R] = {}
    for r in stored:
        by_key.setdefault(key(r), r)
    out: list[_R] = []
    seen: set[str] = set()
    for k in valid_keys:
        if k in seen:
            continue
        seen.add(k)
        picked = fresh.get(k)
        if picked is None:
            picked = by_key.get(k)
        if picked is not None:
            out.append(picked)
    return tuple(out)


def _final_header(header: EntryHeader, old: EntryHeader | None, complete: bool) -> EntryHeader:
    # While a unit is still running, keep the stored content hash: the entry's content hash
    # covers every result in it, and refreshing it early would hide the staleness of cases that
    # have not re-run yet from a later `--modified` (engine spec §13.8). Set on the last write.
    if complete or old is None or not old.content_hash:
        return header
    return dataclasses.replace(header, content_hash=old.content_hash)


def replace_trigger_entry(
    old: TriggersEntry | None,
    *,
    header: EntryHeader,
    fresh: Mapping[str, TriggerResult],
    valid_queries: Sequence[str],
    complete: bool = True,
) -> TriggersEntry:
    """The entry to store after a trigger unit ran `fresh` (keyed by query), per §1.4.

    `valid_queries` are the spec's queries valid for this model (model restriction applied,
    selection filters ignored), in authored order. `header` is the new header (`ran_at` now,
    fresh `content_hash`, `runs_per_query` when executed). `complete=False` marks an
    intermediate write while the unit still has cases in flight (see `_final_header`).
    """
    merged = merge_cases(valid_queries, fresh, old.results if old else (), lambda r: r.query)
    executed = header.executed
    if executed:
        previous = (
            TriggerSnapshot(ran_at=old.header.ran_at, summary=old.summary, results=old.results)
            if old is not None and old.header.executed
            else None
        )
    else:
        previous = old.previous if old is not None else None
    return TriggersEntry(
        header=_final_header(header, old.header if old else None, complete),
        results=merged,
        summary=summarise_triggers(merged, executed=executed),
        previous=previous,
    )


def trim_eval_result(r: EvalResult) -> EvalResult:
    """The snapshot form of an eval result: id, runtime_error, passed, estimate, measured,
    grade summary, fingerprint and `timing` reduced to `executor_duration_seconds`."""
    return EvalResult(
        id=r.id,
        runtime_error=r.runtime_error,
        passed=r.passed,
        estimate=r.estimate,
        measured=r.measured,
        summary=r.summary,
        timing=(
            Timing(executor_duration_seconds=r.timing.executor_duration_seconds)
            if r.timing is not None
            else None
        ),
        fingerprint=r.fingerprint,
    )


def _eval_snapshot(old: EvalsEntry) -> EvalSnapshot:
    return EvalSnapshot(
        ran_at=old.header.ran_at,
        summary=old.summary,
        results=tuple(trim_eval_result(r) for r in old.results),
    )


def _new_baseline(
    old: EvalSnapshot | None,
    fresh_baselines: Mapping[str, EvalResult],
    merged: Sequence[EvalResult],
    now: str,
) -> EvalSnapshot | None:
    by_id: dict[str, EvalResult] = {}
    if old is not None:
        for r in old.results:
            by_id.setdefault(r.id, r)
    for k, r in fresh_baselines.items():
        by_id[k] = trim_eval_result(r)
    kept = tuple(by_id[r.id] for r in merged if r.id in by_id)
    if not kept:
        return None
    ran_at = now if fresh_baselines else (old.ran_at if old is not None else now)
    return EvalSnapshot(ran_at=ran_at, summary=summarise_evals(kept), results=kept)


def replace_eval_entry(
    old: EvalsEntry | None,
    *,
    header: EntryHeader,
    fresh: Mapping[str, EvalResult],
    valid_ids: Sequence[str],
    fresh_baselines: Mapping[str, EvalResult] | None = None,
    complete: bool = True,
) -> EvalsEntry:
    """The entry to store after an eval unit ran `fresh` (keyed by id), per §1.4.

    `valid_ids` are the eval ids valid for this model, in authored order (ids are not narrowed
    by `--eval`: unlike evolve we keep other evals' stored results, engine spec §13.10b).
    `fresh_baselines` are the without-skill results re-run now, each with `fingerprint` set; they
    are overlaid on the stored baseline, pruned to the merged ids, and re-summarised. A count-only
    run (`header.executed` false) carries `previous` and `baseline` over unchanged.
    """
    merged = merge_cases(valid_ids, fresh, old.results if old else (), lambda r: r.id)
    executed = header.executed
    if executed:
        previous = _eval_snapshot(old) if old is not None and old.header.executed else None
        baseline = _new_baseline(
            old.baseline if old is not None else None, fresh_baselines or {}, merged, header.ran_at
        )
    else:
        previous = old.previous if old is not None else None
        baseline = old.baseline if old is not None else None
    return EvalsEntry(
        header=_final_header(header, old.header if old else None, complete),
        results=merged,
        summary=summarise_evals(merged, executed=executed),
        baseline=baseline,
        previous=previous,
    )


def with_entry(
    file: ResultsFile,
    model_key: str,
    *,
    triggers: TriggersEntry | None = None,
    evals: EvalsEntry | None = None,
) -> ResultsFile:
    """A copy of `file` with the given tier entries of `model_key` replaced (others kept)."""
    cur = file.models.get(model_key, ModelEntry())
    new = ModelEntry(
        triggers=triggers if triggers is not None else cur.triggers,
        evals=evals if evals is not None else cur.evals,
    )
    models = dict(file.models)
    models[model_key] = new
    return dataclasses.replace(file, schema=SCHEMA_VERSION, models=models)


def foreign_model_keys(file: ResultsFile, active: Iterable[str]) -> list[str]:
    """Model keys stored in `file` that are not in `active`, sorted (engine spec §7.5)."""
    act = set(active)
    return sorted(k for k in file.models if k not in act)


def drop_models(file: ResultsFile, keys: Iterable[str]) -> ResultsFile:
    """A copy of `file` without the given model keys (`--stale-results=drop`)."""
    gone = set(keys)
    return dataclasses.replace(file, models={k: v for k, v in file.models.items() if k not in gone})


# --------------------------------------------------------------------------------------------
# Migrations (report spec §2)
# --------------------------------------------------------------------------------------------


def _m_trigger_snapshot(o: _Obj) -> TriggerSnapshot:
    cases = o.obj_map("cases", lambda c: c)
    results = tuple(
        TriggerResult(
            query=q,
            should_trigger=False,
            hits=c.opt_int("hits"),
            runs=c.opt_int("runs"),
            passed=c.opt_bool("passed"),
            avg_run_seconds=c.opt_float("avg_run_seconds"),
            estimate=c.opt_obj("estimate", _d_estimate),
        )
        for q, c in sorted(cases.items())
    )
    return TriggerSnapshot(
        ran_at=o.str_("ran_at"), summary=o.obj("summary", _d_trigger_summary), results=results
    )


def _m_eval_case(eid: str, c: _Obj) -> EvalResult:
    secs = c.opt_float("avg_run_seconds")
    return EvalResult(
        id=eid,
        runtime_error="errored" if c.bool_("errored") else "",
        passed=c.opt_bool("passed"),
        estimate=c.opt_obj("estimate", _d_estimate),
        measured=c.opt_obj("measured", _d_measured),
        summary=GradeSummary(
            passed=c.int_("assert_passed"),
            failed=0,
            total=c.int_("assert_total"),
            pass_rate=c.opt_float("pass_rate"),
        ),
        timing=Timing(executor_duration_seconds=secs) if secs is not None else None,
        fingerprint=c.str_("fingerprint"),
    )


def _m_eval_snapshot(o: _Obj) -> EvalSnapshot:
    cases = o.obj_map("cases", lambda c: c)
    results = tuple(_m_eval_case(k, c) for k, c in sorted(cases.items()))
    return EvalSnapshot(
        ran_at=o.str_("ran_at"), summary=o.obj("summary", _d_eval_summary), results=results
    )


def _m_triggers_entry(o: _Obj) -> TriggersEntry:
    return TriggersEntry(
        header=_d_header(o),
        results=o.list_("results", _d_trigger_result),
        summary=o.obj("summary", _d_trigger_summary),
        previous=o.opt_obj("previous", _m_trigger_snapshot),
    )


def _m_evals_entry(o: _Obj) -> EvalsEntry:
    return EvalsEntry(
        header=_d_header(o),
        results=o.list_("results", _d_eval_result),
        summary=o.obj("summary", _d_eval_summary),
        baseline=o.opt_obj("baseline", _m_eval_snapshot),
        previous=o.opt_obj("previous", _m_eval_snapshot),
    )


def migrate_document(doc: Any, *, plugin: str = "", skill: str = "") -> ResultsFile:
    """Migrate a schema 3/4 document (tier-major `triggers`/`evals` maps) to schema 5.

    Snapshot `cases` maps become `results` arrays sorted by query/id; trigger cases get
    `should_trigger: false` (unknown); eval cases turn `errored` into `runtime_error: "errored"`,
    their rates into a grade summary and `avg_run_seconds` into `timing`. Live `results` and
    `summary` are carried unchanged. Raises `ValueError` on a malformed document.
    """
    try:
        o = _Obj(doc, "results")
        trig = o.obj_map("triggers", _m_triggers_entry)
        evs = o.obj_map("evals", _m_evals_entry)
        models: dict[str, ModelEntry] = {}
        for key in sorted(set(trig) | set(evs)):
            models[key] = ModelEntry(triggers=trig.get(key), evals=evs.get(key))
        return ResultsFile(
            schema=SCHEMA_VERSION,
            plugin=plugin or o.str_("plugin"),
            skill=skill or o.str_("skill"),
            models=models,
        )
    except _Malformed as exc:
        raise ValueError(str(exc)) from exc


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


class LoadedResults(NamedTuple):
    """What `load_results` found."""

    file: ResultsFile | None
    """The (possibly migrated) file; None when there is none or it was unreadable."""
    path: Path | None
    """The file read (first of `results.{json,jsonc,yaml,yml}`), if any."""
    warning: str | None
    """Set when an unreadable/too-old file will be replaced ("starting fresh")."""
    migrated_from: int | None
    """3 or 4 when the file was migrated in memory."""


def results_path(results_dir: Path, fmt: encoding.Format) -> Path:
    """`<results_dir>/results.<fmt>`."""
    return results_dir / f"results.{fmt}"


def _names(results_dir: Path, plugin: str | None, skill: str | None) -> tuple[str, str]:
    sk = skill if skill is not None else results_dir.name
    pl = plugin if plugin is not None else results_dir.parent.parent.name
    return pl, sk


def load_results(
    results_dir: Path,
    *,
    plugin: str | None = None,
    skill: str | None = None,
    root: Path | None = None,
) -> LoadedResults:
    """Read the results file of an eval directory (report spec §1.6).

    `plugin`/`skill` overwrite the stored names (default: the directory names
    `<plugin>/evals/<skill>`). Schema 5 is decoded; 3 and 4 are migrated in memory; a newer
    schema raises `SpecError` (the file must never be overwritten); anything unreadable or
    older is treated as absent with a "starting fresh" `warning` (`root` only shortens the
    path in it). Returns an empty result when there is no results file.
    """
    path = encoding.find_results(results_dir)
    if path is None:
        return LoadedResults(None, None, None, None)
    pl, sk = _names(results_dir, plugin, skill)
    fresh = (
        f"{display_path(path, root)} has an old or unreadable results schema; "
        f"starting fresh (schema {SCHEMA_VERSION})"
    )
    try:
        doc = encoding.decode_path(path)
    except SpecError:
        return LoadedResults(None, path, fresh, None)
    n = probe_schema(doc)
    if n is not None and n > SCHEMA_VERSION:
        raise SpecError(
            f"{path} is schema {n}, written by a newer evolve (this tool writes schema "
            f"{SCHEMA_VERSION}); upgrade evolve-action",
            path=path,
            hint="the file is left untouched",
        )
    try:
        if n == SCHEMA_VERSION:
            return LoadedResults(from_document(doc, plugin=pl, skill=sk), path, None, None)
        if n in MIGRATABLE:
            return LoadedResults(migrate_document(doc, plugin=pl, skill=sk), path, None, n)
    except ValueError:
        pass
    return LoadedResults(None, path, fresh, None)


def write_results(results_dir: Path, file: ResultsFile, fmt: encoding.Format) -> Path:
    """Write `file` atomically as `results.<fmt>` and delete other-format siblings; return the path.

    json = Go `MarshalIndent` + `\\n`; jsonc/yaml start with the
    `Maintained by evolve run; do not edit by hand.` comment line.
    """
    path = results_path(results_dir, fmt)
    text = encoding.encode_document(to_document(file), fmt, encoding.RESULTS_COMMENT)
    fsio.atomic_write_text(path, text)
    fsio.remove_siblings(path)
    return path


def migrate_in_place(
    results_dir: Path,
    fmt: encoding.Format,
    *,
    plugin: str | None = None,
    skill: str | None = None,
) -> int | None:
    """`report --migrate` for one eval directory: rewrite a schema 3/4 file as schema 5.

    Returns the old schema number when the file was upgraded, None when there is no file or it
    is already schema 5. Raises `SpecError` for schemas it cannot migrate (`< 3`, unreadable)
    or newer than 5; the file is then left untouched.
    """
    path = encoding.find_results(results_dir)
    if path is None:
        return None
    doc = encoding.decode_path(path)
    n = probe_schema(doc)
    if n == SCHEMA_VERSION:
        return None
    if n is not None and n > SCHEMA_VERSION:
        raise SpecError(
            f"{path} is schema {n}, written by a newer evolve (this tool writes schema "
            f"{SCHEMA_VERSION}); upgrade evolve-action",
            path=path,
        )
    if n not in MIGRATABLE:
        shown = "no schema" if n is None else f"schema {n}"
        raise SpecError(
            f"{path}: cannot migrate results with {shown} (only schemas 3 and 4 migrate)",
            path=path,
            hint="delete the file to start fresh",
        )
    pl, sk = _names(results_dir, plugin, skill)
    try:
        file = migrate_document(doc, plugin=pl, skill=sk)
    except ValueError as exc:
        raise SpecError(f"{path}: cannot migrate: {exc}", path=path) from exc
    write_results(results_dir, file, fmt)
    return n


# --------------------------------------------------------------------------------------------
# The write-after-each-unit path
# --------------------------------------------------------------------------------------------


class ResultsWriter:
    """The in-memory state of one results file plus its atomic writer.

    One instance per results file, shared by every unit (model × tier) that writes it. `put_*`
    swap an entry in and rewrite the whole file synchronously; they never await, so calls from
    coroutines on one event loop cannot interleave a read-modify-write (that is why there is no
    lock). Never call them from worker threads.
    """

    def __init__(
        self,
        results_dir: Path,
        file: ResultsFile | None,
        fmt: encoding.Format,
        *,
        plugin: str = "",
        skill: str = "",
    ) -> None:
        pl, sk = _names(results_dir, plugin or None, skill or None)
        self.results_dir = results_dir
        self.fmt: encoding.Format = fmt
        self._file = file if file is not None else ResultsFile(plugin=pl, skill=sk)
        self.writes = 0
        """How many times the file was written (tests and progress use it)."""

    @property
    def file(self) -> ResultsFile:
        """The current in-memory file (what was last written, or loaded)."""
        return self._file

    def put_triggers(self, model_key: str, entry: TriggersEntry) -> Path:
        """Store `entry` as `model_key`'s triggers entry and rewrite the file atomically."""
        self._file = with_entry(self._file, model_key, triggers=entry)
        return self._write()

    def put_evals(self, model_key: str, entry: EvalsEntry) -> Path:
        """Store `entry` as `model_key`'s evals entry and rewrite the file atomically."""
        self._file = with_entry(self._file, model_key, evals=entry)
        return self._write()

    def replace_file(self, file: ResultsFile) -> Path:
        """Replace the whole file (e.g. after `drop_models`) and write it."""
        self._file = file
        return self._write()

    def _write(self) -> Path:
        path = write_results(self.results_dir, self._file, self.fmt)
        self.writes += 1
        return path


class TriggerUnitRecord:
    """Accumulates one trigger unit's fresh results; `add` returns the entry to write now.

    `old` is the stored entry at unit start (it stays the source of `previous` for every
    intermediate write). `planned` are the queries this unit will run; the entry is marked
    complete (fresh `content_hash`) once all of them have a fresh result.
    """

    def __init__(
        self,
        old: TriggersEntry | None,
        *,
        header: EntryHeader,
        valid_queries: Sequence[str],
        planned: Iterable[str],
    ) -> None:
        self.old = old
        self.header = header
        self.valid_queries = tuple(valid_queries)
        self.planned = frozenset(planned)
        self.fresh: dict[str, TriggerResult] = {}

    @property
    def complete(self) -> bool:
        """All planned queries have a fresh result."""
        return self.planned.issubset(self.fresh)

    def add(self, result: TriggerResult) -> TriggersEntry:
        """Record one finished query and return the merged entry to store."""
        self.fresh[result.query] = result
        return self.entry()

    def entry(self, *, final: bool = False) -> TriggersEntry:
        """The merged entry for the results so far (`final=True` forces a complete header)."""
        return replace_trigger_entry(
            self.old,
            header=self.header,
            fresh=self.fresh,
            valid_queries=self.valid_queries,
            complete=final or self.complete,
        )


class EvalUnitRecord:
    """Accumulates one eval unit's fresh results (and baselines); `add` returns the entry to write.

    Same contract as `TriggerUnitRecord`; a case's baseline result, when it ran, is passed to
    `add` with the case so that both land in the same write.
    """

    def __init__(
        self,
        old: EvalsEntry | None,
        *,
        header: EntryHeader,
        valid_ids: Sequence[str],
        planned: Iterable[str],
    ) -> None:
        self.old = old
        self.header = header
        self.valid_ids = tuple(valid_ids)
        self.planned = frozenset(planned)
        self.fresh: dict[str, EvalResult] = {}
        self.fresh_baselines: dict[str, EvalResult] = {}

    @property
    def complete(self) -> bool:
        """All planned evals have a fresh result."""
        return self.planned.issubset(self.fresh)

    def add(self, result: EvalResult, baseline: EvalResult | None = None) -> EvalsEntry:
        """Record one finished case (and its fresh baseline, if one ran); return the entry."""
        self.fresh[result.id] = result
        if baseline is not None:
            self.fresh_baselines[result.id] = baseline
        return self.entry()

    def entry(self, *, final: bool = False) -> EvalsEntry:
        """The merged entry for the results so far (`final=True` forces a complete header)."""
        return replace_eval_entry(
            self.old,
            header=self.header,
            fresh=self.fresh,
            valid_ids=self.valid_ids,
            fresh_baselines=self.fresh_baselines,
            complete=final or self.complete,
        )
