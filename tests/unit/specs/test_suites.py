"""AgentEvals `EVAL.yaml` and AgentV v2 suites: reading, aliases, prompts, validation, binding.

Every suite here is built by the test in a temporary repository (no upstream file is copied).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evolve_action import plan, repo, specs
from evolve_action.errors import SpecError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    write(
        tmp_path / "skills/csv-tools/SKILL.md",
        "---\nname: csv-tools\ndescription: Use when handling CSV files.\n---\nBody\n",
    )
    write(
        tmp_path / "skills/other/SKILL.md",
        "---\nname: other\ndescription: Use when doing other things.\n---\nBody\n",
    )
    return tmp_path


def read(path: Path, root: Path, skill: str = "csv-tools") -> specs.Suite:
    return specs.read_suite(path, root=root, skill_dir=root / "skills" / skill)


# -- both formats and the aliases ---------------------------------------------------------------

AGENTEVALS = """
name: csv-suite
version: "1.0"
metadata:
  skill: csv-tools
execution:
  timeout_seconds: 120
  evaluators:
    - name: judge-script
      type: code_judge
      script: ["python3", "judges/check.py"]
evalcases:
  - id: sum
    expected_outcome: Sums column b
    input: Sum column b of data.csv
  - id: file
    expected_outcome: Reads the file
    input_messages:
      - role: user
        content:
          - type: text
            value: Please read this
          - type: file
            value: data.csv
    expected_output: "6"
    rubrics:
      - Mentions the total
    execution:
      evaluators:
        - name: exact
          type: contains
          value: "6"
"""


def test_agentevals_suite_reads_with_defaults_rubrics_and_replacement(root: Path) -> None:
    write(root / "evals/csv-tools/data.csv", "a,b\n1,2\n3,4\n")
    write(root / "evals/csv-tools/judges/check.py", "print('{}')\n")
    suite = read(write(root / "evals/csv-tools/EVAL.yaml", AGENTEVALS), root)
    assert suite.errors == ()
    assert (suite.format, suite.name, suite.skill) == ("agentevals", "csv-suite", "csv-tools")
    first, second = suite.cases
    assert first.eval_id == "csv-suite::sum"
    assert first.prompt == "Sum column b of data.csv"
    assert first.criteria == "Sums column b"
    assert first.timeout_seconds == 120
    assert [e.name for e in first.evaluators] == ["judge-script"]
    assert [rel for rel, _ in first.refs] == ["evals/csv-tools/judges/check.py"]
    # a case's own evaluator list replaces the suite's; its rubrics come first (AV-FEB)
    assert [(e.name, e.type) for e in second.evaluators] == [
        ("rubric", "rubric"),
        ("exact", "contains"),
    ]
    assert second.reference_answer == "6"
    assert [f.dest for f in second.fixtures] == ["data.csv"]
    assert second.prompt == (
        "Read all input files:\n* [data.csv](data.csv).\n"
        "If any file is missing, fail with ERROR: missing-file <filename> and stop.\n"
        "Then apply system_instructions on the user query below.\n\n"
        "[[ ## user_query ## ]]\n\n"
        'Please read this\n\n<file: path="data.csv">'
    )


AGENTV = """
$schema: agentv-eval-v2
description: v2 file
target: default
evalcases:
  - id: multi
    outcome: Answers the follow-up
    conversation_id: conv-1
    input_messages:
      - role: system
        content: Be terse.
      - role: user
        content: What is 2+2?
      - role: assistant
        content: "4"
      - role: user
        content: And times 3?
    expected_messages:
      - role: assistant
        content: "7"
      - role: assistant
        content: "12"
    execution:
      evaluators:
        - name: quality
          type: llm_judge
          prompt: prompts/quality.md
"""


def test_agentv_v2_file_renders_role_markers_and_last_expected_message(root: Path) -> None:
    write(root / "evals/csv-tools/prompts/quality.md", "Grade ${candidate_answer}\n")
    suite = read(write(root / "evals/csv-tools/chat.yaml", AGENTV), root)
    assert suite.errors == ()
    assert (suite.format, suite.name) == ("agentv-v2", "chat")
    (case,) = suite.cases
    assert case.name == "conv-1/multi"
    assert case.criteria == "Answers the follow-up"
    assert case.prompt == (
        "@[System]:\nBe terse.\n\n@[User]:\nWhat is 2+2?\n\n@[Assistant]:\n4\n\n@[User]:\nAnd times 3?"
    )
    assert case.reference_answer == "12"  # the last expected message (AV-FEB)
    assert [rel for rel, _ in case.refs] == ["evals/csv-tools/prompts/quality.md"]


@pytest.mark.parametrize(
    ("cases_key", "outcome_key", "input_key", "expected_key", "evaluators_key"),
    [
        ("eval_cases", "expected_outcome", "input", "expected_output", "evaluators"),
        ("cases", "criteria", "input_messages", "expected_messages", "assert"),
        ("tests", "criteria", "input", "expected_output", "assertions"),
    ],
)
def test_later_aliases_read_the_same(
    root: Path,
    cases_key: str,
    outcome_key: str,
    input_key: str,
    expected_key: str,
    evaluators_key: str,
) -> None:
    message = '"hello"' if input_key == "input" else "\n      - role: user\n        content: hello"
    expected = (
        '"hi"'
        if expected_key == "expected_output"
        else ("\n      - role: assistant\n        content: hi")
    )
    text = f"""
