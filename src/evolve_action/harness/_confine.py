"""Confinement of agents and `command` assertions: whom they run as, and what they cannot reach.

Owns: the run's `Confinement` (`resolve()`, `confined()` and `current()`): the OS sandbox
(bubblewrap, `_sandbox`), the unprivileged **agent user** (when we run as root: `EVOLVE_AGENT_USER`,
a name or `uid[:gid]`, or several separated by commas (the pool, the first one the agent user),
else the user `evolve-agent` when it exists, as in the action's image; `root`/`0` keeps root), and
the paths the agent must not reach (our `$HOME`, the checkout's `.git`, the event file, the
runner's file-command files, container-engine sockets); `agent_cli()` (the agent CLI, staged where
the agent user can run it when it cannot reach the installed one), `launcher_argv()` (the
one argv prefix every agent and `command` assertion starts with: `_launch.py` as the session's
reaper, the user switch, bubblewrap), `lease()` (the agent uid of one live session) and
`give_to_agent()` (a workspace or private dir handed to that uid).

Guarantees:
- with bubblewrap, the sandbox starts from the child's own environment (the caller clears the rest
  with `env -i` before the launcher), sees a private `/proc`, runs without capabilities (or as the
  agent user), and finds the hidden paths masked (an empty tmpfs over directories, `/dev/null` over
  files and sockets; what it needs below them, the interpreter, the CLI and the repository without
  its `.git`, is bound back read-only);
- as the agent user without bubblewrap, the hidden paths lose their "other" permission bits for the
  run (restored when `confined()` exits; a root-only socket stays root-only), so the user can open
  none of them, and `/proc/<pid>/environ` of our processes is not its to read;
- every descendant of a session or `command` dies when it ends (the launcher is a subreaper);
- every live agent session and `command` assertion runs as an agent uid no other live one holds
  (`lease`: one uid of the pool — the agent user and `<user>-1` … where they exist, or the users
  `EVOLVE_AGENT_USER` lists — per session, waiting while every uid is leased; the engines never
  start more at once than the pool has uids, `session_limit`), so one session can neither read
  another's `/proc/<pid>/environ` (its gateway token) nor its config dir, nor write its workspace;
  root hands a session's directories to its uid (`give_to_agent`) through directory descriptors
  with no-follow operations, so a link an agent made is never followed, and takes them back when
  the session ends (`take_back`), so the next holder of the uid cannot enter them;
- `unconfined` is True only when neither a sandbox nor a user switch applies; `warning()` then says
  so, once, and how to fix it.
Never prints; never reads `os.environ` (callers pass the environment).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evolve_action.harness import _lifecycle as lifecycle
from evolve_action.harness import _sandbox as sandbox
from evolve_action.harness._locate import find_cli

__all__ = [
    "AGENT_USER_VAR",
    "DEFAULT_AGENT_USER",
    "LAUNCHER",
    "NETWORK_VAR",
    "AgentUser",
    "Confinement",
    "agent_cli",
    "chown_tree",
    "confined",
    "current",
    "give_to_agent",
    "launcher_argv",
    "launcher_argv_bare",
    "lease",
    "resolve",
    "session_limit",
    "take_back",
]

AGENT_USER_VAR = "EVOLVE_AGENT_USER"
NETWORK_VAR = "EVOLVE_AGENT_NETWORK"
"""`gateway` (the default): where bubblewrap can make a network namespace, agents and `command`
assertions reach no network but the model gateway; `open`: they reach what this machine does."""
DEFAULT_AGENT_USER = "evolve-agent"
LAUNCHER = Path(__file__).with_name("_launch.py")
"""The launcher script (run by path with `python -I -S`: it imports nothing of ours)."""

# Container-engine and runner sockets masked inside the sandbox (those that exist).
ENGINE_SOCKETS: tuple[str, ...] = (
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/docker",
    "/var/run/docker",
    "/run/containerd",
    "/var/run/containerd",
    "/run/podman",
    "/var/run/podman",
    "/run/crio",
    "/run/buildkit",
    "/run/user",
)
_COMMAND_FILES = (
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_STATE",
)
_COMMAND_DIRS = frozenset({"file_commands", "_runner_file_commands"})
_PROBE_TIMEOUT = 20.0
_PR_SET_DUMPABLE = 4


@dataclass(frozen=True, slots=True)
class AgentUser:
    """The unprivileged user agents and `command` assertions run as."""

    name: str
    uid: int
    gid: int

    @property
    def spec(self) -> str:
        """`uid:gid`, as the launcher takes it."""
        return f"{self.uid}:{self.gid}"


@dataclass(frozen=True, slots=True)
class Confinement:
    """How this run confines its agents and `command` assertions."""

    sandbox: sandbox.Probe
    user: AgentUser | None = None
    no_user: str = ""
    """Why there is no user switch (empty when there is one)."""
    hidden: tuple[Path, ...] = ()
    """Paths the agent must not reach (existing ones; symlinks resolved)."""
    readable: tuple[Path, ...] = ()
    """Paths bound back read-only inside the sandbox when a hidden path covers them."""
    as_root: bool = field(default=False)
    """True when we run as root (and so does the agent, unless `user` is set)."""
    pool: tuple[AgentUser, ...] = ()
    """The agent uids leased to live sessions, one each (`user` first); see `lease`."""
    isolated_network: bool = False
    """True when agents and `command` assertions get a network namespace of their own (only the
    model gateway reachable, through a forwarder on their loopback)."""
    open_network: str = ""
    """Why the network is open (empty when isolated)."""

    @property
    def unconfined(self) -> bool:
        """True when neither bubblewrap nor an unprivileged user confines the agent."""
        return not self.sandbox.available and self.user is None

    @property
    def agent_is_root(self) -> bool:
        """True when the agent process runs as uid 0 (in the sandbox, without capabilities)."""
        return self.as_root and self.user is None

    def describe(self) -> str:
        """One phrase: how agents are confined (`bubblewrap, as user evolve-agent`…)."""
        parts = []
        if self.sandbox.available:
            parts.append("bubblewrap")
        if self.user is not None:
            parts.append(f"as user {self.user.name} (uid {self.user.uid})")
        return ", ".join(parts) if parts else "unconfined"

    def note(self) -> str:
        """The one console line about confinement ("" when bubblewrap confines the agent)."""
        if self.sandbox.available:
            return ""
        if self.user is not None:
            return (
                f"note: no OS sandbox ({self.sandbox.reason}); agents and command assertions run "
                f"as the unprivileged user {self.user.name} (uid {self.user.uid})"
            )
        return self.warning()

    def warning(self) -> str:
        """The loud line for an unconfined run ("" when confined)."""
        if not self.unconfined:
            return ""
        return (
            f"warning: agent ran unconfined: no OS sandbox ({self.sandbox.reason}) and no "
            f"unprivileged user ({self.no_user}); agents and command assertions can read what this "
            "process can (install bubblewrap, or run as root with a user "
            f"{DEFAULT_AGENT_USER} or {AGENT_USER_VAR} set)"
        )


# --------------------------------------------------------------------------------------------------
# the agent user


def agent_user(environ: Mapping[str, str]) -> tuple[AgentUser | None, str]:
    """The user to switch to (root only), or None and why not."""
    if os.geteuid() != 0:
        return None, "not running as root: agents run as this process's user"
    wanted = environ.get(AGENT_USER_VAR, "").split(",")[0].strip()
    if wanted in ("root", "0"):
        return None, f"{AGENT_USER_VAR}={wanted}"
    return _named_user(wanted)


def _named_user(wanted: str) -> tuple[AgentUser | None, str]:
    """`wanted` (a name or `uid[:gid]`; empty: `evolve-agent`) as an agent user, or None and why."""
    name = wanted or DEFAULT_AGENT_USER
    head, _, gid_text = name.partition(":")
    try:
        if head.isdigit():
            uid = int(head)
            try:
                entry: pwd.struct_passwd | None = pwd.getpwuid(uid)
            except KeyError:
                entry = None
            gid = int(gid_text) if gid_text.isdigit() else (entry.pw_gid if entry else uid)
            user = AgentUser(entry.pw_name if entry else str(uid), uid, gid)
        else:
            entry = pwd.getpwnam(head)
            gid = int(gid_text) if gid_text.isdigit() else entry.pw_gid
            user = AgentUser(entry.pw_name, entry.pw_uid, gid)
    except KeyError:
        if not wanted:
            return None, f"running as root and no user {DEFAULT_AGENT_USER} exists"
        return None, f"{AGENT_USER_VAR}={wanted}: no such user"
    if user.uid == 0:
        return None, f"{AGENT_USER_VAR}={wanted} is root"
    return user, ""


POOL_SIZE = 16
"""At most this many agent uids: the user itself and `<user>-1` … `<user>-15` where they exist."""
_LEASE_POLL_SECONDS = 0.05


def _pool_members(user: AgentUser, environ: Mapping[str, str]) -> list[AgentUser]:
    """The other users of the pool: those `EVOLVE_AGENT_USER` lists after the first (names or
    `uid[:gid]`; root, unknown names and repeats are left out), else `<name>-1`, `<name>-2`…
    while they exist (the action's image makes `evolve-agent-1` … `-7`), each with its own uid."""
    listed = [w.strip() for w in environ.get(AGENT_USER_VAR, "").split(",")[1:] if w.strip()]
    found: list[AgentUser] = []
    if listed:
        for wanted in listed[: POOL_SIZE - 1]:
            other, _ = _named_user(wanted)
            if other is not None and other.uid not in {user.uid, *(u.uid for u in found)}:
                found.append(other)
        return found
    for i in range(1, POOL_SIZE):
        try:
            entry = pwd.getpwnam(f"{user.name}-{i}")
        except KeyError:
            break
        if entry.pw_uid not in (0, user.uid):
            found.append(AgentUser(entry.pw_name, entry.pw_uid, entry.pw_gid))
    return found


_leased: set[AgentUser] = set()
_leases_lock = threading.Lock()


def _take(pool: Sequence[AgentUser]) -> AgentUser | None:
    with _leases_lock:
        for user in pool:  # pool order: the agent user first
            if user not in _leased:
                _leased.add(user)
                return user
    return None


@contextlib.asynccontextmanager
async def lease(conf: Confinement) -> AsyncIterator[AgentUser | None]:
    """The agent uid of one live session or `command` assertion, for as long as the block runs
    (None when there is no user switch).

    No other live lease holds it, so no two live sessions share a uid: one cannot read another's
    `/proc/<pid>/environ` (its gateway token), config dir or workspace. When every uid of the pool
    is leased it waits for one to be freed (the engines start at most `session_limit` sessions
    at once, so it waits only for a process started outside them); never shares one.
    """
    if conf.user is None:
        yield None
        return
    pool = conf.pool or (conf.user,)
    user = _take(pool)
    while user is None:
        await asyncio.sleep(_LEASE_POLL_SECONDS)
        user = _take(pool)
    try:
        yield user
    finally:
        with _leases_lock:
            _leased.discard(user)


def session_limit(jobs: int) -> int:
    """`jobs` (concurrent agent sessions), capped at the agent-user pool's size while a
    `confined()` run switches agents to agent users: each live session leases a uid of its own
    (`lease`), so more would only wait for one."""
    conf = _current
    if conf is None or conf.user is None:
        return jobs
    return max(1, min(jobs, len(conf.pool) or 1))


# Run as the agent user: the paths it cannot use (a directory to enter, a file to execute).
_CHECK = 'bad=""; for p; do [ -x "$p" ] || bad="$bad $p"; done; echo $bad; [ -z "$bad" ]'


@functools.cache
def _user_problem(user: AgentUser, python: str, paths: tuple[str, ...]) -> str:
    """Why `user` cannot run the launcher and reach `paths` ("" when it can)."""
    argv = [python, "-I", "-S", str(LAUNCHER), "--user", user.spec, "--"]
    argv += ["/bin/sh", "-c", _CHECK, "sh", *paths]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, check=False, env={}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot start a process as {user.name}: {exc}"
    if done.returncode == 0:
        return ""
    if done.returncode == 1 and done.stdout.strip():
        return f"user {user.name} cannot reach {done.stdout.strip()}"
    detail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    return f"cannot run as user {user.name}: {detail}"


def agent_cli(user: AgentUser | None, cli: Path, *, tree: Path | None = None) -> Path:
    """`cli`, or a copy of it the agent user can run when it cannot reach `cli` where it is.

    `tree` is the directory the CLI needs beside it (Codex: its package, with `codex-path`); it
    is staged whole, `cli` keeping its place in it. The copy lives in the run's scratch dir
    (traversable, not listable), made of hard links where the filesystem allows (no bytes
    copied), else copies; it is made once per run and removed with the scratch dir. Root-owned
    and not writable by the agent user, like the original.
    """
    if user is None or not _user_problem(user, sys.executable, (str(cli),)):
        return cli
    return _staged(cli.resolve(), (tree or cli.parent).resolve(), lifecycle.scratch_dir())


@functools.cache
def _staged(cli: Path, tree: Path, scratch: Path | None) -> Path:
    base = Path(scratch or tempfile.gettempdir()) / "agent-cli"
    base.mkdir(mode=0o711, exist_ok=True)
    target = Path(tempfile.mkdtemp(prefix="cli.", dir=base))
    target.chmod(0o755)
    here = target / tree.name
    if cli.parent == tree and tree.name != cli.name:  # one binary: only the CLI itself
        here.mkdir(mode=0o755)
        _link_or_copy(cli, here / cli.name)
    else:
        shutil.copytree(tree, here, symlinks=True, copy_function=_link_or_copy)
    return here / cli.relative_to(tree)


def _link_or_copy(source: str | Path, dest: str | Path) -> None:
    try:
        os.link(source, dest, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, dest, follow_symlinks=False)


# --------------------------------------------------------------------------------------------------
# what the agent must not reach


def _git_dirs(top: Path) -> list[Path]:
    dot = top / ".git"
    if dot.is_dir():
        return [dot]
    if not dot.is_file():
        return []
    found = [dot]
    try:
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return found
    if text.startswith("gitdir:"):
        gitdir = (top / text.partition(":")[2].strip()).resolve()
        found.append(gitdir)
        with contextlib.suppress(OSError):
            common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
            found.append((gitdir / common).resolve())
    return found


def _checkout_tops(environ: Mapping[str, str], root: Path | None) -> list[Path]:
    tops: list[Path] = []
    for start in (environ.get("GITHUB_WORKSPACE"), root):
        if not start:
            continue
        path = Path(start).absolute()
        for parent in (path, *path.parents):
            if (parent / ".git").exists():
                tops.append(parent)
                break
    return tops


def hidden_paths(environ: Mapping[str, str], root: Path | None) -> list[Path]:
    """What the agent must not reach, existing ones only, symlinks resolved."""
    wanted: list[Path] = []
    home = environ.get("HOME", "")
    if home and Path(home).resolve() != Path("/"):
        wanted.append(Path(home))
    for top in _checkout_tops(environ, root):
        wanted += _git_dirs(top)
    if environ.get("GITHUB_EVENT_PATH"):
        wanted.append(Path(environ["GITHUB_EVENT_PATH"]))
    for name in _COMMAND_FILES:
        if environ.get(name):
            path = Path(environ[name])
            wanted.append(path)
            if path.parent.name in _COMMAND_DIRS:
                wanted.append(path.parent)
    wanted += [Path(p) for p in ENGINE_SOCKETS]
    for name in ("DOCKER_HOST", "CONTAINER_HOST"):
        value = environ.get(name, "")
        if value.startswith("unix://"):
            wanted.append(Path(value.removeprefix("unix://")))
    out: list[Path] = []
    for path in wanted:
        try:
            resolved = path.resolve()
            resolved.lstat()
        except (OSError, RuntimeError):
            continue
        if resolved != Path("/") and resolved not in out:
            out.append(resolved)
    return out


def readable_paths(environ: Mapping[str, str], root: Path | None) -> list[Path]:
    """What the agent needs to read even below a hidden path: the interpreter, our package, the
    repository and the user's tool directories on PATH."""
    wanted = [Path(sys.prefix), Path(sys.base_prefix), LAUNCHER.parent.parent]
    wanted += _checkout_tops(environ, root) or ([root] if root is not None else [])
    home = environ.get("HOME", "")
    for entry in environ.get("PATH", "").split(os.pathsep):
        path = Path(entry)
        if entry and home and path.is_absolute() and path.is_relative_to(home):
            wanted.append(path.parent if path.name == "bin" else path)
    out: list[Path] = []
    for path in wanted:
        with contextlib.suppress(OSError, RuntimeError):
            resolved = path.resolve()
            if resolved.exists() and resolved not in out:
                out.append(resolved)
    return out


# --------------------------------------------------------------------------------------------------
# the run's confinement


_current: Confinement | None = None


def resolve(environ: Mapping[str, str], *, root: Path | None = None) -> Confinement:
    """Work out how agents are confined here (probes bubblewrap and the agent user; cached).

    The agent user must enter the scratch dir; the agent CLIs it cannot reach where they are
    installed (a clone under a `0700` directory, `/root`) are staged for it (`agent_cli`)."""
    found = sandbox.probe(environ)
    user, no_user = agent_user(environ)
    if user is not None:
        problem = _user_problem(
            user, sys.executable, (str(lifecycle.scratch_dir() or tempfile.gettempdir()),)
        )
        if not problem:
            with contextlib.suppress(Exception):  # no CLI at all: the harness says so itself
                cli = find_cli(environ)
                problem = _user_problem(user, sys.executable, (str(agent_cli(user, cli)),))
        if problem:
            user, no_user = None, problem
    pool: tuple[AgentUser, ...] = ()
    if user is not None:
        scratch = str(lifecycle.scratch_dir() or tempfile.gettempdir())
        extra = [
            u
            for u in _pool_members(user, environ)
            if not _user_problem(u, sys.executable, (scratch,))
        ]
        pool = (user, *extra)
    wanted = environ.get(NETWORK_VAR, "").strip().lower() or "gateway"
    if wanted == "open":
        open_network = f"{NETWORK_VAR}=open"
    elif wanted == "gateway":
        open_network = sandbox.network_problem(found)
    else:
        open_network = f"{NETWORK_VAR}={wanted} is not gateway or open"
    return Confinement(
        sandbox=found,
        user=user,
        pool=pool,
        isolated_network=not open_network,
        open_network=open_network,
        no_user=no_user,
        hidden=tuple(hidden_paths(environ, root)),
        readable=tuple(readable_paths(environ, root)),
        as_root=os.geteuid() == 0,
    )


def current(environ: Mapping[str, str]) -> Confinement:
    """The confinement of the running `confined()` block, else one resolved from `environ`."""
    return _current if _current is not None else resolve(environ)


@contextlib.contextmanager
def confined(environ: Mapping[str, str], *, root: Path | None = None) -> Iterator[Confinement]:
    """For a run that starts agents: resolve the confinement once, make our own process
    non-dumpable (its `/proc/<pid>/environ` unreadable to same-user processes), let the agent user
    reach the scratch dir, and without bubblewrap take the "other" permission bits off the hidden
    paths until the block ends."""
    global _current
    _set_dumpable(False)
    scratch = lifecycle.scratch_dir()
    if scratch is not None and os.geteuid() == 0:
        with contextlib.suppress(OSError):
            scratch.chmod(0o711)  # traversable, not listable: the agent user reaches its own dirs
    conf = resolve(environ, root=root)
    restore: list[tuple[Path, int]] = []
    if conf.user is not None and not conf.sandbox.available:
        # Never a directory the agent user must pass through (`$HOME` holding `$TMPDIR`…).
        needed = [Path(scratch or tempfile.gettempdir()).resolve()]
        with contextlib.suppress(Exception):
            needed.append(find_cli(environ).resolve())
        keep = [h for h in conf.hidden if not any(n.is_relative_to(h) for n in needed)]
        restore = _withdraw(keep, conf.pool or (conf.user,))
    previous, _current = _current, conf
    try:
        yield conf
    finally:
        _current = previous
        for path, mode in reversed(restore):
            with contextlib.suppress(OSError):
                path.chmod(mode)
        _set_dumpable(True)


def _withdraw(paths: Sequence[Path], users: Sequence[AgentUser]) -> list[tuple[Path, int]]:
    """Take the permission bits `users` would get off each path; return the modes to restore."""
    changed: list[tuple[Path, int]] = []
    for path in paths:
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            continue
        mode = stat.S_IMODE(info.st_mode)
        strip = 0o007 | (0o070 if any(info.st_gid == u.gid for u in users) else 0)
        if any(info.st_uid == u.uid for u in users) or not mode & strip:
            continue
        with contextlib.suppress(OSError):
            path.chmod(mode & ~strip)
            changed.append((path, mode))
    return changed


def _set_dumpable(on: bool) -> None:
    if sys.platform != "linux":
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 1 if on else 0, 0, 0, 0)


