"""Decoding (json/jsonc/yaml), one-file-per-basename, and the Go-compatible encoders.

The YAML encoder expectations below were checked byte-for-byte against gopkg.in/yaml.v3 v3.0.1
(Encoder with SetIndent(2)) fed the same JSON data model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evolve_action import encoding
from evolve_action.encoding import (
    MAX_FILE_BYTES,
    decode_bytes,
    decode_bytes_with_lines,
    decode_path,
    decode_with_lines,
    encode_document,
    encode_json,
    encode_yaml,
    find_one,
    find_results,
    format_of,
    parse_format,
    sorted_map,
    standardize_jsonc,
)
from evolve_action.errors import ConfigError, SpecError


def dec(text: str | bytes, ext: str) -> Any:
    data = text.encode() if isinstance(text, str) else text
    return decode_bytes(data, Path(f"/x/file.{ext}"))


# ------------------------------------------------------------------------------------------
# JSON / JSONC decoding


def test_json_keeps_key_order_and_int_float_distinction() -> None:
    v = dec('{"b": 1, "a": 1.0, "c": 1e2, "d": -0.5, "e": [true, null, "x"]}', "json")
    assert list(v) == ["b", "a", "c", "d", "e"]
    assert type(v["b"]) is int
    assert type(v["a"]) is float
    assert type(v["c"]) is float
    assert v["e"] == [True, None, "x"]


def test_jsonc_comments_and_trailing_commas() -> None:
    text = """// header comment
{
  /* block
     comment */ "a": [1, 2, 3,],  // trailing
  "url": "http://x.example/*not a comment*/",
  "s": "// not a comment either",
  "o": {"k": "v",},
}
"""
    v = dec(text, "jsonc")
    assert v == {
        "a": [1, 2, 3],
        "url": "http://x.example/*not a comment*/",
        "s": "// not a comment either",
        "o": {"k": "v"},
    }


def test_standardize_jsonc_keeps_offsets() -> None:
    text = '{\n  // c\n  "a": 1, /* x\n y */\n}'
    out = standardize_jsonc(text)
    assert len(out) == len(text)
    assert out.count("\n") == text.count("\n")
    assert "//" not in out and "/*" not in out and "," not in out


@pytest.mark.parametrize(
    ("ext", "text", "fragment", "line"),
    [
        ("json", '{\n  "a": 1,\n}\n', "invalid JSON", 3),
        ("json", '{\n  // no comments\n  "a": 1\n}\n', "invalid JSON", 2),
        ("json", '{"a": NaN}', "NaN is not valid JSON", None),
        ("json", '{"a": Infinity}', "Infinity is not valid JSON", None),
        ("json", '{"a": 1e999}', "out of range", None),
        ("json", '\ufeff{"a": 1}', "byte-order mark", 1),
        ("json", '{"a": "raw\ttab"}', "invalid JSON", 1),
        ("json", '{"a": 1} {"b": 2}', "extra data", 1),
        ("jsonc", "{\n  'a': 1\n}", "invalid JSONC", 2),
        ("jsonc", "{\n  a: 1\n}", "invalid JSONC", 2),
        ("jsonc", '{"a": 0x10}', "invalid JSONC", 1),
        ("jsonc", '{"a": +1}', "invalid JSONC", 1),
        ("jsonc", '{"a": .5}', "invalid JSONC", 1),
        ("jsonc", "[,]", "invalid JSONC", 1),
        ("jsonc", '{"a": 1,,}', "invalid JSONC", 1),
        ("jsonc", "[1 /* open\n", "unterminated /* block comment */", 1),
        ("jsonc", "// only a comment\n", "no content", None),
    ],
)
def test_json_errors(ext: str, text: str, fragment: str, line: int | None) -> None:
    with pytest.raises(SpecError) as info:
        dec(text, ext)
    err = info.value
    assert fragment in err.message
    assert err.line == line
    assert err.path == Path(f"/x/file.{ext}")
    assert err.hint


# ------------------------------------------------------------------------------------------
# YAML decoding (yaml.v3 semantics, YAML 1.2 core scalars)


@pytest.mark.parametrize(
    ("scalar", "want"),
    [
        ("yes", "yes"),
        ("No", "No"),
        ("on", "on"),
        ("off", "off"),
        ("y", "y"),
        ("true", True),
        ("False", False),
        ("TRUE", True),
        ("tRue", "tRue"),
        ("~", None),
        ("null", None),
        ("", None),
        ("nUll", "nUll"),
        ("5", 5),
        ("5.0", 5),  # integral floats become JSON ints
        ("5.5", 5.5),
        ("1e3", 1000),
        ("1.5e-7", 1.5e-7),
        ("0x1F", 31),
        ("0o17", 15),
        ("0b101", 5),
        ("017", 15),  # yaml.v3 still reads 1.1-style octal
        ("09", 9),
        ("1_000", 1000),
        ("+5", 5),
        ("-0x10", -16),
        (".5", 0.5),
        ("-.5", -0.5),
        ("1e400", "1e400"),  # out of float range: stays a string
        ("123456789012345678901234567890", 1.2345678901234568e29),
        ("9223372036854775808", 9223372036854775808),  # uint64 range
        ("2001-01-01", "2001-01-01"),  # timestamps stay text (see docs/encoding.md)
        ("2026-05-01T10:00:00Z", "2026-05-01T10:00:00Z"),
        ("1:20", "1:20"),
        ("'5'", "5"),
        ('"true"', "true"),
        ("!!str 5", "5"),
        ('!!int "7"', 7),
        ("!!float 3", 3),
        ("!custom text", "text"),
        ("a # comment", "a"),
        ("'it''s'", "it's"),
        ('"\\u00e9\\t"', "é\t"),
    ],
)
def test_yaml_scalars(scalar: str, want: Any) -> None:
    got = dec(f"k: {scalar}\n", "yaml")["k"]
    assert got == want
    assert type(got) is type(want)


def test_yaml_structures_anchors_merges_and_blocks() -> None:
    text = """\
