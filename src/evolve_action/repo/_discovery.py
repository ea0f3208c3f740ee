"""`discover` (engine spec §1): marketplace → multi → single, `--layout`, `--root`, the walk up from
the working directory and its exact error messages.

Owns: `classify`/`parse_layout`, `locate` (where the repository is, by its markers alone: the
first half of `discover`, so the config resolver learns the root without building the model), the
building of a `Repository` for each layout, the bare skill repository (no marker at all:
`skills/*/SKILL.md` or `.claude/skills/*/SKILL.md` form one implicit plugin named after the
directory, found only when no ancestor has a marker), the standalone skill repository (failing
that, a `SKILL.md` at the top: one skill, named by its frontmatter), project skills
(`.claude/skills/` beside the plugins, as one more plugin), and the notes of how the repository was
read (`Repository.notices`). A plugin refused by the bundled CLI goes to `Repository.refused` with
its problem: never evaluated, never touched.
Guarantees: every unusable input is an `EvolveError` subclass naming the path, with a hint;
`--layout` naming the wrong kind says what was found instead.
Never does: print, read `os.environ`, write files.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from evolve_action.errors import SpecError, UsageError
from evolve_action.repo._evalfiles import binding_fix
from evolve_action.repo._manifests import (
    claude_marketplace,
    escaping_entries,
    evolve_marker,
    listed_plugin_dirs,
    manifest_refusals,
    manifest_skills,
    plugin_escapes,
    remote_entries,
    remote_note,
    single_name,
)
from evolve_action.repo._model import (
    CLAUDE_MANIFEST,
    CLAUDE_MARKETPLACE,
    LAYOUTS,
    PROJECT_SKILLS,
    Layout,
    Plugin,
    RepoProblem,
)
from evolve_action.repo._paths import absolute, rel_path, subdirs
from evolve_action.repo._repository import (
    Repository,
    foreign_notes,
    refused_notes,
    suite_bindings,
    trigger_choice_notes,
    unbound_eval_files,
)
from evolve_action.repo._skills import has_skills, plugin_skills, root_skill_name

__all__ = [
    "ACCEPTED_LAYOUTS",
    "BARE_SKILL_DIRS",
    "LAYOUT_MARKERS",
    "NOT_FOUND",
    "NOT_RECOGNIZED",
    "classify",
    "discover",
    "locate",
    "parse_layout",
]


ACCEPTED_LAYOUTS = (
    "marketplace (.claude-plugin/marketplace.json), multi (plugins/*/.claude-plugin/plugin.json), "
    "single (.claude-plugin/plugin.json), bare skills (skills/*/SKILL.md or "
    ".claude/skills/*/SKILL.md, no manifest), standalone skill (SKILL.md at the top)"
)
"""Every layout discovery accepts, as error messages list them."""
NOT_RECOGNIZED = f"is not a recognized plugin repository; accepted layouts: {ACCEPTED_LAYOUTS}"
NOT_FOUND = (
    "no plugin repository found walking up from the working directory; accepted layouts: "
    + ACCEPTED_LAYOUTS
)


def parse_layout(value: str | None) -> Layout | None:
    """Validate a `--layout`/config value: `None` means auto-detect."""
    if value is None or value in ("", "auto"):
        return None
    if value in LAYOUTS:
        return value
    raise UsageError(f'unknown layout "{value}" (want auto, marketplace, multi, or single)')


def classify(directory: Path, forced: Layout | None = None) -> Layout | None:
    """The kind of `directory` by its markers (only the forced kind's marker when given)."""
    kinds: Iterable[Layout] = (forced,) if forced else LAYOUTS
    for kind in kinds:
        if kind == "marketplace" and (directory / CLAUDE_MARKETPLACE).is_file():
            return kind
        if kind == "multi" and _has_multi_marker(directory):
            return kind
        if kind == "single" and (directory / CLAUDE_MANIFEST).is_file():
            return kind
    return None


def _has_multi_marker(directory: Path) -> bool:
    plugins = directory / "plugins"
    try:
        entries = os.scandir(plugins)
    except OSError:
        return False
    with entries:
        # Go's filepath.Glob: any entry type, dot names included; lexists (a dangling link counts).
        return any(os.path.lexists(Path(e.path) / CLAUDE_MANIFEST) for e in entries)


_Found = tuple[Path, Layout | Literal["bare", "standalone"]]
"""Where a repository is and what kind: a layout, or the bare or standalone skill repository."""


def discover(root: Path | None, cwd: Path, layout: str | None = None) -> Repository:
    """Find and model the plugin repository (spec §1.2).

    `root` given: only it is classified (made absolute against `cwd`, symlinks kept). Otherwise walk
    from `cwd` up to `/`. Raises `UsageError` for a bad `--root`/`--layout`, `SpecError` when no
    repository is found.
    """
    where, kind = _locate(root, cwd, layout)
    if kind == "bare":
        return _build_bare(where)
    if kind == "standalone":
        return _build_standalone(where)
    return _build(where, kind)


def locate(root: Path | None, cwd: Path, layout: str | None = None) -> Path:
    """The directory `discover(root, cwd, layout)` would model, found by its markers alone.

    Reads no manifest, skill or eval file (it only tests which marker paths exist), so a caller
    can learn where the repository is before deciding how to discover it. Raises exactly what
    `discover` raises for a bad `--root`/`--layout` or when no repository is found.
    """
    return _locate(root, cwd, layout)[0]


def _locate(root: Path | None, cwd: Path, layout: str | None) -> _Found:
    """Where the repository is and its kind (spec §1.2's walk); the errors of `discover`."""
    forced = parse_layout(layout)
    if root is not None:
        base = absolute(cwd / root)
        if not base.is_dir():
            raise UsageError(
                f"--root {root} is not a directory",
                hint="pass the plugin repository's root directory",
            )
        kind = classify(base, forced)
        if kind is None and forced is None and _bare_skills_dir(base) is not None:
            return base, "bare"
        if kind is None and forced is None and _is_standalone(base):
            return base, "standalone"
        if kind is None and forced is not None:
            raise _wrong_layout(base, forced)
        if kind is None:
            raise SpecError(
                f"{base} {NOT_RECOGNIZED}",
                hint="pass --root at the repository root (a directory with one of those)",
            )
        return base, kind
    here = absolute(cwd)
    while True:
        kind = classify(here, forced)
        if kind is not None:
            return here, kind
        if here.parent == here:
            break
        here = here.parent
    if forced is None:
        here = absolute(cwd)
        while True:
            if _bare_skills_dir(here) is not None:
                return here, "bare"
            if here.parent == here:
                break
            here = here.parent
        here = absolute(cwd)
        while True:
            if _is_standalone(here):
                return here, "standalone"
            if here.parent == here:
                break
            here = here.parent
    if forced is not None and (detected := _nearest(absolute(cwd))) is not None:
        raise _wrong_layout(detected, forced)
    raise SpecError(NOT_FOUND, hint="run inside a plugin repository or pass --root")


LAYOUT_MARKERS: dict[str, str] = {
    "marketplace": CLAUDE_MARKETPLACE,
    "multi": f"plugins/*/{CLAUDE_MANIFEST}",
    "single": CLAUDE_MANIFEST,
}
"""What makes each layout, as shown in messages."""


def _nearest(start: Path) -> Path | None:
    """The nearest directory at or above `start` that is a repository of any layout."""
    here = start
    while classify(here) is None and _bare_skills_dir(here) is None:
        if here.parent == here:
            return None
        here = here.parent
    return here


def _wrong_layout(base: Path, forced: Layout) -> SpecError:
    """`--layout X` where the repository is of another kind: say what was found instead."""
    detected = classify(base)
    if detected is not None:
        found, hint = (
            f"it is a {detected} repository ({LAYOUT_MARKERS[detected]})",
            f"drop --layout (auto-detects {detected}), or pass --layout {detected}",
        )
    elif (skills := _bare_skills_dir(base)) is not None:
        found, hint = (
            f"it has bare skills under {rel_path(base, skills)}/ and no manifest",
            "drop --layout: the skills then form one implicit plugin",
        )
    elif _is_standalone(base):
        found, hint = (
            "it is a standalone skill (SKILL.md at the top, no manifest)",
            "drop --layout: the repository is then evaluated as that one skill",
        )
    else:
        found, hint = "no plugin repository is there", "pass --root at the repository root"
    return SpecError(
        f"--layout {forced}: {base} has no {LAYOUT_MARKERS[forced]}; {found}", hint=hint
    )


BARE_SKILL_DIRS = ("skills", ".claude/skills")
"""Where a repository without any manifest keeps its skills (first with a SKILL.md wins)."""


def _bare_skills_dir(directory: Path) -> Path | None:
    for rel in BARE_SKILL_DIRS:
        skills = directory / rel
        if has_skills(skills):
            return skills
    return None


def _build_bare(root: Path) -> Repository:
    skills_dir = _bare_skills_dir(root)
    assert skills_dir is not None
    plugin = Plugin(
        name=root.name,
        dir=root,
        rel=".",
        skills_dir=skills_dir,
        evals_dir=root / "evals",
        manifest=False,
        root=root,
    )
    where = rel_path(root, skills_dir)
    note = (
        f"note: no plugin manifest: the skills under {where}/ form one implicit plugin "
        f"'{root.name}' (named after the repository directory)"
    )
    return _finish(
        Repository(root=root, layout="single", plugins=(plugin,), notices=(note,)), extra=None
    )


def _is_standalone(directory: Path) -> bool:
    """A standalone skill repository: a `SKILL.md` at the top and no manifest (issue 30)."""
    return (directory / "SKILL.md").is_file()


def _build_standalone(root: Path) -> Repository:
    """The repository is one skill (skill-creator's layout: installed by copying it into a
    `skills/` directory): one implicit plugin holding that skill, named after it."""
    name = root_skill_name(root / "SKILL.md", root.name)
    plugin = Plugin(
        name=name,
        dir=root,
        rel=".",
        skills_dir=root / "skills",
        evals_dir=root / "evals",
        skill_dirs=(root,),
        manifest=False,
        root=root,
    )
    note = (
        f"note: SKILL.md at the top and no plugin manifest: a standalone skill repository, "
        f"evaluated as skill '{name}'"
    )
    return _finish(
        Repository(root=root, layout="single", plugins=(plugin,), notices=(note,)), extra=None
    )


def _build(root: Path, kind: Layout) -> Repository:
    problems: list[RepoProblem] = []
    notices: list[str] = []
    refused: list[Plugin] = []
    claude = False
    if kind == "single":
        skill_dirs, problem = manifest_skills(root, root)
        problems.extend(problem)
        single = Plugin(
            name=single_name(root),
            dir=root,
            rel=".",
            skills_dir=root / "skills",
            evals_dir=root / "evals",
            skill_dirs=skill_dirs,
            root=root,
        )
        refusals = manifest_refusals(root, root)
        problems.extend(refusals)
        plugins: tuple[Plugin, ...] = () if refusals else (single,)
        refused.extend([single] if refusals else [])
    elif kind == "marketplace" and (read := claude_marketplace(root)) is not None:
        plugins, read_notices, read_problems, read_refused = read
        notices.extend(read_notices)
        problems.extend(read_problems)
        refused.extend(read_refused)
        claude = True
    else:
        listed = listed_plugin_dirs(root) if kind == "marketplace" else None
        found: list[Plugin] = []
        unlisted: list[str] = []
        for name, path in subdirs(root / "plugins"):
            if listed is not None and name not in listed:
                unlisted.append(name)
                continue
            skill_dirs, problem = manifest_skills(root, path)
            problems.extend(problem)
            member = Plugin(
                name=name,
                dir=path,
                rel=rel_path(root, path),
                skills_dir=path / "skills",
                evals_dir=path / "evals",
                skill_dirs=skill_dirs,
                root=root,
            )
            refusals = manifest_refusals(root, path)
            problems.extend(refusals)
            (refused if refusals else found).append(member)
        plugins = tuple(found)
        if unlisted:
            notices.append(
                f"note: folders under plugins/ that {CLAUDE_MARKETPLACE} does not list are not "
                f"plugins (Claude Code never installs them): {', '.join(unlisted)}"
            )
        if kind == "marketplace" and (remote := remote_entries(root)):
            notices.append(remote_note(remote))
        problems.extend(escaping_entries(root, root / "plugins", "plugin directory"))
    repo = Repository(
        root=root,
        layout=kind,
        plugins=plugins,
        claude_marketplace=claude,
        notices=tuple(notices),
        problems=tuple(problems),
        refused=tuple(refused),
    )
    return _finish(repo, extra=_project_plugin(root, plugins))


def _finish(repo: Repository, *, extra: tuple[Plugin, str] | None) -> Repository:
    """Add the project skills plugin (when any), the escape problems and the evolve marker."""
    plugins = repo.plugins
    notices = list(repo.notices)
    if extra:
        plugins = (*plugins, extra[0])
        notices.append(extra[1])
    problems = list(repo.problems)
    for plugin in plugins:
        problems.extend(plugin_escapes(repo.root, plugin))
    unbound: list[str] = []
    shaped = Repository(
        root=repo.root,
        layout=repo.layout,
        plugins=plugins,
        claude_marketplace=repo.claude_marketplace,
        notices=tuple(notices),
        problems=tuple(dict.fromkeys(problems)),
        evolve_marker=evolve_marker(repo.root),
        refused=repo.refused,
    )
    unbound.extend(refused_notes(shaped))
    unbound.extend(foreign_notes(shaped))
    unbound.extend(trigger_choice_notes(shaped))
    for path, names in unbound_eval_files(shaped):
        unbound.append(
            f"note: {shaped.rel(path)} looks like skill-creator eval definitions but is bound to "
            f"no skill (not evaluated); fix: {binding_fix(path, names)}"
        )
    unbound.extend(suite_bindings(shaped)[1])
    if not unbound:
        return shaped
    noted = dataclasses.replace(shaped, notices=(*shaped.notices, *unbound))
    noted._memo.update(shaped._memo)
    return noted


def _project_plugin(root: Path, plugins: tuple[Plugin, ...]) -> tuple[Plugin, str] | None:
    """`.claude/skills/*/SKILL.md` beside the repository's plugins, as one more plugin."""
    directory = root / PROJECT_SKILLS
    if not has_skills(directory):
        return None
    if any(p.skills_dir == directory or directory in (p.skill_dirs or ()) for p in plugins):
        return None
    taken = {p.name for p in plugins}
    name = root.name if root.name not in taken else f"{root.name}-project"
    plugin = Plugin(
        name=name,
        dir=root,
        rel=".",
        skills_dir=directory,
        evals_dir=root / "evals",
        skill_dirs=(directory,),
        manifest=False,
        root=root,
    )
    count = len(plugin_skills(plugin))
    note = (
        f"note: {count} project skill{'' if count == 1 else 's'} under {PROJECT_SKILLS}/ "
        f"(loaded by Claude Code in this repository) evaluated as plugin '{name}', beside "
        "the repository's plugins"
    )
    return plugin, note
