"""The values of planning: tiers, reasons, the planning inputs and the plan itself.

Owns: `Tier`, `Reason` (with evolve's `--dry-run` wording, `Reason.label`), the inputs
(`TriggerCaseInput`, `EvalCaseInput`, `SetInput`, `PlanModel`, `Selection`) and the outputs
(`PlannedCase`, `PlannedUnit`, `Plan`) of `plan.plan`.

Guarantees: frozen, slotted, keyword-only dataclasses and closed `StrEnum`s; `Plan` keeps sweep
order. Never does: decide anything (see `_select`), I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from evolve_action import results as res
from evolve_action.catalog import USAGE_HARNESSES, BoundModel

__all__ = [
    "EvalCaseInput",
    "Plan",
    "PlanModel",
    "PlannedCase",
    "PlannedUnit",
    "Reason",
    "Selection",
    "SetInput",
    "Tier",
    "TriggerCaseInput",
]


class Tier(StrEnum):
    """An agent tier."""

    TRIGGERS = "triggers"
    EVALS = "evals"


class Reason(StrEnum):
    """Why a case runs for a model (engine spec §7.2); `NONE` means it does not run."""

    NONE = "none"
    SELECTED = "selected"
    """No `--new/--modified/--failed` flag: every applicable case runs."""
    FAILED = "failed"
    """`--failed`: the stored verdict is `passed: false`."""
    ERRORED = "errored"
    """`--failed` or `--new`: the stored eval has a `runtime_error`; or (`--failed`) every run of a
    stored trigger query errored, so it has no verdict."""
    MODIFIED = "modified"
    """`--modified`: the stored `spec_hash` or entry `content_hash` no longer matches the files."""
    NEW = "new"
    """`--new`: no stored result for this case and model (the case is *missing*)."""
    INCOMPLETE = "incomplete"
    """`--new`: a stored result lacks a verdict, run counts or timing."""
    MISSING_INPUT_TOKENS = "missing_input_tokens"
    """`--new`: a usage-reporting harness left no `measured.input_tokens`."""
    MISSING_OUTPUT_TOKENS = "missing_output_tokens"
    """`--new`: no `measured.output_tokens`."""
    MISSING_COSTS = "missing_costs"
    """`--new`: a priced model's result has no `measured.cost_usd`."""
    NEEDS_BASELINE = "needs_baseline"
    """Selection flags set, nothing else applies, but the without-skill baseline is missing/stale."""

    @property
    def label(self) -> str:
        """evolve's wording of the reason (what `--dry-run` prints)."""
        return _LABELS[self]


