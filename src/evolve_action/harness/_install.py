"""Installing the OpenAI Codex CLI: the pinned npm release, verified, unpacked into the project.

Owns: `CODEX_VERSION` (the one pinned version), `install_codex()` and `installed_codex_version()`.
The npm package `@openai/codex` ships one static (musl) binary per platform as
`@openai/codex@<version>-<platform>`; this downloads that tarball from the npm registry, checks it
against the integrity hash pinned here (sha512, as npm records it) before anything is unpacked, and
extracts its `vendor/<target>/` directory to `<prefix>/codex/` (`bin/codex`, `codex-path/rg`…),
where `find_codex` looks. So local installs, CI and the action's image get the same bytes without
node or npm.

Guarantees: a download whose hash differs is refused and nothing is unpacked; the new tree is
unpacked beside the old one and swapped in by one rename (a failed install leaves the old one
usable); only regular files and directories under the vendor directory are extracted (no links, no
absolute or `..` paths). Never reads `os.environ` (proxies come from the environment passed in).
"""

from __future__ import annotations

import base64
import hashlib
import os
import platform
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import _procenv as procenv
from evolve_action.harness._locate import CODEX_INSTALL

CODEX_VERSION = "0.169.0"
"""The Codex CLI release evolve-action installs and is tested with."""
REGISTRY = "https://registry.npmjs.org"
_HOME = Path(CODEX_INSTALL.parts[0])
"""The directory under the prefix that holds the unpacked package (`codex/`)."""
_MARKER = "VERSION"
_CHUNK = 1 << 20
_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class CodexBuild:
    """One platform's Codex tarball on npm."""

    suffix: str
    """The npm version suffix (`linux-x64`: `@openai/codex@<version>-linux-x64`)."""
    target: str
    """The directory under `package/vendor/` holding the binary."""
    integrity: str
    """npm's `dist.integrity` of the tarball (`sha512-<base64>`)."""


CODEX_BUILDS: Mapping[str, CodexBuild] = {
    "x86_64": CodexBuild(
        "linux-x64",
        "x86_64-unknown-linux-musl",
        "sha512-o05NyAOCDygSPRo1yinzxvkRSdmsZyBD9E7mbpmjRanSfM8lypqWtQgEo4XfNkwhuCR2aFu8mlGOsQGFXVbVww==",
    ),
    "aarch64": CodexBuild(
        "linux-arm64",
        "aarch64-unknown-linux-musl",
        "sha512-NZ/DaQUpcQmxmqee7Z9uC1rzw3GhSbooawcaTe1LN5Yk+WlinUKGdTXJgClRT/9ogQEEM9TWxYzvxPfj5G/xFg==",
    ),
}
"""The pinned release per machine (`platform.machine()`); Linux only, as the action's image."""


def tarball_url(build: CodexBuild, *, registry: str = REGISTRY) -> str:
    """Where npm serves the platform tarball of the pinned release."""
    return f"{registry.rstrip('/')}/@openai/codex/-/codex-{CODEX_VERSION}-{build.suffix}.tgz"


def installed_codex_version(prefix: Path) -> str:
    """The version of the Codex unpacked under `<prefix>/codex` (`""` when none is)."""
    try:
        return (prefix / _HOME / _MARKER).read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def _check_integrity(data: IO[bytes], integrity: str, url: str) -> None:
    algorithm, _, expected = integrity.partition("-")
    digest = hashlib.new(algorithm)
    data.seek(0)
    while chunk := data.read(_CHUNK):
        digest.update(chunk)
    got = base64.b64encode(digest.digest()).decode("ascii")
    if got != expected:
        raise EnvironmentProblem(
            f"the Codex download from {url} does not match the pinned {algorithm} hash "
            f"(got {algorithm}-{got[:16]}…): refused, nothing was installed",
            hint="retry (a proxy may have altered it); the pinned hashes are in "
            "evolve_action/harness/_install.py",
        )


def _extract(data: IO[bytes], target: str, dest: Path) -> None:
    """Unpack `package/vendor/<target>/**` (regular files and directories only) into `dest`."""
    root = PurePosixPath("package", "vendor", target)
    data.seek(0)
    found = False
    with tarfile.open(fileobj=data, mode="r:gz") as archive:
        for member in archive:
            path = PurePosixPath(member.name)
            if path.is_absolute() or ".." in path.parts or not path.is_relative_to(root):
                continue
            rel = path.relative_to(root)
            if not rel.parts:
                continue
            out = dest.joinpath(*rel.parts)
            if member.isdir():
                out.mkdir(parents=True, exist_ok=True)
            elif member.isfile():
                out.parent.mkdir(parents=True, exist_ok=True)
                source = archive.extractfile(member)
                if source is None:
                    continue
                with source, out.open("wb") as sink:
                    shutil.copyfileobj(source, sink, _CHUNK)
                out.chmod(0o755 if member.mode & 0o111 else 0o644)
                found = found or Path(*rel.parts) == CODEX_INSTALL.relative_to(_HOME)
    if not found:
        raise EnvironmentProblem(
            f"the Codex package has no vendor/{target}/bin/codex: nothing was installed",
            hint=f"report this; the pinned release is @openai/codex@{CODEX_VERSION}",
        )


Opener = Callable[[urllib.request.Request], IO[bytes]]


def _default_opener(environ: Mapping[str, str]) -> Opener:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler(procenv.proxies(environ)))

    def open_url(request: urllib.request.Request) -> IO[bytes]:
        response: IO[bytes] = opener.open(request, timeout=_TIMEOUT)
        return response

    return open_url


def install_codex(
    prefix: Path,
    *,
    environ: Mapping[str, str],
    registry: str = REGISTRY,
    machine: str | None = None,
    opener: Opener | None = None,
    force: bool = False,
    builds: Mapping[str, CodexBuild] = CODEX_BUILDS,
) -> Path:
    """Install the pinned Codex under `<prefix>/codex` and return its binary (`bin/codex`).

    Already installed at the pinned version (and not `force`): nothing is downloaded.
    Raises `EnvironmentProblem` for an unsupported machine, a failed download or a hash mismatch.
    """
    home = prefix / _HOME
    binary = prefix / CODEX_INSTALL
    if not force and installed_codex_version(prefix) == CODEX_VERSION and binary.is_file():
        return binary
    arch = machine or platform.machine()
    build = builds.get(arch)
    if build is None or (machine is None and platform.system() != "Linux"):
        raise EnvironmentProblem(
            f"no pinned Codex build for {platform.system()}/{arch} "
            f"(evolve-action installs it on Linux {', '.join(sorted(builds))})",
            hint=f"install it yourself (npm install -g @openai/codex@{CODEX_VERSION}) so that "
            "`codex` is on PATH",
        )
    url = tarball_url(build, registry=registry)
    request = urllib.request.Request(url, headers={"User-Agent": "evolve-action"})
    open_url = opener or _default_opener(environ)
    prefix.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=prefix) as data:
        try:
            with open_url(request) as response:
                shutil.copyfileobj(response, data, _CHUNK)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EnvironmentProblem(
                f"cannot download Codex from {url}: {reason}",
                hint="check the network (the npm registry must be reachable) and any proxy "
                "variables; nothing was installed",
            ) from None
        _check_integrity(data, build.integrity, url)
        staging = Path(tempfile.mkdtemp(prefix=".codex-new.", dir=prefix))
        try:
            _extract(data, build.target, staging)
            (staging / _MARKER).write_text(CODEX_VERSION + "\n", encoding="utf-8")
            old = prefix / f".codex-old.{os.getpid()}"
            if home.exists():
                home.rename(old)
            staging.rename(home)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return binary
