"""Results files and run facts for the PR comment's states (regression, improvement, no change,
undecided, not evaluated, authoring error, checks failing, no evals): the unit tests render them,
and `tools/pr_comment_screens.py` screenshots the same renders for docs/pr-comment.md. Pure data;
no I/O."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from evolve_action.plan import Tier
from evolve_action.report import (
    CheckLine,
    ComparisonRow,
    Revision,
    RunFacts,
    SkillEvidence,
    compare,
)
from evolve_action.results import (
    EntryHeader,
    EvalResult,
    EvalsEntry,
    GradedAssertion,
    ModelEntry,
    ResultsFile,
    TriggerResult,
    TriggersEntry,
)

KEY = "anthropic/claude-sonnet-5"
MARKER = "<!-- evolve-action:comment -->"
BASE_SHA = "3f9c2e1d8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e"
HEAD_SHA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"

QUERIES = (
    "turn this csv into a summary report",
    "make a report from sales.csv",
    "summarise the columns of data.csv",
    "build a weekly report from the export",
    "chart the totals in this spreadsheet",
    "which rows in orders.csv are duplicates",
    "give me a pivot of revenue by region",
    "report the monthly averages",
    "tidy and summarise this csv file",
    "what's in this csv",
    "generate a pdf invoice",
    "rename these image files",
    "write a haiku about spring",
)
"""13 queries: the first 10 should trigger csv-report, the last 3 should not."""


def header(ran_at: str) -> EntryHeader:
    return EntryHeader(
        provider="anthropic",
        model="claude-sonnet-5",
        display="Claude Sonnet 5",
        harness="claude-code",
        executed=True,
        ran_at=ran_at,
        runs_per_query=3,
    )


def triggers(hits: Sequence[int], *, ran_at: str, runs: int = 3) -> TriggersEntry:
    """One result per query of `QUERIES` with these hits out of `runs`."""
    results = []
    for q, h in zip(QUERIES, hits, strict=True):
        should = QUERIES.index(q) < 10
        passed = (h / runs >= 0.5) if should else (h / runs < 0.5)
        results.append(
            TriggerResult(query=q, should_trigger=should, hits=h, runs=runs, passed=passed)
        )
    return TriggersEntry(header=header(ran_at), results=tuple(results))


def evals(met: Sequence[tuple[int, int]], *, ran_at: str) -> EvalsEntry:
    """Evals e1, e2, … with `met` = (expectations met, expectations) each."""
    results = []
    for i, (k, n) in enumerate(met, start=1):
        exps = tuple(
            GradedAssertion(type="llm", text=f"report has section {j + 1}", passed=j < k)
            for j in range(n)
        )
        results.append(EvalResult(id=f"e{i}", name=f"report {i}", passed=k == n, expectations=exps))
    return EvalsEntry(header=header(ran_at), results=tuple(results))


def results(
    t: TriggersEntry | None, e: EvalsEntry | None, skill: str = "csv-report"
) -> ResultsFile:
    return ResultsFile(
        plugin="data-tools", skill=skill, models={KEY: ModelEntry(triggers=t, evals=e)}
    )


BASE_HITS = (3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0)
"""Base: 12 of 13 queries pass (`what's in this csv` never triggers)."""
BASE_T = triggers(BASE_HITS, ran_at="2026-11-20T10:00:00Z")
BASE_E = evals([(4, 4), (4, 4), (3, 4), (4, 4), (2, 4), (4, 4)], ran_at="2026-11-20T10:05:00Z")


def _pair(head_t: TriggersEntry | None, head_e: EvalsEntry | None) -> list[SkillEvidence]:
    return [
        SkillEvidence(
            plugin="data-tools",
            skill="csv-report",
            base=results(BASE_T, BASE_E),
            head=results(head_t or BASE_T, head_e or BASE_E),
        )
    ]


def regression() -> tuple[ComparisonRow, ...]:
    """The description broke: 7 queries stopped triggering, 1 started (evals not re-run)."""
    hits = (0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 0, 0, 0)
    return compare(_pair(triggers(hits, ran_at="2026-11-25T09:00:00Z"), None))


def improvement() -> tuple[ComparisonRow, ...]:
    """Better instructions: evals meet more expectations (triggers not re-run)."""
    # a larger suite so the change is decided: 14 cases, 8 more of them now fully met
    base = evals(
        [
            (4, 4),
            (1, 4),
            (3, 4),
            (2, 4),
            (2, 4),
            (4, 4),
            (1, 4),
            (2, 4),
            (3, 4),
            (1, 4),
            (2, 4),
            (4, 4),
            (2, 4),
            (1, 4),
        ],
        ran_at="2026-11-20T10:05:00Z",
    )
    head = evals(
        [
            (4, 4),
            (4, 4),
            (4, 4),
            (4, 4),
            (3, 4),
            (4, 4),
            (4, 4),
            (4, 4),
            (4, 4),
            (3, 4),
            (4, 4),
            (4, 4),
            (4, 4),
            (4, 4),
        ],
        ran_at="2026-11-25T09:00:00Z",
    )
    return compare(
        [
            SkillEvidence(
                plugin="data-tools",
                skill="csv-report",
                base=results(BASE_T, base),
                head=results(BASE_T, head),
            )
        ]
    )


def no_change() -> tuple[ComparisonRow, ...]:
    """A typo fixed in three skills' descriptions: the same behaviour, re-run."""
    out: list[SkillEvidence] = []
    for skill in ("csv-report", "csv-clean", "xlsx-export"):
        out.append(
            SkillEvidence(
                plugin="data-tools",
                skill=skill,
                base=results(BASE_T, None, skill),
                head=results(triggers(BASE_HITS, ran_at="2026-11-25T09:00:00Z"), None, skill),
            )
        )
    return compare(out)


