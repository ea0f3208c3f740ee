"""Confinement: the bubblewrap argv, the hidden paths, the agent user and the launcher (real
processes, no agent)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolve_action.harness import _confine as confine
from evolve_action.harness import _sandbox as sandbox

BWRAP = sandbox.Probe("/usr/bin/bwrap")


def test_masks_apply_deepest_last_and_writables_after_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = home / "src/repo"
    (repo / ".git").mkdir(parents=True)
    sock = tmp_path / "docker.sock"
    sock.write_text("")
    ws = home / "ws"
    ws.mkdir()
    argv = sandbox.wrap(
        BWRAP,
        writable=[ws],
        chdir=ws,
        hidden=[repo / ".git", home, sock],
        readable=[repo, Path("/usr")],
    )
    words = " ".join(argv)
    order = [
        f"--tmpfs {home}",
        f"--ro-bind /dev/null {sock}",
        f"--ro-bind {repo} {repo}",
        f"--tmpfs {repo}/.git",
        f"--bind {ws} {ws}",
        f"--remount-ro {home}",
    ]
    positions = [words.index(w) for w in order]
    assert positions == sorted(positions), words
    assert "--ro-bind /usr /usr" not in words  # nothing hides it: no need to bind it back
    if os.geteuid() == 0:
        assert "--cap-drop ALL" in words


def test_hidden_paths_cover_home_git_event_command_files_and_sockets(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    top = tmp_path / "checkout"
    (top / ".git").mkdir(parents=True)
    commands = tmp_path / "_runner_file_commands"
    commands.mkdir()
    (commands / "set_output_1").write_text("")
    event = tmp_path / "event.json"
    event.write_text("{}")
    sock = tmp_path / "engine.sock"
    sock.write_text("")
    environ = {
        "HOME": str(home),
        "GITHUB_WORKSPACE": str(top),
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_OUTPUT": str(commands / "set_output_1"),
        "DOCKER_HOST": f"unix://{sock}",
    }
    hidden = confine.hidden_paths(environ, top / "plugins")
    for path in (home, top / ".git", event, commands / "set_output_1", commands, sock):
        assert path.resolve() in hidden, path
    assert tmp_path.resolve() not in hidden and Path("/") not in hidden


def test_the_agent_user_is_named_or_numbered_and_root_keeps_root() -> None:
    if os.geteuid() != 0:
        assert confine.agent_user({})[0] is None
        return
    assert confine.agent_user({"EVOLVE_AGENT_USER": "root"}) == (None, "EVOLVE_AGENT_USER=root")
    user, _ = confine.agent_user({"EVOLVE_AGENT_USER": "nobody"})
    assert user is not None and user.name == "nobody" and user.uid != 0
    numbered, _ = confine.agent_user({"EVOLVE_AGENT_USER": "64321:64322"})
    assert numbered is not None and (numbered.uid, numbered.gid) == (64321, 64322)
    missing, why = confine.agent_user({"EVOLVE_AGENT_USER": "no-such-user-here"})
    assert missing is None and "no such user" in why


def _launch(*args: str) -> list[str]:
    return [sys.executable, "-I", "-S", str(confine.LAUNCHER), *args]


def _alive(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if (entry / "cmdline").read_bytes().replace(b"\0", b" ").strip() == marker.encode():
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def test_the_launcher_kills_what_left_the_session_and_keeps_the_exit_status() -> None:
    marker = f"sleep {4000 + os.getpid() % 900}"
    script = f"setsid sh -c '{marker}' </dev/null >/dev/null 2>&1 & (({marker} &) &); exit 3"
    try:
        done = subprocess.run(_launch("--reap", "--", "/bin/sh", "-c", script), timeout=30)
        assert done.returncode == 3
        assert _alive(marker) == []
        killed = subprocess.run(_launch("--reap", "--", "/bin/sh", "-c", "kill -9 $$"), timeout=30)
        assert killed.returncode == -signal.SIGKILL
    finally:
        for pid in _alive(marker):
            os.kill(pid, signal.SIGKILL)


def test_sigterm_to_the_launcher_ends_the_whole_session() -> None:
    marker = f"sleep {5000 + os.getpid() % 900}"
    proc = subprocess.Popen(
        _launch("--reap", "--", "/bin/sh", "-c", f"setsid {marker} & {marker}; echo never")
    )
    try:
        deadline = time.monotonic() + 20
        while len(_alive(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(_alive(marker)) == 2
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 143
        assert _alive(marker) == []
    finally:
        proc.kill()
        for pid in _alive(marker):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root")
def test_the_launcher_switches_to_the_agent_user_without_groups_or_new_privileges() -> None:
    done = subprocess.run(
        _launch(
            "--user",
            "65534:65534",
            "--",
            "/bin/sh",
            "-c",
            "id -u; id -G; grep NoNewPrivs /proc/self/status",
        ),
        capture_output=True,
        text=True,
        timeout=30,
        env={},
    )
    assert done.returncode == 0, done.stderr
    uid, groups, nnp = done.stdout.splitlines()
    assert (uid, groups) == ("65534", "65534") and nnp.split() == ["NoNewPrivs:", "1"]


def test_concurrent_sessions_are_capped_at_the_agent_user_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`jobs` beyond the agent-user pool would make two live sessions share a uid (and read each
    other's gateway token from /proc): the engines' concurrency is capped at the pool (issue 37)."""
    users = tuple(confine.AgentUser(f"evolve-agent-{i}", 2001 + i, 2001 + i) for i in range(3))
    conf = confine.Confinement(sandbox=sandbox.Probe(None, "no"), user=users[0], pool=users)
    monkeypatch.setattr(confine, "_current", conf)
    assert [confine.session_limit(j) for j in (1, 3, 12)] == [1, 3, 3]
    monkeypatch.setattr(confine, "_current", confine.Confinement(sandbox=BWRAP))
    assert confine.session_limit(12) == 12  # no user switch: nothing to share


