"""The OS sandbox for agents and `command` assertions: bubblewrap, where the machine has it.

Owns: `probe()` (is `bwrap` on the child PATH and able to run here; cached per binary), `wrap()` (the
argv prefix confining a process: the whole filesystem read-only, only the given directories
writable, a private `/dev`, `/proc` and PID namespace, and death with its parent) and
`unavailable_line()` (the one line the CLI prints when there is no sandbox).

Guarantees: a sandboxed process can write only to its workspace and the private dirs it is given
(never the repository or `$HOME`), and is killed when our process dies (`--die-with-parent`; with
`--unshare-pid` every process it started goes with it). `EVOLVE_SANDBOX_ENABLED=false` (the
environment form of evolve's `sandbox.enabled` key) disables it.
Never prints; never fakes confinement: without a working `bwrap` the prefix is empty and the caller
says so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Probe", "launcher_argv", "probe", "unavailable_line", "wrap"]

_PROBE_TIMEOUT = 20.0
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})  # the config's boolean spellings


@dataclass(frozen=True, slots=True)
class Probe:
    """What `probe()` found: the bwrap binary when it works, else why not."""

    bwrap: str | None
    reason: str = ""

    @property
    def available(self) -> bool:
        """True when processes can be confined."""
        return self.bwrap is not None


def probe(environ: Mapping[str, str]) -> Probe:
    """Whether bubblewrap can confine processes here (`EVOLVE_SANDBOX_ENABLED=false` turns it off)."""
    if environ.get("EVOLVE_SANDBOX_ENABLED", "").strip() in _FALSE:
        return Probe(None, "disabled by EVOLVE_SANDBOX_ENABLED")
    found = shutil.which("bwrap", path=environ.get("PATH") or None)
    if found is None:
        return Probe(None, "bubblewrap (bwrap) is not installed")
    return _probe_binary(found)


@functools.cache
def _probe_binary(bwrap: str) -> Probe:
    argv = [*_base(bwrap), "--", "true"]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, check=False, env={}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe(None, f"bwrap cannot run here: {exc}")
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return Probe(None, f"bwrap cannot run here: {detail}")
    return Probe(bwrap)


def _base(bwrap: str) -> list[str]:
    return [
        bwrap,
        "--die-with-parent",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]


def wrap(found: Probe, *, writable: Sequence[Path], chdir: Path) -> list[str]:
    """The argv prefix confining a command to `writable` (empty when there is no sandbox)."""
    if found.bwrap is None:
        return []
    argv = _base(found.bwrap)
    for path in writable:
        resolved = str(Path(path).resolve())
        argv += ["--bind", resolved, resolved]
    argv += ["--chdir", str(Path(chdir).resolve()), "--"]
    return argv


def unavailable_line(found: Probe) -> str:
    """The one line saying agents and `command` assertions run unconfined, and why."""
    return (
        f"note: no OS sandbox ({found.reason}); agents and command assertions run unconfined "
        "(install bubblewrap to confine them to their workspace)"
    )


# Run by the wrapper between `setsid` and `env -i` when there is no sandbox: the CLI gets SIGKILL
# when our process dies (PR_SET_PDEATHSIG survives exec), also if we died before it was set.
_PDEATHSIG_HELPER = (
    "import ctypes,os,sys\n"
    "ctypes.CDLL(None,use_errno=True).prctl(1,9,0,0,0)\n"
    "os.getppid()==int(sys.argv[1]) or os._exit(137)\n"
    "os.execvp(sys.argv[2],sys.argv[2:])\n"
)


def launcher_argv(found: Probe, *, writable: Sequence[Path], chdir: Path, python: str) -> list[str]:
    """The wrapper's launcher: bubblewrap confining the agent to `writable` (it dies with us), or,
    without a sandbox on Linux, the parent-death helper (`prctl(PR_SET_PDEATHSIG, SIGKILL)`)."""
    if found.available:
        return wrap(found, writable=writable, chdir=chdir)
    if os.uname().sysname == "Linux":  # (a runtime check: prctl is Linux-only)
        return [python, "-I", "-S", "-c", _PDEATHSIG_HELPER, "$PPID"]
    return []
