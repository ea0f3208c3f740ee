"""Atomic writes and sibling clean-up (report spec §0.1)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from evolve_action.encoding import atomic_write_text, remove_siblings, write_text


def test_atomic_write_creates_dirs_and_leaves_no_temp(tmp_path: Path) -> None:
    p = tmp_path / "a" / "b" / "results.json"
    atomic_write_text(p, '{\n  "é": 1\n}\n')
    assert p.read_bytes() == '{\n  "é": 1\n}\n'.encode()
    assert not (p.parent / "results.json.tmp").exists()
    assert stat.S_IMODE(p.stat().st_mode) & 0o600 == 0o600
    atomic_write_text(p, "second\n")
    assert p.read_text() == "second\n"


def test_atomic_write_keeps_newlines_verbatim(tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    atomic_write_text(p, "a\nb\r\n")
    assert p.read_bytes() == b"a\nb\r\n"


def test_atomic_write_failure_keeps_the_old_file(tmp_path: Path) -> None:
    p = tmp_path / "results.json"
    p.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(p, "bad \ud800")
    assert p.read_text() == "old"
    assert not (tmp_path / "results.json.tmp").exists()


def test_write_text(tmp_path: Path) -> None:
    p = tmp_path / "d" / "EVALUATION.md"
    write_text(p, "# r\n")
    assert p.read_bytes() == b"# r\n"


def test_remove_siblings(tmp_path: Path) -> None:
    for ext in ("json", "jsonc", "yaml", "yml"):
        (tmp_path / f"results.{ext}").write_text("x")
    (tmp_path / "results.md").write_text("keep")
    (tmp_path / "EVALUATION.json").write_text("keep")
    kept = tmp_path / "results.yaml"
    removed = remove_siblings(kept)
    assert sorted(p.name for p in removed) == ["results.json", "results.jsonc", "results.yml"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "EVALUATION.json",
        "results.md",
        "results.yaml",
    ]
    assert remove_siblings(kept) == []


def test_remove_siblings_with_explicit_stem_and_dirs(tmp_path: Path) -> None:
    (tmp_path / "EVALUATION.yml").write_text("x")
    (tmp_path / "EVALUATION.jsonc").mkdir()  # directories are left alone
    removed = remove_siblings(
        tmp_path / "EVALUATION.json", stem="EVALUATION", exts=["yml", "jsonc"]
    )
    assert [p.name for p in removed] == ["EVALUATION.yml"]
    assert (tmp_path / "EVALUATION.jsonc").is_dir()
