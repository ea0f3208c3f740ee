"""The OS sandbox for agents and `command` assertions: bubblewrap, where the machine has it.

Owns: `probe()` (is `bwrap` on the child PATH and able to run here; cached per binary) and `wrap()`
(the argv prefix confining a process: the whole filesystem read-only, only the given directories
writable, the given hidden paths masked, a private `/dev`, `/proc` and PID namespace, no
capabilities when run as root, and death with its parent). `_confine` decides what to pass.

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

__all__ = ["Probe", "network_problem", "probe", "wrap"]

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


def network_problem(found: Probe) -> str:
    """Why bubblewrap cannot give a process a network namespace of its own ("" when it can)."""
    if found.bwrap is None:
        return found.reason
    return _probe_network(found.bwrap)


@functools.cache
def _probe_network(bwrap: str) -> str:
    argv = [*_base(bwrap), "--unshare-net", "--", "true"]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, check=False, env={}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap --unshare-net cannot run here: {exc}"
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return f"bwrap --unshare-net cannot run here: {detail}"
    return ""


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


def wrap(
    found: Probe,
    *,
    writable: Sequence[Path],
    chdir: Path,
    hidden: Sequence[Path] = (),
    readable: Sequence[Path] = (),
    caps: Sequence[str] = (),
    isolate_network: bool = False,
    binds: Sequence[tuple[Path, Path]] = (),
) -> list[str]:
    """The argv prefix confining a command to `writable` (empty when there is no sandbox).

    `isolate_network`: a network namespace of its own (only its own loopback: see
    `_confine`'s gateway forwarding for how an agent still reaches the model gateway).

    `hidden` paths are masked (an empty read-only tmpfs over a directory, `/dev/null` over anything
    else);
    `binds` (host directory, path inside) are bound read-write at another path inside the sandbox
    (the inside path must exist on the host: bubblewrap cannot create it under the read-only `/`);
    `readable` paths are bound back read-only where a hidden path covers them (the deeper path
    wins; at equal depth the mask). As root the sandbox keeps no capability but `caps`.
    """
    if found.bwrap is None:
        return []
    argv = _base(found.bwrap)
    if isolate_network:
        argv.append("--unshare-net")
    if os.geteuid() == 0:
        argv += ["--cap-drop", "ALL"]
        for cap in caps:
            argv += ["--cap-add", cap]
    mounts: list[tuple[int, int, list[str]]] = []
    masked_dirs: list[str] = []
    for path in readable:
        resolved = Path(path).resolve()
        if any(resolved.is_relative_to(h) for h in hidden):
            mounts.append((len(resolved.parts), 0, ["--ro-bind", str(resolved), str(resolved)]))
    for path in hidden:
        resolved = Path(path).resolve()
        try:
            is_dir = resolved.is_dir()
        except OSError:
            continue
        mask = ["--tmpfs", str(resolved)] if is_dir else ["--ro-bind", "/dev/null", str(resolved)]
        if is_dir:
            masked_dirs.append(str(resolved))
        mounts.append((len(resolved.parts), 1, mask))
    for _, _, words in sorted(mounts, key=lambda m: (m[0], m[1])):
        argv += words
    for path in writable:
        real = str(Path(path).resolve())
        argv += ["--bind", real, real]
    for source, inside in binds:
        argv += ["--bind", str(Path(source).resolve()), str(inside)]
    for masked in masked_dirs:  # read-only once every mount point below it exists
        argv += ["--remount-ro", masked]
    argv += ["--chdir", str(Path(chdir).resolve()), "--"]
    return argv
