"""Authored triggers/evals models: Go decoding, normalization (§4.2.1), staging (§4.3), §4.4."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evolve_action.encoding import Re2Error, compile_re2
from evolve_action.errors import SpecError
from evolve_action.specs import (
    Assertion,
    Source,
    load_evals,
    load_triggers,
    model_allowed,
    parse_evals,
    parse_evals_lenient,
    parse_triggers,
    resolve_fixture,
    staged_path,
)

EVALS = Path("/repo/plugins/p/evals/s/evals.json")
TRIGGERS = Path("/repo/plugins/p/evals/s/triggers.json")

# skill-creator's evals.json, verbatim from its schema reference (seed 003).
SKILL_CREATOR_EVALS = {
    "skill_name": "example-skill",
    "evals": [
        {
            "id": 0,
            "prompt": "User task prompt",
            "expected_output": "Description of correct output",
            "files": [],
            "assertions": [
                {"id": "assertion-1", "text": "Output contains valid JSON"},
                {"id": "assertion-2", "text": "All rows processed correctly"},
            ],
        }
    ],
}


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- triggers -----------------------------------------------------------------------------------


def test_parse_triggers_keeps_order_and_defaults_should_trigger_to_false() -> None:
    spec = parse_triggers(
        {
            "$schema": "x",
            "skill_name": "s",
            "triggers": [
                {"query": "a", "should_trigger": True},
                {"query": "b"},
                {"query": "c", "should_trigger": None},
            ],
        },
        TRIGGERS,
    )
    assert spec.skill_name == "s"
    assert [(q.query, q.should_trigger, q.index) for q in spec.queries] == [
        ("a", True, 0),
        ("b", False, 1),
        ("c", False, 2),
    ]


def test_keys_match_exactly_first_then_case_insensitively_and_last_wins() -> None:
    spec = parse_triggers(
        {"Triggers": [{"QUERY": "x", "Should_Trigger": True, "query": "exact"}]}, TRIGGERS
    )
    assert spec.queries[0].query == "exact"
    assert spec.queries[0].should_trigger is True


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"triggers": [{"query": "a", "should_trigger": "yes"}]},
            "triggers[0].should_trigger: must be true or false",
        ),
        ({"triggers": [{"query": 3}]}, "triggers[0].query: must be a string"),
        ({"triggers": {"query": "a"}}, "triggers: must be a list"),
        ([1, 2], "[0]: must be an object (got integer 1)"),
        ("text", 'top level: must be an object with a "triggers" list, or a bare array'),
    ],
    ids=["bool-as-string", "number-query", "object-not-list", "array-of-numbers", "a-string"],
)
def test_parse_triggers_rejects_wrong_types(doc: object, message: str) -> None:
    with pytest.raises(SpecError, match=re.escape(message)):
        parse_triggers(doc, TRIGGERS)


def test_a_bare_array_is_skill_creators_trigger_eval_set() -> None:
    spec = parse_triggers(
        [{"query": "a", "should_trigger": True}, {"query": "b", "should_trigger": False}], TRIGGERS
    )
    assert [(q.query, q.should_trigger, q.index) for q in spec.queries] == [
        ("a", True, 0),
        ("b", False, 1),
    ]
    assert spec.skill_name == ""


@pytest.mark.parametrize("ext", ["json", "jsonc", "yaml", "yml"])
def test_load_triggers_from_every_format(tmp_path: Path, ext: str) -> None:
    texts = {
        "json": '{"triggers": [{"query": "q", "should_trigger": true}]}',
        "jsonc": '// c\n{"triggers": [{"query": "q", "should_trigger": true,},],}',
        "yaml": "triggers:\n  - query: q\n    should_trigger: true\n",
        "yml": "triggers:\n  - {query: q, should_trigger: true}\n",
    }
    spec = load_triggers(write(tmp_path, f"triggers.{ext}", texts[ext]))
    assert [(q.query, q.should_trigger) for q in spec.queries] == [("q", True)]


def test_yaml_yes_stays_a_string_and_is_a_type_error_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "triggers.yaml", "triggers:\n  - query: q\n    should_trigger: yes\n")
    with pytest.raises(SpecError) as exc:
        load_triggers(path)
    assert exc.value.line == 3
    assert exc.value.path == path
    assert 'should_trigger: must be true or false (got string "yes")' in exc.value.message


# -- evals normalization ------------------------------------------------------------------------


def test_ids_are_normalized_to_strings() -> None:
    spec = parse_evals(
        {"evals": [{"id": 7, "prompt": "p"}, {"id": "x", "prompt": "p"}, {"prompt": "p"}]}, EVALS
    )
    assert [c.id for c in spec.evals] == ["7", "x", ""]
    assert [c.label for c in spec.evals] == ['eval "7"', 'eval "x"', "evals[2]"]


@pytest.mark.parametrize(
    ("value", "raw"),
    [(1.5, "1.5"), (True, "true"), ({"a": 1}, '{"a":1}'), ([1], "[1]"), (2**63, str(2**63))],
    ids=["float", "bool", "object", "array", "overflow"],
)
def test_bad_ids_are_load_errors(value: object, raw: str) -> None:
    with pytest.raises(SpecError, match=re.escape(f"id {raw}: must be a string or an integer")):
        parse_evals({"evals": [{"id": value, "prompt": "p"}]}, EVALS)


def test_yaml_integral_float_id_becomes_an_integer_like_go(tmp_path: Path) -> None:
    path = write(
        tmp_path, "evals.yaml", "evals:\n  - id: 5.0\n    prompt: p\n    expectations: [x]\n"
    )
    assert load_evals(path).evals[0].id == "5"


def test_json_float_id_is_rejected_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "evals.json", '{"evals": [\n  {"id": 1.0, "prompt": "p"}\n]}')
    with pytest.raises(SpecError) as exc:
        load_evals(path)
    assert exc.value.line == 2
    assert exc.value.message == "id 1.0: must be a string or an integer"


def test_expectations_expand_first_and_bare_strings_are_llm_assertions() -> None:
    case = parse_evals(
        {
            "evals": [
                {
                    "id": "e",
                    "prompt": "p",
                    "expectations": ["first", "second"],
                    "assertions": [
                        "bare",
                        {"type": "regex", "pattern": "ok", "path": "out.txt"},
                    ],
                }
            ]
        },
        EVALS,
    ).evals[0]
    assert case.expectations == ("first", "second")
    assert [(a.type, a.text, a.source) for a in case.assertions] == [
        ("llm", "first", Source.EXPECTATION),
        ("llm", "second", Source.EXPECTATION),
        ("llm", "bare", Source.ASSERTION),
        ("regex", "", Source.ASSERTION),
    ]
    assert case.assertions[0].from_expectation and not case.assertions[2].from_expectation


def test_assertion_fields_null_and_unknown_keys() -> None:
    case = parse_evals(
        {
            "evals": [
                {
                    "id": "e",
                    "prompt": "p",
                    "assertions": [
                        {"type": "command", "run": "make", "expect_exit": None, "extra": [1]},
                        {"type": "command", "run": "false", "expect_exit": 1, "cwd": "sub"},
                        None,
                    ],
                }
            ]
        },
        EVALS,
    ).evals[0]
    a, b, c = case.assertions
    assert a.expect_exit is None and a.exit_code == 0
    assert b.expect_exit == 1 and b.cwd == "sub"
    assert c.type == ""  # Go decodes null into the zero value; validation flags it


def test_skill_creator_evals_json_loads_verbatim() -> None:
    spec = parse_evals(SKILL_CREATOR_EVALS, EVALS)
    case = spec.evals[0]
    assert spec.skill_name == "example-skill"
    assert case.id == "0" and case.files == () and case.expected_output
    assert [(a.type, a.text, a.implied_type) for a in case.assertions] == [
        ("llm", "Output contains valid JSON", True),
        ("llm", "All rows processed correctly", True),
    ]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"a.txt": "content"}, "inline file content is not supported"),
        ([1], "files: must be a fixture path (a string)"),
        (["../outside.txt"], 'files[0] "../outside.txt" escapes the evals directory'),
        (["ok.txt", "/etc/passwd"], 'files[1] "/etc/passwd" escapes the evals directory'),
        (["files/../../x"], 'files[0] "files/../../x" escapes the evals directory'),
    ],
    ids=["inline-object", "number", "parent", "absolute", "sneaky-parent"],
)
def test_bad_files_are_load_errors(files: object, message: str) -> None:
    with pytest.raises(SpecError) as exc:
        parse_evals({"evals": [{"id": "e", "prompt": "p", "files": files}]}, EVALS)
    assert exc.value.message.startswith('eval "e": ')
    assert message in exc.value.message


def test_lenient_parse_collects_every_problem() -> None:
    spec, problems = parse_evals_lenient(
        {
            "evals": [
                {"id": "a", "prompt": 3, "files": ["../x", "ok.txt"]},
                {"id": True, "prompt": "p", "max_turns": "5"},
            ]
        },
        EVALS,
    )
    assert [p.pointer for p in problems] == [
        "/evals/0/prompt",
        "/evals/0/files/0",
        "/evals/1/id",
        "/evals/1/max_turns",
    ]
    assert [f.authored for f in spec.evals[0].fixtures] == ["ok.txt"]
    assert spec.evals[1].max_turns == 0


# -- staging rule (§4.3) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "dest"),
    [
        ("files/internal/a.go", "internal/a.go"),
        ("fixtures/demo/go.mod", "go.mod"),
        ("evals/files/x.pdf", "x.pdf"),
        ("evals/fixtures/d/go.mod", "go.mod"),
        ("files\\win\\path.txt", "win/path.txt"),
        ("./files//a/./b.txt", "a/b.txt"),
        ("files/a/../b.txt", "b.txt"),
        ("data.csv", "data.csv"),
        ("evals/evals/x", "x"),
        ("", "."),
    ],
    ids=[
        "files-tree",
        "fixtures-basename",
        "skill-creator-evals-prefix",
        "evals-prefix-fixture",
        "backslashes",
        "cleaned",
        "dotdot-inside",
        "top-level",
        "one-prefix-only",
        "empty",
    ],
)
def test_staged_path(ref: str, dest: str) -> None:
    assert staged_path(ref) == dest


@pytest.mark.parametrize("ref", ["../x", "..", "/abs/x", "files/../../x", "evals/../../x"])
def test_staged_path_rejects_escapes(ref: str) -> None:
    with pytest.raises(SpecError, match="escapes the evals directory"):
        staged_path(ref)


def test_resolve_fixture_paths(tmp_path: Path) -> None:
    ref = resolve_fixture("evals/files/a/b.txt", tmp_path)
    assert ref.rel == "files/a/b.txt"
    assert ref.dest == "a/b.txt"
    assert ref.source == tmp_path / "files" / "a" / "b.txt"
    assert ref.authored == "evals/files/a/b.txt"


# -- model restriction (§4.4) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tokens", "allowed"),
    [
        ((), True),
        (("all",), True),
        (("anthropic",), True),
        (("anthropic/claude-sonnet-5",), True),
        (("claude-sonnet-5",), True),
        ((" claude-sonnet-5 ",), True),
        (("openai", "claude-sonnet-5"), True),
        (("openai",), False),
        (("claude-sonnet",), False),
        (("openai/claude-sonnet-5",), False),
    ],
    ids=[
        "empty",
        "all",
        "provider",
        "canonical",
        "bare",
        "trimmed",
        "any-token",
        "other-provider",
        "prefix",
        "wrong-provider",
    ],
)
def test_model_allowed(tokens: tuple[str, ...], allowed: bool) -> None:
    assert model_allowed(tokens, provider="anthropic", model="claude-sonnet-5") is allowed
    assert model_allowed(tokens, provider="anthropic", model="anthropic/claude-sonnet-5") is allowed


def test_evals_spec_allows_and_get() -> None:
    spec = parse_evals({"models": ["openai"], "evals": [{"id": "a", "prompt": "p"}]}, EVALS)
    assert spec.allows(provider="openai", model="gpt-5.4")
    assert not spec.allows(provider="anthropic", model="claude-sonnet-5")
    assert spec.get("a") is spec.evals[0] and spec.get("b") is None
    assert spec.directory == EVALS.parent


# -- describe() (§10.2) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("assertion", "text"),
    [
        (Assertion(type="file_exists", path="a.txt"), "file a.txt exists"),
        (Assertion(type="file_absent", path="a.txt"), "file a.txt is absent"),
        (Assertion(type="regex", path="a.go", pattern="^// P"), "a.go matches /^// P/"),
        (Assertion(type="regex", pattern="ok"), "output matches /ok/"),
        (Assertion(type="not_regex", path="a", pattern="x"), "a does not match /x/"),
        (Assertion(type="not_regex", pattern="x"), "output does not match /x/"),
        (Assertion(type="command", run="go vet ./..."), "command `go vet ./...` exits 0"),
        (Assertion(type="command", run="false", expect_exit=1), "command `false` exits 1"),
        (Assertion(type="tool_call", tool="Bash"), "agent called tool /Bash/"),
        (
            Assertion(type="tool_call", tool="Bash", pattern="go"),
            "agent called tool /Bash/ with args /go/",
        ),
        (Assertion(type="llm", text="It works"), "It works"),
        (Assertion(type="weird"), "weird"),
    ],
    ids=[
        "exists",
        "absent",
        "regex-path",
        "regex-output",
        "not-regex-path",
        "not-regex-output",
        "command",
        "command-exit",
        "tool",
        "tool-args",
        "llm",
        "unknown",
    ],
)
def test_describe(assertion: Assertion, text: str) -> None:
    assert assertion.describe() == text


def test_echo_is_the_graded_assertion_prefix() -> None:
    a = Assertion(type="command", run="make", requires="make", expect_exit=0, text="ignored")
    assert list(a.echo().items()) == [
        ("type", "command"),
        ("run", "make"),
        ("requires", "make"),
        ("expect_exit", 0),
    ]


# -- RE2 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "error"),
    [
        ("(?m)^ok$", ""),
        ("a(?=b)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
        ("(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"),
        ("[a", "error parsing regexp: missing closing ]: `[a`"),
        ("(a", "error parsing regexp: missing closing ): `(a`"),
    ],
    ids=["ok", "lookahead", "backreference", "bracket", "paren"],
)
def test_compile_re2(pattern: str, error: str, capfd: pytest.CaptureFixture[str]) -> None:
    try:
        regex, err = compile_re2(pattern), ""
    except Re2Error as exc:
        regex, err = None, exc.go_message
    assert err == error
    assert (regex is None) == bool(error)
    assert capfd.readouterr().err == ""  # google-re2 must not log parse errors to stderr


def test_load_evals_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "evals/s/evals.jsonc",
        '// suite\n{\n  "evals": [\n    {"id": "a", "prompt": "p",\n     "files": ["../../x"]},\n  ],\n}\n',
    )
    with pytest.raises(SpecError) as exc:
        load_evals(path)
    assert exc.value.path == path
    assert exc.value.line == 5
    assert exc.value.message == 'eval "a": files[0] "../../x" escapes the evals directory'


def test_load_evals_roundtrip_of_a_json_file(tmp_path: Path) -> None:
    path = write(tmp_path, "evals/s/evals.json", json.dumps(SKILL_CREATOR_EVALS))
    spec = load_evals(path)
    assert spec.path.is_absolute() and spec.path.name == "evals.json"
    assert spec.evals[0].id == "0"
