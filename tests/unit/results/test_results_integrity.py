"""Issue 9 items 2 and 7: results files of the wrong shape are errors and never overwritten.

A results file that is not a schema-5 (or migratable 3/4) document of the right shape is an
error naming the file and the first wrong field, at every entry point (loading, the writer,
`run … --dry-run`, `report`), and is left byte-identical; only `--overwrite-unreadable-results`
removes it. Also: a `results.json` directory is reported clearly, and a mode-444 file keeps its
mode across an atomic rewrite.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest
from tests.helpers.agents import csv_trigger_repo

from evolve_action import encoding as fsio
from evolve_action import results as R
from evolve_action.cli import main
from evolve_action.errors import SpecError
from evolve_action.repo import parse_frontmatter

WRONG_SHAPES: list[tuple[str, str, str]] = [
    ("results.json", '{"schema": "5", "models": {}}', 'schema: expected an integer, found a string ("5")'),
    ("results.json", "[]", "the top level is an array, not an object"),
    ("results.json", "null", "the top level is null, not an object"),
    ("results.json", "{}", "schema: missing"),
    ("results.json", '{"schema": true}', "schema: expected an integer, found a boolean"),
    ("results.json", '{"schema": 4, "models": "garbage"}', "models: a schema-4 file has no models field"),
    ("results.json", '{"schema": 5, "models": "garbage"}', "results.models: expected an object"),
    ("results.json", '{"schema": 5, "models": {"m": {"evals": []}}}', "results.models.m.evals: expected an object"),
    ("results.json", '{"schema": 2, "models": {}}', "schema: 2 is too old"),
    ("results.json", '"just a string"', "the top level is a string"),
    ("results.yaml", 'schema: "5"\nmodels: {}\n', 'schema: expected an integer, found a string ("5")'),
    ("results.yaml", "- 1\n- 2\n", "the top level is an array"),
]  # fmt: skip
IDS = [
    "schema-string",
    "array",
    "null",
    "empty-object",
    "schema-bool",
    "v4-models-garbage",
    "v5-models-garbage",
    "v5-entry-kind",
    "too-old",
    "string",
    "yaml-schema-string",
    "yaml-list",
]

MODEL = "anthropic/claude-sonnet-4-6"


def _bad_dir(tmp_path: Path, name: str, text: str) -> tuple[Path, Path]:
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    path = d / name
    path.write_text(text)
    return d, path


@pytest.mark.parametrize(("name", "text", "field"), WRONG_SHAPES, ids=IDS)
def test_wrong_shape_is_an_error_naming_file_and_field(
    tmp_path: Path, name: str, text: str, field: str
) -> None:
    d, path = _bad_dir(tmp_path, name, text)
    with pytest.raises(SpecError) as info:
        R.load_results(d)
    assert info.value.path == path
    assert field in info.value.message
    assert info.value.hint is not None and R.OVERWRITE_FLAG in info.value.hint
    assert path.read_text() == text


@pytest.mark.parametrize(("name", "text", "field"), WRONG_SHAPES, ids=IDS)
def test_the_writer_never_overwrites_a_wrong_shape(
    tmp_path: Path, name: str, text: str, field: str
) -> None:
    d, path = _bad_dir(tmp_path, name, text)
    writer = R.ResultsWriter(d, None, "json", plugin="p", skill="s")
    rec = R.EvalUnitRecord(None, header=R.EntryHeader(), valid_ids=["1"], planned=["1"])
    with pytest.raises(SpecError, match=r"not a schema-5 results file|wrong kind"):
        writer.put_evals(MODEL, rec.add(R.EvalResult(id="1", passed=True)))
    assert sorted(p.name for p in d.iterdir()) == [name]
    assert path.read_text() == text


def _cli(args: list[str], cwd: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, environ={}, stdout=out, stderr=err, cwd=cwd)
    return code, out.getvalue() + err.getvalue()


@pytest.mark.parametrize(("name", "text", "field"), WRONG_SHAPES[:6], ids=IDS[:6])
def test_run_triggers_stops_on_a_wrong_shape_and_leaves_it(
    tmp_path: Path, name: str, text: str, field: str
) -> None:
    root = csv_trigger_repo(tmp_path / "repo", [("Tidy this CSV", True)])
    path = root / "evals" / "csv-clean" / name
    path.write_text(text)
    for extra in ([], ["--overwrite-unreadable-results"]):  # a dry run never removes anything
        code, output = _cli(
            ["run", "triggers", "--root", str(root), "--model", "claude-sonnet-4-6", "--dry-run",
             *extra],
            tmp_path,
        )  # fmt: skip
        assert code == 2, output
        assert f"evals/csv-clean/{name}" in output and field in output
        assert "starting fresh" not in output
        assert path.read_text() == text


def test_report_names_every_unusable_file_and_writes_nothing(tmp_path: Path) -> None:
    root = csv_trigger_repo(tmp_path / "repo", [("Tidy this CSV", True)])
    (root / "skills/other/SKILL.md").parent.mkdir(parents=True)
    (root / "skills/other/SKILL.md").write_text("---\nname: other\ndescription: d\n---\n")
    (root / "evals/other").mkdir(parents=True)
    (root / "evals/other/triggers.json").write_text(
        '{"triggers": [{"query": "q", "should_trigger": true}]}'
    )
    first = root / "evals/csv-clean/results.json"
    second = root / "evals/other/results.json"
    first.write_text('{"schema": "5"}')
    second.write_text("[]")
    code, output = _cli(["report", "--root", str(root)], tmp_path)
    assert code == 2, output
    assert "evals/csv-clean/results.json" in output and "evals/other/results.json" in output
    assert "cannot use 2 results files" in output
    assert not (root / "EVALUATION.md").exists()
    assert first.read_text() == '{"schema": "5"}' and second.read_text() == "[]"


def test_report_on_a_results_directory_says_so(tmp_path: Path) -> None:
    root = csv_trigger_repo(tmp_path / "repo", [("Tidy this CSV", True)])
    (root / "evals/csv-clean/results.json").mkdir()
    code, output = _cli(["report", "--root", str(root)], tmp_path)
    assert code == 2, output
    assert "evals/csv-clean/results.json" in output
    assert "is a directory, not a results file" in output


def test_discard_unusable_removes_only_unusable_files(tmp_path: Path) -> None:
    d, path = _bad_dir(tmp_path, "results.json", '{"schema": "5"}')
    assert R.discard_unusable(d) == path
    assert not path.exists()
    assert R.discard_unusable(d) is None  # nothing left
    path.write_text('{"schema": 5, "plugin": "p", "skill": "s", "models": {}}\n')
    assert R.discard_unusable(d) is None and path.exists()  # usable: kept
    path.write_text('{"schema": 6}')
    with pytest.raises(SpecError, match="newer evolve"):
        R.discard_unusable(d)
    assert path.read_text() == '{"schema": 6}'  # a newer tool's file is never removed


def test_mode_444_results_file_keeps_its_mode_after_an_atomic_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text("{}\n")
    path.chmod(0o444)
    fsio.atomic_write_text(path, '{"schema": 5}\n')
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert path.read_text() == '{"schema": 5}\n'
    fresh = tmp_path / "new.json"
    fsio.atomic_write_text(fresh, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644 & ~umask


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ('"csv\\u002dreport"', "csv-report"),
        ('"csv\\x2dreport"', "csv-report"),
        ("'it''s'", "it's"),
        ('"tab\\there"', "tab\there"),
        ("plain-name", "plain-name"),
    ],
)
def test_frontmatter_names_decode_yaml_escapes(raw: str, name: str) -> None:
    front = parse_frontmatter(f"---\nname: {raw}\ndescription: d\n---\nbody\n")
    assert front is not None and front.fields["name"] == name
