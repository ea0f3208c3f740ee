"""The drafting request and the quality gates of `evolve-action init` (flows/_draft.py)."""

from __future__ import annotations

import pytest

from evolve_action.flows._draft import (
    DRAFT_TOOL,
    DraftAnswer,
    SkillText,
    build_request,
    check_text,
    draft_comment,
    gate_evals,
    gate_queries,
    render_evals,
    render_triggers,
)

DESCRIPTION = "Summarise a CSV file into a Markdown report with totals per group and a grand total."


def _gate(should: list[str], should_not: list[str]) -> tuple[list[str], list[str], list[str]]:
    answer = DraftAnswer(
        language="en", should=tuple(should), should_not=tuple(should_not), evals=()
    )
    gated = gate_queries(answer, name="csv-report", description=DESCRIPTION)
    return list(gated.should), list(gated.should_not), [d.reason for d in gated.dropped]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("too short", "shorter than 10 characters"),
        ("x" * 301, "longer than 300 characters"),
        ("Run csv-report on sales.csv please", "names the skill"),
        ("Give me a CSV report of last month's orders", "names the skill"),
        (
            "Please summarise a csv file into a markdown report for Q3",
            "copies 6 or more consecutive words of the description",
        ),
        ("What were the average order values by region in orders.csv?", None),
    ],
)
def test_per_text_gates(text: str, reason: str | None) -> None:
    assert check_text(text, name="csv-report", description=DESCRIPTION) == reason


def test_exact_and_near_duplicates_are_dropped() -> None:
    should, _, reasons = _gate(
        [
            "Total the amounts per region in sales.csv",
            "total the amounts  per region in sales.csv",
            "Total the amounts per region in the sales.csv",
            "Which customer ordered the most in orders.csv?",
        ],
        ["Plot a chart of the monthly revenue", "Convert this JSON file to YAML"],
    )
    assert should == [
        "Total the amounts per region in sales.csv",
        "Which customer ordered the most in orders.csv?",
    ]
    assert reasons == ["exact duplicate", "near duplicate"]


def test_a_query_on_both_sides_is_ambiguous_and_leaves_both() -> None:
    should, should_not, reasons = _gate(
        ["Total the amounts per region in sales.csv", "Average basket size in orders.csv"],
        ["Total the amounts per region in sales.csv", "Convert this JSON file to YAML"],
    )
    assert should == ["Average basket size in orders.csv"]
    assert should_not == ["Convert this JSON file to YAML"]
    assert reasons == ["on both sides (ambiguous)"] * 2


def test_balance_trims_the_larger_side_to_twice_the_smaller() -> None:
    many = [f"Sum column {c} of the file data{c}.csv by month" for c in "abcdef"]
    should, should_not, reasons = _gate(many, ["Convert this JSON file to YAML"])
    assert len(should) == 2 and should_not == ["Convert this JSON file to YAML"]
    assert reasons == ["over the 2:1 balance"] * 4


def test_an_empty_side_means_no_triggers() -> None:
    should, should_not, reasons = _gate(["Sum the amounts in sales.csv by month"], [])
    assert (should, should_not) == ([], [])
    assert reasons == ["no query on the other side (unbalanced)"]


def test_eval_gates_keep_valid_assertions_and_safe_fixtures() -> None:
    raw = [
        {
            "id": "Totals Per Region",
            "prompt": "Summarise sales.csv into report.md with totals per region",
            "files": [
                {"path": "files/sales.csv", "content": "region,amount\nN,1\n"},
                {"path": "../../etc/passwd", "content": "x"},
            ],
            "assertions": [
                {"type": "file_exists", "path": "report.md"},
                {"type": "regex", "pattern": "(?=lookahead)", "path": "report.md"},
                {"type": "regex", "pattern": "(?i)total", "path": "report.md"},
                {"type": "tool_call", "tool": "Skill"},
                {"type": "command", "run": ""},
            ],
            "expectations": ["The report names the largest region"],
        },
        {"id": "x", "prompt": "Summarise orders.csv by customer", "assertions": []},
        {
            "id": "totals-per-region",
            "prompt": "Summarise stock.csv into a table by warehouse",
            "expectations": ["A table by warehouse"],
        },
    ]
    cases, dropped = gate_evals(raw, name="csv-report", description=DESCRIPTION, limit=3)
    assert [c.id for c in cases] == ["totals-per-region", "totals-per-region-2"]
    first = cases[0]
    assert first.files == (("sales.csv", "region,amount\nN,1\n"),)
    assert [a["type"] for a in first.assertions] == ["file_exists", "regex"]
    assert first.assertions[1]["pattern"] == "(?i)total"
    assert [d.reason for d in dropped] == ["no assertion or expectation"]


def test_eval_limit() -> None:
    raw = [
        {"id": str(i), "prompt": f"Summarise file{i}.csv by its {w} column", "expectations": ["ok"]}
        for i, w in enumerate(["region", "customer", "month"])
    ]
    cases, dropped = gate_evals(raw, name="csv-report", description=DESCRIPTION, limit=2)
    assert len(cases) == 2 and [d.reason for d in dropped] == ["over the 2 cases asked for"]


