"""Throwaway agent workspaces: a temp dir, skills installed, a git repository with one commit.

Owns: `create_trigger_workspace` (every skill of the plugin symlinked under `.claude/skills/`, engine
spec §8.2), `create_workspace` (the general form: chosen skills and staged files), `remove_workspace`,
`plugin_skill_dirs` and `shared_copy` (a run-wide read-only copy of a plugin for an agent user that
may not reach the repository). Guarantees: git runs with an isolated configuration (`GIT_CONFIG_GLOBAL` and
`GIT_CONFIG_SYSTEM` = /dev/null, fixed identity) and an allowlisted environment (`procenv.safe_env`);
failures raise `EnvironmentProblem` naming the git command and its output. Never prints, never reads
`os.environ` (callers pass `environ`). Skills are copied by default (symlinks inside the skill
dereferenced, except links whose target leaves the repository: those are skipped, never followed),
so an agent that may write (evals run with bypassPermissions) can never change the
user's repository through the workspace, and host files never reach it; only trigger workspaces (the agent may only use Skill and
Read) link them, which is cheaper and read-only in practice, unless the agent runs as an unprivileged
user (`confine`), which may not reach the repository: then they are copied too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from evolve_action.errors import EnvironmentProblem
from evolve_action.harness import _confine as confine
from evolve_action.harness import _lifecycle as lifecycle
from evolve_action.harness import _procenv as procenv

SKILLS_DIR = Path(".claude") / "skills"
"""Where Claude Code discovers project skills, relative to the workspace."""


def plugin_skill_dirs(skills_dir: Path) -> list[Path]:
    """Every non-symlink subdirectory of `skills_dir` holding a regular `SKILL.md`, absolute, sorted."""
    try:
        with os.scandir(skills_dir) as entries:
            names = sorted(
                (e.name for e in entries if e.is_dir(follow_symlinks=False)),
                key=lambda n: n.encode("utf-8", "surrogateescape"),
            )
    except OSError:
        return []
    out = []
    for name in names:
        skill = (skills_dir / name).absolute()
        if (skill / "SKILL.md").is_file():
            out.append(skill)
    return out


def escapes(path: Path, root: Path) -> bool:
    """True when `path`, with every symlink resolved, lies outside `root` (or cannot be resolved)."""
    try:
        return not path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):
        return True


def repository_root(start: Path) -> Path:
    """The repository holding `start`: the nearest ancestor with `.git`, else the topmost one with
    `.claude-plugin` or `.evolve.yaml`, else `start`'s grandparent (`<root>/evals/<skill>`)."""
    start = Path(os.path.abspath(start))  # noqa: PTH100 - lexical, symlinks are what we check
    top: Path | None = None
    for parent in (start, *start.parents):
        if (parent / ".git").exists():
            return parent
        if (parent / ".claude-plugin").is_dir() or (parent / ".evolve.yaml").is_file():
            top = parent
    return top or start.parent.parent


def outside_links(directory: Path, root: Path) -> list[Path]:
    """Symlinks under `directory` (directory links not descended) whose target leaves `root`."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=False):
        for name in sorted([*dirnames, *filenames]):
            path = Path(dirpath) / name
            if path.is_symlink() and escapes(path, root):
                found.append(path)
    return sorted(found)


def _skip_outside(root: Path) -> Callable[[str, list[str]], set[str]]:
    def ignore(directory: str, names: list[str]) -> set[str]:
        return {
            n
            for n in names
            if (Path(directory) / n).is_symlink() and escapes(Path(directory) / n, root)
        }

    return ignore


def copy_tree(source: Path, target: Path) -> None:
    """Copy `source` to `target`, links dereferenced, except those leaving its repository (skipped)."""
    shutil.copytree(source, target, symlinks=False, ignore=_skip_outside(repository_root(source)))


def create_workspace(
    *,
    prefix: str,
    skills: Iterable[Path],
    environ: Mapping[str, str],
    files: Iterable[tuple[str, bytes]] = (),
    tmp_root: Path | None = None,
    link_skills: bool = False,
) -> Path:
    """Make a temp workspace: stage `files`, install `skills` under `.claude/skills/`, `git init` + commit.

    Skills are copied (`symlinks=False`: links inside a skill are dereferenced) unless `link_skills`,
    which symlinks them instead — only for read-only agents (triggers), since a write through a link
    would land in the user's repository.
    """
    ws = Path(tempfile.mkdtemp(prefix=prefix, dir=tmp_root or lifecycle.scratch_dir()))
    try:
        for rel, data in files:
            dest = ws / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            dest.chmod(0o644)
        target = ws / SKILLS_DIR
        target.mkdir(parents=True, exist_ok=True)
        # An unprivileged agent user may not reach the repository: it gets copies.
        link = link_skills and confine.current(environ).user is None
        for skill in skills:
            root = repository_root(skill)
            if link and not outside_links(skill, root):
                (target / skill.name).symlink_to(skill.absolute(), target_is_directory=True)
            else:  # links that leave the repository are never followed (`run checks` reports them)
                copy_tree(skill, target / skill.name)
        _git_init(ws, environ)
    except BaseException:
        shutil.rmtree(ws, ignore_errors=True)
        raise
    return ws


def create_trigger_workspace(
    skills_dir: Path, *, environ: Mapping[str, str], tmp_root: Path | None = None
) -> Path:
    """A `triggers.*` workspace with every skill of the plugin installed (engine spec §8.2)."""
    return create_workspace(
        prefix="triggers.",
        skills=plugin_skill_dirs(skills_dir),
        environ=environ,
        tmp_root=tmp_root,
        link_skills=True,
    )


def remove_workspace(ws: Path) -> None:
    """Delete a workspace (symlinked skills are unlinked, never followed; copies are deleted)."""
    shutil.rmtree(ws, ignore_errors=True)


def _git_init(ws: Path, environ: Mapping[str, str]) -> None:
    env = procenv.safe_env(
        environ,
        extra={"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull},
    )
    for args in (
        ["-c", "init.defaultBranch=main", "init", "-q"],
        ["-c", "core.excludesFile=/dev/null", "add", "-A"],
        [
            "-c",
            "user.name=evolve",
            "-c",
            "user.email=evolve@workspace.invalid",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "initial workspace state",
        ],
    ):
        try:
            proc = subprocess.run(
                ["git", *args],
                cwd=ws,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError as exc:
            raise EnvironmentProblem(
                f"git {' '.join(args)}: {exc}", hint="install git (workspaces are git repositories)"
            ) from exc
        if proc.returncode != 0:
            output = (proc.stdout + proc.stderr).strip()
            raise EnvironmentProblem(f"git {' '.join(args)}: exit {proc.returncode}: {output}")


def shared_copy(path: Path, *, key: str) -> Path:
    """A read-only copy of `path` in the run's scratch dir that every user can read (made once per
    run and `key`), for an agent user that may not reach the repository."""
    base = lifecycle.scratch_dir()
    if base is None:
        return path
    target = base / f"shared.{key}"
    if not target.exists():
        partial = base / f"shared.{key}.{os.getpid()}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        copy_tree(path, partial)
        for dirpath, dirnames, filenames in os.walk(partial):
            for name in dirnames:
                (Path(dirpath) / name).chmod(0o755)
            for name in filenames:
                file = Path(dirpath) / name
                file.chmod(0o755 if os.access(file, os.X_OK) else 0o644)
        partial.chmod(0o755)
        with contextlib.suppress(OSError):
            partial.rename(target)
        shutil.rmtree(partial, ignore_errors=True)
    return target
