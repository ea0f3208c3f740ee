"""Cell formulas and the document grammar of render.py (report spec §3.2, §3.5)."""

from __future__ import annotations

import pytest

from evolve_action.catalog import BUILTIN_CATALOG
from evolve_action.encoding import round6
from evolve_action.report import (
    EM,
    MARKER,
    LoadedFile,
    LoadedPlugin,
    _render,
    cell_text,
    group,
    pct,
    plugin_summary,
    provider_caps,
    render_plugin_page,
    render_root,
    secs,
    spct,
    usd,
)
from evolve_action.results import (
    EntryHeader,
    Estimate,
    EvalResult,
    EvalsEntry,
    EvalSummary,
    GradedAssertion,
    GradeSummary,
    ModelEntry,
    ResultsFile,
    Timing,
    TriggerResult,
    TriggersEntry,
    TriggerSummary,
)


@pytest.mark.parametrize(
    ("fn", "value", "want"),
    [
        (pct, None, EM),
        (pct, 0.981818, "98%"),
        (pct, 0.005, "0%"),  # correctly rounded binary value: 0.5 → "0"
        (spct, 0.0, "+0%"),
        (spct, -0.002, "-0%"),
        (spct, -1.0, "-100%"),
        (spct, 0.538462, "+54%"),
        (spct, None, EM),
        (secs, 6.25, "6.2s"),
        (secs, 102.0, "102.0s"),
        (secs, None, EM),
        (usd, 1.49755, "$1.4975"),
        (usd, 0.0, "$0.0000"),
        (group, 1276101, "1,276,101"),
        (group, 999, "999"),
        (group, -1234, "-1,234"),
    ],
)
def test_primitives(fn: object, value: object, want: str) -> None:
    assert fn(value) == want  # type: ignore[operator]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("a|b\nc", "a\\|b c"),
        ("x" * 160, "x" * 160),
        ("x" * 161, "x" * 160 + "…"),
        ("|" * 81, "\\|" * 80 + "…"),  # escaping happens before the cut
        ("a" + "é" * 80, "a" + "é" * 79 + "…"),  # never splits a character
    ],
    ids=["escape", "at-limit", "over", "escape-then-cut", "utf8-boundary"],
)
def test_cell_text(text: str, want: str) -> None:
    assert cell_text(text) == want


def _plugin() -> LoadedPlugin:
    head = EntryHeader(
        provider="anthropic", model="claude-sonnet-5", display="Claude Sonnet 5", executed=True
    )
    trig = TriggersEntry(
        header=head,
        results=(
            TriggerResult(
                query="q1\nline",
                should_trigger=False,
                hits=0,
                runs=3,
                passed=True,
                avg_run_seconds=1.0,
            ),
        ),
        summary=TriggerSummary(passed=1, failed=0, total=1, pass_rate=1, avg_run_seconds=1.0),
    )
    fail = GradedAssertion(
        type="llm", text="says `hi` | politely", passed=False, evidence="said bye"
    )
    evals = EvalsEntry(
        header=head,
        results=(
            EvalResult(
                id="7",
                name="Greets",
                passed=False,
                expectations=(fail,),
                summary=GradeSummary(passed=0, failed=1, total=1, pass_rate=0),
                timing=Timing(executor_duration_seconds=2.0),
            ),
        ),
        summary=EvalSummary(passed=0, failed=1, total=1, pass_rate=0, avg_run_seconds=2.0),
    )
    f = LoadedFile(
        skill="greet",
        results=ResultsFile(
            plugin="demo",
            skill="greet",
            models={"anthropic/claude-sonnet-5": ModelEntry(triggers=trig, evals=evals)},
        ),
    )
    return LoadedPlugin(name="demo", rel_dir="plugins/demo", files=(f,))


SEP8 = "| --- | --- | --- | --- | --- | --- | --- | --- |\n"
SEP11 = "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"


def test_plugin_page_grammar() -> None:
    caps = provider_caps(BUILTIN_CATALOG)
    page = render_plugin_page(_plugin(), active=None, caps=caps)
    assert page == (
        MARKER + "\n\n# demo evaluations\n"
        "\n## greet\n"
        "\n### Triggers\n"
        "\n#### q1 line (expected: no)\n\n"
        "| Provider | Model | Result | Rate | Δ rate | Avg run | Input tokens | Est. cost |\n"
        + SEP8
        + "| Anthropic | Claude Sonnet 5 (`claude-sonnet-5`) | PASS | 0/3 | — | 1.0s | — | n/a |\n"
        "\n### Evals\n"
        "\n#### 7 — Greets\n\n"
        "| Provider | Model | Result | Δ rate | Lift vs base | Avg run | Input tokens | Est. cost "
        "| Measured in/out | Cache rd/wr | Measured cost |\n"
        + SEP11
        + "| Anthropic | Claude Sonnet 5 (`claude-sonnet-5`) | FAIL | — | — | 2.0s | — | n/a | — | — | n/a |\n"
        "\n- `claude-sonnet-5` failed `says `hi` | politely`: said bye\n"
    )
    # Filtered to nothing: just the title.
    assert (
        render_plugin_page(_plugin(), active=frozenset(), caps=caps)
        == MARKER + "\n\n# demo evaluations\n"
    )


