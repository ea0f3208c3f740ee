"""Repository model: layout detection, root resolution, eval sets, frontmatter, manifests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evolve_action.encoding import split_lines
from evolve_action.errors import SpecError, UsageError
from evolve_action.repo import (
    NOT_FOUND,
    classify,
    discover,
    go_str,
    parse_frontmatter,
    parse_layout,
    read_manifest,
    read_text,
    rel_path,
)


def write(root: Path, rel: str, text: str | None = None) -> Path:
    """`text` at `root/rel`; by default `{}`, or for a plugin.json a manifest naming its plugin
    (Claude Code refuses a plugin.json without a `name`: `manifest_refusals`)."""
    path = root / rel
    if text is None:
        named = path.name == "plugin.json" and path.parent.name == ".claude-plugin"
        text = json.dumps({"name": path.parent.parent.name}) if named else "{}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


MARKERS = {
    "marketplace": ".claude-plugin/marketplace.json",
    "multi": "plugins/a/.claude-plugin/plugin.json",
    "single": ".claude-plugin/plugin.json",
}


@pytest.mark.parametrize(
    ("files", "forced", "want"),
    [
        ([MARKERS["marketplace"]], None, "marketplace"),
        ([MARKERS["multi"]], None, "multi"),
        ([MARKERS["single"]], None, "single"),
        ([MARKERS["marketplace"], MARKERS["single"]], None, "marketplace"),
        ([MARKERS["multi"], MARKERS["single"]], None, "multi"),
        ([MARKERS["single"], "plugins/a/skills/x/SKILL.md"], None, "single"),
        ([MARKERS["marketplace"], MARKERS["multi"]], "multi", "multi"),
        ([MARKERS["marketplace"]], "single", None),
        (["README.md"], None, None),
        (["plugins/.hidden/.claude-plugin/plugin.json"], None, "multi"),
    ],
    ids=[
        "marketplace",
        "multi",
        "single",
        "marketplace-wins-over-stray-root-manifest",
        "multi-before-single",
        "single-with-plugins-dir-without-manifests",
        "forced-multi",
        "forced-single-absent",
        "nothing",
        "hidden-plugin-dir-counts",
    ],
)
def test_classify(tmp_path: Path, files: list[str], forced: str | None, want: str | None) -> None:
    for rel in files:
        write(tmp_path, rel)
    assert classify(tmp_path, parse_layout(forced)) == want


@pytest.mark.parametrize("value", [None, "", "auto"])
def test_parse_layout_auto(value: str | None) -> None:
    assert parse_layout(value) is None


def test_parse_layout_unknown() -> None:
    with pytest.raises(UsageError, match=r'unknown layout "flat" \(want auto, marketplace'):
        parse_layout("flat")


def test_discover_walks_up(tmp_path: Path) -> None:
    write(tmp_path, MARKERS["marketplace"])
    write(tmp_path, "plugins/b/skills/s/SKILL.md", "x")
    write(tmp_path, "plugins/a/.claude-plugin/plugin.json")
    repo = discover(None, tmp_path / "plugins/b/skills/s")
    assert repo.root == tmp_path
    assert repo.layout == "marketplace"
    assert [p.name for p in repo.plugins] == ["a", "b"]
    assert [p.rel for p in repo.plugins] == ["plugins/a", "plugins/b"]


def test_walk_stops_at_the_first_plugin_like_evolve(tmp_path: Path) -> None:
    write(tmp_path, MARKERS["marketplace"])
    write(tmp_path, "plugins/a/.claude-plugin/plugin.json", '{"name": "a"}')
    (tmp_path / "plugins/a/skills").mkdir(parents=True)
    repo = discover(None, tmp_path / "plugins/a/skills")
    assert (repo.root, repo.layout) == (tmp_path / "plugins/a", "single")


def test_discover_walk_respects_forced_layout(tmp_path: Path) -> None:
    write(tmp_path, MARKERS["marketplace"])
    inner = tmp_path / "sub"
    write(inner, MARKERS["single"], '{"name": "solo"}')
    assert discover(None, inner).layout == "single"
    assert discover(None, inner, "marketplace").root == tmp_path


def test_discover_nothing_found(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as err:
        discover(None, tmp_path)
    assert err.value.message == NOT_FOUND


def test_discover_root_not_dir(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a directory"):
        discover(Path("missing"), tmp_path)


def test_discover_root_not_recognized(tmp_path: Path) -> None:
    write(tmp_path, MARKERS["marketplace"])
    (tmp_path / "sub").mkdir()
    with pytest.raises(SpecError, match="is not a recognized plugin repository"):
        discover(Path("sub"), tmp_path)


def test_root_is_relative_to_cwd_and_not_resolved(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write(real, MARKERS["single"])
    (tmp_path / "link").symlink_to(real)
    repo = discover(Path("link"), tmp_path)
    assert repo.root == tmp_path / "link"


@pytest.mark.parametrize(
    ("manifest", "want"),
    [('{"name": "solo"}', "solo"), ("[1]", "root"), ("{bad", "root")],
    ids=["name", "non-object", "invalid"],
)
def test_single_plugin_name(tmp_path: Path, manifest: str, want: str) -> None:
    root = tmp_path / "root"
    write(root, MARKERS["single"], manifest)
    repo = discover(root, tmp_path)
    assert [(p.name, p.rel) for p in repo.plugins] == [(want, ".")]
    assert repo.plugins[0].skills_dir == root / "skills"


def test_a_single_plugin_whose_name_claude_code_refuses_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root, MARKERS["single"], '{"name": 3}')
    repo = discover(root, tmp_path)
    assert (repo.plugins, [p.name for p in repo.refused]) == ((), ["root"])
    (problem,) = repo.problems
    assert (problem.check, problem.pointer) == ("plugin.refused", "/name")
    assert "expected string, received number" in problem.message


def test_plugin_enumeration_skips_files_and_symlinks(tmp_path: Path) -> None:
    write(tmp_path, MARKERS["multi"])
    write(tmp_path, "plugins/README.md", "x")
    (tmp_path / "plugins/nomanifest").mkdir()
    (tmp_path / "plugins/zlink").symlink_to(tmp_path / "plugins/a")
    repo = discover(tmp_path, tmp_path)
    assert [p.name for p in repo.plugins] == ["a", "nomanifest"]


def test_missing_plugins_dir_gives_zero_plugins(tmp_path: Path) -> None:
    write(tmp_path, MARKERS["marketplace"])
    assert discover(tmp_path, tmp_path).plugins == ()


def test_eval_sets(tmp_path: Path) -> None:
    write(tmp_path, MARKERS["multi"])
    write(tmp_path, "plugins/a/evals/s2/evals.yaml", "evals: []")
    write(tmp_path, "plugins/a/evals/s1/triggers.json", '{"triggers": []}')
    write(tmp_path, "plugins/a/evals/empty/results.json")
    write(tmp_path, "plugins/a/evals/file.json")
    write(tmp_path, "plugins/b/.claude-plugin/plugin.json")
    write(tmp_path, "plugins/b/evals/s0/evals.jsonc", '{"evals": []}')
    sets = discover(tmp_path, tmp_path).eval_sets()
    assert [(s.plugin, s.skill) for s in sets] == [("a", "s1"), ("a", "s2"), ("b", "s0")]
    first = sets[0]
    assert first.triggers_path == tmp_path / "plugins/a/evals/s1/triggers.json"
    assert first.evals_path is None
    assert first.skill_dir == tmp_path / "plugins/a/skills/s1"
    assert first.results_dir == tmp_path / "plugins/a/evals/s1"


def test_eval_sets_ambiguous(tmp_path: Path) -> None:
    write(tmp_path, MARKERS["single"])
    write(tmp_path, "evals/s/evals.json", '{"evals": []}')
    write(tmp_path, "evals/s/evals.yaml", "evals: []")
    with pytest.raises(SpecError, match="ambiguous evals: found"):
        discover(tmp_path, tmp_path).eval_sets()


def test_eval_sets_are_read_once_per_model(tmp_path: Path) -> None:
    """A model is a snapshot: results written later never change its eval sets (nor do new
    definitions: a fresh `discover` sees them), and a reading error is raised on every call."""
    write(tmp_path, MARKERS["multi"])
    write(tmp_path, "plugins/a/evals/s1/triggers.json", '{"triggers": []}')
    write(tmp_path, "plugins/a/evals/s2/evals.json", '{"evals": []}')
    write(tmp_path, "plugins/a/evals/s2/evals.yaml", "evals: []")  # ambiguous
    repo = discover(tmp_path, tmp_path)
    for _ in range(2):
        with pytest.raises(SpecError, match="ambiguous evals: found"):
            repo.eval_sets()
    (tmp_path / "plugins/a/evals/s2/evals.yaml").unlink()
    repo = discover(tmp_path, tmp_path)
    sets = repo.eval_sets()
    assert [s.skill for s in sets] == ["s1", "s2"]
    sets.clear()  # a caller's list is its own
    write(tmp_path, "plugins/a/evals/s1/results.json")
    write(tmp_path, "plugins/a/evals/s3/evals.json", '{"evals": []}')
    assert [s.skill for s in repo.eval_sets()] == ["s1", "s2"]
    assert [s.skill for s in discover(tmp_path, tmp_path).eval_sets()] == ["s1", "s2", "s3"]


def test_eval_sets_with_unbound_notes_keep_their_readings(tmp_path: Path) -> None:
    """Discovery's notes about unbound skill-creator files and the eval sets of the model it
    returns come from one reading of the plugin- and root-level files."""
    write(tmp_path, MARKERS["multi"])
    write(tmp_path, "plugins/a/skills/s/SKILL.md", "---\nname: s\n---\n")
    write(tmp_path, "plugins/a/skills/t/SKILL.md", "---\nname: t\n---\n")
    write(tmp_path, "evals/evals.json", '{"evals": []}')  # two skills, no skill_name: unbound
    write(tmp_path, "plugins/a/evals/evals.json", '{"skill_name": "s", "evals": []}')
    repo = discover(tmp_path, tmp_path)
    assert any(n.startswith("note: evals/evals.json looks like") for n in repo.notices)
    (tmp_path / "plugins/a/evals/evals.json").unlink()
    assert [(s.skill, s.evals_path) for s in repo.eval_sets()] == [
        ("s", tmp_path / "plugins/a/evals/evals.json")
    ]


def test_skills_glob(tmp_path: Path) -> None:
    write(tmp_path, MARKERS["single"])
    write(tmp_path, "skills/b/SKILL.md", "x")
    write(tmp_path, "skills/a/SKILL.md", "x")
    write(tmp_path, "skills/c/README.md", "x")
    skills = discover(tmp_path, tmp_path).skills()
    assert [s.name for s in skills] == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "fields", "lines"),
    [
        ("---\nname: a\ndescription: b\n---\nbody", {"name": "a", "description": "b"}, {"name": 2}),
        ("  ---  \r\nname: 'q'\r\n---\r\n", {"name": "q"}, {"name": 2}),
        ("---\ndescription: >\n  folded\n  text\n---\n", {"description": "folded text\n"}, {}),
        (
            "---\nname: a\ndescription: |-\n  Use when x.\n\n  Second.\nlicense:\n---\n",
            {"name": "a", "description": "Use when x.\n\nSecond.", "license": ""},
            {"description": 3, "license": 7},
        ),
        (
            "---\n# a comment\nname: a  # trailing comment\ndescription: 'it''s\n  two lines'\n---\n",
            {"name": "a", "description": "it's two lines"},
            {"name": 3, "description": 4},
        ),
        ("---\n1bad: x\nok_key-2:   spaced  \n---\n", {"1bad": "x", "ok_key-2": "spaced"}, {}),
        ("---\nname:\n---\n", {"name": ""}, {"name": 2}),
        (
            "---\nname: 12\nflag: true\nmetadata:\n  a: b\n---\n",
            {"name": "12", "flag": "true", "metadata": ""},
            {"metadata": 4},
        ),
        ("---\n# only a comment\n---\n", {}, {}),
        (
            "---\nname: a\ndescription: Style: ruff is the linter\n---\n",
            {"name": "a", "description": "Style: ruff is the linter"},
            {"description": 3},
        ),
    ],
    ids=[
        "basic",
        "crlf-and-quotes",
        "folded",
        "literal-strip",
        "comments-and-quoted-multiline",
        "key-syntax",
        "empty",
        "non-strings",
        "comment-only",
        "unquoted-colon-as-claude-code",
    ],
)
def test_parse_frontmatter(text: str, fields: dict[str, str], lines: dict[str, int]) -> None:
    front = parse_frontmatter(text)
    assert front is not None and front.error is None
    assert front.fields == fields
    for key, line in lines.items():
        assert front.lines[key] == line


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('---\nname: "x\'\ndescription: "d"\n---\n', 3, "expected <block end>"),
        ("---\nname: a\nname: b\n---\n", 3, 'mapping key "name" already defined at line 2'),
        ("---\n  name: indented\nname: real\n---\n", 3, "expected '<document start>'"),
        ("---\nname: a\ndescription: x\n  more: y\n---\n", 4, "mapping values are not allowed"),
        ("---\n- a\n---\n", 2, "frontmatter is a list, not a mapping"),
        ('---\nname: "bad\\qescape"\n---\n', 2, "unknown escape character 'q'"),
        ("---\nname: a\n...\nname: b\n---\n", 4, "a second YAML document"),
    ],
    ids=[
        "mismatched-quotes",
        "duplicate-key",
        "bad-indent",
        "nested-colon",
        "list",
        "bad-escape",
        "second-document",
    ],
)
def test_invalid_frontmatter_yaml(text: str, line: int, message: str) -> None:
    front = parse_frontmatter(text)
    assert front is not None
    assert (front.fields, front.error_line) == ({}, line)
    assert front.error is not None and message in front.error


@pytest.mark.parametrize(
    "text", ["", "# title\n---\n", "---\nname: x\n", "\n---\nname: x\n---\n"], ids=str
)
def test_no_frontmatter(text: str) -> None:
    assert parse_frontmatter(text) is None


@pytest.mark.parametrize(
    ("text", "want"),
    [("", []), ("a", ["a"]), ("a\n", ["a"]), ("a\n\n", ["a", ""]), ("a\r\nb\rc", ["a", "b", "c"])],
)
def test_split_lines(text: str, want: list[str]) -> None:
    assert split_lines(text) == want


def test_read_text_rejects_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "x.md"
    path.write_bytes(b"ok\nbad \xff here\n")
    with pytest.raises(SpecError) as err:
        read_text(path)
    assert err.value.line == 2
    assert err.value.message == "invalid UTF-8: byte 0xff at offset 7, line 2"


def test_read_text_rejects_huge(tmp_path: Path) -> None:
    path = tmp_path / "x.md"
    path.write_bytes(b"x" * 200)
    with pytest.raises(SpecError, match="the limit is"):
        read_text(path, limit=100)


@pytest.mark.parametrize(
    ("text", "ok", "line"),
    [
        ('{"a": 1}', True, None),
        ("[]", True, None),
        ('{\n  "a": 1,\n}', False, 3),
        ("// c\n{}", False, 1),
        ('{"a": NaN}', False, None),
        ("\ufeff{}", False, 1),
    ],
    ids=["object", "array", "trailing-comma", "comment", "nan", "bom"],
)
def test_read_manifest(tmp_path: Path, text: str, ok: bool, line: int | None) -> None:
    path = write(tmp_path, "m.json", text)
    manifest = read_manifest(path)
    assert manifest.exists
    assert manifest.ok is ok
    if not ok:
        assert manifest.error is not None and manifest.error.startswith("invalid JSON")
        assert manifest.line == line


def test_read_manifest_missing_and_directory(tmp_path: Path) -> None:
    assert not read_manifest(tmp_path / "none.json").exists
    (tmp_path / "dir.json").mkdir()
    assert not read_manifest(tmp_path / "dir.json").exists


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (None, ""),
        ("s", "s"),
        (1, "1"),
        (1.5, "1.5"),
        (2.0, "2"),
        (True, "true"),
        (["a", 1], "[a 1]"),
    ],
)
def test_go_str(value: object, want: str) -> None:
    assert go_str(value) == want


def test_rel_path(tmp_path: Path) -> None:
    assert rel_path(tmp_path, tmp_path) == "."
    assert rel_path(tmp_path, tmp_path / "a" / "b") == "a/b"
    outside = Path(os.sep) / "elsewhere" / "x"
    assert rel_path(tmp_path, outside) == outside.as_posix()
