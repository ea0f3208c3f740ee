"""Fixed session paths (issue 40 item 1): bound under bubblewrap, slots without it; a session's
files always end where they were, and a slot keeps nothing for the next session; a workspace is
placed for one live session at a time, a shared one copied per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve_action.harness import _lifecycle as lifecycle
from evolve_action.harness._placement import place, session_copy


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


def test_a_workspace_another_live_session_holds_is_never_shared(tmp_path: Path) -> None:
    """Each session runs as a uid of its own and is handed its workspace: a shared one would be
    taken from the other session (or readable by it), so placing it twice is an error."""
    with lifecycle.scratch(tmp_path):
        ws, cfg = dirs(tmp_path, "a")
        cfg2 = tmp_path / "cfg.second"
        cfg2.mkdir()
        for sandboxed in (True, False):
            with (
                place(ws, cfg, sandboxed=sandboxed),
                pytest.raises(ValueError, match="another live session"),
                place(ws, cfg2, sandboxed=sandboxed),
            ):
                pass
            assert (ws / "sub" / "f.txt").read_text() == "a" and cfg.is_dir() and cfg2.is_dir()


def test_sessions_sharing_a_workspace_each_get_a_private_copy_of_the_same_bytes(
    tmp_path: Path,
) -> None:
    with lifecycle.scratch(tmp_path):
        ws, _ = dirs(tmp_path, "a")
        (ws / "link").symlink_to("sub/f.txt")
        (ws / "sub" / "f.txt").chmod(0o640)
        one, two = session_copy(ws), session_copy(ws)
        assert len({ws, one, two}) == 3 and one.parent == ws.parent
        for copy in (one, two):
            assert (copy / "sub" / "f.txt").read_text() == "a"
            assert (copy / "link").readlink() == Path("sub/f.txt")  # a link stays a link
            assert (copy / "sub" / "f.txt").stat().st_mode & 0o777 == 0o640
            assert (copy / "sub" / "f.txt").stat().st_mtime == (ws / "sub/f.txt").stat().st_mtime
        (one / "sub" / "f.txt").write_text("changed by one session")
        assert (two / "sub" / "f.txt").read_text() == "a" == (ws / "sub" / "f.txt").read_text()
        with place(one, tmp_path / "cfg.a", sandboxed=False) as p1:
            assert (p1.workspace / "sub" / "f.txt").read_text() == "changed by one session"


def test_a_failed_session_still_gives_everything_back(tmp_path: Path) -> None:
    with lifecycle.scratch(tmp_path):
        ws, cfg = dirs(tmp_path, "a")
        with pytest.raises(RuntimeError), place(ws, cfg, sandboxed=False):
            raise RuntimeError("the session crashed")
        assert (ws / "sub" / "f.txt").read_text() == "a" and cfg.is_dir()
