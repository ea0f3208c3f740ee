"""QA regressions for results-file I/O: broken files are errors (never silently replaced), and
unwritable results stop a run before any agent session with a clear message."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evolve_action import results as R
from evolve_action.errors import SpecError

CONFLICT = '{\n<<<<<<< HEAD\n  "schema": 5\n=======\n  "schema": 5\n>>>>>>> theirs\n}\n'


@pytest.mark.parametrize(
    ("name", "data", "line", "message"),
    [
        ("results.json", CONFLICT.encode(), 2, "unresolved git merge conflict"),
        ("results.yaml", b"schema: 5\nmodels:\n<<<<<<< HEAD\n", 3, "unresolved git merge conflict"),
        ("results.json", b'{"schema": 5,\n "models": {', 2, "stored results do not parse"),
        ("results.yaml", b"schema: 5\nmodels: [\n", 3, "stored results do not parse"),
        ("results.json", b'{"schema": 5, "x": "\xff"}', 1, "stored results do not parse"),
        (
            "results.json",
            b'{"schema": 5, "models": {"k": {"triggers": {"results": 3}}}}',
            None,
            "schema 5 results hold a value of the wrong kind",
        ),
        ("results.json", b'{"schema": 6}', None, "results file is schema 6"),
    ],
    ids=["conflict-json", "conflict-yaml", "syntax-json", "syntax-yaml", "not-utf8", "kind-5",
         "newer"],
)  # fmt: skip
def test_broken_results_are_an_error_and_left_untouched(
    tmp_path: Path, name: str, data: bytes, line: int | None, message: str
) -> None:
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    (d / name).write_bytes(data)
    with pytest.raises(SpecError) as info:
        R.load_results(d, root=tmp_path)
    assert message in info.value.message
    assert info.value.path == d / name
    assert info.value.line == line
    if "newer evolve" not in info.value.message:
        assert info.value.hint is not None and R.OVERWRITE_FLAG in info.value.hint
    assert (d / name).read_bytes() == data


@pytest.mark.parametrize("text", ['{"schema": 2, "models": {}}', "[]", '{"models": {}}', "7"])
def test_old_or_schemaless_results_are_an_error_now(tmp_path: Path, text: str) -> None:
    # Issue 9: nothing "starts fresh" any more; the file is an error and left untouched.
    d = tmp_path / "evals" / "s"
    d.mkdir(parents=True)
    (d / "results.json").write_text(text)
    with pytest.raises(SpecError, match="not a schema-5 results file"):
        R.load_results(d, root=tmp_path)
    assert (d / "results.json").read_text() == text


def test_check_writable_accepts_a_normal_directory(tmp_path: Path) -> None:
    d = tmp_path / "p" / "evals" / "s"
    d.mkdir(parents=True)
    (d / "results.yaml").write_text("schema: 5\n")
    R.check_writable(d, "json")  # accepted, and nothing written by the check
    assert sorted(p.name for p in d.iterdir()) == ["results.yaml"]
    assert (d / "results.yaml").read_text() == "schema: 5\n"
    writer = R.ResultsWriter(d, None, "json", plugin="p", skill="s")
    path = writer.replace_file(writer.file)  # the write the check vouched for succeeds
    assert path == d / "results.json"
    assert R.load_results(d).file == writer.file
    assert sorted(p.name for p in d.iterdir()) == ["results.json"]


@pytest.mark.parametrize(
    "case", ["missing-dir", "dir-not-writable", "file-read-only", "file-is-dir"]
)
def test_check_writable_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    d = tmp_path / "evals" / "s"
    if case != "missing-dir":
        d.mkdir(parents=True)
    if case == "file-is-dir":
        (d / "results.json").mkdir()
    if case in ("dir-not-writable", "file-read-only"):
        (d / "results.jsonc").write_text("{}")
        blocked = d if case == "dir-not-writable" else d / "results.jsonc"
        real = os.access
        monkeypatch.setattr(
            os, "access", lambda p, mode: False if Path(p) == blocked else real(p, mode)
        )
    with pytest.raises(SpecError) as info:
        R.check_writable(d, "json", root=tmp_path)
    text = info.value.render(tmp_path)
    assert "cannot write results" in text and "nothing was written" in text


def test_writer_turns_os_errors_into_a_spec_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: Path, text: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(R.fsio, "atomic_write_text", refuse)
    writer = R.ResultsWriter(tmp_path, None, "json", plugin="p", skill="s")
    with pytest.raises(SpecError, match="cannot write results: Permission denied") as info:
        writer.replace_file(writer.file)
    assert info.value.path == tmp_path / "results.json"
    assert info.value.hint is not None and "--new" in info.value.hint
