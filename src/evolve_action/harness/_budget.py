"""A spending cap for a sweep: what was spent, what the next unit would cost, what was skipped.

Owns: `Budget` (the cap in USD, the measured spend, the per-session averages it learns, the units
it refused), `session_cost_usd` (what one finished session cost, from its transcript) and
`first_request_usd` (the least the model gateway reserves to start a session).
Guarantees: pure bookkeeping (no I/O, no clock); without a cap every unit is admitted; once a unit
is refused every later one is too ("stop scheduling"), so a sweep never skips an expensive unit
only to run a cheaper one after it, and a re-run picks the skipped units up where this one left
them (nothing was written for them). Never does: start sessions or decide what is planned.

How a unit is estimated before it runs: sessions × the cost of one session of that tier and
model. Once a session of the same tier and model has run, that is the mean measured cost so far;
before, a prior from the model's prices: `PRIOR_REQUESTS[tier]` requests of the agent's fixed
context (`AGENT_CONTEXT_TOKENS`: Claude Code's system prompt and tool definitions) plus the
session's own first message (`SESSION_CONTEXT_TOKENS` and the counted skill-and-prompt
tokens), and `PRIOR_OUTPUT_TOKENS[tier]` output tokens, priced as the API's prompt cache prices
them (`prior_usd`): the fixed context is one prefix shared by every session of a tier and model,
written once (×1.25 the input price) by the first session and read (×0.1) by every other request;
each session's own first message is written once by its first request and read by its later ones.

What the model gateway needs to start a unit: the gateway reserves each request's worst case
before forwarding it (docs/gateway.md); the least it can reserve for a session's first request,
when it knows nothing of it cached, is `request_floor_usd` of the fixed context and the session's
own first message (`first_request_usd`). A unit is admitted only when the cap leaves room for both
its estimate and that floor, so a cap too small to start a session refuses the unit here, with a
reason that says so, instead of erroring its sessions at the gateway. Once a unit runs, the
gateway reserves a prefix it saw cached at the read price where the written one does not fit, as
the estimate prices it, so the sessions of an admitted unit run in the room its estimate left
(while the estimate holds; near the cap one request at a time relies on the cache). The floor
assumes nothing cached: late in a job it may refuse a unit the gateway could have run, up front.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from evolve_action.catalog import BoundModel, Pricing, measured_cost_usd
from evolve_action.harness._base import Transcript
from evolve_action.harness._gateway_rules import MIN_OUTPUT_TOKENS, request_floor_usd
from evolve_action.harness._meter import CACHE_READ_FACTOR, CACHE_WRITE_FACTOR

AGENT_CONTEXT_TOKENS = 20_000
"""Input tokens every agent request carries before the skill and prompt (system prompt, tools)."""

SESSION_CONTEXT_TOKENS = 3_000
"""Input tokens of each session's own first message before the prompt (the skill listing, the
workspace's context reminders): written to the prompt cache once per session, read after."""

PRIOR_REQUESTS: Mapping[str, int] = {"triggers": 2, "evals": 10}
"""Model requests one session makes, before any has been measured (trigger sessions allow 2 turns)."""

PRIOR_OUTPUT_TOKENS: Mapping[str, int] = {"triggers": 200, "evals": 4_000}
"""Output tokens of one session, before any has been measured."""


def prior_usd(
    tier: str, pricing: Pricing, prompt_tokens: int, sessions: int = 1, *, prefix_cached: bool
) -> float:
    """`sessions` sessions of `tier` before any was measured, the prompt cache priced: the shared
    fixed context written once (unless `prefix_cached`: an earlier session wrote it) and read by
    every other request, each session's own prompt written once and read by its later requests,
    and the tier's output."""
    if sessions <= 0:
        return 0.0
    requests = PRIOR_REQUESTS.get(tier, 1)
    prefix_writes = 0 if prefix_cached else 1
    prefix_reads = sessions * requests - prefix_writes
    own = SESSION_CONTEXT_TOKENS + prompt_tokens
    own_reads = sessions * (requests - 1)
    writes = prefix_writes * AGENT_CONTEXT_TOKENS + sessions * own
    reads = prefix_reads * AGENT_CONTEXT_TOKENS + own_reads * own
    tokens = writes * CACHE_WRITE_FACTOR + reads * CACHE_READ_FACTOR
    output = sessions * PRIOR_OUTPUT_TOKENS.get(tier, 0)
    return tokens / 1e6 * pricing.input_per_mtok + output / 1e6 * pricing.output_per_mtok


def first_request_usd(pricing: Pricing, prompt_tokens: int) -> float:
    """The least the model gateway reserves for a session's first request when it knows none of
    its prompt cached: the fixed context and the session's own first message written, the
    gateway's smallest output bound (`request_floor_usd`)."""
    return request_floor_usd(
        pricing, AGENT_CONTEXT_TOKENS + SESSION_CONTEXT_TOKENS + max(prompt_tokens, 0)
    )