# --------------------------------------------------------------------------------------------------
# starting a confined process


def launcher_argv_bare(python: str = sys.executable) -> list[str]:
    """The launcher alone (`python -I -S _launch.py`), for an unconfined process."""
    return [python, "-I", "-S", str(LAUNCHER)]


def launcher_argv(
    conf: Confinement,
    *,
    user: AgentUser | None,
    writable: Sequence[Path],
    chdir: Path,
    parent: str,
    readable: Sequence[Path] = (),
    python: str = sys.executable,
    gateway: tuple[int, Path] | None = None,
    binds: Sequence[tuple[Path, Path]] = (),
) -> list[str]:
    """The argv prefix of a confined process (run it after `env -i`, with only its own variables).

    The launcher is the session's reaper (it dies with `parent`, our pid or the word `$PPID` for
    the exec wrapper); bubblewrap confines it where available, with the hidden paths masked and
    `writable` bound read-write; the process runs as `user` (its `lease`) when there is one.
    With an isolated network (`Confinement.isolated_network`) the sandbox has its own network
    namespace; `gateway` (the model gateway's port and Unix socket) is then reachable at the
    same `127.0.0.1:<port>` inside it, through a forwarder the launcher starts; without
    `gateway` (a `command` assertion) nothing is reachable. `binds` (bubblewrap only): host
    directories bound read-write at other paths inside the sandbox (`_placement`).
    """
    argv = [*launcher_argv_bare(python), "--parent", parent, "--reap"]
    if not conf.sandbox.available:
        if user is not None:
            argv += ["--user", user.spec]
        return [*argv, "--"]
    forward = conf.isolated_network and gateway is not None
    argv.append("--")
    argv += sandbox.wrap(
        conf.sandbox,
        writable=writable,
        chdir=Path("/") if user is not None else chdir,  # bwrap has no right to enter it
        hidden=conf.hidden,
        readable=[*conf.readable, *readable, *([gateway[1].parent] if gateway else [])],
        caps=("CAP_SETUID", "CAP_SETGID") if user is not None else (),
        isolate_network=conf.isolated_network,
        binds=binds,
    )
    if user is not None or forward:
        argv += launcher_argv_bare(python)
        if forward:
            assert gateway is not None
            argv += ["--forward", f"{gateway[0]}={gateway[1]}"]
        if user is not None:
            argv += ["--user", user.spec]
        argv += ["--chdir", str(chdir), "--"]
    return argv


