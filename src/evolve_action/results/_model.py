"""The typed model of a schema-5 results file: frozen msgspec structs, no behaviour.

Owns: `ResultsFile` → `ModelEntry` → `TriggersEntry` / `EvalsEntry` with their `EntryHeader`,
case results (`TriggerResult`, `EvalResult` with `GradedAssertion`, `ExecutionMetrics`,
`Timing`), summaries and `previous`/`baseline` snapshots; `make_header` (the header a run writes)
and `format_ran_at`.

Guarantees: every value is a frozen, keyword-only msgspec struct; optional fields use `None`
for Go pointer fields (rule P: omitted only when nil) and the zero value (`""`, `0`, `()`) for Go
`omitempty` value fields (rule Z), so the codec (`_codec`) reproduces evolve's bytes and
decodes each field by its declared type. Maps (`models`, `tool_calls`) are plain dicts inside
frozen structs: never mutate them, build new ones (`msgspec.structs.replace`). Never does: I/O, encoding, clocks (`now`
is a parameter).

Model choice: raw dicts exist only at the codec boundary, so TypedDicts would add a second
description of the same shape without buying safety; the structs are the one description.
They are msgspec structs rather than dataclasses so that canonical files decode straight into
them (`_bytes`: about 0.7 ms a 330 KB file instead of 2.3 ms through dataclasses).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType

import msgspec

from evolve_action import catalog

__all__ = [
    "ALWAYS",
    "MIGRATABLE",
    "SCHEMA_VERSION",
    "BaselineSnapshot",
    "EntryHeader",
    "Estimate",
    "EvalResult",
    "EvalSnapshot",
    "EvalSummary",
    "EvalsEntry",
    "ExecutionMetrics",
    "GradeSummary",
    "GradedAssertion",
    "Measured",
    "ModelEntry",
    "PreviousSnapshot",
    "Pricing",
    "ResultsFile",
    "Timing",
    "TriggerResult",
    "TriggerSnapshot",
    "TriggerSummary",
    "TriggersEntry",
    "format_ran_at",
    "make_header",
]

SCHEMA_VERSION = 5
"""The results schema this tool reads natively and writes."""


class _Struct(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, gc=False):
    """The base of every model value: frozen, keyword-only; msgspec decodes canonical files
    straight into it (`_bytes`), refusing unknown keys; never tracked by the garbage collector
    (the values form trees, never cycles)."""


MIGRATABLE = (3, 4)
"""Older schemas migrated in memory (report spec §2)."""


# --------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------


class Pricing(_Struct, frozen=True):
    """USD per million tokens at run time; a rate is `None` when unpublished."""

    input_per_mtok: float | None = None
    output_per_mtok: float | None = None

    @classmethod
    def of(cls, price: catalog.Pricing | None) -> Pricing | None:
        """The stored form of a catalog price (None stays None, written as `null`).

        Two types on purpose: the catalog's rates are always known, a stored file's may be
        `null` (an unpublished rate in a file evolve wrote).
        """
        if price is None:
            return None
        return cls(input_per_mtok=price.input_per_mtok, output_per_mtok=price.output_per_mtok)


class Estimate(_Struct, frozen=True):
    """Counting-API token estimate of `SKILL.md + "\\n\\n" + query/prompt`."""

    input_tokens: int = 0
    input_cost_usd: float | None = None
    """round6(tokens / 1e6 × input rate); `None` when the model has no input rate."""


class Measured(_Struct, frozen=True):
    """Usage the harness reported for an eval run (each field optional)."""

    input_tokens: int | None = None
    """Fresh, uncached input tokens only."""
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    """Reported total cost, else computed from both rates; round6."""

    @property
    def total_tokens(self) -> int | None:
        """Every token of the run (fresh and cached input, output); None when none was reported."""
        parts = (
            self.input_tokens,
            self.cache_read_input_tokens,
            self.cache_creation_input_tokens,
            self.output_tokens,
        )
        present = [p for p in parts if p is not None]
        return sum(present) if present else None


class EntryHeader(_Struct, frozen=True):
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
    install: str = ""
    """Triggers: `plugin` when the plugin was loaded as users install it (`--plugin-dir`); empty
    for evolve's skill linking. An evolve-action field: evolve ignores it (and drops it when it
    rewrites the file)."""


class TriggerResult(_Struct, frozen=True):
    """One trigger query's outcome."""

    query: str = ""
    should_trigger: bool = False
    hits: int | None = None
    runs: int | None = None
    passed: bool | None = None
    avg_run_seconds: float | None = None
    estimate: Estimate | None = None
    spec_hash: str = ""


