"""Rollups and the rollup document (`EVALUATION.<fmt>`, schema 3).

Owns: the per plugin × model and per skill × model aggregation of stored results (report spec §3.4),
the schema-3 rollup document (§4), the active-model filter (§3.1 step 3), provider capabilities
(§3.1 step 4) and the Excluded-models rows (§3.2). Maturity and the `report --check` gate live in
`_gate`.

Guarantees: every function here is pure (data in, data out) and deterministic; sums and rates use
the Go-compatible rounding helpers (`round1`, `round6`) exactly where evolve applies them.
Never does: I/O, printing, reading the environment (the I/O edge is `flows.regenerate_report`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evolve_action.catalog import USAGE_HARNESSES, Catalog
from evolve_action.encoding import round1, round6
from evolve_action.plan import Tier
from evolve_action.results import (
    Estimate,
    EvalsEntry,
    EvalSummary,
    Measured,
    ModelEntry,
    ResultsFile,
    TriggersEntry,
    TriggerSummary,
    estimate_json,
    measured_json,
)

__all__ = [
    "ROLLUP_SCHEMA",
    "Delta",
    "LoadedFile",
    "LoadedPlugin",
    "PluginSummary",
    "ProviderCaps",
    "Rollup",
    "RollupDocument",
    "RollupStats",
    "SkillSummary",
    "active_model_keys",
    "build_rollup_document",
    "excluded_rows",
    "filter_file",
    "plugin_summary",
    "provider_caps",
    "rollup_entries",
]

ROLLUP_SCHEMA = 3
"""Schema version of the `EVALUATION.<fmt>` rollup document."""


# ---------------------------------------------------------------------------------------------
# Inputs: what the edge loads for each plugin


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedFile:
    """One eval set's stored results, as loaded (possibly migrated in memory)."""

    skill: str
    """Eval-set directory name (`evals/<skill>`)."""
    results: ResultsFile
    """The results model (schema 5 shape)."""
    path: str = ""
    """Repo-relative path of the results file (for messages)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedPlugin:
    """A plugin with the results files loaded for it, in skill order."""

    name: str
    """Plugin name (directory name; manifest name in the single layout)."""
    rel_dir: str
    """Plugin directory relative to the repo root (`.` for the single layout)."""
    files: tuple[LoadedFile, ...]
    """Loaded results files in skill order (eval sets with a definition and a results file)."""
    version: str | None = None
    """`version` from the plugin's `.claude-plugin/plugin.json`, or None."""
    authored_triggers: bool = False
    """Some eval set of the plugin defines triggers."""
    authored_evals: bool = False
    """Some eval set of the plugin defines evals."""


# ---------------------------------------------------------------------------------------------
# Provider capabilities and the active-model filter


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderCaps:
    """What a provider can produce: display name, token counting, usage reporting."""

    display: str
    """Display name (`Anthropic`), or the raw id for an unknown provider."""
    counts: bool
    """The vendor has a token-counting API (estimates are possible)."""
    usage: bool
    """The provider's usage-reporting harness is preferred by some model (measured is possible)."""


_COUNTING_PROVIDERS = frozenset({"anthropic", "openai", "google", "xai"})


def provider_caps(catalog: Catalog) -> dict[str, ProviderCaps]:
    """Capabilities per provider id, derived from the full catalog (report spec §3.1 step 4).

    `usage` holds when the provider's models mostly prefer a usage-reporting harness: evolve keys
    it on the harness preferred by the provider's first such model (one copilot-only OpenAI model
    does not change OpenAI's answer), so here: any model whose preferred harness reports usage.
    """
    caps: dict[str, ProviderCaps] = {}
    for p in catalog.providers:
        models = [m for m in catalog.models if m.provider == p.id]
        caps[p.id] = ProviderCaps(
            display=p.display,
            counts=p.id in _COUNTING_PROVIDERS,
            usage=any(m.preferred in USAGE_HARNESSES for m in models),
        )
    return caps


def caps_for(caps: Mapping[str, ProviderCaps], provider: str) -> ProviderCaps:
    """The capabilities of `provider`, or raw-id display with no counts and no usage."""
    return caps.get(provider) or ProviderCaps(display=provider, counts=False, usage=False)


