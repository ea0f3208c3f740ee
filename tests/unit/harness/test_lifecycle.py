"""The run's scratch dir (locked, removed, swept when its owner is gone) and the signal mapping."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evolve_action import harness as lifecycle


def test_scratch_is_used_then_removed(tmp_path: Path) -> None:
    assert lifecycle.scratch_dir() is None
    with lifecycle.scratch(tmp_path) as path:
        assert path is not None and lifecycle.scratch_dir() == path
        assert path.name.startswith(f"evolve-action.{os.getpid()}.")
        (path / "evals.x").mkdir()
        assert lifecycle.sweep_stale(tmp_path) == []  # a live run is never swept
    assert lifecycle.scratch_dir() is None
    assert list(tmp_path.iterdir()) == []


def test_kept_scratch_survives_and_is_never_swept(tmp_path: Path) -> None:
    with lifecycle.scratch(tmp_path) as path:
        lifecycle.keep_scratch()
    assert path is not None and path.is_dir()
    assert lifecycle.sweep_stale(tmp_path) == []


def test_dead_owner_is_swept_other_dirs_left_alone(tmp_path: Path) -> None:
    code = (
        "import os,sys,pathlib\n"
        "from evolve_action import harness\n"
        "with harness.scratch(pathlib.Path(sys.argv[1])) as p:\n"
        "    (p / 'claude-home.x').mkdir()\n"
        "    os._exit(9)\n"  # dies without cleaning up, like kill -9
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=False)
    (tmp_path / "evolve-action.1.notours").mkdir()  # no lock file: not ours to judge
    (tmp_path / "baseline.abc").mkdir()
    stale = [
        p
        for p in tmp_path.iterdir()
        if p.name.startswith("evolve-action.") and p.name != "evolve-action.1.notours"
    ]
    assert len(stale) == 1
    assert lifecycle.sweep_stale(tmp_path) == stale
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.abc", "evolve-action.1.notours"]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_terminating_signals_cancel_like_sigint(sig: signal.Signals, code: int) -> None:
    cancelled: list[bool] = []
    before = signal.getsignal(sig)

    async def engine() -> None:
        try:
            os.kill(os.getpid(), sig)
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    with lifecycle.termination_signals() as caught, pytest.raises(KeyboardInterrupt):
        asyncio.run(engine())
    assert cancelled == [True]
    assert caught.exit_code == code
    assert signal.getsignal(sig) == before  # restored


def test_unwritable_tmpdir_means_no_scratch_not_a_failure(tmp_path: Path) -> None:
    with lifecycle.scratch(tmp_path / "missing") as path:
        assert path is None and lifecycle.scratch_dir() is None
