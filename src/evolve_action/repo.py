"""The repository model: layout detection, root resolution, plugins, skills, eval sets, manifests.

Owns: `discover` (engine spec §1: marketplace → multi → single, `--layout`, `--root`, the walk up
from the working directory and its exact error messages), the frozen `Repository`/`Plugin`/`Skill`/
`EvalSet` values, whether a repository opts in to evolve's conventions (`evolve_marker`: an
`.evolve.*` config, `.agents/plugins/`, a `.codex-plugin/`), SKILL.md frontmatter parsing (§5.3:
evolve's `---` fences, the block decoded as YAML by `encoding.decode_yaml` with Claude Code's
leniency, key line numbers) and strict JSON manifest reading (`plugin.json`,
`marketplace.json`) with the Go-`encoding/json` error wording the checks print (§5.2; deliberately
not `encoding.decode_path`, whose messages and empty-file rule are for authored spec files).

Marketplaces are read two ways. An evolve marketplace (a Codex marketplace
`.agents/plugins/marketplace.json` beside it, or every entry a local `./plugins/<dir>` source) keeps
evolve's rule: the plugins are the directories under `plugins/`. Any other marketplace is read the
way Claude Code reads it: one plugin per local entry (any `./` path, the root itself for `./`),
an entry's `skills` list names its skills, `strict: false` makes the entry the manifest, remote
sources (`github`, `url`, `git-subdir`, … objects, a `path` in them being inside the remote) are
listed in `Repository.notices` as not evaluated here — in an evolve marketplace too — and a remote
entry naming the root's own plugin.json is the root plugin (a self-listing marketplace). What the
bundled CLI refuses to install (`manifest_refusals`: plugin.json component paths; a `source`
string without `./` or leaving the marketplace directory; conflicting manifests) is a
`RepoProblem`, and the plugin goes to `Repository.refused`: never evaluated, never touched, its
skills named in a note as not loadable. With no marker at all, `skills/*/SKILL.md` (or
`.claude/skills/*/SKILL.md`) form one implicit plugin named after the directory (a bare skill
repository, layout `single`), found only when no ancestor has a marker; failing that, a
`SKILL.md` at the top makes a standalone skill repository (one skill, named by its frontmatter).
A plugin with a root `SKILL.md` and no `skills/` or `skills` key is a single-skill plugin, and a
plugin.json `skills` key adds to `skills/` — both as the bundled Claude Code lists them
(tests/integration/test_discovery_cli.py is the oracle). Files named like skill-creator's but in
another shape are a note (`READ_FORMATS`), never read; several trigger files in one skill-creator
`evals/` → `chosen_trigger_file` is read and a note names the others. `SkillPlaces` knows each
skill directory by its path and, when a symlink inside the repository leads there, by its target
too (and every discovered skill's directory, even when its eval definitions cannot be read).

Guarantees: enumeration order is deterministic (byte order of names, like Go's `os.ReadDir`);
symlinked plugin and eval directories are skipped like evolve does; every unusable input is an
`EvolveError` subclass naming the path. A `Repository` is a snapshot of the tree at discovery: its
eval sets and suite bindings are read once per model (writing results files never changes them;
after adding or removing definitions, discover again). Never does: printing, reading `os.environ`, writing files.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evolve_action.encoding import (
    MAX_FILE_BYTES,
    Decoded,
    decode_path,
    decode_yaml,
    find_one,
    go_str_list,
    pointer_join,
    split_lines,
    trim_space,
)
from evolve_action.errors import EvolveError, SpecError, UsageError

Layout = Literal["marketplace", "multi", "single"]
"""A detected (or forced) repository kind."""

LAYOUTS: tuple[Layout, ...] = ("marketplace", "multi", "single")
"""Auto-detection order: the first kind whose marker is present wins."""

CLAUDE_MANIFEST = ".claude-plugin/plugin.json"
CODEX_MANIFEST = ".codex-plugin/plugin.json"
CLAUDE_MARKETPLACE = ".claude-plugin/marketplace.json"
CODEX_MARKETPLACE = ".agents/plugins/marketplace.json"

CONFIG_NAMES: tuple[str, ...] = (".evolve.yaml", ".evolve.yml", ".evolve.json", ".evolve.jsonc")
"""Candidate config file names, in discovery order (also evolve's opt-in marker at the root)."""

MANIFEST_PATHS: dict[str, str] = {"claude": CLAUDE_MANIFEST, "codex": CODEX_MANIFEST}
"""Plugin manifest kind (`checks.plugin_manifests`) → path inside the plugin directory."""

MAX_TEXT_BYTES = 10 * 1024 * 1024
"""SKILL.md and manifests larger than this are refused (a user error, never a slow parse)."""

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Plugin:
    """One plugin of the repository."""

    name: str
    """Directory name (multi/marketplace) or the root manifest's `name` (single)."""
    dir: Path
    """Absolute plugin directory (the root itself in the single layout)."""
    rel: str
    """`dir` relative to the root with `/` separators (`.` for the single layout)."""
    skills_dir: Path
    """`<dir>/skills`."""
    evals_dir: Path
    """`<dir>/evals`."""
    skill_dirs: tuple[Path, ...] | None = None
    """A marketplace entry's explicit `skills` list (absolute), replacing the `skills_dir` glob."""
    manifest: bool = True
    """False when no plugin.json is expected: a `strict: false` entry or an implicit plugin."""
    root: Path | None = None
    """The repository root: skill and eval directories resolving outside it are never used."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """A `skills/<name>/SKILL.md` found by the checks glob."""

    name: str
    """The skill directory name."""
    plugin: str
    dir: Path
    """Absolute skill directory."""
    skill_md: Path
    """Absolute path of its SKILL.md."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalSet:
    """A skill with authored definitions: `evals/<skill>/` holding a triggers and/or evals file."""

    plugin: str
    plugin_dir: Path
    plugin_rel: str
    skill: str
    """Skill name = the eval directory name (authoritative over any `skill_name` field)."""
    skill_dir: Path
    """`<plugin>/skills/<skill>` (may not exist; the checks flag it)."""
    results_dir: Path
    """`<plugin>/evals/<skill>`: where triggers, evals, fixtures and results live."""
    triggers_path: Path | None
    evals_path: Path | None
    fixture_bases: tuple[Path, ...] = ()
    """Where a `files` entry not found beside the evals file is looked for next: for
    skill-creator's files the skill root (`evals/files/…`), then the repository root; empty for
    evolve's own `evals/<skill>/` sets (evolve's rule only)."""
    suite_paths: tuple[Path, ...] = ()
    """AgentEvals/AgentV suite files bound to this skill (`suite_bindings`), in path order."""
    content_skips: tuple[str, ...] = ()
    """Path prefixes (relative to `skill_dir`) the eval `content_hash` leaves out: the results
    files and reports this tool writes inside a skill whose directory is a root (a standalone
    skill, a single-skill plugin), so recording results never makes the skill look modified."""

    @property
    def has_evals(self) -> bool:
        """Whether the set has Tier 2 definitions: an evals file or any suite."""
        return self.evals_path is not None or bool(self.suite_paths)


@dataclass(frozen=True, slots=True, kw_only=True)
class RepoProblem:
    """A manifest or layout problem met by discovery; the checks report it as an error."""

    message: str
    """Starts with the root-relative path; says what Claude Code does and what to do."""
    path: str
    check: str
    pointer: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Repository:
    """A detected plugin repository."""

    root: Path
    """Absolute root (made absolute without resolving symlinks)."""
    layout: Layout
    plugins: tuple[Plugin, ...]
    claude_marketplace: bool = False
    """A marketplace read the way Claude Code reads it (not an evolve marketplace)."""
    notices: tuple[str, ...] = ()
    """One-line facts about how the repository was read (remote plugins, implicit plugin, …)."""
    evolve_marker: str | None = None
    """What opts the repository in to evolve's stricter conventions (see `evolve_marker`): an
    `.evolve.<ext>` at the root; None = Claude Code's and the Agent Skills specification's rules
    only."""
    problems: tuple[RepoProblem, ...] = ()
    """What Claude Code would refuse, met while reading the repository (Tier 0 errors): rejected
    marketplace entries and manifest fields, directories resolving outside the repository."""
    refused: tuple[Plugin, ...] = ()
    """Plugins the bundled Claude Code refuses to install (`cli_refusals`; the reason is in
    `problems`): never evaluated, never touched; their skills are named in a note as not
    loadable."""
    _memo: dict[str, tuple[Any, EvolveError | None]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """What was read from the tree once for this model (`_memoized`): the eval sets, the
    skill-creator files at plugin or root level and the suite bindings, or the error reading
    them raised."""

    def rel(self, path: Path) -> str:
        """Render `path` relative to the root with `/` separators; absolute when outside it."""
        return rel_path(self.root, path)

    def plugin(self, name: str) -> Plugin | None:
        """The plugin named `name`, if any."""
        return next((p for p in self.plugins if p.name == name), None)

    def eval_sets(self) -> list[EvalSet]:
        """Every eval set in (plugin, skill) order — the sweep order (spec §1.3).

        Read from the tree once per `Repository` (a model is a snapshot of the tree when it was
        discovered: writing results files never changes it; discover again after adding or
        removing definitions). Raises `SpecError` when a directory holds two files for one
        basename (every call, for this model).
        """
        return list(_memoized(self, "eval_sets", lambda: tuple(_eval_sets(self))))

    def skills(self) -> list[Skill]:
        """Every `skills/*/SKILL.md` of every plugin, in plugin then path order."""
        found: list[Skill] = []
        for plugin in self.plugins:
            found.extend(plugin_skills(plugin))
        return found

    def places(self) -> SkillPlaces:
        """Where every skill's files live: the one map the touched-skill rule reads."""
        return _places(self)


SkillKey = tuple[str, str]
"""`(plugin, skill)`: a skill's identity across the repository model."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillPlaces:
    """Where each skill's files live, root-relative with `/` separators (`Repository.places`).

    Built from the model, so every layout the model knows (`<plugin>/skills/`, `skills` lists in
    marketplace entries and plugin.json, `./` sources, `.claude/skills/`, bare `skills/`, nested
    plugins) is known here too: a new layout is taught once, in discovery.
    """

    existing: tuple[SkillKey, ...]
    """Skills with a SKILL.md at this revision, in sweep order."""
    orphans: frozenset[SkillKey]
    """Eval sets whose skill has no SKILL.md (a deleted skill whose definitions stayed)."""
    dirs: tuple[tuple[str, SkillKey], ...]
    """Directories owned by a skill: its skill directory and its eval (results) directory."""
    files: tuple[tuple[str, SkillKey], ...]
    """Definition files outside those directories (a root `evals/evals.json` bound to a skill)."""
    containers: tuple[tuple[str, str, bool], ...]
    """`(directory, plugin, is_skill)` where a skill would live even when absent at this revision:
    `is_skill` False means `directory/<name>/…` is skill `<name>` (a `skills/` or `evals/`
    directory), True means the directory itself is the skill (an entry of a `skills` list)."""
    manifests: tuple[tuple[str, str], ...]
    """`(plugin manifest path, plugin)`: a change there touches all that plugin's skills."""
    plugins_dir: bool
    """`plugins/<p>/skills|evals/<n>/…` names skill `<n>` of a (maybe deleted) plugin `<p>`."""

    def owners(self, rel: str) -> tuple[SkillKey, ...]:
        """The skills whose files include the root-relative path `rel` (existing or not)."""
        found = [k for d, k in self.dirs if _owns(d, rel)]
        found += [k for f, k in self.files if rel == f]
        if not found:
            for directory, plugin, is_skill in self.containers:
                if not rel.startswith(directory + "/"):
                    continue
                rest = rel[len(directory) + 1 :].split("/")
                if is_skill:
                    found.append((plugin, directory.rsplit("/", 1)[-1]))
                elif len(rest) >= 2:
                    found.append((plugin, rest[0]))
        if not found and self.plugins_dir:
            parts = rel.split("/")
            if len(parts) >= 5 and parts[0] == "plugins" and parts[2] in ("skills", "evals"):
                found.append((parts[1], parts[3]))
        return tuple(dict.fromkeys(found))

    def manifest_plugins(self, rel: str) -> tuple[str, ...]:
        """The plugins whose manifest `rel` is (a deleted plugin's too, under `plugins/`)."""
        found = [p for m, p in self.manifests if m == rel]
        parts = rel.split("/")
        deleted_plugin = self.plugins_dir and len(parts) == 4 and parts[0] == "plugins"
        if not found and deleted_plugin and "/".join(parts[2:]) in MANIFEST_PATHS.values():
            found.append(parts[1])
        return tuple(dict.fromkeys(found))


@dataclass(frozen=True, slots=True, kw_only=True)
class Frontmatter:
    """The top-level keys of a SKILL.md frontmatter block, decoded as YAML (as Claude Code does)."""

    fields: dict[str, str] = field(default_factory=dict)
    """Key → value as text: strings as decoded, numbers and booleans as written (`go_str`), null,
    lists and mappings as ``."""
    lines: dict[str, int] = field(default_factory=dict)
    """Key → 1-based file line of the key."""
    end_line: int = 0
    """1-based line of the closing `---`."""
    error: str | None = None
    """Why the block is not a YAML mapping (then `fields` is empty, as Claude Code drops them)."""
    error_line: int | None = None
    """1-based file line of `error`, when known."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    """A JSON manifest read for the checks: either a decoded value or the problem with it."""

    path: Path
    exists: bool
    """True when `path` is a regular file."""
    value: Any = None
    """The decoded JSON value (any type) when it parsed."""
    error: str | None = None
    """`read …: …` or `invalid JSON: …` when it could not be used."""
    line: int | None = None
    """Line of the JSON syntax error, when known."""

    @property
    def ok(self) -> bool:
        """True when the file exists and parsed as JSON (of any type)."""
        return self.exists and self.error is None


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


def discover(root: Path | None, cwd: Path, layout: str | None = None) -> Repository:
    """Find and model the plugin repository (spec §1.2).

    `root` given: only it is classified (made absolute against `cwd`, symlinks kept). Otherwise walk
    from `cwd` up to `/`. Raises `UsageError` for a bad `--root`/`--layout`, `SpecError` when no
    repository is found.
    """
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
            return _build_bare(base)
        if kind is None and forced is None and _is_standalone(base):
            return _build_standalone(base)
        if kind is None and forced is not None:
            raise _wrong_layout(base, forced)
        if kind is None:
            raise SpecError(
                f"{base} {NOT_RECOGNIZED}",
                hint="pass --root at the repository root (a directory with one of those)",
            )
        return _build(base, kind)
    here = absolute(cwd)
    while True:
        kind = classify(here, forced)
        if kind is not None:
            return _build(here, kind)
        if here.parent == here:
            break
        here = here.parent
    if forced is None:
        here = absolute(cwd)
        while True:
            if _bare_skills_dir(here) is not None:
                return _build_bare(here)
            if here.parent == here:
                break
            here = here.parent
        here = absolute(cwd)
        while True:
            if _is_standalone(here):
                return _build_standalone(here)
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
        if _has_skills(skills):
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
        skill_dirs, problem = _manifest_skills(root, root)
        problems.extend(problem)
        single = Plugin(
            name=_single_name(root),
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
    elif kind == "marketplace" and (read := _claude_marketplace(root)) is not None:
        plugins, read_notices, read_problems, read_refused = read
        notices.extend(read_notices)
        problems.extend(read_problems)
        refused.extend(read_refused)
        claude = True
    else:
        listed = _listed_plugin_dirs(root) if kind == "marketplace" else None
        found: list[Plugin] = []
        unlisted: list[str] = []
        for name, path in _subdirs(root / "plugins"):
            if listed is not None and name not in listed:
                unlisted.append(name)
                continue
            skill_dirs, problem = _manifest_skills(root, path)
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
        if kind == "marketplace" and (remote := _remote_entries(root)):
            notices.append(_remote_note(remote))
        problems.extend(_escaping_entries(root, root / "plugins", "plugin directory"))
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
        problems.extend(_plugin_escapes(repo.root, plugin))
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
    unbound.extend(_refused_notes(shaped))
    unbound.extend(_foreign_notes(shaped))
    unbound.extend(_trigger_choice_notes(shaped))
    for path, names in _unbound_eval_files(shaped):
        unbound.append(
            f"note: {shaped.rel(path)} looks like skill-creator eval definitions but is bound to "
            f"no skill (not evaluated); fix: {_binding_fix(path, names)}"
        )
    unbound.extend(suite_bindings(shaped)[1])
    if not unbound:
        return shaped
    noted = dataclasses.replace(shaped, notices=(*shaped.notices, *unbound))
    noted._memo.update(shaped._memo)
    return noted


PROJECT_SKILLS = ".claude/skills"
"""Project skills: Claude Code loads them for anyone working in the repository."""


def _project_plugin(root: Path, plugins: tuple[Plugin, ...]) -> tuple[Plugin, str] | None:
    """`.claude/skills/*/SKILL.md` beside the repository's plugins, as one more plugin."""
    directory = root / PROJECT_SKILLS
    if not _has_skills(directory):
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


def _path_list(value: Any) -> list[str] | None:
    """A manifest's `skills` value as Claude Code accepts it (a path or a list of paths)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _kind_of(value: Any) -> str:
    if isinstance(value, list):
        bad = next((v for v in value if not isinstance(v, str)), None)
        return f"a list holding {_kind_of(bad)}"
    if isinstance(value, dict):
        return "an object"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string"


def _manifest_skills(
    root: Path, directory: Path
) -> tuple[tuple[Path, ...] | None, list[RepoProblem]]:
    """plugin.json's `skills` (a path or list of paths relative to the plugin root) after the
    default `skills/`, if the key is there."""
    manifest = read_manifest(directory / CLAUDE_MANIFEST)
    if not manifest.ok or not isinstance(manifest.value, dict) or "skills" not in manifest.value:
        return None, []
    value = manifest.value["skills"]
    paths = _path_list(value)
    if paths is None:
        rel = rel_path(root, manifest.path)
        return (), [
            RepoProblem(
                message=f"{rel}: field `skills` holds {_kind_of(value)}, not paths; Claude Code "
                "refuses this manifest — write `skills` as a path or a list of paths relative "
                'to the plugin root, such as "./skills/<name>"',
                path=rel,
                pointer="/skills",
                check="plugin.skills_field",
            )
        ]
    # Measured with the bundled CLI (2.1.332, tests/integration/test_discovery_cli.py): the key
    # adds to the default `skills/` rather than replacing it (a marketplace entry's list replaces).
    return (directory / "skills", *(absolute(directory / p) for p in paths)), []


def escapes(root: Path, path: Path) -> bool:
    """True when `path` resolves (following symlinks) outside `root`."""
    return not _within(os.path.realpath(root), os.path.realpath(path))


def _within(real_root: str, real: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def _outside(root: Path, path: Path, what: str) -> RepoProblem:
    rel = rel_path(root, path)
    return RepoProblem(
        message=f"{rel}: {what} resolves outside the repository (to {os.path.realpath(path)}); "
        "it is not evaluated and nothing is written there — replace the symlink with the files",
        path=rel,
        check="repo.outside",
    )


def _escaping_entries(root: Path, directory: Path, what: str) -> list[RepoProblem]:
    """Symlinked entries of `directory` that resolve outside `root`."""
    try:
        with os.scandir(directory) as entries:
            links = sorted(e.name for e in entries if e.is_symlink())
    except OSError:
        return []
    return [
        _outside(root, directory / name, what) for name in links if escapes(root, directory / name)
    ]


def _plugin_escapes(root: Path, plugin: Plugin) -> list[RepoProblem]:
    """Every directory of `plugin` that resolves outside the repository (issue 20)."""
    if escapes(root, plugin.dir):
        return [_outside(root, plugin.dir, "plugin directory")]
    found: list[RepoProblem] = []
    containers = [plugin.skills_dir] if plugin.skill_dirs is None else list(plugin.skill_dirs)
    for directory in containers:
        if os.path.lexists(directory) and escapes(root, directory):
            found.append(_outside(root, directory, "skill directory"))
        elif plugin.skill_dirs is None or not os.path.lexists(directory / "SKILL.md"):
            found.extend(_escaping_entries(root, directory, "skill directory"))
    if os.path.lexists(plugin.evals_dir) and escapes(root, plugin.evals_dir):
        found.append(_outside(root, plugin.evals_dir, "eval directory"))
    else:
        found.extend(_escaping_entries(root, plugin.evals_dir, "eval directory"))
    return found


def _listed_plugin_dirs(root: Path) -> set[str] | None:
    """The `plugins/<dir>` names an evolve marketplace lists (None: unreadable or an empty list,
    which the checks report: every folder stays a plugin, as evolve reads it)."""
    manifest = read_manifest(root / CLAUDE_MARKETPLACE)
    if not manifest.ok or not isinstance(manifest.value, dict):
        return None
    entries = manifest.value.get("plugins")
    if not isinstance(entries, list) or not entries:
        return None
    names: set[str] = set()
    codex = read_manifest(root / CODEX_MARKETPLACE)
    if codex.ok and isinstance(codex.value, dict) and isinstance(codex.value.get("plugins"), list):
        entries = [*entries, *codex.value["plugins"]]
    for entry in entries:
        source = entry.get("source") if isinstance(entry, dict) else None
        if isinstance(source, dict):
            source = source.get("path")
        if not isinstance(source, str):
            continue
        parts = [p for p in source.split("/") if p not in ("", ".")]
        if len(parts) == 2 and parts[0] == "plugins":
            names.add(parts[1])
    return names


EVOLVE_DIRS = (".agents/plugins", ".codex-plugin")
"""Codex's marketplace directory and plugin manifest directory (no longer evolve opt-ins)."""


def evolve_marker(root: Path, plugins: Iterable[Plugin] = ()) -> str | None:
    """What opts `root` in to evolve's stricter conventions: an `.evolve.<ext>` config file at the
    root (its name), else None. A Codex manifest or marketplace is not an opt-in: a repository
    published for Claude Code and Codex alike gets Claude Code's rules (issue 21)."""
    del plugins  # kept for callers; the Codex directories no longer opt in
    for name in CONFIG_NAMES:
        if os.path.lexists(root / name) and not (root / name).is_dir():
            return name
    return None


def entry_source(entry: Any) -> tuple[str | None, str]:
    """`(local ./ path or None, how a remote source is described)` of a marketplace entry.

    Local: a `./`-relative string, or a `{source: local, path: ./…}` object (evolve's form).
    """
    source = entry.get("source") if isinstance(entry, dict) else None
    if isinstance(source, str):
        return (source, "") if source.startswith("./") or source == "." else (None, source)
    if isinstance(source, dict):
        path = source.get("path")
        kind = source.get("source")
        if isinstance(path, str) and kind in (None, "local") and path.startswith("./"):
            return path, ""
        where = source.get("repo") or source.get("url") or source.get("package") or ""
        return None, f"{go_str(kind)} {go_str(where)}".strip()
    return None, go_str(source)


def _is_evolve_marketplace(root: Path, entries: list[Any]) -> bool:
    """evolve's layout: every local entry is `./plugins/<name>`, listed whole.

    With evolve's Codex marketplace beside it, an entry that is not local (a typo such as
    `plugins/a`) stays evolve's to report; without it, such an entry is a remote source.
    """
    codex_twin = (root / CODEX_MARKETPLACE).exists()
    for entry in entries:
        local, _ = entry_source(entry)
        if local is None or not isinstance(entry, dict):
            if codex_twin:
                continue
            return False
        if "skills" in entry or entry.get("strict") is False:
            return False
        parts = [p for p in local.split("/") if p not in ("", ".")]
        if len(parts) != 2 or parts[0] != "plugins":
            return False
    return True


def _entry_problem(index: int, name: str, field: str, detail: str) -> RepoProblem:
    who = f"plugin '{name}' (plugins[{index}])" if name else f"plugins[{index}]"
    return RepoProblem(
        message=f"{CLAUDE_MARKETPLACE}: {who}: {detail}",
        path=CLAUDE_MARKETPLACE,
        pointer=f"/plugins/{index}" + (f"/{field}" if field else ""),
        check="marketplace.entry",
    )


def _entry_problems(index: int, entry: Any) -> list[RepoProblem]:
    """What makes Claude Code reject a marketplace entry (`marketplace entry is invalid: …`)."""
    if not isinstance(entry, dict):
        return [
            _entry_problem(
                index,
                "",
                "",
                f"is {_kind_of(entry)}, not a plugin entry object; Claude Code "
                'rejects it — write {"name": …, "source": …}',
            )
        ]
    name = entry.get("name")
    shown = name if isinstance(name, str) else ""
    found: list[RepoProblem] = []
    if not isinstance(name, str) or trim_space(name) == "":
        found.append(
            _entry_problem(
                index,
                "",
                "name",
                "field `name` is missing or not a string; Claude Code "
                "rejects the entry (marketplace entry is invalid: name) — give it the plugin's name",
            )
        )
    source = entry.get("source")
    if not isinstance(source, str | dict):
        found.append(
            _entry_problem(
                index,
                shown,
                "source",
                f"field `source` is {_kind_of(source)}; Claude Code "
                'rejects the entry (marketplace entry is invalid: source) — write a "./path" '
                'or a {"source": "github", …} object',
            )
        )
    if "skills" in entry and _path_list(entry["skills"]) is None:
        found.append(
            _entry_problem(
                index,
                shown,
                "skills",
                f"field `skills` holds {_kind_of(entry['skills'])}, not "
                "paths; Claude Code rejects the entry (marketplace entry is invalid: skills: "
                'Invalid input) — list each skill as a path such as "./skills/<name>"',
            )
        )
    if "strict" in entry and not isinstance(entry["strict"], bool):
        found.append(
            _entry_problem(
                index,
                shown,
                "strict",
                f"field `strict` is {_kind_of(entry['strict'])}, not true "
                "or false; Claude Code rejects the entry (marketplace entry is invalid: strict)",
            )
        )
    return found


def _claude_marketplace(
    root: Path,
) -> tuple[tuple[Plugin, ...], tuple[str, ...], tuple[RepoProblem, ...], tuple[Plugin, ...]] | None:
    """The plugins, notices, problems and refused plugins of a marketplace read as Claude Code
    reads it; None for evolve's."""
    manifest = read_manifest(root / CLAUDE_MARKETPLACE)
    if not manifest.ok or not isinstance(manifest.value, dict):
        return None
    entries = manifest.value.get("plugins")
    if not isinstance(entries, list) or _is_evolve_marketplace(root, entries):
        return None
    root_manifest = read_manifest(root / CLAUDE_MANIFEST)
    root_name = (
        root_manifest.value.get("name")
        if root_manifest.ok and isinstance(root_manifest.value, dict)
        else None
    )
    plugins: dict[str, Plugin] = {}
    remote: list[str] = []
    problems: list[RepoProblem] = []
    refused: list[Plugin] = []
    for index, entry in enumerate(entries):
        rejected = _entry_problems(index, entry)
        if rejected:
            problems.extend(rejected)
            continue  # Claude Code refuses the entry: never a plugin here either
        name = go_str(entry.get("name"))
        local, described = entry_source(entry)
        if local is None and name and name == root_name:
            local = "./"  # a marketplace listing the repository itself
        if local is None and isinstance(entry.get("source"), str):
            problems.append(_source_refusal(index, name, entry["source"]))
            meant = absolute(root / entry["source"])  # the directory the author meant, if any
            if meant.is_dir() and not escapes(root, meant) and meant != absolute(root):
                refused.append(_entry_plugin(root, name, meant, None, True))
            continue  # a string is a path to Claude Code: it refuses one without `./`
        if local is None:
            remote.append(f"{name} ({described})" if described else name)
            continue
        directory = absolute(root / local)
        if rel_path(root, directory).startswith("/"):
            remote.append(f"{name} ({local})")
            continue
        if name in plugins or not directory.is_dir():
            continue  # the checks report an unresolved source
        if escapes(root, directory):
            problems.append(_outside(root, directory, f"plugin '{name}' (source {local})"))
            continue
        listed = _path_list(entry.get("skills")) if "skills" in entry else None
        strict = entry.get("strict") is not False
        if not _source_stays_inside(local):
            problems.append(_source_refusal(index, name, local))
            refused.append(_entry_plugin(root, name, directory, listed, strict))
            continue
        if not strict and listed is not None and (directory / CLAUDE_MANIFEST).is_file():
            problems.append(_conflict(index, name, directory, root))
            refused.append(_entry_plugin(root, name, directory, listed, strict))
            continue  # Claude Code loads nothing of it (measured, CLI 2.1.332)
        if strict and (refusals := manifest_refusals(root, directory)):
            problems.extend(refusals)
            refused.append(_entry_plugin(root, name, directory, listed, strict))
            continue
        problems.extend(_manifest_skills(root, directory)[1] if strict else [])
        plugins[name] = _entry_plugin(root, name, directory, listed, strict)
    notices: list[str] = []
    if remote:
        notices.append(_remote_note(remote))
    ordered = tuple(plugins[n] for n in sorted(plugins, key=lambda n: n.encode()))
    empty = [p.name for p in ordered if not plugin_skills(p)]
    if empty:
        notices.append(f"note: plugins with no skills (shown, skipped): {', '.join(empty)}")
    return ordered, tuple(notices), tuple(problems), tuple(refused)


def _remote_note(remote: list[str]) -> str:
    """The one note naming a marketplace's remote plugins (fetched by Claude Code elsewhere)."""
    return (
        f"note: {len(remote)} marketplace plugin{'' if len(remote) == 1 else 's'} "
        f"not evaluated here (remote): {', '.join(remote)}"
    )


def _entry_plugin(
    root: Path, name: str, directory: Path, listed: list[str] | None, strict: bool
) -> Plugin:
    """A marketplace entry's plugin as Claude Code would have loaded it (for a refused one: the
    skills the note names as not loadable)."""
    skill_dirs, _ = _manifest_skills(root, directory) if strict else (None, [])
    if listed is not None:
        # Measured with CLI 2.1.332: an entry's `skills` add to the plugin's own (its `skills/`
        # and plugin.json's), except for a plugin at the marketplace's root (`./`), whose listed
        # skills replace `skills/`.
        own = skill_dirs or ((directory / "skills",) if directory != root else ())
        skill_dirs = (*own, *(absolute(directory / item) for item in listed))
    return Plugin(
        name=name,
        dir=directory,
        rel=rel_path(root, directory),
        skills_dir=directory / "skills",
        evals_dir=directory / "evals",
        skill_dirs=skill_dirs,
        manifest=strict,
        root=root,
    )


def _conflict(index: int, name: str, directory: Path, root: Path) -> RepoProblem:
    """`strict: false` with skills in the entry while the plugin has its own plugin.json."""
    return _entry_problem(
        index,
        name,
        "strict",
        f"`strict: false` with `skills` in the entry, and {rel_path(root, directory)}/"
        f"{CLAUDE_MANIFEST} exists; Claude Code loads none of this plugin's skills (conflicting "
        "manifests) — drop `strict: false` (the entry's skills then add to the plugin's), or "
        "remove the plugin.json",
    )


# --- What the bundled Claude Code refuses (measured, CLI 2.1.332; docs/checks.md) ------------
#
# `claude plugin install` validates the plugin.json and the marketplace entry before it loads
# anything, and refuses the whole plugin on any violation: none of its skills load. These are the
# rules as the CLI applied them (tests/integration/test_discovery_cli.py checks them against it),
# each worded with the CLI's own message and the fix.

COMPONENT_SUFFIXES: dict[str, str] = {
    "commands": "",
    "agents": ".md",
    "skills": "",
    "hooks": ".json",
    "mcpServers": ".json",
    "lspServers": ".json",
}
"""plugin.json component path fields → the suffix the CLI requires of each path given there
(`""`: any). Every path must also start with `./`. Inline objects (`mcpServers: {…}`) are not
paths and are not checked; `outputStyles` paths are not refused (measured)."""

_COMPONENT_FIXES: dict[str, str] = {
    ".md": 'list each agent file, such as "./agents/<name>.md", or drop the field (the '
    "default agents/ directory is loaded without it)",
    ".json": "point it at a JSON file such as {example}, or drop the field (the default file is "
    "loaded without it)",
}
_JSON_EXAMPLES = {
    "hooks": '"./hooks/hooks.json"',
    "mcpServers": '"./.mcp.json"',
    "lspServers": '"./.lsp.json"',
}


def manifest_refusals(root: Path, directory: Path) -> list[RepoProblem]:
    """Why the CLI refuses the plugin in `directory` (its plugin.json's component paths), one
    problem per refused path; empty when it installs (or there is no usable plugin.json)."""
    manifest = read_manifest(directory / CLAUDE_MANIFEST)
    if not manifest.ok or not isinstance(manifest.value, dict):
        return []
    rel = rel_path(root, manifest.path)
    found: list[RepoProblem] = []
    for key, suffix in COMPONENT_SUFFIXES.items():
        value = manifest.value.get(key)
        if isinstance(value, str):
            items: list[tuple[str, str, str]] = [(key, f"/{key}", value)]
        elif isinstance(value, list):
            items = [
                (f"{key}.{i}", f"/{key}/{i}", v) for i, v in enumerate(value) if isinstance(v, str)
            ]
        else:
            continue
        for label, pointer, path in items:
            if not path.startswith("./"):
                rule = (
                    "Invalid input" if key == "commands" else 'Invalid string: must start with "./"'
                )
                fix = _prefix_fix(path)
            elif suffix and not path.endswith(suffix):
                rule = f'Invalid string: must end with "{suffix}"'
                fix = _COMPONENT_FIXES[suffix].format(example=_JSON_EXAMPLES.get(key, ""))
            else:
                continue
            found.append(
                RepoProblem(
                    message=f"{rel}: `{key}` path {json.dumps(path)}: Claude Code refuses to "
                    f"install this plugin (Validation errors: {label}: {rule}), so none of its "
                    f"skills load — {fix}",
                    path=rel,
                    pointer=pointer,
                    check="plugin.refused",
                )
            )
    return found


def _prefix_fix(path: str) -> str:
    """How to write a component path the CLI refused for lacking its leading `./`."""
    if path.startswith(("/", "..")) or "\\" in path:
        return (
            "keep the files inside the plugin and point at them with a path relative to the "
            'plugin root that starts with "./"'
        )
    return (
        f'write it {json.dumps("./" + path)} (relative to the plugin root, with its leading "./")'
    )


def _source_stays_inside(local: str) -> bool:
    """The CLI's rule for a local source path: `./` then no `.` or `..` segment and no backslash
    (`./` and `./plugins/p/` install; `./.`, `./plugins/p/.` and `./a/../b` are refused; a bare
    `.` installs the root)."""
    if local == ".":
        return True
    parts = local.removeprefix("./").split("/")
    return "\\" not in local and not any(part in (".", "..") for part in parts)


def _source_refusal(index: int, name: str, source: str) -> RepoProblem:
    """A marketplace entry whose `source` string the CLI refuses to install."""
    if not source.startswith("./") and source != ".":
        detail = (
            f'source {json.dumps(source)} is a path without a leading "./"; Claude Code refuses '
            "to install it (marketplace entry is invalid: source: Invalid string: must start "
            'with "./") — write "./<dir>" for a plugin in this repository, or a '
            '{"source": "github", "repo": "owner/name"} object for another repository'
        )
    else:
        detail = (
            f"source {json.dumps(source)} does not stay inside the marketplace directory; "
            "Claude Code refuses to install it (its marketplace entry path does not stay inside "
            'the marketplace directory) — write "./" for the repository root, or a "./<dir>" '
            'path with no "." or ".." segments'
        )
    return _entry_problem(index, name, "source", detail)


def remote_entry(entry: Any) -> bool:
    """Whether a marketplace entry's source is fetched from elsewhere (`url`, `github`,
    `git-subdir`, `npm`, … with or without a `path`, which is inside that remote)."""
    source = entry.get("source") if isinstance(entry, dict) else None
    return isinstance(source, dict) and source.get("source") not in (None, "local")


def _remote_entries(root: Path) -> list[str]:
    """`name (kind where)` of each remote entry of the root marketplace (evolve's reading)."""
    manifest = read_manifest(root / CLAUDE_MARKETPLACE)
    value = manifest.value if manifest.ok and isinstance(manifest.value, dict) else {}
    entries = value.get("plugins")
    found: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        if remote_entry(entry):
            name, described = go_str(entry.get("name")), entry_source(entry)[1]
            found.append(f"{name} ({described})" if described else name)
    return found


def _refused_notes(repo: Repository) -> list[str]:
    """A note per refused plugin naming its skills as not loadable (never planned)."""
    notes: list[str] = []
    for plugin in repo.refused:
        skills = [s.name for s in plugin_skills(plugin)]
        shown = ", ".join(skills) if skills else "none"
        manifest = plugin.dir / CLAUDE_MANIFEST
        where = (
            repo.rel(manifest) if manifest_refusals(repo.root, plugin.dir) else CLAUDE_MARKETPLACE
        )
        notes.append(
            f"note: Claude Code refuses to install plugin '{plugin.name}' (the error on {where}): "
            f"its skills are not loadable and not evaluated: {shown}"
        )
    return notes


def _single_name(root: Path) -> str:
    manifest = read_manifest(root / CLAUDE_MANIFEST)
    if manifest.ok and isinstance(manifest.value, dict):
        name = manifest.value.get("name")
        if isinstance(name, str):
            return name
    return root.name


def _entries(directory: Path) -> list[tuple[str, Path]]:
    """Every entry of `directory` (symlinks too), sorted by name bytes (missing → empty)."""
    try:
        with os.scandir(directory) as entries:
            found = [(e.name, directory / e.name) for e in entries]
    except OSError:
        return []
    return sorted(found, key=lambda item: item[0].encode("utf-8", "surrogateescape"))


def _has_skills(directory: Path) -> bool:
    """Whether `directory` holds a `<name>/SKILL.md`, `<name>` a directory or a symlink to one
    (`.claude/skills/x -> ../../.agents/skills/x`: Claude Code follows it). A link leaving the
    repository counts here, so the repository is found and the link reported (`repo.outside`);
    its skill is never read (`plugin_skills`)."""
    return any((path / "SKILL.md").is_file() for _, path in _entries(directory))


def _subdirs(directory: Path) -> list[tuple[str, Path]]:
    """Non-symlink directory entries of `directory`, sorted by name bytes (missing → empty)."""
    try:
        with os.scandir(directory) as entries:
            found = [
                (e.name, directory / e.name) for e in entries if e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []
    return sorted(found, key=lambda item: item[0].encode("utf-8", "surrogateescape"))


def _inside(plugin: Plugin, path: Path) -> bool:
    """False when `path` resolves outside the plugin's repository (never read or written)."""
    return plugin.root is None or not escapes(plugin.root, path)


def _inside_check(plugin: Plugin) -> Callable[[Path], bool]:
    """`_inside` for many paths of one plugin: the repository root is resolved once."""
    if plugin.root is None:
        return lambda _path: True
    real_root = os.path.realpath(plugin.root)
    return lambda path: _within(real_root, os.path.realpath(path))


def _memoized(repo: Repository, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()` once per repository model (its error too: raised again on each call)."""
    memo = repo._memo
    if key not in memo:
        try:
            memo[key] = (compute(), None)
        except EvolveError as exc:
            memo[key] = (None, exc)
    value, error = memo[key]
    if error is not None:
        raise error
    return value


def _eval_set(
    plugin: Plugin,
    skill: str,
    skill_dir: Path,
    *,
    triggers: Path | None = None,
    evals: Path | None = None,
    fixture_bases: tuple[Path, ...] = (),
    suite_paths: tuple[Path, ...] = (),
) -> EvalSet:
    """The one way an `EvalSet` is made: results always live in `<plugin>/evals/<skill>/`."""
    results_dir = plugin.evals_dir / skill
    skips: tuple[str, ...] = ()
    if absolute(skill_dir) == absolute(plugin.dir):
        inner = rel_path(absolute(skill_dir), absolute(results_dir))
        skips = (f"{inner}/results.", "EVALUATION.")
    return EvalSet(
        content_skips=skips,
        plugin=plugin.name,
        plugin_dir=plugin.dir,
        plugin_rel=plugin.rel,
        skill=skill,
        skill_dir=skill_dir,
        results_dir=results_dir,
        triggers_path=triggers,
        evals_path=evals,
        fixture_bases=fixture_bases,
        suite_paths=suite_paths,
    )


def _eval_sets(repo: Repository) -> Iterable[EvalSet]:
    """Per plugin: evolve's `evals/<skill>/` sets, then skill-creator's in-skill sets, then
    skill-creator files placed at the plugin or repository level (`_level_sets`)."""
    claimed: dict[Path, set[str]] = {}
    for plugin in repo.plugins:
        if plugin.skill_dirs is not None:
            names = claimed.setdefault(absolute(plugin.evals_dir), set())
            names.update(s.name for s in plugin_skills(plugin))
    level = _level_sets(repo)
    suites = suite_bindings(repo)[0]
    for plugin in repo.plugins:
        skills = {s.name: s.dir for s in plugin_skills(plugin)}
        listed = skills if plugin.skill_dirs is not None else None
        others = claimed.get(absolute(plugin.evals_dir), set()) - set(skills)
        found: dict[str, EvalSet] = {}
        evals_ok = _inside(plugin, plugin.evals_dir)
        for skill, directory in _subdirs(plugin.evals_dir) if evals_ok else []:
            if listed is not None and skill not in listed:
                continue  # another plugin sharing this directory owns it
            if listed is None and skill in others:
                continue  # a listed skill of another plugin sharing this directory
            triggers = find_one(directory, "triggers")
            evals = find_one(directory, "evals")
            if triggers is None and evals is None:
                continue
            skill_dir = (
                listed[skill]
                if listed is not None
                else skills.get(skill, plugin.skills_dir / skill)
            )
            found[skill] = _eval_set(plugin, skill, skill_dir, triggers=triggers, evals=evals)
        for sk in plugin_skills(plugin):
            if sk.name in found or not evals_ok:
                continue
            in_skill = _in_skill_set(plugin, sk) or level.get((plugin.name, sk.name))
            if in_skill is not None:
                found[sk.name] = in_skill
        for sk in plugin_skills(plugin) if evals_ok else []:
            bound = suites.get((plugin.name, sk.name))
            if not bound:
                continue
            prior = found.get(sk.name)
            found[sk.name] = (
                dataclasses.replace(prior, suite_paths=bound)
                if prior is not None
                else _eval_set(plugin, sk.name, sk.dir, suite_paths=bound)
            )
        yield from (found[k] for k in sorted(found, key=lambda k: k.encode("utf-8", "replace")))


def _owns(directory: str, rel: str) -> bool:
    """Whether the root-relative `directory` holds `rel`; the root (`.`, a standalone skill)
    holds every path outside hidden directories, as the skill's fingerprint does."""
    if directory == ".":
        return not any(part.startswith(".") for part in rel.split("/")[:-1])
    return rel.startswith(directory + "/")


def _places(repo: Repository) -> SkillPlaces:
    real_root = os.path.realpath(repo.root)

    def rels(path: Path) -> list[str]:
        """`path` relative to the root, and where it really is when a symlink inside the
        repository leads there (`.claude/skills -> ../.agents/skills`): a change at either
        place touches it. Links leaving the repository are never followed."""
        shown = rel_path(repo.root, path)
        real = os.path.realpath(path)
        if real == real_root or not _within(real_root, real):
            return [shown]
        target = Path(real).relative_to(real_root).as_posix()
        return [shown] if target == shown else [shown, target]

    existing: dict[SkillKey, None] = {}
    dirs: list[tuple[str, SkillKey]] = []
    containers: list[tuple[str, str, bool]] = []
    manifests: list[tuple[str, str]] = []
    for plugin in repo.plugins:
        for sk in plugin_skills(plugin):
            existing.setdefault((plugin.name, sk.name), None)
            dirs += [(r, (plugin.name, sk.name)) for r in rels(sk.dir)]
        if plugin.skill_dirs is None:
            containers += [(r, plugin.name, False) for r in rels(plugin.skills_dir)]
            containers += [(r, plugin.name, False) for r in rels(plugin.evals_dir)]
        else:
            for listed in plugin.skill_dirs:
                is_skill = os.path.lexists(listed / "SKILL.md") or not listed.is_dir()
                is_skill = is_skill and listed != plugin.skills_dir  # the default, kept by a key
                if listed == plugin.dir:
                    continue  # the root as a skill: its directory entry above covers it
                containers += [(r, plugin.name, is_skill) for r in rels(listed)]
                if is_skill:
                    evals = plugin.evals_dir / listed.name
                    containers += [(r, plugin.name, True) for r in rels(evals)]
        for manifest in MANIFEST_PATHS.values():
            manifests += [(r, plugin.name) for r in rels(plugin.dir / manifest)]
    files: list[tuple[str, SkillKey]] = []
    orphans: set[SkillKey] = set()
    try:
        sets = repo.eval_sets()
    except EvolveError:
        sets = []  # definitions that cannot be enumerated never hide a skill's own files
    for es in sets:
        key = (es.plugin, es.skill)
        if key not in existing:
            orphans.add(key)
        dirs += [(r, key) for r in rels(es.results_dir)]
        for path in (es.triggers_path, es.evals_path, *es.suite_paths):
            if path is not None:
                files += [(r, key) for r in rels(path)]
    return SkillPlaces(
        existing=tuple(existing),
        orphans=frozenset(orphans),
        dirs=tuple(dirs),
        files=tuple(files),
        containers=tuple(containers),
        manifests=tuple(manifests),
        plugins_dir=repo.layout != "single",
    )


IN_SKILL_EVALS = "evals/evals.json"
"""skill-creator's behavioural evals, inside the skill directory."""

IN_SKILL_TRIGGER_NAMES = ("trigger*.json", "eval_set.json")
"""skill-creator's trigger eval sets (a bare JSON array), looked for in `<skill>/evals/`."""


READ_FORMATS = (
    "evolve's evals/<skill>/triggers.<ext> and evals.<ext>; skill-creator's evals/evals.json "
    '({"evals": [...]}) and trigger array ([{"query", "should_trigger"}] in trigger*.json or '
    "eval_set.json); AgentEvals EVAL.yaml and AgentV suites"
)
"""The definition formats evolve-action reads, as notes about other files name them."""


def _named_trigger_files(where: Path) -> list[Path]:
    found = {p for pattern in IN_SKILL_TRIGGER_NAMES for p in where.glob(pattern) if p.is_file()}
    return sorted(found, key=lambda p: p.name.encode("utf-8", "surrogateescape"))


def _claims(path: Path) -> bool:
    """Whether a file named like skill-creator's is in its shape (so validated strictly): a
    trigger array (or evolve's `{"triggers": [...]}`) or an `{"evals": [...]}` object. A file
    that is not JSON at all stays claimed: its syntax error is worth reporting."""
    manifest = read_manifest(path)
    if not manifest.ok:
        return True
    value = manifest.value
    if path.name == "evals.json":
        return isinstance(value, dict) and "evals" in value
    return isinstance(value, list) or (isinstance(value, dict) and "triggers" in value)


def _trigger_files(where: Path) -> list[Path]:
    """skill-creator's trigger files in `where` that are in its shape (`_claims`)."""
    return [p for p in _named_trigger_files(where) if _claims(p)]


def _foreign_notes(repo: Repository) -> list[str]:
    """A note per file named like a definition the tool reads but in another shape (issue 30):
    never validated, never an error."""
    places: dict[Path, None] = {absolute(repo.root / "evals"): None}
    for plugin in repo.plugins:
        places[absolute(plugin.evals_dir)] = None
        for sk in plugin_skills(plugin):
            places[absolute(sk.dir / "evals")] = None
    notes: list[str] = []
    for where in places:
        if escapes(repo.root, where):
            continue
        candidates = [*_named_trigger_files(where), where / "evals.json"]
        for path in candidates:
            if path.is_file() and not _claims(path):
                notes.append(
                    f"note: {repo.rel(path)} is not in a format evolve-action reads (not "
                    f"evaluated, not checked); formats read: {READ_FORMATS}"
                )
    return notes


def in_skill_trigger_files(skill_dir: Path) -> list[Path]:
    """The trigger eval set files of `<skill_dir>/evals/` by skill-creator's common names."""
    return _trigger_files(skill_dir / "evals")


def _in_skill_set(plugin: Plugin, skill: Skill) -> EvalSet | None:
    """skill-creator's layout: definitions inside the skill, results beside evolve's.

    `<skill>/evals/evals.json` and one trigger array file (`IN_SKILL_TRIGGER_NAMES`) are read in
    place; results go to `<plugin>/evals/<skill>/`, outside the skill, so writing them never
    changes the skill's own fingerprint; fixtures resolve from the skill root (`evals/files/…`), as
    skill-creator resolves them. Several trigger files → the one `chosen_trigger_file` picks (a
    note names the others: `_trigger_choice_notes`).
    """
    evals = skill.dir / IN_SKILL_EVALS
    evals_ok = evals.is_file() and _claims(evals)  # another tool's file: a note, never read
    triggers = in_skill_trigger_files(skill.dir)
    if not evals_ok and not triggers:
        return None
    return _eval_set(
        plugin,
        skill.name,
        skill.dir,
        triggers=chosen_trigger_file(triggers),
        evals=evals if evals_ok else None,
        fixture_bases=(skill.dir, *((plugin.root,) if plugin.root is not None else ())),
    )


def _skill_name_of(path: Path) -> str | None:
    """The `skill_name` of a skill-creator evals.json, when it reads as one (never raises)."""
    manifest = read_manifest(path)
    if manifest.ok and isinstance(manifest.value, dict):
        name = manifest.value.get("skill_name")
        return name if isinstance(name, str) else None
    return None


def _level_scan(
    repo: Repository,
) -> tuple[dict[SkillKey, EvalSet], list[tuple[Path, list[str]]]]:
    """`_scan_levels`, read once per repository model."""
    found: tuple[dict[SkillKey, EvalSet], list[tuple[Path, list[str]]]]
    found = _memoized(repo, "level_scan", lambda: _scan_levels(repo))
    return dict(found[0]), list(found[1])


def _scan_levels(
    repo: Repository,
) -> tuple[dict[SkillKey, EvalSet], list[tuple[Path, list[str]]]]:
    """skill-creator files placed at the plugin level (`<plugin>/evals/evals.json`) or the root
    (`evals/evals.json`), with trigger arrays beside them (`trigger*.json`, `eval_set.json`).

    A file binds to the skill its `skill_name` names among the skills in scope (the plugins
    whose `evals/` it is in; every skill for the root `evals/`), or to the only skill in scope.
    Returns the bound sets and the unbound files with the skill names that could bind them.
    """
    scopes: dict[Path, list[tuple[Plugin, Skill]]] = {}
    everything: list[tuple[Plugin, Skill]] = []
    for plugin in repo.plugins:
        skills = [(plugin, s) for s in plugin_skills(plugin)]
        everything.extend(skills)
        scopes.setdefault(absolute(plugin.evals_dir), []).extend(skills)
    scopes.setdefault(absolute(repo.root / "evals"), everything)
    own = {absolute(s.dir / "evals") for _, s in everything}
    bound: dict[SkillKey, EvalSet] = {}
    unbound: list[tuple[Path, list[str]]] = []
    for directory, scope in scopes.items():
        if directory in own:
            continue  # a skill's own evals/ (a root skill's): read as its in-skill set
        evals = directory / "evals.json"
        evals_path = evals if evals.is_file() and _claims(evals) else None
        triggers = _trigger_files(directory)
        if evals_path is None and not triggers:
            continue
        names = sorted({s.name for _, s in scope})
        wanted = _skill_name_of(evals) if evals_path is not None else None
        picks = [(p, s) for p, s in scope if s.name == wanted] if wanted else []
        if not picks and len(scope) == 1:
            picks = scope
        if len(picks) != 1:
            unbound.extend((path, names) for path in ([evals] if evals_path else []) + triggers)
            continue
        plugin, skill = picks[0]
        bound.setdefault(
            (plugin.name, skill.name),
            _eval_set(
                plugin,
                skill.name,
                skill.dir,
                triggers=chosen_trigger_file(triggers),
                evals=evals_path,
                fixture_bases=(skill.dir, repo.root),
            ),
        )
    return bound, unbound


def _level_sets(repo: Repository) -> dict[SkillKey, EvalSet]:
    return _level_scan(repo)[0]


def _unbound_eval_files(repo: Repository) -> list[tuple[Path, list[str]]]:
    try:
        return _level_scan(repo)[1]
    except EvolveError:
        return []


def _binding_fix(path: Path, names: list[str]) -> str:
    """A fix that binds `path`: naming a skill that is in scope, or moving it into one."""
    choices = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
    if path.name == "evals.json":
        wanted = _skill_name_of(path)
        if wanted:
            return (
                f'its "skill_name" "{wanted}" names no skill here; set it to one of: '
                f"{choices or 'no skill found'}"
            )
        return f'add "skill_name": "<skill>" to it (one of: {choices or "no skill found"})'
    return f"move it to <skill>/evals/{path.name} (skills: {choices or 'none found'})"


def chosen_trigger_file(files: list[Path]) -> Path | None:
    """The one trigger file read where several sit together: the shortest name (the one the
    others vary, `trigger-eval.json` before `trigger-eval-fuzzy.json`), then byte order."""
    if not files:
        return None
    return min(files, key=lambda p: (len(p.name), p.name.encode("utf-8", "surrogateescape")))


def _trigger_choice_notes(repo: Repository) -> list[str]:
    """A note per skill-creator set whose `evals/` holds several trigger files: which is read,
    why, which are not, and how to have them read."""
    try:
        sets = repo.eval_sets()
    except EvolveError:
        return []  # reported by the checks (`evals.enumerate`)
    notes: list[str] = []
    for es in sets:
        chosen = es.triggers_path
        if chosen is None or chosen.parent == absolute(es.results_dir):
            continue  # evolve's own `evals/<skill>/triggers.<ext>`: one by rule
        others = [p.name for p in _trigger_files(chosen.parent) if p != chosen]
        if not others:
            continue
        notes.append(
            f"note: {repo.rel(chosen.parent)}/ holds {len(others) + 1} trigger eval sets for "
            f"{es.plugin}/{es.skill}: {chosen.name} is read (the shortest name, the one the "
            f"others vary) and {', '.join(others)} {'is' if len(others) == 1 else 'are'} not; "
            f"to evaluate {'its' if len(others) == 1 else 'their'} queries too, add them to "
            f"{chosen.name}"
        )
    return notes


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


def absolute(path: Path) -> Path:
    """Make `path` absolute and lexically clean, without resolving symlinks (evolve's rule)."""
    return Path(os.path.abspath(path))  # noqa: PTH100 - Path.resolve() would follow symlinks


def rel_path(root: Path, path: Path) -> str:
    """`path` relative to `root` with `/` separators (`.` for the root), absolute when outside."""
    try:
        rel = absolute(path).relative_to(root)
    except ValueError:
        return absolute(path).as_posix()
    text = rel.as_posix()
    return text if text else "."


# --- SKILL.md frontmatter (spec §5.3) --------------------------------------------------------


def parse_frontmatter(text: str, path: Path | None = None) -> Frontmatter | None:
    """Parse the leading `---` block as YAML, the way Claude Code does; `None` when absent or
    unterminated (the fences are evolve's: the first line and the next line that trims to `---`).

    The block is decoded by `encoding.decode_yaml` (aliases counted, depth capped): block scalars,
    quoted multi-line strings and comments mean what YAML says. When it does not parse, Claude
    Code's leniency is applied before giving up: a top-level `key: value` line whose unquoted value
    holds `: ` or a YAML indicator is read as a double-quoted string, and leading tabs as two spaces
    each. Still invalid → a `Frontmatter` with `error`/`error_line` (file lines) and no fields, as
    Claude Code then drops every field. `path` only names the file in the decoder's errors.
    """
    lines = split_lines(text)
    if not lines or trim_space(lines[0]) != "---":
        return None
    end = next((i for i in range(1, len(lines)) if trim_space(lines[i]) == "---"), None)
    if end is None:
        return None
    block = lines[1:end]
    if all(trim_space(line) == "" or line.lstrip().startswith("#") for line in block):
        return Frontmatter(end_line=end + 1)
    where = path if path is not None else Path("SKILL.md")
    try:
        decoded = _decode_block(block, where)
    except SpecError:
        try:
            decoded = _decode_block(_lenient_lines(block, where), where)
        except SpecError as exc:
            return Frontmatter(
                end_line=end + 1, error=_YAML_PREFIX.sub("", exc.message), error_line=exc.line
            )
    value = decoded.value
    if value is None:
        return Frontmatter(end_line=end + 1)
    if not isinstance(value, dict):
        kind = "a list" if isinstance(value, list) else "a single value"
        return Frontmatter(
            end_line=end + 1,
            error=f"frontmatter is {kind}, not a mapping of `key: value` lines",
            error_line=2,
        )
    fields = {key: _scalar_text(item) for key, item in value.items()}
    where_lines = {
        key: _key_line(block, key, decoded.line_of(pointer_join("", key))) for key in value
    }
    return Frontmatter(fields=fields, lines=where_lines, end_line=end + 1)


def model_invocable(skill_md: Path) -> bool:
    """False when the SKILL.md frontmatter sets `disable-model-invocation: true`: Claude Code
    loads the skill but never lists it to the model (measured, CLI 2.1.332), so the model cannot
    choose it and a trigger evaluation measures nothing; a user (or an eval naming it) can still
    run it. Unreadable or without frontmatter → True. Never raises."""
    try:
        front = parse_frontmatter(read_text(skill_md), skill_md)
    except EvolveError:
        return True
    if front is None:
        return True
    return front.fields.get("disable-model-invocation", "").strip().lower() != "true"


_YAML_PREFIX = re.compile(r"^yaml: (line [0-9]+: )?")
_LOOSE_LINE = re.compile(r"([a-zA-Z_-]+):\s+(\S[^\r\u2028\u2029]*)")
"""A line Claude Code may re-quote when the frontmatter does not parse."""
_YAML_SPECIAL = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
"""Characters in an unquoted value that make Claude Code quote it on its second attempt."""
_LEADING_TABS = re.compile(r"^\t+")


def _decode_block(block: list[str], path: Path) -> Decoded:
    """Decode the frontmatter lines; a leading empty line stands for the opening fence, so the
    decoder's line numbers are the file's."""
    return decode_yaml("\n" + "\n".join(block) + "\n", path, whole=True)


def _lenient_lines(block: list[str], path: Path) -> list[str]:
    """Claude Code's second attempt at a frontmatter that is not valid YAML (`key: value` lines
    with `: ` or an indicator in an unquoted value become double-quoted; leading tabs → spaces)."""
    out: list[str] = []
    for line in block:
        match = _LOOSE_LINE.fullmatch(line)
        if match is not None:
            key, value = match.groups()
            quoted = any(value.startswith(q) and value.endswith(q) for q in "'\"")
            if not quoted and not _flow_list(value, path) and _YAML_SPECIAL.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{key}: "{escaped}"'
        out.append(_LEADING_TABS.sub(lambda m: "  " * len(m.group(0)), line))
    return out


def _flow_list(value: str, path: Path) -> bool:
    if not (value.startswith("[") and value.endswith("]")):
        return False
    try:
        return isinstance(decode_yaml(value, path, whole=True).value, list)
    except SpecError:
        return False


def _scalar_text(value: Any) -> str:
    """A frontmatter value as the checks compare it: null → ``, scalars as written, else ``."""
    if isinstance(value, dict | list):
        return ""
    return go_str(value)


def _key_line(block: list[str], key: str, value_line: int | None) -> int:
    """The file line of top-level `key:`: the last line at or before its value that starts with
    the key (plain or quoted); the value's line when none does (a flow mapping)."""
    starts = (key, f'"{key}"', f"'{key}'")
    found: int | None = None
    for index, line in enumerate(block):
        number = index + 2
        if value_line is not None and number > value_line:
            break
        for start in starts:
            if line.startswith(start) and line[len(start) :].lstrip(" \t").startswith(":"):
                found = number
    return found if found is not None else (value_line or 2)


def read_text(path: Path, *, limit: int = MAX_TEXT_BYTES) -> str:
    """Read a UTF-8 text file, refusing huge or non-UTF-8 files with an `OSError`-style reason.

    Raises `SpecError` (naming the path) so callers can turn it into a finding or a fatal error.
    """
    try:
        size = path.stat().st_size
        if size > limit:
            raise SpecError(
                f"file is {size} bytes; the limit is {limit // (1024 * 1024)} MiB", path=path
            )
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"read {path}: {exc.strerror or exc}", path=path) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecError(
            f"invalid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}, line {line}",
            path=path,
            line=line,
            hint="save the file as UTF-8",
        ) from exc


# --- JSON manifests -------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


def read_manifest(path: Path) -> Manifest:
    """Read a JSON manifest strictly (Go `encoding/json`: no comments, NaN or BOM); never raises."""
    if not path.is_file():
        return Manifest(path=path, exists=False)
    try:
        text = read_text(path)
    except SpecError as exc:
        return Manifest(path=path, exists=True, error=f"read {path}: {exc.message}", line=exc.line)
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return Manifest(
            path=path,
            exists=True,
            error=f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            line=exc.lineno,
        )
    except ValueError as exc:
        return Manifest(path=path, exists=True, error=f"invalid JSON: {exc}")
    return Manifest(path=path, exists=True, value=value)


def go_str(value: Any) -> str:
    """Go `fmt.Sprint` of a decoded JSON value as the checks print it (null → ``)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return go_str_list(go_str(v) for v in value)
    if isinstance(value, dict):
        inner = " ".join(f"{k}:{go_str(v)}" for k, v in sorted(value.items()))
        return f"map[{inner}]"
    return str(value)


# --- AgentEvals / AgentV suites (issue 23) ----------------------------------------------------

SUITE_FILE_NAMES = ("EVAL.yaml", "EVAL.yml", "dataset.yaml", "dataset.yml")
"""AgentEvals suite file names (besides `*.eval.yaml`)."""
EVOLVE_NAMES = frozenset(
    f"{stem}.{ext}" for stem in ("evals", "triggers", "results") for ext in ("yaml", "yml")
)
"""evolve's own YAML files: never suites."""


def is_suite_name(name: str) -> bool:
    """`EVAL.yaml`, `dataset.yaml` or `*.eval.yaml` (any case of `eval`; `.yml` too)."""
    if name in SUITE_FILE_NAMES:
        return True
    lower = name.lower()
    return lower.endswith((".eval.yaml", ".eval.yml"))


_SNIFF = re.compile(rb"(?m)^(\$schema:\s*['\"]?agentv-eval-v2|evalcases:|eval_cases:)")


def sniff_suite(path: Path) -> bool:
    """Whether a `*.yaml` file not named like a suite is an AgentV v2 file (`$schema:
    agentv-eval-v2`, or an `evalcases`/`eval_cases` list at the top level)."""
    if path.name in EVOLVE_NAMES or path.suffix not in (".yaml", ".yml"):
        return False
    try:
        with path.open("rb") as fh:
            head = fh.read(MAX_FILE_BYTES)
    except OSError:
        return False
    return _SNIFF.search(head) is not None


def suite_skill(path: Path) -> tuple[str, str]:
    """`(metadata.skill, metadata.skill_path)` of a suite file ((``, ``) when absent or unreadable)."""
    try:
        value = decode_path(path)
    except SpecError:
        return "", ""
    meta = value.get("metadata") if isinstance(value, dict) else None
    if not isinstance(meta, dict):
        return "", ""
    skill, where = meta.get("skill"), meta.get("skill_path")
    return (skill if isinstance(skill, str) else "", where if isinstance(where, str) else "")


# --------------------------------------------------------------------------------------------
# Globs and AgentV's config files


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if ch == "*":
            out += "[^/]*"
        elif ch == "?":
            out += "[^/]"
        elif ch == "{":
            end = pattern.find("}", i)
            if end > i:
                out += "(?:" + "|".join(re.escape(p) for p in pattern[i + 1 : end].split(",")) + ")"
                i = end + 1
                continue
            out += re.escape(ch)
        else:
            out += re.escape(ch)
        i += 1
    return re.compile(out + r"\Z")


def glob_match(rel: str, pattern: str) -> bool:
    """micromatch-style match of a `/`-separated relative path (`**`, `*`, `?`, `{a,b}`)."""
    return _glob_regex(pattern.removeprefix("./")).match(rel) is not None


SUITE_SKIP_DIRS = frozenset({"node_modules", "__pycache__"})
"""Never searched for suite files (besides hidden directories)."""


def suite_files(directory: Path) -> list[Path]:
    """Suite files below `directory`: `EVAL.yaml`, `*.eval.yaml`, `dataset.yaml` by name, other
    `*.yaml` by content (an AgentV v2 file); hidden directories and symlinks are not followed."""
    found: list[Path] = []
    stack = [directory]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as entries:
                items = sorted(entries, key=lambda e: e.name.encode("utf-8", "surrogateescape"))
        except OSError:
            continue
        for entry in items:
            if entry.name.startswith("."):
                continue
            path = here / entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SUITE_SKIP_DIRS:
                    stack.append(path)
            elif entry.is_file(follow_symlinks=False) and (
                is_suite_name(entry.name) or sniff_suite(path)
            ):
                found.append(path)
    return sorted(found, key=lambda p: str(p).encode("utf-8", "surrogateescape"))


def _eval_patterns(root: Path) -> list[str]:
    """`eval_patterns` of the root `.agentv/config.yaml` (AgentEvals discovery)."""
    path = root / ".agentv" / "config.yaml"
    if not path.is_file():
        return []
    try:
        value = decode_path(path)
    except SpecError:
        return []
    patterns = value.get("eval_patterns") if isinstance(value, dict) else None
    return [p for p in patterns if isinstance(p, str)] if isinstance(patterns, list) else []


def suite_bindings(repo: Repository) -> tuple[dict[SkillKey, tuple[Path, ...]], list[str]]:
    """Which skill each suite file evaluates, and a note for each one bound to none.

    Searched: each skill's eval directories (evolve's `<plugin>/evals/<skill>/` and the
    co-located `<skill>/evals/`), every `evals/` directory of the repository and its plugins,
    and the files `.agentv/config.yaml`'s `eval_patterns` match. A file binds to the skill its
    `metadata.skill` (or `metadata.skill_path`) names, else to the skill whose eval directory
    (or skill directory) holds it; otherwise it is named in a note with the fix. Read once per
    repository model.
    """
    found: tuple[dict[SkillKey, tuple[Path, ...]], list[str]]
    found = _memoized(repo, "suite_bindings", lambda: _bind_suites(repo))
    return dict(found[0]), list(found[1])


def _bind_suites(repo: Repository) -> tuple[dict[SkillKey, tuple[Path, ...]], list[str]]:
    skills: list[tuple[Plugin, Skill]] = [
        (p, s) for p in repo.plugins if _inside(p, p.evals_dir) for s in plugin_skills(p)
    ]
    owners: list[tuple[Path, SkillKey]] = []
    for plugin, sk in skills:
        owned = (plugin.name, sk.name)
        owners += [(absolute(plugin.evals_dir / sk.name), owned), (absolute(sk.dir), owned)]
    owners.sort(key=lambda item: -len(str(item[0])))
    candidates: dict[Path, None] = {}
    for plugin, sk in skills:
        for directory in (plugin.evals_dir / sk.name, sk.dir / "evals"):
            if directory.is_dir() and not escapes(repo.root, directory):
                candidates.update(dict.fromkeys(suite_files(absolute(directory))))
    for directory in {
        absolute(repo.root / "evals"),
        *(absolute(p.evals_dir) for p in repo.plugins),
    }:
        if directory.is_dir() and not escapes(repo.root, directory):
            candidates.update(dict.fromkeys(suite_files(directory)))
    for pattern in _eval_patterns(repo.root):
        for path in sorted(repo.root.glob(pattern.removeprefix("./"))):
            if path.is_file() and not escapes(repo.root, path):
                candidates[absolute(path)] = None
    bound: dict[SkillKey, list[Path]] = {}
    notes: list[str] = []
    names = sorted({sk.name for _, sk in skills})
    for path in sorted(candidates, key=lambda p: str(p).encode("utf-8", "surrogateescape")):
        if any(part.startswith(".") for part in path.relative_to(repo.root).parts[:-1]) and not (
            path.is_relative_to(absolute(repo.root / PROJECT_SKILLS))
        ):
            continue
        meta_skill, meta_path = suite_skill(path)
        key: SkillKey | None = None
        if meta_path:
            target = absolute(repo.root / meta_path)
            key = next(((p.name, s.name) for p, s in skills if absolute(s.dir) == target), None)
        if key is None and meta_skill:
            matches = [(p, s) for p, s in skills if s.name == meta_skill]
            near = [m for m in matches if path.is_relative_to(absolute(m[0].dir))]
            pick = near if len(near) == 1 else matches
            if len(pick) == 1:
                key = (pick[0][0].name, pick[0][1].name)
            else:
                why = "is not a skill here" if not matches else "names several skills"
                notes.append(
                    f"note: {repo.rel(path)}: metadata.skill {meta_skill!r} {why} (suite not "
                    f"evaluated); fix: name one of: {', '.join(names[:8]) or 'no skills found'}"
                )
                continue
        if key is None:
            key = next((k for d, k in owners if path.is_relative_to(d)), None)
        if key is None:
            choices = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
            notes.append(
                f"note: {repo.rel(path)} is an AgentEvals/AgentV suite bound to no skill (not "
                f"evaluated); fix: add `metadata: {{skill: <name>}}` (one of: "
                f"{choices or 'no skills found'}) or move it to evals/<skill>/"
            )
            continue
        bound.setdefault(key, []).append(path)
    return {k: tuple(v) for k, v in bound.items()}, notes