def active_model_keys(
    catalog: Catalog,
    models: Sequence[str] | None,
    harnesses: Sequence[str] | None,
) -> frozenset[str] | None:
    """The active model keys, or None when no `models`/`harnesses` restriction is configured.

    Active = catalog models matching a `models` token (when set) that have at least one supported
    harness listed in `harnesses` (when set). Harness installation does not matter.
    """
    toks = [t.strip() for t in models or () if t.strip()]
    hs = [h.strip() for h in harnesses or () if h.strip()]
    if models is None and harnesses is None:
        return None
    matched = catalog.match(toks)
    return frozenset(m.key for m in matched if not hs or any(m.supports(h) for h in hs))


def excluded_rows(catalog: Catalog, active: frozenset[str] | None) -> list[tuple[str, str]]:
    """Rows `(provider display, cell)` of the Excluded-models table; empty when not applicable.

    Provider order is first appearance in the catalog (overridden providers sit at the end of the
    catalog already). The cell is `all models` when every catalog model of that provider is
    excluded, else the sorted excluded bare ids in backticks, joined with `, `.
    """
    if active is None:
        return []
    order: list[str] = []
    for m in catalog.models:
        if m.provider not in order:
            order.append(m.provider)
    rows: list[tuple[str, str]] = []
    for prov in order:
        models = [m for m in catalog.models if m.provider == prov]
        excluded = [m for m in models if m.key not in active]
        if not excluded:
            continue
        if len(excluded) == len(models):
            cell = "all models"
        else:
            cell = ", ".join(f"`{m.id}`" for m in sorted(excluded, key=lambda m: m.id))
        rows.append((catalog.provider_display(prov), cell))
    return rows


def filter_file(results: ResultsFile, active: Collection[str] | None) -> dict[str, ModelEntry]:
    """The file's model entries kept by the active filter, keyed and sorted by model key."""
    models = results.models or {}
    return {k: models[k] for k in sorted(models) if active is None or k in active}


# ---------------------------------------------------------------------------------------------
# Rollup values


@dataclass(frozen=True, slots=True, kw_only=True)
class RollupStats:
    """Aggregated figures of one accumulator (current, previous or baseline)."""

    passed: int | None = None
    """Passed cases (None when no counted entry had a verdict count)."""
    failed: int | None = None
    """`graded − passed` (derived, not summed)."""
    errored: int | None = None
    """Sum of `summary.errored` where present (evals)."""
    total: int = 0
    """Sum of `summary.total` (includes count-only cases)."""
    pass_rate: float | None = None
    """round6(passed / graded)."""
    avg_run_seconds: float | None = None
    """round1(total-weighted mean of entry averages)."""
    estimate: Estimate | None = None
    """Summed token estimates."""
    measured: Measured | None = None
    """Summed measured usage (evals)."""
    executed: int = 0
    """Sum of `summary.total` of counted entries (not serialised; the Markdown denominator)."""
    ungraded: int = 0
    """Trigger queries without a verdict inside counted entries (`total − passed − failed`: every
    run errored). Not serialised; excluded from the rate, as the file summary does (§1.3)."""

    def to_json(self) -> dict[str, Any]:
        """The RollupStats object in schema-3 field order."""
        out: dict[str, Any] = {}
        _put_stats(out, self)
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Delta:
    """Current minus prior; a field is present only when both sides have it."""

    rate: float | None = None
    avg_run_seconds: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None

    def is_empty(self) -> bool:
        """Whether no field is present (such a delta counts as absent)."""
        return all(
            v is None
            for v in (
                self.rate,
                self.avg_run_seconds,
                self.input_tokens,
                self.output_tokens,
                self.cost_usd,
            )
        )

    def to_json(self) -> dict[str, Any]:
        """The Delta object in schema-3 field order (present fields only)."""
        out: dict[str, Any] = {}
        for name in ("rate", "avg_run_seconds", "input_tokens", "output_tokens", "cost_usd"):
            v = getattr(self, name)
            if v is not None:
                out[name] = v
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Rollup:
    """One model key's aggregate over a set of entries (a plugin's skills, or one skill)."""

    key: str
    """Model key (`provider/bare-id`)."""
    provider: str
    """Provider id of the first entry seen."""
    display: str
    """Model display name of the first entry seen."""
    stats: RollupStats
    """Current figures."""
    priced: bool = False
    """Some contributing entry had `pricing`."""
    latest: str = ""
    """Max `ran_at` of the contributing entries."""
    baseline: RollupStats | None = None
    """Baseline figures (evals only)."""
    previous_delta: Delta | None = None
    """Current vs previous."""
    baseline_delta: Delta | None = None
    """Current vs baseline (evals only)."""

    def to_json(self) -> dict[str, Any]:
        """The Rollup object in schema-3 field order."""
        out: dict[str, Any] = {"provider": self.provider, "display": self.display}
        _put_stats(out, self.stats)
        if self.baseline is not None:
            out["baseline"] = self.baseline.to_json()
        if self.previous_delta is not None:
            out["previous_delta"] = self.previous_delta.to_json()
        if self.baseline_delta is not None:
            out["baseline_delta"] = self.baseline_delta.to_json()
        return out