_LABELS: dict[Reason, str] = {
    Reason.NONE: "up to date",
    Reason.SELECTED: "selected",
    Reason.FAILED: "not passing",
    Reason.ERRORED: "errored",
    Reason.MODIFIED: "modified",
    Reason.NEW: "new",
    Reason.INCOMPLETE: "incomplete run",
    Reason.MISSING_INPUT_TOKENS: "missing input tokens",
    Reason.MISSING_OUTPUT_TOKENS: "missing output tokens",
    Reason.MISSING_COSTS: "missing measured costs",
    Reason.NEEDS_BASELINE: "needs baseline",
}


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerCaseInput:
    """One authored trigger query with its current `spec_hash`."""

    query: str
    should_trigger: bool = False
    spec_hash: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalCaseInput:
    """One authored eval with its current fingerprint (stored as result `spec_hash`)."""

    id: str
    fingerprint: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class SetInput:
    """Everything planning needs to know about one eval set (one results file)."""

    plugin: str
    skill: str
    results_dir: Path | None = None
    restriction: tuple[str, ...] = ()
    """The evals file's `models` restriction (applies to both tiers); empty = none."""
    triggers: tuple[TriggerCaseInput, ...] | None = None
    """Authored queries in order; None when there is no triggers file."""
    evals: tuple[EvalCaseInput, ...] | None = None
    """Authored evals in order; None when there is no evals file."""
    trigger_content_hash: str = ""
    """Fresh trigger-tier `content_hash` (SKILL.md frontmatter)."""
    eval_content_hash: str = ""
    """Fresh eval-tier `content_hash` (whole skill directory)."""
    stored: res.ResultsFile | None = None
    """The stored results file (already migrated), if any."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanModel:
    """A selected model as planning sees it."""

    key: str
    """`provider/bare-id` (the results key)."""
    provider: str
    model: str
    """Bare model id."""
    harness: str = ""
    executes: bool = True
    """The tier really runs agents for it (harness available and not count-only)."""
    reports_usage: bool = True
    """Its harness reports token usage (claude, codex, grok)."""
    priced: bool = True
    """The model has both input and output prices."""

    @classmethod
    def from_bound(cls, bound: BoundModel, *, executes: bool = True) -> PlanModel:
        """Build from a catalog `BoundModel`."""
        m = bound.model
        return cls(
            key=m.key,
            provider=m.provider,
            model=m.id,
            harness=bound.harness,
            executes=executes,
            reports_usage=bound.harness in USAGE_HARNESSES,
            priced=m.pricing is not None,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """What the user asked for on the command line."""

    new: bool = False
    modified: bool = False
    failed: bool = False
    plugins: tuple[str, ...] = ()
    """`--plugin`: exact plugin names; empty = all."""
    skills: tuple[str, ...] = ()
    """`--skill`: exact skill directory names; empty = all."""
    models: tuple[str, ...] = ()
    """`--model` tokens (provider, `provider/id`, bare id, `all`); empty = every given model."""
    eval_ids: tuple[str, ...] = ()
    """`--eval`: exact normalized eval ids (evals tier only); empty = all."""
    tiers: tuple[Tier, ...] = (Tier.TRIGGERS, Tier.EVALS)
    baseline: bool = True
    """Without-skill baselines on (`--baseline`, default)."""

    @property
    def flagged(self) -> bool:
        """Any of `--new`, `--modified`, `--failed` is set."""
        return self.new or self.modified or self.failed


# --------------------------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedCase:
    """One case × model that runs, and why."""

    plugin: str
    skill: str
    model: str
    """Model key."""
    tier: Tier
    case: str
    """The trigger query or the eval id."""
    reason: Reason
    baseline: bool = False
    """Evals: the without-skill baseline must (re-)run before this case."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedUnit:
    """One (skill, model, tier) unit: the cases to run and the cases its entry keeps."""

    plugin: str
    skill: str
    model: str
    tier: Tier
    results_dir: Path | None = None
    cases: tuple[PlannedCase, ...] = ()
    """Cases to run, in authored order; empty = "skip: results complete"."""
    valid_keys: tuple[str, ...] = ()
    """Every case valid for this model in authored order (the merge list of §7.3)."""
    never_run: int = 0
    """Applicable cases with no stored result (selected only by `--new` or no flag)."""

    @property
    def runs(self) -> bool:
        """The unit has something to run."""
        return bool(self.cases)

    @property
    def skip_reason(self) -> str:
        """Why a unit with no cases runs nothing: complete results, or cases never run."""
        if self.never_run:
            return f"{self.never_run} never run; select them with --new"
        return "results complete"


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """Units in sweep order: eval set (plugin, skill) → model → triggers before evals."""

    units: tuple[PlannedUnit, ...] = ()
    selection: Selection = field(default_factory=Selection)

    @property
    def cases(self) -> tuple[PlannedCase, ...]:
        """Every planned case, in sweep order."""
        return tuple(c for u in self.units for c in u.cases)

    @property
    def runnable(self) -> tuple[PlannedUnit, ...]:
        """Units with at least one case to run."""
        return tuple(u for u in self.units if u.cases)

    def counts(self) -> dict[tuple[Tier, Reason], int]:
        """Planned cases per (tier, reason), in first-seen order."""
        out: dict[tuple[Tier, Reason], int] = {}
        for c in self.cases:
            out[(c.tier, c.reason)] = out.get((c.tier, c.reason), 0) + 1
        return out