def test_request_holds_the_skill_text_siblings_counts_and_forced_tool() -> None:
    req = build_request(
        SkillText(
            name="csv-report",
            description=DESCRIPTION,
            body="# CSV\n\n- Total the amount column per group\n",
            siblings=(("license-header", "Add SPDX license headers to source files."),),
        ),
        should=7,
        should_not=5,
        evals=2,
    )
    assert "<skill_body>\n# CSV\n\n- Total the amount column per group\n</skill_body>" in req.prompt
    assert "- license-header: Add SPDX license headers to source files." in req.prompt
    assert "Exactly 7 should-trigger queries" in req.prompt
    assert "Exactly 5 should-not-trigger queries" in req.prompt
    assert "2 eval cases" in req.prompt
    assert "Never name the skill (csv-report)" in req.prompt
    params = req.params("claude-sonnet-5")
    assert params["tool_choice"] == {"type": "tool", "name": DRAFT_TOOL}
    assert params["tools"][0]["name"] == DRAFT_TOOL
    no_evals = build_request(
        SkillText(name="a-b", description="d", body="b"), should=1, should_not=1, evals=0
    )
    assert "No eval cases" in no_evals.prompt and "(none)" in no_evals.prompt


def test_rendered_files_open_with_the_draft_comment_naming_the_model() -> None:
    answer = DraftAnswer(
        language="en",
        should=("Total the amounts per region in sales.csv",),
        should_not=("Convert this JSON file to YAML",),
        evals=(),
    )
    gated = gate_queries(answer, name="csv-report", description=DESCRIPTION)
    text = render_triggers("csv-report", gated, model="anthropic/claude-sonnet-5")
    assert text.startswith(draft_comment("anthropic/claude-sonnet-5"))
    assert "anthropic/claude-sonnet-5" in text.splitlines()[0] and "DRAFT" in text
    cases, _ = gate_evals(
        [
            {
                "id": "a",
                "prompt": "Summarise sales.csv by region",
                "expectations": ["ok"],
                "files": [{"path": "sales.csv", "content": "a\n"}],
            }
        ],
        name="csv-report",
        description=DESCRIPTION,
        limit=1,
    )
    evals_text = render_evals("csv-report", cases, model="m")
    assert evals_text.startswith("# DRAFT") and "files/sales.csv" in evals_text


def test_docs_show_the_exact_request_init_sends() -> None:
    """docs/init.md's request for the example csv-report skill is the one `init` builds."""
    import json
    import re
    from pathlib import Path

    from evolve_action.flows._draft import _TOOL_SCHEMA, SYSTEM
    from evolve_action.flows._init import skill_text
    from evolve_action.repo import discover

    root = Path(__file__).resolve().parents[3]
    doc = (root / "docs" / "init.md").read_text(encoding="utf-8")
    repo = discover(root / "examples", root)
    siblings = [s for s in repo.skills() if s.plugin == "project-tools"]
    skill = next(s for s in siblings if s.name == "csv-report")
    req = build_request(skill_text(skill, siblings), should=10, should_not=10, evals=2)
    prompt = re.search(r"User message:\n\n````text\n(.*?)\n````", doc, re.S)
    assert prompt is not None and prompt.group(1) == req.prompt
    assert f"```text\n{SYSTEM}\n```" in doc
    schema = re.search(r"input schema:\n\n```json\n(.*?)\n```", doc, re.S)
    assert schema is not None and json.loads(schema.group(1)) == _TOOL_SCHEMA
    params = req.params("claude-sonnet-5")
    assert f"max_tokens: {params['max_tokens']}" in doc


def test_evals_yaml_keeps_the_reading_order_and_decodes_back() -> None:
    from pathlib import Path

    from evolve_action.encoding import decode_yaml

    cases, _ = gate_evals(
        [
            {
                "id": "totals",
                "prompt": "Summarise sales.csv: totals per region\nthen a grand total",
                "files": [{"path": "sales.csv", "content": "a\n"}],
                "expectations": ["The table has one row per region"],
                "assertions": [{"type": "regex", "pattern": "^# ", "path": "report.md"}],
            }
        ],
        name="csv-report",
        description=DESCRIPTION,
        limit=1,
    )
    text = render_evals("csv-report", cases, model="m")
    body = text.split("evals:\n", 1)[1]
    keys = [
        line.strip().lstrip("- ").split(":")[0]
        for line in body.splitlines()
        if line.startswith(("  - ", "    ")) and not line.startswith("      ")
    ]
    assert keys == ["id", "prompt", "files", "expectations", "assertions"]
    decoded = decode_yaml(text, Path("evals.yaml")).value
    assert decoded["skill_name"] == "csv-report"
    assert (
        decoded["evals"][0]["prompt"]
        == "Summarise sales.csv: totals per region\nthen a grand total"
    )
    assert decoded["evals"][0]["assertions"] == [
        {"type": "regex", "pattern": "^# ", "path": "report.md"}
    ]
