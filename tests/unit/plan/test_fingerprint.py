"""Fingerprints (engine spec §6): the §6.6 vectors, the walk rules, fixtures, and the corpus."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from evolve_action.errors import SpecError
from evolve_action.plan import _fingerprint as fp
from evolve_action.specs import Assertion, EvalCase, parse_evals, parse_triggers


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def one_eval(raw: dict[str, object], evals_dir: Path = Path("/nonexistent/evals/s")) -> EvalCase:
    return parse_evals({"evals": [raw]}, evals_dir / "evals.json").evals[0]


# -- §6.3 / §6.6 vectors ------------------------------------------------------------------------


def test_trigger_spec_hash_verified_vector() -> None:
    got = fp.trigger_spec_hash(
        "Add doc comments to the exported functions in this Go package", True
    )
    assert got == "fd98ae88ad3a25f3fdf34c5e8ca0323cca089e6038e1a2c6d0cb49e2db891be8"


def test_trigger_spec_hash_escapes_html_and_keeps_non_ascii_raw() -> None:
    payload = fp.go_compact_json({"query": "a <b> & c é", "should_trigger": False})
    assert payload == '{"query":"a \\u003cb\\u003e \\u0026 c é","should_trigger":false}'
    got = fp.trigger_spec_hash("a <b> & c é", False)
    assert got.startswith("dca05034") and got.endswith("63be51")
    assert got == sha(payload.encode())


def test_no_frontmatter_sentinel_vector() -> None:
    assert fp.NO_FRONTMATTER == b"\x00evolve:no-frontmatter\x00" and len(fp.NO_FRONTMATTER) == 23
    expected = "2d8b2df4bd82307c80d3f0c69ef2c71eb50d57efbcb4da8cb50ca36c34c096f3"
    assert fp.trigger_content_hash(b"# no frontmatter\nbody\n") == expected


def test_eval_spec_json_hash_and_fingerprint_vector() -> None:
    case = one_eval(
        {
            "id": 1,
            "prompt": "p",
            "expectations": ["x"],
            "assertions": ["y", {"type": "command", "run": "true", "expect_exit": 0}],
        }
    )
    assert fp.eval_spec_json(case) == (
        b'{"id":"1","prompt":"p","expectations":["x"],"assertions":[{"type":"llm","text":"x"},'
        b'{"type":"llm","text":"y"},{"type":"command","run":"true","expect_exit":0}]}'
    )
    assert (
        fp.eval_spec_hash(case)
        == "04664027e4bca918a05221a50b924cb6f52ffda4e415b2b7deac2c004617c077"
    )
    assert (
        fp.eval_fingerprint(case)
        == "a38f310fa0afa898c6f20bdf6944aa867f34ad2f8d3b4f232ad3b0a090c9af38"
    )


# -- §6.1 trigger content hash ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "block"),
    [
        (b"---\nname: a\ndescription: b\n---\nbody\n", b"name: a\ndescription: b"),
        (b"---\r\nname: a\r\ndescription: b\r\n---\r\nbody", b"name: a\ndescription: b"),
        (b"---\rname: a\r---\r", b"name: a"),
        (b"  ---  \nname: a\n --- \n", b"name: a"),
        (b"---\n---\nbody\n", b""),
        (b"---\nname: a\n---\nother body entirely\n---\n", b"name: a"),
    ],
    ids=["lf", "crlf", "cr", "trimmed-fences", "empty-block", "first-closing-fence"],
)
def test_trigger_content_hash_hashes_the_frontmatter_block(text: bytes, block: bytes) -> None:
    assert fp.trigger_content_hash(text) == sha(block)


@pytest.mark.parametrize(
    "text",
    [b"", b"---\nname: a\n", b"name: a\n---\n", b"\n---\nname: a\n---\n"],
    ids=["empty", "unterminated", "no-opening", "blank-first-line"],
)
def test_trigger_content_hash_without_frontmatter_is_the_sentinel(text: bytes) -> None:
    assert fp.trigger_content_hash(text) == sha(fp.NO_FRONTMATTER)


def test_empty_frontmatter_hashes_the_empty_string() -> None:
    assert fp.trigger_content_hash(b"---\n---\n") == (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )


def test_body_edits_never_change_the_trigger_content_hash() -> None:
    a = fp.trigger_content_hash(b"---\nname: a\n---\nbody one\n")
    b = fp.trigger_content_hash(b"---\nname: a\n---\nbody two, much longer\n\n")
    assert a == b


def test_skill_content_hash_reads_the_file_and_reports_a_missing_one(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_bytes(b"---\nname: x\n---\n")
    assert fp.skill_content_hash(tmp_path / "SKILL.md") == sha(b"name: x")
    with pytest.raises(SpecError, match="no such file or directory"):
        fp.skill_content_hash(tmp_path / "missing" / "SKILL.md")


# -- §6.2 eval content hash ---------------------------------------------------------------------


def _tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def _expected_dir_hash(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for rel in sorted(files, key=lambda r: r.encode()):
        h.update(rel.encode() + b"\0" + files[rel] + b"\0")
    return h.hexdigest()


def test_eval_content_hash_walks_regular_visible_files_sorted_bytewise(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    hashed = {
        "SKILL.md": b"---\nname: skill\n---\n",
        "Z.md": b"upper sorts first",
        "reference/a.md": b"a",
        "reference/b/c.txt": b"deep",
        "scripts/run.sh": b"#!/bin/sh\n",
        "a-b.md": b"dash",
        "a/b.md": b"slash sorts after dash",
    }
    _tree(skill, hashed)
    _tree(skill, {".hidden": b"x", ".git/config": b"x", "reference/.cache/y": b"x"})
    (skill / "link.md").symlink_to(skill / "SKILL.md")
    (skill / "linkdir").symlink_to(skill / "reference", target_is_directory=True)
    assert fp.eval_content_hash(skill) == _expected_dir_hash(hashed)


def test_eval_content_hash_changes_with_any_file_but_not_modes(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    _tree(skill, {"SKILL.md": b"a", "ref.md": b"b"})
    before = fp.eval_content_hash(skill)
    (skill / "ref.md").chmod(0o600)
    assert fp.eval_content_hash(skill) == before
    (skill / "ref.md").write_bytes(b"c")
    assert fp.eval_content_hash(skill) != before


def test_eval_content_hash_of_an_empty_or_symlinked_dir_is_the_empty_hash(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert fp.eval_content_hash(empty) == sha(b"")
    real = tmp_path / "real"
    _tree(real, {"SKILL.md": b"x"})
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    assert fp.eval_content_hash(link) == sha(b"")


def test_eval_content_hash_of_a_missing_dir_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="fingerprinting skill under test"):
        fp.eval_content_hash(tmp_path / "nope")


# -- §6.4 eval spec JSON ------------------------------------------------------------------------


def test_eval_spec_json_field_order_and_omissions() -> None:
    case = one_eval(
        {
            "timeout_seconds": 30,
            "max_turns": 5,
            "assertions": [
                {"type": "file_exists", "path": "a.txt", "unknown": 1},
                {"type": "command", "run": "make", "cwd": "sub", "requires": "make"},
                {"type": "tool_call", "tool": "Bash", "pattern": "go <test>"},
            ],
            "files": ["evals/files/x.go", "fixtures/demo/go.mod"],
            "expected_output": "done",
            "prompt": "do it",
            "name": "Named",
            "id": "abc",
            "allowed_tools": "Read",
            "$schema": "ignored",
        }
    )
    assert fp.eval_spec_json(case).decode() == (
        '{"id":"abc","name":"Named","prompt":"do it","expected_output":"done",'
        '"files":["evals/files/x.go","fixtures/demo/go.mod"],'
        '"assertions":[{"type":"file_exists","path":"a.txt"},'
        '{"type":"command","run":"make","cwd":"sub","requires":"make"},'
        '{"type":"tool_call","pattern":"go \\u003ctest\\u003e","tool":"Bash"}],'
        '"max_turns":5,"timeout_seconds":30}'
    )


def test_eval_spec_json_minimal_eval_keeps_id_and_prompt() -> None:
    case = one_eval({})
    assert fp.eval_spec_json(case) == b'{"id":"","prompt":""}'


def test_expect_exit_zero_is_emitted_but_unset_is_not() -> None:
    assert Assertion(type="command", run="x", expect_exit=0).spec_object() == {
        "type": "command",
        "run": "x",
        "expect_exit": 0,
    }
    assert "expect_exit" not in Assertion(type="command", run="x").spec_object()


def test_skill_creator_typeless_assertion_hashes_as_evolve_does() -> None:
    case = one_eval({"id": 0, "prompt": "p", "assertions": [{"id": "a-1", "text": "valid JSON"}]})
    assert case.assertions[0].type == "llm"
    assert fp.eval_spec_json(case) == (
        b'{"id":"0","prompt":"p","assertions":[{"type":"","text":"valid JSON"}]}'
    )


# -- §6.5 fingerprint with fixtures ---------------------------------------------------------------


def _manual_fingerprint(case: EvalCase, parts: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    h.update(fp.eval_spec_hash(case).encode() + b"\0")
    for dest, data in sorted(parts, key=lambda p: p[0].encode()):
        h.update(dest.encode() + b"\0" + data + b"\0")
    return h.hexdigest()


def test_fingerprint_hashes_fixtures_sorted_by_destination(tmp_path: Path) -> None:
    evals_dir = tmp_path / "evals" / "s"
    _tree(evals_dir, {"files/z/main.go": b"package main\n", "fixtures/demo/go.mod": b"module x\n"})
    case = one_eval(
        {"id": "a", "prompt": "p", "files": ["files/z/main.go", "evals/fixtures/demo/go.mod"]},
        evals_dir,
    )
    assert [f.dest for f in case.fixtures] == ["z/main.go", "go.mod"]
    expected = _manual_fingerprint(
        case, [("z/main.go", b"package main\n"), ("go.mod", b"module x\n")]
    )
    assert fp.eval_fingerprint(case) == expected
    (evals_dir / "fixtures/demo/go.mod").write_bytes(b"module y\n")
    assert fp.eval_fingerprint(case) != expected


def test_fingerprint_of_a_missing_fixture_embeds_go_error_text(tmp_path: Path) -> None:
    evals_dir = tmp_path / "evals" / "s"
    evals_dir.mkdir(parents=True)
    case = one_eval({"id": "a", "prompt": "p", "files": ["files/gone.txt"]}, evals_dir)
    source = str(evals_dir / "files" / "gone.txt")  # tmp_path is absolute
    marker = (
        b"\x00evolve:fixture-error:open " + source.encode() + b": no such file or directory\x00"
    )
    assert fp.eval_fingerprint(case) == _manual_fingerprint(case, [("gone.txt", marker)])


def test_fingerprint_of_a_directory_fixture_is_a_read_error(tmp_path: Path) -> None:
    evals_dir = tmp_path / "evals" / "s"
    (evals_dir / "fixtures" / "dir").mkdir(parents=True)
    case = one_eval({"id": "a", "prompt": "p", "files": ["fixtures/dir"]}, evals_dir)
    source = str(evals_dir / "fixtures" / "dir")
    marker = b"\x00evolve:fixture-error:read " + source.encode() + b": is a directory\x00"
    assert fp.eval_fingerprint(case) == _manual_fingerprint(case, [("dir", marker)])


# -- Go compact JSON ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ('tab\tnl\ncr\rbs\\q"', '"tab\\tnl\\ncr\\rbs\\\\q\\""'),
        ("\x00\x1b\x7f", '"\\u0000\\u001b\x7f"'),
        ("\b\f", '"\\b\\f"'),
        ("\u2028\u2029", '"\\u2028\\u2029"'),
        ("<>&", '"\\u003c\\u003e\\u0026"'),
        ("日本", '"日本"'),
        ({"b": 1, "a": [True, None, 2.5, 1.0]}, '{"b":1,"a":[true,null,2.5,1]}'),
        (1e-7, "1e-7"),
        ([], "[]"),
        ({}, "{}"),
    ],
    ids=[
        "escapes",
        "controls",
        "short-escapes",
        "line-separators",
        "html",
        "unicode",
        "nested",
        "exp",
        "empty-list",
        "empty-object",
    ],
)
def test_go_compact_json(value: object, text: str) -> None:
    assert fp.go_compact_json(value) == text


# -- §6.7 modified predicate ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stored_spec", "stored_content", "fresh_spec", "fresh_content", "modified"),
    [
        ("", "", "s", "c", False),
        ("", "old", "s", "new", False),
        ("s", "c", "s", "c", False),
        ("s", "", "s", "new", False),
        ("s", "c", "t", "c", True),
        ("s", "c", "s", "d", True),
        ("s", "", "t", "c", True),
    ],
    ids=[
        "legacy",
        "legacy-content-differs",
        "same",
        "no-stored-content",
        "spec",
        "content",
        "spec-no-content",
    ],
)
def test_is_modified(
    stored_spec: str, stored_content: str, fresh_spec: str, fresh_content: str, modified: bool
) -> None:
    assert fp.is_modified(stored_spec, stored_content, fresh_spec, fresh_content) is modified


# -- the corpus: recomputed hashes agree with what evolve 0.7.0 stored ---------------------------


def _results(corpus: Path) -> list[Path]:
    return sorted(corpus.glob("plugins/*/evals/*/results.json"))


def test_corpus_trigger_hashes_match_for_up_to_date_entries(corpus: Path) -> None:
    spec_matches = entry_matches = 0
    for results_path in _results(corpus):
        stored = json.loads(results_path.read_text())
        triggers_path = results_path.parent / "triggers.json"
        spec = parse_triggers(json.loads(triggers_path.read_text()), triggers_path)
        fresh = {q.query: fp.trigger_spec_hash(q.query, q.should_trigger) for q in spec.queries}
        skill_md = results_path.parents[2] / "skills" / results_path.parent.name / "SKILL.md"
        content = fp.skill_content_hash(skill_md)
        for entry in (m["triggers"] for m in stored["models"].values() if "triggers" in m):
            up_to_date = True
            for result in entry["results"]:
                if result["query"] not in fresh:
                    up_to_date = False  # query removed since the run: genuinely stale
                    continue
                if "spec_hash" in result:  # older evolve versions did not store it
                    assert result["spec_hash"] == fresh[result["query"]], result["query"]
                    spec_matches += 1
            if up_to_date and entry.get("content_hash"):
                assert entry["content_hash"] == content, results_path
                entry_matches += 1
    assert spec_matches > 3000 and entry_matches > 200


def test_corpus_fixture_free_eval_fingerprints_match_evolve_070(corpus: Path) -> None:
    checked = 0
    for results_path in _results(corpus):
        stored = json.loads(results_path.read_text())
        evals_path = results_path.parent / "evals.json"
        spec = parse_evals(json.loads(evals_path.read_text()), evals_path)
        for entry in (m["evals"] for m in stored["models"].values() if "evals" in m):
            if entry["tool_version"] != "0.7.0":
                continue
            rows = [(r, "spec_hash") for r in entry["results"]]
            rows += [(r, "fingerprint") for r in entry.get("baseline", {}).get("results", [])]
            for row, key in rows:
                case = spec.get(row["id"])
                if case is None or case.files or key not in row:
                    continue
                assert row[key] == fp.eval_fingerprint(case), (results_path, row["id"])
                checked += 1
    assert checked > 50