def _put_stats(out: dict[str, Any], s: RollupStats) -> None:
    for name in ("passed", "failed", "errored"):
        v = getattr(s, name)
        if v is not None:
            out[name] = v
    out["total"] = s.total
    if s.pass_rate is not None:
        out["pass_rate"] = s.pass_rate
    if s.avg_run_seconds is not None:
        out["avg_run_seconds"] = s.avg_run_seconds
    if s.estimate is not None:
        out["estimate"] = estimate_json(s.estimate)
    if s.measured is not None:
        out["measured"] = measured_json(s.measured)


def sum_estimates(a: Estimate | None, b: Estimate | None) -> Estimate | None:
    """evolve's `sumEstimates`: tokens add; cost round6'd at each pairwise step, if any side has one."""
    if a is None:
        return b
    if b is None:
        return a
    cost: float | None = None
    if a.input_cost_usd is not None or b.input_cost_usd is not None:
        cost = round6((a.input_cost_usd or 0.0) + (b.input_cost_usd or 0.0))
    return Estimate(input_tokens=a.input_tokens + b.input_tokens, input_cost_usd=cost)


def sum_measured(a: Measured | None, b: Measured | None) -> Measured | None:
    """Per-field sums (a field stays absent when both lack it); cost round6'd at each step."""
    if a is None:
        return b
    if b is None:
        return a

    def add(x: int | None, y: int | None) -> int | None:
        return None if x is None and y is None else (x or 0) + (y or 0)

    cost: float | None = None
    if a.cost_usd is not None or b.cost_usd is not None:
        cost = round6((a.cost_usd or 0.0) + (b.cost_usd or 0.0))
    return Measured(
        input_tokens=add(a.input_tokens, b.input_tokens),
        cache_read_input_tokens=add(a.cache_read_input_tokens, b.cache_read_input_tokens),
        cache_creation_input_tokens=add(
            a.cache_creation_input_tokens, b.cache_creation_input_tokens
        ),
        output_tokens=add(a.output_tokens, b.output_tokens),
        cost_usd=cost,
    )


@dataclass(slots=True)
class _Acc:
    """A mutable accumulator (local to one rollup computation)."""

    total: int = 0
    passed: int | None = None
    executed: int = 0
    avg_sum: float | None = None
    errored: int | None = None
    ungraded: int = 0
    estimate: Estimate | None = None
    measured: Measured | None = None

    def add(self, summary: TriggerSummary | EvalSummary, counted: bool) -> None:
        self.total += summary.total
        if counted and summary.passed is not None:
            self.passed = (self.passed or 0) + summary.passed
            self.executed += summary.total
            if isinstance(summary, TriggerSummary):
                # A query whose runs all errored has no `passed`; the file summary leaves it out
                # of the rate, and so does the rollup. evolve always gives an executed query a
                # verdict, so for its files this is 0 and the §3.4 arithmetic is unchanged.
                # (Eval verdict-less cases keep evolve's count-as-failed quirk, §3.4 a.)
                self.ungraded += summary.total - summary.passed - (summary.failed or 0)
            if summary.avg_run_seconds is not None:
                self.avg_sum = (self.avg_sum or 0.0) + summary.avg_run_seconds * summary.total
        errored = getattr(summary, "errored", None)
        if errored is not None:
            self.errored = (self.errored or 0) + errored
        self.estimate = sum_estimates(self.estimate, summary.estimate)
        self.measured = sum_measured(self.measured, getattr(summary, "measured", None))

    def finalize(self) -> RollupStats:
        failed: int | None = None
        rate: float | None = None
        avg: float | None = None
        if self.passed is not None and self.executed > 0:
            graded = self.executed - (self.errored or 0) - self.ungraded
            if graded > 0:
                failed = graded - self.passed
                rate = round6(self.passed / graded)
            if self.avg_sum is not None:
                avg = round1(self.avg_sum / self.executed)
        return RollupStats(
            passed=self.passed,
            failed=failed,
            errored=self.errored,
            total=self.total,
            pass_rate=rate,
            avg_run_seconds=avg,
            estimate=self.estimate,
            measured=self.measured,
            executed=self.executed,
            ungraded=self.ungraded,
        )