base: &b {x: 1, y: 2}
other:
  <<: *b
  y: 3
list: [&v 1, *v]
multi:
  <<: [{p: 1}, {p: 2, q: 3}]
lit: |
  line1
  line2
folded: >-
  a
  b
"""
    v = dec(text, "yaml")
    assert v["other"] == {"y": 3, "x": 1}
    assert v["list"] == [1, 1]
    assert v["multi"] == {"p": 1, "q": 3}
    assert v["lit"] == "line1\nline2\n"
    assert v["folded"] == "a b"


def test_yaml_only_first_document_and_bom() -> None:
    assert dec("a: 1\n---\nb: [unclosed\n", "yaml") == {"a": 1}
    assert dec("\ufeffa: 1\n", "yml") == {"a": 1}


def test_yaml_tab_after_colon_is_accepted_like_yaml_v3() -> None:
    assert dec("a:\tb\nc:  \t[1,\t2]\n", "yaml") == {"a": "b", "c": [1, 2]}


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("a: 1\nb: 2\na: 3\n", 'mapping key "a" already defined at line 1', 3),
        ("1: a\n", "non-string mapping key", 1),
        ("x: 1\ntrue: a\n", "non-string mapping key", 2),
        ("~: a\n", "non-string mapping key", 1),
        ("? [1, 2]\n: a\n", "non-string mapping key", 1),
        ("a: .inf\n", "not JSON-representable", 1),
        ("a:\n  - .NaN\n", "not JSON-representable", 2),
        ("a: b\n  c: d\n", "yaml: line 2: mapping values are not allowed", 2),
        ("a: [1, 2\nb: 3\n", "yaml: line 2:", 2),
        ("a: *nope\n", 'unknown anchor "nope"', 1),
        ("a: !!int foo\n", "cannot decode !!str `foo` as a !!int", 1),
        ("<<: 5\n", "map merge requires map", 1),
        ("d:\n\t- x\n", "cannot start any token", 2),
        ("# only a comment\n", "no content", None),
    ],
)
def test_yaml_errors(text: str, fragment: str, line: int | None) -> None:
    with pytest.raises(SpecError) as info:
        dec(text, "yaml")
    assert fragment in info.value.message
    assert info.value.line == line
    assert info.value.hint


# ------------------------------------------------------------------------------------------
# Files: size cap, encoding, emptiness, extensions


def test_decode_path_and_unsupported_extension(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text('{"a": 1}')
    assert decode_path(p) == {"a": 1}
    bad = tmp_path / "t.toml"
    bad.write_text("a = 1")
    with pytest.raises(SpecError, match="unsupported extension"):
        decode_path(bad)


@pytest.mark.parametrize("ext", ["json", "jsonc", "yaml", "yml"])
@pytest.mark.parametrize("content", [b"", b"  \n\t\n"])
def test_empty_files_say_so(tmp_path: Path, ext: str, content: bytes) -> None:
    p = tmp_path / f"evals.{ext}"
    p.write_bytes(content)
    with pytest.raises(SpecError, match="file is empty") as info:
        decode_path(p)
    assert info.value.path == p


@pytest.mark.parametrize("ext", ["json", "jsonc", "yaml"])
def test_non_utf8_is_refused_with_line(tmp_path: Path, ext: str) -> None:
    p = tmp_path / f"evals.{ext}"
    p.write_bytes(b'{"a":\n "caf\xe9"}\n' if ext != "yaml" else b"a:\n  caf\xe9\n")
    with pytest.raises(SpecError, match="not valid UTF-8") as info:
        decode_path(p)
    assert info.value.line == 2
    assert "UTF-8" in (info.value.hint or "")


def test_oversized_file_refused_before_parsing(tmp_path: Path) -> None:
    p = tmp_path / "big.json"
    with p.open("wb") as f:  # sparse: no 10 MiB written to disk
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(SpecError, match="too large") as info:
        decode_path(p)
    assert str(MAX_FILE_BYTES) in info.value.message
    with pytest.raises(SpecError, match="too large"):
        decode_bytes(b" " * (MAX_FILE_BYTES + 1), p)


def test_unreadable_path(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read file"):
        decode_path(tmp_path / "missing.json")


def test_deep_nesting_is_a_clear_error() -> None:
    with pytest.raises(SpecError, match="nested too deeply"):
        dec("[" * 100_000 + "]" * 100_000, "json")


# ------------------------------------------------------------------------------------------
# Line numbers for JSON pointers

JSON_DOC = """{
  "skill": "a/b",
  "evals": [
    {
      "id": 1,
      "prompt": "p"
    },
    {"id": "two", "x~y": {"a/b": [10,
      20]}}
  ],
  "empty": {},
  "list": []
}
"""


@pytest.mark.parametrize(
    ("pointer", "line"),
    [
        ("", 1),
        ("/skill", 2),
        ("/evals", 3),
        ("/evals/0", 4),
        ("/evals/0/id", 5),
        ("/evals/0/prompt", 6),
        ("/evals/1", 8),
        ("/evals/1/id", 8),
        ("/evals/1/x~0y/a~1b/1", 9),
        ("/empty", 11),
        ("/list", 12),
        ("/nope", None),
        ("/evals/7", None),
    ],
)
@pytest.mark.parametrize("ext", ["json", "jsonc"])
def test_line_of_json(pointer: str, line: int | None, ext: str) -> None:
    text = JSON_DOC if ext == "json" else "// c\n/* multi\n*/" + JSON_DOC.replace("[]", "[ /*x*/ ]")
    shift = 0 if ext == "json" else 2
    decoded = decode_bytes_with_lines(text.encode(), Path(f"/x/evals.{ext}"))
    assert decoded.line_of(pointer) == (None if line is None else line + shift)


YAML_DOC = """\
# comment
skill: a/b
evals:
  - id: 1
    prompt: |
      multi
      line
  - id: two
    "x~y":
      a/b: [10,
        20]