def test_root_grammar_with_excluded_and_single_detail() -> None:
    caps = provider_caps(BUILTIN_CATALOG)
    plugin = _plugin()
    summaries = {"demo": plugin_summary(plugin, None)}
    root = render_root(
        [plugin],
        summaries,
        single=True,
        active=None,
        caps=caps,
        excluded=[("Google", "all models")],
    )
    lines = root.split("\n")
    assert lines[0] == MARKER
    assert lines[1:3] == ["", "# Skill evaluations"]
    methodology = lines[4:11]
    assert len(methodology) == 7 and all(line and line == line.rstrip() for line in methodology)
    assert "evolve-action report" in " ".join(methodology)
    rest = "\n".join(lines[11:])
    assert rest.startswith(
        "\n## Excluded models\n\n"
        "Only the configured `models` appear below; these are excluded from this report:\n\n"
        "| Provider | Excluded models |\n| --- | --- |\n| Google | all models |\n"
        "\n## demo\n\n### Triggers\n\n"
        "| Provider | Model | Passed | Pass rate | Δ rate | Avg run | Input tokens | Est. input cost |\n"
        + SEP8
        + "| Anthropic | Claude Sonnet 5 (`claude-sonnet-5`) | 1/1 | 100% | — | 1.0s | — | n/a |\n"
        "\n### Evals\n\n"
    )
    assert "\n## greet\n\n### Triggers\n\n#### q1 line (expected: no)\n" in root
    assert root.endswith("said bye\n") and not root.endswith("\n\n")
    # Not single: no detail.
    multi = render_root([plugin], summaries, single=False, active=None, caps=caps, excluded=[])
    assert "## greet" not in multi and "Excluded" not in multi
    assert multi.endswith("| — | n/a |\n")


def test_rollup_row_leaves_all_errored_trigger_queries_ungraded() -> None:
    # A query whose runs all errored has no verdict; the file summary says 1 passed, 0 failed,
    # rate 1.0, and the rollup row must agree (not "1/2 | 50%").
    from evolve_action.results import summarise_triggers

    head = EntryHeader(
        provider="anthropic", model="claude-sonnet-5", display="Claude Sonnet 5", executed=True
    )
    results = (
        TriggerResult(
            query="a", should_trigger=True, hits=3, runs=3, passed=True, avg_run_seconds=1.0
        ),
        TriggerResult(query="b", should_trigger=True),
    )
    trig = TriggersEntry(header=head, results=results, summary=summarise_triggers(results))
    f = LoadedFile(
        skill="greet",
        results=ResultsFile(
            plugin="demo",
            skill="greet",
            models={"anthropic/claude-sonnet-5": ModelEntry(triggers=trig)},
        ),
    )
    plugin = LoadedPlugin(name="demo", rel_dir="plugins/demo", files=(f,))
    caps = provider_caps(BUILTIN_CATALOG)
    root = render_root(
        [plugin],
        {"demo": plugin_summary(plugin, None)},
        single=False,
        active=None,
        caps=caps,
        excluded=[],
    )
    assert "| Claude Sonnet 5 (`claude-sonnet-5`) | 1/1 | 100% | — | 1.0s |" in root


def _rollup(rate: float, *, prev: float | None = None) -> dict[str, object]:
    r: dict[str, object] = {
        "provider": "anthropic",
        "display": "Claude | Sonnet 5",
        "passed": 3,
        "failed": 1,
        "total": 4,
        "pass_rate": rate,
    }
    if prev is not None:
        r["previous_delta"] = {"rate": prev}
    return r


def _trig(
    display: str, *results: TriggerResult, previous: tuple[TriggerResult, ...] = ()
) -> TriggersEntry:
    from evolve_action.results import TriggerSnapshot

    provider, _, _ = display.partition(":")
    head = EntryHeader(provider=provider, model="m", display=display, executed=True)
    snap = TriggerSnapshot(results=previous) if previous else None
    return TriggersEntry(header=head, results=results, previous=snap)


