"""The values of a base → head comparison: what it reads (`SkillEvidence`, the runs power on demand
added: `Reruns`, `QueryRuns`) and what it answers (`ComparisonRow` per skill × model, its
`TierComparison`s with their `Rate`s, failing and flipped cases, and the `Label`).

Owns: these frozen values and the labels' declaration order (the row priority).
Guarantees: every value is immutable; untrusted text (queries, eval names, errors) is carried as is.
Never does: compute a comparison, render, I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from evolve_action.plan import Tier
from evolve_action.report._stats import (
    Interval,
    StratifiedTest,
)
from evolve_action.results import (
    EvalsEntry,
    ResultsFile,
    TriggersEntry,
)

__all__ = [
    "CaseStatus",
    "ComparisonRow",
    "FailingCase",
    "FlippedCase",
    "Flips",
    "Label",
    "QueryRuns",
    "Rate",
    "Reruns",
    "SkillEvidence",
    "TierComparison",
]


class Label(StrEnum):
    """The label of a tier comparison or of a whole skill × model row (declaration order is the
    row priority: a row takes the first label any of its tiers has)."""

    REGRESSION = "regression"
    """A significant drop of at least `MATERIAL` (docs/pr-comment.md "The rule")."""
    AUTHORING_ERROR = "authoring error"
    """The head's definition file of this tier fails validation: it was refused, nothing ran
    (an error of the definition, not a failure of the skill)."""
    NOT_EVALUATED = "not evaluated"
    """The head's evidence for this tier is stale or missing and this job did not re-run it (no
    credentials, a fork, the budget, a cancellation): there is no verdict, and the stored figures
    are not the PR's (docs/pr-comment.md)."""
    IMPROVEMENT = "improvement"
    NOT_COMPARABLE = "not comparable"
    """Different model or harness on the two sides: no test."""
    UNDECIDED = "undecided"
    """Nothing decided and a material change still plausible: more runs would tell."""
    BASE_UNKNOWN = "base unknown"
    """The base's results could not be read (API or git failure, unreadable file): no test, and
    never `new`."""
    NO_CHANGE = "no change"
    """No material change: the estimate is under `MATERIAL` and a change of `RULED_OUT` is ruled
    out (or a significant change is too small to matter)."""
    NEW = "new"
    REMOVED = "removed"
    NOT_RERUN = "not re-run"
    """The head carries the base's own evidence for this tier (the PR re-ran nothing): no label."""


