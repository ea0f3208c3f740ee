"""Build the action's image with podman and run it as GitHub's runner runs a Docker action.

    problem = podman_problem()                       # None, or why the container tests must skip
    image = build_image(REPO)                        # cached by a hash of the build's inputs
    runner = FakeRunner.create(tmp_path)             # the runner's directories, owned by uid 1001
    write(runner.workspace, ...)
    result = runner.run(image, ["pr"], inputs={...}, env={...}, event={...})
    result.outputs, result.summary, result.first_output_seconds

**The build** (`build_image`): the image is tagged `localhost/evolve-action-test:<digest>`, where
the digest covers every file the build reads (`Dockerfile`, `.dockerignore`, `pyproject.toml`,
`README.md`, `scripts/install.sh`, `scripts/entrypoint.sh`, everything under `src/` except byte
code), the base image's ID and the build flags. An existing tag is reused without calling
`podman build`; otherwise podman builds it (its own layer cache keeps the system packages and the
dependencies when only `src/` changed) and older test tags are removed. A file lock serialises
concurrent builds. `EVOLVE_CONTAINER_IMAGE` names a ready image to use instead (e.g. a released
`ghcr.io/...@sha256:...`); `EVOLVE_CONTAINER_BASE` names the base image that replaces the
Dockerfile's `FROM` (default: `localhost/base` when it exists, the one .ci/run makes with mmdebstrap;
otherwise the Dockerfile's own `FROM`, which needs a registry).

**The run** (`FakeRunner.run`): what the runner's `docker run` does for a `runs.using: docker`
action (actions/runner, ContainerActionHandler): `--workdir /github/workspace`, the checkout
mounted at `/github/workspace`, `_temp/_github_home` at `/github/home`, `_temp/_github_workflow`
(with `event.json`) at `/github/workflow`, `_temp/_runner_file_commands` at `/github/file_commands`
holding the `GITHUB_OUTPUT`/`GITHUB_STEP_SUMMARY`/`GITHUB_ENV`/`GITHUB_PATH`/`GITHUB_STATE` files,
all owned by the runner's uid (1001, as on GitHub-hosted runners); every input of `action.yml` as
`INPUT_<NAME>` with its default unless given; the `GITHUB_*`/`RUNNER_*` variables; `CI=true`,
`GITHUB_ACTIONS=true`. The network is the host's (`--network host`), so the container reaches
servers the test started on 127.0.0.1. `--runtime runc` (crun refuses this sandbox's cgroup mode).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve_action.encoding import decode_yaml


def _load_yaml(text: str) -> Any:
    """Decode YAML as evolve's yaml.v3 does (`on:` stays a string key)."""
    return decode_yaml(text, Path("inline.yaml")).value


IMAGE_REPOSITORY = "localhost/evolve-action-test"
DEFAULT_BASE = "localhost/base"
RUNNER_UID = 1001
"""The runner's user on GitHub-hosted runners (`runner`, uid 1001, gid 118 there; 1001 here)."""
RUNNER_GID = 1001
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
LOCK = Path("/var/tmp/evolve-action-container-build.lock")
BUILD_INPUTS = (
    "Dockerfile",
    ".dockerignore",
    "pyproject.toml",
    "README.md",
    "scripts/install.sh",
    "scripts/entrypoint.sh",
    "src",
)
"""What the image's build reads (`.dockerignore` admits exactly these); their content keys the tag."""


class ContainerError(RuntimeError):
    """podman failed; the message holds the command and the tail of its output."""


# --------------------------------------------------------------------------------------------------
# podman