name: aliases
{evaluators_key}:
  - name: has-hi
    type: contains
    value: hi
{cases_key}:
  - id: one
    {outcome_key}: Says hi
    {input_key}: {message}
    {expected_key}: {expected}
"""
    suite = read(write(root / "evals/csv-tools/aliases.eval.yaml", text), root)
    assert suite.errors == ()
    (case,) = suite.cases
    assert (case.prompt, case.criteria, case.reference_answer) == ("hello", "Says hi", "hi")
    assert [e.name for e in case.evaluators] == ["has-hi"]


def test_jsonl_dataset_with_sidecar_and_default_judge(root: Path) -> None:
    write(root / "evals/csv-tools/dataset.yaml", "name: big-set\n")
    rows = [
        {"id": "a", "expected_outcome": "x", "input": [{"role": "user", "content": "one"}]},
        {"id": 2, "criteria": "y", "input": "two"},
    ]
    write(root / "evals/csv-tools/dataset.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    suite = read(root / "evals/csv-tools/dataset.yaml", root)
    assert suite.errors == ()
    assert [c.eval_id for c in suite.cases] == ["big-set::a", "big-set::2"]
    # a case with no evaluators and no rubrics gets AgentV's default llm_judge
    assert [(e.name, e.type) for e in suite.cases[0].evaluators] == [("llm_judge", "llm_judge")]
    assert suite.cases[1].line == 2
    assert "evals/csv-tools/dataset.jsonl" in [rel for rel, _ in suite.cases[0].refs]


# -- semantic rules ----------------------------------------------------------------------------


def test_semantic_errors_name_line_and_fix(root: Path) -> None:
    text = """
name: Bad_Name
evalcases:
  - id: same
    expected_outcome: x
    input: hi
  - id: same
    expected_outcome: x
    input:
      - role: user
        content:
          - type: file
            value: missing.txt
  - expected_outcome: no id
    input: hi
"""
    suite = read(write(root / "evals/csv-tools/EVAL.yaml", text), root)
    messages = [(p.line, p.message) for p in suite.errors]
    assert messages[0][0] == 1 and "not kebab-case" in messages[0][1]
    assert "'bad-name'" in messages[0][1]
    assert any(line == 12 and "file 'missing.txt' not found" in m for line, m in messages)
    assert any("missing `id`" in m for _, m in messages)
    assert any(line == 6 and "is duplicated" in m for line, m in messages)
    findings = specs.validate_suite(root / "evals/csv-tools/EVAL.yaml", root)
    assert all(f.path == "evals/csv-tools/EVAL.yaml" and f.line for f in findings)
    assert len([f for f in findings if f.severity == specs.Severity.ERROR]) >= 4


def test_schema_findings_for_wrong_types(root: Path) -> None:
    text = """
name: typed
execution:
  timeout_seconds: "soon"
evalcases:
  - id: a
    expected_outcome: x
    input: hi
    rubrics: 3
"""
    findings = specs.validate_suite(write(root / "evals/csv-tools/EVAL.yaml", text), root)
    shown = [(f.line, f.check, f.message) for f in findings]
    assert any(line == 3 and check == "suite.schema" for line, check, _ in shown), shown
    assert any(line == 8 and check == "suite.schema" for line, check, _ in shown), shown


def test_skill_under_test_block_is_dropped_with_a_note(root: Path) -> None:
    text = """
name: showcase
evalcases:
  - id: a
    expected_outcome: x
    input_messages:
      - role: user
        content:
          - type: file
            value: /skills/csv-tools/SKILL.md
          - type: text
            value: Rate this
"""
    suite = read(write(root / "evals/csv-tools/EVAL.yaml", text), root)
    (case,) = suite.cases
    assert case.prompt == "Rate this" and case.fixtures == ()
    assert "is the skill under test" in case.notes[0]
    # for another skill the same block is an ordinary input file
    other = read(root / "evals/csv-tools/EVAL.yaml", root, skill="other")
    assert [f.dest for f in other.cases[0].fixtures] == ["skills/csv-tools/SKILL.md"]


def test_guideline_files_follow_agentv_config(root: Path) -> None:
    write(root / ".agentv/config.yaml", 'guideline_patterns: ["**/*.instructions.md"]\n')
    write(root / "docs/style.instructions.md", "Be nice\n")
    text = """
name: guided
evalcases:
  - id: a
    expected_outcome: x
    input_messages:
      - role: user
        content:
          - type: file
            value: /docs/style.instructions.md
          - type: text
            value: Do it
