"""Fixed session paths (issue 40 item 1): bound under bubblewrap, slots without it; a session's
files always end where they were, and a slot keeps nothing for the next session."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve_action.harness import _lifecycle as lifecycle
from evolve_action.harness._placement import place


def dirs(tmp_path: Path, name: str) -> tuple[Path, Path]:
    ws, cfg = tmp_path / f"ws.{name}", tmp_path / f"cfg.{name}"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "f.txt").write_text(name)
    cfg.mkdir()
    return ws, cfg


def test_under_bubblewrap_every_session_sees_the_same_two_paths(tmp_path: Path) -> None:
    with lifecycle.scratch(tmp_path):
        a, b = dirs(tmp_path, "a"), dirs(tmp_path, "b")
        with place(*a, sandboxed=True) as pa, place(*b, sandboxed=True) as pb:
            assert (pa.workspace, pa.config_dir) == (pb.workspace, pb.config_dir)
            assert pa.binds == ((a[0], pa.workspace), (a[1], pa.config_dir))
            assert pa.workspace.is_dir() and not any(pa.workspace.iterdir())  # a mount point


def test_slots_move_the_session_in_and_back(tmp_path: Path) -> None:
    with lifecycle.scratch(tmp_path):
        ws, cfg = dirs(tmp_path, "a")
        with place(ws, cfg, sandboxed=False) as seen:
            assert seen.workspace.name == "workspace" and seen.workspace.parent.name == "slot.0"
            assert not ws.exists() and (seen.workspace / "sub" / "f.txt").read_text() == "a"
            (seen.workspace / "out.txt").write_text("written by the agent")
            (seen.config_dir / "memo").write_text("x")
            slot = seen.workspace.parent
        assert (ws / "out.txt").read_text() == "written by the agent"
        assert (cfg / "memo").is_file()
        assert not slot.exists()  # emptied between sessions
        ws2, cfg2 = dirs(tmp_path, "b")
        with place(ws2, cfg2, sandboxed=False) as again:
            assert again.workspace == seen.workspace  # the next session: the same paths


def test_a_workspace_another_session_holds_is_copied_and_the_copy_dropped(tmp_path: Path) -> None:
    with lifecycle.scratch(tmp_path):
        ws, cfg = dirs(tmp_path, "a")
        cfg2 = tmp_path / "cfg.second"
        cfg2.mkdir()
        with place(ws, cfg, sandboxed=False) as first:
            with place(ws, cfg2, sandboxed=False) as second:
                assert second.workspace.parent.name == "slot.1"
                assert (second.workspace / "sub" / "f.txt").read_text() == "a"
                (second.workspace / "scratch.txt").write_text("copy only")
            assert first.workspace.is_dir() and not ws.exists()
        assert ws.is_dir() and not (ws / "scratch.txt").exists()


def test_a_failed_session_still_gives_everything_back(tmp_path: Path) -> None:
    with lifecycle.scratch(tmp_path):
        ws, cfg = dirs(tmp_path, "a")
        with pytest.raises(RuntimeError), place(ws, cfg, sandboxed=False):
            raise RuntimeError("the session crashed")
        assert (ws / "sub" / "f.txt").read_text() == "a" and cfg.is_dir()
