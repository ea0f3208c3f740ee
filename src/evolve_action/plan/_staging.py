"""An installable view of a skill whose directory is a root (issue 30).

Owns: `staged_skill` (and `staged_copy` under it) and `staged_skills_dir`, the one way a skill at a repository's or plugin's root (a standalone skill
repository, a single-skill plugin) is handed to the agent workspaces: a scratch copy named after
the skill, alone in its own `skills/` directory. Agents install skills by directory name and the
trigger tier installs every skill beside the one under test, so a root (named after the checkout,
with unrelated siblings) cannot be installed as it is.

Guarantees: a skill already in a directory of skills is returned as it is (no copy). The copy
leaves out hidden entries (`.git`, `.github`, …) and the files this tool writes inside a root
skill (`EvalSet.content_skips`: stored results, reports) — the same files its eval fingerprint
leaves out — and never follows a symlink leaving the repository. The copy is removed on exit.
Never does: write inside the repository, print.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from evolve_action.repo import EvalSet, Skill, absolute, escapes


def is_root_skill(es: EvalSet) -> bool:
    """Whether the set's skill directory is its plugin's (or repository's) root."""
    return absolute(es.skill_dir) == absolute(es.plugin_dir)


@contextlib.contextmanager
def staged_skill(es: EvalSet, scratch: Path | None) -> Iterator[Path]:
    """The skill directory to install for `es`: as it is, or (a root skill) a copy at
    `<scratch temp>/skills/<skill>/` that exists for the duration of the block."""
    if not is_root_skill(es):
        yield es.skill_dir
        return
    with staged_copy(es.skill_dir, es.skill, es.content_skips, scratch) as target:
        yield target


@contextlib.contextmanager
def staged_copy(
    skill_dir: Path, name: str, skips: tuple[str, ...], scratch: Path | None
) -> Iterator[Path]:
    """A copy of `skill_dir` at `<scratch temp>/skills/<name>/` for the duration of the block:
    hidden entries, paths starting with one of `skips` and links leaving `skill_dir` left out."""
    holder = Path(tempfile.mkdtemp(prefix="staged-skill.", dir=scratch))
    try:
        target = holder / "skills" / name
        shutil.copytree(skill_dir, target, symlinks=False, ignore=_ignore(skill_dir, skips))
        yield target
    finally:
        shutil.rmtree(holder, ignore_errors=True)


@contextlib.contextmanager
def staged_skills_dir(es: EvalSet, skills: Sequence[Skill], scratch: Path | None) -> Iterator[Path]:
    """The directory of skills the trigger tier installs beside `es` (`skills`: its plugin's).

    `es.skill_dir.parent` as it is, unless one of them is a root skill or is reached through a
    symlink (`.claude/skills/x -> ../../.agents/skills/x`), which agent workspaces do not
    install: then a scratch `skills/` holding a copy of each, named after it.
    """
    if not any(_needs_copy(es, sk) for sk in skills):
        yield es.skill_dir.parent
        return
    holder = Path(tempfile.mkdtemp(prefix="staged-skills.", dir=scratch))
    try:
        target = holder / "skills"
        for sk in skills:
            skips = es.content_skips if absolute(sk.dir) == absolute(es.plugin_dir) else ()
            shutil.copytree(sk.dir, target / sk.name, symlinks=False, ignore=_ignore(sk.dir, skips))
        yield target
    finally:
        shutil.rmtree(holder, ignore_errors=True)


def _needs_copy(es: EvalSet, sk: Skill) -> bool:
    return absolute(sk.dir) == absolute(es.plugin_dir) or sk.dir.is_symlink()


def _ignore(skill_dir: Path, skips: tuple[str, ...]) -> Callable[[str, list[str]], set[str]]:
    root = absolute(skill_dir)

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory)
        rel = os.path.relpath(here, root).replace(os.sep, "/")
        prefix = "" if rel == "." else rel + "/"
        return {
            n
            for n in names
            if n.startswith(".")
            or (prefix + n).startswith(skips)
            or ((here / n).is_symlink() and escapes(root, here / n))
        }

    return ignore
