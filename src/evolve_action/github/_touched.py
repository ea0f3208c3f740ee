"""Which skills a change touches, and the changed paths from git when the API cannot give them.

Owns: `ChangedPath` (one changed file: path, status, previous path for renames and copies, from the
files API or `git diff --name-status`), `touched_skills` (the rule, a pure function of the
repository model and the changed paths) and `git_changed_paths` (the fallback: merge base and
`git diff --name-status -M -z` between it and the head, fetching what a shallow checkout lacks).

The rule (docs/action.md, "Which skills a PR touches"): a skill is touched when a changed path is
inside its skill directory or its eval directory, or is one of its definition files, wherever the
repository model (`Repository.places`) puts them — `<plugin>/skills/<name>/`, a `skills` list of a
marketplace entry or plugin.json, `.claude/skills/<name>/`, a bare `skills/<name>/`,
`<plugin>/evals/<name>/` (triggers, evals, fixtures), a root `evals/evals.json` bound to it; a change to a plugin's manifest
(`.claude-plugin/plugin.json`, `.codex-plugin/plugin.json`) touches all that plugin's skills; a
change to the repository config (`.evolve.*` at the root) or the marketplace manifest touches every
skill. A renamed skill is touched under its new name (with the old one as reason); a skill whose
files were removed and that no longer exists — or whose eval directory stayed while its SKILL.md
went — is reported as removed, never run. Paths outside the
plugin repository (or matching no skill) touch nothing.

Guarantees: output is sorted by (plugin, skill) in byte order (the sweep order); each touched skill
carries every reason, deduplicated. Git runs only through `_git`, with `git_env` (safe.directory,
no tokens, no `INPUT_*`), never prompts, and never deepens a full clone.
"""

from __future__ import annotations

import enum
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from evolve_action.errors import EnvironmentProblem
from evolve_action.github._context import git_env
from evolve_action.repo import (
    CLAUDE_MARKETPLACE,
    CODEX_MARKETPLACE,
    CONFIG_NAMES,
    Repository,
    SkillKey,
)

__all__ = [
    "ChangeStatus",
    "ChangedPath",
    "Touched",
    "TouchedSkill",
    "git_changed_paths",
    "touched_skills",
]


class ChangeStatus(enum.StrEnum):
    """How a file changed (the files API's words)."""

    ADDED = "added"
    MODIFIED = "modified"
    REMOVED = "removed"
    RENAMED = "renamed"
    COPIED = "copied"
    CHANGED = "changed"
    """Mode or type change only."""
    UNCHANGED = "unchanged"


