"""The sticky PR comment's body (pr_comment.py, templates/pr_comment.md.j2)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import msgspec
import pytest

from evolve_action.report import (
    COMMENT_LIMIT,
    MAX_FAILING_LISTED,
    CheckLine,
    ComparisonRow,
    Label,
    Revision,
    RunFacts,
    SkillEvidence,
    comment_length,
    compare,
    digest_of,
    evidence_digest,
    github_text,
    render_pr_comment,
)
from evolve_action.results import (
    EntryHeader,
    EvalResult,
    EvalsEntry,
    EvalSnapshot,
    GradedAssertion,
    ModelEntry,
    ResultsFile,
    TriggerResult,
    TriggersEntry,
)

KEY = "anthropic/claude-sonnet-5"
HEADER = EntryHeader(
    provider="anthropic",
    model="claude-sonnet-5",
    display="Claude Sonnet 5",
    harness="claude",
    executed=True,
)


def trig(verdicts: Sequence[bool]) -> TriggersEntry:
    """Queries q0, q1, … that should trigger; True = hit in 3/3 runs, False = 0/3."""
    return TriggersEntry(
        header=HEADER,
        results=tuple(
            TriggerResult(query=f"q{i}", should_trigger=True, hits=3 if v else 0, runs=3, passed=v)
            for i, v in enumerate(verdicts)
        ),
    )


def ev(verdicts: Sequence[bool | str], *, baseline: Sequence[bool] | None = None) -> EvalsEntry:
    """Evals e0, e1, …; a str verdict is a runtime error."""
    results = [
        EvalResult(id=f"e{i}", name=f"name e{i}", runtime_error=v)
        if isinstance(v, str)
        else EvalResult(
            id=f"e{i}",
            name=f"name e{i}",
            passed=v,
            expectations=(GradedAssertion(type="llm", text=f"e{i} does it", passed=v),),
        )
        for i, v in enumerate(verdicts)
    ]
    snap = (
        EvalSnapshot(
            results=tuple(EvalResult(id=f"e{i}", passed=b) for i, b in enumerate(baseline))
        )
        if baseline is not None
        else None
    )
    return EvalsEntry(header=HEADER, results=tuple(results), baseline=snap)


def m(triggers: TriggersEntry | None = None, evals: EvalsEntry | None = None) -> ResultsFile:
    return ResultsFile(
        plugin="p", skill="s", models={KEY: ModelEntry(triggers=triggers, evals=evals)}
    )


MARKER = "<!-- evolve-action:comment -->"
FACTS = RunFacts(
    marker=MARKER,
    sessions_run=12,
    sessions_skipped=30,
    cost_usd=0.12345,
    evaluation_url="https://github.com/o/r/blob/abc123/EVALUATION.md",
    run_url="https://github.com/o/r/actions/runs/42",
)


def rows_fixture() -> tuple[ComparisonRow, ...]:
    return compare(
        [
            SkillEvidence(
                plugin="p",
                skill="pdf",
                base=m(triggers=trig([True] * 10), evals=ev([True] * 6, baseline=[False] * 6)),
                head=m(
                    triggers=trig([False] * 6 + [True] * 4),
                    evals=ev([True] * 5 + ["agent crashed"], baseline=[True] + [False] * 5),
                ),
            ),
            SkillEvidence(plugin="p", skill="csv", base=None, head=m(triggers=trig([True, False]))),
        ]
    )


def table_lines(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("| ")]


def cell_count(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line)) - 1


# ---------------------------------------------------------------------------------------------
# Rendering


def test_render_contents() -> None:
    rows = rows_fixture()
    body = render_pr_comment(rows, FACTS)
    assert body.splitlines()[0] == MARKER
    assert body.count(MARKER) == 1
    # first visible line: the verdict in words
    assert body.splitlines()[2] == (
        "### 🔴 pdf triggers fell from 100 % to 40 % — a regression beyond noise"
    )
    lines = table_lines(body)
    assert lines[0] == "| Skill | Model | Triggers | Evals |"
    assert {cell_count(line) for line in lines} == {4}
    pdf = next(line for line in lines if line.startswith("| [p/pdf]"))
    assert "100 % → 40 % · **−60 pts** · 🔴 regression" in pdf
    assert "100 % → 100 % · ±0 pts · 🟡 undecided" in pdf  # 5 shared evals, one run each
    csv = next(line for line in lines if line.startswith("| [p/csv]"))
    assert "— → 50 % · 🆕 new" in csv
    # the cases that flipped, visible; the statistics collapsed
    assert (
        "**Newly failing**\n- pdf triggers: q0 — hit in 3/3 → 0/3 runs (expected a trigger)"
    ) in body
    assert "**Fixed**" not in body
    assert "<details><summary>Statistics, runs and failing cases</summary>" in body
    assert "exact one-sided p = 1.6e-08 ≤ 0.025" in body
    assert "verdict flips 6 ↓ 0 ↑ of 10 shared" in body
    assert "lift vs no skill +100 pts → +83 pts" in body  # 100 − 0 at base, 100 − 17 at head
    assert "- ⚠️ errored (excluded): e5 (name e5): agent crashed" in body
    assert "❌ newly failing: q0" not in body  # listed once, above
    # what this run did, and the links
    assert (
        "12 agent sessions, 30 skipped (results up to date) · cost $0.1235 · "
        "[EVALUATION.md](https://github.com/o/r/blob/abc123/EVALUATION.md)"
        " · [workflow run](https://github.com/o/r/actions/runs/42)"
    ) in body
    assert "[p/pdf](https://github.com/o/r/blob/abc123/EVALUATION.md#p)" in body
    assert "Reproduce locally" not in body  # no base SHA given
    assert body.endswith("</sub>\n")


def test_revision_short_shas_dirty_and_reproduce() -> None:
    rev = Revision(base_sha="a" * 40, head_sha="b" * 40, base_reruns=6)
    body = render_pr_comment(rows_fixture(), FACTS, revision=rev)
    assert "`aaaaaaa` → `bbbbbbb` ·" in body and "a" * 8 not in body
    assert "uncommitted" not in body
    assert "12 agent sessions (6 of them re-ran the base)" in body
    assert "<sub>Reproduce locally: `evolve-action pr --local --base aaaaaaa`</sub>" in body
    dirty = Revision(base_sha="a" * 40, head_sha="b" * 40, dirty=True, reproduce="make `x`")
    body = render_pr_comment(rows_fixture(), FACTS, revision=dirty)
    assert "`bbbbbbb` + uncommitted changes" in body
    assert "Reproduce locally: `make x`" in body


def test_the_footer_counts_workflow_runs_and_names_an_earlier_label() -> None:
    one = render_pr_comment(rows_fixture(), FACTS, revision=Revision(workflow_runs=1))
    assert "workflow runs" not in one
    rev = Revision(workflow_runs=3, earlier=("p/pdf (m): an earlier workflow run said undecided",))
    body = render_pr_comment(rows_fixture(), FACTS, revision=rev)
    assert (
        "12 agent sessions, 30 skipped (results up to date) · verdict from runs over 3 workflow "
        "runs · p/pdf (m): an earlier workflow run said undecided · cost"
    ) in body


def test_verdict_lines() -> None:
    from tests.helpers import comment_examples as ex

    first = {
        name: render_pr_comment(*make(), revision=ex.REVISION).splitlines()[2]
        for name, make in ex.STATES.items()
    }
    assert first == {
        "regression": "### 🔴 csv-report triggers fell from 92 % to 46 % — a regression beyond noise",
        "improvement": "### 🟢 csv-report evals rose from 21 % to 86 % — an improvement beyond noise",
        "no-change": "### ✅ no change in 3 skills",
        "undecided": (
            "### 🟡 csv-report triggers moved from 69 % to 51 % — undecided: more runs would tell"
        ),
        "not-evaluated": (
            "### ⏸️ not evaluated: csv-report triggers, 13 stale or missing queries not run: "
            "no credentials were given"
        ),
        "authoring-error": (
            "### ⛔ csv-report evals: authoring error: the definition is invalid, so nothing ran"
        ),
        "checks-failing": "### ✅ no change in 1 skill · ❌ 1 Tier 0 error",
        "no-evals": (
            "### ➖ not evaluated: the touched skill has no evals yet, so nothing was measured"
        ),
    }


def test_stale_evidence_not_rerun_is_never_green_nor_up_to_date() -> None:
    from tests.helpers import comment_examples as ex

    rows, facts = ex.STATES["not-evaluated"]()
    assert [r.label for r in rows] == [Label.NOT_EVALUATED]
    body = render_pr_comment(rows, facts, revision=ex.REVISION)
    assert "✅" not in body and "no change" not in body and "up to date" not in body
    assert "🟡" not in body and "🔴" not in body and "🟢" not in body
    cells = table_lines(body)[2]
    assert cells.endswith(
        "| ⏸️ not evaluated · stored 92 % is out of date "
        "| ⏸️ not evaluated · stored 67 % is out of date |"
    )
    assert "0 agent sessions, 19 stale or missing cases not run: no credentials were given" in body
    assert "<details>" not in body  # the stale statistics say nothing about this PR


def test_results_up_to_date_only_when_cases_were_skipped_as_current() -> None:
    from tests.helpers import comment_examples as ex

    rows = ex.no_change()
    fresh = render_pr_comment(rows, ex.facts(sessions=39, skipped=0))
    assert "39 agent sessions ·" in fresh and "up to date" not in fresh
    skipped = render_pr_comment(rows, ex.facts(sessions=0, skipped=39))
    assert "0 agent sessions, 39 skipped (results up to date)" in skipped


def test_tier0_findings_errors_listed_warnings_collapsed_with_file_and_line() -> None:
    from tests.helpers import comment_examples as ex

    rows, facts = ex.STATES["checks-failing"]()
    body = render_pr_comment(rows, facts)
    lines = body.splitlines()
    errors_at = lines.index("**Tier 0 checks on the touched skills**")
    assert lines[errors_at + 1] == (
        "- ❌ plugins/data-tools/skills/csv-report/SKILL.md:3: description missing a "
        "'Use when/after/before' trigger phrase (checks.description_pattern)"
    )
    summary = "<details><summary>Tier 0 warnings on the touched skills (2)</summary>"
    assert lines.index(summary) > errors_at
    assert "- ⚠️ plugins/data-tools/evals/csv-report/triggers.jsonc:12: query duplicates" in body
    # Only warnings: nothing in the headline, the warnings still collapsed.
    quiet = dataclasses.replace(facts, checks=tuple(c for c in facts.checks if not c.error))
    body = render_pr_comment(rows, quiet)
    assert "Tier 0" not in body.splitlines()[2] and summary in body
    assert "**Tier 0 checks" not in body


def test_tier0_findings_are_untrusted_text() -> None:
    from tests.helpers import comment_examples as ex

    bad = CheckLine(error=True, where="a|b.md:1", message="@team <!-- x --> [y](z)")
    body = render_pr_comment(ex.no_change(), dataclasses.replace(ex.facts(), checks=(bad,)))
    line = next(x for x in body.splitlines() if x.startswith("- ❌ a"))
    assert line == "- ❌ a\\|b.md:1: ＠team &lt;!-- x --&gt; \\[y\\](z)"


def test_no_evals_names_the_next_step() -> None:
    from tests.helpers import comment_examples as ex

    rows, facts = ex.STATES["no-evals"]()
    body = render_pr_comment(rows, facts)
    assert (
        "**No evals yet:** hello/greet. Next: author evals (docs/authoring.md) or run "
        "`evolve-action init --skill greet` to draft them." in body
    )
    several = dataclasses.replace(facts, no_evals=("hello/greet", "hello/wave"))
    body = render_pr_comment(rows, several)
    assert "2 touched skills have no evals" in body and "--skill <name>" in body


def test_undecided_carries_its_next_step() -> None:
    from tests.helpers import comment_examples as ex

    body = render_pr_comment(ex.undecided(), ex.facts())
    assert "🟡 undecided: more runs would tell: raise `max_runs`" in body
    hint = "inconclusive at the cap of max_runs 6; raise max_runs to 12"
    body = render_pr_comment(ex.undecided(), dataclasses.replace(ex.facts(), undecided_hint=hint))
    assert f"🟡 undecided: {hint}" in body
    assert "max_runs" not in render_pr_comment(ex.no_change(), ex.facts())


def test_a_tier_not_rerun_shows_no_label() -> None:
    from tests.helpers import comment_examples as ex

    body = render_pr_comment(ex.regression(), ex.facts())
    assert table_lines(body)[2].endswith("| 67 % · not re-run |")


def test_no_rows_and_no_cost() -> None:
    facts = dataclasses.replace(FACTS, cost_usd=None, run_url=None, evaluation_url=None)
    body = render_pr_comment((), facts)
    assert "### No touched skill has stored results on either side yet" in body
    assert "| Skill |" not in body
    assert "cost not measured" in body and "](" not in body


def test_unsafe_urls_are_dropped() -> None:
    facts = dataclasses.replace(
        FACTS, run_url="javascript:alert(1)", evaluation_url="https://x/a b)c"
    )
    body = render_pr_comment((), facts)
    assert "javascript" not in body
    assert "[EVALUATION.md](https://x/a%20b%29c)" in body


def test_budget_over_the_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="65536"):
        render_pr_comment((), FACTS, budget=COMMENT_LIMIT + 1)


# ---------------------------------------------------------------------------------------------
# Determinism


def test_same_evidence_same_body() -> None:
    assert render_pr_comment(rows_fixture(), FACTS) == render_pr_comment(rows_fixture(), FACTS)


def test_digest_is_a_function_of_the_evidence_only() -> None:
    rows = rows_fixture()
    first = render_pr_comment(rows, FACTS)
    rerun = render_pr_comment(
        rows,
        dataclasses.replace(
            FACTS, sessions_run=0, sessions_skipped=42, cost_usd=None, run_url="https://x/2"
        ),
    )
    assert first != rerun
    assert digest_of(first) == digest_of(rerun) == evidence_digest(rows)
    changed = compare(
        [
            SkillEvidence(
                plugin="p",
                skill="pdf",
                base=m(triggers=trig([True])),
                head=m(triggers=trig([False])),
            )
        ]
    )
    assert evidence_digest(changed) != evidence_digest(rows)
    assert digest_of("no digest here") is None


# ---------------------------------------------------------------------------------------------
# Size cap


def big_rows(skills: int) -> tuple[ComparisonRow, ...]:
    evidence = []
    for i in range(skills):
        long = f"skill-{i:03d}-" + "x" * 40
        if i % 50 == 0:  # a few regressions among many quiet rows
            base, head = trig([True] * 40), trig([False] * 30 + [True] * 10)
        else:
            base, head = trig([True] * 20 + [False] * 20), trig([True] * 20 + [False] * 20)
        files = [
            ResultsFile(
                plugin="plugin",
                skill=long,
                models={
                    "anthropic/claude-sonnet-5": ModelEntry(triggers=t),
                    "anthropic/claude-opus-5": ModelEntry(triggers=t),
                },
            )
            for t in (base, head)
        ]
        evidence.append(SkillEvidence(plugin="plugin", skill=long, base=files[0], head=files[1]))
    return compare(evidence)


def test_size_cap_with_500_skills_keeps_headline_and_severe_rows() -> None:
    rows = big_rows(500)
    body = render_pr_comment(rows, FACTS)
    assert comment_length(body) <= 65_000 < COMMENT_LIMIT
    assert body.count(MARKER) == 1
    assert body.splitlines()[2].startswith("### 🔴 skill-000-")
    assert "(🔴 20 regression in 1000 skill × model rows)" in body.splitlines()[2]
    assert "Details were left out" in body
    assert "<details>" not in body
    note = re.search(r"(\d+) of 1000 rows were left out \((\d+) no change\)", body)
    assert note is not None and note.group(1) == note.group(2)
    shown = table_lines(body)[2:]  # after the header and separator lines
    assert len(shown) == 1000 - int(note.group(1))
    regressions = [line for line in shown if "🔴 regression" in line]
    assert len(regressions) == 20  # the severe rows survive the cut
    assert body.endswith("</sub>\n")


def _sections(body: str) -> list[str]:
    return re.findall(r"^\*\*plugin/skill-\d+-x+ · [^*]+\*\*$", body, re.M)


def test_size_cap_drops_details_before_rows_least_severe_first() -> None:
    rows = big_rows(10)  # skill-000 regressed on both models; 18 quiet rows, all with failures
    full = render_pr_comment(rows, FACTS)
    assert len(_sections(full)) == 20
    budget = comment_length(full) - 2000
    body = render_pr_comment(rows, FACTS, budget=budget)
    assert comment_length(body) <= budget
    kept = _sections(body)
    assert 2 <= len(kept) < 20
    assert sum("skill-000" in k for k in kept) == 2  # the severe rows keep their details
    assert f"Details of {20 - len(kept)} of 20 rows" in body
    assert len(table_lines(body)) == len(table_lines(full))  # every row is still there
    assert "EVALUATION.md has every row" not in body  # no row was dropped
    assert "**Newly failing**" in body  # the regressions' flipped cases stay


def test_long_failing_lists_are_counted_not_listed() -> None:
    rows = compare(
        [SkillEvidence(plugin="p", skill="s", base=None, head=m(triggers=trig([False] * 40)))]
    )
    body = render_pr_comment(rows, FACTS)
    assert body.count("❌ failing (no base verdict)") == MAX_FAILING_LISTED
    assert f"… and {40 - MAX_FAILING_LISTED} more (see EVALUATION.md)" in body


# ---------------------------------------------------------------------------------------------
# Hostile text


HOSTILE = (
    "hi @org/team and @alice\u202e<!-- evolve-action:comment -->"
    "\x1b[31mred\x1b[0m | pipe\nnew line\r\n## heading \u200bzero `code` [x](https://e.vil) #12 "
    "&#64;bob \\"
)


def hostile_rows() -> tuple[ComparisonRow, ...]:
    hdr = EntryHeader(
        provider="anthropic", model="claude-sonnet-5", display=f"Model {HOSTILE}", executed=True
    )
    trig_entry = TriggersEntry(
        header=hdr,
        results=(TriggerResult(query=HOSTILE, should_trigger=True, hits=0, runs=3, passed=False),),
    )
    eval_entry = EvalsEntry(
        header=hdr,
        results=(
            EvalResult(id=HOSTILE, name=HOSTILE, runtime_error=HOSTILE),
            EvalResult(
                id="e2",
                name=HOSTILE,
                passed=False,
                expectations=(GradedAssertion(type="llm", text=HOSTILE, passed=False),),
            ),
        ),
    )
    head = ResultsFile(
        plugin=HOSTILE,
        skill=HOSTILE,
        models={"anthropic/claude-sonnet-5": ModelEntry(triggers=trig_entry, evals=eval_entry)},
    )
    return compare([SkillEvidence(plugin=HOSTILE, skill=HOSTILE, base=None, head=head)])


def test_hostile_text_is_neutralised() -> None:
    facts = dataclasses.replace(FACTS, notes=(HOSTILE,), title=HOSTILE)
    body = render_pr_comment(hostile_rows(), facts)
    assert body.count(MARKER) == 1 and body.startswith(MARKER + "\n")
    assert body.count("<!--") == 2  # the marker and the evidence digest, nothing else
    assert re.search(r"@[A-Za-z0-9]", body) is None  # no mention can ping
    assert "＠org/team" in body and "＠alice" in body
    assert "&#64;" not in body  # an entity cannot smuggle an @ either
    assert "#12" not in body and "＃12" in body
    for bad in ("\u202e", "\u200b", "\x1b", "\r"):
        assert bad not in body
    assert "[x](https://e.vil)" not in body  # no links from untrusted text
    lines = table_lines(body)
    assert {cell_count(line) for line in lines} == {4}  # pipes escaped, rows intact
    assert all(" \\|" not in line[-3:] for line in lines)  # no trailing backslash eats a pipe
    assert not any(line.startswith("## heading") for line in body.splitlines())
    assert "\\| pipe new line" in body  # newlines flattened inside cells and bullets


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("plain text", "plain text"),
        ("ping @octocat now", "ping ＠octocat now"),
        ("@org/team", "＠org/team"),
        ("mail a@b.example", "mail a＠b.example"),
        ("an @ alone", "an @ alone"),
        ("<!-- x -->", "&lt;!-- x --&gt;"),
        ("a\u202eb\u2066c\u200fd", "abcd"),
        ("zero\u200bwidth\u2060joiner\ufeff", "zerowidthjoiner"),
        ("\x1b[1;31mbold\x1b[0m", "bold"),
        ("tab\there", "tab here"),
        ("cr\rlf", "cr\nlf"),
        ("line\u2028sep", "line\nsep"),
        ("see #42", "see ＃42"),
        ("o/r#7", "o/r＃7"),
        ("a `b` [c](d) \\", "a \\`b\\` \\[c\\](d) \\\\"),
        ("1 & 2 > 0", "1 &amp; 2 &gt; 0"),
        ("&#64;x", "&amp;＃64;x"),
        ("日本語 ✓ café", "日本語 ✓ café"),
    ],
)
def test_github_text(text: str, want: str) -> None:
    assert github_text(text) == want


def test_label_order_is_the_documented_priority() -> None:
    assert [lbl.value for lbl in Label] == [
        "regression",
        "authoring error",
        "not evaluated",
        "improvement",
        "not comparable",
        "undecided",
        "base unknown",
        "no change",
        "new",
        "removed",
        "not re-run",
    ]
    assert not hasattr(Label, "UNDERPOWERED") and not hasattr(Label, "WITHIN_NOISE")


def test_not_comparable_and_removed_rows_render() -> None:
    codex = msgspec.structs.replace(HEADER, harness="codex")
    head_trig = msgspec.structs.replace(trig([False] * 6), header=codex)
    rows = compare(
        [
            SkillEvidence(
                plugin="p", skill="a", base=m(triggers=trig([True] * 6)), head=m(triggers=head_trig)
            ),
            SkillEvidence(plugin="p", skill="b", base=m(evals=ev([True, False])), head=None),
        ]
    )
    assert [r.label for r in rows] == [Label.NOT_COMPARABLE, Label.REMOVED]
    body = render_pr_comment(rows, FACTS)
    assert "### ⚪ a: not comparable (different model or harness)" in body
    assert "Triggers: ⚪ not comparable: different harness claude → codex" in body
    removed = next(line for line in table_lines(body) if line.startswith("| [p/b]"))
    assert "| 50 % → — · ➖ removed |" in removed


def test_a_pr_that_only_added_a_case_shows_it_and_is_never_green() -> None:
    """The demo's preview: one query added, the shared ones carried over unchanged. The new query
    ran, so the cell shows it; nothing was compared, so the headline is no ✅."""
    from tests.helpers import comment_examples as ex

    head = ex.BASE_T  # 13 queries; the base lacked the last one
    base = msgspec.structs.replace(head, results=head.results[:12])
    rows = compare(
        [
            SkillEvidence(
                plugin="data-tools",
                skill="csv-report",
                base=ex.results(base, None),
                head=ex.results(head, None),
            )
        ]
    )
    assert [r.label for r in rows] == [Label.NOT_RERUN]
    body = render_pr_comment(rows, ex.facts(sessions=1, skipped=36))
    assert body.splitlines()[2] == (
        "### ➖ nothing to compare in 1 skill: no shared case was re-run (1 new case ran: see the "
        "table)"
    )
    assert "· not re-run · 1 new query: 1/1 passing |" in table_lines(body)[2]
    assert "✅" not in body.splitlines()[2]


def test_undecided_evals_ask_for_more_cases_and_notes_keep_every_reason() -> None:
    from tests.helpers import comment_examples as ex

    few = ex.evals([(4, 4), (4, 4)], ran_at="2026-11-25T09:00:00Z")
    rows = compare(
        [
            SkillEvidence(
                plugin="data-tools",
                skill="csv-report",
                base=ex.results(None, ex.evals([(4, 4), (4, 4)], ran_at="2026-11-20T10:00:00Z")),
                head=ex.results(None, few),
            )
        ]
    )
    assert rows[0].evals is not None and rows[0].evals.label is Label.UNDECIDED
    reasons = "; ".join(
        f"changed plugins/data-tools/evals/csv-report/files/f{i}.csv" for i in range(9)
    )
    facts = dataclasses.replace(ex.facts(), notes=(f"evaluated data-tools/csv-report: {reasons}",))
    body = render_pr_comment(rows, facts)
    assert "🟡 undecided: one run a side cannot tell a change of 20 pts from noise" in body
    assert "room for more runs, or add cases" in body  # evals decide with runs, like triggers
    assert f"**Note:** evaluated data-tools/csv-report: {reasons}" in body  # whole, never cut