def _delta(cur: RollupStats, prior: RollupStats, tier: Tier) -> Delta | None:
    def sub(a: int | None, b: int | None) -> int | None:
        return None if a is None or b is None else a - b

    rate = (
        round6(cur.pass_rate - prior.pass_rate)
        if cur.pass_rate is not None and prior.pass_rate is not None
        else None
    )
    avg = (
        round1(cur.avg_run_seconds - prior.avg_run_seconds)
        if cur.avg_run_seconds is not None and prior.avg_run_seconds is not None
        else None
    )
    tokens: int | None = None
    out_tokens: int | None = None
    cost: float | None = None
    if tier == "triggers":
        if cur.estimate is not None and prior.estimate is not None:
            tokens = cur.estimate.input_tokens - prior.estimate.input_tokens
            if (
                cur.estimate.input_cost_usd is not None
                and prior.estimate.input_cost_usd is not None
            ):
                cost = round6(cur.estimate.input_cost_usd - prior.estimate.input_cost_usd)
    elif cur.measured is not None and prior.measured is not None:
        tokens = sub(cur.measured.input_tokens, prior.measured.input_tokens)
        out_tokens = sub(cur.measured.output_tokens, prior.measured.output_tokens)
        if cur.measured.cost_usd is not None and prior.measured.cost_usd is not None:
            cost = round6(cur.measured.cost_usd - prior.measured.cost_usd)
    d = Delta(
        rate=rate, avg_run_seconds=avg, input_tokens=tokens, output_tokens=out_tokens, cost_usd=cost
    )
    return None if d.is_empty() else d


def _acc(accs: dict[str, _Acc], key: str) -> _Acc:
    """`key`'s accumulator, created on first use (`setdefault` would build one every call)."""
    acc = accs.get(key)
    if acc is None:
        acc = accs[key] = _Acc()
    return acc


def rollup_entries(
    entries: Iterable[tuple[str, TriggersEntry | EvalsEntry]], tier: Tier
) -> dict[str, Rollup]:
    """Aggregate `(model key, entry)` pairs (walked in skill order) into one Rollup per key.

    Implements report spec §3.4: current, previous and (evals) baseline accumulators; finalize;
    deltas. The result is sorted by model key.
    """
    cur: dict[str, _Acc] = {}
    prev: dict[str, _Acc] = {}
    base: dict[str, _Acc] = {}
    head: dict[str, tuple[str, str]] = {}
    priced: dict[str, bool] = {}
    latest: dict[str, str] = {}
    for key, entry in entries:
        h = entry.header
        if key not in head:
            head[key] = (h.provider, h.display)
        priced[key] = priced.get(key, False) or h.pricing is not None
        latest[key] = max(latest.get(key, ""), h.ran_at)
        _acc(cur, key).add(entry.summary, h.executed)
        if entry.previous is not None:
            _acc(prev, key).add(entry.previous.summary, True)
        if isinstance(entry, EvalsEntry) and entry.baseline is not None:
            _acc(base, key).add(entry.baseline.summary, True)
    out: dict[str, Rollup] = {}
    for key in sorted(cur):
        stats = cur[key].finalize()
        prev_stats = prev[key].finalize() if key in prev else None
        base_stats = base[key].finalize() if key in base else None
        provider, display = head[key]
        out[key] = Rollup(
            key=key,
            provider=provider,
            display=display,
            stats=stats,
            priced=priced[key],
            latest=latest[key],
            baseline=base_stats if tier == "evals" else None,
            previous_delta=_delta(stats, prev_stats, tier) if prev_stats else None,
            baseline_delta=_delta(stats, base_stats, tier)
            if base_stats and tier == "evals"
            else None,
        )
    return out