_GIT_STATUS = {
    "A": ChangeStatus.ADDED,
    "M": ChangeStatus.MODIFIED,
    "D": ChangeStatus.REMOVED,
    "R": ChangeStatus.RENAMED,
    "C": ChangeStatus.COPIED,
    "T": ChangeStatus.CHANGED,
    "U": ChangeStatus.MODIFIED,
    "X": ChangeStatus.CHANGED,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangedPath:
    """One changed file, relative to the git repository's top level, with `/` separators."""

    path: str
    status: ChangeStatus = ChangeStatus.MODIFIED
    previous_path: str | None = None
    """The old path of a rename or the source of a copy."""

    @classmethod
    def from_api(
        cls, filename: str, status: str, previous_filename: str | None = None
    ) -> ChangedPath:
        """From a `pulls/{n}/files` entry (an unknown status counts as `modified`)."""
        try:
            kind = ChangeStatus(status)
        except ValueError:
            kind = ChangeStatus.MODIFIED
        return cls(path=filename, status=kind, previous_path=previous_filename or None)

    @classmethod
    def from_git(cls, code: str, path: str, previous_path: str | None = None) -> ChangedPath:
        """From one `git diff --name-status` record (`R100` and the like keep their letter)."""
        status = _GIT_STATUS.get(code[:1], ChangeStatus.MODIFIED)
        return cls(path=path, status=status, previous_path=previous_path or None)


@dataclass(frozen=True, slots=True, kw_only=True)
class TouchedSkill:
    """A skill a change touched, and why."""

    plugin: str
    skill: str
    reasons: tuple[str, ...]
    """Human-readable reasons, e.g. `changed plugins/a/skills/x/SKILL.md`."""
    renamed_from: str | None = None
    """`plugin/skill` it was renamed from, when the change renamed it."""

    @property
    def key(self) -> str:
        """`plugin/skill`."""
        return f"{self.plugin}/{self.skill}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Touched:
    """The outcome of the rule."""

    skills: tuple[TouchedSkill, ...] = ()
    """Touched skills that exist at the head: these are evaluated."""
    removed: tuple[TouchedSkill, ...] = ()
    """Skills the change deleted: reported as removed, never run."""

    @property
    def keys(self) -> tuple[str, ...]:
        """`plugin/skill` of every touched (not removed) skill."""
        return tuple(s.key for s in self.skills)

    @property
    def empty(self) -> bool:
        """True when nothing is touched and nothing removed."""
        return not self.skills and not self.removed


_REPO_WIDE = frozenset((*CONFIG_NAMES, CLAUDE_MARKETPLACE, CODEX_MARKETPLACE))


def touched_skills(
    repo: Repository, changes: Iterable[ChangedPath], *, prefix: str = ""
) -> Touched:
    """Apply the touched-skill rule (module docstring) to the changed paths.

    Args:
        repo: the repository model at the head.
        changes: changed paths relative to the git top level.
        prefix: the plugin repository's root relative to the git top level (`""` when they are
            the same, e.g. `sub/dir` for `working_directory: sub/dir`).
    """
    places = repo.places()
    existing = dict.fromkeys(places.existing)

    reasons: dict[SkillKey, list[str]] = {}
    renamed: dict[SkillKey, SkillKey] = {}
    gone: dict[SkillKey, list[str]] = {}

    def note(key: SkillKey, reason: str) -> None:
        bucket = reasons.setdefault(key, [])
        if reason not in bucket:
            bucket.append(reason)

    def lost(key: SkillKey, path: str) -> None:
        bucket = gone.setdefault(key, [])
        if path not in bucket:
            bucket.append(path)

    for change in changes:
        new_rel = _strip(change.path, prefix)
        old_rel = _strip(change.previous_path, prefix) if change.previous_path else None
        shown = change.path
        wide = [r for r in (new_rel, old_rel) if r is not None and r in _REPO_WIDE]
        if wide:
            for key in existing:
                note(key, f"{_verb(change)} {shown} (repository-wide)")
            continue
        manifest_of = {
            p for r in (new_rel, old_rel) if r is not None for p in places.manifest_plugins(r)
        }
        if manifest_of:
            for key in existing:
                if key[0] in manifest_of:
                    note(key, f"{_verb(change)} {shown} (plugin manifest)")
            continue
        new_keys = places.owners(new_rel) if new_rel is not None else ()
        old_keys = places.owners(old_rel) if old_rel is not None else ()
        if change.status is ChangeStatus.REMOVED:
            for key in new_keys:
                if key in existing:
                    note(key, f"removed {shown}")
                else:
                    lost(key, shown)
            continue
        for new_key in new_keys:
            if new_key not in existing:
                if new_key in places.orphans:
                    lost(new_key, shown)  # its definitions stayed; the skill itself is gone
                continue
            moved_from = [
                k for k in old_keys if k != new_key and k not in existing and k not in new_keys
            ]
            if change.status is ChangeStatus.RENAMED and moved_from:
                renamed[new_key] = moved_from[0]
                note(new_key, f"renamed from {'/'.join(moved_from[0])}")
            else:
                note(new_key, f"{_verb(change)} {shown}")
        if change.status is ChangeStatus.RENAMED:
            for old_key in old_keys:
                if old_key in new_keys:
                    continue
                if old_key in existing:
                    note(old_key, f"moved {change.previous_path} to {shown}")
                else:
                    lost(old_key, change.previous_path or "")

    renamed_away = set(renamed.values())
    touched = tuple(
        TouchedSkill(
            plugin=key[0],
            skill=key[1],
            reasons=tuple(reasons[key]),
            renamed_from="/".join(renamed[key]) if key in renamed else None,
        )
        for key in _sorted(reasons)
    )
    removed = tuple(
        TouchedSkill(plugin=key[0], skill=key[1], reasons=(f"removed {_summarise(gone[key])}",))
        for key in _sorted(gone)
        if key not in existing and key not in renamed_away
    )
    return Touched(skills=touched, removed=removed)


def _sorted(keys: Iterable[SkillKey]) -> list[SkillKey]:
    return sorted(
        keys,
        key=lambda k: (
            k[0].encode("utf-8", "surrogateescape"),
            k[1].encode("utf-8", "surrogateescape"),
        ),
    )


def _summarise(paths: Sequence[str]) -> str:
    first = sorted(paths)[0]
    return first if len(paths) == 1 else f"{first} and {len(paths) - 1} more files"


def _verb(change: ChangedPath) -> str:
    return {
        ChangeStatus.ADDED: "added",
        ChangeStatus.REMOVED: "removed",
        ChangeStatus.RENAMED: "renamed",
        ChangeStatus.COPIED: "copied",
    }.get(change.status, "changed")


def _strip(path: str | None, prefix: str) -> str | None:
    """`path` relative to the plugin repository root, or None when outside it."""
    if path is None:
        return None
    clean = PurePosixPath(path.strip("/"))
    if any(part in ("..", "") for part in clean.parts):
        return None
    root = PurePosixPath(prefix.strip("/")) if prefix.strip("/") not in ("", ".") else None
    if root is None:
        return clean.as_posix()
    try:
        return clean.relative_to(root).as_posix()
    except ValueError:
        return None


# --- the git fallback --------------------------------------------------------------------------

_MAX_DEPTH = 4096


def git_changed_paths(
    repo_dir: Path,
    *,
    base: str,
    head: str,
    environ: Mapping[str, str],
    remote: str = "origin",
    fetch_refs: Sequence[str] = (),
) -> list[ChangedPath]:
    """The changes from the merge base of `base` and `head` to `head`, with renames.

    `base` and `head` are commit SHAs (or refs). Objects a shallow checkout lacks are fetched from
    `remote`: both commits by SHA (plus `fetch_refs`, e.g. `refs/heads/main`, for servers that refuse
    SHA wants), then deeper history (`--deepen` in doubling steps, then `--unshallow`) until the
    merge base is present. A full clone is never deepened.

    Raises:
        EnvironmentProblem: git is missing, a commit cannot be fetched, or the two commits share
            no history.
    """
    env = git_env(environ, safe_directories=(repo_dir,))
    top = _git(repo_dir, env, "rev-parse", "--show-toplevel").strip()
    env = git_env(environ, safe_directories=tuple(dict.fromkeys((repo_dir, Path(top)))))
    missing = [c for c in (base, head) if not _has_commit(repo_dir, env, c)]
    if missing:
        detail = ""
        try:
            _fetch(
                repo_dir,
                env,
                remote,
                [*missing, *fetch_refs],
                depth=1 if _shallow(repo_dir, env) else None,
            )
        except EnvironmentProblem as exc:
            detail = f" ({exc.message})"
        still = [c for c in missing if not _has_commit(repo_dir, env, c)]
        if still:
            raise EnvironmentProblem(
                f"git: commit {still[0]} is not in the checkout and could not be fetched from "
                f"{remote}{detail}",
                path=repo_dir,
                hint="check that the commit exists and the job can read the repository "
                "(permissions: contents: read), or check out with fetch-depth: 0",
            )
    merge_base = _merge_base(repo_dir, env, base, head)
    depth = 16
    while merge_base is None and _shallow(repo_dir, env):
        if depth > _MAX_DEPTH:
            _fetch(repo_dir, env, remote, [base, head, *fetch_refs], unshallow=True)
        else:
            _fetch(repo_dir, env, remote, [base, head, *fetch_refs], deepen=depth)
            depth *= 4
        merge_base = _merge_base(repo_dir, env, base, head)
    if merge_base is None:
        raise EnvironmentProblem(
            f"git: {base} and {head} have no common history (no merge base)",
            path=repo_dir,
            hint="the base and head must belong to one repository",
        )
    out = _git(
        repo_dir,
        env,
        "-c",
        "core.quotePath=false",
        "diff",
        "--no-ext-diff",
        "-M",
        "--name-status",
        "-z",
        merge_base,
        head,
    )
    return _parse_name_status(out)


def _parse_name_status(out: str) -> list[ChangedPath]:
    fields = out.split("\0")
    if fields and fields[-1] == "":
        fields.pop()
    changes: list[ChangedPath] = []
    index = 0
    while index < len(fields):
        code = fields[index]
        index += 1
        status = _GIT_STATUS.get(code[:1], ChangeStatus.MODIFIED)
        if status in (ChangeStatus.RENAMED, ChangeStatus.COPIED):
            old, new = fields[index], fields[index + 1]
            index += 2
            changes.append(ChangedPath(path=new, status=status, previous_path=old))
        else:
            changes.append(ChangedPath(path=fields[index], status=status))
            index += 1
    return changes


def _has_commit(repo_dir: Path, env: Mapping[str, str], rev: str) -> bool:
    return _run(repo_dir, env, "cat-file", "-e", f"{rev}^{{commit}}").returncode == 0


def _shallow(repo_dir: Path, env: Mapping[str, str]) -> bool:
    return _git(repo_dir, env, "rev-parse", "--is-shallow-repository").strip() == "true"


def _merge_base(repo_dir: Path, env: Mapping[str, str], base: str, head: str) -> str | None:
    proc = _run(repo_dir, env, "merge-base", base, head)
    text = proc.stdout.strip()
    return text.splitlines()[0] if proc.returncode == 0 and text else None


def _fetch(
    repo_dir: Path,
    env: Mapping[str, str],
    remote: str,
    revs: Sequence[str],
    *,
    depth: int | None = None,
    deepen: int | None = None,
    unshallow: bool = False,
) -> None:
    args = ["fetch", "--no-tags", "--no-recurse-submodules", "--quiet"]
    if depth is not None:
        args.append(f"--depth={depth}")
    if deepen is not None:
        args.append(f"--deepen={deepen}")
    if unshallow:
        args.append("--unshallow")
    args.append(remote)
    wanted = list(dict.fromkeys(revs))
    proc = _run(repo_dir, env, *args, *wanted)
    if proc.returncode == 0:
        return
    # A server may refuse one want (an unadvertised SHA): fetch the others one by one.
    errors: list[str] = []
    for rev in wanted:
        single = _run(repo_dir, env, *args, rev)
        if single.returncode != 0:
            lines = single.stderr.strip().splitlines()
            errors.append(lines[-1] if lines else f"exit {single.returncode}")
    if len(errors) == len(wanted):
        raise EnvironmentProblem(
            f"git fetch from {remote} failed: {errors[0]}",
            path=repo_dir,
            hint="the job needs read access to the repository (contents: read)",
        )


def _run(repo_dir: Path, env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", *args],
            cwd=repo_dir,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            check=False,
        )
    except OSError as exc:
        raise EnvironmentProblem(f"git {args[0]}: {exc}", hint="install git") from exc


def _git(repo_dir: Path, env: Mapping[str, str], *args: str) -> str:
    proc = _run(repo_dir, env, *args)
    if proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()
        raise EnvironmentProblem(
            f"git {' '.join(a for a in args if not a.startswith('-c'))}: "
            f"{detail[-1] if detail else f'exit {proc.returncode}'}",
            path=repo_dir,
        )
    return proc.stdout
