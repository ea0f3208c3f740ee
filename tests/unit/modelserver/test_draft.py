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


def test_draft_is_grounded_in_the_body_and_siblings_only() -> None:
    out = draft_input(_prompt())
    assert out["should_trigger"] == body_items(BODY)[0]
    # siblings first, then the body's "when not to use" items
    assert out["should_not_trigger"] == [
        "Maintain CHANGELOG.md files.",
        "Add a release section.",
        "Charts and plots of the data belong elsewhere",
    ]
    everything = repr(out)
    assert "Zanzibar" not in everything and "inside a code fence" not in everything
    assert [e["prompt"] for e in out["evals"]] == body_items(BODY)[0][:2]
    assert out["language"] == "en"


def test_a_named_file_becomes_a_file_exists_assertion() -> None:
    out = draft_input(_prompt(evals=3))
    assert out["evals"][2]["assertions"] == [{"type": "file_exists", "path": "report.md"}]


def test_french_body_gives_french_queries() -> None:
    body = "## Étapes\n\n- Lire le fichier CSV et vérifier les colonnes\n- Calculer le total pour chaque région\n"
    out = draft_input(_prompt(body))
    assert out["should_trigger"] == [
        "Lire le fichier CSV et vérifier les colonnes",
        "Calculer le total pour chaque région",
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
    assert block["input"]["should_trigger"] == body_items(BODY)[0]
    assert decision.note == "draft: 3 should, 3 should not, 2 evals"


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
    assert out["should_trigger"] == ["Run the project's full test suite before anything else."]