def give_to_agent(user: AgentUser | None, *paths: Path) -> None:
    """Hand directories the agent writes (its workspace, its config or temp dir) to `user`, the
    session's agent uid (`lease`; nothing to do when None).

    Never follows a link an agent could have made: each directory is opened with `O_NOFOLLOW`
    relative to its parent's descriptor, and entries are changed through that descriptor
    without following links, so a directory swapped for a symlink mid-walk is skipped, never
    entered, and nothing outside the given trees changes owner.
    """
    if user is None:
        return
    for top in paths:
        chown_tree(top, user.uid, user.gid)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def take_back(user: AgentUser | None, *paths: Path) -> None:
    """Close directories `give_to_agent` handed to `user` once its session's processes are gone:
    each top directory goes back to root with mode `0700` (through a no-follow descriptor), so
    whoever leases that uid next cannot enter what is left below it (an eval's workspace awaiting
    its grading). Nothing to do when None; a path gone or not a directory is skipped."""
    if user is None:
        return
    for top in paths:
        try:
            fd = os.open(top, _DIR_FLAGS)
        except OSError:
            continue
        try:
            os.fchown(fd, 0, 0)
            os.fchmod(fd, 0o700)
        except OSError:
            pass
        finally:
            os.close(fd)


def chown_tree(top: Path, uid: int, gid: int) -> None:
    """`chown -R --no-dereference` through directory descriptors (see `give_to_agent`)."""
    try:
        fd = os.open(top, _DIR_FLAGS)
    except OSError:  # not a directory (or a link): the entry itself, never what it points to
        with contextlib.suppress(OSError):
            os.chown(top, uid, gid, follow_symlinks=False)
        return
    _chown_dir(fd, uid, gid)


def _chown_dir(dir_fd: int, uid: int, gid: int) -> None:
    """Change every entry below the open directory `dir_fd`, then the directory; closes `dir_fd`."""
    try:
        try:
            entries = list(os.scandir(dir_fd))
        except OSError:
            entries = []
        for entry in entries:
            try:
                sub = os.open(entry.name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError:  # a file, a link, or gone: change the entry itself
                with contextlib.suppress(OSError):
                    os.chown(entry.name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
                continue
            _chown_dir(sub, uid, gid)
        with contextlib.suppress(OSError):
            os.fchown(dir_fd, uid, gid)
    finally:
        os.close(dir_fd)