class TriggerSummary(_Struct, frozen=True):
    """Aggregate over an entry's merged trigger results (§1.3)."""

    passed: int | None = None
    failed: int | None = None
    total: int = 0
    pass_rate: float | None = None
    avg_run_seconds: float | None = None
    estimate: Estimate | None = None


class TriggerSnapshot(_Struct, frozen=True):
    """A trigger entry's `previous`: the replaced entry's summary and whole results."""

    ran_at: str = ""
    summary: TriggerSummary = msgspec.field(default_factory=TriggerSummary)
    results: tuple[TriggerResult, ...] = ()


class GradedAssertion(_Struct, frozen=True):
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


class GradeSummary(_Struct, frozen=True):
    """Per-case assertion counts."""

    passed: int = 0
    failed: int = 0
    total: int = 0
    pass_rate: float | None = None
    skipped: int = 0


class ExecutionMetrics(_Struct, frozen=True):
    """Tool-call counts the harness reported (claude, codex)."""

    tool_calls: dict[str, int] = msgspec.field(default_factory=dict)
    total_tool_calls: int | None = None
    total_steps: int | None = None
    files_created: tuple[str, ...] = ()
    errors_encountered: int | None = None
    output_chars: int | None = None
    transcript_chars: int | None = None


class Timing(_Struct, frozen=True):
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


class EvalResult(_Struct, frozen=True):
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


class EvalSummary(_Struct, frozen=True):
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


class EvalSnapshot(_Struct, frozen=True):
    """An eval entry's `previous` or `baseline` snapshot (results trimmed, §1.4)."""

    ran_at: str = ""
    summary: EvalSummary = msgspec.field(default_factory=EvalSummary)
    results: tuple[EvalResult, ...] = ()


PreviousSnapshot = TriggerSnapshot | EvalSnapshot
"""A `previous` snapshot: the shape follows the tier (triggers keep whole results)."""

BaselineSnapshot = EvalSnapshot
"""The without-skill `baseline` snapshot of an eval entry (results carry `fingerprint`)."""


class TriggersEntry(_Struct, frozen=True):
    """A model's Tier 1 entry."""

    header: EntryHeader = msgspec.field(default_factory=EntryHeader)
    results: tuple[TriggerResult, ...] = ()
    summary: TriggerSummary = msgspec.field(default_factory=TriggerSummary)
    previous: TriggerSnapshot | None = None


class EvalsEntry(_Struct, frozen=True):
    """A model's Tier 2 entry (`baseline` is written before `previous`)."""

    header: EntryHeader = msgspec.field(default_factory=EntryHeader)
    results: tuple[EvalResult, ...] = ()
    summary: EvalSummary = msgspec.field(default_factory=EvalSummary)
    baseline: EvalSnapshot | None = None
    previous: EvalSnapshot | None = None


class ModelEntry(_Struct, frozen=True):
    """Both tiers for one model key (`provider/bare-id`)."""

    triggers: TriggersEntry | None = None
    evals: EvalsEntry | None = None


class ResultsFile(_Struct, frozen=True):
    """A whole schema-5 results file."""

    schema: int = SCHEMA_VERSION
    plugin: str = ""
    skill: str = ""
    models: dict[str, ModelEntry] = msgspec.field(default_factory=dict)
    """Keyed by `provider/bare-id`; written sorted by key."""


ALWAYS: Mapping[type, frozenset[str]] = MappingProxyType(
    {
        Pricing: frozenset({"input_per_mtok", "output_per_mtok"}),
        Estimate: frozenset({"input_tokens"}),
        EntryHeader: frozenset(
            {
                "provider",
                "model",
                "display",
                "tool_version",
                "ran_at",
                "executed",
                "timeout_seconds",
                "pricing",
            }
        ),
        TriggerResult: frozenset({"query", "should_trigger"}),
        TriggerSummary: frozenset({"total"}),
        GradedAssertion: frozenset({"type", "text", "passed", "evidence"}),
        GradeSummary: frozenset({"passed", "failed", "total"}),
        EvalResult: frozenset({"id"}),
        EvalSummary: frozenset({"total"}),
        TriggersEntry: frozenset({"results"}),
        EvalsEntry: frozenset({"results"}),
        ResultsFile: frozenset({"schema", "plugin", "skill"}),
    }
)
"""The fields always written (Go: no `omitempty`; a nil pointer as `null`), per model type.

Other fields follow the type: `X | None` is a Go pointer, omitted only when `None`; a nested
model value is always written; any other value is `omitempty`, omitted when zero or empty.
Field order is the JSON field order.
"""


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
    pricing = Pricing.of(model.pricing)
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