def undecided() -> tuple[ComparisonRow, ...]:
    """A flaky 13-query skill that moved a little: not enough runs to tell."""
    base = (3, 2, 2, 3, 1, 2, 3, 2, 1, 0, 1, 0, 0)
    head = (2, 1, 1, 3, 1, 1, 2, 2, 0, 0, 1, 0, 1)
    return compare(
        [
            SkillEvidence(
                plugin="data-tools",
                skill="csv-report",
                base=results(triggers(base, ran_at="2026-11-20T10:00:00Z"), None),
                head=results(triggers(head, ran_at="2026-11-25T09:00:00Z"), None),
            )
        ]
    )


def not_evaluated() -> tuple[ComparisonRow, ...]:
    """The description changed, no credentials: the head still carries the base's (now stale)
    results, and nothing ran."""
    return compare(
        [
            SkillEvidence(
                plugin="data-tools",
                skill="csv-report",
                base=results(BASE_T, BASE_E),
                head=results(BASE_T, BASE_E),
                unevaluated={
                    Tier.TRIGGERS: NOT_RUN_TRIGGERS,
                    Tier.EVALS: "6 stale or missing cases not run: " + NO_CREDENTIALS,
                },
            )
        ]
    )


NO_CREDENTIALS = "no credentials were given"
NOT_RUN_TRIGGERS = "13 stale or missing queries not run: " + NO_CREDENTIALS
REFUSED = (
    'plugins/data-tools/evals/csv-report/evals.json:4: assertion type "notregex" is not one of '
    "contains, regex, …; fix the type (docs/authoring.md)"
)


def authoring_error() -> tuple[ComparisonRow, ...]:
    """The evals file has an unknown assertion type: refused, nothing ran for evals."""
    return compare(
        [
            SkillEvidence(
                plugin="data-tools",
                skill="csv-report",
                base=results(BASE_T, BASE_E),
                head=results(BASE_T, BASE_E),
                refused={Tier.EVALS: REFUSED},
            )
        ]
    )


CHECKS = (
    CheckLine(
        error=True,
        where="plugins/data-tools/skills/csv-report/SKILL.md:3",
        message="description missing a 'Use when/after/before' trigger phrase "
        "(checks.description_pattern)",
    ),
    CheckLine(
        error=False,
        where="plugins/data-tools/skills/csv-report/SKILL.md",
        message="body is 612 lines; keep SKILL.md under 500 (checks.body_length)",
    ),
    CheckLine(
        error=False,
        where="plugins/data-tools/evals/csv-report/triggers.jsonc:12",
        message="query duplicates line 4 (triggers.duplicate)",
    ),
)


def facts(*, sessions: int = 39, skipped: int = 18, cost: float = 0.4213) -> RunFacts:
    return RunFacts(
        marker=MARKER,
        sessions_run=sessions,
        sessions_skipped=skipped,
        cost_usd=cost,
        evaluation_url="https://github.com/acme/skills/blob/feature/EVALUATION.md",
        run_url="https://github.com/acme/skills/actions/runs/42",
    )


def _touched(reason: str) -> tuple[str, ...]:
    return (f"evaluated data-tools/csv-report: {reason}",)


STATES: dict[str, Callable[[], tuple[tuple[ComparisonRow, ...], RunFacts]]] = {
    "regression": lambda: (regression(), facts()),
    "improvement": lambda: (improvement(), facts()),
    "no-change": lambda: (no_change(), facts()),
    "undecided": lambda: (undecided(), facts()),
    "not-evaluated": lambda: (
        not_evaluated(),
        dataclasses.replace(
            facts(sessions=0, skipped=0, cost=0.0),
            cost_usd=None,
            not_run=19,
            not_run_reason=NO_CREDENTIALS,
            notes=(
                "touched data-tools/csv-report: changed plugins/data-tools/skills/csv-report/"
                "SKILL.md; changed plugins/data-tools/evals/csv-report/results.json",
                "live tiers skipped: no credentials were given (set anthropic_api_key or "
                "claude_code_oauth_token); Tier 0 ran",
            ),
        ),
    ),
    "authoring-error": lambda: (
        authoring_error(),
        dataclasses.replace(
            facts(sessions=0, skipped=39),
            cost_usd=None,
            notes=(
                *_touched("changed plugins/data-tools/evals/csv-report/evals.json"),
                f"authoring error in data-tools/csv-report's evals: {REFUSED}",
            ),
        ),
    ),
    "checks-failing": lambda: (
        no_change()[1:2],
        dataclasses.replace(
            facts(sessions=39, skipped=0),
            checks=CHECKS,
            notes=_touched("changed plugins/data-tools/skills/csv-report/SKILL.md"),
        ),
    ),
    "no-evals": lambda: (
        (),
        dataclasses.replace(
            facts(sessions=0, skipped=0),
            cost_usd=None,
            no_evals=("hello/greet",),
            notes=(
                "touched hello/greet: changed skills/greet/SKILL.md; it has no evals, so nothing "
                "was measured",
            ),
        ),
    ),
}
"""Every state the comment can be in, as (rows, facts) (docs/img/pr-comment-<name>.png)."""


REVISION = Revision(base_sha=BASE_SHA, head_sha=HEAD_SHA)


CASES = {
    "regression": regression,
    "improvement": improvement,
    "no-change": no_change,
    "undecided": undecided,
}
"""The four showcase cases by name (docs/img/pr-comment-<name>.png)."""
