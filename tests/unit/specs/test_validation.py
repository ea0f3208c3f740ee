"""Validation of triggers/evals files: evolve's semantic rules (§4.1, §4.2.2), schema findings,
file/pointer/line on every finding, never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve_action.specs import Finding, Severity, validate_evals, validate_triggers

KNOWN = [("anthropic", "claude-sonnet-5"), ("openai", "gpt-5.4")]


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def triples(findings: list[Finding]) -> list[tuple[int | None, str | None, str]]:
    return [(f.line, f.pointer, f.message) for f in findings]


# -- triggers -----------------------------------------------------------------------------------

T = "plugins/p/evals/s/triggers"


@pytest.mark.parametrize(
    ("ext", "text", "expected"),
    [
        (
            "json",
            '{"triggers": [\n  {"query": "a", "should_trigger": true},\n  {"query": "a"},\n  {"query": ""}\n]}',
            [
                (3, "/triggers/1/query", f'{T}.json: triggers[1]: duplicate query "a"'),
                (4, "/triggers/2/query", f"{T}.json: triggers[2]: empty query"),
            ],
        ),
        (
            "yaml",
            "triggers:\n  - query: hello\n    should_trigger: yes\n  - query: hello\n",
            [
                (
                    3,
                    "/triggers/0/should_trigger",
                    f'{T}.yaml: triggers[0].should_trigger: must be true or false (got string "yes")',
                ),
                (4, "/triggers/1/query", f'{T}.yaml: triggers[1]: duplicate query "hello"'),
            ],
        ),
        (
            "jsonc",
            '{\n  // c\n  "triggers": [\n    {"query": "say \\"hi\\"\\n"},\n    {"query": "say \\"hi\\"\\n",},\n  ],\n}',
            [
                (
                    5,
                    "/triggers/1/query",
                    f'{T}.jsonc: triggers[1]: duplicate query "say \\"hi\\"\\n"',
                )
            ],
        ),
        ("json", '{"skill_name": "s"}', [(1, "", f'{T}.json: missing required "triggers"')]),
        (
            "json",
            '{"triggers": [{"query": "a", "should_trigger": "true"}]}',
            [
                (
                    1,
                    "/triggers/0/should_trigger",
                    f'{T}.json: triggers[0].should_trigger: must be true or false (got string "true")',
                )
            ],
        ),
        ("json", '{"triggers": [{"query": "ok"}], "$schema": "x", "extra": 1}', []),
    ],
    ids=[
        "duplicate-and-empty",
        "yaml-yes",
        "jsonc-go-quoting",
        "missing-triggers",
        "string-bool",
        "clean",
    ],
)
def test_validate_triggers(
    tmp_path: Path, ext: str, text: str, expected: list[tuple[int, str, str]]
) -> None:
    path = write(tmp_path, f"{T}.{ext}", text)
    findings = validate_triggers(path, tmp_path)
    assert triples(findings) == expected
    assert all(f.path == f"{T}.{ext}" and f.severity is Severity.ERROR for f in findings)


@pytest.mark.parametrize(
    ("ext", "data", "needle", "line"),
    [
        ("json", b'{"triggers": [\n  {"query": "a",}\n]}', "", 2),
        ("yaml", b"triggers:\n  - query: a\n   bad: indent\n", "", 3),
        ("json", b"", "empty", None),
        ("json", b'{"triggers": []}\xff', "UTF-8", None),
        ("toml", b"x = 1", "unsupported extension", None),
    ],
    ids=["json-trailing-comma", "yaml-indent", "empty", "non-utf8", "extension"],
)
def test_undecodable_files_are_one_finding(
    tmp_path: Path, ext: str, data: bytes, needle: str, line: int | None
) -> None:
    path = write(tmp_path, f"{T}.{ext}", data)
    findings = validate_triggers(path, tmp_path)
    assert len(findings) == 1
    assert findings[0].message.startswith(f"{T}.{ext}: ")
    assert needle in findings[0].message
    if line is not None:
        assert findings[0].line == line


# -- evals --------------------------------------------------------------------------------------

E = "plugins/p/evals/s/evals.json"


def validate(tmp_path: Path, text: str, **kw: object) -> list[tuple[int | None, str | None, str]]:
    path = write(tmp_path, E, text)
    return triples(validate_evals(path, tmp_path, **kw))  # type: ignore[arg-type]


def test_evals_semantic_rules_in_evolve_words(tmp_path: Path) -> None:
    write(tmp_path, "plugins/p/evals/s/fixtures/a/go.mod", "module a\n")
    write(tmp_path, "plugins/p/evals/s/fixtures/b/go.mod", "module b\n")
    text = """{
  "models": ["anthropic", "  "],
  "evals": [
    {"id": 1, "prompt": "p", "expectations": ["x", ""], "assertions": ["y"]},
    {"id": "1", "prompt": "", "assertions": []},
    {"prompt": "q", "assertions": [
      {"type": "regex", "pattern": "a(?=b)"},
      {"type": "bogus"},
      {"type": "tool_call", "tool": "("},
      {"type": "tool_call", "tool": "Bash", "pattern": "[x"},
      {"type": "file_exists"},
      {"type": "not_regex", "path": "x"},
      {"type": "command"},
      {"type": "llm"}
    ]},
    {"id": "f", "prompt": "q", "files": ["fixtures/a/go.mod", "fixtures/b/go.mod", "files/x.txt"],
     "assertions": [{"id": "assertion-1", "text": "Output ok"}]}
  ]
}"""
    assert validate(tmp_path, text) == [
        (2, "/models/1", f"{E}: models[1]: empty model restriction"),
        (4, "/evals/0/expectations/1", f'{E}: eval "1" assertions[1]: missing text'),
        (5, "/evals/1/id", f'{E}: eval "1": duplicate id'),
        (5, "/evals/1/prompt", f'{E}: eval "1": missing prompt'),
        (5, "/evals/1", f'{E}: eval "1": no expectations or assertions'),
        (6, "/evals/2", f"{E}: evals[2]: missing id"),
        (
            7,
            "/evals/2/assertions/0/pattern",
            f"{E}: evals[2] assertions[0]: invalid pattern: error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
        ),
        (
            8,
            "/evals/2/assertions/1/type",
            f'{E}: evals[2] assertions[1]: unknown assertion type "bogus"',
        ),
        (
            9,
            "/evals/2/assertions/2/tool",
            f"{E}: evals[2] assertions[2]: invalid tool: error parsing regexp: missing closing ): `(`",
        ),
        (
            10,
            "/evals/2/assertions/3/pattern",
            f"{E}: evals[2] assertions[3]: invalid pattern: error parsing regexp: missing closing ]: `[x`",
        ),
        (11, "/evals/2/assertions/4", f"{E}: evals[2] assertions[4]: missing path"),
        (12, "/evals/2/assertions/5", f"{E}: evals[2] assertions[5]: missing pattern"),
        (13, "/evals/2/assertions/6", f"{E}: evals[2] assertions[6]: missing run"),
        (14, "/evals/2/assertions/7", f"{E}: evals[2] assertions[7]: missing text"),
        (
            16,
            "/evals/3/files/1",
            f'{E}: eval "f" files[1]: fixtures/a/go.mod and fixtures/b/go.mod both stage to go.mod',
        ),
        (
            16,
            "/evals/3/files/2",
            f'{E}: eval "f" files[2]: files/x.txt: fixture not found (looked for plugins/p/evals/s/files/x.txt; '
            "add the file or fix the path)",
        ),
    ]


def test_check_fixtures_off_skips_only_missing_fixtures(tmp_path: Path) -> None:
    text = '{"evals": [{"id": "a", "prompt": "p", "files": ["files/x", "fixtures/x"], "expectations": ["e"]}]}'
    assert validate(tmp_path, text, check_fixtures=False) == [
        (1, "/evals/0/files/1", f'{E}: eval "a" files[1]: files/x and fixtures/x both stage to x'),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"evals": [\n {"id": "a", "prompt": "p", "expectations": ["x"],\n  "files": ["../../secret"]}\n]}',
            [
                (
                    3,
                    "/evals/0/files/0",
                    f'{E}: eval "a": files[0] "../../secret" escapes the evals directory',
                )
            ],
        ),
        (
            '{"evals": [{"id": "a", "prompt": "p", "expectations": ["x"], "files": {"a.txt": "hi"}}]}',
            [
                (
                    1,
                    "/evals/0/files",
                    f'{E}: evals[0].files: must be a list (got object {{"a.txt":"hi"}})',
                )
            ],
        ),
        (
            '{"evals": [{"id": 1.5, "prompt": "p", "expectations": ["x"]}]}',
            [
                (
                    1,
                    "/evals/0/id",
                    f"{E}: evals[0].id: must be a string or an integer (got number 1.5)",
                )
            ],
        ),
        (
            '{"evals": [{"id": "a", "prompt": "p", "assertions": [{"type": "command", "run": "x", "expect_exit": "1"}]}]}',
            [
                (
                    1,
                    "/evals/0/assertions/0/expect_exit",
                    f'{E}: evals[0].assertions[0].expect_exit: must be an integer (got string "1")',
                )
            ],
        ),
        (
            '{"evals": [{"id": "a", "prompt": "p", "assertions": [7]}]}',
            [
                (
                    1,
                    "/evals/0/assertions/0",
                    f"{E}: evals[0].assertions[0]: must be an object (got integer 7)",
                )
            ],
        ),
        (
            '{"evals": [{"id": "a", "prompt": "p", "expectations": ["x"], "max_turns": -1}]}',
            [
                (
                    1,
                    "/evals/0/max_turns",
                    f"{E}: evals[0].max_turns: -1 is less than the minimum of 0",
                )
            ],
        ),
        ('{"evals": {}}', [(1, "/evals", f"{E}: evals: must be a list (got object {{}})")]),
        ("[]", [(1, "", f"{E}: must be an object (got array [])")]),
    ],
    ids=[
        "escaping-file",
        "inline-files",
        "float-id",
        "string-exit",
        "number-assertion",
        "negative-turns",
        "evals-object",
        "top-array",
    ],
)
def test_structural_problems_are_reported_once(
    tmp_path: Path, text: str, expected: list[tuple[int, str, str]]
) -> None:
    assert validate(tmp_path, text) == expected


def test_skill_creator_file_and_yaml_with_lines(tmp_path: Path) -> None:
    write(
        tmp_path,
        "plugins/p/evals/s/evals.yaml",
        "skill_name: s\nevals:\n  - id: 0\n    prompt: p\n    files: []\n    assertions:\n"
        "      - {id: assertion-1, text: Output contains valid JSON}\n"
        "  - id: 0\n    prompt: again\n    expectations: [x]\n",
    )
    findings = validate_evals(tmp_path / "plugins/p/evals/s/evals.yaml", tmp_path)
    assert triples(findings) == [
        (8, "/evals/1/id", 'plugins/p/evals/s/evals.yaml: eval "0": duplicate id'),
    ]


def test_unknown_model_tokens_warn_when_the_catalog_is_given(tmp_path: Path) -> None:
    text = (
        '{"models": ["anthropic", "gpt-5.4", "openai/gpt-5.4", "all", "claude-nope"], "evals": []}'
    )
    findings = validate_evals(write(tmp_path, E, text), tmp_path, known_models=KNOWN)
    assert [(f.severity, f.message) for f in findings] == [
        (
            Severity.WARNING,
            f'{E}: models[4]: "claude-nope" matches no known provider or model (it restricts this skill to nothing)',
        ),
    ]
    assert validate_evals(write(tmp_path, E, text), tmp_path) == []


def test_corpus_validates_apart_from_removed_fixtures(corpus: Path) -> None:
    all_findings: list[Finding] = []
    for path in sorted(corpus.glob("plugins/*/evals/*/triggers.json")):
        assert validate_triggers(path, corpus) == [], path
    for path in sorted(corpus.glob("plugins/*/evals/*/evals.json")):
        assert validate_evals(path, corpus, check_fixtures=False) == [], path
        all_findings += validate_evals(path, corpus)
    # The corpus copy had its source-code fixtures removed: those, and only those, are reported.
    assert all_findings
    assert all(": fixture not found (looked for " in f.message for f in all_findings)
    assert all(
        f.line and f.pointer and f.path and f.path.startswith("plugins/") for f in all_findings
    )


def test_nulls_are_zero_values_reported_in_evolve_words(tmp_path: Path) -> None:
    text = '{"evals": [{"id": null, "prompt": null, "assertions": [{"type": "llm", "text": null}, null]}, null]}'
    assert [m for _, _, m in validate(tmp_path, text)] == [
        f"{E}: evals[0]: missing id",
        f"{E}: evals[0]: missing prompt",
        f"{E}: evals[0] assertions[0]: missing text",
        f'{E}: evals[0] assertions[1]: unknown assertion type ""',
        f"{E}: evals[1]: missing id",
        f"{E}: evals[1]: missing prompt",
        f"{E}: evals[1]: no expectations or assertions",
    ]


def test_schema_check_once_per_content(tmp_path: Path) -> None:
    """The schema result is kept per content: a second validation reuses it (the line is the new
    file's), an edit is checked again, and `1` and `1.0` are different contents."""
    rel = "plugins/p/evals/s/evals.json"
    exit_at = '{"evals": [{"id": "a", "prompt": "p", "assertions": [{"type": "command", "run": "x", "expect_exit": %s}]}]}'
    bad = "plugins/p/evals/s/evals.json: evals[0].assertions[0].expect_exit: must be an integer (got number 1)"
    path = write(tmp_path, rel, exit_at % "1.0")
    first = validate_evals(path, tmp_path)
    assert [f.message for f in first] == [bad]
    write(tmp_path, rel, exit_at % "1")
    assert validate_evals(path, tmp_path) == []
    write(tmp_path, rel, "\n\n" + exit_at % "1.0")
    again = validate_evals(path, tmp_path)
    assert triples(again) == [(3, "/evals/0/assertions/0/expect_exit", bad)]


def test_an_edited_file_is_read_again(tmp_path: Path) -> None:
    """Decoding and schema checks are shared per file content within a process: an edit (same
    path, new bytes) is decoded and checked afresh, and going back gives the first findings."""
    path = write(tmp_path, "plugins/p/evals/s/triggers.json", '{"triggers": [{"query": "a"}]}')
    assert validate_triggers(path, tmp_path) == []
    path.write_text('{"triggers": [{"query": "a", "should_trigger": 1}]}', encoding="utf-8")
    assert [f.pointer for f in validate_triggers(path, tmp_path)] == ["/triggers/0/should_trigger"]
    path.write_text('{"triggers": [{"query": "a"}]}', encoding="utf-8")
    assert validate_triggers(path, tmp_path) == []


def test_a_parse_is_shared_per_content_and_never_for_a_callers_own_document(
    tmp_path: Path,
) -> None:
    """What is parsed from a decoded file is worked out once per content: loading the same file
    twice gives the very same spec; an edit gives a new one. A document the caller built is
    parsed afresh every time (its owner may change it)."""
    from evolve_action import specs

    path = write(
        tmp_path,
        "plugins/p/evals/s/evals.json",
        '{"evals": [{"id": 1, "prompt": "p", "expectations": ["e"]}]}',
    )
    first = specs.load_evals(path)
    assert specs.load_evals(path) is first
    path.write_text(
        '{"evals": [{"id": 2, "prompt": "p", "expectations": ["e"]}]}', encoding="utf-8"
    )
    edited = specs.load_evals(path)
    assert [c.id for c in edited.evals] == ["2"] and [c.id for c in first.evals] == ["1"]
    own: dict[str, object] = {"evals": [{"id": 3, "prompt": "p", "expectations": ["e"]}]}
    spec, _ = specs.parse_evals_lenient(own, path)
    own["evals"] = [{"id": 4, "prompt": "p", "expectations": ["e"]}]
    again, _ = specs.parse_evals_lenient(own, path)
    assert [c.id for c in spec.evals] == ["3"] and [c.id for c in again.evals] == ["4"]
