"""The statistics behind the PR comment's verdict: exact stratified tests and the sequential rule (pure).

Owns: `Stratum` (one case's run scores at base and at head, on an integer scale), `StratifiedTest`
(the effect estimate, its interval and the two exact one-sided p-values), `stratified_test`, the
alpha-spending `Plan`, `equivalent` (the "no change" bound: a ±`RULED_OUT` change ruled out at
a look's slice of `NO_CHANGE_ALPHA`) and `decide` (the label of one look: regression,
improvement, no change, undecided, or "run more"), plus `wilson`. Triggers and evals get their
labels from these same functions. The rule is written down in plain words in
`docs/pr-comment.md` ("The rule"); `bench/noise.py` measures it through these same functions.

The test. Each case (a trigger query, an eval case) is a stratum holding the scores of its runs on
both sides (triggers: 1 for a run that behaved as expected, 0 otherwise; evals: 1 for a run that
passed, every assertion and judged expectation held, 0 otherwise; the test itself takes any
integer scale). Under "no change", every run of a case is a draw from
the same distribution whichever side made it, so, given the pooled scores of each case, which runs
are the head's is a uniformly random choice: the permutation distribution of T = the sum of the
head's scores over all cases is exact, whatever the per-case rates (for 0/1 scores it is the
conditional, exact form of the Cochran–Mantel–Haenszel test: a convolution of hypergeometrics).
`p_down` = P(T ≤ observed), `p_up` = P(T ≥ observed). Each direction is tested at `alpha`
(0.025), so an A/A pair is called a change at most 2 × 0.025 = 5 % of the time.

The sequential rule. More runs can be added (extra head runs, paired base runs) and the test
repeated; each look spends a slice of each direction's `alpha` (Lan–DeMets spending over the
information fraction, Pocock-type by default), and a look rejects when its exact p-value
is at most its slice. By the union bound the false-alarm rate over all looks stays ≤ `alpha` per
direction, for any per-case rates, any number of looks and any stopping reason (a decision, the
cap, the budget). A single look with no more runs allowed gets the whole `alpha`. "No change"
spends a level of its own the same way (`equivalent`), so calling a true 20-point change
`no change` is bounded over all looks too (nominally by `NO_CHANGE_ALPHA`; measured on the
default path by bench/noise.py).

Guarantees: pure (no I/O, no clock, no global randomness); exact integer/float arithmetic only
(no SciPy); equal inputs give equal outputs.

Where more runs go. `selected` says whether a round of more runs adds to a case: when its pooled
runs are not all alike, or when `spot_check` (a hash of the case key and the round) picks it. It
reads nothing that depends on which runs are the head's, and each round's runs form a block of
their own in the test (`Stratum.rounds`), so the test stays exact under this choice.
`runs_to_decide` estimates how many more runs an undecided comparison needs (a guide).

Never does: read results files (that is `_evidence`), render, start runs.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist

from evolve_action.encoding import round6
from evolve_action.triggers import decided

__all__ = [
    "ALPHA",
    "MATERIAL",
    "NO_CHANGE_ALPHA",
    "RULED_OUT",
    "SPOT_SHARE",
    "Decision",
    "Interval",
    "Outcome",
    "Plan",
    "Spending",
    "StratifiedTest",
    "Stratum",
    "Sweep",
    "alpha_spent",
    "decide",
    "early_stopped",
    "equivalent",
    "information",
    "runs_to_decide",
    "selected",
    "spot_check",
    "stratified_test",
    "wilson",
]

ALPHA = 0.025
"""One-sided level per direction: regressions and improvements together are called at most
2 × 0.025 = 5 % of the time when nothing changed."""

MATERIAL = 0.10
"""The smallest change (in the tested rate, 0–1) called a regression or an improvement: a
significant 1-point change is no change."""

RULED_OUT = 0.20
""""No change" needs a change of ±`RULED_OUT` or more ruled out (`equivalent`) and the estimate
under `MATERIAL`; more runs stop there."""

NO_CHANGE_ALPHA = 0.025
"""One-sided level of each "a change of `RULED_OUT` is ruled out" bound, spent over the looks like
the tests' alpha (`equivalent`): on a single look the bounds are those of a 95 % interval. The
chance of calling a true 20-point change `no change` is at most this at the nominal level, over
all looks; the normal approximation and the selective rounds' pull toward zero come on top and are
measured (bench/noise.py's default-path table: under 5 % at every size)."""

SPOT_SHARE = 0.1
"""Share of the cases whose pooled runs are all alike that a round still runs (chosen by
`spot_check`, independently of every outcome), so a change no run has shown yet can surface.
Each spot check costs 2 × 3 sessions; at 0.2 the README tour's change cost 44 sessions instead of
38 (BENCHMARKS.md, bench/pr_cost.py)."""

Z95 = NormalDist().inv_cdf(0.975)
"""The standard normal quantile for a two-sided 95 % interval."""

_EPS = 1e-12


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """A closed interval (of rates in [0, 1], or of a change in [−1, 1])."""

    low: float
    high: float


def wilson(passed: int, n: int, z: float = Z95) -> Interval | None:
    """The Wilson score interval of `passed`/`n` (95 % by default); None when `n` is 0.

    Bounds are round6'd, so they print identically everywhere.
    """
    if n <= 0:
        return None
    if not 0 <= passed <= n:
        raise ValueError(f"passed={passed} outside 0..{n}")
    p = passed / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return Interval(low=round6(max(0.0, centre - half)), high=round6(min(1.0, centre + half)))


@dataclass(frozen=True, slots=True, kw_only=True)
class Sweep:
    """How one side's 0/1 runs of a trigger query were made: `planned` runs, stopping as soon as
    the majority verdict was decided (`run triggers`' early stop). The number of runs then
    depends on their outcomes, so the test weighs each possible record by its number of run
    orders (`_records`) instead of treating the runs as a fixed-size sample."""

    planned: int
    should_trigger: bool
    extra: int = 0
    """Fixed-size runs made after the sweep (power on demand adds them); their records are
    convolved with the sweep's."""


@functools.cache
def _records(sweep: Sweep) -> dict[tuple[int, int], int]:
    """(good runs, runs) → number of outcome orders an early-stopped sweep (plus its `extra`
    fixed runs) ends with."""
    out: dict[tuple[int, int], int] = {}
    if sweep.extra:
        alone = _records(Sweep(planned=sweep.planned, should_trigger=sweep.should_trigger))
        for (g, n), ways in alone.items():
            for e in range(sweep.extra + 1):
                key = (g + e, n + sweep.extra)
                out[key] = out.get(key, 0) + ways * math.comb(sweep.extra, e)
        return out
    frontier = {(0, 0): 1}  # (hits, misses) → orders still running
    while frontier:
        nxt: dict[tuple[int, int], int] = {}
        for (h, m), ways in frontier.items():
            done = h + m
            if done == sweep.planned or decided(h, m, sweep.planned - done, sweep.should_trigger):
                good = h if sweep.should_trigger else m
                out[(good, done)] = out.get((good, done), 0) + ways
                continue
            for step in ((h + 1, m), (h, m + 1)):
                nxt[step] = nxt.get(step, 0) + ways
        frontier = nxt
    return out


def early_stopped(records: Sequence[tuple[int, int, bool]], planned: int) -> bool:
    """Whether a side's (good runs, runs, should_trigger) records came from early-stopped sweeps
    of `planned` runs: every record is one such a sweep can end with, and one stopped short."""
    return all(
        (g, n) in _records(Sweep(planned=planned, should_trigger=t)) for g, n, t in records
    ) and any(n < planned for _, n, _ in records)


@dataclass(frozen=True, slots=True, kw_only=True)
class Stratum:
    """One case, paired: the integer scores of its runs on each side (0..`scale` each)."""

    base: tuple[int, ...]
    head: tuple[int, ...]
    scale: int = 1
    """Units of one fully passing run (1 for both tiers' pass/fail runs)."""
    base_sweep: Sweep | None = None
    """0/1 scores only: the base's runs came from this early-stopped sweep (None: fixed size)."""
    head_sweep: Sweep | None = None
    rounds: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()
    """Runs added later in selective rounds, one (base scores, head scores) block per round
    (empty on both sides when the round passed this case by). Each block is a stratum of its own
    in the permutation distribution: whether a round runs a case depends on the case's pooled
    runs before it, so runs are exchangeable between the sides only within a round. Rates,
    interval and run counts use all the case's runs (`base`/`head` plus the blocks)."""

    @property
    def all_base(self) -> tuple[int, ...]:
        """Every base run of the case: `base` and the rounds' base blocks."""
        return self.base + tuple(x for b, _ in self.rounds for x in b)

    @property
    def all_head(self) -> tuple[int, ...]:
        """Every head run of the case."""
        return self.head + tuple(x for _, h in self.rounds for x in h)

    @classmethod
    def counts(
        cls,
        base_pass: int,
        base_runs: int,
        head_pass: int,
        head_runs: int,
        *,
        base_sweep: Sweep | None = None,
        head_sweep: Sweep | None = None,
    ) -> Stratum:
        """A 0/1 stratum from pass counts (triggers: runs that behaved as expected)."""
        if not (0 <= base_pass <= base_runs and 0 <= head_pass <= head_runs):
            raise ValueError(f"bad counts {base_pass}/{base_runs}, {head_pass}/{head_runs}")
        return cls(
            base=(1,) * base_pass + (0,) * (base_runs - base_pass),
            head=(1,) * head_pass + (0,) * (head_runs - head_pass),
            base_sweep=base_sweep,
            head_sweep=head_sweep,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class StratifiedTest:
    """The paired evidence of one tier, summarised and tested."""

    cases: int
    """Strata with at least one run on each side."""
    base_runs: int
    head_runs: int
    base_rate: float | None
    """Mean over cases of the base's mean score (0–1); None without cases."""
    head_rate: float | None
    delta: float | None
    """head_rate − base_rate: each case weighs the same."""
    ci: Interval | None
    """Approximate 95 % interval of `delta` (normal, per-case pooled variances smoothed by one
    pass and one fail, so 3/3 → 3/3 still carries uncertainty)."""
    se: float | None = None
    """The standard error behind `ci` (`equivalent` spends its own level with it; None: read
    from `ci`'s half-width)."""
    p_down: float
    """Exact one-sided p-value of "the head scores lower" (1.0 without informative cases)."""
    p_up: float
    """Exact one-sided p-value of "the head scores higher"."""
    informative: int
    """Cases with a block (first runs, or a round) whose pooled runs are not all equal (only they
    move the test)."""


def _subset_sums(scores: Sequence[int], n: int) -> tuple[int, list[float]]:
    """The distribution of the sum of a uniformly random `n`-subset of `scores`: (offset, probs)."""
    total = len(scores)
    ones = all(s in (0, 1) for s in scores)
    if ones:  # hypergeometric: K ones among `total`, draw n
        k = sum(scores)
        lo, hi = max(0, n - (total - k)), min(n, k)
        denom = math.comb(total, n)
        return lo, [
            math.comb(k, y) * math.comb(total - k, n - y) / denom for y in range(lo, hi + 1)
        ]
    top = sum(sorted(scores, reverse=True)[:n])
    # ways[c][s]: subsets of size c with sum s, over the items seen so far
    ways = [[0] * (top + 1) for _ in range(n + 1)]
    ways[0][0] = 1
    for s in scores:
        for c in range(n - 1, -1, -1):
            row, nxt = ways[c], ways[c + 1]
            for v in range(top - s, -1, -1):
                if row[v]:
                    nxt[v + s] += row[v]
    denom = math.comb(total, n)
    probs = [w / denom for w in ways[n]]
    lo = next((i for i, p in enumerate(probs) if p), 0)
    hi = max((i for i, p in enumerate(probs) if p), default=0)
    return lo, probs[lo : hi + 1]


def _fixed(scores: Sequence[int], planned: int) -> dict[tuple[int, int], int]:
    """(good runs, runs) → orders, for a fixed-size 0/1 sample of `planned` runs."""
    del scores
    return {(g, planned): math.comb(planned, g) for g in range(planned + 1)}


def _stratum_distribution(s: Stratum) -> tuple[int, tuple[int, list[float]]]:
    """The observed statistic of a stratum and its null distribution (offset, probabilities).

    The statistic is the cross-difference S_h·n_b − S_b·n_h (head score sum times base runs minus
    base score sum times head runs): with fixed run counts it is N·S_h − const, so the test is the
    permutation test on the head's score sum; with early-stopped sweeps the run counts vary too.
    """
    nb, nh = len(s.base), len(s.head)
    sb, sh = sum(s.base), sum(s.head)
    observed = sh * nb - sb * nh
    total, runs = sb + sh, nb + nh
    if (s.base_sweep or s.head_sweep) and all(x in (0, 1) for x in s.base + s.head):
        bt = _records(s.base_sweep) if s.base_sweep else _fixed(s.base, nb)
        ht = _records(s.head_sweep) if s.head_sweep else _fixed(s.head, nh)
        if (sb, nb) in bt and (sh, nh) in ht:
            weights: dict[int, int] = {}
            for (g, n), w in ht.items():
                wb = bt.get((total - g, runs - n))
                if wb:
                    stat = g * (runs - n) - (total - g) * n
                    weights[stat] = weights.get(stat, 0) + w * wb
            lo, hi = min(weights), max(weights)
            whole = sum(weights.values())
            return observed, (lo, [weights.get(v, 0) / whole for v in range(lo, hi + 1)])
    if min(s.base + s.head) == max(s.base + s.head):
        return observed, (observed, [1.0])
    lo, probs = _subset_sums(s.base + s.head, nh)
    # S_h = lo + i  →  statistic (lo + i)·runs − total·nh: spread the probabilities out
    out = [0.0] * ((len(probs) - 1) * runs + 1)
    for i, p in enumerate(probs):
        out[i * runs] = p
    return observed, (lo * runs - total * nh, out)


def _convolve(a: list[float], b: list[float]) -> list[float]:
    out = [0.0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _variance(scores: Sequence[int], scale: int) -> float:
    """Per-run variance of a case's pooled scores (0–1 units), smoothed by a pass and a fail."""
    xs = [s / scale for s in scores]
    n = len(xs)
    p = (sum(xs) + 1) / (n + 2)
    mean = sum(xs) / n
    ss = sum((x - mean) ** 2 for x in xs)
    return (ss + 2 * p * (1 - p)) / (n + 1)


def stratified_test(strata: Sequence[Stratum]) -> StratifiedTest:
    """Summarise and test paired strata (cases with no run on a side are left out)."""
    used = [s for s in strata if s.base and s.head]
    # Selective rounds only ever add to cases paired in their first block (the rule's selection).
    if not used:
        return StratifiedTest(
            cases=0,
            base_runs=0,
            head_runs=0,
            base_rate=None,
            head_rate=None,
            delta=None,
            ci=None,
            p_down=1.0,
            p_up=1.0,
            informative=0,
        )
    q = len(used)
    sides = [(s.all_base, s.all_head) for s in used]
    base_rate = sum(sum(b) / (len(b) * s.scale) for s, (b, _) in zip(used, sides, strict=True)) / q
    head_rate = sum(sum(h) / (len(h) * s.scale) for s, (_, h) in zip(used, sides, strict=True)) / q
    var = 0.0
    offset = 0
    dist = [1.0]
    observed = 0
    informative = 0
    for s, (b, h) in zip(used, sides, strict=True):
        var += _variance(b + h, s.scale) * (1 / len(b) + 1 / len(h))
        blocks = [
            s,
            *(Stratum(base=rb, head=rh, scale=s.scale) for rb, rh in s.rounds if rb and rh),
        ]
        moves = False
        for block in blocks:
            stat, (lo, probs) = _stratum_distribution(block)
            observed += stat
            offset += lo
            if len(probs) > 1:
                moves = True
                dist = _convolve(dist, probs)
        informative += moves
    delta = head_rate - base_rate
    half = Z95 * math.sqrt(var) / q
    k = observed - offset
    p_down = min(1.0, sum(dist[: k + 1]) + _EPS) if informative else 1.0
    p_up = min(1.0, sum(dist[k:]) + _EPS) if informative else 1.0
    return StratifiedTest(
        cases=q,
        base_runs=sum(len(b) for b, _ in sides),
        head_runs=sum(len(h) for _, h in sides),
        base_rate=round6(base_rate),
        head_rate=round6(head_rate),
        delta=round6(delta),
        ci=Interval(low=round6(max(-1.0, delta - half)), high=round6(min(1.0, delta + half))),
        se=round6(half / Z95),
        p_down=p_down,
        p_up=p_up,
        informative=informative,
    )


# ---------------------------------------------------------------------------------------------
# The sequential rule


class Spending(StrEnum):
    """How a direction's alpha is spent over the information fraction t ∈ (0, 1]."""

    OBRIEN_FLEMING = "obrien-fleming"
    """α(t) = 2 − 2Φ(z₁₋α/₂ / √t): almost nothing early, most at the cap."""
    POCOCK = "pocock"
    """α(t) = α · ln(1 + (e − 1) t): evenly spread, more early stops, less at the cap."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The sequential plan of one tier: levels, materiality and the run cap."""

    alpha: float = ALPHA
    material: float = MATERIAL
    ruled_out: float = RULED_OUT
    no_change_alpha: float = NO_CHANGE_ALPHA
    """Level of each "ruled out" bound of `no change`, spent over the looks (`equivalent`)."""
    cap: int | None = None
    """Runs per case per side the comparison may grow to; None: this look is the only one."""
    spending: Spending = Spending.POCOCK
    """Pocock-type: an obvious change is called at the first looks, which selective rounds make
    cheap (bench/noise.py's fourth table, bench/pr_cost.py)."""


def information(base_runs: float, head_runs: float, cap: int | None) -> float:
    """The information fraction of a look with these runs per case per side, in (0, 1].

    Information about a difference grows like m·n/(m + n); at the cap (cap runs on both sides)
    it is cap/2. Without a cap the look is the last: 1.0.
    """
    if cap is None or base_runs <= 0 or head_runs <= 0:
        return 1.0
    return min(1.0, 2 * base_runs * head_runs / ((base_runs + head_runs) * cap))


def alpha_spent(
    t: float, alpha: float = ALPHA, spending: Spending = Spending.OBRIEN_FLEMING
) -> float:
    """Alpha spent (one direction) by information fraction `t` (0 → 0, 1 → `alpha`)."""
    if t <= 0:
        return 0.0
    if t >= 1:
        return alpha
    if spending is Spending.POCOCK:
        return alpha * math.log(1 + (math.e - 1) * t)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    return 2 * (1 - NormalDist().cdf(z / math.sqrt(t)))


class Outcome(StrEnum):
    """What one look decides."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NO_CHANGE = "no change"
    """Not a material significant change, the estimate is under `MATERIAL` and a change of
    `RULED_OUT` or more is ruled out at this look's slice of `NO_CHANGE_ALPHA` (`equivalent`)."""
    UNDECIDED = "undecided"
    """Final look, nothing decided: a material change is still plausible (more runs would tell)."""
    CONTINUE = "continue"
    """Not the final look and nothing decided: run more."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """One look's outcome and the level it was tested at."""

    outcome: Outcome
    level: float
    """The alpha slice this look tested each direction at."""
    t: float
    """Information fraction of this look."""


def equivalent(test: StratifiedTest, plan: Plan, *, t_prev: float = 0.0, t: float = 1.0) -> bool:
    """Whether this look rules out a change of ±`plan.ruled_out` or more (the "no change" bound).

    Each side is a one-sided test of "the change is `ruled_out` or more that way" at this look's
    slice ε of `plan.no_change_alpha`, spent over the information fraction like the tests' alpha:
    Δ − z·se > −ruled_out and Δ + z·se < ruled_out with z = Φ⁻¹(1 − ε). By the union bound the
    chance that any look rules out a true change of `ruled_out` is at most `no_change_alpha` at
    the nominal level, however many looks, rounds and workflow runs the comparison takes (its
    looks continue one plan across attempts: the PR's ledger). On a single look (t 0 → 1) the
    bounds are those of the 95 % interval. The normal approximation and the selective rounds (a
    case whose pooled runs were all alike keeps its first block's zero difference) are not
    covered by the nominal level; bench/noise.py measures the whole rule on the default path.
    """
    if test.delta is None or test.ci is None:
        return False
    se = test.se if test.se is not None else (test.ci.high - test.ci.low) / (2 * Z95)
    eps = alpha_spent(t, plan.no_change_alpha, plan.spending) - alpha_spent(
        t_prev, plan.no_change_alpha, plan.spending
    )
    if eps <= 0:
        return False
    z = NormalDist().inv_cdf(1 - min(eps, 0.5))
    return (
        test.delta - z * se > -plan.ruled_out + _EPS and test.delta + z * se < plan.ruled_out - _EPS
    )


def decide(
    test: StratifiedTest, plan: Plan, *, t_prev: float = 0.0, t: float = 1.0, final: bool = True
) -> Decision:
    """The outcome of one look at `test`, the `t_prev` → `t` slice of the plan's alpha.

    1. `regression` (`improvement`): `p_down` (`p_up`) ≤ the slice and the estimated change is
       at least `material` downwards (upwards).
    2. otherwise `no change` when the estimated change is under `material` and a change of
       ±`ruled_out` is ruled out at this look's slice of `no_change_alpha` (`equivalent`);
    3. otherwise `undecided` on the final look (the cap, the budget, or a single look), else
       `continue` (run more).
    """
    level = max(
        0.0,
        alpha_spent(t, plan.alpha, plan.spending) - alpha_spent(t_prev, plan.alpha, plan.spending),
    )
    if test.delta is None or test.ci is None:
        return Decision(outcome=Outcome.UNDECIDED if final else Outcome.CONTINUE, level=level, t=t)
    if test.p_down <= level and test.delta <= -plan.material + _EPS:
        return Decision(outcome=Outcome.REGRESSION, level=level, t=t)
    if test.p_up <= level and test.delta >= plan.material - _EPS:
        return Decision(outcome=Outcome.IMPROVEMENT, level=level, t=t)
    small = abs(test.delta) < plan.material - _EPS
    if small and equivalent(test, plan, t_prev=t_prev, t=t):
        return Decision(outcome=Outcome.NO_CHANGE, level=level, t=t)
    return Decision(outcome=Outcome.UNDECIDED if final else Outcome.CONTINUE, level=level, t=t)


# ---------------------------------------------------------------------------------------------
# Where more runs go


def spot_check(key: str, round_no: int, share: float = SPOT_SHARE) -> bool:
    """Whether round `round_no` runs the all-alike case `key` anyway: a fixed pseudo-random draw
    from the key and the round alone (SHA-256), so it is independent of every run's outcome."""
    digest = hashlib.sha256(f"{round_no}\0{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") < share * (1 << 64)


def selected(key: str, pooled: Sequence[int], round_no: int, share: float = SPOT_SHARE) -> bool:
    """Whether round `round_no` adds runs to case `key`, from its `pooled` scores so far.

    A case whose pooled runs (base and head together, in any order) are not all alike can still
    move the test, so it runs; an all-alike case runs only when `spot_check` picks it. The
    choice reads the pooled multiset only, never which runs are the head's: under "no change" the
    head's share of each block stays a uniformly random choice given the pooled runs, so the test
    of `stratified_test` (a block per round) stays exact (docs/pr-comment.md, "The rule").
    """
    return min(pooled, default=0) != max(pooled, default=0) or spot_check(key, round_no, share)


def runs_to_decide(test: StratifiedTest, plan: Plan) -> int | None:
    """About how many more runs per case per side an undecided comparison needs (None: no
    estimate, e.g. without an interval).

    A rough guide, not a promise: the interval's half-width h shrinks like 1/√n with n runs per
    case per side, so with the same estimate Δ a decision comes near n·(h / target)² runs, the
    target being `ruled_out` − |Δ| (the interval rules a large change out: `no change`) or, for a
    material |Δ|, |Δ| itself (the change about two standard errors from zero: a call); the nearer
    of the two, minus the runs already made.
    """
    if test.ci is None or test.delta is None or not test.cases:
        return None
    half = (test.ci.high - test.ci.low) / 2
    runs = min(test.base_runs, test.head_runs) / test.cases
    if half <= 0 or runs <= 0:
        return None
    size = abs(test.delta)
    targets = [t for t in (plan.ruled_out - size, size if size >= plan.material else 0.0) if t > 0]
    if not targets:
        return None
    need = min(runs * (half / t) ** 2 for t in targets)
    return max(1, math.ceil(need - runs))
