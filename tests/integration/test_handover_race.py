"""Root's hand-over of a workspace to the agent uid never follows a link an agent made (issue 29).

The attack: while root hands workspace B to the agent uid, a process of that uid (another case's
`command` assertion, say) keeps swapping B's directories for symlinks to a root-only directory.
A walk that changes owners by path follows the swapped link and gives the agent that directory
(on the action's image this handed over the checkout's `.git`, token and all). Here the swap runs
as a real unprivileged process for hundreds of hand-overs; the root-only directory must keep its
owner and mode every time. And with a pool of agent uids, two live sessions never share one
(`tests/unit/harness/test_confine.py`), so the swap cannot even be attempted across cases.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from tests.helpers.race import RACER

from evolve_action.harness import _confine as confine
from evolve_action.harness._sandbox import Probe

pytestmark = pytest.mark.integration

ROUNDS = 300


def _nobody() -> confine.AgentUser:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user `nobody` here")
    return confine.AgentUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


@pytest.mark.skipif(os.geteuid() != 0, reason="the hand-over is root's: run as root")
def test_a_racing_agent_never_gets_what_root_did_not_give() -> None:
    # Somewhere the agent user can reach (pytest's own temp dirs sit under a 0700 directory).
    tmp_path = Path(tempfile.mkdtemp(prefix="evolve-race-", dir="/tmp"))
    tmp_path.chmod(0o755)
    try:
        _race(tmp_path)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _race(tmp_path: Path) -> None:
    user = _nobody()
    target = tmp_path / "root-only"
    target.mkdir(mode=0o700)
    (target / "secret").write_text("root's\n")
    (target / "secret").chmod(0o600)
    ws = tmp_path / "ws"
    for i in range(8):
        (ws / f"d{i}" / "inner").mkdir(parents=True)
        (ws / f"d{i}" / "inner" / "file").write_text("x\n")
    confine.give_to_agent(user, ws)  # the workspace is the agent's: it may rename inside it
    stop = tmp_path / "stop"
    python = Path("/usr/bin/python3")  # one the agent user can run (not under /root)
    if not python.exists():
        pytest.skip("no /usr/bin/python3 for the racing process")
    argv = [str(python), "-I", "-c", RACER, str(ws), str(target), str(stop)]
    racer = subprocess.Popen(
        [*confine.launcher_argv_bare(), "--user", user.spec, "--", *argv],
        env={"PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert racer.stdout is not None
    try:
        assert racer.stdout.readline().strip() == "racing"  # hand-overs start mid-race
        for _ in range(ROUNDS):
            confine.give_to_agent(user, ws)
            info = target.stat()
            assert (info.st_uid, info.st_mode & 0o777) == (0, 0o700), "root followed a link"
            assert (target / "secret").stat().st_uid == 0
    finally:
        stop.touch()
        try:
            swaps, _ = racer.communicate(timeout=60)
        finally:
            racer.kill()
    assert racer.returncode == 0
    assert int(swaps) > 1
    # The racer really raced: the workspace is still the agent's, every directory back in place.
    assert all((ws / f"d{i}").is_dir() for i in range(8))
    assert (ws / "d0" / "inner" / "file").stat().st_uid == user.uid


def test_an_isolated_sandbox_forwards_only_to_the_gateway(tmp_path: Path) -> None:
    user = confine.AgentUser("agent", 3000, 3000)
    conf = confine.Confinement(
        sandbox=Probe(bwrap="/usr/bin/bwrap"), user=user, isolated_network=True
    )
    sock = tmp_path / "gw" / "gateway.sock"
    agent = confine.launcher_argv(
        conf, user=user, writable=[tmp_path], chdir=tmp_path, parent="1", gateway=(4321, sock)
    )
    assert "--unshare-net" in agent
    assert agent[agent.index("--forward") + 1] == f"4321={sock}"
    command = confine.launcher_argv(
        conf, user=user, writable=[tmp_path], chdir=tmp_path, parent="1"
    )
    assert "--unshare-net" in command and "--forward" not in command  # nothing reachable
    open_conf = confine.Confinement(sandbox=Probe(bwrap="/usr/bin/bwrap"), user=user)
    opened = confine.launcher_argv(
        open_conf, user=user, writable=[tmp_path], chdir=tmp_path, parent="1", gateway=(4321, sock)
    )
    assert "--unshare-net" not in opened and "--forward" not in opened