# ---------------------------------------------------------------------------------------------
# Per-plugin summaries and the rollup document


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillSummary:
    """Rollups of one skill's results file."""

    triggers: dict[str, Rollup] = field(default_factory=dict)
    evals: dict[str, Rollup] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The `{triggers Z, evals Z}` object."""
        out: dict[str, Any] = {}
        if self.triggers:
            out["triggers"] = {k: r.to_json() for k, r in sorted(self.triggers.items())}
        if self.evals:
            out["evals"] = {k: r.to_json() for k, r in sorted(self.evals.items())}
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginSummary:
    """Rollups of one plugin across its skills, plus per-skill rollups."""

    name: str
    """Plugin name."""
    triggers: dict[str, Rollup] = field(default_factory=dict)
    """Trigger rollups by model key (sorted)."""
    evals: dict[str, Rollup] = field(default_factory=dict)
    """Eval rollups by model key (sorted)."""
    skills: dict[str, SkillSummary] = field(default_factory=dict)
    """Per-skill rollups (skills with neither tier omitted)."""

    @property
    def has_rollups(self) -> bool:
        """Whether the plugin belongs in the rollup summary (≥1 trigger or eval row)."""
        return bool(self.triggers or self.evals)

    @property
    def latest(self) -> str:
        """Max `ran_at` over the plugin's current entries."""
        return max((r.latest for r in (*self.triggers.values(), *self.evals.values())), default="")

    def to_json(self) -> dict[str, Any]:
        """The PluginSummary object (`triggers` Z, `evals` Z, `skills` Z)."""
        out: dict[str, Any] = {}
        if self.triggers:
            out["triggers"] = {k: r.to_json() for k, r in sorted(self.triggers.items())}
        if self.evals:
            out["evals"] = {k: r.to_json() for k, r in sorted(self.evals.items())}
        skills = {k: s.to_json() for k, s in sorted(self.skills.items())}
        skills = {k: v for k, v in skills.items() if v}
        if skills:
            out["skills"] = skills
        return out


def _tier_pairs(
    files: Iterable[LoadedFile], active: Collection[str] | None, tier: Tier
) -> list[tuple[str, TriggersEntry | EvalsEntry]]:
    pairs: list[tuple[str, TriggersEntry | EvalsEntry]] = []
    for f in files:
        for key, me in filter_file(f.results, active).items():
            entry = me.triggers if tier == "triggers" else me.evals
            if entry is not None:
                pairs.append((key, entry))
    return pairs


def plugin_summary(plugin: LoadedPlugin, active: Collection[str] | None) -> PluginSummary:
    """The plugin's rollups (after the active filter), across skills and per skill."""
    skills: dict[str, SkillSummary] = {}
    for f in plugin.files:
        s = SkillSummary(
            triggers=rollup_entries(_tier_pairs([f], active, Tier.TRIGGERS), Tier.TRIGGERS),
            evals=rollup_entries(_tier_pairs([f], active, Tier.EVALS), Tier.EVALS),
        )
        if s.triggers or s.evals:
            skills[f.skill] = s
    return PluginSummary(
        name=plugin.name,
        triggers=rollup_entries(_tier_pairs(plugin.files, active, Tier.TRIGGERS), Tier.TRIGGERS),
        evals=rollup_entries(_tier_pairs(plugin.files, active, Tier.EVALS), Tier.EVALS),
        skills=skills,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RollupDocument:
    """The `EVALUATION.<fmt>` document (schema 3)."""

    tool_version: str
    """Version of the generating tool."""
    latest_run: str
    """Max `ran_at` over all current entries of included plugins (`""` when none)."""
    plugins: dict[str, PluginSummary]
    """Included plugins (≥1 rollup row), by name."""

    def to_json(self) -> dict[str, Any]:
        """The document as an ordered JSON data-model value, ready for `encode_document`."""
        out: dict[str, Any] = {"schema": ROLLUP_SCHEMA, "tool_version": self.tool_version}
        if self.latest_run:
            out["latest_run"] = self.latest_run
        out["plugins"] = {k: p.to_json() for k, p in sorted(self.plugins.items())}
        return out


def build_rollup_document(summaries: Iterable[PluginSummary], tool_version: str) -> RollupDocument:
    """Collect the plugins that have ≥1 rollup row into the schema-3 document."""
    included = {s.name: s for s in summaries if s.has_rollups}
    latest = max((s.latest for s in included.values()), default="")
    return RollupDocument(tool_version=tool_version, latest_run=latest, plugins=included)