"""
    suite = read(write(root / "evals/csv-tools/EVAL.yaml", text), root)
    (case,) = suite.cases
    assert case.guideline_files == ("docs/style.instructions.md",)
    assert case.prompt.startswith("Read all guideline files:\n* [style.instructions.md]")
    assert case.prompt.endswith("<Attached: docs/style.instructions.md>\n\nDo it")


def test_cli_and_mock_targets_are_not_applicable_and_targets_noted(root: Path) -> None:
    write(root / "evals/.agentv/targets.yaml", "targets:\n  - name: fake\n    provider: mock\n")
    text = "name: scripted\nexecution:\n  target: fake\nevalcases:\n  - {id: a, criteria: x, input: hi}\n"
    suite = read(write(root / "evals/csv-tools/EVAL.yaml", text), root)
    assert "provider 'mock'" in suite.not_applicable
    assert specs.suite_eval_cases(suite) == ()
    notes = specs.suite_notes(suite, root)
    assert any("not applicable" in n for n in notes)
    assert any("target 'fake' recorded and ignored" in n for n in notes)


# -- binding (repo model) ----------------------------------------------------------------------


def test_binding_by_location_metadata_and_patterns_and_unbound_note(root: Path) -> None:
    simple = "evalcases:\n  - {id: a, criteria: x, input: hi}\n"
    write(root / "evals/csv-tools/EVAL.yaml", "name: evolve-dir\n" + simple)
    write(root / "skills/csv-tools/evals/co.eval.yaml", "name: colocated\n" + simple)
    write(root / "evals/suites/bound.eval.yaml", "name: bound\nmetadata: {skill: other}\n" + simple)
    write(root / "evals/suites/loose.eval.yaml", "name: loose\n" + simple)
    write(root / "qa/deep/EVAL.yaml", "name: patterned\nmetadata: {skill: other}\n" + simple)
    write(root / ".agentv/config.yaml", "eval_patterns: ['qa/**/EVAL.yaml']\n")
    write(root / "evals/csv-tools/v2.yaml", "$schema: agentv-eval-v2\n" + simple)
    r = repo.discover(root, root)
    bound = {es.skill: [r.rel(p) for p in es.suite_paths] for es in r.eval_sets()}
    assert bound == {
        "csv-tools": [
            "evals/csv-tools/EVAL.yaml",
            "evals/csv-tools/v2.yaml",
            "skills/csv-tools/evals/co.eval.yaml",
        ],
        "other": ["evals/suites/bound.eval.yaml", "qa/deep/EVAL.yaml"],
    }
    unbound = [n for n in r.notices if "loose.eval.yaml" in n]
    assert unbound and "add `metadata: {skill: <name>}`" in unbound[0]
    # the touched-skill rule knows a suite outside the skill's directories is the skill's
    assert [k[1] for k in r.places().owners("evals/suites/bound.eval.yaml")] == ["other"]


# -- fingerprints and ids ----------------------------------------------------------------------


def test_fingerprint_changes_with_case_defaults_and_referenced_files(root: Path) -> None:
    write(root / "evals/csv-tools/data.csv", "a\n")
    write(root / "evals/csv-tools/judges/check.py", "print(1)\n")
    path = write(root / "evals/csv-tools/EVAL.yaml", AGENTEVALS)

    def fingerprints() -> list[str]:
        suite = read(path, root)
        return [plan.eval_fingerprint(c) for c in specs.suite_eval_cases(suite)]

    base = fingerprints()
    assert len(set(base)) == 2
    assert fingerprints() == base  # stable
    (root / "evals/csv-tools/judges/check.py").write_text("print(2)\n")
    judged = fingerprints()
    assert judged[0] != base[0]  # the suite's judge script changed the case using it
    assert judged[1] == base[1]  # the second case replaced the suite's evaluators
    (root / "evals/csv-tools/data.csv").write_text("b\n")
    assert fingerprints()[1] != judged[1]  # its input file
    path.write_text(AGENTEVALS.replace("timeout_seconds: 120", "timeout_seconds: 60"))
    assert all(a != b for a, b in zip(fingerprints(), base, strict=True))  # suite defaults


def test_suite_ids_never_collide_with_evolve_ids(root: Path) -> None:
    write(
        root / "evals/csv-tools/evals.json",
        json.dumps({"evals": [{"id": "csv-suite::sum", "prompt": "p", "expectations": ["x"]}]}),
    )
    write(root / "evals/csv-tools/data.csv", "a\n")
    write(root / "evals/csv-tools/judges/check.py", "print(1)\n")
    path = write(root / "evals/csv-tools/EVAL.yaml", AGENTEVALS)
    with pytest.raises(SpecError) as info:
        specs.load_authored_evals(
            evals_path=root / "evals/csv-tools/evals.json",
            suite_paths=[path],
            skill_dir=root / "skills/csv-tools",
            root=root,
        )
    assert "also an id" in str(info.value)