empty: {}
"""


@pytest.mark.parametrize(
    ("pointer", "line"),
    [
        ("", 2),
        ("/skill", 2),
        ("/evals", 4),
        ("/evals/0", 4),
        ("/evals/0/id", 4),
        ("/evals/0/prompt", 5),
        ("/evals/1/id", 8),
        ("/evals/1/x~0y", 10),
        ("/evals/1/x~0y/a~1b/1", 11),
        ("/empty", 12),
        ("/nope", None),
    ],
)
def test_line_of_yaml(pointer: str, line: int | None) -> None:
    decoded = decode_bytes_with_lines(YAML_DOC.encode(), Path("/x/evals.yaml"))
    assert decoded.line_of(pointer) == line


def test_decode_with_lines_reads_file(tmp_path: Path) -> None:
    p = tmp_path / "evals.json"
    p.write_text(JSON_DOC)
    decoded = decode_with_lines(p)
    assert decoded.value["skill"] == "a/b"
    assert decoded.line_of("/evals/0/prompt") == 6


# ------------------------------------------------------------------------------------------
# One file per basename


def test_find_one(tmp_path: Path) -> None:
    assert find_one(tmp_path, "evals") is None
    (tmp_path / "evals.yml").write_text("evals: []\n")
    assert find_one(tmp_path, "evals") == tmp_path / "evals.yml"
    (tmp_path / "evals.json").mkdir()  # a directory is not a candidate
    assert find_one(tmp_path, "evals") == tmp_path / "evals.yml"
    (tmp_path / "evals.jsonc").write_text("{}")
    with pytest.raises(SpecError) as info:
        find_one(tmp_path, "evals")
    a, b = (tmp_path / "evals.jsonc").absolute(), (tmp_path / "evals.yml").absolute()
    assert info.value.message == f"ambiguous evals: found {a}, {b}; keep exactly one"


def test_find_one_follows_symlinks(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("{}")
    (tmp_path / "triggers.json").symlink_to(target)
    (tmp_path / "triggers.yaml").symlink_to(tmp_path / "missing")  # dangling: not a file
    assert find_one(tmp_path, "triggers") == tmp_path / "triggers.json"


def test_find_results_takes_first_without_ambiguity(tmp_path: Path) -> None:
    assert find_results(tmp_path) is None
    (tmp_path / "results.yaml").write_text("schema: 5\n")
    assert find_results(tmp_path) == tmp_path / "results.yaml"
    (tmp_path / "results.jsonc").write_text("{}")
    assert find_results(tmp_path) == tmp_path / "results.jsonc"
    (tmp_path / "results.json").write_text("{}")
    assert find_results(tmp_path) == tmp_path / "results.json"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("r.json", "json"), ("r.jsonc", "jsonc"), ("r.yaml", "yaml"), ("r.yml", "yaml")],
)
def test_format_of(name: str, fmt: str) -> None:
    assert format_of(Path(name)) == fmt


def test_format_of_unknown() -> None:
    with pytest.raises(SpecError, match="unsupported extension"):
        format_of(Path("r.toml"))


@pytest.mark.parametrize(
    ("value", "fmt"), [("json", "json"), ("jsonc", "jsonc"), ("yaml", "yaml"), ("yml", "yaml")]
)
def test_parse_format(value: str, fmt: str) -> None:
    assert parse_format(value) == fmt


def test_parse_format_error() -> None:
    with pytest.raises(ConfigError) as info:
        parse_format("toml")
    assert info.value.message == 'unknown results format "toml" (want json, jsonc, or yaml)'


# ------------------------------------------------------------------------------------------
# Go JSON encoding


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("a <b> & c é", '"a \\u003cb\\u003e \\u0026 c é"'),
        ("line\nnext\ttab\r\x08\x0c", '"line\\nnext\\ttab\\r\\b\\f"'),
        ("\x00\x01\x1f\x7f", '"\\u0000\\u0001\\u001f\x7f"'),
        ("\u2028\u2029", '"\\u2028\\u2029"'),
        ('q"b\\s/', '"q\\"b\\\\s/"'),
        ("日本 😀", '"日本 😀"'),
        ("bad \ud800 surrogate", '"bad \ufffd surrogate"'),
        (1, "1"),
        (-7, "-7"),
        (10.0, "10"),
        (0.5, "0.5"),
        (1e-7, "1e-7"),
        (1e21, "1e+21"),
        (True, "true"),
        (None, "null"),
        ({}, "{}"),
        ([], "[]"),
        ((), "[]"),
    ],
)
def test_encode_json_scalars(value: Any, want: str) -> None:
    assert encode_json(value) == want + "\n"


RESULTS_LIKE: dict[str, Any] = {
    "schema": 5,
    "plugin": "demo",
    "skill": "writer <beta>",
    "models": sorted_map(
        {
            "openai/gpt-5.4": {"triggers": {"pricing": None, "results": []}},
            "anthropic/claude-sonnet-4-6": {
                "triggers": {
                    "provider": "anthropic",
                    "display": "Claude Sonnet 4.6",
                    "executed": True,
                    "timeout_seconds": 120,
                    "pricing": {"input_per_mtok": 3.0, "output_per_mtok": 15.0},
                    "results": [
                        {
                            "query": 'Fix the <div> & the café\'s "menu"',
                            "should_trigger": True,
                            "hits": 2,
                            "runs": 3,
                            "passed": True,
                            "avg_run_seconds": 10.0,
                            "estimate": {"input_tokens": 1234, "input_cost_usd": 0.003702},
                        }
                    ],
                    "summary": {"passed": 1, "failed": 0, "total": 1, "pass_rate": 1.0},
                    "tools": sorted_map({"Write": 2, "Bash": 1, "Read": 3}),
                }
            },
        }
    ),
}

RESULTS_LIKE_JSON = """{
  "schema": 5,
  "plugin": "demo",
  "skill": "writer \\u003cbeta\\u003e",
  "models": {
    "anthropic/claude-sonnet-4-6": {
      "triggers": {
        "provider": "anthropic",
        "display": "Claude Sonnet 4.6",
        "executed": true,
        "timeout_seconds": 120,
        "pricing": {
          "input_per_mtok": 3,
          "output_per_mtok": 15
        },
        "results": [
          {
            "query": "Fix the \\u003cdiv\\u003e \\u0026 the café's \\"menu\\"",
            "should_trigger": true,
            "hits": 2,
            "runs": 3,
            "passed": true,
            "avg_run_seconds": 10,
            "estimate": {
              "input_tokens": 1234,
              "input_cost_usd": 0.003702
            }
          }
        ],
        "summary": {
          "passed": 1,
          "failed": 0,
          "total": 1,
          "pass_rate": 1
        },
        "tools": {
          "Bash": 1,
          "Read": 3,
          "Write": 2
        }
      }
    },
    "openai/gpt-5.4": {
      "triggers": {
        "pricing": null,
        "results": []
      }
    }
  }
}
"""


def test_encode_json_results_like_document() -> None:
    assert encode_json(RESULTS_LIKE) == RESULTS_LIKE_JSON


@pytest.mark.parametrize("ext", ["json", "jsonc"])
def test_decode_encode_round_trip_is_byte_identical(ext: str) -> None:
    text = RESULTS_LIKE_JSON if ext == "json" else "// c\n" + RESULTS_LIKE_JSON
    v = dec(text, ext)
    assert encode_json(v) == RESULTS_LIKE_JSON
    floats = '{\n  "a": 0.1,\n  "b": 1e-7,\n  "c": 2.5e+21,\n  "d": -0,\n  "e": 12345.678\n}\n'
    assert encode_json(dec(floats, "json")) == floats


def test_encode_json_to_json_protocol_and_errors() -> None:
    class Obj:
        def to_json(self) -> dict[str, Any]:
            return {"z": 1, "a": 2}

    assert encode_json({"o": Obj()}) == '{\n  "o": {\n    "z": 1,\n    "a": 2\n  }\n}\n'
    with pytest.raises(TypeError):
        encode_json({1: "x"})
    with pytest.raises(TypeError):
        encode_json({"a": object()})
    with pytest.raises(ValueError, match="unsupported float"):
        encode_json(float("nan"))


def _json_by_definition(v: Any, depth: int = 0) -> str:
    """Go `MarshalIndent(v, "", "  ")` spelled out plainly: the reference for `encode_json`."""
    pad = "  " * depth
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = [
            f"{pad}  {encoding.go_json_string(k)}: {_json_by_definition(x, depth + 1)}"
            for k, x in v.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list | tuple):
        if not v:
            return "[]"
        items = [f"{pad}  {_json_by_definition(x, depth + 1)}" for x in v]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    if v is None or isinstance(v, bool):
        return {None: "null", True: "true", False: "false"}[v]
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return encoding.go_float(v)
    assert isinstance(v, str)
    return encoding.go_json_string(v)


def test_encode_json_agrees_with_the_definition_on_random_documents() -> None:
    import enum
    import random

    class Level(enum.IntEnum):
        HIGH = 3

    class Name(str):
        pass

    rng = random.Random(24)
    strings = [
        "",
        "a",
        "key",
        "<b>&</b>",
        "\u2028x\u2029",
        "bad \ud800 half",
        "café 日本 😀",
        'q"\\\n\t\x00\x1f\x7f',
        Name("sub<class>"),
        "1.0",
        "true",
    ]
    floats = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        1e-5,
        1e-4,
        1e-7,
        1e16,
        1e21,
        1.5e21,
        0.1 + 0.2,
        123456789.125,
        2.0**60,
        5e-324,
        0.666667,
    ]
    ints = [0, -1, 7, 2**53 + 1, 10**30, -(10**25), Level.HIGH]

    def value(depth: int) -> Any:
        kind = rng.randrange(8 if depth < 4 else 5)
        if kind == 0:
            return rng.choice(strings)
        if kind == 1:
            return rng.choice(floats) * rng.choice([1, 1, 3.7, 1e-3])
        if kind == 2:
            return rng.choice(ints)
        if kind == 3:
            return rng.choice([None, True, False])
        if kind == 4:
            return rng.choice([{}, [], ()])
        if kind in (5, 6):
            return {rng.choice(strings): value(depth + 1) for _ in range(rng.randrange(1, 5))}
        seq = [value(depth + 1) for _ in range(rng.randrange(1, 5))]
        return tuple(seq) if rng.random() < 0.3 else seq

    def folded(s: str) -> str:  # maps some distinct keys to one ("KEY" and "key")
        return s.lower().replace("<", "&lt;")

    def mapped(v: Any) -> Any:  # the mapping applied by a plain walk, keys merged as a dict does
        if isinstance(v, str):
            return folded(v)
        if isinstance(v, list | tuple):
            return [mapped(x) for x in v]
        if isinstance(v, dict):
            return {folded(k): mapped(x) for k, x in v.items()}
        return v

    strings += ["KEY", "Key", "&lt;b>&</b>"]
    for _ in range(500):
        doc = value(0)
        assert encode_json(doc) == _json_by_definition(doc) + "\n", doc
        want = _json_by_definition(mapped(doc)) + "\n"
        assert encode_json(doc, text=folded) == want, doc
        assert encode_document(doc, "jsonc", "c", text=folded) == "// c\n" + want
        assert encode_document(doc, "yaml", text=folded) == encode_yaml(mapped(doc))


def test_encode_yaml_caches_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # The per-document caches (strings per indent, key orders, key forms, floats) against the
    # same encoder working everything out afresh each time: the same bytes, zeros and
    # multi-line strings at several depths included.
    import random

    from evolve_action.encoding import _encode

    rng = random.Random(3)
    strings = ["a", "b10", "b9", "yes", "x: y", "two\nlines", " lead", "-0", "k" * 130, "日本"]
    floats = [0.0, -0.0, 1.0, 0.5, 1e-7, 1e21, 2.0**63, 1.5]

    def value(depth: int) -> Any:
        kind = rng.randrange(6 if depth < 4 else 3)
        if kind == 0:
            return rng.choice(strings)
        if kind == 1:
            return rng.choice(floats)
        if kind == 2:
            return rng.choice([1, -1, 2**64, None, True, {}, []])
        if kind in (3, 4):
            return {rng.choice(strings): value(depth + 1) for _ in range(rng.randrange(1, 5))}
        return [value(depth + 1) for _ in range(rng.randrange(1, 4))]

    docs = [value(0) for _ in range(300)]
    cached = [encode_yaml(d) for d in docs]

    def fresh_string(_: object, s: str, indent: int, *, key: bool) -> tuple[str, list[str]]:
        return _encode._yaml_string(s, indent, key=key)

    monkeypatch.setattr(_encode._YamlMemo, "string", fresh_string)
    monkeypatch.setattr(
        _encode._YamlMemo, "order", lambda _, keys: sorted(keys, key=_encode._yaml_sort_key)
    )
    monkeypatch.setattr(
        _encode._YamlMemo,
        "simple_key",
        lambda _, k: not (_encode._analyze(k).multiline or len(k.encode()) > 128),
    )
    monkeypatch.setattr(_encode._YamlMemo, "float_text", lambda _, v: _encode._yaml_float(v))
    assert [encode_yaml(d) for d in docs] == cached


def test_sorted_map_uses_byte_order() -> None:
    assert list(sorted_map({"b": 1, "B": 2, "a": 3, "é": 4, "_": 5, "a10": 6, "a9": 7})) == [
        "B",
        "_",
        "a",
        "a10",
        "a9",
        "b",
        "é",
    ]


# ------------------------------------------------------------------------------------------
# YAML encoding (yaml.v3 with SetIndent(2))


@pytest.mark.parametrize(
    ("s", "want"),
    [
        ("plain text", "plain text"),
        ("", '""'),
        ("yes", '"yes"'),
        ("No", '"No"'),
        ("y", '"y"'),
        ("true", '"true"'),
        ("null", '"null"'),
        ("~", '"~"'),
        ("3", '"3"'),
        ("3.0", '"3.0"'),
        ("0x1F", '"0x1F"'),
        ("1_000", '"1_000"'),
        ("1:20", '"1:20"'),
        ("2001-01-01", '"2001-01-01"'),
        ("2026-05-01T10:00:00Z", '"2026-05-01T10:00:00Z"'),
        ("2026-05-01T10:00:00", "2026-05-01T10:00:00"),  # no zone: not a yaml.v3 timestamp
        ("2001-13-01", "2001-13-01"),
        ("1e400", "1e400"),
        ("-", "'-'"),
        ("- x", "'- x'"),
        ("-x", "-x"),
        ("a: b", "'a: b'"),
        ("a:b", "a:b"),
        ("a #b", "'a #b'"),
        ("a#b", "a#b"),
        ("#a", "'#a'"),
        ("? x", "'? x'"),
        ("?x", "?x"),
        ("[a]", "'[a]'"),
        ("a[b]", "a[b]"),
        ("&a", "'&a'"),
        ("*a", "'*a'"),
        ("'q'", "'''q'''"),
        ('"q"', "'\"q\"'"),
        ("@a", "'@a'"),
        ("`a", "'`a'"),
        ("%a", "'%a'"),
        ("---", "'---'"),
        ("...", "'...'"),
        (" lead", "' lead'"),
        ("trail ", "'trail '"),
        ("a\tb", '"a\\tb"'),
        ("a\rb", '"a\\rb"'),
        ("é ü", "é ü"),
        ("emoji 😀", '"emoji \\U0001F600"'),
        ("\x85", '"\\N"'),
        ("\x00\x07\x1b", '"\\0\\a\\e"'),
        ("\ufeffxy", '"\\uFEFF\\x78\\x79"'),  # yaml.v3's is_bom() quirk
        ("a\ufeffb", '"a\\uFEFFb"'),
        ("a\\b", "a\\b"),
        ("<<", "<<"),
        ("x" * 130, "x" * 130),
    ],
)
def test_encode_yaml_string_styles(s: str, want: str) -> None:
    assert encode_yaml({"k": s}) == f"k: {want}\n"


@pytest.mark.parametrize(
    ("s", "want"),
    [
        ("a\nb", "k: |-\n  a\n  b\n"),
        ("a\nb\n", "k: |\n  a\n  b\n"),
        ("a\n\n", "k: |+\n  a\n\n"),
        ("a\n\nb", "k: |-\n  a\n\n  b\n"),
        (" a\nb", "k: |2-\n   a\n  b\n"),
        ("\na", "k: |2-\n  a\n"),  # yaml.v3 drops the leading break's empty line
        ("\n", "k: |2+\n"),
        ("a \nb", 'k: "a \\nb"\n'),
        ("a\n b", "k: |-\n  a\n   b\n"),
        ("a\tb\nc", "k: |-\n  a\tb\n  c\n"),
        ("😀\nx", 'k: "\\U0001F600\\nx"\n'),
    ],
)
def test_encode_yaml_multiline(s: str, want: str) -> None:
    assert encode_yaml({"k": s}) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (0.5, "0.5"),
        (1.0, "1"),
        (100.0, "100"),
        (2.5e-05, "2.5e-05"),
        (0.0001, "0.0001"),
        (1.5e-7, "1.5e-07"),
        (123456.5, "123456.5"),
        (1234567.5, "1.2345675e+06"),
        (1e20, "1e+20"),  # beyond int64 after the JSON round trip
        (1e21, "1e+21"),
        (-0.25, "-0.25"),
        (0.333333, "0.333333"),
        (1e-6, "1e-06"),
        (2**63, "9.223372036854776e+18"),
        (2**63 - 1, "9223372036854775807"),
        (True, "true"),
        (None, "null"),
        ({}, "{}"),
        ([], "[]"),
    ],
)
def test_encode_yaml_scalars(value: Any, want: str) -> None:
    assert encode_yaml({"k": value}) == f"k: {want}\n"


def test_encode_yaml_natural_key_order() -> None:
    keys = ["a10", "a2", "a1", "a01", "b", "B", "_a", "ab", "a-b", "1", "10", "2", "02"]
    keys += ["model-4-6", "model-4-10", "model-5", "gpt-5.4", "gpt-5.4-mini", "x1y", "x10y"]
    out = encode_yaml(dict.fromkeys(keys, 1))
    got = [line.split(":")[0].strip('"') for line in out.splitlines()]
    assert got == [
        "_a",
        "1",
        "2",
        "02",
        "10",
        "B",
        "a-b",
        "a1",
        "a01",
        "a2",
        "a10",
        "ab",
        "b",
        "gpt-5.4",
        "gpt-5.4-mini",
        "model-4-6",
        "model-4-10",
        "model-5",
        "x1y",
        "x10y",
    ]


def test_encode_yaml_layout() -> None:
    doc = {
        "schema": 5,
        "models": {
            "anthropic/claude-sonnet-4-6": {
                "triggers": {
                    "ran_at": "2026-05-01T10:00:00Z",
                    "results": [
                        {"query": "write a poem", "should_trigger": True, "hits": 2},
                        {"query": "no\nway", "should_trigger": False, "tags": ["a", "b"]},
                    ],
                    "previous": None,
                    "nested": [[1, [2, 3]], {"x": [{"y": None}]}, [], {}],
                }
            }
        },
        "plugin": "demo",
    }
    assert encode_yaml(doc) == (
        "models:\n"
        "  anthropic/claude-sonnet-4-6:\n"
        "    triggers:\n"
        "      nested:\n"
        "        - - 1\n"
        "          - - 2\n"
        "            - 3\n"
        "        - x:\n"
        '            - "y": null\n'
        "        - []\n"
        "        - {}\n"
        "      previous: null\n"
        '      ran_at: "2026-05-01T10:00:00Z"\n'
        "      results:\n"
        "        - hits: 2\n"
        "          query: write a poem\n"
        "          should_trigger: true\n"
        "        - query: |-\n"
        "            no\n"
        "            way\n"
        "          should_trigger: false\n"
        "          tags:\n"
        "            - a\n"
        "            - b\n"
        "plugin: demo\n"
        "schema: 5\n"
    )


def test_encode_yaml_complex_keys() -> None:
    # Multi-line keys and keys over 128 bytes are not simple keys: "? key" / ": value".
    doc = {"a\nb": {"c": 1}, "x" * 129: 1, "y" * 128: 2, "k\u2028z": [1, 2]}
    assert encode_yaml(doc) == (
        "? |-\n  a\n  b\n: c: 1\n"
        "? 'k\u2028  z'\n: - 1\n  - 2\n"
        f"? {'x' * 129}\n: 1\n"
        f"{'y' * 128}: 2\n"
    )


def test_encode_yaml_top_level_values() -> None:
    assert encode_yaml(["top", {"a": 1}]) == "- top\n- a: 1\n"
    assert encode_yaml("just\na string\n") == "|\n  just\n  a string\n"
    assert encode_yaml(None) == "null\n"


def test_yaml_round_trip_preserves_the_data_model() -> None:
    v = dec(RESULTS_LIKE_JSON, "json")
    back = dec(encode_yaml(v), "yaml")
    assert back == v
    assert encode_json(back) != RESULTS_LIKE_JSON  # yaml sorts keys: struct order is not kept
    assert encode_json(back) == encode_json(_sort_all(v))


def _sort_all(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _sort_all(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [_sort_all(x) for x in v]
    return v


# ------------------------------------------------------------------------------------------
# Documents


def test_encode_document_formats() -> None:
    v = {"b": 1, "a": "x"}
    assert encode_document(v, "json", encoding.RESULTS_COMMENT) == encode_json(v)
    assert encode_document(v, "jsonc", encoding.RESULTS_COMMENT) == (
        "// Maintained by evolve run; do not edit by hand.\n" + encode_json(v)
    )
    assert encode_document(v, "yaml", encoding.ROLLUP_COMMENT) == (
        "# Generated by evolve; do not edit by hand. Regenerate with: evolve report\na: x\nb: 1\n"
    )
    assert encode_document(v, "yaml") == "a: x\nb: 1\n"
    with pytest.raises(ValueError, match="unknown document format"):
        encode_document(v, "toml")  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", ["json", "jsonc", "yaml"])
def test_written_documents_decode_back(fmt: str) -> None:
    v = dec(RESULTS_LIKE_JSON, "json")
    text = encode_document(v, fmt, encoding.RESULTS_COMMENT)  # type: ignore[arg-type]
    assert dec(text, fmt) == v


def test_corpus_results_round_trip_byte_identical(corpus: Path) -> None:
    files = sorted(corpus.glob("plugins/*/evals/*/results.json"))
    assert files
    for p in files:
        raw = p.read_bytes()
        assert encode_json(decode_path(p)).encode() == raw, p


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("a<b>&c", '"a\\u003cb\\u003e\\u0026c"'),
        ("line\u2028sep\u2029", '"line\\u2028sep\\u2029"'),
        ("\x1b[0m\n", '"\\u001b[0m\\n"'),
        ("é日", '"é日"'),
        ("bad\ud800", '"bad\ufffd"'),  # invalid UTF-8 on the Go side becomes U+FFFD
    ],
)
def test_go_json_string(value: str, want: str) -> None:
    assert encoding.go_json_string(value) == want


def test_encode_json_compact_is_go_marshal() -> None:
    doc = {"id": "1", "n": 10.0, "f": 0.5, "ok": True, "none": None, "list": [1, "<"], "o": {}}
    want = '{"id":"1","n":10,"f":0.5,"ok":true,"none":null,"list":[1,"\\u003c"],"o":{}}'
    assert encoding.encode_json_compact(doc) == want
    with pytest.raises(TypeError):
        encoding.encode_json_compact({"x": object()})
