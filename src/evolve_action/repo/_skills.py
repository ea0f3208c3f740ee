"""Which skills a plugin has: `<plugin>/skills/*/SKILL.md` globbed like Go, an explicit `skills`
list, or the plugin's root as the one skill.

Owns: `plugin_skills` (the one enumeration of a plugin's skills), `root_skill_name` (a root skill
is named by its frontmatter `name`, as Claude Code names a single-skill plugin's skill),
`has_skills` (whether a directory holds `<name>/SKILL.md`, symlinked skill directories too),
`inside` (whether a path of a plugin stays inside its repository), `shadowing_command` (the plugin
command Claude Code lists in place of a skill of the same name).
Guarantees: byte order of names, dot names included; a skill directory resolving outside the
repository is never a skill (`_manifests.plugin_escapes` reports it); never raises.
Never does: read eval definitions, read manifests (a plugin's `skills` list is already resolved in
`Plugin.skill_dirs`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from evolve_action.encoding import (
    trim_space,
)
from evolve_action.errors import EvolveError
from evolve_action.repo._frontmatter import parse_frontmatter
from evolve_action.repo._model import PROJECT_SKILLS, Plugin, Skill
from evolve_action.repo._paths import escapes, within
from evolve_action.repo._reading import read_text

__all__ = [
    "has_skills",
    "inside",
    "plugin_skills",
    "root_skill_name",
    "shadowing_command",
]


def root_skill_name(skill_md: Path, fallback: str) -> str:
    """The name of a skill whose directory is a plugin's or repository's root: its frontmatter
    `name` (as Claude Code names a single-skill plugin's skill) when usable as a directory name,
    else `fallback` (the plugin's or the directory's name). Never raises."""
    try:
        front = parse_frontmatter(read_text(skill_md), skill_md)
    except EvolveError:
        return fallback
    name = trim_space(front.fields.get("name", "")) if front is not None else ""
    unusable = not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name
    return fallback if unusable else name


def shadowing_command(plugin_dir: Path, skill_dir: Path, name: str) -> Path | None:
    """The command file `<plugin>/commands/<name>.md` that takes skill `name`'s place, or None.

    Claude Code lists a plugin's commands beside its skills as `plugin:name`; when a command and a
    skill share the name the listing has one line, the command's (measured, CLI 2.1.332; see
    docs/checks.md), so the model never sees the skill. Only top-level command files can
    collide (a subdirectory adds a `:` segment no skill name has). A project skill
    (`.claude/skills/`) is not namespaced by a plugin: None. Never follows the file or raises."""
    if skill_dir.parent == plugin_dir / PROJECT_SKILLS:
        return None
    command = plugin_dir / "commands" / f"{name}.md"
    try:
        return command if os.path.lexists(command) and not command.is_dir() else None
    except OSError:
        return None


def _entries(directory: Path) -> list[tuple[str, Path]]:
    """Every entry of `directory` (symlinks too), sorted by name bytes (missing → empty)."""
    try:
        with os.scandir(directory) as entries:
            found = [(e.name, directory / e.name) for e in entries]
    except OSError:
        return []
    return sorted(found, key=lambda item: item[0].encode("utf-8", "surrogateescape"))


def has_skills(directory: Path) -> bool:
    """Whether `directory` holds a `<name>/SKILL.md`, `<name>` a directory or a symlink to one
    (`.claude/skills/x -> ../../.agents/skills/x`: Claude Code follows it). A link leaving the
    repository counts here, so the repository is found and the link reported (`repo.outside`);
    its skill is never read (`plugin_skills`)."""
    return any((path / "SKILL.md").is_file() for _, path in _entries(directory))


def inside(plugin: Plugin, path: Path) -> bool:
    """False when `path` resolves outside the plugin's repository (never read or written)."""
    return plugin.root is None or not escapes(plugin.root, path)


def _inside_check(plugin: Plugin) -> Callable[[Path], bool]:
    """`inside` for many paths of one plugin: the repository root is resolved once."""
    if plugin.root is None:
        return lambda _path: True
    real_root = os.path.realpath(plugin.root)
    return lambda path: within(real_root, os.path.realpath(path))


def plugin_skills(plugin: Plugin) -> list[Skill]:
    """Glob `<plugin>/skills/*/SKILL.md` like Go: any entry type, dot names included, sorted.

    A plugin with an explicit `skills` list (a marketplace entry's or plugin.json's) has those: a
    listed directory holding SKILL.md is one skill, any other listed directory is globbed like
    `skills/` (list order, duplicates dropped). A skill directory resolving outside the repository
    is never a skill (the repository's problems name it). A directory that is the plugin's own
    root (a standalone skill repository, or a single-skill plugin: a root SKILL.md with no
    `skills/` directory and no `skills` key, as Claude Code ≥ 2.1.142 loads it) is one skill named
    by `root_skill_name`.
    """
    inside = _inside_check(plugin)
    if (
        plugin.skill_dirs is None
        and not os.path.lexists(plugin.skills_dir)
        and (plugin.dir / "SKILL.md").is_file()
        and inside(plugin.dir)
    ):
        return [_root_skill(plugin)]
    if plugin.skill_dirs is not None:
        seen: dict[Path, Skill] = {}
        for listed in plugin.skill_dirs:
            candidates = (
                [listed]
                if os.path.lexists(listed / "SKILL.md")
                else [p for _, p in _entries(listed) if os.path.lexists(p / "SKILL.md")]
            )
            for directory in candidates:
                if not inside(directory):
                    continue
                if directory == plugin.dir:
                    seen.setdefault(directory, _root_skill(plugin))
                    continue
                seen.setdefault(
                    directory,
                    Skill(
                        name=directory.name,
                        plugin=plugin.name,
                        dir=directory,
                        skill_md=directory / "SKILL.md",
                    ),
                )
        return list(seen.values())
    try:
        with os.scandir(plugin.skills_dir) as entries:
            names = sorted(
                (e.name for e in entries), key=lambda n: n.encode("utf-8", "surrogateescape")
            )
    except OSError:
        return []
    found: list[Skill] = []
    for name in names:
        skill_md = plugin.skills_dir / name / "SKILL.md"
        if os.path.lexists(skill_md) and inside(plugin.skills_dir / name):
            found.append(
                Skill(
                    name=name, plugin=plugin.name, dir=plugin.skills_dir / name, skill_md=skill_md
                )
            )
    return found


def _root_skill(plugin: Plugin) -> Skill:
    """The one skill of a plugin whose root is the skill directory."""
    return Skill(
        name=root_skill_name(plugin.dir / "SKILL.md", plugin.name),
        plugin=plugin.name,
        dir=plugin.dir,
        skill_md=plugin.dir / "SKILL.md",
    )