class CaseStatus(StrEnum):
    """Why a head case is listed among the failing cases."""

    REGRESSED = "regressed"
    """Passed at base, fails at head (a flip)."""
    STILL_FAILING = "still failing"
    """Failed at base too."""
    NO_BASE = "no base verdict"
    """Fails at head; base had no valid verdict for it (new, errored or changed case)."""
    ERRORED = "errored"
    """No verdict at head (runtime error or missing verdict): invalid, not counted as a failure."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Flips:
    """The verdicts of the cases both sides share (each with a valid verdict on both)."""

    shared: int
    """Cases with a valid verdict at base and at head."""
    down: int
    """Shared cases that passed at base and fail at head (newly failing)."""
    up: int
    """Shared cases that failed at base and pass at head (fixed)."""

    @property
    def discordant(self) -> int:
        """Cases whose verdict changed (`down + up`)."""
        return self.down + self.up


@dataclass(frozen=True, slots=True, kw_only=True)
class FlippedCase:
    """A shared case whose verdict changed."""

    key: str
    """The trigger query or the eval id (untrusted text)."""
    name: str
    """The eval's name (evals only; untrusted)."""
    fixed: bool
    """True: failed at base, passes at head; False: newly failing."""
    detail: str
    """Base → head evidence, e.g. `hit in 3/3 → 0/3 runs (expected a trigger)`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Rate:
    """One side of a tier over its valid cases."""

    passed: int
    """Cases whose verdict passed."""
    n: int
    """Cases with a valid verdict (passed + failed)."""
    invalid: int
    """Cases without a valid verdict (errored, not executed, no verdict): excluded from `n`."""
    rate: float | None
    """Case pass rate: round6(passed / n); None when `n` is 0."""
    ci: Interval | None
    """Wilson 95 % interval of `rate`; None when `n` is 0."""
    score: float | None
    """Mean over the valid cases of the share of runs that behaved as expected (triggers) or
    that passed (evals); round6; None when `n` is 0. The tested quantity."""
    runs: int
    """Runs behind `score` (evals: one per case, plus power on demand's)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FailingCase:
    """A head case that failed, or that has no valid verdict (errored)."""

    key: str
    """The trigger query or the eval id (untrusted text)."""
    name: str
    """The eval's name (evals only; untrusted)."""
    status: CaseStatus
    detail: str
    """Why it failed: hits/runs and expectation, failed assertion texts, or the runtime error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TierComparison:
    """One tier of one skill × model, base → head."""

    tier: Tier
    label: Label
    reason: str
    """The numbers behind `label`, in one sentence."""
    base: Rate | None
    """All valid base cases; None when the base has no entry for this tier."""
    head: Rate | None
    """All valid head cases; None when the head has no entry for this tier."""
    test: StratifiedTest | None
    """Like for like: the shared cases' scores and the exact test; None when not paired."""
    level: float | None
    """The one-sided level each direction was tested at (the plan's alpha on a single look)."""
    delta: float | None
    """The change shown: `test.delta` (shared cases) when paired, else head.score − base.score
    when both sides have one (not comparable), else None."""
    flips: Flips | None
    """Verdict flips among the shared cases; None when the two sides are not paired."""
    flipped: tuple[FlippedCase, ...]
    """The shared cases whose verdict changed, newly failing first, each in head order."""
    unpaired: int
    """Cases valid on one side only (new, errored or changed on the other)."""
    lift_base: float | None
    """Evals: base case pass rate − without-skill baseline rate at base (round6)."""
    lift_head: float | None
    """Evals: head case pass rate − without-skill baseline rate at head (round6)."""
    failing: tuple[FailingCase, ...]
    """Head cases that failed or errored, in the head's result order."""
    base_reruns: int = 0
    """Runs of the base's version made for this PR (`Reruns.base`: this job's and those of earlier
    workflow runs the PR's ledger kept)."""
    extra_head_runs: int = 0
    """Head runs power on demand added for this PR beyond the head sweep (this job's and earlier
    workflow runs' the ledger kept)."""
    added: int = 0
    """Head cases with a valid verdict that the base does not have (new queries or evals): they
    ran for this PR but are not part of the paired test."""
    added_passed: int = 0
    """Of `added`, those that passed."""
    more_runs: int | None = None
    """`undecided` at the last look: about how many more runs per case per side a decision would
    need (`_stats.runs_to_decide`); None otherwise."""

    @property
    def base_score(self) -> float | None:
        """The base figure shown: like for like when paired, else the side's own score."""
        if self.test is not None:
            return self.test.base_rate
        return self.base.score if self.base is not None else None

    @property
    def head_score(self) -> float | None:
        """The head figure shown: like for like when paired, else the side's own score."""
        if self.test is not None:
            return self.test.head_rate
        return self.head.score if self.head is not None else None


@dataclass(frozen=True, slots=True, kw_only=True)
class ComparisonRow:
    """One touched skill × model key."""

    plugin: str
    skill: str
    model_key: str
    """`provider/bare-id`."""
    display: str
    """The model's display name (the key when no header has one)."""
    harness: str
    """The head's harness (else the base's); "" when unrecorded."""
    label: Label
    """`new`/`removed` for a model on one side only, else the first tier label by priority
    (`Label` declaration order)."""
    triggers: TierComparison | None
    evals: TierComparison | None

    @property
    def tiers(self) -> tuple[TierComparison, ...]:
        """The tiers present, triggers first."""
        return tuple(t for t in (self.triggers, self.evals) if t is not None)


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryRuns:
    """Runs of one trigger query made by this job for the comparison only (never committed)."""

    query: str
    should_trigger: bool
    hits: int
    runs: int
    """Completed runs (errored runs are not counted)."""
    rounds: tuple[tuple[int, int], ...] = ()
    """Of `hits`/`runs`, those made in each selective round, (hits, runs) per round ((0, 0):
    the round passed this query by); the rest belong to the first block (a fresh base's
    catch-up, or runs added to every query). Each round is a block of its own in the test."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reruns:
    """What power on demand added to one skill × model's triggers comparison, and the look.

    `base` runs (made for this PR — in this job or an earlier workflow run the PR's ledger kept —,
    against the same model, interleaved with the head's) extend
    the stored base; with `base_fresh` the base side is those runs only and the stored base is not
    tested (it was missing, thin, early-stopped or another version's). `head` runs extend the
    head's stored sweep. `t_prev`, `t` and `final` place this look in the sequential plan
    (`_stats.decide`).
    """

    base: tuple[QueryRuns, ...] = ()
    base_fresh: bool = False
    head: tuple[QueryRuns, ...] = ()
    t_prev: float = 0.0
    t: float = 1.0
    final: bool = True
    head_sweep: TriggersEntry | EvalsEntry | None = None
    """The head sweep the comparison rests on when it is not the head results' own (a triggers
    entry for a trigger comparison, an evals entry for an eval one): an earlier workflow run's,
    kept by the PR's ledger, so a re-run of the same content tests the same evidence and a
    decided verdict stays decided (docs/pr-comment.md, "Runs across workflow
    runs")."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillEvidence:
    """A touched skill's results file at the PR base and at the head (None when absent)."""

    plugin: str
    skill: str
    base: ResultsFile | None
    head: ResultsFile | None
    base_known: bool = True
    """False: the base's results could not be read (`base` None means unknown, not absent)."""
    refused: Mapping[Tier, str] = field(default_factory=dict)
    """Tiers whose head definition was refused as an authoring error, with the message."""
    unevaluated: Mapping[Tier, str] = field(default_factory=dict)
    """Tiers with stale or missing head evidence that this job did not run, with why (e.g.
    `2 stale or missing queries not run: no credentials were given`): labelled `not evaluated`."""
    reruns: Mapping[str, Reruns] = field(default_factory=dict)
    """Model key → the runs this job added for the comparison (power on demand)."""
    eval_reruns: Mapping[str, Reruns] = field(default_factory=dict)
    """Model key → the eval runs power on demand added (`QueryRuns` per eval case: `query` is
    the eval id, `hits` the runs that passed, `should_trigger` True) and the look."""