def podman_problem() -> str | None:
    """Why the container tests cannot run here, or None when podman is usable."""
    if shutil.which("podman") is None:
        return (
            "podman is not installed (the container tests build and run the action's image; "
            "apt-get install podman runc, or run .ci/run, which does)"
        )
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        return (
            "the container tests need root: they chown the runner's mounts to uid 1001 and run "
            "rootful podman, as .ci/run does"
        )
    try:
        done = subprocess.run(
            ["podman", "info", "--format", "{{.Host.OCIRuntime.Name}}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"podman info failed: {exc}"
    if done.returncode != 0:
        return f"podman info failed: {done.stderr.strip()[-300:]}"
    return None


def podman(
    *args: str, timeout: float = 120, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run `podman ARGS`; raise `ContainerError` with the output's tail when `check` and it fails."""
    done = subprocess.run(
        ["podman", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        tail = (done.stdout + done.stderr)[-4000:]
        raise ContainerError(f"podman {' '.join(args[:3])} … exited {done.returncode}:\n{tail}")
    return done


def image_exists(name: str) -> bool:
    return podman("image", "exists", name, check=False).returncode == 0


def image_id(name: str) -> str:
    return podman("image", "inspect", "--format", "{{.Id}}", name).stdout.strip()


def image_size(name: str) -> int:
    """The image's size in bytes, as `podman images` reports it."""
    return int(podman("image", "inspect", "--format", "{{.Size}}", name).stdout.strip())


# --------------------------------------------------------------------------------------------------
# building


@dataclass(frozen=True)
class Image:
    """A built (or reused) image."""

    name: str
    built: bool
    """True when this call ran `podman build`; False when the tag already existed."""
    seconds: float
    """Time spent in this call (hashing, and building when `built`)."""
    log: str = ""


def _input_files(repo: Path) -> Iterator[Path]:
    for name in BUILD_INPUTS:
        path = repo / name
        if path.is_dir():
            for item in sorted(path.rglob("*")):
                if item.is_file() and "__pycache__" not in item.parts and item.suffix != ".pyc":
                    yield item
        elif path.is_file():
            yield path


def inputs_digest(repo: Path, *, base: str | None, flags: Sequence[str] = ()) -> str:
    """SHA-256 over the build's inputs: each file's path, mode bit and content; the base; the flags."""
    digest = hashlib.sha256()
    for path in _input_files(repo):
        rel = path.relative_to(repo).as_posix()
        executable = "x" if os.access(path, os.X_OK) else "-"
        digest.update(f"{rel}\0{executable}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    base_id = image_id(base) if base else "dockerfile-from"
    digest.update(f"base\0{base_id}\0flags\0{' '.join(flags)}".encode())
    return digest.hexdigest()


def default_base() -> str | None:
    """The base replacing the Dockerfile's `FROM`: `EVOLVE_CONTAINER_BASE`, else `localhost/base` if present."""
    configured = os.environ.get("EVOLVE_CONTAINER_BASE")
    if configured is not None:
        return configured or None
    return DEFAULT_BASE if image_exists(DEFAULT_BASE) else None


def build_flags(base: str | None) -> list[str]:
    flags = ["--runtime", "runc", "--network", "host", "--layers"]
    if base:
        flags += ["--from", base]
    if HOST_CA.is_file():
        # The registries are reached through a TLS-inspecting path whose CA only the host trusts.
        flags += ["-v", f"{HOST_CA}:{HOST_CA}:ro"]
    return flags


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_image(
    repo: Path,
    *,
    base: str | None = None,
    timeout: float = 1500,
    build_args: Mapping[str, str] | None = None,
    repository: str = IMAGE_REPOSITORY,
) -> Image:
    """The image of `repo`'s Dockerfile, built unless a tag for the same inputs exists.

    `build_args` (e.g. `EXTRA_HARNESSES=codex`) make a variant; give it its own `repository`, so
    building it does not remove the default image's tag.
    """
    started = time.monotonic()
    ready = os.environ.get("EVOLVE_CONTAINER_IMAGE")
    if ready:
        if not image_exists(ready):
            podman("pull", ready, timeout=timeout)
        return Image(ready, built=False, seconds=time.monotonic() - started)
    base = base if base is not None else default_base()
    flags = build_flags(base)
    for key, value in sorted((build_args or {}).items()):
        flags += ["--build-arg", f"{key}={value}"]
    with _build_lock():
        tag = f"{repository}:{inputs_digest(repo, base=base, flags=flags)[:20]}"
        if image_exists(tag):
            return Image(tag, built=False, seconds=time.monotonic() - started)
        done = podman(
            "build",
            *flags,
            "--label",
            f"org.opencontainers.image.version={_version(repo)}",
            "-t",
            tag,
            "-f",
            str(repo / "Dockerfile"),
            str(repo),
            timeout=timeout,
        )
        _remove_other_tags(tag, repository)
        return Image(tag, built=True, seconds=time.monotonic() - started, log=done.stdout)


def _version(repo: Path) -> str:
    import tomllib

    with (repo / "pyproject.toml").open("rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


def _remove_other_tags(keep: str, repository: str = IMAGE_REPOSITORY) -> None:
    listed = podman(
        "images",
        "--filter",
        f"reference={repository}",
        "--format",
        "{{.Repository}}:{{.Tag}}",
    ).stdout.split()
    stale = [name for name in listed if name != keep and not name.endswith(":<none>")]
    if stale:
        podman("rmi", *stale, check=False)


# --------------------------------------------------------------------------------------------------
# running as the runner does


def action_defaults(repo: Path) -> dict[str, str]:
    """`action.yml`'s inputs and their defaults (`${{ github.token }}` is left as written)."""
    meta = _load_yaml((repo / "action.yml").read_text(encoding="utf-8"))
    return {name: str(spec.get("default", "")) for name, spec in meta["inputs"].items()}


@dataclass
class RunResult:
    """What one `podman run` of the action did."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    """From starting `podman run` to its exit."""
    first_output_seconds: float | None
    """From starting `podman run` to the first byte on stdout or stderr."""
    outputs: dict[str, str]
    """`GITHUB_OUTPUT` parsed (`name=value` lines and `name<<DELIM` blocks)."""
    summary: str
    """The step summary file's text."""
    command: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"exit {self.returncode}\n--- stdout\n{self.stdout[-6000:]}\n"
            f"--- stderr\n{self.stderr[-6000:]}\n--- outputs\n{self.outputs}\n"
            f"--- summary\n{self.summary[-3000:]}"
        )


def parse_output_file(text: str) -> dict[str, str]:
    """Parse a `GITHUB_OUTPUT` file as the runner does (both forms; a later value wins)."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value: list[str] = []
            while index < len(lines) and lines[index] != delimiter:
                value.append(lines[index])
                index += 1
            if index >= len(lines):
                raise ValueError(f"output {name!r}: delimiter {delimiter!r} never closes")
            index += 1
            outputs[name] = "\n".join(value)
        else:
            name, _, text_value = line.partition("=")
            outputs[name] = text_value
    return outputs


@dataclass
class FakeRunner:
    """The directories of one job on a runner (`/home/runner/work` on GitHub-hosted runners)."""

    root: Path
    uid: int = RUNNER_UID
    gid: int = RUNNER_GID
    step_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def workspace(self) -> Path:
        return self.root / "work" / "skills" / "skills"

    @property
    def temp(self) -> Path:
        return self.root / "work" / "_temp"

    @property
    def home(self) -> Path:
        return self.temp / "_github_home"

    @property
    def workflow(self) -> Path:
        return self.temp / "_github_workflow"

    @property
    def file_commands(self) -> Path:
        return self.temp / "_runner_file_commands"

    def command_file(self, kind: str) -> Path:
        """`set_output`, `step_summary`, `set_env`, `add_path` or `save_state` of this step."""
        return self.file_commands / f"{kind}_{self.step_id}"

    @classmethod
    def create(cls, root: Path, *, uid: int = RUNNER_UID, gid: int = RUNNER_GID) -> FakeRunner:
        runner = cls(root, uid=uid, gid=gid)
        for directory in (runner.workspace, runner.home, runner.workflow, runner.file_commands):
            directory.mkdir(parents=True, exist_ok=True)
        for kind in ("set_output", "step_summary", "set_env", "add_path", "save_state"):
            runner.command_file(kind).touch()
        return runner

    def give_to_runner(self) -> None:
        """chown everything under the runner's root to the runner's uid (as the runner owns it)."""
        for path in [self.root, *self.root.rglob("*")]:
            os.lchown(path, self.uid, self.gid)
        # The runner's uid must reach its directories from the host too (later steps run as it):
        # let others traverse the test's temporary parents (pytest makes them 0700).
        for parent in self.root.parents:
            if parent == Path(tempfile.gettempdir()) or parent == Path("/"):
                break
            mode = parent.stat().st_mode
            if not mode & 0o001:
                parent.chmod(mode | 0o001)

    def environment(
        self,
        *,
        repo: Path,
        inputs: Mapping[str, str],
        github: Mapping[str, str],
        env: Mapping[str, str],
        event_name: str,
    ) -> dict[str, str]:
        """The variables the runner passes to a Docker action's container."""
        values = action_defaults(repo)
        unknown = set(inputs) - set(values)
        if unknown:
            raise ValueError(f"inputs not in action.yml: {sorted(unknown)}")
        values.update(inputs)
        token = github.get("token", "")
        variables: dict[str, str] = {}
        for name, value in values.items():
            if value == "${{ github.token }}":
                value = token
            variables[f"INPUT_{name.replace(' ', '_').upper()}"] = value
        repository = github.get("repository", "octo/skills")
        variables.update(
            {
                "HOME": "/github/home",
                "CI": "true",
                "GITHUB_ACTIONS": "true",
                "GITHUB_WORKSPACE": "/github/workspace",
                "GITHUB_EVENT_PATH": "/github/workflow/event.json",
                "GITHUB_EVENT_NAME": event_name,
                "GITHUB_OUTPUT": f"/github/file_commands/set_output_{self.step_id}",
                "GITHUB_STEP_SUMMARY": f"/github/file_commands/step_summary_{self.step_id}",
                "GITHUB_ENV": f"/github/file_commands/set_env_{self.step_id}",
                "GITHUB_PATH": f"/github/file_commands/add_path_{self.step_id}",
                "GITHUB_STATE": f"/github/file_commands/save_state_{self.step_id}",
                "GITHUB_REPOSITORY": repository,
                "GITHUB_REPOSITORY_OWNER": repository.partition("/")[0],
                "GITHUB_ACTION": "__evolve-action",
                "GITHUB_ACTION_REPOSITORY": "",
                "GITHUB_ACTOR": "octocat",
                "GITHUB_TRIGGERING_ACTOR": "octocat",
                "GITHUB_JOB": "evaluate",
                "GITHUB_WORKFLOW": "skills",
                "GITHUB_RUN_ID": "4242",
                "GITHUB_RUN_NUMBER": "7",
                "GITHUB_RUN_ATTEMPT": "1",
                "GITHUB_RETENTION_DAYS": "90",
                "GITHUB_SERVER_URL": github.get("server_url", "https://github.com"),
                "GITHUB_API_URL": github.get("api_url", "https://api.github.com"),
                # As the runner sets it: on the API's host (GitHub.com: api.github.com/graphql).
                "GITHUB_GRAPHQL_URL": github.get(
                    "graphql_url",
                    github.get("api_url", "https://api.github.com").removesuffix("/v3")
                    + "/graphql",
                ),
                "GITHUB_SHA": github.get("sha", ""),
                "GITHUB_REF": github.get("ref", ""),
                "GITHUB_REF_NAME": github.get("ref", "").rpartition("/")[2],
                "GITHUB_REF_TYPE": "branch",
                "GITHUB_HEAD_REF": github.get("head_ref", ""),
                "GITHUB_BASE_REF": github.get("base_ref", ""),
                "RUNNER_OS": "Linux",
                "RUNNER_ARCH": "X64",
                "RUNNER_NAME": "GitHub Actions 1",
                "RUNNER_ENVIRONMENT": "github-hosted",
                # The runner passes its host paths here, not mounted in the container.
                "RUNNER_TEMP": "/home/runner/work/_temp",
                "RUNNER_TOOL_CACHE": "/opt/hostedtoolcache",
                "RUNNER_WORKSPACE": "/home/runner/work/skills",
            }
        )
        variables.update(env)
        return variables

    def run(
        self,
        image: str,
        args: Sequence[str],
        *,
        repo: Path,
        inputs: Mapping[str, str] | None = None,
        github: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        event: Mapping[str, Any] | None = None,
        event_name: str = "pull_request",
        entrypoint: str | None = None,
        extra_mounts: Sequence[tuple[Path, str, str]] = (),
        timeout: float = 600,
        on_start: Callable[[float], None] | None = None,
    ) -> RunResult:
        """`podman run` the image as the runner would, wait for it, read back the command files."""
        (self.workflow / "event.json").write_text(json.dumps(event or {}), encoding="utf-8")
        self.give_to_runner()
        variables = self.environment(
            repo=repo,
            inputs=inputs or {},
            github=github or {},
            env=env or {},
            event_name=event_name,
        )
        command = [
            "podman",
            "run",
            "--rm",
            "--runtime",
            "runc",
            "--network",
            "host",
            "--workdir",
            "/github/workspace",
            "-v",
            f"{self.home}:/github/home",
            "-v",
            f"{self.workflow}:/github/workflow",
            "-v",
            f"{self.file_commands}:/github/file_commands",
            "-v",
            f"{self.workspace}:/github/workspace",
        ]
        for source, target, options in extra_mounts:
            command += ["-v", f"{source}:{target}" + (f":{options}" if options else "")]
        for name in sorted(variables):
            # PATH by value: the podman we start needs the host's PATH (a workflow's `env: PATH:`
            # is the container's); every other value by name, kept off the command line.
            command += ["-e", f"PATH={variables[name]}" if name == "PATH" else name]
        if entrypoint is not None:
            command += ["--entrypoint", entrypoint]
        command += [image, *args]
        child_env = {**variables, "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")}
        started = time.monotonic()
        if on_start is not None:
            on_start(started)
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=child_env,
        )
        first: list[float] = []
        chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}

        def pump(name: str, stream: Any) -> None:
            while block := stream.read1(65536):
                if not first:
                    first.append(time.monotonic())
                chunks[name].append(block)

        assert process.stdout is not None and process.stderr is not None
        threads = [
            threading.Thread(target=pump, args=("stdout", process.stdout), daemon=True),
            threading.Thread(target=pump, args=("stderr", process.stderr), daemon=True),
        ]
        for thread in threads:
            thread.start()
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        finally:
            for thread in threads:
                thread.join(timeout=10)
        seconds = time.monotonic() - started
        return RunResult(
            returncode=returncode,
            stdout=b"".join(chunks["stdout"]).decode("utf-8", "replace"),
            stderr=b"".join(chunks["stderr"]).decode("utf-8", "replace"),
            seconds=seconds,
            first_output_seconds=(first[0] - started) if first else None,
            outputs=parse_output_file(self.command_file("set_output").read_text(encoding="utf-8")),
            summary=self.command_file("step_summary").read_text(encoding="utf-8"),
            command=command,
        )

    def foreign_owned(self) -> list[str]:
        """Paths under the runner's directories not owned by the runner's uid (e.g. left by root)."""
        found = []
        for path in [self.root, *self.root.rglob("*")]:
            info = path.lstat()
            if info.st_uid != self.uid:
                found.append(f"{path.relative_to(self.root)} (uid {info.st_uid})")
        return found
