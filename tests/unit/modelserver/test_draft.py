"""The scripted drafter (policy action `draft`): answers only from the request's skill text."""

from __future__ import annotations

import pytest

from evolve_action.flows._draft import SkillText, build_request
from evolve_action.modelserver import Engine, Policy, PolicyError, view
from evolve_action.modelserver._draft import body_items, draft_input, language

BODY = """# Totals

## Steps

- Read the header row and learn the column types
- Total the amount column for each region,
  sorted largest first
1. Write the table to `report.md` with one row per region

```sh
- a list item inside a code fence is not a task
```

## When not to use

- Charts and plots of the data belong elsewhere
"""


def _prompt(body: str = BODY, evals: int = 2) -> str:
    return build_request(
        SkillText(
            name="csv-report",
            description="Summarise CSV files. Zanzibar is a word only the description has.",
            body=body,
            siblings=(("changelog", "Maintain CHANGELOG.md files. Add a release section."),),
        ),
        should=10,
        should_not=10,
        evals=evals,
    ).prompt


def test_body_items_join_wrapped_lines_and_skip_fences() -> None:
    tasks, nots = body_items(BODY)
    assert tasks == [
        "Read the header row and learn the column types",
        "Total the amount column for each region, sorted largest first",
        "Write the table to report.md with one row per region",
    ]
    assert nots == ["Charts and plots of the data belong elsewhere"]


def _holds(queries: list[str], task: str) -> bool:
    return any(task[:1].lower() + task[1:] in q for q in queries)


def test_draft_is_grounded_in_the_body_and_siblings_only() -> None:
    out = draft_input(_prompt())
    tasks = body_items(BODY)[0]
    should, near = out["should_trigger"], out["should_not_trigger"]
    # every body task asked as a request, framed as a user types it (issue 43)
    assert all(_holds(should, t) for t in tasks)
    assert not any(q.rstrip(".?") in tasks for q in should)  # never a bare body line
    assert should[0] == "Can you read the header row and learn the column types?"
    assert len(should) >= 5 and len(near) >= 5
    # the sibling's tasks first, asked as requests, then the body's "when not to use" items,
    # then adjacent tasks on the body's own subjects
    assert near[:2] == [
        "Quick task: maintain CHANGELOG.md files.",
        "I'd like you to add a release section.",
    ]
    assert any("charts and plots of the data" in q for q in near)
    assert "Write a unit test for the code that handles the header row." in near
    everything = repr(out)
    assert "Zanzibar" not in everything and "inside a code fence" not in everything
    assert "csv-report" not in everything.lower() and "skill" not in everything.lower()
    assert [e["prompt"] for e in out["evals"]] == [
        "Could you read the header row and learn the column types for me?",
        "Help me total the amount column for each region, sorted largest first, please.",
    ]
    assert out["language"] == "en"


def test_draft_follows_the_prompts_rules() -> None:
    """No query names the skill or copies a run of the description's or a sibling's words."""
    from evolve_action.flows._draft import DraftAnswer, gate_queries

    description = "Total the amount column for each region and sort the result."
    body = (
        "- Total the amount column for each region of sales.csv\n- Add the csv-report footer now\n"
        "- Round money to two decimals in the output table\n"
    )
    prompt = build_request(
        SkillText(
            name="csv-report",
            description=description,
            body=body,
            siblings=(
                (
                    "changelog",
                    "Use when the user asks to add a release section to CHANGELOG.md files.",
                ),
            ),
        ),
        should=10,
        should_not=10,
        evals=0,
    ).prompt
    out = draft_input(prompt)
    assert not any("csv-report" in q or "footer" in q for q in out["should_trigger"])
    assert not any("each region of sales" in q for q in out["should_trigger"])  # a 6-word copy
    assert (
        out["should_trigger"][0]
        == "I'd like you to round money to two decimals in the output table."
    )
    assert "Quick task: add a release section." in out["should_not_trigger"]
    gated = gate_queries(
        DraftAnswer(
            language="en",
            should=tuple(out["should_trigger"]),
            should_not=tuple(out["should_not_trigger"]),
            evals=(),
        ),
        name="csv-report",
        description=description,
        siblings=["Use when the user asks to add a release section to CHANGELOG.md files."],
    )
    assert gated.dropped == ()


def test_a_named_file_becomes_a_file_exists_assertion() -> None:
    out = draft_input(_prompt(evals=3))
    assert out["evals"][2]["assertions"] == [{"type": "file_exists", "path": "report.md"}]


def test_french_body_gives_french_queries() -> None:
    body = "## Étapes\n\n- Lire le fichier CSV et vérifier les colonnes\n- Calculer le total pour chaque région\n"
    out = draft_input(_prompt(body))
    assert out["should_trigger"][:2] == [
        "Peux-tu m'aider : lire le fichier CSV et vérifier les colonnes ?",
        "Petite demande : calculer le total pour chaque région.",
    ]
    assert out["language"] == "fr"
    assert language("Die Datei und der Bericht mit den Summen") == "de"


def test_the_policy_action_answers_the_forced_tool() -> None:
    engine = Engine(
        Policy.from_yaml("rules:\n  - {name: d, when: {tool_choice: submit_draft}, draft: true}\n")
    )
    body = {
        "model": "claude-sonnet-5",
        "max_tokens": 100,
        "tools": [{"name": "submit_draft", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "submit_draft"},
        "messages": [{"role": "user", "content": _prompt()}],
    }
    decision = engine.decide(view(body))
    assert decision.rule == "d" and decision.stop_reason == "tool_use"
    block = decision.blocks[0]
    assert block["name"] == "submit_draft"
    assert block["input"] == draft_input(_prompt())
    assert decision.note == "draft: 6 should, 6 should not, 2 evals"


def test_draft_false_is_rejected() -> None:
    with pytest.raises(PolicyError, match="expected true"):
        Policy.from_yaml("rules:\n  - {name: d, draft: false}\n")


def test_a_body_without_list_items_gives_its_paragraphs_first_sentences() -> None:
    from evolve_action.modelserver._draft import body_sentences

    body = (
        "# Finishing\n\n## Step 1\n\nRun the project's full test suite before anything else. "
        "Then read the output.\n\n```\nA fenced paragraph is never a request here.\n```\n\n"
        "| a table row is not prose either |\n\nToo short here.\n\n## Do not use for\n\n"
        "Deploying the service to production is another job.\n"
    )
    assert body_sentences(body) == ["Run the project's full test suite before anything else."]
    out = draft_input(_prompt(body))
    assert (
        out["should_trigger"][0]
        == "Can you run the project's full test suite before anything else?"
    )