def test_detail_rows_per_key_and_query() -> None:
    # Queries in first-seen order over the sorted keys, one row per key having the query (the
    # first result of a repeated query wins), deltas against the previous result of that query;
    # a model name with controls, line breaks or markup is cleaned as any interpolated text.
    r = TriggerResult
    evil = "Evil\x1b[31m <b>\nname\x07"
    files = ResultsFile(
        plugin="demo",
        skill="s",
        models={
            "zeta/b": ModelEntry(
                triggers=_trig(
                    "zeta:Zed",
                    r(query="new", should_trigger=True, hits=1, runs=2, passed=False),
                    r(query="q", should_trigger=True, hits=2, runs=2, passed=True),
                    previous=(r(query="q", should_trigger=True, hits=1, runs=4),),
                )
            ),
            "anthropic/x\x1b]0;t\x07y": ModelEntry(
                triggers=_trig(
                    evil,
                    r(query="q", should_trigger=False, hits=0, runs=3, passed=True),
                    r(query="q", should_trigger=False, hits=3, runs=3, passed=False),
                    previous=(
                        r(query="q", should_trigger=False, hits=1, runs=3),
                        r(query="q", should_trigger=False, hits=3, runs=3),
                    ),
                )
            ),
        },
    )
    plugin = LoadedPlugin(
        name="demo", rel_dir="plugins/demo", files=(LoadedFile(skill="s", results=files),)
    )
    page = render_plugin_page(plugin, active=None, caps=provider_caps(BUILTIN_CATALOG))
    assert page.split("### Triggers\n", 1)[1] == (
        "\n#### q (expected: no)\n\n"
        "| Provider | Model | Result | Rate | Δ rate | Avg run | Input tokens | Est. cost |\n"
        + SEP8
        + "| Anthropic | Evil &lt;b>\nname (`xy`) | PASS | 0/3 | +33% | — | — | n/a |\n"
        "| zeta | zeta:Zed (`b`) | PASS | 2/2 | +75% | — | n/a | n/a |\n"
        "\n#### new (expected: yes)\n\n"
        "| Provider | Model | Result | Rate | Δ rate | Avg run | Input tokens | Est. cost |\n"
        + SEP8
        + "| zeta | zeta:Zed (`b`) | FAIL | 1/2 | — | — | n/a | n/a |\n"
    )


def test_trigger_rows_read_as_the_cell_formulas_whatever_was_formatted_before() -> None:
    # Trigger detail cells are formatted once per distinct value (`_render._Memo`, shared by
    # every page): each row must still be what the formulas give for its own values, on a cold
    # and on a warm memo, the sign of a zero included (0.0 and -0.0 are one dict key).
    values = (0.0, -0.0, 1.25, -0.0, 0.0, 1.25, -0.004)
    current = tuple(
        TriggerResult(
            query=f"q{i}",
            should_trigger=i % 2 == 0,
            hits=i % 3,
            runs=2,
            passed=None if i == 3 else i % 2 == 0,
            avg_run_seconds=v,
            estimate=Estimate(input_tokens=1000 * i, input_cost_usd=v),
        )
        for i, v in enumerate(values)
    )
    previous = tuple(
        TriggerResult(query=f"q{i}", should_trigger=i % 2 == 0, hits=1, runs=1 + i % 2)
        for i in range(len(values) - 1)  # the last query ran once: no delta
    )
    files = ResultsFile(
        plugin="demo",
        skill="s",
        models={
            "anthropic/m": ModelEntry(triggers=_trig("anthropic:M", *current, previous=previous))
        },
    )
    plugin = LoadedPlugin(
        name="demo", rel_dir="plugins/demo", files=(LoadedFile(skill="s", results=files),)
    )

    def correct(hits: int, runs: int, should: bool) -> float:
        return hits / runs if should else (runs - hits) / runs

    want = []
    for i, res in enumerate(current):
        assert res.hits is not None and res.runs is not None and res.estimate is not None
        delta = EM
        if i < len(previous):
            prior = previous[i]
            assert prior.hits is not None and prior.runs is not None
            a = correct(res.hits, res.runs, res.should_trigger)
            delta = spct(round6(a - correct(prior.hits, prior.runs, res.should_trigger)))
        verdict = EM if res.passed is None else ("PASS" if res.passed else "FAIL")
        want.append(
            f"| Anthropic | anthropic:M (`m`) | {verdict} | {res.hits}/{res.runs} | {delta} | "
            f"{secs(res.avg_run_seconds)} | {group(res.estimate.input_tokens)} | "
            f"{usd(values[i])} |"
        )
    assert "-0.0s" in want[1] and "$-0.0000" in want[1] and "| 0.0s |" in want[0]
    caps = provider_caps(BUILTIN_CATALOG)
    for _ in range(2):  # cold, then warm
        page = render_plugin_page(plugin, active=None, caps=caps)
        got = [line for line in page.splitlines() if line.startswith("| Anthropic |")]
        assert got == want


def test_memo_formats_a_zero_each_time_and_starts_over_when_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memo = _render._Memo(secs)
    assert [memo[0.0], memo[-0.0], memo[0.0], memo[-0.0]] == ["0.0s", "-0.0s", "0.0s", "-0.0s"]
    assert len(memo) == 0
    monkeypatch.setattr(_render, "MEMO_MAX", 2)
    assert [memo[1.0], memo[2.0], memo[3.0], memo[None]] == ["1.0s", "2.0s", "3.0s", EM]
    assert dict(memo) == {3.0: "3.0s", None: EM}