def session_cost_usd(transcript: Transcript, model: BoundModel) -> float:
    """What one finished session cost: what the model gateway metered for it (every request's
    usage at list prices, cache reads and writes priced as the API prices them) — the job's one
    meter; for a session the gateway could not price (a model the catalog does not know), the
    larger of the agent's own report and its usage at catalog prices (a budget errs high)."""
    metered = transcript.metered
    if metered is not None and metered.requests and not metered.unpriced:
        return metered.cost_usd
    usage = transcript.usage
    priced = measured_cost_usd(
        model.model.pricing,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=(usage.output_tokens or 0) if usage else 0,
        cache_read_input_tokens=usage.cache_read_input_tokens if usage else 0,
        cache_creation_input_tokens=usage.cache_creation_input_tokens if usage else 0,
    )
    return max(priced or 0.0, transcript.total_cost_usd or 0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedUnit:
    """A unit the budget refused."""

    plugin: str
    skill: str
    tier: str
    model: str
    estimate_usd: float
    request_usd: float = 0.0
    """The least the gateway reserves for the unit's first request (`first_request_usd`; 0 when
    that was not what the cap lacked room for)."""


@dataclass(slots=True, kw_only=True)
class Budget:
    """The `--max-cost-usd` cap of one invocation, shared by its trigger and eval sweeps."""

    limit_usd: float | None = None
    """The cap; None = unlimited (only the spend is tracked)."""
    spent_usd: float = 0.0
    """Measured cost of every finished session so far."""
    skipped: list[SkippedUnit] = field(default_factory=list)
    _measured: dict[tuple[str, str], tuple[int, float]] = field(default_factory=dict)

    @property
    def stopped(self) -> bool:
        """A unit was refused: nothing more is scheduled."""
        return bool(self.skipped)

    def charge(self, tier: str, model: BoundModel, usd: float) -> None:
        """Record one finished session's cost (it teaches the per-session estimate too)."""
        self.spent_usd += usd
        n, total = self._measured.get((tier, model.model.key), (0, 0.0))
        self._measured[(tier, model.model.key)] = (n + 1, total + usd)

    def session_estimate_usd(self, tier: str, model: BoundModel, prompt_tokens: int) -> float:
        """One session of `tier` on `model`: the measured mean, else the prior (module doc) of a
        session that finds the fixed context cached."""
        return self.estimate_usd(tier, model, prompt_tokens, 1, prefix_cached=True)

    def estimate_usd(
        self,
        tier: str,
        model: BoundModel,
        prompt_tokens: int,
        sessions: int,
        *,
        prefix_cached: bool = False,
    ) -> float:
        """`sessions` sessions of `tier` on `model`: the measured mean each, else the prior
        (`prior_usd`; `prefix_cached`: an earlier session of the run wrote the fixed context)."""
        n, total = self._measured.get((tier, model.model.key), (0, 0.0))
        if n:
            return sessions * total / n
        pricing = model.model.pricing
        if pricing is None:
            return 0.0
        return prior_usd(tier, pricing, prompt_tokens, sessions, prefix_cached=prefix_cached)

    def admit(
        self,
        *,
        plugin: str,
        skill: str,
        tier: str,
        model: BoundModel,
        sessions: int,
        prompt_tokens: int,
        pending_usd: float = 0.0,
    ) -> bool:
        """Whether the unit may start: spend so far plus `pending_usd` (the estimates of units
        admitted to run beside it that have not run yet) plus its estimate stays within the cap,
        and so does the least the model gateway reserves for its first request (module doc)."""
        if self.limit_usd is None:
            return True
        estimate = self.estimate_usd(tier, model, prompt_tokens, sessions)
        pricing = model.model.pricing
        request = (
            first_request_usd(pricing, prompt_tokens) if pricing is not None and sessions > 0 else 0
        )
        room = self.limit_usd - self.spent_usd - max(pending_usd, 0.0)
        if self.stopped or estimate > room or request > room:
            self.skipped.append(
                SkippedUnit(
                    plugin=plugin,
                    skill=skill,
                    tier=tier,
                    model=model.model.key,
                    estimate_usd=estimate,
                    # the reason names the floor only when the estimate alone would fit
                    request_usd=request if estimate <= room < request else 0.0,
                )
            )
            return False
        return True

    def skip_reason(self) -> str:
        """The one-line reason shown for a refused unit."""
        if not self.skipped:
            return ""
        last = self.skipped[-1]
        if last.request_usd:
            room = max((self.limit_usd or 0.0) - self.spent_usd, 0.0)
            return (
                f"budget: --max-cost-usd {self.limit_usd:.2f} leaves {room:.2f} "
                f"(spent {self.spent_usd:.2f}), less than the model gateway reserves for one "
                f"request of {last.model} ({last.request_usd:.3f}: its prompt written to the "
                f"prompt cache and {MIN_OUTPUT_TOKENS} output tokens); raise the cap to run it"
            )
        return (
            f"budget: --max-cost-usd {self.limit_usd:.2f} reached "
            f"(spent {self.spent_usd:.2f}; next unit estimated {last.estimate_usd:.2f})"
        )

    def summary(self) -> str:
        """`""` when nothing was skipped, else one line for the console, summary and comment."""
        if not self.skipped:
            return ""
        n = len(self.skipped)
        return (
            f"budget: stopped at ${self.spent_usd:.2f} of ${self.limit_usd:.2f} "
            f"(--max-cost-usd); {n} unit{'' if n == 1 else 's'} not run, a re-run continues: "
            + ", ".join(f"{s.plugin}/{s.skill} {s.tier} {s.model}" for s in self.skipped)
        )