def test_each_live_session_leases_a_uid_of_its_own_and_waits_rather_than_share() -> None:
    """A uid per live session, not per workspace (sessions of one trigger set share theirs): no
    two live sessions share one, so neither reads the other's token in `/proc/<pid>/environ`."""
    pool = tuple(confine.AgentUser(f"agent{i}", 3000 + i, 3000 + i) for i in range(3))
    conf = confine.Confinement(sandbox=sandbox.Probe(None, "no"), user=pool[0], pool=pool)

    async def one_more() -> confine.AgentUser | None:
        async with confine.lease(conf) as user:
            return user

    async def scenario() -> None:
        stacks = [contextlib.AsyncExitStack() for _ in pool]
        held = [await s.enter_async_context(confine.lease(conf)) for s in stacks]
        assert held == list(pool)  # one each, in pool order
        argv = confine.launcher_argv(conf, user=held[2], writable=[], chdir=Path("/"), parent="1")
        assert argv[argv.index("--user") + 1] == "3002:3002"
        fourth = asyncio.ensure_future(one_more())
        await asyncio.sleep(0.2)
        assert (
            not fourth.done()
        )  # every uid is leased: it waits (it cannot finish before a release)
        await stacks[1].aclose()
        assert await fourth == pool[1]  # the freed uid
        for s in stacks:
            await s.aclose()
        assert await one_more() == pool[0]  # all free again: pool order

    asyncio.run(scenario())
    root = confine.Confinement(sandbox=BWRAP)
    assert asyncio.run(_lease_once(root)) is None  # no user switch: nothing to lease


async def _lease_once(conf: confine.Confinement) -> confine.AgentUser | None:
    async with confine.lease(conf) as user:
        return user


def test_the_pool_is_the_listed_users_or_the_numbered_ones() -> None:
    if os.geteuid() != 0:
        pytest.skip("the agent user applies only to root")
    user, _ = confine.agent_user({"EVOLVE_AGENT_USER": "nobody, 64321:64322, root, nobody,64323"})
    assert user is not None and user.name == "nobody"
    listed = {"EVOLVE_AGENT_USER": "nobody, 64321:64322, root, nobody,64323"}
    members = confine._pool_members(user, listed)
    assert [(u.uid, u.gid) for u in members] == [(64321, 64322), (64323, 64323)]
    assert confine._pool_members(user, {"EVOLVE_AGENT_USER": "nobody"}) == []  # no nobody-1


@pytest.mark.skipif(os.geteuid() != 0, reason="handing directories over needs root")
def test_a_finished_session_s_directories_are_closed_to_the_next_holder_of_its_uid(
    tmp_path: Path,
) -> None:
    user = confine.AgentUser("nobody", 65534, 65534)
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "out.txt").write_text("written by the agent")
    confine.give_to_agent(user, ws)
    ws.chmod(0o777)  # the agent may open up its own directory
    confine.take_back(user, ws, tmp_path / "gone")
    info = ws.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (0, 0, 0o700)
    assert (ws / "sub" / "out.txt").stat().st_uid == 65534  # below it, as the session left it
    confine.take_back(None, ws)  # no user switch: nothing to do
